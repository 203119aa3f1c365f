//! The exact identities of design note §3–9, on jittered box meshes and the bundled
//! cylinder mesh. Tolerances: the identities hold to round-off; 1e-12 relative leaves a
//! factor ~1e3-1e4 above f64 epsilon for sums of tens of terms.
#![allow(clippy::needless_range_loop)]

use crate::common::*;
use dgatd::complex::TetGeom;
use dgatd::dga::{Dga, curl_block};
use dgatd::internal::{Rng, dot, sub};

#[test]
fn dual_curl_is_the_transpose_of_the_curl() {
    for m in [jittered_box([3, 3, 2], 1, 0.3), cylinder("tiny_v41.msh")] {
        let (m, t, d, _) = setup(m, None);
        // C from the incidence rule, C̃ from the geometric rule, both by triplet assembly
        let c = dgatd::dga::curl_matrix(&m, &t);
        let ct = dgatd::dga::dual_curl_matrix(&d);
        let ctt = ct.transpose_view().to_csr();
        assert!(c.nnz() > 100);
        assert_eq!(c.nnz(), ctt.nnz(), "different number of nonzeros");
        assert_eq!(c.indptr().raw_storage(), ctt.indptr().raw_storage());
        assert_eq!(c.indices(), ctt.indices());
        assert_eq!(c.data(), ctt.data(), "C̃ = Cᵀ entry by entry");
    }
}

/// The hand-written per-vertex CSR builder of the time loop equals the sprs product
/// `Δt Meps⁻¹ C̃`, and the kernels' K equals the sprs product `Meps⁻¹ C̃ Mmu⁻¹ C`.
#[test]
fn hand_assembly_and_kernels_equal_the_sparse_products() {
    let (_m, _t, d, _) = setup(jittered_box([3, 4, 3], 12, 0.3), Some(4));
    let dt = 0.37;
    let hand = dgatd::dga::build_csr(&d, dt);
    let prod = dgatd::dga::dual_matrix(&d, dt);
    let scale = prod.data().iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let mut worst = 0.0f64;
    for (v, (r, c)) in prod.iter() {
        worst = worst.max((hand.get(r, c).copied().unwrap_or(0.0) - v).abs());
    }
    for (v, (r, c)) in hand.iter() {
        worst = worst.max((prod.get(r, c).copied().unwrap_or(0.0) - v).abs());
    }
    assert!(
        worst < 1e-13 * scale,
        "CSR dual differs by {worst:e} (scale {scale:e})"
    );
    let k = dgatd::dga::stiffness_matrix(&d);
    let (free, kd) = dense_k(&d);
    let mut worst = 0.0f64;
    let kmax = kd.amax();
    for (i, &hi) in free.iter().enumerate() {
        for (j, &hj) in free.iter().enumerate() {
            let ks = k.get(hi, hj).copied().unwrap_or(0.0);
            worst = worst.max((ks - kd[(i, j)]).abs());
        }
    }
    assert!(
        worst < 1e-12 * kmax,
        "K differs by {worst:e} (max {kmax:e})"
    );
}

#[test]
fn curl_of_each_tet_annihilates_gradients_and_faces_sum_to_zero() {
    // C_n G_n = 0 (curl grad = 0) and Σ_k C_n[k] = 0 (div curl = 0), exactly.
    let m = jittered_box([2, 2, 2], 2, 0.3);
    let mut r = Rng::new(5);
    for n in 0..m.n_tets() {
        let v = m.tets[n];
        let c = curl_block(v);
        let phi: Vec<f64> = (0..4).map(|_| r.sym()).collect();
        for k in 0..4 {
            let mut s = 0.0;
            for l in 0..6 {
                let [i, j] = dgatd::mesh::LOCAL_EDGES[l];
                let (a, b) = if v[i] < v[j] { (i, j) } else { (j, i) };
                s += c[k][l] * (phi[b] - phi[a]);
            }
            assert!(s.abs() < 1e-15);
        }
        for l in 0..6 {
            assert_eq!((0..4).map(|k| c[k][l]).sum::<f64>(), 0.0);
        }
    }
}

#[test]
fn mu_mass_is_consistent_for_uniform_fields() {
    let (m, _t, d, mat) = setup(jittered_box([3, 2, 3], 3, 0.3), Some(9));
    let mut r = Rng::new(4);
    let mut worst: f64 = 0.0;
    for n in 0..m.n_tets() {
        let g = TetGeom::new(&m, n);
        let h0 = [r.sym(), r.sym(), r.sym()];
        let f: Vec<f64> = (0..4).map(|k| dot(h0, sub(g.g[k], g.b))).collect();
        for k in 0..4 {
            let lhs: f64 = (0..4).map(|j| d.mmu[n][k * 4 + j] * f[j]).sum();
            let rhs = mat.mu[n] * dot(h0, g.face_area(k));
            let scale =
                mat.mu[n] * dgatd::internal::norm(h0) * dgatd::internal::norm(g.face_area(k));
            worst = worst.max((lhs - rhs).abs() / scale);
        }
    }
    assert!(worst < 1e-12, "worst relative error {worst:e}");
}

