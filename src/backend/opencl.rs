//! The OpenCL backend: the whole leapfrog on any OpenCL device (GPU of any vendor, or PoCL
//! on a CPU), tested against [`super::cpu`].
//!
//! The OpenCL library is loaded at run time (opencl3's `dynamic` feature): the binary
//! builds and starts without OpenCL, and [`list_devices`] says clearly when none is found.
//! Kernels are in `cl/dgatd.cl`, built with `-D REAL=double|float`; a build failure carries
//! the build log.
//!
//! Device layouts: `U[2e + s]` as on the host; `F[k*T + n]` (structure of arrays, host
//! slot `4n + k`), so the per-tet primal kernel reads and writes coalesced. Index tables
//! are remapped once on upload. Inside the time loop nothing crosses the bus but the
//! buffered probe samples, read every [`SAMPLE_CHUNK`] steps: the source waveform is
//! evaluated in the kernel.
//!
//! Every `unsafe` block in the crate is in this file; each says why it is sound.

use super::Stepper;
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::{DualForm, build_csr};
use crate::problem::Waveform;
use crate::util::Rng;
use crate::{Error, Real, Result};
use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use opencl3::context::Context;
use opencl3::device::{CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, Device};
use opencl3::event::Event;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{CL_BLOCKING, cl_device_id};
use std::ptr;
use std::sync::Arc;

/// The kernel source, embedded in the binary.
pub const SOURCE: &str = include_str!("../../cl/dgatd.cl");
/// Probe samples are buffered on the device for this many steps between reads.
pub const SAMPLE_CHUNK: usize = 1024;
/// Work-group size used for every 1-D kernel.
pub const LOCAL: usize = 256;
/// Work-items per row of the vector CSR kernel.
pub const CSR_LANES: usize = 8;

fn cl_err(what: &str) -> impl Fn(opencl3::error_codes::ClError) -> Error + '_ {
    move |e| Error::OpenCl {
        what: what.to_string(),
        msg: e.to_string(),
    }
}

/// One OpenCL device as the runtime describes it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    /// Position in the flat list of all devices of all platforms.
    pub index: usize,
    pub platform: String,
    pub name: String,
    pub vendor: String,
    pub kind: String,
    pub compute_units: u32,
    pub global_mem: u64,
    pub max_alloc: u64,
    pub fp64: bool,
    pub opencl_c: String,
    pub driver: String,
    #[serde(skip)]
    pub id: usize,
}

impl DeviceInfo {
    pub fn is_gpu(&self) -> bool {
        self.kind == "GPU"
    }
    pub fn is_cpu(&self) -> bool {
        self.kind == "CPU"
    }
}

/// Every device of every platform. Fails with a clear message when no OpenCL runtime
/// (libOpenCL.so.1) or no platform is found. Enumeration is serialised and its first
/// success cached: some ICDs (PoCL) fail when several threads enumerate at once.
pub fn list_devices() -> Result<Vec<DeviceInfo>> {
    static CACHE: std::sync::Mutex<Option<Vec<DeviceInfo>>> = std::sync::Mutex::new(None);
    let mut guard = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(v) = guard.as_ref() {
        return Ok(v.clone());
    }
    let v = enumerate()?;
    *guard = Some(v.clone());
    Ok(v)
}

fn enumerate() -> Result<Vec<DeviceInfo>> {
    if !cl3::is_opencl_runtime_available() {
        return Err(Error::NoOpenCl(
            "no OpenCL runtime found (libOpenCL.so.1 could not be loaded; on Debian: apt-get install ocl-icd-libopencl1 pocl-opencl-icd)".into(),
        ));
    }
    let platforms = get_platforms().map_err(|e| Error::NoOpenCl(format!("no OpenCL platform found ({e}); is an ICD installed, and for PoCL is POCL_CACHE_DIR writable?")))?;
    let mut out = Vec::new();
    for p in platforms {
        let pname = p.name().unwrap_or_default();
        let ids = p.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        for id in ids {
            let d = Device::new(id);
            let ty = d.dev_type().unwrap_or(0);
            let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
                "GPU"
            } else if ty & CL_DEVICE_TYPE_CPU != 0 {
                "CPU"
            } else {
                "other"
            };
            let ext = d.extensions().unwrap_or_default();
            out.push(DeviceInfo {
                index: out.len(),
                platform: pname.trim().to_string(),
                name: d.name().unwrap_or_default().trim().to_string(),
                vendor: d.vendor().unwrap_or_default().trim().to_string(),
                kind: kind.to_string(),
                compute_units: d.max_compute_units().unwrap_or(0),
                global_mem: d.global_mem_size().unwrap_or(0),
                max_alloc: d.max_mem_alloc_size().unwrap_or(0),
                fp64: ext.contains("cl_khr_fp64") || d.double_fp_config().unwrap_or(0) != 0,
                opencl_c: d.opencl_c_version().unwrap_or_default().trim().to_string(),
                driver: d.driver_version().unwrap_or_default().trim().to_string(),
                id: id as usize,
            });
        }
    }
    if out.is_empty() {
        return Err(Error::NoOpenCl(
            "OpenCL platforms found, but no devices".into(),
        ));
    }
    Ok(out)
}

