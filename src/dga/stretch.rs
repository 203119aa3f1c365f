//! The DGA masses of perfectly matched layers ([`crate::problem::pml`]).
//!
//! A layer tet's medium is `ε_n Λ(s)` and `μ_n Λ(s)` with `Λ = I + Σ_t W_t χ_t(s)`. In the
//! hexahedral dual bases (design note §5) a tensor weight gives the local matrices
//! `|Ω| wⁱ·W wˡ` (electric) and `|Ω| w̃ʲ·W w̃ᵏ` (magnetic), symmetric like the scalar ones.
//!
//! - **Electric side:** every stretch pole `χ_t` becomes one more dispersive "material" of
//!   [`super::Dispersion`] (after the real ones), whose vacuum mass `m0` is assembled with
//!   the tensor `ε_n W_t` on the tets that carry the term: the existing pole machinery
//!   (filter on `U`, correction through `G = Ã⁻¹ M0`, design note §13) steps it.
//! - **Magnetic side:** per layer tet, the 4x4 `M0_t = Σ_hex |Ω| w̃·(μ_n W_t) w̃` scattered
//!   on the faces, one per term ([`MagStretch`]); [`crate::dga::operators`] builds the
//!   primal update `Ã_n = Mmu_n + Σ_t b₀,t M0_t`, `F⁺ = F − Σ_t Ã_n⁻¹ M0_t g_t −
//!   Δt Ã_n⁻¹ C_n U` from them, the dual of the electric one.

use super::{Coef, VertexBlocks, assemble_blocks, local_tensor};
use crate::complex::TetGeom;
use crate::error::{Error, Result};
use crate::mesh::{Mesh, Topology};
use crate::problem::Media;
use crate::problem::pml::Stretch;
use rayon::prelude::*;

/// The magnetic masses of the layer tets: tet `tets[i]` has the terms
/// `ptr[i]..ptr[i + 1]`, each a stretch pole `pole[j]` and its 4x4 `m0[j]` (row-major,
/// symmetric).
#[derive(Clone, Debug, PartialEq)]
pub struct MagStretch {
    pub tets: Vec<u32>,
    pub ptr: Vec<usize>,
    pub pole: Vec<u16>,
    pub m0: Vec<[f64; 16]>,
}

/// Per tet its index in `st.tets` (`u32::MAX` outside every layer).
pub fn tet_index(st: &Stretch, n_tets: usize) -> Vec<u32> {
    let mut idx = vec![u32::MAX; n_tets];
    for (i, (n, _)) in st.tets.iter().enumerate() {
        idx[*n as usize] = i as u32;
    }
    idx
}

/// The electric vacuum masses of the stretch poles: one [`VertexBlocks`] per pole of `st`,
/// with `ε_n W_t` on the tets that carry pole `t`, in the layout of `Meps` at the vertices
/// of those tets (and of `rows`, where given) and empty blocks elsewhere: a pole covers one
/// level of one layer, so a full-size block set per pole would hold the whole mesh's `Meps`
/// once per pole (tens of them; 125 GB at 12.7M tets on the H200 before this).
pub fn electric_m0(
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    st: &Stretch,
    free_edge: &[bool],
    rows: Option<&[bool]>,
) -> Result<Vec<VertexBlocks>> {
    let idx = tet_index(st, mesh.n_tets());
    // per pole, the vertices of its tets (within `rows`)
    let mut touched = vec![vec![false; mesh.n_vertices()]; st.poles.len()];
    for (n, terms) in &st.tets {
        for (k, _) in terms {
            for &v in &mesh.tets[*n as usize] {
                touched[*k as usize][v as usize] = rows.is_none_or(|r| r[v as usize]);
            }
        }
    }
    (0..st.poles.len())
        .map(|k| {
            let coef = |n: usize| {
                let i = idx[n];
                if i == u32::MAX {
                    return Coef::Scalar(0.0);
                }
                match st.tets[i as usize].1.iter().find(|t| t.0 as usize == k) {
                    Some((_, w)) => Coef::Tensor(w.map(|x| x * mat.eps[n])),
                    None => Coef::Scalar(0.0),
                }
            };
            assemble_blocks(mesh, topo, &coef, free_edge, Some(&touched[k]))
        })
        .collect()
}

