//! Surface conductance of boundary faces: the discrete first-order absorbing (Silver–Müller)
//! condition and any other surface term `J_s = Y E_t` (design note §12).
//!
//! On a boundary face `f` (a triangle of the mesh's boundary) the condition
//! `n × H = −Y n × (n × E)` (`Y = 1/η = sqrt(ε_r/μ_r)` in the code's units, where the vacuum
//! impedance is 1) removes from the dual-face circulation of each boundary edge the part of the
//! dual face outside the mesh, and replaces it with a surface current `Y E_t`. Discretely this is
//! the 2-D analogue of the hexahedral mass matrices (§5): the barycentric subdivision cuts `f`
//! into three kites `Q_(f,v) = (v, m_e1, g_f, m_e2)` of area `|f|/3`, one per vertex `v`, with
//! the two half-edge vectors `a_i = s_i (m_(e_i) − x_v)` of the triangle's edges at `v`
//! (`s_i = +1` when `v` starts `e_i`, so that `a_i` points along `t_(e_i)`). A uniform
//! tangential field in the kite is `E_t = Σ U_i w^i` with the in-plane dual basis
//! `w^i · a_l = δ_il`, so
//!
//! ```text
//!     G_(f,v)[i][l] = Y_f |f|/3 · w^i · w^l = Y_f |f|/3 · (Aᵀ A)⁻¹[i][l]     (2x2, SPD)
//! ```
//!
//! with `A = [a_1 a_2]`. `G_(f,v)` adds onto the rows and columns of the two half-edges at `v`
//! in that vertex's loss matrix (`Msig_v`), which the update treats by Crank–Nicolson exactly as a
//! volume conductivity. Exact identity (tested): for a uniform field `e0` and `U_i = e0 · a_i`,
//! `Uᵀ G U = Σ_f Y_f |f| |P_f e0|²` (`P_f` the projection onto the plane of `f`), the power a
//! uniform field loses through the surface.

use crate::mesh::{Mesh, Topology};
#[cfg(test)]
use crate::util::V3;
use crate::util::{cross, dot, norm, sub};

/// One entry of a per-vertex surface matrix: half-edge slots `i`, `j` (both at the same
/// vertex, see [`Topology::half_edge`]) and the value (an admittance times an area, in the
/// code's units: metres, vacuum impedance 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceEntry {
    pub vertex: u32,
    pub i: u32,
    pub j: u32,
    pub value: f64,
}

