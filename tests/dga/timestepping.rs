//! Exact behaviour of the leapfrog (design note §9) on the CPU reference backend.
#![allow(clippy::needless_range_loop)]

use crate::common::*;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::{self, CpuStepper};
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::problem::Waveform;
use dgatd::solver;
use std::sync::Arc;

fn stepper(d: &Arc<dgatd::dga::Dga>, dt: f64, dual: DualForm) -> CpuStepper<f64> {
    let ops = Arc::new(Operators::<f64>::new(d, dt, dual == DualForm::Csr));
    CpuStepper::new(d.clone(), ops, dual, None, vec![]).unwrap()
}

#[test]
fn energy_is_constant_to_round_off_over_10000_steps() {
    let (_m, _t, d, _) = setup(jittered_box([3, 3, 3], 21, 0.3), Some(4));
    let d = Arc::new(d);
    let (dt, _) = solver::time_step(&d, 0.95).unwrap();
    let mut s = stepper(&d, dt, DualForm::Factored);
    let (u, f) = random_state(&d, 77);
    s.set_state(&u, &f).unwrap();
    let w0 = s.energy().unwrap();
    assert!(w0 > 0.0);
    let mut worst: f64 = 0.0;
    for _ in 0..100 {
        s.advance(0, 100, &mut vec![]).unwrap();
        worst = worst.max((s.energy().unwrap() - w0).abs() / w0);
    }
    // f64, 1e4 steps: round-off walks like sqrt(n) * eps * (terms per row) ~ 1e-13.
    assert!(worst < 1e-12, "relative energy drift {worst:e}");
    // The naive energy is not conserved (negative control: the test can tell them apart).
    let (u1, f1) = s.state().unwrap();
    let naive = 0.5 * d.meps.quad(&u1)
        + 0.5
            * (0..d.n_tets)
                .map(|n| {
                    (0..16)
                        .map(|k| f1[4 * n + k / 4] * d.mmu[n][k] * f1[4 * n + k % 4])
                        .sum::<f64>()
                })
                .sum::<f64>();
    assert!((naive - w0).abs() / w0 > 1e-6);
}

#[test]
fn discrete_gauss_laws_hold_without_sources() {
    let (m, t, d, _) = setup(jittered_box([3, 3, 2], 22, 0.3), Some(5));
    let d = Arc::new(d);
    let (dt, _) = solver::time_step(&d, 0.9).unwrap();
    let mut s = stepper(&d, dt, DualForm::Factored);
    let (u, f) = random_state(&d, 78);
    s.set_state(&u, &f).unwrap();
    let flux = |f: &[f64]| -> Vec<f64> {
        (0..d.n_tets)
            .map(|n| (0..16).map(|k| d.mmu[n][k] * f[4 * n + k % 4]).sum())
            .collect()
    };
    let charge = |u: &[f64]| -> Vec<f64> {
        let mut mu = vec![0.0; u.len()];
        d.meps.apply_add(u, &mut mu);
        // Interior vertices only: on the PEC wall the dual volume is cut by the wall,
        // which carries surface charge.
        (0..m.n_vertices())
            .filter(|&v| !t.boundary_vertex[v])
            .map(|v| {
                t.edges_at(v)
                    .iter()
                    .map(|&e| {
                        let h = t.half_edge(e as usize, v as u32);
                        let s = if t.edges[e as usize][0] as usize == v {
                            1.0
                        } else {
                            -1.0
                        };
                        s * mu[h]
                    })
                    .sum()
            })
            .collect()
    };
    let (phi0, q0) = (flux(&f), charge(&u));
    assert!(q0.len() >= 4);
    s.advance(0, 3000, &mut vec![]).unwrap();
    let (u1, f1) = s.state().unwrap();
    let (phi1, q1) = (flux(&f1), charge(&u1));
    let sc_phi = phi0.iter().map(|x| x.abs()).fold(0.0, f64::max);
    let sc_q = q0.iter().map(|x| x.abs()).fold(0.0, f64::max);
    let dphi = phi0
        .iter()
        .zip(&phi1)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / sc_phi;
    let dq = q0
        .iter()
        .zip(&q1)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / sc_q;
    assert!(
        dphi < 1e-12 && dq < 1e-12,
        "flux drift {dphi:e}, charge drift {dq:e}"
    );
    // The state did change (the test is not vacuous).
    assert!(rel_err(&u1, &u) > 1e-2);
}

