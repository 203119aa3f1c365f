//! The DG probes on the device: E at each probe point, interpolated in its tet with the
//! nodal weights of [`crate::dg::DgProbe`], written into a chunk of samples
//! (`cl/dg/node.cl`, `dg_probe`).

use crate::backend::opencl::SAMPLE_CHUNK;
use crate::dg::DgProbe;
use crate::error::Result;
use crate::ocl::{Arg, ClDevice, kernels, launch};
use crate::real::Real;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;

pub(super) struct Probes<T> {
    pub(super) n: usize,
    tet: Buffer<u32>,
    w: Buffer<T>,
    /// [`SAMPLE_CHUNK`] steps of `3 n` values.
    pub(super) samples: Buffer<T>,
    kernel: Kernel,
}

impl<T: Real> Probes<T> {
    pub(super) fn new(dev: &ClDevice, program: &Program, probes: &[DgProbe]) -> Result<Self> {
        let tet: Vec<u32> = probes.iter().map(|p| p.tet as u32).collect();
        let w: Vec<T> = probes
            .iter()
            .flat_map(|p| p.w.iter().map(|&x| T::of(x)))
            .collect();
        let [kernel] = kernels(program, ["dg_probe"])?;
        Ok(Probes {
            n: probes.len(),
            tet: dev.upload(&tet, "probe tets")?,
            w: dev.upload(&w, "probe weights")?,
            samples: dev.alloc::<T>(SAMPLE_CHUNK * probes.len().max(1) * 3, "probe samples")?,
            kernel,
        })
    }

    /// Samples the field `q` into slot `j` of the chunk (nothing without probes).
    pub(super) fn sample(&self, dev: &ClDevice, q: &Buffer<T>, j: usize) -> Result<()> {
        if self.n > 0 {
            launch(
                dev,
                &self.kernel,
                3 * self.n,
                64,
                &[
                    Arg::U32(self.n as u32),
                    Arg::U32(j as u32),
                    Arg::BufU32(&self.tet),
                    Arg::Buf(&self.w),
                    Arg::Buf(q),
                    Arg::Buf(&self.samples),
                ],
            )?;
        }
        Ok(())
    }
}
