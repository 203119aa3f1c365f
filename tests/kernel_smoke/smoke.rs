//! Kernel smoke run: launches every kernel of the DGA and DG programs (`cl/dga/*.cl`,
//! `cl/dg/*.cl`), `cl/ocl/fill.cl`, `cl/assembly/assemble.cl` and `cl/assembly/pack.cl` at
//! least once on a tiny case, through the library's own launch paths, on any OpenCL device
//! chosen by name or index, and checks every result against the CPU reference.
//!
//! ```sh
//! cargo test --release --test kernel_smoke -- [--device NAME|INDEX] [--precision f64,f32]
//! ```
//!
//! (`tests/kernel_smoke/main.rs` is the test target, `harness = false`; `tests/opencl/oclgrind.rs`
//! includes this file as a module.)
//!
//! Made to run under Oclgrind (`.ci/oclgrind.sh`, `tests/opencl/oclgrind.rs`), which interprets
//! every work-item: the meshes are jittered boxes of 72 (DGA), 48 (lossy DGA) and 48 (DG)
//! tets, the power iterations run two iterations (through `ClStepper::spectral_radius` and
//! `DgClStepper::spectral_radius`), and the bandwidth probes use 1000 elements. Each check
//! line ends with the seconds since the start.
//!
//! Checks: `ClDevice::fill_zero` zeroes exactly what it should; 3 DGA steps (with a source
//! and two probes) from a zero and from a random state for every primal and dual variant
//! against `CpuStepper`; the device power iteration against the host's; one step through
//! the partitioned stepper's index-subset launches (`ClStepper::primal_on`,
//! `circulation_on`, `vertex_blocks_on` on random splits of the tets, edges and slots)
//! against the full-range kernels and `CpuStepper`, and the halo packs (`ClStepper::gather`,
//! `scatter`) against the host; 3 lossy steps (`loss_rows`, `loss_scatter`; σ on about half
//! the tets of a 48-tet box) with the factored and the CSR dual against `CpuStepper`;
//! copy, triad and their vec4 forms against the host; 1 DG step of orders 2 (upwind) and
//! 1 (central) with each update kernel (node, blocked, resident, paired, two nodes) against `DgCpuStepper`, and the DG power iteration against the host's; the
//! masses and inverses assembled on the device against the host's (f64 only); 3 steps with a
//! perfectly matched layer (`pml.rs`); and that
//! every kernel declared in the sources was launched.
//!
//! Prints one line per check to stdout and nothing to stderr unless a check fails (exit
//! status 1) or the arguments are wrong (exit status 2), so a device simulator's reports
//! are the only other thing that can appear on stderr.
//!
//! Tolerances (relative 2-norm against the CPU backend): 1e-10 in f64 (a few steps of
//! sums of up to ~70 terms in another order, with FMA contraction on the device; single
//! kernels agree to 1e-12 in `tests/opencl/opencl.rs`), 1e-4 in f32 (the f32 device run against
//! the f64 CPU DG reference, or the f32 CPU DGA stepper). Copies are exact; a triad
//! element may differ from the host's `b + s c` by its roundings, bounded by 2 eps times the
//! largest of the terms.
#![allow(clippy::needless_range_loop)]

// (a path of its own: this file is also included from tests/opencl/oclgrind.rs)
#[path = "pml.rs"]
mod pml;

use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::backend::cpu::DgCpuStepper;
use dgatd::backend::opencl::{
    Arg, BlockVariant, CircVariant, ClDevice, ClStepper, CsrVariant, DispVariant, LOCAL, Lane,
    PrimalVariant, ULayout, Variants, launch, select_device,
};
use dgatd::backend::opencl::{DgClStepper, DgUpdate};
use dgatd::dg::{DgOperator, Flux};
use dgatd::dg::{DgProbe, DgSource};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::internal::Rng;
use dgatd::mesh::{Mesh, Topology, box_mesh};
use dgatd::problem::{Media, Waveform};
use dgatd::solver;
use dgatd::{Real, Result};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

/// The kernel sources the smoke run must cover.
const SOURCES: [(&str, &str); 6] = [
    (
        dgatd::backend::opencl::PROGRAM,
        dgatd::backend::opencl::SOURCE,
    ),
    (
        dgatd::backend::opencl::PROBE_PROGRAM,
        dgatd::backend::opencl::PROBE_SOURCE,
    ),
    (
        dgatd::backend::opencl::DG_PROGRAM,
        dgatd::backend::opencl::DG_SOURCE,
    ),
    ("cl/ocl/fill.cl", include_str!("../../cl/ocl/fill.cl")),
    (
        "cl/assembly/assemble.cl",
        include_str!("../../cl/assembly/assemble.cl"),
    ),
    (
        "cl/assembly/pack.cl",
        include_str!("../../cl/assembly/pack.cl"),
    ),
];

/// The kernels of `cl/assembly/assemble.cl` and `cl/assembly/pack.cl` (double precision
/// only: not launched on a device without fp64).
const ASSEMBLY_KERNELS: [&str; 11] = [
    "assemble_mmu",
    "assemble_meps",
    "pack_primal_sym",
    "pack_blocks_tri",
    "pack_sym16",
    "pack_real",
    "csr_values",
    "csr_row_lengths",
    "scan_tiles",
    "scan_add",
    "csr_fill",
];

/// Every `__kernel` name declared in the sources, in source order.
pub fn declared_kernels() -> Vec<String> {
    let mut out = Vec::new();
    for (_, src) in SOURCES {
        for part in src.split("__kernel").skip(1) {
            // `__kernel [__attribute__((...))] void name(`
            let mut rest = part.trim_start();
            if let Some(r) = rest.strip_prefix("__attribute__") {
                rest = r.find("void").map(|i| &r[i..]).unwrap_or(r);
            }
            let name = rest
                .strip_prefix("void")
                .and_then(|r| r.trim_start().split('(').next())
                .map(|n| n.trim().to_string());
            // (the probe program shares the DGA program's vector kernels)
            if let Some(n) = name.filter(|n| !n.is_empty() && !out.contains(n)) {
                out.push(n);
            }
        }
    }
    out
}

/// What one smoke run did: a line per check, and the kernels its launches covered.
pub struct Smoke {
    pub lines: Vec<String>,
    pub launched: BTreeSet<String>,
    pub failures: Vec<String>,
    start: Instant,
}

impl Smoke {
    fn covered(&mut self, kernels: &[&str]) {
        self.launched.extend(kernels.iter().map(|k| k.to_string()));
    }
    /// Records a check: `err` (relative) must be finite and at most `tol`.
    fn check(&mut self, what: String, err: f64, tol: f64) {
        let ok = err <= tol; // false for NaN
        let line = format!(
            "{} {what}: relative difference {err:.2e} (tolerance {tol:.0e}) [{:.1} s]",
            if ok { "ok  " } else { "FAIL" },
            self.start.elapsed().as_secs_f64()
        );
        if !ok {
            self.failures.push(line.clone());
        }
        self.lines.push(line);
    }
    fn require(&mut self, what: String, cond: bool) {
        let line = format!(
            "{} {what} [{:.1} s]",
            if cond { "ok  " } else { "FAIL" },
            self.start.elapsed().as_secs_f64()
        );
        if !cond {
            self.failures.push(line.clone());
        }
        self.lines.push(line);
    }
}

fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    if den == 0.0 {
        return f64::INFINITY; // an all-zero reference checks nothing
    }
    (num / den).sqrt()
}

/// A box with interior nodes moved randomly (seeded), as in the tests: no symmetry hides
/// an indexing bug.
fn jittered_box(n: [usize; 3], seed: u64, amp: f64) -> Mesh {
    let l = [1.0, 0.8, 0.6];
    let mut m = box_mesh(n, l);
    let mut r = Rng::new(seed);
    let h = [l[0] / n[0] as f64, l[1] / n[1] as f64, l[2] / n[2] as f64];
    for p in m.nodes.iter_mut() {
        if (0..3).all(|c| p[c] > 1e-9 && p[c] < l[c] - 1e-9) {
            for c in 0..3 {
                p[c] += amp * h[c] * r.sym();
            }
        }
    }
    m
}

