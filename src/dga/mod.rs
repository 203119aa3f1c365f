//! Fractioned degrees of freedom, local mass matrices and discrete curls (design note §4–7).
//!
//! DoFs:
//! - `U` (electric, 2E): circulation of e over each half primal edge; slot `2e` is the half
//!   at the start vertex of `e`, `2e + 1` the half at its end, both measured along `t_e`.
//!   Half-edges of boundary edges are fixed to 0 (PEC).
//! - `F` (magnetic, 4T): circulation of h over each half dual edge `b_n -> g_f`; slot
//!   `4n + k` for the face opposite local vertex `k`, oriented outward from `n`.
//!
//! Mass matrices: per hexahedron `M_eps = eps |Omega| (AᵀA)⁻¹`, `M_mu = mu |Omega| (ÃᵀÃ)⁻¹`
//! (`A`, `Ã` have the half-edge vectors as columns; this equals `|Omega| w^i·w^l` with the
//! dual bases `w`). Assembled into `Mmu_n` (4x4 per tet) and `Meps_v` (d x d per vertex,
//! free half-edges only under PEC).
//!
//! Curls: `C` (4T x 2E) per tet acts on the 6 full-edge sums `U_(e,a) + U_(e,b)` with
//! ±1 (circulation around the outward-oriented face); `C̃` (2E x 4T) row `(e, v)` is the
//! circulation of F around the whole dual face of `e`. `C̃ = Cᵀ` exactly.

pub mod operators;

use crate::complex::TetGeom;
use crate::error::{Error, Result};
use crate::mesh::topology::{FACE_CYCLE, LOCAL_EDGES};
use crate::mesh::{Mesh, Topology};
use nalgebra::{DMatrix, Matrix3, Matrix4};
use rayon::prelude::*;

/// Relative permittivity and permeability of each tetrahedron.
#[derive(Clone, Debug)]
pub struct Materials {
    pub eps: Vec<f64>,
    pub mu: Vec<f64>,
}

impl Materials {
    pub fn vacuum(n_tets: usize) -> Self {
        Materials { eps: vec![1.0; n_tets], mu: vec![1.0; n_tets] }
    }
    /// Assigns `(eps_r, mu_r)` to the tets of the named (or numbered) volume groups.
    pub fn from_groups(mesh: &Mesh, groups: &[(String, f64, f64)]) -> Result<Self> {
        let mut m = Materials::vacuum(mesh.n_tets());
        for (key, eps, mu) in groups {
            let tag = mesh.volume_group(key).ok_or_else(|| {
                let known: Vec<String> = mesh
                    .physical_names
                    .iter()
                    .filter(|p| p.dim == 3)
                    .map(|p| format!("{} ({})", p.name, p.tag))
                    .collect();
                Error::config("material group", key, format!("no such volume group in {} (known: {})", mesh.source, if known.is_empty() { "none".into() } else { known.join(", ") }))
            })?;
            for (v, name) in [(*eps, "eps_r"), (*mu, "mu_r")] {
                if !(v.is_finite() && v > 0.0) {
                    return Err(Error::config(name, v, format!("must be finite and positive (group {key})")));
                }
            }
            for n in 0..mesh.n_tets() {
                if mesh.tet_phys[n] == tag {
                    m.eps[n] = *eps;
                    m.mu[n] = *mu;
                }
            }
        }
        Ok(m)
    }
}

/// Faraday incidence of a tet: `C_n[k][l]` for face `k` (outward) and local edge `l`
/// (global orientation). Entries are ±1 where edge `l` bounds face `k`, else 0.
pub fn curl_block(v: [u32; 4]) -> [[f64; 6]; 4] {
    let mut c = [[0.0; 6]; 4];
    for (k, cyc) in FACE_CYCLE.iter().enumerate() {
        for s in 0..3 {
            let (p, q) = (cyc[s], cyc[(s + 1) % 3]);
            let l = crate::mesh::topology::local_edge(p, q);
            c[k][l] = if v[p] < v[q] { 1.0 } else { -1.0 };
        }
    }
    c
}