/// The surface matrices of `faces` (indices into `topo.faces`, each on the boundary), with
/// the admittance `y[k]` of `faces[k]`: four entries per (face, vertex) (the 2x2 block,
/// symmetric), in face order. Faces that are degenerate (zero area) give nothing.
pub fn surface_conductance(
    mesh: &Mesh,
    topo: &Topology,
    faces: &[u32],
    y: &[f64],
) -> Vec<SurfaceEntry> {
    let mut out = Vec::with_capacity(12 * faces.len());
    for (&f, &yf) in faces.iter().zip(y) {
        let nodes = topo.faces[f as usize];
        let x = nodes.map(|n| mesh.nodes[n as usize]);
        let area = 0.5 * norm(cross(sub(x[1], x[0]), sub(x[2], x[0])));
        if !(area > 0.0) {
            continue;
        }
        for k in 0..3 {
            let v = nodes[k];
            let others = [nodes[(k + 1) % 3], nodes[(k + 2) % 3]];
            let mut a = [[0.0; 3]; 2];
            let mut slot = [0u32; 2];
            for (i, &o) in others.iter().enumerate() {
                let e = topo.edge_between(v, o).expect("an edge of a mesh face") as usize;
                let s = if topo.edges[e][0] == v { 1.0 } else { -1.0 };
                let d = sub(mesh.nodes[o as usize], x[k]);
                a[i] = [0.5 * s * d[0], 0.5 * s * d[1], 0.5 * s * d[2]];
                slot[i] = topo.half_edge(e, v) as u32;
            }
            let g = [
                [dot(a[0], a[0]), dot(a[0], a[1])],
                [dot(a[1], a[0]), dot(a[1], a[1])],
            ];
            let det = g[0][0] * g[1][1] - g[0][1] * g[1][0];
            let c = yf * area / 3.0 / det;
            let inv = [[g[1][1], -g[0][1]], [-g[1][0], g[0][0]]];
            for i in 0..2 {
                for j in 0..2 {
                    out.push(SurfaceEntry {
                        vertex: v,
                        i: slot[i],
                        j: slot[j],
                        value: c * inv[i][j],
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
/// `Uᵀ G U` for the entries `g` and half-edge values `u` (indexed by slot).
pub fn quadratic_form(g: &[SurfaceEntry], u: &[f64]) -> f64 {
    g.iter()
        .map(|e| u[e.i as usize] * e.value * u[e.j as usize])
        .sum()
}

#[cfg(test)]
/// The outward unit normal and area of a boundary face (for tests and reports).
pub fn face_normal_area(mesh: &Mesh, topo: &Topology, f: u32) -> (V3, f64) {
    let x = topo.faces[f as usize].map(|n| mesh.nodes[n as usize]);
    let c = cross(sub(x[1], x[0]), sub(x[2], x[0]));
    let a = norm(c);
    let n = [c[0] / a, c[1] / a, c[2] / a];
    // outward: away from the barycentre of the face's tet
    let t = topo.face_tets[f as usize][0] as usize;
    let b = mesh.tets[t]
        .iter()
        .map(|&v| mesh.nodes[v as usize])
        .fold([0.0; 3], |s, p| {
            [s[0] + p[0] / 4.0, s[1] + p[1] / 4.0, s[2] + p[2] / 4.0]
        });
    let s = if dot(n, sub(x[0], b)) > 0.0 {
        1.0
    } else {
        -1.0
    };
    ([s * n[0], s * n[1], s * n[2]], 0.5 * a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;
    use crate::util::Rng;

    /// A uniform field loses `Σ_f Y_f |f| |P_f e0|²` through the surface, exactly, on jittered
    /// boxes of random size and admittances.
    #[test]
    fn uniform_fields_lose_their_tangential_power_exactly() {
        let mut rng = Rng::new(0xab5);
        for trial in 0..4 {
            let n = [2 + trial, 3, 2 + (trial % 2)];
            let l = [
                0.5 + rng.uniform(),
                0.5 + rng.uniform(),
                0.5 + 2.0 * rng.uniform(),
            ];
            let mut mesh = box_mesh(n, l);
            let h = l.iter().cloned().fold(f64::MAX, f64::min) / 8.0;
            for p in mesh.nodes.iter_mut() {
                for c in p.iter_mut() {
                    *c += 0.3 * h * rng.sym();
                }
            }
            let topo = Topology::build(&mesh).unwrap();
            let faces: Vec<u32> = topo.boundary_faces.iter().map(|&(f, _)| f).collect();
            let y: Vec<f64> = faces.iter().map(|_| 0.5 + rng.uniform()).collect();
            let g = surface_conductance(&mesh, &topo, &faces, &y);
            assert_eq!(g.len(), 12 * faces.len());
            let e0 = [rng.sym(), rng.sym(), rng.sym()];
            let mut u = vec![0.0; 2 * topo.n_edges()];
            for (e, &[a, b]) in topo.edges.iter().enumerate() {
                let d = sub(mesh.nodes[b as usize], mesh.nodes[a as usize]);
                let half = 0.5 * dot(e0, d);
                u[2 * e] = half;
                u[2 * e + 1] = half;
            }
            let got = quadratic_form(&g, &u);
            let want: f64 = faces
                .iter()
                .zip(&y)
                .map(|(&f, &yf)| {
                    let (nrm, a) = face_normal_area(&mesh, &topo, f);
                    let en = dot(e0, nrm);
                    yf * a * (dot(e0, e0) - en * en)
                })
                .sum();
            assert!(
                (got - want).abs() <= 1e-13 * want.abs(),
                "trial {trial}: {got} vs {want}"
            );
            // symmetric positive: every vertex block
            for blk in g.chunks(4) {
                assert_eq!(blk[1].value, blk[2].value);
                assert!(blk[0].value > 0.0 && blk[3].value > 0.0);
                assert!(blk[0].value * blk[3].value > blk[1].value * blk[2].value);
            }
        }
    }
}
