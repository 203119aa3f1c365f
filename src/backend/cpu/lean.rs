//! The CPU backend's lean step: the same leapfrog as the reference kernels of
//! [`super`], in layouts chosen for a CPU's caches. Equal to the reference to round-off
//! (only the order of the sums differs); `tests/cpu_lean.rs` checks it on jittered meshes,
//! lossy and dispersive ones included.
//!
//! - **Primal** (`F -= Δt Mmu⁻¹ C (U_a + U_b)` per tet): tet-major, 10 values of the
//!   symmetric `Δt Mmu⁻¹` (upper triangle, [`crate::dga::SYM4`]) and the 6 edge ids per
//!   tet, the incidence `C` rebuilt from one orientation bit per edge (bit 31 of the edge id:
//!   set where the edge runs from the lower to the higher local vertex, [`FACE_SIGN`]). 10
//!   values per tet instead of the reference's 24, read as one contiguous record.
//! - **Dual blocks** (`U_h += Σ_j B_v[i][j] c_j` over the free half-edges of each vertex
//!   `v`): vertex-major. Each vertex reads its block once, packed as its upper triangle
//!   (`d(d+1)/2` values, [`crate::dga::VertexBlocks::pack`]), gathers its `d` circulations
//!   once, and writes its `d` results contiguously into a vertex-major scratch `y`; a second
//!   pass adds `y` into `U` in half-edge order (`U_h += y[slot_h]`). The reference
//!   ([`super::vertex_blocks`]) walks half-edges in edge order instead, so every other row
//!   is a jump to another vertex's block and re-gathers that vertex's circulations: on a
//!   CPU that walk is bound by cache misses, not bandwidth.
//!
//! - **Circulations** (`c = C̃ F`): the reference's lists, read as the (+, −) pairs that a
//!   tet contributes to each of its edges, with two partial sums.

use super::MIN_LEN;
use crate::dga::Dga;
#[cfg(doc)]
use crate::dga::FACE_SIGN;
use crate::dga::operators::Operators;
use crate::{Error, Real, Result};
use rayon::prelude::*;

/// Bit 31 of an edge id in [`Lean::pedge`]: the orientation bit.
const ORIENT: u32 = 1 << 31;
/// Free half-edge slots per parallel group of vertices in the dual pass.
const GROUP_SLOTS: usize = 4096;

/// The lean layouts of one [`Operators`] (same `Δt`, losses and magnetic loss).
#[derive(Clone, Debug)]
pub struct Lean<T> {
    /// Per tet: `Δt Mmu⁻¹ / (1 + b)` (`b = σ* Δt / 2`, 0 without magnetic loss), its upper
    /// triangle row by row.
    pub prim: Vec<[T; 10]>,
    /// Per tet: its 6 edge ids, [`ORIENT`] set where the edge runs from the lower to the
    /// higher local vertex.
    pub pedge: Vec<[u32; 6]>,
    /// Per vertex: where its packed block starts in `packed` (`n_vertices + 1` entries).
    pub poff: Vec<u64>,
    /// The operators' dual blocks (empty when built without them) (`Δt Meps_v⁻¹`, or `Δt Ã_v⁻¹` at lossy vertices), each
    /// packed as its upper triangle column by column.
    pub packed: Vec<T>,
    /// Per half-edge: its vertex-major slot (index into the operators' `vh`), `u32::MAX`
    /// for a half-edge that is not free (on a PEC wall).
    pub slot: Vec<u32>,
    /// Vertex groups of the dual pass: group `g` is the vertices `gv[g]..gv[g + 1]`.
    gv: Vec<u32>,
    /// Whether every circulation list is (+, −) pairs ([`circulations`]).
    pairs: bool,
}

impl<T: Real> Lean<T> {
    /// The lean layouts of `ops`, the operators of `dga`; the packed dual blocks only when
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
                let (m, s) = (&dga.mmu_inv[n], scale(n));
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
        let (poff, packed) = if blocks {
            let poff = layout.packed_offsets();
            let packed = layout.pack(&ops.block, &poff, |x| x);
            (poff, packed)
        } else {
            (Vec::new(), Vec::new())
        };
        let mut slot = vec![u32::MAX; ops.n_half()];
        for (i, &h) in ops.vh.iter().enumerate() {
            slot[h as usize] = i as u32;
        }
        let nv = ops.vptr.len() - 1;
        let mut gv = vec![0u32];
        for v in 0..nv {
            if (ops.vptr[v + 1] - ops.vptr[*gv.last().unwrap() as usize]) as usize >= GROUP_SLOTS {
                gv.push(v as u32 + 1);
            }
        }
        if *gv.last().unwrap() as usize != nv {
            gv.push(nv as u32);
        }
        let pairs = (0..dga.n_edges).into_par_iter().all(|e| {
            let list = &ops.circ[ops.circ_ptr[e] as usize..ops.circ_ptr[e + 1] as usize];
            list.len().is_multiple_of(2) && list.chunks(2).all(|p| p[0] & 1 == 0 && p[1] & 1 == 1)
        });
        Ok(Lean {
            pairs,
            prim,
            pedge,
            poff,
            packed,
            slot,
            gv,
        })
    }
}

