//! The window plan of [`super::extract`]: how the band is cut into windows, and each
//! window's Kaiser-windowed low-pass filter, heterodyne and decimation (step 1 of the
//! module docs of [`super`]).

use super::{C64, MAX_WINDOWS, STOP_DB};
use rustfft::FftPlanner;
use std::f64::consts::PI;

/// Modified Bessel function I0 by its power series (β <= ~50 here).
fn bessel_i0(x: f64) -> f64 {
    let (mut sum, mut term) = (1.0, 1.0);
    for k in 1..500 {
        let r = x / (2.0 * k as f64);
        term *= r * r;
        sum += term;
        if term < 1e-18 * sum {
            break;
        }
    }
    sum
}

/// How the band is cut into windows and each window is filtered.
pub(super) struct Plan {
    pub n: usize,
    pub dt: f64,
    /// Centred filter taps `h[j + hl]`, j = -hl..=hl.
    pub h: Vec<f64>,
    /// DFT of the centred filter on the record's grid (real: h is symmetric).
    pub hbins: Vec<f64>,
    /// Bins kept per window (the decimated sample count before trimming).
    pub b: usize,
    /// Valid decimated samples `m_lo..=m_hi`.
    pub m_lo: usize,
    pub m_hi: usize,
    pub windows: Vec<Window>,
}

pub(super) struct Window {
    /// Centre bin.
    pub kc: i64,
    /// Keep band, Hz (slightly wider than the window's share of the band).
    pub lo: f64,
    pub hi: f64,
}

impl Plan {
    pub fn nd(&self) -> usize {
        self.m_hi + 1 - self.m_lo
    }

    /// Decimated sample interval, s.
    pub fn dtd(&self) -> f64 {
        self.n as f64 * self.dt / self.b as f64
    }

    /// Time from the record's first sample to the first fitted (decimated) sample, s.
    pub fn t0(&self) -> f64 {
        self.m_lo as f64 * self.dtd()
    }

