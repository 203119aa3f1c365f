//! The physical problem as data: materials keyed by the mesh's physical volume groups,
//! boundary conditions keyed by its physical surface groups, the source, the probes and the
//! waveform. Read from TOML (`[materials.NAME]`, `[boundaries.NAME]`, see
//! [`crate::solver::config`]) and resolved onto a mesh here: per-tet media ([`Media`]) and
//! per-boundary-face conditions ([`Walls`]).
//!
//! Units: relative permittivity and permeability (dimensionless); lengths in metres.
//!
//! Boundary conditions (design note §12 in `shared/design/dgatd.md`):
//! - `pec`: `n × E = 0`. The half-edges of every edge on a PEC face are removed from the
//!   unknowns (their `U` stays 0). A boundary face with no surface group, or in a group the
//!   problem does not name, is PEC.
//! - `pmc`: `n × H = 0`, the natural condition of the scheme: the boundary half-edges stay
//!   unknowns and no term is added, which drops the tangential H on the wall from the
//!   dual-face circulations. An edge shared by a PEC face and a PMC face is PEC.

mod placement;
mod waveform;

pub use placement::{default_point, random_probes};
pub use waveform::Waveform;

use crate::mesh::topology::{FACE_CYCLE, LOCAL_EDGES};
use crate::mesh::{Mesh, Topology};
use crate::util::V3;
use crate::{Error, Result};
use std::collections::BTreeMap;

/// A homogeneous, isotropic, lossless medium.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Material {
    /// Relative permittivity (> 0).
    pub eps_r: f64,
    /// Relative permeability (> 0).
    pub mu_r: f64,
}

impl Default for Material {
    fn default() -> Self {
        Material {
            eps_r: 1.0,
            mu_r: 1.0,
        }
    }
}

impl Material {
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
        Ok(())
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
}

impl BoundaryKind {
    pub fn name(self) -> &'static str {
        match self {
            BoundaryKind::Pec => "pec",
            BoundaryKind::Pmc => "pmc",
        }
    }
}

impl std::str::FromStr for BoundaryKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "pec" => Ok(BoundaryKind::Pec),
            "pmc" => Ok(BoundaryKind::Pmc),
            _ => Err(Error::config("boundary kind", s, "expected pec or pmc")),
        }
    }
}

/// A boundary condition of a surface group.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Boundary {
    pub kind: BoundaryKind,
}

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
    /// Probe points (m); empty: seeded points inside the mesh.
    pub probes: Vec<V3>,
}

/// Relative permittivity and permeability of each tetrahedron.
#[derive(Clone, Debug, PartialEq)]
pub struct Media {
    pub eps: Vec<f64>,
    pub mu: Vec<f64>,
}

impl Media {
    /// Vacuum everywhere.
    pub fn vacuum(n_tets: usize) -> Self {
        Media {
            eps: vec![1.0; n_tets],
            mu: vec![1.0; n_tets],
        }
    }

    /// The media of a mesh: each named volume group gets its material, the rest vacuum.
    pub fn resolve(mesh: &Mesh, materials: &BTreeMap<String, Material>) -> Result<Self> {
        let mut m = Media::vacuum(mesh.n_tets());
        for (key, mat) in materials {
            mat.validate(key)?;
            let tag = mesh.volume_group(key).ok_or_else(|| Error::UnknownGroup {
                what: "material",
                key: key.clone(),
                mesh: mesh.source.clone(),
                known: mesh.group_list(3),
            })?;
            for n in 0..mesh.n_tets() {
                if mesh.tet_phys[n] == tag {
                    m.eps[n] = mat.eps_r;
                    m.mu[n] = mat.mu_r;
                }
            }
        }
        Ok(m)
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
}

impl Walls {
    /// PEC on every boundary face.
    pub fn pec(topo: &Topology) -> Self {
        Walls {
            kind: vec![BoundaryKind::Pec; topo.boundary_faces.len()],
        }
    }

    /// The walls of a mesh: faces of a named surface group get its condition, the rest PEC.
    pub fn resolve(
        mesh: &Mesh,
        topo: &Topology,
        boundaries: &BTreeMap<String, Boundary>,
    ) -> Result<Self> {
        let mut w = Walls::pec(topo);
        for (key, b) in boundaries {
            let tag = mesh.surface_group(key).ok_or_else(|| Error::UnknownGroup {
                what: "boundary",
                key: key.clone(),
                mesh: mesh.source.clone(),
                known: mesh.group_list(2),
            })?;
            for (k, &(_, t)) in topo.boundary_faces.iter().enumerate() {
                if t == tag {
                    w.kind[k] = b.kind;
                }
            }
        }
        Ok(w)
    }

    /// Per edge: whether its half-edges are fixed to zero (the edge lies on a PEC face).
    pub fn fixed_edges(&self, topo: &Topology) -> Vec<bool> {
        let mut fixed = vec![false; topo.n_edges()];
        for (&(f, _), &kind) in topo.boundary_faces.iter().zip(&self.kind) {
            if kind != BoundaryKind::Pec {
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
        b.insert(
            "xmin".to_string(),
            Boundary {
                kind: BoundaryKind::Pmc,
            },
        );
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
