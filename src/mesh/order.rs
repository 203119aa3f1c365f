//! Orderings of a mesh's tets and nodes for memory locality, and the mesh renumbered in
//! them (issue 19's "locality ordering" route, measured by `dgatd bench` as the step rows
//! `…_morton` and `…_shuffled`).
//!
//! The time-stepping kernels gather through index tables: a tet's edges (numbered by first
//! appearance in the tet list, [`super::topology`]), an edge's tets, a vertex's half-edges.
//! How far apart the gathered entries lie in memory follows the numbering of the tets and
//! the nodes. [`morton`] orders points along the Z-order (Morton) curve of their
//! coordinates quantised to 21 bits per axis within the bounding box: points near in space
//! get near positions. [`shuffled`] is the opposite control, a seeded random permutation.
//!
//! [`Mesh::renumbered`] relabels the nodes and reorders the tets; each tet keeps its local
//! vertex order, so its orientation (positive) is unchanged. The discretisation of the
//! renumbered mesh is the same up to the numbering (edges are oriented from the lower new
//! vertex id, so the signs of some DoFs flip), and its spectrum is the same.

use super::Mesh;
use crate::util::{Rng, V3};
use rayon::prelude::*;

/// The numbering a run gives the mesh's tets and nodes (config key `mesh_order`, flag
/// `--mesh-order`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum MeshOrder {
    /// The file's (or the generator's) order, refined tets after their parents' order.
    #[default]
    File,
    /// Tets and nodes along a Z-order curve ([`Mesh::morton_ordered`]).
    Morton,
}

impl MeshOrder {
    pub fn is_file(&self) -> bool {
        *self == MeshOrder::File
    }
}

/// Spreads the low 21 bits of `x` to every third bit.
fn spread(x: u64) -> u64 {
    let mut x = x & 0x1f_ffff;
    x = (x | x << 32) & 0x1f_0000_0000_ffff;
    x = (x | x << 16) & 0x1f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    (x | x << 2) & 0x1249_2492_4924_9249
}

/// The Morton (Z-order) key of `p` quantised to 21 bits per axis in the box `lo..hi`.
fn morton_key(p: V3, lo: V3, hi: V3) -> u64 {
    let q = |c: usize| {
        let w = hi[c] - lo[c];
        let t = if w > 0.0 { (p[c] - lo[c]) / w } else { 0.0 };
        (t.clamp(0.0, 1.0) * ((1u64 << 21) - 1) as f64) as u64
    };
    spread(q(0)) | spread(q(1)) << 1 | spread(q(2)) << 2
}

