//! The mass operators assembled on an OpenCL device (issue 19; seed 003's assembly on the
//! GPU): `Mmu_n`, `Mmu_n⁻¹` per tet and `Meps_v`, `Meps_v⁻¹` per vertex, by the kernels of
//! `cl/assembly/assemble.cl`, in double precision and in the host's layouts ([`Masses`]), so the
//! rest of [`Dga`] (conduction, dispersion, dual circulations, orientation bits) is
//! completed on the host by [`Dga::from_masses`].
//!
//! What stays on the host: the topology, the vertex → tet incidence and the block layout
//! (which half-edges a vertex block holds), all integer work linear in the mesh
//! ([`vertex_tets`], [`block_layout`]). The device does the floating-point part: for every
//! tet the four hexahedral Gram inverses `μ |tet|/4 (GᵀG)⁻¹` summed into `Mmu_n` and its
//! Cholesky inverse; for every vertex the hexahedral `ε |tet|/4 (GᵀG)⁻¹` of its tets summed
//! into the `d × d` block, factored and inverted in place (one work-item per tet or vertex).
//! For the CSR form, [`csr`] computes the values of `Δt Meps⁻¹ C̃` on the device from the
//! inverse blocks left there (the COO terms of each row grouped by column and summed); its
//! structure is built on the host ([`crate::dga::operators::csr_layout`]).
//! The sums run in the host's order (tets ascending, then the 3 × 3 entries); the 3 × 3
//! inverses use the adjugate and the block inverses an explicit Cholesky where the host
//! uses nalgebra's, so the two agree to round-off (`tests/opencl/device_assembly.rs`), not bit for
//! bit.

use super::opencl::{Arg, ClDevice, LOCAL, event_seconds, launch, tet_stride};
pub use super::opencl::{ResidentMasses, ResidentOperators};
use crate::dga::operators::csr_layout;
use crate::dga::{Dga, Masses, VertexBlocks, block_layout, dual_circulations};
use crate::error::{Error, Result};
use crate::mesh::{Mesh, Topology};
use crate::problem::Media;
use crate::real::Real;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use rayon::prelude::*;
use sprs::CsMat;
use std::time::Instant;

/// `n` copies of `x`, written by all threads: a fresh `vec![x; n]` of zeros is mapped lazily,
/// and a device read into it then faults its pages in one by one inside the driver's copy
/// (2.0 of 2.7 s for the 3.5 GB of a 10M-tet mesh on the H200, against 15 GB/s into memory
/// already touched, `results/scaling/h200x2/pcie.csv`).
fn touched<T: Copy + Send + Sync>(n: usize, x: T) -> Vec<T> {
    (0..n).into_par_iter().map(|_| x).collect()
}

/// The assembly kernels, embedded in the binary.
pub const SOURCE: &str = include_str!("../../cl/assembly/assemble.cl");

/// Where the time of one device assembly went, in seconds.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct AssemblyTimes {
    /// Host: vertex → tet incidence and the block layout.
    pub layout_s: f64,
    /// Host → device copies of the mesh, the media and the layout.
    pub upload_s: f64,
    /// The two kernels (profiling counters).
    pub kernels_s: f64,
    /// Device → host copies of the operators.
    pub download_s: f64,
    /// Wall time of the whole call (the above plus the allocations and the program build).
    pub total_s: f64,
}

/// Kernel `name` of `program`, an error naming it when absent.
fn kernel(program: &opencl3::program::Program, name: &str) -> Result<Kernel> {
    Kernel::create(program, name).map_err(|e| Error::OpenCl {
        what: format!("kernel {name}"),
        msg: e.to_string(),
    })
}

/// The compiled assembly kernels of one device.
pub struct AssemblyKernels {
    mmu: Kernel,
    meps: Kernel,
    csr: Kernel,
}

