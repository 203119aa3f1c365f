//! The planner: which stepper advances a discretisation on a target in a precision, as
//! RustFFT's planner picks an algorithm for a length. [`select`] builds it, estimates the
//! spectral radius of its operator on the stepper's own device when the time-step rule
//! asks for it, installs the chosen Δt and, on a device, the fastest `U` layout that
//! applies; the solver, the bench and the tests take their steppers from here.
//!
//! The matrix (method × target), each cell a stepper type:
//!
//! | method | CPU | OpenCL device |
//! | --- | --- | --- |
//! | DGA leapfrog | [`super::cpu::CpuStepper`] | [`super::opencl::ClStepper`] (slot-major `U` where it applies) |
//! | nodal DG, LSERK4 | [`crate::backend::cpu::DgCpuStepper`] (f64) | [`crate::backend::opencl::DgClStepper`] |
//!
//! Units: ρ is the spectral radius of the unit-Δt operator in 1/m² for the DGA (`K`, the
//! leapfrog is stable for `Δt < 2/√ρ` metres of light travel) and in 1/m for DG (`L`);
//! Δt is in metres of light travel (seconds × c₀).

use super::Stepper;
use super::cpu::CpuStepper;
use super::opencl::{ClDevice, ClStepper, ResidentOperators, ULayout};
use crate::backend::cpu::DgCpuStepper;
use crate::backend::opencl::DgClStepper;
use crate::dg::DgOperator;
use crate::dg::{DgProbe, DgSource, RHO_ITERS, RHO_SEED};
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::{DualForm, Operators};
use crate::error::{Error, Result};
use crate::problem::Waveform;
use crate::real::Precision;
use crate::real::Real;
use std::any::Any;
use std::sync::Arc;

/// The seed and iterations of the DGA's power iteration for ρ(K) (the same on every
/// target, so that a run's Δt does not depend on where ρ was estimated but for rounding).
pub const DGA_RHO_ITERS: usize = 60;
pub const DGA_RHO_SEED: u64 = 0x5eed;

/// What is stepped.
#[derive(Clone)]
#[non_exhaustive]
pub enum Method {
    Dga(Arc<Dga>),
    Dg(Arc<DgOperator>),
}

/// Where it is stepped.
#[derive(Clone)]
#[non_exhaustive]
pub enum Target {
    Cpu,
    OpenCl(Arc<ClDevice>),
}

/// The source and probes in the method's own form.
pub enum Excitation<'a> {
    /// The DGA's: the source pattern (built at unit Δt) and its waveform, the probes.
    Dga {
        source: Option<&'a Source>,
        wave: Waveform,
        probes: &'a [Probe],
    },
    /// DG's: a point source in a tet and the interpolating probes.
    Dg {
        source: Option<DgSource>,
        probes: Vec<DgProbe>,
    },
}

/// A request to the planner.
pub struct Request<'a> {
    pub method: Method,
    pub target: Target,
    pub precision: Precision,
    /// The DGA's dual form (DG ignores it).
    pub dual: DualForm,
    pub excitation: Excitation<'a>,
    /// Operators already assembled on the target device
    /// ([`ResidentOperators`] of the request's precision), or None.
    pub resident: Option<Box<dyn Any>>,
}

/// The planner's answer: the stepper with its Δt installed.
pub struct Selected {
    pub stepper: Box<dyn Stepper>,
    /// Δt in metres of light travel.
    pub dt: f64,
    /// What the rule returned with it (the margin-included ρ for a default Δt, 0 where
    /// none was estimated).
    pub rho: f64,
    /// Notices on the choice (e.g. why `U` stays in the half-edge layout).
    pub notices: Vec<String>,
}

/// The time-step rule: called with an estimator of ρ (on the stepper's own target; calling
/// it runs a power iteration), returns `(Δt, ρ used)`. The solver's rule applies the CFL
/// number, the pole limit and the checks of a given Δt.
pub type StepRule<'r> = dyn FnMut(&mut dyn FnMut() -> Result<f64>) -> Result<(f64, f64)> + 'r;

/// Builds the stepper of `req`, chooses its Δt with `rule` and installs it.
pub fn select(req: Request<'_>, rule: &mut StepRule<'_>) -> Result<Selected> {
    let f64s = req.precision == Precision::F64;
    match (&req.method, &req.target) {
        (Method::Dga(_), Target::Cpu) if f64s => dga_cpu::<f64>(req, rule),
        (Method::Dga(_), Target::Cpu) => dga_cpu::<f32>(req, rule),
        (Method::Dga(_), Target::OpenCl(_)) if f64s => dga_cl::<f64>(req, rule),
        (Method::Dga(_), Target::OpenCl(_)) => dga_cl::<f32>(req, rule),
        (Method::Dg(_), Target::Cpu) => dg_cpu(req, rule),
        (Method::Dg(_), Target::OpenCl(_)) if f64s => dg_cl::<f64>(req, rule),
        (Method::Dg(_), Target::OpenCl(_)) => dg_cl::<f32>(req, rule),
    }
}

/// The DGA's parts of a request: the operators, the source, its waveform and the probes.
type DgaParts<'a> = (Arc<Dga>, Option<&'a Source>, Waveform, &'a [Probe]);

fn dga_parts<'a>(req: &Request<'a>) -> Result<DgaParts<'a>> {
    match (&req.method, &req.excitation) {
        (
            Method::Dga(d),
            Excitation::Dga {
                source,
                wave,
                probes,
            },
        ) => Ok((d.clone(), *source, *wave, probes)),
        _ => Err(mismatch()),
    }
}