/// The indices of `points` in Z-order (ties keep their order): entry `i` is the old index
/// of the point placed at `i`.
pub fn morton(points: &[V3]) -> Vec<u32> {
    let (lo, hi) = points.iter().fold(
        ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
        |(lo, hi), p| {
            (
                std::array::from_fn(|c| lo[c].min(p[c])),
                std::array::from_fn(|c| hi[c].max(p[c])),
            )
        },
    );
    let mut keyed: Vec<(u64, u32)> = points
        .par_iter()
        .enumerate()
        .map(|(i, &p)| (morton_key(p, lo, hi), i as u32))
        .collect();
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// A random permutation of `0..n` (Fisher-Yates from `seed`).
pub fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng::new(seed);
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (r.next_u64() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

/// The tets' centroids.
pub fn centroids(m: &Mesh) -> Vec<V3> {
    (0..m.n_tets())
        .into_par_iter()
        .map(|n| {
            let x = m.tet_x(n);
            std::array::from_fn(|c| 0.25 * (x[0][c] + x[1][c] + x[2][c] + x[3][c]))
        })
        .collect()
}

impl Mesh {
    /// This mesh with the tets in the order `tet_order` and the nodes in the order
    /// `node_order` (entry `i`: the old index of the tet or node placed at `i`; each a
    /// permutation, else `None`). Physical tags, element ids and surface groups follow.
    pub fn renumbered(&self, tet_order: &[u32], node_order: &[u32]) -> Option<Mesh> {
        let is_perm = |p: &[u32], n: usize| {
            let mut seen = vec![false; n];
            p.len() == n
                && p.iter()
                    .all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true))
        };
        if !is_perm(tet_order, self.tets.len()) || !is_perm(node_order, self.nodes.len()) {
            return None;
        }
        let mut new_id = vec![0u32; self.nodes.len()];
        for (new, &old) in node_order.iter().enumerate() {
            new_id[old as usize] = new as u32;
        }
        let tets = tet_order
            .par_iter()
            .map(|&n| self.tets[n as usize].map(|v| new_id[v as usize]))
            .collect();
        let surfaces = self
            .surfaces
            .iter()
            .map(|&(tri, tag)| {
                let mut t = tri.map(|v| new_id[v as usize]);
                t.sort_unstable();
                (t, tag)
            })
            .collect();
        let mut tet_new = vec![0u32; self.tets.len()];
        for (new, &old) in tet_order.iter().enumerate() {
            tet_new[old as usize] = new as u32;
        }
        let mut tet_groups: Vec<(u32, i32)> = self
            .tet_groups
            .iter()
            .map(|&(n, t)| (tet_new[n as usize], t))
            .collect();
        tet_groups.sort_unstable();
        Some(Mesh {
            source: format!("{} (renumbered)", self.source),
            nodes: node_order.iter().map(|&i| self.nodes[i as usize]).collect(),
            tets,
            tet_phys: tet_order
                .iter()
                .map(|&n| self.tet_phys[n as usize])
                .collect(),
            tet_ids: tet_order
                .iter()
                .map(|&n| self.tet_ids[n as usize])
                .collect(),
            tet_groups,
            physical_names: self.physical_names.clone(),
            surfaces,
            reoriented: self.reoriented,
            dropped_triangles: self.dropped_triangles.clone(),
            ignored: self.ignored.clone(),
        })
    }

    /// This mesh with tets and nodes in Z-order ([`morton`]).
    pub fn morton_ordered(&self) -> Mesh {
        self.renumbered(&morton(&centroids(self)), &morton(&self.nodes))
            .unwrap_or_else(|| unreachable!("morton returns permutations"))
    }

    /// This mesh with tets and nodes in a random order ([`shuffled`], seeds `seed` and
    /// `seed + 1`).
    pub fn shuffled(&self, seed: u64) -> Mesh {
        let t = shuffled(self.tets.len(), seed);
        let v = shuffled(self.nodes.len(), seed.wrapping_add(1));
        self.renumbered(&t, &v)
            .unwrap_or_else(|| unreachable!("shuffled returns permutations"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;

    #[test]
    fn spread_interleaves_bits() {
        assert_eq!(spread(0b101), 0b1_000_001);
        assert_eq!(spread(0x1f_ffff).count_ones(), 21);
        let k = morton_key([1.0, 0.0, 0.0], [0.0; 3], [1.0; 3]);
        assert_eq!(k, spread((1 << 21) - 1));
    }

    #[test]
    fn morton_puts_neighbours_near() {
        // points of a 16^3 grid in a shuffled order: after sorting, each run of 8
        // consecutive points fills one 2x2x2 cell (the Z-order's first level)
        let mut pts = Vec::new();
        for k in 0..16 {
            for j in 0..16 {
                for i in 0..16 {
                    pts.push([i as f64, j as f64, k as f64]);
                }
            }
        }
        let s = shuffled(pts.len(), 3);
        let pts: Vec<V3> = s.iter().map(|&i| pts[i as usize]).collect();
        let o = morton(&pts);
        for run in o.chunks(8) {
            let cell = |p: V3| [p[0] as i64 / 2, p[1] as i64 / 2, p[2] as i64 / 2];
            let c0 = cell(pts[run[0] as usize]);
            assert!(run.iter().all(|&i| cell(pts[i as usize]) == c0));
        }
    }

    /// The renumbered mesh has the same tets (their volumes, all positive) and surfaces;
    /// a non-permutation is refused. (The same operator spectrum: `tests/mesh/mesh_order.rs`.)
    #[test]
    fn renumbering_keeps_the_tets() {
        let m = box_mesh([3, 2, 4], [1.0, 0.7, 1.3]);
        for r in [m.morton_ordered(), m.shuffled(11)] {
            assert_eq!(r.tets.len(), m.tets.len());
            // six times the signed volumes, on a grid of 1e-9
            let vol = |mm: &Mesh| -> Vec<i64> {
                (0..mm.n_tets())
                    .map(|n| (mm.tet_volume(n) * 6e9) as i64)
                    .collect()
            };
            let (mut a, mut b) = (vol(&m), vol(&r));
            assert!(b.iter().all(|&x| x > 0));
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
            assert_eq!(r.surfaces.len(), m.surfaces.len());
        }
        assert!(m.renumbered(&[0, 0], &[]).is_none());
    }
}
