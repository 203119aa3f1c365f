//! OpenCL kernels and whole runs against the CPU reference backend, on seeded random data.
//! Runs on any OpenCL device (PoCL in CI). Without a device the tests print SKIPPED, and
//! fail when DGATD_REQUIRE_OPENCL=1 (set in CI).
//!
//! Tolerances (relative, 2-norm): single kernels 1e-12 in f64 and 1e-5 in f32 (sums of up
//! to ~70 terms, different order and FMA contraction on the device); whole runs of a few
//! hundred steps 1e-9 in f64 and 1e-4 in f32 (round-off differences propagate through the
//! leapfrog without growing, as the energy test shows, but accumulate like sqrt(steps)).
#![allow(clippy::needless_range_loop)]

mod common;
use common::*;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::{self, CpuStepper};
use dgatd::backend::opencl::{
    BlockVariant, ClDevice, ClStepper, CsrVariant, PrimalVariant, list_devices, select_device,
};
use dgatd::dga::operators::{DualForm, Operators};
use dgatd::solver::{self, Probe, Source, Waveform};
use std::sync::Arc;

fn device() -> Option<Arc<ClDevice>> {
    let required = std::env::var("DGATD_REQUIRE_OPENCL")
        .map(|v| v == "1")
        .unwrap_or(false);
    match select_device(std::env::var("DGATD_TEST_DEVICE").ok().as_deref()).and_then(ClDevice::open)
    {
        Ok(d) => Some(d),
        Err(e) if required => panic!("DGATD_REQUIRE_OPENCL=1 but no OpenCL device: {e}"),
        Err(e) => {
            eprintln!("\n*** SKIPPED: OpenCL test needs a device ({e}) ***\n");
            None
        }
    }
}

#[test]
fn lists_devices_with_their_properties() {
    let Some(d) = device() else { return };
    let all = list_devices().unwrap();
    assert!(all.iter().any(|x| x.name == d.info.name));
    assert!(d.info.global_mem > 0 && d.info.max_alloc > 0 && d.info.compute_units > 0);
}

fn kernels_agree<T: dgatd::Real>(dev: &Arc<ClDevice>, tol: f64) {
    let (_m, _t, d, _) = setup(jittered_box([5, 4, 4], 31, 0.3), Some(8));
    let d = Arc::new(d);
    let dt = 0.37;
    let ops = Operators::<f64>::new(&d, dt, true);
    let mut s = ClStepper::<T>::new(dev.clone(), d.clone(), DualForm::Csr, None, &[]).unwrap();
    s.set_time_step(dt, None).unwrap();
    let (u0, f0) = random_state(&d, 91);
    // primal, both variants
    for v in [PrimalVariant::Tet, PrimalVariant::Row] {
        s.primal = v;
        s.set_state(&u0, &f0).unwrap();
        s.primal_update().unwrap();
        let (_, fd) = s.state().unwrap();
        let mut fc = f0.clone();
        cpu::primal(&ops, &u0, &mut fc);
        let e = rel_err(&diff(&fd, &f0), &diff(&fc, &f0));
        eprintln!("primal {v:?} {}: relative error {e:.2e}", T::NAME);
        assert!(e < tol, "primal {v:?} {}: {e:e}", T::NAME);
    }
    // dual: factored and both CSR variants
    let mut c = vec![0.0; d.n_edges];
    let mut uc = u0.clone();
    cpu::circulations(&ops, &f0, &mut c);
    cpu::vertex_blocks(&ops, &c, &mut uc);
    let mut uc2 = u0.clone();
    cpu::dual_csr(&ops, &f0, &mut uc2);
    for (form, var, bv) in [
        (DualForm::Factored, CsrVariant::Scalar, BlockVariant::Vertex),
        (
            DualForm::Factored,
            CsrVariant::Scalar,
            BlockVariant::HalfEdge,
        ),
        (DualForm::Csr, CsrVariant::Scalar, BlockVariant::Vertex),
        (DualForm::Csr, CsrVariant::Vector, BlockVariant::Vertex),
    ] {
        s.dual = form;
        s.csr_variant = var;
        s.block_variant = bv;
        s.set_state(&u0, &f0).unwrap();
        s.dual_update().unwrap();
        let (ud, _) = s.state().unwrap();
        let reference = if form == DualForm::Csr { &uc2 } else { &uc };
        let e = rel_err(&diff(&ud, &u0), &diff(reference, &u0));
        eprintln!(
            "dual {form:?} {var:?} {bv:?} {}: relative error {e:.2e}",
            T::NAME
        );
        assert!(e < tol, "dual {form:?} {var:?} {bv:?} {}: {e:e}", T::NAME);
    }
}

