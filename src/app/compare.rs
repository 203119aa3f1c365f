//! `dgatd compare`: DGA and nodal DG on the same meshes, device, source, probes and
//! extraction. For every run: the relative error of the four lowest cylinder resonances
//! (TM010, TM110, TM210, TM020; after the leapfrog correction for DGA, none for DG), the
//! time per step, the modelled bytes and flops per DoF and step, and the number of spurious
//! resonances (extracted modes in the band farther than 3% from every analytic mode).
//!
//! CSV `compare.csv`, one row per run, columns [`COLUMNS`] (documented in
//! `results/README.md`); plots of the maximum error against DoFs and against wall time.

use dgatd::Precision;
use dgatd::dg::Flux;
use dgatd::solver::correct_frequency;
use dgatd::solver::{BackendKind, Config, Method};
use dgatd::{Error, Result};
use std::path::{Path, PathBuf};

use super::outln;

pub const COLUMNS: [&str; 24] = [
    "mesh",
    "tets",
    "method",
    "order",
    "flux",
    "precision",
    "backend",
    "dofs",
    "dt_s",
    "steps",
    "wall_s",
    "step_ms",
    "ns_per_dof_step",
    "bytes_per_dof_step",
    "flops_per_dof_step",
    "err_tm010_pct",
    "err_tm110_pct",
    "err_tm210_pct",
    "err_tm020_pct",
    "max_abs_err_pct",
    "n_modes",
    "n_spurious",
    "n_fft_peaks",
    "n_fft_spurious",
];

/// The four modes compared.
pub const MODES: [&str; 4] = ["TM010", "TM110", "TM210", "TM020"];

/// One compared run.
#[derive(Clone, Debug)]
pub struct Row {
    pub mesh: String,
    pub tets: usize,
    pub method: Method,
    pub order: usize,
    pub flux: String,
    pub precision: Precision,
    pub backend: String,
    pub dofs: usize,
    pub dt_s: f64,
    pub steps: usize,
    pub wall_s: f64,
    pub bytes_per_dof_step: f64,
    pub flops_per_dof_step: f64,
    /// Relative errors in percent (NaN when the mode was not found).
    pub err_pct: [f64; 4],
    pub n_modes: usize,
    pub n_spurious: usize,
    /// Peaks of the combined FFT spectrum (prominence 0.02) in the band, and those farther
    /// than 3% from every analytic mode.
    pub n_fft_peaks: usize,
    pub n_fft_spurious: usize,
}

impl Row {
    pub fn max_abs_err(&self) -> f64 {
        self.err_pct.iter().fold(0.0f64, |m, e| {
            if e.is_nan() {
                f64::INFINITY
            } else {
                m.max(e.abs())
            }
        })
    }
    pub fn fields(&self) -> Vec<String> {
        let step = self.wall_s / self.steps.max(1) as f64;
        let mut v = vec![
            self.mesh.clone(),
            self.tets.to_string(),
            self.method.name().into(),
            self.order.to_string(),
            self.flux.clone(),
            self.precision.name().into(),
            self.backend.clone(),
            self.dofs.to_string(),
            format!("{:.6e}", self.dt_s),
            self.steps.to_string(),
            format!("{:.4}", self.wall_s),
            format!("{:.6}", step * 1e3),
            format!("{:.4}", step * 1e9 / self.dofs as f64),
            format!("{:.2}", self.bytes_per_dof_step),
            format!("{:.2}", self.flops_per_dof_step),
        ];
        v.extend(self.err_pct.iter().map(|e| format!("{e:.5}")));
        v.push(format!("{:.5}", self.max_abs_err()));
        v.push(self.n_modes.to_string());
        v.push(self.n_spurious.to_string());
        v.push(self.n_fft_peaks.to_string());
        v.push(self.n_fft_spurious.to_string());
        v
    }
}

/// What to compare.
pub struct Plan {
    pub meshes: Vec<String>,
    pub orders: Vec<usize>,
    pub fluxes: Vec<Flux>,
    pub time_s: f64,
    pub backend: BackendKind,
    pub device: Option<String>,
    pub precision: Precision,
}