/// Picks a device: `spec` is an index into [`list_devices`] or a case-insensitive
/// substring of "platform name"; without `spec`, the first GPU, else the first CPU device.
pub fn select_device(spec: Option<&str>) -> Result<DeviceInfo> {
    let all = list_devices()?;
    match spec {
        Some(s) => {
            if let Ok(i) = s.parse::<usize>() {
                return all.get(i).cloned().ok_or_else(|| {
                    Error::config(
                        "device",
                        s,
                        format!("there are {} OpenCL devices (see dgatd devices)", all.len()),
                    )
                });
            }
            let low = s.to_lowercase();
            all.iter()
                .find(|d| {
                    format!("{} {}", d.platform, d.name)
                        .to_lowercase()
                        .contains(&low)
                })
                .cloned()
                .ok_or_else(|| {
                    Error::config(
                        "device",
                        s,
                        "no OpenCL device name contains it (see dgatd devices)",
                    )
                })
        }
        None => all
            .iter()
            .find(|d| d.is_gpu())
            .or_else(|| all.iter().find(|d| d.is_cpu()))
            .or(all.first())
            .cloned()
            .ok_or_else(|| Error::NoOpenCl("no device".into())),
    }
}

/// An opened device: context and an in-order profiling queue.
pub struct ClDevice {
    pub info: DeviceInfo,
    context: Context,
    queue: CommandQueue,
}

impl ClDevice {
    pub fn open(info: DeviceInfo) -> Result<Arc<ClDevice>> {
        let device = Device::new(info.id as cl_device_id);
        let context = Context::from_device(&device).map_err(cl_err("context creation"))?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .map_err(cl_err("queue creation"))?;
        Ok(Arc::new(ClDevice {
            info,
            context,
            queue,
        }))
    }

    pub fn finish(&self) -> Result<()> {
        self.queue.finish().map_err(cl_err("finish"))
    }

    /// Allocates `n` elements, refusing sizes above the device's maximum allocation.
    pub fn alloc<T>(&self, n: usize, what: &str) -> Result<Buffer<T>> {
        let bytes = (n.max(1) * std::mem::size_of::<T>()) as u64;
        if bytes > self.info.max_alloc {
            return Err(Error::DeviceMemory(format!(
                "{what} needs {} in one buffer, above the device's maximum allocation of {} ({})",
                indicatif::HumanBytes(bytes),
                indicatif::HumanBytes(self.info.max_alloc),
                self.info.name
            )));
        }
        // SAFETY: no host pointer is passed (null), so OpenCL allocates and owns the memory;
        // the size is n.max(1) elements of T, checked against the device limit above.
        unsafe { Buffer::<T>::create(&self.context, CL_MEM_READ_WRITE, n.max(1), ptr::null_mut()) }
            .map_err(cl_err(what))
    }

    /// A buffer holding `data`.
    pub fn upload<T>(&self, data: &[T], what: &str) -> Result<Buffer<T>> {
        let mut b = self.alloc::<T>(data.len(), what)?;
        if !data.is_empty() {
            self.write(&mut b, data, what)?;
        }
        Ok(b)
    }

    pub fn write<T>(&self, b: &mut Buffer<T>, data: &[T], what: &str) -> Result<()> {
        // SAFETY: blocking write of data.len() elements into a buffer allocated with at least
        // that many (callers pass buffers created for this data); `data` outlives the call.
        unsafe {
            self.queue
                .enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[])
        }
        .map_err(cl_err(what))?;
        Ok(())
    }

    /// Writes `data` at element offset `at` of `b` (blocking).
    pub fn write_at<T>(&self, b: &mut Buffer<T>, at: usize, data: &[T], what: &str) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking write of data.len() elements at byte offset at*size_of::<T>();
        // callers allocate `b` with at least at + data.len() elements.
        unsafe {
            self.queue.enqueue_write_buffer(
                b,
                CL_BLOCKING,
                at * std::mem::size_of::<T>(),
                data,
                &[],
            )
        }
        .map_err(cl_err(what))?;
        Ok(())
    }

    /// Allocates `n` elements and fills them chunk by chunk from `f(i)`, so no full host
    /// copy of a converted array is ever made.
    pub fn upload_with<T: Copy + Send, F: Fn(usize) -> T + Sync>(
        &self,
        n: usize,
        what: &str,
        f: F,
    ) -> Result<Buffer<T>> {
        use rayon::prelude::*;
        let mut b = self.alloc::<T>(n, what)?;
        const CHUNK: usize = 1 << 24;
        let mut start = 0;
        while start < n {
            let end = (start + CHUNK).min(n);
            let chunk: Vec<T> = (start..end).into_par_iter().map(&f).collect();
            self.write_at(&mut b, start, &chunk, what)?;
            start = end;
        }
        Ok(b)
    }

    pub fn read<T: Default + Clone>(&self, b: &Buffer<T>, n: usize, what: &str) -> Result<Vec<T>> {
        let mut out = vec![T::default(); n];
        if n > 0 {
            // SAFETY: blocking read of n elements from a buffer of at least n elements into
            // a host vector of exactly n elements.
            unsafe {
                self.queue
                    .enqueue_read_buffer(b, CL_BLOCKING, 0, &mut out, &[])
            }
            .map_err(cl_err(what))?;
        }
        Ok(out)
    }

    pub fn fill_zero<T: Real>(&self, b: &mut Buffer<T>, n: usize) -> Result<()> {
        let z = [T::zero()];
        // SAFETY: fills n elements of T (pattern of one T) in a buffer of at least n elements.
        unsafe {
            self.queue
                .enqueue_fill_buffer(b, &z, 0, n * std::mem::size_of::<T>(), &[])
        }
        .map_err(cl_err("fill"))?;
        Ok(())
    }

    /// Builds OpenCL C `source` (called `name` in messages) with `opts`; a failure carries
    /// the compiler's build log.
    pub fn build_source(&self, source: &str, name: &str, opts: &str) -> Result<Program> {
        Program::create_and_build_from_source(&self.context, source, opts).map_err(|log| {
            Error::OpenCl {
                what: format!("build of {name} with \"{opts}\" on {}", self.info.name),
                msg: log,
            }
        })
    }

    /// Builds `cl/dgatd.cl` for precision `T`.
    pub fn build<T: Real>(&self) -> Result<Kernels> {
        if T::NAME == "f64" && !self.info.fp64 {
            return Err(Error::config(
                "precision",
                "f64",
                format!(
                    "device {} has no cl_khr_fp64 (double precision); use --precision f32",
                    self.info.name
                ),
            ));
        }
        let opts = format!(
            "-D REAL={} {} -D CSR_LANES={CSR_LANES}",
            if T::NAME == "f64" { "double" } else { "float" },
            if T::NAME == "f64" {
                "-D REAL_IS_DOUBLE=1"
            } else {
                ""
            }
        );
        let program = self.build_source(SOURCE, "cl/dgatd.cl", &opts)?;
        let k = |name: &str| Kernel::create(&program, name).map_err(cl_err(name));
        Ok(Kernels {
            primal_tet: k("primal_tet")?,
            primal_row: k("primal_row")?,
            circulation: k("circulation")?,
            vertex_block: k("vertex_block")?,
            vertex_block_h: k("vertex_block_h")?,
            csr_scalar: k("csr_scalar")?,
            csr_vector: k("csr_vector")?,
            source: k("source")?,
            probe: k("probe")?,
            scale: k("scale")?,
            dot_partial: k("dot_partial")?,
            axpy0: k("axpy0")?,
            copy: k("copy")?,
            triad: k("triad")?,
            vertex_block_v: k("vertex_block_v")?,
            copy4: k("copy4")?,
            triad4: k("triad4")?,
            _program: program,
        })
    }
}

