//! `dgatd bench`: the device's own bandwidth ceiling (copy and triad), every DGATD kernel
//! variant and the whole time step, over a ladder of box meshes generated in-process, on
//! OpenCL devices (timed with profiling events) and on the CPU backend (wall clock).
//!
//! One CSV row per (device, precision, kernel, variant, mesh size); columns are documented
//! in `results/README.md` and listed in [`COLUMNS`].
//!
//! Byte and flop models: [`dgatd::cost`].

use dgatd::backend::cpu::{self, lean};
use dgatd::backend::device_assembly;
use dgatd::backend::opencl::{
    self, Arg, BlockVariant, CircVariant, ClDevice, ClStepper, CsrVariant, LOCAL, PrimalVariant,
    Variants, launch,
};
use dgatd::cost;
use dgatd::dga::operators::{DualForm, Operators};
use dgatd::dga::{Dga, host_masses};
use dgatd::mesh::Topology;
use dgatd::problem::Media;
use dgatd::{Error, Real, Result};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

use super::bench_core::{BenchConfig, Row, ladder_box};
use super::bench_core::{emit, stats, time_events, time_wall};

/// CSV columns, in order. Stable: rows from different machines concatenate.
pub const COLUMNS: [&str; 22] = [
    "timestamp",
    "commit",
    "host",
    "platform",
    "device",
    "driver",
    "precision",
    "kernel",
    "variant",
    "tets",
    "dofs",
    "reps",
    "median_s",
    "min_s",
    "max_s",
    "bytes_model",
    "gbs",
    "frac_copy_bw",
    "gdofs_per_s",
    "flops_model",
    "gflops",
    "frac_roof",
];

/// The largest difference of `x` (device operators) from `y` (the host's), relative to the
/// largest entry of `y` (absolute when `y` is all zeros).
fn rel_to_largest<T: Real>(x: &[T], y: &[f64]) -> f64 {
    let s = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let d = x
        .iter()
        .zip(y)
        .fold(0.0f64, |m, (p, q)| m.max((p.f64() - q).abs()));
    if s > 0.0 { d / s } else { d }
}

/// `preprocess` rows of the masses and inverses assembled on `dev`
/// ([`device_assembly::masses`]): variant `device` (layout on the host, uploads, kernels and
/// downloads: what replaces [`host_masses`] in the pipeline) and `device_kernels` (the two
/// kernels alone), over `min(reps, 3)` runs after one that builds the program. The first
/// run's operators are checked against the host's `dga` (lean); a difference above 1e-10 of
/// a block's largest entry is an error, not a row.
#[allow(clippy::too_many_arguments)]
fn device_assembly_rows(
    dev: &Arc<ClDevice>,
    mesh: &dgatd::mesh::Mesh,
    topo: &Topology,
    mat: &Media,
    dga: &Dga,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    // The downloaded operators (f64 Mmu⁻¹ and full Meps⁻¹ blocks) sit beside the host's
    // until they are compared: skip, saying so, when the host cannot hold them.
    let need = 8.0 * (10 * dga.n_tets + dga.meps_inv.data.len()) as f64 * 1.1;
    if let Some(avail) = cost::available_memory()
        && need > avail as f64
    {
        log(&format!(
            "{} tets on {}: device assembly rows skipped: the downloaded operators need {:.1} GB of host memory, {:.1} GB available",
            dga.n_tets,
            dev.info.name,
            need / 1e9,
            avail as f64 / 1e9
        ));
        return Ok(Vec::new());
    }
    let k = device_assembly::AssemblyKernels::build(dev)?;
    timed_assembly(
        &["device", "device_kernels"],
        "device assembly",
        dev,
        dga,
        cfg,
        base,
        log,
        || device_assembly::masses(dev, &k, mesh, topo, mat, &dga.free_edge, true),
        |m, log| {
            // largest difference relative to the largest host entry, per tet or vertex
            let rel = rel_to_largest::<f64>;
            let e_mmu = (m.mmu_inv.par_iter().zip(&dga.mmu_inv))
                .map(|(x, y)| rel(x, y))
                .reduce(|| 0.0, f64::max);
            let e_meps = if m.meps_inv.off == dga.meps_inv.off {
                (0..dga.meps_inv.n_vertices())
                    .into_par_iter()
                    .map(|v| rel(m.meps_inv.block(v), dga.meps_inv.block(v)))
                    .reduce(|| 0.0, f64::max)
            } else {
                f64::INFINITY
            };
            log(&format!(
                "{} tets on {}: device masses against the host's: Mmu⁻¹ {e_mmu:.1e}, Meps⁻¹ {e_meps:.1e}",
                dga.n_tets, dev.info.name
            ));
            Ok((e_mmu <= 1e-10 && e_meps <= 1e-10).then_some(()).ok_or_else(|| {
                format!(
                    "the operators assembled on {} differ from the host's (Mmu⁻¹ {e_mmu:e}, Meps⁻¹ {e_meps:e})",
                    dev.info.name
                )
            }))
        },
    )
}

/// Runs a device assembly (`assemble`) `min(reps, 3) + 1` times: the first builds the
/// program(s) and is checked by `check` (Ok(Err(message)): an error naming the bench, no
/// row), the others are timed and logged as `"… tets on …: {what} … s (layout …, upload …,
/// kernels …, download …)"` (the form `results/h200/device_assembly/summary.py` reads).
/// Rows `variants[0]` (the whole call) and, when given, `variants[1]` (its kernels).
#[allow(clippy::too_many_arguments)]
fn timed_assembly<M>(
    variants: &[&str],
    what: &str,
    dev: &ClDevice,
    dga: &Dga,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
    mut assemble: impl FnMut() -> dgatd::Result<(M, device_assembly::AssemblyTimes)>,
    mut check: impl FnMut(&M, &mut dyn FnMut(&str)) -> dgatd::Result<std::result::Result<(), String>>,
) -> Result<Vec<Row>> {
    let reps = cfg.reps.clamp(1, 3);
    let (mut total, mut kern) = (Vec::new(), Vec::new());
    for rep in 0..=reps {
        let (m, t) = assemble()?;
        if rep == 0 {
            check(&m, log)?.map_err(|e| Error::config("bench", what, e))?;
            continue;
        }
        log(&format!(
            "{} tets on {}: {what} {:.3} s (layout {:.3}, upload {:.3}, kernels {:.3}, download {:.3})",
            dga.n_tets, dev.info.name, t.total_s, t.layout_s, t.upload_s, t.kernels_s, t.download_s
        ));
        total.push(t.total_s);
        kern.push(t.kernels_s);
    }
    let dofs = (dga.n_tets, dga.counts().dofs());
    Ok(variants
        .iter()
        .zip([total, kern])
        .map(|(v, times)| Row::preprocess(base, v, dofs, times))
        .collect())
}

/// `Δt` of the CSR matrices the `preprocess` rows build (any value: it only scales them).
const CSR_DT: f64 = 1e-3;

