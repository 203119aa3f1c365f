//! The source waveform: a zero-mean derivative of a Gaussian (design note §8: a source that
//! is not charge-free leaves a static field behind).
//!
//! `w(t) = -(t - t0)/τ · exp(½ - (t - t0)²/(2τ²))`, peak amplitude 1, spectrum peaking at
//! `f_peak = 1/(2π τ)`, `t0 = 6τ`. Times in metres of light travel.

use crate::util::C0;

/// Zero-mean derivative-of-Gaussian waveform (times in metres of light travel).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Waveform {
    pub tau: f64,
    pub t0: f64,
}

impl Waveform {
    /// Spectrum peaking at `f_peak_hz`.
    pub fn gaussian_derivative(f_peak_hz: f64) -> Self {
        let tau = C0 / (2.0 * std::f64::consts::PI * f_peak_hz);
        Waveform { tau, t0: 6.0 * tau }
    }
    pub fn at(&self, t: f64) -> f64 {
        let x = (t - self.t0) / self.tau;
        -x * (0.5 - 0.5 * x * x).exp()
    }
    /// Time after which the waveform is below 1e-7 of its peak.
    pub fn end(&self) -> f64 {
        self.t0 + 6.5 * self.tau
    }
    /// Peak frequency of the spectrum in Hz.
    pub fn f_peak_hz(&self) -> f64 {
        C0 / (2.0 * std::f64::consts::PI * self.tau)
    }
}