/// The compiled kernels of one precision. The bandwidth probes (`copy`, `triad`, and their
/// four-per-work-item forms) are public for the bench; the operator kernels are launched
/// through [`ClStepper`].
pub struct Kernels {
    pub(crate) primal_tet: Kernel,
    pub(crate) primal_row: Kernel,
    pub(crate) circulation: Kernel,
    pub(crate) vertex_block: Kernel,
    pub(crate) vertex_block_h: Kernel,
    pub(crate) csr_scalar: Kernel,
    pub(crate) csr_vector: Kernel,
    pub(crate) source: Kernel,
    pub(crate) probe: Kernel,
    pub(crate) scale: Kernel,
    pub(crate) dot_partial: Kernel,
    pub(crate) axpy0: Kernel,
    pub copy: Kernel,
    pub triad: Kernel,
    pub(crate) vertex_block_v: Kernel,
    pub copy4: Kernel,
    pub triad4: Kernel,
    _program: Program,
}

fn round_up(n: usize, m: usize) -> usize {
    n.div_ceil(m).max(1) * m
}

/// A kernel argument.
pub enum Arg<'a, T> {
    U32(u32),
    U64(u64),
    Real(T),
    Buf(&'a Buffer<T>),
    BufU32(&'a Buffer<u32>),
    BufU64(&'a Buffer<u64>),
    Local(usize),
}

/// Enqueues `kernel` over `n` work-items (rounded up to the work-group size `local`).
pub fn launch<T: Real>(
    dev: &ClDevice,
    kernel: &Kernel,
    n: usize,
    local: usize,
    args: &[Arg<T>],
) -> Result<Event> {
    let mut ek = ExecuteKernel::new(kernel);
    // SAFETY: each argument matches the kernel's parameter list in cl/dgatd.cl in order and
    // type (scalars by value of the declared width; buffers of the declared element type;
    // local buffers by size). Buffers live until the event completes because callers hold
    // them for the lifetime of the stepper and wait on the queue before dropping.
    unsafe {
        for a in args {
            match a {
                Arg::U32(x) => ek.set_arg(x),
                Arg::U64(x) => ek.set_arg(x),
                Arg::Real(x) => ek.set_arg(x),
                Arg::Buf(b) => ek.set_arg(*b),
                Arg::BufU32(b) => ek.set_arg(*b),
                Arg::BufU64(b) => ek.set_arg(*b),
                Arg::Local(bytes) => ek.set_arg_local_buffer(*bytes),
            };
        }
        ek.set_global_work_size(round_up(n, local))
            .set_local_work_size(local)
            .enqueue_nd_range(&dev.queue)
    }
    .map_err(|e| Error::OpenCl {
        what: format!("kernel {}", kernel.function_name().unwrap_or_default()),
        msg: e.to_string(),
    })
}

/// Kernel time of a completed event, in seconds (profiling counters).
pub fn event_seconds(e: &Event) -> Result<f64> {
    e.wait().map_err(cl_err("wait"))?;
    let s = e.profiling_command_start().map_err(cl_err("profiling"))?;
    let t = e.profiling_command_end().map_err(cl_err("profiling"))?;
    Ok(t.saturating_sub(s) as f64 * 1e-9)
}

/// Which primal kernel to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PrimalVariant {
    /// One work-item per tet (default: faster on the devices measured, see results/).
    Tet,
    /// One work-item per output row, the seed's mapping.
    Row,
}

impl PrimalVariant {
    pub fn name(self) -> &'static str {
        match self {
            PrimalVariant::Tet => "tet",
            PrimalVariant::Row => "row",
        }
    }
}

