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

use crate::common;
use crate::common::{cl_device, cylinder, jittered_box};

use dgatd::dga::{Dga, VertexBlocks};
use dgatd::internal::Rng;
use dgatd::mesh::{Mesh, Topology};
use dgatd::problem::Media;

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

/// A box of 2–5 cells per side (from `r`), jittered by 0.1–0.3 of a cell (mesh seed
/// `mesh_seed`), with random media (seed `media_seed`), and its label.
fn random_case(r: &mut Rng, mesh_seed: u64, media_seed: u64) -> (String, Mesh, Media) {
    let n = [
        2 + (r.uniform() * 4.0) as usize,
        2 + (r.uniform() * 4.0) as usize,
        2 + (r.uniform() * 4.0) as usize,
    ];
    let amp = 0.1 + 0.2 * r.uniform();
    let m = jittered_box(n, mesh_seed, amp);
    let mat = random_media(m.n_tets(), media_seed);
    (format!("box {n:?} jitter {amp:.2}"), m, mat)
}

/// A random point in the middle half of `m`'s bounding box along each axis.
fn inside(m: &Mesh, r: &mut Rng) -> [f64; 3] {
    let (lo, hi) = m.bbox();
    std::array::from_fn(|c| lo[c] + (0.25 + 0.5 * r.uniform()) * (hi[c] - lo[c]))
}

const TOL: f64 = 1e-11;

fn compare(label: &str, m: &Mesh, mat: &Media, lean: bool) {
    let Some(dev) = cl_device() else { return };
    let t = Topology::build(m).unwrap();
    let host = Dga::assemble_with(m, &t, mat, &t.boundary_edge, lean).unwrap();
    let (got, times) =
        dgatd::backend::assemble_with(&dev, m, &t, mat, &t.boundary_edge, lean).unwrap();
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
        let (label, m, mat) = random_case(&mut r, 1000 + case, 77 + case);
        compare(&label, &m, &mat, case % 2 == 0);
    }
}

/// The bundled unstructured cylinder (vertex blocks up to d ≈ 30), vacuum.
#[test]
fn device_masses_equal_the_host_masses_on_the_coarse_cylinder() {
    let m = cylinder("cylinder_coarse.msh");
    let mat = Media::vacuum(m.n_tets());
    compare("cylinder_coarse", &m, &mat, false);
}

/// The CSR form's matrix `Δt Meps⁻¹ C̃` with its values computed on the device
/// (`dgatd::backend::assemble_csr`: the duplicate COO terms of each row summed by `csr_values`)
/// against the host's `build_csr`: the same structure exactly, and the values within the
/// round-off of the inverse blocks. Each value sums `±Meps⁻¹` entries of one block row, so its
/// error is bounded by the row's entries' (1e-11 of the block's largest, above) times the
/// number of terms; relative to the row's largest value the bound is 1e-10 (measured:
/// printed). Random jittered boxes with random media, and the coarse cylinder (d ≈ 30).
#[test]
fn device_csr_values_equal_the_host_csr() {
    let Some(dev) = cl_device() else { return };
    let k = dgatd::backend::AssemblyKernels::build(&dev).unwrap();
    let mut r = Rng::new(0xc5a_11ce);
    let mut cases: Vec<(String, Mesh, Media)> = (0..2)
        .map(|case| random_case(&mut r, 2000 + case, 91 + case))
        .collect();
    let cyl = cylinder("cylinder_coarse.msh");
    let vac = Media::vacuum(cyl.n_tets());
    cases.push(("cylinder_coarse".into(), cyl, vac));
    for (label, m, mat) in cases {
        let t = Topology::build(&m).unwrap();
        let host = Dga::assemble_with(&m, &t, &mat, &t.boundary_edge, true).unwrap();
        let dt = 0.37 * r.uniform() + 0.01;
        let want = dgatd::dga::build_csr(&host, dt);
        let free: Vec<bool> = t.boundary_edge.iter().map(|&b| !b).collect();
        let (got, times) = dgatd::backend::assemble_csr(&dev, &k, &m, &t, &mat, &free, dt).unwrap();
        assert_eq!(got.shape(), want.shape(), "{label}");
        assert_eq!(
            got.indptr().raw_storage(),
            want.indptr().raw_storage(),
            "{label}"
        );
        assert_eq!(got.indices(), want.indices(), "{label}");
        assert!(want.nnz() > 0);
        let ip = want.indptr().raw_storage().to_vec();
        let e = worst_rel(got.data(), want.data(), ip.windows(2).map(|w| (w[0], w[1])));
        println!(
            "{label}: {} tets, {} nonzeros: CSR values {e:.2e} ({:.3} s)",
            m.n_tets(),
            want.nnz(),
            times.total_s
        );
        assert!(e < 1e-10, "{label}: CSR values differ by {e:e}");
    }
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
    let dev_r = dgatd::backend::assemble_with(&dev, &m, &t, &mat, &t.boundary_edge, true);
    let (Err(h), Err(d)) = (host, dev_r) else {
        panic!("a flat tet must be refused by both assemblies");
    };
    println!("host: {h}\ndevice: {d}");
    assert!(d.to_string().contains("Mmu of tet"), "{d}");
    assert!(h.to_string().contains("Mmu of tet"), "{h}");
}

