//! Oriented edges and faces, boundary flags and incidence maps of a tetrahedral mesh.
//!
//! - Edge `e = (a, b)` with `a < b` (vertex ids), oriented `a -> b` (design note §2).
//!   Edges are numbered in order of first appearance in the tet list (tet 0's six edges
//!   first, ...), so that consecutive tets touch nearby entries of edge-indexed arrays
//!   (memory locality of the primal gather on a GPU).
//! - Local edge `l` of a tet joins local vertices [`LOCAL_EDGES`]`[l]`.
//! - Local face `k` of a tet is the face opposite local vertex `k`; [`FACE_CYCLE`]`[k]`
//!   lists its vertices in the order whose right-hand rule gives the outward normal of a
//!   positively oriented tet.
//!
//! Built with parallel sorts: about 6T + 4T keys.

use super::Mesh;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Local vertex pairs of the 6 edges of a tet.
pub const LOCAL_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
/// Outward-oriented vertex cycle of the face opposite each local vertex.
pub const FACE_CYCLE: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

/// Local edge index joining local vertices `i != j`.
pub fn local_edge(i: usize, j: usize) -> usize {
    let (a, b) = if i < j { (i, j) } else { (j, i) };
    LOCAL_EDGES
        .iter()
        .position(|e| *e == [a, b])
        .expect("i != j in 0..4")
}

/// No second tet: the face is on the boundary.
pub const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct Topology {
    pub edges: Vec<[u32; 2]>,
    pub tet_edges: Vec<[u32; 6]>,
    /// Sorted vertex triples.
    pub faces: Vec<[u32; 3]>,
    /// The one or two tets sharing each face (second is [`NONE`] on the boundary).
    pub face_tets: Vec<[u32; 2]>,
    pub tet_faces: Vec<[u32; 4]>,
    pub boundary_edge: Vec<bool>,
    pub boundary_vertex: Vec<bool>,
    /// Edges at each vertex (CSR): `vert_edges[vert_edge_ptr[v]..vert_edge_ptr[v+1]]`, ascending.
    pub vert_edge_ptr: Vec<usize>,
    pub vert_edges: Vec<u32>,
    pub n_boundary_faces: usize,
    /// Every boundary face with the physical tag of its surface group (0: none), in face
    /// order.
    pub boundary_faces: Vec<(u32, i32)>,
}

impl Topology {
    pub fn build(mesh: &Mesh) -> Result<Topology> {
        let t = mesh.n_tets();
        let nv = mesh.n_vertices();
        if t.checked_mul(6).is_none_or(|x| x >= u32::MAX as usize) {
            return Err(Error::MeshInvalid {
                path: mesh.source.clone(),
                msg: format!(
                    "{t} tetrahedra exceed the supported maximum ({})",
                    u32::MAX / 6
                ),
            });
        }
        let (edges, tet_edges) = number_edges(mesh);
        let (faces, face_tets, tet_faces) = number_faces(mesh)?;
        let (boundary_edge, boundary_vertex, boundary_faces) =
            boundary(mesh, &edges, &tet_edges, &faces, &face_tets);
        let n_boundary_faces = boundary_faces.len();
        let (vert_edge_ptr, vert_edges) = vertex_edges(nv, &edges);
        Ok(Topology {
            edges,
            tet_edges,
            faces,
            face_tets,
            tet_faces,
            boundary_edge,
            boundary_vertex,
            vert_edge_ptr,
            vert_edges,
            n_boundary_faces,
            boundary_faces,
        })
    }

    pub fn n_edges(&self) -> usize {
        self.edges.len()
    }
    pub fn n_faces(&self) -> usize {
        self.faces.len()
    }
    /// Edges not on the boundary (their two half-edges carry free DoFs under PEC).
    pub fn n_free_edges(&self) -> usize {
        self.boundary_edge.iter().filter(|&&b| !b).count()
    }
    pub fn n_interior_vertices(&self) -> usize {
        self.boundary_vertex.iter().filter(|&&b| !b).count()
    }
    /// Edges at vertex `v`.
    pub fn edges_at(&self, v: usize) -> &[u32] {
        &self.vert_edges[self.vert_edge_ptr[v]..self.vert_edge_ptr[v + 1]]
    }
    /// The edge joining vertices `a` and `b`, if there is one.
    pub fn edge_between(&self, a: u32, b: u32) -> Option<u32> {
        self.edges_at(a as usize)
            .iter()
            .copied()
            .find(|&e| self.edges[e as usize].contains(&b))
    }
    /// Half-edge slot of edge `e` at its vertex `v`: `2e` at the start, `2e + 1` at the end.
    pub fn half_edge(&self, e: usize, v: u32) -> usize {
        2 * e + (self.edges[e][1] == v) as usize
    }
}

