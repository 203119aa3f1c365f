//! Harmonic inversion of a probe signal by the matrix-pencil method (Hua & Sarkar, 1990):
//! fit `y(t) = Σ_i A_i exp(-α_i t) cos(2π f_i t + φ_i)` in a frequency band.
//!
//! Why a matrix pencil rather than filter diagonalization (harminv): both resolve modes far
//! closer than the FFT bin width 1/T. Like harminv, the band is processed in narrow windows
//! so that each holds only a few modes; within a window the pencil needs only an SVD and a
//! small eigenproblem (nalgebra) and reaches the Cramér–Rao bound on short records.
//!
//! Per window of width `W` centred at `f_c`:
//! 1. remove the mean, shift by `exp(-2πi f_c t)`, low-pass with a Blackman-windowed sinc
//!    (cutoff `W`, stopband below -74 dB from `1.5 W`) and decimate to a rate of about `3 W`.
//!    An LTI filter maps each exponential to itself times its complex gain, so frequencies
//!    and decays are unchanged; amplitudes and phases are corrected by the gain.
//! 2. Hankel matrix with pencil parameter `L`; SVD; model order `M` = singular values above
//!    both `rel_sv` of the largest and 30x the noise floor (the singular value at three
//!    quarters of the sorted list).
//! 3. poles `z_i` = eigenvalues of `W1⁺ W2` (shift invariance of the signal subspace);
//!    amplitudes by complex least squares.
//! 4. the fit is repeated with a second pencil parameter (N/3, then N/4); a mode's error
//!    estimate is the relative frequency difference to its nearest counterpart. Modes outside the window's
//!    central part `[f_c - W/2, f_c + W/2)`, with error above `max_error` or amplitude below
//!    `min_amplitude` of the strongest, are dropped.

use nalgebra::{DMatrix, DVector};
use rustfft::num_complex::Complex;
use std::f64::consts::PI;

type C64 = Complex<f64>;

/// One fitted mode.
#[derive(Clone, Debug, PartialEq)]
pub struct HMode {
    /// Frequency, Hz (as in the record: for a leapfrog run, the time-discrete frequency).
    pub f_hz: f64,
    /// Amplitude decay rate α (1/s): the mode goes like `exp(-α t)`.
    pub decay_per_s: f64,
    /// Quality factor `π f / α` (infinite for an undamped or growing mode).
    pub q: f64,
    /// Amplitude A of `A cos(2π f t + φ)` at t = 0.
    pub amplitude: f64,
    /// Phase φ at t = 0, radians.
    pub phase: f64,
    /// Error estimate (relative frequency).
    pub error: f64,
}

/// Settings of the fit.
#[derive(Clone, Debug)]
pub struct Params {
    pub fmin_hz: f64,
    pub fmax_hz: f64,
    /// Window width in Hz (None: a quarter of the band, at least 55/T).
    pub window_hz: Option<f64>,
    /// Singular values below this fraction of the largest are treated as noise.
    pub rel_sv: f64,
    /// Largest model order per window.
    pub max_order: usize,
    /// Modes with a larger error estimate are dropped.
    pub max_error: f64,
    /// Modes weaker than this fraction of the strongest are dropped.
    pub min_amplitude: f64,
}

impl Params {
    pub fn band(fmin_hz: f64, fmax_hz: f64) -> Self {
        Params {
            fmin_hz,
            fmax_hz,
            window_hz: None,
            rel_sv: 1e-10,
            max_order: 40,
            max_error: 1e-4,
            min_amplitude: 1e-4,
        }
    }
}

/// Blackman-windowed sinc low-pass, unit DC gain; `cutoff` in cycles per sample.
fn lowpass(n_taps: usize, cutoff: f64) -> Vec<f64> {
    let m = (n_taps - 1) as f64 / 2.0;
    let mut h: Vec<f64> = (0..n_taps)
        .map(|i| {
            let x = i as f64 - m;
            let s = if x == 0.0 {
                2.0 * cutoff
            } else {
                (2.0 * PI * cutoff * x).sin() / (PI * x)
            };
            let w = 2.0 * PI * i as f64 / (n_taps - 1).max(1) as f64;
            s * (0.42 - 0.5 * w.cos() + 0.08 * (2.0 * w).cos())
        })
        .collect();
    let sum: f64 = h.iter().sum();
    h.iter_mut().for_each(|v| *v /= sum);
    h
}

