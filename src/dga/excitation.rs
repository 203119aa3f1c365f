//! Sources and probes in the fractioned DoFs (design note §4–5).
//!
//! - Source: a uniform current density `J = w(t) d̂` (A/m², unit amplitude) inside the tet
//!   containing a point, or inside a ball of tets around it ([`Source::region`]); the
//!   current through the dual face part of each free edge `e` of a source tet `n` is
//!   `j_e += d̂ · S̃_e(n)` (both half-edges of `e` get it, summed over the source tets), and
//!   the update subtracts `w(t_(n+1/2)) Δt Meps⁻¹ j` from `U`. In each tet
//!   `Σ_e S̃_e(n) ⊗ ℓ_e = V_n I` (design note §3), so against any uniform field `E₀` the
//!   source does the work `Σ_e j_e ℓ_e · E₀ = V d̂ · E₀`, `V` the source's volume: its
//!   electric dipole moment is that of the continuum current. A region that is symmetric
//!   about the point (the inner polyhedron of a [`crate::mesh::generate::ball_mesh`], radius
//!   its first shell) also has the continuum's zero magnetic dipole and quadrupole moments,
//!   which a single tet, whose centroid is off the point by a quarter of its size, has not.
//! - Probe: the uniform field of the hexahedron containing the point (the barycentric
//!   dual cell of the vertex with the largest barycentric coordinate):
//!   `E = Σ_i U_(h_i) w^i`, `w^i` the dual basis of the 3 half-edge vectors.

