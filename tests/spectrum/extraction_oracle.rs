//! `spectrum::extract` against independent references, on meshes it was not tuned on
//! (random boxes, cylinders and balls: `tests/oracle`):
//! - the eigenvalues of the discrete K (dense): every line the probes see above twice the
//!   amplitude floor is reported once per eigenvalue (each member of a split multiplet), and
//!   nothing else; frequencies to 1e-8 relative (the leapfrog frequency is exact, design note
//!   §10; the bound covers the fit's error on a few thousand samples of a dense spectrum);
//! - the `harminv` program on the same signals, one component at a time: lines strong in a
//!   component (>= 20% of its strongest) are found by both, frequencies within
//!   `max(0.05 / T, 10 x harminv's error estimate)` (T the record length: a twentieth of a
//!   Fourier bin; harminv's actual error on one component of these records reaches 0.015
//!   bins, ~2e-5 relative, many times its estimate), cosine amplitudes within a factor 4/3
//!   (harminv fits the component alone, where neighbouring lines bias its amplitudes);
//! - round-off: the record perturbed at 1e-14 gives the same list of lines.
//!
//! When the `harminv` program is missing its test prints SKIPPED, or fails when
//! `DGATD_REQUIRE_HARMINV=1`.

use crate::oracle::*;
use dgatd::internal::Rng;
use dgatd::spectrum::{self, ExtractSettings as Settings};

fn check_against_k(rig: &Rig, run: &RunOut, what: &str, tol_rel: f64) -> spectrum::Extraction {
    let truth = Truth::new(rig, run);
    let s = Settings::band(rig.fmin_hz, rig.fmax_hz);
    let e = spectrum::extract(&run.signals, rig.dt_s, &s).unwrap();
    let refs = truth.references(rig);
    let sc = score(&e.peaks, &refs, s.amplitude_floor, tol_rel);
    eprintln!(
        "{what}: tets {} free {} | expected {} found {} missed {:?} spurious {:?} max rel err {:.1e} ({} reported, {} windows)",
        rig.mesh.n_tets(),
        rig.n_free(),
        sc.expected,
        sc.found,
        sc.missed,
        sc.spurious,
        sc.max_rel_err,
        e.peaks.len(),
        e.windows
    );
    assert!(sc.expected > 10, "{what}: too few lines to test");
    assert!(sc.missed.is_empty(), "{what}: missed {:?}", sc.missed);
    assert!(sc.spurious.is_empty(), "{what}: spurious {:?}", sc.spurious);
    e
}

#[test]
fn random_meshes_give_the_eigenvalues_of_k_and_nothing_else() {
    for (kind, seed) in [(0, 3u64), (1, 4), (2, 5)] {
        let rig = Rig::new(random_mesh(kind, seed), seed);
        let run = rig.run(rig.start + 4000, false);
        check_against_k(&rig, &run, &format!("kind {kind} seed {seed}"), 1e-8);
    }
}

#[test]
fn f32_records_and_short_records_give_the_same_lines() {
    let rig = Rig::new(random_cylinder(8).0, 8);
    let run = rig.run(rig.start + 4000, true);
    // An f32 run steps the operators rounded to f32, not the f64 K its lines are compared
    // with: every stored entry moves by up to ε₃₂/2 = 6e-8 relative, and an eigenvalue of the
    // product of the primal and dual operators by a few times that, in either direction.
    // Lines matched through the fit's error estimate already sat 2.4e-7 away before the
    // lean step; 5e-7 (8 ε₃₂) is the bound for all lines. With the reference kernels' 24
    // stored values per tet the worst line without a large error estimate happened to land
    // within 1e-8; with the lean step's 10 (the CPU default since cc37589) one line of 34
    // lands 7.2e-8 away (457170713 against 457170746 Hz).
    check_against_k(&rig, &run, "cylinder 8, f32", 5e-7);
}

