//! Limits checked before any work: how many poles and probes a run takes, and the ranges
//! of material values and of the mesh's scale that the arithmetic of a run (f64 on the
//! host, f64 or f32 on a device) carries. Values outside them used to end in NaN after
//! the setup, with the misleading hint "reduce --cfl"; now they are refused with the key
//! and the reason.
//!
//! Why these bounds:
//! - Lengths (the mesh's extent) from 1e-12 m to 1e12 m, as for `--box`: the mass matrices
//!   hold volumes (l³) and inverse lengths, and the energy of the blow-up guard products
//!   of them with the field; within these bounds every such quantity stays inside f32's
//!   1e±38 with a margin of 1e2, and l³ inside f64's normal range for any shape
//!   the mesh checks accept. (A mesh written in the wrong unit, say 1e70, is caught here.)
//! - `eps_r`, `mu_r` and a pole's `delta_eps` from 1e-8 to 1e8: real media span 1 to about
//!   1e5 (colossal-permittivity ceramics; `mu_r` of supermalloy about 1e6); a contrast
//!   above 1e8 between two tets is below f32's resolution (6e-8) in the sums that couple
//!   them, and `eps_r = 1e300` overflowed the energy.
//! - `sigma` up to 1e12 S/m and `sigma_m` up to 1e12 η₀² Ω/m (the matched σ* of such a σ):
//!   silver, the best conductor, has 6.3e7 S/m; a wall that conducts better is a `pec`
//!   wall.
//! - Pole rates (`2π f_p`, `2π f_0`, `1/tau`, `gamma`, `delta`) from 1e-3/s to 1e21/s, the
//!   time step's scale for meshes of 1e-12 m to 1e12 m (Δt ≈ 3e-21 s to 3e3 s) times
//!   1e3 either way: outside it a pole acts on no frequency the run resolves, or its
//!   squared rate leaves f64's normal range (`(2π f_p)²` of `f_p = 1e-300` is 0).
//!
//! The bounds were run: `eps_r` and `mu_r` of 1e8 and 1e-8 (both at once too), `sigma =
//! 1e12` on the coarse cylinder, and boxes of 1e12 m and 1e-12 m, in f64 and f32 on the
//! CPU, end with their resonances and no NaN.
//! - At most [`MAX_POLES`] poles per material and [`MAX_PROBES`] probes (see there).

use super::config::Config;
use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::problem::{ETA0, Material};

/// Most poles (Debye, Drude and Lorentz together) one material takes. Fits of measured
/// media use few: a Drude term and five Lorentz pairs for the noble metals (Rakić et al.,
/// Appl. Opt. 37, 1998), one to four Debye terms for water and tissue. Each pole adds its
/// state (two values per unknown of the dispersive tets) and its update to every step, so
/// the memory and the time of a step grow by about one field state per pole.
pub const MAX_POLES: usize = 32;

/// Most probe points a run takes. Each probe adds three signals to the extraction (a
/// harmonic inversion each, the most expensive part of the analysis: 9 signals for the
/// default 3 probes), three columns to `probe.csv` and 24 B per step to the record held
/// in memory; 1000 probes are 3000 fits, already minutes to hours of analysis.
pub const MAX_PROBES: usize = 1000;

/// The range of relative permittivities and permeabilities (and pole strengths) accepted.
pub const REL_RANGE: (f64, f64) = (1e-8, 1e8);

/// The largest conductivity accepted (S/m); magnetic conductivities up to this times η₀².
pub const MAX_SIGMA: f64 = 1e12;

/// The range of a pole's rates accepted (1/s).
pub const RATE_RANGE: (f64, f64) = (1e-3, 1e21);

/// The range of the mesh's extent (its bounding box's largest side) accepted (m).
pub const EXTENT_RANGE: (f64, f64) = (1e-12, 1e12);

/// Counts and value ranges of a configuration, before the mesh is read.
pub fn check_config(cfg: &Config) -> Result<()> {
    if cfg.probe.len() > MAX_PROBES {
        return Err(Error::config(
            "probe",
            format!("{} points", cfg.probe.len()),
            format!(
                "at most {MAX_PROBES} probes are accepted: each adds 3 signals to the extraction (a harmonic inversion each; {} probes are {} fits, hours of analysis) and 24 B per step to the record",
                cfg.probe.len(),
                3 * cfg.probe.len()
            ),
        ));
    }
    for (group, m) in &cfg.materials {
        check_material(group, m)?;
    }
    for (group, b) in &cfg.boundaries {
        check_wall(group, b)?;
    }
    // the pulse and the band not below the rates a run resolves (f_peak = 1e-300 gave
    // t0 = inf and NaN blamed on --cfl); above, the time step's own checks name them
    let flo = RATE_RANGE.0 / std::f64::consts::TAU;
    for (key, f) in [("f-peak", cfg.f_peak), ("fmax", cfg.fmax)] {
        if let Some(f) = f
            && f > 0.0
            && f < flo
        {
            return Err(Error::config(
                key,
                format!("{f:e}"),
                format!(
                    "below the {flo:.1e} Hz a run resolves: the time step of any mesh accepted is at most 3e3 s"
                ),
            ));
        }
    }
    Ok(())
}

