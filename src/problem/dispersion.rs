//! Dispersive media: Debye, Drude and Lorentz poles and their bilinear (Möbius) z-transforms
//! (design note §13; seed 004, §2.3).
//!
//! A dispersive material has `ε(s) = ε∞ + Σ_p χ_p(s)` with the Laplace variable `s` (a field
//! `e^{st}`; a time-harmonic field is `s = iω` in the engineering convention, so the issue's
//! `1 + iωτ` Debye denominator is `1 + sτ`). The poles, in SI units (seconds, hertz):
//!
//! ```text
//!     Debye    χ(s) = Δε / (1 + s τ)
//!     Drude    χ(s) = ω_p² / (s² + γ s)                 ω_p = 2π f_p
//!     Lorentz  χ(s) = Δε ω₀² / (ω₀² + 2 δ s + s²)       ω₀ = 2π f₀
//! ```
//!
//! Each is mapped to `z` by the bilinear transform `s = (2/Δt)(1 − z⁻¹)/(1 + z⁻¹)`, giving
//! `χ(z) = (b₀ + b₁ z⁻¹ + b₂ z⁻²) / (1 + a₁ z⁻¹ + a₂ z⁻²)` ([`Biquad`]), realised in transposed
//! direct form II ([`Tdf2`]): two state values per pole and per filtered quantity, nothing
//! else kept from the past. The map is exact on the frequency axis up to the warping
//! `ω_d = (2/Δt) tan(ω Δt / 2)` inside the pole (tested), preserves stability (poles with
//! positive damping map inside the unit circle) and the static value `χ(0)` (`z = 1`).
//!
//! **Discrete dispersion relation of a filled cavity.** With the leapfrog of design note §8 and
//! a homogeneous fill, the electric update `(ε∞ + χ(z)) (U^{n+1} − U^n) = Δt C̃ F^{n+1/2}`
//! turns a lossless discrete cavity mode of the vacuum operator (`K x = λ x`, `λ = ω_c²` in
//! the code's units) into the solutions `z = e^{iθ}`, `θ = Ω Δt`, of
//! `(ε∞ + χ(z)) · 4 sin²(θ/2) / Δt² = λ`. For a lossless Drude medium (`γ = 0`),
//! `χ(e^{iθ}) = −(ω_p Δt / 2)² cot²(θ/2)`, which gives exactly
//!
//! ```text
//!     Ω̂² = (λ + ω_p²) / (ε∞ + ω_p² Δt² / 4),      Ω̂ = (2/Δt) sin(θ/2)
//! ```
//!
//! ([`drude_discrete_omega_hat`]): the continuum `ω² = (ω_c² + ω_p²)/ε∞` up to the bilinear
//! warping factor `1 / (1 + ω_p² Δt² / (4 ε∞))`. `Ω̂` is the leapfrog-corrected frequency the
//! resonator job reports, so a Drude-filled cavity can be checked to round-off.

use crate::error::{Error, Result};
use crate::util::C64;

/// One pole of a susceptibility, in SI units.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Pole {
    /// `Δε / (1 + sτ)`: `delta_eps` (> 0), `tau` (s, > 0).
    Debye { delta_eps: f64, tau: f64 },
    /// `ω_p² / (s² + γ s)`: plasma frequency `f_p` (Hz, > 0), collision rate `gamma` (1/s, ≥ 0).
    Drude { f_p: f64, gamma: f64 },
    /// `Δε ω₀² / (ω₀² + 2δ s + s²)`: `delta_eps` (> 0), resonance `f_0` (Hz, > 0), damping
    /// `delta` (1/s, ≥ 0).
    Lorentz {
        delta_eps: f64,
        f_0: f64,
        delta: f64,
    },
}

impl Pole {
    /// The pole as a ratio of polynomials in `s` of degree ≤ 2: `(num, den)` with
    /// coefficients of `s⁰, s¹, s²`.
    pub fn rational(&self) -> ([f64; 3], [f64; 3]) {
        let tau = std::f64::consts::TAU;
        match *self {
            Pole::Debye { delta_eps, tau: t } => ([delta_eps, 0.0, 0.0], [1.0, t, 0.0]),
            Pole::Drude { f_p, gamma } => {
                let wp = tau * f_p;
                ([wp * wp, 0.0, 0.0], [0.0, gamma, 1.0])
            }
            Pole::Lorentz {
                delta_eps,
                f_0,
                delta,
            } => {
                let w0 = tau * f_0;
                ([delta_eps * w0 * w0, 0.0, 0.0], [w0 * w0, 2.0 * delta, 1.0])
            }
        }
    }