/// The magnetic masses of the layer tets (those with `tet_rows[n]` when given).
pub fn magnetic(
    mesh: &Mesh,
    mat: &Media,
    st: &Stretch,
    tet_rows: Option<&[bool]>,
) -> Result<MagStretch> {
    let picked: Vec<&(u32, crate::problem::pml::TetTerms)> = st
        .tets
        .iter()
        .filter(|(n, _)| tet_rows.is_none_or(|r| r[*n as usize]))
        .collect();
    let per: Vec<Option<Vec<[f64; 16]>>> = picked
        .par_iter()
        .map(|(n, terms)| {
            let n = *n as usize;
            let g = TetGeom::new(mesh, n);
            terms
                .iter()
                .map(|(_, w)| {
                    let w = w.map(|x| x * mat.mu[n]);
                    let mut m = [0.0; 16];
                    for i in 0..4 {
                        let h = g.hexahedron(i);
                        let loc = local_tensor(&h.at, &w, h.volume)?;
                        for r in 0..3 {
                            for c in 0..3 {
                                m[4 * h.faces[r] + h.faces[c]] += loc[(r, c)];
                            }
                        }
                    }
                    Some(m)
                })
                .collect()
        })
        .collect();
    let mut out = MagStretch {
        tets: Vec::with_capacity(picked.len()),
        ptr: vec![0],
        pole: Vec::new(),
        m0: Vec::new(),
    };
    for ((n, terms), m) in picked.iter().zip(per) {
        let Some(m) = m else {
            return Err(Error::NotSpd {
                what: "PML magnetic mass of tet",
                index: mesh.tet_ids[*n as usize] as usize,
                detail: "degenerate dual half-edge vectors".into(),
            });
        };
        out.tets.push(*n);
        out.pole.extend(terms.iter().map(|t| t.0));
        out.m0.extend(m);
        out.ptr.push(out.pole.len());
    }
    Ok(out)
}

/// The magnetic PML update for one time step `Δt` in precision `T` (see the module docs).
///
/// Layer tet `tets[i]` (`pos[n] = i`, `u32::MAX` elsewhere; empty `pos` when no layer) has
/// `Ã_n⁻¹` (`inv[i]`, the upper triangle of [`super::SYM4`], f64: the primal blocks of
/// these tets are `Δt Ã_n⁻¹ C_n`) and the terms `ptr[i]..ptr[i + 1]`: term `j` has
/// `g_ofs = 4j` in `g` and `8j` in the states (`s₁` at `+c`, `s₂` at `+4 + c` for face
/// `c`), the correction `G_j = Ã_n⁻¹ M0_j` (row-major 4x4) and the coefficients `b₀ b₁ b₂
/// a₁ a₂` of its pole (`coef[5 pole[j]..]`).
#[derive(Clone, Debug)]
pub struct MagOps<T> {
    pub tets: Vec<u32>,
    pub pos: Vec<u32>,
    pub inv: Vec<[f64; 10]>,
    pub ptr: Vec<usize>,
    pub pole: Vec<u16>,
    /// Per term, its tet (`tets[i]` for `ptr[i] <= j < ptr[i + 1]`).
    pub term_tet: Vec<u32>,
    pub g: Vec<[T; 16]>,
    pub coef: Vec<T>,
}

impl<T: crate::real::Real> MagOps<T> {
    /// Values of `g` (4 per term) and of the states (8 per term).
    pub fn n_g(&self) -> usize {
        4 * self.pole.len()
    }
    pub fn n_state(&self) -> usize {
        8 * self.pole.len()
    }

