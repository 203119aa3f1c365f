//! The stable time step (design note §9): `Δt = CFL · 2 / sqrt(ρ(K))`,
//! `K = Meps⁻¹ C̃ Mmu⁻¹ C`, with ρ estimated by power iteration (generalised Rayleigh
//! quotient in the `Meps` inner product) and enlarged by a 2% margin.

use crate::dga::Dga;
use crate::error::{Error, Result};

/// Power-iteration estimate of ρ(K) and its margin ([`crate::backend::cpu::spectral_radius`]).
pub use crate::backend::cpu::{RHO_MARGIN, spectral_radius};

/// The stable time step (in metres of light travel) for a CFL number in (0, 1].
pub fn time_step(dga: &Dga, cfl: f64) -> Result<(f64, f64)> {
    if !(cfl > 0.0 && cfl <= 1.0) {
        return Err(Error::config("cfl", cfl, "must be in (0, 1]"));
    }
    // the power iteration's Rayleigh quotient is in the Meps inner product
    dga.require_masses("the stable time step")?;
    let rho = spectral_radius(dga, 60, 0x5eed) * RHO_MARGIN;
    Ok((cfl * 2.0 / rho.sqrt(), rho))
}

/// A dispersive pole of a run as the time step sees it: `rate` (rad per metre of light
/// travel: [`pole_rate`](crate::problem::dispersion_relation::pole_rate)` / c₀`) and a name
/// for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct PoleRate {
    pub what: String,
    pub rate: f64,
}

/// The poles of every dispersive material of `media`.
pub fn pole_rates(media: &crate::problem::Media) -> Vec<PoleRate> {
    use crate::problem::dispersion::Pole;
    use crate::problem::dispersion_relation::pole_rate;
    let mut out = vec![];
    for (name, eps_inf, poles) in media.dispersive_materials() {
        for p in poles {
            let kind = match p {
                Pole::Debye { .. } => "Debye",
                Pole::Drude { .. } => "Drude",
                Pole::Lorentz { .. } => "Lorentz",
            };
            out.push(PoleRate {
                what: format!("the {kind} pole of material '{name}'"),
                rate: pole_rate(p, eps_inf) / crate::util::C0,
            });
        }
    }
    out
}

/// The default time step (metres) where dispersive poles enter: the CFL step `dt` of a mesh
/// whose operator's spectral bound is `rho` (1/m², margin included), shortened so that every
/// pole the mesh carries (`rate ≤ √ρ`) turns by at most
/// [`POLE_THETA`](crate::problem::dispersion_relation::POLE_THETA) per step. A pole above
/// every frequency of the mesh does not limit it (the bilinear map keeps it stable and
/// reproduces its low-frequency tail); both cases are told in `notices`.
pub fn pole_limited(dt: f64, rho: f64, poles: &[PoleRate], notices: &mut Vec<String>) -> f64 {
    use crate::problem::dispersion_relation::POLE_THETA;
    let c0 = crate::util::C0;
    let top = rho.sqrt();
    let mut out = dt;
    let mut by = None;
    for p in poles {
        if p.rate > top {
            notices.push(format!(
                "{} ({:.4e} Hz) lies above every frequency this mesh carries ({:.4e} Hz): it does not limit the time step",
                p.what,
                p.rate * c0 / std::f64::consts::TAU,
                top * c0 / std::f64::consts::TAU
            ));
        } else if POLE_THETA / p.rate < out {
            out = POLE_THETA / p.rate;
            by = Some(p);
        }
    }
    if let Some(p) = by {
        notices.push(format!(
            "the time step is {:.4e} s, set by {} at {:.4e} Hz (ω Δt ≤ {POLE_THETA}: 31 steps per period; the mesh alone allows {:.4e} s, where ω Δt = {:.2}); --dt sets it",
            out / c0,
            p.what,
            p.rate * c0 / std::f64::consts::TAU,
            dt / c0,
            p.rate * dt
        ));
    }
    out
}

/// A notice for each pole that a given time step `dt` (metres) resolves more coarsely than
/// the default would (`rate · dt >` [`POLE_THETA`](crate::problem::dispersion_relation::POLE_THETA)
/// below the step's Nyquist rate `π / dt`).
pub fn check_given_against_poles(dt: f64, poles: &[PoleRate], notices: &mut Vec<String>) {
    use crate::problem::dispersion_relation::POLE_THETA;
    for p in poles {
        let theta = p.rate * dt;
        if theta > POLE_THETA && theta < std::f64::consts::PI {
            notices.push(format!(
                "the given dt turns {} by ω Δt = {theta:.2} per step (the default keeps ≤ {POLE_THETA}): its frequencies carry the bilinear warping, about {:.2}%",
                p.what,
                100.0 * theta * theta / 12.0
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pole(rate: f64) -> PoleRate {
        PoleRate {
            what: format!("pole {rate}"),
            rate,
        }
    }

    #[test]
    fn poles_the_mesh_carries_shorten_the_step_and_say_so() {
        let mut n = vec![];
        // ρ = 100 (top rate 10 rad/m), CFL step 0.18: a pole at rate 5 needs 0.04
        let dt = pole_limited(0.18, 100.0, &[pole(5.0), pole(2.0)], &mut n);
        assert!((dt - 0.04).abs() < 1e-15, "{dt}");
        assert_eq!(n.len(), 1);
        assert!(
            n[0].contains("pole 5") && n[0].contains("ω Δt = 0.90"),
            "{}",
            n[0]
        );
        // a slow pole leaves the step alone, silently
        let mut n = vec![];
        assert_eq!(pole_limited(0.18, 100.0, &[pole(0.5)], &mut n), 0.18);
        assert!(n.is_empty());
        // a pole above the mesh's spectrum does not limit it, and that is said
        let mut n = vec![];
        assert_eq!(pole_limited(0.18, 100.0, &[pole(1e6)], &mut n), 0.18);
        assert!(n.len() == 1 && n[0].contains("does not limit"), "{n:?}");
    }

    #[test]
    fn a_coarse_given_step_is_told() {
        let mut n = vec![];
        check_given_against_poles(0.1, &[pole(5.0), pole(1.0), pole(1e3)], &mut n);
        assert!(
            n.len() == 1 && n[0].contains("pole 5") && n[0].contains("0.50"),
            "{n:?}"
        );
    }
}
