//! `--converge`: a refinement ladder of the bundled coarse cylinder (levels 0 and 1 on the
//! CPU backend), the modes matched across levels by label, Richardson extrapolation
//! (`src/solver/converge.rs`). The extrapolated frequencies must be closer to the analytic
//! cylinder than the finest level by a factor (measured, relative to the analytic mode:
//! TM010 −9.3e-4 at the finest level → +6.4e-5 extrapolated, TM110 −2.3e-3 → +2.6e-4,
//! TM020 −4.6e-3 → +2.1e-4; asserted: 4× closer), and the command writes
//! `convergence.csv` and the new `modes.csv` columns.
//!
//! A dielectric sphere (ε_r = 10, radius 1 m, the first-order condition at 2 m; 3 shells
//! across the sphere, 10k tets, and its refinement, 83k tets) has no analytic labels: its
//! lines are followed by frequency, decay and shape (`spectrum::track`), and the refined
//! level's sphere is the true sphere's (`mesh::interfaces`). Measured (record 0.2 µs): TE1
//! 46.291 MHz → 45.766 MHz, extrapolated 45.591 ± 0.175 MHz (Mie 44.840 MHz: +3.23%, +2.06%,
//! +1.67%), Q 7.818 → 7.895 → 7.921 (Mie 9.150); the rest of the error is the near first-order
//! boundary's, which refinement does not remove.

use dgatd::solver::Plan;
use dgatd::solver::RunOptions;
use dgatd::solver::ladder;
use dgatd::solver::{BackendKind, Config};
use std::process::Command;

#[test]
fn extrapolated_frequencies_beat_the_finest_level() {
    let cfg = Config {
        mesh: Some("bundled:coarse".into()),
        backend: BackendKind::Cpu,
        ..Config::default()
    };
    let plan_at = |r: u32| {
        let mut c = cfg.clone();
        c.refine = r;
        Plan::new(&c, None)
    };
    let mut opts = RunOptions::default();
    let l = ladder(1, &plan_at, 0, &mut opts, &mut |_, _| {}, &mut |_, _| {}).unwrap();
    assert_eq!(l.levels.len(), 2);
    assert_eq!(l.levels[1].tets, 8 * l.levels[0].tets);
    let r = &l.finest;
    assert_eq!(r.extrapolated.len(), r.peaks().len());
    for name in ["TM010", "TM110", "TM020"] {
        let m = r
            .analysis
            .matched
            .iter()
            .find(|m| m.mode.name == name)
            .unwrap();
        let (p, fc) = m.peak.as_ref().unwrap();
        let i = r.peaks().iter().position(|q| q.f_hz == p.f_hz).unwrap();
        let x = r.extrapolated[i].expect("an extrapolation");
        let fa = m.mode.f_hz;
        let (e_fine, e_x) = ((fc - fa) / fa, (x.f_hz - fa) / fa);
        println!(
            "{name}: finest {e_fine:+.3e}, extrapolated {e_x:+.3e} ± {:.2e}",
            x.error_hz / fa
        );
        assert!(e_x.abs() * 4.0 < e_fine.abs(), "{name}: {e_fine} -> {e_x}");
        assert_eq!(x.levels, 2);
        // the estimate (correction size) covers the actual error of the extrapolation
        assert!(
            (x.f_hz - fa).abs() < x.error_hz,
            "{name}: estimate {}",
            x.error_hz
        );
    }
}

/// `dgatd::run` runs one mesh: a configuration that asks for a ladder is refused naming
/// `converge` and the function that runs it, instead of running one level without a word.
#[test]
fn one_run_refuses_a_configuration_with_converge() {
    let cfg = Config {
        mesh: Some("bundled:coarse".into()),
        backend: BackendKind::Cpu,
        converge: Some(1),
        ..Config::default()
    };
    let Err(e) = dgatd::run(&cfg, &mut |_, _| {}) else {
        panic!("the run went ahead with converge set")
    };
    let e = e.to_string();
    assert!(
        e.contains("converge") && e.contains("solver::ladder"),
        "{e}"
    );
}