#[test]
fn a_perturbation_at_1e_14_gives_the_same_list() {
    let rig = Rig::new(random_box(21), 21);
    let run = rig.run(rig.start + 3000, false);
    let s = Settings::band(rig.fmin_hz, rig.fmax_hz);
    let a = spectrum::extract(&run.signals, rig.dt_s, &s).unwrap();
    let mut rng = Rng::new(99);
    let top = run
        .signals
        .iter()
        .flatten()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let perturbed: Vec<Vec<f64>> = run
        .signals
        .iter()
        .map(|x| x.iter().map(|v| v + 1e-14 * top * rng.sym()).collect())
        .collect();
    let b = spectrum::extract(&perturbed, rig.dt_s, &s).unwrap();
    assert!(a.peaks.len() > 10);
    let fa: Vec<f64> = a.peaks.iter().map(|p| p.f_hz).collect();
    let fb: Vec<f64> = b.peaks.iter().map(|p| p.f_hz).collect();
    assert_eq!(fa.len(), fb.len(), "{fa:?}\n{fb:?}");
    for (x, y) in fa.iter().zip(&fb) {
        assert!((x - y).abs() <= 1e-10 * x, "{x} vs {y}");
    }
}

#[test]
fn agrees_with_the_harminv_program() {
    if !harminv_available() {
        if std::env::var("DGATD_REQUIRE_HARMINV").as_deref() == Ok("1") {
            panic!("the harminv program is missing and DGATD_REQUIRE_HARMINV=1");
        }
        eprintln!("SKIPPED agrees_with_the_harminv_program: the harminv program is missing");
        return;
    }
    let rig = Rig::new(random_box(11), 5);
    let run = rig.run(rig.start + 5000, false);
    let s = Settings::band(rig.fmin_hz, rig.fmax_hz);
    let e = spectrum::extract(&run.signals, rig.dt_s, &s).unwrap();
    let top = e.peaks.iter().map(|p| p.amplitude).fold(0.0, f64::max);
    let mut compared = 0;
    let mut worst = 0.0f64;
    let record_s = e.record_s;
    for c in 0..run.signals.len() {
        let h = harminv(
            &run.signals[c],
            rig.dt_s,
            rig.fmin_hz,
            rig.fmax_hz,
            0.0,
            300,
        );
        let ctop = e.peaks.iter().map(|p| p.amplitudes[c]).fold(0.0, f64::max);
        // Both ways, for lines strong in this component (harminv fits one component; weak
        // lines of a dense spectrum are beyond its accuracy there).
        for p in e.peaks.iter().filter(|p| p.amplitudes[c] >= 0.2 * ctop) {
            // harminv on a sub-band around the line, shifted to 1% below it (fewer basis
            // functions; the 6 printed digits resolve f - f0 to 1e-8 of f; a line at the
            // shifted frequency 0 itself is not reported by harminv).
            let sub = harminv(
                &run.signals[c],
                rig.dt_s,
                0.985 * p.f_hz,
                1.015 * p.f_hz,
                0.99 * p.f_hz,
                100,
            );
            let near = sub
                .iter()
                .min_by(|a, b| (a.f_hz - p.f_hz).abs().total_cmp(&(b.f_hz - p.f_hz).abs()))
                .expect("harminv found lines");
            // harminv on one component of a few thousand samples (~100 periods) with other
            // lines nearby is off by up to 0.015 Fourier bins, many times its own
            // estimate (extract matches K to ~1e-14 on such records, tests above).
            let tol = (0.05 / record_s).max(10.0 * near.err_hz);
            worst = worst.max((near.f_hz - p.f_hz).abs() / p.f_hz);
            assert!(
                (near.f_hz - p.f_hz).abs() <= tol,
                "component {c}: extract {:.7e} (A {:.2e}), harminv nearest {:.7e} (err {:.1e} Hz, {:.1e} bins)",
                p.f_hz,
                p.amplitudes[c],
                near.f_hz,
                near.err_hz,
                (near.f_hz - p.f_hz).abs() * record_s
            );
            // harminv's amplitude is half the cosine amplitude.
            let ra = 2.0 * near.amplitude / p.amplitudes[c];
            assert!(
                (0.75..1.33).contains(&ra),
                "amplitude ratio {ra} at {}",
                p.f_hz
            );
            compared += 1;
        }
        for l in h.iter().filter(|l| {
            2.0 * l.amplitude >= 0.2 * ctop
                && l.err_hz <= 1e-7 * l.f_hz
                && l.decay_per_s.abs() * rig.dt_s * run.signals[c].len() as f64 <= 1e-3
        }) {
            let ok = e
                .peaks
                .iter()
                .any(|p| (p.f_hz - l.f_hz).abs() <= (0.05 / record_s).max(10.0 * l.err_hz));
            assert!(
                ok,
                "component {c}: harminv line {:.7e} not extracted",
                l.f_hz
            );
        }
    }
    eprintln!(
        "{compared} lines compared; largest relative difference {worst:.1e} ({:.1e} bins)",
        worst * e.peaks.last().map(|p| p.f_hz).unwrap_or(0.0) * record_s
    );
    assert!(compared > 5, "{compared} lines compared (top {top:e})");
}

