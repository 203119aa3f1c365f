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
pub mod vtu;

/// Commit the binary was built from (`-dirty` with uncommitted changes).
pub const COMMIT: &str = env!("DGATD_COMMIT");
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Paths as a comma-separated list, for "wrote ..." messages.
pub fn path_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    (|| {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })()
    .map_err(|e| Error::io(&tmp, e))?;
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

/// Writes `dir/probe.csv` (created if missing): `t_s` and the field of every probe after
/// each recorded step.
pub fn write_probe_csv(dir: &Path, rec: &crate::solver::Record) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let p = dir.join("probe.csv");
    let np = rec.n_probes;
    let mut header = vec!["t_s".to_string(), "ex".into(), "ey".into(), "ez".into()];
    for k in 1..np {
        header.extend([format!("ex_{k}"), format!("ey_{k}"), format!("ez_{k}")]);
    }
    let rows = (0..rec.steps).map(|k| {
        let mut row = vec![g((k + 1) as f64 * rec.dt_s)];
        row.extend((0..3 * np).map(|i| g(rec.samples[k * 3 * np + i])));
        row
    });
    write_atomic(&p, &csv_bytes(&header, rows, &p)?)?;
    Ok(p)
}

/// Writes the four output files into `dir` (created if missing); returns their paths.
pub fn write_resonator(
    dir: &Path,
    cfg: &ResonatorConfig,
    r: &ResonatorResult,
) -> Result<Vec<PathBuf>> {
    let mut out = vec![write_probe_csv(dir, &r.record)?];
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
        "decay_per_s",
        "q",
        "amplitude",
        "phase",
        "error",
        "prominence",
        "n_signals",
        "nearest_analytic_mode",
        "analytic_mode",
        "analytic_hz",
        "rel_error",
        "method",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let opt = |x: Option<f64>| x.map(g).unwrap_or_default();
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
            opt(pk.decay_per_s),
            opt(pk.q),
            g(pk.amplitude),
            opt(pk.phase),
            opt(pk.error),
            opt(pk.prominence),
            pk.n_signals.to_string(),
            name.clone(),
            name,
            fa,
            err,
            if pk.prominence.is_some() {
                "fft".into()
            } else {
                "harminv".into()
            },
        ]
    });
    write_atomic(&p, &csv_bytes(&header, rows, &p)?)?;
    out.push(p);
    // run.toml
    let p = dir.join("run.toml");
    write_atomic(&p, run_toml(cfg, r).as_bytes())?;
    out.push(p);
    // spectrum plot and summary
    out.extend(spectrum_plot(dir, r)?);
    let p = dir.join("summary.md");
    write_atomic(&p, summary_md(cfg, r).as_bytes())?;
    out.push(p);
    if !r.mode_shapes.is_empty() {
        let p = dir.join("modes.vtu");
        vtu::write_modes(&p, &r.mesh, &r.mode_shapes)?;
        out.push(p);
    }
    Ok(out)
}

