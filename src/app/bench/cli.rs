//! The `dgatd bench` command: its flags, their checks, and the run that writes
//! `DIR/bench.csv` row by row (through `bench.csv.partial`, which replaces it at the end)
//! and prints the summary table. The measurements are [`super::run`]'s.

use super::common::{BenchConfig, Row};
use super::{COLUMNS, Roofs, csv_fields, run};
use crate::app::{count, outln, timestamp};
use dgatd::{Error, Result};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// OpenCL devices: all, none, or a comma list of indices / name substrings.
    #[arg(long, default_value = "all")]
    pub devices: String,
    /// Skip the CPU backend.
    #[arg(long)]
    pub no_cpu: bool,
    #[arg(long, default_value = "f64,f32")]
    pub precision: String,
    /// Target tet counts of the generated box meshes (6 n³ tets, n rounded).
    #[arg(long, default_value = "1e3,1e4,1e5,1e6")]
    pub sizes: String,
    #[arg(long, default_value_t = 30)]
    pub reps: usize,
    #[arg(long, default_value_t = 5)]
    pub warmup: usize,
    /// CSR variants are skipped above this many tets.
    #[arg(long, default_value = "6e6")]
    pub csr_max_tets: String,
    /// The CPU backend is skipped above this many tets.
    #[arg(long, default_value = "2e6")]
    pub cpu_max_tets: String,
    /// Elements of the copy/triad arrays.
    #[arg(long, default_value = "1.34e8")]
    pub stream_elems: String,
    /// DG orders timed at each mesh size ("" for none).
    #[arg(long, default_value = "1,2,3,4")]
    pub dg_orders: String,
    /// DG rows are skipped above this many tets.
    #[arg(long, default_value = "1.1e6")]
    pub dg_max_tets: String,
    /// Rows of the whole step with dispersive tets (one Debye pole; two Lorentz pole
    /// pairs) on these fractions of each mesh (the slab x < F; 1 = every tet), against
    /// the same step without: e.g. "0.1,0.5,1". Empty (default): none.
    #[arg(long, default_value = "")]
    pub dispersion: String,
    /// Rows of the whole step with losses (σ; σ with matched σ*, as in an absorbing
    /// layer) on these fractions of each mesh (the slab x < F; 1 = every tet), and with
    /// every wall absorbing (`abc`), against the same step without: e.g. "0.1,1". Empty
    /// (default): none.
    #[arg(long, default_value = "")]
    pub losses: String,
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
}

/// The slab fractions of flag `flag`: a comma-separated list in (0, 1], empty for none.
fn fractions(flag: &str, list: &str) -> Result<Vec<f64>> {
    list.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|f| *f > 0.0 && *f <= 1.0)
                .ok_or_else(|| {
                    Error::config(flag, x, "expected fractions in (0, 1], e.g. 0.1,0.5,1")
                })
        })
        .collect()
}

/// The DG orders of `--dg-orders`: a comma-separated list in 1..=10, empty for none.
fn dg_orders(list: &str) -> Result<Vec<usize>> {
    list.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            x.trim()
                .parse::<usize>()
                .ok()
                .filter(|o| (1..=10).contains(o))
                .ok_or_else(|| Error::config("dg-orders", x, "expected orders in 1..=10"))
        })
        .collect()
}

/// The precisions of `--precision`: a comma list of f32 and/or f64.
fn precisions(list: &str) -> Result<Vec<String>> {
    let precisions: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
    for p in &precisions {
        if p != "f32" && p != "f64" {
            return Err(Error::config("precision", p, "expected f32 and/or f64"));
        }
    }
    Ok(precisions)
}

/// The target tet counts of `--sizes`; a size whose box does not fit the host is refused
/// before anything is allocated.
fn sizes(list: &str) -> Result<Vec<usize>> {
    let sizes = list
        .split(',')
        .map(|s| count("sizes", s))
        .collect::<Result<Vec<_>>>()?;
    for (&size, given) in sizes.iter().zip(list.split(',')) {
        dgatd::solver::check_mesh_memory(super::common::ladder_tets(size), "sizes", given.trim())?;
    }
    Ok(sizes)
}

