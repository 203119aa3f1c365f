//! The leapfrog operators with Δt folded in, in the layouts the kernels read (design §8).
//!
//! - Primal: `P_n = Δt Mmu_n⁻¹ C_n` (4x6 per tet) stored column-major across tets:
//!   entry (r, c) of tet n at `(r*6 + c) * T + n`; the 6 edge ids at `c * T + n`.
//!   `F -= P (U_a + U_b)`.
//! - Dual, factored: `c_e = Σ ±F` over the dual face of e, then per free half-edge row
//!   `U_h += Σ_j (Δt Meps_v⁻¹)[i][j] c_(e_j)`.
//! - Dual, CSR (the seed's form): the global sparse `Δt Meps⁻¹ C̃` with 2E rows (rows of
//!   boundary half-edges are empty) and 4T columns; `U += D F`.
//!
//! Losses (design note §12), Crank–Nicolson in σ, explicit in the curl: at a vertex v
//! with `Msig_v ≠ 0`, `(Meps/Δt + Msig/2) U⁺ = (Meps/Δt − Msig/2) U + c`. With
//! `Ã_v = Meps_v + (Δt/2) Msig_v` this is `U⁺ = B̂_v U + Δt Ã_v⁻¹ c`,
//! `B̂_v = Ã_v⁻¹ (Meps_v − (Δt/2) Msig_v)`. So the dual block of such a vertex is
//! `Δt Ã_v⁻¹` in place of `Δt Meps_v⁻¹` (in both the factored and the CSR form), and a
//! second d x d block `B̂_v` is applied to the old `U_v` first ("loss step"):
//! `U_v ← B̂_v U_v`, then `U += D F` as without losses. Vertices with `Msig_v = 0` keep
//! exactly the lossless blocks and no loss block (bit-identical results when σ = 0).

use super::{Dga, VertexBlocks};
use crate::Real;
use nalgebra::DMatrix;
use rayon::prelude::*;
use sprs::CsMat;

/// Which form of the dual (Ampère) update to use.
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
pub enum DualForm {
    /// Global CSR SpMV, as in the seed paper.
    Csr,
    /// Per-edge circulation then per-vertex dense block: fewer bytes.
    #[default]
    Factored,
}

impl DualForm {
    pub fn name(self) -> &'static str {
        match self {
            DualForm::Csr => "csr",
            DualForm::Factored => "factored",
        }
    }
}

/// Operators in precision `T`, scaled by the time step `dt` (in metres of light travel).
#[derive(Clone, Debug)]
pub struct Operators<T> {
    pub dt: f64,
    pub n_tets: usize,
    pub n_edges: usize,
    pub primal: Vec<T>,
    pub primal_edges: Vec<u32>,
    pub circ_ptr: Vec<u32>,
    pub circ: Vec<u32>,
    /// Free half-edges per vertex: `vh[vptr[v]..vptr[v+1]]`.
    pub vptr: Vec<u32>,
    pub vh: Vec<u32>,
    /// Per half-edge slot: its vertex and its row offset in `block` (u64::MAX: boundary).
    pub hvert: Vec<u32>,
    pub hrow: Vec<u64>,
    /// `Δt Meps_v⁻¹` (`Δt Ã_v⁻¹` at lossy vertices), full row-major blocks.
    pub block: Vec<T>,
    pub csr: Option<CsMat<T>>,
    /// The loss step, one entry per free half-edge row of a lossy vertex (empty when
    /// lossless): the row's half-edge slot, its vertex, and the offset of its row of
    /// `B̂_v` in `loss_block` (the row has `dim(v)` entries, over `vh[vptr[v]..]`).
    pub loss_h: Vec<u32>,
    pub loss_vert: Vec<u32>,
    pub loss_row: Vec<u64>,
    /// `B̂_v` of the lossy vertices, row-major.
    pub loss_block: Vec<T>,
    /// Magnetic loss: per tet the factor `(1 − b)/(1 + b)` applied to the old F before the
    /// primal update (whose `P` rows carry `1/(1 + b)`), `b = s_n Δt / 2`; empty without σ*.
    pub mag: Vec<T>,
}

/// The lossy vertices' blocks in f64: `Ã_v⁻¹` (exactly symmetrised) in the layout of
/// `Meps_v⁻¹` (other vertices keep `Meps_v⁻¹`), and the list of lossy vertices with their
/// `B̂_v` blocks.
pub struct LossBlocks {
    pub inv: VertexBlocks,
    pub vertices: Vec<u32>,
    pub bhat: Vec<Vec<f64>>,
}