/// A random state from `r`: U on the free half-edges (0 on the boundary ones), then F.
fn random_state(d: &Dga, r: &mut Rng) -> (Vec<f64>, Vec<f64>) {
    let mut u = vec![0.0; d.n_half()];
    for &h in &d.meps.h {
        u[h as usize] = r.sym();
    }
    let f = (0..d.n_dual()).map(|_| r.sym()).collect();
    (u, f)
}

fn random_materials(n: usize, seed: u64) -> Media {
    let mut r = Rng::new(seed);
    Media::lossless(
        (0..n).map(|_| 1.0 + 3.0 * r.uniform()).collect(),
        (0..n).map(|_| 1.0 + 2.0 * r.uniform()).collect(),
    )
}

/// Runs every check on the device `spec` (an index or a name substring, as `--device`),
/// in the precisions `precisions` ("f64", "f32"; f64 is skipped with a line on a device
/// without fp64).
pub fn run(spec: Option<&str>, precisions: &[&str]) -> Result<Smoke> {
    let mut s = Smoke {
        lines: vec![],
        launched: BTreeSet::new(),
        failures: vec![],
        start: Instant::now(),
    };
    let dev = ClDevice::open(select_device(spec)?)?;
    s.lines.push(format!(
        "device: {} / {} ({}, {})",
        dev.info.platform, dev.info.name, dev.info.opencl_c, dev.info.driver
    ));
    for &p in precisions {
        match p {
            "f64" if !dev.info.fp64 => s
                .lines
                .push(format!("skip f64: {} has no cl_khr_fp64", dev.info.name)),
            "f64" => {
                precision::<f64>(&dev, &mut s, 1e-10)?;
                assembly(&dev, &mut s)?;
            }
            "f32" => precision::<f32>(&dev, &mut s, 1e-4)?,
            other => {
                return Err(dgatd::Error::config(
                    "precision",
                    other,
                    "expected f64 or f32",
                ));
            }
        }
    }
    let declared = declared_kernels();
    let missing: Vec<&String> = declared
        .iter()
        .filter(|k| !s.launched.contains(*k))
        .filter(|k| dev.info.fp64 || !ASSEMBLY_KERNELS.contains(&k.as_str()))
        .collect();
    let all_launched = missing.is_empty();
    s.require(
        format!(
            "kernels launched: {} of {} declared{}",
            declared.len() - missing.len(),
            declared.len(),
            if all_launched {
                String::new()
            } else {
                format!(" (missing: {missing:?})")
            }
        ),
        all_launched || precisions.is_empty(),
    );
    Ok(s)
}

/// The masses and their inverses assembled on the device (`cl/assembly/assemble.cl`, full assembly:
/// both kernels, the block kernel with and without the inversion), and the CSR form's values
/// (`csr_values`), against the host's, on a
/// jittered 72-tet box with random media; tolerance 1e-11 of each block's largest entry
/// (different 3x3 and Cholesky inverses, `tests/opencl/device_assembly.rs`).
fn assembly(dev: &Arc<ClDevice>, s: &mut Smoke) -> Result<()> {
    let m = jittered_box([3, 2, 2], 31, 0.2);
    let t = Topology::build(&m)?;
    let mut r = Rng::new(32);
    let mat = Media::lossless(
        (0..m.n_tets()).map(|_| 1.0 + 3.0 * r.uniform()).collect(),
        (0..m.n_tets()).map(|_| 1.0 + 2.0 * r.uniform()).collect(),
    );
    let host = Dga::assemble_with(&m, &t, &mat, &t.boundary_edge, false)?;
    let (got, _) = dgatd::backend::assemble_with(dev, &m, &t, &mat, &t.boundary_edge, false)?;
    s.covered(&ASSEMBLY_KERNELS[..2]);
    resident::<f64>(dev, s, &m, &t, &mat, &host, 1e-11)?;
    resident::<f32>(dev, s, &m, &t, &mat, &host, 1e-6)?;
    let pairs: [(&str, &[f64], &[f64]); 4] = [
        ("Mmu", got.mmu.as_flattened(), host.mmu.as_flattened()),
        (
            "Mmu inverse",
            got.mmu_inv.as_flattened(),
            host.mmu_inv.as_flattened(),
        ),
        ("Meps blocks", &got.meps.data, &host.meps.data),
        (
            "Meps inverse blocks",
            &got.meps_inv.data,
            &host.meps_inv.data,
        ),
    ];
    // the CSR form's values from the device's inverse blocks (`csr_values`)
    let k = dgatd::backend::AssemblyKernels::build(dev)?;
    let free: Vec<bool> = t.boundary_edge.iter().map(|&b| !b).collect();
    let (csr, _) = dgatd::backend::assemble_csr(dev, &k, &m, &t, &mat, &free, 0.05)?;
    s.covered(&ASSEMBLY_KERNELS[4..]);
    let want = dgatd::dga::build_csr(&host, 0.05);
    let csr_pair: (&str, &[f64], &[f64]) = (
        "CSR values",
        if csr.indices() == want.indices() && csr.indptr() == want.indptr() {
            csr.data()
        } else {
            &[]
        },
        want.data(),
    );
    for (what, a, b) in pairs.into_iter().chain([csr_pair]) {
        let e = if a.len() == b.len() {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max)
                / b.iter().map(|y| y.abs()).fold(0.0, f64::max)
        } else {
            f64::INFINITY
        };
        s.check(
            format!("device assembly f64: {what} vs host (max entry)"),
            e,
            1e-11,
        );
    }
    Ok(())
}