/// Symmetric blocks per vertex over its half-edges (row-major, full storage).
#[derive(Clone, Debug, Default)]
pub struct VertexBlocks {
    /// `h[ptr[v]..ptr[v+1]]`: the half-edge slots of vertex v, ascending edge id.
    pub ptr: Vec<usize>,
    pub h: Vec<u32>,
    /// `data[off[v]..off[v+1]]`: the d x d block of v.
    pub off: Vec<usize>,
    pub data: Vec<f64>,
}

impl VertexBlocks {
    pub fn n_vertices(&self) -> usize {
        self.ptr.len() - 1
    }
    pub fn dim(&self, v: usize) -> usize {
        self.ptr[v + 1] - self.ptr[v]
    }
    pub fn halves(&self, v: usize) -> &[u32] {
        &self.h[self.ptr[v]..self.ptr[v + 1]]
    }
    pub fn block(&self, v: usize) -> &[f64] {
        &self.data[self.off[v]..self.off[v + 1]]
    }
    /// y = B x over full-length half-edge vectors (adds into y).
    pub fn apply_add(&self, x: &[f64], y: &mut [f64]) {
        for v in 0..self.n_vertices() {
            let hs = self.halves(v);
            let b = self.block(v);
            let d = hs.len();
            for i in 0..d {
                y[hs[i] as usize] += (0..d).map(|j| b[i * d + j] * x[hs[j] as usize]).sum::<f64>();
            }
        }
    }
    /// xᵀ B x.
    pub fn quad(&self, x: &[f64]) -> f64 {
        (0..self.n_vertices())
            .into_par_iter()
            .map(|v| {
                let hs = self.halves(v);
                let b = self.block(v);
                let d = hs.len();
                let mut s = 0.0;
                for i in 0..d {
                    let xi = x[hs[i] as usize];
                    for j in 0..d {
                        s += xi * b[i * d + j] * x[hs[j] as usize];
                    }
                }
                s
            })
            .sum()
    }
}

/// The assembled, Δt-independent discrete operators in f64.
#[derive(Clone, Debug)]
pub struct Dga {
    pub n_tets: usize,
    pub n_edges: usize,
    pub n_vertices: usize,
    pub tet_edges: Vec<[u32; 6]>,
    pub free_edge: Vec<bool>,
    /// `Mmu_n`, row-major 4x4.
    pub mmu: Vec<[f64; 16]>,
    /// `Mmu_n⁻¹ C_n`, row-major 4x6.
    pub mmu_inv_c: Vec<[f64; 24]>,
    /// `Meps_v` over free half-edges, and its inverse (same layout).
    pub meps: VertexBlocks,
    pub meps_inv: VertexBlocks,
    /// Dual-face circulations `(C̃ F)_e = Σ ±F`: entries `circ[circ_ptr[e]..circ_ptr[e+1]]`
    /// encode `(f_slot << 1) | negative`.
    pub circ_ptr: Vec<u32>,
    pub circ: Vec<u32>,
}

impl Dga {
    /// 2E half-edge slots (U length).
    pub fn n_half(&self) -> usize {
        2 * self.n_edges
    }
    /// 4T dual half-edge slots (F length).
    pub fn n_dual(&self) -> usize {
        4 * self.n_tets
    }
    /// Free half-edges (DoFs of U under PEC).
    pub fn n_free_half(&self) -> usize {
        self.meps.h.len()
    }

