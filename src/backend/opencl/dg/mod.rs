//! The DG time loop on an OpenCL device (LSERK4, design note §11): per stage the face
//! fluxes ([`flux`]), then the update with volume, lift and the stage's combination
//! ([`update`], five kernel forms, [`DgUpdate`]), and the probes ([`probes`]); programs
//! `cl/dg/*.cl`, built with `-D REAL`, `-D NP`, `-D NFP` and the work-group shapes. Each
//! component owns its buffers and kernels; the stepper owns the two field buffers and the
//! residual. Uses the safe wrappers of [`crate::ocl`], so it holds no `unsafe` itself.

mod flux;
mod probes;
mod update;

pub use update::DgUpdate;

use super::{DeviceSampling, advance_sampled};
use crate::backend::Stepper;
use crate::dg::{DgOperator, DgProbe, DgSource, RK4A, RK4B, RK4C};
use crate::error::{Error, Result};
use crate::ocl::ClDevice;
use crate::real::Real;
use flux::Flux;
use opencl3::event::Event;
use opencl3::memory::Buffer;
use probes::Probes;
use std::sync::Arc;
use update::{Shapes, Stage, Update};

pub const SOURCE: &str = concat!(
    include_str!("../../../../cl/dg/common.cl"),
    include_str!("../../../../cl/dg/node.cl"),
    include_str!("../../../../cl/dg/blocked.cl"),
    include_str!("../../../../cl/dg/two_nodes.cl"),
    include_str!("../../../../cl/dg/lines.cl"),
);
/// The name of the DG program in build logs and messages.
pub const PROGRAM: &str = "cl/dg/*.cl";

/// The DG stepper on an OpenCL device.
pub struct DgClStepper<T: Real> {
    dev: Arc<ClDevice>,
    pub op: Arc<DgOperator>,
    dt: f64,
    source: Option<DgSource>,
    /// The field at the two ends of a stage; `q[cur]` is the current one.
    q: [Buffer<T>; 2],
    cur: usize,
    res: Buffer<T>,
    flux: Flux<T>,
    update: Update<T>,
    probes: Probes<T>,
}

impl<T: Real> DgClStepper<T> {
    pub fn new(
        dev: Arc<ClDevice>,
        op: Arc<DgOperator>,
        dt: f64,
        source: Option<DgSource>,
        probes: Vec<DgProbe>,
    ) -> Result<Self> {
        if T::NAME == "f64" && !dev.info.fp64 {
            return Err(Error::config(
                "precision",
                "f64",
                format!(
                    "device {} has no cl_khr_fp64; use --precision f32",
                    dev.info.name
                ),
            ));
        }
        let (k, np, nfp) = (op.k, op.re.np, op.re.nfp);
        let real = std::mem::size_of::<T>();
        let need = (k * 6 * np * 4 + k * 6 * 4 * nfp + 3 * np * np + 4 * np * nfp + 20 * k) * real
            + k * 4 * nfp * 4;
        if need as f64 > 0.92 * dev.info.global_mem as f64 {
            return Err(Error::DeviceMemory(format!(
                "DG order {} needs about {} on the device ({k} tets), but {} has {}",
                op.re.n,
                indicatif::HumanBytes(need as u64),
                dev.info.name,
                indicatif::HumanBytes(dev.info.global_mem)
            )));
        }
        let shapes = Shapes::for_device::<T>(&dev, &op);
        let program = dev.build_source(SOURCE, PROGRAM, &shapes.options::<T>())?;
        let n = 6 * k * np;
        let zeros = || -> Result<Buffer<T>> {
            let mut b = dev.alloc::<T>(n, "DG field")?;
            dev.fill_zero(&mut b, n)?;
            Ok(b)
        };
        let (q0, q1, res) = (zeros()?, zeros()?, zeros()?);
        Ok(DgClStepper {
            q: [q0, q1],
            cur: 0,
            res,
            flux: Flux::new(&dev, &program, &op)?,
            update: Update::new(&dev, &program, &op, shapes)?,
            probes: Probes::new(&dev, &program, &probes)?,
            dev,
            op,
            dt,
            source,
        })
    }

    /// One LSERK stage: flux, then update into the other field buffer.
    pub fn stage(&mut self, s: usize, t: f64) -> Result<Event> {
        Ok(self.stage_events(s, t)?.1)
    }

    /// [`Self::stage`] returning the events of both kernels (flux, update).
    pub fn stage_events(&mut self, s: usize, t: f64) -> Result<(Event, Event)> {
        let src = match &self.source {
            Some(src) => {
                let w = src.wave.at(t + RK4C[s] * self.dt) / self.op.eps[src.tet];
                (
                    src.tet as u32,
                    [w * src.dir[0], w * src.dir[1], w * src.dir[2]],
                )
            }
            None => (u32::MAX, [0.0; 3]),
        };
        self.launch_stage(RK4A[s], RK4B[s], self.dt, src)
    }