/// The operators assembled and packed on the device in precision `T` (`cl/assembly/pack.cl`)
/// against the host's operators packed on the host, relative to the largest entry: round-off
/// of the assembly (1e-11, as above) or the rounding to f32.
fn resident<T: Real>(
    dev: &Arc<ClDevice>,
    s: &mut Smoke,
    m: &dgatd::Mesh,
    t: &Topology,
    mat: &Media,
    host: &Dga,
    tol: f64,
) -> Result<()> {
    let free: Vec<bool> = host.free_edge.clone();
    let k = dgatd::backend::AssemblyKernels::build(dev)?;
    let pk = dgatd::backend::PackKernels::build::<T>(dev)?;
    let (ops, _) =
        dgatd::backend::assemble_resident_with_masses::<T>(dev, &k, &pk, m, t, mat, &free, true)?;
    s.covered(&ASSEMBLY_KERNELS);
    // the CSR matrix built on the device (row lengths, scan, columns, values) against the
    // host's: the same structure (columns as F slots), values to the assembly's round-off
    let (nt, tp) = (m.n_tets(), dgatd::backend::opencl::tet_stride(m.n_tets()));
    let want = dgatd::dga::build_csr(host, 1.0);
    let e = match &ops.csr {
        Some((ip, ix, dv, nnz)) if *nnz == want.nnz() => {
            let ip = dev.read(ip, want.rows() + 1, "CSR row pointers")?;
            let ix = dev.read(ix, *nnz, "CSR columns")?;
            let dv = dev.read(dv, *nnz, "CSR values")?;
            let same_ip = ip
                .iter()
                .zip(want.indptr().raw_storage())
                .all(|(&a, &b)| a as usize == b);
            let same_ix = ix
                .iter()
                .zip(want.indices())
                .all(|(&a, &c)| a as usize == (c % 4) * tp + c / 4);
            if same_ip && same_ix {
                dv.iter()
                    .zip(want.data())
                    .map(|(x, y)| (x.f64() - y).abs())
                    .fold(0.0, f64::max)
                    / want.data().iter().map(|y| y.abs()).fold(0.0, f64::max)
            } else {
                f64::INFINITY
            }
        }
        _ => f64::INFINITY,
    };
    s.check(
        format!("{} resident CSR vs host build_csr (max entry)", T::NAME),
        e,
        tol,
    );
    // columns of tp values, zero at the padding tets
    let got = dev.read(&ops.primal, 10 * tp, "primal")?;
    let want: Vec<f64> = (0..10 * tp)
        .map(|i| match i % tp < nt {
            true => host.mmu_inv[i % tp][i / tp],
            false => 0.0,
        })
        .collect();
    let rel = |a: &[T], b: &[f64]| {
        if a.len() != b.len() {
            return f64::INFINITY;
        }
        a.iter()
            .zip(b)
            .map(|(x, y)| (x.f64() - y).abs())
            .fold(0.0, f64::max)
            / b.iter().map(|y| y.abs()).fold(0.0, f64::max)
    };
    s.check(
        format!(
            "{} pack_primal_sym vs host Mmu inverse (max entry)",
            T::NAME
        ),
        rel(&got, &want),
        tol,
    );
    let got = dev.read(&ops.blocks, ops.block_len(), "blocks")?;
    let want = host.meps_inv.pack(&host.meps_inv.data, &ops.poff, |x| x);
    s.check(
        format!(
            "{} pack_blocks_tri vs host Meps inverse packed (max entry)",
            T::NAME
        ),
        rel(&got, &want),
        tol,
    );
    // the masses themselves (the power iteration's and the energy's)
    let Some(ms) = &ops.masses else {
        s.check(format!("{} resident masses present", T::NAME), 1.0, 0.0);
        return Ok(());
    };
    let got = dev.read(&ms.meps_full, host.meps.data.len(), "Meps full")?;
    s.check(
        format!("{} pack_real vs host Meps blocks (max entry)", T::NAME),
        rel(&got, &host.meps.data),
        tol,
    );
    let got = dev.read(&ms.meps_packed, ops.block_len(), "Meps packed")?;
    let want = host.meps.pack(&host.meps.data, &ops.poff, |x| x);
    s.check(
        format!(
            "{} pack_blocks_tri vs host Meps packed (max entry)",
            T::NAME
        ),
        rel(&got, &want),
        tol,
    );
    let got = dev.read(&ms.mmu, 10 * tp, "Mmu columns")?;
    let want: Vec<f64> = (0..10 * tp)
        .map(|i| match i % tp < nt {
            true => {
                let (r, c) = dgatd::dga::SYM4_RC[i / tp];
                host.mmu[i % tp][4 * r + c]
            }
            false => 0.0,
        })
        .collect();
    s.check(
        format!("{} pack_sym16 vs host Mmu (max entry)", T::NAME),
        rel(&got, &want),
        tol,
    );
    Ok(())
}

fn precision<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke, tol: f64) -> Result<()> {
    fill::<T>(dev, s)?;
    dga::<T>(dev, s, tol)?;
    lossy::<T>(dev, s, tol)?;
    fused_dispersion::<T>(dev, s, tol)?;
    pml::pml::<T>(dev, s, tol)?;
    transforms::<T>(dev, s, tol)?;
    stream::<T>(dev, s)?;
    dg::<T>(dev, s, tol)?;
    Ok(())
}

/// `ClDevice::fill_zero` zeroes exactly the first n elements of a random buffer.
fn fill<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke) -> Result<()> {
    let mut r = Rng::new(0xf111);
    let n = 1000;
    let data: Vec<T> = (0..n).map(|_| T::of(1.0 + r.uniform())).collect();
    let mut b = dev.upload(&data, "fill test")?;
    dev.fill_zero(&mut b, n - 3)?;
    let got = dev.read(&b, n, "fill test")?;
    s.covered(&["fill_u32"]);
    let ok = got[..n - 3].iter().all(|x| x.f64() == 0.0)
        && got[n - 3..]
            .iter()
            .zip(&data[n - 3..])
            .all(|(a, b)| a.f64() == b.f64());
    s.require(
        format!(
            "{} fill_u32: first {} of {n} elements zero, the rest untouched",
            T::NAME,
            n - 3
        ),
        ok,
    );
    Ok(())
}

/// The DGA leapfrog kernels: every primal and dual variant, the source and probe kernels,
/// the Δt rescaling, and the device power iteration.
fn dga<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke, tol: f64) -> Result<()> {
    let mesh = jittered_box([3, 2, 2], 41, 0.25);
    let topo = Topology::build(&mesh)?;
    let mat = random_materials(mesh.n_tets(), 42);
    let d = Arc::new(Dga::assemble(&mesh, &topo, &mat)?);
    let (dt, _) = solver::time_step(&d, 0.9)?;
    // A pulse centred on the first steps, so the source term is of the order of the field.
    let w = Waveform {
        tau: 2.0 * dt,
        t0: 2.0 * dt,
    };
    let (sp, sd) = ([0.52, 0.37, 0.29], [0.2, -0.3, 0.9]);
    // The unit-Δt pattern; both steppers scale it by their Δt.
    let src_unit = Source::new(&mesh, &topo, &d, sp, sd)?;
    let probes = vec![
        Probe::new(&mesh, &topo, [0.31, 0.42, 0.27])?,
        Probe::new(&mesh, &topo, [0.7, 0.2, 0.4])?,
    ];
    let ops = Arc::new(Operators::<T>::new(&d, dt, true));
    let mut g = ClStepper::<T>::new(
        dev.clone(),
        d.clone(),
        DualForm::Csr,
        Some(&src_unit),
        &probes,
    )?;
    g.set_time_step(dt, Some(w))?; // scale: primal blocks, vertex blocks, CSR values, source
    s.covered(&["scale", "fill_u32"]);
    let mut r = Rng::new(43);
    let (u0, f0) = random_state(&d, &mut r);
    let zero = (vec![0.0; u0.len()], vec![0.0; f0.len()]);
    let steps = 3;
    // (start, primal, dual, CSR variant, block variant)
    let cases = [
        (
            &zero,
            PrimalVariant::Tet,
            DualForm::Factored,
            CsrVariant::Vector,
            BlockVariant::Vertex,
        ),
        (
            &(u0.clone(), f0.clone()),
            PrimalVariant::Sym,
            DualForm::Factored,
            CsrVariant::Vector,
            BlockVariant::Packed,
        ),
        (
            &(u0.clone(), f0.clone()),
            PrimalVariant::Tet,
            DualForm::Factored,
            CsrVariant::Vector,
            BlockVariant::Vertex,
        ),
        (
            &(u0.clone(), f0.clone()),
            PrimalVariant::Sym,
            DualForm::Csr,
            CsrVariant::Vector,
            BlockVariant::Vertex,
        ),
        (
            &(u0.clone(), f0.clone()),
            PrimalVariant::Tet,
            DualForm::Csr,
            CsrVariant::Vector,
            BlockVariant::Vertex,
        ),
    ];
    for (start, pv, form, cv, bv) in cases {
        g.set_variants(Variants {
            primal: pv,
            block: bv,
            csr: cv,
            ..Variants::default()
        })?;
        g.set_dual(form)?;
        g.set_state(&start.0, &start.1)?;
        let mut sg = vec![];
        g.advance(0, steps, &mut sg)?;
        let (ug, fg) = g.state()?;
        let mut c = CpuStepper::new(
            d.clone(),
            ops.clone(),
            form,
            Some((&src_unit, w)),
            probes.clone(),
        )?;
        c.set_state(&start.0, &start.1)?;
        let mut sc = vec![];
        c.advance(0, steps, &mut sc)?;
        let (uc, fc) = c.state()?;
        let primal = match pv {
            PrimalVariant::Tet => "primal_tet",
            PrimalVariant::Sym => "primal_sym",
            _ => unreachable!("the cases above use Tet and Sym"),
        };
        let dual: &[&str] = match (form, cv, bv) {
            (DualForm::Factored, _, BlockVariant::Vertex) => {
                &["circulation_pair", "vertex_block_v"]
            }
            (DualForm::Factored, _, BlockVariant::Packed) => {
                &["circulation_pair", "vertex_block_s"]
            }
            (DualForm::Csr, _, _) => &["csr_vector"],
            _ => unreachable!("the cases above use the Vertex and Packed blocks"),
        };
        s.covered(&[primal, "source", "probe"]);
        s.covered(dual);
        let what = format!(
            "{} DGA {steps} steps from {} state, {primal} + {}, source, probes",
            T::NAME,
            if start.0.iter().all(|&x| x == 0.0) {
                "a zero"
            } else {
                "a random"
            },
            dual.join(" + ")
        );
        let both = |a: &[f64], b: &[f64]| [a, b].concat();
        s.check(
            format!("{what}: state"),
            rel_err(&both(&ug, &fg), &both(&uc, &fc)),
            tol,
        );
        s.check(format!("{what}: probe samples"), rel_err(&sg, &sc), tol);
    }
    // Power iteration: primal, circulation (the lists of one index per entry), vertex
    // blocks, vertex_block_h, dot_partial, axpy0 and fill_u32, two iterations against the
    // host's; the subsets below run with the same lists (circulation_idx).
    g.set_variants(Variants {
        primal: PrimalVariant::Tet,
        block: BlockVariant::Vertex,
        csr: CsrVariant::Vector,
        disp: DispVariant::Split,
        circ: CircVariant::Lists,
    })?;
    let rho_dev = g.spectral_radius(2, 0x5eed)?;
    let rho_host = solver::spectral_radius(&d, 2, 0x5eed);
    s.covered(&[
        "primal_tet",
        "circulation",
        "vertex_block_v",
        "vertex_block_h",
        "dot_partial",
        "axpy0",
        "fill_u32",
    ]);
    s.check(
        format!(
            "{} DGA power iteration (2 iterations): rho {rho_dev:.6e}",
            T::NAME
        ),
        rel_err(&[rho_dev], &[rho_host]),
        tol,
    );
    subsets(&mut g, &d, &ops, &u0, &f0, s, tol)?;
    // and the symmetric layouts' subset kernels (primal_sym_idx, vertex_block_s_idx)
    g.set_variants(Variants::default())?;
    subsets(&mut g, &d, &ops, &u0, &f0, s, tol)?;
    if T::NAME == "f64" {
        mixed(&mut g, &u0, &f0, s)?;
    }
    slot_major(&mut g, &u0, &f0, s)?;
    slot_major_subsets(&mut g, &d, s, tol)?;
    energy(&mut g, &d, &ops, &u0, &f0, s, tol)?;
    Ok(())
}

