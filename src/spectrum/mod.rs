//! Spectral analysis of probe signals and analytic cavity resonances (design note §10).
//!
//! - [`spectrum`]: mean removal, Hamming window, zero-padded FFT (rustfft); the
//!   magnitudes of several signals are combined as `sqrt(Σ |X_i|²)`.
//! - [`find_peaks`]: local maxima kept by prominence (height above the higher of the two
//!   saddles to higher ground), located by parabolic interpolation of the log-magnitude.
//! - [`leapfrog_correction`]: the leapfrog shifts a resonance `f` to
//!   `f_td = arcsin(π f Δt)/(π Δt)`; the inverse `f = sin(π f_td Δt)/(π Δt)` leaves only
//!   the spatial error.
//! - [`analytic`]: PEC cylinder, box (also PMC and mixed wall pairs) and sphere resonances,
//!   every TE/TM mode with its degeneracy, with Bessel zeros computed here.
//! - [`extract`]: resonances of all probe signals jointly (the pipeline's extraction);
//!   [`assign`]: measured lines to catalogue modes, one-to-one, with a confidence.
//! - [`track`]: lines followed across refinement levels by frequency, decay and shape.

pub(crate) mod analytic;
pub(crate) mod assign;
pub(crate) mod extract;
pub(crate) mod harminv;
pub(crate) mod mie;
pub(crate) mod richardson;
pub(crate) mod track;

pub use analytic::{Cavity, bessel_j, bessel_zero, cylinder_wall_q};
pub use analytic::{Mode, Walls as CavityWalls};
pub use assign::Label;
pub use extract::Rejection;
pub use extract::{
    CANCELLING, Extraction, Settings as ExtractSettings, Unresolved, extract, resonances,
};
pub use harminv::{HMode, Params as HarminvParams, cluster as cluster_harminv, harminv};
pub use mie::{MieMode, MiePol, nearest_line, resonance as mie_resonance};
pub use richardson::Extrapolated;

use crate::util::C64;
use rustfft::FftPlanner;

/// A magnitude spectrum on a uniform frequency grid.
#[derive(Clone, Debug)]
pub struct Spectrum {
    pub df_hz: f64,
    pub mag: Vec<f64>,
}

impl Spectrum {
    pub fn freq(&self, k: usize) -> f64 {
        k as f64 * self.df_hz
    }
}

/// Hamming window value at sample `i` of `n`.
pub fn hamming(i: usize, n: usize) -> f64 {
    if n < 2 {
        return 1.0;
    }
    0.54 - 0.46 * (2.0 * std::f64::consts::PI * i as f64 / (n - 1) as f64).cos()
}

/// Combined magnitude spectrum of equally long signals sampled every `dt_s` seconds,
/// zero-padded to the next power of two of `pad * n` samples.
pub fn spectrum(signals: &[Vec<f64>], dt_s: f64, pad: usize) -> Spectrum {
    let n = signals.first().map(|s| s.len()).unwrap_or(0);
    let nfft = (pad.max(1) * n.max(1)).next_power_of_two();
    let fft = FftPlanner::<f64>::new().plan_fft_forward(nfft);
    let mut power = vec![0.0; nfft / 2 + 1];
    for s in signals {
        let mean = s.iter().sum::<f64>() / n.max(1) as f64;
        let mut buf: Vec<C64> = (0..nfft)
            .map(|i| {
                C64::new(
                    if i < n {
                        (s[i] - mean) * hamming(i, n)
                    } else {
                        0.0
                    },
                    0.0,
                )
            })
            .collect();
        fft.process(&mut buf);
        for (k, p) in power.iter_mut().enumerate() {
            *p += buf[k].norm_sqr();
        }
    }
    Spectrum {
        df_hz: 1.0 / (nfft as f64 * dt_s),
        mag: power.into_iter().map(f64::sqrt).collect(),
    }
}

/// A resonance found in the probe signals, by FFT peak picking or harmonic inversion.
#[derive(Clone, Debug, PartialEq)]
pub struct Peak {
    /// Frequency, Hz (as in the record).
    pub f_hz: f64,
    /// FFT: interpolated magnitude; harmonic inversion: amplitude of the cosine.
    pub amplitude: f64,
    /// FFT only: prominence relative to the largest magnitude in the band.
    pub prominence: Option<f64>,
    /// Harmonic inversion only: decay rate (1/s), quality factor, phase (rad), error.
    pub decay_per_s: Option<f64>,
    pub q: Option<f64>,
    pub phase: Option<f64>,
    pub error: Option<f64>,
    /// Number of probe signals (components) in which the mode was found (0: the FFT's
    /// combined spectrum).
    pub n_signals: usize,
    /// [`extract`] only: poles of a multiplet the record did not separate that this line
    /// stands for (1: a single line; module docs of `multiplet`); 0 where not known (FFT,
    /// the external harminv).
    pub members: usize,
    /// [`extract`] only: cosine amplitude and phase (rad, at the signals' first sample) of
    /// the line in each input signal, in input order (empty otherwise).
    pub amplitudes: Vec<f64>,
    pub phases: Vec<f64>,
}

