//! The physical problem as data: materials keyed by the mesh's physical volume groups,
//! boundary conditions keyed by its physical surface groups, the source, the probes and the
//! waveform. Read from TOML (`[materials.NAME]`, `[boundaries.NAME]`, see
//! [`crate::solver::config`]) and resolved onto a mesh here: per-tet media ([`Media`]) and
//! per-boundary-face conditions ([`Walls`]).
//!
//! Units: relative permittivity and permeability (dimensionless); lengths in metres;
//! conductivity σ in S/m. A loss tangent tanδ given at f (Hz) is the conductivity
//! σ = 2π f ε₀ ε_r tanδ (added to `sigma`). Inside the library a conductivity enters as
//! `σ η₀` (1/m): with time in metres of light travel, Ampère's law
//! `ε₀ε_r ∂E/∂t + σE = ∇×H` reads `ε_r ∂E/∂τ + σ η₀ E = ∇×(η₀ H)` (design note §12).
//!
//! Boundary conditions (design note §12, `docs/design.md`):
//! - `pec`: `n × E = 0`. The half-edges of every edge on a PEC face are removed from the
//!   unknowns (their `U` stays 0). A boundary face with no surface group, or in a group the
//!   problem does not name, is PEC.
//! - `pmc`: `n × H = 0`, the natural condition of the scheme: the boundary half-edges stay
//!   unknowns and no term is added, which drops the tangential H on the wall from the
//!   dual-face circulations. An edge shared by a PEC face and a PMC face is PEC.
//! - `abc`: first-order absorbing (Silver–Müller) wall, a surface conductance.
//! - `conductor` (`sigma` in S/m, `mu_r`, default 1): a good but imperfect metal wall. The
//!   time-domain run treats it as PEC; its loss is reported per mode by the perturbation
//!   method from the mode's fields (`Q_wall`, [`crate::solver::wallq`]), which holds while
//!   the skin depth is small against the cavity (`Q_wall ≫ 1`).

pub(crate) mod coverage;
pub(crate) mod dispersion;
pub(crate) mod dispersion_relation;
pub(crate) mod layer;
pub(crate) mod placement;
pub mod pml;
mod waveform;

pub use coverage::{group_summary, materials as material_coverage, walls as wall_coverage};
pub use dispersion::{Pole, drude_discrete_omega_hat};

pub use coverage::Coverage;
pub use dispersion::{AuxEnergy, Biquad, DebyeSpec, DrudeSpec, LorentzSpec};
pub use placement::{default_point, default_points, random_probes};
pub use waveform::Waveform;

use crate::error::{Error, Result};
use crate::mesh::topology::{FACE_CYCLE, LOCAL_EDGES};
use crate::mesh::{Mesh, Topology};
use crate::util::V3;
use std::collections::BTreeMap;

/// Vacuum permittivity ε₀ (F/m), CODATA 2018.
pub const EPS0: f64 = 8.854_187_812_8e-12;
/// Vacuum impedance η₀ = 1/(ε₀ c) (Ω).
pub const ETA0: f64 = 1.0 / (EPS0 * crate::util::C0);