/// Gain of the centred FIR for the exponential `exp(s k)` (s per sample).
fn fir_gain(h: &[f64], s: C64) -> C64 {
    let m = (h.len() - 1) as f64 / 2.0;
    // y[n] = Σ_k h[k] x[n + k - m]  ->  gain Σ_k h[k] exp(s (k - m))
    h.iter()
        .enumerate()
        .map(|(k, &c)| c * (s * (k as f64 - m)).exp())
        .sum()
}

/// Poles and amplitudes of the pencil with parameter `l` on complex samples.
fn pencil(y: &[C64], l: usize, p: &Params) -> Option<(Vec<C64>, Vec<C64>)> {
    let n = y.len();
    if n < 6 || l < 2 || l + 2 > n {
        return None;
    }
    let hank = DMatrix::from_fn(n - l, l + 1, |i, j| y[i + j]);
    let svd = hank.svd(false, true);
    let vt = svd.v_t?;
    let s = &svd.singular_values;
    let smax = s.max();
    if !(smax > 0.0) {
        return None;
    }
    let mut sorted: Vec<f64> = s.iter().cloned().collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let floor = sorted[sorted.len() * 3 / 4];
    let thr = (p.rel_sv * smax).max(30.0 * floor);
    let m = s
        .iter()
        .filter(|&&v| v > thr)
        .count()
        .clamp(1, p.max_order.min(l));
    // Rows of the Hankel matrix lie in the span of the first m rows of Vᴴ; as columns
    // (plain transpose) they hold the vectors [1, z, z², ...] of the poles.
    let w = vt.rows(0, m).transpose();
    let w1 = w.rows(0, l).into_owned();
    let w2 = w.rows(1, l).into_owned();
    let phi = w1.pseudo_inverse(1e-13).ok()? * w2;
    let z: Vec<C64> = nalgebra::linalg::Schur::new(phi)
        .eigenvalues()?
        .iter()
        .cloned()
        .collect();
    let vm = DMatrix::from_fn(n, z.len(), |k, i| z[i].powu(k as u32));
    let b = DVector::from_column_slice(y);
    let amps = vm.svd(true, true).solve(&b, 1e-13).ok()?;
    Some((z, amps.iter().cloned().collect()))
}

