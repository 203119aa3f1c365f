//! The extraction defects of issue 12, each on the pipeline (`resonator::run`, CPU backend):
//! - the 2.6k-tet coarse cylinder at 20 000 steps lost TM010 and reported two lines that
//!   are no eigenvalue of K (105.7 and 169.5 MHz): the record is regenerated here;
//! - doublets came out as triplets: no catalogue mode gets more lines than its degeneracy,
//!   and no band around a doublet holds more than two lines;
//! - lines with negative decay were kept with q = inf: every reported line has q > 0 and
//!   at least `--min-q`;
//! - round-off: the record perturbed at 1e-14 gives the same list;
//! - wrong labels where analytic modes are closer than the mesh error (TE211 / TM120 of the
//!   seed cylinder, 0.5% apart): no label, or one decided by multiplicity;
//! - degenerate runs (`--cfl 1e-300 --steps 100`, `--box 2,2,2`) return (no hang, no
//!   `invalid fmax`).

use dgatd::internal::Rng;
use dgatd::solver::ResonatorResult;
use dgatd::solver::{BackendKind, Config};
use dgatd::spectrum::{self, ExtractSettings as Settings};
use std::sync::OnceLock;

fn coarse(steps: u64, fmax: Option<f64>, min_q: Option<f64>) -> ResonatorResult {
    let cfg = Config {
        mesh: Some("bundled:coarse".into()),
        steps: Some(steps),
        backend: BackendKind::Cpu,
        fmax,
        min_q,
        ..Default::default()
    };
    dgatd::run(&cfg, &mut |_, _| {}).unwrap()
}

fn long() -> &'static ResonatorResult {
    static R: OnceLock<ResonatorResult> = OnceLock::new();
    R.get_or_init(|| coarse(20000, None, None))
}

fn mode_f(r: &ResonatorResult, name: &str) -> f64 {
    r.analysis
        .matched
        .iter()
        .find(|m| m.mode.name == name)
        .unwrap()
        .mode
        .f_hz
}

fn report(r: &ResonatorResult) -> String {
    r.peaks()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let l = r.analysis.label(i).unwrap();
            format!(
                "{:.4} MHz A {:.2e} q {:?} {:?} ({:.2}) {}\n",
                r.corrected(p) / 1e6,
                p.amplitude,
                p.q,
                l.mode,
                l.confidence,
                l.reason
            )
        })
        .collect()
}

#[test]
fn the_coarse_mesh_keeps_tm010_at_every_length_and_reports_nothing_below_it() {
    for steps in [3000u64, 8000, 20000] {
        let own;
        let r = if steps == 20000 {
            long()
        } else {
            own = coarse(steps, None, None);
            &own
        };
        let tm010 = r
            .analysis
            .matched
            .iter()
            .find(|m| m.mode.name == "TM010")
            .unwrap();
        assert!(
            tm010.peak.is_some(),
            "{steps} steps: TM010 lost\n{}",
            report(r)
        );
        let f010 = tm010.mode.f_hz;
        let f110 = mode_f(r, "TM110");
        // K has no eigenvalue below its fundamental, nor between TM010 and TM110 (the
        // coarse mesh's error is about 1%).
        for p in r.peaks() {
            let f = r.corrected(p);
            assert!(
                f > 0.97 * f010,
                "{steps} steps: line at {:.4} MHz below TM010\n{}",
                f / 1e6,
                report(r)
            );
            assert!(
                !(f > 1.03 * f010 && f < 0.95 * f110),
                "{steps} steps: line at {:.4} MHz between TM010 and TM110\n{}",
                f / 1e6,
                report(r)
            );
        }
    }
}

