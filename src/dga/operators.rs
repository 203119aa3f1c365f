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
//!
//! Dispersion (design note §13, [`crate::problem::dispersion`]): with `D = Meps∞ U +
//! Σ_m M0^m P_m`, `P_m = χ_m(z) U` realised per pole in transposed direct form II
//! (`P = b₀U + s₁`), Ampère with Crank–Nicolson σ,
//! `D⁺ − D + (Δt/2) Msig (U⁺ + U) = Δt c`, becomes per vertex
//!
//! ```text
//!     U⁺ = B̂_v U + Δt Ã_v⁻¹ c − Σ_m G_m (s₁,m⁽ⁿ⁾ − s₁,m⁽ⁿ⁻¹⁾)
//!     A_v = Meps∞_v + Σ_m b₀,m M0^m_v,   Ã_v = A_v + (Δt/2) Msig_v,   G_m = Ã_v⁻¹ M0^m_v
//! ```
//!
//! (`B̂_v = Ã_v⁻¹ (A_v − (Δt/2) Msig_v)`, the identity where σ = 0; `b₀,m` and `s₁,m` summed
//! over the material's poles). So a dispersive vertex has the dual block `Δt Ã_v⁻¹`, a
//! correction `U_v −= Σ_m G_m g_m` before the dual update ([`DispOps`]; `g_m` the change of
//! the summed `s₁` in the previous step), and after it the pole step runs every filter on the
//! new `U` and stores the new `g`. Where every tet around `v` is of one material and none
//! conducts, `G = I/(ε∞ + b₀)`: a scalar per material.

use super::{Dga, VertexBlocks};
use crate::real::Real;
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
#[non_exhaustive]
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
    /// Dispersion (None without dispersive tets).
    pub disp: Option<DispOps<T>>,
    /// The magnetic side of perfectly matched layers (None without one; the primal blocks
    /// of its tets are `Δt Ã_n⁻¹ C_n`, [`super::stretch::MagOps`]).
    pub mpml: Option<super::stretch::MagOps<T>>,
    /// The vertices whose dual block is not `Δt Meps_v⁻¹` (lossy or dispersive), sorted.
    pub special: Vec<u32>,
}

/// The dispersive part of the operators (see the module docs).
///
/// - Correction rows `r`: `U[h[r]] −= Σ_{j < len[r]} block[row[r] + j] g[goff[r] + j]`, or
///   `block[row[r]] g[goff[r]]` when `len[r] = 0` (a pure vertex: `block[row]` is the
///   material's scalar `1/(ε∞ + b₀)`).
/// - Pole entries, grouped by material `m` (`ptr[m]..ptr[m+1]`, `n_m` of them): entry `i`
///   filters `x = U[ent_h]` through the material's poles `cptr[m]..cptr[m+1]` (5
///   coefficients `b₀ b₁ b₂ a₁ a₂` each in `coef`) with states
///   `s[sptr[m] + (2p + q) n_m + i]` (`q = 0, 1`: `s₁, s₂`), and writes `g[ent_g]` = the
///   change of `Σ_p s₁`.
#[derive(Clone, Debug)]
pub struct DispOps<T> {
    pub h: Vec<u32>,
    pub row: Vec<u64>,
    pub len: Vec<u32>,
    pub goff: Vec<u32>,
    pub block: Vec<T>,
    pub n_g: usize,
    pub ent_h: Vec<u32>,
    pub ent_g: Vec<u32>,
    pub ptr: Vec<usize>,
    pub coef: Vec<T>,
    pub cptr: Vec<usize>,
    pub sptr: Vec<usize>,
    pub n_state: usize,
}

impl<T: Real> DispOps<T> {
    /// The counts of the byte model ([`crate::cost::disp_bytes`]).
    pub fn counts(&self) -> crate::cost::DispCounts {
        crate::cost::DispCounts {
            rows: self.h.len(),
            full_rows: self.len.iter().filter(|&&l| l > 0).count(),
            full_len: self.len.iter().map(|&l| l as usize).sum(),
            entries: self.ent_h.len(),
            states: (0..self.ptr.len() - 1)
                .map(|m| (self.ptr[m + 1] - self.ptr[m]) * self.touched(m))
                .sum(),
        }
    }

