//! The global sparse operators by triplet assembly (COO → CSR with duplicate summation,
//! the step of seed 003) through `sprs`: the curl `C` (4T × 2E), the dual curl `C̃`
//! (2E × 4T, from the geometric rule of design note §7, independently of `C`), the
//! block-diagonal inverse masses, the seed's dual matrix `Δt Meps⁻¹ C̃`, and
//! `K = Meps⁻¹ C̃ Mmu⁻¹ C` (design note §8) as sparse products.
//!
//! These are the reference assemblies for the exact-identity tests (`C̃ = Cᵀ` entry by
//! entry, the spectrum of K) and for the CSR dual. The time loop keeps hand-written
//! kernels (`operators.rs`, `backend/`): the per-tet 4x6 blocks and per-vertex blocks read
//! each coefficient once where a general CSR product reads an index per nonzero, and
//! [`super::operators::build_csr`] assembles the dual matrix per vertex in parallel, where
//! `sprs`'s product is sequential (`results/sparse/README.md` has the timings).

use super::Dga;
use super::curl_block;
use crate::mesh::{Mesh, Topology};
use sprs::{CsMat, TriMat};

/// `C` (4T × 2E): row `4n + k` is the circulation of U around face k of tet n (outward
/// sense); both halves of an edge enter with the edge's sign.
pub fn curl(mesh: &Mesh, topo: &Topology) -> CsMat<f64> {
    let t = mesh.n_tets();
    let mut m = TriMat::with_capacity((4 * t, 2 * topo.n_edges()), 24 * t);
    for n in 0..t {
        let c = curl_block(mesh.tets[n]);
        for (k, row) in c.iter().enumerate() {
            for (l, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    let e = topo.tet_edges[n][l] as usize;
                    m.add_triplet(4 * n + k, 2 * e, v);
                    m.add_triplet(4 * n + k, 2 * e + 1, v);
                }
            }
        }
    }
    m.to_csr()
}

/// `C̃` (2E × 4T) from the dual-face circulation table (design note §7).
pub fn dual_curl(dga: &Dga) -> CsMat<f64> {
    let mut m = TriMat::with_capacity((dga.n_half(), dga.n_dual()), 2 * dga.circ.len());
    for e in 0..dga.n_edges {
        for &x in &dga.circ[dga.circ_ptr[e] as usize..dga.circ_ptr[e + 1] as usize] {
            let s = if x & 1 == 1 { -1.0 } else { 1.0 };
            m.add_triplet(2 * e, (x >> 1) as usize, s);
            m.add_triplet(2 * e + 1, (x >> 1) as usize, s);
        }
    }
    m.to_csr()
}

/// `Meps⁻¹` as a block-diagonal 2E × 2E matrix (rows of fixed half-edges empty).
pub fn meps_inverse(dga: &Dga) -> CsMat<f64> {
    let b = &dga.meps_inv;
    let mut m = TriMat::with_capacity((dga.n_half(), dga.n_half()), b.data.len());
    for v in 0..b.n_vertices() {
        let hs = b.halves(v);
        let blk = b.block(v);
        let d = hs.len();
        for i in 0..d {
            for j in 0..d {
                m.add_triplet(hs[i] as usize, hs[j] as usize, blk[i * d + j]);
            }
        }
    }
    m.to_csr()
}

/// `Mmu⁻¹ C` as a 4T × 2E matrix (each tet's 4x6 block on its edges' half-edge pairs).
pub fn mmu_inverse_curl(dga: &Dga) -> CsMat<f64> {
    let t = dga.n_tets;
    let mut m = TriMat::with_capacity((dga.n_dual(), dga.n_half()), 48 * t);
    for n in 0..t {
        let p = dga.primal_block(n);
        for r in 0..4 {
            for l in 0..6 {
                let v = p[r * 6 + l];
                if v != 0.0 {
                    let e = dga.tet_edges[n][l] as usize;
                    m.add_triplet(4 * n + r, 2 * e, v);
                    m.add_triplet(4 * n + r, 2 * e + 1, v);
                }
            }
        }
    }
    m.to_csr()
}

/// The seed's dual matrix `Δt Meps⁻¹ C̃` (2E × 4T) as a sparse product.
pub fn dual_matrix(dga: &Dga, dt: f64) -> CsMat<f64> {
    let d = &meps_inverse(dga) * &dual_curl(dga);
    d.map(|&x| dt * x)
}

/// `K = Meps⁻¹ C̃ Mmu⁻¹ C` (2E × 2E) as a sparse product.
pub fn stiffness(dga: &Dga) -> CsMat<f64> {
    &dual_matrix(dga, 1.0) * &mmu_inverse_curl(dga)
}
