//! Locality orderings of a mesh (`mesh::order`): the renumbered mesh is the same
//! discretisation. On jittered boxes of random size with random media (seeded), the
//! Morton-ordered and the shuffled mesh give
//! - each tet's `Mmu⁻¹` bit for bit (a tet keeps its local vertex order and coordinates);
//! - the same nonzero eigenvalues of K (dense solve) to 1e-10 of the largest: the blocks
//!   `Meps_v` sum their tets in another order, so they agree to round-off (about 1e-15
//!   relative), which the dense eigen-solve carries at most κ-fold into the spectrum.

use crate::common::{jittered_box, k_eigenvalues};
use dgatd::dga::Dga;
use dgatd::internal::Rng;
use dgatd::mesh::Topology;
use dgatd::problem::Media;

#[test]
fn renumbered_meshes_have_the_same_operator() {
    let mut r = Rng::new(0x0de7_0a11);
    for case in 0..2u64 {
        let n = std::array::from_fn(|_| 2 + (r.uniform() * 3.0) as usize);
        let m = jittered_box(n, 700 + case, 0.1 + 0.2 * r.uniform());
        let eps: Vec<f64> = (0..m.n_tets()).map(|_| 1.0 + 4.0 * r.uniform()).collect();
        let mu: Vec<f64> = (0..m.n_tets()).map(|_| 1.0 + r.uniform()).collect();
        let build = |mm: &dgatd::Mesh, order: &[u32]| {
            let t = Topology::build(mm).unwrap();
            let mat = Media::lossless(
                order.iter().map(|&i| eps[i as usize]).collect(),
                order.iter().map(|&i| mu[i as usize]).collect(),
            );
            Dga::assemble_with(mm, &t, &mat, &t.boundary_edge, false).unwrap()
        };
        let ident: Vec<u32> = (0..m.n_tets() as u32).collect();
        let d0 = build(&m, &ident);
        let ev0 = k_eigenvalues(&d0);
        let orders = [
            (
                "morton",
                dgatd::mesh::morton(&dgatd::mesh::centroids(&m)),
                dgatd::mesh::morton(&m.nodes),
            ),
            (
                "shuffled",
                dgatd::mesh::shuffled(m.n_tets(), 5 + case),
                dgatd::mesh::shuffled(m.nodes.len(), 6 + case),
            ),
        ];
        for (what, to, no) in orders {
            let rm = m.renumbered(&to, &no).expect("permutations");
            let d1 = build(&rm, &to);
            for (i, &old) in to.iter().enumerate() {
                assert_eq!(d1.mmu_inv[i], d0.mmu_inv[old as usize], "{what}: tet {i}");
            }
            let ev1 = k_eigenvalues(&d1);
            assert_eq!(ev1.len(), ev0.len(), "{what}");
            let top = ev0[ev0.len() - 1];
            let e = ev0
                .iter()
                .zip(&ev1)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
                / top;
            println!(
                "box {n:?} {what}: {} eigenvalues of K, largest difference {e:.1e} of the largest",
                ev0.len()
            );
            assert!(e < 1e-10, "{what}: spectra differ by {e:e}");
        }
    }
}