#[test]
fn doublets_come_out_once_per_member() {
    let r = long();
    assert!(r.peaks().len() >= 5, "{}", report(r));
    for m in &r.analysis.matched {
        let n = r
            .analysis
            .labels
            .iter()
            .filter(|l| l.mode.as_deref() == Some(m.mode.name.as_str()))
            .count();
        assert!(
            n <= m.mode.degeneracy,
            "{}: {n} lines for degeneracy {}\n{}",
            m.mode.name,
            m.mode.degeneracy,
            report(r)
        );
    }
    // TM110 and TM210 (doublets, well apart from other modes): at most two lines within
    // 2.5% below to 0.5% above (the coarse mesh puts lines low).
    for name in ["TM110", "TM210"] {
        let f = mode_f(r, name);
        let n = r
            .peaks()
            .iter()
            .filter(|p| {
                let c = r.corrected(p);
                c > 0.975 * f && c < 1.005 * f
            })
            .count();
        assert!(n <= 2, "{name}: {n} lines\n{}", report(r));
        assert!(n >= 1, "{name}: not seen\n{}", report(r));
    }
}

#[test]
fn growing_and_low_q_lines_are_dropped() {
    let r = long();
    for p in r.peaks() {
        let q = p.q.unwrap();
        assert!(q > 0.0, "q = {q} at {}", p.f_hz);
        assert!(p.decay_per_s.unwrap() > -1e-3 * p.f_hz, "{p:?}");
    }
    let r = coarse(3000, None, Some(1e6));
    for p in r.peaks() {
        assert!(p.q.unwrap() >= 1e6, "{p:?}");
    }
}

#[test]
fn a_perturbation_at_1e_14_gives_the_same_list() {
    let r = long();
    let rec = &r.record;
    let start = r.analysis.start;
    let signals = rec.signals(start);
    let top = signals.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut rng = Rng::new(7);
    let perturbed: Vec<Vec<f64>> = signals
        .iter()
        .map(|x| x.iter().map(|v| v + 1e-14 * top * rng.sym()).collect())
        .collect();
    let s = Settings::band(0.05 * r.waveform.f_peak_hz(), r.fmax_hz);
    let a = spectrum::resonances(&signals, r.dt_s, &s).unwrap();
    let b = spectrum::resonances(&perturbed, r.dt_s, &s).unwrap();
    // The pipeline's list is the same extraction.
    assert_eq!(a.len(), r.peaks().len());
    assert_eq!(a.len(), b.len(), "{a:?}\n{b:?}");
    for (x, y) in a.iter().zip(&b) {
        assert!((x.f_hz - y.f_hz).abs() <= 1e-10 * x.f_hz, "{x:?} vs {y:?}");
    }
}

#[test]
fn close_modes_are_labelled_by_multiplicity_or_left_empty() {
    // Seed cylinder (R = 1 m, H = 0.5 m): TM011 (singlet) 321 MHz, TE211 333.3 MHz and
    // TM120 334.6 MHz (doublets 0.4% apart), where the coarse mesh is 3% low. TM011 must go
    // to a single line (not a member of a split pair), a doublet to at most two lines, and
    // TE211's lines lie below TM120's.
    let r = coarse(8000, Some(360e6), None);
    let lines_of = |name: &str| -> Vec<f64> {
        r.analysis
            .labels
            .iter()
            .zip(r.peaks())
            .filter(|(l, _)| l.mode.as_deref() == Some(name))
            .map(|(_, p)| r.corrected(p))
            .collect()
    };
    let tm011 = lines_of("TM011");
    assert!(tm011.len() <= 1, "{}", report(&r));
    for &f in &tm011 {
        let near = r
            .peaks()
            .iter()
            .filter(|p| (r.corrected(p) - f).abs() < 1e-3 * f)
            .count();
        assert_eq!(near, 1, "TM011 at {f} is one of a pair\n{}", report(&r));
    }
    let (te, tm) = (lines_of("TE211"), lines_of("TM120"));
    assert!(te.len() <= 2 && tm.len() <= 2, "{}", report(&r));
    if let (Some(a), Some(b)) = (
        te.iter().cloned().reduce(f64::max),
        tm.iter().cloned().reduce(f64::min),
    ) {
        assert!(a < b, "{}", report(&r));
    }
    eprintln!("{}", report(&r));
}