/// `f -= P u` in the lean layout (with the magnetic-loss decay of the old `f` first, as
/// [`super::primal`]).
pub fn primal<T: Real>(ops: &Operators<T>, lean: &Lean<T>, u: &[T], f: &mut [T]) {
    // the two half-edges of edge e as one pair: one bounds check per gather
    let (up, _) = u.as_chunks::<2>();
    f.par_chunks_mut(4)
        .with_min_len(MIN_LEN / 4)
        .zip(lean.prim.par_iter().zip(&lean.pedge))
        .enumerate()
        .for_each(|(n, (fr, (m, pe)))| {
            if let Some(&a) = ops.mag.get(n) {
                for x in fr.iter_mut() {
                    *x *= a;
                }
            }
            let s: [T; 6] = std::array::from_fn(|l| {
                let [a, b] = up[(pe[l] & !ORIENT) as usize];
                let v = a + b;
                if pe[l] & ORIENT != 0 { v } else { -v }
            });
            // the outward face circulations C s (the rows of FACE_SIGN)
            let c = [
                s[3] - s[4] + s[5],
                s[2] - s[1] - s[5],
                s[0] - s[2] + s[4],
                s[1] - s[0] - s[3],
            ];
            fr[0] -= m[0] * c[0] + m[1] * c[1] + m[2] * c[2] + m[3] * c[3];
            fr[1] -= m[1] * c[0] + m[4] * c[1] + m[5] * c[2] + m[6] * c[3];
            fr[2] -= m[2] * c[0] + m[5] * c[1] + m[7] * c[2] + m[8] * c[3];
            fr[3] -= m[3] * c[0] + m[6] * c[1] + m[8] * c[2] + m[9] * c[3];
        });
}

/// Dual-face circulations `c_e = Σ (F_+ − F_−)` over the tets around each edge: the
/// reference's list read as its (+, −) pairs ([`Lean::new`] checks that it is one), with
/// two partial sums. Falls back to [`super::circulations`] for any other list.
pub fn circulations<T: Real>(ops: &Operators<T>, lean: &Lean<T>, f: &[T], c: &mut [T]) {
    if !lean.pairs {
        return super::circulations(ops, f, c);
    }
    c.par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(e, ce)| {
            let list = &ops.circ[ops.circ_ptr[e] as usize..ops.circ_ptr[e + 1] as usize];
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
        });
}

/// `u += B c` in the lean layout: the vertex-major pass into `y` (one slot per free
/// half-edge), then `u_h += y[slot_h]`. `lean` must have been built with its blocks.
pub fn vertex_blocks<T: Real>(
    ops: &Operators<T>,
    lean: &Lean<T>,
    c: &[T],
    y: &mut [T],
    u: &mut [T],
) {
    // the groups' slices of y, split at their first slots
    let mut parts = Vec::with_capacity(lean.gv.len());
    let mut rest = &mut *y;
    for w in lean.gv.windows(2) {
        let len = (ops.vptr[w[1] as usize] - ops.vptr[w[0] as usize]) as usize;
        let (a, b) = rest.split_at_mut(len);
        parts.push((w[0] as usize..w[1] as usize, a));
        rest = b;
    }
    parts.into_par_iter().for_each(|(vs, ys)| {
        let base = ops.vptr[vs.start] as usize;
        let mut cv: Vec<T> = Vec::with_capacity(64);
        for v in vs {
            let (a, b) = (ops.vptr[v] as usize, ops.vptr[v + 1] as usize);
            let d = b - a;
            cv.clear();
            cv.extend(ops.vh[a..b].iter().map(|&h| c[(h >> 1) as usize]));
            let out = &mut ys[a - base..b - base];
            out.fill(T::zero());
            let bv = &lean.packed[lean.poff[v] as usize..lean.poff[v + 1] as usize];
            // column i holds B[j][i] for j <= i: row i's left part (a dot product) and,
            // by symmetry, column i's entries for the rows above it (an axpy); two partial
            // sums and pairs of entries, so the loop is not one long chain of dependent adds
            for i in 0..d {
                let col = &bv[i * (i + 1) / 2..i * (i + 1) / 2 + i + 1];
                let ci = cv[i];
                let (mut a0, mut a1) = (col[i] * ci, T::zero());
                let (bc, br) = col[..i].as_chunks::<2>();
                let (cc, _) = cv[..i].as_chunks::<2>();
                let (oc, or) = out[..i].as_chunks_mut::<2>();
                for ((b, c), o) in bc.iter().zip(cc).zip(oc.iter_mut()) {
                    a0 += b[0] * c[0];
                    a1 += b[1] * c[1];
                    o[0] += b[0] * ci;
                    o[1] += b[1] * ci;
                }
                if let (Some(&b), Some(o)) = (br.first(), or.first_mut()) {
                    a0 += b * cv[i - 1];
                    *o += b * ci;
                }
                out[i] += a0 + a1;
            }
        }
    });
    let y: &[T] = y;
    u.par_iter_mut()
        .with_min_len(MIN_LEN)
        .zip(lean.slot.par_iter())
        .for_each(|(uh, &s)| {
            if s != u32::MAX {
                *uh += y[s as usize];
            }
        });
}