/// The ranges of a `conductor` wall's metal: `sigma` up to [`MAX_SIGMA`] and `mu_r` in
/// [`REL_RANGE`], as for a material. Beyond them the wall-loss perturbation
/// (`R_s = √(ω μ/(2σ))`) under- or overflows and `q_wall` came out blank or 0 without a
/// word (issue 47, round four S4). Whether `sigma` is a good conductor in the band is
/// checked once the band is known ([`check_wall_in_band`]).
pub fn check_wall(group: &str, b: &crate::problem::Boundary) -> Result<()> {
    if b.kind != crate::problem::BoundaryKind::Conductor {
        return Ok(());
    }
    if let Some(s) = b.sigma
        && s.is_finite()
        && s > MAX_SIGMA
    {
        return Err(Error::config(
            "sigma",
            format!("{s:e}"),
            format!(
                "above the {MAX_SIGMA:.0e} S/m accepted (boundary {group}; silver has 6.3e7 S/m): a better conductor is a pec wall"
            ),
        ));
    }
    let (lo, hi) = REL_RANGE;
    if let Some(m) = b.mu_r
        && m.is_finite()
        && m > 0.0
        && !(lo..=hi).contains(&m)
    {
        return Err(Error::config(
            "mu_r",
            format!("{m:e}"),
            format!(
                "outside {lo:.0e}..{hi:.0e}, the range a run's arithmetic carries (boundary {group}; real metals span about 1 to 1e6)"
            ),
        ));
    }
    Ok(())
}

/// The least ratio `σ/(ω ε₀)` at the band's top for a `conductor` wall: the wall-loss
/// perturbation assumes a good conductor (conduction current ≫ displacement current, skin
/// depth ≪ the wall's curvature); at a ratio of 100 the surface impedance is within 1% of
/// `(1 + j) R_s`.
pub const GOOD_CONDUCTOR: f64 = 100.0;

/// A `conductor` wall must be a good conductor at the top of the band (`fmax_hz`):
/// `σ ≥ 100 ω ε₀` ([`GOOD_CONDUCTOR`]). A poorer one (`sigma = 5e-324` gave `q_wall = 0`)
/// is refused with the wall and the least conductivity.
pub fn check_wall_in_band(cfg: &Config, fmax_hz: f64) -> Result<()> {
    for (group, b) in &cfg.boundaries {
        if b.kind != crate::problem::BoundaryKind::Conductor {
            continue;
        }
        let Some(s) = b.sigma else { continue };
        let least = GOOD_CONDUCTOR * std::f64::consts::TAU * fmax_hz * crate::problem::EPS0;
        if s < least {
            return Err(Error::config(
                "sigma",
                format!("{s:e}"),
                format!(
                    "too poor a conductor for a conductor wall (boundary {group}): the wall-loss perturbation needs sigma >= {GOOD_CONDUCTOR} omega eps0 = {least:.3e} S/m at the band's top ({fmax_hz:.4e} Hz); model a poorer conductor as a lossy material (sigma on a volume group)"
                ),
            ));
        }
    }
    Ok(())
}