/// Mapping of the per-vertex block kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockVariant {
    /// One work-item per half-edge slot `2e + s`, reading its row (uncoalesced).
    HalfEdge,
    /// Vertex-major: the slots of a vertex are consecutive work-items reading columns of
    /// the symmetric block (coalesced). Default.
    Vertex,
}

impl BlockVariant {
    pub fn name(self) -> &'static str {
        match self {
            BlockVariant::HalfEdge => "vertex_block_halfedge",
            BlockVariant::Vertex => "vertex_block",
        }
    }
}

/// CSR variant of the dual update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrVariant {
    Scalar,
    Vector,
}

/// The kernel variants a [`ClStepper`] launches (the bench times each one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variants {
    pub primal: PrimalVariant,
    pub block: BlockVariant,
    pub csr: CsrVariant,
}

impl Default for Variants {
    /// The fastest variants measured (`results/h200/`).
    fn default() -> Self {
        Variants {
            primal: PrimalVariant::Tet,
            block: BlockVariant::Vertex,
            csr: CsrVariant::Vector,
        }
    }
}

/// The CSR matrix on the device: row pointers, columns, values and the number of nonzeros.
pub type DeviceCsr<T> = (Buffer<u32>, Buffer<u32>, Buffer<T>, usize);

/// Device buffers of the operators and the state.
pub struct ClStepper<T: Real> {
    dev: Arc<ClDevice>,
    k: Kernels,
    dga: Arc<Dga>,
    dual: DualForm,
    variants: Variants,
    t: usize,
    ne: usize,
    nh: usize,
    /// Current time step (metres of light travel); 1 until [`ClStepper::set_time_step`].
    dt: f64,
    p: Buffer<T>,
    pe: Buffer<u32>,
    u: Buffer<T>,
    f: Buffer<T>,
    c: Buffer<T>,
    circ_ptr: Buffer<u32>,
    circ: Buffer<u32>,
    vptr: Buffer<u32>,
    vh: Buffer<u32>,
    hvert: Buffer<u32>,
    hrow: Buffer<u64>,
    slot_vertex: Buffer<u32>,
    boff: Buffer<u64>,
    nfree: usize,
    block: Buffer<T>,
    block_len: usize,
    csr: Option<DeviceCsr<T>>,
    src_idx: Buffer<u32>,
    src_g: Buffer<T>,
    nsrc: usize,
    wave: Option<Waveform>,
    probe_slots: Buffer<u32>,
    probe_w: Buffer<T>,
    samples: Buffer<T>,
    np: usize,
}

/// Refuses a mesh whose operators do not fit the device (total memory, largest buffer),
/// before anything is allocated, with the figures ([`crate::cost::dga_device_bytes`]).
fn check_device_memory<T: Real>(dev: &ClDevice, dga: &Dga, dual: DualForm) -> Result<()> {
    let real = std::mem::size_of::<T>();
    let nnz = (dual == DualForm::Csr).then(|| csr_nnz_estimate(dga));
    let (total, largest) = crate::cost::dga_device_bytes(&dga.counts(), real, nnz);
    let avail = dev.info.global_mem;
    if total as f64 > 0.92 * avail as f64 {
        return Err(Error::DeviceMemory(format!(
            "the mesh needs about {} on the device ({} tets, {} precision, {} dual), but {} has {}",
            indicatif::HumanBytes(total),
            dga.n_tets,
            T::NAME,
            dual.name(),
            dev.info.name,
            indicatif::HumanBytes(avail)
        )));
    }
    if largest > dev.info.max_alloc {
        return Err(Error::DeviceMemory(format!(
            "the largest operator array needs {}, above the maximum allocation of {} on {}",
            indicatif::HumanBytes(largest),
            indicatif::HumanBytes(dev.info.max_alloc),
            dev.info.name
        )));
    }
    Ok(())
}

/// The exact number of nonzeros of the CSR matrix: per vertex, (free rows) x (distinct
/// F columns of its dual faces).
pub fn csr_nnz_estimate(dga: &Dga) -> u64 {
    use rayon::prelude::*;
    (0..dga.meps.n_vertices())
        .into_par_iter()
        .map(|v| {
            let hs = dga.meps.halves(v);
            let mut cols: Vec<u32> = hs
                .iter()
                .flat_map(|&h| {
                    let e = (h >> 1) as usize;
                    dga.circ[dga.circ_ptr[e] as usize..dga.circ_ptr[e + 1] as usize]
                        .iter()
                        .map(|x| x >> 1)
                })
                .collect();
            cols.sort_unstable();
            cols.dedup();
            (hs.len() * cols.len()) as u64
        })
        .sum()
}