    /// The states a step reads and writes per entry of material `m`: two per second-order
    /// pole, one per first-order pole (`b₂ = a₂ = 0`, Debye: its `s₂` stays 0 and the
    /// kernels skip it).
    pub fn touched(&self, m: usize) -> usize {
        let np = self.cptr[m + 1] - self.cptr[m];
        np + (0..np).filter(|&p| self.second_order(m, p)).count()
    }

    /// Whether pole `p` of material `m` keeps a second state (`b₂` or `a₂` nonzero); the
    /// kernels take every pole from the 32nd on as second-order (see [`Self::orders`]).
    fn second_order(&self, m: usize, p: usize) -> bool {
        let c = &self.coef[5 * (self.cptr[m] + p)..5 * (self.cptr[m] + p + 1)];
        p >= 32 || c[2] != T::zero() || c[4] != T::zero()
    }

    /// The pole orders of material `m` as the kernels read them: bit `p` set when pole `p`
    /// (`p < 32`) is second-order.
    pub fn orders(&self, m: usize) -> u32 {
        (0..(self.cptr[m + 1] - self.cptr[m]).min(32))
            .filter(|&p| self.second_order(m, p))
            .fold(0, |a, p| a | (1 << p))
    }
}

/// How a dispersive vertex couples to its materials' polarisations.
#[derive(Clone, Debug)]
pub enum Coupling {
    /// Every tet around the vertex is of material `m` and none conducts: `G = I/(ε∞ + b₀)`.
    Pure(u16),
    /// `G_m = Ã_v⁻¹ M0^m_v` for each material `m` around the vertex: row-major `d x (d k)`
    /// (the k blocks side by side).
    Full(Vec<u16>, Vec<f64>),
}

/// The sum of the `b₀` of material `k`'s poles for time step `dt` (library units).
pub fn b0_of(disp: &super::Dispersion, k: usize, dt: f64) -> f64 {
    disp.poles[k].iter().map(|p| p.bilinear(dt).b[0]).sum()
}

/// The lossy and dispersive vertices' blocks in f64: `Ã_v⁻¹` (exactly symmetrised) in the
/// layout of `Meps_v⁻¹` (other vertices keep `Meps_v⁻¹`), the lossy vertices with their
/// `B̂_v` blocks, and the dispersive vertices with their coupling.
pub struct LossBlocks {
    pub inv: VertexBlocks,
    pub vertices: Vec<u32>,
    pub bhat: Vec<Vec<f64>>,
    pub disp: Vec<(u32, Coupling)>,
    /// Every vertex whose block changed, sorted.
    pub special: Vec<u32>,
}

/// One vertex's blocks: `(Ã_v⁻¹, B̂_v if lossy, coupling if dispersive)`.
type VertexUpdate = (Vec<f64>, Option<Vec<f64>>, Option<Coupling>);