/// The counts and ranges of one material ([`check_config`]).
pub fn check_material(group: &str, m: &Material) -> Result<()> {
    let poles = m.debye.len() + m.drude.len() + m.lorentz.len();
    if poles > MAX_POLES {
        return Err(Error::config(
            &format!("materials.{group}"),
            format!(
                "{poles} poles ({} debye, {} drude, {} lorentz)",
                m.debye.len(),
                m.drude.len(),
                m.lorentz.len()
            ),
            format!(
                "at most {MAX_POLES} poles per material are accepted: each adds a state of two values per unknown of its tets and its update to every step, so {poles} poles would take about {} times the memory and the step time of the field alone",
                poles + 1
            ),
        ));
    }
    let (lo, hi) = REL_RANGE;
    let rel = |name: &str, v: f64| -> Result<()> {
        if v.is_finite() && v > 0.0 && !(lo..=hi).contains(&v) {
            return Err(Error::config(
                name,
                format!("{v:e}"),
                format!(
                    "outside {lo:.0e}..{hi:.0e}, the range a run's f64/f32 arithmetic carries (material {group}; real media span about 1 to 1e6)"
                ),
            ));
        }
        Ok(())
    };
    rel("eps_r", m.eps_r)?;
    rel("mu_r", m.mu_r)?;
    for p in &m.debye {
        rel("delta_eps", p.delta_eps)?;
    }
    for p in &m.lorentz {
        rel("delta_eps", p.delta_eps)?;
    }
    // a loss tangent's frequency in the range of a pole's rates (beyond, 2π f overflowed and
    // the run ended in NaN blamed on --cfl)
    if let Some(f) = m.f_tan_delta
        && f.is_finite()
        && f > 0.0
        && !(RATE_RANGE.0..=RATE_RANGE.1).contains(&(std::f64::consts::TAU * f))
    {
        return Err(Error::config(
            "f_tan_delta",
            format!("{f:e}"),
            format!(
                "outside the {:.1e}..{:.1e} Hz a run resolves (material {group}): the time step of any mesh accepted lies between 3e-21 s and 3e3 s",
                RATE_RANGE.0 / std::f64::consts::TAU,
                RATE_RANGE.1 / std::f64::consts::TAU
            ),
        ));
    }
    let sigma = m.conductivity();
    // (not `is_finite() &&`: an overflowing product is refused too)
    if !sigma.is_nan() && sigma > MAX_SIGMA {
        let key = if m.sigma > MAX_SIGMA {
            "sigma"
        } else {
            "tan_delta"
        };
        return Err(Error::config(
            key,
            format!(
                "{:e}",
                if key == "sigma" {
                    m.sigma
                } else {
                    m.tan_delta.unwrap_or(0.0)
                }
            ),
            format!(
                "gives a conductivity of {sigma:.3e} S/m, above the {MAX_SIGMA:.0e} S/m accepted (material {group}; silver has 6.3e7 S/m): a better conductor is a pec wall"
            ),
        ));
    }
    let max_m = MAX_SIGMA * ETA0 * ETA0;
    if m.sigma_m.is_finite() && m.sigma_m > max_m {
        return Err(Error::config(
            "sigma_m",
            format!("{:e}", m.sigma_m),
            format!(
                "above the {max_m:.3e} ohm/m accepted (material {group}: the matched value of sigma = {MAX_SIGMA:.0e} S/m)"
            ),
        ));
    }
    let tau = std::f64::consts::TAU;
    let mut rates: Vec<(&str, f64, f64)> = vec![];
    for p in &m.debye {
        rates.push(("tau", p.tau, 1.0 / p.tau));
    }
    for p in &m.drude {
        rates.push(("f_p", p.f_p, tau * p.f_p));
        rates.push(("gamma", p.gamma, p.gamma));
    }
    for p in &m.lorentz {
        rates.push(("f_0", p.f_0, tau * p.f_0));
        rates.push(("delta", p.delta, p.delta));
    }
    let (rlo, rhi) = RATE_RANGE;
    for (name, v, rate) in rates {
        // 0 (no damping) is allowed for gamma and delta; the poles' own checks refuse
        // negative and non-finite values
        if v.is_finite() && v > 0.0 && !(rlo..=rhi).contains(&rate) {
            return Err(Error::config(
                name,
                format!("{v:e}"),
                format!(
                    "gives a rate of {rate:.3e}/s, outside the {rlo:.0e}..{rhi:.0e}/s a run resolves (material {group}): the time step of any mesh accepted lies between 3e-21 s and 3e3 s, and such a pole acts on no frequency it carries or overflows the arithmetic"
                ),
            ));
        }
    }
    Ok(())
}

/// The mesh's extent must lie in [`EXTENT_RANGE`] (module docs): a mesh in the wrong unit
/// is refused here, naming its extent, before its operators overflow.
pub fn check_mesh_scale(mesh: &Mesh) -> Result<()> {
    let (a, b) = mesh.bbox();
    let extent = (0..3).map(|c| b[c] - a[c]).fold(0.0, f64::max);
    let (lo, hi) = EXTENT_RANGE;
    if !(extent.is_finite() && (lo..=hi).contains(&extent)) {
        return Err(Error::MeshInvalid {
            path: mesh.source.clone(),
            msg: format!(
                "the mesh spans {extent:.3e} m, outside the {lo:.0e} m to {hi:.0e} m a run's f64/f32 arithmetic carries (volumes and inverse lengths of its elements overflow); coordinates are read in metres: rescale the mesh (e.g. gmsh -clscale, or Mesh.ScalingFactor)"
            ),
        });
    }
    Ok(())
}