/// A partitioned rank's launches in the slot-major layout (`ClStepper::set_u_layout`):
/// ghost half-edges in slots of their own (`set_ghost_halves`; `copy_idx` moves them in
/// and out) and the subset kernels that follow the layout (`primal_sym_sm_idx`,
/// `vertex_block_s_sm_idx`): 2 steps on whole-range subsets from a physical random state
/// (zero on the walls' half-edges), against the same steps in the half-edge layout.
fn slot_major_subsets<T: Real>(
    g: &mut ClStepper<T>,
    d: &Dga,
    s: &mut Smoke,
    tol: f64,
) -> Result<()> {
    g.set_dual(DualForm::Factored)?;
    g.set_variants(Variants::default())?;
    g.set_u_layout(ULayout::HalfEdge)?;
    let (mut u0, f0) = random_state(d, &mut Rng::new(0x9a27));
    let mut free = vec![false; u0.len()];
    for &h in &d.meps.h {
        free[h as usize] = true;
    }
    for (u, _) in u0.iter_mut().zip(&free).filter(|x| !*x.1) {
        *u = 0.0;
    }
    let (t, ne, nfree) = g.counts();
    let ids = |n: usize| (0..n as u32).collect::<Vec<u32>>();
    let (all_t, all_e, all_s) = (
        g.subset(&ids(t), t, "tets")?,
        g.subset(&ids(ne), ne, "edges")?,
        g.subset(&ids(nfree), nfree, "slots")?,
    );
    let two_steps = |g: &mut ClStepper<T>| -> Result<Vec<f64>> {
        g.set_state(&u0, &f0)?;
        for _ in 0..2 {
            g.primal_on(&all_t, Lane::Main, &[])?;
            g.circulation_on(&all_e, Lane::Main, &[])?;
            g.vertex_blocks_on(&all_s, Lane::Main, &[])?;
        }
        g.device().finish()?;
        let (u, f) = g.state()?;
        Ok([u, f].concat())
    };
    let want = two_steps(g)?;
    // ghosts: a few of the walls' half-edges (a rank's received halves are not its own)
    let ghosts: Vec<u32> = (0..u0.len() as u32)
        .filter(|&h| !free[h as usize])
        .step_by(3)
        .take(7)
        .collect();
    g.set_ghost_halves(&ghosts)?;
    g.set_u_layout(ULayout::SlotMajor)?;
    let got = two_steps(g)?;
    s.covered(&["primal_sym_sm_idx", "vertex_block_s_sm_idx", "copy_idx"]);
    s.require(
        format!(
            "{} slot-major subsets: U stays slot-major with {} ghosts",
            T::NAME,
            ghosts.len()
        ),
        g.u_layout() == ULayout::SlotMajor && !ghosts.is_empty(),
    );
    s.check(
        format!(
            "{} slot-major U, 2 steps on whole-range subsets with ghost slots vs the half-edge layout",
            T::NAME
        ),
        rel_err(&got, &want),
        tol,
    );
    g.set_u_layout(ULayout::HalfEdge)?;
    g.set_ghost_halves(&[])?;
    Ok(())
}

/// Mixed storage (`cl/dga/*.cl` built with `-D OPREAL=float`: primal_sym and
/// vertex_block_s over f32 operators, f64 fields): 3 steps from a random state against the
/// f64 step of the same stepper; they differ by the operators' rounding to f32 (relative
/// 2⁻²⁴ ≈ 6e-8 each), bound 1e-6 (`tests/opencl/mixed.rs` checks it to f64 round-off against
/// the rounded operators).
fn mixed<T: Real>(g: &mut ClStepper<T>, u0: &[f64], f0: &[f64], s: &mut Smoke) -> Result<()> {
    g.set_dual(DualForm::Factored)?;
    let m = g.mixed_operators()?;
    let mut run = |mixed: bool| -> Result<Vec<f64>> {
        g.set_state(u0, f0)?;
        for _ in 0..3 {
            if mixed {
                g.primal_update_mixed(&m)?;
                g.circulation()?;
                g.vertex_blocks_mixed(&m)?;
            } else {
                g.primal_update()?;
                g.circulation()?;
                g.vertex_blocks()?;
            }
        }
        let (u, f) = g.state()?;
        Ok([u, f].concat())
    };
    let (a, b) = (run(true)?, run(false)?);
    s.covered(&["primal_sym", "circulation_pair", "vertex_block_s"]);
    s.check(
        "f64 mixed storage (f32 operators) 3 steps vs f64: state".into(),
        rel_err(&a, &b),
        1e-6,
    );
    Ok(())
}