/// `spectrum.png` / `spectrum.svg`: the combined probe spectrum (log magnitude) over the
/// analysed band, analytic resonances as grey vertical lines, found resonances as red marks.
pub fn spectrum_plot(dir: &Path, r: &ResonatorResult) -> Result<Vec<PathBuf>> {
    use plotters::prelude::*;
    perf::register_font()?;
    let kmax = ((r.fmax_hz / r.spectrum.df_hz).ceil() as usize).min(r.spectrum.mag.len() - 1);
    let pts: Vec<(f64, f64)> = (1..=kmax)
        .map(|k| (r.spectrum.freq(k) / 1e6, r.spectrum.mag[k].max(1e-300)))
        .collect();
    let top = pts.iter().map(|p| p.1).fold(0.0, f64::max);
    if !(top > 0.0) {
        return Ok(vec![]);
    }
    let bottom = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let lo = (top * 1e-7).max(0.5 * bottom);
    let at = |f_mhz: f64| -> f64 {
        let k = ((f_mhz * 1e6 / r.spectrum.df_hz).round() as usize).clamp(1, kmax);
        r.spectrum.mag[k].max(lo)
    };
    let mut files = Vec::new();
    fn draw<DB: DrawingBackend>(
        root: DrawingArea<DB, plotters::coord::Shift>,
        r: &ResonatorResult,
        pts: &[(f64, f64)],
        lo: f64,
        top: f64,
        at: &dyn Fn(f64) -> f64,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let e = |x: &dyn std::fmt::Display| Error::config("plot", "spectrum", x.to_string());
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let xmax = r.fmax_hz / 1e6;
        let mut ch = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Probe spectrum ({} steps, dt = {:.4e} s)",
                    r.record.steps, r.dt_s
                ),
                ("sans-serif", 22),
            )
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..xmax, (lo..top * 3.0).log_scale())
            .map_err(|x| e(&x))?;
        ch.configure_mesh()
            .x_desc("frequency (MHz, as measured)")
            .y_desc("|FFT| (arbitrary)")
            .label_style(("sans-serif", 14))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .draw()
            .map_err(|x| e(&x))?;
        for m in &r.matched {
            let f = m.mode.f_hz / 1e6;
            ch.draw_series(std::iter::once(PathElement::new(
                vec![(f, lo), (f, top * 3.0)],
                RGBColor(150, 150, 150).stroke_width(1),
            )))
            .map_err(|x| e(&x))?;
            ch.draw_series(std::iter::once(Text::new(
                m.mode.name.clone(),
                (f, top * 1.6),
                ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90)),
            )))
            .map_err(|x| e(&x))?;
        }
        ch.draw_series(LineSeries::new(pts.iter().cloned(), BLUE.stroke_width(1)))
            .map_err(|x| e(&x))?
            .label("combined probe spectrum")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE.stroke_width(2)));
        ch.draw_series(
            r.peaks
                .iter()
                .map(|p| TriangleMarker::new((p.f_hz / 1e6, at(p.f_hz / 1e6)), 6, RED.filled())),
        )
        .map_err(|x| e(&x))?
        .label("extracted resonances")
        .legend(|(x, y)| TriangleMarker::new((x + 9, y), 6, RED.filled()));
        ch.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))?;
        Ok(())
    }
    let png = dir.join("spectrum.png");
    draw(
        BitMapBackend::new(&png, (1100, 650)).into_drawing_area(),
        r,
        &pts,
        lo,
        top,
        &at,
    )?;
    files.push(png);
    let svg = dir.join("spectrum.svg");
    draw(
        SVGBackend::new(&svg, (1100, 650)).into_drawing_area(),
        r,
        &pts,
        lo,
        top,
        &at,
    )?;
    files.push(svg);
    Ok(files)
}

/// `summary.md`: the run in a few lines and the mode table.
pub fn summary_md(cfg: &ResonatorConfig, r: &ResonatorResult) -> String {
    let mut s = format!(
        "# Resonator run\n\n- mesh: {} ({} tets, {} DoFs)\n- backend: {} ({}, {} dual)\n- dt = {:.6e} s, {} steps ({:.4} us); spectrum from step {}\n- extraction: {}\n- commit {}\n\n",
        r.mesh.source,
        r.mesh.n_tets(),
        r.dofs,
        r.backend,
        cfg.precision.name(),
        cfg.dual.name(),
        r.dt_s,
        r.record.steps,
        r.record.steps as f64 * r.dt_s * 1e6,
        r.analysis_start,
        match cfg.extract {
            crate::solver::resonator::Extract::Harminv =>
                "harmonic inversion (matrix pencil), clustered over probes",
            crate::solver::resonator::Extract::Fft => "FFT peaks by prominence",
        },
        COMMIT
    );
    s.push_str("| mode | analytic MHz | measured MHz | corrected MHz | error % | Q |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for m in &r.matched {
        match &m.peak {
            Some((p, fc)) => s.push_str(&format!(
                "| {}{} | {:.4} | {:.4} | {:.4} | {:+.4} | {} |\n",
                m.mode.name,
                if m.mode.degeneracy > 1 {
                    format!(" x{}", m.mode.degeneracy)
                } else {
                    String::new()
                },
                m.mode.f_hz / 1e6,
                p.f_hz / 1e6,
                fc / 1e6,
                100.0 * (fc - m.mode.f_hz) / m.mode.f_hz,
                p.q.map(|q| if q.is_finite() {
                    format!("{q:.3e}")
                } else {
                    "inf".into()
                })
                .unwrap_or_else(|| "-".into())
            )),
            None => s.push_str(&format!(
                "| {} | {:.4} | not seen | - | - | - |\n",
                m.mode.name,
                m.mode.f_hz / 1e6
            )),
        }
    }
    s.push_str(&format!(
        "\nAll {} extracted resonances are in `modes.csv`; the spectrum is `spectrum.png`.\n",
        r.peaks.len()
    ));
    s
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
            dofs: r.dofs,
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
