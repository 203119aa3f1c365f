//! Magnetic conductivity σ* (design note §12): Crank–Nicolson in σ* in the primal update.
//! A tet's medium is uniform, so `Msig*_n = (σ*_n/μ_n) Mmu_n` and the update is
//! `F⁺ = (1 − b)/(1 + b) F⁻ − Δt/(1 + b) Mmu⁻¹ C U`, `b = σ* Δt / (2μ)`.
//!
//! Exact identity (derived from the two half steps): with
//! `W^n = ½ U^nᵀ Meps U^n + ½ F^(n−1/2)ᵀ Mmu F^(n+1/2)`,
//! `W^(n+1) − W^n = −(Δt/4) F^(n+1/2)ᵀ Msig* (F^(n+3/2) + 2 F^(n+1/2) + F^(n−1/2))`
//! (plus the electric term `−Δt Ūᵀ Msig Ū` when σ is present too): a round-off test.
//! The mode recursion has the same characteristic polynomial as electric loss,
//! `(1 + b) z² − (2 − Δt² λ) z + (1 − b) = 0`, so a homogeneous σ* gives every mode
//! `Q = ω μ / σ*` up to O(b²): checked end to end with harmonic inversion.

use crate::common::*;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::{CpuStepper, dissipation};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::internal::Rng;
use dgatd::mesh::Topology;
use dgatd::problem::{Material, Media};
use dgatd::solver;

use dgatd::solver::{BackendKind, Config, Extract};
use std::sync::Arc;

/// Random ε, μ; σ* (library units, 1/m) on a random half of the tets; σ too if `electric`.
fn media(n: usize, seed: u64, s: f64, electric: bool) -> Media {
    let mut r = Rng::new(seed);
    let mut m = Media::lossless(
        (0..n).map(|_| 1.0 + 3.0 * r.uniform()).collect(),
        (0..n).map(|_| 1.0 + 2.0 * r.uniform()).collect(),
    );
    m.sigma_m = (0..n)
        .map(|_| {
            if r.uniform() < 0.5 {
                s * (0.5 + r.uniform())
            } else {
                0.0
            }
        })
        .collect();
    if electric {
        m.sigma = (0..n).map(|_| s * r.uniform()).collect();
    }
    m
}

/// `Σ_n F_nᵀ Msig*_n G_n` (host layout `4n + k`).
fn mag_form(d: &Dga, f: &[f64], g: &[f64]) -> f64 {
    let s = d.mag.as_ref().unwrap();
    (0..d.n_tets)
        .map(|n| {
            let mut acc = 0.0;
            for r in 0..4 {
                for c in 0..4 {
                    acc += f[4 * n + r] * d.mmu[n][4 * r + c] * g[4 * n + c];
                }
            }
            s[n] * acc
        })
        .sum()
}

#[test]
fn energy_decrease_equals_the_magnetic_dissipation() {
    for (dims, seed, electric) in [([4, 3, 3], 5u64, false), ([3, 4, 2], 19, true)] {
        let m = jittered_box(dims, seed, 0.25);
        let t = Topology::build(&m).unwrap();
        let d =
            Arc::new(Dga::assemble(&m, &t, &media(m.n_tets(), seed + 1, 2.0, electric)).unwrap());
        assert!(d.mag.is_some());
        let (dt, _) = solver::time_step(&d, 0.95).unwrap();
        let ops = Arc::new(Operators::<f64>::new(&d, dt, true));
        for dual in [DualForm::Factored, DualForm::Csr] {
            let mut s = CpuStepper::new(d.clone(), ops.clone(), dual, None, vec![]).unwrap();
            let (u, f) = random_state(&d, seed + 2);
            s.set_state(&u, &f).unwrap();
            // states S_k = (U^k, F^(k-1/2)) and energies W_k
            let mut states = vec![s.state().unwrap()];
            let mut w = vec![s.energy().unwrap()];
            let mut sink = vec![];
            for _ in 0..301 {
                s.advance(0, 1, &mut sink).unwrap();
                states.push(s.state().unwrap());
                w.push(s.energy().unwrap());
            }
            let mut worst = 0.0f64;
            for k in 0..300 {
                let (fm, f0, fp) = (&states[k].1, &states[k + 1].1, &states[k + 2].1);
                let sum: Vec<f64> = (0..fm.len()).map(|i| fp[i] + 2.0 * f0[i] + fm[i]).collect();
                let mag = 0.25 * dt * mag_form(&d, f0, &sum);
                let ele = dissipation(&d, dt, &states[k].0, &states[k + 1].0);
                worst = worst.max(((w[k + 1] - w[k]) + mag + ele).abs() / w[0]);
            }
            eprintln!(
                "{dims:?} σ {electric} {}: W {:.6e} -> {:.6e}, worst |ΔW + D|/W0 = {worst:.2e}",
                dual.name(),
                w[0],
                w[300]
            );
            assert!(worst < 1e-13, "{worst:e}");
            assert!(w[300] < 0.9 * w[0], "too little loss to test");
        }
    }
}