/// `preprocess` rows of the CSR form's matrix `Δt Meps⁻¹ C̃` assembled on `dev`
/// ([`device_assembly::csr`]): variant `device_csr` (the masses and inverses, the host's
/// structure, the values on the device and their download: what replaces `host_masses` plus
/// `host_csr`) and `device_csr_kernels` (the three kernels alone), over `min(reps, 3)` runs
/// after one that builds the program and is checked against `want` (the host's
/// `build_csr`): the same structure, and values within 1e-10 of each row's largest, or an
/// error, not a row.
#[allow(clippy::too_many_arguments)]
fn device_csr_rows(
    dev: &Arc<ClDevice>,
    mesh: &dgatd::mesh::Mesh,
    topo: &Topology,
    mat: &Media,
    dga: &Dga,
    want: &sprs::CsMat<f64>,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    let k = device_assembly::AssemblyKernels::build(dev)?;
    timed_assembly(
        &["device_csr", "device_csr_kernels"],
        "device CSR",
        dev,
        dga,
        cfg,
        base,
        log,
        || device_assembly::csr(dev, &k, mesh, topo, mat, &dga.free_edge, CSR_DT),
        |m, log| {
            let same = m.indptr() == want.indptr() && m.indices() == want.indices();
            let ip = want.indptr().raw_storage().to_vec();
            let e = if same {
                (0..want.rows())
                    .into_par_iter()
                    .map(|r| {
                        let rows = ip[r]..ip[r + 1];
                        rel_to_largest::<f64>(&m.data()[rows.clone()], &want.data()[rows])
                    })
                    .reduce(|| 0.0, f64::max)
            } else {
                f64::INFINITY
            };
            log(&format!(
                "{} tets on {}: device CSR against the host's: {} nonzeros, values {e:.1e}",
                dga.n_tets,
                dev.info.name,
                want.nnz()
            ));
            Ok((e <= 1e-10).then_some(()).ok_or_else(|| {
                format!(
                    "the CSR matrix assembled on {} differs from the host's (structure equal: {same}, values {e:e})",
                    dev.info.name
                )
            }))
        },
    )
}

/// `preprocess` rows of the operators assembled on `dev` and left there, packed into the
/// stepper's layouts in precision `T` ([`device_assembly::resident`]): variant
/// `device_resident` (layout on the host, uploads, assembly and packing kernels; nothing is
/// downloaded: what replaces [`host_masses`] and the operators' upload when the stepper is
/// built with [`dgatd::backend::opencl::ClStepper::with_resident`]), over `min(reps, 3)` runs
/// after one that builds the programs and whose packed operators are read back and checked
/// against the host's `dga` packed on the host: a difference above 1e-10 (f64) or 1e-6
/// (f32, the rounding) of a tet's or block's largest entry is an error, not a row.
#[allow(clippy::too_many_arguments)]
fn resident_rows<T: Real>(
    dev: &Arc<ClDevice>,
    mesh: &dgatd::mesh::Mesh,
    topo: &Topology,
    mat: &Media,
    dga: &Dga,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    let k = device_assembly::AssemblyKernels::build(dev)?;
    let pk = device_assembly::PackKernels::build::<T>(dev)?;
    let tol = if T::NAME == "f64" { 1e-10 } else { 1e-6 };
    timed_assembly(
        &["device_resident"],
        &format!("resident {} assembly", T::NAME),
        dev,
        dga,
        cfg,
        base,
        log,
        || device_assembly::resident::<T>(dev, &k, &pk, mesh, topo, mat, &dga.free_edge),
        |ops, log| {
            let (nt, tp) = (dga.n_tets, opencl::tet_stride(dga.n_tets));
            let rel = rel_to_largest::<T>;
            let p = dev.read(&ops.primal, 10 * tp, "resident primal")?;
            let e_mmu = (0..nt)
                .into_par_iter()
                .map(|n| {
                    let x: Vec<T> = (0..10).map(|k| p[k * tp + n]).collect();
                    rel(&x, &dga.mmu_inv[n])
                })
                .reduce(|| 0.0, f64::max);
            drop(p);
            let b = dev.read(&ops.blocks, ops.block_len(), "resident blocks")?;
            let e_meps = if ops.layout.off == dga.meps_inv.off {
                (0..dga.meps_inv.n_vertices())
                    .into_par_iter()
                    .map(|v| {
                        let r = ops.poff[v] as usize..ops.poff[v + 1] as usize;
                        // the block's upper triangle column by column (VertexBlocks::pack)
                        let (blk, d) = (dga.meps_inv.block(v), dga.meps_inv.dim(v));
                        let want: Vec<f64> = (0..d)
                            .flat_map(|i| (0..=i).map(move |j| blk[j * d + i]))
                            .collect();
                        rel(&b[r], &want)
                    })
                    .reduce(|| 0.0, f64::max)
            } else {
                f64::INFINITY
            };
            log(&format!(
                "{} tets on {}: resident {} operators against the host's: Mmu⁻¹ {e_mmu:.1e}, Meps⁻¹ {e_meps:.1e}",
                dga.n_tets,
                dev.info.name,
                T::NAME
            ));
            Ok((e_mmu <= tol && e_meps <= tol).then_some(()).ok_or_else(|| {
                format!(
                    "the {} operators assembled and packed on {} differ from the host's (Mmu⁻¹ {e_mmu:e}, Meps⁻¹ {e_meps:e})",
                    T::NAME,
                    dev.info.name
                )
            }))
        },
    )
}

/// `preprocess` rows of the operators and the CSR form's matrix assembled on `dev` and left
/// there in precision `T` ([`device_assembly::resident_csr`]: the structure, the columns and
/// the values built by kernels, no host pass over the matrix): variant
/// `device_resident_csr`, what replaces [`host_masses`], `host_csr` and the CSR stepper's
/// upload. Over `min(reps, 3)` runs after one whose matrix is read back and checked against
/// `want` (the host's `build_csr` at [`CSR_DT`]): the same row pointers, the columns as the
/// stepper's F slots, and values within 1e-10 (f64) or 1e-6 (f32, the rounding) of each
/// row's largest, or an error, not a row.
#[allow(clippy::too_many_arguments)]
fn resident_csr_rows<T: Real>(
    dev: &Arc<ClDevice>,
    mesh: &dgatd::mesh::Mesh,
    topo: &Topology,
    mat: &Media,
    dga: &Dga,
    want: &sprs::CsMat<f64>,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    let k = device_assembly::AssemblyKernels::build(dev)?;
    let pk = device_assembly::PackKernels::build::<T>(dev)?;
    let tol = if T::NAME == "f64" { 1e-10 } else { 1e-6 };
    timed_assembly(
        &["device_resident_csr"],
        &format!("resident {} assembly with the CSR matrix", T::NAME),
        dev,
        dga,
        cfg,
        base,
        log,
        || device_assembly::resident_csr::<T>(dev, &k, &pk, mesh, topo, mat, &dga.free_edge),
        |ops, log| {
            let Some((ip, ix, dv, nnz)) = &ops.csr else {
                unreachable!("resident_csr returns the matrix")
            };
            let tp = opencl::tet_stride(dga.n_tets); // F value k of tet n at k * tp + n
            let wip = want.indptr();
            let wip = wip.raw_storage();
            let same_ip = *nnz == want.nnz()
                && dev
                    .read(ip, want.rows() + 1, "resident CSR row pointers")?
                    .par_iter()
                    .zip(wip)
                    .all(|(&a, &b)| a as usize == b);
            let e = if same_ip {
                let ix = dev.read(ix, *nnz, "resident CSR columns")?;
                let dv = dev.read(dv, *nnz, "resident CSR values")?;
                (0..want.rows())
                    .into_par_iter()
                    .map(|r| {
                        let rows = wip[r]..wip[r + 1];
                        let cols_equal = ix[rows.clone()]
                            .iter()
                            .zip(&want.indices()[rows.clone()])
                            .all(|(&a, &c)| a as usize == (c % 4) * tp + c / 4);
                        if !cols_equal {
                            return f64::INFINITY;
                        }
                        // want is at Δt = CSR_DT, the resident matrix at unit Δt
                        let w: Vec<f64> = want.data()[rows.clone()]
                            .iter()
                            .map(|x| x / CSR_DT)
                            .collect();
                        rel_to_largest::<T>(&dv[rows], &w)
                    })
                    .reduce(|| 0.0, f64::max)
            } else {
                f64::INFINITY
            };
            log(&format!(
                "{} tets on {}: resident {} CSR against the host's: {nnz} nonzeros, structure equal: {same_ip}, values {e:.1e}",
                dga.n_tets,
                dev.info.name,
                T::NAME
            ));
            Ok((e <= tol).then_some(()).ok_or_else(|| {
                format!(
                    "the {} CSR matrix built on {} differs from the host's (structure equal: {same_ip}, values {e:e})",
                    T::NAME,
                    dev.info.name
                )
            }))
        },
    )
}