    /// Assembles everything. Fails if a local mass matrix is not SPD.
    pub fn assemble(mesh: &Mesh, topo: &Topology, mat: &Materials) -> Result<Dga> {
        let t = mesh.n_tets();
        // Per tet: Mmu, Mmu⁻¹C, and the 4 hexahedral eps matrices.
        let per_tet: Vec<Result<([f64; 16], [f64; 24], [[f64; 9]; 4])>> = (0..t)
            .into_par_iter()
            .map(|n| {
                let g = TetGeom::new(mesh, n);
                let mut mmu = Matrix4::<f64>::zeros();
                let mut heps = [[0.0; 9]; 4];
                for i in 0..4 {
                    let h = g.hexahedron(i);
                    let me = local_gram_inverse(&h.a, mat.eps[n] * h.volume)
                        .ok_or_else(|| not_spd("hexahedral eps matrix of tet", mesh.tet_ids[n] as usize, "degenerate half-edge vectors"))?;
                    let mm = local_gram_inverse(&h.at, mat.mu[n] * h.volume)
                        .ok_or_else(|| not_spd("hexahedral mu matrix of tet", mesh.tet_ids[n] as usize, "degenerate dual half-edge vectors"))?;
                    for r in 0..3 {
                        for c in 0..3 {
                            mmu[(h.faces[r], h.faces[c])] += mm[(r, c)];
                            heps[i][r * 3 + c] = me[(r, c)];
                        }
                    }
                }
                let chol = mmu.cholesky().ok_or_else(|| not_spd("Mmu of tet", mesh.tet_ids[n] as usize, "Cholesky failed"))?;
                let inv = chol.inverse();
                let c = curl_block(g.v);
                let mut p = [0.0; 24];
                for r in 0..4 {
                    for l in 0..6 {
                        p[r * 6 + l] = (0..4).map(|k| inv[(r, k)] * c[k][l]).sum();
                    }
                }
                let mut m16 = [0.0; 16];
                for r in 0..4 {
                    for c in 0..4 {
                        m16[r * 4 + c] = mmu[(r, c)];
                    }
                }
                Ok((m16, p, heps))
            })
            .collect();
        let mut mmu = Vec::with_capacity(t);
        let mut mmu_inv_c = Vec::with_capacity(t);
        let mut heps = Vec::with_capacity(t);
        for r in per_tet {
            let (a, b, c) = r?;
            mmu.push(a);
            mmu_inv_c.push(b);
            heps.push(c);
        }
        let free_edge: Vec<bool> = topo.boundary_edge.iter().map(|&b| !b).collect();
        let meps = assemble_eps(mesh, topo, &heps, &free_edge);
        drop(heps);
        let meps_inv = invert_blocks(&meps, mesh)?;
        let (circ_ptr, circ) = dual_circulations(mesh, topo);
        Ok(Dga {
            n_tets: t,
            n_edges: topo.n_edges(),
            n_vertices: mesh.n_vertices(),
            tet_edges: topo.tet_edges.clone(),
            free_edge,
            mmu,
            mmu_inv_c,
            meps,
            meps_inv,
            circ_ptr,
            circ,
        })
    }

    /// `Meps_v` over all half-edges (no PEC restriction), for the consistency identity.
    pub fn meps_unrestricted(mesh: &Mesh, topo: &Topology, mat: &Materials) -> VertexBlocks {
        let heps: Vec<[[f64; 9]; 4]> = (0..mesh.n_tets())
            .into_par_iter()
            .map(|n| {
                let g = TetGeom::new(mesh, n);
                std::array::from_fn(|i| {
                    let h = g.hexahedron(i);
                    let me = local_gram_inverse(&h.a, mat.eps[n] * h.volume).expect("valid mesh");
                    std::array::from_fn(|k| me[(k / 3, k % 3)])
                })
            })
            .collect();
        assemble_eps(mesh, topo, &heps, &vec![true; topo.n_edges()])
    }

