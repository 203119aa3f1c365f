//! The CPU backend's lean step: the same leapfrog as the reference kernels of
//! [`super`], in layouts chosen for a CPU's caches. Equal to the reference to round-off
//! (only the order of the sums differs); `tests/dga/cpu_lean.rs` checks it on jittered meshes,
//! lossy and dispersive ones included.
//!
//! - **Primal** (`F -= Δt Mmu⁻¹ C (U_a + U_b)` per tet): tet-major, 10 values of the
//!   symmetric `Δt Mmu⁻¹` (upper triangle, [`crate::dga::SYM4`]) and the 6 edge ids per
//!   tet, the incidence `C` rebuilt from one orientation bit per edge (bit 31 of the edge id:
//!   set where the edge runs from the lower to the higher local vertex, [`FACE_SIGN`]). 10
//!   values per tet instead of the reference's 24, read as one contiguous record. The
//!   product is written as a sum of the 4 columns of the block (the same sums in the same
//!   order as row by row), which LLVM turns into 4-wide vector products.
//! - **Dual blocks** (`U_h += Σ_j B_v[i][j] c_j` over the free half-edges of each vertex
//!   `v`): vertex-major, in batches of vertices of equal degree `d` (4 in f32, 2 in f64,
//!   [`Lean::lanes`]) computed side by side, one vertex per lane. A batch reads its blocks
//!   once, packed as their upper triangles (`d(d+1)/2` rows, [`crate::dga::VertexBlocks::pack`])
//!   with the batch's vertices interleaved in each row, gathers its `d` rows of
//!   circulations once, and writes its `d` rows of results contiguously into a scratch `y`;
//!   a second pass adds `y` into `U` in half-edge order (`U_h += y[slot_h]`). The lanes
//!   never mix, so the products vectorise without reassociating a sum: one vertex at a
//!   time, the short triangular rows (d ≈ 14) left the pass bound by scalar instructions
//!   (results/cpu/lean_f32). The reference ([`super::vertex_blocks`]) walks half-edges in
//!   edge order instead, so every other row is a jump to another vertex's block and
//!   re-gathers that vertex's circulations: on a CPU that walk is bound by cache misses,
//!   not bandwidth.
//!
//! - **Circulations** (`c = C̃ F`): the reference's lists, read as the (+, −) pairs that a
//!   tet contributes to each of its edges, with two partial sums.

use crate::dga::Dga;
#[cfg(doc)]
use crate::dga::FACE_SIGN;
use crate::dga::operators::Operators;
use crate::error::{Error, Result};
use crate::real::Real;
use rayon::prelude::*;

/// Bit 31 of an edge id in [`Lean::pedge`]: the orientation bit.
const ORIENT: u32 = 1 << 31;
/// Bytes of one row of a batch in the dual pass: the vertices of one batch share their
/// degree and are computed side by side, one per lane ([`Lean::packed`]), 4 in f32 and 2
/// in f64: one SSE register per row. Rows of two or four registers were slower on 2 cores
/// (f32: 6 and 10 ms against 4.1–4.4 ms for the pass and its scatter at 1M tets).
const ROW_BYTES: usize = 16;
/// Free half-edge slots (rows times lanes) per parallel group of batches in the dual pass.
const GROUP_SLOTS: usize = 4096;
/// Items (tets, edges, half-edges) per rayon task of the other passes: each task runs a
/// plain loop over its block, which LLVM compiles tighter than rayon's per-item
/// closures over zipped and enumerated producers (28% faster primal and circulations in
/// f32 on 2 cores, results/cpu/lean_f32).
const BLOCK: usize = 1024;

/// Where a parallel group of batches starts: its first batch, its first row of `y` and of
/// the lane-interleaved blocks.
#[derive(Clone, Copy, Debug)]
struct Group {
    batch: usize,
    row: usize,
    prow: usize,
}

