//! End-to-end resonator runs on the bundled cylinder meshes (r = 1 m, h = 0.5 m):
//! the four resonances of the seed paper, and second-order spatial convergence.
#![allow(clippy::needless_range_loop)]

use dgatd::solver::ResonatorResult;
use dgatd::solver::{BackendKind, Config};

fn run(mesh: &str, time_s: f64) -> ResonatorResult {
    let cfg = Config {
        mesh: Some(format!("bundled:{mesh}")),
        time: Some(time_s),
        backend: BackendKind::Cpu,
        ..Default::default()
    };
    dgatd::run(&cfg, &mut |_, _| {}).unwrap()
}

fn error_of(r: &ResonatorResult, mode: &str) -> f64 {
    let m = r
        .analysis
        .matched
        .iter()
        .find(|m| m.mode.name == mode)
        .unwrap_or_else(|| panic!("{mode} is not an analytic mode"));
    let (_, fc) = m
        .peak
        .as_ref()
        .unwrap_or_else(|| panic!("{mode} not found in the spectrum"));
    (fc - m.mode.f_hz) / m.mode.f_hz
}

#[test]
fn medium_mesh_finds_the_four_seed_resonances_within_one_percent() {
    let r = run("medium", 1.0e-6);
    assert!(r.mesh.n_tets() > 7000 && r.mesh.n_tets() < 9000);
    for mode in ["TM010", "TM110", "TM210", "TM020"] {
        let e = error_of(&r, mode);
        // Spatial error only (leapfrog shift removed); the inscribed polyhedron makes the
        // cavity slightly small, so the frequencies come out low.
        assert!(e.abs() < 0.01, "{mode}: {:.4}%", 100.0 * e);
        assert!(e < 0.0, "{mode} above the exact value: {:.4}%", 100.0 * e);
    }
    // The TM210 and TM020 peaks are separate peaks.
    let f210 = r
        .analysis
        .matched
        .iter()
        .find(|m| m.mode.name == "TM210")
        .unwrap()
        .peak
        .as_ref()
        .unwrap()
        .1;
    let f020 = r
        .analysis
        .matched
        .iter()
        .find(|m| m.mode.name == "TM020")
        .unwrap()
        .peak
        .as_ref()
        .unwrap()
        .1;
    assert!(f020 - f210 > 10e6);
}

#[test]
fn resonances_converge_at_second_order() {
    // Characteristic lengths of the bundled meshes: 0.15, 0.10, 0.07 m.
    let h = [0.15f64, 0.10, 0.07];
    let e: Vec<f64> = ["coarse", "medium", "fine"]
        .iter()
        .map(|m| error_of(&run(m, 2.0e-6), "TM010"))
        .collect();
    eprintln!("TM010 relative errors {e:?}");
    assert!(e.iter().all(|&x| x < 0.0));
    assert!(e[0].abs() > e[1].abs() && e[1].abs() > e[2].abs());
    let p = (e[0] / e[2]).ln() / (h[0] / h[2]).ln();
    assert!((1.5..2.6).contains(&p), "observed order {p:.2}");
}