/// Host F slot `4n + k` -> device slot `k*T + n`.
#[inline]
fn f_slot(x: u32, t: usize) -> u32 {
    let (n, k) = ((x / 4) as usize, (x % 4) as usize);
    (k * t + n) as u32
}

impl<T: Real> ClStepper<T> {
    /// Uploads the unit-Δt operators (Δt = 1; call [`Self::set_time_step`] before stepping),
    /// the unit source pattern (built with Δt = 1) and the probes.
    pub fn new(
        dev: Arc<ClDevice>,
        dga: Arc<Dga>,
        dual: DualForm,
        source: Option<&Source>,
        probes: &[Probe],
    ) -> Result<Self> {
        check_device_memory::<T>(&dev, &dga, dual)?;
        let k = dev.build::<T>()?;
        let t = dga.n_tets;
        let ne = dga.n_edges;
        let nh = 2 * ne;
        // Primal blocks column-major across tets (unit Δt), converted chunk by chunk.
        let p = dev.upload_with(24 * t, "primal blocks", |i| {
            T::of(dga.mmu_inv_c[i % t][i / t])
        })?;
        let pe = dev.upload_with(6 * t, "primal edge table", |i| dga.tet_edges[i % t][i / t])?;
        let circ = dev.upload_with(dga.circ.len(), "circulation entries", |i| {
            let x = dga.circ[i];
            (f_slot(x >> 1, t) << 1) | (x & 1)
        })?;
        let (hvert, hrow) = dga.half_edge_rows();
        let vptr: Vec<u32> = dga.meps.ptr.iter().map(|&x| x as u32).collect();
        let mut slot_vertex = vec![0u32; dga.meps.h.len()];
        for v in 0..dga.meps.n_vertices() {
            slot_vertex[dga.meps.ptr[v]..dga.meps.ptr[v + 1]].fill(v as u32);
        }
        let boff: Vec<u64> = dga.meps.off.iter().map(|&x| x as u64).collect();
        let block_len = dga.meps_inv.data.len();
        let block = dev.upload_with(block_len, "vertex blocks", |i| T::of(dga.meps_inv.data[i]))?;
        let csr = if dual == DualForm::Csr {
            let m = build_csr(&dga, 1.0);
            if m.nnz() >= u32::MAX as usize {
                return Err(Error::DeviceMemory(format!(
                    "the CSR matrix has {} nonzeros, above the 32-bit index limit; use --dual factored",
                    m.nnz()
                )));
            }
            let ip: Vec<u32> = m.indptr().raw_storage().iter().map(|&x| x as u32).collect();
            let ix: Vec<u32> = m.indices().iter().map(|&x| f_slot(x as u32, t)).collect();
            let dv: Vec<T> = m.data().iter().map(|&x| T::of(x)).collect();
            let nnz = dv.len();
            Some((
                dev.upload(&ip, "CSR row pointers")?,
                dev.upload(&ix, "CSR columns")?,
                dev.upload(&dv, "CSR values")?,
                nnz,
            ))
        } else {
            None
        };
        let (sidx, sg): (Vec<u32>, Vec<T>) = source
            .map(|s| s.pattern.iter().map(|&(h, g)| (h, T::of(g))).unzip())
            .unwrap_or_default();
        let slots: Vec<u32> = probes.iter().flat_map(|p| p.slots).collect();
        let w: Vec<T> = probes
            .iter()
            .flat_map(|p| p.w.iter().flat_map(|r| r.iter().map(|&x| T::of(x))))
            .collect();
        let np = probes.len();
        let mut s = ClStepper {
            p,
            pe,
            u: dev.alloc(nh, "U")?,
            f: dev.alloc(4 * t, "F")?,
            c: dev.alloc(ne, "edge circulations")?,
            circ_ptr: dev.upload(&dga.circ_ptr, "circulation pointers")?,
            circ,
            vptr: dev.upload(&vptr, "vertex pointers")?,
            vh: dev.upload(&dga.meps.h, "vertex half-edges")?,
            hvert: dev.upload(&hvert, "half-edge vertices")?,
            hrow: dev.upload(&hrow, "half-edge rows")?,
            slot_vertex: dev.upload(&slot_vertex, "slot vertices")?,
            boff: dev.upload(&boff, "block offsets")?,
            nfree: dga.meps.h.len(),
            block_len,
            block,
            csr,
            nsrc: sidx.len(),
            src_idx: dev.upload(&sidx, "source indices")?,
            src_g: dev.upload(&sg, "source pattern")?,
            wave: None,
            probe_slots: dev.upload(&slots, "probe slots")?,
            probe_w: dev.upload(&w, "probe weights")?,
            samples: dev.alloc(SAMPLE_CHUNK * np * 3, "probe samples")?,
            np,
            k,
            dev,
            dga,
            dual,
            variants: Variants::default(),
            t,
            ne,
            nh,
            dt: 1.0,
        };
        s.zero_state()?;
        Ok(s)
    }

    /// The kernel variants launched.
    pub fn variants(&self) -> Variants {
        self.variants
    }

    /// Chooses the kernel variants (a CSR variant needs the stepper built with the CSR dual).
    pub fn set_variants(&mut self, v: Variants) {
        self.variants = v;
    }

    /// The dual form of the time step.
    pub fn dual(&self) -> DualForm {
        self.dual
    }

