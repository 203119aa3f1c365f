//! `dgatd` command-line program; all the work is in the library.
fn main() {
    if let Err(e) = dgatd::cli::main() {
        eprintln!("error: {e}");
        // 130: interrupted (as a shell reports SIGINT); 1: any other error
        std::process::exit(if e.is_interrupted() { 130 } else { 1 });
    }
}
