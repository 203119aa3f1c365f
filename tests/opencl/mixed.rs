//! Mixed storage (issue 19, a bench variant): the default layouts' operators stored in f32,
//! the fields and every sum in f64 (`ClStepper::mixed_operators`, the DGA program (`cl/dga/*.cl`) built with
//! `-D OPREAL=float`).
//!
//! - What it computes: the leapfrog of the operators rounded to f32, in f64 arithmetic. On
//!   PoCL, 300 steps from a random state match the CPU reference stepping a `Dga` whose
//!   `Mmu⁻¹` and `Meps⁻¹` were rounded the same way (f64 round-off, bound 1e-11), and differ
//!   from the unrounded f64 run by far more (above 1e-10), so the test sees the storage.
//! - What the rounding costs: the dense eigenvalues of `K` with the rounded operators
//!   against the exact ones on random jittered meshes with random media. Each stored value
//!   moves by at most u = 2⁻²⁴ relative and both factors stay symmetric positive definite,
//!   so each eigenvalue moves by at most about u times the factors' (diagonally scaled)
//!   condition numbers (a few on these meshes): the bound asserted is 5e-7 relative in ω²
//!   (8.4 u), 2.5e-7 in frequency; measured: at most 6.4e-8 (printed).

use crate::common::{cl_device, jittered_box, k_eigenvalues, random_state, rel_err, setup};
use dgatd::backend::Stepper;
use dgatd::backend::opencl::ClStepper;
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use nalgebra::DMatrix;
use std::sync::Arc;

/// `d` with `Δt Mmu⁻¹` and `Δt Meps⁻¹` rounded to f32 (then divided by Δt again, one more
/// f64 rounding), and `Meps` the inverse of the rounded blocks (for the dense eigenvalues).
fn rounded(d: &Dga, dt: f64) -> Dga {
    let r = |x: f64| (dt * x) as f32 as f64 / dt;
    let mut o = d.clone();
    for m in &mut o.mmu_inv {
        m.iter_mut().for_each(|x| *x = r(*x));
    }
    o.meps_inv.data.iter_mut().for_each(|x| *x = r(*x));
    for v in 0..o.meps_inv.n_vertices() {
        let n = o.meps_inv.dim(v);
        let b = DMatrix::from_row_slice(n, n, o.meps_inv.block(v));
        let inv = b
            .try_inverse()
            .expect("a rounded SPD block stays invertible");
        let inv = 0.5 * (&inv + inv.transpose());
        let (s, e) = (o.meps.off[v], o.meps.off[v + 1]);
        for (k, x) in o.meps.data[s..e].iter_mut().enumerate() {
            *x = inv[(k / n, k % n)];
        }
    }
    o
}

#[test]
fn mixed_storage_steps_the_rounded_operators_in_f64() {
    let Some(dev) = cl_device() else { return };
    if !dev.info.fp64 {
        eprintln!(
            "\n*** SKIPPED: mixed storage needs fp64 ({}) ***\n",
            dev.info.name
        );
        return;
    }
    let (_, _, d, _) = setup(jittered_box([3, 4, 2], 71, 0.22), Some(72));
    let d = Arc::new(d);
    let (dt, _) = dgatd::solver::time_step(&d, 0.9).unwrap();
    let (u0, f0) = random_state(&d, 73);
    let steps = 300;
    // the device: mixed primal, circulations, mixed blocks
    let mut g =
        ClStepper::<f64>::new(dev.clone(), d.clone(), DualForm::Factored, None, &[]).unwrap();
    g.set_time_step(dt, None).unwrap();
    g.set_state(&u0, &f0).unwrap();
    let m = g.mixed_operators().unwrap();
    for _ in 0..steps {
        g.primal_update_mixed(&m).unwrap();
        g.circulation().unwrap();
        g.vertex_blocks_mixed(&m).unwrap();
    }
    let (ug, fg) = g.state().unwrap();
    // the CPU reference, with the rounded operators and with the exact ones
    let cpu = |d: &Dga| {
        let ops = Operators::<f64>::new(d, dt, false);
        let (mut u, mut f) = (u0.clone(), f0.clone());
        let mut c = vec![0.0; d.n_edges];
        for _ in 0..steps {
            dgatd::backend::cpu::primal(&ops, &u, &mut f);
            dgatd::backend::cpu::circulations(&ops, &f, &mut c);
            dgatd::backend::cpu::vertex_blocks(&ops, &c, &mut u);
        }
        [u, f].concat()
    };
    let got = [ug, fg].concat();
    let e_round = rel_err(&got, &cpu(&rounded(&d, dt)));
    let e_exact = rel_err(&got, &cpu(&d));
    println!(
        "mixed, {steps} steps: against the rounded operators {e_round:.2e}, against f64 {e_exact:.2e}"
    );
    assert!(
        e_round < 1e-11,
        "mixed storage differs from its reference by {e_round:e}"
    );
    assert!(
        e_exact > 1e-10,
        "mixed storage equals the f64 run ({e_exact:e}): f32 storage unused?"
    );
    // the same layouts only
    let err = ClStepper::<f32>::new(dev, d, DualForm::Factored, None, &[])
        .unwrap()
        .mixed_operators()
        .err()
        .expect("an f32 stepper has no mixed storage")
        .to_string();
    assert!(err.contains("f64"), "{err}");
}

#[test]
fn rounding_the_operators_to_f32_moves_the_eigenvalues_by_a_few_ulps() {
    let mut worst = 0.0f64;
    for (n, seed) in [([3, 2, 2], 81u64), ([2, 3, 3], 82), ([4, 2, 2], 83)] {
        let (_, _, d, _) = setup(jittered_box(n, seed, 0.25), Some(seed + 100));
        let ev = k_eigenvalues(&d);
        // Δt = 1: the rounding of the unit operators (a Δt scales every value alike, so
        // only the mantissas matter)
        let evr = k_eigenvalues(&rounded(&d, 1.0));
        assert_eq!(ev.len(), evr.len(), "{n:?}: the kernel's dimension changed");
        let e = ev
            .iter()
            .zip(&evr)
            .map(|(a, b)| ((a - b) / a).abs())
            .fold(0.0, f64::max);
        println!(
            "{n:?}: {} eigenvalues, largest relative shift of omega^2 {e:.2e}",
            ev.len()
        );
        assert!(e > 0.0, "{n:?}: rounding changed nothing (test vacuous)");
        worst = worst.max(e);
    }
    assert!(worst < 5e-7, "omega^2 moved by {worst:e}");
}