    /// Flux and update kernels with stage coefficients `a`, `b`, step `dt` and the source
    /// term `(tet, J/ε)`: `res = a res + dt (L q − J/ε)`, `q_out = q + b res`.
    fn launch_stage(
        &mut self,
        a: f64,
        b: f64,
        dt: f64,
        src: (u32, [f64; 3]),
    ) -> Result<(Event, Event)> {
        let (q, q_out) = (&self.q[self.cur], &self.q[1 - self.cur]);
        let ev_flux = self.flux.launch(&self.dev, q)?;
        let stage = Stage {
            a,
            b,
            dt,
            src,
            q,
            flux: &self.flux.flux,
            res: &self.res,
            q_out,
        };
        let ev = self.update.launch(&self.dev, self.op.k, stage)?;
        self.cur ^= 1;
        Ok((ev_flux, ev))
    }

    /// The update kernel launched.
    pub fn update(&self) -> DgUpdate {
        self.update.form()
    }

    /// Chooses the update kernel; a blocked one is refused where it does not fit the device
    /// ([`Self::tets_per_group`] is 0).
    pub fn set_update(&mut self, u: DgUpdate) -> Result<()> {
        let (n, dev) = (self.op.re.n, &self.dev.info.name);
        (self.update).set_form(u, || {
            format!("one tet of order {n} does not fit a work-group of {dev}")
        })
    }

    /// Tets per work-group of an update kernel (0 where it does not fit, and for
    /// [`DgUpdate::Node`], which does not group tets).
    pub fn tets_per_group(&self, u: DgUpdate) -> usize {
        self.update.tets_per_group(u)
    }

    /// Sets the time step (after [`Self::spectral_radius`]).
    pub fn set_time_step(&mut self, dt: f64) {
        self.dt = dt;
    }

    /// `L x` on the device: a stage with `a = 0`, `b = 0`, `Δt = 1` leaves `L x` in the
    /// residual buffer and the field unchanged.
    fn apply(&mut self, x: &[f64]) -> Result<Vec<f64>> {
        let xt: Vec<T> = x.iter().map(|&v| T::of(v)).collect();
        let cur = self.cur;
        self.dev.write(&mut self.q[cur], &xt, "DG field")?;
        self.launch_stage(0.0, 0.0, 1.0, (u32::MAX, [0.0; 3]))?;
        let y = self.dev.read(&self.res, x.len(), "DG residual")?;
        Ok(y.iter().map(|v| v.f64()).collect())
    }

    /// Spectral radius of the DG operator on the device: the power iteration on `L²` of
    /// [`crate::dg::spectral_radius`] (same seed and iterations), each product of `L` by the
    /// device kernels, the normalisation on the host. Leaves the field and residual zero.
    pub fn spectral_radius(&mut self, iters: usize, seed: u64) -> Result<f64> {
        let n = self.op.n_dofs();
        let mut rng = crate::util::Rng::new(seed);
        let mut x: Vec<f64> = (0..n).map(|_| rng.sym()).collect();
        let mut est = 0.0;
        for _ in 0..iters {
            let nx = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            x.iter_mut().for_each(|v| *v /= nx);
            let y = self.apply(&x)?;
            x = self.apply(&y)?;
            est = x.iter().map(|v| v * v).sum::<f64>().sqrt().sqrt();
        }
        self.set_state(&vec![0.0; n], &[])?;
        Ok(est)
    }

    /// One whole step from time `t`.
    pub fn step(&mut self, t: f64) -> Result<()> {
        for s in 0..5 {
            self.stage(s, t)?;
        }
        Ok(())
    }

    pub fn device(&self) -> &Arc<ClDevice> {
        &self.dev
    }
}

impl<T: Real> DeviceSampling<T> for DgClStepper<T> {
    fn device(&self) -> &ClDevice {
        &self.dev
    }
    fn n_probes(&self) -> usize {
        self.probes.n
    }
    fn sample_buffer(&self) -> &Buffer<T> {
        &self.probes.samples
    }
    fn step_and_sample(&mut self, k: usize, j: usize) -> Result<()> {
        self.step(k as f64 * self.dt)?;
        self.probes.sample(&self.dev, &self.q[self.cur], j)
    }
}

impl<T: Real> Stepper for DgClStepper<T> {
    fn name(&self) -> String {
        format!(
            "opencl {} ({}, DG N={})",
            self.dev.info.name,
            T::NAME,
            self.op.re.n
        )
    }
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        advance_sampled(self, first, n, samples)
    }
    fn energy(&mut self) -> Result<f64> {
        let (q, _) = self.state()?;
        Ok(crate::dg::energy(&self.op, &q))
    }
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let q = self
            .dev
            .read(&self.q[self.cur], self.op.n_dofs(), "DG field")?;
        Ok((q.iter().map(|x| x.f64()).collect(), vec![]))
    }
    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        if u.len() != self.op.n_dofs() || !f.is_empty() {
            return Err(Error::config(
                "state",
                format!("{}+{}", u.len(), f.len()),
                "length does not match the DG discretisation",
            ));
        }
        let qt: Vec<T> = u.iter().map(|&x| T::of(x)).collect();
        let cur = self.cur;
        self.dev.write(&mut self.q[cur], &qt, "DG field")?;
        let n = self.op.n_dofs();
        self.dev.fill_zero(&mut self.res, n)?;
        Ok(())
    }
}
