//! What the step benchmark `loss_bench` uses: a stepper of a given
//! precision, dual form and backend started from a seeded random state, and the timing of
//! its steps. (Examples share no crate module; each includes this one by `mod`.)

use dgatd::Real;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::backend::opencl::{ClDevice, ClStepper};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use std::sync::Arc;
use std::time::Instant;

/// Milliseconds per step over `steps` steps, after 3 warm-up steps (kernel build, caches).
/// A device stepper returns once the last chunk's samples are read: the steps are done.
pub fn time_steps(s: &mut dyn Stepper, steps: usize) -> Result<f64, dgatd::Error> {
    let mut sink = Vec::new();
    s.advance(0, 3, &mut sink)?;
    let t0 = Instant::now();
    s.advance(3, steps, &mut sink)?;
    Ok(t0.elapsed().as_secs_f64() * 1e3 / steps as f64)
}

/// A stepper of `d` with time step `dt` on the CPU (`dev` None) or a device, without source
/// or probes, started from a random state (seed 7) on the free half-edges and dual edges.
pub fn stepper<T: Real>(
    d: &Arc<Dga>,
    dt: f64,
    dual: DualForm,
    dev: Option<&Arc<ClDevice>>,
) -> Result<Box<dyn Stepper>, dgatd::Error> {
    let mut r = dgatd::internal::Rng::new(7);
    let mut u = vec![0.0; d.n_half()];
    for &h in &d.meps.h {
        u[h as usize] = r.sym();
    }
    let f: Vec<f64> = (0..d.n_dual()).map(|_| r.sym()).collect();
    let mut s: Box<dyn Stepper> = match dev {
        None => {
            let ops = Arc::new(Operators::<T>::new(d, dt, dual == DualForm::Csr));
            Box::new(CpuStepper::new(d.clone(), ops, dual, None, vec![])?)
        }
        Some(dev) => {
            let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), dual, None, &[])?;
            g.set_time_step(dt, None)?;
            Box::new(g)
        }
    };
    s.set_state(&u, &f)?;
    Ok(s)
}