    /// Switches the dual form (the CSR form needs the stepper built with the CSR dual).
    pub fn set_dual(&mut self, d: DualForm) -> Result<()> {
        if d == DualForm::Csr && self.csr.is_none() {
            return Err(Error::config(
                "dual",
                "csr",
                "the stepper was built without the CSR matrix",
            ));
        }
        self.dual = d;
        Ok(())
    }

    /// Nonzeros of the device CSR matrix (0 without it).
    pub fn csr_nnz(&self) -> usize {
        self.csr.as_ref().map(|c| c.3).unwrap_or(0)
    }

    /// The device.
    pub fn device(&self) -> &Arc<ClDevice> {
        &self.dev
    }

    /// The compiled kernels (for the bench's bandwidth probes).
    pub fn kernels(&self) -> &Kernels {
        &self.k
    }

    pub fn zero_state(&mut self) -> Result<()> {
        self.dev.fill_zero(&mut self.u, self.nh)?;
        self.dev.fill_zero(&mut self.f, 4 * self.t)?;
        self.dev.fill_zero(&mut self.c, self.ne)
    }

    fn scale_buf(&self, b: &Buffer<T>, n: usize, a: f64) -> Result<()> {
        launch(
            &self.dev,
            &self.k.scale,
            n,
            LOCAL,
            &[Arg::U64(n as u64), Arg::Buf(b), Arg::Real(T::of(a))],
        )?;
        Ok(())
    }

    /// Rescales the operators (and source pattern) from the current Δt to `dt`, and sets the
    /// source waveform.
    pub fn set_time_step(&mut self, dt: f64, wave: Option<Waveform>) -> Result<()> {
        let a = dt / self.dt;
        self.scale_buf(&self.p, 24 * self.t, a)?;
        self.scale_buf(&self.block, self.block_len, a)?;
        if let Some((_, _, v, nnz)) = &self.csr {
            self.scale_buf(v, *nnz, a)?;
        }
        if self.nsrc > 0 {
            self.scale_buf(&self.src_g, self.nsrc, a)?;
        }
        self.dev.finish()?;
        self.dt = dt;
        self.wave = wave;
        Ok(())
    }

    /// `F -= P U` with the chosen variant.
    pub fn primal_update(&self) -> Result<Event> {
        self.launch_primal(&self.u, &self.f)
    }

    /// `f -= P u` for given buffers.
    fn launch_primal(&self, u: &Buffer<T>, f: &Buffer<T>) -> Result<Event> {
        let args = [
            Arg::U32(self.t as u32),
            Arg::Buf(&self.p),
            Arg::BufU32(&self.pe),
            Arg::Buf(u),
            Arg::Buf(f),
        ];
        match self.variants.primal {
            PrimalVariant::Tet => launch(&self.dev, &self.k.primal_tet, self.t, LOCAL, &args),
            PrimalVariant::Row => launch(&self.dev, &self.k.primal_row, 4 * self.t, LOCAL, &args),
        }
    }

    /// First half of the factored dual update: per-edge circulations.
    pub fn circulation(&self) -> Result<Event> {
        self.launch_circulation(&self.f)
    }

    /// `c = C̃ f` into the stepper's circulation buffer.
    fn launch_circulation(&self, f: &Buffer<T>) -> Result<Event> {
        launch(
            &self.dev,
            &self.k.circulation,
            self.ne,
            LOCAL,
            &[
                Arg::U32(self.ne as u32),
                Arg::BufU32(&self.circ_ptr),
                Arg::BufU32(&self.circ),
                Arg::Buf(f),
                Arg::Buf(&self.c),
            ],
        )
    }

    /// Second half of the factored dual update: per-vertex blocks.
    pub fn vertex_blocks(&self) -> Result<Event> {
        self.launch_vertex_blocks(&self.u)
    }

    /// `u += B c` with the configured mapping (c: the stepper's circulation buffer).
    fn launch_vertex_blocks(&self, u: &Buffer<T>) -> Result<Event> {
        match self.variants.block {
            BlockVariant::Vertex => launch(
                &self.dev,
                &self.k.vertex_block_v,
                self.nfree,
                LOCAL,
                &[
                    Arg::U32(self.nfree as u32),
                    Arg::BufU32(&self.slot_vertex),
                    Arg::BufU32(&self.vptr),
                    Arg::BufU64(&self.boff),
                    Arg::BufU32(&self.vh),
                    Arg::Buf(&self.block),
                    Arg::Buf(&self.c),
                    Arg::Buf(u),
                ],
            ),
            BlockVariant::HalfEdge => launch(
                &self.dev,
                &self.k.vertex_block,
                self.nh,
                LOCAL,
                &[
                    Arg::U32(self.nh as u32),
                    Arg::BufU64(&self.hrow),
                    Arg::BufU32(&self.hvert),
                    Arg::BufU32(&self.vptr),
                    Arg::BufU32(&self.vh),
                    Arg::Buf(&self.block),
                    Arg::Buf(&self.c),
                    Arg::Buf(u),
                ],
            ),
        }
    }