/// Slot-major `U` (`primal_sym_sm`, `vertex_block_s_sm`, moved in and out by `gather` and
/// `scatter`; `primal_sym_st`, the primal through a per-tet slot table, and
/// `circulation_sell`, the circulations through sliced ELL lists): 3 steps from a
/// random state against the default step of the same stepper; the same products in the
/// same order, so equal to round-off (16 unit round-offs; `tests/opencl/opencl.rs` finds the same
/// bits on PoCL).
fn slot_major<T: Real>(g: &mut ClStepper<T>, u0: &[f64], f0: &[f64], s: &mut Smoke) -> Result<()> {
    g.set_dual(DualForm::Factored)?;
    g.set_variants(Variants::default())?;
    let mut sm = g.slot_major(false)?;
    g.slot_table(&mut sm)?;
    let sell = g.sell_circulation()?;
    let pairs = [g.pair_circulation(false)?, g.pair_circulation(true)?];
    // 0: the default layout; 1: slot-major; 2: slot-major through the per-tet slot table,
    // with the circulations through sliced ELL lists; 3, 4: the same with the paired lists,
    // plain and sliced ELL
    let mut run = |form: u8| -> Result<Vec<f64>> {
        g.set_state(u0, f0)?;
        if form > 0 {
            g.to_slot_major(&sm)?;
        }
        for _ in 0..3 {
            match form {
                0 => g.primal_update()?,
                1 => g.primal_update_sm(&sm)?,
                _ => g.primal_update_st(&sm)?,
            };
            match form {
                2 => g.circulation_sell(&sell)?,
                3 | 4 => g.circulation_pair(&pairs[form as usize - 3])?,
                _ => g.circulation()?,
            };
            match form {
                0 => g.vertex_blocks()?,
                _ => g.vertex_blocks_sm(&sm)?,
            };
        }
        if form > 0 {
            g.from_slot_major(&sm)?;
        }
        let (u, f) = g.state()?;
        Ok([u, f].concat())
    };
    let (a, b, c) = (run(1)?, run(0)?, run(2)?);
    let (p, q) = (run(3)?, run(4)?);
    s.covered(&[
        "primal_sym_sm",
        "primal_sym_st",
        "circulation_sell",
        "circulation_pair",
        "circulation_pair_sell",
        "vertex_block_s_sm",
        "gather",
        "scatter",
    ]);
    s.check(
        format!(
            "{} slot-major U 3 steps vs the default layout: state",
            T::NAME
        ),
        rel_err(&a, &b),
        16.0 * T::EPS,
    );
    s.check(
        format!(
            "{} slot-major U through the per-tet slot table, sliced ELL circulations, 3 steps vs the default layout: state",
            T::NAME
        ),
        rel_err(&c, &b),
        16.0 * T::EPS,
    );
    for (what, x) in [("paired", &p), ("paired sliced ELL", &q)] {
        s.check(
            format!(
                "{} slot-major U through the per-tet slot table, {what} circulations, 3 steps vs the default layout: state",
                T::NAME
            ),
            rel_err(x, &b),
            16.0 * T::EPS,
        );
    }
    Ok(())
}

/// The energy on the device (`meps_slots`, `sym4_apply`, `dot_partial`), in the half-edge and
/// the slot-major layout of U, against the CPU stepper's energy of the same state, to the
/// file's tolerance; F is left as it was.
fn energy<T: Real>(
    g: &mut ClStepper<T>,
    d: &Arc<Dga>,
    ops: &Arc<Operators<T>>,
    u0: &[f64],
    f0: &[f64],
    s: &mut Smoke,
    tol: f64,
) -> Result<()> {
    g.set_dual(DualForm::Factored)?;
    g.set_variants(Variants::default())?;
    let mut c = CpuStepper::new(d.clone(), ops.clone(), DualForm::Factored, None, vec![])?;
    c.set_state(u0, f0)?;
    let want = c.energy()?;
    for layout in [ULayout::HalfEdge, ULayout::SlotMajor] {
        g.set_state(u0, f0)?;
        g.set_u_layout(layout)?;
        let w = g.energy()?;
        let (u, f) = g.state()?;
        s.covered(&["meps_slots", "sym4_apply", "dot_partial", "copy"]);
        s.check(
            format!(
                "{} energy on the device, {} U, vs CPU",
                T::NAME,
                layout.name()
            ),
            rel_err(&[w], &[want]),
            tol,
        );
        s.check(
            format!(
                "{} state after the device energy, {} U",
                T::NAME,
                layout.name()
            ),
            rel_err(&[u, f].concat(), &[u0, f0].concat()),
            T::EPS,
        );
    }
    g.set_u_layout(ULayout::HalfEdge)
}

/// A random permutation of `0..n` (Fisher-Yates, seeded), split at a random point into two
/// nonempty parts (n ≥ 2).
fn split(n: usize, r: &mut Rng) -> (Vec<u32>, Vec<u32>) {
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        p.swap(i, (r.next_u64() % (i as u64 + 1)) as usize);
    }
    let k = 1 + (r.next_u64() % (n as u64 - 1)) as usize;
    let b = p.split_off(k);
    (p, b)
}

