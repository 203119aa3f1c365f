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

use crate::util::C0;
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
    /// Number of independent fields at this frequency under this name (2 for the cos/sin
    /// pair of a cylinder mode with m > 0, 2n + 1 for a sphere mode).
    pub degeneracy: usize,
    /// Electric-field components (x, y, z of the cavity's frame: the cylinder axis is z, the
    /// box edges are x, y, z) the mode can have anywhere; a probe sees nothing in the others.
    pub e_axes: [bool; 3],
}

/// How the two opposite walls of a box normal to one axis are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walls {
    /// Both perfect electric conductors.
    PecPec,
    /// Both perfect magnetic conductors.
    PmcPmc,
    /// PEC at coordinate 0, PMC at the far side.
    PecPmc,
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
    /// Box `a x b x d` whose wall pairs normal to x, y, z are made as `walls` says.
    WalledBox {
        a: f64,
        b: f64,
        d: f64,
        walls: [Walls; 3],
    },
}

impl Cavity {
    /// Resonances of the empty cavity up to `fmax_hz`, ascending (same as
    /// `catalogue(fmax_hz, 1.0, 1.0)`).
    pub fn modes(&self, fmax_hz: f64) -> Vec<Mode> {
        self.catalogue(fmax_hz, 1.0, 1.0)
    }

    /// Every TE and TM resonance up to `fmax_hz` of the cavity filled homogeneously with
    /// relative permittivity `eps_r` and permeability `mu_r` (frequencies divided by
    /// `sqrt(eps_r mu_r)`), ascending, each with its degeneracy. Pass `fmax_hz` with a margin
    /// above the analysed band so that lines near its top can be assigned.
    pub fn catalogue(&self, fmax_hz: f64, eps_r: f64, mu_r: f64) -> Vec<Mode> {
        let n = (eps_r * mu_r).sqrt();
        if !(n > 0.0 && n.is_finite() && fmax_hz > 0.0 && fmax_hz.is_finite()) {
            return vec![];
        }
        let fvac = fmax_hz * n;
        let mut out = match *self {
            Cavity::Cylinder { radius, height } => cylinder_modes(radius, height, fvac),
            Cavity::Sphere { radius } => sphere_modes(radius, fvac),
            Cavity::Box { a, b, d } => box_modes([a, b, d], [Walls::PecPec; 3], fvac),
            Cavity::WalledBox { a, b, d, walls } => box_modes([a, b, d], walls, fvac),
        };
        for m in out.iter_mut() {
            m.f_hz /= n;
        }
        out.sort_by(|x, y| x.f_hz.total_cmp(&y.f_hz).then(x.name.cmp(&y.name)));
        out
    }
}

/// `TM_mnp` (p >= 0) and `TE_mnp` (p >= 1) of a PEC cylinder: `TM_mn0` has only `E_z`, `TE`
/// modes have no `E_z`.
fn cylinder_modes(radius: f64, height: f64, fmax_hz: f64) -> Vec<Mode> {
    let mut out = Vec::new();
    let kmax = 2.0 * PI * fmax_hz / C0;
    let xmax = kmax * radius;
    for m in 0..(xmax.ceil() as u32 + 1) {
        let (from, to) = (m as f64, xmax + 0.05);
        for (te, list) in [
            (false, zeros(|x| bessel_j(m, x), 400, from, to)),
            (true, zeros(|x| bessel_j_prime(m, x), 400, from, to)),
        ] {
            for (n, &chi) in list.iter().enumerate() {
                for p in (if te { 1 } else { 0 })..10_000u32 {
                    let k2 = (chi / radius).powi(2) + (p as f64 * PI / height).powi(2);
                    let f = C0 * k2.sqrt() / (2.0 * PI);
                    if f > fmax_hz {
                        break;
                    }
                    out.push(Mode {
                        name: format!("{}{}{}{}", if te { "TE" } else { "TM" }, m, n + 1, p),
                        f_hz: f,
                        degeneracy: if m > 0 { 2 } else { 1 },
                        e_axes: if te {
                            [true, true, false]
                        } else if p == 0 {
                            [false, false, true]
                        } else {
                            [true; 3]
                        },
                    });
                }
            }
        }
    }
    out
}