/// Runs the plan; `row(r)` is called after each run (for progress and incremental output).
pub fn run(plan: &Plan, row: &mut dyn FnMut(&Row) -> Result<()>) -> Result<Vec<Row>> {
    let mut rows = vec![];
    for mesh in &plan.meshes {
        let mut runs = vec![(Method::Dga, 0, None)];
        for &o in &plan.orders {
            for &f in &plan.fluxes {
                runs.push((Method::Dg, o, Some(f)));
            }
        }
        for (method, order, flux) in runs {
            let cfg = Config {
                mesh: Some(mesh.clone()),
                time: Some(plan.time_s),
                backend: plan.backend,
                device: plan.device.clone(),
                precision: plan.precision,
                method,
                order: order.max(1),
                flux: flux.unwrap_or(Flux::Upwind),
                ..Config::default()
            };
            let r = dgatd::run(&cfg, &mut |_, _| {})?;
            let a = &r.analysis;
            let (bytes, flops) = (r.model_bytes_per_step, r.model_flops_per_step);
            let err_pct = MODES.map(|name| {
                a.matched
                    .iter()
                    .find(|m| m.mode.name == name)
                    .and_then(|m| {
                        m.peak
                            .as_ref()
                            .map(|(_, f)| 100.0 * (f - m.mode.f_hz) / m.mode.f_hz)
                    })
                    .unwrap_or(f64::NAN)
            });
            let spurious = a
                .peaks
                .iter()
                .filter(|p| {
                    let f = r.corrected(p);
                    !a.matched
                        .iter()
                        .any(|m| (m.mode.f_hz - f).abs() < 0.03 * m.mode.f_hz)
                })
                .count();
            let lo = 0.05 * r.waveform.f_peak_hz();
            let fft = dgatd::spectrum::find_peaks(&a.spectrum, lo, r.fmax_hz, 0.02);
            let far = |f: f64| {
                !a.matched
                    .iter()
                    .any(|m| (m.mode.f_hz - f).abs() < 0.03 * m.mode.f_hz)
            };
            let n_fft_spurious = fft
                .iter()
                .filter(|p| far(correct_frequency(method, p.f_hz, r.dt_s)))
                .count();
            let row_v = Row {
                n_fft_peaks: fft.len(),
                n_fft_spurious,
                mesh: mesh.clone(),
                tets: r.mesh.n_tets(),
                method,
                order,
                flux: flux
                    .map(|f| f.name().to_string())
                    .unwrap_or_else(|| "-".into()),
                precision: plan.precision,
                backend: r.backend.clone(),
                dofs: r.dofs,
                dt_s: r.dt_s,
                steps: r.record.steps,
                wall_s: r.record.wall_s,
                bytes_per_dof_step: bytes / r.dofs as f64,
                flops_per_dof_step: flops / r.dofs as f64,
                err_pct,
                n_modes: a.peaks.len(),
                n_spurious: spurious,
            };
            row(&row_v)?;
            rows.push(row_v);
        }
    }
    Ok(rows)
}

/// Writes `compare.csv`.
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<()> {
    let mut w = csv::Writer::from_writer(vec![]);
    let err = |e: csv::Error| Error::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    };
    w.write_record(COLUMNS).map_err(err)?;
    for r in rows {
        w.write_record(r.fields()).map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| Error::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    })?;
    dgatd::internal::write_atomic(path, &bytes)
}

