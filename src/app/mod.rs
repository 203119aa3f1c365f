//! The `dgatd` application: the command line over the library (`resonator`, `mesh-info`,
//! `devices`, `bench`, `report`, `compare`). The library does the work; this layer parses
//! flags (clap), reads configuration files, prints tables and draws plots.

mod bench;
mod compare;
mod info;
mod perf;
mod plots;
mod resonator;

use clap::{Parser, Subcommand};
use dgatd::{Error, Result};

/// `println!` that ignores a closed stdout (`dgatd ... | head`) instead of panicking: the
/// results are in the output files either way.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}
/// `print!` that ignores a closed stdout.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}
pub(crate) use {out, outln};

#[derive(Parser, Debug)]
#[command(
    name = "dgatd",
    version,
    about = "Time-domain Maxwell solver (fractioned DGA) on tetrahedral meshes.\n\nWith no command, runs the resonator job on the bundled medium cylinder mesh."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once; boxing would only obscure the code
pub enum Command {
    /// Excite a cavity with a pulse and extract its resonances.
    Resonator(resonator::ResonatorArgs),
    /// Print counts, quality figures and the estimated memory of a mesh.
    MeshInfo(info::MeshInfoArgs),
    /// List the OpenCL platforms and devices.
    Devices,
    /// Bandwidth probes, every kernel variant and the whole step over a mesh-size ladder.
    Bench(bench::BenchArgs),
    /// Plots (PNG and SVG) and Markdown tables from bench CSV files.
    Report(perf::ReportArgs),
    /// DGA against nodal DG on the same meshes and device: errors, time, bytes, flops.
    Compare(compare::CompareArgs),
}

/// Parses the command line and runs; the error's exit status is 130 when interrupted.
pub fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Resonator(a)) => resonator::command(&a),
        Some(Command::MeshInfo(a)) => info::mesh_info(&a),
        Some(Command::Devices) => info::devices(),
        Some(Command::Bench(a)) => bench::command(&a),
        Some(Command::Compare(a)) => compare::command(&a),
        Some(Command::Report(a)) => perf::command(&a),
        None => resonator::command(&resonator::ResonatorArgs::default()),
    }
}

pub(crate) fn count(name: &str, s: &str) -> Result<usize> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| Error::config(name, s, "expected a number like 1e6"))?;
    if !(x >= 1.0 && x.is_finite() && x < 1e12) {
        return Err(Error::config(name, s, "must be a positive count"));
    }
    Ok(x.round() as usize)
}

/// ISO 8601 UTC time of now (civil-from-days, no time-zone database needed).
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}
