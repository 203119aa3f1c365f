//! Output files of a run. Every file is written atomically (temporary file + rename), so an
//! interrupted write never leaves a truncated CSV behind.
//!
//! - `probe.csv`: `t_s, ex, ey, ez` (probe 0, V/m up to the source's arbitrary scale),
//!   then `ex_1, ey_1, ez_1, ...` for further probes.
//! - `spectrum.csv`: `f_hz, magnitude` (combined probe spectrum, analysed band).
//! - `modes.csv`: one row per detected peak: `index, f_hz` (as measured),
//!   `f_corrected_hz` (leapfrog shift removed), `dt_s`, `amplitude`, `prominence`,
//!   `nearest_analytic_mode`, `analytic_hz`, `rel_error` (corrected vs analytic).
//! - `run.toml`: every parameter, mesh hash, counts, version and commit.

use crate::solver::resonator::{ResonatorConfig, ResonatorResult};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

pub mod perf;

/// Commit the binary was built from (`-dirty` with uncommitted changes).
pub const COMMIT: &str = env!("DGATD_COMMIT");
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

fn csv_bytes(
    header: &[String],
    rows: impl Iterator<Item = Vec<String>>,
    path: &Path,
) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| Error::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    };
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(&r).map_err(err)?;
    }
    w.into_inner().map_err(|e| Error::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    })
}

fn g(x: f64) -> String {
    format!("{x:.12e}")
}

/// Writes the four output files into `dir` (created if missing); returns their paths.
pub fn write_resonator(
    dir: &Path,
    cfg: &ResonatorConfig,
    r: &ResonatorResult,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut out = Vec::new();
    // probe.csv
    let p = dir.join("probe.csv");
    let np = r.record.n_probes;
    let mut header = vec!["t_s".to_string(), "ex".into(), "ey".into(), "ez".into()];
    for k in 1..np {
        header.extend([format!("ex_{k}"), format!("ey_{k}"), format!("ez_{k}")]);
    }
    let rows = (0..r.record.steps).map(|k| {
        let mut row = vec![g((k + 1) as f64 * r.dt_s)];
        row.extend((0..3 * np).map(|i| g(r.record.samples[k * 3 * np + i])));
        row
    });
    write_atomic(&p, &csv_bytes(&header, rows, &p)?)?;
    out.push(p);
    // spectrum.csv (the analysed band)
    let p = dir.join("spectrum.csv");
    let kmax = ((r.fmax_hz / r.spectrum.df_hz).ceil() as usize).min(r.spectrum.mag.len() - 1);
    let rows = (0..=kmax).map(|k| vec![g(r.spectrum.freq(k)), g(r.spectrum.mag[k])]);
    write_atomic(
        &p,
        &csv_bytes(&["f_hz".into(), "magnitude".into()], rows, &p)?,
    )?;
    out.push(p);
    // modes.csv
    let p = dir.join("modes.csv");
    let header: Vec<String> = [
        "index",
        "f_hz",
        "f_corrected_hz",
        "dt_s",
        "amplitude",
        "prominence",
        "nearest_analytic_mode",
        "analytic_hz",
        "rel_error",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows = r.peaks.iter().enumerate().map(|(i, pk)| {
        let fc = r.corrected(pk);
        let (name, fa, err) = match r.nearest_mode(fc) {
            Some(m) => (m.name.clone(), g(m.f_hz), g((fc - m.f_hz) / m.f_hz)),
            None => (String::new(), String::new(), String::new()),
        };
        vec![
            i.to_string(),
            g(pk.f_hz),
            g(fc),
            g(r.dt_s),
            g(pk.amplitude),
            g(pk.prominence),
            name,
            fa,
            err,
        ]
    });
    write_atomic(&p, &csv_bytes(&header, rows, &p)?)?;
    out.push(p);
    // run.toml
    let p = dir.join("run.toml");
    write_atomic(&p, run_toml(cfg, r).as_bytes())?;
    out.push(p);
    Ok(out)
}

/// `run.toml`: parameters, provenance and headline figures.
pub fn run_toml(cfg: &ResonatorConfig, r: &ResonatorResult) -> String {
    #[derive(serde::Serialize)]
    struct Run<'a> {
        program: &'static str,
        version: &'static str,
        commit: &'static str,
        backend: String,
        config: &'a ResonatorConfig,
        mesh: MeshInfo,
        time: TimeInfo,
        source: SourceInfo,
        probes: Vec<[f64; 3]>,
    }
    #[derive(serde::Serialize)]
    struct MeshInfo {
        source: String,
        fnv1a64: String,
        vertices: usize,
        edges: usize,
        tets: usize,
        free_half_edges: usize,
        dofs: usize,
    }
    #[derive(serde::Serialize)]
    struct TimeInfo {
        dt_s: f64,
        rho_k_with_margin: f64,
        steps: usize,
        simulated_s: f64,
        analysis_start_step: usize,
        setup_wall_s: f64,
        run_wall_s: f64,
    }
    #[derive(serde::Serialize)]
    struct SourceInfo {
        point: [f64; 3],
        direction: [f64; 3],
        tet: usize,
        f_peak_hz: f64,
        tau_s: f64,
        t0_s: f64,
    }
    let run = Run {
        program: "dgatd",
        version: VERSION,
        commit: COMMIT,
        backend: r.backend.clone(),
        config: cfg,
        mesh: MeshInfo {
            source: r.mesh.source.clone(),
            fnv1a64: r
                .mesh_hash
                .map(|h| format!("{h:016x}"))
                .unwrap_or_else(|| "generated".into()),
            vertices: r.mesh.n_vertices(),
            edges: r.n_edges,
            tets: r.mesh.n_tets(),
            free_half_edges: r.n_free_half,
            dofs: 4 * r.mesh.n_tets() + r.n_free_half,
        },
        time: TimeInfo {
            dt_s: r.dt_s,
            rho_k_with_margin: r.rho,
            steps: r.record.steps,
            simulated_s: r.record.steps as f64 * r.dt_s,
            analysis_start_step: r.analysis_start,
            setup_wall_s: r.setup_s,
            run_wall_s: r.record.wall_s,
        },
        source: SourceInfo {
            point: r.source.point,
            direction: r.source.dir,
            tet: r.source.tet,
            f_peak_hz: crate::C0 / (2.0 * std::f64::consts::PI * r.waveform.tau),
            tau_s: r.waveform.tau / crate::C0,
            t0_s: r.waveform.t0 / crate::C0,
        },
        probes: r.probes.iter().map(|p| p.point).collect(),
    };
    toml::to_string(&run).unwrap_or_else(|e| format!("# run.toml could not be serialised: {e}\n"))
}