/// The index-subset launches of the partitioned device stepper (`ClStepper::primal_on`,
/// `circulation_on`, `vertex_blocks_on` with explicit index lists, `gather`, `scatter`): one
/// leapfrog step (no source) from a random state done as two launches per kernel on a
/// random split of the tets, edges and free half-edge slots (in permuted order, so a kernel
/// that ignored its index list would write the wrong entries), against the same step done
/// by the full-range kernels (whole-range subsets) and against `CpuStepper`. After the
/// first part of each split, the entries of that part must hold the full-range values and
/// all others their previous ones. The halo packs are copies, so they must be exact.
fn subsets<T: Real>(
    g: &mut ClStepper<T>,
    d: &Arc<Dga>,
    ops: &Arc<Operators<T>>,
    u0: &[f64],
    f0: &[f64],
    s: &mut Smoke,
    tol: f64,
) -> Result<()> {
    let dev = g.device().clone();
    let (t, ne, nfree) = g.counts();
    let (nh, tp) = (2 * ne, g.tet_stride()); // F value k of tet n at k * tp + n
    let raw = |g: &ClStepper<T>| -> Result<(Vec<f64>, Vec<f64>)> {
        let (u, f) = g.state_buffers();
        let host = |v: Vec<T>| v.iter().map(|x| x.f64()).collect::<Vec<f64>>();
        Ok((host(dev.read(u, nh, "U")?), host(dev.read(f, 4 * tp, "F")?)))
    };
    let ids = |n: usize| (0..n as u32).collect::<Vec<u32>>();
    let (all_t, all_e, all_s) = (
        g.subset(&ids(t), t, "tets")?,
        g.subset(&ids(ne), ne, "edges")?,
        g.subset(&ids(nfree), nfree, "slots")?,
    );
    // The full-range step, and the CPU's.
    g.set_state(u0, f0)?;
    let (u_init, f_init) = raw(g)?;
    g.primal_on(&all_t, Lane::Main, &[])?;
    g.circulation_on(&all_e, Lane::Main, &[])?;
    g.vertex_blocks_on(&all_s, Lane::Main, &[])?;
    dev.finish()?;
    let (u_full, f_full) = raw(g)?;
    let (ug, fg) = g.state()?;
    let mut c = CpuStepper::new(d.clone(), ops.clone(), DualForm::Factored, None, vec![])?;
    c.set_state(u0, f0)?;
    c.advance(0, 1, &mut vec![])?;
    let (uc, fc) = c.state()?;
    let both = |a: &[f64], b: &[f64]| [a, b].concat();
    let v = g.variants();
    let names = |full: [&'static str; 3], idx: bool| {
        let primal = match (v.primal, idx) {
            (PrimalVariant::Sym, false) => "primal_sym",
            (PrimalVariant::Sym, true) => "primal_sym_idx",
            _ => full[0],
        };
        let block = match (v.block, idx) {
            (BlockVariant::Packed, false) => "vertex_block_s",
            (BlockVariant::Packed, true) => "vertex_block_s_idx",
            _ => full[2],
        };
        let circ = match (v.circ, idx) {
            (CircVariant::Paired, false) => "circulation_pair",
            (CircVariant::Paired, true) => "circulation_pair_idx",
            _ => full[1],
        };
        [primal, circ, block]
    };
    s.covered(&names(
        ["primal_tet", "circulation", "vertex_block_v"],
        false,
    ));
    s.check(
        format!(
            "{} DGA 1 step through the subset API on whole ranges (primal_tet + circulation + vertex_block_v) vs CPU",
            T::NAME
        ),
        rel_err(&both(&ug, &fg), &both(&uc, &fc)),
        tol,
    );
    // The same step on random splits.
    let mut r = Rng::new(0x5b5e7);
    let (ta, tb) = split(t, &mut r);
    let (ea, eb) = split(ne, &mut r);
    let (sa, sb) = split(nfree, &mut r);
    g.set_state(u0, f0)?;
    let (sub_ta, sub_tb) = (g.indices(&ta, "tets A")?, g.indices(&tb, "tets B")?);
    // Index buffers live until the commands using them have finished: a buffer released while
    // a launch on the (unflushed) side queue still needs it crashed Intel's runtime.
    let (sub_ea, sub_eb) = (g.indices(&ea, "edges A")?, g.indices(&eb, "edges B")?);
    let (sub_sa, sub_sb) = (g.indices(&sa, "slots A")?, g.indices(&sb, "slots B")?);
    g.primal_on(&sub_ta, Lane::Main, &[])?;
    dev.finish()?;
    let mut f_mix = f_init.clone();
    for &n in &ta {
        for k in 0..4 {
            f_mix[k * tp + n as usize] = f_full[k * tp + n as usize];
        }
    }
    s.check(
        format!(
            "{} primal_tet_idx on {} of {t} tets: those rows updated, the others untouched",
            T::NAME,
            ta.len()
        ),
        rel_err(&raw(g)?.1, &f_mix),
        tol,
    );
    g.primal_on(&sub_tb, Lane::Side, &[])?;
    dev.finish()?;
    g.circulation_on(&sub_ea, Lane::Main, &[])?;
    g.circulation_on(&sub_eb, Lane::Side, &[])?;
    dev.finish()?;
    g.vertex_blocks_on(&sub_sa, Lane::Main, &[])?;
    dev.finish()?;
    let mut u_mix = u_init.clone();
    for &k in &sa {
        let h = d.meps.h[k as usize] as usize;
        u_mix[h] = u_full[h];
    }
    s.check(
        format!(
            "{} circulation_idx on {} + {} of {ne} edges, vertex_block_v_idx on {} of {nfree} slots: those half-edges updated, the others untouched",
            T::NAME,
            ea.len(),
            eb.len(),
            sa.len()
        ),
        rel_err(&raw(g)?.0, &u_mix),
        tol,
    );
    g.vertex_blocks_on(&sub_sb, Lane::Side, &[])?;
    dev.finish()?;
    let (u_sub, f_sub) = raw(g)?;
    let (ug, fg) = g.state()?;
    s.covered(&names(
        ["primal_tet_idx", "circulation_idx", "vertex_block_v_idx"],
        true,
    ));
    s.check(
        format!(
            "{} DGA 1 step as two index-subset launches per kernel vs the full-range kernels",
            T::NAME
        ),
        rel_err(&both(&u_sub, &f_sub), &both(&u_full, &f_full)),
        tol,
    );
    s.check(
        format!(
            "{} DGA 1 step as two index-subset launches per kernel vs CPU",
            T::NAME
        ),
        rel_err(&both(&ug, &fg), &both(&uc, &fc)),
        tol,
    );
    // Halo packs: a random subset of the U slots, in random order.
    let (pick, _) = split(nh, &mut r);
    let list = g.indices(&pick, "halo list")?;
    let a: Vec<T> = (0..nh).map(|_| T::of(r.sym())).collect();
    let packed0: Vec<T> = (0..pick.len()).map(|_| T::of(r.sym())).collect();
    let src = dev.upload(&a, "gather source")?;
    let dst = dev.upload(&packed0, "gather target")?;
    g.gather(&src, &list, &dst, Lane::Side, &[])?;
    dev.finish()?;
    let got = dev.read(&dst, pick.len(), "gather target")?;
    s.covered(&["gather"]);
    s.require(
        format!(
            "{} gather: {} of {nh} values packed exactly",
            T::NAME,
            pick.len()
        ),
        got.iter()
            .zip(&pick)
            .all(|(x, &i)| x.f64() == a[i as usize].f64()),
    );
    let src = dev.upload(&packed0, "scatter source")?;
    let dst = dev.upload(&a, "scatter target")?;
    g.scatter(&src, &list, &dst, Lane::Main, &[])?;
    dev.finish()?;
    let got = dev.read(&dst, nh, "scatter target")?;
    let mut want: Vec<f64> = a.iter().map(|x| x.f64()).collect();
    for (k, &i) in pick.iter().enumerate() {
        want[i as usize] = packed0[k].f64();
    }
    s.covered(&["scatter"]);
    s.require(
        format!(
            "{} scatter: {} of {nh} values put in place exactly, the others untouched",
            T::NAME,
            pick.len()
        ),
        got.iter().zip(&want).all(|(x, y)| x.f64() == *y),
    );
    Ok(())
}

/// The loss steps (`loss_rows`, `loss_scatter`; `mag_loss` for σ*; `disp_correct`,
/// `disp_poles` for dispersive tets) on a mesh where about half the tets conduct, another
/// half has a magnetic conductivity and two thirds are dispersive (two materials):
/// 3 steps (source, probes) from a random state with the factored and the CSR dual update
/// against `CpuStepper` on the same lossy operators, and a check that σ changed the result
/// (against the lossless CPU run), so the comparison is not vacuous.
fn lossy<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke, tol: f64) -> Result<()> {
    let mesh = jittered_box([2, 2, 2], 47, 0.25);
    let topo = Topology::build(&mesh)?;
    let mut mat = random_materials(mesh.n_tets(), 48);
    let mut r = Rng::new(49);
    // σ η₀ up to 8 /m: σ Δt / 2 ε of order 0.1 at Δt ≈ 0.03 m.
    mat.sigma = (0..mesh.n_tets())
        .map(|_| {
            if r.uniform() < 0.5 {
                8.0 * r.uniform()
            } else {
                0.0
            }
        })
        .collect();
    // magnetic conductivity σ*/η₀ on another random half (mag_loss, scaled P rows)
    mat.sigma_m = (0..mesh.n_tets())
        .map(|_| {
            if r.uniform() < 0.5 {
                6.0 * r.uniform()
            } else {
                0.0
            }
        })
        .collect();
    // dispersive poles on random thirds (disp_correct, disp_poles; interface vertices with
    // full couplings, and the conducting ones with both)
    mat.disp = (0..mesh.n_tets())
        .map(|_| (3.0 * r.uniform()) as u16)
        .collect();
    mat.poles = vec![
        (
            "drude".into(),
            vec![dgatd::problem::Pole::Drude {
                f_p: 3e8,
                gamma: 1e7,
            }],
        ),
        (
            "lorentz".into(),
            vec![
                dgatd::problem::Pole::Lorentz {
                    delta_eps: 1.5,
                    f_0: 2e8,
                    delta: 1e6,
                },
                dgatd::problem::Pole::Debye {
                    delta_eps: 0.5,
                    tau: 1e-10,
                },
            ],
        ),
    ];
    let lossless = Media::lossless(mat.eps.clone(), mat.mu.clone());
    let d = Arc::new(Dga::assemble(&mesh, &topo, &mat)?);
    let d0 = Arc::new(Dga::assemble(&mesh, &topo, &lossless)?);
    let (dt, _) = solver::time_step(&d0, 0.9)?;
    let w = Waveform {
        tau: 2.0 * dt,
        t0: 2.0 * dt,
    };
    let src_unit = Source::new(&mesh, &topo, &d, [0.52, 0.37, 0.29], [0.2, -0.3, 0.9])?;
    let probes = vec![Probe::new(&mesh, &topo, [0.31, 0.42, 0.27])?];
    let (u0, f0) = random_state(&d, &mut r);
    let steps = 3;
    let both = |a: &[f64], b: &[f64]| [a, b].concat();
    for form in [DualForm::Factored, DualForm::Csr] {
        let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), form, Some(&src_unit), &probes)?;
        g.set_time_step(dt, Some(w))?; // installs the loss step
        // the split dispersive kernels (fused_dispersion takes the fused one)
        g.set_variants(Variants {
            primal: PrimalVariant::Tet,
            block: BlockVariant::Vertex,
            csr: CsrVariant::Vector,
            disp: DispVariant::Split,
            circ: CircVariant::Paired,
        })?;
        g.set_state(&u0, &f0)?;
        let mut sg = vec![];
        g.advance(0, steps, &mut sg)?;
        let (ug, fg) = g.state()?;
        let cpu = |d: &Arc<Dga>| -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
            let ops = Arc::new(Operators::<T>::new(d, dt, form == DualForm::Csr));
            let mut c =
                CpuStepper::new(d.clone(), ops, form, Some((&src_unit, w)), probes.clone())?;
            c.set_state(&u0, &f0)?;
            let mut sc = vec![];
            c.advance(0, steps, &mut sc)?;
            let (u, f) = c.state()?;
            Ok((u, f, sc))
        };
        let (uc, fc, sc) = cpu(&d)?;
        let (ul, fl, _) = cpu(&d0)?;
        let dual = match form {
            DualForm::Factored => "circulation + vertex_block_v",
            DualForm::Csr => "csr_vector",
            other => {
                let why = "the smoke run has no kernel list for it";
                return Err(dgatd::Error::config("dual form", format!("{other:?}"), why));
            }
        };
        s.covered(&[
            "loss_rows",
            "loss_scatter",
            "scale",
            "fill_u32",
            "mag_loss",
            "disp_correct",
            "disp_poles",
        ]);
        let what = format!(
            "{} lossy DGA ({} of {} tets conduct, {} with σ*, {} dispersive) {steps} steps, mag_loss + primal_tet + loss_rows + loss_scatter + disp_correct + {dual} + disp_poles",
            T::NAME,
            mat.sigma.iter().filter(|&&x| x > 0.0).count(),
            mesh.n_tets(),
            mat.sigma_m.iter().filter(|&&x| x > 0.0).count(),
            mat.disp.iter().filter(|&&x| x > 0).count()
        );
        s.check(
            format!("{what}: state"),
            rel_err(&both(&ug, &fg), &both(&uc, &fc)),
            tol,
        );
        s.check(format!("{what}: probe samples"), rel_err(&sg, &sc), tol);
        let effect = rel_err(&both(&ul, &fl), &both(&uc, &fc));
        s.require(
            format!("{what}: σ changes the CPU state by {effect:.2e} (at least 1e-3)"),
            effect >= 1e-3,
        );
    }
    Ok(())
}