#[test]
fn eps_mass_is_consistent_for_uniform_fields() {
    // The per-row identity needs one eps around the edge (the faces shared by consecutive
    // tets of the ring then cancel); the pair identity holds tet by tet for any materials.
    for (mesh, seed) in [
        (jittered_box([3, 3, 3], 6, 0.3), None),
        (jittered_box([3, 3, 3], 6, 0.3), Some(10)),
        (cylinder("tiny_v41.msh"), None),
    ] {
        let (m, t, _d, mat) = setup(mesh, seed);
        let meps = Dga::meps_unrestricted(&m, &t, &mat);
        // Whole dual-face area vectors S̃_e, weighted by eps per tet part.
        let mut s = vec![[0.0; 3]; t.n_edges()];
        for n in 0..m.n_tets() {
            let g = TetGeom::new(&m, n);
            for l in 0..6 {
                let a = g.dual_face_area(l);
                let e = t.tet_edges[n][l] as usize;
                for c in 0..3 {
                    s[e][c] += mat.eps[n] * a[c];
                }
            }
        }
        let e0 = [0.3, -0.7, 0.5];
        let mut u = vec![0.0; 2 * t.n_edges()];
        for (e, &[a, b]) in t.edges.iter().enumerate() {
            let te = sub(m.nodes[b as usize], m.nodes[a as usize]);
            u[2 * e] = 0.5 * dot(e0, te);
            u[2 * e + 1] = 0.5 * dot(e0, te);
        }
        let mut mu = vec![0.0; u.len()];
        meps.apply_add(&u, &mut mu);
        // Interior edges (closed ring of tets): each half-edge row equals eps e0·S̃_e.
        // Every edge: the two half-edge rows add up to 2 eps e0·S̃_e (holds tet by tet).
        let mut worst: f64 = 0.0;
        let mut worst_pair: f64 = 0.0;
        let mut n_interior = 0;
        for e in 0..t.n_edges() {
            let rhs = dot(e0, s[e]);
            let sc = dgatd::internal::norm(s[e]) * dgatd::internal::norm(e0);
            if !t.boundary_edge[e] && seed.is_none() {
                n_interior += 1;
                for h in [2 * e, 2 * e + 1] {
                    worst = worst.max((mu[h] - rhs).abs() / sc);
                }
            }
            worst_pair = worst_pair.max((mu[2 * e] + mu[2 * e + 1] - 2.0 * rhs).abs() / sc);
        }
        assert!(n_interior > 10 || seed.is_some());
        assert!(
            worst < 1e-12,
            "interior edges: worst relative error {worst:e}"
        );
        assert!(
            worst_pair < 1e-12,
            "all edges, pair sum: worst relative error {worst_pair:e}"
        );
    }
}

#[test]
fn mass_blocks_are_symmetric_positive_definite() {
    let (m, _t, d, _) = setup(jittered_box([3, 3, 3], 7, 0.35), Some(3));
    for n in 0..m.n_tets() {
        let a = &d.mmu[n];
        for r in 0..4 {
            for c in 0..4 {
                assert!((a[r * 4 + c] - a[c * 4 + r]).abs() <= 1e-14 * a[r * 4 + r].abs());
            }
            assert!(a[r * 4 + r] > 0.0);
        }
    }
    for v in 0..d.meps.n_vertices() {
        let dm = d.meps.dim(v);
        let b = d.meps.block(v);
        let bi = d.meps_inv.block(v);
        for i in 0..dm {
            for j in 0..dm {
                assert!((b[i * dm + j] - b[j * dm + i]).abs() <= 1e-13 * b[i * dm + i]);
                // B B⁻¹ = I
                let p: f64 = (0..dm).map(|k| b[i * dm + k] * bi[k * dm + j]).sum();
                assert!(
                    (p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-10,
                    "vertex {v}"
                );
            }
        }
    }
    // Positive definiteness is checked by the Cholesky factorisations inside assemble();
    // a negative control: a wrong-sign block must be refused.
    let m2 = nalgebra::DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
    assert!(m2.cholesky().is_none());
}

#[test]
fn null_space_of_k_is_free_edges_plus_interior_vertices() {
    // K = Meps⁻¹ Cᵀ Mmu⁻¹ C with SPD masses: null(K) = null(C restricted to free halves).
    let (m, t, d, _) = setup(jittered_box([3, 3, 2], 8, 0.25), Some(1));
    // Dense K over free half-edges via the operators: K x = -D P x with unit Δt.
    let (_free, k) = dense_k(&d);
    let sv = k.clone().singular_values();
    let smax = sv.max();
    let nullity = sv.iter().filter(|&&s| s < 1e-10 * smax).count();
    let expected = t.n_free_edges() + t.n_interior_vertices();
    assert!(t.n_interior_vertices() > 0);
    assert_eq!(
        nullity,
        expected,
        "free edges {} + interior vertices {}",
        t.n_free_edges(),
        t.n_interior_vertices()
    );
    // Next singular value is well separated from round-off.
    let mut s: Vec<f64> = sv.iter().cloned().collect();
    s.sort_by(|a, b| a.total_cmp(b));
    assert!(s[nullity] > 1e-4 * smax);
    let _ = m;
}

/// The free half-edges are both halves of every edge off the PEC wall (the count the
/// resonator reports for DG runs, which assemble no DGA operators).
#[test]
fn free_half_edges_are_the_interior_edges() {
    for m in [
        jittered_box([3, 2, 2], 4, 0.2),
        cylinder("cylinder_coarse.msh"),
    ] {
        let (_m, t, d, _) = setup(m, None);
        let interior = t.boundary_edge.iter().filter(|&&b| !b).count();
        assert!(interior > 0);
        assert_eq!(d.n_free_half(), 2 * interior);
    }
}