    /// `χ(s)`.
    pub fn chi(&self, s: C64) -> C64 {
        let (n, d) = self.rational();
        let p = |c: [f64; 3]| C64::new(c[0], 0.0) + s * c[1] + s * s * c[2];
        p(n) / p(d)
    }

    /// Checks the values; `what` names the material and pole in messages.
    pub fn validate(&self, what: &str) -> Result<()> {
        let (vals, names): (Vec<f64>, Vec<&str>) = match *self {
            Pole::Debye { delta_eps, tau } => (vec![delta_eps, tau], vec!["delta_eps", "tau"]),
            Pole::Drude { f_p, gamma } => (vec![f_p, gamma], vec!["f_p", "gamma"]),
            Pole::Lorentz {
                delta_eps,
                f_0,
                delta,
            } => (
                vec![delta_eps, f_0, delta],
                vec!["delta_eps", "f_0", "delta"],
            ),
        };
        for (v, n) in vals.iter().zip(names) {
            let may_be_zero = n == "gamma" || n == "delta";
            let ok = v.is_finite() && (*v > 0.0 || (may_be_zero && *v == 0.0));
            if !ok {
                return Err(Error::config(
                    n,
                    v,
                    format!(
                        "must be finite and {} ({what})",
                        if may_be_zero {
                            "not negative"
                        } else {
                            "positive"
                        }
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The bilinear transform of the pole for a time step `dt` (in the same time unit as the
    /// pole's rates: seconds for SI poles).
    pub fn bilinear(&self, dt: f64) -> Biquad {
        let (n, d) = self.rational();
        Biquad::bilinear(n, d, dt)
    }
}

/// A Debye pole as written in a config: `debye = [{ delta_eps = 74, tau = 8.3e-12 }]`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebyeSpec {
    pub delta_eps: f64,
    /// Relaxation time τ (s).
    pub tau: f64,
}

/// A Drude pole as written in a config: `drude = [{ f_p = 2e9, gamma = 1e7 }]`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrudeSpec {
    /// Plasma frequency f_p (Hz), `ω_p = 2π f_p`.
    pub f_p: f64,
    /// Collision rate γ (1/s); 0 (lossless) when left out.
    #[serde(default)]
    pub gamma: f64,
}

/// A Lorentz pole pair as written in a config: `lorentz = [{ delta_eps = 2, f_0 = 3e8,
/// delta = 1e6 }]`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LorentzSpec {
    pub delta_eps: f64,
    /// Resonance frequency f_0 (Hz), `ω₀ = 2π f_0`.
    pub f_0: f64,
    /// Damping δ (1/s); 0 (lossless) when left out.
    #[serde(default)]
    pub delta: f64,
}

impl Pole {
    /// The same pole with its rates in the library's time unit, metres of light travel
    /// (`t_m = c₀ t_s`): rates divided by c₀, times multiplied by it.
    pub fn in_metres(&self) -> Pole {
        let c = crate::util::C0;
        match *self {
            Pole::Debye { delta_eps, tau } => Pole::Debye {
                delta_eps,
                tau: tau * c,
            },
            Pole::Drude { f_p, gamma } => Pole::Drude {
                f_p: f_p / c,
                gamma: gamma / c,
            },
            Pole::Lorentz {
                delta_eps,
                f_0,
                delta,
            } => Pole::Lorentz {
                delta_eps,
                f_0: f_0 / c,
                delta: delta / c,
            },
        }
    }

    /// Whether the pole dissipates (Debye always; Drude and Lorentz with γ, δ > 0).
    pub fn is_lossy(&self) -> bool {
        match *self {
            Pole::Debye { .. } => true,
            Pole::Drude { gamma, .. } => gamma > 0.0,
            Pole::Lorentz { delta, .. } => delta > 0.0,
        }
    }

    /// How to read the pole's stored energy from its TDF-II state for time step `dt`
    /// ([`AuxEnergy`]).
    pub fn aux_energy(&self, dt: f64) -> AuxEnergy {
        let f = self.bilinear(dt);
        let (n, d) = self.rational();
        if d[2] == 0.0 {
            // Debye, τ dP/dt + P = Δε E: W = P·M0·P / (2Δε); s₁ = b₁U − a₁P
            return AuxEnergy {
                f,
                second: false,
                alpha_p: 0.0,
                j_scale: 0.0,
                wj: 0.0,
                wp: 0.5 * d[0] / n[0],
            };
        }
        // χ = n₀/(s² + d₁ s + d₀): dP/dt = J, dJ/dt = n₀ E − d₀ P − d₁ J.
        let (n0, d0, d1) = (n[0], d[0], d[1]);
        let h = dt;
        let det = 1.0 + h * d1 / 2.0 + h * h * d0 / 4.0;
        AuxEnergy {
            f,
            second: true,
            alpha_p: (1.0 + h * d1 / 2.0 - h * h * d0 / 4.0) / det,
            j_scale: det / h,
            wj: 0.5 / n0,
            wp: 0.5 * d0 / n0,
        }
    }
}

/// The energy stored in one pole, read from its transposed-direct-form-II state.
///
/// The bilinear transform of `χ(s)` is, input for output, the trapezoidal rule applied to
/// the pole's ODE: `dP/dt = J, dJ/dt = n₀E − d₀P − d₁J` (second order; `χ = n₀/(s² + d₁s +
/// d₀)`) or `τ dP/dt + P = Δε E` (Debye). With the leapfrog's Ampère update
/// `Meps∞ (U⁺ − U) + M0 (P⁺ − P) = Δt C̃F`, the inner product with `Ū = (U⁺ + U)/2` gives
/// exactly
///
/// ```text
///     W⁺ − W = −Δt d₁ J̄·M0·J̄ / n₀          W_pole = (J·M0·J + d₀ P·M0·P) / (2 n₀)
///     W⁺ − W = −τ ΔP·M0·ΔP / (Δt Δε)        W_pole = P·M0·P / (2 Δε)              (Debye)
/// ```
///
/// so the field energy plus these terms is conserved for lossless Drude and Lorentz poles
/// and decreases by the dissipation otherwise. The TDF-II state after step n relates to the
/// trapezoidal state by `s₂ = b₂U − a₂P` and `s₁ = α_P P + (Δt/det) J + b₀ U`
/// (`det = 1 + Δt d₁/2 + Δt² d₀/4`, `α_P = (1 + Δt d₁/2 − Δt² d₀/4)/det`); Debye:
/// `s₁ = b₁U − a₁P`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuxEnergy {
    pub f: Biquad,
    second: bool,
    alpha_p: f64,
    j_scale: f64,
    /// `W = wj J·M0·J + wp P·M0·P`.
    pub wj: f64,
    pub wp: f64,
}

impl AuxEnergy {
    /// `(P, J)` of one DoF from `U` and the filter state (`J = 0` for Debye).
    pub fn pj(&self, u: f64, s1: f64, s2: f64) -> (f64, f64) {
        let (b, a) = (self.f.b, self.f.a);
        if !self.second {
            return ((b[1] * u - s1) / a[1], 0.0);
        }
        let p = (b[2] * u - s2) / a[2];
        (p, (s1 - self.alpha_p * p - b[0] * u) * self.j_scale)
    }
}

/// `χ(z) = (b₀ + b₁ z⁻¹ + b₂ z⁻²) / (1 + a₁ z⁻¹ + a₂ z⁻²)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Biquad {
    pub b: [f64; 3],
    /// `a[0] = 1`.
    pub a: [f64; 3],
}

impl Biquad {
    /// Substitutes `s = k (1 − q)/(1 + q)`, `q = z⁻¹`, `k = 2/dt` into
    /// `Σ num_i s^i / Σ den_i s^i` and multiplies through by `(1 + q)^m`, `m` the degree
    /// (1 or 2): `s^i (1+q)^m = k^i (1 − q)^i (1 + q)^(m−i)`. A first-order pole (Debye) stays
    /// first order (`b₂ = a₂ = 0`): no cancelled pole at `z = −1` is left in the filter.
    pub fn bilinear(num: [f64; 3], den: [f64; 3], dt: f64) -> Biquad {
        let k = 2.0 / dt;
        let m = if num[2] != 0.0 || den[2] != 0.0 { 2 } else { 1 };
        // (1-q)^i (1+q)^(m-i) in powers of q
        let basis: [[f64; 3]; 3] = if m == 2 {
            [[1.0, 2.0, 1.0], [1.0, 0.0, -1.0], [1.0, -2.0, 1.0]]
        } else {
            [[1.0, 1.0, 0.0], [1.0, -1.0, 0.0], [0.0; 3]]
        };
        let map = |c: [f64; 3]| {
            let mut out = [0.0; 3];
            let mut ki = 1.0;
            for i in 0..=m {
                for j in 0..3 {
                    out[j] += c[i] * ki * basis[i][j];
                }
                ki *= k;
            }
            out
        };
        let (b, a) = (map(num), map(den));
        let a0 = a[0];
        Biquad {
            b: b.map(|x| x / a0),
            a: a.map(|x| x / a0),
        }
    }

    /// `χ(z)`.
    pub fn eval(&self, z: C64) -> C64 {
        let q = z.inv();
        let p = |c: [f64; 3]| C64::new(c[0], 0.0) + q * c[1] + q * q * c[2];
        p(self.b) / p(self.a)
    }

    /// The poles in z: the roots of `z² + a₁ z + a₂` (second order) or `z + a₁` (first).
    pub fn poles(&self) -> Vec<C64> {
        let (p, q) = (self.a[1], self.a[2]);
        if q == 0.0 {
            return vec![C64::new(-p, 0.0)];
        }
        let disc = C64::new(p * p / 4.0 - q, 0.0).sqrt();
        vec![
            C64::new(-p / 2.0, 0.0) + disc,
            C64::new(-p / 2.0, 0.0) - disc,
        ]
    }
}

#[cfg(test)]
/// Transposed direct form II of a [`Biquad`]: `y = b₀ x + s₁`, then
/// `s₁ ← b₁ x − a₁ y + s₂`, `s₂ ← b₂ x − a₂ y`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tdf2 {
    pub s1: f64,
    pub s2: f64,
}

#[cfg(test)]
impl Tdf2 {
    /// One sample through the filter `f`.
    #[inline]
    pub fn step(&mut self, f: &Biquad, x: f64) -> f64 {
        let y = f.b[0] * x + self.s1;
        self.s1 = f.b[1] * x - f.a[1] * y + self.s2;
        self.s2 = f.b[2] * x - f.a[2] * y;
        y
    }
}

/// The leapfrog-corrected angular frequency `Ω̂` of a mode of a cavity filled with a lossless
/// Drude medium (`ε∞`, `ω_p`), given the vacuum mode's `ω_c² = λ` of the same discrete
/// operator and the time step (all in one time unit): `Ω̂² = (λ + ω_p²)/(ε∞ + ω_p² Δt²/4)`.
pub fn drude_discrete_omega_hat(lambda: f64, eps_inf: f64, omega_p: f64, dt: f64) -> f64 {
    ((lambda + omega_p * omega_p) / (eps_inf + omega_p * omega_p * dt * dt / 4.0)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::Rng;

    fn poles(rng: &mut Rng) -> Vec<Pole> {
        vec![
            Pole::Debye {
                delta_eps: 1.0 + 70.0 * rng.uniform(),
                tau: 1e-11 * (1.0 + rng.uniform()),
            },
            Pole::Drude {
                f_p: 1e9 * (1.0 + 5.0 * rng.uniform()),
                gamma: 1e8 * rng.uniform(),
            },
            Pole::Lorentz {
                delta_eps: 0.5 + rng.uniform(),
                f_0: 1e9 * (1.0 + rng.uniform()),
                delta: 1e8 * rng.uniform(),
            },
        ]
    }

    /// On the unit circle the bilinear transform equals χ at the warped frequency exactly:
    /// `χ_z(e^{iωΔt}) = χ(i (2/Δt) tan(ωΔt/2))`; the static value is kept; damped poles map
    /// inside the unit circle.
    #[test]
    fn bilinear_is_chi_at_the_warped_frequency() {
        let mut rng = Rng::new(0xd15);
        for _ in 0..20 {
            let dt = 1e-12 * (1.0 + 10.0 * rng.uniform());
            for p in poles(&mut rng) {
                let f = p.bilinear(dt);
                for _ in 0..10 {
                    let w = rng.uniform() * 2.5 / dt;
                    let z = C64::from_polar(1.0, w * dt);
                    let wd = 2.0 / dt * (w * dt / 2.0).tan();
                    let (a, b) = (f.eval(z), p.chi(C64::new(0.0, wd)));
                    assert!((a - b).norm() <= 1e-11 * b.norm(), "{p:?}: {a} vs {b}");
                }
                if !matches!(p, Pole::Drude { .. }) {
                    let (a, b) = (f.eval(C64::new(1.0, 0.0)), p.chi(C64::new(0.0, 0.0)));
                    assert!((a - b).norm() <= 1e-12 * b.norm());
                }
                let damped = match p {
                    Pole::Drude { gamma, .. } => gamma > 0.0,
                    _ => true,
                };
                for z in f.poles() {
                    // a Drude pole keeps its integrator at z = 1
                    if damped && (z - C64::new(1.0, 0.0)).norm() > 1e-9 {
                        assert!(z.norm() < 1.0, "{p:?}: pole {z}");
                    }
                }
            }
        }
    }

    /// The transposed direct form II reproduces the filter's response to a random input: its
    /// z-transform on the unit circle equals `χ(z)` times the input's (a long record of a
    /// decaying filter, compared at a few frequencies through a DFT).
    #[test]
    fn tdf2_realises_the_biquad() {
        let mut rng = Rng::new(0x7df2);
        let dt = 2e-12;
        // poles that decay within the record (per step: Δt/τ = 0.1, δΔt = 4e-3)
        let fast = [
            Pole::Debye {
                delta_eps: 1.0 + 70.0 * rng.uniform(),
                tau: 2e-11,
            },
            Pole::Lorentz {
                delta_eps: 0.5 + rng.uniform(),
                f_0: 1e10 * (1.0 + rng.uniform()),
                delta: 2e9,
            },
        ];
        for p in fast {
            let f = p.bilinear(dt);
            let n = 64;
            let x: Vec<f64> = (0..n).map(|_| rng.sym()).collect();
            let mut st = Tdf2::default();
            // the input, then zeros until the response has decayed
            let len = 20_000;
            let y: Vec<f64> = (0..len)
                .map(|i| st.step(&f, if i < n { x[i] } else { 0.0 }))
                .collect();
            for k in [0.05, 0.3, 1.1] {
                let z = C64::from_polar(1.0, k);
                let dft = |v: &[f64]| {
                    v.iter()
                        .enumerate()
                        .map(|(i, &a)| a * z.powi(-(i as i32)))
                        .sum::<C64>()
                };
                let (got, want) = (dft(&y), f.eval(z) * dft(&x));
                assert!(
                    (got - want).norm() <= 1e-9 * want.norm(),
                    "{p:?} at {k}: {got} vs {want}"
                );
            }
        }
    }

    /// The discrete Drude relation solves `(ε∞ + χ(z)) 4 sin²(θ/2)/Δt² = λ` on the unit circle.
    #[test]
    fn drude_relation_solves_the_discrete_characteristic_equation() {
        let mut rng = Rng::new(0xd7);
        for _ in 0..20 {
            let dt = 1e-11 * (0.5 + rng.uniform());
            let wp = std::f64::consts::TAU * 1e9 * (0.5 + 3.0 * rng.uniform());
            let eps_inf = 1.0 + 3.0 * rng.uniform();
            let lambda = (std::f64::consts::TAU * 1e9 * (0.2 + rng.uniform())).powi(2);
            let w_hat = drude_discrete_omega_hat(lambda, eps_inf, wp, dt);
            let theta = 2.0 * (w_hat * dt / 2.0).asin();
            let p = Pole::Drude {
                f_p: wp / std::f64::consts::TAU,
                gamma: 0.0,
            };
            let chi = p.bilinear(dt).eval(C64::from_polar(1.0, theta));
            let lhs =
                (C64::new(eps_inf, 0.0) + chi) * (4.0 * (theta / 2.0).sin().powi(2) / (dt * dt));
            assert!((lhs - lambda).norm() <= 1e-9 * lambda, "{lhs} vs {lambda}");
        }
    }

    #[test]
    fn bad_poles_are_refused_naming_the_key() {
        let e = Pole::Lorentz {
            delta_eps: 1.0,
            f_0: -1.0,
            delta: 0.0,
        }
        .validate("material water, pole 1")
        .unwrap_err()
        .to_string();
        assert!(e.contains("f_0") && e.contains("water"), "{e}");
        assert!(
            Pole::Drude {
                f_p: 1e9,
                gamma: 0.0
            }
            .validate("x")
            .is_ok()
        );
    }
}
