//! The tets around each vertex, built in parallel.
//!
//! `vt[ptr[v]..ptr[v + 1]]` holds `(tet, local vertex)` for every tet with vertex `v`,
//! tets ascending: the summation order of every vertex block (host and device assembly)
//! and the neighbourhoods of the mesh checks ([`super::check`]). A parallel counting sort:
//! counts and starts per vertex, every entry stored at a free place of its vertex's range
//! (atomic cursors, so in no particular order), then each vertex's few entries sorted: the
//! same lists as one counting pass over the tets in order, at a fraction of its time on many
//! cores. Meshes of 2³⁰ tets or more (keys `n << 2 | i` would not fit) take that one pass.

use super::Mesh;
use rayon::prelude::*;

/// The vertex → tet incidence of `mesh` (see the module doc).
pub fn vertex_tets(mesh: &Mesh) -> (Vec<usize>, Vec<(u32, u8)>) {
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
    let nv = mesh.n_vertices();
    if mesh.n_tets() >= 1 << 30 {
        return counting(mesh);
    }
    // counts, starts, then every entry at a free place of its vertex's range (atomic
    // cursors), and each vertex's few entries sorted: ascending tet as one pass in order
    let count: Vec<AtomicU32> = (0..nv).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    mesh.tets.par_iter().for_each(|tv| {
        for &v in tv {
            count[v as usize].fetch_add(1, Relaxed);
        }
    });
    let mut ptr = Vec::with_capacity(nv + 1);
    ptr.push(0usize);
    for c in &count {
        ptr.push(ptr[ptr.len() - 1] + c.load(Relaxed) as usize);
    }
    let cursor = count;
    cursor.par_iter().for_each(|c| c.store(0, Relaxed));
    let keys: Vec<AtomicU64> = (0..ptr[nv])
        .into_par_iter()
        .map(|_| AtomicU64::new(0))
        .collect();
    mesh.tets.par_iter().enumerate().for_each(|(n, tv)| {
        for (i, &v) in tv.iter().enumerate() {
            let at = ptr[v as usize] + cursor[v as usize].fetch_add(1, Relaxed) as usize;
            keys[at].store(((n as u64) << 2) | i as u64, Relaxed);
        }
    });
    let mut keys: Vec<u64> = keys.into_par_iter().map(AtomicU64::into_inner).collect();
    let mut runs = Vec::with_capacity(nv);
    let mut rest = keys.as_mut_slice();
    for v in 0..nv {
        let (run, tail) = std::mem::take(&mut rest).split_at_mut(ptr[v + 1] - ptr[v]);
        runs.push(run);
        rest = tail;
    }
    runs.into_par_iter().for_each(|r| r.sort_unstable());
    let vt = keys
        .par_iter()
        .map(|&k| ((k >> 2) as u32, (k & 3) as u8))
        .collect();
    (ptr, vt)
}

/// [`vertex_tets`] for the vertices `v` with `rows[v]` only (every other list empty): the
/// tets with such a vertex, found in one parallel pass, counted in order. The lists of
/// those vertices equal [`vertex_tets`]'s.
pub fn vertex_tets_of(mesh: &Mesh, rows: &[bool]) -> (Vec<usize>, Vec<(u32, u8)>) {
    let nv = mesh.n_vertices();
    let tets: Vec<u32> = (0..mesh.n_tets() as u32)
        .into_par_iter()
        .filter(|&n| mesh.tets[n as usize].iter().any(|&v| rows[v as usize]))
        .collect();
    let mut ptr = vec![0usize; nv + 1];
    for &n in &tets {
        for &v in &mesh.tets[n as usize] {
            if rows[v as usize] {
                ptr[v as usize + 1] += 1;
            }
        }
    }
    for v in 0..nv {
        ptr[v + 1] += ptr[v];
    }
    let mut fill = ptr.clone();
    let mut vt = vec![(0u32, 0u8); ptr[nv]];
    for &n in &tets {
        for (i, &v) in mesh.tets[n as usize].iter().enumerate() {
            if rows[v as usize] {
                vt[fill[v as usize]] = (n, i as u8);
                fill[v as usize] += 1;
            }
        }
    }
    (ptr, vt)
}

/// One counting pass over the tets in order.
fn counting(mesh: &Mesh) -> (Vec<usize>, Vec<(u32, u8)>) {
    let nv = mesh.n_vertices();
    let mut ptr = vec![0usize; nv + 1];
    for tv in &mesh.tets {
        for &v in tv {
            ptr[v as usize + 1] += 1;
        }
    }
    for v in 0..nv {
        ptr[v + 1] += ptr[v];
    }
    let mut fill = ptr.clone();
    let mut vt = vec![(0u32, 0u8); ptr[nv]];
    for (n, tv) in mesh.tets.iter().enumerate() {
        for (i, &v) in tv.iter().enumerate() {
            vt[fill[v as usize]] = (n as u32, i as u8);
            fill[v as usize] += 1;
        }
    }
    (ptr, vt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;

    /// The parallel incidence equals one counting pass over the tets in order, on a box
    /// whose tets are shuffled by a seeded permutation (so that the lists are not runs).
    #[test]
    fn equals_a_counting_pass_in_tet_order() {
        let mut m = box_mesh([4, 3, 5], [1.0, 2.0, 0.7]);
        let mut rng = crate::util::Rng::new(7);
        for n in (1..m.tets.len()).rev() {
            let j = (rng.uniform() * (n + 1) as f64) as usize % (n + 1);
            m.tets.swap(n, j);
        }
        let (ptr, vt) = vertex_tets(&m);
        assert_eq!((ptr.clone(), vt.clone()), counting(&m));
        let mut want: Vec<Vec<(u32, u8)>> = vec![vec![]; m.n_vertices()];
        for (n, tv) in m.tets.iter().enumerate() {
            for (i, &v) in tv.iter().enumerate() {
                want[v as usize].push((n as u32, i as u8));
            }
        }
        assert_eq!(ptr.len(), m.n_vertices() + 1);
        // a subset of the vertices: their lists, every other list empty
        let rows: Vec<bool> = (0..m.n_vertices()).map(|v| v % 3 == 1).collect();
        let (sp, svt) = vertex_tets_of(&m, &rows);
        for v in 0..m.n_vertices() {
            let got = &svt[sp[v]..sp[v + 1]];
            match rows[v] {
                true => assert_eq!(got, &vt[ptr[v]..ptr[v + 1]], "vertex {v}"),
                false => assert!(got.is_empty(), "vertex {v}"),
            }
        }
        for (v, w) in want.iter().enumerate() {
            assert_eq!(&vt[ptr[v]..ptr[v + 1]], w.as_slice(), "vertex {v}");
        }
    }
}