#[test]
fn leapfrog_is_time_reversible() {
    let (_m, _t, d, _) = setup(jittered_box([3, 2, 3], 23, 0.3), Some(6));
    let (dt, _) = solver::time_step(&d, 0.95).unwrap();
    let fwd = Operators::<f64>::new(&d, dt, false);
    let bwd = Operators::<f64>::new(&d, -dt, false);
    let (u0, f0) = random_state(&d, 79);
    let (mut u, mut f) = (u0.clone(), f0.clone());
    let mut c = vec![0.0; d.n_edges];
    for _ in 0..2000 {
        cpu::primal(&fwd, &u, &mut f);
        cpu::circulations(&fwd, &f, &mut c);
        cpu::vertex_blocks(&fwd, &c, &mut u);
    }
    assert!(rel_err(&u, &u0) > 1e-2);
    for _ in 0..2000 {
        // exact inverse of a step: undo the dual update, then the primal one
        cpu::circulations(&bwd, &f, &mut c);
        cpu::vertex_blocks(&bwd, &c, &mut u);
        cpu::primal(&bwd, &u, &mut f);
    }
    let (eu, ef) = (rel_err(&u, &u0), rel_err(&f, &f0));
    assert!(eu < 1e-11 && ef < 1e-11, "U {eu:e}, F {ef:e}");
}

#[test]
fn stability_limit_is_sharp() {
    let (_m, _t, d, _) = setup(jittered_box([2, 2, 2], 24, 0.25), Some(7));
    let d = Arc::new(d);
    // Converged ρ(K): many power iterations on this small mesh; the production estimate
    // (60 iterations + 2% margin) must bound it from above.
    let rho = solver::spectral_radius(&d, 4000, 1);
    let (_, rho_est) = solver::time_step(&d, 0.95).unwrap();
    assert!(rho_est >= rho, "estimate {rho_est} below converged {rho}");
    let limit = 2.0 / rho.sqrt();
    let (u, f) = random_state(&d, 80);
    let run = |factor: f64| {
        let mut s = stepper(&d, factor * limit, DualForm::Factored);
        s.set_state(&u, &f).unwrap();
        s.advance(0, 1500, &mut vec![]).unwrap();
        let (u1, _) = s.state().unwrap();
        u1.iter().map(|x| x * x).sum::<f64>().sqrt() / u.iter().map(|x| x * x).sum::<f64>().sqrt()
    };
    let g_stable = run(0.99);
    let g_unstable = run(1.01);
    assert!(g_stable < 100.0, "0.99x limit grew by {g_stable}");
    assert!(g_unstable > 1e6, "1.01x limit grew only by {g_unstable}");
}

fn cylinder_run<T: dgatd::Real>(dual: DualForm, steps: usize) -> (Vec<f64>, Vec<f64>) {
    let (m, t, d, _) = setup(cylinder("cylinder_coarse.msh"), None);
    let d = Arc::new(d);
    let (dt, _) = solver::time_step(&d, 0.95).unwrap();
    let src = Source::new(&m, &t, &d, [0.6, 0.3, 0.24], [0.0, 0.0, 1.0]).unwrap();
    let probe = Probe::new(&m, &t, [-0.3, 0.5, 0.2]).unwrap();
    let ops = Arc::new(Operators::<T>::new(&d, dt, dual == DualForm::Csr));
    let w = Waveform::gaussian_derivative(150e6);
    let mut s = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), vec![probe]).unwrap();
    let rec = solver::run(&mut s, dt, steps, Some(w.end()), 1, 10, &mut |_| {}).unwrap();
    (rec.series(0, 2), s.state().unwrap().0)
}

#[test]
fn csr_and_factored_dual_updates_agree_to_round_off() {
    let (pa, ua) = cylinder_run::<f64>(DualForm::Csr, 400);
    let (pb, ub) = cylinder_run::<f64>(DualForm::Factored, 400);
    assert!(pa.iter().map(|x| x.abs()).fold(0.0, f64::max) > 0.0);
    let (ep, eu) = (rel_err(&pa, &pb), rel_err(&ua, &ub));
    assert!(ep < 1e-12 && eu < 1e-12, "probe {ep:e}, state {eu:e}");
}

#[test]
fn f32_and_f64_agree_to_single_precision() {
    let (p64, u64s) = cylinder_run::<f64>(DualForm::Factored, 400);
    let (p32, u32s) = cylinder_run::<f32>(DualForm::Factored, 400);
    let (ep, eu) = (rel_err(&p32, &p64), rel_err(&u32s, &u64s));
    // 400 steps of ~10-70 term sums in f32 (eps 6e-8): errors of order 1e-6..1e-5.
    assert!(ep < 1e-4 && eu < 1e-4, "probe {ep:e}, state {eu:e}");
    assert!(ep > 1e-9, "f32 run identical to f64? {ep:e}");
}

#[test]
fn cpu_runs_are_bit_identical() {
    let (a, ua) = cylinder_run::<f64>(DualForm::Factored, 200);
    let (b, ub) = cylinder_run::<f64>(DualForm::Factored, 200);
    assert_eq!(a, b);
    assert_eq!(ua, ub);
}