/// A homogeneous, isotropic medium, optionally conducting.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Material {
    /// Relative permittivity (> 0).
    pub eps_r: f64,
    /// Relative permeability (> 0).
    pub mu_r: f64,
    /// Electric conductivity σ (S/m, ≥ 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub sigma: f64,
    /// Loss tangent tanδ (≥ 0) at `f_tan_delta`: adds σ = 2π f ε₀ ε_r tanδ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tan_delta: Option<f64>,
    /// Frequency (Hz, > 0) at which `tan_delta` is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f_tan_delta: Option<f64>,
    /// Magnetic conductivity σ* (Ω/m, ≥ 0): `μ ∂H/∂t + σ* H = −∇×E`.
    #[serde(skip_serializing_if = "is_zero")]
    pub sigma_m: f64,
    /// An absorbing layer: graded matched σ and σ* from the group's inner surface
    /// ([`layer`]); `sigma`, `sigma_m` and `tan_delta` must then be left out.
    #[serde(skip_serializing_if = "is_false")]
    pub absorbing: bool,
    /// Grading order m of an absorbing layer (default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_order: Option<f64>,
    /// Target normal-incidence reflection of an absorbing layer (default 1e-6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_reflection: Option<f64>,
    /// A perfectly matched layer ([`pml`]): CFS coordinate stretching graded from the
    /// group's inner surface (an axis-aligned box or a sphere), matched to this material's
    /// `eps_r`, `mu_r`; `sigma`, `sigma_m`, `tan_delta`, `absorbing` and poles must be left
    /// out.
    #[serde(skip_serializing_if = "is_false")]
    pub pml: bool,
    /// Grading order m of a PML (default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pml_order: Option<f64>,
    /// Target round-trip reflection of a PML's continuous profile (default 1e-6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pml_reflection: Option<f64>,
    /// A PML's complex frequency shift α as a frequency (Hz, > 0; default: σ_max/1000 as a rate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pml_alpha: Option<f64>,
    /// Debye poles `Δε/(1 + sτ)` ([`dispersion`]; `eps_r` is then ε∞).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub debye: Vec<dispersion::DebyeSpec>,
    /// Drude poles `ω_p²/(s² + γs)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drude: Vec<dispersion::DrudeSpec>,
    /// Lorentz pole pairs `Δε ω₀²/(ω₀² + 2δs + s²)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lorentz: Vec<dispersion::LorentzSpec>,
}