/// Copy and triad bandwidth of an OpenCL device in precision T, one element and four
/// elements per work-item; returns the rows, the best copy first (the ceiling).
fn stream_rows<T: Real>(dev: &Arc<ClDevice>, cfg: &BenchConfig, base: &Row) -> Result<Vec<Row>> {
    let k = opencl::Kernels::build::<T>(dev)?;
    let s = std::mem::size_of::<T>();
    let n = cfg
        .stream_elems
        .min((dev.info.max_alloc as usize / s).saturating_sub(1))
        .min((dev.info.global_mem as usize / s / 4).max(1024))
        / 4
        * 4;
    let a = dev.upload(
        &(0..n)
            .map(|i| T::of((i % 1000) as f64 * 1e-3 + 1.0))
            .collect::<Vec<_>>(),
        "stream array",
    )?;
    let b = dev.upload(&vec![T::of(0.5); n], "stream array")?;
    let c = dev.upload(&vec![T::of(0.25); n], "stream array")?;
    let copy = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![launch(
            dev,
            &k.copy,
            n,
            LOCAL,
            &[Arg::U64(n as u64), Arg::Buf(&a), Arg::Buf(&b)],
        )?])
    })?;
    let triad = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![launch(
            dev,
            &k.triad,
            n,
            LOCAL,
            &[
                Arg::U64(n as u64),
                Arg::Buf(&a),
                Arg::Buf(&b),
                Arg::Buf(&c),
                Arg::Real(T::of(1.5)),
            ],
        )?])
    })?;
    let mk = |name: &str, v: Vec<f64>, bytes: f64| {
        let (m, lo, hi) = stats(v);
        Row {
            kernel: name.into(),
            variant: "stream".into(),
            tets: 0,
            dofs: 0,
            reps: cfg.reps,
            median_s: m,
            min_s: lo,
            max_s: hi,
            bytes_model: bytes,
            ..base.clone()
        }
    };
    let n4 = n / 4;
    let copy4 = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![launch(
            dev,
            &k.copy4,
            n4,
            LOCAL,
            &[Arg::U64(n4 as u64), Arg::Buf(&a), Arg::Buf(&b)],
        )?])
    })?;
    let triad4 = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![launch(
            dev,
            &k.triad4,
            n4,
            LOCAL,
            &[
                Arg::U64(n4 as u64),
                Arg::Buf(&a),
                Arg::Buf(&b),
                Arg::Buf(&c),
                Arg::Real(T::of(1.5)),
            ],
        )?])
    })?;
    let mut rows = vec![
        mk("copy", copy, 2.0 * (n * s) as f64),
        mk("triad", triad, 3.0 * (n * s) as f64),
        mk("copy", copy4, 2.0 * (n * s) as f64),
        mk("triad", triad4, 3.0 * (n * s) as f64),
    ];
    rows[2].variant = "stream_vec4".into();
    rows[3].variant = "stream_vec4".into();
    let ceiling = rows[0].gbs().max(rows[2].gbs());
    for r in rows.iter_mut() {
        r.frac_copy_bw = r.gbs() / ceiling;
    }
    rows.push(fma_row::<T>(dev, &k, cfg, base, ceiling)?);
    rows.sort_by(|a, b| {
        (b.kernel == "copy")
            .cmp(&(a.kernel == "copy"))
            .then(b.gbs().total_cmp(&a.gbs()))
    });
    Ok(rows)
}

