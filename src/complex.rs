//! The barycentric dual complex (design note §3).
//!
//! Dual points: tet barycentre `b_n`, face barycentre `g_f`, edge midpoint `m_e`.
//! Tet `n` is cut into 4 hexahedra `Omega_(n,v)` (one per vertex), each of volume
//! `|tet| / 4`, with corners `v, m_e (3 edges at v), g_f (3 faces at v), b_n`.
//!
//! Within `Omega_(n,v)` the primal half-edge vectors are `a_i = s_i (m_(e_i) - x_v)` with
//! `s_i = +1` when `v` is the start of `e_i` (so `a_i` points along `t_e`), and the dual
//! half-edge vectors are `ã_j = g_(f_j) - b_n` for the 3 faces of `n` containing `v`
//! (oriented outward from `n`).

use crate::mesh::Mesh;
use crate::mesh::topology::{FACE_CYCLE, LOCAL_EDGES, local_edge};
use crate::util::{V3, add, cross, scale, sub};

/// [`TetGeom::dual_face_faces`] of the tet with vertex ids `v` at `x` (without the rest of
/// the tet's geometry).
pub fn dual_face_faces(v: &[u32; 4], x: &[V3; 4], l: usize) -> (usize, usize) {
    let [i, j] = LOCAL_EDGES[l];
    let (a, b) = if v[i] < v[j] { (i, j) } else { (j, i) };
    // the other two local vertices, ascending (no allocation: this runs 6 times per tet)
    let mut others = (0..4).filter(|&k| k != a && k != b);
    let (c, d) = (others.next().unwrap_or(0), others.next().unwrap_or(0));
    let s = crate::util::det3(sub(x[b], x[a]), sub(x[c], x[a]), sub(x[d], x[a]));
    // Path from the face containing c (opposite d) through b_n to the face containing d
    // (opposite c) when s > 0; reversed otherwise.
    if s > 0.0 { (c, d) } else { (d, c) }
}

/// Geometry of one tetrahedron and its dual points.
#[derive(Clone, Copy, Debug)]
pub struct TetGeom {
    pub x: [V3; 4],
    /// Global vertex ids (positively oriented).
    pub v: [u32; 4],
    pub volume: f64,
    /// Barycentre `b_n`.
    pub b: V3,
    /// Barycentre of the face opposite local vertex k.
    pub g: [V3; 4],
    /// Midpoint of local edge l.
    pub m: [V3; 6],
}

impl TetGeom {
    pub fn new(mesh: &Mesh, n: usize) -> TetGeom {
        let x = mesh.tet_x(n);
        let v = mesh.tets[n];
        let b = scale(add(add(x[0], x[1]), add(x[2], x[3])), 0.25);
        let g = std::array::from_fn(|k| {
            let c = FACE_CYCLE[k];
            scale(add(add(x[c[0]], x[c[1]]), x[c[2]]), 1.0 / 3.0)
        });
        let m = std::array::from_fn(|l| {
            let [i, j] = LOCAL_EDGES[l];
            scale(add(x[i], x[j]), 0.5)
        });
        TetGeom {
            x,
            v,
            volume: mesh.tet_volume(n),
            b,
            g,
            m,
        }
    }

    /// Outward area vector of the face opposite local vertex `k`.
    pub fn face_area(&self, k: usize) -> V3 {
        let c = FACE_CYCLE[k];
        scale(
            cross(
                sub(self.x[c[1]], self.x[c[0]]),
                sub(self.x[c[2]], self.x[c[0]]),
            ),
            0.5,
        )
    }

    /// Tangent `t_e = x_end - x_start` of local edge `l` (global orientation: lower id first).
    pub fn tangent(&self, l: usize) -> V3 {
        let [i, j] = LOCAL_EDGES[l];
        if self.v[i] < self.v[j] {
            sub(self.x[j], self.x[i])
        } else {
            sub(self.x[i], self.x[j])
        }
    }

    /// Local (start, end) vertices of local edge `l` in its global orientation.
    pub fn edge_ends(&self, l: usize) -> (usize, usize) {
        let [i, j] = LOCAL_EDGES[l];
        if self.v[i] < self.v[j] {
            (i, j)
        } else {
            (j, i)
        }
    }