impl AssemblyKernels {
    /// Builds `cl/assembly/assemble.cl` on `dev`; an error when the device has no double precision.
    pub fn build(dev: &ClDevice) -> Result<AssemblyKernels> {
        if !dev.info.fp64 {
            return Err(Error::config(
                "assembly",
                "device",
                format!(
                    "device {} has no cl_khr_fp64 (double precision), which the operator assembly needs; assemble on the host",
                    dev.info.name
                ),
            ));
        }
        let program = dev.build_source(SOURCE, "cl/assembly/assemble.cl", "")?;
        let k = |name: &str| kernel(&program, name);
        Ok(AssemblyKernels {
            mmu: k("assemble_mmu")?,
            meps: k("assemble_meps")?,
            csr: k("csr_values")?,
        })
    }
}

/// The packing kernels of `cl/assembly/pack.cl` for precision `T`: the assembled f64 operators into
/// the stepper's resident layouts.
pub struct PackKernels {
    primal: Kernel,
    blocks: Kernel,
    row_lengths: Kernel,
    scan_tiles: Kernel,
    scan_add: Kernel,
    csr_fill: Kernel,
    sym16: Kernel,
    real: Kernel,
}

/// The packing kernels' source, embedded in the binary.
pub const PACK_SOURCE: &str = include_str!("../../cl/assembly/pack.cl");

impl PackKernels {
    /// Builds `cl/assembly/pack.cl` for `T` on `dev` (needs double precision, as the assembly).
    pub fn build<T: Real>(dev: &ClDevice) -> Result<PackKernels> {
        let opts = format!(
            "-D REAL={}",
            if T::NAME == "f64" { "double" } else { "float" }
        );
        let program = dev.build_source(PACK_SOURCE, "cl/assembly/pack.cl", &opts)?;
        let k = |name: &str| kernel(&program, name);
        Ok(PackKernels {
            primal: k("pack_primal_sym")?,
            blocks: k("pack_blocks_tri")?,
            row_lengths: k("csr_row_lengths")?,
            scan_tiles: k("scan_tiles")?,
            scan_add: k("scan_add")?,
            csr_fill: k("csr_fill")?,
            sym16: k("pack_sym16")?,
            real: k("pack_real")?,
        })
    }
}

/// The operators of `mesh` over the `free_edge` half-edges assembled on `dev` and packed there
/// into the resident layouts in precision `T` ([`ResidentOperators`]); the f64 assembly
/// buffers are released before this returns. `kernels_s` counts the assembly and the packing
/// kernels; there is no download.
pub fn resident<T: Real>(
    dev: &ClDevice,
    k: &AssemblyKernels,
    pk: &PackKernels,
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    free_edge: &[bool],
) -> Result<(ResidentOperators<T>, AssemblyTimes)> {
    resident_with(dev, k, pk, mesh, topo, mat, free_edge, false, false)
}

/// [`resident`] (with the CSR form's matrix where `with_csr`) plus the masses themselves
/// in `T` ([`ResidentMasses`]: `Meps` full and packed, `Mmu` in columns), for a stepper over
/// a host `Dga` that holds no masses (the resonator's device assembly): the power
/// iteration and the energy checks read them there.
#[allow(clippy::too_many_arguments)]
pub fn resident_with_masses<T: Real>(
    dev: &ClDevice,
    k: &AssemblyKernels,
    pk: &PackKernels,
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    free_edge: &[bool],
    with_csr: bool,
) -> Result<(ResidentOperators<T>, AssemblyTimes)> {
    resident_with(dev, k, pk, mesh, topo, mat, free_edge, with_csr, true)
}