    /// The sparse `C` (4T x 2E) as triplets (row, col, ±1), for tests and the CSR build.
    pub fn curl_triplets(mesh: &Mesh, topo: &Topology) -> Vec<(usize, usize, f64)> {
        let mut out = Vec::with_capacity(mesh.n_tets() * 24);
        for n in 0..mesh.n_tets() {
            let c = curl_block(mesh.tets[n]);
            for k in 0..4 {
                for l in 0..6 {
                    if c[k][l] != 0.0 {
                        let e = topo.tet_edges[n][l] as usize;
                        out.push((4 * n + k, 2 * e, c[k][l]));
                        out.push((4 * n + k, 2 * e + 1, c[k][l]));
                    }
                }
            }
        }
        out
    }

    /// The dual curl `C̃` (2E x 4T) built from the geometric rule of design note §7
    /// (independently of `C`), as triplets.
    pub fn dual_curl_triplets(&self) -> Vec<(usize, usize, f64)> {
        let mut out = Vec::new();
        for e in 0..self.n_edges {
            for &x in &self.circ[self.circ_ptr[e] as usize..self.circ_ptr[e + 1] as usize] {
                let s = if x & 1 == 1 { -1.0 } else { 1.0 };
                out.push((2 * e, (x >> 1) as usize, s));
                out.push((2 * e + 1, (x >> 1) as usize, s));
            }
        }
        out
    }

    /// Per half-edge slot: its vertex and the offset of its row in the vertex block
    /// (`u64::MAX` for boundary half-edges).
    pub fn half_edge_rows(&self) -> (Vec<u32>, Vec<u64>) {
        let mut hvert = vec![u32::MAX; self.n_half()];
        let mut hrow = vec![u64::MAX; self.n_half()];
        for v in 0..self.meps.n_vertices() {
            let d = self.meps.dim(v);
            for (i, &h) in self.meps.halves(v).iter().enumerate() {
                hvert[h as usize] = v as u32;
                hrow[h as usize] = (self.meps.off[v] + i * d) as u64;
            }
        }
        (hvert, hrow)
    }
}

fn not_spd(what: &'static str, index: usize, detail: &str) -> Error {
    Error::NotSpd { what, index, detail: detail.into() }
}

/// `s (GᵀG)⁻¹` for the 3 column vectors of G; None if singular.
fn local_gram_inverse(cols: &[[f64; 3]; 3], s: f64) -> Option<Matrix3<f64>> {
    let g = Matrix3::from_fn(|r, c| cols[c][r]);
    let gram = g.transpose() * g;
    gram.cholesky().map(|c| c.inverse() * s)
}

fn assemble_eps(mesh: &Mesh, topo: &Topology, heps: &[[[f64; 9]; 4]], keep: &[bool]) -> VertexBlocks {
    let nv = mesh.n_vertices();
    // vertex -> (tet, local vertex)
    let mut vt_ptr = vec![0usize; nv + 1];
    for tv in &mesh.tets {
        for &v in tv {
            vt_ptr[v as usize + 1] += 1;
        }
    }
    for v in 0..nv {
        vt_ptr[v + 1] += vt_ptr[v];
    }
    let mut fill = vt_ptr.clone();
    let mut vt = vec![(0u32, 0u8); vt_ptr[nv]];
    for (n, tv) in mesh.tets.iter().enumerate() {
        for (i, &v) in tv.iter().enumerate() {
            vt[fill[v as usize]] = (n as u32, i as u8);
            fill[v as usize] += 1;
        }
    }
    let halves: Vec<Vec<u32>> = (0..nv)
        .into_par_iter()
        .map(|v| {
            topo.edges_at(v)
                .iter()
                .filter(|&&e| keep[e as usize])
                .map(|&e| topo.half_edge(e as usize, v as u32) as u32)
                .collect()
        })
        .collect();
    let blocks: Vec<Vec<f64>> = (0..nv)
        .into_par_iter()
        .map(|v| {
            let hs = &halves[v];
            let d = hs.len();
            let mut b = vec![0.0; d * d];
            for &(n, i) in &vt[vt_ptr[v]..vt_ptr[v + 1]] {
                let tv = mesh.tets[n as usize];
                let h = {
                    // local edges at i, in the order hexahedron() uses
                    let others: Vec<usize> = (0..4).filter(|&j| j != i as usize).collect();
                    others.iter().map(|&j| crate::mesh::topology::local_edge(i as usize, j)).collect::<Vec<_>>()
                };
                let loc: Vec<Option<usize>> = h
                    .iter()
                    .map(|&l| {
                        let e = topo.tet_edges[n as usize][l];
                        let slot = topo.half_edge(e as usize, tv[i as usize]) as u32;
                        hs.iter().position(|&x| x == slot)
                    })
                    .collect();
                let m = &heps[n as usize][i as usize];
                for r in 0..3 {
                    for c in 0..3 {
                        if let (Some(a), Some(bb)) = (loc[r], loc[c]) {
                            b[a * d + bb] += m[r * 3 + c];
                        }
                    }
                }
            }
            b
        })
        .collect();
    let mut ptr = Vec::with_capacity(nv + 1);
    let mut off = Vec::with_capacity(nv + 1);
    ptr.push(0);
    off.push(0);
    let mut h = Vec::new();
    let mut data = Vec::new();
    for v in 0..nv {
        h.extend_from_slice(&halves[v]);
        data.extend_from_slice(&blocks[v]);
        ptr.push(h.len());
        off.push(data.len());
    }
    VertexBlocks { ptr, h, off, data }
}