/// The blocks of vertex `v` (None when it neither conducts nor touches a dispersive tet).
fn vertex_update(dga: &Dga, dt: f64, b0: &[f64], v: usize) -> Option<VertexUpdate> {
    let d = dga.meps.dim(v);
    let sig = dga
        .msig
        .as_ref()
        .map(|m| m.block(v))
        .filter(|b| b.iter().any(|&x| x != 0.0));
    let disp = dga.disp.as_ref();
    let mats: Vec<usize> = disp
        .map(|ds| {
            (0..ds.m0.len())
                .filter(|&k| ds.m0[k].block(v).iter().any(|&x| x != 0.0))
                .collect()
        })
        .unwrap_or_default();
    if (sig.is_none() && mats.is_empty()) || d == 0 {
        return None;
    }
    if let (Some(ds), None) = (disp, sig) {
        let k = ds.pure[v] as usize;
        if k > 0 {
            // M0 = Meps∞/ε∞ around v: Ã⁻¹ = Meps⁻¹ ε∞/(ε∞ + b₀), G = I/(ε∞ + b₀)
            let e = ds.eps_inf[k - 1];
            let f = e / (e + b0[k - 1]);
            let inv = dga.meps_inv.block(v).iter().map(|&x| x * f).collect();
            return Some((inv, None, Some(Coupling::Pure((k - 1) as u16))));
        }
    }
    // Meps_v (the inverse of the kept inverse when the assembly was lean)
    let m = if dga.meps.data.len() == dga.meps_inv.data.len() {
        DMatrix::from_row_slice(d, d, dga.meps.block(v))
    } else {
        DMatrix::from_row_slice(d, d, dga.meps_inv.block(v))
            .try_inverse()
            .expect("an SPD block is invertible")
    };
    let mut a = m;
    let m0: Vec<DMatrix<f64>> = mats
        .iter()
        .map(|&k| DMatrix::from_row_slice(d, d, disp.expect("mats").m0[k].block(v)))
        .collect();
    for (&k, m0k) in mats.iter().zip(&m0) {
        a += m0k * b0[k];
    }
    let sm = sig
        .map(|b| DMatrix::from_row_slice(d, d, b))
        .unwrap_or_else(|| DMatrix::zeros(d, d));
    let at = &a + &sm * (0.5 * dt);
    // SPD for dt > 0; a negative dt (time reversal) may lose definiteness: LU.
    let ai = at
        .clone()
        .lu()
        .try_inverse()
        .unwrap_or_else(|| DMatrix::from_element(d, d, f64::NAN)); // NaN in the fields
    let inv: Vec<f64> = (0..d * d)
        .map(|k| 0.5 * (ai[(k / d, k % d)] + ai[(k % d, k / d)]))
        .collect();
    let bhat = sig.map(|_| {
        let b = &ai * (&a - &sm * (0.5 * dt));
        (0..d * d).map(|k| b[(k / d, k % d)]).collect()
    });
    let coupling = (!mats.is_empty()).then(|| {
        let w = d * mats.len();
        let mut g = vec![0.0; d * w];
        for (j, m0k) in m0.iter().enumerate() {
            let gk = &ai * m0k;
            for r in 0..d {
                for c in 0..d {
                    g[r * w + j * d + c] = gk[(r, c)];
                }
            }
        }
        Coupling::Full(mats.iter().map(|&k| k as u16).collect(), g)
    });
    Some((inv, bhat, coupling))
}

/// The Crank–Nicolson loss blocks and the dispersive couplings for time step `dt` (None when
/// `dga` has neither `Msig` nor dispersive tets).
pub fn loss_blocks(dga: &Dga, dt: f64) -> Option<LossBlocks> {
    if dga.msig.is_none() && dga.disp.is_none() {
        return None;
    }
    let nv = dga.meps.n_vertices();
    let b0: Vec<f64> = dga
        .disp
        .as_ref()
        .map(|ds| (0..ds.poles.len()).map(|k| b0_of(ds, k, dt)).collect())
        .unwrap_or_default();
    let per: Vec<Option<VertexUpdate>> = (0..nv)
        .into_par_iter()
        .map(|v| vertex_update(dga, dt, &b0, v))
        .collect();
    let mut inv = dga.meps_inv.clone();
    let (mut vertices, mut bhat, mut disp, mut special) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (v, p) in per.into_iter().enumerate() {
        if let Some((i, b, c)) = p {
            inv.data[inv.off[v]..inv.off[v + 1]].copy_from_slice(&i);
            special.push(v as u32);
            if let Some(b) = b {
                vertices.push(v as u32);
                bhat.push(b);
            }
            if let Some(c) = c {
                disp.push((v as u32, c));
            }
        }
    }
    Some(LossBlocks {
        inv,
        vertices,
        bhat,
        disp,
        special,
    })
}