/// The bench's configuration from its flags, each checked (in flag order: the first bad
/// one is the error).
fn config(a: &BenchArgs) -> Result<BenchConfig> {
    let precisions = precisions(&a.precision)?;
    let sizes = sizes(&a.sizes)?;
    if a.reps == 0 {
        return Err(Error::config("reps", 0, "must be at least 1"));
    }
    let devices: Vec<String> = match a.devices.as_str() {
        "none" => vec![],
        d => d.split(',').map(|s| s.trim().to_string()).collect(),
    };
    Ok(BenchConfig {
        devices,
        cpu: !a.no_cpu,
        precisions,
        sizes,
        reps: a.reps,
        warmup: a.warmup,
        csr_max_tets: count("csr-max-tets", &a.csr_max_tets)?,
        cpu_max_tets: count("cpu-max-tets", &a.cpu_max_tets)?,
        stream_elems: count("stream-elems", &a.stream_elems)?,
        dg_orders: dg_orders(&a.dg_orders)?,
        dg_max_tets: count("dg-max-tets", &a.dg_max_tets)?,
        dispersion: fractions("dispersion", &a.dispersion)?,
        losses: fractions("losses", &a.losses)?,
    })
}

/// `DIR/bench.csv.partial` as the bench writes it: the CSV row by row (each flushed), the
/// running [`Roofs`] of its `frac_roof` column, and the rows so far (for the summary).
struct PartialCsv {
    path: PathBuf,
    w: csv::Writer<std::fs::File>,
    /// The bench's start and host, on every row.
    ts: String,
    host: String,
    roofs: Roofs,
    rows: Vec<Row>,
}

impl PartialCsv {
    /// Creates `dir` and in it `bench.csv.partial` anew (create_new: a link left in its
    /// place is removed, not followed), with the [`COLUMNS`] header.
    fn create(dir: &Path) -> Result<PartialCsv> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join("bench.csv.partial");
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(&path, e)),
            _ => {}
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let mut w = csv::Writer::from_writer(file);
        w.write_record(COLUMNS).map_err(|e| csv_error(&path, e))?;
        w.flush().map_err(|e| Error::io(&path, e))?;
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        Ok(PartialCsv {
            path,
            w,
            ts: timestamp(),
            host,
            roofs: Roofs::default(),
            rows: Vec::new(),
        })
    }

    /// Writes and flushes row `r`.
    fn write(&mut self, r: &Row) -> Result<()> {
        self.roofs.note(r);
        let fields = csv_fields(r, &self.ts, &self.host, &self.roofs);
        self.w
            .write_record(fields)
            .map_err(|e| csv_error(&self.path, e))?;
        self.w.flush().map_err(|e| Error::io(&self.path, e))?;
        self.rows.push(r.clone());
        Ok(())
    }

    /// Closes the file; its path and the rows written.
    fn close(self) -> (PathBuf, Vec<Row>) {
        drop(self.w);
        (self.path, self.rows)
    }
}

/// A CSV writer's error on `path`.
fn csv_error(path: &Path, e: csv::Error) -> Error {
    Error::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    }
}

/// `dgatd bench`: writes DIR/bench.csv row by row and prints a summary.
pub fn command(a: &BenchArgs) -> Result<()> {
    let cfg = config(a)?;
    // rows go to bench.csv.partial as they are measured, which replaces bench.csv when the
    // bench ends: a failed or interrupted bench leaves an earlier bench.csv as it was, and
    // its own rows beside it.
    let done_path = a.out.join("bench.csv");
    let mut csv = PartialCsv::create(&a.out)?;
    let ran = run(&cfg, &mut |r| csv.write(r), &mut |m| eprintln!("{m}"));
    let (path, rows) = csv.close();
    if let Err(e) = ran {
        eprintln!(
            "the {} rows measured before the failure are in {}; {} is unchanged",
            rows.len(),
            path.display(),
            done_path.display()
        );
        return Err(e);
    }
    std::fs::rename(&path, &done_path).map_err(|e| Error::io(&done_path, e))?;
    print_summary(&rows);
    outln!("wrote {}", done_path.display());
    Ok(())
}

/// The summary table of the rows on stdout: device, precision, kernel, variant, tets,
/// median time, GB/s, fraction of the copy ceiling and GDoF/s.
fn print_summary(rows: &[Row]) {
    outln!(
        "{:<28} {:<4} {:<14} {:<16} {:>10} {:>11} {:>9} {:>7} {:>8}",
        "device",
        "prec",
        "kernel",
        "variant",
        "tets",
        "median ms",
        "GB/s",
        "frac",
        "GDoF/s"
    );
    for r in rows {
        outln!(
            "{:<28} {:<4} {:<14} {:<16} {:>10} {:>11.4} {:>9.1} {:>7.3} {:>8.3}",
            r.device.chars().take(28).collect::<String>(),
            r.precision,
            r.kernel,
            r.variant,
            r.tets,
            r.median_s * 1e3,
            r.gbs(),
            r.frac_copy_bw,
            r.gdofs()
        );
    }
}
