//! The CPU backend's lean kernels (`dgatd::backend::cpu::lean`) against its reference
//! kernels, kernel by kernel and over whole runs, on jittered boxes of random sizes with
//! random media: ε, μ, electric and magnetic conductivity on random subsets (the loss blocks
//! and the magnetic decay), dispersive poles, PEC walls (half-edges that are not free).
//! The lean step reorders sums only, so the tolerances are round-off: in f64 a kernel's
//! relative error is a few ulp (≤ 1e-14 asked), and a run of 300 steps of a stable
//! leapfrog keeps it at round-off times the step count (≤ 1e-11 asked); f32 at its own ulp
//! (6e-8) times the same (≤ 1e-5 per kernel).

use crate::common::*;
use dgatd::Real;
use dgatd::backend::Stepper;
use dgatd::backend::cpu;
use dgatd::backend::cpu::{CpuKernels, CpuStepper, Lean};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::internal::Rng;
use dgatd::mesh::{Mesh, Topology};
use dgatd::problem::Pole;
use dgatd::problem::{Media, Waveform};
use dgatd::solver;
use std::sync::Arc;

/// A jittered box of random size and the media of `kind` on it (seeded).
fn case(seed: u64, kind: &str) -> (Mesh, Dga) {
    let mut r = Rng::new(seed);
    let n = [0; 3].map(|_| 3 + (4.0 * r.uniform()) as usize);
    let m = jittered_box(n, seed + 1, 0.25);
    let t = m.n_tets();
    let mut media = Media::lossless(
        (0..t).map(|_| 1.0 + 3.0 * r.uniform()).collect(),
        (0..t).map(|_| 1.0 + 2.0 * r.uniform()).collect(),
    );
    let some = |r: &mut Rng, s: f64| {
        if r.uniform() < 0.4 {
            s * r.uniform()
        } else {
            0.0
        }
    };
    if kind == "lossy" {
        media.sigma = (0..t).map(|_| some(&mut r, 2.0)).collect();
        media.sigma_m = (0..t).map(|_| some(&mut r, 2.0)).collect();
    }
    if kind == "dispersive" {
        media.disp = (0..t).map(|_| (3.0 * r.uniform()) as u16).collect();
        media.poles = vec![
            (
                "drude".into(),
                vec![Pole::Drude {
                    f_p: 3e8,
                    gamma: 1e8,
                }],
            ),
            (
                "lorentz".into(),
                vec![Pole::Lorentz {
                    delta_eps: 1.5,
                    f_0: 2e8,
                    delta: 5e7,
                }],
            ),
        ];
    }
    let topo = Topology::build(&m).unwrap();
    let d = Dga::assemble(&m, &topo, &media).unwrap();
    (m, d)
}

fn rel<T: Real>(a: &[T], b: &[T]) -> f64 {
    let f = |x: &[T]| x.iter().map(|v| v.f64()).collect::<Vec<_>>();
    rel_err(&f(a), &f(b))
}

/// Each lean kernel against its reference on random (non-zero) data; returns the largest
/// relative error.
fn kernels_agree<T: Real>(d: &Dga, seed: u64) -> f64 {
    let ops = Operators::<T>::new(d, 0.3 * dgatd::solver::time_step(d, 0.95).unwrap().0, false);
    let lean = Lean::new(d, &ops, true).unwrap();
    let mut r = Rng::new(seed);
    let u: Vec<T> = (0..d.n_half()).map(|_| T::of(r.sym())).collect();
    let f0: Vec<T> = (0..d.n_dual()).map(|_| T::of(r.sym())).collect();
    let (mut fa, mut fb) = (f0.clone(), f0.clone());
    cpu::primal(&ops, &u, &mut fa);
    dgatd::backend::cpu::lean_primal(&ops, &lean, &u, &mut fb);
    let ep = rel(&fb, &fa);
    let (mut ca, mut cb) = (vec![T::zero(); d.n_edges], vec![T::zero(); d.n_edges]);
    cpu::circulations(&ops, &f0, &mut ca);
    dgatd::backend::cpu::lean_circulations(&ops, &lean, &f0, &mut cb);
    let ec = rel(&cb, &ca);
    assert!(ca.iter().any(|x| x.f64() != 0.0));
    let (mut ua, mut ub) = (u.clone(), u.clone());
    let mut y = lean.scratch();
    cpu::vertex_blocks(&ops, &ca, &mut ua);
    dgatd::backend::cpu::lean_vertex_blocks(&lean, &ca, &mut y, &mut ub);
    // compare the increments, not the sums with the random start
    let inc = |x: &[T]| {
        x.iter()
            .zip(&u)
            .map(|(a, b)| a.f64() - b.f64())
            .collect::<Vec<_>>()
    };
    let ev = rel_err(&inc(&ub), &inc(&ua));
    // the half-edges on the walls stay untouched
    for h in 0..d.n_half() {
        if lean.slot[h] == u32::MAX {
            assert_eq!(ub[h].f64(), u[h].f64(), "wall half-edge {h} changed");
        }
    }
    ep.max(ec).max(ev)
}

