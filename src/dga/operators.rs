//! The leapfrog operators with Δt folded in, in the layouts the kernels read (design §8).
//!
//! - Primal: `P_n = Δt Mmu_n⁻¹ C_n` (4x6 per tet) stored column-major across tets:
//!   entry (r, c) of tet n at `(r*6 + c) * T + n`; the 6 edge ids at `c * T + n`.
//!   `F -= P (U_a + U_b)`.
//! - Dual, factored: `c_e = Σ ±F` over the dual face of e, then per free half-edge row
//!   `U_h += Σ_j (Δt Meps_v⁻¹)[i][j] c_(e_j)`.
//! - Dual, CSR (the seed's form): the global sparse `Δt Meps⁻¹ C̃` with 2E rows (rows of
//!   boundary half-edges are empty) and 4T columns; `U += D F`.

use super::Dga;
use crate::Real;
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
    /// `Δt Meps_v⁻¹`, full row-major blocks.
    pub block: Vec<T>,
    pub csr: Option<CsMat<T>>,
}

impl<T: Real> Operators<T> {
    pub fn new(dga: &Dga, dt: f64, with_csr: bool) -> Self {
        let t = dga.n_tets;
        let mut primal = vec![T::zero(); 24 * t];
        let mut primal_edges = vec![0u32; 6 * t];
        primal
            .par_chunks_mut(t.max(1))
            .enumerate()
            .for_each(|(rc, col)| {
                for (n, x) in col.iter_mut().enumerate() {
                    *x = T::of(dt * dga.mmu_inv_c[n][rc]);
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
        let block = dga
            .meps_inv
            .data
            .par_iter()
            .map(|&x| T::of(dt * x))
            .collect();
        let csr = with_csr.then(|| {
            let m = build_csr(dga, dt);
            m.map(|&x| T::of(x))
        });
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
        }
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
    let nv = dga.meps.n_vertices();
    let rows: Vec<VertexRows> = (0..nv)
        .into_par_iter()
        .map(|v| {
            let hs = dga.meps_inv.halves(v);
            let b = dga.meps_inv.block(v);
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