/// Edges `(a, b)`, `a < b`, numbered by first appearance in tet order, and the 6 edges of
/// every tet (parallel sort of 6T keys).
fn number_edges(mesh: &Mesh) -> (Vec<[u32; 2]>, Vec<[u32; 6]>) {
    let t = mesh.n_tets();
    let mut ek: Vec<(u64, u32)> = (0..t * 6)
        .into_par_iter()
        .map(|i| {
            let tv = mesh.tets[i / 6];
            let [p, q] = LOCAL_EDGES[i % 6];
            let (a, b) = (tv[p].min(tv[q]), tv[p].max(tv[q]));
            (((a as u64) << 32) | b as u64, i as u32)
        })
        .collect();
    ek.par_sort_unstable();
    let mut edges = Vec::with_capacity(t * 6 / 5);
    let mut tet_edges = vec![[0u32; 6]; t];
    let mut last = u64::MAX;
    for &(k, i) in &ek {
        if k != last {
            edges.push([(k >> 32) as u32, k as u32]);
            last = k;
        }
        tet_edges[i as usize / 6][i as usize % 6] = (edges.len() - 1) as u32;
    }
    drop(ek);
    // Renumber edges by first appearance in tet order.
    let mut newid = vec![u32::MAX; edges.len()];
    let mut next = 0u32;
    for te in &tet_edges {
        for &e in te {
            if newid[e as usize] == u32::MAX {
                newid[e as usize] = next;
                next += 1;
            }
        }
    }
    let mut renum = vec![[0u32; 2]; edges.len()];
    for (old, e) in edges.iter().enumerate() {
        renum[newid[old] as usize] = *e;
    }
    let edges = renum;
    tet_edges.par_iter_mut().for_each(|te| {
        for e in te.iter_mut() {
            *e = newid[*e as usize];
        }
    });
    drop(newid);
    (edges, tet_edges)
}

/// Faces (sorted vertex triples), the one or two tets of each, and the 4 faces of every tet;
/// a face of three or more tets is refused.
#[allow(clippy::type_complexity)]
fn number_faces(mesh: &Mesh) -> Result<(Vec<[u32; 3]>, Vec<[u32; 2]>, Vec<[u32; 4]>)> {
    let t = mesh.n_tets();
    let mut fk: Vec<([u32; 3], u32)> = (0..t * 4)
        .into_par_iter()
        .map(|i| {
            let tv = mesh.tets[i / 4];
            let c = FACE_CYCLE[i % 4];
            let mut f = [tv[c[0]], tv[c[1]], tv[c[2]]];
            f.sort_unstable();
            (f, i as u32)
        })
        .collect();
    fk.par_sort_unstable();
    let mut faces = Vec::with_capacity(t * 2 + 16);
    let mut face_tets: Vec<[u32; 2]> = Vec::with_capacity(t * 2 + 16);
    let mut tet_faces = vec![[0u32; 4]; t];
    let mut i = 0;
    while i < fk.len() {
        let mut j = i + 1;
        while j < fk.len() && fk[j].0 == fk[i].0 {
            j += 1;
        }
        if j - i > 2 {
            let ids: Vec<String> = fk[i..j]
                .iter()
                .map(|&(_, x)| mesh.tet_ids[x as usize / 4].to_string())
                .collect();
            return Err(Error::MeshInvalid {
                path: mesh.source.clone(),
                msg: format!(
                    "non-manifold face with nodes {:?} is shared by {} tetrahedra ({})",
                    fk[i].0,
                    j - i,
                    ids.join(", ")
                ),
            });
        }
        let id = faces.len() as u32;
        faces.push(fk[i].0);
        let mut pair = [NONE; 2];
        for (s, &(_, x)) in fk[i..j].iter().enumerate() {
            pair[s] = x / 4;
            tet_faces[x as usize / 4][x as usize % 4] = id;
        }
        face_tets.push(pair);
        i = j;
    }
    drop(fk);
    Ok((faces, face_tets, tet_faces))
}