/// [`resident`] plus the CSR form's matrix `Δt Meps⁻¹ C̃` at unit `Δt` (what
/// [`crate::backend::opencl::ClStepper`] uploads for [`crate::backend::DualForm::Csr`]),
/// built on the device in the stepper's layout (`cl/assembly/pack.cl`: the row lengths, their scan
/// into the row pointers, the columns as F slots and the values in precision `T`), with no
/// host pass over the matrix: the host only scans one total per tile of 1024 rows. The
/// structure equals the host's [`crate::dga::operators::build_csr`] and the values its
/// values from the device's inverse blocks, summed term for term in the host's order
/// (`tests/opencl/device_assembly.rs`). An error when the matrix has `2³²` nonzeros or more
/// (32-bit row pointers, as the host-built CSR stepper). `kernels_s` counts the CSR kernels
/// too, `download_s` stays zero.
pub fn resident_csr<T: Real>(
    dev: &ClDevice,
    k: &AssemblyKernels,
    pk: &PackKernels,
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    free_edge: &[bool],
) -> Result<(ResidentOperators<T>, AssemblyTimes)> {
    resident_with(dev, k, pk, mesh, topo, mat, free_edge, true, false)
}

/// Work-items per work-group of the scan, and values per tile (4 per work-item).
const SCAN_WG: usize = 256;
const SCAN_TILE: usize = 4 * SCAN_WG;

/// The exclusive scan of the first `n` values of `x` into `y` (`n` values): per tile on the
/// device, the tiles' totals on the host (in 64 bits). Returns the total; an error naming
/// `what` when it does not fit 32 bits.
fn scan_u32(
    dev: &ClDevice,
    pk: &PackKernels,
    x: &Buffer<u32>,
    y: &Buffer<u32>,
    n: usize,
    what: &str,
) -> Result<(u64, f64)> {
    let tiles = n.div_ceil(SCAN_TILE).max(1);
    let sums = dev.alloc_u32(tiles, "scan tile totals")?;
    let e1 = launch::<f32>(
        dev,
        &pk.scan_tiles,
        tiles * SCAN_WG,
        SCAN_WG,
        &[
            Arg::U64(n as u64),
            Arg::BufU32(x),
            Arg::BufU32(y),
            Arg::BufU32(&sums),
            Arg::Local(4 * SCAN_WG),
        ],
    )?;
    let sums = dev.read(&sums, tiles, "scan tile totals")?;
    let mut off = Vec::with_capacity(tiles);
    let mut total = 0u64;
    for s in sums {
        off.push(total);
        total += s as u64;
    }
    if total > u32::MAX as u64 {
        return Err(Error::DeviceMemory(format!(
            "{what} sum to {total}, above the 32-bit index limit; use --dual factored"
        )));
    }
    let off: Vec<u32> = off.into_iter().map(|x| x as u32).collect();
    let off = dev.upload(&off, "scan tile offsets")?;
    let e2 = launch::<f32>(
        dev,
        &pk.scan_add,
        n,
        LOCAL,
        &[
            Arg::U64(n as u64),
            Arg::BufU32(y),
            Arg::BufU32(&off),
            Arg::U32(SCAN_TILE as u32),
        ],
    )?;
    Ok((total, event_seconds(&e1)? + event_seconds(&e2)?))
}