    /// The primal block of layer tet `tets[i]` without `Δt`: `Ã_n⁻¹ C_n` (4 faces × 6
    /// edges), `C_n` the tet's curl in `dga`'s orientation.
    pub fn primal_block(&self, dga: &super::Dga, i: usize) -> [[f64; 6]; 4] {
        let c = super::curl_from_orient(dga.tet_orient[self.tets[i] as usize]);
        let inv = &self.inv[i];
        std::array::from_fn(|r| {
            std::array::from_fn(|l| (0..4).map(|k| inv[super::SYM4[r][k]] * c[k][l]).sum())
        })
    }

    /// The layer index of every tet (`pos`), with `None` outside the layers.
    pub fn index(&self, n: usize) -> Option<usize> {
        let i = *self.pos.get(n)?;
        (i != u32::MAX).then_some(i as usize)
    }
}

/// The [`MagOps`] of `dga` for time step `dt` (None without a PML).
pub fn mag_ops<T: crate::real::Real>(dga: &super::Dga, dt: f64) -> Option<MagOps<T>> {
    use nalgebra::Matrix4;
    let ms = dga.mpml.as_ref()?;
    let ds = dga.disp.as_ref()?;
    let nm = ds.n_media;
    let biq: Vec<crate::problem::Biquad> =
        ds.poles[nm..].iter().map(|p| p[0].bilinear(dt)).collect();
    let coef = biq
        .iter()
        .flat_map(|f| [f.b[0], f.b[1], f.b[2], f.a[1], f.a[2]].map(T::of))
        .collect();
    let sym4 = &super::SYM4;
    let per: Vec<([f64; 10], Vec<[T; 16]>)> = (0..ms.tets.len())
        .into_par_iter()
        .map(|i| {
            let n = ms.tets[i] as usize;
            let mmu = if dga.mmu.len() == dga.n_tets {
                Matrix4::from_fn(|r, c| dga.mmu[n][4 * r + c])
            } else {
                Matrix4::from_fn(|r, c| dga.mmu_inv[n][sym4[r][c]])
                    .try_inverse()
                    .expect("an SPD block is invertible")
            };
            let mut a = mmu;
            let m0: Vec<Matrix4<f64>> = (ms.ptr[i]..ms.ptr[i + 1])
                .map(|j| Matrix4::from_fn(|r, c| ms.m0[j][4 * r + c]))
                .collect();
            for (j, m) in (ms.ptr[i]..ms.ptr[i + 1]).zip(&m0) {
                a += m * biq[ms.pole[j] as usize].b[0];
            }
            // symmetric in exact arithmetic; LU keeps a negative Δt (time reversal) working
            let ai = a.lu().try_inverse().expect("Ã_n is invertible");
            let ai = (ai + ai.transpose()) * 0.5;
            let mut inv = [0.0; 10];
            for r in 0..4 {
                for c in r..4 {
                    inv[sym4[r][c]] = ai[(r, c)];
                }
            }
            let g = m0
                .iter()
                .map(|m| {
                    let gm = ai * m;
                    std::array::from_fn(|k| T::of(gm[(k / 4, k % 4)]))
                })
                .collect();
            (inv, g)
        })
        .collect();
    let mut pos = vec![u32::MAX; dga.n_tets];
    for (i, &n) in ms.tets.iter().enumerate() {
        pos[n as usize] = i as u32;
    }
    let (inv, g): (Vec<[f64; 10]>, Vec<Vec<[T; 16]>>) = per.into_iter().unzip();
    Some(MagOps {
        tets: ms.tets.clone(),
        pos,
        inv,
        ptr: ms.ptr.clone(),
        pole: ms.pole.clone(),
        term_tet: (0..ms.tets.len())
            .flat_map(|i| std::iter::repeat_n(ms.tets[i], ms.ptr[i + 1] - ms.ptr[i]))
            .collect(),
        g: g.into_iter().flatten().collect(),
        coef,
    })
}
