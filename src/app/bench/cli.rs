//! The `dgatd bench` command: its flags, their checks, and the run that writes
//! `DIR/bench.csv` row by row (through `bench.csv.partial`, which replaces it at the end)
//! and prints the summary table. The measurements are [`super::run`]'s.

use super::common::{BenchConfig, Row};
use super::{COLUMNS, Roofs, run};
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
    #[arg(long, default_value = "1e3,1e4,1e5,1e6", allow_hyphen_values = true)]
    pub sizes: String,
    /// Timed repetitions of each measurement (1 to 100000).
    #[arg(long, default_value_t = 30, allow_negative_numbers = true, value_parser = whole_number)]
    pub reps: usize,
    /// Untimed launches before the timed ones (at most 100000).
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = whole_number)]
    pub warmup: usize,
    /// CSR variants are skipped above this many tets.
    #[arg(long, default_value = "6e6", allow_hyphen_values = true)]
    pub csr_max_tets: String,
    /// The CPU backend is skipped above this many tets.
    #[arg(long, default_value = "2e6", allow_hyphen_values = true)]
    pub cpu_max_tets: String,
    /// Elements of the copy/triad arrays. Given, they are used as asked (refused when
    /// they do not fit the host's or a device's memory); not given: 1.34e8 on a device,
    /// fewer where its memory (or, on a CPU device, the host's
    /// available memory) is smaller, and 64Mi (67108864) on the CPU backend.
    #[arg(long, allow_hyphen_values = true)]
    pub stream_elems: Option<String>,
    /// DG orders timed at each mesh size ("" for none).
    #[arg(long, default_value = "1,2,3,4", allow_hyphen_values = true)]
    pub dg_orders: String,
    /// DG rows are skipped above this many tets.
    #[arg(long, default_value = "1.1e6", allow_hyphen_values = true)]
    pub dg_max_tets: String,
    /// Rows of the whole step with dispersive tets (one Debye pole; two Lorentz pole
    /// pairs) on these fractions of each mesh (the slab x < F; 1 = every tet), against
    /// the same step without: e.g. "0.1,0.5,1". Empty (default): none.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub dispersion: String,
    /// Rows of the whole step with losses (σ; σ with matched σ*, as in an absorbing
    /// layer) on these fractions of each mesh (the slab x < F; 1 = every tet), and with
    /// every wall absorbing (`abc`), against the same step without: e.g. "0.1,1". Empty
    /// (default): none.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub losses: String,
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
}

/// Most `--reps` and `--warmup` accepted.
const MAX_REPS: usize = 100_000;

/// A count flag's value (`--reps`, `--warmup`): a whole number, 0 or more. A negative one
/// reaches here (`allow_negative_numbers`; it was "unexpected argument '-1' found") and is
/// refused as such; clap names the flag.
fn whole_number(s: &str) -> std::result::Result<usize, String> {
    if s.trim().starts_with('-') {
        return Err("a negative number: give a whole number, 0 or more".into());
    }
    s.trim()
        .parse::<usize>()
        .map_err(|_| "expected a whole number, 0 or more".into())
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
    // (issue 47 round five: --reps 1e9 aborted allocating its timings, --warmup 1e9 ran
    // for days; each repetition times every kernel at every size)
    for (flag, n) in [("reps", a.reps), ("warmup", a.warmup)] {
        if n > MAX_REPS {
            return Err(Error::config(
                flag,
                n,
                format!(
                    "at most {MAX_REPS}: each one runs every kernel at every size once (the defaults are 30 and 5)"
                ),
            ));
        }
    }
    if a.reps == 0 {
        return Err(Error::config("reps", 0, "must be at least 1"));
    }
    let devices: Vec<String> = match a.devices.as_str() {
        "none" => vec![],
        d => d.split(',').map(|s| s.trim().to_string()).collect(),
    };
    // (issue 47 round five, bench-549: an empty name matched the first device, whatever
    // it was, as `resonator --device ''` did before round four)
    if devices.iter().any(|d| d.is_empty()) {
        return Err(Error::config(
            "devices",
            format!("{:?}", a.devices),
            "an empty device name: give all, none, or a comma list of indices or parts of names (see `dgatd devices`)",
        ));
    }
    // (it timed the host's preprocessing alone, and exited 0)
    if devices.is_empty() && a.no_cpu {
        return Err(Error::config(
            "devices",
            &a.devices,
            "nothing to measure: --devices none with --no-cpu leaves neither a device nor the CPU backend; name a device or drop --no-cpu",
        ));
    }
    let stream_elems = match &a.stream_elems {
        Some(s) => {
            let n = count("stream-elems", s)?;
            if !a.no_cpu {
                super::streams::check_cpu_stream(n, s, &precisions)?;
            }
            Some(n)
        }
        None => None,
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
        stream_elems,
        dg_orders: dg_orders(&a.dg_orders)?,
        dg_max_tets: count("dg-max-tets", &a.dg_max_tets)?,
        dispersion: fractions("dispersion", &a.dispersion)?,
        losses: fractions("losses", &a.losses)?,
    })
}

