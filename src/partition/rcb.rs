//! Recursive coordinate bisection (RCB): a geometric partition of the tets by their
//! centroids, for meshes where METIS on rank 0 costs more than it saves
//! ([`super::Scheme::auto`]).
//!
//! **What is computed.** `k` parts of a set of tets: if `k = 1`, the set is one part; else
//! the set is cut by a plane normal to the longest axis of its centroids' bounding box (ties:
//! the lower axis) at the weighted median, so that the tets below the plane carry the weight
//! fraction `⌊k/2⌋ / k` of the set (as nearly as one tet allows), and the two halves are
//! split into `⌊k/2⌋` and `⌈k/2⌉` parts the same way. Any `k ≥ 1`, not only powers of two.
//!
//! **Order.** Tets are ordered along an axis by their centroid coordinate (f32: the
//! partition needs no more), ties broken by the other two coordinates in cyclic order, then
//! by the tet index: a total order, so the tets below each cut are one well-defined set. (On
//! structured meshes whole layers of centroids share a coordinate; breaking those ties by
//! index would scatter a cut through the layer into fragments, breaking them by position
//! cuts the layer along a line.) The cut position is the first `m` whose prefix weight
//! reaches the target, moved back by one where that is closer to it (and kept so that both
//! sides have at least as many tets as parts). Hence the partition depends on the input
//! only: not on the selection algorithm's internal order nor on the number of threads
//! (rayon splits the two halves and sums weights; integer sums are exact).
//!
//! **Cost.** Each level is one O(n) weighted selection (`select_nth_unstable_by`, the
//! position guessed from the weight fraction and refined, bisecting when a guess gains
//! less than half): O(n log k) in all, 20 bytes per tet of work space. The halves are
//! partitioned in parallel.

use rayon::prelude::*;

/// One tet in the work array: centroid, weight, index.
#[derive(Clone, Copy, Debug)]
struct Item {
    c: [f32; 3],
    w: u32,
    id: u32,
}

/// Below this many items a weight sum or a bounding box runs on one thread.
const SEQ: usize = 1 << 16;

/// Parts (`0..n_parts`) of the points `centroids` weighted by `weights` (same length), by
/// recursive coordinate bisection (module doc). `n_parts` must be in `1..=n` (n ≥ 1).
pub fn rcb(centroids: &[[f64; 3]], weights: &[u32], n_parts: usize) -> Vec<u32> {
    assert_eq!(centroids.len(), weights.len());
    let n = centroids.len();
    assert!(n_parts >= 1 && n_parts <= n.max(1));
    let mut items: Vec<Item> = centroids
        .par_iter()
        .zip(weights.par_iter())
        .enumerate()
        .map(|(i, (c, &w))| Item {
            c: c.map(|x| x as f32),
            w,
            id: i as u32,
        })
        .collect();
    let mut leaves = Vec::new();
    split(&mut items, 0, n_parts, &mut leaves);
    let mut part = vec![0u32; n];
    let mut at = 0;
    for (len, p) in leaves {
        for it in &items[at..at + len] {
            part[it.id as usize] = p;
        }
        at += len;
    }
    part
}

/// Partitions `items` into parts `first..first + k`; appends `(length, part)` of each leaf,
/// in the order of `items`.
fn split(items: &mut [Item], first: u32, k: usize, leaves: &mut Vec<(usize, u32)>) {
    if k == 1 {
        leaves.push((items.len(), first));
        return;
    }
    let axis = longest_axis(items);
    let kl = k / 2;
    let total = weight(items);
    let target = ((total as u128 * kl as u128 + (k / 2) as u128) / k as u128) as u64;
    let m = weighted_cut(items, axis, target, kl, k - kl);
    let (lo, hi) = items.split_at_mut(m);
    if lo.len() + hi.len() > SEQ {
        let mut right = Vec::new();
        rayon::join(
            || split(lo, first, kl, leaves),
            || split(hi, first + kl as u32, k - kl, &mut right),
        );
        leaves.extend(right);
    } else {
        split(lo, first, kl, leaves);
        split(hi, first + kl as u32, k - kl, leaves);
    }
}

fn weight(items: &[Item]) -> u64 {
    if items.len() > SEQ {
        items.par_iter().map(|it| it.w as u64).sum()
    } else {
        items.iter().map(|it| it.w as u64).sum()
    }
}