    /// Chooses the number of windows: the fewest whose decimated records have at most
    /// about `ND_MAX` samples. Each window keeps `κ = band / n_w`; the filter passes
    /// `κ/2 + μ` on either side of the centre (μ = κ/10) and stops beyond a transition of
    /// width `τ = κ` (wider for short records, so that the filter takes at most half the
    /// record).
    pub fn new(n: usize, dt: f64, fmin: f64, fmax: f64, nd_max: usize) -> Option<Plan> {
        let (nu_lo, nu_hi) = (fmin * dt, fmax * dt);
        let band = nu_hi - nu_lo;
        // Kaiser: taps - 1 = (A - 7.95) / (2.285 · 2π τ); β = 0.1102 (A - 8.7).
        let taps_tau = (STOP_DB - 7.95) / (2.285 * 2.0 * PI);
        let beta = 0.1102 * (STOP_DB - 8.7);
        let mut choice = None;
        // The longest filter that takes at most half the record: 2 hl + 1 <= n/2 + 1.
        let hl_max = (n / 8).max(1);
        for nw in 1..=MAX_WINDOWS {
            let kappa = band / nw as f64;
            let tau = kappa.max(0.5 * taps_tau / hl_max as f64);
            // (the slack keeps the rounding of the quotient from bumping hl past hl_max)
            let hl = (0.5 * taps_tau / tau - 1e-9).ceil() as usize;
            if 2 * hl + 1 > n / 2 + 1 {
                continue;
            }
            let mu = 0.1 * kappa;
            let width = kappa + 2.0 * mu + 2.0 * tau;
            let b = ((width * n as f64).ceil() as usize + 2).min(n);
            let scale = b as f64 / n as f64;
            let m_lo = (hl as f64 * scale).ceil() as usize;
            let m_hi = ((n - 1 - hl) as f64 * scale).floor() as usize;
            if m_hi < m_lo + 16 {
                continue;
            }
            let nd = m_hi + 1 - m_lo;
            choice = Some((nw, kappa, tau, mu, hl, b, m_lo, m_hi));
            // Once the transition is set by the record (a short record: τ > κ), more windows
            // hardly shorten each window's record but multiply the pencils: stop there.
            if nd <= nd_max || tau > kappa {
                break;
            }
        }
        let (nw, kappa, tau, mu, hl, b, m_lo, m_hi) = choice?;
        // Low-pass cutoff in the middle of the transition.
        let cut = kappa / 2.0 + mu + tau / 2.0;
        let i0b = bessel_i0(beta);
        let mut h: Vec<f64> = (0..2 * hl + 1)
            .map(|i| {
                let j = i as f64 - hl as f64;
                let sinc = if j == 0.0 {
                    2.0 * cut
                } else {
                    (2.0 * PI * cut * j).sin() / (PI * j)
                };
                let r = if hl == 0 { 0.0 } else { j / hl as f64 };
                sinc * bessel_i0(beta * (1.0 - r * r).max(0.0).sqrt()) / i0b
            })
            .collect();
        let sum: f64 = h.iter().sum();
        h.iter_mut().for_each(|v| *v /= sum);
        let mut buf = vec![C64::new(0.0, 0.0); n];
        for (i, &v) in h.iter().enumerate() {
            let j = i as i64 - hl as i64;
            buf[j.rem_euclid(n as i64) as usize] = C64::new(v, 0.0);
        }
        FftPlanner::<f64>::new()
            .plan_fft_forward(n)
            .process(&mut buf);
        let hbins = buf.iter().map(|c| c.re).collect();
        let overlap = 0.02 * kappa;
        let windows = (0..nw)
            .map(|iw| {
                let lo = nu_lo + iw as f64 * kappa;
                let hi = if iw + 1 == nw { nu_hi } else { lo + kappa };
                let kc = (0.5 * (lo + hi) * n as f64).round() as i64;
                Window {
                    kc,
                    lo: (lo - overlap) / dt,
                    hi: (hi + overlap) / dt,
                }
            })
            .collect();
        Some(Plan {
            n,
            dt,
            h,
            hbins,
            b,
            m_lo,
            m_hi,
            windows,
        })
    }

    /// Gain of the filter for `exp(s t)` (s in 1/s, relative to the window centre):
    /// `G = h_0 + Σ_(j>0) h_j (w^j + w^-j)`, `w = exp(-s Δt)`, by running products
    /// (relative round-off ~ L_h ε).
    pub fn gain(&self, s: C64) -> C64 {
        let hl = self.h.len() / 2;
        let w = (-s * self.dt).exp();
        let wi = C64::new(1.0, 0.0) / w;
        let (mut p, mut q) = (C64::new(1.0, 0.0), C64::new(1.0, 0.0));
        let mut g = C64::new(self.h[hl], 0.0);
        for j in 1..=hl {
            p *= w;
            q *= wi;
            g += (p + q) * self.h[hl + j];
        }
        g
    }
}

/// Filtered, heterodyned, decimated samples of one component in one window.
pub(super) fn decimate(
    plan: &Plan,
    w: &Window,
    x: &[C64],
    inv: &dyn rustfft::Fft<f64>,
) -> Vec<C64> {
    let (n, b) = (plan.n as i64, plan.b as i64);
    let mut buf = vec![C64::new(0.0, 0.0); plan.b];
    for j in -(b / 2)..(b - b / 2) {
        let k = (w.kc + j).rem_euclid(n) as usize;
        let hj = plan.hbins[j.rem_euclid(n) as usize];
        buf[j.rem_euclid(b) as usize] = x[k] * hj;
    }
    inv.process(&mut buf);
    let inv_n = 1.0 / plan.n as f64;
    buf[plan.m_lo..=plan.m_hi]
        .iter()
        .map(|v| v * inv_n)
        .collect()
}
