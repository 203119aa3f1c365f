//! Time-stepping backends. [`cpu`] is the public reference every device path is tested
//! against.

pub mod cpu;
pub mod opencl;

use crate::Result;

/// A leapfrog time stepper holding the state `U^n`, `F^(n-1/2)` on some device.
pub trait Stepper {
    /// Human-readable backend and device name.
    fn name(&self) -> String;
    /// Advances `n` steps, the first of which is step number `first` (its source amplitude is
    /// the stepper's waveform at `(first + 1/2) Δt`). After every step, appends
    /// `ex, ey, ez` of each probe to `samples`.
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()>;
    /// The exactly conserved discrete energy `W^n` of design note §9.
    fn energy(&mut self) -> Result<f64>;
    /// The state `(U^n, F^(n-1/2))` converted to f64.
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)>;
    /// Replaces the state.
    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()>;
}