/// The table printed after a run: mode, analytic MHz, measured MHz, corrected MHz, error %.
pub fn mode_table(r: &ResonatorResult) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{:<8} {:>13} {:>13} {:>14} {:>9}\n",
        "mode", "analytic MHz", "measured MHz", "corrected MHz", "error %"
    ));
    if r.matched.is_empty() {
        for p in &r.peaks {
            s.push_str(&format!(
                "{:<8} {:>13} {:>13.4} {:>14.4} {:>9}\n",
                "-",
                "-",
                p.f_hz / 1e6,
                r.corrected(p) / 1e6,
                "-"
            ));
        }
    }
    for m in &r.matched {
        let name = if m.mode.degeneracy > 1 {
            format!("{} x{}", m.mode.name, m.mode.degeneracy)
        } else {
            m.mode.name.clone()
        };
        match &m.peak {
            Some((p, fc)) => s.push_str(&format!(
                "{:<8} {:>13.4} {:>13.4} {:>14.4} {:>+9.4}\n",
                name,
                m.mode.f_hz / 1e6,
                p.f_hz / 1e6,
                fc / 1e6,
                100.0 * (fc - m.mode.f_hz) / m.mode.f_hz
            )),
            None => s.push_str(&format!(
                "{:<8} {:>13.4} {:>13} {:>14} {:>9}\n",
                name,
                m.mode.f_hz / 1e6,
                "not seen",
                "-",
                "-"
            )),
        }
    }
    s
}