/// Operators assembled on the device and packed there for the stepper
/// (`dgatd::backend::assemble_resident`, `cl/assembly/pack.cl`), never downloaded:
/// - the packed values equal, bit for bit, the host's packing (`VertexBlocks::pack`, the
///   primal's column-major triangle) of the same device assembly downloaded (`masses`): the
///   packing kernels move and round values, nothing else;
/// - a 400-step pulse with the resident stepper (`ClStepper::with_resident`, on a `Dga`
///   carrying only the layouts) matches the stepper uploaded from the host's own assembly:
///   f64 within 1e-9 (the operators differ by about 1e-14, `compare` above; the records of
///   `tests/opencl/opencl.rs` use the same bound), f32 within 1e-4 (a value of the two assemblies
///   may round to neighbouring floats, and 400 steps amplify a few ulps);
/// - a layout other than the resident one, and conducting media, are refused by name.
fn resident_matches_host<T: dgatd::Real>(label: &str, m: &Mesh, mat: &Media, seed: u64) {
    use dgatd::backend::opencl::{BlockVariant, ClStepper, PrimalVariant, Variants};
    use dgatd::dga::DualForm;
    use dgatd::dga::{Probe, Source};
    use dgatd::problem::Waveform;
    use std::sync::Arc;
    let Some(dev) = cl_device() else { return };
    if !dev.info.fp64 {
        eprintln!(
            "\n*** SKIPPED: {label}: {} has no fp64 ***\n",
            dev.info.name
        );
        return;
    }
    let t = Topology::build(m).unwrap();
    let free: Vec<bool> = t.boundary_edge.iter().map(|&b| !b).collect();
    let k = dgatd::backend::AssemblyKernels::build(&dev).unwrap();
    let pk = dgatd::backend::PackKernels::build::<T>(&dev).unwrap();
    let (ops, _) =
        dgatd::backend::assemble_resident::<T>(&dev, &k, &pk, m, &t, mat, &free).unwrap();
    // the packing, against the host's of the downloaded assembly: bit for bit
    let (dl, _) = dgatd::backend::assemble_masses(&dev, &k, m, &t, mat, &free, true).unwrap();
    // columns of the stepper's tet stride, zero at the padding tets
    let (nt, tp) = (m.n_tets(), dgatd::backend::opencl::tet_stride(m.n_tets()));
    assert!(tp >= nt && tp.is_multiple_of(64) && tp < nt + 64);
    let primal = dev.read(&ops.primal, 10 * tp, "primal").unwrap();
    let want: Vec<T> = (0..10 * tp)
        .map(|i| match i % tp < nt {
            true => T::of(dl.mmu_inv[i % tp][i / tp]),
            false => T::zero(),
        })
        .collect();
    let bits = |a: &[T], b: &[T]| a.iter().zip(b).filter(|(x, y)| x.f64() != y.f64()).count();
    assert_eq!(bits(&primal, &want), 0, "{label}: primal packing");
    let blocks = dev.read(&ops.blocks, ops.block_len(), "blocks").unwrap();
    let want = dl.meps_inv.pack(&dl.meps_inv.data, &ops.poff, T::of);
    assert_eq!(blocks.len(), want.len());
    assert_eq!(bits(&blocks, &want), 0, "{label}: block packing");

    // the resident stepper against the host-assembled one
    // full (not lean): the time step's power iteration needs Meps
    let host = Arc::new(Dga::assemble_with(m, &t, mat, &t.boundary_edge, false).unwrap());
    let res =
        Arc::new(Dga::from_masses(m, &t, mat, free.clone(), None, ops.layout_only()).unwrap());
    assert!(res.mmu_inv.is_empty() && res.meps_inv.data.is_empty());
    assert_eq!(res.counts(), host.counts());
    let (dt, _) = dgatd::solver::time_step(&host, 0.95).unwrap();
    let mut r = Rng::new(seed);
    let (ps, pp) = (inside(m, &mut r), [inside(m, &mut r), inside(m, &mut r)]);
    let dir = [0.3, -0.5, 0.8];
    let probes: Vec<Probe> = pp.iter().map(|&p| Probe::new(m, &t, p).unwrap()).collect();
    // a pulse of about 40 steps a period
    let w = Waveform::gaussian_derivative(dgatd::C0 / (40.0 * dt));
    // advance, not solver::run: a Dga of resident operators has no masses for the energy
    let run = |s: &mut ClStepper<T>| {
        use dgatd::backend::Stepper;
        s.set_time_step(dt, Some(w)).unwrap();
        let mut out = Vec::new();
        s.advance(0, 400, &mut out).unwrap();
        out
    };
    let src_h = Source::new(m, &t, &host, ps, dir).unwrap();
    let mut g_h = ClStepper::<T>::new(
        dev.clone(),
        host.clone(),
        DualForm::Factored,
        Some(&src_h),
        &probes,
    )
    .unwrap();
    assert_eq!(g_h.variants().primal, PrimalVariant::Sym);
    assert_eq!(g_h.variants().block, BlockVariant::Packed);
    let rh = run(&mut g_h);
    // the source pattern (Δt Meps⁻¹ j at the source's vertices) from the host's assembly
    let mut g_r =
        ClStepper::<T>::with_resident(dev.clone(), res.clone(), ops, Some(&src_h), &probes)
            .unwrap();
    let rr = run(&mut g_r);
    let peak = rh.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    assert!(peak > 0.0, "{label}: no signal");
    let e = common::rel_err(&rr, &rh);
    let tol = if T::NAME == "f64" { 1e-9 } else { 1e-4 };
    println!(
        "{label} {}: resident vs host stepper, 400 steps: {e:.2e} (bound {tol:e})",
        T::NAME
    );
    assert!(e < tol, "{label} {}: records differ by {e:e}", T::NAME);
    // another layout needs the host's operators
    let other = Variants {
        primal: PrimalVariant::Tet,
        ..g_r.variants()
    };
    let err = g_r.set_variants(other).unwrap_err().to_string();
    assert!(err.contains("resident"), "{err}");
}