/// Wall-loss Q of the empty cylinder's mode `name` (`TMmnp` or `TEmnp`, one digit each for
/// m and n) with walls of conductivity `sigma` (S/m) and relative permeability `mu_c`, by
/// the perturbation method `Q = ω μ₀ ∫|H|² dV / (R_s ∮|H_t|² dS)` evaluated on the analytic
/// fields (None for a name that is not a cylinder mode). With `ψ = J_m(k_c r) cos mφ`:
/// TM modes have `H ∝ ẑ × ∇ψ cos βz` (no `H_z`); TE modes `H_z = ψ sin βz` and
/// `H_t = (β/k_c²) ∇ψ cos βz`. The φ and z integrals are done by hand (the angular factor
/// is common to every term and cancels), the radial ones by the midpoint rule on 4000
/// intervals (relative error below 1e-7 for the low modes).
pub fn cylinder_wall_q(name: &str, radius: f64, height: f64, sigma: f64, mu_c: f64) -> Option<f64> {
    let te = match name.get(..2)? {
        "TE" => true,
        "TM" => false,
        _ => return None,
    };
    let digits: Vec<u32> = name[2..]
        .chars()
        .map(|c| c.to_digit(10))
        .collect::<Option<_>>()?;
    let (m, n, p) = match digits.as_slice() {
        [m, n, rest @ ..] if !rest.is_empty() && *n >= 1 => {
            (*m, *n as usize, rest.iter().fold(0u32, |a, &d| 10 * a + d))
        }
        _ => return None,
    };
    if te && p == 0 {
        return None;
    }
    let (a, d) = (radius, height);
    let x = if te {
        bessel_prime_zero(m, n)
    } else {
        bessel_zero(m, n)
    };
    let kc = x / a;
    let beta = p as f64 * PI / d;
    let omega = C0 * (kc * kc + beta * beta).sqrt();
    let mf = m as f64;
    // ∫_0^a g(r) r dr by the midpoint rule
    let radial = |g: &dyn Fn(f64) -> f64| {
        let k = 4000;
        let h = a / k as f64;
        (0..k)
            .map(|i| (i as f64 + 0.5) * h)
            .map(|r| g(r) * r * h)
            .sum::<f64>()
    };
    let jm = |r: f64| bessel_j(m, kc * r);
    let jp = |r: f64| bessel_j_prime(m, kc * r);
    let (volume, surface) = if te {
        let rz = radial(&|r| jm(r).powi(2));
        let rt =
            radial(&|r| (beta / kc * jp(r)).powi(2) + (beta * mf / (kc * kc * r) * jm(r)).powi(2));
        let side = a * (d / 2.0) * jm(a).powi(2) * (1.0 + (beta * mf / (kc * kc * a)).powi(2));
        ((d / 2.0) * (rz + rt), side + 2.0 * rt)
    } else {
        let rt = radial(&|r| jp(r).powi(2) + (mf / (kc * r) * jm(r)).powi(2));
        let zavg = if p == 0 { d } else { d / 2.0 };
        (zavg * rt, a * zavg * jp(a).powi(2) + 2.0 * rt)
    };
    let mu0 = crate::problem::MU0;
    let rs = (omega * mu0 * mu_c / (2.0 * sigma)).sqrt();
    Some(omega * mu0 * volume / (rs * surface))
}

fn sphere_modes(radius: f64, fmax_hz: f64) -> Vec<Mode> {
    let mut out = Vec::new();
    let xmax = 2.0 * PI * fmax_hz * radius / C0;
    for n in 1..(xmax.ceil() as u32 + 2) {
        let from = 0.5 * n as f64 + 0.5;
        for (te, list) in [
            (true, zeros(|x| spherical_j(n, x), 400, from, xmax + 0.05)),
            (
                false,
                zeros(|x| riccati_prime(n, x), 400, from, xmax + 0.05),
            ),
        ] {
            for (p, &x) in list.iter().enumerate() {
                let f = C0 * x / (2.0 * PI * radius);
                if f <= fmax_hz {
                    out.push(Mode {
                        name: format!("{}{}{}", if te { "TE" } else { "TM" }, n, p + 1),
                        f_hz: f,
                        degeneracy: 2 * n as usize + 1,
                        e_axes: [true; 3],
                    });
                }
            }
        }
    }
    out
}