    /// `U += D F` with the CSR matrix (scalar or vector kernel).
    pub fn csr_update(&self) -> Result<Event> {
        let (ip, ix, dv, _) = self.csr.as_ref().ok_or_else(|| {
            Error::config(
                "dual",
                "csr",
                "the stepper was built without the CSR matrix",
            )
        })?;
        let nr = self.nh as u32;
        match self.variants.csr {
            CsrVariant::Scalar => launch(
                &self.dev,
                &self.k.csr_scalar,
                self.nh,
                LOCAL,
                &[
                    Arg::U32(nr),
                    Arg::BufU32(ip),
                    Arg::BufU32(ix),
                    Arg::Buf(dv),
                    Arg::Buf(&self.f),
                    Arg::Buf(&self.u),
                ],
            ),
            CsrVariant::Vector => launch(
                &self.dev,
                &self.k.csr_vector,
                self.nh * CSR_LANES,
                LOCAL,
                &[
                    Arg::U32(nr),
                    Arg::BufU32(ip),
                    Arg::BufU32(ix),
                    Arg::Buf(dv),
                    Arg::Buf(&self.f),
                    Arg::Buf(&self.u),
                    Arg::Local(LOCAL * std::mem::size_of::<T>()),
                ],
            ),
        }
    }

    /// The dual update in the configured form; returns the events of its kernels.
    pub fn dual_update(&self) -> Result<Vec<Event>> {
        Ok(match self.dual {
            DualForm::Factored => vec![self.circulation()?, self.vertex_blocks()?],
            DualForm::Csr => vec![self.csr_update()?],
        })
    }

    /// One leapfrog step number `k` (source at `(k + 1/2) Δt`).
    pub fn step(&self, k: usize) -> Result<()> {
        self.primal_update()?;
        self.dual_update()?;
        if let (Some(w), true) = (self.wave, self.nsrc > 0) {
            let t = (k as f64 + 0.5) * self.dt;
            launch(
                &self.dev,
                &self.k.source,
                self.nsrc,
                LOCAL.min(64),
                &[
                    Arg::U32(self.nsrc as u32),
                    Arg::BufU32(&self.src_idx),
                    Arg::Buf(&self.src_g),
                    Arg::Buf(&self.u),
                    Arg::Real(T::of(t)),
                    Arg::Real(T::of(w.t0)),
                    Arg::Real(T::of(w.tau)),
                ],
            )?;
        }
        Ok(())
    }

    fn dot(
        &self,
        x: &Buffer<T>,
        y: &Buffer<T>,
        n: usize,
        partial: &Buffer<T>,
        groups: usize,
    ) -> Result<f64> {
        launch(
            &self.dev,
            &self.k.dot_partial,
            groups * LOCAL,
            LOCAL,
            &[
                Arg::U64(n as u64),
                Arg::Buf(x),
                Arg::Buf(y),
                Arg::Buf(partial),
                Arg::Local(LOCAL * std::mem::size_of::<T>()),
            ],
        )?;
        Ok(self
            .dev
            .read(partial, groups, "dot product")?
            .iter()
            .map(|v| v.f64())
            .sum())
    }

    /// Power iteration for ρ(K) on the device (Rayleigh quotient in the Meps inner
    /// product), on the current operators divided by Δt² (so the result is for unit Δt).
    /// Uses the same seeded start vector as [`crate::solver::spectral_radius`].
    pub fn spectral_radius(&mut self, iters: usize, seed: u64) -> Result<f64> {
        self.dga.require_masses("power iteration")?;
        let mut rng = Rng::new(seed);
        let mut x0 = vec![T::zero(); self.nh];
        for &h in &self.dga.meps.h {
            x0[h as usize] = T::of(rng.sym());
        }
        let dga = self.dga.clone();
        let mbuf =
            self.dev
                .upload_with(dga.meps.data.len(), "Meps blocks (power iteration)", |i| {
                    T::of(dga.meps.data[i])
                })?;
        let x = self.dev.upload(&x0, "power iteration vector")?;
        let kx = self.dev.alloc::<T>(self.nh, "power iteration vector")?;
        let mx = self.dev.alloc::<T>(self.nh, "power iteration vector")?;
        let groups = 256;
        let partial = self.dev.alloc::<T>(groups, "partial sums")?;
        // Operate on (x -> f -> kx) with the stepper's own F and C buffers, saved around.
        let saved = self.state()?;
        let mut lambda = 0.0;
        let nh = self.nh as u32;
        let vb_h = |m: &Buffer<T>, xin: &Buffer<T>, out: &Buffer<T>| {
            launch(
                &self.dev,
                &self.k.vertex_block_h,
                self.nh,
                LOCAL,
                &[
                    Arg::U32(nh),
                    Arg::BufU64(&self.hrow),
                    Arg::BufU32(&self.hvert),
                    Arg::BufU32(&self.vptr),
                    Arg::BufU32(&self.vh),
                    Arg::Buf(m),
                    Arg::Buf(xin),
                    Arg::Buf(out),
                ],
            )
        };
        let mut kxb = kx;
        for _ in 0..iters {
            self.dev.fill_zero(&mut self.f, 4 * self.t)?;
            self.dev.fill_zero(&mut kxb, self.nh)?; // the block kernel accumulates
            self.launch_primal(&x, &self.f)?;
            self.launch_circulation(&self.f)?;
            self.launch_vertex_blocks(&kxb)?; // kxb = -dt² K x
            vb_h(&mbuf, &kxb, &mx)?;
            let num = self.dot(&x, &mx, self.nh, &partial, groups)?;
            vb_h(&mbuf, &x, &mx)?;
            let den = self.dot(&x, &mx, self.nh, &partial, groups)?;
            lambda = -num / den / (self.dt * self.dt);
            let nrm = self.dot(&kxb, &kxb, self.nh, &partial, groups)?.sqrt();
            if nrm == 0.0 {
                break;
            }
            launch(
                &self.dev,
                &self.k.axpy0,
                self.nh,
                LOCAL,
                &[
                    Arg::U64(self.nh as u64),
                    Arg::Real(T::of(-1.0 / nrm)),
                    Arg::Buf(&kxb),
                    Arg::Buf(&x),
                ],
            )?;
        }
        self.set_state(&saved.0, &saved.1)?;
        Ok(lambda)
    }