/// The axis of the largest extent of the items' centroids (the lowest of equal ones).
fn longest_axis(items: &[Item]) -> usize {
    type B = ([f32; 3], [f32; 3]);
    let empty: B = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    let grow = |mut b: B, it: &Item| {
        for a in 0..3 {
            b.0[a] = b.0[a].min(it.c[a]);
            b.1[a] = b.1[a].max(it.c[a]);
        }
        b
    };
    let merge = |mut x: B, y: B| {
        for a in 0..3 {
            x.0[a] = x.0[a].min(y.0[a]);
            x.1[a] = x.1[a].max(y.1[a]);
        }
        x
    };
    let (lo, hi) = if items.len() > SEQ {
        items
            .par_chunks(SEQ)
            .map(|c| c.iter().fold(empty, grow))
            .reduce(|| empty, merge)
    } else {
        items.iter().fold(empty, grow)
    };
    let ext = [0, 1, 2].map(|a| hi[a] - lo[a]);
    let mut best = 0;
    for a in 1..3 {
        if ext[a] > ext[best] {
            best = a;
        }
    }
    best
}

/// Reorders `items` so that its first `m` are the `m` smallest in the order along `axis`
/// (module doc) and returns `m`: the first prefix whose weight reaches `target`, or the one
/// before where closer, with at least `min_lo` items below and `min_hi` above.
fn weighted_cut(
    items: &mut [Item],
    axis: usize,
    target: u64,
    min_lo: usize,
    min_hi: usize,
) -> usize {
    let n = items.len();
    let (b1, b2) = ((axis + 1) % 3, (axis + 2) % 3);
    let cmp = |x: &Item, y: &Item| {
        x.c[axis]
            .total_cmp(&y.c[axis])
            .then(x.c[b1].total_cmp(&y.c[b1]))
            .then(x.c[b2].total_cmp(&y.c[b2]))
            .then(x.id.cmp(&y.id))
    };
    // invariant: items[..a] are the a smallest, items[b..] the n - b largest;
    // prefix(a) = wa < target <= prefix(b) = wb, so the first m reaching target is in (a, b]
    let (mut a, mut b) = (0usize, n);
    let (mut wa, mut wb) = (0u64, weight(items));
    let m = if target == 0 {
        0
    } else {
        let mut bisect = false;
        while b - a > 1 {
            let len = b - a;
            let p = if bisect {
                a + len / 2
            } else {
                let f = (target - wa) as f64 / (wb - wa).max(1) as f64;
                a + ((f * len as f64).round() as usize).clamp(1, len - 1)
            };
            items[a..b].select_nth_unstable_by(p - a, cmp);
            let wp = wa + weight(&items[a..p]);
            if wp >= target {
                b = p;
                wb = wp;
            } else {
                a = p;
                wa = wp;
            }
            // a guess that kept more than half of the interval: bisect next
            bisect = 2 * (b - a) > len;
        }
        // m = b = a + 1; m - 1 when its prefix is closer to the target
        if target - wa < wb - target { a } else { b }
    };
    let clamped = m.clamp(min_lo, n - min_hi);
    if clamped != m && clamped < n {
        items.select_nth_unstable_by(clamped, cmp);
    }
    clamped
}

/// The centroid of each tet (the mean of its 4 nodes).
pub fn centroids(mesh: &crate::mesh::Mesh) -> Vec<[f64; 3]> {
    mesh.tets
        .par_iter()
        .map(|t| {
            let mut c = [0.0; 3];
            for &v in t {
                let x = mesh.nodes[v as usize];
                for a in 0..3 {
                    c[a] += 0.25 * x[a];
                }
            }
            c
        })
        .collect()
}

impl super::Partition {
    /// Recursive coordinate bisection of the tet centroids into `n_parts` parts of equal
    /// summed weight ([`rcb`]), weighted by `weights` ([`super::tet_costs`] when None).
    /// Deterministic, independent of the number of threads.
    pub fn rcb(
        mesh: &crate::mesh::Mesh,
        topo: &crate::mesh::Topology,
        weights: Option<Vec<u32>>,
        n_parts: usize,
    ) -> crate::error::Result<super::Partition> {
        use crate::error::Error;
        let t = mesh.n_tets();
        if n_parts == 0 || n_parts > t {
            return Err(Error::config(
                "ranks",
                n_parts,
                format!("must be between 1 and the number of tetrahedra ({t})"),
            ));
        }
        let weights = weights.unwrap_or_else(|| super::tet_costs(mesh, topo));
        if weights.len() != t {
            return Err(Error::config(
                "partition weights",
                weights.len(),
                format!("expected one per tetrahedron ({t})"),
            ));
        }
        let tet_part = rcb(&centroids(mesh), &weights, n_parts);
        Ok(Self::from_tet_parts(mesh, topo, tet_part, weights, n_parts))
    }
}
