//! Analytic resonances of PEC cavities, for checking measured peaks.
//!
//! - Cylinder of radius `a`, height `h` (axis z): `TM_mnp`: `f = c/(2π) sqrt((χ_mn/a)² +
//!   (pπ/h)²)`, p >= 0; `TE_mnp`: `χ'_mn` in place of `χ_mn`, p >= 1. `χ_mn` is the n-th
//!   positive zero of `J_m`, `χ'_mn` of `J_m'`. Modes with m > 0 are doublets.
//! - Box `a x b x d`: `f = c/2 sqrt((l/a)² + (m/b)² + (n/d)²)`; `TE_lmn` (n >= 1, l + m
//!   >= 1) and `TM_lmn` (l, m >= 1).
//!
//! Bessel functions are evaluated from Bessel's integral
//! `J_m(x) = 1/(2π) ∫_0^{2π} cos(mτ - x sin τ) dτ`, whose periodic integrand makes the
//! trapezoidal rule converge geometrically; zeros are bracketed on a grid and bisected.

use crate::C0;
use std::f64::consts::PI;

/// `J_m(x)` for integer m >= 0 and |x| <= ~50 (absolute error ~1e-15).
pub fn bessel_j(m: u32, x: f64) -> f64 {
    let n = 64 + 2 * x.abs().ceil() as usize;
    let mut s = 0.0;
    for k in 0..n {
        let t = 2.0 * PI * k as f64 / n as f64;
        s += (m as f64 * t - x * t.sin()).cos();
    }
    s / n as f64
}

/// `J_m'(x) = (J_(m-1)(x) - J_(m+1)(x)) / 2`, with `J_(-1) = -J_1`.
pub fn bessel_j_prime(m: u32, x: f64) -> f64 {
    let jm1 = if m == 0 {
        -bessel_j(1, x)
    } else {
        bessel_j(m - 1, x)
    };
    0.5 * (jm1 - bessel_j(m + 1, x))
}

/// The first `count` zeros of `f` on (from, xmax]. `from` must lie below the first zero
/// and where `f` is well above round-off (for `J_m`, `J_m'`: x = m, since
/// `j_(m,1) > j'_(m,1) >= m`).
fn zeros(f: impl Fn(f64) -> f64, count: usize, from: f64, xmax: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let step = 0.02;
    let mut x0 = from.max(1e-3);
    let mut f0 = f(x0);
    while out.len() < count && x0 < xmax {
        let x1 = x0 + step;
        let f1 = f(x1);
        if f0 == 0.0 || f0 * f1 < 0.0 {
            let (mut a, mut b, mut fa) = (x0, x1, f0);
            for _ in 0..100 {
                let c = 0.5 * (a + b);
                let fc = f(c);
                if fa * fc <= 0.0 {
                    b = c;
                } else {
                    a = c;
                    fa = fc;
                }
            }
            out.push(0.5 * (a + b));
        }
        x0 = x1;
        f0 = f1;
    }
    out
}

/// n-th (1-based) positive zero of `J_m`.
pub fn bessel_zero(m: u32, n: usize) -> f64 {
    zeros(|x| bessel_j(m, x), n, m as f64, 60.0)[n - 1]
}

/// n-th (1-based) positive zero of `J_m'` (x = 0 excluded).
pub fn bessel_prime_zero(m: u32, n: usize) -> f64 {
    zeros(|x| bessel_j_prime(m, x), n, m as f64, 60.0)[n - 1]
}

/// Spherical Bessel `j_n(x)` for x > 0 by upward recurrence from `j_0 = sin x / x`,
/// `j_1 = sin x / x² - cos x / x` (accurate where used: x above about n/2).
pub fn spherical_j(n: u32, x: f64) -> f64 {
    let j0 = x.sin() / x;
    if n == 0 {
        return j0;
    }
    let mut a = j0;
    let mut b = x.sin() / (x * x) - x.cos() / x;
    for k in 1..n {
        let c = (2 * k + 1) as f64 / x * b - a;
        a = b;
        b = c;
    }
    b
}

/// `d/dx [x j_n(x)] = x j_(n-1)(x) - n j_n(x)` (n >= 1).
pub fn riccati_prime(n: u32, x: f64) -> f64 {
    x * spherical_j(n - 1, x) - n as f64 * spherical_j(n, x)
}

/// An analytic resonance.
#[derive(Clone, Debug, PartialEq)]
pub struct Mode {
    pub name: String,
    pub f_hz: f64,
    pub degeneracy: usize,
}

/// A geometry with known resonances.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cavity {
    Cylinder {
        radius: f64,
        height: f64,
    },
    Box {
        a: f64,
        b: f64,
        d: f64,
    },
    /// PEC sphere of radius `radius`: `TE_np` at the p-th zero of `j_n`, `TM_np` at the
    /// p-th zero of `[x j_n(x)]'`, each (2n+1)-fold degenerate; `f = c x / (2π a)`.
    Sphere {
        radius: f64,
    },
}

