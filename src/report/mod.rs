//! Output files of a run. Every file is written atomically (temporary file + rename), so an
//! interrupted write never leaves a truncated CSV behind.
//!
//! - `probe.csv`: `t_s, ex, ey, ez` (probe 0, V/m up to the source's arbitrary scale),
//!   then `ex_1, ey_1, ez_1, ...` for further probes.
//! - `spectrum.csv`: `f_hz, magnitude` (combined probe spectrum, analysed band).
//! - `modes.csv`: one row per detected peak: `index, f_hz` (as measured),
//!   `f_corrected_hz` (the time scheme's shift removed: [`crate::solver::analyse::Correction`]), `dt_s`, `amplitude`, `prominence`,
//!   `nearest_analytic_mode`, `analytic_mode` (the assigned mode, empty where the assignment
//!   is ambiguous), `analytic_hz`, `rel_error` (corrected vs the assigned mode), `method`,
//!   `label_confidence` (0..1, [`crate::spectrum::assign`]), `q_wall` (wall-loss Q of
//!   `conductor` walls by the perturbation method, [`crate::solver::wallq`]; empty
//!   without such walls) and `q_total` (`1/q_total = 1/q + 1/q_wall`, `q` being the Q of
//!   the signal's decay); with `--converge`: `f_extrapolated_hz`,
//!   `extrapolation_error_hz`, `observed_order` (empty where order 2 was assumed) and
//!   `levels` ([`crate::solver::converge`]), then `members`, and (with `--converge`)
//!   `q_extrapolated`, `q_extrapolation_error` (Q extrapolated by the same rule),
//!   `matched_by` (`label`, `shape`: frequency, decay and probe pattern, or `frequency`:
//!   without comparable shapes) and `converge_note` (why a line is not followed over every
//!   level; its extrapolated columns are then empty when it was found at the finest only).
//! - `convergence.csv` (with `--converge`): `mode, refine, tets, dofs, f_corrected_hz, q,
//!   shape_overlap, extrapolation_error_hz, observed_order, q_extrapolation_error, note`:
//!   one row per labelled mode and level, then `extrapolated` rows (`refine` empty, `tets`
//!   `extrapolated`, `f_corrected_hz` the extrapolated frequency, `q` the extrapolated Q);
//!   then per line without a label (`lineI`, `I` its `modes.csv` index) one row per level it
//!   was followed to (`shape_overlap` with the next finer level's line) and its
//!   `extrapolated` row (empty frequency and the note where it was not matched).
//! - `run.toml`: the run's configuration (a valid `--config`: see
//!   [`crate::solver::config`]), then a `[run]` table: version, commit, backend, mesh hash
//!   and counts, time step, timings, source and probes.
//!
//! Plots (`spectrum.png`, `spectrum.svg`) are drawn by the application.

use crate::error::{Error, Result};
use crate::solver::config::Extract;
use crate::solver::resonator::ResonatorResult;
use crate::spectrum::track::{Track, Tracking};
use std::path::{Path, PathBuf};

pub(crate) mod outdir;
pub(crate) mod vtu;

pub use outdir::OutputDir;
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