fn is_false(x: &bool) -> bool {
    !*x
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Default for Material {
    fn default() -> Self {
        Material {
            eps_r: 1.0,
            mu_r: 1.0,
            sigma: 0.0,
            tan_delta: None,
            f_tan_delta: None,
            sigma_m: 0.0,
            absorbing: false,
            layer_order: None,
            layer_reflection: None,
            pml: false,
            pml_order: None,
            pml_reflection: None,
            pml_alpha: None,
            debye: Vec::new(),
            drude: Vec::new(),
            lorentz: Vec::new(),
        }
    }
}

impl Material {
    /// A lossless medium.
    pub fn new(eps_r: f64, mu_r: f64) -> Self {
        Material {
            eps_r,
            mu_r,
            ..Material::default()
        }
    }

    /// Checks the values; `group` names the material in messages.
    pub fn validate(&self, group: &str) -> Result<()> {
        for (v, name) in [(self.eps_r, "eps_r"), (self.mu_r, "mu_r")] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::config(
                    name,
                    v,
                    format!("must be finite and positive (material {group})"),
                ));
            }
        }
        if self.absorbing {
            if self.sigma != 0.0 || self.sigma_m != 0.0 || self.tan_delta.is_some() {
                return Err(Error::config(
                    "absorbing",
                    group,
                    "an absorbing layer sets its own graded sigma and sigma_m: leave sigma, sigma_m and tan_delta out",
                ));
            }
            let m = self.layer_order.unwrap_or(3.0);
            if !(m.is_finite() && (0.0..=10.0).contains(&m)) {
                return Err(Error::config(
                    "layer_order",
                    m,
                    format!("must be in [0, 10] (material {group})"),
                ));
            }
            let r = self.layer_reflection.unwrap_or(1e-6);
            if !(r > 0.0 && r < 1.0) {
                return Err(Error::config(
                    "layer_reflection",
                    r,
                    format!("must be in (0, 1) (material {group})"),
                ));
            }
        } else if self.layer_order.is_some() || self.layer_reflection.is_some() {
            return Err(Error::config(
                "layer_order",
                group,
                "layer_order and layer_reflection need absorbing = true",
            ));
        }
        pml::validate(self, group)?;
        if !(self.sigma_m.is_finite() && self.sigma_m >= 0.0) {
            return Err(Error::config(
                "sigma_m",
                self.sigma_m,
                format!("must be finite and not negative, in ohm/m (material {group})"),
            ));
        }
        if !(self.sigma.is_finite() && self.sigma >= 0.0) {
            return Err(Error::config(
                "sigma",
                self.sigma,
                format!("must be finite and not negative, in S/m (material {group})"),
            ));
        }
        match (self.tan_delta, self.f_tan_delta) {
            (None, None) => {}
            (Some(t), Some(f)) => {
                if !(t.is_finite() && t >= 0.0) {
                    return Err(Error::config(
                        "tan_delta",
                        t,
                        format!("must be finite and not negative (material {group})"),
                    ));
                }
                if !(f.is_finite() && f > 0.0) {
                    return Err(Error::config(
                        "f_tan_delta",
                        f,
                        format!("must be a finite positive frequency in Hz (material {group})"),
                    ));
                }
            }
            (Some(t), None) => {
                return Err(Error::config(
                    "tan_delta",
                    t,
                    format!(
                        "needs f_tan_delta, the frequency in Hz it is given at (material {group})"
                    ),
                ));
            }
            (None, Some(f)) => {
                return Err(Error::config(
                    "f_tan_delta",
                    f,
                    format!("given without tan_delta (material {group})"),
                ));
            }
        }
        for (i, p) in self.poles().iter().enumerate() {
            p.validate(&format!("material {group}, pole {}", i + 1))?;
        }
        if self.is_dispersive() && self.absorbing {
            return Err(Error::config(
                "absorbing",
                group,
                "an absorbing layer cannot also be dispersive (debye, drude, lorentz)",
            ));
        }
        Ok(())
    }

    /// The material's poles (SI units), Debye then Drude then Lorentz, in the order given.
    pub fn poles(&self) -> Vec<dispersion::Pole> {
        use dispersion::Pole;
        let d = self.debye.iter().map(|p| Pole::Debye {
            delta_eps: p.delta_eps,
            tau: p.tau,
        });
        let r = self.drude.iter().map(|p| Pole::Drude {
            f_p: p.f_p,
            gamma: p.gamma,
        });
        let l = self.lorentz.iter().map(|p| Pole::Lorentz {
            delta_eps: p.delta_eps,
            f_0: p.f_0,
            delta: p.delta,
        });
        d.chain(r).chain(l).collect()
    }

    /// Whether the material has poles (`eps_r` is then ε∞).
    pub fn is_dispersive(&self) -> bool {
        !(self.debye.is_empty() && self.drude.is_empty() && self.lorentz.is_empty())
    }

    /// `ε(s)` of the material (relative), `s` the Laplace variable in 1/s.
    pub fn eps_of(&self, s: crate::util::C64) -> crate::util::C64 {
        self.poles()
            .iter()
            .map(|p| p.chi(s))
            .fold(crate::util::C64::new(self.eps_r, 0.0), |a, b| a + b)
    }

    /// The total conductivity (S/m): `sigma + 2π f_tan_delta ε₀ ε_r tan_delta`.
    /// Whether the material dissipates (σ, tanδ, σ* or an absorbing layer).
    pub fn is_lossy(&self) -> bool {
        self.conductivity() != 0.0 || self.sigma_m != 0.0 || self.absorbing
    }

    pub fn conductivity(&self) -> f64 {
        let tan = match (self.tan_delta, self.f_tan_delta) {
            (Some(t), Some(f)) => 2.0 * std::f64::consts::PI * f * EPS0 * self.eps_r * t,
            _ => 0.0,
        };
        self.sigma + tan
    }
}

/// The condition on a boundary surface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundaryKind {
    /// Perfect electric conductor: `n × E = 0`.
    #[default]
    Pec,
    /// Perfect magnetic conductor: `n × H = 0` (the scheme's natural condition).
    Pmc,
    /// First-order absorbing (Silver–Müller) boundary `n × H = −Y n × (n × E)`, `Y` the
    /// admittance of the tet behind the face: a surface conductance on the boundary
    /// half-edges ([`crate::dga::surface`]), exact for normal incidence in the continuum.
    Abc,
    /// A good conductor of finite conductivity: PEC in the time domain, its surface
    /// resistance `R_s = sqrt(ω μ₀ μ_r / (2σ))` giving each mode's wall-loss Q.
    Conductor,
}

