//! Conduction losses (design note §12): the configuration keys, the Crank–Nicolson loss
//! step against exact identities (energy − dissipation, lossless bit-identity, the
//! unchanged stability limit) and the per-mode Q of a homogeneously conducting fill
//! against the exact discrete amplification and against Q = ω ε / σ.

use crate::common::*;
use dgatd::C0;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::{CpuStepper, dissipation};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::internal::Rng;
use dgatd::mesh::Topology;
use dgatd::problem::{EPS0, ETA0, Material, Media, Waveform};
use dgatd::solver;
use dgatd::solver::Plan;
use dgatd::solver::{Config, Origin};
use dgatd::spectrum::leapfrog_correction;
use std::f64::consts::PI;
use std::sync::Arc;

fn plan_of(text: &str) -> dgatd::Result<Plan> {
    let o = Origin {
        path: "job.toml".into(),
        text: text.into(),
    };
    let cfg = Config::parse(&o)?;
    Plan::new(&cfg, Some(o))
}

#[test]
fn conductivity_keys_are_read_and_checked() {
    let p = plan_of("mesh = \"bundled:coarse\"\n[materials.vacuum]\neps_r = 2.0\nsigma = 0.5\n")
        .unwrap();
    assert_eq!(p.problem.materials["vacuum"].conductivity(), 0.5);
    // σ = 2π f ε₀ ε_r tanδ, added to sigma
    let p = plan_of(
        "mesh = \"bundled:coarse\"\n[materials.vacuum]\neps_r = 4.0\ntan_delta = 1e-3\nf_tan_delta = 1e9\n",
    )
    .unwrap();
    let s = p.problem.materials["vacuum"].conductivity();
    let want = 2.0 * PI * 1e9 * EPS0 * 4.0 * 1e-3;
    assert!((s - want).abs() <= 1e-15 * want, "{s} vs {want}");
    for (text, key) in [
        ("sigma = -1.0", "sigma"),
        ("sigma = nan", "sigma"),
        ("tan_delta = 1e-3", "tan_delta"),
        ("f_tan_delta = 1e9", "f_tan_delta"),
        ("tan_delta = -1e-3\nf_tan_delta = 1e9", "tan_delta"),
        ("tan_delta = 1e-3\nf_tan_delta = 0.0", "f_tan_delta"),
    ] {
        let e = plan_of(&format!(
            "mesh = \"bundled:coarse\"\n[materials.vacuum]\n{text}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains(key) && e.contains("vacuum"), "{text}: {e}");
    }
    // the DG method refuses conductors rather than ignoring them
    let e =
        plan_of("mesh = \"bundled:coarse\"\nmethod = \"dg\"\n[materials.vacuum]\nsigma = 1.0\n")
            .unwrap_err()
            .to_string();
    assert!(e.contains("conducting"), "{e}");
}

/// Random ε, μ; σ (library units) on a random half of the tets, the other half lossless.
fn lossy_media(n: usize, seed: u64, sigma: f64) -> Media {
    let mut r = Rng::new(seed);
    let mut m = Media::lossless(
        (0..n).map(|_| 1.0 + 3.0 * r.uniform()).collect(),
        (0..n).map(|_| 1.0 + 2.0 * r.uniform()).collect(),
    );
    m.sigma = (0..n)
        .map(|_| {
            if r.uniform() < 0.5 {
                sigma * (0.5 + r.uniform())
            } else {
                0.0
            }
        })
        .collect();
    m
}

fn steps_of(s: &mut CpuStepper<f64>, n: usize) {
    let mut sink = Vec::new();
    s.advance(0, n, &mut sink).unwrap();
}

/// `W^(n+1) − W^n = −Δt Ūᵀ Msig Ū` at every step, to round-off, with σ on part of the
/// mesh and random ε, μ; and W decreases.
#[test]
fn energy_decrease_equals_the_dissipation() {
    for (dims, seed) in [([4, 3, 3], 3u64), ([3, 4, 2], 17)] {
        let m = jittered_box(dims, seed, 0.25);
        let t = Topology::build(&m).unwrap();
        let media = lossy_media(m.n_tets(), seed + 1, 2.0);
        let d = Arc::new(Dga::assemble(&m, &t, &media).unwrap());
        assert!(d.msig.is_some());
        let (dt, _) = solver::time_step(&d, 0.95).unwrap();
        let ops = Arc::new(Operators::<f64>::new(&d, dt, true));
        assert!(ops.is_lossy());
        for dual in [DualForm::Factored, DualForm::Csr] {
            let mut s = CpuStepper::new(d.clone(), ops.clone(), dual, None, vec![]).unwrap();
            let (u, f) = random_state(&d, seed + 2);
            s.set_state(&u, &f).unwrap();
            let w0 = s.energy().unwrap();
            let mut w = w0;
            let mut worst = 0.0f64;
            let mut dissipated = 0.0;
            for _ in 0..300 {
                let u0 = s.u().to_vec();
                steps_of(&mut s, 1);
                let w1 = s.energy().unwrap();
                let diss = dissipation(&d, dt, &u0, s.u());
                assert!(diss >= 0.0);
                worst = worst.max(((w1 - w) + diss).abs() / w0);
                assert!(w1 <= w, "energy grew: {w} -> {w1}");
                dissipated += diss;
                w = w1;
            }
            eprintln!(
                "{dims:?} {}: W {w0:.6e} -> {w:.6e}, dissipated {dissipated:.6e}, worst |ΔW + D|/W0 = {worst:.2e}",
                dual.name()
            );
            // f64 round-off of sums over ~1e3 terms: ~1e-15 observed
            assert!(worst < 1e-13, "{worst:e}");
            assert!(w < 0.9 * w0, "too little loss to test: {w} of {w0}");
        }
    }
}

/// σ = 0 everywhere (explicit zeros) gives exactly the lossless operators and states; with
/// σ on part of the mesh, the blocks of the vertices away from it are bit-identical and
/// the stable Δt is unchanged.
#[test]
fn zero_sigma_is_bit_identical_and_dt_is_unchanged() {
    let m = jittered_box([4, 3, 3], 29, 0.2);
    let t = Topology::build(&m).unwrap();
    let mut lossy = lossy_media(m.n_tets(), 31, 3.0);
    // conducting only in the tets with centroid x < 0.35 m
    for (n, tv) in m.tets.iter().enumerate() {
        let x: f64 = tv.iter().map(|&v| m.nodes[v as usize][0]).sum::<f64>() / 4.0;
        if x >= 0.35 {
            lossy.sigma[n] = 0.0;
        }
    }
    let plain = Media::lossless(lossy.eps.clone(), lossy.mu.clone());
    let zeros = Media {
        sigma: vec![0.0; m.n_tets()],
        ..plain.clone()
    };
    let d0 = Arc::new(Dga::assemble(&m, &t, &plain).unwrap());
    let dz = Arc::new(Dga::assemble(&m, &t, &zeros).unwrap());
    let dl = Arc::new(Dga::assemble(&m, &t, &lossy).unwrap());
    assert!(dz.msig.is_none());
    let (dt0, rho0) = solver::time_step(&d0, 0.95).unwrap();
    let (dtl, rhol) = solver::time_step(&dl, 0.95).unwrap();
    assert_eq!(
        (dt0.to_bits(), rho0.to_bits()),
        (dtl.to_bits(), rhol.to_bits())
    );
    for dual in [DualForm::Factored, DualForm::Csr] {
        let run = |d: &Arc<Dga>| {
            let ops = Arc::new(Operators::<f64>::new(d, dt0, dual == DualForm::Csr));
            let mut s = CpuStepper::new(d.clone(), ops, dual, None, vec![]).unwrap();
            let (u, f) = random_state(d, 5);
            s.set_state(&u, &f).unwrap();
            steps_of(&mut s, 50);
            s.state().unwrap()
        };
        assert_eq!(run(&d0), run(&dz), "{}", dual.name());
    }
    // Blocks: equal at vertices with no conducting tet, different elsewhere.
    let o0 = Operators::<f64>::new(&d0, dt0, false);
    let ol = Operators::<f64>::new(&dl, dt0, false);
    let mut touched = vec![false; m.n_vertices()];
    for (n, tv) in m.tets.iter().enumerate() {
        if lossy.sigma[n] != 0.0 {
            for &v in tv {
                touched[v as usize] = true;
            }
        }
    }
    let (mut same, mut diff) = (0, 0);
    for (v, &tv) in touched.iter().enumerate() {
        let r = d0.meps.off[v]..d0.meps.off[v + 1];
        if r.is_empty() {
            continue;
        }
        if tv {
            assert_ne!(o0.block[r.clone()], ol.block[r]);
            diff += 1;
        } else {
            assert_eq!(o0.block[r.clone()], ol.block[r]);
            same += 1;
        }
    }
    let lossy_vertices: std::collections::BTreeSet<u32> = ol.loss_vert.iter().copied().collect();
    assert_eq!(lossy_vertices.len(), diff);
    eprintln!("{same} lossless and {diff} lossy vertices");
    assert!(same > 0 && diff > 0);
}

/// At 0.99 of the (lossless) stability limit a lossy run stays bounded over many steps,
/// with its energy never increasing; at 1.02 the lossless run blows up (so the limit is
/// real on this mesh).
#[test]
fn lossy_run_is_stable_at_the_lossless_limit() {
    let m = jittered_box([3, 3, 2], 43, 0.25);
    let t = Topology::build(&m).unwrap();
    let lossy = lossy_media(m.n_tets(), 44, 0.05);
    let d = Arc::new(Dga::assemble(&m, &t, &lossy).unwrap());
    let rho = solver::spectral_radius(&d, 400, 1);
    let limit = 2.0 / rho.sqrt();
    let energy_after = |dt: f64, lossy_ops: bool, n: usize| {
        let ops = Arc::new(if lossy_ops {
            Operators::<f64>::new(&d, dt, false)
        } else {
            Operators::<f64>::lossless(&d, dt, false)
        });
        let mut s = CpuStepper::new(d.clone(), ops, DualForm::Factored, None, vec![]).unwrap();
        let (u, f) = random_state(&d, 9);
        s.set_state(&u, &f).unwrap();
        let w0 = s.energy().unwrap();
        let mut w = w0;
        for _ in 0..n / 100 {
            steps_of(&mut s, 100);
            let w1 = s.energy().unwrap();
            assert!(!lossy_ops || w1 <= w * (1.0 + 1e-13), "{w} -> {w1}");
            w = w1;
        }
        w / w0
    };
    let r = energy_after(0.99 * limit, true, 5000);
    assert!(r.is_finite() && r < 1.0, "{r}");
    let g = energy_after(1.02 * limit, false, 5000);
    assert!(
        g.is_nan() || g >= 1e3,
        "lossless run at 1.02x the limit did not grow: {g}"
    );
}

/// For a homogeneous fill `Msig = a Meps` (a = σ η₀ / ε_r, 1/m) and every discrete mode
/// (eigenvalue λ of K) is damped alike: the amplification z solves
/// `(1 + b) z² − (2 − Δt² λ) z + (1 − b) = 0`, `b = a Δt / 2`, so `|z|² = (1 − b)/(1 + b)`
/// and `arg z = θ` with `cos θ = (2 − Δt²λ) / (2 sqrt(1 − b²))`. Returns (f_td Hz, α 1/s).
fn discrete_mode(lambda: f64, a: f64, dt: f64) -> (f64, f64) {
    let b = 0.5 * a * dt;
    let cos = (2.0 - dt * dt * lambda) / (2.0 * (1.0 - b * b).sqrt());
    let theta = cos.acos();
    let alpha = ((1.0 + b) / (1.0 - b)).ln() / (2.0 * dt);
    (theta / (2.0 * PI * dt) * C0, alpha * C0)
}

/// A cavity filled with one conducting medium: every mode's Q equals ω ε₀ ε_r / σ (1%),
/// and its decay and frequency equal the exact discrete values (much tighter).
#[test]
fn homogeneous_fill_has_q_omega_eps_over_sigma() {
    let m = jittered_box([4, 3, 3], 61, 0.2);
    let t = Topology::build(&m).unwrap();
    let eps_r = 2.0;
    let d0 = Dga::assemble(
        &m,
        &t,
        &Media::lossless(vec![eps_r; m.n_tets()], vec![1.0; m.n_tets()]),
    )
    .unwrap();
    let ev = k_eigenvalues(&d0);
    let f0 = ev[0].sqrt() / (2.0 * PI) * C0;
    // σ for Q = 300 at the lowest mode (S/m), through the material type
    let sigma_si = 2.0 * PI * f0 * EPS0 * eps_r / 300.0;
    let mat = Material {
        sigma: sigma_si,
        ..Material::new(eps_r, 1.0)
    };
    let mut media = Media::lossless(vec![eps_r; m.n_tets()], vec![1.0; m.n_tets()]);
    media.sigma = vec![mat.conductivity() * ETA0; m.n_tets()];
    let d = Arc::new(Dga::assemble(&m, &t, &media).unwrap());
    let a = media.sigma[0] / eps_r;
    let (dt, _) = solver::time_step(&d, 0.9).unwrap();
    let dt_s = dt / C0;
    let w = Waveform::gaussian_derivative(1.2 * f0);
    let src = Source::new(&m, &t, &d, [0.37, 0.29, 0.23], [0.3, 0.5, 0.8]).unwrap();
    let probes = vec![
        Probe::new(&m, &t, [0.61, 0.47, 0.33]).unwrap(),
        Probe::new(&m, &t, [0.22, 0.58, 0.41]).unwrap(),
    ];
    let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
    let mut s =
        CpuStepper::new(d.clone(), ops, DualForm::Factored, Some((&src, w)), probes).unwrap();
    let steps = 4000;
    let rec = solver::run(&mut s, dt, steps, Some(w.end()), 2, 4, &mut |_| {}).unwrap();
    let start = (w.end() / dt).ceil() as usize;
    let fk: Vec<f64> = ev.iter().map(|l| l.sqrt() / (2.0 * PI) * C0).collect();
    let fmax = 1.02 * fk[8];
    let per: Vec<Vec<dgatd::spectrum::HMode>> = (0..2)
        .flat_map(|p| (0..3).map(move |c| (p, c)))
        .map(|(p, c)| {
            dgatd::spectrum::harminv(
                &rec.series(p, c)[start..],
                dt_s,
                &dgatd::spectrum::HarminvParams::band(0.5 * fk[0], fmax),
            )
        })
        .collect();
    // (a looser merge than for lossless records: a damped mode is sometimes fitted by
    // two nearby poles in one signal)
    let modes = dgatd::spectrum::cluster_harminv(&per, 1e-4, 10.0, (steps - start) as f64 * dt_s);
    let (mut matched, mut exact) = (0, 0);
    // A line is a resonance of the record when at least two of the six signals carry it,
    // at no less than 1e-2 of the strongest line's amplitude. After a round-off-level
    // change of the operator (the symmetric Mmu⁻¹ of commit 8d0ae63) harminv fitted, besides
    // every real line, poles of amplitude 1e-6 at 149 MHz and 3e-6 at 186 MHz (the strongest
    // line: 3e-3; 10% and 8% from every discrete mode) and a one-signal pole 2.6e-4 beside
    // the 214.27 MHz line.
    let amax = modes.iter().map(|m| m.amplitude).fold(0.0, f64::max);
    for md in (modes.iter()).filter(|m| m.n_signals >= 2 && m.amplitude >= 1e-2 * amax) {
        let (decay, q) = (md.decay_per_s.unwrap(), md.q.unwrap());
        // nearest discrete mode by its predicted time-discrete frequency
        let (lam, (fp, ap)) = ev
            .iter()
            .map(|&l| (l, discrete_mode(l, a, dt)))
            .min_by(|x, y| (x.1.0 - md.f_hz).abs().total_cmp(&(y.1.0 - md.f_hz).abs()))
            .unwrap();
        let ef = (md.f_hz - fp).abs() / fp;
        let ea = (decay - ap).abs() / ap;
        let omega = lam.sqrt() * C0;
        let q_cont = omega * EPS0 * eps_r / sigma_si;
        // Q of the record is π f_td / α; the leapfrog shift of f_td (design note §10) is
        // time-discretisation error, undone before comparing with the continuous Q.
        let q = q * leapfrog_correction(md.f_hz, dt_s) / md.f_hz;
        let eq = (q - q_cont).abs() / q_cont;
        eprintln!(
            "f {:.6} MHz (discrete {:.6}, rel {ef:.1e}), alpha {:.6e} (discrete {ap:.6e}, rel {ea:.1e}), Q {:.2} vs w eps/sigma {q_cont:.2} (rel {eq:.1e}); fit error {:.1e}, amplitude {:.2e}, {} signals",
            md.f_hz / 1e6,
            fp / 1e6,
            decay,
            q,
            md.error.unwrap_or(f64::NAN),
            md.amplitude,
            md.n_signals
        );
        // Every mode: within the fit's accuracy (the fit of a damped line next to another
        // is not robust: scaling this record by 0.99922, which the source pattern of the
        // lossy blocks does, moved one line's decay from 9e-8 to 8e-2 of the discrete
        // value; an extraction issue, not a scheme one); most modes: to the fit's
        // round-off level (observed 1e-12 and 1e-8), asserted below.
        assert!(ef < 1e-4, "frequency {ef:e}");
        assert!(ea < 0.15, "decay {ea:e}");
        assert!(eq < 0.15, "Q {eq:e}");
        assert!((100.0..1e4).contains(&q));
        // Which lines harminv fits to round-off changes with round-off changes of the
        // record: at 0c50bce 165.78, 201.32, 214.27, 234.11 and 239.82 MHz were within 1e-10
        // (268.12 at 5.6e-6); with the symmetric Mmu⁻¹ (8d0ae63) 201.32, 234.11, 235.12 and
        // 268.12 are within 2e-9 (165.78 at 1.8e-5). At least four always are.
        if ef < 1e-8 && ea < 1e-5 {
            exact += 1;
        }
        matched += 1;
    }
    assert!(matched >= 4, "only {matched} modes");
    assert!(
        exact >= 4,
        "only {exact} modes match the discrete relation tightly"
    );
}

/// A lossy run on the device (factored and CSR, f64 and f32) against the CPU backend:
/// probe records and energies agree to the tolerances of tests/opencl/opencl.rs (1e-9 f64, 1e-4
/// f32), and the energy has decayed.
#[test]
fn opencl_lossy_runs_match_the_cpu() {
    use dgatd::backend::opencl::ClStepper;
    let Some(dev) = cl_device() else { return };
    fn go<T: dgatd::Real>(dev: &Arc<dgatd::backend::opencl::ClDevice>, dual: DualForm, tol: f64) {
        let m = jittered_box([5, 4, 3], 71, 0.25);
        let t = Topology::build(&m).unwrap();
        let media = lossy_media(m.n_tets(), 72, 1.0);
        let d = Arc::new(Dga::assemble(&m, &t, &media).unwrap());
        let (dt, _) = solver::time_step(&d, 0.95).unwrap();
        let w = Waveform::gaussian_derivative(300e6);
        let probes = vec![
            Probe::new(&m, &t, [0.61, 0.47, 0.33]).unwrap(),
            Probe::new(&m, &t, [0.22, 0.58, 0.41]).unwrap(),
        ];
        let src = Source::new(&m, &t, &d, [0.37, 0.29, 0.23], [0.3, 0.5, 0.8]).unwrap();
        let ops = Arc::new(Operators::<T>::new(&d, dt, dual == DualForm::Csr));
        let mut c = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), probes.clone()).unwrap();
        let steps = 600;
        let rc = solver::run(&mut c, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap();
        let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), dual, Some(&src), &probes).unwrap();
        // the device power iteration runs on the lossless blocks before the loss step is in
        let rho = g.spectral_radius(60, 0x5eed).unwrap();
        let rho_host = solver::spectral_radius(&d, 60, 0x5eed);
        assert!(
            (rho - rho_host).abs() < 1e-3 * rho_host,
            "{rho} vs {rho_host}"
        );
        g.set_time_step(dt, Some(w)).unwrap();
        assert!(g.spectral_radius(60, 1).is_err());
        let rg = solver::run(&mut g, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap();
        let e = rel_err(&rg.samples, &rc.samples);
        let (eg, ec) = (g.energy().unwrap(), c.energy().unwrap());
        eprintln!(
            "{} {}: probe records differ by {e:.2e}, energy by {:.2e}",
            T::NAME,
            dual.name(),
            (eg - ec).abs() / ec
        );
        assert!(e < tol, "{e:e}");
        assert!((eg - ec).abs() < tol * ec, "{eg} vs {ec}");
        // the run is lossy: the same run without σ keeps more energy
        let d0 = Arc::new(
            Dga::assemble(
                &m,
                &t,
                &Media::lossless(media.eps.clone(), media.mu.clone()),
            )
            .unwrap(),
        );
        let src0 = Source::new(&m, &t, &d0, [0.37, 0.29, 0.23], [0.3, 0.5, 0.8]).unwrap();
        let ops0 = Arc::new(Operators::<T>::new(&d0, dt, false));
        let mut c0 = CpuStepper::new(
            d0.clone(),
            ops0,
            DualForm::Factored,
            Some((&src0, w)),
            vec![],
        )
        .unwrap();
        solver::run(&mut c0, dt, steps, Some(w.end()), 0, 5, &mut |_| {}).unwrap();
        let e0 = c0.energy().unwrap();
        assert!(ec < 0.5 * e0, "lossy {ec} vs lossless {e0}");
    }
    if dev.info.fp64 {
        go::<f64>(&dev, DualForm::Factored, 1e-9);
        go::<f64>(&dev, DualForm::Csr, 1e-9);
    }
    go::<f32>(&dev, DualForm::Factored, 1e-4);
    go::<f32>(&dev, DualForm::Csr, 1e-4);
}