    /// The dual half-edges of local edge `l` that bound its dual face inside this tet, as
    /// `(face_plus, face_minus)`: the dual-face circulation of `l` in the right-hand sense
    /// about `t_e` is `F(n, face_plus) - F(n, face_minus)` (design note §7).
    pub fn dual_face_faces(&self, l: usize) -> (usize, usize) {
        dual_face_faces(&self.v, &self.x, l)
    }

    /// Area vector of the part of the dual face of local edge `l` inside this tet: the
    /// planar quad `(m_e, g_(f-), b_n, g_(f+))`, oriented along `t_e`.
    pub fn dual_face_area(&self, l: usize) -> V3 {
        let (fp, fm) = self.dual_face_faces(l);
        scale(
            cross(sub(self.b, self.m[l]), sub(self.g[fp], self.g[fm])),
            0.5,
        )
    }

    /// The hexahedron `Omega_(n, x_i)` of local vertex `i`.
    pub fn hexahedron(&self, i: usize) -> Hexahedron {
        let others: [usize; 3] = match i {
            0 => [1, 2, 3],
            1 => [0, 2, 3],
            2 => [0, 1, 3],
            _ => [0, 1, 2],
        };
        let edges = others.map(|j| local_edge(i, j));
        let a = std::array::from_fn(|s| {
            let l = edges[s];
            let d = sub(self.m[l], self.x[i]);
            if self.v[i] < self.v[others[s]] {
                d
            } else {
                scale(d, -1.0)
            }
        });
        // The faces containing i are those opposite the other vertices.
        let faces = others;
        let at = faces.map(|k| sub(self.g[k], self.b));
        Hexahedron {
            edges,
            faces,
            a,
            at,
            volume: self.volume / 4.0,
        }
    }
}

/// One hexahedron of the fractioned complex.
#[derive(Clone, Copy, Debug)]
pub struct Hexahedron {
    /// Local edges of the tet at this vertex.
    pub edges: [usize; 3],
    /// Local faces of the tet containing this vertex.
    pub faces: [usize; 3],
    /// Primal half-edge vectors (along `t_e`).
    pub a: [V3; 3],
    /// Dual half-edge vectors `g_f - b_n`.
    pub at: [V3; 3],
    pub volume: f64,
}

/// Volume of the hexahedron with corners `v, m_1..3, g_1..3, b` computed independently of
/// the `|tet|/4` formula: it splits into 6 tetrahedra `(v, m_i, g, b)` around the
/// diagonal `v - b`, one for each (edge, face) pair that are adjacent.
pub fn hexahedron_volume_by_subdivision(t: &TetGeom, i: usize) -> f64 {
    let h = t.hexahedron(i);
    let mut vol = 0.0;
    for (s, &l) in h.edges.iter().enumerate() {
        let _ = s;
        for &k in &h.faces {
            // face k contains edge l iff k is not an endpoint of l
            let [p, q] = LOCAL_EDGES[l];
            if k == p || k == q {
                continue;
            }
            let d = crate::util::det3(sub(t.m[l], t.x[i]), sub(t.g[k], t.x[i]), sub(t.b, t.x[i]));
            vol += d.abs() / 6.0;
        }
    }
    vol
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;
    use crate::util::{dot, norm};

    fn jittered() -> Mesh {
        let mut m = box_mesh([3, 3, 3], [1.0, 1.2, 0.9]);
        let mut r = crate::util::Rng::new(11);
        for p in m.nodes.iter_mut() {
            for c in p.iter_mut() {
                *c += 0.06 * r.sym();
            }
        }
        m
    }

    #[test]
    fn hexahedra_have_a_quarter_of_the_tet_volume() {
        let m = jittered();
        for n in 0..m.n_tets() {
            let t = TetGeom::new(&m, n);
            for i in 0..4 {
                let v = hexahedron_volume_by_subdivision(&t, i);
                assert!(
                    (v - t.volume / 4.0).abs() <= 1e-14 * t.volume,
                    "tet {n} vertex {i}: {v} vs {}",
                    t.volume / 4.0
                );
            }
        }
    }

    #[test]
    fn dual_face_parts_are_oriented_along_the_edge() {
        let m = jittered();
        for n in 0..m.n_tets() {
            let t = TetGeom::new(&m, n);
            for l in 0..6 {
                let s = t.dual_face_area(l);
                assert!(dot(s, t.tangent(l)) > 0.0);
                assert!(norm(s) > 0.0);
            }
        }
    }
}
