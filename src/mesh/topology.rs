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
//! Built in parallel from the vertex → tet incidence (one parallel sort of 4T keys,
//! [`super::incidence`]), which it keeps for the checks and the assembly.

use super::Mesh;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// The tets around each vertex (CSR, ascending tet, with the vertex's local index in
    /// each; [`super::incidence::vertex_tets`]): [`Topology::tets_at`].
    pub vert_tet_ptr: Vec<usize>,
    pub vert_tets: Vec<(u32, u8)>,
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
        let (vert_tet_ptr, vert_tets) = super::incidence::vertex_tets(mesh);
        let (edges, tet_edges) = number_edges(mesh, &vert_tet_ptr, &vert_tets);
        let (faces, face_tets, tet_faces) = number_faces(mesh, &vert_tet_ptr, &vert_tets)?;
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
            vert_tet_ptr,
            vert_tets,
        })
    }

    /// The tets around vertex `v`, ascending, with `v`'s local index in each
    /// ([`super::incidence`]).
    pub fn tets_at(&self, v: usize) -> &[(u32, u8)] {
        &self.vert_tets[self.vert_tet_ptr[v]..self.vert_tet_ptr[v + 1]]
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

/// Per-vertex lists as one CSR array: `fill(v, out)` appends vertex `v`'s entries to
/// `out` (or fails); run over chunks of vertices in parallel, one buffer per chunk, joined
/// in vertex order. The error is that of the first failing vertex.
#[allow(clippy::type_complexity)]
fn per_vertex<T: Send, E: Send>(
    nv: usize,
    fill: impl Fn(usize, &mut Vec<T>) -> std::result::Result<(), E> + Sync,
) -> std::result::Result<(Vec<usize>, Vec<T>), E> {
    const CHUNK: usize = 2048;
    let parts: Vec<std::result::Result<(Vec<T>, Vec<u32>), E>> = (0..nv.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (mut out, mut lens) = (Vec::new(), Vec::new());
            for v in c * CHUNK..((c + 1) * CHUNK).min(nv) {
                let before = out.len();
                fill(v, &mut out)?;
                lens.push((out.len() - before) as u32);
            }
            Ok((out, lens))
        })
        .collect();
    let parts: Vec<(Vec<T>, Vec<u32>)> =
        parts.into_iter().collect::<std::result::Result<_, E>>()?;
    let mut ptr = Vec::with_capacity(nv + 1);
    ptr.push(0usize);
    for (_, lens) in &parts {
        for &l in lens {
            ptr.push(ptr[ptr.len() - 1] + l as usize);
        }
    }
    let data = parts.into_par_iter().flat_map_iter(|(d, _)| d).collect();
    Ok((ptr, data))
}

