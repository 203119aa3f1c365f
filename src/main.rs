//! `dgatd` command-line program: the application layer (`app`) over the library.

// `!(x > y)` comparisons are deliberate: they also reject NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::needless_range_loop)]
mod app;

fn main() {
    if let Err(e) = app::main() {
        eprintln!("error: {e}");
        // 130: interrupted (as a shell reports SIGINT); 1: any other error
        std::process::exit(if e.is_interrupted() { 130 } else { 1 });
    }
}