/// The floating-point peak of a device in precision T (`fma_peak`: 16 flops per work-item
/// and iteration): the iteration count is scaled from a short calibration launch so that
/// one launch takes about 20 ms, on enough work-items to fill any device.
fn fma_row<T: Real>(
    dev: &Arc<ClDevice>,
    k: &opencl::Kernels,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Row> {
    let n = (dev.info.compute_units.max(1) as usize * 4096).clamp(1 << 16, 1 << 22);
    let out = dev.alloc::<T>(n, "fma probe")?;
    let go = |iters: u32| {
        launch(
            dev,
            &k.fma_peak,
            n,
            LOCAL,
            &[
                Arg::U32(n as u32),
                Arg::U32(iters),
                Arg::Real(T::of(0.999_999)),
                Arg::Real(T::of(1e-7)),
                Arg::Buf(&out),
            ],
        )
    };
    let probe = time_events(dev, 1, 3, || Ok(vec![go(64)?]))?;
    let per_iter = stats(probe).0 / 64.0;
    let iters = ((0.02 / per_iter.max(1e-12)) as u32).clamp(64, 1 << 16);
    let times = time_events(dev, 1, cfg.reps.min(10), || Ok(vec![go(iters)?]))?;
    let bytes = (n * std::mem::size_of::<T>()) as f64;
    let mut r = Row::timed(base, "fma", "peak", (0, 0), times, bytes, copy_gbs);
    r.flops_model = 16.0 * n as f64 * iters as f64;
    Ok(r)
}

/// The roofs of each (device, precision) seen so far in a bench's rows (the best copy
/// GB/s and the `fma` row's GFLOP/s), for the `frac_roof` column: a row's modelled time at
/// its binding roof, `max(bytes / copy, flops / peak)`, over its measured median.
#[derive(Default)]
pub struct Roofs {
    seen: Vec<(String, String, f64, f64)>,
}

impl Roofs {
    /// Records the roofs a probe row (copy, fma) carries.
    pub fn note(&mut self, r: &Row) {
        let i = match self
            .seen
            .iter()
            .position(|x| x.0 == r.device && x.1 == r.precision)
        {
            Some(i) => i,
            None => {
                self.seen
                    .push((r.device.clone(), r.precision.clone(), 0.0, 0.0));
                self.seen.len() - 1
            }
        };
        if r.kernel == "copy" {
            self.seen[i].2 = self.seen[i].2.max(r.gbs());
        } else if r.kernel == "fma" {
            self.seen[i].3 = self.seen[i].3.max(r.gflops());
        }
    }

    /// `frac_roof` of a row (0 where no roof is known or the row is a probe).
    pub fn frac(&self, r: &Row) -> f64 {
        let Some(x) = self
            .seen
            .iter()
            .find(|x| x.0 == r.device && x.1 == r.precision)
        else {
            return 0.0;
        };
        if r.kernel == "copy" || r.kernel == "fma" || r.median_s <= 0.0 {
            return if r.kernel == "fma" {
                1.0
            } else {
                r.frac_copy_bw
            };
        }
        let t_bw = if x.2 > 0.0 {
            r.bytes_model / (x.2 * 1e9)
        } else {
            0.0
        };
        let t_fl = if x.3 > 0.0 {
            r.flops_model / (x.3 * 1e9)
        } else {
            0.0
        };
        t_bw.max(t_fl) / r.median_s
    }
}

/// Times of the factored step (primal, circulation, vertex blocks) in `s`'s variants.
fn step_times<T: Real>(dev: &ClDevice, w: usize, n: usize, s: &ClStepper<T>) -> Result<Vec<f64>> {
    time_events(dev, w, n, || {
        Ok(vec![
            s.primal_update()?,
            s.circulation()?,
            s.vertex_blocks()?,
        ])
    })
}

/// Meshes up to this many tets also run renumbered (the `…_morton` and `…_shuffled` step
/// rows): the renumbered mesh's operators are a second `Dga` in host memory.
const LOCALITY_MAX_TETS: usize = 21_000_000;

/// The main job's step (slot-major U, the default kernels: the row
/// `tet_sym_slot+factored_sym_slot`) on `dga`, a renumbering of the ladder's box
/// ([`dgatd::mesh::order`]): row `tet_sym_slot+factored_sym_slot_{order}`, the same byte
/// model (the same counts).
fn locality_rows<T: Real>(
    dev: &Arc<ClDevice>,
    dga: &Arc<Dga>,
    order: &str,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Vec<Row>> {
    let mut s = ClStepper::<T>::new(dev.clone(), dga.clone(), DualForm::Factored, None, &[])?;
    s.set_time_step(1e-3, None)?;
    let mut r = dgatd::util::Rng::new(5);
    // the PEC half-edges at zero, as in any physical state (slot-major U needs it)
    let u: Vec<f64> = (0..2 * dga.n_edges)
        .map(|h| if dga.free_edge[h / 2] { r.sym() } else { 0.0 })
        .collect();
    let f: Vec<f64> = (0..4 * dga.n_tets).map(|_| r.sym()).collect();
    dgatd::backend::Stepper::set_state(&mut s, &u, &f)?;
    s.set_u_layout(opencl::ULayout::SlotMajor)?;
    let by = cost::kernel_bytes(&dga.counts(), std::mem::size_of::<T>(), 0);
    let bytes = by.primal_sym + 8.0 * dga.n_edges as f64 + by.circulation + by.vertex_block_sym;
    let times = step_times(dev, cfg.warmup, cfg.reps, &s)?;
    let size = (dga.n_tets, dga.counts().dofs());
    let variant = format!("tet_sym_slot+factored_sym_slot_{order}");
    Ok(vec![Row::timed(
        base, "step", &variant, size, times, bytes, copy_gbs,
    )])
}

/// All kernel rows of one OpenCL device, precision and mesh.
fn device_rows<T: Real>(
    dev: &Arc<ClDevice>,
    dga: &Arc<Dga>,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Vec<Row>> {
    let with_csr = dga.n_tets <= cfg.csr_max_tets;
    let dual = if with_csr {
        DualForm::Csr
    } else {
        DualForm::Factored
    };
    let mut s = ClStepper::<T>::new(dev.clone(), dga.clone(), dual, None, &[])?;
    s.set_time_step(1e-3, None)?;
    let (u, f) = {
        let mut r = dgatd::util::Rng::new(5);
        let u: Vec<f64> = (0..2 * dga.n_edges).map(|_| r.sym()).collect();
        let f: Vec<f64> = (0..4 * dga.n_tets).map(|_| r.sym()).collect();
        (u, f)
    };
    dgatd::backend::Stepper::set_state(&mut s, &u, &f)?;
    let nnz = s.csr_nnz() as u64;
    let by = cost::kernel_bytes(&dga.counts(), std::mem::size_of::<T>(), nnz);
    let dofs = dga.counts().dofs();
    let mut rows = Vec::new();
    let mut push = |kernel: &str, variant: &str, v: Vec<f64>, bytes: f64| {
        let size = (dga.n_tets, dofs);
        rows.push(Row::timed(base, kernel, variant, size, v, bytes, copy_gbs));
    };
    let (w, n) = (cfg.warmup, cfg.reps);
    // The default, symmetric layouts first; then the full ones (the stepper keeps one
    // layout resident and rebuilds the operator when a variant needs the other).
    let sym_v = Variants::default();
    s.set_variants(sym_v)?;
    push(
        "primal",
        PrimalVariant::Sym.name(),
        time_events(dev, w, n, || Ok(vec![s.primal_update()?]))?,
        by.primal_sym,
    );
    // the circulations: the lists of one signed index per entry (`circulation`), then the
    // paired lists (`circulation_pair`), the default of every row below
    s.set_variants(Variants {
        circ: CircVariant::Lists,
        ..sym_v
    })?;
    push(
        "dual_factored",
        CircVariant::Lists.name(),
        time_events(dev, w, n, || Ok(vec![s.circulation()?]))?,
        by.circulation_list,
    );
    s.set_variants(sym_v)?;
    push(
        "dual_factored",
        CircVariant::Paired.name(),
        time_events(dev, w, n, || Ok(vec![s.circulation()?]))?,
        by.circulation,
    );
    push(
        "dual_factored",
        BlockVariant::Packed.name(),
        time_events(dev, w, n, || Ok(vec![s.vertex_blocks()?]))?,
        by.vertex_block_sym,
    );
    push(
        "dual_factored",
        "both_sym",
        time_events(dev, w, n, || Ok(vec![s.circulation()?, s.vertex_blocks()?]))?,
        by.circulation + by.vertex_block_sym,
    );
    push(
        "step",
        "tet_sym+factored_sym",
        step_times(dev, w, n, &s)?,
        by.primal_sym + by.circulation + by.vertex_block_sym,
    );
    // Bench variants of the default layouts, each as primal, dual and step rows named
    // `tet_sym{x}`, `vertex_block_sym{x}`, `tet_sym{x}+factored_sym{x}`:
    // - `_mixed` (f64 only): mixed storage, the same operators stored in f32 with f64 fields
    //   (not a default: it does not match the f64 reference to round-off);
    // - `_slot`, `_slot_mixed`: slot-major U, the free half-edges' DoFs in the dual's slot
    //   order (the vertex-block update reads and writes them coalesced; the primal gathers
    //   each edge's halves through a slot table, 8 more bytes per edge).
    {
        let saved = std::mem::size_of::<T>() as f64 - 4.0;
        let (prim_saved, blk_saved) = (
            10.0 * dga.n_tets as f64 * saved,
            dga.counts().packed as f64 * saved,
        );
        let slot_table = 8.0 * dga.n_edges as f64;
        let mut table_rows: Vec<(&str, String, Vec<f64>, f64)> = Vec::new();
        let mut rows3 = |x: &str,
                         primal: &dyn Fn() -> Result<opencl3::event::Event>,
                         block: &dyn Fn() -> Result<opencl3::event::Event>,
                         (bp, bb): (f64, f64)|
         -> Result<()> {
            let primal_v = format!("tet_sym{x}");
            push(
                "primal",
                &primal_v,
                time_events(dev, w, n, || Ok(vec![primal()?]))?,
                bp,
            );
            push(
                "dual_factored",
                &format!("vertex_block_sym{x}"),
                time_events(dev, w, n, || Ok(vec![block()?]))?,
                bb,
            );
            push(
                "step",
                &format!("{primal_v}+factored_sym{x}"),
                time_events(dev, w, n, || {
                    Ok(vec![primal()?, s.circulation()?, block()?])
                })?,
                bp + by.circulation + bb,
            );
            Ok(())
        };
        if T::NAME == "f64" {
            let m = s.mixed_operators()?;
            rows3(
                "_mixed",
                &|| s.primal_update_mixed(&m),
                &|| s.vertex_blocks_mixed(&m),
                (by.primal_sym - prim_saved, by.vertex_block_sym - blk_saved),
            )?;
        }
        for mixed in [false, true] {
            if mixed && T::NAME != "f64" {
                continue;
            }
            let sm = s.slot_major(mixed)?;
            s.to_slot_major(&sm)?;
            let (x, bytes) = if mixed {
                (
                    "_slot_mixed",
                    (
                        by.primal_sym + slot_table - prim_saved,
                        by.vertex_block_sym - blk_saved,
                    ),
                )
            } else {
                ("_slot", (by.primal_sym + slot_table, by.vertex_block_sym))
            };
            rows3(
                x,
                &|| s.primal_update_sm(&sm),
                &|| s.vertex_blocks_sm(&sm),
                bytes,
            )?;
            // the primal through a per-tet slot table (48 bytes per tet instead of the 24
            // of the edge ids and the 8 per edge of the half-edge slots), the same dual
            let mut sm = sm;
            s.slot_table(&mut sm)?;
            let bp = bytes.0 + 24.0 * dga.n_tets as f64 - slot_table;
            let primal_v = format!("tet_sym{x}_tet");
            table_rows.push((
                "primal",
                primal_v.clone(),
                time_events(dev, w, n, || Ok(vec![s.primal_update_st(&sm)?]))?,
                bp,
            ));
            table_rows.push((
                "step",
                format!("{primal_v}+factored_sym{x}"),
                time_events(dev, w, n, || {
                    Ok(vec![
                        s.primal_update_st(&sm)?,
                        s.circulation()?,
                        s.vertex_blocks_sm(&sm)?,
                    ])
                })?,
                bp + by.circulation + bytes.1,
            ));
        }
        // the circulations through sliced ELL lists, alone and in the fastest exact step
        // (the slot-table primal, slot-major blocks); its lists are read with their padding
        let sell = s.sell_circulation()?;
        let by_sell = by.circulation_list + 4.0 * (sell.entries as f64 - dga.circ.len() as f64);
        table_rows.push((
            "dual_factored",
            "circulation_sell".into(),
            time_events(dev, w, n, || Ok(vec![s.circulation_sell(&sell)?]))?,
            by_sell,
        ));
        let mut sm = s.slot_major(false)?;
        s.slot_table(&mut sm)?;
        s.to_slot_major(&sm)?;
        let bp = by.primal_sym + 24.0 * dga.n_tets as f64;
        table_rows.push((
            "step",
            "tet_sym_slot_tet+factored_sym_slot_sell".into(),
            time_events(dev, w, n, || {
                Ok(vec![
                    s.primal_update_st(&sm)?,
                    s.circulation_sell(&sell)?,
                    s.vertex_blocks_sm(&sm)?,
                ])
            })?,
            bp + by_sell + by.vertex_block_sym,
        ));
        // the paired lists (the default) in sliced ELL form, alone and in that step
        {
            let pc = s.pair_circulation(true)?;
            let pairs = dga.circ.len() as f64 / 2.0;
            let by_pair = by.circulation + 4.0 * (pc.entries as f64 - pairs);
            let x = "_pair_sell";
            table_rows.push((
                "dual_factored",
                format!("circulation{x}"),
                time_events(dev, w, n, || Ok(vec![s.circulation_pair(&pc)?]))?,
                by_pair,
            ));
            table_rows.push((
                "step",
                format!("tet_sym_slot_tet+factored_sym_slot{x}"),
                time_events(dev, w, n, || {
                    Ok(vec![
                        s.primal_update_st(&sm)?,
                        s.circulation_pair(&pc)?,
                        s.vertex_blocks_sm(&sm)?,
                    ])
                })?,
                bp + by_pair + by.vertex_block_sym,
            ));
        }
        for (kernel, variant, v, bytes) in table_rows {
            push(kernel, &variant, v, bytes);
        }
    }
    let base_v = Variants {
        primal: PrimalVariant::Tet,
        block: BlockVariant::Vertex,
        ..sym_v
    };
    s.set_variants(base_v)?;
    push(
        "primal",
        PrimalVariant::Tet.name(),
        time_events(dev, w, n, || Ok(vec![s.primal_update()?]))?,
        by.primal,
    );
    push(
        "dual_factored",
        BlockVariant::Vertex.name(),
        time_events(dev, w, n, || Ok(vec![s.vertex_blocks()?]))?,
        by.vertex_block,
    );
    push(
        "dual_factored",
        "both",
        time_events(dev, w, n, || Ok(vec![s.circulation()?, s.vertex_blocks()?]))?,
        by.circulation + by.vertex_block,
    );
    push(
        "step",
        "tet+factored",
        step_times(dev, w, n, &s)?,
        by.primal + by.circulation + by.vertex_block,
    );
    if with_csr {
        {
            s.set_variants(Variants {
                csr: CsrVariant::Vector,
                ..base_v
            })?;
            let name = "vector";
            push(
                "dual_csr",
                name,
                time_events(dev, w, n, || Ok(vec![s.csr_update()?]))?,
                by.csr,
            );
            push(
                "step",
                &format!("tet+csr_{name}"),
                time_events(dev, w, n, || Ok(vec![s.primal_update()?, s.csr_update()?]))?,
                by.primal + by.csr,
            );
        }
    }
    Ok(rows)
}

/// The CPU backend's rows (wall clock). Its copy bandwidth is measured with a parallel
/// copy of the same size as the device probe (capped at 64 Mi elements).
fn cpu_rows<T: Real>(dga: &Dga, cfg: &BenchConfig, base: &Row, copy_gbs: f64) -> Vec<Row> {
    let with_csr = dga.n_tets <= cfg.csr_max_tets;
    let ops = Operators::<T>::new(dga, 1e-3, with_csr);
    let mut r = dgatd::util::Rng::new(5);
    let u: Vec<T> = (0..2 * dga.n_edges).map(|_| T::of(r.sym())).collect();
    let mut uo = u.clone();
    let mut f: Vec<T> = (0..4 * dga.n_tets).map(|_| T::of(r.sym())).collect();
    let mut c = vec![T::zero(); dga.n_edges];
    let nnz = ops.csr.as_ref().map(|m| m.nnz() as u64).unwrap_or(0);
    let by = cost::kernel_bytes(&dga.counts(), std::mem::size_of::<T>(), nnz);
    let dofs = dga.counts().dofs();
    let (w, n) = (cfg.warmup, cfg.reps);
    let mut rows = Vec::new();
    let mut push = |kernel: &str, variant: &str, v: Vec<f64>, bytes: f64| {
        let size = (dga.n_tets, dofs);
        rows.push(Row::timed(base, kernel, variant, size, v, bytes, copy_gbs));
    };
    push(
        "primal",
        "tet",
        time_wall(w, n, || cpu::primal(&ops, &u, &mut f)),
        by.primal,
    );
    push(
        "dual_factored",
        "both",
        time_wall(w, n, || {
            cpu::circulations(&ops, &f, &mut c);
            cpu::vertex_blocks(&ops, &c, &mut uo)
        }),
        by.circulation_list + by.vertex_block,
    );
    push(
        "step",
        "tet+factored",
        time_wall(w, n, || {
            cpu::primal(&ops, &uo, &mut f);
            cpu::circulations(&ops, &f, &mut c);
            cpu::vertex_blocks(&ops, &c, &mut uo)
        }),
        by.primal + by.circulation_list + by.vertex_block,
    );
    // the lean layouts (the stepper's default, dgatd::backend::cpu::lean)
    if let Ok(l) = cpu::Lean::new(dga, &ops, true) {
        let mut y = l.scratch();
        push(
            "primal",
            "tet_lean",
            time_wall(w, n, || lean::primal(&ops, &l, &u, &mut f)),
            by.primal_sym,
        );
        push(
            "dual_factored",
            "lean",
            time_wall(w, n, || {
                lean::circulations(&ops, &l, &f, &mut c);
                lean::vertex_blocks(&l, &c, &mut y, &mut uo)
            }),
            by.circulation_list + by.vertex_block_lean,
        );
        push(
            "step",
            "tet_lean+factored_lean",
            time_wall(w, n, || {
                lean::primal(&ops, &l, &uo, &mut f);
                lean::circulations(&ops, &l, &f, &mut c);
                lean::vertex_blocks(&l, &c, &mut y, &mut uo)
            }),
            by.primal_sym + by.circulation_list + by.vertex_block_lean,
        );
    }
    if with_csr {
        push(
            "dual_csr",
            "rows",
            time_wall(w, n, || cpu::dual_csr(&ops, &f, &mut uo)),
            by.csr,
        );
        push(
            "step",
            "tet+csr_rows",
            time_wall(w, n, || {
                cpu::primal(&ops, &uo, &mut f);
                cpu::dual_csr(&ops, &f, &mut uo)
            }),
            by.primal + by.csr,
        );
        if let Ok(l) = cpu::Lean::new(dga, &ops, false) {
            push(
                "step",
                "tet_lean+csr_rows",
                time_wall(w, n, || {
                    lean::primal(&ops, &l, &uo, &mut f);
                    cpu::dual_csr(&ops, &f, &mut uo)
                }),
                by.primal_sym + by.csr,
            );
        }
    }
    rows
}

fn cpu_stream<T: Real>(cfg: &BenchConfig, base: &Row) -> Row {
    use rayon::prelude::*;
    let n = cfg.stream_elems.min(64 << 20);
    let a: Vec<T> = (0..n).map(|i| T::of(i as f64)).collect();
    let mut b = vec![T::zero(); n];
    let v = time_wall(cfg.warmup.max(1), cfg.reps.min(20), || {
        b.par_chunks_mut(1 << 16)
            .zip(a.par_chunks(1 << 16))
            .for_each(|(x, y)| x.copy_from_slice(y))
    });
    let (m, lo, hi) = stats(v);
    Row {
        kernel: "copy".into(),
        variant: "stream".into(),
        tets: 0,
        dofs: 0,
        reps: cfg.reps.min(20),
        median_s: m,
        min_s: lo,
        max_s: hi,
        bytes_model: 2.0 * (n * std::mem::size_of::<T>()) as f64,
        frac_copy_bw: 1.0,
        ..base.clone()
    }
}

/// Runs the benchmark; `report(row)` is called as rows complete (for progress and for
/// writing the CSV incrementally, so a long run never loses what it measured).
pub fn run(
    cfg: &BenchConfig,
    report: &mut dyn FnMut(&Row) -> Result<()>,
    log: &mut dyn FnMut(&str),
) -> Result<()> {
    let mut devices: Vec<Arc<ClDevice>> = Vec::new();
    if !cfg.devices.is_empty() {
        let all = opencl::list_devices()?;
        let chosen: Vec<opencl::DeviceInfo> = if cfg.devices.iter().any(|d| d == "all") {
            all
        } else {
            cfg.devices
                .iter()
                .map(|d| opencl::select_device(Some(d)))
                .collect::<Result<_>>()?
        };
        for d in chosen {
            devices.push(ClDevice::open(d)?);
        }
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let cpu_name = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|x| x.trim().to_string())
        })
        .unwrap_or_else(|| "cpu".into());
    let _ = host;
    // Bandwidth ceilings first.
    let mut copy_bw: Vec<(String, String, f64)> = Vec::new(); // (device key, precision, GB/s)
    let base_for = |platform: &str, device: &str, driver: &str, p: &str| Row {
        platform: platform.into(),
        device: device.into(),
        driver: driver.into(),
        precision: p.into(),
        kernel: String::new(),
        variant: String::new(),
        tets: 0,
        dofs: 0,
        reps: 0,
        median_s: 0.0,
        min_s: 0.0,
        max_s: 0.0,
        bytes_model: 0.0,
        frac_copy_bw: 0.0,
        flops_model: 0.0,
    };
    let cpu_driver = format!("rayon {} threads", rayon::current_num_threads());
    for p in &cfg.precisions {
        for d in &devices {
            if p == "f64" && !d.info.fp64 {
                log(&format!("skip f64 on {}: no fp64", d.info.name));
                continue;
            }
            let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
            let rows = if p == "f64" {
                stream_rows::<f64>(d, cfg, &base)?
            } else {
                stream_rows::<f32>(d, cfg, &base)?
            };
            log(&format!(
                "{} {p}: copy ceiling {:.1} GB/s ({})",
                d.info.name,
                rows[0].gbs(),
                rows[0].variant
            ));
            copy_bw.push((d.info.name.clone(), p.clone(), rows[0].gbs()));
            for r in &rows {
                report(r)?;
            }
        }
        if cfg.cpu {
            let base = base_for("cpu-backend", &cpu_name, &cpu_driver, p);
            let c = if p == "f64" {
                cpu_stream::<f64>(cfg, &base)
            } else {
                cpu_stream::<f32>(cfg, &base)
            };
            log(&format!("cpu backend {p}: copy {:.1} GB/s", c.gbs()));
            copy_bw.push(("cpu-backend".into(), p.clone(), c.gbs()));
            report(&c)?;
        }
    }
    let bw = |dev: &str, p: &str| {
        copy_bw
            .iter()
            .find(|x| x.0 == dev && x.1 == p)
            .map(|x| x.2)
            .unwrap_or(f64::NAN)
    };
    for &size in &cfg.sizes {
        let t0 = Instant::now();
        let mesh = ladder_box(size);
        let topo = Topology::build(&mesh)?;
        let t1 = Instant::now();
        let vacuum = Media::vacuum(mesh.n_tets());
        let free: Vec<bool> = topo.boundary_edge.iter().map(|&b| !b).collect();
        let masses = host_masses(&mesh, &topo, &vacuum, true, &free, None, None)?;
        let masses_s = t1.elapsed().as_secs_f64();
        // Lean: the benchmark never evaluates the energy, and this halves peak host memory.
        let dga = Arc::new(Dga::from_masses(&mesh, &topo, &vacuum, free, None, masses)?);
        let pre_s = t0.elapsed().as_secs_f64();
        log(&format!(
            "mesh {} tets, {} DoFs: preprocessing {pre_s:.1} s (mesh and topology {:.2} s, \
             masses and inverses {masses_s:.2} s)",
            dga.n_tets,
            4 * dga.n_tets + dga.n_free_half(),
            (t1 - t0).as_secs_f64(),
        ));
        // the host assembly (topology, masses, inverses), once per mesh: one row
        let base = base_for("host", &cpu_name, &cpu_driver, "f64");
        report(&Row::preprocess(
            &base,
            "host",
            (dga.n_tets, dga.counts().dofs()),
            vec![pre_s],
        ))?;
        // The masses and their inverses alone, on the host and on each fp64 device: the
        // scope of `backend::device_assembly`.
        report(&Row::preprocess(
            &base,
            "host_masses",
            (dga.n_tets, dga.counts().dofs()),
            vec![masses_s],
        ))?;
        // The CSR form's matrix on the host from its masses (`host_csr`), where the CSR
        // variant runs at all: the reference of the `device_csr` rows.
        let csr_host = if dga.n_tets <= cfg.csr_max_tets {
            let mut times = Vec::new();
            let mut m = None;
            for _ in 0..cfg.reps.clamp(1, 3) {
                let t = Instant::now();
                m = Some(dgatd::dga::operators::build_csr(&dga, CSR_DT));
                times.push(t.elapsed().as_secs_f64());
            }
            report(&Row::preprocess(
                &base,
                "host_csr",
                (dga.n_tets, dga.counts().dofs()),
                times,
            ))?;
            m
        } else {
            None
        };
        for d in devices.iter().filter(|d| d.info.fp64) {
            let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, "f64");
            let rows = device_assembly_rows(d, &mesh, &topo, &vacuum, &dga, cfg, &base, log);
            emit(
                rows,
                report,
                log,
                &format!("device assembly of {} tets on {}", dga.n_tets, d.info.name),
            )?;
            if let Some(want) = &csr_host {
                let rows = device_csr_rows(d, &mesh, &topo, &vacuum, &dga, want, cfg, &base, log);
                emit(
                    rows,
                    report,
                    log,
                    &format!("device CSR of {} tets on {}", dga.n_tets, d.info.name),
                )?;
            }
            for p in &cfg.precisions {
                let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
                let rows = if p == "f64" {
                    resident_rows::<f64>(d, &mesh, &topo, &vacuum, &dga, cfg, &base, log)
                } else {
                    resident_rows::<f32>(d, &mesh, &topo, &vacuum, &dga, cfg, &base, log)
                };
                emit(
                    rows,
                    report,
                    log,
                    &format!(
                        "resident {p} assembly of {} tets on {}",
                        dga.n_tets, d.info.name
                    ),
                )?;
                if let Some(want) = &csr_host {
                    let rows = if p == "f64" {
                        resident_csr_rows::<f64>(
                            d, &mesh, &topo, &vacuum, &dga, want, cfg, &base, log,
                        )
                    } else {
                        resident_csr_rows::<f32>(
                            d, &mesh, &topo, &vacuum, &dga, want, cfg, &base, log,
                        )
                    };
                    emit(
                        rows,
                        report,
                        log,
                        &format!("resident {p} CSR of {} tets on {}", dga.n_tets, d.info.name),
                    )?;
                }
            }
        }
        // the main job's step on the same box renumbered: along a Z-order curve, and at
        // random (issue 19's locality-ordering route; the generator's order is already
        // local: cells in lexicographic order, edges numbered by first appearance)
        if !devices.is_empty() && mesh.n_tets() <= LOCALITY_MAX_TETS {
            for (order, m) in [
                ("morton", mesh.morton_ordered()),
                ("shuffled", mesh.shuffled(0x5eed)),
            ] {
                let t = Topology::build(&m)?;
                let d = Arc::new(Dga::assemble_with(
                    &m,
                    &t,
                    &Media::vacuum(m.n_tets()),
                    &t.boundary_edge,
                    true,
                )?);
                drop((m, t));
                for p in &cfg.precisions {
                    for dev in devices.iter().filter(|x| p != "f64" || x.info.fp64) {
                        let base =
                            base_for(&dev.info.platform, &dev.info.name, &dev.info.driver, p);
                        let cb = bw(&dev.info.name, p);
                        let rows = if p == "f64" {
                            locality_rows::<f64>(dev, &d, order, cfg, &base, cb)
                        } else {
                            locality_rows::<f32>(dev, &d, order, cfg, &base, cb)
                        };
                        emit(
                            rows,
                            report,
                            log,
                            &format!("{} tets ({order} order) on {} {p}", d.n_tets, dev.info.name),
                        )?;
                    }
                }
            }
        }
        drop((mesh, topo, vacuum));
        for p in &cfg.precisions {
            for d in &devices {
                if p == "f64" && !d.info.fp64 {
                    continue;
                }
                let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
                let cb = bw(&d.info.name, p);
                let rows = if p == "f64" {
                    device_rows::<f64>(d, &dga, cfg, &base, cb)
                } else {
                    device_rows::<f32>(d, &dga, cfg, &base, cb)
                };
                emit(
                    rows,
                    report,
                    log,
                    &format!("{} tets on {} {p}", dga.n_tets, d.info.name),
                )?;
            }
            if cfg.cpu && dga.n_tets <= cfg.cpu_max_tets {
                let base = base_for("cpu-backend", &cpu_name, &cpu_driver, p);
                let cb = bw("cpu-backend", p);
                let rows = if p == "f64" {
                    cpu_rows::<f64>(&dga, cfg, &base, cb)
                } else {
                    cpu_rows::<f32>(&dga, cfg, &base, cb)
                };
                for r in &rows {
                    report(r)?;
                }
            }
        }
        if !cfg.dispersion.is_empty() || !cfg.losses.is_empty() {
            let per_dev: Vec<super::bench_core::DeviceBases> = devices
                .iter()
                .map(|d| {
                    let per = (cfg.precisions.iter())
                        .filter(|p| *p != "f64" || d.info.fp64)
                        .map(|p| {
                            let b = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
                            (b, bw(&d.info.name, p))
                        })
                        .collect();
                    (d.clone(), per)
                })
                .collect();
            let cpu: Vec<(Row, f64)> = if cfg.cpu {
                (cfg.precisions.iter())
                    .map(|p| {
                        let b = base_for("cpu-backend", &cpu_name, &cpu_driver, p);
                        (b, bw("cpu-backend", p))
                    })
                    .collect()
            } else {
                vec![]
            };
            if !cfg.dispersion.is_empty() {
                super::bench_disp::rows_at(
                    size,
                    &cfg.dispersion,
                    cfg,
                    &per_dev,
                    &cpu,
                    report,
                    log,
                )?;
            }
            if !cfg.losses.is_empty() {
                super::bench_loss::rows_at(size, &cfg.losses, cfg, &per_dev, &cpu, report, log)?;
            }
        }
        // DG rows: each operator built once, then timed in every precision.
        if dga.n_tets <= cfg.dg_max_tets && !cfg.dg_orders.is_empty() {
            let mesh = ladder_box(size);
            let k = mesh.n_tets();
            for &order in &cfg.dg_orders {
                let op = Arc::new(dgatd::dg::DgOperator::new(
                    &mesh,
                    order,
                    dgatd::dg::Flux::Upwind,
                    &vec![1.0; k],
                    &vec![1.0; k],
                )?);
                for p in &cfg.precisions {
                    for d in &devices {
                        if p == "f64" && !d.info.fp64 {
                            continue;
                        }
                        let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
                        let cb = bw(&d.info.name, p);
                        let rows = if p == "f64" {
                            dg_device_rows::<f64>(d, &op, cfg, &base, cb)
                        } else {
                            dg_device_rows::<f32>(d, &op, cfg, &base, cb)
                        };
                        emit(
                            rows,
                            report,
                            log,
                            &format!("DG N={order} on {} {p}", d.info.name),
                        )?;
                    }
                    if cfg.cpu && p == "f64" && k <= cfg.cpu_max_tets {
                        let base = base_for("cpu-backend", &cpu_name, &cpu_driver, p);
                        report(&dg_cpu_row(&op, cfg, &base, bw("cpu-backend", p)))?;
                    }
                }
            }
        }
    }
    Ok(())
}