/// Edges `(a, b)`, `a < b`, numbered by first appearance in tet order, and the 6 edges of
/// every tet, from the vertex → tet incidence, in parallel over vertices: vertex `a` lists
/// its edges `(a, b > a)` with the first position `6n + l` at which each appears (its tets
/// come in ascending order); the positions that are some edge's first are marked in a
/// bitmap of the 6T positions, and an edge's number is the count of marks before its own,
/// which is the number a pass over the tets in order gives it.
fn number_edges(mesh: &Mesh, vt_ptr: &[usize], vt: &[(u32, u8)]) -> (Vec<[u32; 2]>, Vec<[u32; 6]>) {
    let t = mesh.n_tets();
    let nv = mesh.n_vertices();
    // per vertex a: (b, first position) of each edge (a, b > a), ascending b
    let (adj_ptr, adj) = per_vertex(nv, |a, out: &mut Vec<(u32, u32)>| {
        let from = out.len();
        for &(n, i) in &vt[vt_ptr[a]..vt_ptr[a + 1]] {
            let tv = mesh.tets[n as usize];
            for (l, [p, q]) in LOCAL_EDGES.iter().enumerate() {
                let j = match i as usize {
                    x if x == *p => *q,
                    x if x == *q => *p,
                    _ => continue,
                };
                if tv[j] > a as u32 {
                    out.push((tv[j], 6 * n + l as u32));
                }
            }
        }
        // ascending b, and for each b its smallest position first
        out[from..].sort_unstable();
        let mut keep = from;
        for k in from..out.len() {
            if k == from || out[k].0 != out[keep - 1].0 {
                out[keep] = out[k];
                keep += 1;
            }
        }
        out.truncate(keep);
        Ok::<(), ()>(())
    })
    .unwrap_or_default();
    // the first positions, marked; the count of marks before each 64-bit word
    let words = (6 * t).div_ceil(64);
    let marks: Vec<AtomicU64> = (0..words)
        .into_par_iter()
        .map(|_| AtomicU64::new(0))
        .collect();
    adj.par_iter().for_each(|&(_, p)| {
        marks[p as usize / 64].fetch_or(1 << (p % 64), Ordering::Relaxed);
    });
    let marks: Vec<u64> = marks.into_par_iter().map(AtomicU64::into_inner).collect();
    let mut before = Vec::with_capacity(words);
    let mut run = 0u32;
    for w in &marks {
        before.push(run);
        run += w.count_ones();
    }
    let number = |p: u32| {
        before[p as usize / 64] + (marks[p as usize / 64] & ((1u64 << (p % 64)) - 1)).count_ones()
    };
    // the edges in number order: the marked positions in order
    let edges: Vec<[u32; 2]> = marks
        .par_iter()
        .enumerate()
        .flat_map_iter(|(w, &bits)| {
            (0..64).filter(move |b| bits >> b & 1 == 1).map(move |b| {
                let p = 64 * w + b;
                let tv = mesh.tets[p / 6];
                let [i, j] = LOCAL_EDGES[p % 6];
                [tv[i].min(tv[j]), tv[i].max(tv[j])]
            })
        })
        .collect();
    let tet_edges: Vec<[u32; 6]> = mesh
        .tets
        .par_iter()
        .map(|tv| {
            std::array::from_fn(|l| {
                let [i, j] = LOCAL_EDGES[l];
                let (a, b) = (tv[i].min(tv[j]), tv[i].max(tv[j]));
                let list = &adj[adj_ptr[a as usize]..adj_ptr[a as usize + 1]];
                let k = list.partition_point(|x| x.0 < b);
                number(list[k].1)
            })
        })
        .collect();
    (edges, tet_edges)
}

