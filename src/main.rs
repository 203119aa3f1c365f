//! `dgatd` command-line program; all the work is in the library.
fn main() {
    if let Err(e) = dgatd::cli::main() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