impl BoundaryKind {
    pub fn name(self) -> &'static str {
        match self {
            BoundaryKind::Pec => "pec",
            BoundaryKind::Pmc => "pmc",
            BoundaryKind::Abc => "abc",
            BoundaryKind::Conductor => "conductor",
        }
    }

    /// Whether the tangential E on the wall is zero in the time domain.
    pub fn is_electric_wall(self) -> bool {
        matches!(self, BoundaryKind::Pec | BoundaryKind::Conductor)
    }
}

impl std::str::FromStr for BoundaryKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "pec" => Ok(BoundaryKind::Pec),
            "pmc" => Ok(BoundaryKind::Pmc),
            "abc" => Ok(BoundaryKind::Abc),
            "conductor" => Ok(BoundaryKind::Conductor),
            _ => Err(Error::config(
                "boundary kind",
                s,
                "expected pec, pmc, abc or conductor",
            )),
        }
    }
}

/// A boundary condition of a surface group.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Boundary {
    pub kind: BoundaryKind,
    /// Conductivity of a `conductor` wall (S/m, > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
    /// Relative permeability of a `conductor` wall (> 0, default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mu_r: Option<f64>,
}

impl Boundary {
    /// A condition with no parameters (`pec`, `pmc`, `abc`).
    pub fn of(kind: BoundaryKind) -> Self {
        Boundary {
            kind,
            sigma: None,
            mu_r: None,
        }
    }

    /// A `conductor` wall of conductivity `sigma` (S/m) and relative permeability `mu_r`.
    pub fn conductor(sigma: f64, mu_r: f64) -> Self {
        Boundary {
            kind: BoundaryKind::Conductor,
            sigma: Some(sigma),
            mu_r: Some(mu_r),
        }
    }

    /// Checks the parameters against the kind; `group` names the surface group in errors.
    pub fn validate(&self, group: &str) -> Result<()> {
        if self.kind != BoundaryKind::Conductor {
            for (v, name) in [(self.sigma, "sigma"), (self.mu_r, "mu_r")] {
                if let Some(v) = v {
                    return Err(Error::config(
                        name,
                        v,
                        format!(
                            "only a kind = \"conductor\" wall takes {name} (boundary {group} is {})",
                            self.kind.name()
                        ),
                    ));
                }
            }
            return Ok(());
        }
        let Some(sigma) = self.sigma else {
            return Err(Error::config(
                "sigma",
                "missing",
                format!("a conductor wall needs its conductivity in S/m (boundary {group})"),
            ));
        };
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(Error::config(
                "sigma",
                sigma,
                format!("must be finite and positive, in S/m (boundary {group})"),
            ));
        }
        let mu = self.mu_r.unwrap_or(1.0);
        if !(mu.is_finite() && mu > 0.0) {
            return Err(Error::config(
                "mu_r",
                mu,
                format!("must be finite and positive (boundary {group})"),
            ));
        }
        Ok(())
    }
}

/// The metal of a `conductor` wall face.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metal {
    /// Conductivity (S/m).
    pub sigma: f64,
    /// Relative permeability.
    pub mu_r: f64,
}

impl Metal {
    /// Surface resistance `R_s = sqrt(ω μ₀ μ_r / (2σ))` (Ω) at angular frequency `omega`.
    pub fn surface_resistance(&self, omega: f64) -> f64 {
        (omega * MU0 * self.mu_r / (2.0 * self.sigma)).sqrt()
    }
}

/// Vacuum permeability μ₀ = 1/(ε₀ c²) (H/m).
pub const MU0: f64 = 1.0 / (EPS0 * crate::util::C0 * crate::util::C0);