/// Short records of dense spectra miss lines (results/extraction: the counting limit), but
/// never silently: every line the extraction misses lies in one of its `unresolved`
/// intervals, and a record long enough to resolve every line has no such interval. Meshes
/// and seeds other than those of the sweep the rule was read from (seeds 11-13).
/// Asserts that no missed line lies outside every unresolved interval (`silent`) and that
/// nothing spurious was reported.
fn no_silent_miss_nor_spurious(silent: &[f64], sc: &Score, what: &str) {
    assert!(
        silent.is_empty(),
        "{what}: missed without a flag {silent:?}"
    );
    assert!(sc.spurious.is_empty(), "{what}: spurious {:?}", sc.spurious);
}

#[test]
fn every_line_missed_by_a_short_record_is_flagged_unresolved() {
    let mut flagged = 0;
    for (kind, seed) in [(2, 31u64), (2, 32), (1, 33), (0, 34)] {
        let rig = Rig::new(random_mesh(kind, seed), seed);
        let run = rig.run(rig.start + 5000, false);
        let refs = Truth::new(&rig, &run).references(&rig);
        for n in [1000usize, 2000, 5000] {
            let sig: Vec<Vec<f64>> = run.signals.iter().map(|x| x[..n].to_vec()).collect();
            let s = Settings::band(rig.fmin_hz, rig.fmax_hz);
            let e = spectrum::extract(&sig, rig.dt_s, &s).unwrap();
            let sc = score(&e.peaks, &refs, s.amplitude_floor, 1e-8);
            let silent = missed_unflagged(&sc.missed, &e.unresolved);
            eprintln!(
                "kind {kind} seed {seed}, {n} samples: expected {} missed {} (not flagged {silent:?}), spurious {}, unresolved {:?}",
                sc.expected,
                sc.missed.len(),
                sc.spurious.len(),
                e.unresolved
                    .iter()
                    .map(|u| (u.f_lo_hz, u.f_hi_hz, u.poles))
                    .collect::<Vec<_>>()
            );
            no_silent_miss_nor_spurious(&silent, &sc, &format!("seed {seed}, {n} samples"));
            flagged += sc.missed.len();
            if n == 5000 {
                assert!(
                    sc.missed.is_empty(),
                    "seed {seed}: 5000 samples missed {:?}",
                    sc.missed
                );
                assert!(
                    e.unresolved.is_empty(),
                    "seed {seed}: 5000 samples flagged {:?}",
                    e.unresolved
                );
            }
        }
    }
    // the test must see misses to test anything (the balls at 1000 samples)
    assert!(
        flagged > 20,
        "only {flagged} missed lines: the records are not short enough to test the flags"
    );
}