/// One line of `bench.csv`: a [`Row`] with the bench's start (`timestamp`), the binary's
/// commit, the host and the rates derived from the row, its fields the [`COLUMNS`] in that
/// order, written by the `csv` crate's serde support ([`PartialCsv::write`]). Times, bytes
/// and flops are written as `{:.6e}`, GB/s and GFLOP/s as `{:.3}`, fractions and GDoF/s
/// as `{:.4}` (the formatting of the columns' first layout, kept digit for digit).
#[derive(serde::Serialize)]
pub struct CsvRow<'a> {
    timestamp: &'a str,
    commit: &'a str,
    host: &'a str,
    platform: &'a str,
    device: &'a str,
    driver: &'a str,
    precision: &'a str,
    kernel: &'a str,
    variant: &'a str,
    tets: usize,
    dofs: usize,
    reps: usize,
    #[serde(serialize_with = "sci6")]
    median_s: f64,
    #[serde(serialize_with = "sci6")]
    min_s: f64,
    #[serde(serialize_with = "sci6")]
    max_s: f64,
    #[serde(serialize_with = "sci6")]
    bytes_model: f64,
    #[serde(serialize_with = "fixed3")]
    gbs: f64,
    #[serde(serialize_with = "fixed4")]
    frac_copy_bw: f64,
    #[serde(serialize_with = "fixed4")]
    gdofs_per_s: f64,
    #[serde(serialize_with = "sci6")]
    flops_model: f64,
    #[serde(serialize_with = "fixed3")]
    gflops: f64,
    #[serde(serialize_with = "fixed4")]
    frac_roof: f64,
}