/// Peaks in `[fmin, fmax]` whose prominence is at least `min_prominence` times the largest
/// magnitude in that band, by ascending frequency.
pub fn find_peaks(s: &Spectrum, fmin: f64, fmax: f64, min_prominence: f64) -> Vec<Peak> {
    let n = s.mag.len();
    if n < 3 {
        return vec![];
    }
    let k0 = ((fmin / s.df_hz).floor() as usize).clamp(1, n - 2);
    let k1 = ((fmax / s.df_hz).ceil() as usize).clamp(1, n - 2);
    let m = &s.mag;
    let top = m[k0..=k1].iter().cloned().fold(0.0, f64::max);
    if top <= 0.0 {
        return vec![];
    }
    let thr = min_prominence * top;
    let mut out = Vec::new();
    for k in k0..=k1 {
        if !(m[k] > m[k - 1] && m[k] >= m[k + 1]) || m[k] < thr {
            continue;
        }
        // Left saddle: lowest point before a higher sample (or the array start).
        let mut lo_l = m[k];
        let mut i = k;
        while i > 0 {
            i -= 1;
            if m[i] > m[k] {
                break;
            }
            lo_l = lo_l.min(m[i]);
        }
        let mut lo_r = m[k];
        let mut j = k;
        while j + 1 < n {
            j += 1;
            if m[j] > m[k] {
                break;
            }
            lo_r = lo_r.min(m[j]);
        }
        let prom = m[k] - lo_l.max(lo_r);
        if prom < thr {
            continue;
        }
        let (a, b, c) = (
            m[k - 1].max(1e-300).ln(),
            m[k].max(1e-300).ln(),
            m[k + 1].max(1e-300).ln(),
        );
        let den = a - 2.0 * b + c;
        let delta = if den < 0.0 {
            (0.5 * (a - c) / den).clamp(-0.5, 0.5)
        } else {
            0.0
        };
        out.push(Peak {
            f_hz: (k as f64 + delta) * s.df_hz,
            amplitude: (b - 0.25 * (a - c) * delta).exp(),
            prominence: Some(prom / top),
            decay_per_s: None,
            q: None,
            phase: None,
            error: None,
            n_signals: 0,
            members: 0,
            amplitudes: vec![],
            phases: vec![],
        });
    }
    out
}

/// Removes the leapfrog's frequency shift: `f = sin(π f_td Δt)/(π Δt)`.
pub fn leapfrog_correction(f_td_hz: f64, dt_s: f64) -> f64 {
    let x = std::f64::consts::PI * dt_s;
    (x * f_td_hz).sin() / x
}

/// The leapfrog's shift of a semi-discrete resonance: `f_td = arcsin(π f Δt)/(π Δt)`.
pub fn leapfrog_shift(f_hz: f64, dt_s: f64) -> f64 {
    let x = std::f64::consts::PI * dt_s;
    (x * f_hz).asin() / x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correction_inverts_the_shift() {
        let dt = 1.9e-10;
        for f in [1e8, 2.5e8, 1.2e9] {
            let td = leapfrog_shift(f, dt);
            assert!(td > f);
            assert!((leapfrog_correction(td, dt) - f).abs() < 1e-12 * f);
        }
    }

    #[test]
    fn finds_two_close_sinusoids_and_ignores_side_lobes() {
        let dt = 2e-10;
        let n = 8000; // T = 1.6 us, bin 0.625 MHz
        let (f1, f2) = (245.04e6, 263.38e6);
        let sig: Vec<f64> = (0..n)
            .map(|i| {
                let t = i as f64 * dt;
                (2.0 * std::f64::consts::PI * f1 * t).sin()
                    + 0.5 * (2.0 * std::f64::consts::PI * f2 * t + 0.3).cos()
                    + 0.2
            })
            .collect();
        let s = spectrum(&[sig], dt, 8);
        let p = find_peaks(&s, 50e6, 600e6, 0.02);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!((p[0].f_hz - f1).abs() < 0.02e6, "{}", p[0].f_hz);
        assert!((p[1].f_hz - f2).abs() < 0.02e6, "{}", p[1].f_hz);
        assert!((p[1].amplitude / p[0].amplitude - 0.5).abs() < 0.02);
    }
}