/// Fits the modes of `signal` (sampled every `dt` seconds) in the band of `p`.
pub fn harminv(signal: &[f64], dt: f64, p: &Params) -> Vec<HMode> {
    let n = signal.len();
    if n < 16 || !(p.fmax_hz > p.fmin_hz) {
        return vec![];
    }
    let t_rec = n as f64 * dt;
    let band = p.fmax_hz - p.fmin_hz;
    // Window: a quarter of the band, but wide enough that the anti-aliasing filter (about
    // 11 / (W dt) taps) takes at most a fifth of the record.
    let w = p
        .window_hz
        .unwrap_or((band / 4.0).max(55.0 / t_rec))
        .min(band.max(55.0 / t_rec));
    let mean = signal.iter().sum::<f64>() / n as f64;
    // Filter: cutoff W, transition W/2 (Blackman: width ~ 5.5 / taps cycles per sample).
    let mut taps = ((11.0 / (w * dt)).ceil() as usize) | 1;
    taps = taps.min((n / 3) | 1).max(1);
    let h = lowpass(taps, (w * dt).min(0.45));
    let half = (taps - 1) / 2;
    let decim = ((1.0 / (3.0 * w * dt)).floor() as usize).max(1);
    let nwin = (band / w).ceil().max(1.0) as usize;
    let mut raw: Vec<HMode> = Vec::new();
    for iw in 0..nwin {
        let lo = p.fmin_hz + iw as f64 * w;
        let hi = (lo + w).min(p.fmax_hz);
        let fc = 0.5 * (lo + hi);
        let rot = |k: usize| C64::from_polar(1.0, -2.0 * PI * fc * k as f64 * dt);
        let mut y: Vec<C64> = Vec::new();
        let mut k = half;
        while k + half < n {
            let mut acc = C64::new(0.0, 0.0);
            for (j, &c) in h.iter().enumerate() {
                let i = k + j - half;
                acc += rot(i) * (c * (signal[i] - mean));
            }
            y.push(acc);
            k += decim;
        }
        let t0 = half as f64 * dt;
        let dtd = decim as f64 * dt;
        let fit = |l: usize| -> Vec<(f64, f64, C64)> {
            let Some((z, a)) = pencil(&y, l, p) else {
                return vec![];
            };
            z.iter()
                .zip(&a)
                .filter_map(|(&zi, &ai)| {
                    if zi.norm() == 0.0 {
                        return None;
                    }
                    let sd = zi.ln() / dtd; // demodulated pole, 1/s
                    let f = fc + sd.im / (2.0 * PI);
                    let decay = -sd.re;
                    // amplitude of exp(s t) in the original record at t = 0
                    let g = fir_gain(&h, sd * dt);
                    let a0 = ai / g * (-sd * t0).exp();
                    Some((f, decay, a0))
                })
                .collect()
        };
        let nd = y.len();
        let m1 = fit((nd / 3).max(2));
        let m2 = fit((nd / 4).max(3));
        for &(f, decay, a) in &m1 {
            if !(f >= lo && f < hi || (iw + 1 == nwin && f >= lo && f <= hi)) {
                continue;
            }
            let twin = m2
                .iter()
                .map(|m| (m.0 - f).abs())
                .fold(f64::INFINITY, f64::min);
            raw.push(HMode {
                f_hz: f,
                decay_per_s: decay,
                q: if decay > 0.0 {
                    PI * f / decay
                } else {
                    f64::INFINITY
                },
                amplitude: 2.0 * a.norm(),
                phase: a.arg(),
                error: (twin / f).min(1.0),
            });
        }
    }
    let amax = raw
        .iter()
        .filter(|m| m.error <= p.max_error)
        .map(|m| m.amplitude)
        .fold(0.0, f64::max);
    let mut out: Vec<HMode> = raw
        .into_iter()
        .filter(|m| m.error <= p.max_error && m.amplitude >= p.min_amplitude * amax)
        .collect();
    out.sort_by(|a, b| a.f_hz.total_cmp(&b.f_hz));
    out
}