/// Box modes by counting the independent fields at each wave vector. Along axis `a` the wave
/// number is `k_a = l_a π / L_a` for a same-kind wall pair and `(l_a + 1/2) π / L_a` for a
/// PEC/PMC pair (l_a = 0, 1, ...). Field component `c` varies along axis `a` as a cosine when
/// `c = a` and the wall at 0 is PEC, or `c != a` and it is PMC, as a sine otherwise; it
/// vanishes when one of its factors is a sine with k = 0. The modes at the triple number
/// (non-vanishing components) - (1 if one of them has `k_c != 0`: the divergence condition
/// `k · E = 0` removes one). Names: two modes are `TE_lmn` and `TM_lmn` (with respect to z),
/// or `TEM_lmn` (degeneracy 2) when the wave vector is along z; one mode is `TM_lmn` when
/// its field is `E_z` alone, `TE_lmn` otherwise. For a PEC box this is the usual list
/// (`TE_lmn`: n >= 1, l + m >= 1; `TM_lmn`: l, m >= 1).
fn box_modes(l: [f64; 3], walls: [Walls; 3], fmax_hz: f64) -> Vec<Mode> {
    let mut out = Vec::new();
    let kmax = 2.0 * PI * fmax_hz / C0;
    let half = |a: usize| if walls[a] == Walls::PecPmc { 0.5 } else { 0.0 };
    let lim: Vec<u32> = (0..3)
        .map(|a| (kmax * l[a] / PI).ceil().min(1e6) as u32 + 1)
        .collect();
    for i in 0..=lim[0] {
        for j in 0..=lim[1] {
            for k in 0..=lim[2] {
                let idx = [i, j, k];
                let kv: Vec<f64> = (0..3)
                    .map(|a| (idx[a] as f64 + half(a)) * PI / l[a])
                    .collect();
                let kk = (kv[0] * kv[0] + kv[1] * kv[1] + kv[2] * kv[2]).sqrt();
                if kk == 0.0 || kk > kmax {
                    continue;
                }
                let alive: Vec<bool> = (0..3)
                    .map(|c| {
                        (0..3).all(|a| {
                            let pec0 = walls[a] != Walls::PmcPmc;
                            let cosine = (c == a) == pec0;
                            cosine || kv[a] != 0.0
                        })
                    })
                    .collect();
                let n_alive = alive.iter().filter(|&&x| x).count();
                let constrained = (0..3).any(|c| alive[c] && kv[c] != 0.0);
                let count = n_alive - usize::from(constrained);
                let f = C0 * kk / (2.0 * PI);
                let e_axes = [alive[0], alive[1], alive[2]];
                let tag = format!("{i}{j}{k}");
                match count {
                    0 => {}
                    1 => out.push(Mode {
                        name: format!(
                            "{}{tag}",
                            if e_axes == [false, false, true] {
                                "TM"
                            } else {
                                "TE"
                            }
                        ),
                        f_hz: f,
                        degeneracy: 1,
                        e_axes,
                    }),
                    _ if kv[0] == 0.0 && kv[1] == 0.0 => out.push(Mode {
                        name: format!("TEM{tag}"),
                        f_hz: f,
                        degeneracy: count,
                        e_axes,
                    }),
                    _ => {
                        for te in [true, false] {
                            out.push(Mode {
                                name: format!("{}{tag}", if te { "TE" } else { "TM" }),
                                f_hz: f,
                                degeneracy: 1,
                                e_axes,
                            });
                        }
                    }
                }
            }
        }
    }
    out
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
    fn cylinder_wall_q_matches_closed_forms() {
        let (a, d, sigma) = (1.0, 0.5, 5.8e7);
        let mu0 = crate::problem::MU0;
        // TM_mn0: Q = a d / (δ (a + d)), δ = sqrt(2 / (ω μ₀ σ))
        for (name, x) in [("TM010", bessel_zero(0, 1)), ("TM110", bessel_zero(1, 1))] {
            let omega = C0 * x / a;
            let delta = (2.0 / (omega * mu0 * sigma)).sqrt();
            let want = a * d / (delta * (a + d));
            let got = cylinder_wall_q(name, a, d, sigma, 1.0).unwrap();
            assert!((got / want - 1.0).abs() < 1e-6, "{name}: {got} vs {want}");
        }
        // TM010 of the design note's pillbox: about 5.4e4 for copper
        let q = cylinder_wall_q("TM010", a, d, sigma, 1.0).unwrap();
        assert!((q - 5.4e4).abs() < 0.01e4, "{q}");
        // TE_nml: Pozar, Microwave Engineering (4th ed.), eq. 6.51, an independent closed form
        let (m, x) = (1.0, bessel_prime_zero(1, 1));
        let beta = PI / d;
        let k = ((x / a).powi(2) + beta * beta).sqrt();
        let rs = (k * C0 * mu0 / (2.0 * sigma)).sqrt();
        let eta = mu0 * C0;
        let want = (k * a).powi(3) * eta * a * d / (4.0 * x * x * rs) * (1.0 - (m / x).powi(2))
            / ((a * d / 2.0) * (1.0 + (beta * a * m / (x * x)).powi(2))
                + (beta * a * a / x).powi(2) * (1.0 - (m / x).powi(2)));
        let got = cylinder_wall_q("TE111", a, d, sigma, 1.0).unwrap();
        assert!((got / want - 1.0).abs() < 1e-6, "TE111: {got} vs {want}");
        // Q scales as sqrt(σ / μ_c); not a cylinder mode: None
        let q4 = cylinder_wall_q("TE111", a, d, 4.0 * sigma, 1.0).unwrap();
        assert!((q4 / got - 2.0).abs() < 1e-12);
        assert!(cylinder_wall_q("TE110", a, d, sigma, 1.0).is_none());
        assert!(cylinder_wall_q("TEM00", a, d, sigma, 1.0).is_none());
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

    /// The usual PEC box list: `TE_lmn` (n >= 1, l + m >= 1) and `TM_lmn` (l, m >= 1).
    fn pec_box_reference(a: f64, b: f64, d: f64, fmax: f64) -> Vec<(String, f64)> {
        let mut v = Vec::new();
        for l in 0..30u32 {
            for m in 0..30u32 {
                for n in 0..30u32 {
                    let f = 0.5
                        * C0
                        * ((l as f64 / a).powi(2)
                            + (m as f64 / b).powi(2)
                            + (n as f64 / d).powi(2))
                        .sqrt();
                    if f > fmax || f == 0.0 {
                        continue;
                    }
                    if n >= 1 && l + m >= 1 {
                        v.push((format!("TE{l}{m}{n}"), f));
                    }
                    if l >= 1 && m >= 1 {
                        v.push((format!("TM{l}{m}{n}"), f));
                    }
                }
            }
        }
        v.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
        v
    }

    #[test]
    fn the_counting_rule_reproduces_the_pec_box_list() {
        let (a, b, d) = (1.0, 0.73, 0.41);
        let fmax = 1.6e9;
        let got: Vec<(String, f64)> = Cavity::Box { a, b, d }
            .modes(fmax)
            .into_iter()
            .map(|m| {
                assert_eq!(m.degeneracy, 1);
                (m.name, m.f_hz)
            })
            .collect();
        let want = pec_box_reference(a, b, d, fmax);
        assert!(want.len() > 100);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.0, w.0);
            assert!((g.1 - w.1).abs() < 1e-6 * w.1);
        }
        // TM_lm0 has E_z only, TE_0mn E_x only.
        let m = Cavity::Box { a, b, d }.modes(fmax);
        let tm110 = m.iter().find(|x| x.name == "TM110").unwrap();
        assert_eq!(tm110.e_axes, [false, false, true]);
        let te011 = m.iter().find(|x| x.name == "TE011").unwrap();
        assert_eq!(te011.e_axes, [true, false, false]);
    }

    fn spectrum_of(c: Cavity, fmax: f64) -> Vec<(f64, usize)> {
        c.modes(fmax)
            .iter()
            .map(|m| (m.f_hz, m.degeneracy))
            .collect()
    }

    fn same_spectrum(x: &[(f64, usize)], y: &[(f64, usize)]) {
        let expand = |v: &[(f64, usize)]| {
            let mut e: Vec<f64> = v
                .iter()
                .flat_map(|&(f, d)| std::iter::repeat_n(f, d))
                .collect();
            e.sort_by(f64::total_cmp);
            e
        };
        let (ex, ey) = (expand(x), expand(y));
        assert_eq!(ex.len(), ey.len());
        for (a, b) in ex.iter().zip(&ey) {
            assert!((a - b).abs() < 1e-6 * b, "{a} vs {b}");
        }
    }

    #[test]
    fn pmc_and_mixed_walls_follow_duality_and_mirror_images() {
        let (a, b, d) = (0.9, 0.6, 0.35);
        let fmax = 2e9;
        // PMC box: the dual of the PEC box (E <-> H), same frequencies and degeneracies.
        same_spectrum(
            &spectrum_of(
                Cavity::WalledBox {
                    a,
                    b,
                    d,
                    walls: [Walls::PmcPmc; 3],
                },
                fmax,
            ),
            &spectrum_of(Cavity::Box { a, b, d }, fmax),
        );
        // A PMC wall at z = d is the mirror plane of a PEC box of height 2d: its modes are
        // those of the tall box whose E_x, E_y are even about z = d, i.e. n odd.
        let half = spectrum_of(
            Cavity::WalledBox {
                a,
                b,
                d,
                walls: [Walls::PecPec, Walls::PecPec, Walls::PecPmc],
            },
            fmax,
        );
        let tall: Vec<(f64, usize)> = Cavity::Box { a, b, d: 2.0 * d }
            .modes(fmax)
            .iter()
            .filter(|m| m.name[4..].parse::<u32>().unwrap() % 2 == 1)
            .map(|m| (m.f_hz, m.degeneracy))
            .collect();
        assert!(half.len() > 20);
        same_spectrum(&half, &tall);
    }

    /// Weyl's law for the electromagnetic field in a cavity of volume V: N(k) = V k³ / (3π²)
    /// modes with wave number below k (each degeneracy counted), up to O(k) corrections.
    #[test]
    fn catalogues_are_complete_by_weyl_s_law() {
        let kmax: f64 = 60.0; // 1/m
        let fmax = C0 * kmax / (2.0 * PI);
        for (c, v) in [
            (
                Cavity::Cylinder {
                    radius: 0.5,
                    height: 0.8,
                },
                PI * 0.25 * 0.8,
            ),
            (
                Cavity::Sphere { radius: 0.45 },
                4.0 / 3.0 * PI * 0.45f64.powi(3),
            ),
            (
                Cavity::Box {
                    a: 0.7,
                    b: 0.5,
                    d: 0.6,
                },
                0.7 * 0.5 * 0.6,
            ),
        ] {
            let n: usize = c.modes(fmax).iter().map(|m| m.degeneracy).sum();
            let weyl = v * kmax.powi(3) / (3.0 * PI * PI);
            let e = (n as f64 - weyl) / weyl;
            eprintln!("{c:?}: {n} modes, Weyl {weyl:.0} ({e:+.4})");
            assert!(e.abs() < 0.02, "{c:?}: {n} modes, Weyl {weyl:.0} ({e:+.3})");
        }
    }

    #[test]
    fn a_homogeneous_fill_divides_frequencies_by_the_index() {
        let c = Cavity::Cylinder {
            radius: 1.0,
            height: 0.5,
        };
        let vac = c.modes(700e6);
        let filled = c.catalogue(700e6 / 2.0, 2.5, 1.6); // n = 2
        assert_eq!(vac.len(), filled.len());
        for (v, f) in vac.iter().zip(&filled) {
            assert_eq!(v.name, f.name);
            assert!((v.f_hz / 2.0 - f.f_hz).abs() < 1e-9 * f.f_hz);
        }
        let tm010 = &filled[0];
        assert_eq!(
            (tm010.name.as_str(), tm010.e_axes),
            ("TM010", [false, false, true])
        );
        assert!(c.catalogue(1e9, -1.0, 1.0).is_empty());
    }
}
