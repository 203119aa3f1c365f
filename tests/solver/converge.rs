//! `--converge`: a refinement ladder of the bundled coarse cylinder (levels 0 and 1 on the
//! CPU backend), the modes matched across levels by label, Richardson extrapolation
//! (`src/solver/converge.rs`). The extrapolated frequencies must be closer to the analytic
//! cylinder than the finest level by a factor (measured, relative to the analytic mode:
//! TM010 −9.3e-4 at the finest level → +6.4e-5 extrapolated, TM110 −2.3e-3 → +2.6e-4,
//! TM020 −4.6e-3 → +2.1e-4; asserted: 4× closer), and the command writes
//! `convergence.csv` and the new `modes.csv` columns.

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
    assert!(
        header.ends_with(
            "q_wall,q_total,f_extrapolated_hz,extrapolation_error_hz,observed_order,levels,members"
        ),
        "{header}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