/// The Crank–Nicolson loss blocks for time step `dt` (None when `dga` has no `Msig`).
pub fn loss_blocks(dga: &Dga, dt: f64) -> Option<LossBlocks> {
    let msig = dga.msig.as_ref()?;
    let nv = msig.n_vertices();
    let per: Vec<Option<(Vec<f64>, Vec<f64>)>> = (0..nv)
        .into_par_iter()
        .map(|v| {
            let s = msig.block(v);
            if s.iter().all(|&x| x == 0.0) {
                return None;
            }
            let d = msig.dim(v);
            let sm = DMatrix::from_row_slice(d, d, s);
            // Meps_v (the inverse of the kept inverse when the assembly was lean)
            let m = if dga.meps.data.len() == dga.meps_inv.data.len() {
                DMatrix::from_row_slice(d, d, dga.meps.block(v))
            } else {
                DMatrix::from_row_slice(d, d, dga.meps_inv.block(v))
                    .try_inverse()
                    .expect("an SPD block is invertible")
            };
            let a = &m + &sm * (0.5 * dt);
            // SPD for dt > 0; a negative dt (time reversal) may lose definiteness: LU.
            let ai = a.clone().lu().try_inverse().unwrap_or_else(|| {
                DMatrix::from_element(d, d, f64::NAN) // reported as NaN in the fields
            });
            let inv: Vec<f64> = (0..d * d)
                .map(|k| 0.5 * (ai[(k / d, k % d)] + ai[(k % d, k / d)]))
                .collect();
            let b = &ai * (&m - &sm * (0.5 * dt));
            let bhat: Vec<f64> = (0..d * d).map(|k| b[(k / d, k % d)]).collect();
            Some((inv, bhat))
        })
        .collect();
    let mut inv = dga.meps_inv.clone();
    let mut vertices = Vec::new();
    let mut bhat = Vec::new();
    for (v, p) in per.into_iter().enumerate() {
        if let Some((i, b)) = p {
            inv.data[inv.off[v]..inv.off[v + 1]].copy_from_slice(&i);
            vertices.push(v as u32);
            bhat.push(b);
        }
    }
    Some(LossBlocks {
        inv,
        vertices,
        bhat,
    })
}

impl<T: Real> Operators<T> {
    /// The operators of `dga` for time step `dt`, with the loss blocks when `dga`
    /// conducts somewhere.
    pub fn new(dga: &Dga, dt: f64, with_csr: bool) -> Self {
        Self::build(dga, dt, with_csr, true)
    }

    /// The operators without the conduction terms (for the stability limit, which σ
    /// does not change, and for `K`).
    pub fn lossless(dga: &Dga, dt: f64, with_csr: bool) -> Self {
        Self::build(dga, dt, with_csr, false)
    }