/// The lean layouts of one [`Operators`] (same `Δt`, losses and magnetic loss).
#[derive(Clone, Debug)]
pub struct Lean<T> {
    /// Per tet: `Δt Mmu⁻¹ / (1 + b)` (`b = σ* Δt / 2`, 0 without magnetic loss), its upper
    /// triangle row by row.
    pub prim: Vec<[T; 10]>,
    /// Per tet: its 6 edge ids, [`ORIENT`] set where the edge runs from the lower to the
    /// higher local vertex.
    pub pedge: Vec<[u32; 6]>,
    /// The operators' dual blocks (`Δt Meps_v⁻¹`, or `Δt Ã_v⁻¹` at lossy vertices; empty
    /// when built without them), batch by batch: a batch of degree `d` holds `d(d+1)/2`
    /// rows, its blocks' upper triangles column by column, lane `l` of each row the entry
    /// of the batch's vertex `l` (zero in the lanes past the batch's last vertex).
    pub packed: Vec<T>,
    /// Per batch: the degree (free half-edges) of its vertices.
    pub bdeg: Vec<u32>,
    /// Per batch: `d` rows, lane `l` of row `i` the edge of vertex `l`'s half-edge `i` (its
    /// circulation's index; 0 in the empty lanes, whose blocks are zero).
    pub bedge: Vec<u32>,
    /// Vertices per batch ([`ROW_BYTES`]` / size_of::<T>()`).
    pub lanes: usize,
    /// Per half-edge: its slot in `y` (`lanes × row + lane`), `u32::MAX` for a half-edge
    /// that is not free (on a PEC wall).
    pub slot: Vec<u32>,
    /// The parallel groups of batches, and a last entry past the end.
    groups: Vec<Group>,
    /// Whether every circulation list is (+, −) pairs ([`circulations`]).
    pairs: bool,
}

