//! The exact discrete dispersion relation of a cavity filled with one dispersive medium, and
//! its inverse: the correction that turns a line of the time-domain run back into the
//! continuum resonance of the same discrete (spatial) operator (design note §10, §13).
//!
//! Units: SI throughout (seconds, hertz, `s` in 1/s, `λ` in rad²/s²). A field `e^{st}`,
//! `s = −α + iω` (α the amplitude decay rate, ω the angular frequency).
//!
//! **The relation.** A homogeneous fill `ε(s) = ε∞ + Σ_p χ_p(s)` (poles of
//! [`super::dispersion::Pole`]), stepped by the leapfrog with every pole mapped by the bilinear
//! transform `ŝ(z) = (2/Δt)(z − 1)/(z + 1)`, turns a mode of the vacuum operator
//! (`K x = λ x`, here `λ = c² k²` in SI) into the roots `z = e^{sΔt}` of
//!
//! ```text
//!     (ε∞ + χ(ŝ(z))) (z − 2 + z⁻¹) + Δt² λ = 0,
//! ```
//!
//! while the continuum (exact time) resonance of the same mode is the root `s` of
//!
//! ```text
//!     ε(s) s² + λ = 0.
//! ```
//!
//! [`continuum_of_discrete`] takes a measured line `s_d`, recovers `λ` from the first relation
//! (exact: it is linear in `λ`) and solves the second for the root nearest to `s_d`. With no
//! poles this is the leapfrog correction `ω = (2/Δt) sin(ω_d Δt / 2)` of
//! [`crate::spectrum::leapfrog_correction`] (tested); with poles it also undoes the bilinear
//! warping `ω ↦ (2/Δt) tan(ωΔt/2)` inside each pole, which that formula does not know (for a
//! Drude fill it made the corrected frequency worse than the raw one). The correction is exact
//! for a homogeneous fill (every tet the same ε∞, μ and poles); with dispersive media in only
//! part of a mesh no such relation exists.
//!
//! [`pole_rate`] is the angular frequency at which a pole's own dynamics live (the time step
//! resolves it when `pole_rate · Δt ≤` [`POLE_THETA`]).

use super::dispersion::Pole;
use crate::util::C64;
use std::f64::consts::TAU;

/// The largest `ω_pole Δt` of a pole the default time step allows: at most 0.2 rad per step
/// (31 steps per period of the pole), where the bilinear warping of the pole's frequency,
/// `(ωΔt)²/12` relative, is 0.33%. (The correction [`continuum_of_discrete`] undoes that
/// warping exactly in a homogeneous fill; the bound keeps the raw frequencies, the decay of
/// lossy poles and partly filled meshes accurate too.)
pub const POLE_THETA: f64 = 0.2;

/// The angular frequency (rad/s) of a pole's own dynamics in a medium of `eps_inf`: Debye
/// `1/τ`, Drude `max(ω_p/√ε∞, γ)`, Lorentz `max(ω₀ √((ε∞ + Δε)/ε∞), 2δ)` (its longitudinal
/// frequency, the top of the gap between its two branches).
pub fn pole_rate(pole: &Pole, eps_inf: f64) -> f64 {
    match *pole {
        Pole::Debye { tau, .. } => 1.0 / tau,
        Pole::Drude { f_p, gamma } => (TAU * f_p / eps_inf.sqrt()).max(gamma),
        Pole::Lorentz {
            delta_eps,
            f_0,
            delta,
        } => (TAU * f_0 * ((eps_inf + delta_eps) / eps_inf).sqrt()).max(2.0 * delta),
    }
}

/// A polynomial in `s` with real coefficients, lowest degree first.
type Poly = Vec<f64>;

fn mul(a: &[f64], b: &[f64]) -> Poly {
    let mut c = vec![0.0; a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            c[i + j] += x * y;
        }
    }
    c
}

fn add(a: &[f64], b: &[f64]) -> Poly {
    let mut c = vec![0.0; a.len().max(b.len())];
    for (i, x) in a.iter().enumerate() {
        c[i] += x;
    }
    for (i, y) in b.iter().enumerate() {
        c[i] += y;
    }
    c
}

/// `(p(s), p'(s))` by Horner's rule.
fn eval(p: &[f64], s: C64) -> (C64, C64) {
    let (mut v, mut dv) = (C64::new(0.0, 0.0), C64::new(0.0, 0.0));
    for &c in p.iter().rev() {
        dv = dv * s + v;
        v = v * s + c;
    }
    (v, dv)
}

/// `ε(s) s² + λ` with the denominators cleared: `s² (ε∞ D + N) + λ D`, where `D = Π d_p` and
/// `N = Σ_p n_p Π_{q≠p} d_q`; returned as `(s² (ε∞ D + N), D)`.
fn cleared(eps_inf: f64, poles: &[Pole]) -> (Poly, Poly) {
    let rat: Vec<([f64; 3], [f64; 3])> = poles.iter().map(Pole::rational).collect();
    let mut d: Poly = vec![1.0];
    let mut n: Poly = vec![0.0];
    for (np, dp) in &rat {
        // N/D + n_p/d_p = (N d_p + n_p D) / (D d_p)
        n = add(&mul(&n, dp), &mul(np, &d));
        d = mul(&d, dp);
    }
    let a = mul(
        &[0.0, 0.0, 1.0],
        &add(&d.iter().map(|x| eps_inf * x).collect::<Poly>(), &n),
    );
    (a, d)
}