/// Plots of the largest error of the four modes against DoFs and against wall time.
pub fn write_plots(dir: &Path, rows: &[Row]) -> Result<Vec<PathBuf>> {
    use super::perf::{Labels, Series, both_formats, register_font};
    register_font()?;
    let mut by_dofs = Series::new();
    let mut by_time = Series::new();
    for r in rows {
        let e = r.max_abs_err();
        if !e.is_finite() || e <= 0.0 {
            continue;
        }
        let key = match r.method {
            Method::Dga => "DGA (leapfrog)".to_string(),
            Method::Dg => format!("DG N={} {}", r.order, r.flux),
        };
        by_dofs
            .entry(key.clone())
            .or_default()
            .push((r.dofs as f64, e));
        by_time.entry(key).or_default().push((r.wall_s, e));
    }
    for v in by_dofs.values_mut().chain(by_time.values_mut()) {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    if by_dofs.is_empty() {
        // no run found all four modes (too short a record?): nothing to plot
        return Ok(vec![]);
    }
    let mut out = vec![];
    both_formats(
        dir,
        "error_vs_dofs",
        &Labels {
            title: "Largest error of TM010, TM110, TM210, TM020",
            x: "degrees of freedom",
            y: "max |relative error| (%)",
        },
        &by_dofs,
        true,
        &mut out,
    )?;
    both_formats(
        dir,
        "error_vs_time",
        &Labels {
            title: "Largest error of the four modes against run time",
            x: "wall time of the time loop (s)",
            y: "max |relative error| (%)",
        },
        &by_time,
        true,
        &mut out,
    )?;
    Ok(out)
}

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// Comma list of meshes (files or bundled:coarse|medium|fine).
    #[arg(long, default_value = "bundled:coarse,bundled:medium")]
    pub mesh: String,
    /// DG orders.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3",
          value_parser = clap::value_parser!(u64).range(1..=dgatd::solver::MAX_DG_ORDER as u64))]
    pub orders: Vec<u64>,
    /// DG fluxes.
    #[arg(
        long,
        value_delimiter = ',',
        value_enum,
        default_value = "upwind,central"
    )]
    pub fluxes: Vec<Flux>,
    /// Simulated time of every run, in seconds.
    #[arg(long, default_value_t = 3e-7, allow_negative_numbers = true)]
    pub time: f64,
    #[arg(long, value_enum, default_value_t)]
    pub backend: BackendKind,
    #[arg(long)]
    pub device: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    pub precision: Precision,
    #[arg(long, default_value = "compare")]
    pub out: PathBuf,
}

/// `dgatd compare`.
pub fn command(a: &CompareArgs) -> Result<()> {
    if !(a.time > 0.0 && a.time.is_finite()) {
        return Err(Error::config(
            "time",
            a.time,
            "must be a positive number of seconds",
        ));
    }
    let meshes: Vec<String> = a.mesh.split(',').map(|s| s.trim().to_string()).collect();
    // (an empty path failed as ": No such file or directory", naming nothing)
    if meshes.iter().any(|m| m.is_empty()) {
        return Err(Error::config(
            "mesh",
            format!("{:?}", a.mesh),
            "an empty path in the list: give comma-separated Gmsh .msh files or bundled:coarse|medium|fine",
        ));
    }
    let plan = Plan {
        meshes,
        orders: a.orders.iter().map(|&o| o as usize).collect(),
        fluxes: a.fluxes.clone(),
        time_s: a.time,
        backend: a.backend,
        device: a.device.clone(),
        precision: a.precision,
    };
    std::fs::create_dir_all(&a.out).map_err(|e| Error::io(&a.out, e))?;
    let csv = a.out.join("compare.csv");
    let mut done = vec![];
    let rows = run(&plan, &mut |r| {
        eprintln!(
            "{} {} N={} {}: {} DoFs, {} steps in {:.2} s, max error {:.3}%, {} spurious",
            r.mesh,
            r.method.name(),
            r.order,
            r.flux,
            r.dofs,
            r.steps,
            r.wall_s,
            r.max_abs_err(),
            r.n_spurious
        );
        done.push(r.clone());
        // written after every run, so that a long comparison never loses finished rows
        write_csv(&csv, &done)
    })?;
    let mut files = vec![csv];
    let plots = write_plots(&a.out, &rows)?;
    if plots.is_empty() {
        eprintln!("note: no run found all four modes (record too short?); no plots written");
    }
    files.extend(plots);
    outln!(
        "{} runs; wrote {}",
        rows.len(),
        dgatd::report::path_list(&files)
    );
    Ok(())
}