/// The dispersion fused into the dual update (`vertex_block_vf` with `vertex_block_v_from`, and `disp_poles_idx` with
/// `disp_correct` on the rest): a box in two dispersive slabs (a lossy Drude fill for
/// x < 0.5, a Lorentz pair with a Debye pole beyond) with the source in the first, 3 steps
/// from a random state against `CpuStepper`; the fused layout must have both fused
/// vertices and split entries, so every kernel of the fused step runs.
fn fused_dispersion<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke, tol: f64) -> Result<()> {
    use dgatd::problem::Pole;
    let mesh = jittered_box([6, 3, 3], 61, 0.2);
    let topo = Topology::build(&mesh)?;
    let mut mat = random_materials(mesh.n_tets(), 62);
    mat.eps = vec![1.0; mesh.n_tets()];
    mat.disp = mesh
        .tets
        .iter()
        .map(|tv| {
            let x = tv.iter().map(|&v| mesh.nodes[v as usize][0]).sum::<f64>() / 4.0;
            if x < 0.5 { 1 } else { 2 }
        })
        .collect();
    mat.poles = vec![
        (
            "drude".into(),
            vec![Pole::Drude {
                f_p: 3e8,
                gamma: 1e7,
            }],
        ),
        (
            "lorentz".into(),
            vec![
                Pole::Lorentz {
                    delta_eps: 1.5,
                    f_0: 2e8,
                    delta: 1e6,
                },
                Pole::Debye {
                    delta_eps: 0.5,
                    tau: 1e-10,
                },
            ],
        ),
    ];
    let d = Arc::new(Dga::assemble(&mesh, &topo, &mat)?);
    let (dt, _) = solver::time_step(&d, 0.9)?;
    let w = Waveform {
        tau: 2.0 * dt,
        t0: 2.0 * dt,
    };
    let src = Source::new(&mesh, &topo, &d, [0.23, 0.37, 0.29], [0.2, -0.3, 0.9])?;
    let probes = vec![Probe::new(&mesh, &topo, [0.61, 0.42, 0.27])?];
    let mut r = Rng::new(63);
    let (u0, f0) = random_state(&d, &mut r);
    let steps = 3;
    let ops = Arc::new(Operators::<T>::new(&d, dt, false));
    let layout = ops.disp.as_ref().map(|x| {
        let skip: Vec<u32> = src.current.iter().map(|p| p.0).collect();
        let f = x.fused(&ops.vptr, &ops.vh, &skip);
        (f.vertices, f.rest.iter().map(Vec::len).sum::<usize>())
    });
    let (nv, nrest) = layout.unwrap_or((0, 0));
    let mut g = ClStepper::<T>::new(
        dev.clone(),
        d.clone(),
        DualForm::Factored,
        Some(&src),
        &probes,
    )?;
    g.set_time_step(dt, Some(w))?;
    g.set_state(&u0, &f0)?;
    let mut sg = vec![];
    g.advance(0, steps, &mut sg)?;
    let (ug, fg) = g.state()?;
    let mut c = CpuStepper::new(d.clone(), ops, DualForm::Factored, Some((&src, w)), probes)?;
    c.set_state(&u0, &f0)?;
    let mut sc = vec![];
    c.advance(0, steps, &mut sc)?;
    let (uc, fc) = c.state()?;
    s.covered(&[
        "vertex_block_vf",
        "vertex_block_v_from",
        "disp_poles_idx",
        "disp_correct",
    ]);
    let what = format!(
        "{} fused dispersion ({nv} fused vertices, {nrest} split entries) {steps} steps, vertex_block_vf + vertex_block_v_from + disp_correct + disp_poles_idx",
        T::NAME
    );
    s.require(format!("{what}: both paths used"), nv > 0 && nrest > 0);
    let both = |a: &[f64], b: &[f64]| [a, b].concat();
    s.check(
        format!("{what}: state"),
        rel_err(&both(&ug, &fg), &both(&uc, &fc)),
        tol,
    );
    s.check(format!("{what}: probe samples"), rel_err(&sg, &sc), tol);
    Ok(())
}

/// The running transforms of the mode-shape pass (`dft_acc`): 3 frequencies, random
/// phase factors added after each of 4 steps from a random state, against `CpuStepper`'s
/// (U and F, both host layouts).
fn transforms<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke, tol: f64) -> Result<()> {
    use dgatd::C64;
    let mesh = jittered_box([2, 2, 2], 53, 0.25);
    let topo = Topology::build(&mesh)?;
    let d = Arc::new(Dga::assemble(
        &mesh,
        &topo,
        &random_materials(mesh.n_tets(), 54),
    )?);
    let (dt, _) = solver::time_step(&d, 0.9)?;
    let mut r = Rng::new(55);
    let mut u0 = vec![0.0; d.n_half()];
    for &h in &d.meps.h {
        u0[h as usize] = r.sym();
    }
    let f0: Vec<f64> = (0..d.n_dual()).map(|_| r.sym()).collect();
    let phases: Vec<Vec<C64>> = (0..8)
        .map(|_| {
            (0..3)
                .map(|_| C64::from_polar(1.0, 3.0 * r.sym()))
                .collect()
        })
        .collect();
    let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), DualForm::Factored, None, &[])?;
    g.set_time_step(dt, None)?;
    let ops = Arc::new(Operators::<T>::new(&d, dt, false));
    let mut c = CpuStepper::new(d.clone(), ops, DualForm::Factored, None, vec![])?;
    let mut worst = 0.0f64;
    let mut sink = vec![];
    for st in [&mut g as &mut dyn Stepper, &mut c as &mut dyn Stepper] {
        st.set_state(&u0, &f0)?;
        st.dft_start(3)?;
        for k in 0..4 {
            st.advance(k, 1, &mut sink)?;
            st.dft_add(&phases[2 * k], &phases[2 * k + 1])?;
        }
    }
    let flat = |v: &[C64]| v.iter().flat_map(|z| [z.re, z.im]).collect::<Vec<f64>>();
    for m in 0..3 {
        let (xg, yg) = g.dft_take(m)?;
        let (xc, yc) = c.dft_take(m)?;
        worst = worst
            .max(rel_err(&flat(&xg), &flat(&xc)))
            .max(rel_err(&flat(&yg), &flat(&yc)));
    }
    s.covered(&["dft_acc"]);
    s.check(
        format!(
            "{} running transforms (3 frequencies, 4 steps) vs CPU",
            T::NAME
        ),
        worst,
        tol,
    );
    Ok(())
}