#[allow(clippy::too_many_arguments)]
fn resident_with<T: Real>(
    dev: &ClDevice,
    k: &AssemblyKernels,
    pk: &PackKernels,
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    free_edge: &[bool],
    with_csr: bool,
    with_masses: bool,
) -> Result<(ResidentOperators<T>, AssemblyTimes)> {
    let t0 = Instant::now();
    let a = assemble(dev, k, mesh, topo, mat, free_edge, !with_masses)?;
    let t = mesh.n_tets();
    let nv = mesh.n_vertices();
    let poff = a.layout.packed_offsets();
    let poff_b = dev.upload(&poff, "packed block offsets")?;
    let block_len = *poff.last().unwrap_or(&0) as usize;
    let tp = tet_stride(t);
    let primal = dev.alloc::<T>((10 * tp).max(1), "primal blocks")?;
    let blocks = dev.alloc::<T>(block_len.max(1), "vertex blocks")?;
    let mut kernels_s = a.times.kernels_s;
    let e = launch::<T>(
        dev,
        &pk.primal,
        tp,
        LOCAL,
        &[
            Arg::U32(t as u32),
            Arg::U32(tp as u32),
            Arg::BufF64(&a.mmu_inv),
            Arg::Buf(&primal),
        ],
    )?;
    kernels_s += event_seconds(&e)?;
    let e = launch::<T>(
        dev,
        &pk.blocks,
        nv,
        LOCAL,
        &[
            Arg::U32(nv as u32),
            Arg::BufU64(&a.ptr),
            Arg::BufU64(&a.off),
            Arg::BufU64(&poff_b),
            Arg::BufF64(&a.meps_inv),
            Arg::Buf(&blocks),
        ],
    )?;
    kernels_s += event_seconds(&e)?;
    let csr = if with_csr {
        let (c, s) = resident_csr_matrix::<T>(dev, pk, mesh, topo, &a)?;
        kernels_s += s;
        Some(c)
    } else {
        None
    };
    let masses = match (&a.meps, &a.mmu) {
        (Some(meps), Some(mmu)) if with_masses => {
            let (m, s) = resident_masses::<T>(dev, pk, &a, meps, mmu, &poff_b, block_len, t)?;
            kernels_s += s;
            Some(m)
        }
        _ => None,
    };
    dev.finish()?;
    let times = AssemblyTimes {
        kernels_s,
        total_s: t0.elapsed().as_secs_f64(),
        ..a.times
    };
    Ok((
        ResidentOperators {
            n_tets: t,
            primal,
            blocks,
            poff,
            layout: a.layout,
            csr,
            masses,
        },
        times,
    ))
}

/// The masses of the assembly `a` (full `meps`, row-major `mmu`, f64) in `T` in the
/// layouts of [`ResidentMasses`], and the seconds of their kernels.
#[allow(clippy::too_many_arguments)]
fn resident_masses<T: Real>(
    dev: &ClDevice,
    pk: &PackKernels,
    a: &OnDevice,
    meps: &Buffer<f64>,
    mmu: &Buffer<f64>,
    poff: &Buffer<u64>,
    block_len: usize,
    t: usize,
) -> Result<(ResidentMasses<T>, f64)> {
    let tp = tet_stride(t);
    let nv = a.layout.n_vertices();
    let full = dev.alloc::<T>(a.nblk.max(1), "Meps blocks")?;
    let packed = dev.alloc::<T>(block_len.max(1), "Meps packed blocks")?;
    let cols = dev.alloc::<T>((10 * tp).max(1), "Mmu columns")?;
    let e1 = launch::<T>(
        dev,
        &pk.real,
        a.nblk,
        LOCAL,
        &[Arg::U64(a.nblk as u64), Arg::BufF64(meps), Arg::Buf(&full)],
    )?;
    let e2 = launch::<T>(
        dev,
        &pk.blocks,
        nv,
        LOCAL,
        &[
            Arg::U32(nv as u32),
            Arg::BufU64(&a.ptr),
            Arg::BufU64(&a.off),
            Arg::BufU64(poff),
            Arg::BufF64(meps),
            Arg::Buf(&packed),
        ],
    )?;
    let e3 = launch::<T>(
        dev,
        &pk.sym16,
        tp,
        LOCAL,
        &[
            Arg::U32(t as u32),
            Arg::U32(tp as u32),
            Arg::BufF64(mmu),
            Arg::Buf(&cols),
        ],
    )?;
    let secs = event_seconds(&e1)? + event_seconds(&e2)? + event_seconds(&e3)?;
    Ok((
        ResidentMasses {
            meps_full: full,
            meps_packed: packed,
            mmu: cols,
        },
        secs,
    ))
}

