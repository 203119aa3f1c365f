//! Complex resonances of a dielectric sphere in free space (Mie theory), the reference for
//! open-boundary runs.
//!
//! A sphere of radius `a`, relative permittivity `ε_r` (index `m = sqrt(ε_r)`, `μ_r = 1`)
//! in vacuum. With `x = k₀ a`, the Riccati–Bessel functions `ψ_l(z) = z j_l(z)` and
//! `ξ_l(z) = z h_l⁽¹⁾(z)` (outgoing for the time factor `e^{-iωt}`), the scattering
//! coefficients `a_l` (electric multipoles, TM) and `b_l` (magnetic multipoles, TE) have
//! poles where (Bohren & Huffman, eq. 4.53)
//!
//! - TM_l: `m ψ_l(mx) ξ_l'(x) − ξ_l(x) ψ_l'(mx) = 0`,
//! - TE_l: `ψ_l(mx) ξ_l'(x) − m ξ_l(x) ψ_l'(mx) = 0`.
//!
//! A root `x = x_r + i x_i` (with `x_i < 0`: the field decays as `e^{ω_i t}`) is the mode
//! `f = c x_r / (2π a)` with `Q = x_r / (2 |x_i|)`; each is `(2l + 1)`-fold degenerate.
//! For large `m` the roots approach `m x = ` the p-th zero of `j_{l−1}` (TE) or of `j_l`
//! (TM): the lowest TE (magnetic dipole) mode sits near `m x = π`, the lowest TM
//! (electric dipole) near `m x = 4.493`.
//!
//! The roots are found by Newton's method in the complex plane, by continuation in `m`
//! from `m = 200` (where the asymptotic start is within a fraction of a percent) down to the
//! requested index. `j_l`, `y_l` come from the closed forms of order 0 and 1 and upward
//! recurrence, accurate for the low orders (`l ≤ 4`) and arguments (`|z| ≳ 0.1`) used here.

use crate::util::C0;
use crate::util::C64;
use std::f64::consts::PI;

/// Polarisation of a sphere mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MiePol {
    /// Magnetic multipole (`b_l` pole): no radial electric field.
    Te,
    /// Electric multipole (`a_l` pole): no radial magnetic field.
    Tm,
}

/// A complex resonance of the dielectric sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MieMode {
    pub pol: MiePol,
    /// Multipole order (1: dipole).
    pub l: u32,
    /// Radial order (1: lowest).
    pub p: u32,
    /// The root `x = k₀ a` (imaginary part negative).
    pub x: C64,
    pub f_hz: f64,
    pub q: f64,
}

impl MieMode {
    /// `TE101`-style name: polarisation, l, p (as the PEC sphere's, with a 0 for m).
    pub fn name(&self) -> String {
        let p = match self.pol {
            MiePol::Te => "TE",
            MiePol::Tm => "TM",
        };
        format!("{p}{}{}", self.l, self.p)
    }
}

/// `(j_l(z), y_l(z))` for `l = 0..=lmax`, by upward recurrence.
fn sph_jy(lmax: u32, z: C64) -> (Vec<C64>, Vec<C64>) {
    let (s, c) = (z.sin(), z.cos());
    let mut j = vec![s / z, s / (z * z) - c / z];
    let mut y = vec![-c / z, -c / (z * z) - s / z];
    for l in 1..lmax.max(1) {
        let k = (2 * l + 1) as f64 / z;
        j.push(k * j[l as usize] - j[l as usize - 1]);
        y.push(k * y[l as usize] - y[l as usize - 1]);
    }
    j.truncate(lmax as usize + 1);
    y.truncate(lmax as usize + 1);
    (j, y)
}

/// `(ψ_l(z), ψ_l'(z), ξ_l(z), ξ_l'(z))`, using `f'(z) = z g_{l−1}(z) − l g_l(z)` for
/// `f = z g_l`.
fn riccati(l: u32, z: C64) -> (C64, C64, C64, C64) {
    assert!(l >= 1, "multipole order starts at 1");
    let (j, y) = sph_jy(l, z);
    let i = C64::new(0.0, 1.0);
    let (l_, lf) = (l as usize, l as f64);
    let h = |k: usize| j[k] + i * y[k];
    (
        z * j[l_],
        z * j[l_ - 1] - lf * j[l_],
        z * h(l_),
        z * h(l_ - 1) - lf * h(l_),
    )
}

/// The characteristic function whose zeros are the resonances (module docs).
pub fn characteristic(pol: MiePol, l: u32, m: f64, x: C64) -> C64 {
    let (psi_m, dpsi_m, _, _) = riccati(l, x * m);
    let (_, _, xi, dxi) = riccati(l, x);
    match pol {
        MiePol::Tm => m * psi_m * dxi - xi * dpsi_m,
        MiePol::Te => psi_m * dxi - m * xi * dpsi_m,
    }
}