    fn build(dga: &Dga, dt: f64, with_csr: bool, lossy: bool) -> Self {
        let t = dga.n_tets;
        let mag = dga.mag.as_ref().filter(|_| lossy);
        let mag_b = |n: usize| mag.map(|s| 0.5 * s[n] * dt);
        let mut primal = vec![T::zero(); 24 * t];
        let mut primal_edges = vec![0u32; 6 * t];
        primal
            .par_chunks_mut(t.max(1))
            .enumerate()
            .for_each(|(rc, col)| {
                for (n, x) in col.iter_mut().enumerate() {
                    *x = T::of(dt * dga.mmu_inv_c[n][rc] / mag_b(n).map_or(1.0, |b| 1.0 + b));
                }
            });
        primal_edges
            .par_chunks_mut(t.max(1))
            .enumerate()
            .for_each(|(c, col)| {
                for (n, x) in col.iter_mut().enumerate() {
                    *x = dga.tet_edges[n][c];
                }
            });
        let (hvert, hrow) = dga.half_edge_rows();
        let loss = if lossy { loss_blocks(dga, dt) } else { None };
        let inv = loss.as_ref().map(|l| &l.inv).unwrap_or(&dga.meps_inv);
        let block = inv.data.par_iter().map(|&x| T::of(dt * x)).collect();
        let csr = with_csr.then(|| {
            let m = build_csr_with(dga, inv, dt);
            m.map(|&x| T::of(x))
        });
        let (mut loss_h, mut loss_vert, mut loss_row, mut loss_block) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        if let Some(l) = &loss {
            for (&v, b) in l.vertices.iter().zip(&l.bhat) {
                let hs = dga.meps.halves(v as usize);
                let d = hs.len();
                for (i, &h) in hs.iter().enumerate() {
                    loss_h.push(h);
                    loss_vert.push(v);
                    loss_row.push((loss_block.len() + i * d) as u64);
                }
                loss_block.extend(b.iter().map(|&x| T::of(x)));
            }
        }
        Operators {
            dt,
            n_tets: t,
            n_edges: dga.n_edges,
            primal,
            primal_edges,
            circ_ptr: dga.circ_ptr.clone(),
            circ: dga.circ.clone(),
            vptr: dga.meps.ptr.iter().map(|&x| x as u32).collect(),
            vh: dga.meps.h.clone(),
            hvert,
            hrow,
            block,
            csr,
            loss_h,
            loss_vert,
            loss_row,
            loss_block,
            mag: mag
                .map(|s| {
                    s.iter()
                        .map(|&x| {
                            let b = 0.5 * x * dt;
                            T::of((1.0 - b) / (1.0 + b))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// Whether the operators carry a loss step.
    pub fn is_lossy(&self) -> bool {
        !self.loss_h.is_empty()
    }

    pub fn n_half(&self) -> usize {
        2 * self.n_edges
    }
    pub fn n_dual(&self) -> usize {
        4 * self.n_tets
    }
}

/// Rows of one vertex: (half-edge slot, [(column, value)]).
type VertexRows = Vec<(u32, Vec<(u32, f64)>)>;

/// The seed's global matrix `Δt Meps⁻¹ C̃` (2E x 4T), built per vertex in parallel.
pub fn build_csr(dga: &Dga, dt: f64) -> CsMat<f64> {
    build_csr_with(dga, &dga.meps_inv, dt)
}

/// `Δt B C̃` for per-vertex blocks `inv` in the layout of `Meps⁻¹` (`Meps⁻¹`, or with the
/// lossy vertices' `Ã_v⁻¹`).
pub fn build_csr_with(dga: &Dga, inv: &VertexBlocks, dt: f64) -> CsMat<f64> {
    let nv = dga.meps.n_vertices();
    let rows: Vec<VertexRows> = (0..nv)
        .into_par_iter()
        .map(|v| {
            let hs = inv.halves(v);
            let b = inv.block(v);
            let d = hs.len();
            // (column, local edge j, sign)
            let mut ent: Vec<(u32, usize, f64)> = Vec::new();
            for (j, &h) in hs.iter().enumerate() {
                let e = (h >> 1) as usize;
                for &x in &dga.circ[dga.circ_ptr[e] as usize..dga.circ_ptr[e + 1] as usize] {
                    ent.push((x >> 1, j, if x & 1 == 1 { -1.0 } else { 1.0 }));
                }
            }
            ent.sort_by_key(|a| a.0);
            let mut cols: Vec<u32> = ent.iter().map(|a| a.0).collect();
            cols.dedup();
            (0..d)
                .map(|i| {
                    let mut row = Vec::with_capacity(cols.len());
                    let mut k = 0;
                    for &c in &cols {
                        let mut s = 0.0;
                        while k < ent.len() && ent[k].0 == c {
                            s += b[i * d + ent[k].1] * ent[k].2;
                            k += 1;
                        }
                        row.push((c, dt * s));
                    }
                    (hs[i], row)
                })
                .collect()
        })
        .collect();
    let nrows = dga.n_half();
    let mut len = vec![0usize; nrows];
    for vr in &rows {
        for (h, r) in vr {
            len[*h as usize] = r.len();
        }
    }
    let mut indptr = Vec::with_capacity(nrows + 1);
    indptr.push(0usize);
    for l in &len {
        indptr.push(indptr.last().copied().unwrap_or(0) + l);
    }
    let nnz = *indptr.last().unwrap_or(&0);
    let mut indices = vec![0usize; nnz];
    let mut data = vec![0.0; nnz];
    for vr in rows {
        for (h, r) in vr {
            let s = indptr[h as usize];
            for (k, (c, x)) in r.into_iter().enumerate() {
                indices[s + k] = c as usize;
                data[s + k] = x;
            }
        }
    }
    CsMat::new((nrows, dga.n_dual()), indptr, indices, data)
}