/// The physical problem: what fills the mesh, what bounds it, what drives it and where it
/// is observed. Groups are named as in the mesh file (name or number).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Problem {
    pub materials: BTreeMap<String, Material>,
    pub boundaries: BTreeMap<String, Boundary>,
    /// Source point (m); None: a seeded point inside the mesh, off its symmetry planes.
    pub source: Option<V3>,
    /// Direction of the source current (any non-zero length).
    pub source_dir: V3,
    /// Radius (m) of the ball of tets the source current fills (every tet with all four
    /// vertices within it of the source point); 0: the tet containing the point.
    pub source_radius: f64,
    /// Probe points (m); empty: seeded points inside the mesh.
    pub probes: Vec<V3>,
}

/// Relative permittivity and permeability of each tetrahedron, and its conductivity.
#[derive(Clone, Debug, PartialEq)]
pub struct Media {
    pub eps: Vec<f64>,
    pub mu: Vec<f64>,
    /// Conductivity in library units, `σ η₀` (1/m), per tet; empty when lossless
    /// everywhere (the same as all zeros).
    pub sigma: Vec<f64>,
    /// Magnetic conductivity in library units, `σ* / η₀` (1/m), per tet; empty when
    /// lossless everywhere.
    pub sigma_m: Vec<f64>,
    /// Dispersive material of each tet: 0 none, `k` the poles `poles[k − 1]`; empty when
    /// no tet is dispersive.
    pub disp: Vec<u16>,
    /// The poles (SI units) and the name of each dispersive material.
    pub poles: Vec<(String, Vec<dispersion::Pole>)>,
    /// The perfectly matched layers' stretched media (None without a PML).
    pub pml: Option<pml::Stretch>,
}

impl Media {
    /// Vacuum everywhere.
    pub fn vacuum(n_tets: usize) -> Self {
        Media {
            eps: vec![1.0; n_tets],
            mu: vec![1.0; n_tets],
            sigma: Vec::new(),
            sigma_m: Vec::new(),
            disp: Vec::new(),
            poles: Vec::new(),
            pml: None,
        }
    }

    /// Lossless media from per-tet relative permittivity and permeability.
    pub fn lossless(eps: Vec<f64>, mu: Vec<f64>) -> Self {
        Media {
            eps,
            mu,
            sigma: Vec::new(),
            sigma_m: Vec::new(),
            disp: Vec::new(),
            poles: Vec::new(),
            pml: None,
        }
    }

    /// Whether some tet is in a perfectly matched layer.
    pub fn has_pml(&self) -> bool {
        self.pml.as_ref().is_some_and(|p| !p.tets.is_empty())
    }

    /// Whether some tet is dispersive.
    pub fn is_dispersive(&self) -> bool {
        self.disp.iter().any(|&k| k != 0)
    }

    /// Whether some tet conducts.
    pub fn is_lossy(&self) -> bool {
        self.sigma.iter().any(|&s| s != 0.0)
    }

    /// Whether some tet has a magnetic conductivity.
    pub fn is_magnetically_lossy(&self) -> bool {
        self.sigma_m.iter().any(|&s| s != 0.0)
    }

    /// `σ* / η₀` (1/m) of tet `n` (0 when lossless).
    pub fn sigma_m_of(&self, n: usize) -> f64 {
        self.sigma_m.get(n).copied().unwrap_or(0.0)
    }

    /// `σ η₀` (1/m) of tet `n` (0 when lossless).
    pub fn sigma_of(&self, n: usize) -> f64 {
        self.sigma.get(n).copied().unwrap_or(0.0)
    }