#[cfg(test)]
/// The scattering coefficient `b_l` (TE) or `a_l` (TM) at a real `x`: its magnitude peaks
/// at the resonances (a check of the roots independent of Newton's method).
pub fn coefficient(pol: MiePol, l: u32, m: f64, x: f64) -> C64 {
    let x = C64::new(x, 0.0);
    let (psi_m, dpsi_m, _, _) = riccati(l, x * m);
    let (psi, dpsi, xi, dxi) = riccati(l, x);
    match pol {
        MiePol::Tm => (m * psi_m * dpsi - psi * dpsi_m) / (m * psi_m * dxi - xi * dpsi_m),
        MiePol::Te => (psi_m * dpsi - m * psi * dpsi_m) / (psi_m * dxi - m * xi * dpsi_m),
    }
}

/// Newton's method on [`characteristic`] from `x`, with a central-difference derivative
/// (the function is analytic). None when it does not converge to a relative step of 1e-13.
fn newton(pol: MiePol, l: u32, m: f64, mut x: C64) -> Option<C64> {
    for _ in 0..100 {
        let f = characteristic(pol, l, m, x);
        let h = 1e-6 * x.norm();
        let hc = C64::new(h, 0.0);
        let df =
            (characteristic(pol, l, m, x + hc) - characteristic(pol, l, m, x - hc)) / (2.0 * h);
        if !(df.norm() > 0.0) {
            return None;
        }
        let step = f / df;
        // damp long steps: the continuation keeps the root close
        let step = if step.norm() > 0.2 * x.norm() {
            step * (0.2 * x.norm() / step.norm())
        } else {
            step
        };
        x -= step;
        if !(x.re.is_finite() && x.im.is_finite()) {
            return None;
        }
        if step.norm() <= 1e-13 * x.norm() {
            return Some(x);
        }
    }
    None
}

/// The p-th positive zero of `j_l` (real x), bracketed on a grid and bisected.
fn sph_j_zero(l: u32, p: u32) -> f64 {
    let f = |x: f64| sph_jy(l, C64::new(x, 0.0)).0[l as usize].re;
    let mut found = 0;
    let (mut a, step) = (0.5 + l as f64, 0.01);
    loop {
        let b = a + step;
        if f(a) * f(b) <= 0.0 {
            found += 1;
            if found == p {
                let (mut lo, mut hi) = (a, b);
                for _ in 0..80 {
                    let mid = 0.5 * (lo + hi);
                    if f(lo) * f(mid) <= 0.0 {
                        hi = mid
                    } else {
                        lo = mid
                    }
                }
                return 0.5 * (lo + hi);
            }
        }
        a = b;
    }
}

/// The resonance `(pol, l, p)` of a sphere of radius `radius_m` and permittivity `eps_r`
/// (>= 2, so the mode is a resonance at all), or None if Newton's method fails.
pub fn resonance(pol: MiePol, l: u32, p: u32, eps_r: f64, radius_m: f64) -> Option<MieMode> {
    if !(eps_r >= 2.0 && eps_r.is_finite() && l >= 1 && p >= 1 && radius_m > 0.0) {
        return None;
    }
    let target = eps_r.sqrt();
    // asymptotic start at large m: m x = zero of j_{l-1} (TE; π p for l = 1) or j_l (TM)
    let z = match pol {
        MiePol::Te if l == 1 => PI * p as f64,
        MiePol::Te => sph_j_zero(l - 1, p),
        MiePol::Tm => sph_j_zero(l, p),
    };
    let mut m = 200f64.max(target);
    let mut x = C64::new(z / m, -1e-6 * z / m);
    x = newton(pol, l, m, x)?;
    while m > target {
        let next = (m / 1.05).max(target);
        x = newton(pol, l, next, x * (m / next))?;
        m = next;
    }
    Some(MieMode {
        pol,
        l,
        p,
        x,
        f_hz: C0 * x.re / (2.0 * PI * radius_m),
        q: x.re / (2.0 * x.im.abs()),
    })
}

