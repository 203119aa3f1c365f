//! The kernel smoke run as a test target (`harness = false`, `Cargo.toml`): every kernel of
//! `cl/*.cl` launched on a tiny case and checked against the CPU (`smoke.rs` says what and
//! how). `cargo test --release` runs it on `DGATD_TEST_DEVICE` or the default device in both
//! precisions; by hand, with the arguments of the former `--example kernel_smoke`:
//!
//! ```sh
//! cargo test --release --test kernel_smoke -- [--device NAME|INDEX] [--precision f64,f32]
//! ```
//!
//! Prints one line per check to stdout and nothing to stderr unless a check fails (exit
//! status 1) or the arguments are wrong (exit status 2), so a device simulator's reports are
//! the only other thing that can appear on stderr (`.ci/oclgrind.sh` relies on it).
//!
//! Without an OpenCL device (and no `--device`) it prints SKIPPED and passes, a failure with
//! DGATD_REQUIRE_OPENCL=1. The options of the libtest harness that `cargo test` passes to
//! every test binary (`--nocapture`, `--test-threads=N`, …) are accepted and ignored; a
//! name filter that does not match `kernel_smoke` skips the run, as libtest would.

mod smoke;

/// The test's name, for `--list` and name filters.
const NAME: &str = "kernel_smoke";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Args {
    Run {
        device: Option<String>,
        precisions: Vec<String>,
    },
    /// `--list`: print the one test's name.
    List,
    /// A name filter that excludes this test, or `--ignored`.
    Filtered,
}

/// Parses `--device X` and `--precision LIST`, and the libtest options `cargo test` passes.
fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut device = None;
    let mut precisions = vec!["f64".to_string(), "f32".to_string()];
    let (mut filters, mut exact, mut list, mut ignored) = (vec![], false, false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--device" => device = Some(it.next().ok_or("--device needs a value")?.clone()),
            "--precision" => {
                precisions = it
                    .next()
                    .ok_or("--precision needs a value")?
                    .split(',')
                    .map(|p| p.trim().to_string())
                    .collect()
            }
            "-h" | "--help" => {
                return Err(
                    "usage: kernel_smoke [--device NAME|INDEX] [--precision f64,f32]".into(),
                );
            }
            "--list" => list = true,
            "--exact" => exact = true,
            "--ignored" => ignored = true,
            // libtest options with a value.
            "--test-threads" | "--color" | "--format" | "--logfile" | "--skip" | "-Z" => {
                it.next();
            }
            o if o.starts_with("--test-threads=")
                || o.starts_with("--color=")
                || o.starts_with("--format=")
                || o.starts_with("--skip=") => {}
            // libtest flags without a value.
            "--nocapture" | "--no-capture" | "--show-output" | "--include-ignored" | "-q"
            | "--quiet" | "--test" | "--bench" | "--report-time" | "--ensure-time" => {}
            o if o.starts_with('-') => return Err(format!("unknown argument {o:?} (see --help)")),
            filter => filters.push(filter.to_string()),
        }
    }
    let selected = filters.is_empty()
        || filters.iter().any(|f| {
            if exact {
                f == NAME
            } else {
                NAME.contains(f.as_str())
            }
        });
    Ok(if list {
        Args::List
    } else if ignored || !selected {
        Args::Filtered
    } else {
        Args::Run { device, precisions }
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (device, precisions) = match parse_args(&args) {
        Ok(Args::Run { device, precisions }) => (device, precisions),
        Ok(Args::List) => {
            println!("{NAME}: test");
            return;
        }
        Ok(Args::Filtered) => {
            println!("kernel_smoke: filtered out");
            return;
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let named = device.is_some();
    let device = device.or_else(|| std::env::var("DGATD_TEST_DEVICE").ok());
    let p: Vec<&str> = precisions.iter().map(|s| s.as_str()).collect();
    match smoke::run(device.as_deref(), &p) {
        Ok(s) => {
            for l in &s.lines {
                println!("{l}");
            }
            if !s.failures.is_empty() {
                eprintln!("kernel_smoke: {} check(s) failed:", s.failures.len());
                for f in &s.failures {
                    eprintln!("{f}");
                }
                std::process::exit(1);
            }
        }
        Err(e @ dgatd::Error::NoOpenCl(_))
            if !named && std::env::var("DGATD_REQUIRE_OPENCL").as_deref() != Ok("1") =>
        {
            println!("\n*** SKIPPED: kernel smoke run needs an OpenCL device ({e}) ***\n");
        }
        Err(e) => {
            eprintln!("kernel_smoke: {e}");
            std::process::exit(1);
        }
    }
}
