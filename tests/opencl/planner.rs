//! The public planner (`dgatd::select`) cell by cell: every method × target × precision it
//! offers steps the same seeded problem as the CPU reference cell, and the spectral radius it
//! estimates on each target (the same seed and iterations everywhere) gives the same Δt.
//!
//! Tolerances as in `opencl.rs`: whole runs 1e-9 relative in f64, 1e-4 in f32 (round-off
//! of the precision, accumulated over a few hundred steps without growth); ρ agrees to 1e-9
//! in f64 (the same power iteration in a different summation order) and 1e-4 in f32.

use crate::common::*;
use dgatd::backend::{Excitation, Method, Request, Target};
use dgatd::dg::{DgOperator, DgProbe, DgSource, Flux};
use dgatd::dga::{DualForm, Probe, Source};
use dgatd::problem::Waveform;
use dgatd::{Precision, Result, select};
use std::sync::Arc;

/// A rule that estimates ρ on the stepper's target and keeps the given Δt: records are
/// compared at one Δt, the estimates on the side.
fn keep(
    dt: f64,
    rho: &mut Vec<f64>,
) -> impl FnMut(&mut dyn FnMut() -> Result<f64>) -> Result<(f64, f64)> + '_ {
    move |estimate| {
        let r = estimate()?;
        rho.push(r);
        Ok((dt, r))
    }
}

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

#[test]
fn every_dga_cell_steps_like_the_cpu_reference() {
    let Some(dev) = cl_device() else { return };
    // the box is 1 x 0.8 x 0.6 m
    let (m, t, d, _) = setup(jittered_box([4, 3, 5], 73, 0.3), Some(19));
    let d = Arc::new(d);
    let src = Source::new(&m, &t, &d, [0.41, 0.33, 0.52], [0.3, -0.5, 0.8]).unwrap();
    let probes = vec![
        Probe::new(&m, &t, [0.22, 0.61, 0.35]).unwrap(),
        Probe::new(&m, &t, [0.7, 0.25, 0.45]).unwrap(),
    ];
    let wave = Waveform::gaussian_derivative(4e8);
    let (dt, _) = dgatd::solver::time_step(&d, 0.9).unwrap();
    let steps = 300;
    let run = |target: Target, precision: Precision, dual: DualForm| {
        let req = Request {
            method: Method::Dga(d.clone()),
            target,
            precision,
            dual,
            excitation: Excitation::Dga {
                source: Some(&src),
                wave,
                probes: &probes,
            },
            resident: None,
        };
        let mut rho = vec![];
        let mut s = select(req, &mut keep(dt, &mut rho)).unwrap();
        assert_eq!(s.dt, dt, "the rule's Δt is installed");
        let mut rec = vec![];
        s.stepper.advance(0, steps, &mut rec).unwrap();
        (rec, rho[0], s.stepper.name())
    };
    let (reference, rho_ref, _) = run(Target::Cpu, Precision::F64, DualForm::Factored);
    assert!(
        reference.iter().any(|x| x.abs() > 0.0),
        "all-zero reference record"
    );
    let mut cells = vec![
        (Target::Cpu, Precision::F32, DualForm::Factored, 1e-4),
        (Target::Cpu, Precision::F64, DualForm::Csr, 1e-9),
        (
            Target::OpenCl(dev.clone()),
            Precision::F32,
            DualForm::Factored,
            1e-4,
        ),
        (
            Target::OpenCl(dev.clone()),
            Precision::F32,
            DualForm::Csr,
            1e-4,
        ),
    ];
    if dev.info.fp64 {
        cells.push((
            Target::OpenCl(dev.clone()),
            Precision::F64,
            DualForm::Factored,
            1e-9,
        ));
        cells.push((
            Target::OpenCl(dev.clone()),
            Precision::F64,
            DualForm::Csr,
            1e-9,
        ));
    }
    for (target, precision, dual, tol) in cells {
        let (rec, rho, name) = run(target, precision, dual);
        let e = rel_err(&rec, &reference);
        let er = rel(rho, rho_ref);
        eprintln!("DGA {name} {precision:?} {dual:?}: record {e:.2e}, rho {er:.2e}");
        assert!(
            e < tol,
            "{name} {precision:?} {dual:?}: record differs by {e:e}"
        );
        assert!(
            er < tol,
            "{name} {precision:?} {dual:?}: rho differs by {er:e}"
        );
    }
}

#[test]
fn every_dg_cell_steps_like_the_cpu_reference() {
    let Some(dev) = cl_device() else { return };
    let m = jittered_box([2, 3, 2], 29, 0.25);
    let k = m.n_tets();
    let mut rng = dgatd::internal::Rng::new(41);
    let eps: Vec<f64> = (0..k).map(|_| 1.0 + 2.0 * rng.uniform()).collect();
    let mu: Vec<f64> = (0..k).map(|_| 1.0 + 0.5 * rng.uniform()).collect();
    let op = Arc::new(DgOperator::new(&m, 2, Flux::Upwind, &eps, &mu).unwrap());
    let (dt, _) = dgatd::dg::time_step(&op, 0.9);
    let source = DgSource {
        tet: k / 3,
        dir: [0.2, 0.9, -0.4],
        wave: Waveform::gaussian_derivative(3e8),
    };
    let probes = vec![
        DgProbe::new(&m, &op, [0.3, 0.45, 0.6]).unwrap(),
        DgProbe::new(&m, &op, [0.65, 0.2, 0.35]).unwrap(),
    ];
    let steps = 80;
    let run = |target: Target, precision: Precision| {
        let req = Request {
            method: Method::Dg(op.clone()),
            target,
            precision,
            dual: DualForm::Factored,
            excitation: Excitation::Dg {
                source: Some(source.clone()),
                probes: probes.clone(),
            },
            resident: None,
        };
        let mut rho = vec![];
        let mut s = select(req, &mut keep(dt, &mut rho)).unwrap();
        assert_eq!(s.dt, dt, "the rule's Δt is installed");
        let mut rec = vec![];
        s.stepper.advance(0, steps, &mut rec).unwrap();
        (rec, rho[0], s.stepper.name())
    };
    let (reference, rho_ref, _) = run(Target::Cpu, Precision::F64);
    assert!(
        reference.iter().any(|x| x.abs() > 0.0),
        "all-zero reference record"
    );
    let mut cells = vec![(Precision::F32, 1e-4)];
    if dev.info.fp64 {
        cells.push((Precision::F64, 1e-9));
    }
    for (precision, tol) in cells {
        let (rec, rho, name) = run(Target::OpenCl(dev.clone()), precision);
        let e = rel_err(&rec, &reference);
        let er = rel(rho, rho_ref);
        eprintln!("DG {name} {precision:?}: record {e:.2e}, rho {er:.2e}");
        assert!(e < tol, "{name} {precision:?}: record differs by {e:e}");
        assert!(er < tol, "{name} {precision:?}: rho differs by {er:e}");
    }
}
