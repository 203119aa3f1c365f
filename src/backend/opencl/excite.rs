//! The source term and the probes on the device (`source`, `probe` of `cl/dga/excite.cl`):
//! `U[h] -= w((k + 1/2) Δt) g_h` on the source's half-edges, with `w` the Gaussian
//! derivative of [`Waveform`] evaluated in the kernel, and `E = Σ w U` of each probe written
//! into a buffer of [`super::SAMPLE_CHUNK`] steps.
//!
//! [`SourceTerm`] and [`ProbeSet`] own their buffers and kernels; the stepper hands them `U`
//! and, while `U` is slot-major, the index lists mapped to slots.

use super::kernels::Kernels;
use crate::dga::excitation::{Probe, Source};
use crate::error::Result;
use crate::ocl::{Arg, ClDevice, LOCAL, Lane, kernels, launch_on};
use crate::problem::Waveform;
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

/// The source pattern on the device: half-edges `idx`, values `g` (Δt folded in), and the
/// waveform (None until the time step sets it: no source).
pub(super) struct SourceTerm<T> {
    pub(super) idx: Buffer<u32>,
    pub(super) g: Buffer<T>,
    pub(super) n: usize,
    pub(super) wave: Option<Waveform>,
    kernel: Kernel,
}

impl<T: Real> SourceTerm<T> {
    /// The unit-Δt pattern of `source` (empty without one).
    pub(super) fn new(k: &Kernels, dev: &ClDevice, source: Option<&Source>) -> Result<Self> {
        let [kernel] = kernels(k.program(), ["source"])?;
        let pattern = source
            .map(|s| s.pattern.iter().map(|&(h, g)| (h, T::of(g))).collect())
            .unwrap_or_default();
        let (idx, g, n) = upload_pattern(dev, pattern)?;
        Ok(SourceTerm {
            idx,
            g,
            n,
            wave: None,
            kernel,
        })
    }

    /// Replaces the pattern (`(half-edge, value)` pairs, Δt folded in).
    pub(super) fn set_pattern(&mut self, dev: &ClDevice, p: Vec<(u32, T)>) -> Result<()> {
        (self.idx, self.g, self.n) = upload_pattern(dev, p)?;
        Ok(())
    }

    /// `u[idx] -= w(t) g` for the `n` entries `idx`, `g` (this term's own, or a caller's),
    /// on `lane` after `wait`; nothing without a waveform or entries.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add(
        &self,
        dev: &ClDevice,
        (idx, g, n): (&Buffer<u32>, &Buffer<T>, usize),
        u: &Buffer<T>,
        t: f64,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Option<Event>> {
        let Some(w) = self.wave.filter(|_| n > 0) else {
            return Ok(None);
        };
        launch_on(
            dev,
            lane,
            &self.kernel,
            n,
            LOCAL.min(64),
            &[
                Arg::U32(n as u32),
                Arg::BufU32(idx),
                Arg::Buf(g),
                Arg::Buf(u),
                Arg::Real(T::of(t)),
                Arg::Real(T::of(w.t0)),
                Arg::Real(T::of(w.tau)),
            ],
            wait,
        )
        .map(Some)
    }
}

/// A source pattern's half-edges and values on the device, and their count.
fn upload_pattern<T: Real>(
    dev: &ClDevice,
    p: Vec<(u32, T)>,
) -> Result<(Buffer<u32>, Buffer<T>, usize)> {
    let (idx, g): (Vec<u32>, Vec<T>) = p.into_iter().unzip();
    let n = idx.len();
    Ok((
        dev.upload(&idx, "source indices")?,
        dev.upload(&g, "source pattern")?,
        n,
    ))
}

/// The probes on the device: three half-edge slots and weights per probe, and the sample
/// buffer of [`super::SAMPLE_CHUNK`] steps.
pub(super) struct ProbeSet<T> {
    pub(super) slots: Buffer<u32>,
    w: Buffer<T>,
    pub(super) samples: Buffer<T>,
    pub(super) n: usize,
    kernel: Kernel,
}

impl<T: Real> ProbeSet<T> {
    pub(super) fn new(k: &Kernels, dev: &ClDevice, probes: &[Probe]) -> Result<Self> {
        let [kernel] = kernels(k.program(), ["probe"])?;
        let slots: Vec<u32> = probes.iter().flat_map(|p| p.slots).collect();
        let w: Vec<T> = probes
            .iter()
            .flat_map(|p| p.w.iter().flat_map(|r| r.iter().map(|&x| T::of(x))))
            .collect();
        let n = probes.len();
        Ok(ProbeSet {
            slots: dev.upload(&slots, "probe slots")?,
            w: dev.upload(&w, "probe weights")?,
            samples: dev.alloc(super::SAMPLE_CHUNK * n * 3, "probe samples")?,
            n,
            kernel,
        })
    }

    /// The probe kernel writing slot `j` of the sample buffer from `u` read at `slots` (this
    /// set's, or those mapped to slot-major `U`), after `wait`; nothing without probes.
    pub(super) fn sample(
        &self,
        dev: &ClDevice,
        j: usize,
        slots: &Buffer<u32>,
        u: &Buffer<T>,
        wait: &[&Event],
    ) -> Result<Option<Event>> {
        if self.n == 0 {
            return Ok(None);
        }
        launch_on(
            dev,
            Lane::Main,
            &self.kernel,
            self.n,
            LOCAL.min(64),
            &[
                Arg::U32(self.n as u32),
                Arg::U32(j as u32),
                Arg::BufU32(slots),
                Arg::Buf(&self.w),
                Arg::Buf(u),
                Arg::Buf(&self.samples),
            ],
            wait,
        )
        .map(Some)
    }
}