/// The device layout of the dispersive couplings and poles ([`DispOps`]).
fn disp_ops<T: Real>(dga: &Dga, l: &LossBlocks, dt: f64, b0: &[f64]) -> Option<DispOps<T>> {
    let ds = dga.disp.as_ref()?;
    let nm = ds.poles.len();
    // the pure vertices' scalars first, one per material
    let mut block: Vec<T> = (0..nm)
        .map(|k| T::of(1.0 / (ds.eps_inf[k] + b0[k])))
        .collect();
    let (mut h, mut row, mut len, mut goff) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // (material, half-edge, g index) of every g entry
    let mut ents: Vec<(u16, u32, u32)> = Vec::new();
    for (v, c) in &l.disp {
        let hs = dga.meps.halves(*v as usize);
        let d = hs.len();
        let g0 = ents.len() as u32;
        match c {
            Coupling::Pure(k) => {
                for (i, &hh) in hs.iter().enumerate() {
                    ents.push((*k, hh, g0 + i as u32));
                    h.push(hh);
                    row.push(*k as u64);
                    len.push(0);
                    goff.push(g0 + i as u32);
                }
            }
            Coupling::Full(ks, g) => {
                for (j, k) in ks.iter().enumerate() {
                    for (i, &hh) in hs.iter().enumerate() {
                        ents.push((*k, hh, g0 + (j * d + i) as u32));
                    }
                }
                let w = d * ks.len();
                for (i, &hh) in hs.iter().enumerate() {
                    h.push(hh);
                    row.push((block.len() + i * w) as u64);
                    len.push(w as u32);
                    goff.push(g0);
                }
                block.extend(g.iter().map(|&x| T::of(x)));
            }
        }
    }
    let n_g = ents.len();
    ents.sort_by_key(|e| e.0); // stable: by material, then in vertex order
    let mut ptr = vec![0usize; nm + 1];
    for e in &ents {
        ptr[e.0 as usize + 1] += 1;
    }
    for k in 0..nm {
        ptr[k + 1] += ptr[k];
    }
    let (mut coef, mut cptr, mut sptr) = (Vec::new(), vec![0usize], vec![0usize]);
    for k in 0..nm {
        for p in &ds.poles[k] {
            let f = p.bilinear(dt);
            coef.extend([f.b[0], f.b[1], f.b[2], f.a[1], f.a[2]].map(T::of));
        }
        cptr.push(cptr[k] + ds.poles[k].len());
        sptr.push(sptr[k] + 2 * ds.poles[k].len() * (ptr[k + 1] - ptr[k]));
    }
    Some(DispOps {
        h,
        row,
        len,
        goff,
        block,
        n_g,
        ent_h: ents.iter().map(|e| e.1).collect(),
        ent_g: ents.iter().map(|e| e.2).collect(),
        ptr,
        coef,
        cptr,
        n_state: sptr[nm],
        sptr,
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
                    let p = dga.primal_entry(n, rc / 6, rc % 6);
                    *x = T::of(dt * p / mag_b(n).map_or(1.0, |b| 1.0 + b));
                }
            });
        let mpml = if lossy {
            super::stretch::mag_ops::<T>(dga, dt)
        } else {
            None
        };
        if let Some(mp) = &mpml {
            for (i, &n) in mp.tets.iter().enumerate() {
                let b = mp.primal_block(dga, i);
                for (r, row) in b.iter().enumerate() {
                    for (l, e) in row.iter().enumerate() {
                        primal[(r * 6 + l) * t + n as usize] = T::of(dt * e);
                    }
                }
            }
        }
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
        let b0: Vec<f64> = dga
            .disp
            .as_ref()
            .map(|ds| (0..ds.poles.len()).map(|k| b0_of(ds, k, dt)).collect())
            .unwrap_or_default();
        let disp = loss.as_ref().and_then(|l| disp_ops(dga, l, dt, &b0));
        let special = loss.as_ref().map(|l| l.special.clone()).unwrap_or_default();
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
            disp,
            mpml,
            special,
        }
    }

    /// The source pattern `Δt B j` for the source's current `j` with this operator's blocks,
    /// None when the source touches no lossy or dispersive vertex (the stepper then scales
    /// the unit-Δt pattern `Meps⁻¹ j`, as without losses).
    pub fn source_pattern(&self, src: &super::excitation::Source) -> Option<Vec<(u32, T)>> {
        let touches = src.current.iter().any(|&(h, _)| {
            let v = self.hvert[h as usize];
            self.hrow[h as usize] != u64::MAX && self.special.binary_search(&v).is_ok()
        });
        if !touches {
            return None;
        }
        let mut j = std::collections::BTreeMap::new();
        for &(h, x) in &src.current {
            j.insert(h, x);
        }
        let mut out = Vec::new();
        let mut verts: Vec<u32> = src
            .current
            .iter()
            .filter(|&&(h, _)| self.hrow[h as usize] != u64::MAX)
            .map(|&(h, _)| self.hvert[h as usize])
            .collect();
        verts.sort_unstable();
        verts.dedup();
        for v in verts {
            let (a, b) = (
                self.vptr[v as usize] as usize,
                self.vptr[v as usize + 1] as usize,
            );
            for i in a..b {
                let h = self.vh[i];
                let row = self.hrow[h as usize] as usize;
                let mut acc = 0.0;
                for (jj, k) in (a..b).enumerate() {
                    if let Some(x) = j.get(&self.vh[k]) {
                        acc += self.block[row + jj].f64() * x;
                    }
                }
                if acc != 0.0 {
                    out.push((h, T::of(acc)));
                }
            }
        }
        Some(out)
    }

    /// Whether the operators carry a loss step.
    pub fn is_lossy(&self) -> bool {
        !self.loss_h.is_empty()
    }

    /// The counts of the byte model of the losses ([`crate::cost::loss_bytes`]) of these
    /// operators, assembled from `dga` (whose σ* marks the magnetically lossy tets).
    pub fn loss_counts(&self, dga: &Dga) -> crate::cost::LossCounts {
        crate::cost::LossCounts {
            rows: self.loss_h.len(),
            entries: self.loss_block.len(),
            mag_tets: dga
                .mag
                .as_ref()
                .map_or(0, |m| m.iter().filter(|&&x| x != 0.0).count()),
        }
    }

    pub fn n_half(&self) -> usize {
        2 * self.n_edges
    }
    pub fn n_dual(&self) -> usize {
        4 * self.n_tets
    }
}