/// The vacuum-operator eigenvalue `λ` (rad²/s²) that the discrete relation of module docs
/// gives for the line `s_d` (1/s) at time step `dt` (s); complex where the line's decay is
/// not that of a closed lossless discretisation (lossy poles, measurement error).
pub fn discrete_lambda(s_d: C64, dt: f64, eps_inf: f64, poles: &[Pole]) -> C64 {
    // with z = e^{sΔt}: z − 2 + z⁻¹ = 4 sinh²(sΔt/2) and ŝ(z) = (2/Δt) tanh(sΔt/2),
    // written so to avoid the cancellation of z − 2 + z⁻¹ at small sΔt
    let half = s_d * (0.5 * dt);
    let s_hat = half.tanh() * (2.0 / dt);
    let chi: C64 = poles.iter().map(|p| p.chi(s_hat)).sum();
    let sh = half.sinh();
    -(C64::new(eps_inf, 0.0) + chi) * sh * sh * (4.0 / (dt * dt))
}

/// The continuum resonance `s` (1/s) of the line `s_d` that the leapfrog with bilinear poles
/// produced at time step `dt` in a homogeneous fill (`eps_inf`, `poles`): module docs. Newton's
/// method on the cleared polynomial from `s_d` (the discrete root tends to the continuum one
/// as `Δt → 0`, so the nearest root is the one sought); None where it does not converge to a
/// root within a third of `|s_d|` of the start (a line far outside what the time step
/// resolves).
pub fn continuum_of_discrete(s_d: C64, dt: f64, eps_inf: f64, poles: &[Pole]) -> Option<C64> {
    let lambda = discrete_lambda(s_d, dt, eps_inf, poles);
    let (a, d) = cleared(eps_inf, poles);
    let mut s = s_d;
    for _ in 0..60 {
        let (av, ad) = eval(&a, s);
        let (dv, dd) = eval(&d, s);
        let g = av + lambda * dv;
        let dg = ad + lambda * dd;
        if dg.norm() == 0.0 || !dg.norm().is_finite() {
            return None;
        }
        let step = g / dg;
        s -= step;
        if !(s.re.is_finite() && s.im.is_finite()) || (s - s_d).norm() > s_d.norm() / 3.0 {
            return None;
        }
        if step.norm() <= 1e-15 * s.norm() {
            return Some(s);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::Rng;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// A discrete root of the module's first relation for `λ`, by Newton from the continuum
    /// root (an independent solve of the forward relation, not the code under test).
    fn discrete_root(lambda: f64, dt: f64, eps_inf: f64, poles: &[Pole], s0: C64) -> C64 {
        let f = |s: C64| {
            let z = (s * dt).exp();
            let sh = (z - 1.0) / (z + 1.0) * (2.0 / dt);
            let chi: C64 = poles.iter().map(|p| p.chi(sh)).sum();
            (C64::new(eps_inf, 0.0) + chi) * (z - 2.0 + z.inv()) + dt * dt * lambda
        };
        // (the forward relation as the design note writes it; its residual is checked to
        // 1e-12 of Δt² λ, where the time steps of these tests keep the cancellation small)
        let mut s = s0;
        for _ in 0..100 {
            let h = 1e-7 * s.norm();
            let df = (f(s + h) - f(s - h)) / (2.0 * h);
            let step = f(s) / df;
            s -= step;
            if step.norm() < 1e-15 * s.norm() {
                break;
            }
        }
        assert!(f(s).norm() < 1e-12 * dt * dt * lambda, "{:e}", f(s).norm());
        s
    }

    /// Without poles the inverse is the leapfrog correction `sin(π f Δt)/(π Δt)`.
    #[test]
    fn without_poles_it_is_the_leapfrog_correction() {
        let mut r = Rng::new(0xc0de);
        for _ in 0..20 {
            let dt = 1e-11 * (1.0 + r.uniform());
            let f_td = 1e8 + 3e9 * r.uniform();
            let eps = 1.0 + 9.0 * r.uniform();
            let s = continuum_of_discrete(C64::new(0.0, TAU * f_td), dt, eps, &[]).unwrap();
            let want = crate::spectrum::leapfrog_correction(f_td, dt);
            assert!(rel(s.im / TAU, want) < 1e-13 && s.re.abs() < 1e-6 * s.im);
        }
    }

    /// Lossless Drude and Lorentz fills: the inverse of a discrete root is the closed-form
    /// continuum root (Drude `ω² = (λ + ω_p²)/ε∞`; Lorentz, both branches, the roots in ω² of
    /// `ε∞ ω⁴ − (ε∞ ω₀² + Δε ω₀² + λ) ω² + λ ω₀² = 0`), to round-off, at time steps up to
    /// `ω_pole Δt = 1`, where the discrete roots are percents away.
    #[test]
    fn lossless_poles_invert_to_the_closed_form_roots() {
        let mut r = Rng::new(0xd15c);
        for _ in 0..10 {
            let eps_inf = 1.0 + 3.0 * r.uniform();
            let wc = TAU * (1e8 + 3e8 * r.uniform());
            let lambda = wc * wc;
            // Drude
            let f_p = 1e8 + 3e8 * r.uniform();
            let pole = Pole::Drude { f_p, gamma: 0.0 };
            let wp = TAU * f_p;
            let w = ((lambda + wp * wp) / eps_inf).sqrt();
            let dt = (0.1 + 0.9 * r.uniform()) / w.max(pole_rate(&pole, eps_inf));
            let sd = discrete_root(lambda, dt, eps_inf, &[pole], C64::new(0.0, w));
            let s = continuum_of_discrete(sd, dt, eps_inf, &[pole]).unwrap();
            assert!(
                rel(s.im, w) < 1e-11 && s.re.abs() < 1e-9 * w,
                "Drude {s} vs {w}"
            );
            // Lorentz, both branches
            let (delta_eps, f_0) = (0.5 + 2.0 * r.uniform(), 1e8 + 3e8 * r.uniform());
            let pole = Pole::Lorentz {
                delta_eps,
                f_0,
                delta: 0.0,
            };
            let w0 = TAU * f_0;
            let (qa, qb, qc) = (
                eps_inf,
                -(eps_inf * w0 * w0 + delta_eps * w0 * w0 + lambda),
                lambda * w0 * w0,
            );
            let disc = (qb * qb - 4.0 * qa * qc).sqrt();
            let top = ((-qb + disc) / (2.0 * qa)).sqrt();
            let dt = (0.1 + 0.9 * r.uniform()) / top.max(pole_rate(&pole, eps_inf));
            for w in [((-qb - disc) / (2.0 * qa)).sqrt(), top] {
                let sd = discrete_root(lambda, dt, eps_inf, &[pole], C64::new(0.0, w));
                let s = continuum_of_discrete(sd, dt, eps_inf, &[pole]).unwrap();
                assert!(
                    rel(s.im, w) < 1e-11 && s.re.abs() < 1e-9 * w,
                    "Lorentz {s} vs {w}"
                );
            }
        }
    }

    /// Lossy poles (Debye, damped Drude and Lorentz, two at once): the inverse of a discrete
    /// root solves the continuum relation `ε(s) s² + λ = 0` with the same λ, and lies nearer
    /// to the continuum root the forward solve started from than the discrete root does.
    #[test]
    fn lossy_poles_invert_to_a_root_of_the_continuum_relation() {
        let mut r = Rng::new(0x1055);
        for _ in 0..10 {
            let eps_inf = 1.0 + 3.0 * r.uniform();
            let wc = TAU * (1e8 + 3e8 * r.uniform());
            let lambda = wc * wc;
            let poles = [
                Pole::Debye {
                    delta_eps: 0.2 + r.uniform(),
                    tau: 1e-9 * (0.5 + r.uniform()),
                },
                Pole::Lorentz {
                    delta_eps: 0.3 * r.uniform() + 0.1,
                    f_0: 1e8 + 3e8 * r.uniform(),
                    delta: 1e7 * r.uniform(),
                },
            ];
            let eps = |s: C64| C64::new(eps_inf, 0.0) + poles.iter().map(|p| p.chi(s)).sum::<C64>();
            // a continuum root near the vacuum image, by Newton on ε(s) s² + λ
            let mut s = C64::new(0.0, wc / eps_inf.sqrt());
            for _ in 0..100 {
                let g = |s: C64| eps(s) * s * s + lambda;
                let h = 1e-7 * s.norm();
                s -= g(s) / ((g(s + h) - g(s - h)) / (2.0 * h));
            }
            let dt = 0.3 / s.norm();
            let sd = discrete_root(lambda, dt, eps_inf, &poles, s);
            let back = continuum_of_discrete(sd, dt, eps_inf, &poles).unwrap();
            assert!(
                (back - s).norm() < 1e-9 * s.norm(),
                "{back} vs {s} (discrete {sd})"
            );
            assert!((sd - s).norm() > 1e3 * (back - s).norm());
        }
    }

    #[test]
    fn pole_rates() {
        let l = Pole::Lorentz {
            delta_eps: 3.0,
            f_0: 1e9,
            delta: 0.0,
        };
        assert!(rel(pole_rate(&l, 1.0), TAU * 2e9) < 1e-15);
        let d = Pole::Drude {
            f_p: 1e9,
            gamma: 0.0,
        };
        assert!(rel(pole_rate(&d, 4.0), TAU * 0.5e9) < 1e-15);
        let b = Pole::Debye {
            delta_eps: 70.0,
            tau: 1e-11,
        };
        assert!(rel(pole_rate(&b, 5.0), 1e11) < 1e-15);
    }
}