/// The CSR matrix of [`resident_csr`] from the assembly `a` still on the device, and the
/// seconds its kernels took.
fn resident_csr_matrix<T: Real>(
    dev: &ClDevice,
    pk: &PackKernels,
    mesh: &Mesh,
    topo: &Topology,
    a: &OnDevice,
) -> Result<(crate::backend::opencl::DeviceCsr<T>, f64)> {
    let (nv, t, nh) = (mesh.n_vertices(), mesh.n_tets(), 2 * topo.n_edges());
    let rows = a.layout.h.len();
    if t > (u32::MAX / 4) as usize {
        return Err(Error::DeviceMemory(format!(
            "the mesh has {t} tets, above the 32-bit F slots of the CSR form; use --dual factored"
        )));
    }
    // row lengths over nh + 1 entries (the last stays zero: the scan's total lands there)
    let len = dev.alloc_u32(nh + 1, "CSR row lengths")?;
    let slot_vertex = dev.alloc_u32(rows, "CSR slot vertices")?;
    let e = launch::<T>(
        dev,
        &pk.row_lengths,
        nv,
        LOCAL,
        &[
            Arg::U32(nv as u32),
            Arg::BufU64(&a.vt_ptr),
            Arg::BufU32(&a.vt),
            Arg::BufU32(&a.tet_edges),
            Arg::BufU64(&a.ptr),
            Arg::BufU32(&a.h),
            Arg::BufU32(&len),
            Arg::BufU32(&slot_vertex),
        ],
    )?;
    let mut secs = event_seconds(&e)?;
    let indptr = dev.alloc_u32(nh + 1, "CSR row pointers")?;
    let (nnz, s) = scan_u32(dev, pk, &len, &indptr, nh + 1, "the CSR matrix's nonzeros")?;
    secs += s;
    drop(len);
    let nnz = nnz as usize;
    let indices = dev.alloc_u32(nnz, "CSR columns")?;
    let data = dev.alloc::<T>(nnz, "CSR values")?;
    let e = launch::<T>(
        dev,
        &pk.csr_fill,
        rows,
        LOCAL,
        &[
            Arg::U32(rows as u32),
            Arg::BufU32(&slot_vertex),
            Arg::BufU64(&a.ptr),
            Arg::BufU32(&a.h),
            Arg::BufU64(&a.off),
            Arg::BufF64(&a.meps_inv),
            Arg::BufU64(&a.vt_ptr),
            Arg::BufU32(&a.vt),
            Arg::BufU32(&a.tets),
            Arg::BufU32(&a.tet_edges),
            Arg::BufU32(&indptr),
            Arg::U32(tet_stride(t) as u32),
            Arg::BufU32(&indices),
            Arg::Buf(&data),
        ],
    )?;
    secs += event_seconds(&e)?;
    Ok(((indptr, indices, data, nnz), secs))
}

/// [`Dga::assemble_with`] with the masses and their inverses computed on `dev`.
pub fn assemble_with(
    dev: &ClDevice,
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    fixed: &[bool],
    lean: bool,
) -> Result<(Dga, AssemblyTimes)> {
    let free_edge: Vec<bool> = fixed.iter().map(|&b| !b).collect();
    crate::dga::check_free_edges(topo, &free_edge)?;
    let k = AssemblyKernels::build(dev)?;
    let (masses, times) = masses(dev, &k, mesh, topo, mat, &free_edge, lean)?;
    Ok((
        Dga::from_masses(mesh, topo, mat, free_edge, None, masses)?,
        times,
    ))
}