#[test]
fn lean_kernels_match_the_reference_in_f64_and_f32() {
    for (k, kind) in ["vacuum", "lossy", "dispersive"].iter().enumerate() {
        for seed in [11u64, 29] {
            let (_, d) = case(seed + 100 * k as u64, kind);
            let e64 = kernels_agree::<f64>(&d, seed);
            let e32 = kernels_agree::<f32>(&d, seed);
            println!(
                "{kind} seed {seed}: {} tets, f64 {e64:.2e}, f32 {e32:.2e}",
                d.n_tets
            );
            assert!(e64 < 1e-14, "{kind} seed {seed}: f64 {e64:e}");
            assert!(e32 < 1e-5 && e32 > 0.0, "{kind} seed {seed}: f32 {e32:e}");
        }
    }
}

/// A 300-step run with a source and two probes, lean and reference.
fn run(m: &Mesh, d: &Arc<Dga>, dual: DualForm, k: CpuKernels) -> (Vec<f64>, Vec<f64>) {
    let t = Topology::build(m).unwrap();
    let (dt, _) = solver::time_step(d, 0.95).unwrap();
    let src = Source::new(m, &t, d, [0.43, 0.37, 0.29], [0.3, 0.2, 1.0]).unwrap();
    let probes = vec![
        Probe::new(m, &t, [0.61, 0.42, 0.33]).unwrap(),
        Probe::new(m, &t, [0.22, 0.5, 0.21]).unwrap(),
    ];
    let ops = Arc::new(Operators::<f64>::new(d, dt, dual == DualForm::Csr));
    let w = Waveform::gaussian_derivative(300e6);
    let mut s = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), probes).unwrap();
    s.set_kernels(k).unwrap();
    assert_eq!(s.kernels(), k);
    let rec = solver::run(&mut s, dt, 300, Some(w.end()), 2, 5, &mut |_| {}).unwrap();
    (rec.samples, s.state().unwrap().0)
}

#[test]
fn lean_runs_match_the_reference_runs() {
    for (k, kind) in ["vacuum", "lossy", "dispersive"].iter().enumerate() {
        let (m, d) = case(7 + 100 * k as u64, kind);
        let d = Arc::new(d);
        for dual in [DualForm::Factored, DualForm::Csr] {
            let (pa, ua) = run(&m, &d, dual, CpuKernels::Reference);
            let (pb, ub) = run(&m, &d, dual, CpuKernels::Lean);
            assert!(pa.iter().any(|&x| x.abs() > 0.0), "{kind}: silent probes");
            let (ep, eu) = (rel_err(&pb, &pa), rel_err(&ub, &ua));
            println!("{kind} {dual:?}: probes {ep:.2e}, state {eu:.2e}");
            assert!(ep < 1e-11 && eu < 1e-11, "{kind} {dual:?}: {ep:e} {eu:e}");
        }
    }
}

/// The default is the lean step, and switching back and forth keeps the state.
#[test]
fn stepper_defaults_to_lean_and_switches() {
    let (_, d) = case(3, "lossy");
    let d = Arc::new(d);
    let ops = Arc::new(Operators::<f64>::new(&d, 1e-3, false));
    let mut s = CpuStepper::new(d.clone(), ops, DualForm::Factored, None, vec![]).unwrap();
    assert_eq!(s.kernels(), CpuKernels::Lean);
    let (u, f) = random_state(&d, 4);
    s.set_state(&u, &f).unwrap();
    s.set_kernels(CpuKernels::Reference).unwrap();
    s.set_kernels(CpuKernels::Lean).unwrap();
    let (u1, f1) = s.state().unwrap();
    assert_eq!((u1, f1), (u, f));
}