/// The structure of `Δt B C̃` ([`build_csr_with`]) and the recipe of its values, the integer
/// part of the sparse assembly (shared by the host and `backend::device_assembly`, so both
/// sum the same terms in the same order).
///
/// Row `h` (a half-edge of vertex `v`, local index `i` in `v`'s block `B_v`) has one entry
/// per dual DoF that a dual circulation of `v`'s edges touches, the columns `indices[indptr[h]..]`
/// ascending. Its `k`-th value is `Δt Σ ± B_v[i][j]` over the terms of segment
/// `seg_base[v] + k`: `ent[seg[s]..seg[s + 1]]`, each `(j << 1) | negative`, in the order
/// of `B`'s columns `j` and then of the circulation. That is the COO form with its duplicate
/// `(h, column)` pairs grouped: summing each group is the duplicate summation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsrLayout {
    pub indptr: Vec<usize>,
    pub indices: Vec<u32>,
    /// `n_vertices + 1` segment offsets, and `n_segments + 1` term offsets.
    pub seg_base: Vec<u64>,
    pub seg: Vec<u64>,
    pub ent: Vec<u32>,
    /// Columns (`n_dual`).
    pub ncols: usize,
}

/// The [`CsrLayout`] of blocks in `layout` (only `ptr` and `h` are read) with the dual
/// circulations `circ_ptr`, `circ` (as in [`Dga`]): `nrows` half-edges, `ncols` dual DoFs.
pub fn csr_layout(
    layout: &VertexBlocks,
    circ_ptr: &[u32],
    circ: &[u32],
    nrows: usize,
    ncols: usize,
) -> CsrLayout {
    let nv = layout.n_vertices();
    // per vertex: its sorted columns, the number of terms of each, and the terms
    let per: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)> = (0..nv)
        .into_par_iter()
        .map(|v| {
            // (column, term): stable sort keeps the order of j, then of the circulation
            let mut ent: Vec<(u32, u32)> = Vec::new();
            for (j, &h) in layout.halves(v).iter().enumerate() {
                let e = (h >> 1) as usize;
                for &x in &circ[circ_ptr[e] as usize..circ_ptr[e + 1] as usize] {
                    ent.push((x >> 1, ((j as u32) << 1) | (x & 1)));
                }
            }
            ent.sort_by_key(|a| a.0);
            let mut cols: Vec<u32> = Vec::new();
            let mut len: Vec<u32> = Vec::new();
            for &(c, _) in &ent {
                if cols.last() == Some(&c) {
                    *len.last_mut().unwrap_or(&mut 0) += 1;
                } else {
                    cols.push(c);
                    len.push(1);
                }
            }
            (cols, len, ent.into_iter().map(|a| a.1).collect())
        })
        .collect();
    let owner = row_owners(layout, nrows);
    let mut indptr = Vec::with_capacity(nrows + 1);
    indptr.push(0usize);
    for o in &owner {
        let l = o.map(|(v, _)| per[v as usize].0.len()).unwrap_or(0);
        indptr.push(indptr.last().copied().unwrap_or(0) + l);
    }
    let mut indices = vec![0u32; *indptr.last().unwrap_or(&0)];
    row_slices(&mut indices, &indptr)
        .into_par_iter()
        .zip(&owner)
        .for_each(|(row, o)| {
            if let Some((v, _)) = o {
                row.copy_from_slice(&per[*v as usize].0);
            }
        });
    let mut seg_base = Vec::with_capacity(nv + 1);
    seg_base.push(0u64);
    for p in &per {
        seg_base.push(seg_base.last().copied().unwrap_or(0) + p.0.len() as u64);
    }
    let lens: Vec<u32> = per
        .par_iter()
        .flat_map_iter(|p| p.1.iter().copied())
        .collect();
    let mut seg = Vec::with_capacity(lens.len() + 1);
    seg.push(0u64);
    for l in lens {
        seg.push(seg.last().copied().unwrap_or(0) + l as u64);
    }
    let ent = per
        .par_iter()
        .flat_map_iter(|p| p.2.iter().copied())
        .collect();
    CsrLayout {
        indptr,
        indices,
        seg_base,
        seg,
        ent,
        ncols,
    }
}