impl<T: Real> Lean<T> {
    /// The lean layouts of `ops`, the operators of `dga`; the batched dual blocks only when
    /// `blocks` (the factored dual form reads them, the CSR form does not). Errors when an
    /// edge id does not fit 31 bits (bit 31 carries the orientation).
    pub fn new(dga: &Dga, ops: &Operators<T>, blocks: bool) -> Result<Self> {
        if dga.n_edges > !ORIENT as usize {
            return Err(Error::config(
                "mesh",
                format!("{} edges", dga.n_edges),
                "above the 31-bit edge index of the lean CPU primal kernel",
            ));
        }
        let dt = ops.dt;
        let scale = |n: usize| match &dga.mag {
            Some(s) => dt / (1.0 + 0.5 * s[n] * dt),
            None => dt,
        };
        let prim = (0..dga.n_tets)
            .into_par_iter()
            .map(|n| {
                // a PML tet's block is Δt Ã_n⁻¹ (its tets have no σ*)
                let pml = (ops.mpml.as_ref()).and_then(|mp| Some(&mp.inv[mp.index(n)?]));
                let (m, s) = match pml {
                    Some(inv) => (inv, dt),
                    None => (&dga.mmu_inv[n], scale(n)),
                };
                std::array::from_fn(|k| T::of(s * m[k]))
            })
            .collect();
        let pedge = (0..dga.n_tets)
            .into_par_iter()
            .map(|n| {
                let o = dga.tet_orient[n] as u32;
                std::array::from_fn(|l| dga.tet_edges[n][l] | ((o >> l) & 1) << 31)
            })
            .collect();
        let layout = &dga.meps_inv;
        if ops.block.len() != layout.data.len() {
            return Err(Error::config(
                "operators",
                ops.block.len(),
                "dual blocks do not match the mesh's vertex blocks",
            ));
        }
        let mut slot = vec![u32::MAX; ops.n_half()];
        let (mut packed, mut bdeg, mut bedge) = (Vec::new(), Vec::new(), Vec::new());
        let mut groups = Vec::new();
        let lanes = ROW_BYTES / std::mem::size_of::<T>();
        if blocks {
            let poff = layout.packed_offsets();
            let flat = layout.pack(&ops.block, &poff, |x| x);
            // batches of `lanes` vertices of equal degree, in vertex order: a vertex waits
            // in its degree's bucket until the bucket is full; the part-full buckets close
            // the list
            let nv = ops.vptr.len() - 1;
            let mut bucket: Vec<Vec<usize>> = Vec::new();
            let mut batches: Vec<Vec<usize>> = Vec::new();
            for v in 0..nv {
                let d = (ops.vptr[v + 1] - ops.vptr[v]) as usize;
                if d == 0 {
                    continue;
                }
                if bucket.len() <= d {
                    bucket.resize(d + 1, Vec::new());
                }
                bucket[d].push(v);
                if bucket[d].len() == lanes {
                    batches.push(std::mem::take(&mut bucket[d]));
                }
            }
            batches.extend(bucket.into_iter().filter(|b| !b.is_empty()));
            let (mut row, mut prow, mut in_group) = (0, 0, 0);
            for (b, vs) in batches.iter().enumerate() {
                let d = (ops.vptr[vs[0] + 1] - ops.vptr[vs[0]]) as usize;
                if b == 0 || in_group >= GROUP_SLOTS {
                    groups.push(Group {
                        batch: b,
                        row,
                        prow,
                    });
                    in_group = 0;
                }
                bdeg.push(d as u32);
                for k in 0..d * (d + 1) / 2 {
                    packed.extend((0..lanes).map(|l| match vs.get(l) {
                        Some(&v) => flat[poff[v] as usize + k],
                        None => T::zero(),
                    }));
                }
                for i in 0..d {
                    bedge.extend((0..lanes).map(|l| match vs.get(l) {
                        Some(&v) => ops.vh[ops.vptr[v] as usize + i] >> 1,
                        None => 0,
                    }));
                    for (l, &v) in vs.iter().enumerate() {
                        let h = ops.vh[ops.vptr[v] as usize + i] as usize;
                        slot[h] = ((row + i) * lanes + l) as u32;
                    }
                }
                row += d;
                prow += d * (d + 1) / 2;
                in_group += d * lanes;
            }
            groups.push(Group {
                batch: batches.len(),
                row,
                prow,
            });
            if row * lanes > u32::MAX as usize {
                return Err(Error::config(
                    "mesh",
                    format!("{} half-edge slots", row * lanes),
                    "above the 32-bit slot index of the lean CPU dual kernel",
                ));
            }
        }
        let pairs = (0..dga.n_edges).into_par_iter().all(|e| {
            let list = &ops.circ[ops.circ_ptr[e] as usize..ops.circ_ptr[e + 1] as usize];
            list.len().is_multiple_of(2) && list.chunks(2).all(|p| p[0] & 1 == 0 && p[1] & 1 == 1)
        });
        Ok(Lean {
            pairs,
            prim,
            pedge,
            packed,
            bdeg,
            bedge,
            lanes,
            slot,
            groups,
        })
    }

    /// The dual pass's scratch `y` ([`vertex_blocks`]): one value per lane of each batch's
    /// rows (empty when built without the blocks).
    pub fn scratch(&self) -> Vec<T> {
        vec![T::zero(); self.groups.last().map_or(0, |g| g.row * self.lanes)]
    }
}

/// `f -= P u` in the lean layout (with the magnetic-loss decay of the old `f` first, as
/// [`super::primal`]), a block of tets per task.
pub fn primal<T: Real>(ops: &Operators<T>, lean: &Lean<T>, u: &[T], f: &mut [T]) {
    let (up, _) = u.as_chunks::<2>();
    f.par_chunks_mut(4 * BLOCK)
        .zip(
            lean.prim
                .par_chunks(BLOCK)
                .zip(lean.pedge.par_chunks(BLOCK)),
        )
        .enumerate()
        .for_each(|(k, (fb, (mb, pb)))| {
            let (fb, _) = fb.as_chunks_mut::<4>();
            if !ops.mag.is_empty() {
                for (fr, &a) in fb.iter_mut().zip(ops.mag.get(k * BLOCK..).unwrap_or(&[])) {
                    for x in fr.iter_mut() {
                        *x *= a;
                    }
                }
            }
            for ((fr, m), pe) in fb.iter_mut().zip(mb).zip(pb) {
                let s: [T; 6] = std::array::from_fn(|l| {
                    let [a, b] = up[(pe[l] & !ORIENT) as usize];
                    let v = a + b;
                    if pe[l] & ORIENT != 0 { v } else { -v }
                });
                let c = [
                    s[3] - s[4] + s[5],
                    s[2] - s[1] - s[5],
                    s[0] - s[2] + s[4],
                    s[1] - s[0] - s[3],
                ];
                let cols = [
                    [m[0], m[1], m[2], m[3]],
                    [m[1], m[4], m[5], m[6]],
                    [m[2], m[5], m[7], m[8]],
                    [m[3], m[6], m[8], m[9]],
                ];
                let mut acc: [T; 4] = std::array::from_fn(|r| cols[0][r] * c[0]);
                for k in 1..4 {
                    for r in 0..4 {
                        acc[r] += cols[k][r] * c[k];
                    }
                }
                for r in 0..4 {
                    fr[r] -= acc[r];
                }
            }
        });
}