/// The CSR form's matrix `Δt Meps⁻¹ C̃` ([`crate::dga::operators::build_csr`], `dt` in metres
/// of light travel) of `mesh` over the `free_edge` half-edges, assembled on `dev`: the masses
/// and inverses by the assembly kernels, then every value by `csr_values` from the inverse
/// blocks still on the device, summing each row's duplicate COO terms per column in the
/// host's order. Only the values come back. The structure ([`CsrLayout`]: the dual
/// circulations, each row's columns and the grouping of its terms) is integer work on the
/// host, like the block layout, and counts in `layout_s`. The values equal the host's to
/// the round-off of the inverse blocks (the sums themselves are the host's, term for term).
pub fn csr(
    dev: &ClDevice,
    k: &AssemblyKernels,
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    free_edge: &[bool],
    dt: f64,
) -> Result<(CsMat<f64>, AssemblyTimes)> {
    let t0 = Instant::now();
    let a = assemble(dev, k, mesh, topo, mat, free_edge, true)?;
    let t1 = Instant::now();
    let (circ_ptr, circ) = dual_circulations(mesh, topo);
    let l = csr_layout(
        &a.layout,
        &circ_ptr,
        &circ,
        2 * topo.n_edges(),
        4 * mesh.n_tets(),
    );
    let rows = a.layout.h.len();
    let row_vertex: Vec<u32> = (0..a.layout.n_vertices())
        .into_par_iter()
        .flat_map_iter(|v| std::iter::repeat_n(v as u32, a.layout.dim(v)))
        .collect();
    let indptr: Vec<u64> = l.indptr.par_iter().map(|&x| x as u64).collect();
    let t2 = Instant::now();
    let rv_b = dev.upload(&row_vertex, "CSR row vertices")?;
    let sb_b = dev.upload(&l.seg_base, "CSR segment bases")?;
    let seg_b = dev.upload(&l.seg, "CSR segments")?;
    let ent_b = dev.upload(&l.ent, "CSR terms")?;
    let ip_b = dev.upload(&indptr, "CSR row pointers")?;
    let data_b = dev.alloc::<f64>(l.indices.len().max(1), "CSR values")?;
    dev.finish()?;
    let t3 = Instant::now();
    let e = launch::<f64>(
        dev,
        &k.csr,
        rows,
        LOCAL,
        &[
            Arg::U32(rows as u32),
            Arg::BufU32(&rv_b),
            Arg::BufU64(&a.ptr),
            Arg::BufU32(&a.h),
            Arg::BufU64(&a.off),
            Arg::Buf(&a.meps_inv),
            Arg::BufU64(&sb_b),
            Arg::BufU64(&seg_b),
            Arg::BufU32(&ent_b),
            Arg::BufU64(&ip_b),
            Arg::Real(dt),
            Arg::Buf(&data_b),
        ],
    )?;
    let csr_s = event_seconds(&e)?;
    let t4 = Instant::now();
    let mut data = touched(l.indices.len(), 0.0f64);
    if !data.is_empty() {
        dev.read_into(&data_b, &mut data, "CSR values")?;
    }
    let download_s = t4.elapsed().as_secs_f64();
    let m = l.matrix(data);
    Ok((
        m,
        AssemblyTimes {
            layout_s: a.times.layout_s + (t2 - t1).as_secs_f64(),
            upload_s: a.times.upload_s + (t3 - t2).as_secs_f64(),
            kernels_s: a.times.kernels_s + csr_s,
            download_s,
            total_s: t0.elapsed().as_secs_f64(),
        },
    ))
}

/// The masses assembled on the device, still there: `Mmu⁻¹` (`[t][10]`, f64), the full
/// `Meps⁻¹` blocks (f64, in `layout`), and with a full assembly `Mmu` and `Meps` too;
/// `layout` is the block layout with no values.
struct OnDevice {
    mmu_inv: Buffer<f64>,
    mmu: Option<Buffer<f64>>,
    meps_inv: Buffer<f64>,
    meps: Option<Buffer<f64>>,
    layout: VertexBlocks,
    /// The layout's `ptr`, `h` and `off` as uploaded for the block kernel.
    ptr: Buffer<u64>,
    h: Buffer<u32>,
    off: Buffer<u64>,
    /// The vertex → tet incidence (`(n << 2) | local vertex`, tets ascending), the tets'
    /// vertices and edges, as uploaded for the block kernel.
    vt_ptr: Buffer<u64>,
    vt: Buffer<u32>,
    tets: Buffer<u32>,
    tet_edges: Buffer<u32>,
    nblk: usize,
    times: AssemblyTimes,
}

