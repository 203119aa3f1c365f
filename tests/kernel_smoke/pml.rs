//! The kernel smoke run's perfectly matched layer (`pml_mag_correct`, `pml_mag_poles` of
//! `cl/dga/pml.cl`; its electric side in `disp_correct`, `disp_poles`): a 3×3×3-cell box of
//! unequal sides (162 tets) whose outer cells are a PML around the centre cell (the box's
//! faces, edges and corners of the stretching), 3 steps from a random state with a source
//! and a probe, against `CpuStepper` on the same operators, and a check that the layer
//! changed the result (against the CPU run without it), so the comparison is not vacuous.

use super::{Smoke, random_state, rel_err};
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::backend::opencl::{ClDevice, ClStepper};
use dgatd::dga::{Dga, DualForm, Operators, Probe, Source};
use dgatd::internal::Rng;
use dgatd::mesh::{Topology, box_mesh};
use dgatd::problem::pml::Stretch;
use dgatd::problem::{Media, Waveform};
use dgatd::{Real, Result, solver};
use std::sync::Arc;

pub(super) fn pml<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke, tol: f64) -> Result<()> {
    let l = [0.9, 0.7, 0.8];
    let mesh = box_mesh([3, 3, 3], l);
    let topo = Topology::build(&mesh)?;
    let centre = |n: usize| -> [f64; 3] {
        let x = mesh.tet_x(n);
        std::array::from_fn(|k| x.iter().map(|p| p[k]).sum::<f64>() / 4.0)
    };
    let in_layer: Vec<bool> = (0..mesh.n_tets())
        .map(|n| (0..3).any(|k| (centre(n)[k] / l[k] - 0.5).abs() > 1.0 / 6.0))
        .collect();
    let plain = Media::vacuum(mesh.n_tets());
    let mut mat = plain.clone();
    let mut st = Stretch::default();
    st.add_layer(&mesh, &in_layer, &mat.eps, &mat.mu, 3.0, 1e-6, None, "pml")?;
    mat.pml = Some(st);
    let d = Arc::new(Dga::assemble(&mesh, &topo, &mat)?);
    let d0 = Arc::new(Dga::assemble(&mesh, &topo, &plain)?);
    let (dt, _) = solver::time_step(&d0, 0.9)?;
    let w = Waveform {
        tau: 2.0 * dt,
        t0: 2.0 * dt,
    };
    let src = Source::new(&mesh, &topo, &d, [0.47, 0.33, 0.41], [0.2, -0.3, 0.9])?;
    let probes = vec![Probe::new(&mesh, &topo, [0.52, 0.38, 0.36])?];
    let mut r = Rng::new(71);
    let (u0, f0) = random_state(&d, &mut r);
    let steps = 3;
    let both = |a: &[f64], b: &[f64]| [a, b].concat();
    let mut g = ClStepper::<T>::new(
        dev.clone(),
        d.clone(),
        DualForm::Factored,
        Some(&src),
        &probes,
    )?;
    g.set_time_step(dt, Some(w))?;
    g.set_state(&u0, &f0)?;
    let mut sg = vec![];
    g.advance(0, steps, &mut sg)?;
    let (ug, fg) = g.state()?;
    // (U, F, probe samples, pole states)
    type Run = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);
    let cpu = |d: &Arc<Dga>| -> Result<Run> {
        let ops = Arc::new(Operators::<T>::new(d, dt, false));
        let mut c = CpuStepper::new(
            d.clone(),
            ops,
            DualForm::Factored,
            Some((&src, w)),
            probes.clone(),
        )?;
        c.set_state(&u0, &f0)?;
        let mut sc = vec![];
        c.advance(0, steps, &mut sc)?;
        let (u, f) = c.state()?;
        Ok((u, f, sc, c.aux_state()?))
    };
    let (uc, fc, sc, ac) = cpu(&d)?;
    let (ul, fl, _, _) = cpu(&d0)?;
    s.covered(&[
        "pml_mag_correct",
        "pml_mag_poles",
        "disp_correct",
        "disp_poles",
    ]);
    let what = format!(
        "{} PML ({} of {} tets in the layer) {steps} steps, pml_mag_correct + primal + pml_mag_poles + disp_correct + dual + disp_poles",
        T::NAME,
        in_layer.iter().filter(|&&x| x).count(),
        mesh.n_tets()
    );
    s.check(
        format!("{what}: state"),
        rel_err(&both(&ug, &fg), &both(&uc, &fc)),
        tol,
    );
    s.check(format!("{what}: probe samples"), rel_err(&sg, &sc), tol);
    s.check(
        format!("{what}: pole states"),
        rel_err(&g.aux_state()?, &ac),
        tol,
    );
    let effect = rel_err(&both(&ul, &fl), &both(&uc, &fc));
    s.require(
        format!("{what}: the layer changes the CPU state by {effect:.2e} (at least 1e-3)"),
        effect >= 1e-3,
    );
    Ok(())
}