#[test]
fn degenerate_runs_return() {
    let cfg = Config {
        box_mesh: Some("2,2,2".parse().unwrap()),
        steps: Some(400),
        backend: BackendKind::Cpu,
        ..Default::default()
    };
    let r = dgatd::run(&cfg, &mut |_, _| {}).unwrap();
    assert!(r.fmax_hz < 0.5 / r.dt_s);
    assert!(
        r.notices.iter().any(|n| n.contains("fmax")),
        "{:?}",
        r.notices
    );
    let cfg = Config {
        box_mesh: Some("2,2,2".parse().unwrap()),
        steps: Some(100),
        cfl: 1e-300,
        backend: BackendKind::Cpu,
        ..Default::default()
    };
    // A typed error or a run without lines; either way it returns.
    if let Ok(r) = dgatd::run(&cfg, &mut |_, _| {}) {
        assert!(r.peaks().len() <= 3, "{}", report(&r));
    }
}

/// A record too short for the density of lines says so (issue 12: no lost mode without a
/// word): on a 6000-tet PEC ball with the band up to 3 GHz, 500 steps leave the top of the
/// band unresolved; the command warns, `unresolved.csv` lists the intervals (the same as
/// `[run].unresolved` of `run.toml` and the section of `summary.md`). A box with a sparse
/// spectrum on a long record has none: the file is a header only and nothing is printed.
#[test]
fn a_short_record_of_a_dense_spectrum_says_where_lines_may_be_missing() {
    let bin = env!("CARGO_BIN_EXE_dgatd");
    let run = |name: &str, args: &[&str]| {
        let out = std::env::temp_dir().join(format!("dgatd-unres-{}-{name}", std::process::id()));
        std::fs::remove_dir_all(&out).ok();
        let o = std::process::Command::new(bin)
            .args(["resonator", "--backend", "cpu", "--quiet", "--out"])
            .arg(&out)
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{name}: {err}");
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
        let rows: Vec<Vec<f64>> = read("unresolved.csv")
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
            .collect();
        let res = (err, rows, read("run.toml"), read("summary.md"));
        std::fs::remove_dir_all(&out).ok();
        res
    };
    let (err, rows, toml, md) = run(
        "ball",
        &["--ball", "5:inner=0.1", "--steps", "500", "--fmax", "3e9"],
    );
    assert!(!rows.is_empty(), "no unresolved interval: {err}");
    let warnings = err.matches("warning: lines may be missing in").count();
    assert_eq!(warnings, rows.len(), "{err}");
    let t: toml::Table = toml::from_str(&toml).unwrap();
    let listed = t["run"]["unresolved"].as_array().unwrap();
    assert_eq!(listed.len(), rows.len());
    for (r, u) in rows.iter().zip(listed) {
        let (lo, hi) = (r[0], r[1]);
        assert!(0.0 < lo && lo < hi && hi <= 3e9, "{r:?}");
        // f_lo_hz, f_hi_hz, poles, amplitude, bins, cancelling, growing, saturated, merged,
        // loose: inconsistent poles at or above the floor, lines whose amplitudes cancel,
        // growing poles at or above the floor, saturated windows, merged multiplets a
        // longer record would split, or broad lines reported from a loose fit
        assert_eq!(r.len(), 10, "{r:?}");
        assert!(
            (r[2] >= 1.0 && r[3] >= 1e-4 && r[4] > 1e-3)
                || r[5] >= 1.0
                || r[6] >= 1.0
                || r[7] >= 1.0
                || r[8] >= 1.0
                || r[9] >= 1.0,
            "{r:?}"
        );
        // the CSV carries 13 significant digits, run.toml all of them
        assert!((u["f_lo_hz"].as_float().unwrap() - lo).abs() <= 1e-11 * lo);
        assert_eq!(u["poles"].as_integer().unwrap() as f64, r[2]);
        assert_eq!(u["cancelling"].as_integer().unwrap() as f64, r[5]);
        assert_eq!(u["growing"].as_integer().unwrap() as f64, r[6]);
        assert_eq!(u["saturated"].as_integer().unwrap() as f64, r[7]);
    }
    assert!(md.contains("Unresolved parts of the band"), "{md}");
    let (err, rows, toml, md) = run("box", &["--box", "1,1,1", "--steps", "6000"]);
    assert!(rows.is_empty(), "{rows:?}");
    assert!(!err.contains("warning: lines may be missing"), "{err}");
    assert!(!toml.contains("unresolved"), "{toml}");
    assert!(!md.contains("Unresolved"), "{md}");
}