    /// The media of a mesh: each named volume group gets its material, the rest vacuum.
    pub fn resolve(mesh: &Mesh, materials: &BTreeMap<String, Material>) -> Result<Self> {
        let mut m = Media::vacuum(mesh.n_tets());
        let mut layers = Vec::new();
        let mut pmls = Vec::new();
        for (key, mat) in materials {
            mat.validate(key)?;
            let tag = mesh.volume_group(key).ok_or_else(|| Error::UnknownGroup {
                what: "material",
                key: key.clone(),
                mesh: mesh.source.clone(),
                known: mesh.group_list(3),
            })?;
            let sig = mat.conductivity() * ETA0;
            if sig != 0.0 && m.sigma.is_empty() {
                m.sigma = vec![0.0; mesh.n_tets()];
            }
            let sig_m = mat.sigma_m / ETA0;
            if sig_m != 0.0 && m.sigma_m.is_empty() {
                m.sigma_m = vec![0.0; mesh.n_tets()];
            }
            if mat.absorbing {
                layers.push((key.clone(), tag, mat.clone()));
            }
            if mat.pml {
                pmls.push((key.clone(), tag, mat.clone()));
            }
            if mat.is_dispersive() {
                if m.disp.is_empty() {
                    m.disp = vec![0; mesh.n_tets()];
                }
                m.poles.push((key.clone(), mat.poles()));
                let k = u16::try_from(m.poles.len()).map_err(|_| {
                    Error::config(
                        "material",
                        key,
                        format!(
                            "more than {} dispersive materials: give groups of the same medium one material",
                            u16::MAX
                        ),
                    )
                })?;
                for n in (0..mesh.n_tets()).filter(|&n| mesh.in_volume_group(n, tag)) {
                    m.disp[n] = k;
                }
            }
            for n in 0..mesh.n_tets() {
                if mesh.in_volume_group(n, tag) {
                    m.eps[n] = mat.eps_r;
                    m.mu[n] = mat.mu_r;
                    if sig != 0.0 {
                        m.sigma[n] = sig;
                    }
                    if sig_m != 0.0 {
                        m.sigma_m[n] = sig_m;
                    }
                }
            }
        }
        for (key, tag, mat) in layers {
            let in_layer = mesh.volume_mask(tag);
            m.add_layer(
                mesh,
                &in_layer,
                mat.layer_order.unwrap_or(3.0),
                mat.layer_reflection.unwrap_or(1e-6),
                &key,
            )?;
        }
        for (key, tag, mat) in pmls {
            let in_layer = mesh.volume_mask(tag);
            let mut st = m.pml.take().unwrap_or_default();
            st.add_layer(
                mesh,
                &in_layer,
                &m.eps,
                &m.mu,
                mat.pml_order.unwrap_or(3.0),
                mat.pml_reflection.unwrap_or(1e-6),
                mat.pml_alpha
                    .map(|f| std::f64::consts::TAU * f / crate::util::C0),
                &key,
            )?;
            m.pml = Some(st);
        }
        Ok(m)
    }

    /// Makes the tets `in_layer` a graded matched absorbing layer
    /// ([`layer::graded_sigma`] of grading `order` and target normal-incidence reflection
    /// `reflection`): σ from the profile, σ* matched to it (`σ*/μ = σ/ε`, in library units
    /// `σ*/η₀ = σ η₀ μ_r/ε_r`), on the tets' current ε and μ. `name` is the layer in errors.
    pub fn add_layer(
        &mut self,
        mesh: &Mesh,
        in_layer: &[bool],
        order: f64,
        reflection: f64,
        name: &str,
    ) -> Result<()> {
        let sig =
            layer::graded_sigma(mesh, in_layer, &self.eps, &self.mu, order, reflection, name)?;
        if self.sigma.is_empty() {
            self.sigma = vec![0.0; mesh.n_tets()];
        }
        if self.sigma_m.is_empty() {
            self.sigma_m = vec![0.0; mesh.n_tets()];
        }
        for n in (0..mesh.n_tets()).filter(|&n| in_layer[n]) {
            self.sigma[n] = sig[n];
            self.sigma_m[n] = sig[n] * self.mu[n] / self.eps[n];
        }
        Ok(())
    }

    /// `(ε∞, poles)` of the one dispersive material that fills every tet with the same ε∞
    /// and μ (None when no tet, or not every tet, is that material): the fill whose exact
    /// discrete relation [`dispersion_relation`] inverts.
    pub fn dispersive_fill(&self) -> Option<(f64, &[dispersion::Pole])> {
        let k = *self.disp.first()?;
        if k == 0 || self.disp.iter().any(|&x| x != k) {
            return None;
        }
        let (e, _) = self.homogeneous()?;
        Some((e, &self.poles[k as usize - 1].1))
    }