/// Faces (sorted vertex triples) in sorted order, the one or two tets of each (ascending),
/// and the 4 faces of every tet, from the vertex → tet incidence in parallel over vertices:
/// vertex `a` lists the faces whose smallest vertex it is, sorted, so the faces of all
/// vertices in vertex order are in sorted order; a face of three or more tets is refused.
#[allow(clippy::type_complexity)]
fn number_faces(
    mesh: &Mesh,
    vt_ptr: &[usize],
    vt: &[(u32, u8)],
) -> Result<(Vec<[u32; 3]>, Vec<[u32; 2]>, Vec<[u32; 4]>)> {
    let nv = mesh.n_vertices();
    // per vertex a: ((b, c), tets) of each face (a < b < c), ascending
    let found = per_vertex(nv, |a, out: &mut Vec<([u32; 2], [u32; 2])>| {
        let mut keys: Vec<([u32; 2], u32)> = Vec::with_capacity(48);
        for &(n, i) in &vt[vt_ptr[a]..vt_ptr[a + 1]] {
            let tv = mesh.tets[n as usize];
            for k in (0..4).filter(|&k| k != i as usize) {
                let c = FACE_CYCLE[k];
                let mut f = [tv[c[0]], tv[c[1]], tv[c[2]]];
                f.sort_unstable();
                if f[0] == a as u32 {
                    keys.push(([f[1], f[2]], n));
                }
            }
        }
        keys.sort_unstable();
        for g in keys.chunk_by(|x, y| x.0 == y.0) {
            if g.len() > 2 {
                return Err((a, g[0].0, g.iter().map(|x| x.1).collect::<Vec<u32>>()));
            }
            out.push((g[0].0, [g[0].1, g.get(1).map_or(NONE, |x| x.1)]));
        }
        Ok(())
    });
    let (fptr, per) = match found {
        Ok(x) => x,
        Err((a, bc, tets)) => {
            let ids: Vec<String> = tets
                .iter()
                .map(|&m| mesh.tet_ids[m as usize].to_string())
                .collect();
            return Err(Error::MeshInvalid {
                path: mesh.source.clone(),
                msg: format!(
                    "non-manifold face with nodes {:?} is shared by {} tetrahedra ({})",
                    [a as u32, bc[0], bc[1]],
                    tets.len(),
                    ids.join(", ")
                ),
            });
        }
    };
    let (faces, face_tets): (Vec<[u32; 3]>, Vec<[u32; 2]>) = (0..nv)
        .into_par_iter()
        .flat_map_iter(|a| {
            per[fptr[a]..fptr[a + 1]]
                .iter()
                .map(move |&(bc, ts)| ([a as u32, bc[0], bc[1]], ts))
        })
        .unzip();
    let tet_faces: Vec<[u32; 4]> = mesh
        .tets
        .par_iter()
        .map(|tv| {
            std::array::from_fn(|k| {
                let c = FACE_CYCLE[k];
                let mut f = [tv[c[0]], tv[c[1]], tv[c[2]]];
                f.sort_unstable();
                let a = f[0] as usize;
                let list = &per[fptr[a]..fptr[a + 1]];
                let j = list.partition_point(|x| x.0 < [f[1], f[2]]);
                (fptr[a] + j) as u32
            })
        })
        .collect();
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

    /// The numbering equals its sequential definition (edges by first appearance
    /// in tet order, faces in sorted order, their tets in tet order) on a box whose tets
    /// and vertices are shuffled by a seeded permutation.
    #[test]
    fn numbering_equals_its_sequential_definition() {
        use std::collections::{BTreeMap, HashMap};
        let mut m = box_mesh([5, 4, 3], [1.0, 1.3, 0.8]);
        let mut rng = crate::util::Rng::new(0x7e57);
        let nv = m.n_vertices();
        let mut perm: Vec<u32> = (0..nv as u32).collect();
        for i in (1..nv).rev() {
            perm.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        for tv in m.tets.iter_mut() {
            for v in tv.iter_mut() {
                *v = perm[*v as usize];
            }
        }
        for n in (1..m.tets.len()).rev() {
            let j = (rng.next_u64() % (n as u64 + 1)) as usize;
            m.tets.swap(n, j);
        }
        let top = Topology::build(&m).unwrap();
        // edges: first appearance
        let mut id: HashMap<[u32; 2], u32> = HashMap::new();
        let mut edges = vec![];
        for (n, tv) in m.tets.iter().enumerate() {
            for (l, [p, q]) in LOCAL_EDGES.iter().enumerate() {
                let e = [tv[*p].min(tv[*q]), tv[*p].max(tv[*q])];
                let k = *id.entry(e).or_insert_with(|| {
                    edges.push(e);
                    edges.len() as u32 - 1
                });
                assert_eq!(top.tet_edges[n][l], k, "tet {n} edge {l}");
            }
        }
        assert_eq!(top.edges, edges);
        // faces: sorted, with their tets in tet order
        let mut faces: BTreeMap<[u32; 3], Vec<u32>> = BTreeMap::new();
        for (n, tv) in m.tets.iter().enumerate() {
            for c in FACE_CYCLE {
                let mut f = [tv[c[0]], tv[c[1]], tv[c[2]]];
                f.sort_unstable();
                faces.entry(f).or_default().push(n as u32);
            }
        }
        let want: Vec<[u32; 3]> = faces.keys().copied().collect();
        assert_eq!(top.faces, want);
        for (i, ts) in faces.values().enumerate() {
            let pair = [ts[0], ts.get(1).copied().unwrap_or(NONE)];
            assert_eq!(top.face_tets[i], pair, "face {i}");
            for &n in ts {
                assert!(top.tet_faces[n as usize].contains(&(i as u32)));
            }
        }
    }

    /// A face of three tets is refused, naming them.
    #[test]
    fn a_face_of_three_tets_is_refused() {
        let mut m = box_mesh([1, 1, 1], [1.0, 1.0, 1.0]);
        let t0 = m.tets[0];
        m.nodes.push([2.0, 2.0, 2.0]);
        let w = (m.nodes.len() - 1) as u32;
        m.tets.push([t0[0], t0[1], t0[2], w]);
        m.tets.push([t0[0], t0[1], t0[2], w]);
        m.tet_ids.extend([100, 101]);
        m.tet_phys.extend([m.tet_phys[0]; 2]);
        let e = Topology::build(&m).unwrap_err().to_string();
        assert!(e.contains("shared by 3 tetrahedra"), "{e}");
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