/// The [`Masses`] of `mesh` over the `free_edge` half-edges, computed on `dev` (with `lean`,
/// only the inverses, as [`crate::dga::host_masses`]).
pub fn masses(
    dev: &ClDevice,
    k: &AssemblyKernels,
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    free_edge: &[bool],
    lean: bool,
) -> Result<(Masses, AssemblyTimes)> {
    let t0 = Instant::now();
    let a = assemble(dev, k, mesh, topo, mat, free_edge, lean)?;
    let t3 = Instant::now();
    let t = mesh.n_tets();
    let mut mmu_inv_h = touched(t, [0.0f64; 10]);
    dev.read_into(&a.mmu_inv, mmu_inv_h.as_flattened_mut(), "Mmu inverse")?;
    let mut mmu_h = Vec::new();
    if let Some(b) = &a.mmu {
        mmu_h = touched(t, [0.0f64; 16]);
        dev.read_into(b, mmu_h.as_flattened_mut(), "Mmu")?;
    }
    let mut inv_h = touched(a.nblk, 0.0f64);
    dev.read_into(&a.meps_inv, &mut inv_h, "Meps inverse blocks")?;
    let mut blk_h = Vec::new();
    if let Some(b) = &a.meps {
        blk_h = touched(a.nblk, 0.0f64);
        dev.read_into(b, &mut blk_h, "Meps blocks")?;
    }
    let download_s = t3.elapsed().as_secs_f64();
    let meps_inv = VertexBlocks {
        data: inv_h,
        ..a.layout.clone()
    };
    let meps = VertexBlocks {
        data: blk_h,
        ..a.layout
    };
    Ok((
        Masses {
            mmu: mmu_h,
            mmu_inv: mmu_inv_h,
            meps,
            meps_inv,
        },
        AssemblyTimes {
            download_s,
            total_s: t0.elapsed().as_secs_f64(),
            ..a.times
        },
    ))
}