/// Refuses a generated mesh of `tets` tetrahedra (asked for by `name = value`, e.g.
/// `bench --sizes`) before anything is allocated when its host memory
/// ([`crate::cost::dga_host_bytes`]) exceeds the memory available, or its count the
/// 32-bit index limit; the message names both figures.
pub fn check_mesh_memory(tets: f64, name: &str, value: &str) -> Result<()> {
    let need = crate::cost::dga_host_bytes(tets);
    let avail = crate::cost::available_memory();
    let over_memory = avail.is_some_and(|a| need > a as f64);
    let over_index = !(tets <= crate::cost::MAX_TETS);
    if !(over_memory || over_index) {
        return Ok(());
    }
    let avail = match avail {
        Some(a) => format!("{} is available", indicatif::HumanBytes(a)),
        None => "the memory available is not known here".into(),
    };
    Err(Error::config(
        name,
        value,
        format!(
            "it gives {tets:.3e} tetrahedra, needing about {} of host memory; {avail}{}",
            indicatif::HumanBytes(need.min(u64::MAX as f64) as u64),
            if over_index {
                format!(
                    "; and above the {:.1e} tetrahedra that 32-bit indices allow",
                    crate::cost::MAX_TETS
                )
            } else {
                String::new()
            }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::dispersion::{DrudeSpec, LorentzSpec};

    fn err(m: &Material) -> String {
        check_material("glass", m).unwrap_err().to_string()
    }

    #[test]
    fn extreme_but_finite_values_are_refused_with_the_key() {
        for (m, key) in [
            (Material::new(1e300, 1.0), "eps_r"),
            (Material::new(1e-300, 1.0), "eps_r"),
            (Material::new(1.0, 1e12), "mu_r"),
            (
                Material {
                    sigma: 1e300,
                    ..Material::new(1.0, 1.0)
                },
                "sigma",
            ),
            (
                Material {
                    sigma_m: 1e300,
                    ..Material::new(1.0, 1.0)
                },
                "sigma_m",
            ),
            (
                Material {
                    drude: vec![DrudeSpec {
                        f_p: 1e-300,
                        gamma: 0.0,
                    }],
                    ..Material::new(1.0, 1.0)
                },
                "f_p",
            ),
            (
                Material {
                    drude: vec![DrudeSpec {
                        f_p: 1e9,
                        gamma: 1e300,
                    }],
                    ..Material::new(1.0, 1.0)
                },
                "gamma",
            ),
        ] {
            let e = err(&m);
            assert!(
                e.contains(&format!("invalid {key} =")) && e.contains("material glass"),
                "{e}"
            );
        }
        // real media pass: water (eps 80), a metal's sigma, a Drude metal
        for m in [
            Material::new(80.0, 1.0),
            Material {
                sigma: 5.8e7,
                ..Material::new(1.0, 1.0)
            },
            Material {
                drude: vec![DrudeSpec {
                    f_p: 2.2e15,
                    gamma: 1e14,
                }],
                ..Material::new(1.0, 1.0)
            },
        ] {
            check_material("ok", &m).unwrap();
        }
    }

    #[test]
    fn pole_and_probe_counts_are_bounded() {
        let l = LorentzSpec {
            delta_eps: 1.0,
            f_0: 1e9,
            delta: 1e7,
        };
        let m = Material {
            lorentz: vec![l; MAX_POLES + 1],
            ..Material::new(1.0, 1.0)
        };
        let e = err(&m);
        assert!(
            e.contains("materials.glass") && e.contains("33 poles") && e.contains("memory"),
            "{e}"
        );
        let ok = Material {
            lorentz: vec![l; MAX_POLES],
            ..Material::new(1.0, 1.0)
        };
        check_material("glass", &ok).unwrap();
        let cfg = Config {
            probe: vec![[0.0; 3]; MAX_PROBES + 1],
            ..Config::default()
        };
        let e = check_config(&cfg).unwrap_err().to_string();
        assert!(
            e.contains("invalid probe = 1001 points") && e.contains("at most 1000"),
            "{e}"
        );
    }

    #[test]
    fn a_mesh_in_the_wrong_unit_is_refused_naming_its_extent() {
        let m = crate::mesh::generate::box_mesh([1, 1, 1], [1.0, 1.0, 1.0]);
        check_mesh_scale(&m).unwrap();
        for s in [1e70, 1e-80] {
            let mut big = m.clone();
            for p in &mut big.nodes {
                *p = crate::util::scale(*p, s);
            }
            let e = check_mesh_scale(&big).unwrap_err().to_string();
            assert!(e.contains("the mesh spans") && e.contains("rescale"), "{e}");
        }
    }
}