/// End to end through the configuration: a conducting vacuum in the coarse cylinder (CPU,
/// harmonic inversion, default min_q): the modes found in most probe signals decay at
/// σ/(2ε₀) and have Q = ω ε₀ / σ; the terminal table shows Q.
#[test]
fn conducting_fill_through_the_configuration() {
    use dgatd::solver::{BackendKind, Extract};
    let sigma = 6.38e-6; // Q ≈ 1000 at TM010
    let mut cfg = Config {
        mesh: Some("bundled:coarse".into()),
        steps: Some(4000),
        extract: Extract::Harminv,
        backend: BackendKind::Cpu,
        ..Default::default()
    };
    cfg.materials.insert(
        "vacuum".into(),
        Material {
            sigma,
            ..Material::new(1.0, 1.0)
        },
    );
    let r = dgatd::run(&cfg, &mut |_, _| {}).unwrap();
    let alpha = sigma / (2.0 * EPS0);
    let mut n = 0;
    // the seed paper's four resonances (below 270 MHz) are well separated; above, close
    // groups (TM310, TE111, TM011 within 3%) are fitted less well by a 4000-step record
    for p in r
        .peaks()
        .iter()
        .filter(|p| p.n_signals >= 4 && p.f_hz < 270e6)
    {
        let (a, q) = (p.decay_per_s.unwrap(), p.q.unwrap());
        let qw = 2.0 * PI * p.f_hz * EPS0 / sigma;
        eprintln!(
            "{:.4} MHz: alpha {a:.6e} (σ/2ε₀ {alpha:.6e}), Q {q:.2} (ωε₀/σ {qw:.2})",
            p.f_hz / 1e6
        );
        assert!((a - alpha).abs() < 1e-3 * alpha, "{a} vs {alpha}");
        assert!((q - qw).abs() < 0.01 * qw);
        n += 1;
    }
    assert!(n >= 6, "only {n} modes");
    let table = dgatd::report::mode_table(&r);
    assert!(table.lines().next().unwrap().ends_with(" Q"), "{table}");
    assert!(
        table.contains("9.9"),
        "TM010's Q ≈ 997 in the table:\n{table}"
    );
}