/// Boundary edges and vertices, and every boundary face with its surface group's tag.
#[allow(clippy::type_complexity)]
fn boundary(
    mesh: &Mesh,
    edges: &[[u32; 2]],
    tet_edges: &[[u32; 6]],
    faces: &[[u32; 3]],
    face_tets: &[[u32; 2]],
) -> (Vec<bool>, Vec<bool>, Vec<(u32, i32)>) {
    let nv = mesh.n_vertices();
    let mut boundary_edge = vec![false; edges.len()];
    let mut boundary_vertex = vec![false; nv];
    let mut boundary_faces = Vec::new();
    for (fid, (f, ft)) in faces.iter().zip(face_tets).enumerate() {
        if ft[1] != NONE {
            continue;
        }
        let tag = mesh
            .surfaces
            .binary_search_by(|s| s.0.cmp(f))
            .map(|i| mesh.surfaces[i].1)
            .unwrap_or(0);
        boundary_faces.push((fid as u32, tag));
        let n = ft[0] as usize;
        for &v in f {
            boundary_vertex[v as usize] = true;
        }
        // The 3 edges of the face are the tet's edges not touching the opposite vertex.
        for l in 0..6 {
            let [p, q] = LOCAL_EDGES[l];
            let tv = mesh.tets[n];
            if f.contains(&tv[p]) && f.contains(&tv[q]) {
                boundary_edge[tet_edges[n][l] as usize] = true;
            }
        }
    }
    (boundary_edge, boundary_vertex, boundary_faces)
}

/// The edges at each vertex (CSR, ascending edge id).
fn vertex_edges(nv: usize, edges: &[[u32; 2]]) -> (Vec<usize>, Vec<u32>) {
    let mut vert_edge_ptr = vec![0usize; nv + 1];
    for e in edges {
        vert_edge_ptr[e[0] as usize + 1] += 1;
        vert_edge_ptr[e[1] as usize + 1] += 1;
    }
    for v in 0..nv {
        vert_edge_ptr[v + 1] += vert_edge_ptr[v];
    }
    let mut fill = vert_edge_ptr.clone();
    let mut vert_edges = vec![0u32; vert_edge_ptr[nv]];
    for (id, e) in edges.iter().enumerate() {
        for &v in e {
            vert_edges[fill[v as usize]] = id as u32;
            fill[v as usize] += 1;
        }
    }
    (vert_edge_ptr, vert_edges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;

    #[test]
    fn euler_characteristic_of_a_ball_is_one() {
        let m = box_mesh([3, 2, 4], [1.0, 1.0, 1.0]);
        let t = Topology::build(&m).unwrap();
        let chi =
            m.n_vertices() as i64 - t.n_edges() as i64 + t.n_faces() as i64 - m.n_tets() as i64;
        assert_eq!(chi, 1);
        // boundary surface is a sphere: V_b - E_b + F_b = 2
        let vb = t.boundary_vertex.iter().filter(|&&b| b).count() as i64;
        let eb = t.boundary_edge.iter().filter(|&&b| b).count() as i64;
        assert_eq!(vb - eb + t.n_boundary_faces as i64, 2);
        // every interior face has 2 tets, 4T = 2F_i + F_b
        assert_eq!(
            4 * m.n_tets(),
            2 * (t.n_faces() - t.n_boundary_faces) + t.n_boundary_faces
        );
    }

    #[test]
    fn face_cycles_are_outward() {
        use crate::util::*;
        let m = box_mesh([2, 2, 2], [1.0, 2.0, 0.5]);
        for n in 0..m.n_tets() {
            let x = m.tet_x(n);
            for k in 0..4 {
                let c = FACE_CYCLE[k];
                let nrm = cross(sub(x[c[1]], x[c[0]]), sub(x[c[2]], x[c[0]]));
                assert!(dot(nrm, sub(x[c[0]], x[k])) > 0.0, "tet {n} face {k}");
            }
        }
    }
}