fn dg_device_rows<T: Real>(
    dev: &Arc<ClDevice>,
    op: &Arc<dgatd::dg::DgOperator>,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Vec<Row>> {
    use dgatd::backend::Stepper;
    let mut s =
        dgatd::dg::opencl::DgClStepper::<T>::new(dev.clone(), op.clone(), 1e-3, None, vec![])?;
    let mut r = dgatd::util::Rng::new(9);
    let q: Vec<f64> = (0..op.n_dofs()).map(|_| r.sym()).collect();
    s.set_state(&q, &[])?;
    let real = std::mem::size_of::<T>();
    let [(fb, ff), (ub, uf)] = cost::dg_kernels(&op.counts(), real);
    let variant = format!("N={}", op.re.n);
    let mut rows = vec![];
    let mut push = |kernel: &str, suffix: &str, v: Vec<f64>, bytes: f64, flops: f64| {
        let (m, lo, hi) = stats(v);
        let mut row = Row {
            kernel: kernel.into(),
            variant: format!("{variant}{suffix}"),
            tets: op.k,
            dofs: op.n_dofs(),
            reps: cfg.reps,
            median_s: m,
            min_s: lo,
            max_s: hi,
            bytes_model: bytes,
            flops_model: flops,
            ..base.clone()
        };
        row.frac_copy_bw = row.gbs() / copy_gbs;
        rows.push(row);
    };
    // Each kernel timed by its own profiling event (both are launched every time).
    let flux = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![s.stage_events(1, 0.0)?.0])
    })?;
    let upd = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![s.stage_events(1, 0.0)?.1])
    })?;
    push("dg_flux", "", flux, fb, ff);
    push("dg_update", "", upd, ub, uf);
    // The other update kernels, each as its own row (`N=k+node`, `N=k+blocked`, `N=k+resident`,
    // `N=k+paired`).
    use dgatd::dg::opencl::DgUpdate;
    let default = s.update();
    for u in DgUpdate::ALL {
        if u == default || s.set_update(u).is_err() {
            continue;
        }
        let t = time_events(dev, cfg.warmup, cfg.reps, || {
            Ok(vec![s.stage_events(1, 0.0)?.1])
        })?;
        push("dg_update", &format!("+{}", u.name()), t, ub, uf);
    }
    s.set_update(default)?;
    let step = time_events(dev, cfg.warmup, cfg.reps, || {
        let mut ev = vec![];
        for st in 0..5 {
            let (a, b) = s.stage_events(st, 0.0)?;
            ev.push(a);
            ev.push(b);
        }
        Ok(ev)
    })?;
    push("dg_step", "", step, 5.0 * (fb + ub), 5.0 * (ff + uf));
    Ok(rows)
}