use super::Dga;
use crate::complex::TetGeom;
use crate::error::{Error, Result};
use crate::mesh::{Mesh, Topology};
use crate::real::Real;
use crate::util::{V3, dot, norm};
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
        Self::located_in(mesh, point, dir, mesh.locate(point))
    }

    /// [`Source::located`] with the tet containing `point` found already ([`Mesh::locate`];
    /// None: outside the mesh).
    pub fn located_in(mesh: &Mesh, point: V3, dir: V3, tet: Option<usize>) -> Result<Source> {
        let nd = norm(dir);
        if !(nd > 0.0 && nd.is_finite()) {
            return Err(Error::config(
                "source direction",
                format!("{dir:?}"),
                "must be a non-zero finite vector",
            ));
        }
        let tet = tet.ok_or_else(|| {
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

    /// The source's current pattern `g = Meps⁻¹ j` (for unit Δt): a uniform current in the
    /// tet containing `point`.
    pub fn new(mesh: &Mesh, topo: &Topology, dga: &Dga, point: V3, dir: V3) -> Result<Source> {
        Source::region(mesh, topo, dga, point, dir, 0.0)
    }

    /// A uniform current in every tet whose four vertices lie within `radius` (m, relative
    /// tolerance 1e-9) of `point`, and always in the tet containing it (`radius = 0`: that
    /// tet alone, [`Source::new`]).
    pub fn region(
        mesh: &Mesh,
        topo: &Topology,
        dga: &Dga,
        point: V3,
        dir: V3,
        radius: f64,
    ) -> Result<Source> {
        let at = (point, mesh.locate(point));
        Self::region_with(mesh, topo, dga, at, dir, radius, &|_| Ok(None))
    }

    /// [`Source::region`] for a `dga` whose masses may live on a device only (its host copy
    /// holds the layouts, [`Dga::has_masses`] false): the inverse blocks of the source's
    /// vertices are then assembled on the host from `media`
    /// ([`crate::dga::meps_inverse_rows`]), so the pattern equals the host-assembled run's
    /// bit for bit.
    ///
    /// `at` is the point and the tet containing it ([`Mesh::locate`]; None: outside).
    pub fn region_on(
        mesh: &Mesh,
        topo: &Topology,
        dga: &Dga,
        media: &crate::problem::Media,
        at: (V3, Option<usize>),
        dir: V3,
        radius: f64,
    ) -> Result<Source> {
        if dga.has_masses() {
            return Self::region_with(mesh, topo, dga, at, dir, radius, &|_| Ok(None));
        }
        let rows = |halves: &[bool]| -> Result<Option<super::VertexBlocks>> {
            let mut rows = vec![false; mesh.n_vertices()];
            for (h, _) in halves.iter().enumerate().filter(|x| *x.1) {
                rows[topo.edges[h / 2][h % 2] as usize] = true;
            }
            super::meps_inverse_rows(mesh, topo, media, &dga.free_edge, &rows).map(Some)
        };
        Self::region_with(mesh, topo, dga, at, dir, radius, &rows)
    }

    /// [`Source::region`] with `Meps⁻¹` from `blocks(touched half-edges)` where it gives
    /// one, else the `dga`'s.
    #[allow(clippy::type_complexity)]
    fn region_with(
        mesh: &Mesh,
        topo: &Topology,
        dga: &Dga,
        (point, at): (V3, Option<usize>),
        dir: V3,
        radius: f64,
        blocks: &dyn Fn(&[bool]) -> Result<Option<super::VertexBlocks>>,
    ) -> Result<Source> {
        check_radius(radius)?;
        let Source { dir, tet, .. } = Source::located_in(mesh, point, dir, at)?;
        let reach = radius * (1.0 + 1e-9);
        let mut tets = vec![tet];
        if radius > 0.0 {
            tets.extend((0..mesh.n_tets()).filter(|&n| {
                n != tet
                    && mesh
                        .tet_x(n)
                        .iter()
                        .all(|x| norm(crate::util::sub(*x, point)) <= reach)
            }));
        }
        let mut j = vec![0.0; dga.n_half()];
        let mut edges = Vec::new();
        for &n in &tets {
            let g = TetGeom::new(mesh, n);
            for l in 0..6 {
                let e = topo.tet_edges[n][l] as usize;
                if !dga.free_edge[e] {
                    continue;
                }
                let je = dot(dir, g.dual_face_area(l));
                j[2 * e] += je;
                j[2 * e + 1] += je;
                edges.push(e as u32);
            }
        }
        edges.sort_unstable();
        edges.dedup();
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
        let touched: Vec<bool> = j.iter().map(|&x| x != 0.0).collect();
        match blocks(&touched)? {
            Some(b) => b.apply_add(&j, &mut gv),
            None => dga.meps_inv.apply_add(&j, &mut gv),
        }
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

/// The `source_radius` of a configuration or of [`Source::region`]: a finite length >= 0.
pub fn check_radius(radius: f64) -> Result<()> {
    if radius >= 0.0 && radius.is_finite() {
        Ok(())
    } else {
        Err(Error::config(
            "source_radius",
            format!("{radius}"),
            "must be a finite length >= 0 (m)",
        ))
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
        Self::in_tet(mesh, topo, point, mesh.locate(point))
    }

    /// [`Probe::new`] with the tet containing `point` found already ([`Mesh::locate`];
    /// None: outside the mesh).
    pub fn in_tet(mesh: &Mesh, topo: &Topology, point: V3, tet: Option<usize>) -> Result<Probe> {
        let tet = tet.ok_or_else(|| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;
    use crate::problem::Media;
    use crate::util::{Rng, sub};

    /// `Σ_e j_e ℓ_e · E₀ = V d̂ · E₀` (module docs) for balls of tets inside random jittered
    /// boxes: the region's current is the continuum's uniform current over its tets, and
    /// `radius = 0` is the one-tet source of [`Source::new`], bit for bit.
    #[test]
    fn a_region_source_does_the_work_of_its_volume() {
        let mut rng = Rng::new(41);
        for case in 0..3 {
            let n = [5 + case, 6, 4 + 2 * case];
            let l = [1.0, 0.8, 0.6];
            let mut m = box_mesh(n, l);
            for p in m.nodes.iter_mut() {
                if (0..3).all(|c| p[c] > 1e-9 && p[c] < l[c] - 1e-9) {
                    for c in 0..3 {
                        p[c] += 0.25 * (l[c] / n[c] as f64) * rng.sym();
                    }
                }
            }
            let topo = Topology::build(&m).unwrap();
            let dga = Dga::assemble(&m, &topo, &Media::vacuum(m.n_tets())).unwrap();
            let point = [
                0.5 + 0.1 * rng.sym(),
                0.4 + 0.1 * rng.sym(),
                0.3 + 0.05 * rng.sym(),
            ];
            let dir = [rng.sym(), rng.sym(), rng.sym()];
            let e0 = [rng.sym(), rng.sym(), rng.sym()];
            // 0.17 to 0.22 m, about one to two cells: the ball stays clear of the walls
            let radius = 0.17 + 0.05 * rng.uniform();
            let s = Source::region(&m, &topo, &dga, point, dir, radius).unwrap();
            let inside: Vec<usize> = (0..m.n_tets())
                .filter(|&t| {
                    t == s.tet
                        || m.tet_x(t)
                            .iter()
                            .all(|x| norm(sub(*x, point)) <= radius * (1.0 + 1e-9))
                })
                .collect();
            assert!(inside.len() >= 4, "case {case}: {} tets", inside.len());
            let v: f64 = inside.iter().map(|&t| m.tet_volume(t)).sum();
            // both half-edges of an edge carry j_e
            let work: f64 = s
                .current
                .iter()
                .map(|&(h, j)| {
                    let [a, b] = topo.edges[h as usize / 2];
                    0.5 * j * dot(sub(m.nodes[b as usize], m.nodes[a as usize]), e0)
                })
                .sum();
            let want = v * dot(s.dir, e0);
            assert!(
                (work - want).abs() <= 1e-12 * v * norm(e0),
                "case {case}: work {work}, V d·E0 {want}"
            );
            let one = Source::new(&m, &topo, &dga, point, dir).unwrap();
            let zero = Source::region(&m, &topo, &dga, point, dir, 0.0).unwrap();
            assert_eq!(one.current, zero.current);
            assert_eq!(one.pattern, zero.pattern);
            assert!(s.current.len() > one.current.len());
        }
    }

    #[test]
    fn a_bad_radius_is_refused_by_name() {
        let m = box_mesh([3, 3, 3], [1.0, 1.0, 1.0]);
        let topo = Topology::build(&m).unwrap();
        let dga = Dga::assemble(&m, &topo, &Media::vacuum(m.n_tets())).unwrap();
        for r in [-0.1, f64::NAN, f64::INFINITY] {
            let e = Source::region(&m, &topo, &dga, [0.5, 0.4, 0.45], [0.0, 0.0, 1.0], r)
                .unwrap_err()
                .to_string();
            assert!(e.contains("source_radius"), "{e}");
        }
    }
}
