//! The mass operators assembled on an OpenCL device (`backend::device_assembly`) against
//! the host assembly, entry by entry, on meshes of random size and jitter with random
//! media, a bundled unstructured cylinder, and a degenerate tet.
//!
//! Tolerance. Both paths add the same hexahedral matrices in the same order; they differ in
//! how a matrix is inverted: the 3 × 3 Gram inverses by the adjugate (device) or Cholesky
//! (host), the 4 × 4 and d × d blocks by two Cholesky codes with different operation
//! orders. Each inverse then carries a relative error of order κ · d · ε with κ the
//! condition number (below 1e3 for these meshes: the jitter is at most 0.3 of a cell) and
//! d ≤ 30, i.e. about 1e-11 at worst; the bound is 1e-11 of the block's largest entry, and
//! the measured figures (printed, PoCL) are 2e-15 to 1.2e-14.

mod common;
use common::{cl_device, cylinder, jittered_box};
use dgatd::backend::device_assembly;
use dgatd::dga::{Dga, VertexBlocks};
use dgatd::mesh::{Mesh, Topology};
use dgatd::problem::Media;
use dgatd::util::Rng;

/// Largest entry-wise difference relative to the largest entry, per chunk, over all chunks.
fn worst_rel(a: &[f64], b: &[f64], chunks: impl Iterator<Item = (usize, usize)>) -> f64 {
    assert_eq!(a.len(), b.len());
    let mut worst = 0.0f64;
    for (s, e) in chunks {
        let scale = b[s..e].iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if scale == 0.0 {
            assert!(
                a[s..e].iter().all(|&x| x == 0.0),
                "entries where the host has none"
            );
            continue;
        }
        let d = a[s..e]
            .iter()
            .zip(&b[s..e])
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        worst = worst.max(d / scale);
    }
    worst
}

fn blocks_rel(a: &VertexBlocks, b: &VertexBlocks) -> f64 {
    assert_eq!(a.ptr, b.ptr);
    assert_eq!(a.h, b.h);
    assert_eq!(a.off, b.off);
    worst_rel(&a.data, &b.data, b.off.windows(2).map(|w| (w[0], w[1])))
}

fn random_media(t: usize, seed: u64) -> Media {
    let mut r = Rng::new(seed);
    Media::lossless(
        (0..t).map(|_| 1.0 + 9.0 * r.uniform()).collect(),
        (0..t).map(|_| 1.0 + 3.0 * r.uniform()).collect(),
    )
}

const TOL: f64 = 1e-11;

fn compare(label: &str, m: &Mesh, mat: &Media, lean: bool) {
    let Some(dev) = cl_device() else { return };
    let t = Topology::build(m).unwrap();
    let host = Dga::assemble_with(m, &t, mat, &t.boundary_edge, lean).unwrap();
    let (got, times) =
        device_assembly::assemble_with(&dev, m, &t, mat, &t.boundary_edge, lean).unwrap();
    let tets = |k: usize| (0..m.n_tets()).map(move |n| (k * n, k * n + k));
    let e_mmu_inv = worst_rel(
        got.mmu_inv.as_flattened(),
        host.mmu_inv.as_flattened(),
        tets(10),
    );
    let e_meps_inv = blocks_rel(&got.meps_inv, &host.meps_inv);
    println!(
        "{label}: {} tets, lean {lean}: Mmu⁻¹ {e_mmu_inv:.2e}, Meps⁻¹ {e_meps_inv:.2e} ({:.3} s)",
        m.n_tets(),
        times.total_s
    );
    assert!(e_mmu_inv < TOL, "{label}: Mmu⁻¹ differs by {e_mmu_inv:e}");
    assert!(
        e_meps_inv < TOL,
        "{label}: Meps⁻¹ differs by {e_meps_inv:e}"
    );
    if lean {
        assert!(got.mmu.is_empty() && got.meps.data.is_empty());
    } else {
        let e_mmu = worst_rel(got.mmu.as_flattened(), host.mmu.as_flattened(), tets(16));
        let e_meps = blocks_rel(&got.meps, &host.meps);
        println!("{label}: Mmu {e_mmu:.2e}, Meps {e_meps:.2e}");
        assert!(e_mmu < TOL, "{label}: Mmu differs by {e_mmu:e}");
        assert!(e_meps < TOL, "{label}: Meps differs by {e_meps:e}");
    }
    // What the host completes is the same either way.
    assert_eq!(got.circ, host.circ);
    assert_eq!(got.circ_ptr, host.circ_ptr);
    assert_eq!(got.tet_orient, host.tet_orient);
    assert_eq!(got.free_edge, host.free_edge);
}

/// Boxes of random cell counts, jitter and media (seeded): the device's masses and
/// inverses equal the host's to round-off, in the lean and the full assembly.
#[test]
fn device_masses_equal_the_host_masses_on_random_meshes() {
    let mut r = Rng::new(0x5eed_a55e);
    for case in 0..3 {
        let n = [
            2 + (r.uniform() * 4.0) as usize,
            2 + (r.uniform() * 4.0) as usize,
            2 + (r.uniform() * 4.0) as usize,
        ];
        let amp = 0.1 + 0.2 * r.uniform();
        let m = jittered_box(n, 1000 + case, amp);
        let mat = random_media(m.n_tets(), 77 + case);
        compare(
            &format!("box {n:?} jitter {amp:.2}"),
            &m,
            &mat,
            case % 2 == 0,
        );
    }
}

/// The bundled unstructured cylinder (vertex blocks up to d ≈ 30), vacuum.
#[test]
fn device_masses_equal_the_host_masses_on_the_coarse_cylinder() {
    let m = cylinder("cylinder_coarse.msh");
    let mat = Media::vacuum(m.n_tets());
    compare("cylinder_coarse", &m, &mat, false);
}

/// A flat tet (one node moved onto the plane of its three neighbours) is refused with the
/// same kind of error as on the host, naming the tet, not a panic or NaN operators.
#[test]
fn a_degenerate_tet_is_an_error_naming_it() {
    let Some(dev) = cl_device() else { return };
    let mut m = jittered_box([2, 2, 2], 5, 0.0);
    // the centre node (1,1,1) of the 2x2x2 box moved onto a face plane of its cell
    let c = m
        .nodes
        .iter()
        .position(|p| (0..3).all(|k| (p[k] - [0.5, 0.4, 0.3][k]).abs() < 1e-9))
        .expect("centre node");
    m.nodes[c] = [0.5, 0.4, 0.0];
    let t = Topology::build(&m).unwrap();
    let mat = Media::vacuum(m.n_tets());
    let host = Dga::assemble_with(&m, &t, &mat, &t.boundary_edge, true);
    let dev_r = device_assembly::assemble_with(&dev, &m, &t, &mat, &t.boundary_edge, true);
    let (Err(h), Err(d)) = (host, dev_r) else {
        panic!("a flat tet must be refused by both assemblies");
    };
    println!("host: {h}\ndevice: {d}");
    assert!(d.to_string().contains("Mmu of tet"), "{d}");
    assert!(h.to_string().contains("Mmu of tet"), "{h}");
}
