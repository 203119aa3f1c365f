//! The index lists of the DGA built from the mesh alone (no geometry, no materials): the
//! tets around each vertex, the layout of the vertex blocks (which half-edges each vertex
//! block holds) and the signed F slots of every edge's dual-face circulation (design note
//! §7). The assembly of the masses (`super`) and the device assembly read them.

use super::VertexBlocks;
use crate::mesh::{Mesh, Topology};
use rayon::prelude::*;

/// The tets around each vertex: `vt[vt_ptr[v]..vt_ptr[v+1]]` holds `(tet, local vertex)`
/// for every tet with `v` among its vertices, ascending tet (a counting sort over the tet
/// list; the summation order of every vertex block, on the host and on the device).
pub fn vertex_tets(mesh: &Mesh) -> (Vec<usize>, Vec<(u32, u8)>) {
    crate::mesh::incidence::vertex_tets(mesh)
}

/// The layout of the vertex blocks (`ptr`, `h`, `off` of [`VertexBlocks`], `data` empty):
/// the half-edges of the `keep` edges at each vertex, ascending edge id; vertices outside
/// `rows` (when given) get empty blocks.
pub fn block_layout(
    mesh: &Mesh,
    topo: &Topology,
    keep: &[bool],
    rows: Option<&[bool]>,
) -> VertexBlocks {
    let nv = mesh.n_vertices();
    let kept = |v: usize| {
        let all = if rows.is_some_and(|r| !r[v]) {
            &[][..]
        } else {
            topo.edges_at(v)
        };
        all.iter().copied().filter(|&e| keep[e as usize])
    };
    let dims: Vec<usize> = (0..nv).into_par_iter().map(|v| kept(v).count()).collect();
    // ordered collect: vertex by vertex, ascending edge id within a vertex
    let h: Vec<u32> = (0..nv)
        .into_par_iter()
        .flat_map_iter(|v| kept(v).map(move |e| topo.half_edge(e as usize, v as u32) as u32))
        .collect();
    let mut ptr = Vec::with_capacity(nv + 1);
    let mut off = Vec::with_capacity(nv + 1);
    ptr.push(0usize);
    off.push(0usize);
    for (v, &d) in dims.iter().enumerate() {
        ptr.push(ptr[v] + d);
        off.push(off[v] + d * d);
    }
    VertexBlocks {
        ptr,
        h,
        off,
        data: Vec::new(),
    }
}

/// Per edge, the signed F slots of its dual-face circulation (design note §7), from the
/// geometric right-hand rule, in ascending tet order per edge. In parallel over ranges of
/// edges: each range's entries are a contiguous part of `circ`, which one thread fills by
/// scanning the tets in order and taking the edges of its range, so the order is a counting
/// sort's. Edges are numbered by first appearance ([`Topology`]), so no tet before the
/// first appearance of a range's first edge holds one of its edges; the last tet holding
/// one is found by one pass over the tets. A range's scan is thus its tets' span only.
pub(crate) fn dual_circulations(mesh: &Mesh, topo: &Topology) -> (Vec<u32>, Vec<u32>) {
    let ne = topo.n_edges();
    let t = mesh.n_tets();
    let mut count = vec![0u32; ne];
    for te in &topo.tet_edges {
        for &e in te {
            count[e as usize] += 2;
        }
    }
    let mut ptr = vec![0u32; ne + 1];
    for e in 0..ne {
        ptr[e + 1] = ptr[e] + count[e];
    }
    drop(count);
    let mut circ = vec![0u32; ptr[ne] as usize];
    // ranges of about equal length, several per thread
    let parts = (4 * rayon::current_num_threads()).clamp(1, ne.max(1));
    let per = (ptr[ne] as usize).div_ceil(parts).max(1);
    let mut bounds = vec![0usize];
    for e in 1..ne {
        if ptr[e] as usize >= bounds.len() * per {
            bounds.push(e);
        }
    }
    bounds.push(ne);
    let nr = bounds.len() - 1;
    let range_of = |e: u32| bounds.partition_point(|&b| b <= e as usize) - 1;
    // per range: the first tet (prefix maxima of the tets' largest edge) and the last one
    let mut top = 0u32;
    let prefix_max: Vec<u32> = topo
        .tet_edges
        .iter()
        .map(|te| {
            top = top.max(te.iter().copied().max().unwrap_or(0));
            top
        })
        .collect();
    let first: Vec<usize> = (0..nr)
        .map(|r| prefix_max.partition_point(|&m| (m as usize) < bounds[r]))
        .collect();
    drop(prefix_max);
    let last: Vec<usize> = (0..t)
        .into_par_iter()
        .fold(
            || vec![0usize; nr],
            |mut acc, n| {
                for &e in &topo.tet_edges[n] {
                    let r = range_of(e);
                    acc[r] = acc[r].max(n);
                }
                acc
            },
        )
        .reduce(
            || vec![0usize; nr],
            |a, b| a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect(),
        );
    let mut slices = Vec::with_capacity(nr);
    let mut rest = circ.as_mut_slice();
    for (r, w) in bounds.windows(2).enumerate() {
        let (a, b) = std::mem::take(&mut rest).split_at_mut((ptr[w[1]] - ptr[w[0]]) as usize);
        slices.push((w[0], w[1], first[r], last[r], a));
        rest = b;
    }
    slices.into_par_iter().for_each(|(e0, e1, n0, n1, out)| {
        let base = ptr[e0];
        let mut fill: Vec<u32> = ptr[e0..e1].iter().map(|&p| p - base).collect();
        let inside = |e: u32| (e0..e1).contains(&(e as usize));
        for n in n0..(n1 + 1).min(t) {
            let te = &topo.tet_edges[n];
            if !te.iter().any(|&e| inside(e)) {
                continue;
            }
            let (v, x) = (mesh.tets[n], mesh.tet_x(n));
            for (l, &e) in te.iter().enumerate().filter(|x| inside(*x.1)) {
                let (fp, fm) = crate::complex::dual_face_faces(&v, &x, l);
                let f = &mut fill[e as usize - e0];
                out[*f as usize] = ((4 * n + fp) as u32) << 1;
                out[*f as usize + 1] = (((4 * n + fm) as u32) << 1) | 1;
                *f += 2;
            }
        }
    });
    (ptr, circ)
}