/// σ* = 0 (explicit zeros) changes nothing; σ* leaves the stable Δt (and ρ) bit-identical.
#[test]
fn zero_sigma_m_is_lossless_and_dt_is_unchanged() {
    let m = jittered_box([3, 3, 3], 41, 0.2);
    let t = Topology::build(&m).unwrap();
    let lossy = media(m.n_tets(), 42, 3.0, false);
    let plain = Media::lossless(lossy.eps.clone(), lossy.mu.clone());
    let zeros = Media {
        sigma_m: vec![0.0; m.n_tets()],
        ..plain.clone()
    };
    let (d0, dz, dl) = (
        Dga::assemble(&m, &t, &plain).unwrap(),
        Dga::assemble(&m, &t, &zeros).unwrap(),
        Dga::assemble(&m, &t, &lossy).unwrap(),
    );
    assert!(dz.mag.is_none());
    let (dt0, rho0) = solver::time_step(&d0, 0.9).unwrap();
    assert_eq!(solver::time_step(&dl, 0.9).unwrap(), (dt0, rho0));
    let ops0 = Operators::<f64>::new(&d0, dt0, false);
    let opsl = Operators::<f64>::new(&dl, dt0, false);
    assert!(ops0.mag.is_empty() && opsl.mag.len() == m.n_tets());
    // the P rows of the tets without σ* are bit-identical
    let t_n = m.n_tets();
    for n in 0..t_n {
        let same = (0..24).all(|rc| ops0.primal[rc * t_n + n] == opsl.primal[rc * t_n + n]);
        assert_eq!(same, lossy.sigma_m[n] == 0.0, "tet {n}");
    }
}

/// A homogeneous σ* in the bundled coarse cylinder: every well-fitted mode has
/// `Q = ω μ₀ / σ*` (corrected ω) to 1%; the same run with σ = ε₀ σ*/μ₀ (the dual electric
/// loss, same `b`) gives the same decay rates to 1e-6.
#[test]
fn homogeneous_sigma_m_gives_q_omega_mu_over_sigma_m() {
    let sigma_m = 0.9; // ohm/m: Q(TM010) ≈ 1000
    let run = |mat: Material| {
        let mut cfg = Config {
            mesh: Some("bundled:coarse".into()),
            backend: BackendKind::Cpu,
            steps: Some(6000),
            extract: Extract::Harminv,
            ..Config::default()
        };
        cfg.materials.insert("vacuum".into(), mat);
        dgatd::run(&cfg, &mut |_, _| {}).unwrap()
    };
    let r = run(Material {
        sigma_m,
        ..Material::new(1.0, 1.0)
    });
    let mu0 = dgatd::problem::MU0;
    let mut checked = 0;
    for p in r.peaks().iter().filter(|p| p.n_signals >= 3) {
        let (Some(q), Some(alpha)) = (p.q, p.decay_per_s) else {
            continue;
        };
        let w = 2.0 * std::f64::consts::PI * r.corrected(p);
        let want = w * mu0 / sigma_m;
        if (q / want - 1.0).abs() < 0.01 {
            checked += 1;
        }
        eprintln!(
            "{:.4} MHz: q {q:.5e}, ω μ₀/σ* {want:.5e}, α {alpha:.6e} (σ*/2μ₀ = {:.6e})",
            p.f_hz / 1e6,
            sigma_m / (2.0 * mu0)
        );
    }
    assert!(checked >= 5, "only {checked} modes at ω μ₀ / σ* within 1%");
    // the electric dual: σ/ε₀ = σ*/μ₀ gives the same b, hence the same decay per mode
    let e = run(Material {
        sigma: sigma_m * dgatd::problem::EPS0 / mu0,
        ..Material::new(1.0, 1.0)
    });
    let strongest = |r: &dgatd::solver::ResonatorResult| {
        r.peaks()
            .iter()
            .max_by(|a, b| a.amplitude.total_cmp(&b.amplitude))
            .and_then(|p| p.decay_per_s)
            .unwrap()
    };
    let (am, ae) = (strongest(&r), strongest(&e));
    assert!((am / ae - 1.0).abs() < 1e-6, "σ*: {am}, σ: {ae}");
}

/// 600 steps with σ* on half the tets and σ on all (source, two probes) on the device
/// against the CPU: probe records and energies to 1e-9 (f64) and 1e-4 (f32), the
/// tolerances of tests/opencl/opencl.rs.
#[test]
fn opencl_magnetic_loss_matches_the_cpu() {
    let Some(dev) = cl_device() else { return };
    fn go<T: dgatd::Real>(dev: &Arc<dgatd::backend::opencl::ClDevice>, dual: DualForm, tol: f64) {
        let m = jittered_box([4, 4, 3], 83, 0.25);
        let t = Topology::build(&m).unwrap();
        let d = Arc::new(Dga::assemble(&m, &t, &media(m.n_tets(), 84, 0.1, true)).unwrap());
        let probes = [[0.61, 0.47, 0.33], [0.22, 0.58, 0.41]];
        let (e, energies, _) = device_vs_cpu::<T>(
            dev,
            &m,
            &d,
            dual,
            &probes,
            [0.37, 0.29, 0.23],
            [0.3, 0.5, 0.8],
        );
        // the final energies are compared relative to the CPU one
        let label = format!("{} {}", T::NAME, dual.name());
        assert_device_agrees(&label, e, energies, energies.1, tol);
    }
    if dev.info.fp64 {
        go::<f64>(&dev, DualForm::Factored, 1e-9);
        go::<f64>(&dev, DualForm::Csr, 1e-9);
    }
    go::<f32>(&dev, DualForm::Factored, 1e-4);
    go::<f32>(&dev, DualForm::Csr, 1e-4);
}