/// The bandwidth probes on 1000 elements against the host.
fn stream<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke) -> Result<()> {
    // the bench's probe program, built as the bench builds it
    let program = dev.build_source(
        dgatd::backend::opencl::PROBE_SOURCE,
        dgatd::backend::opencl::PROBE_PROGRAM,
        dgatd::backend::opencl::real_options::<T>(),
    )?;
    let [copy, copy4, triad, triad4, fma_peak] = dgatd::backend::opencl::kernels(
        &program,
        ["copy", "copy4", "triad", "triad4", "fma_peak"],
    )?;
    let n = 1000;
    let mut r = Rng::new(0x57ea);
    let mut rand = || (0..n).map(|_| T::of(r.sym())).collect::<Vec<T>>();
    let (a0, b0, c0) = (rand(), rand(), rand());
    let sc = T::of(1.5);
    let triad_ok = |a: &[T]| {
        a.iter().zip(&b0).zip(&c0).all(|((x, y), z)| {
            let sz = sc.f64() * z.f64();
            let exact = y.f64() + sz;
            let scale = exact.abs().max(y.f64().abs()).max(sz.abs());
            (x.f64() - exact).abs() <= 2.0 * T::EPS * scale
        })
    };
    for (name, width) in [("copy", 1), ("copy4", 4)] {
        let a = dev.upload(&a0, "stream a")?;
        let b = dev.upload(&b0, "stream b")?;
        let k = if width == 1 { &copy } else { &copy4 };
        launch(
            dev,
            k,
            n / width,
            LOCAL,
            &[Arg::U64((n / width) as u64), Arg::Buf(&a), Arg::Buf(&b)],
        )?;
        let got = dev.read(&b, n, "stream b")?;
        s.covered(&[name]);
        s.require(
            format!("{} {name}: {n} elements copied exactly", T::NAME),
            got.iter().zip(&a0).all(|(x, y)| x.f64() == y.f64()),
        );
    }
    // the peak probe: every work-item's 8 chains x <- a x + b, summed, against the host
    {
        let (iters, a, b) = (5u32, T::of(0.75), T::of(0.125));
        let out = dev.alloc::<T>(n, "fma probe")?;
        launch(
            dev,
            &fma_peak,
            n,
            LOCAL,
            &[
                Arg::U32(n as u32),
                Arg::U32(iters),
                Arg::Real(a),
                Arg::Real(b),
                Arg::Buf(&out),
            ],
        )?;
        let got = dev.read(&out, n, "fma probe")?;
        let ok = got.iter().enumerate().all(|(i, x)| {
            let x0 = (i & 1023) as f64 * 1e-3;
            let want: f64 = (0..8)
                .map(|k| {
                    let mut v = x0 + 0.1 * k as f64;
                    for _ in 0..iters {
                        v = v * a.f64() + b.f64();
                    }
                    v
                })
                .sum();
            (x.f64() - want).abs() <= 64.0 * T::EPS * want.abs()
        });
        s.covered(&["fma_peak"]);
        s.require(
            format!(
                "{} fma_peak: {n} work-items' 8 chains of {iters} steps as on the host",
                T::NAME
            ),
            ok,
        );
    }
    for (name, width) in [("triad", 1), ("triad4", 4)] {
        let a = dev.upload(&a0, "stream a")?;
        let b = dev.upload(&b0, "stream b")?;
        let c = dev.upload(&c0, "stream c")?;
        let k = if width == 1 { &triad } else { &triad4 };
        launch(
            dev,
            k,
            n / width,
            LOCAL,
            &[
                Arg::U64((n / width) as u64),
                Arg::Buf(&a),
                Arg::Buf(&b),
                Arg::Buf(&c),
                Arg::Real(sc),
            ],
        )?;
        let got = dev.read(&a, n, "stream a")?;
        s.covered(&[name]);
        s.require(
            format!(
                "{} {name}: {n} elements of b + 1.5 c within 2 eps of the largest term",
                T::NAME
            ),
            triad_ok(&got),
        );
    }
    Ok(())
}

/// The DG kernels (flux, update, probes) and the DG power iteration, three orders and both
/// fluxes. N = 4 (35 nodes per tet, the only odd count of N = 1-4) runs the updates'
/// odd-NP branches, on a one-cell box (6 tets: its staged updates' last work-group is
/// partial) to keep the simulator's time down.
fn dg<T: Real>(dev: &Arc<ClDevice>, s: &mut Smoke, tol: f64) -> Result<()> {
    for (order, flux, cells) in [
        (2, Flux::Upwind, 2),
        (1, Flux::Central, 2),
        (4, Flux::Upwind, 1),
    ] {
        let mesh = jittered_box([cells; 3], 44, 0.2);
        let k = mesh.n_tets();
        let mat = random_materials(k, 45);
        let op = Arc::new(DgOperator::new(&mesh, order, flux, &mat.eps, &mat.mu)?);
        let (dt, _) = dgatd::dg::time_step(&op, 0.9);
        let src = DgSource {
            tet: 7.min(k - 1),
            dir: [0.3, -0.2, 0.9],
            wave: Waveform {
                tau: 2.0 * dt,
                t0: dt,
            },
        };
        let probes = vec![
            DgProbe::new(&mesh, &op, [0.31, 0.42, 0.27])?,
            DgProbe::new(&mesh, &op, [0.7, 0.2, 0.4])?,
        ];
        let mut r = Rng::new(46 + order as u64);
        let q0: Vec<f64> = (0..op.n_dofs()).map(|_| r.sym()).collect();
        let steps = 1;
        let mut c = DgCpuStepper::new(op.clone(), dt, Some(src.clone()), probes.clone());
        c.set_state(&q0, &[])?;
        let mut sc = vec![];
        c.advance(0, steps, &mut sc)?;
        let mut g = DgClStepper::<T>::new(dev.clone(), op.clone(), dt, Some(src), probes)?;
        for (u, kernel) in [
            (DgUpdate::Node, "dg_update"),
            (DgUpdate::Blocked, "dg_update_blk"),
            (DgUpdate::Paired, "dg_update_pair"),
            (DgUpdate::TwoNodes, "dg_update_nb"),
            (DgUpdate::Lines, "dg_update_nc"),
        ] {
            g.set_update(u)?;
            g.set_state(&q0, &[])?;
            let mut sg = vec![];
            g.advance(0, steps, &mut sg)?;
            s.covered(&["dg_flux", kernel, "dg_probe", "fill_u32"]);
            let what = format!(
                "{} DG N={order} {} {} update, {steps} step",
                T::NAME,
                flux.name(),
                u.name()
            );
            s.check(
                format!("{what}: field"),
                rel_err(&g.state()?.0, &c.state()?.0),
                tol,
            );
            s.check(format!("{what}: probe samples"), rel_err(&sg, &sc), tol);
        }
        let what = format!("{} DG N={order} {}", T::NAME, flux.name());
        let rho_dev = g.spectral_radius(2, 0x5eed)?;
        let rho_host = dgatd::dg::spectral_radius(&op, 2, 0x5eed);
        s.check(
            format!("{what}: power iteration (2 iterations) rho {rho_dev:.6e}"),
            rel_err(&[rho_dev], &[rho_host]),
            tol,
        );
    }
    Ok(())
}