fn diff(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

#[test]
fn every_kernel_matches_the_cpu_f64() {
    let Some(dev) = device() else { return };
    if !dev.info.fp64 {
        eprintln!("*** SKIPPED f64 kernels: {} has no fp64 ***", dev.info.name);
        return;
    }
    kernels_agree::<f64>(&dev, 1e-12);
}

#[test]
fn every_kernel_matches_the_cpu_f32() {
    let Some(dev) = device() else { return };
    kernels_agree::<f32>(&dev, 1e-5);
}

#[test]
fn device_power_iteration_matches_the_host() {
    let Some(dev) = device() else { return };
    if !dev.info.fp64 {
        return;
    }
    let (_m, _t, d, _) = setup(jittered_box([4, 4, 3], 32, 0.3), Some(2));
    let d = Arc::new(d);
    let host = solver::spectral_radius(&d, 60, 0x5eed);
    let mut s = ClStepper::<f64>::new(dev, d.clone(), DualForm::Factored, None, &[]).unwrap();
    s.set_time_step(0.5, None).unwrap(); // the result must not depend on the current Δt
    let devr = s.spectral_radius(60, 0x5eed).unwrap();
    // Same start vector and iteration; only summation order differs.
    eprintln!(
        "power iteration: device {devr} host {host} ({:.2e})",
        (devr - host).abs() / host
    );
    assert!(
        (devr - host).abs() < 1e-9 * host,
        "device {devr} host {host}"
    );
}

fn whole_run<T: dgatd::Real>(
    dev: &Arc<ClDevice>,
    dual: DualForm,
    steps: usize,
) -> (Vec<f64>, Vec<f64>, f64, f64) {
    let (m, t, d, _) = setup(cylinder("cylinder_coarse.msh"), None);
    let d = Arc::new(d);
    let (dt, _) = solver::time_step(&d, 0.95).unwrap();
    let w = Waveform::gaussian_derivative(150e6);
    let probes = vec![
        Probe::new(&m, &t, [-0.3, 0.5, 0.2]).unwrap(),
        Probe::new(&m, &t, [0.4, -0.5, 0.3]).unwrap(),
    ];
    // CPU reference
    let src = Source::new(&m, &t, &d, dt, [0.6, 0.3, 0.24], [0.0, 0.0, 1.0]).unwrap();
    let ops = Arc::new(Operators::<T>::new(&d, dt, dual == DualForm::Csr));
    let mut c = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), probes.clone()).unwrap();
    let rc = solver::run(&mut c, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap();
    // Device: unit pattern, rescaled on the device.
    let src1 = Source::new(&m, &t, &d, 1.0, [0.6, 0.3, 0.24], [0.0, 0.0, 1.0]).unwrap();
    let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), dual, Some(&src1), &probes).unwrap();
    g.set_time_step(dt, Some(w)).unwrap();
    let rg = solver::run(&mut g, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap();
    (
        rg.samples,
        rc.samples,
        g.energy().unwrap(),
        c.energy().unwrap(),
    )
}

#[test]
fn whole_runs_match_the_cpu() {
    let Some(dev) = device() else { return };
    let duals = [DualForm::Factored, DualForm::Csr];
    if dev.info.fp64 {
        for dual in duals {
            let (g, c, eg, ec) = whole_run::<f64>(&dev, dual, 600);
            assert!(c.iter().map(|x| x.abs()).fold(0.0, f64::max) > 0.0);
            let e = rel_err(&g, &c);
            eprintln!(
                "whole run f64 {dual:?}: probe records differ by {e:.2e}, energy by {:.2e}",
                (eg - ec).abs() / ec
            );
            assert!(e < 1e-9, "f64 {dual:?}: probe records differ by {e:e}");
            assert!((eg - ec).abs() < 1e-9 * ec, "f64 energy {eg} vs {ec}");
        }
    }
    let (g, c, _, _) = whole_run::<f32>(&dev, DualForm::Factored, 600);
    let e = rel_err(&g, &c);
    eprintln!("whole run f32 factored: probe records differ by {e:.2e}");
    assert!(e < 1e-4, "f32: probe records differ by {e:e}");
}
