//! The source and the probes on the device, and the sampled time loop.

use super::*;

/// Probe samples are buffered on the device for this many steps between reads.
pub const SAMPLE_CHUNK: usize = 1024;

impl<T: Real> ClStepper<T> {
    /// `U[idx] -= w((k + 1/2) Δt) g` for a source pattern held by the caller (`g` with Δt
    /// folded in; `idx` half-edges, or slots while `U` is slot-major: [`Self::slot_of_half`]);
    /// nothing without a waveform or an empty pattern.
    #[allow(clippy::too_many_arguments)]
    pub fn source_on(
        &self,
        idx: &Buffer<u32>,
        g: &Buffer<T>,
        n: usize,
        k: usize,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Option<Event>> {
        let u = self.slots.as_ref().map_or(&self.u, |st| &st.sm.us);
        self.source_into(idx, g, n, u, k, lane, wait)
    }

    /// The source kernel adding `g w(t)` at `idx` into `u` (half-edges or slots), at
    /// `t = (k + 1/2) Δt`; nothing without a waveform or entries.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn source_into(
        &self,
        idx: &Buffer<u32>,
        g: &Buffer<T>,
        n: usize,
        u: &Buffer<T>,
        k: usize,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Option<Event>> {
        let t = (k as f64 + 0.5) * self.dt;
        self.src.add(&self.dev, (idx, g, n), u, t, lane, wait)
    }

    /// The probe kernel writing slot `j` of the sample buffer (main queue), after `wait`;
    /// nothing without probes.
    pub fn sample_probes(&self, j: usize, wait: &[&Event]) -> Result<Option<Event>> {
        let (slots, u) = match &self.slots {
            Some(st) => (&st.probe_slots, &st.sm.us),
            None => (&self.probes.slots, &self.u),
        };
        self.probes.sample(&self.dev, j, slots, u, wait)
    }
}

/// A device stepper that buffers probe samples on the device (for [`advance_sampled`]).
pub trait DeviceSampling<T: Real> {
    fn device(&self) -> &ClDevice;
    fn n_probes(&self) -> usize;
    /// The device buffer of `SAMPLE_CHUNK · n_probes · 3` samples.
    fn sample_buffer(&self) -> &Buffer<T>;
    /// Step number `k`, then the probe kernel writing slot `j` of the sample buffer.
    fn step_and_sample(&mut self, k: usize, j: usize) -> Result<()>;
}

/// [`Stepper::advance`] for device steppers: steps in chunks of [`SAMPLE_CHUNK`], reading
/// the buffered probe samples after each chunk (or waiting for the queue without probes).
pub fn advance_sampled<T: Real, S: DeviceSampling<T>>(
    s: &mut S,
    first: usize,
    n: usize,
    samples: &mut Vec<f64>,
) -> Result<()> {
    let mut k = first;
    let end = first + n;
    while k < end {
        let m = SAMPLE_CHUNK.min(end - k);
        for j in 0..m {
            s.step_and_sample(k + j, j)?;
        }
        if s.n_probes() > 0 {
            let v = s
                .device()
                .read(s.sample_buffer(), m * s.n_probes() * 3, "probe samples")?;
            samples.extend(v.iter().map(|x| x.f64()));
        } else {
            s.device().finish()?;
        }
        k += m;
    }
    Ok(())
}

impl<T: Real> DeviceSampling<T> for ClStepper<T> {
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
        self.step(k)?;
        self.sample_probes(j, &[])?;
        Ok(())
    }
}