fn dg_parts(req: Request<'_>) -> Result<(Arc<DgOperator>, Option<DgSource>, Vec<DgProbe>)> {
    match (req.method, req.excitation) {
        (Method::Dg(op), Excitation::Dg { source, probes }) => Ok((op, source, probes)),
        _ => Err(mismatch()),
    }
}

fn mismatch() -> Error {
    Error::config(
        "method",
        "excitation",
        "the source and probes are not of the method's form (DGA or DG)",
    )
}

/// The DGA on the CPU: ρ from the host's power iteration, the operators built for Δt.
fn dga_cpu<T: Real>(req: Request<'_>, rule: &mut StepRule<'_>) -> Result<Selected> {
    let (d, source, wave, probes) = dga_parts(&req)?;
    let mut rho = || Ok(super::cpu::spectral_radius(&d, DGA_RHO_ITERS, DGA_RHO_SEED));
    let (dt, rho) = rule(&mut rho)?;
    let ops = Arc::new(Operators::<T>::new(&d, dt, req.dual == DualForm::Csr));
    let s = CpuStepper::new(
        d.clone(),
        ops,
        req.dual,
        source.map(|s| (s, wave)),
        probes.to_vec(),
    )?;
    Ok(Selected {
        stepper: Box::new(s),
        dt,
        rho,
        notices: vec![],
    })
}

/// The DGA on an OpenCL device: the stepper over resident operators where the request
/// carries them, ρ from the device's power iteration, then slot-major `U` where it applies
/// (the fastest exact step, `results/h200/slot_major/`; where its buffers, about 4% more
/// device memory, or its build fail, the half-edge layout steps the same run).
fn dga_cl<T: Real>(mut req: Request<'_>, rule: &mut StepRule<'_>) -> Result<Selected> {
    let mut s = opencl_dga::<T>(&mut req)?;
    let (_, _, wave, _) = dga_parts(&req)?;
    let mut rho = || s.spectral_radius(DGA_RHO_ITERS, DGA_RHO_SEED);
    let (dt, rho) = rule(&mut rho)?;
    s.set_time_step(dt, Some(wave))?;
    let mut notices = vec![];
    if s.slot_major_refusal().is_none()
        && let Err(e) = s.set_u_layout(ULayout::SlotMajor)
    {
        notices.push(format!("U stays in the half-edge layout: {e}"));
    }
    Ok(Selected {
        stepper: Box::new(s),
        dt,
        rho,
        notices,
    })
}

/// The concrete DGA stepper of an OpenCL request at unit Δt, in the half-edge layout (for
/// callers that set variants and layouts themselves: the bench, the tests, a partitioned
/// rank); it takes the request's resident operators.
pub fn opencl_dga<T: Real>(req: &mut Request<'_>) -> Result<ClStepper<T>> {
    let Target::OpenCl(dev) = &req.target else {
        return Err(Error::config(
            "backend",
            "cpu",
            "an OpenCL stepper needs a device",
        ));
    };
    let (d, source, _, probes) = dga_parts(req)?;
    match req.resident.take() {
        Some(r) => {
            let r = r.downcast::<ResidentOperators<T>>().map_err(|_| {
                Error::config("assembly", "device", "operators of another precision")
            })?;
            ClStepper::<T>::with_resident(dev.clone(), d, *r, source, probes)
        }
        None => dga_opencl::<T>(dev, &d, req.dual, source, probes),
    }
}

/// The DGA × OpenCL cell at unit Δt, `U` by half-edge, the default variants for the mesh:
/// for callers that set variants, layouts and Δt themselves (the bench, a partitioned
/// rank, the tests).
pub fn dga_opencl<T: Real>(
    dev: &Arc<ClDevice>,
    dga: &Arc<Dga>,
    dual: DualForm,
    source: Option<&Source>,
    probes: &[Probe],
) -> Result<ClStepper<T>> {
    ClStepper::<T>::new(dev.clone(), dga.clone(), dual, source, probes)
}

/// The DG × OpenCL cell at Δt = `dt` (metres), the default update form for the order and
/// device (the bench and the tests set others).
pub fn dg_opencl<T: Real>(
    dev: &Arc<ClDevice>,
    op: &Arc<DgOperator>,
    dt: f64,
    source: Option<DgSource>,
    probes: Vec<DgProbe>,
) -> Result<DgClStepper<T>> {
    DgClStepper::<T>::new(dev.clone(), op.clone(), dt, source, probes)
}

/// DG on the CPU (f64): ρ(L) from the host's power iteration.
fn dg_cpu(req: Request<'_>, rule: &mut StepRule<'_>) -> Result<Selected> {
    let (op, source, probes) = dg_parts(req)?;
    let mut rho = || Ok(crate::dg::spectral_radius(&op, RHO_ITERS, RHO_SEED));
    let (dt, rho) = rule(&mut rho)?;
    Ok(Selected {
        stepper: Box::new(DgCpuStepper::new(op.clone(), dt, source, probes)),
        dt,
        rho,
        notices: vec![],
    })
}

/// DG on an OpenCL device: ρ(L) from the device's power iteration.
fn dg_cl<T: Real>(req: Request<'_>, rule: &mut StepRule<'_>) -> Result<Selected> {
    let Target::OpenCl(dev) = req.target.clone() else {
        unreachable!("dispatched on the target")
    };
    let (op, source, probes) = dg_parts(req)?;
    let mut s = dg_opencl::<T>(&dev, &op, 0.0, source, probes)?;
    let mut rho = || s.spectral_radius(RHO_ITERS, RHO_SEED);
    let (dt, rho) = rule(&mut rho)?;
    s.set_time_step(dt);
    Ok(Selected {
        stepper: Box::new(s),
        dt,
        rho,
        notices: vec![],
    })
}