/// The layout, the uploads and the assembly kernels of [`masses`], the operators left on the
/// device (`times` without a download).
fn assemble(
    dev: &ClDevice,
    k: &AssemblyKernels,
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    free_edge: &[bool],
    lean: bool,
) -> Result<OnDevice> {
    let t0 = Instant::now();
    let t = mesh.n_tets();
    let nv = mesh.n_vertices();
    if mat.eps.len() != t || mat.mu.len() != t {
        return Err(Error::config(
            "media",
            format!("{} eps, {} mu", mat.eps.len(), mat.mu.len()),
            format!("expected one per tet ({t})"),
        ));
    }
    let (vt_ptr, vt) = (&topo.vert_tet_ptr, &topo.vert_tets);
    let layout = block_layout(mesh, topo, free_edge, None);
    let vt: Vec<u32> = vt.par_iter().map(|&(n, i)| (n << 2) | i as u32).collect();
    let wide = |x: &[usize]| -> Vec<u64> { x.par_iter().map(|&x| x as u64).collect() };
    let (vt_ptr, ptr, off) = (wide(vt_ptr), wide(&layout.ptr), wide(&layout.off));
    let t1 = Instant::now();

    let nodes = dev.upload(mesh.nodes.as_flattened(), "mesh nodes")?;
    let tets = dev.upload(mesh.tets.as_flattened(), "mesh tets")?;
    let tet_edges = dev.upload(topo.tet_edges.as_flattened(), "tet edges")?;
    let eps = dev.upload(&mat.eps, "permittivity per tet")?;
    let mu = dev.upload(&mat.mu, "permeability per tet")?;
    let vt_ptr_b = dev.upload(&vt_ptr, "vertex tet pointers")?;
    let vt_b = dev.upload(&vt, "vertex tets")?;
    let ptr_b = dev.upload(&ptr, "block pointers")?;
    let h_b = dev.upload(&layout.h, "block half-edges")?;
    let off_b = dev.upload(&off, "block offsets")?;
    let bad = dev.upload(&[u32::MAX], "assembly status")?;
    dev.finish()?;
    let t2 = Instant::now();

    let nblk = *layout.off.last().unwrap_or(&0);
    let mmu_inv = dev.alloc::<f64>((10 * t).max(1), "Mmu inverse")?;
    let mmu = dev.alloc::<f64>(if lean { 1 } else { (16 * t).max(1) }, "Mmu")?;
    let inv = dev.alloc::<f64>(nblk.max(1), "Meps inverse blocks")?;
    let blk = if lean {
        None
    } else {
        Some(dev.alloc::<f64>(nblk.max(1), "Meps blocks")?)
    };
    dev.finish()?;
    let mut kernels_s = 0.0;
    let e = launch::<f64>(
        dev,
        &k.mmu,
        t,
        LOCAL,
        &[
            Arg::U32(t as u32),
            Arg::Buf(&nodes),
            Arg::BufU32(&tets),
            Arg::Buf(&mu),
            Arg::U32(!lean as u32),
            Arg::Buf(&mmu),
            Arg::Buf(&mmu_inv),
            Arg::BufU32(&bad),
        ],
    )?;
    kernels_s += event_seconds(&e)?;
    let bad_tet = dev.read(&bad, 1, "assembly status")?[0];
    if bad_tet != u32::MAX {
        return Err(Error::NotSpd {
            what: "Mmu of tet",
            index: mesh.tet_ids[bad_tet as usize] as usize,
            detail: "the hexahedral mu matrices are degenerate or their sum is not positive definite (device assembly)".into(),
        });
    }
    let meps_args = |invert: bool, out| {
        [
            Arg::U32(nv as u32),
            Arg::Buf(&nodes),
            Arg::BufU32(&tets),
            Arg::BufU32(&tet_edges),
            Arg::Buf(&eps),
            Arg::BufU64(&vt_ptr_b),
            Arg::BufU32(&vt_b),
            Arg::BufU64(&ptr_b),
            Arg::BufU32(&h_b),
            Arg::BufU64(&off_b),
            Arg::U32(invert as u32),
            Arg::Buf(out),
            Arg::BufU32(&bad),
        ]
    };
    let e = launch::<f64>(dev, &k.meps, nv, LOCAL, &meps_args(true, &inv))?;
    kernels_s += event_seconds(&e)?;
    if let Some(b) = &blk {
        let e = launch::<f64>(dev, &k.meps, nv, LOCAL, &meps_args(false, b))?;
        kernels_s += event_seconds(&e)?;
    }
    let bad_v = dev.read(&bad, 1, "assembly status")?[0];
    if bad_v != u32::MAX {
        let v = bad_v as usize;
        return Err(Error::NotSpd {
            what: "Meps of vertex",
            index: v,
            detail: format!(
                "{d}x{d} block at {:?}: a hexahedral eps matrix is degenerate or the Cholesky factorisation failed (device assembly)",
                mesh.nodes[v],
                d = layout.ptr[v + 1] - layout.ptr[v]
            ),
        });
    }
    let t3 = Instant::now();
    Ok(OnDevice {
        mmu_inv,
        mmu: (!lean).then_some(mmu),
        meps_inv: inv,
        meps: blk,
        layout,
        ptr: ptr_b,
        h: h_b,
        off: off_b,
        vt_ptr: vt_ptr_b,
        vt: vt_b,
        tets,
        tet_edges,
        nblk,
        times: AssemblyTimes {
            layout_s: (t1 - t0).as_secs_f64(),
            upload_s: (t2 - t1).as_secs_f64(),
            kernels_s,
            download_s: 0.0,
            total_s: (t3 - t0).as_secs_f64(),
        },
    })
}