impl<'a> CsvRow<'a> {
    /// Row `r` of a bench started at `timestamp` on `host`, its `frac_roof` from `roofs`.
    pub fn new(r: &'a Row, timestamp: &'a str, host: &'a str, roofs: &Roofs) -> CsvRow<'a> {
        CsvRow {
            timestamp,
            commit: dgatd::report::COMMIT,
            host,
            platform: &r.platform,
            device: &r.device,
            driver: &r.driver,
            precision: &r.precision,
            kernel: &r.kernel,
            variant: &r.variant,
            tets: r.tets,
            dofs: r.dofs,
            reps: r.reps,
            median_s: r.median_s,
            min_s: r.min_s,
            max_s: r.max_s,
            bytes_model: r.bytes_model,
            gbs: r.gbs(),
            frac_copy_bw: r.frac_copy_bw,
            gdofs_per_s: r.gdofs(),
            flops_model: r.flops_model,
            gflops: r.gflops(),
            frac_roof: roofs.frac(r),
        }
    }
}

/// `x` as `{:.6e}` (times, bytes, flops).
fn sci6<S: serde::Serializer>(x: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{x:.6e}"))
}

/// `x` as `{:.3}` (GB/s, GFLOP/s).
fn fixed3<S: serde::Serializer>(x: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{x:.3}"))
}

/// `x` as `{:.4}` (fractions, GDoF/s).
fn fixed4<S: serde::Serializer>(x: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{x:.4}"))
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
        // the header is written from COLUMNS, so that a bench with no row still has it
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(file);
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
        self.w
            .serialize(CsvRow::new(r, &self.ts, &self.host, &self.roofs))
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
    // the folder is locked (.dgatd.lock, as a resonator run's): a second bench (or run) on
    // it is refused naming the first, instead of replacing its bench.csv.partial
    let (_lock, stale) = dgatd::report::OutputDir::prepare(&a.out)?;
    if let Some(n) = stale {
        eprintln!("note: {n}");
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of every kind of number the CSV holds: a probe, a kernel row, a row whose
    /// copy ceiling is unknown (NaN fraction), an fma row with flops; a device name that
    /// needs quoting.
    fn rows() -> Vec<Row> {
        let base = Row {
            platform: "Portable Computing Language".into(),
            device: "pthread, \"x\"".into(),
            driver: "3.1".into(),
            precision: "f64".into(),
            kernel: String::new(),
            variant: String::new(),
            tets: 0,
            dofs: 0,
            reps: 3,
            median_s: 1.234_567_89e-4,
            min_s: 1e-4,
            max_s: 2.5e-4,
            bytes_model: 1.6e7,
            frac_copy_bw: 1.0,
            flops_model: 0.0,
        };
        let row = |kernel: &str, variant: &str, f: &dyn Fn(&mut Row)| {
            let mut r = Row {
                kernel: kernel.into(),
                variant: variant.into(),
                ..base.clone()
            };
            f(&mut r);
            r
        };
        vec![
            row("copy", "stream", &|_| {}),
            row("fma", "peak", &|r| r.flops_model = 3.3e12),
            row("primal", "tet_sym", &|r| {
                (r.tets, r.dofs, r.median_s) = (6000, 7123, 3.3e-5);
                (r.bytes_model, r.frac_copy_bw) = (1.2e6, 0.4567891);
            }),
            row("step", "tet_sym+factored_sym", &|r| {
                (r.tets, r.dofs, r.frac_copy_bw) = (6000, 7123, f64::NAN);
                (r.min_s, r.max_s) = (0.0, 1e300);
            }),
        ]
    }

    /// The CSV `PartialCsv` writes for `rows()`: the [`COLUMNS`] header, then each row.
    fn written() -> String {
        let dir = std::env::temp_dir().join(format!("dgatd-csvrow-{}", std::process::id()));
        let mut w = PartialCsv::create(&dir).unwrap();
        (w.ts, w.host) = ("2026-01-02T03:04:05Z".into(), "host".into());
        for r in rows() {
            w.write(&r).unwrap();
        }
        let (path, _) = w.close();
        let s = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        s
    }

    /// The serde names of [`CsvRow`]'s fields are the [`COLUMNS`], in order.
    #[test]
    fn csv_row_fields_are_the_columns() {
        let r = &rows()[0];
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(CsvRow::new(r, "t", "h", &Roofs::default()))
            .unwrap();
        let s = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(s.lines().next().unwrap(), COLUMNS.join(","));
    }

    /// The bytes of the bench's first CSV layout, as the hand formatting that `CsvRow`
    /// replaced wrote them for `rows()` (captured from it): quoting, `{:.6e}`, `{:.3}`,
    /// `{:.4}`, NaN and zero digit for digit.
    #[test]
    fn csv_rows_keep_their_bytes() {
        let expected = "\
timestamp,commit,host,platform,device,driver,precision,kernel,variant,tets,dofs,reps,median_s,min_s,max_s,bytes_model,gbs,frac_copy_bw,gdofs_per_s,flops_model,gflops,frac_roof
2026-01-02T03:04:05Z,{COMMIT},host,Portable Computing Language,\"pthread, \"\"x\"\"\",3.1,f64,copy,stream,0,0,3,1.234568e-4,1.000000e-4,2.500000e-4,1.600000e7,129.600,1.0000,0.0000,0.000000e0,0.000,1.0000
2026-01-02T03:04:05Z,{COMMIT},host,Portable Computing Language,\"pthread, \"\"x\"\"\",3.1,f64,fma,peak,0,0,3,1.234568e-4,1.000000e-4,2.500000e-4,1.600000e7,129.600,1.0000,0.0000,3.300000e12,26730000.243,1.0000
2026-01-02T03:04:05Z,{COMMIT},host,Portable Computing Language,\"pthread, \"\"x\"\"\",3.1,f64,primal,tet_sym,6000,7123,3,3.300000e-5,1.000000e-4,2.500000e-4,1.200000e6,36.364,0.4568,0.2158,0.000000e0,0.000,0.2806
2026-01-02T03:04:05Z,{COMMIT},host,Portable Computing Language,\"pthread, \"\"x\"\"\",3.1,f64,step,tet_sym+factored_sym,6000,7123,3,1.234568e-4,0.000000e0,1.000000e300,1.600000e7,129.600,NaN,0.0577,0.000000e0,0.000,1.0000
";
        assert_eq!(
            written(),
            expected.replace("{COMMIT}", dgatd::report::COMMIT)
        );
    }
}