/// Meshes of 1.5k–3k tets in the band the resonator job defaults to: there the members of a
/// mesh-split multiplet lie far closer than a Fourier bin of a few thousand steps, and a
/// record fits one pole plus neighbours whose amplitudes cancel. Every line the long record
/// has and a short one lacks must lie in an unresolved interval, and without the
/// cancellation test (`max_amplitude_excess = inf`) some would not. Seeds 61-64 were not
/// used to choose the test's threshold (that was read from seeds 41 and 42).
#[test]
fn a_multiplet_a_short_record_does_not_split_is_flagged_unresolved() {
    let (mut flagged, mut silent_without) = (0, 0);
    for (kind, seed) in [(2u32, 61u64), (2, 62), (1, 63), (2, 64)] {
        let mesh = match kind {
            1 => random_cylinder_n(seed, 2).0,
            _ => random_ball_n(seed, 2).0,
        };
        let rig = Rig::new(mesh, seed).with_default_band();
        let run = rig.run(rig.start + 20000, false);
        let mut s = Settings::band(rig.fmin_hz, rig.fmax_hz);
        let refs = long_record_references(&rig, &run, &s);
        for n in [2000usize, 5000] {
            let sig: Vec<Vec<f64>> = run.signals.iter().map(|x| x[..n].to_vec()).collect();
            s.max_amplitude_excess = spectrum::CANCELLING;
            let e = spectrum::extract(&sig, rig.dt_s, &s).unwrap();
            let sc = score(&e.peaks, &refs, s.amplitude_floor, 1e-6);
            let silent = missed_unflagged(&sc.missed, &e.unresolved);
            s.max_amplitude_excess = f64::INFINITY;
            let e0 = spectrum::extract(&sig, rig.dt_s, &s).unwrap();
            let sc0 = score(&e0.peaks, &refs, s.amplitude_floor, 1e-6);
            let silent0 = missed_unflagged(&sc0.missed, &e0.unresolved);
            eprintln!(
                "kind {kind} seed {seed}, {n} samples: {} lines, missed {} (not flagged {silent:?}; {} without the test), spurious {:?}, intervals {:?}",
                sc.expected,
                sc.missed.len(),
                silent0.len(),
                sc.spurious,
                e.unresolved
                    .iter()
                    .map(|u| (u.f_lo_hz, u.f_hi_hz, u.poles, u.cancelling))
                    .collect::<Vec<_>>()
            );
            no_silent_miss_nor_spurious(&silent, &sc, &format!("seed {seed}, {n} samples"));
            flagged += sc.missed.len();
            silent_without += silent0.len();
        }
    }
    assert!(flagged > 5, "only {flagged} missed lines: nothing to flag");
    assert!(
        silent_without > 0,
        "every miss is flagged without the cancellation test too: the test does not test it"
    );
}

/// Short records of meshes of realistic size, in the band the resonator job defaults to, in
/// f64 and f32 (the `--larger` sweep's rig on seeds 71-74, which nothing was read from):
/// every line of the long record that a short one lacks lies in an unresolved interval,
/// and no reported line is spurious. Two kinds of miss were silent before the saturated
/// windows and the growing poles marked their bands (results/extraction/README.md): a
/// multiplet merged into one clean-looking pole inside a window filled to capacity, and in
/// f32 a line fitted as a growing pole.
#[test]
fn a_short_record_of_a_larger_mesh_loses_no_line_silently_in_f64_or_f32() {
    let mut missed = 0;
    for (kind, seed) in [(2u32, 71u64), (2, 72), (1, 73), (0, 74)] {
        let mesh = match kind {
            0 => random_box_n(seed, 2),
            1 => random_cylinder_n(seed, 2).0,
            _ => random_ball_n(seed, 2).0,
        };
        let rig = Rig::new(mesh, seed).with_default_band();
        let s = Settings::band(rig.fmin_hz, rig.fmax_hz);
        let long = rig.run(rig.start + 40000, false);
        let refs = long_record_references(&rig, &long, &s);
        let single = rig.run(rig.start + 5000, true);
        // f32 operators move the eigenvalues by ~1e-7 relative
        for (run, tol, what) in [(&long, 1e-6, "f64"), (&single, 2e-6, "f32")] {
            for n in [1000usize, 2000, 5000] {
                let sig: Vec<Vec<f64>> = run.signals.iter().map(|x| x[..n].to_vec()).collect();
                let e = spectrum::extract(&sig, rig.dt_s, &s).unwrap();
                let sc = score(&e.peaks, &refs, s.amplitude_floor, tol);
                let silent = missed_unflagged(&sc.missed, &e.unresolved);
                eprintln!(
                    "kind {kind} seed {seed} {what}, {n} samples: {} lines, missed {} (not flagged {silent:?}), spurious {:?}, {} intervals",
                    sc.expected,
                    sc.missed.len(),
                    sc.spurious,
                    e.unresolved.len()
                );
                no_silent_miss_nor_spurious(
                    &silent,
                    &sc,
                    &format!("seed {seed} {what}, {n} samples"),
                );
                missed += sc.missed.len();
            }
        }
    }
    assert!(missed > 5, "only {missed} missed lines: nothing to flag");
}