/// Dual-face circulations `c_e = Σ (F_+ − F_−)` over the tets around each edge: the
/// reference's list read as its (+, −) pairs ([`Lean::new`] checks that it is one), with
/// two partial sums. Falls back to [`super::circulations`] for any other list.
pub fn circulations<T: Real>(ops: &Operators<T>, lean: &Lean<T>, f: &[T], c: &mut [T]) {
    if !lean.pairs {
        return super::circulations(ops, f, c);
    }
    c.par_chunks_mut(BLOCK).enumerate().for_each(|(k, cb)| {
        let e0 = k * BLOCK;
        let ptr = &ops.circ_ptr[e0..e0 + cb.len() + 1];
        for (ce, p) in cb.iter_mut().zip(ptr.windows(2)) {
            let list = &ops.circ[p[0] as usize..p[1] as usize];
            let (q, r) = list.as_chunks::<4>();
            let at = |x: u32| f[(x >> 1) as usize];
            let (mut a0, mut a1) = (T::zero(), T::zero());
            for p in q {
                a0 += at(p[0]) - at(p[1]);
                a1 += at(p[2]) - at(p[3]);
            }
            if let [p, m] = r {
                a0 += at(*p) - at(*m);
            }
            *ce = a0 + a1;
        }
    });
}

/// `u += B c` in the lean layout: the batched vertex pass into `y` ([`Lean::scratch`]),
/// then `u_h += y[slot_h]`. `lean` must have been built with its blocks.
pub fn vertex_blocks<T: Real>(lean: &Lean<T>, c: &[T], y: &mut [T], u: &mut [T]) {
    match lean.lanes {
        4 => batches::<T, 4>(lean, c, y),
        2 => batches::<T, 2>(lean, c, y),
        l => unreachable!("{l} lanes"),
    }
    let y: &[T] = y;
    u.par_chunks_mut(BLOCK)
        .zip(lean.slot.par_chunks(BLOCK))
        .for_each(|(ub, sb)| {
            for (uh, &s) in ub.iter_mut().zip(sb) {
                if s != u32::MAX {
                    *uh += y[s as usize];
                }
            }
        });
}