fn dg_cpu_row(
    op: &Arc<dgatd::dg::DgOperator>,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Row {
    let mut s = dgatd::dg::cpu::DgCpuStepper::new(op.clone(), 1e-3, None, vec![]);
    let mut r = dgatd::util::Rng::new(9);
    s.q.iter_mut().for_each(|x| *x = r.sym());
    for _ in 0..cfg.warmup {
        s.step(0.0);
    }
    let v: Vec<f64> = (0..cfg.reps)
        .map(|_| {
            let t = Instant::now();
            s.step(0.0);
            t.elapsed().as_secs_f64()
        })
        .collect();
    let [(fb, ff), (ub, uf)] = cost::dg_kernels(&op.counts(), 8);
    let (m, lo, hi) = stats(v);
    let mut row = Row {
        kernel: "dg_step".into(),
        variant: format!("N={}", op.re.n),
        tets: op.k,
        dofs: op.n_dofs(),
        reps: cfg.reps,
        median_s: m,
        min_s: lo,
        max_s: hi,
        bytes_model: 5.0 * (fb + ub),
        flops_model: 5.0 * (ff + uf),
        ..base.clone()
    };
    row.frac_copy_bw = row.gbs() / copy_gbs;
    row
}

/// Reports the rows of one device measurement; a mesh too large for the device is logged and
/// skipped, any other error ends the bench.
/// Formats a row as CSV fields in [`COLUMNS`] order.
pub fn csv_fields(r: &Row, timestamp: &str, host: &str, roofs: &Roofs) -> Vec<String> {
    vec![
        timestamp.to_string(),
        dgatd::report::COMMIT.to_string(),
        host.to_string(),
        r.platform.clone(),
        r.device.clone(),
        r.driver.clone(),
        r.precision.clone(),
        r.kernel.clone(),
        r.variant.clone(),
        r.tets.to_string(),
        r.dofs.to_string(),
        r.reps.to_string(),
        format!("{:.6e}", r.median_s),
        format!("{:.6e}", r.min_s),
        format!("{:.6e}", r.max_s),
        format!("{:.6e}", r.bytes_model),
        format!("{:.3}", r.gbs()),
        format!("{:.4}", r.frac_copy_bw),
        format!("{:.4}", r.gdofs()),
        format!("{:.6e}", r.flops_model),
        format!("{:.3}", r.gflops()),
        format!("{:.4}", roofs.frac(r)),
    ]
}
