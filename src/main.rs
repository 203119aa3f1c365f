//! `dgatd` command-line program: the application layer (`app`) over the library.

// `!(x > y)` comparisons are deliberate: they also reject NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::needless_range_loop)]

/// `eprintln!` that ignores a stderr that cannot be written (issue 47 round five): std's
/// panics ("failed printing to stderr") when the log's reader has gone (`2>&1 | head`, a
/// closed terminal) or its file is full, which killed a run that could have finished.
/// Defined before the modules, so it shadows std's in all of them.
macro_rules! eprintln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

mod app;

fn main() {
    if let Err(e) = app::main() {
        eprintln!("error: {e}");
        // 130: interrupted (as a shell reports SIGINT); 1: any other error
        std::process::exit(if e.is_interrupted() { 130 } else { 1 });
    }
}