/// `(vertex, local index)` of each of `nrows` half-edge rows in the blocks of `layout`
/// (None for a row in no block).
fn row_owners(layout: &VertexBlocks, nrows: usize) -> Vec<Option<(u32, u32)>> {
    let mut owner = vec![None; nrows];
    for v in 0..layout.n_vertices() {
        for (i, &h) in layout.halves(v).iter().enumerate() {
            owner[h as usize] = Some((v as u32, i as u32));
        }
    }
    owner
}

/// `buf` cut into the rows of `indptr`, for filling the rows in parallel.
fn row_slices<'a, T>(buf: &'a mut [T], indptr: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(indptr.len().saturating_sub(1));
    let mut rest = buf;
    for w in indptr.windows(2) {
        let (row, tail) = rest.split_at_mut(w[1] - w[0]);
        out.push(row);
        rest = tail;
    }
    out
}

impl CsrLayout {
    /// The values of `Δt B C̃` for the blocks `inv` (in the layout this was built from).
    pub fn values(&self, inv: &VertexBlocks, dt: f64) -> Vec<f64> {
        let mut data = vec![0.0; self.indices.len()];
        let owner = row_owners(inv, self.indptr.len() - 1);
        row_slices(&mut data, &self.indptr)
            .into_par_iter()
            .zip(&owner)
            .for_each(|(row, o)| {
                let Some((v, i)) = *o else { return };
                let (v, i) = (v as usize, i as usize);
                let (b, d) = (inv.block(v), inv.dim(v));
                let segs = self.seg_base[v] as usize..self.seg_base[v + 1] as usize;
                for (x, s) in row.iter_mut().zip(segs) {
                    let mut sum = 0.0;
                    for &t in &self.ent[self.seg[s] as usize..self.seg[s + 1] as usize] {
                        let bij = b[i * d + (t >> 1) as usize];
                        sum += if t & 1 == 1 { -bij } else { bij };
                    }
                    *x = dt * sum;
                }
            });
        data
    }

    /// The matrix with values `data` (from [`Self::values`] or a device).
    pub fn matrix(self, data: Vec<f64>) -> CsMat<f64> {
        // hundreds of millions of indices at a few million tets: widen them in parallel
        let indices = self.indices.par_iter().map(|&c| c as usize).collect();
        CsMat::new(
            (self.indptr.len() - 1, self.ncols),
            self.indptr,
            indices,
            data,
        )
    }
}

/// The seed's global matrix `Δt Meps⁻¹ C̃` (2E x 4T), built per vertex in parallel.
pub fn build_csr(dga: &Dga, dt: f64) -> CsMat<f64> {
    build_csr_with(dga, &dga.meps_inv, dt)
}

/// `Δt B C̃` for per-vertex blocks `inv` in the layout of `Meps⁻¹` (`Meps⁻¹`, or with the
/// lossy vertices' `Ã_v⁻¹`).
pub fn build_csr_with(dga: &Dga, inv: &VertexBlocks, dt: f64) -> CsMat<f64> {
    let l = csr_layout(inv, &dga.circ_ptr, &dga.circ, dga.n_half(), dga.n_dual());
    let data = l.values(inv, dt);
    l.matrix(data)
}