/// The batched vertex pass of [`vertex_blocks`] with `L` lanes: `y = B c`, batch by batch.
fn batches<T: Real, const L: usize>(lean: &Lean<T>, c: &[T], y: &mut [T]) {
    let (rows, _) = y.as_chunks_mut::<L>();
    let (packed, _) = lean.packed.as_chunks::<L>();
    let (bedge, _) = lean.bedge.as_chunks::<L>();
    // the groups' rows of y, split at their first rows
    let mut parts = Vec::with_capacity(lean.groups.len());
    let mut rest = rows;
    for w in lean.groups.windows(2) {
        let (a, b) = rest.split_at_mut(w[1].row - w[0].row);
        parts.push((w[0], w[1].batch, a));
        rest = b;
    }
    parts.into_par_iter().for_each(|(g, end, ys)| {
        let mut cv: Vec<[T; L]> = Vec::with_capacity(64);
        let (mut r, mut p) = (0, g.prow);
        for &d in &lean.bdeg[g.batch..end] {
            let d = d as usize;
            let out = &mut ys[r..r + d];
            cv.clear();
            let edges = &bedge[g.row + r..g.row + r + d];
            cv.extend(edges.iter().map(|e| e.map(|e| c[e as usize])));
            let bv = &packed[p..p + d * (d + 1) / 2];
            // column i holds B[j][i] for j <= i: row i's left part (a dot product) and, by
            // symmetry, column i's entries for the rows above it (an axpy). Each dot product
            // has two partial sums, entry j into sum j mod 2 (the diagonal first into sum
            // 0): the sums of the one-vertex-at-a-time pass, bit for bit. Two columns at a
            // time: four independent sums, and one read and write of each row above for
            // both axpys. Row i is first written at its own column (the columns before it
            // do not reach it), then the later columns add to it in order.
            let mut i = 0;
            while i + 1 < d {
                let o = i * (i + 1) / 2;
                let (c0, c1) = (&bv[o..o + i + 1], &bv[o + i + 1..o + 2 * i + 3]);
                let (x0, x1) = (cv[i], cv[i + 1]);
                let (mut a0, mut a1) = (mul(&c0[i], &x0), [T::zero(); L]);
                let (mut b0, mut b1) = (mul(&c1[i + 1], &x1), [T::zero(); L]);
                let (p0, _) = c0[..i].as_chunks::<2>();
                let (p1, _) = c1[..i].as_chunks::<2>();
                let (pc, _) = cv[..i].as_chunks::<2>();
                let (po, _) = out[..i].as_chunks_mut::<2>();
                for (((e0, e1), ec), eo) in p0.iter().zip(p1).zip(pc).zip(po.iter_mut()) {
                    madd(&mut a0, &e0[0], &ec[0]);
                    madd(&mut a1, &e0[1], &ec[1]);
                    madd(&mut b0, &e1[0], &ec[0]);
                    madd(&mut b1, &e1[1], &ec[1]);
                    madd(&mut eo[0], &e0[0], &x0);
                    madd(&mut eo[0], &e1[0], &x1);
                    madd(&mut eo[1], &e0[1], &x0);
                    madd(&mut eo[1], &e1[1], &x1);
                }
                if i % 2 == 1 {
                    // the last row above, an even j: into the sums 0
                    let j = i - 1;
                    madd(&mut a0, &c0[j], &cv[j]);
                    madd(&mut b0, &c1[j], &cv[j]);
                    madd(&mut out[j], &c0[j], &x0);
                    madd(&mut out[j], &c1[j], &x1);
                    // the entry (i, i + 1) belongs to both rows; j = i is odd
                    madd(&mut b1, &c1[i], &x0);
                } else {
                    madd(&mut b0, &c1[i], &x0);
                }
                out[i] = add(&a0, &a1);
                madd(&mut out[i], &c1[i], &x1);
                out[i + 1] = add(&b0, &b1);
                i += 2;
            }
            if i < d {
                let col = &bv[i * (i + 1) / 2..i * (i + 1) / 2 + i + 1];
                let ci = cv[i];
                let mut a = [mul(&col[i], &ci), [T::zero(); L]];
                for j in 0..i {
                    madd(&mut a[j % 2], &col[j], &cv[j]);
                    madd(&mut out[j], &col[j], &ci);
                }
                out[i] = add(&a[0], &a[1]);
            }
            r += d;
            p += d * (d + 1) / 2;
        }
    });
}

/// `a + b`, lane by lane.
#[inline(always)]
fn add<T: Real, const L: usize>(a: &[T; L], b: &[T; L]) -> [T; L] {
    std::array::from_fn(|l| a[l] + b[l])
}

/// `a ⊙ b`, lane by lane.
#[inline(always)]
fn mul<T: Real, const L: usize>(a: &[T; L], b: &[T; L]) -> [T; L] {
    std::array::from_fn(|l| a[l] * b[l])
}

/// `acc += a ⊙ b`, lane by lane (no sum across lanes: each lane is its own vertex, so the
/// loop vectorises without reassociating any sum).
#[inline(always)]
fn madd<T: Real, const L: usize>(acc: &mut [T; L], a: &[T; L], b: &[T; L]) {
    for l in 0..L {
        acc[l] += a[l] * b[l];
    }
}