/// Merges the modes found in several signals: modes closer than `rel_tol` (relative) are
/// one resonance, represented by its strongest estimate; its error includes the spread of
/// the cluster. Degenerate doublets split by the mesh (~1e-4 relative) stay separate for
/// `rel_tol` well below that.
///
/// Clusters are kept when their quality factor is at least `min_q` (a lossless cavity has
/// no damped or growing modes; spurious poles fitted to leakage have Q of 1e2–1e4 or grow)
/// and when they were found in at least two signals or are at least a tenth as strong as the
/// strongest resonance.
///
/// A record of length `record_s` cannot tell decay rates below about `0.02 / record_s` from
/// zero, so modes with `|α| record_s <= 0.02` also count as undamped.
pub fn cluster(
    per_signal: &[Vec<HMode>],
    rel_tol: f64,
    min_q: f64,
    record_s: f64,
) -> Vec<super::Peak> {
    let mut all: Vec<(usize, &HMode)> = per_signal
        .iter()
        .enumerate()
        .flat_map(|(i, v)| v.iter().map(move |m| (i, m)))
        .collect();
    all.sort_by(|a, b| a.1.f_hz.total_cmp(&b.1.f_hz));
    let mut out = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let f0 = all[i].1.f_hz;
        let mut j = i + 1;
        while j < all.len() && (all[j].1.f_hz - f0) <= rel_tol * f0 {
            j += 1;
        }
        let group = &all[i..j];
        let best = group
            .iter()
            .max_by(|a, b| a.1.amplitude.total_cmp(&b.1.amplitude))
            .map(|g| g.1)
            .unwrap_or(all[i].1);
        let spread = (group.last().map(|g| g.1.f_hz).unwrap_or(f0) - f0) / f0;
        let mut signals: Vec<usize> = group.iter().map(|g| g.0).collect();
        signals.dedup();
        out.push(super::Peak {
            f_hz: best.f_hz,
            amplitude: best.amplitude,
            prominence: None,
            decay_per_s: Some(best.decay_per_s),
            q: Some(best.q),
            phase: Some(best.phase),
            error: Some(best.error.max(spread)),
            n_signals: signals.len(),
            members: 0,
            amplitudes: vec![],
            phases: vec![],
        });
        i = j;
    }
    let keep_q = |p: &super::Peak| {
        p.decay_per_s
            .map(|a| a.abs() * min_q <= PI * p.f_hz || a.abs() * record_s <= 0.02)
            .unwrap_or(true)
    };
    let amax = out
        .iter()
        .filter(|p| keep_q(p))
        .map(|p| p.amplitude)
        .fold(0.0, f64::max);
    out.retain(|p| keep_q(p) && (p.n_signals >= 2 || p.amplitude >= 0.1 * amax));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::Rng;

    fn synth(modes: &[(f64, f64, f64, f64)], dt: f64, n: usize, noise: f64, seed: u64) -> Vec<f64> {
        let mut r = Rng::new(seed);
        (0..n)
            .map(|k| {
                let t = k as f64 * dt;
                modes
                    .iter()
                    .map(|&(f, a, ph, d)| a * (-d * t).exp() * (2.0 * PI * f * t + ph).cos())
                    .sum::<f64>()
                    + noise * r.sym() * 3f64.sqrt()
            })
            .collect()
    }

    #[test]
    fn recovers_damped_modes_at_snr_1e6() {
        // f (Hz), amplitude, phase, decay (1/s); dt as in a cylinder run.
        let modes = [
            (114.74e6, 1.0, 0.3, 2e5),
            (182.82e6, 0.6, -1.1, 0.0),
            (245.04e6, 0.4, 2.0, 5e5),
            (263.38e6, 0.8, 0.9, 1e5),
        ];
        let dt = 1.86e-10;
        let y = synth(&modes, dt, 3000, 1e-6, 7);
        let got = harminv(&y, dt, &Params::band(50e6, 330e6));
        assert_eq!(got.len(), 4, "{got:?}");
        for (m, g) in modes.iter().zip(&got) {
            assert!((g.f_hz - m.0).abs() < 1e-6 * m.0, "f {} vs {}", g.f_hz, m.0);
            assert!(
                (g.amplitude - m.1).abs() < 1e-4,
                "amp {} vs {}",
                g.amplitude,
                m.1
            );
            assert!(
                (g.decay_per_s - m.3).abs() < 1e-4 * 2.0 * PI * m.0,
                "decay {} vs {}",
                g.decay_per_s,
                m.3
            );
            let dphi = (g.phase - m.2 + PI).rem_euclid(2.0 * PI) - PI;
            assert!(dphi.abs() < 1e-4, "phase {} vs {}", g.phase, m.2);
            assert!(g.error < 1e-5);
        }
    }

    #[test]
    fn separates_a_close_pair_below_the_fft_resolution() {
        // 0.3 MHz apart with T = 0.6 us: FFT bin 1.7 MHz cannot resolve them.
        let modes = [(182.82e6, 1.0, 0.0, 0.0), (183.12e6, 0.7, 1.0, 0.0)];
        let dt = 1.86e-10;
        let y = synth(&modes, dt, 3200, 1e-6, 8);
        let got = harminv(&y, dt, &Params::band(100e6, 300e6));
        assert_eq!(got.len(), 2, "{got:?}");
        for (m, g) in modes.iter().zip(&got) {
            assert!((g.f_hz - m.0).abs() < 1e-6 * m.0, "f {} vs {}", g.f_hz, m.0);
            assert!((g.amplitude - m.1).abs() < 1e-3);
        }
    }

    #[test]
    fn finds_a_weak_mode_next_to_a_strong_one() {
        let modes = [(245.04e6, 1.0, 0.0, 0.0), (263.38e6, 1e-3, 0.5, 0.0)];
        let dt = 1.86e-10;
        let y = synth(&modes, dt, 3000, 1e-7, 9);
        let got = harminv(&y, dt, &Params::band(100e6, 330e6));
        assert_eq!(got.len(), 2, "{got:?}");
        assert!((got[1].f_hz - 263.38e6).abs() < 1e-5 * 263.38e6);
        assert!((got[1].amplitude - 1e-3).abs() < 1e-5);
    }

    #[test]
    fn pure_noise_gives_no_confident_mode() {
        let dt = 1.86e-10;
        let y = synth(&[], dt, 2000, 1.0, 10);
        let got = harminv(&y, dt, &Params::band(50e6, 330e6));
        assert!(got.len() <= 1, "{got:?}");
    }
}
