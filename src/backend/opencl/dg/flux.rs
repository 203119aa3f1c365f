//! The DG face fluxes of one stage (upwind, `α` the upwinding: 1 upwind, 0 central): per
//! face node the jumps of E and H against the neighbour's trace (`vmap_p`), weighted by the
//! face's normal, scale `|f| / |K|` and the impedances `Z = sqrt(μ/ε)` of both sides
//! (`cl/dg/node.cl`, `dg_flux`).
//!
//! [`Flux`] owns the connectivity, the face data, the flux buffer and its kernel.

use crate::dg::DgOperator;
use crate::error::Result;
use crate::ocl::{Arg, ClDevice, LOCAL, kernels, launch};
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;

pub(super) struct Flux<T> {
    /// `k * 4 * nfp` face nodes.
    n: usize,
    k: usize,
    alpha: f64,
    vmap_p: Buffer<u32>,
    fmask: Buffer<u32>,
    normal: Buffer<T>,
    fscale: Buffer<T>,
    z: Buffer<T>,
    /// The fluxes, 6 per face node.
    pub(super) flux: Buffer<T>,
    kernel: Kernel,
}

impl<T: Real> Flux<T> {
    pub(super) fn new(dev: &ClDevice, program: &Program, op: &DgOperator) -> Result<Self> {
        let (k, nfp) = (op.k, op.re.nfp);
        let fmask: Vec<u32> = op.re.fmask.iter().flatten().map(|&i| i as u32).collect();
        let normal: Vec<T> = op.normal.iter().flatten().map(|&x| T::of(x)).collect();
        let fscale: Vec<T> = op.fscale.iter().map(|&x| T::of(x)).collect();
        let z: Vec<T> = (0..k)
            .map(|t| T::of((op.mu[t] / op.eps[t]).sqrt()))
            .collect();
        let [kernel] = kernels(program, ["dg_flux"])?;
        Ok(Flux {
            n: k * 4 * nfp,
            k,
            alpha: op.alpha,
            vmap_p: dev.upload(&op.vmap_p, "DG connectivity")?,
            fmask: dev.upload(&fmask, "DG face masks")?,
            normal: dev.upload(&normal, "DG normals")?,
            fscale: dev.upload(&fscale, "DG face scales")?,
            z: dev.upload(&z, "DG impedances")?,
            flux: dev.alloc(6 * k * 4 * nfp, "DG fluxes")?,
            kernel,
        })
    }

    /// The fluxes of the field `q`.
    pub(super) fn launch(&self, dev: &ClDevice, q: &Buffer<T>) -> Result<Event> {
        launch(
            dev,
            &self.kernel,
            self.n,
            LOCAL,
            &[
                Arg::U32(self.k as u32),
                Arg::Buf(q),
                Arg::BufU32(&self.vmap_p),
                Arg::BufU32(&self.fmask),
                Arg::Buf(&self.normal),
                Arg::Buf(&self.fscale),
                Arg::Buf(&self.z),
                Arg::Real(T::of(self.alpha)),
                Arg::Buf(&self.flux),
            ],
        )
    }
}
