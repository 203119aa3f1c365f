//! Defaults that fit the mesh (issue 12, `dgatd::solver::defaults`), on the whole pipeline
//! (`resonator::run`, CPU backend, f64):
//! - any valid mesh runs with no flags: `--box 1,1,1`, `--box 2,2,2` and seeded random
//!   boxes of 1–3 cells per side and random sides return, with the record and band the
//!   module states (150 n L / c; the smallest of 2.2 f_peak, c/(2π n h), Nyquist/2);
//! - the default table of every bundled cylinder has every labelled mode between −3% and
//!   +0.3% of the analytic cylinder (the leapfrog's time error removed);
//! - a homogeneous fill is compared with the filled modes: ε_r = 2.25 on the coarse
//!   cylinder divides every catalogue frequency by 1.5 exactly (1e-12), the pulse and band
//!   follow, the record is 1.5× longer, and every labelled mode has the vacuum run's error
//!   (the spatial operator is the vacuum one scaled, so the errors agree to 1e-6).

use dgatd::C0;
use dgatd::internal::Rng;
use dgatd::problem::Material;
use dgatd::solver::ResonatorResult;
use dgatd::solver::{BAND_PEAKS, RECORD_PERIODS};
use dgatd::solver::{BackendKind, Config};

fn run(cfg: Config) -> ResonatorResult {
    let what = format!("{:?} {:?}", cfg.mesh, cfg.box_mesh);
    dgatd::run(&cfg, &mut |_, _| {}).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn cpu() -> Config {
    Config {
        backend: BackendKind::Cpu,
        ..Default::default()
    }
}

/// Record, pulse and band of a run against the module's rules, for index `n`.
fn check_defaults(r: &ResonatorResult, n: f64, what: &str) {
    let (lo, hi) = r.mesh.bbox();
    let l = (0..3).map(|c| hi[c] - lo[c]).fold(0.0, f64::max);
    let want_steps = (RECORD_PERIODS * n * l / C0 / r.dt_s).ceil() as usize;
    assert_eq!(r.record.steps, want_steps, "{what}: steps");
    let f_peak = r.waveform.f_peak_hz();
    assert!(
        (f_peak * n * l / C0 - 1.0).abs() < 1e-12,
        "{what}: f_peak {f_peak}"
    );
    assert!(r.fmax_hz <= BAND_PEAKS * f_peak * (1.0 + 1e-12), "{what}");
    assert!(r.fmax_hz <= 0.25 / r.dt_s * (1.0 + 1e-12), "{what}");
    assert!(r.fmax_hz > 0.0, "{what}");
}

#[test]
fn small_and_random_boxes_run_with_no_flags() {
    for b in ["1,1,1", "2,2,2"] {
        let r = run(Config {
            box_mesh: Some(b.parse().unwrap()),
            ..cpu()
        });
        check_defaults(&r, 1.0, b);
        assert!(r.notices.iter().any(|n| n.contains("fmax")), "{b}");
    }
    let mut rng = Rng::new(0x005e_ed12);
    let mut u = |a: f64, b: f64| a + (b - a) * 0.5 * (rng.sym() + 1.0);
    for k in 0..4 {
        let n: Vec<usize> = (0..3).map(|_| u(1.0, 3.99) as usize).collect();
        let l: Vec<f64> = (0..3).map(|_| u(0.3, 3.0)).collect();
        let spec = format!("{},{},{}:{},{},{}", n[0], n[1], n[2], l[0], l[1], l[2]);
        let r = run(Config {
            box_mesh: Some(spec.parse().unwrap()),
            ..cpu()
        });
        check_defaults(&r, 1.0, &format!("random box {k}: {spec}"));
    }
}

/// The labelled modes of a run: (name, corrected error relative to the analytic mode).
fn labelled(r: &ResonatorResult) -> Vec<(String, f64)> {
    r.analysis
        .matched
        .iter()
        .filter_map(|m| {
            m.peak
                .as_ref()
                .map(|(_, fc)| (m.mode.name.clone(), fc / m.mode.f_hz - 1.0))
        })
        .collect()
}

#[test]
fn bundled_cylinders_label_every_mode_between_minus_3_and_plus_0_3_percent() {
    for mesh in ["coarse", "medium", "fine"] {
        let r = run(Config {
            mesh: Some(format!("bundled:{mesh}")),
            ..cpu()
        });
        check_defaults(&r, 1.0, mesh);
        let l = labelled(&r);
        eprintln!("{mesh}: fmax {:.4e} Hz, {l:?}", r.fmax_hz);
        // the four lowest cylinder modes at least (TM010, TM110, TM210, TM020)
        for name in ["TM010", "TM110", "TM210", "TM020"] {
            assert!(
                l.iter().any(|(n, _)| n == name),
                "{mesh}: {name} missing: {l:?}"
            );
        }
        for (name, e) in &l {
            assert!(
                (-0.03..=0.003).contains(e),
                "{mesh}: {name} at {:+.3}%",
                100.0 * e
            );
        }
        // no catalogue mode in the band without its line
        for m in &r.analysis.matched {
            assert!(m.peak.is_some(), "{mesh}: {} not seen", m.mode.name);
        }
    }
}

#[test]
fn a_homogeneous_fill_is_compared_with_the_filled_modes() {
    let vac = run(Config {
        mesh: Some("bundled:coarse".into()),
        ..cpu()
    });
    let mut cfg = Config {
        mesh: Some("bundled:coarse".into()),
        ..cpu()
    };
    cfg.materials
        .insert("vacuum".into(), Material::new(2.25, 1.0));
    let fill = run(cfg);
    check_defaults(&fill, 1.5, "eps 2.25");
    assert_eq!(fill.analysis.fill_index, Some(1.5));
    assert!((vac.dt_s * 1.5 / fill.dt_s - 1.0).abs() < 1e-12);
    assert!((fill.fmax_hz * 1.5 / vac.fmax_hz - 1.0).abs() < 1e-12);
    let (lv, lf) = (labelled(&vac), labelled(&fill));
    eprintln!("vacuum {lv:?}\nfilled {lf:?}");
    assert_eq!(lv.len(), lf.len());
    assert!(lf.len() >= 4);
    for (mv, mf) in vac.analysis.matched.iter().zip(&fill.analysis.matched) {
        assert_eq!(mv.mode.name, mf.mode.name);
        assert!((mv.mode.f_hz / mf.mode.f_hz / 1.5 - 1.0).abs() < 1e-12);
    }
    for ((nv, ev), (nf, ef)) in lv.iter().zip(&lf) {
        assert_eq!(nv, nf);
        assert!((ev - ef).abs() < 1e-6, "{nf}: {ev:e} vs {ef:e}");
    }
}
