//! Sources and probes in the fractioned DoFs (design note §4–5).
//!
//! - Source: a uniform current density `J = w(t) d̂` inside the tet containing a point;
//!   the current through the dual face part of each free edge `e` of that tet is
//!   `j_e = d̂ · S̃_e(n)` (both half-edges of `e` get it), and the update subtracts
//!   `w(t_(n+1/2)) Δt Meps⁻¹ j` from `U`.
//! - Probe: the uniform field of the hexahedron containing the point (the barycentric
//!   dual cell of the vertex with the largest barycentric coordinate):
//!   `E = Σ_i U_(h_i) w^i`, `w^i` the dual basis of the 3 half-edge vectors.

use super::Dga;
use crate::complex::TetGeom;
use crate::mesh::{Mesh, Topology};
use crate::util::{V3, dot, norm};
use crate::{Error, Real, Result};
use nalgebra::Matrix3;

/// A current source: the sparse pattern `g = Meps⁻¹ j` over half-edge slots (for unit
/// Δt: a stepper multiplies it by its Δt).
#[derive(Clone, Debug)]
pub struct Source {
    pub point: V3,
    pub dir: V3,
    pub tet: usize,
    pub edges: Vec<u32>,
    pub pattern: Vec<(u32, f64)>,
    /// The current `j` itself over half-edge slots (non-zero entries).
    pub current: Vec<(u32, f64)>,
}

impl Source {
    /// The source's point, unit direction and tet, without the DGA current pattern (what a
    /// DG run needs; `edges` and `pattern` are empty).
    pub fn located(mesh: &Mesh, point: V3, dir: V3) -> Result<Source> {
        let nd = norm(dir);
        if !(nd > 0.0 && nd.is_finite()) {
            return Err(Error::config(
                "source direction",
                format!("{dir:?}"),
                "must be a non-zero finite vector",
            ));
        }
        let tet = mesh.locate(point).ok_or_else(|| {
            Error::config(
                "source point",
                format!("{point:?}"),
                format!("outside the mesh {}", mesh.source),
            )
        })?;
        Ok(Source {
            point,
            dir: crate::util::scale(dir, 1.0 / nd),
            tet,
            edges: vec![],
            pattern: vec![],
            current: vec![],
        })
    }

    /// The source's current pattern `g = Meps⁻¹ j` (for unit Δt).
    pub fn new(mesh: &Mesh, topo: &Topology, dga: &Dga, point: V3, dir: V3) -> Result<Source> {
        let Source { dir, tet, .. } = Source::located(mesh, point, dir)?;
        let g = TetGeom::new(mesh, tet);
        let mut j = vec![0.0; dga.n_half()];
        let mut edges = Vec::new();
        for l in 0..6 {
            let e = topo.tet_edges[tet][l] as usize;
            if !dga.free_edge[e] {
                continue;
            }
            let je = dot(dir, g.dual_face_area(l));
            j[2 * e] = je;
            j[2 * e + 1] = je;
            edges.push(e as u32);
        }
        if edges.is_empty() {
            return Err(Error::config(
                "source point",
                format!("{point:?}"),
                format!(
                    "tetrahedron {} has no interior edge: move the source away from the wall",
                    mesh.tet_ids[tet]
                ),
            ));
        }
        let mut gv = vec![0.0; dga.n_half()];
        dga.meps_inv.apply_add(&j, &mut gv);
        let pattern = gv
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(h, &x)| (h as u32, x))
            .collect();
        let current = j
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(h, &x)| (h as u32, x))
            .collect();
        Ok(Source {
            point,
            dir,
            tet,
            edges,
            pattern,
            current,
        })
    }
}

/// A point probe of the electric field.
#[derive(Clone, Debug)]
pub struct Probe {
    pub point: V3,
    pub tet: usize,
    pub slots: [u32; 3],
    /// Dual basis vectors `w^i` (rows).
    pub w: [V3; 3],
}

impl Probe {
    pub fn new(mesh: &Mesh, topo: &Topology, point: V3) -> Result<Probe> {
        let tet = mesh.locate(point).ok_or_else(|| {
            Error::config(
                "probe point",
                format!("{point:?}"),
                format!("outside the mesh {}", mesh.source),
            )
        })?;
        let lam = mesh.barycentric(tet, point);
        let i = (0..4)
            .max_by(|&a, &b| lam[a].total_cmp(&lam[b]))
            .unwrap_or(0);
        let g = TetGeom::new(mesh, tet);
        let h = g.hexahedron(i);
        let a = Matrix3::from_fn(|r, c| h.a[c][r]);
        let winv = a.try_inverse().ok_or_else(|| {
            Error::config("probe point", format!("{point:?}"), "degenerate hexahedron")
        })?;
        // rows of A⁻¹ are the dual basis vectors: w^i · a_l = δ_il
        let w = std::array::from_fn(|r| [winv[(r, 0)], winv[(r, 1)], winv[(r, 2)]]);
        let slots = std::array::from_fn(|s| {
            topo.half_edge(topo.tet_edges[tet][h.edges[s]] as usize, g.v[i]) as u32
        });
        Ok(Probe {
            point,
            tet,
            slots,
            w,
        })
    }
    /// The field of the probe's hexahedron for the electric DoFs `u`.
    pub fn sample<T: Real>(&self, u: &[T]) -> [f64; 3] {
        let mut e = [0.0; 3];
        for s in 0..3 {
            let us = u[self.slots[s] as usize].f64();
            for c in 0..3 {
                e[c] += us * self.w[s][c];
            }
        }
        e
    }
}