#[test]
fn the_command_writes_the_ladder_and_refuses_a_step_count() {
    let dir = std::env::temp_dir().join(format!("dgatd-converge-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let bin = env!("CARGO_BIN_EXE_dgatd");
    let o = Command::new(bin)
        .args([
            "resonator",
            "--quiet",
            "--mesh",
            "bundled:coarse",
            "--backend",
            "cpu",
        ])
        .args(["--converge", "1", "--steps", "3000", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("steps") && err.contains("--time"),
        "{err}"
    );
    let o = Command::new(bin)
        .args([
            "resonator",
            "--quiet",
            "--mesh",
            "bundled:coarse",
            "--backend",
            "cpu",
        ])
        .args(["--converge", "1", "--time", "6e-7", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("extrapolated MHz") && out.contains("refine 1 MHz"),
        "{out}"
    );
    let conv = std::fs::read_to_string(dir.join("convergence.csv")).unwrap();
    assert!(
        conv.starts_with("mode,refine,tets,dofs,f_corrected_hz"),
        "{conv}"
    );
    assert!(
        conv.contains("TM010,0,2609") && conv.contains("TM010,,extrapolated"),
        "{conv}"
    );
    let modes = std::fs::read_to_string(dir.join("modes.csv")).unwrap();
    let header = modes.lines().next().unwrap();
    // columns are only ever added at the end
    assert!(
        header.contains(
            "q_wall,q_total,f_extrapolated_hz,extrapolation_error_hz,observed_order,levels,members,"
        ) && header.ends_with("q_extrapolated,q_extrapolation_error,matched_by,converge_note"),
        "{header}"
    );
    // the labelled modes are followed by their labels
    let tm010 = modes
        .lines()
        .find(|l| l.contains(",TM010,"))
        .unwrap_or_else(|| panic!("{modes}"));
    assert!(tm010.contains(",label,"), "{tm010}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The dielectric sphere's ladder through the configuration key `converge = 1` (written to
/// `run.toml`), `fmax` appended when given.
fn sphere_ladder(dir: &std::path::Path, extra: &str) -> (String, String) {
    std::fs::remove_dir_all(dir).ok();
    std::fs::create_dir_all(dir).unwrap();
    let cfg = dir.join("sphere.toml");
    std::fs::write(
        &cfg,
        format!(
            "ball = \"3:sphere=1,air=2\"\ntime = 2e-7\nbackend = \"cpu\"\nconverge = 1\n{extra}\
             [materials.sphere]\neps_r = 10\n[boundaries.outer]\nkind = \"abc\"\n"
        ),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_dgatd"))
        .args(["resonator", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    );
    assert!(o.status.success(), "{err}");
    (out, err)
}

/// A CSV file's rows as column name → value maps.
fn rows(path: &std::path::Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|x| {
            let x = x.unwrap();
            h.iter()
                .cloned()
                .zip(x.iter().map(str::to_string))
                .collect()
        })
        .collect()
}

#[test]
fn a_dielectric_sphere_without_labels_converges_toward_mie() {
    use dgatd::spectrum::{MiePol, mie_resonance};
    let dir = std::env::temp_dir().join(format!("dgatd-converge-mie-{}", std::process::id()));
    let (out, err) = sphere_ladder(&dir, "");
    let te = mie_resonance(MiePol::Te, 1, 1, 10.0, 1.0).unwrap();
    let o = dir.join("out");
    assert!(
        std::fs::read_to_string(o.join("run.toml"))
            .unwrap()
            .contains("converge = 1")
    );
    let conv = rows(&o.join("convergence.csv"));
    assert!(!conv.is_empty(), "an empty table");
    // the TE1 line: the finest level's line nearest the Mie root
    let modes = rows(&o.join("modes.csv"));
    let f = |r: &std::collections::HashMap<String, String>, k: &str| r[k].parse::<f64>().ok();
    let line = modes
        .iter()
        .min_by(|a, b| {
            let d = |r| (f(r, "f_corrected_hz").unwrap() / te.f_hz - 1.0).abs();
            d(a).total_cmp(&d(b))
        })
        .unwrap();
    let name = format!("line{}", line["index"]);
    assert_eq!(line["matched_by"], "shape", "{line:?}");
    let series: Vec<f64> = conv
        .iter()
        .filter(|r| r["mode"] == name && !r["refine"].is_empty())
        .map(|r| f(r, "f_corrected_hz").unwrap())
        .collect();
    assert_eq!(series.len(), 2, "{name} at both levels: {conv:?}");
    let x = f(line, "f_extrapolated_hz").expect("an extrapolated TE1");
    let qx = f(line, "q_extrapolated").expect("an extrapolated Q");
    let e: Vec<f64> = series.iter().map(|s| s / te.f_hz - 1.0).collect();
    eprintln!(
        "TE1 (Mie {:.4} MHz, Q {:.3}): {:+.3}% -> {:+.3}%, extrapolated {:+.3}% ± {:.3}%, Q {qx:.3} ({:+.2}%)",
        te.f_hz / 1e6,
        te.q,
        100.0 * e[0],
        100.0 * e[1],
        100.0 * (x / te.f_hz - 1.0),
        100.0 * f(line, "extrapolation_error_hz").unwrap() / te.f_hz,
        100.0 * (qx / te.q - 1.0)
    );
    // toward Mie, by more than a fifth of the coarse error; the limit itself is off by the
    // near boundary (the first-order condition at two radii, its echo inside the record):
    // measured +3.23% -> +2.06%, extrapolated +1.67% ± 0.39%, Q 7.92 against 9.15 (-13%)
    assert!(
        e[1].abs() < 0.8 * e[0].abs(),
        "TE1 does not move toward Mie: {e:?}"
    );
    assert!(
        e[1].abs() < 0.03 && (x / te.f_hz - 1.0).abs() < e[1].abs(),
        "{e:?} {x}"
    );
    assert!((qx / te.q - 1.0).abs() < 0.2, "Q {qx} vs {}", te.q);
    assert!(out.contains(&name), "{out}");
    // every line of the finest level is extrapolated or says why not
    for m in &modes {
        if m["f_extrapolated_hz"].is_empty() {
            let note = &m["converge_note"];
            assert!(!note.is_empty(), "{m:?}");
            assert!(err.contains(note.as_str()), "{note} not told: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// TE1 lies at 46.29 MHz on the coarse level and 45.77 MHz on the refined one: a band
/// ending at 46.0 MHz holds it at the finest level only. The line is named with the level
/// it is missing from; its row in both files says so, with empty extrapolated columns.
#[test]
fn a_line_found_at_one_level_only_is_named() {
    let dir = std::env::temp_dir().join(format!("dgatd-converge-lone-{}", std::process::id()));
    let (_, err) = sphere_ladder(&dir, "fmax = 4.6e7\n");
    let o = dir.join("out");
    let modes = rows(&o.join("modes.csv"));
    assert_eq!(modes.len(), 1, "{modes:?}");
    let m = &modes[0];
    assert!(
        m["f_extrapolated_hz"].is_empty() && m["q_extrapolated"].is_empty(),
        "{m:?}"
    );
    assert!(
        m["converge_note"].contains("not matched at refine 0"),
        "{m:?}"
    );
    assert!(
        err.contains("line0 (45.7")
            && err.contains("not matched at refine 0")
            && err.contains("no extrapolation"),
        "{err}"
    );
    let conv = rows(&o.join("convergence.csv"));
    let x = conv
        .iter()
        .find(|r| r["mode"] == "line0" && r["tets"] == "extrapolated")
        .unwrap_or_else(|| panic!("{conv:?}"));
    assert!(
        x["f_corrected_hz"].is_empty() && x["note"].contains("not matched"),
        "{x:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