    /// `(U, F_old, F_new)` in host layouts, with `F_new = F_old - P U` computed on the device.
    fn state_with_next(&mut self) -> Result<(Vec<T>, Vec<T>, Vec<T>)> {
        let u = self.dev.read(&self.u, self.nh, "U")?;
        let f = self.dev.read(&self.f, 4 * self.t, "F")?;
        self.primal_update()?;
        let fnew = self.dev.read(&self.f, 4 * self.t, "F")?;
        self.dev.write(&mut self.f, &f, "F")?;
        let host = |d: &[T]| -> Vec<T> {
            let mut h = vec![T::zero(); d.len()];
            for n in 0..self.t {
                for k in 0..4 {
                    h[4 * n + k] = d[k * self.t + n];
                }
            }
            h
        };
        Ok((u, host(&f), host(&fnew)))
    }
}

/// A device stepper that buffers probe samples on the device (for [`advance_sampled`]).
pub trait DeviceSampling<T: Real> {
    fn device(&self) -> &ClDevice;
    fn n_probes(&self) -> usize;
    /// The device buffer of `SAMPLE_CHUNK · n_probes · 3` samples.
    fn sample_buffer(&self) -> &Buffer<T>;
    /// Step number `k`, then the probe kernel writing slot `j` of the sample buffer.
    fn step_and_sample(&mut self, k: usize, j: usize) -> Result<()>;
}

/// [`Stepper::advance`] for device steppers: steps in chunks of [`SAMPLE_CHUNK`], reading
/// the buffered probe samples after each chunk (or waiting for the queue without probes).
pub fn advance_sampled<T: Real, S: DeviceSampling<T>>(
    s: &mut S,
    first: usize,
    n: usize,
    samples: &mut Vec<f64>,
) -> Result<()> {
    let mut k = first;
    let end = first + n;
    while k < end {
        let m = SAMPLE_CHUNK.min(end - k);
        for j in 0..m {
            s.step_and_sample(k + j, j)?;
        }
        if s.n_probes() > 0 {
            let v = s
                .device()
                .read(s.sample_buffer(), m * s.n_probes() * 3, "probe samples")?;
            samples.extend(v.iter().map(|x| x.f64()));
        } else {
            s.device().finish()?;
        }
        k += m;
    }
    Ok(())
}

impl<T: Real> DeviceSampling<T> for ClStepper<T> {
    fn device(&self) -> &ClDevice {
        &self.dev
    }
    fn n_probes(&self) -> usize {
        self.np
    }
    fn sample_buffer(&self) -> &Buffer<T> {
        &self.samples
    }
    fn step_and_sample(&mut self, k: usize, j: usize) -> Result<()> {
        self.step(k)?;
        if self.np > 0 {
            launch(
                &self.dev,
                &self.k.probe,
                self.np,
                LOCAL.min(64),
                &[
                    Arg::U32(self.np as u32),
                    Arg::U32(j as u32),
                    Arg::BufU32(&self.probe_slots),
                    Arg::Buf(&self.probe_w),
                    Arg::Buf(&self.u),
                    Arg::Buf(&self.samples),
                ],
            )?;
        }
        Ok(())
    }
}

impl<T: Real> Stepper for ClStepper<T> {
    fn name(&self) -> String {
        format!("opencl {} / {}", self.dev.info.platform, self.dev.info.name)
    }

    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        advance_sampled(self, first, n, samples)
    }

    fn energy(&mut self) -> Result<f64> {
        self.dga.require_masses("energy")?;
        let (u, f, fnew) = self.state_with_next()?;
        Ok(super::cpu::energy_of(&self.dga, &u, &f, &fnew))
    }

    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let u = self.dev.read(&self.u, self.nh, "U")?;
        let fd = self.dev.read(&self.f, 4 * self.t, "F")?;
        let mut f = vec![0.0; 4 * self.t];
        for n in 0..self.t {
            for k in 0..4 {
                f[4 * n + k] = fd[k * self.t + n].f64();
            }
        }
        Ok((u.iter().map(|x| x.f64()).collect(), f))
    }

    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        if u.len() != self.nh || f.len() != 4 * self.t {
            return Err(Error::config(
                "state",
                format!("{}+{}", u.len(), f.len()),
                "length does not match the mesh",
            ));
        }
        let ut: Vec<T> = u.iter().map(|&x| T::of(x)).collect();
        let mut fd = vec![T::zero(); 4 * self.t];
        for n in 0..self.t {
            for k in 0..4 {
                fd[k * self.t + n] = T::of(f[4 * n + k]);
            }
        }
        self.dev.write(&mut self.u, &ut, "U")?;
        self.dev.write(&mut self.f, &fd, "F")
    }
}