    /// Each dispersive material that fills some tet: its name, ε∞ (of its first tet) and
    /// poles.
    pub fn dispersive_materials(&self) -> Vec<(&str, f64, &[dispersion::Pole])> {
        let mut first = vec![None; self.poles.len()];
        for (t, &k) in self.disp.iter().enumerate() {
            if k > 0 && first[k as usize - 1].is_none() {
                first[k as usize - 1] = Some(t);
            }
        }
        first
            .iter()
            .zip(&self.poles)
            .filter_map(|(t, (name, poles))| {
                Some((name.as_str(), self.eps[(*t)?], poles.as_slice()))
            })
            .collect()
    }

    /// `(eps_r, mu_r)` when every tet has the same values (a homogeneous fill).
    pub fn homogeneous(&self) -> Option<(f64, f64)> {
        let (e, m) = (*self.eps.first()?, *self.mu.first()?);
        (self.eps.iter().all(|&x| x == e) && self.mu.iter().all(|&x| x == m)).then_some((e, m))
    }
}

/// The boundary condition of every boundary face (in the order of
/// [`Topology::boundary_faces`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Walls {
    pub kind: Vec<BoundaryKind>,
    /// The metal of each `conductor` face (None elsewhere).
    pub metal: Vec<Option<Metal>>,
}

impl Walls {
    /// PEC on every boundary face.
    pub fn pec(topo: &Topology) -> Self {
        Walls {
            kind: vec![BoundaryKind::Pec; topo.boundary_faces.len()],
            metal: vec![None; topo.boundary_faces.len()],
        }
    }

    /// The walls of a mesh: faces of a named surface group get its condition, the rest PEC
    /// ([`coverage::walls`]: by group membership; keys that would set nothing, ambiguous
    /// names and conflicting conditions refused).
    pub fn resolve(
        mesh: &Mesh,
        topo: &Topology,
        boundaries: &BTreeMap<String, Boundary>,
    ) -> Result<Self> {
        coverage::walls(mesh, topo, boundaries).map(|(w, _)| w)
    }

    /// Per edge: whether its half-edges are fixed to zero (the edge lies on a PEC face).
    pub fn fixed_edges(&self, topo: &Topology) -> Vec<bool> {
        let mut fixed = vec![false; topo.n_edges()];
        for (&(f, _), &kind) in topo.boundary_faces.iter().zip(&self.kind) {
            if !kind.is_electric_wall() {
                continue;
            }
            let n = topo.face_tets[f as usize][0] as usize;
            let k = topo.tet_faces[n]
                .iter()
                .position(|&x| x == f)
                .expect("a face of its tet");
            let cyc = FACE_CYCLE[k];
            for (l, [p, q]) in LOCAL_EDGES.iter().enumerate() {
                if cyc.contains(p) && cyc.contains(q) {
                    fixed[topo.tet_edges[n][l] as usize] = true;
                }
            }
        }
        fixed
    }

    /// The absorbing faces (indices into `topo.faces`) with their admittance
    /// `Y = sqrt(ε_r/μ_r)` of the tet behind each (vacuum impedance 1).
    pub fn absorbing(&self, topo: &Topology, media: &Media) -> (Vec<u32>, Vec<f64>) {
        self.abc_faces(topo)
            .map(|f| {
                let n = topo.face_tets[f as usize][0] as usize;
                (f, (media.eps[n] / media.mu[n]).sqrt())
            })
            .unzip()
    }

    /// The `abc` faces (indices into `topo.faces`), in face order.
    pub fn abc_faces<'a>(&'a self, topo: &'a Topology) -> impl Iterator<Item = u32> + 'a {
        topo.boundary_faces
            .iter()
            .zip(&self.kind)
            .filter(|(_, k)| **k == BoundaryKind::Abc)
            .map(|(&(f, _), _)| f)
    }