#[test]
fn resident_operators_match_the_host_stepper_on_random_meshes() {
    let mut r = Rng::new(0x0e51_de47);
    for case in 0..2u64 {
        let (label, m, mat) = random_case(&mut r, 2000 + case, 177 + case);
        resident_matches_host::<f64>(&label, &m, &mat, 300 + case);
        resident_matches_host::<f32>(&label, &m, &mat, 300 + case);
    }
    let m = cylinder("cylinder_coarse.msh");
    let mat = Media::vacuum(m.n_tets());
    resident_matches_host::<f64>("cylinder_coarse", &m, &mat, 400);
    resident_matches_host::<f32>("cylinder_coarse", &m, &mat, 400);
}

/// Conducting media are refused by the resident stepper with an error naming them.
#[test]
fn resident_operators_refuse_conducting_media() {
    use dgatd::backend::opencl::ClStepper;
    use std::sync::Arc;
    let Some(dev) = cl_device() else { return };
    if !dev.info.fp64 {
        return;
    }
    let m = jittered_box([2, 3, 2], 9, 0.2);
    let t = Topology::build(&m).unwrap();
    let free: Vec<bool> = t.boundary_edge.iter().map(|&b| !b).collect();
    let mut mat = random_media(m.n_tets(), 5);
    mat.sigma = (0..m.n_tets())
        .map(|n| if n % 3 == 0 { 0.01 } else { 0.0 })
        .collect();
    let k = dgatd::backend::AssemblyKernels::build(&dev).unwrap();
    let pk = dgatd::backend::PackKernels::build::<f64>(&dev).unwrap();
    let (ops, _) =
        dgatd::backend::assemble_resident::<f64>(&dev, &k, &pk, &m, &t, &mat, &free).unwrap();
    let d = Arc::new(Dga::from_masses(&m, &t, &mat, free, None, ops.layout_only()).unwrap());
    assert!(d.msig.is_some());
    let err = match ClStepper::<f64>::with_resident(dev, d, ops, None, &[]) {
        Ok(_) => panic!("a conducting mesh must be refused"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("conducting media"), "{err}");
}

/// The CSR form's matrix built wholly on the device in the stepper's layout
/// (`dgatd::backend::assemble_resident_csr`, `cl/assembly/pack.cl`: row lengths, scan, columns, values):
/// - the structure equals the host's `build_csr` exactly (row pointers; columns as the
///   stepper's F slots `k·T + n` for the host's `4n + k`);
/// - the values equal, bit for bit, the host's `build_csr` of the same device assembly
///   downloaded (`masses`): the kernel sums the host's terms in the host's order, reading
///   the circulation's signs from the tet's vertex order rather than from its coordinates;
/// - against the host's own assembly they agree to the inverse blocks' round-off (1e-10 of
///   the row's largest, as `device_csr_values_equal_the_host_csr`; f32: 1e-6, the rounding);
/// - a stepper on them (`with_resident`, CSR dual) runs a 400-step pulse like the stepper
///   built from the host's CSR matrix (1e-9 in f64, 1e-4 in f32, as
///   `resident_matches_host`), and switches to the factored dual.
///
/// Random boxes with random media and, besides the PEC walls, a random tenth of the interior
/// edges fixed (vertices with partial and empty blocks), and the coarse cylinder.
fn resident_csr_matches_host<T: dgatd::Real>(
    label: &str,
    m: &Mesh,
    mat: &Media,
    free: &[bool],
    seed: u64,
) {
    use dgatd::backend::Stepper;
    use dgatd::backend::opencl::ClStepper;
    use dgatd::dga::Probe;
    use dgatd::dga::{DualForm, build_csr};
    use dgatd::problem::Waveform;
    use std::sync::Arc;
    let Some(dev) = cl_device() else { return };
    if !dev.info.fp64 {
        eprintln!(
            "\n*** SKIPPED: {label}: {} has no fp64 ***\n",
            dev.info.name
        );
        return;
    }
    let t = Topology::build(m).unwrap();
    let fixed: Vec<bool> = free.iter().map(|&f| !f).collect();
    let k = dgatd::backend::AssemblyKernels::build(&dev).unwrap();
    let pk = dgatd::backend::PackKernels::build::<T>(&dev).unwrap();
    let (ops, times) =
        dgatd::backend::assemble_resident_csr::<T>(&dev, &k, &pk, m, &t, mat, free).unwrap();
    let (ip, ix, dv, nnz) = ops
        .csr
        .as_ref()
        .expect("resident_csr carries the CSR matrix");
    let nh = 2 * t.n_edges();
    let (nt, tp) = (m.n_tets(), dgatd::backend::opencl::tet_stride(m.n_tets()));
    let got_ip = dev.read(ip, nh + 1, "indptr").unwrap();
    let got_ix = dev.read(ix, *nnz, "indices").unwrap();
    let got_v = dev.read(dv, *nnz, "values").unwrap();
    let host = Arc::new(Dga::assemble_with(m, &t, mat, &fixed, false).unwrap());
    let want = build_csr(&host, 1.0);
    assert_eq!(*nnz, want.nnz(), "{label}");
    assert!(*nnz > 0);
    let wip: Vec<u32> = want
        .indptr()
        .raw_storage()
        .iter()
        .map(|&x| x as u32)
        .collect();
    assert_eq!(got_ip, wip, "{label}: row pointers");
    let slot = |c: usize| ((c % 4) * tp + c / 4) as u32;
    let wix: Vec<u32> = want.indices().iter().map(|&c| slot(c)).collect();
    assert_eq!(got_ix, wix, "{label}: columns");
    // bit for bit against the host's sums of the device's own inverse blocks
    let (dl, _) = dgatd::backend::assemble_masses(&dev, &k, m, &t, mat, free, true).unwrap();
    let same = Dga::from_masses(m, &t, mat, free.to_vec(), None, dl).unwrap();
    let exact: Vec<T> = build_csr(&same, 1.0)
        .data()
        .iter()
        .map(|&x| T::of(x))
        .collect();
    let differ = got_v
        .iter()
        .zip(&exact)
        .filter(|(a, b)| a.f64().to_bits() != b.f64().to_bits())
        .count();
    assert_eq!(differ, 0, "{label} {}: values not the host's sums", T::NAME);
    // against the host's own assembly: round-off of the inverse blocks
    let got64: Vec<f64> = got_v.iter().map(|x| x.f64()).collect();
    let e = worst_rel(
        &got64,
        want.data(),
        wip.windows(2).map(|w| (w[0] as usize, w[1] as usize)),
    );
    let tol = if T::NAME == "f64" { 1e-10 } else { 1e-6 };
    println!(
        "{label} {}: {nt} tets, {nnz} nonzeros built on the device ({:.3} s, kernels {:.4} s): structure equal, values equal to the host's sums of the same blocks, {e:.2e} from the host's assembly",
        T::NAME,
        times.total_s,
        times.kernels_s
    );
    assert!(e < tol, "{label}: values differ by {e:e}");

    // the stepper on the resident CSR against the one built from the host's CSR
    let res =
        Arc::new(Dga::from_masses(m, &t, mat, free.to_vec(), None, ops.layout_only()).unwrap());
    let (dt, _) = dgatd::solver::time_step(&host, 0.95).unwrap();
    let mut r = Rng::new(seed);
    let probes: Vec<Probe> = [inside(m, &mut r), inside(m, &mut r)]
        .iter()
        .map(|&p| Probe::new(m, &t, p).unwrap())
        .collect();
    let w = Waveform::gaussian_derivative(dgatd::C0 / (40.0 * dt));
    let (u0, f0): (Vec<f64>, Vec<f64>) = (
        (0..nh)
            .map(|h| if free[h / 2] { r.uniform() - 0.5 } else { 0.0 })
            .collect(),
        (0..4 * nt).map(|_| r.uniform() - 0.5).collect(),
    );
    let run = |s: &mut ClStepper<T>| {
        s.set_time_step(dt, Some(w)).unwrap();
        s.set_state(&u0, &f0).unwrap();
        let mut out = Vec::new();
        s.advance(0, 400, &mut out).unwrap();
        out
    };
    let mut g_h =
        ClStepper::<T>::new(dev.clone(), host.clone(), DualForm::Csr, None, &probes).unwrap();
    let rh = run(&mut g_h);
    let mut g_r = ClStepper::<T>::with_resident(dev.clone(), res, ops, None, &probes).unwrap();
    assert_eq!(g_r.dual(), DualForm::Csr);
    assert_eq!(g_r.csr_nnz(), want.nnz());
    let rr = run(&mut g_r);
    let e = common::rel_err(&rr, &rh);
    let tol = if T::NAME == "f64" { 1e-9 } else { 1e-4 };
    println!(
        "{label} {}: resident CSR vs host CSR stepper, 400 steps: {e:.2e} (bound {tol:e})",
        T::NAME
    );
    assert!(rh.iter().any(|&x| x != 0.0), "{label}: no signal");
    assert!(e < tol, "{label} {}: records differ by {e:e}", T::NAME);
    g_r.set_dual(DualForm::Factored).unwrap();
    g_r.advance(400, 10, &mut Vec::new()).unwrap();
}

#[test]
fn the_csr_matrix_built_on_the_device_is_the_hosts() {
    let mut r = Rng::new(0x0c5b_de71);
    for case in 0..2u64 {
        let (label, m, mat) = random_case(&mut r, 2100 + case, 277 + case);
        let t = Topology::build(&m).unwrap();
        let free: Vec<bool> = t
            .boundary_edge
            .iter()
            .map(|&b| !b && r.uniform() > 0.1)
            .collect();
        resident_csr_matches_host::<f64>(&label, &m, &mat, &free, 500 + case);
        resident_csr_matches_host::<f32>(&label, &m, &mat, &free, 500 + case);
    }
    let m = cylinder("cylinder_coarse.msh");
    let mat = Media::vacuum(m.n_tets());
    let t = Topology::build(&m).unwrap();
    let free: Vec<bool> = t.boundary_edge.iter().map(|&b| !b).collect();
    resident_csr_matches_host::<f64>("cylinder_coarse", &m, &mat, &free, 600);
    resident_csr_matches_host::<f32>("cylinder_coarse", &m, &mat, &free, 600);
}

/// The resonator with its operators assembled and left on the device (`assembly =
/// "device"`: masses, inverses and the source pattern's blocks; the power iteration and
/// the energy checks on the device's masses) against the same run assembled on the host,
/// on the bundled unstructured cylinder and a box of seeded random size and cell counts.
///
/// Tolerance. The two assemblies differ by round-off (1e-14 of each block, above); the
/// leapfrog is stable and the records stay within a few hundred times that after 400 steps
/// (f64: 1e-10 of the largest sample; measured 1.6e-13 on PoCL for the cylinder at 3000
/// steps). In f32 both runs round the same f64 values, which differ in the last bit for a
/// few entries: 1e-4. Δt (power iteration on the device's `Meps` against the host's) agrees
/// to 1e-10, and the energy checks to 1e-9 of the largest energy.
#[test]
fn resonator_on_device_assembled_operators_equals_the_host_assembly() {
    use dgatd::solver::{Assembly, BackendKind, Config};
    let Some(_) = cl_device() else { return };
    let mut r = Rng::new(0xa55e);
    let n: Vec<usize> = (0..3).map(|_| 3 + (r.uniform() * 4.0) as usize).collect();
    let l: Vec<f64> = (0..3).map(|_| 0.5 + r.uniform()).collect();
    let meshes = [
        ("bundled:coarse".to_string(), None),
        (
            String::new(),
            Some(format!(
                "{},{},{}:{:.3},{:.3},{:.3}",
                n[0], n[1], n[2], l[0], l[1], l[2]
            )),
        ),
    ];
    for (mesh, box_mesh) in meshes {
        for (precision, tol) in [
            (dgatd::Precision::F64, 1e-10),
            (dgatd::Precision::F32, 1e-4),
        ] {
            let run = |assembly| {
                let cfg = Config {
                    mesh: box_mesh.is_none().then(|| mesh.clone()),
                    box_mesh: box_mesh.as_deref().map(|b| b.parse().unwrap()),
                    steps: Some(400),
                    backend: BackendKind::Opencl,
                    device: std::env::var("DGATD_TEST_DEVICE").ok(),
                    precision,
                    assembly,
                    energy_checks: 8,
                    ..Default::default()
                };
                dgatd::run(&cfg, &mut |_, _| {}).unwrap()
            };
            let (h, d) = (run(Assembly::Host), run(Assembly::Device));
            let label = format!("{mesh}{} {precision:?}", box_mesh.as_deref().unwrap_or(""));
            assert!(
                ((h.dt_s - d.dt_s) / h.dt_s).abs() < 1e-10,
                "{label}: dt {} vs {}",
                h.dt_s,
                d.dt_s
            );
            let scale = h.record.samples.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            assert!(scale > 0.0, "{label}: an all-zero record");
            let diff = h
                .record
                .samples
                .iter()
                .zip(&d.record.samples)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            println!(
                "{label}: records differ by {:.2e} of the largest sample",
                diff / scale
            );
            assert!(diff / scale < tol, "{label}: {:.3e}", diff / scale);
            assert_eq!(h.record.energy.len(), d.record.energy.len(), "{label}");
            let emax = h.record.energy.iter().fold(0.0f64, |m, e| m.max(e.1));
            for (a, b) in h.record.energy.iter().zip(&d.record.energy) {
                assert_eq!(a.0, b.0);
                assert!(
                    (a.1 - b.1).abs() <= 1e-9f64.max(tol) * emax,
                    "{label}: energy {a:?} vs {b:?}"
                );
            }
        }
    }
}

/// `assembly = "device"` where the run needs the host's operators (conducting media, the
/// CPU backend) is refused naming the key and the reason; `auto` then assembles on the host.
#[test]
fn device_assembly_is_refused_where_the_run_needs_the_host() {
    use dgatd::problem::Material;

    use dgatd::solver::{Assembly, BackendKind, Config};
    let Some(_) = cl_device() else { return };
    let lossy = Config {
        mesh: Some("bundled:coarse".into()),
        steps: Some(20),
        backend: BackendKind::Opencl,
        device: std::env::var("DGATD_TEST_DEVICE").ok(),
        assembly: Assembly::Device,
        materials: [(
            "vacuum".to_string(),
            Material {
                eps_r: 2.0,
                sigma: 0.01,
                ..Default::default()
            },
        )]
        .into(),
        ..Default::default()
    };
    let err = |c: &Config| match dgatd::run(c, &mut |_, _| {}) {
        Ok(_) => panic!("the run went ahead"),
        Err(e) => e.to_string(),
    };
    let e = err(&lossy);
    assert!(e.contains("assembly") && e.contains("conducting"), "{e}");
    let cpu = Config {
        backend: BackendKind::Cpu,
        materials: Default::default(),
        ..lossy.clone()
    };
    let e = err(&cpu);
    assert!(e.contains("assembly") && e.contains("CPU backend"), "{e}");
    let auto = Config {
        assembly: Assembly::Auto,
        ..lossy
    };
    assert!(dgatd::run(&auto, &mut |_, _| {}).is_ok());
}