pub(crate) fn csv_bytes(
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

use crate::util::write_atomic;

fn g(x: f64) -> String {
    format!("{x:.12e}")
}

/// Writes the output files into `dir` (created if missing); returns their paths.
pub fn write_resonator(dir: &Path, r: &ResonatorResult) -> Result<Vec<PathBuf>> {
    let probe = match &r.probe_csv {
        Some(p) if p.parent() == Some(dir) => p.clone(),
        _ => r.record.write_probe_csv(dir)?,
    };
    let mut out = vec![probe];
    let spec = &r.analysis.spectrum;
    // spectrum.csv (the analysed band)
    let p = dir.join("spectrum.csv");
    let kmax = ((r.fmax_hz / spec.df_hz).ceil() as usize).min(spec.mag.len() - 1);
    let rows = (0..=kmax).map(|k| vec![g(spec.freq(k)), g(spec.mag[k])]);
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
        "label_confidence",
        "q_wall",
        "q_total",
        "f_extrapolated_hz",
        "extrapolation_error_hz",
        "observed_order",
        "levels",
        "members",
        "q_extrapolated",
        "q_extrapolation_error",
        "matched_by",
        "converge_note",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let opt = |x: Option<f64>| x.map(g).unwrap_or_default();
    let rows = r.peaks().iter().enumerate().map(|(i, pk)| {
        let fc = r.corrected(pk);
        let x = r.extrapolated.get(i).copied().flatten();
        let t = r.tracks.get(i);
        let nearest = r
            .analysis
            .nearest_mode(fc)
            .map(|m| m.name.clone())
            .unwrap_or_default();
        let label = r.analysis.label(i).cloned().unwrap_or_default();
        let (name, fa, err) = match (&label.mode, label.analytic_hz) {
            (Some(m), Some(fa)) => (m.clone(), g(fa), g((fc - fa) / fa)),
            _ => (String::new(), String::new(), String::new()),
        };
        let confidence = if label.mode.is_some() {
            format!("{:.3}", label.confidence)
        } else {
            String::new()
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
            nearest,
            name,
            fa,
            err,
            if pk.prominence.is_some() {
                "fft".into()
            } else {
                "harminv".into()
            },
            confidence,
            opt(r.q_wall_of(pk)),
            opt(crate::solver::wallq::combine(pk.q, r.q_wall_of(pk))),
            opt(x.map(|x| x.f_hz)),
            opt(x.map(|x| x.error_hz)),
            opt(x.and_then(|x| x.order)),
            x.map(|x| x.levels.to_string()).unwrap_or_default(),
            if pk.members > 0 {
                pk.members.to_string()
            } else {
                String::new()
            },
            opt(t.and_then(|t| t.q).map(|x| x.f_hz)),
            opt(t.and_then(|t| t.q).map(|x| x.error_hz)),
            t.map(|t| t.by.name().to_string()).unwrap_or_default(),
            t.and_then(|t| t.note.clone()).unwrap_or_default(),
        ]
    });
    write_atomic(&p, &csv_bytes(&header, rows, &p)?)?;
    out.push(p);
    // unresolved.csv (a header only when the record resolved the whole band)
    let p = dir.join("unresolved.csv");
    let header: Vec<String> = [
        "f_lo_hz",
        "f_hi_hz",
        "poles",
        "amplitude",
        "bins",
        "cancelling",
        "growing",
        "saturated",
        "merged",
        "loose",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows = r.analysis.unresolved.iter().map(|u| {
        vec![
            g(u.f_lo_hz),
            g(u.f_hi_hz),
            u.poles.to_string(),
            g(u.amplitude),
            g(u.bins),
            u.cancelling.to_string(),
            u.growing.to_string(),
            u.saturated.to_string(),
            u.merged.to_string(),
            u.loose.to_string(),
        ]
    });
    write_atomic(&p, &csv_bytes(&header, rows, &p)?)?;
    out.push(p);
    // run.toml
    let p = dir.join("run.toml");
    write_atomic(&p, run_toml(r)?.as_bytes())?;
    out.push(p);
    let p = dir.join("summary.md");
    write_atomic(&p, summary_md(r).as_bytes())?;
    out.push(p);
    if !r.mode_shapes.is_empty() {
        let p = dir.join("modes.vtu");
        vtu::write_modes(&p, &r.mesh, &r.mode_shapes)?;
        out.push(p);
    }
    Ok(out)
}

/// `summary.md`: the run in a few lines and the mode table.
pub fn summary_md(r: &ResonatorResult) -> String {
    let cfg = &r.config;
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
        r.analysis.start,
        match cfg.extract {
            Extract::Harminv => {
                "harmonic inversion (joint matrix pencil over all probe components)"
            }
            Extract::Fft => "FFT peaks by prominence",
        },
        COMMIT
    );
    let walls = !r.q_wall.is_empty();
    if walls {
        s.push_str("| mode | analytic MHz | measured MHz | corrected MHz | error % | Q | Q_wall | Q_total |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    } else {
        s.push_str("| mode | analytic MHz | measured MHz | corrected MHz | error % | Q |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
    }
    for m in &r.analysis.matched {
        let wall_cells = |p: &crate::spectrum::Peak| {
            if !walls {
                return String::new();
            }
            let cell = |q: Option<f64>| q.map(|q| format!("{q:.4e}")).unwrap_or_else(|| "-".into());
            let qw = r.q_wall_of(p);
            format!(
                " {} | {} |",
                cell(qw),
                cell(crate::solver::wallq::combine(p.q, qw))
            )
        };
        match &m.peak {
            Some((p, fc)) => s.push_str(&format!(
                "| {}{} | {:.4} | {:.4} | {:.4} | {:+.4} | {} |{}\n",
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
                .unwrap_or_else(|| "-".into()),
                wall_cells(p)
            )),
            None => s.push_str(&format!(
                "| {} | {:.4} | not seen | - | - | - |{}\n",
                m.mode.name,
                m.mode.f_hz / 1e6,
                if walls { " - | - |" } else { "" }
            )),
        }
    }
    let unresolved = unresolved_lines(r);
    if !unresolved.is_empty() {
        s.push_str("\n**Unresolved parts of the band** (`unresolved.csv`):\n\n");
        for l in &unresolved {
            s.push_str(&format!("- {l}\n"));
        }
    }
    let unlabelled = unlabelled_lines(r);
    if !unlabelled.is_empty() {
        s.push('\n');
        for l in unlabelled.lines() {
            s.push_str(&format!("- {l}\n"));
        }
    }
    s.push_str(&format!(
        "\nAll {} extracted resonances are in `modes.csv`; the spectrum is `spectrum.png`.\n",
        r.peaks().len()
    ));
    s
}

/// `run.toml`: the configuration (a valid `--config`), then `[run]`: provenance and
/// headline figures.
pub fn run_toml(r: &ResonatorResult) -> Result<String> {
    #[derive(serde::Serialize)]
    struct Run {
        program: &'static str,
        version: &'static str,
        commit: &'static str,
        backend: String,
        mesh: MeshInfo,
        time: TimeInfo,
        source: SourceInfo,
        probes: Vec<[f64; 3]>,
        /// Parts of the band the record did not resolve (absent when none).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        unresolved: Vec<crate::spectrum::extract::Unresolved>,
        /// Rank 0's set-up phases of a partitioned run (absent on one process).
        #[serde(skip_serializing_if = "Option::is_none")]
        setup: Option<crate::solver::setup_times::SetupTimes>,
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
        /// The earliest echo of an open boundary at the probes (`solver::echo`).
        #[serde(skip_serializing_if = "Option::is_none")]
        echo_s: Option<f64>,
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
            analysis_start_step: r.analysis.start,
            setup_wall_s: r.setup_s,
            run_wall_s: r.record.wall_s,
            echo_s: r.echo.map(|e| e.t_s),
        },
        source: SourceInfo {
            point: r.source.point,
            direction: r.source.dir,
            tet: r.source.tet,
            f_peak_hz: r.waveform.f_peak_hz(),
            tau_s: r.waveform.tau / crate::util::C0,
            t0_s: r.waveform.t0 / crate::util::C0,
        },
        probes: r.probe_points.clone(),
        unresolved: r.analysis.unresolved.clone(),
        setup: r.setup_times,
    };
    let mut t = r.config.to_toml()?;
    let run = toml::Table::try_from(&run).map_err(|e| Error::Output {
        path: "run.toml".into(),
        msg: e.to_string(),
    })?;
    t.insert("run".into(), toml::Value::Table(run));
    Ok(format!(
        "# dgatd resonator run: a valid --config (the [run] table is ignored on input)\n{t}"
    ))
}

/// Q of a peak for the terminal table: harmonic inversion's decay Q, `-` for FFT peaks.
fn q_cell(p: &crate::spectrum::Peak) -> String {
    match p.q {
        Some(q) if q.is_finite() => format!("{q:.4e}"),
        Some(_) => "inf".into(),
        None => "-".into(),
    }
}

/// `convergence.csv` of a refinement ladder (see the module documentation).
pub fn write_convergence(
    dir: &Path,
    levels: &[crate::solver::converge::Level],
    finest: &ResonatorResult,
) -> Result<PathBuf> {
    let p = dir.join("convergence.csv");
    let header: Vec<String> = [
        "mode",
        "refine",
        "tets",
        "dofs",
        "f_corrected_hz",
        "q",
        "shape_overlap",
        "extrapolation_error_hz",
        "observed_order",
        "q_extrapolation_error",
        "note",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let opt = |x: Option<f64>| x.map(g).unwrap_or_default();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for l in levels {
        for (m, f) in &l.modes {
            let q = l
                .lines
                .iter()
                .find(|x| x.1.as_deref() == Some(m.as_str()))
                .and_then(|x| x.0.q);
            let mut row = vec![
                m.clone(),
                l.refine.to_string(),
                l.tets.to_string(),
                l.dofs.to_string(),
                g(*f),
                opt(q),
            ];
            row.extend(std::iter::repeat_n(String::new(), 5));
            rows.push(row);
        }
    }
    let extrapolated_row = |name: String, f: Option<f64>, t: Option<&Track>| {
        let x = f.and(t.and_then(|t| t.f));
        vec![
            name,
            String::new(),
            "extrapolated".into(),
            String::new(),
            opt(f),
            opt(t.and_then(|t| t.q).map(|x| x.f_hz)),
            String::new(),
            opt(x.map(|x| x.error_hz)),
            opt(x.and_then(|x| x.order)),
            opt(t.and_then(|t| t.q).map(|x| x.error_hz)),
            t.and_then(|t| t.note.clone()).unwrap_or_default(),
        ]
    };
    for (name, x, i) in ladder_rows(finest) {
        rows.push(extrapolated_row(name, Some(x.f_hz), finest.tracks.get(i)));
    }
    // the lines without a label: each level it was followed to, then its extrapolation
    // (empty, with the note, where it was not matched)
    for t in finest.tracks.iter().filter(|t| t.by != Tracking::Label) {
        for pt in &t.series {
            let l = &levels[pt.level];
            let mut row = vec![
                t.name.clone(),
                l.refine.to_string(),
                l.tets.to_string(),
                l.dofs.to_string(),
                g(pt.f_hz),
                opt(pt.q),
                opt(pt.overlap),
            ];
            row.extend(std::iter::repeat_n(String::new(), 4));
            rows.push(row);
        }
        rows.push(extrapolated_row(
            t.name.clone(),
            t.f.map(|x| x.f_hz),
            Some(t),
        ));
    }
    write_atomic(&p, &csv_bytes(&header, rows.into_iter(), &p)?)?;
    Ok(p)
}

/// The labelled modes of the finest level with their extrapolation, by frequency, and the
/// index of their peak.
fn ladder_rows(
    r: &ResonatorResult,
) -> Vec<(String, crate::spectrum::richardson::Extrapolated, usize)> {
    r.analysis
        .matched
        .iter()
        .filter_map(|m| {
            let (p, _) = m.peak.as_ref()?;
            let i = r.peaks().iter().position(|q| q.f_hz == p.f_hz)?;
            Some((
                m.mode.name.clone(),
                r.extrapolated.get(i).copied().flatten()?,
                i,
            ))
        })
        .collect()
}

/// The table of a refinement ladder: per labelled mode, the corrected frequency at each
/// level, the extrapolated one with its error estimate and observed order, and its
/// difference from the analytic mode; then each line without a label that was followed
/// by its frequency, decay and shape (named `lineI`, `I` its index in `modes.csv`), with
/// the extrapolated Q. The lines that were not matched are listed after the table with
/// the reason ([`ladder_notes`]).
pub fn ladder_table(levels: &[crate::solver::converge::Level], r: &ResonatorResult) -> String {
    let mut s = format!("{:<8}", "mode");
    for l in levels {
        s.push_str(&format!(" {:>13}", format!("refine {} MHz", l.refine)));
    }
    s.push_str(&format!(
        " {:>16} {:>10} {:>6} {:>10} {:>10} {:>9}\n",
        "extrapolated MHz", "± MHz", "order", "vs analytic", "Q extrap.", "± Q"
    ));
    let q_cells = |t: Option<&Track>| match t.and_then(|t| t.q) {
        Some(q) => format!(" {:>10.4} {:>9.2e}", q.f_hz, q.error_hz),
        None => format!(" {:>10} {:>9}", "-", "-"),
    };
    for (name, x, i) in ladder_rows(r) {
        s.push_str(&format!("{name:<8}"));
        for l in levels {
            match l.modes.iter().find(|m| m.0 == name) {
                Some((_, f)) => s.push_str(&format!(" {:>13.5}", f / 1e6)),
                None => s.push_str(&format!(" {:>13}", "-")),
            }
        }
        let analytic = r
            .analysis
            .matched
            .iter()
            .find(|m| m.mode.name == name)
            .map(|m| m.mode.f_hz);
        s.push_str(&format!(
            " {:>16.6} {:>10.2e} {:>6} {:>10}{}\n",
            x.f_hz / 1e6,
            x.error_hz / 1e6,
            x.order
                .map(|p| format!("{p:.2}"))
                .unwrap_or_else(|| "(2)".into()),
            analytic
                .map(|fa| format!("{:+.2e}", (x.f_hz - fa) / fa))
                .unwrap_or_else(|| "-".into()),
            q_cells(r.tracks.get(i))
        ));
    }
    for t in r.tracks.iter().filter(|t| t.by != Tracking::Label) {
        let Some(x) = t.f else { continue };
        s.push_str(&format!("{:<8}", t.name));
        for (k, _) in levels.iter().enumerate() {
            match t.series.iter().find(|p| p.level == k) {
                Some(p) => s.push_str(&format!(" {:>13.5}", p.f_hz / 1e6)),
                None => s.push_str(&format!(" {:>13}", "-")),
            }
        }
        s.push_str(&format!(
            " {:>16.6} {:>10.2e} {:>6} {:>10}{}\n",
            x.f_hz / 1e6,
            x.error_hz / 1e6,
            x.order
                .map(|p| format!("{p:.2}"))
                .unwrap_or_else(|| "(2)".into()),
            "-",
            q_cells(Some(t))
        ));
    }
    s
}

/// One line per line of the finest level that a ladder did not follow over every level:
/// its name, frequency and Q and the reason; a line saying so when the finest level has no
/// line at all (a ladder never ends without a word).
pub fn ladder_notes(r: &ResonatorResult) -> Vec<String> {
    if r.tracks.is_empty() {
        return vec![
            "the finest level found no line: nothing to match across the levels or extrapolate"
                .into(),
        ];
    }
    r.tracks
        .iter()
        .zip(r.peaks())
        .filter_map(|(t, p)| {
            let note = t.note.as_ref()?;
            Some(format!(
                "{} ({:.4} MHz{}): {note}{}",
                t.name,
                r.corrected(p) / 1e6,
                p.q.map(|q| format!(", Q {q:.3}")).unwrap_or_default(),
                if t.f.is_none() {
                    "; no extrapolation"
                } else {
                    ""
                }
            ))
        })
        .collect()
}

/// The table printed after a run: mode, analytic MHz, measured MHz, corrected MHz, error %,
/// Q (from the signal's decay; harmonic inversion only).
pub fn mode_table(r: &ResonatorResult) -> String {
    let mut s = String::new();
    let walls = !r.q_wall.is_empty();
    // with conductor walls: the wall-loss Q after Q (and nothing else changes)
    let qw = |p: &crate::spectrum::Peak| {
        if walls {
            format!(
                " {:>10}",
                r.q_wall_of(p)
                    .map(|q| format!("{q:.4e}"))
                    .unwrap_or_else(|| "-".into())
            )
        } else {
            String::new()
        }
    };
    s.push_str(&format!(
        "{:<8} {:>13} {:>13} {:>14} {:>9} {:>10}{}\n",
        "mode",
        "analytic MHz",
        "measured MHz",
        "corrected MHz",
        "error %",
        "Q",
        if walls {
            format!(" {:>10}", "Q_wall")
        } else {
            String::new()
        }
    ));
    if r.analysis.matched.is_empty() {
        for p in r.peaks() {
            s.push_str(&format!(
                "{:<8} {:>13} {:>13.4} {:>14.4} {:>9} {:>10}{}\n",
                "-",
                "-",
                p.f_hz / 1e6,
                r.corrected(p) / 1e6,
                "-",
                q_cell(p),
                qw(p)
            ));
        }
    }
    let unlabelled = unlabelled_lines(r);
    for m in &r.analysis.matched {
        let name = if m.mode.degeneracy > 1 {
            format!("{} x{}", m.mode.name, m.mode.degeneracy)
        } else {
            m.mode.name.clone()
        };
        match &m.peak {
            Some((p, fc)) => s.push_str(&format!(
                "{:<8} {:>13.4} {:>13.4} {:>14.4} {:>+9.4} {:>10}{}\n",
                name,
                m.mode.f_hz / 1e6,
                p.f_hz / 1e6,
                fc / 1e6,
                100.0 * (fc - m.mode.f_hz) / m.mode.f_hz,
                q_cell(p),
                qw(p)
            )),
            None => s.push_str(&format!(
                "{:<8} {:>13.4} {:>13} {:>14} {:>9} {:>10}\n",
                name,
                m.mode.f_hz / 1e6,
                "not seen",
                "-",
                "-",
                "-"
            )),
        }
    }
    s.push_str(&unlabelled);
    s
}

/// Lines without a label while a catalogue was compared (one line each, with the reason).
/// One line per [`crate::spectrum::extract::Unresolved`] interval of the run, for the
/// terminal's warnings and `summary.md`: where lines may be missing, and why.
pub fn unresolved_lines(r: &ResonatorResult) -> Vec<String> {
    r.analysis
        .unresolved
        .iter()
        .map(|u| {
            let mut why = Vec::new();
            if u.poles > 0 {
                why.push(format!(
                    "{} unreported pole{} (amplitude up to {:.2e} times the strongest reported line) whose two fits disagree by up to {:.2} Fourier bins",
                    u.poles,
                    if u.poles == 1 { "" } else { "s" },
                    u.amplitude,
                    u.bins
                ));
            }
            if u.cancelling > 0 {
                why.push(format!(
                    "{} reported line{} whose fitted amplitudes cancel against a neighbour's (a multiplet the record does not split: a member may be missing, and the amplitudes are not known)",
                    u.cancelling,
                    if u.cancelling == 1 { "" } else { "s" }
                ));
            }
            if u.merged > 0 {
                why.push(format!(
                    "{} reported line{} standing for a multiplet whose members lie closer than a Fourier bin (`members` in modes.csv; the members' own frequencies are not known)",
                    u.merged,
                    if u.merged == 1 { "" } else { "s" }
                ));
            }
            if u.loose > 0 {
                why.push(format!(
                    "{} reported broad line{} whose two fits agree only to within a tenth of {} decay rate (Q known to about that: `error` in modes.csv; the fit does not model the signal there exactly, and a weaker line nearby may be missing)",
                    u.loose,
                    if u.loose == 1 { "" } else { "s" },
                    if u.loose == 1 { "its" } else { "their" }
                ));
            }
            if u.growing > 0 {
                why.push(format!(
                    "{} unreported pole{} at or above the amplitude floor that grow{} (no line of a passive run grows: the fit does not model the signal there)",
                    u.growing,
                    if u.growing == 1 { "" } else { "s" },
                    if u.growing == 1 { "s" } else { "" }
                ));
            }
            if u.saturated > 0 {
                why.push(format!(
                    "{} fitting window{} holding more lines than {} can fit (close lines come out merged: a member of a multiplet may be missing)",
                    u.saturated,
                    if u.saturated == 1 { "" } else { "s" },
                    if u.saturated == 1 { "it" } else { "they" }
                ));
            }
            // past an open boundary's echo a longer record adds the echo, not resolution
            let past_echo = r
                .echo
                .filter(|e| r.record.steps as f64 * r.dt_s > e.t_s)
                .map(|e| format!(" With the open boundary, though, the record already runs past its earliest echo ({:.4} ns): a longer one adds more of the echo, and a broad line is fitted best from one that ends before it.", e.t_s * 1e9))
                .unwrap_or_default();
            format!(
                "lines may be missing in {:.4}-{:.4} MHz: {}; the record ({} steps) is too short for the density of lines there, a longer one (`--steps`, `--time`) resolves them.{past_echo}",
                u.f_lo_hz / 1e6,
                u.f_hi_hz / 1e6,
                why.join("; "),
                r.record.steps
            )
        })
        .collect()
}

fn unlabelled_lines(r: &ResonatorResult) -> String {
    let mut s = String::new();
    if r.analysis.matched.is_empty() {
        return s;
    }
    for (i, p) in r.peaks().iter().enumerate() {
        if let Some(l) = r.analysis.label(i)
            && l.mode.is_none()
        {
            s.push_str(&format!(
                "unlabelled line at {:.4} MHz (corrected): {}\n",
                r.corrected(p) / 1e6,
                l.reason
            ));
        }
    }
    s
}