    /// Whether every boundary face is PEC.
    pub fn all_pec(&self) -> bool {
        self.kind.iter().all(|&k| k == BoundaryKind::Pec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;

    #[test]
    fn an_absorbing_group_gets_graded_matched_conductivities() {
        let mut m = box_mesh([8, 2, 2], [1.0, 0.25, 0.25]);
        // tag 7 (addressed by number) for the tets beyond x = 0.75 m
        for n in 0..m.n_tets() {
            let x: f64 = m.tet_x(n).iter().map(|p| p[0]).sum::<f64>() / 4.0;
            if x > 0.75 {
                m.tet_phys[n] = 7;
            }
        }
        let mut mats = BTreeMap::new();
        mats.insert(
            "7".to_string(),
            Material {
                absorbing: true,
                ..Material::new(4.0, 1.0)
            },
        );
        let media = Media::resolve(&m, &mats).unwrap();
        for n in 0..m.n_tets() {
            let layer = m.tet_phys[n] == 7;
            assert_eq!(media.sigma_of(n) > 0.0, layer, "tet {n}");
            // matched: σ*/μ = σ/ε in library units
            let (se, sm) = (
                media.sigma_of(n) / media.eps[n],
                media.sigma_m_of(n) / media.mu[n],
            );
            assert!(
                (se - sm).abs() <= 1e-12 * se.max(1e-300),
                "tet {n}: {se} vs {sm}"
            );
        }
        // an absorbing layer with its own sigma, or layer keys without absorbing: refused
        let bad = Material {
            absorbing: true,
            sigma: 1.0,
            ..Material::new(1.0, 1.0)
        };
        assert!(
            bad.validate("pml")
                .unwrap_err()
                .to_string()
                .contains("absorbing")
        );
        let bad = Material {
            layer_order: Some(2.0),
            ..Material::new(1.0, 1.0)
        };
        assert!(bad.validate("pml").is_err());
    }

    #[test]
    fn every_box_wall_face_is_in_its_group() {
        let m = box_mesh([3, 2, 4], [1.0, 0.7, 1.3]);
        let t = Topology::build(&m).unwrap();
        assert_eq!(t.boundary_faces.len(), 2 * (3 * 2 + 2 * 4 + 3 * 4) * 2);
        for &(f, tag) in &t.boundary_faces {
            assert!((1..=6).contains(&tag), "face {f} has tag {tag}");
            // the face lies in its wall's plane
            let axis = (tag as usize - 1) / 2;
            let at = if tag % 2 == 1 {
                0.0
            } else {
                [1.0, 0.7, 1.3][axis]
            };
            for &v in &t.faces[f as usize] {
                assert!((m.nodes[v as usize][axis] - at).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn pmc_walls_free_their_edges_and_pec_wins_on_shared_edges() {
        let m = box_mesh([2, 2, 2], [1.0, 1.0, 1.0]);
        let t = Topology::build(&m).unwrap();
        let all = Walls::pec(&t).fixed_edges(&t);
        assert_eq!(all, t.boundary_edge);
        let mut b = BTreeMap::new();
        b.insert("xmin".to_string(), Boundary::of(BoundaryKind::Pmc));
        let w = Walls::resolve(&m, &t, &b).unwrap();
        let fixed = w.fixed_edges(&t);
        for (e, &[a, bb]) in t.edges.iter().enumerate() {
            let (pa, pb) = (m.nodes[a as usize], m.nodes[bb as usize]);
            let on = |p: V3, c: usize, v: f64| (p[c] - v).abs() < 1e-12;
            let on_other = (0..3).any(|c| {
                [0.0, 1.0]
                    .iter()
                    .any(|&v| (c != 0 || v != 0.0) && on(pa, c, v) && on(pb, c, v))
            });
            let on_xmin = on(pa, 0, 0.0) && on(pb, 0, 0.0);
            if on_other {
                assert!(fixed[e], "edge {e} on a PEC wall");
            } else if on_xmin {
                assert!(!fixed[e], "edge {e} only on the PMC wall");
            }
        }
        let e = Walls::resolve(
            &m,
            &t,
            &BTreeMap::from([("top".to_string(), Boundary::default())]),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("top") && e.contains("xmin (1)"), "{e}");
    }
}