impl Cavity {
    /// Resonances up to `fmax_hz`, ascending.
    pub fn modes(&self, fmax_hz: f64) -> Vec<Mode> {
        let mut out = Vec::new();
        match *self {
            Cavity::Cylinder { radius, height } => {
                let kmax = 2.0 * PI * fmax_hz / C0;
                let xmax = kmax * radius;
                for m in 0..(xmax.ceil() as u32 + 1) {
                    let (from, to) = (m as f64, xmax + 0.05);
                    for (te, list) in [
                        (false, zeros(|x| bessel_j(m, x), 40, from, to)),
                        (true, zeros(|x| bessel_j_prime(m, x), 40, from, to)),
                    ] {
                        for (n, &chi) in list.iter().enumerate() {
                            for p in (if te { 1 } else { 0 })..100u32 {
                                let k2 = (chi / radius).powi(2) + (p as f64 * PI / height).powi(2);
                                let f = C0 * k2.sqrt() / (2.0 * PI);
                                if f > fmax_hz {
                                    break;
                                }
                                out.push(Mode {
                                    name: format!(
                                        "{}{}{}{}",
                                        if te { "TE" } else { "TM" },
                                        m,
                                        n + 1,
                                        p
                                    ),
                                    f_hz: f,
                                    degeneracy: if m > 0 { 2 } else { 1 },
                                });
                            }
                        }
                    }
                }
            }
            Cavity::Sphere { radius } => {
                let xmax = 2.0 * PI * fmax_hz * radius / C0;
                for n in 1..(xmax.ceil() as u32 + 2) {
                    let from = 0.5 * n as f64 + 0.5;
                    for (te, list) in [
                        (true, zeros(|x| spherical_j(n, x), 40, from, xmax + 0.05)),
                        (false, zeros(|x| riccati_prime(n, x), 40, from, xmax + 0.05)),
                    ] {
                        for (p, &x) in list.iter().enumerate() {
                            let f = C0 * x / (2.0 * PI * radius);
                            if f <= fmax_hz {
                                out.push(Mode {
                                    name: format!("{}{}{}", if te { "TE" } else { "TM" }, n, p + 1),
                                    f_hz: f,
                                    degeneracy: 2 * n as usize + 1,
                                });
                            }
                        }
                    }
                }
            }
            Cavity::Box { a, b, d } => {
                let lim = |s: f64| (2.0 * fmax_hz * s / C0).ceil() as u32 + 1;
                for l in 0..=lim(a) {
                    for m in 0..=lim(b) {
                        for n in 0..=lim(d) {
                            let f = 0.5
                                * C0
                                * ((l as f64 / a).powi(2)
                                    + (m as f64 / b).powi(2)
                                    + (n as f64 / d).powi(2))
                                .sqrt();
                            if f > fmax_hz || f == 0.0 {
                                continue;
                            }
                            if n >= 1 && l + m >= 1 {
                                out.push(Mode {
                                    name: format!("TE{l}{m}{n}"),
                                    f_hz: f,
                                    degeneracy: 1,
                                });
                            }
                            if l >= 1 && m >= 1 {
                                out.push(Mode {
                                    name: format!("TM{l}{m}{n}"),
                                    f_hz: f,
                                    degeneracy: 1,
                                });
                            }
                        }
                    }
                }
            }
        }
        out.sort_by(|x, y| x.f_hz.total_cmp(&y.f_hz));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bessel_values_and_zeros_match_tables() {
        // Abramowitz & Stegun, Table 9.1 and 9.5.
        assert!((bessel_j(0, 1.0) - 0.765_197_686_557_966_6).abs() < 1e-14);
        assert!((bessel_j(1, 2.5) - 0.497_094_102_464_274).abs() < 1e-14);
        assert!((bessel_zero(0, 1) - 2.404_825_557_695_773).abs() < 1e-12);
        assert!((bessel_zero(1, 1) - 3.831_705_970_207_512).abs() < 1e-12);
        assert!((bessel_zero(2, 1) - 5.135_622_301_840_683).abs() < 1e-12);
        assert!((bessel_zero(0, 2) - 5.520_078_110_286_311).abs() < 1e-12);
        assert!((bessel_prime_zero(1, 1) - 1.841_183_781_340_659).abs() < 1e-12);
    }

    #[test]
    fn seed_cylinder_resonances() {
        // Design note §10: TM010 114.74, TM110 182.82, TM210 245.04, TM020 263.38 MHz,
        // then TM310 304.4 and TE111 312.4 MHz.
        let m = Cavity::Cylinder {
            radius: 1.0,
            height: 0.5,
        }
        .modes(320e6);
        let names: Vec<&str> = m.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            ["TM010", "TM110", "TM210", "TM020", "TM310", "TE111"]
        );
        let mhz: Vec<f64> = m.iter().map(|x| x.f_hz / 1e6).collect();
        for (a, b) in mhz
            .iter()
            .zip([114.74, 182.82, 245.04, 263.38, 304.4, 312.4])
        {
            assert!((a - b).abs() < 0.06, "{a} vs {b}");
        }
        assert_eq!(m[1].degeneracy, 2);
    }

    #[test]
    fn sphere_zeros_match_tables() {
        // Abramowitz & Stegun 10.1: first zero of j_1 is 4.493409458; of [x j_1(x)]' 2.743707269.
        let m = Cavity::Sphere { radius: 1.0 }.modes(C0 * 4.6 / (2.0 * PI));
        let tm11 = m.iter().find(|x| x.name == "TM11").unwrap();
        let te11 = m.iter().find(|x| x.name == "TE11").unwrap();
        assert!((tm11.f_hz * 2.0 * PI / C0 - 2.743_707_269).abs() < 1e-8);
        assert!((te11.f_hz * 2.0 * PI / C0 - 4.493_409_458).abs() < 1e-8);
        assert_eq!(tm11.degeneracy, 3);
        assert_eq!(m[0].name, "TM11");
    }

    #[test]
    fn cube_fundamental_is_threefold() {
        let m = Cavity::Box {
            a: 1.0,
            b: 1.0,
            d: 1.0,
        }
        .modes(C0 / 2.0 * 2f64.sqrt() * 1.0001);
        assert_eq!(m.len(), 3);
        assert!(
            m.iter()
                .all(|x| (x.f_hz - C0 / 2.0 * 2f64.sqrt()).abs() < 1.0)
        );
    }
}