fn invert_blocks(m: &VertexBlocks, mesh: &Mesh) -> Result<VertexBlocks> {
    let inv: Vec<Result<Vec<f64>>> = (0..m.n_vertices())
        .into_par_iter()
        .map(|v| {
            let d = m.dim(v);
            if d == 0 {
                return Ok(vec![]);
            }
            let a = DMatrix::from_row_slice(d, d, m.block(v));
            let c = a.cholesky().ok_or_else(|| Error::NotSpd {
                what: "Meps of vertex",
                index: v,
                detail: format!("{d}x{d} block at {:?}, Cholesky failed", mesh.nodes[v]),
            })?;
            let i = c.inverse();
            Ok((0..d * d).map(|k| i[(k / d, k % d)]).collect())
        })
        .collect();
    let mut data = Vec::with_capacity(m.data.len());
    for b in inv {
        data.extend(b?);
    }
    Ok(VertexBlocks { ptr: m.ptr.clone(), h: m.h.clone(), off: m.off.clone(), data })
}

/// Per edge, the signed F slots of its dual-face circulation (design note §7), from the
/// geometric right-hand rule. Counting sort over tets: ascending tet order per edge.
fn dual_circulations(mesh: &Mesh, topo: &Topology) -> (Vec<u32>, Vec<u32>) {
    let ne = topo.n_edges();
    let per_tet: Vec<[(u32, u32, u32); 6]> = (0..mesh.n_tets())
        .into_par_iter()
        .map(|n| {
            let g = TetGeom::new(mesh, n);
            std::array::from_fn(|l| {
                let (fp, fm) = g.dual_face_faces(l);
                (topo.tet_edges[n][l], ((4 * n + fp) as u32) << 1, (((4 * n + fm) as u32) << 1) | 1)
            })
        })
        .collect();
    let mut ptr = vec![0u32; ne + 1];
    for t in &per_tet {
        for &(e, _, _) in t {
            ptr[e as usize + 1] += 2;
        }
    }
    for e in 0..ne {
        ptr[e + 1] += ptr[e];
    }
    let mut fill = ptr.clone();
    let mut circ = vec![0u32; ptr[ne] as usize];
    for t in &per_tet {
        for &(e, a, b) in t {
            let f = &mut fill[e as usize];
            circ[*f as usize] = a;
            circ[*f as usize + 1] = b;
            *f += 2;
        }
    }
    let _ = LOCAL_EDGES;
    (ptr, circ)
}