/// The measured line `(f_hz, q)` that is `mode`: the nearest in frequency among the lines
/// whose Q is within a factor 3 of the mode's (open resonators also show high-Q lines of
/// higher multipoles and low-Q fits of the background) and whose frequency is within the
/// larger of 5% and the mode's half-width `1/(2Q)` of it. A line farther off is another
/// mode, not this one poorly resolved: without that bound a run that lost the broad TM₁₁
/// line of an ε_r = 10 sphere (Q 4.2) reported the TE₁₁ line, 30% below, as its match.
pub fn nearest_line(lines: &[(f64, f64)], mode: &MieMode) -> Option<(f64, f64)> {
    let window = mode.f_hz * f64::max(0.05, 0.5 / mode.q);
    lines
        .iter()
        .filter(|(_, q)| *q > mode.q / 3.0 && *q < 3.0 * mode.q)
        .filter(|(f, _)| (f - mode.f_hz).abs() <= window)
        .min_by(|a, b| (a.0 - mode.f_hz).abs().total_cmp(&(b.0 - mode.f_hz).abs()))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_line_is_near_in_frequency_and_in_q() {
        // ε_r = 10: TE₁₁ 448.4 MHz Q 9.15, TM₁₁ 647.5 MHz Q 4.22 (window 11.9%)
        let tm = resonance(MiePol::Tm, 1, 1, 10.0, 0.1).unwrap();
        let te_line = (4.52e8, 9.36);
        // the TE line alone is not the TM mode (it was reported as TM −30%, Q +122%)
        assert_eq!(nearest_line(&[te_line], &tm), None);
        let near = (0.93 * tm.f_hz, 4.0);
        assert_eq!(nearest_line(&[te_line, near], &tm), Some(near));
        // 13% off: outside the half-width
        assert_eq!(nearest_line(&[(0.87 * tm.f_hz, 4.0)], &tm), None);
        // a narrow mode still gets 5%: TE₁₁ at ε_r = 40 (Q 49.6, half-width 1%)
        let te = resonance(MiePol::Te, 1, 1, 40.0, 0.1).unwrap();
        let off = (1.04 * te.f_hz, 45.0);
        assert_eq!(nearest_line(&[off], &te), Some(off));
        assert_eq!(nearest_line(&[(1.06 * te.f_hz, 45.0)], &te), None);
        // and Q outside a factor 3 is another line
        assert_eq!(nearest_line(&[(te.f_hz, 10.0)], &te), None);
    }

    #[test]
    fn closed_forms_match_the_series_of_small_arguments() {
        // j_1(z) = z/3 - z³/30 + z⁵/840 - ..., y_1 = -1/z² - 1/2 + ...
        let z = C64::new(0.05, 0.02);
        let (j, y) = sph_jy(2, z);
        let j1 = z / 3.0 - z * z * z / 30.0 + z.powi(5) / 840.0;
        assert!((j[1] - j1).norm() < 1e-9 * j1.norm());
        let y1 = -1.0 / (z * z) - 0.5 + z * z / 8.0;
        assert!((y[1] - y1).norm() < 1e-6 * y1.norm());
        // j_2(z) ≈ z²/15 - z⁴/210
        let j2 = z * z / 15.0 - z.powi(4) / 210.0;
        assert!((j[2] - j2).norm() < 1e-6 * j2.norm());
    }

    #[test]
    fn roots_are_zeros_and_the_real_axis_response_peaks_there() {
        for eps in [10.0, 20.0, 40.0] {
            for pol in [MiePol::Te, MiePol::Tm] {
                let r = resonance(pol, 1, 1, eps, 1.0).unwrap();
                assert!(r.x.im < 0.0, "{pol:?} eps {eps}: {:?}", r.x);
                let f = characteristic(pol, 1, eps.sqrt(), r.x).norm();
                assert!(f < 1e-10, "{pol:?} eps {eps}: residual {f}");
                assert!(r.q > 1.0 && r.q < 1e4, "{pol:?} eps {eps}: Q {}", r.q);
                if r.q < 8.0 {
                    continue; // a broad line: the background moves the real-axis peak
                }
                // |coefficient|² peaks within a fraction of the half-width Re x / (2Q) of
                // Re x (an isolated pole over a slowly varying background)
                let m = eps.sqrt();
                let c = |x: f64| coefficient(pol, 1, m, x).norm_sqr();
                let (lo, hi) = (0.8 * r.x.re, 1.2 * r.x.re);
                let n = 20_000;
                let xs: Vec<f64> = (0..=n)
                    .map(|k| lo + (hi - lo) * k as f64 / n as f64)
                    .collect();
                let (kmax, _) = xs.iter().enumerate().fold((0, 0.0), |(bk, bv), (k, &x)| {
                    if c(x) > bv { (k, c(x)) } else { (bk, bv) }
                });
                let peak = xs[kmax];
                let half_width = r.x.re / (2.0 * r.q);
                assert!(
                    (peak - r.x.re).abs() < 0.5 * half_width,
                    "{pol:?} eps {eps}: peak {peak} vs root {} (half-width {half_width})",
                    r.x.re
                );
            }
        }
    }

    #[test]
    fn large_index_limits() {
        // m x → π (TE_11) and 4.4934 (TM_11) as m → ∞, with Q growing like m³ (TE) and m⁵ (TM)
        let te = resonance(MiePol::Te, 1, 1, 1e4, 1.0).unwrap();
        let tm = resonance(MiePol::Tm, 1, 1, 1e4, 1.0).unwrap();
        assert!((te.x.re * 100.0 - PI).abs() < 0.01 * PI, "{:?}", te.x);
        assert!(
            (tm.x.re * 100.0 - 4.4934).abs() < 0.01 * 4.4934,
            "{:?}",
            tm.x
        );
        let te2 = resonance(MiePol::Te, 1, 1, 4e4, 1.0).unwrap();
        let ratio = te2.q / te.q;
        assert!(
            (ratio / 8.0 - 1.0).abs() < 0.05,
            "TE Q ratio for 2x the index: {ratio}"
        );
    }
}
