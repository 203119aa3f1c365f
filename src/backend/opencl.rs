//! The OpenCL backend: the whole leapfrog on any OpenCL device (GPU of any vendor, or PoCL
//! on a CPU), tested against [`super::cpu`].
//!
//! The OpenCL library is loaded at run time (opencl3's `dynamic` feature): the binary
//! builds and starts without OpenCL, and [`list_devices`] says clearly when none is found.
//! Kernels are in `cl/dgatd.cl`, built with `-D REAL=double|float` and an explicit
//! `-cl-std` (OpenCL C 1.2, or the device's own version when older, see [`cl_std_option`]);
//! a build failure carries the build log, and the log of every successful build is kept
//! ([`ClDevice::build_log`]) and printed to stderr when `DGATD_CL_BUILD_LOG=1`, so compiler
//! warnings are visible. Double precision is only built for devices reporting `cl_khr_fp64`,
//! and the kernels enable that pragma only where the compiler defines it.
//!
//! OpenCL does not promise zeroed allocations: every buffer is zeroed or written in full
//! when it is allocated ([`ClDevice::alloc`], [`ClDevice::upload`]), so no kernel reads a
//! value nothing wrote (checked under Oclgrind by `tests/oclgrind.rs`).
//!
//! Device layouts: `U[2e + s]` as on the host, or slot-major ([`ULayout::SlotMajor`]: the
//! free half-edges' values in the factored dual's slot order, so the vertex-block update
//! reads and writes them coalesced; the main job's layout where it applies, set by
//! [`ClStepper::set_u_layout`]; the state is returned in the host layout either way);
//! `F[k*TP + n]` (structure of arrays, host slot `4n + k`), so the per-tet primal kernel
//! reads and writes coalesced, with `TP` ([`tet_stride`]) the tet count rounded up to a
//! multiple of 64 so that every column of F and of the per-tet operators and tables starts
//! on a 256-byte boundary (the padding tets carry zero operators and F); the dual-face circulation lists paired
//! ([`CircVariant::Paired`]: one word `(n << 4) | (fp << 2) | fm` for a tet's two entries
//! `+F(n, fp) - F(n, fm)`, half the index bytes of one word per entry, the same sums).
//! Index tables are remapped once on upload. Inside the time loop nothing crosses the bus but the
//! buffered probe samples, read every [`SAMPLE_CHUNK`] steps: the source waveform is
//! evaluated in the kernel.
//!
//! Every `unsafe` block in the crate is in this file and its child `pinned` (pinned host
//! staging); each says why it is sound.

mod pinned;
pub use pinned::Pinned;

use super::Stepper;
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::{DualForm, Operators, build_csr};
use crate::problem::Waveform;
use crate::util::{C64, Rng};
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
use rayon::prelude::*;
use std::ptr;
use std::sync::{Arc, Mutex};

/// The kernel source, embedded in the binary.
pub const SOURCE: &str = include_str!("../../cl/dgatd.cl");
/// The buffer-fill kernel (`fill_u32`), built once per device on first use.
pub const FILL_SOURCE: &str = include_str!("../../cl/fill.cl");
/// Probe samples are buffered on the device for this many steps between reads.
pub const SAMPLE_CHUNK: usize = 1024;
/// Buffers up to this many bytes are zeroed at allocation by a host write (see
/// [`ClDevice::alloc`]), larger ones by the fill kernel.
pub const ZERO_BY_WRITE_MAX: usize = 64 << 20;
/// Work-group size used for every 1-D kernel.
pub const LOCAL: usize = 256;
/// Local memory of `vertex_block_sl`'s staged blocks per work-group: 32 KiB, the least an
/// OpenCL 1.2 device offers.
const STAGE_BYTES: usize = 32 << 10;
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
    /// Local memory per work-group, bytes (`CL_DEVICE_LOCAL_MEM_SIZE`).
    pub local_mem: u64,
    /// Largest work-group (`CL_DEVICE_MAX_WORK_GROUP_SIZE`).
    pub max_work_group: usize,
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
                local_mem: d.local_mem_size().unwrap_or(0),
                max_work_group: d.max_work_group_size().unwrap_or(0),
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

/// An opened device: context and two in-order profiling queues, the main one (every
/// command unless said otherwise) and a side one, on which a partitioned rank runs its
/// interior kernels while the main queue packs and moves the halo ([`Lane`]).
pub struct ClDevice {
    pub info: DeviceInfo,
    context: Context,
    queue: CommandQueue,
    /// `fill_u32` of `cl/fill.cl`, built on the first [`ClDevice::fill_zero`].
    fill: Mutex<Option<Kernel>>,
    /// The log of every program built on this device, in build order.
    logs: Mutex<Vec<BuildLog>>,
    side: CommandQueue,
}

/// Which of a device's two queues a command goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Main,
    Side,
}

/// The compiler's log of one successful build (warnings, or vendor remarks; often empty).
#[derive(Clone, Debug)]
pub struct BuildLog {
    /// The source's name, e.g. `cl/dgatd.cl`.
    pub name: String,
    /// The full option string passed to the compiler.
    pub options: String,
    pub log: String,
}

/// The `-cl-std` option for a device whose `CL_DEVICE_OPENCL_C_VERSION` is `opencl_c`
/// ("OpenCL C <major>.<minor> <vendor text>"): `-cl-std=CL1.2`, the version every kernel is
/// written for, or `-cl-std=CL1.1` / `CL1.0` on a device that only compiles those (the
/// kernels use nothing newer than OpenCL C 1.0 plus `restrict`). A device reporting 2.x or
/// 3.x still compiles 1.2 (it must accept `-cl-std=CL1.2`), which keeps the language, and so
/// the arithmetic, the same on every implementation. An unreadable string gives CL1.2.
pub fn cl_std_option(opencl_c: &str) -> &'static str {
    let version = opencl_c
        .trim()
        .strip_prefix("OpenCL C ")
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| {
            let (a, b) = v.split_once('.')?;
            Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))
        });
    match version {
        Some((1, 0)) => "-cl-std=CL1.0",
        Some((1, 1)) => "-cl-std=CL1.1",
        _ => "-cl-std=CL1.2",
    }
}

impl ClDevice {
    pub fn open(info: DeviceInfo) -> Result<Arc<ClDevice>> {
        let device = Device::new(info.id as cl_device_id);
        let context = Context::from_device(&device).map_err(cl_err("context creation"))?;
        let make = || {
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .map_err(cl_err("queue creation"))
        };
        let (queue, side) = (make()?, make()?);
        Ok(Arc::new(ClDevice {
            info,
            context,
            queue,
            fill: Mutex::new(None),
            logs: Mutex::new(Vec::new()),
            side,
        }))
    }

    /// Waits until both queues are empty.
    pub fn finish(&self) -> Result<()> {
        self.queue.finish().map_err(cl_err("finish"))?;
        self.side.finish().map_err(cl_err("finish"))
    }

    /// Submits the side queue's commands to the device (they start without waiting for a
    /// blocking call on that queue).
    pub fn flush_side(&self) -> Result<()> {
        self.side.flush().map_err(cl_err("flush"))
    }

    fn queue_of(&self, lane: Lane) -> &CommandQueue {
        match lane {
            Lane::Main => &self.queue,
            Lane::Side => &self.side,
        }
    }

    /// Allocates `n` elements, zeroed: OpenCL leaves a new buffer's contents undefined.
    /// Refuses sizes above the device's maximum allocation.
    ///
    /// Buffers up to [`ZERO_BY_WRITE_MAX`] bytes are zeroed by one blocking host write of the
    /// whole buffer, larger ones by [`Self::fill_zero`] (no bus traffic). Both give zeros; the
    /// whole-buffer write is there for Oclgrind, which keeps its record of which bytes are
    /// defined per buffer slot and reuses the slot of a released buffer without resetting that
    /// record: a new buffer in a reused slot inherits the old one's record (and its size), so
    /// kernel stores beyond the old size go unrecorded and later reads look uninitialised. A
    /// host write from offset 0 over the whole buffer replaces the record. For the same reason
    /// every host write in this module covers a whole buffer (except the chunks of
    /// [`Self::upload_with`] above 2^24 elements, far beyond Oclgrind's 128 MiB device).
    pub fn alloc<T: Real>(&self, n: usize, what: &str) -> Result<Buffer<T>> {
        let mut b = self.create::<T>(n, what)?;
        let len = n.max(1);
        if len * std::mem::size_of::<T>() <= ZERO_BY_WRITE_MAX {
            self.write(&mut b, &vec![T::zero(); len], what)?;
        } else {
            self.fill_zero(&mut b, len)?;
        }
        Ok(b)
    }

    /// [`Self::alloc`] for 32-bit indices: `n` zeros (the same two ways of zeroing).
    pub fn alloc_u32(&self, n: usize, what: &str) -> Result<Buffer<u32>> {
        let mut b = self.create::<u32>(n, what)?;
        let len = n.max(1);
        if len * 4 <= ZERO_BY_WRITE_MAX {
            self.write(&mut b, &vec![0u32; len], what)?;
        } else {
            let k = self.fill_kernel()?;
            let k = k
                .as_ref()
                .unwrap_or_else(|| unreachable!("built by fill_kernel"));
            launch::<f32>(
                self,
                k,
                len,
                LOCAL,
                &[Arg::U64(len as u64), Arg::BufU32(&b), Arg::U32(0)],
            )?;
        }
        Ok(b)
    }

    /// The `fill_u32` kernel, built on first use.
    fn fill_kernel(&self) -> Result<std::sync::MutexGuard<'_, Option<Kernel>>> {
        let mut fill = self.fill.lock().unwrap_or_else(|p| p.into_inner());
        if fill.is_none() {
            let program = self.build_source(FILL_SOURCE, "cl/fill.cl", "")?;
            *fill = Some(Kernel::create(&program, "fill_u32").map_err(cl_err("fill_u32"))?);
        }
        Ok(fill)
    }

    /// Creates a buffer of `n.max(1)` elements with undefined contents, refusing sizes above
    /// the device's maximum allocation; callers write all of it before any kernel reads it.
    fn create<T>(&self, n: usize, what: &str) -> Result<Buffer<T>> {
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

    /// A buffer holding `data` (one default element, zero for the types used here, when
    /// `data` is empty: a buffer is never left undefined).
    pub fn upload<T: Copy + Default>(&self, data: &[T], what: &str) -> Result<Buffer<T>> {
        let mut b = self.create::<T>(data.len(), what)?;
        if data.is_empty() {
            self.write(&mut b, &[T::default()], what)?;
        } else {
            self.write(&mut b, data, what)?;
        }
        Ok(b)
    }

    /// Writes `data` at the start of `b` and waits until the write has completed.
    ///
    /// A blocking write only promises that `data` may be reused when the call returns; the
    /// transfer itself may still be queued (OpenCL 3.0, clEnqueueWriteBuffer). A kernel then
    /// enqueued on the *other* queue is not ordered after it: Intel's CPU runtime ran the
    /// side-queue halo gather before such a write had landed (1 run in 3 of the kernel smoke
    /// run, the written values overwriting the kernel's). Waiting for the write's event
    /// orders it before every later command on either queue.
    pub fn write<T>(&self, b: &mut Buffer<T>, data: &[T], what: &str) -> Result<()> {
        // SAFETY: blocking write of data.len() elements into a buffer allocated with at least
        // that many (callers pass buffers created for this data); `data` outlives the call.
        let ev = unsafe {
            self.queue
                .enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[])
        }
        .map_err(cl_err(what))?;
        ev.wait().map_err(cl_err(what))
    }

    /// Writes `data` at element offset `at` of `b` and waits until the write has completed
    /// (see [`Self::write`] for why).
    pub fn write_at<T>(&self, b: &mut Buffer<T>, at: usize, data: &[T], what: &str) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking write of data.len() elements at byte offset at*size_of::<T>();
        // callers allocate `b` with at least at + data.len() elements.
        let ev = unsafe {
            self.queue.enqueue_write_buffer(
                b,
                CL_BLOCKING,
                at * std::mem::size_of::<T>(),
                data,
                &[],
            )
        }
        .map_err(cl_err(what))?;
        ev.wait().map_err(cl_err(what))
    }

    /// Allocates `n` elements and fills them chunk by chunk from `f(i)`, so no full host
    /// copy of a converted array is ever made.
    pub fn upload_with<T: Copy + Default + Send, F: Fn(usize) -> T + Sync>(
        &self,
        n: usize,
        what: &str,
        f: F,
    ) -> Result<Buffer<T>> {
        use rayon::prelude::*;
        if n == 0 {
            return self.upload::<T>(&[], what);
        }
        let mut b = self.create::<T>(n, what)?;
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

    /// Reads the first `out.len()` elements of `b` into `out` (blocking, main queue: it
    /// waits for the main queue's earlier commands only).
    pub fn read_into<T>(&self, b: &Buffer<T>, out: &mut [T], what: &str) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking read of out.len() elements into `out`, which is exclusively
        // borrowed for the call; callers pass a buffer of at least that many elements.
        unsafe { self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, out, &[]) }
            .map_err(cl_err(what))?;
        Ok(())
    }

    /// Reads `n` elements of `b` from element offset `at` (blocking, main queue).
    pub fn read_range<T: Default + Clone>(
        &self,
        b: &Buffer<T>,
        at: usize,
        n: usize,
        what: &str,
    ) -> Result<Vec<T>> {
        let mut out = vec![T::default(); n];
        if n > 0 {
            // SAFETY: blocking read of n elements from byte offset at*size_of::<T>() into a
            // host vector of exactly n elements; callers pass a buffer of at least at + n.
            unsafe {
                self.queue.enqueue_read_buffer(
                    b,
                    CL_BLOCKING,
                    at * std::mem::size_of::<T>(),
                    &mut out,
                    &[],
                )
            }
            .map_err(cl_err(what))?;
        }
        Ok(out)
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

    /// Sets the first `n` elements of `b` to zero (enqueued; ordered by the in-order queue).
    ///
    /// By the `fill_u32` kernel over `n · size_of::<T>() / 4` words rather than
    /// `clEnqueueFillBuffer`: the result is the same, but Oclgrind (21.10, and its source as
    /// of 2026) records a host fill one pattern at a time, each record replacing the whole
    /// buffer's shadow with one of pattern size, so a buffer zeroed by `clEnqueueFillBuffer`
    /// reads as uninitialised in every later kernel; stores from a kernel are tracked exactly.
    pub fn fill_zero<T: Real>(&self, b: &mut Buffer<T>, n: usize) -> Result<()> {
        let bytes = n * std::mem::size_of::<T>();
        debug_assert!(
            bytes.is_multiple_of(4),
            "fill_zero of an element type of {bytes} bytes"
        );
        let words = bytes / 4;
        let fill = self.fill_kernel()?;
        let Some(k) = fill.as_ref() else {
            unreachable!("built above")
        };
        launch::<T>(
            self,
            k,
            words,
            LOCAL,
            &[Arg::U64(words as u64), Arg::Buf(b), Arg::U32(0)],
        )?;
        Ok(())
    }

    /// Builds OpenCL C `source` (called `name` in messages) with [`cl_std_option`] for this
    /// device followed by `opts`; a failure carries the compiler's build log. The log of a
    /// successful build is kept ([`Self::build_log`]) and printed to stderr when the
    /// environment has `DGATD_CL_BUILD_LOG=1`.
    pub fn build_source(&self, source: &str, name: &str, opts: &str) -> Result<Program> {
        // DGATD_CL_OPTIONS: extra build options for every program (e.g. -cl-nv-verbose for
        // NVIDIA's register and spill counts in the build log, shown by DGATD_CL_BUILD_LOG=1)
        let extra = std::env::var("DGATD_CL_OPTIONS").unwrap_or_default();
        let opts = format!("{} {opts} {extra}", cl_std_option(&self.info.opencl_c))
            .trim()
            .to_string();
        let program =
            Program::create_and_build_from_source(&self.context, source, &opts).map_err(|log| {
                Error::OpenCl {
                    what: format!("build of {name} with \"{opts}\" on {}", self.info.name),
                    msg: log,
                }
            })?;
        let log = program
            .get_build_log(self.info.id as cl_device_id)
            .unwrap_or_else(|e| format!("(build log unavailable: {e})"));
        let log = log.trim_end_matches(['\0', '\n', ' ']).to_string();
        if std::env::var("DGATD_CL_BUILD_LOG").is_ok_and(|v| v == "1") {
            eprintln!(
                "build log of {name} with \"{opts}\" on {}: {}",
                self.info.name,
                if log.trim().is_empty() {
                    "(empty)"
                } else {
                    &log
                }
            );
        }
        // DGATD_CL_DUMP_BINARY=<dir>: the built program's binary (PTX text on NVIDIA) is
        // written there, for reading the generated loads and registers when tuning a kernel
        if let Ok(dir) = std::env::var("DGATD_CL_DUMP_BINARY") {
            dump_binary(&program, &dir, name, &opts);
        }
        self.logs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(BuildLog {
                name: name.to_string(),
                options: opts,
                log,
            });
        Ok(program)
    }

    /// The logs of every successful build on this device so far, in order.
    pub fn build_logs(&self) -> Vec<BuildLog> {
        self.logs.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// [`Self::build_logs`] as text: per build, a header line naming the source and the
    /// options, then the compiler's log (or "(empty)").
    pub fn build_log(&self) -> String {
        self.build_logs()
            .iter()
            .map(|b| {
                format!(
                    "== {} with \"{}\"\n{}\n",
                    b.name,
                    b.options,
                    if b.log.trim().is_empty() {
                        "(empty)"
                    } else {
                        &b.log
                    }
                )
            })
            .collect()
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
        let program = self.build_source(SOURCE, "cl/dgatd.cl", &dgatd_options::<T>(false))?;
        let k = |name: &str| Kernel::create(&program, name).map_err(cl_err(name));
        Ok(Kernels {
            primal_tet: k("primal_tet")?,
            primal_row: k("primal_row")?,
            circulation: k("circulation")?,
            circulation_pair: k("circulation_pair")?,
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
            loss_rows: k("loss_rows")?,
            loss_scatter: k("loss_scatter")?,
            primal_tet_idx: k("primal_tet_idx")?,
            circulation_idx: k("circulation_idx")?,
            circulation_pair_idx: k("circulation_pair_idx")?,
            vertex_block_v_idx: k("vertex_block_v_idx")?,
            gather: k("gather")?,
            meps_slots: k("meps_slots")?,
            sym4_apply: k("sym4_apply")?,
            scatter: k("scatter")?,
            dft_acc: k("dft_acc")?,
            mag_loss: k("mag_loss")?,
            disp_correct: k("disp_correct")?,
            disp_poles: k("disp_poles")?,
            disp_poles_idx: k("disp_poles_idx")?,
            vertex_block_vf: k("vertex_block_vf")?,
            vertex_block_v_from: k("vertex_block_v_from")?,
            primal_sym: k("primal_sym")?,
            primal_sym_idx: k("primal_sym_idx")?,
            vertex_block_s: k("vertex_block_s")?,
            vertex_block_sl: k("vertex_block_sl")?,
            vertex_block_sc: k("vertex_block_sc")?,
            vertex_block_s_idx: k("vertex_block_s_idx")?,
            vertex_block_d: k("vertex_block_d")?,
            vertex_block_d_idx: k("vertex_block_d_idx")?,
            fma_peak: k("fma_peak")?,
            program,
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
    pub(crate) circulation_pair: Kernel,
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
    pub(crate) loss_rows: Kernel,
    pub(crate) loss_scatter: Kernel,
    pub(crate) primal_tet_idx: Kernel,
    pub(crate) circulation_idx: Kernel,
    pub(crate) circulation_pair_idx: Kernel,
    pub(crate) vertex_block_v_idx: Kernel,
    pub(crate) gather: Kernel,
    pub(crate) meps_slots: Kernel,
    pub(crate) sym4_apply: Kernel,
    pub(crate) scatter: Kernel,
    pub(crate) dft_acc: Kernel,
    pub(crate) mag_loss: Kernel,
    pub(crate) disp_correct: Kernel,
    pub(crate) disp_poles: Kernel,
    pub(crate) disp_poles_idx: Kernel,
    pub(crate) vertex_block_vf: Kernel,
    pub(crate) vertex_block_v_from: Kernel,
    pub(crate) primal_sym: Kernel,
    pub(crate) primal_sym_idx: Kernel,
    pub(crate) vertex_block_s: Kernel,
    pub(crate) vertex_block_sl: Kernel,
    pub(crate) vertex_block_sc: Kernel,
    pub(crate) vertex_block_s_idx: Kernel,
    pub(crate) vertex_block_d: Kernel,
    pub(crate) vertex_block_d_idx: Kernel,
    pub fma_peak: Kernel,
    /// `cl/dgatd.cl` built for the stepper's precision ([`dgatd_options`] without f32
    /// operators), for the kernels created later ([`ClStepper::dgatd_kernels`]).
    program: Program,
}

/// The build options of `cl/dgatd.cl` for precision `T`; `f32_operators`: the operators of
/// `primal_sym` and the packed block kernels stored in float (mixed storage, `-D OPREAL=float`).
fn dgatd_options<T: Real>(f32_operators: bool) -> String {
    let real = if T::NAME == "f64" {
        "-D REAL=double -D REAL_IS_DOUBLE=1"
    } else {
        "-D REAL=float"
    };
    let op = if f32_operators {
        " -D OPREAL=float"
    } else {
        ""
    };
    format!("{real}{op} -D CSR_LANES={CSR_LANES}")
}

fn round_up(n: usize, m: usize) -> usize {
    n.div_ceil(m).max(1) * m
}

/// A kernel argument.
#[derive(Clone, Copy)]
pub enum Arg<'a, T> {
    U32(u32),
    U64(u64),
    Real(T),
    Buf(&'a Buffer<T>),
    BufU32(&'a Buffer<u32>),
    BufU64(&'a Buffer<u64>),
    /// A double-precision buffer in a kernel of any precision (`cl/pack.cl`).
    BufF64(&'a Buffer<f64>),
    /// A single-precision buffer in a double-precision kernel (mixed storage).
    BufF32(&'a Buffer<f32>),
    Local(usize),
}

/// Enqueues `kernel` over `n` work-items (rounded up to the work-group size `local`) on the
/// main queue.
pub fn launch<T: Real>(
    dev: &ClDevice,
    kernel: &Kernel,
    n: usize,
    local: usize,
    args: &[Arg<T>],
) -> Result<Event> {
    launch_on(dev, Lane::Main, kernel, n, local, args, &[])
}

/// [`launch`] on the queue `lane`, after the events `wait` (of either queue) complete.
pub fn launch_on<T: Real>(
    dev: &ClDevice,
    lane: Lane,
    kernel: &Kernel,
    n: usize,
    local: usize,
    args: &[Arg<T>],
    wait: &[&Event],
) -> Result<Event> {
    let mut ek = ExecuteKernel::new(kernel);
    for e in wait {
        ek.set_wait_event(e);
    }
    // SAFETY: each argument matches the kernel's parameter list in cl/*.cl in order and
    // type (scalars by value of the declared width; buffers of the declared element type,
    // except fill_u32, which takes any buffer as 32-bit words and is launched over at most
    // its size in words; local buffers by size). Buffers live until the event completes
    // because callers hold them for the lifetime of the stepper and wait on the queue
    // before dropping.
    unsafe {
        for a in args {
            match a {
                Arg::U32(x) => ek.set_arg(x),
                Arg::U64(x) => ek.set_arg(x),
                Arg::Real(x) => ek.set_arg(x),
                Arg::Buf(b) => ek.set_arg(*b),
                Arg::BufU32(b) => ek.set_arg(*b),
                Arg::BufU64(b) => ek.set_arg(*b),
                Arg::BufF64(b) => ek.set_arg(*b),
                Arg::BufF32(b) => ek.set_arg(*b),
                Arg::Local(bytes) => ek.set_arg_local_buffer(*bytes),
            };
        }
        ek.set_global_work_size(round_up(n, local))
            .set_local_work_size(local)
            .enqueue_nd_range(dev.queue_of(lane))
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
    /// One work-item per tet, the 4x6 block `Δt Mmu⁻¹ C` stored (24 values per tet).
    Tet,
    /// One work-item per output row, the seed's mapping (same storage as `Tet`).
    Row,
    /// One work-item per tet, `Δt Mmu⁻¹` stored as its 10-value upper triangle and the
    /// incidence `C` rebuilt from orientation bits in the kernel (default: 112 fewer bytes
    /// per tet in f64, see results/h200/).
    Sym,
}

impl PrimalVariant {
    pub fn name(self) -> &'static str {
        match self {
            PrimalVariant::Tet => "tet",
            PrimalVariant::Row => "row",
            PrimalVariant::Sym => "tet_sym",
        }
    }

    /// Reals stored per tet.
    pub fn per_tet(self) -> usize {
        match self {
            PrimalVariant::Sym => 10,
            _ => 24,
        }
    }
}

/// Mapping of the per-vertex block kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockVariant {
    /// One work-item per half-edge slot `2e + s`, reading its row (uncoalesced).
    HalfEdge,
    /// Vertex-major: the slots of a vertex are consecutive work-items reading columns of
    /// the symmetric block (coalesced). Default with dispersion (the fused dispersive
    /// kernel reads this layout).
    Vertex,
    /// Vertex-major over packed blocks: each block's upper triangle, `d(d+1)/2` values
    /// instead of `d²`. Default without dispersion.
    Packed,
    /// [`BlockVariant::Packed`] with each work-group's blocks staged in local memory by
    /// coalesced reads first (kernel `vertex_block_sl`; the same layout).
    PackedLocal,
    /// [`BlockVariant::Packed`] with the circulations of each work-group's slots staged in
    /// local memory (kernel `vertex_block_sc`; the same layout and the same sums, so the same result up to
    /// the compiler's FMA contraction).
    PackedSharedC,
    /// Vertex-major over blocks stored by wrapped diagonals, `d(⌊d/2⌋+1)` values: every
    /// read coalesced, each thread its own circulation.
    Diag,
}

/// How the vertex blocks are stored on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockLayout {
    Full,
    Tri,
    Diag,
}

impl BlockVariant {
    pub fn name(self) -> &'static str {
        match self {
            BlockVariant::HalfEdge => "vertex_block_halfedge",
            BlockVariant::Vertex => "vertex_block",
            BlockVariant::Packed => "vertex_block_sym",
            BlockVariant::PackedLocal => "vertex_block_sym_local",
            BlockVariant::PackedSharedC => "vertex_block_sym_cstage",
            BlockVariant::Diag => "vertex_block_diag",
        }
    }

    fn layout(self) -> BlockLayout {
        match self {
            BlockVariant::Packed | BlockVariant::PackedLocal | BlockVariant::PackedSharedC => {
                BlockLayout::Tri
            }
            BlockVariant::Diag => BlockLayout::Diag,
            _ => BlockLayout::Full,
        }
    }
}

/// CSR variant of the dual update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrVariant {
    Scalar,
    Vector,
}

/// How the dispersion's correction and pole step run with the factored, vertex-major dual
/// update (design note §13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DispVariant {
    /// Two kernels of their own around the dual update (`disp_correct`, `disp_poles`).
    Split,
    /// The vertices inside one material with no σ and no source inside the dual update
    /// (`vertex_block_vf`), the rest split. Default: fewer bytes (`results/dispersive/`).
    Fused,
}

impl DispVariant {
    pub fn name(self) -> &'static str {
        match self {
            DispVariant::Split => "split",
            DispVariant::Fused => "fused",
        }
    }
}

/// The kernel variants a [`ClStepper`] launches (the bench times each one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variants {
    pub primal: PrimalVariant,
    pub block: BlockVariant,
    pub csr: CsrVariant,
    pub disp: DispVariant,
    pub circ: CircVariant,
}

impl Default for Variants {
    /// The fastest variants measured (`results/h200/`, `results/dispersive/`).
    fn default() -> Self {
        Variants {
            primal: PrimalVariant::Sym,
            block: BlockVariant::Packed,
            csr: CsrVariant::Vector,
            disp: DispVariant::Fused,
            circ: CircVariant::Paired,
        }
    }
}

impl Variants {
    /// The default variants for `dga`: with dispersion, the full vertex blocks that the
    /// fused dispersive kernel reads; above [`CircVariant::PAIRED_MAX_TETS`] tets, the
    /// circulation lists.
    pub fn for_dga(dga: &Dga) -> Self {
        let mut v = Variants::default();
        if dga.disp.is_some() {
            v.block = BlockVariant::Vertex;
        }
        if dga.n_tets >= CircVariant::PAIRED_MAX_TETS {
            v.circ = CircVariant::Lists;
        }
        v
    }
}

/// How the dual-face circulation lists `c = C̃ F` are stored on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircVariant {
    /// One word per entry, `(F slot << 1) | negative` (`circulation`).
    Lists,
    /// One word per tet around the edge, `(n << 4) | (fp << 2) | fm` for its two entries
    /// `+F(n, fp)`, `-F(n, fm)` (`circulation_pair`): half the index bytes, the same sums in
    /// the same order. Default below [`Self::PAIRED_MAX_TETS`] tets.
    Paired,
}

impl CircVariant {
    /// Meshes of this many tets or more keep the lists (28-bit tet indices in a pair).
    pub const PAIRED_MAX_TETS: usize = 1 << 28;

    pub fn name(self) -> &'static str {
        match self {
            CircVariant::Lists => "circulation",
            CircVariant::Paired => "circulation_pair",
        }
    }
}

/// The device words of the circulation lists of `dga` in form `v` (F slots of a mesh of
/// `t` tets), or an error naming what does not fit.
fn circulation_words(dga: &Dga, v: CircVariant) -> Result<Vec<u32>> {
    let (circ, t) = (&dga.circ, dga.n_tets);
    match v {
        CircVariant::Lists => Ok(circ
            .par_iter()
            .map(|&x| (f_slot(x >> 1, tet_stride(t)) << 1) | (x & 1))
            .collect()),
        CircVariant::Paired => {
            if t >= CircVariant::PAIRED_MAX_TETS {
                return Err(Error::DeviceMemory(format!(
                    "{t} tets: the paired circulation entries hold 28-bit tet indices; use the circulation lists"
                )));
            }
            let pair = |k: usize| -> Result<u32> {
                let (a, b) = (circ[2 * k], circ[2 * k + 1]);
                let (fa, fb) = (a >> 1, b >> 1);
                if a & 1 != 0 || b & 1 != 1 || fa / 4 != fb / 4 {
                    return Err(Error::config(
                        "circulation",
                        format!("entries {a:#x}, {b:#x}"),
                        "not a tet's pair +F(n, fp), -F(n, fm)",
                    ));
                }
                Ok(((fa / 4) << 4) | ((fa % 4) << 2) | (fb % 4))
            };
            (0..circ.len() / 2).into_par_iter().map(pair).collect()
        }
    }
}

/// The CSR matrix on the device: row pointers, columns, values and the number of nonzeros.
pub type DeviceCsr<T> = (Buffer<u32>, Buffer<u32>, Buffer<T>, usize);

/// The time-stepping operators of a lossless, non-dispersive mesh assembled on the device
/// and left there, in the layouts and precision of the default stepper
/// ([`ClStepper::with_resident`], built by `backend::device_assembly::resident`), for unit Δt:
/// - `primal`: `Mmu_n⁻¹`'s upper triangle, `primal[k TP + n]` (kernel `primal_sym`; `TP` the
///   [`tet_stride`], zero at the padding tets);
/// - `blocks`: each `Meps_v⁻¹` packed as its upper triangle column by column at `poff[v]`
///   ([`crate::dga::VertexBlocks::pack`], kernel `vertex_block_s`);
/// - `layout`: the block layout (which half-edges each vertex block holds), with no values.
///
/// Nothing but the layout comes back to the host: the operators are never downloaded.
pub struct ResidentOperators<T> {
    pub n_tets: usize,
    pub primal: Buffer<T>,
    pub blocks: Buffer<T>,
    pub poff: Vec<u64>,
    pub layout: crate::dga::VertexBlocks,
    /// The CSR form's matrix at unit `Δt` in the stepper's layout, where it was built on
    /// the device too (`backend::device_assembly::resident_csr`).
    pub csr: Option<DeviceCsr<T>>,
    /// The masses themselves, where they were packed too
    /// (`backend::device_assembly::resident_with_masses`): a stepper over a host `Dga`
    /// without masses then runs the power iteration and the energy checks on them.
    pub masses: Option<ResidentMasses<T>>,
}

/// The mass matrices left on the device in precision `T` ([`ResidentOperators::masses`]):
/// what [`ClStepper::power_iteration`] and the device energy read where the host's `Dga`
/// holds no masses.
pub struct ResidentMasses<T> {
    /// Every `Meps_v` row-major in the host's block layout (`dga.meps.off`): the power
    /// iteration's Rayleigh quotient (`vertex_block_h`).
    pub meps_full: Buffer<T>,
    /// Every `Meps_v`'s upper triangle packed at `poff` (the energy, `meps_slots`).
    pub meps_packed: Buffer<T>,
    /// `Mmu_n`'s upper triangle row by row in columns of the tet stride (the energy,
    /// `sym4_apply`).
    pub mmu: Buffer<T>,
}

impl<T> ResidentOperators<T> {
    /// The values of packed blocks.
    pub fn block_len(&self) -> usize {
        *self.poff.last().unwrap_or(&0) as usize
    }

    /// The [`crate::dga::Masses`] a [`Dga`] of these operators carries on the host: the block layout,
    /// no values (a stepper built on it reads the operators from the device).
    pub fn layout_only(&self) -> crate::dga::Masses {
        let empty = crate::dga::VertexBlocks {
            data: Vec::new(),
            ..self.layout.clone()
        };
        crate::dga::Masses {
            mmu: Vec::new(),
            mmu_inv: Vec::new(),
            meps: empty.clone(),
            meps_inv: empty,
        }
    }
}

/// Mixed storage (issue 19, a bench variant): the default layouts' operators, `Δt Mmu⁻¹`'s
/// triangle (`primal_sym`) and the packed `Δt Meps_v⁻¹` blocks (`vertex_block_s`), rounded
/// to f32 once on the host, with the kernels of `cl/dgatd.cl` built with `-D OPREAL=float`
/// for double-precision fields: every product and sum is in f64, only the operators'
/// stored values are rounded. Built by [`ClStepper::mixed_operators`] for the stepper's Δt.
///
/// Rounding keeps both operators symmetric (each stored once), so the scheme with them is
/// again an exactly energy-conserving leapfrog, of an operator `K̃` within a relative 2⁻²⁴
/// entry by entry of `K`'s factors (`tests/mixed.rs` bounds the shift of its eigenvalues).
pub struct MixedOperators {
    primal: Kernel,
    block: Kernel,
    p: Buffer<f32>,
    b: Buffer<f32>,
    /// The Δt the operators were scaled by.
    pub dt: f64,
}

/// Slot-major `U` (issue 19; the stepper's own layout through [`ClStepper::set_u_layout`],
/// and bench variants with explicit moves): the free half-edges' DoFs stored in the
/// factored dual's slot order (`US[g] = U[vh[g]]`, vertex by vertex), so that the
/// vertex-block update reads and writes them coalesced; the primal update gathers each
/// edge's two halves through `ES` (slot of every half-edge, `NF` for one that is not free,
/// and `US[NF] = 0`). Built by [`ClStepper::slot_major`]; [`ClStepper::to_slot_major`] and
/// [`ClStepper::from_slot_major`] move the stepper's `U` in and out (a half-edge that is not
/// free is read as zero, as in any physical state: a PEC wall's). Same products in the same
/// order as `primal_sym` and `vertex_block_s` (`tests/opencl.rs`).
pub struct SlotMajor<T: Real> {
    primal: Kernel,
    block: Kernel,
    /// The same on index subsets (`primal_sym_sm_idx`, `vertex_block_s_sm_idx`: a
    /// partitioned rank's interface and interior parts).
    primal_idx: Kernel,
    block_idx: Kernel,
    es: Buffer<u32>,
    /// `primal_sym_st` and its per-tet slot table ([`ClStepper::slot_table`]; a bench
    /// variant).
    table: Option<(Kernel, Buffer<u32>)>,
    us: Buffer<T>,
    /// The operators stored in f32 ([`MixedOperators`]) when built for mixed storage.
    mixed: Option<MixedOperators>,
}

/// The stepper's storage of `U` on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ULayout {
    /// `U[2e + s]`, by half-edge: every kernel and variant, losses, dispersion, partitions.
    HalfEdge,
    /// Slot-major ([`SlotMajor`]): the free half-edges' DoFs in the factored dual's slot
    /// order, so the vertex-block update reads and writes them coalesced. For the default
    /// kernels (`primal_sym_sm`, `vertex_block_s_sm`) of a lossless, non-dispersive mesh
    /// with the factored dual, a source on free half-edges and every non-free half-edge
    /// zero; the same products in the same order as the half-edge layout (bit for bit on
    /// PoCL). The main job's default where it applies ([`ClStepper::slot_major_refusal`]).
    SlotMajor,
}

impl ULayout {
    pub fn name(self) -> &'static str {
        match self {
            ULayout::HalfEdge => "half-edge",
            ULayout::SlotMajor => "slot-major",
        }
    }
}

/// The stepper's slot-major state ([`ULayout::SlotMajor`]): the kernels and `US`, and the
/// source's and probes' half-edges mapped to their slots.
struct SlotState<T: Real> {
    sm: SlotMajor<T>,
    src_idx: Buffer<u32>,
    probe_slots: Buffer<u32>,
}

/// The circulation lists in sliced ELL form (`circulation_sell`, a bench variant): chunks
/// of 32 edges, each chunk's lists interleaved entry by entry and padded to its longest.
pub struct SellCirculation {
    kernel: Kernel,
    so: Buffer<u64>,
    sc: Buffer<u32>,
    /// Entries stored, padding included (the byte model's).
    pub entries: usize,
}

/// The circulation lists with each tet's two entries in one word (`circulation_pair`,
/// `circulation_pair_sell`, bench variants): `(n << 4) | (fp << 2) | fm` for the entries
/// `+F(n, fp)`, `-F(n, fm)`, half the index bytes; optionally in sliced ELL form.
pub struct PairCirculation {
    kernel: Kernel,
    pairs: Buffer<u32>,
    /// Chunk offsets of the sliced ELL form (None: the lists as `circ`).
    so: Option<Buffer<u64>>,
    /// Words stored, padding included (the byte model's).
    pub entries: usize,
}

/// Device buffers of the operators and the state.
pub struct ClStepper<T: Real> {
    dev: Arc<ClDevice>,
    k: Kernels,
    /// Reals of local memory `vertex_block_sl` may stage per work-group (a larger range is
    /// read from global memory).
    stage_cap: u32,
    dga: Arc<Dga>,
    dual: DualForm,
    variants: Variants,
    t: usize,
    /// The column length of the per-tet arrays (F, `p`, `pe`, slot tables): [`tet_stride`].
    tp: usize,
    ne: usize,
    nh: usize,
    /// Current time step (metres of light travel); 1 until [`ClStepper::set_time_step`].
    dt: f64,
    /// The primal operator in the layout of `variants.primal` (`p_per_tet` values per tet).
    p: Buffer<T>,
    p_per_tet: usize,
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
    /// Offsets of the packed blocks ([`crate::dga::VertexBlocks::packed_offsets`]).
    poff: Buffer<u64>,
    nfree: usize,
    /// The vertex blocks in `block_layout` (`block_len` values).
    block: Buffer<T>,
    block_len: usize,
    block_layout: BlockLayout,
    csr: Option<DeviceCsr<T>>,
    src_idx: Buffer<u32>,
    src_g: Buffer<T>,
    nsrc: usize,
    wave: Option<Waveform>,
    probe_slots: Buffer<u32>,
    probe_w: Buffer<T>,
    samples: Buffer<T>,
    np: usize,
    /// The loss step's rows (none until [`ClStepper::set_time_step`] installs it for a
    /// conducting `Dga`): see [`crate::dga::operators::Operators::loss_h`].
    loss: Option<DeviceLoss<T>>,
    /// Running Fourier transforms of U and F ([`Stepper::dft_start`]).
    dft: Option<DeviceDft<T>>,
    /// Magnetic loss (σ*): the lossy tets and their factors `(1 − b)/(1 + b)`, installed
    /// by [`ClStepper::set_time_step`] (see [`crate::dga::operators::Operators::mag`]).
    mag: Option<(usize, Buffer<u32>, Buffer<T>)>,
    /// Dispersion, installed by [`ClStepper::set_time_step`] for a dispersive `Dga`.
    disp: Option<DeviceDisp<T>>,
    /// The masses and scratch of the energy on the device ([`DeviceEnergy`]), built at the
    /// first [`Stepper::energy`]; `Err` once their allocation failed (the energy is then
    /// computed on the host).
    energy: Option<std::result::Result<DeviceEnergy<T>, ()>>,
    /// The masses assembled on this device, where the host's `Dga` has none
    /// ([`ClStepper::with_resident`]): the energy takes its two at its first use.
    resident_masses: Option<ResidentMasses<T>>,
    /// The source (its current, for a pattern with the run's blocks at lossy or
    /// dispersive vertices).
    source: Option<Source>,
    /// Slot-major `U` while [`ULayout::SlotMajor`] is the layout: then `US` holds the free
    /// half-edges' values and `u` only the others (zero), its free entries stale until
    /// [`ClStepper::sync_u`].
    slots: Option<SlotState<T>>,
    /// Whether every half-edge that is not free holds zero in `U` (as in any physical state:
    /// the kernels never write there), as set by [`ClStepper::zero_state`] and
    /// [`Stepper::set_state`]; slot-major `U` stores no such values.
    nonfree_zero: bool,
    /// A partitioned rank's ghost half-edges ([`ClStepper::set_ghost_halves`]): slots of
    /// their own in slot-major `U`, after the zero slot.
    ghosts: Option<Ghosts>,
}

/// Ghost half-edges (values a neighbouring rank owns and sends) in slot-major `U`: ghost
/// `i` (half-edge `halves[i]`) at slot `NF + 1 + i`, moved in and out by `copy_idx`.
struct Ghosts {
    halves: Vec<u32>,
    kernel: Kernel,
    dh: Buffer<u32>,
    ds: Buffer<u32>,
}

/// The energy's operands on the device: the masses `Meps` (packed as the vertex blocks of
/// `vertex_block_s`, at `poff`) and `Mmu` (`primal_sym`'s symmetric layout, columns of the tet
/// stride), in the stepper's precision, and scratch for `U` in slot order, the products and
/// the saved F.
struct DeviceEnergy<T> {
    meps: Buffer<T>,
    poff: Buffer<u64>,
    mmu: Buffer<T>,
    xs: Buffer<T>,
    y: Buffer<T>,
    f_old: Buffer<T>,
    partial: Buffer<T>,
}

/// Dispersion on the device ([`crate::dga::operators::DispOps`]): the correction rows and
/// blocks, the pole entries, coefficients and states, the changes `g`; `host` keeps the
/// layout (and the coefficients) for the energy.
struct DeviceDisp<T> {
    host: crate::dga::operators::DispOps<T>,
    h: Buffer<u32>,
    row: Buffer<u64>,
    len: Buffer<u32>,
    goff: Buffer<u32>,
    block: Buffer<T>,
    ent_h: Buffer<u32>,
    ent_g: Buffer<u32>,
    coef: Buffer<T>,
    s: Buffer<T>,
    g: Buffer<T>,
    /// The fused form (factored dual only; None when no vertex qualifies).
    fused: Option<DeviceFused>,
}

/// The fused dispersion on the device ([`crate::dga::operators::FusedDisp`]): the vertex
/// block's slot tables (`slot_vertex`, `vptr`, `boff`, `vh` of [`ClStepper`]) with the fused
/// vertices renumbered first (their `nfused` slots go to `vertex_block_vf`, the others to
/// `vertex_block_v_from`); per renumbered fused vertex its material, first entry and first
/// `g` index; the material table; the correction rows left to `disp_correct` (as `h`, `row`,
/// `len`, `goff` of [`DeviceDisp`]) and per material the entries left to `disp_poles_idx`.
struct DeviceFused {
    host: crate::dga::operators::FusedDisp,
    nfused: usize,
    slot_vertex: Buffer<u32>,
    vptr: Buffer<u32>,
    boff: Buffer<u64>,
    vh: Buffer<u32>,
    fm: Buffer<u32>,
    fe: Buffer<u32>,
    fg: Buffer<u32>,
    mt: Buffer<u64>,
    h: Buffer<u32>,
    row: Buffer<u64>,
    len: Buffer<u32>,
    goff: Buffer<u32>,
    rest: Vec<Option<Buffer<u32>>>,
}

/// The running transforms on the device: `m` frequencies, accumulators of `2 m nh` and
/// `2 m 4T` values (real and imaginary planes per frequency, F in the device layout) and
/// this step's phase factors for U and F (`2 m` values each).
struct DeviceDft<T> {
    m: usize,
    /// Whether `acc_u` accumulates slot-major `US` (`NF + 1` values per plane, the layout
    /// of `U` at [`Stepper::dft_start`]) instead of `U` by half-edge (`nh`).
    slots: bool,
    acc_u: Buffer<T>,
    acc_f: Buffer<T>,
    pu: Buffer<T>,
    pf: Buffer<T>,
}

/// The loss step on the device: rows' half-edges, vertices, row offsets, `B̂` blocks, and
/// a scratch of one value per row.
struct DeviceLoss<T> {
    n: usize,
    /// Entries of the `B̂` rows (the byte model's `entries`).
    entries: usize,
    h: Buffer<u32>,
    vert: Buffer<u32>,
    row: Buffer<u64>,
    block: Buffer<T>,
    tmp: Buffer<T>,
}

/// Refuses a mesh whose operators do not fit the device (total memory, largest buffer),
/// before anything is allocated, with the figures ([`crate::cost::dga_device_bytes`]).
fn check_device_memory<T: Real>(dev: &ClDevice, dga: &Dga, dual: DualForm) -> Result<()> {
    let real = std::mem::size_of::<T>();
    let nnz = (dual == DualForm::Csr).then(|| csr_nnz_estimate(dga));
    let mut counts = dga.counts();
    if Variants::for_dga(dga).block == BlockVariant::Vertex {
        counts.packed = counts.block; // full blocks resident
    }
    let (total, largest) = crate::cost::dga_device_bytes(&counts, real, nnz);
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

/// Bits of an edge id in the primal edge table (bit 31 holds the edge's orientation).
const EDGE_MASK: u32 = 0x7fff_ffff;

/// The primal operator of `dga` in the layout of `v`, column-major across tets, each tet's
/// values scaled by `scale(n)` (Δt, or Δt/(1 + b) with magnetic loss), converted chunk by
/// chunk: `Δt Mmu⁻¹ C` (24 per tet) or `Δt Mmu⁻¹`'s upper triangle (10 per tet).
fn upload_primal<T: Real>(
    dev: &ClDevice,
    dga: &Dga,
    v: PrimalVariant,
    scale: &(dyn Fn(usize) -> f64 + Sync),
) -> Result<Buffer<T>> {
    let (t, what) = (dga.n_tets, "primal blocks");
    match v {
        PrimalVariant::Sym => upload_columns(dev, t, 10, what, T::zero(), |k, n| {
            T::of(scale(n) * dga.mmu_inv[n][k])
        }),
        PrimalVariant::Tet | PrimalVariant::Row => {
            upload_columns(dev, t, 24, what, T::zero(), |rl, n| {
                T::of(scale(n) * dga.primal_entry(n, rl / 6, rl % 6))
            })
        }
    }
}

/// A per-tet device array of `cols` columns of the tet stride ([`tet_stride`]): `f(k, n)`
/// at `k * tet_stride(t) + n` for the `t` tets, `pad` at the padding tets.
fn upload_columns<U: Copy + Default + Send + Sync>(
    dev: &ClDevice,
    t: usize,
    cols: usize,
    what: &str,
    pad: U,
    f: impl Fn(usize, usize) -> U + Sync,
) -> Result<Buffer<U>> {
    let tp = tet_stride(t);
    dev.upload_with(cols * tp, what, |i| match i % tp < t {
        true => f(i / tp, i % tp),
        false => pad,
    })
}

/// Work-groups of a [`ClStepper`] dot product of `n` values: at most 256, fewer when fewer
/// already give every value its own work-item.
fn dot_groups(n: usize) -> usize {
    n.div_ceil(LOCAL).clamp(1, 256)
}

/// The vertex blocks `scale · full` (in the layout of `layout`), full or packed
/// ([`crate::dga::VertexBlocks::pack`]), and their length.
/// The vertex blocks `f(full)` in `lay`, their length, and the offsets of a packed layout
/// (uploaded into the stepper's `poff`; None for the full layout, which reads `boff`).
fn upload_blocks<U: Copy + Sync, T: Real>(
    dev: &ClDevice,
    layout: &crate::dga::VertexBlocks,
    full: &[U],
    lay: BlockLayout,
    f: impl Fn(U) -> T + Sync,
) -> Result<(Buffer<T>, usize, Option<Buffer<u64>>)> {
    let packed = |data: Vec<T>, off: Vec<u64>| -> Result<(Buffer<T>, usize, Option<Buffer<u64>>)> {
        Ok((
            dev.upload(&data, "vertex blocks")?,
            data.len(),
            Some(dev.upload(&off, "packed block offsets")?),
        ))
    };
    match lay {
        BlockLayout::Tri => {
            let off = layout.packed_offsets();
            packed(layout.pack(full, &off, f), off)
        }
        BlockLayout::Diag => {
            let off = layout.diag_offsets();
            packed(layout.pack_diag(full, &off, f), off)
        }
        BlockLayout::Full => {
            let b = dev.upload_with(full.len(), "vertex blocks", |i| f(full[i]))?;
            Ok((b, full.len(), None))
        }
    }
}

/// Tets per column of the stepper's per-tet device arrays are rounded up to a multiple of
/// this ([`tet_stride`]).
pub const TET_ALIGN: usize = 64;

/// The column length of the stepper's per-tet device arrays (F, the primal operators, the
/// edge and slot tables) for `t` tets: `t` rounded up to [`TET_ALIGN`]. Column `k` then
/// starts at `k·stride`, a multiple of 256 bytes in f32 and 512 in f64, so a work-group's
/// coalesced loads cover whole 32-byte sectors and 128-byte lines. With the tet count as
/// the stride, every column but the first starts inside a sector unless `t` is a multiple of
/// 8 (f32) or 4 (f64): the H200 runs the primal kernel 1.2–1.4× slower then
/// (`results/h200/aligned/`). The padding tets `t..stride` have zero operators and point at
/// valid (zero) DoFs, so the kernels run over them unchanged and their F stays zero.
pub fn tet_stride(t: usize) -> usize {
    t.div_ceil(TET_ALIGN) * TET_ALIGN
}

/// Host F slot `4n + k` -> device slot `k*TP + n` (`tp` the [`tet_stride`]).
#[inline]
fn f_slot(x: u32, tp: usize) -> u32 {
    let (n, k) = ((x / 4) as usize, (x % 4) as usize);
    (k * tp + n) as u32
}

/// The host layout (`4n + k`, `t` tets) of device F values `d` (`k*tp + n`).
fn f_to_host<X: Copy, Y>(d: &[X], t: usize, tp: usize, f: impl Fn(X) -> Y) -> Vec<Y> {
    (0..4 * t).map(|i| f(d[(i % 4) * tp + i / 4])).collect()
}

/// The device layout (`k*tp + n`, zero at the padding tets) of host F values `h` (`4n + k`,
/// `t` tets): the inverse of [`f_to_host`].
fn f_to_device<T: Real>(h: &[f64], t: usize, tp: usize) -> Vec<T> {
    (0..4 * tp)
        .map(|j| match j % tp < t {
            true => T::of(h[4 * (j % tp) + j / tp]),
            false => T::zero(),
        })
        .collect()
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
        Self::build(dev, dga, dual, source, probes, None)
    }

    /// [`ClStepper::new`] over operators assembled on this device and left there
    /// (`backend::device_assembly::resident`): nothing of the operators is uploaded, and
    /// `dga` needs only the layouts (its masses may be empty,
    /// [`ResidentOperators::layout_only`]). The default layouts only
    /// (`primal_sym`, `vertex_block_s`, factored dual) for a lossless, non-dispersive mesh;
    /// anything else is an error naming what needs the host's operators. Operators that
    /// carry the CSR matrix (`device_assembly::resident_csr`) give a stepper on the CSR
    /// dual, which can switch to the factored one ([`Self::set_dual`]).
    pub fn with_resident(
        dev: Arc<ClDevice>,
        dga: Arc<Dga>,
        ops: ResidentOperators<T>,
        source: Option<&Source>,
        probes: &[Probe],
    ) -> Result<Self> {
        let host_only = [
            (dga.msig.is_some(), "conducting media"),
            (dga.mag.is_some(), "magnetic loss"),
            (dga.disp.is_some(), "dispersive media"),
        ];
        if let Some((_, what)) = host_only.iter().find(|x| x.0) {
            return Err(Error::config(
                "assembly",
                "device (resident)",
                format!("{what} need the operators assembled on the host"),
            ));
        }
        if ops.n_tets != dga.n_tets || ops.layout.ptr != dga.meps.ptr || ops.layout.h != dga.meps.h
        {
            return Err(Error::config(
                "assembly",
                "device (resident)",
                format!(
                    "the resident operators ({} tets, {} block slots) are not those of this mesh ({} tets, {} block slots)",
                    ops.n_tets,
                    ops.layout.h.len(),
                    dga.n_tets,
                    dga.meps.h.len()
                ),
            ));
        }
        let dual = if ops.csr.is_some() {
            DualForm::Csr
        } else {
            DualForm::Factored
        };
        Self::build(dev, dga, dual, source, probes, Some(ops))
    }

    fn build(
        dev: Arc<ClDevice>,
        dga: Arc<Dga>,
        dual: DualForm,
        source: Option<&Source>,
        probes: &[Probe],
        resident: Option<ResidentOperators<T>>,
    ) -> Result<Self> {
        check_device_memory::<T>(&dev, &dga, dual)?;
        let k = dev.build::<T>()?;
        let t = dga.n_tets;
        let tp = tet_stride(t);
        let ne = dga.n_edges;
        let nh = 2 * ne;
        if ne > EDGE_MASK as usize {
            return Err(Error::DeviceMemory(format!(
                "the mesh has {ne} edges, above the 31-bit edge index of the primal kernels"
            )));
        }
        let variants = Variants::for_dga(&dga);
        let block_layout = variants.block.layout();
        // Primal operator column-major across tets (unit Δt), converted chunk by chunk, and
        // the vertex blocks; or those already on the device.
        let (resident, resident_csr, resident_masses) = match resident {
            Some(mut r) => {
                let c = r.csr.take();
                let m = r.masses.take();
                (Some(r), c, m)
            }
            None => (None, None, None),
        };
        let (p, (block, block_len, poff)) = match resident {
            Some(r) => {
                debug_assert!(
                    variants.primal == PrimalVariant::Sym && block_layout == BlockLayout::Tri
                );
                let len = r.block_len();
                let poff = dev.upload(&r.poff, "packed block offsets")?;
                (r.primal, (r.blocks, len, Some(poff)))
            }
            None => (
                upload_primal(&dev, &dga, variants.primal, &|_| 1.0)?,
                upload_blocks(&dev, &dga.meps, &dga.meps_inv.data, block_layout, T::of)?,
            ),
        };
        // edge ids with the edge's orientation in the tet in bit 31 (primal_sym); edge 0
        // for the padding tets
        let pe = upload_columns(&dev, t, 6, "primal edge table", 0, |l, n| {
            dga.tet_edges[n][l] | (((dga.tet_orient[n] >> l) & 1) as u32) << 31
        })?;
        let circ = dev.upload(
            &circulation_words(&dga, variants.circ)?,
            "circulation entries",
        )?;
        let (hvert, hrow) = dga.half_edge_rows();
        let vptr: Vec<u32> = dga.meps.ptr.par_iter().map(|&x| x as u32).collect();
        let slot_vertex: Vec<u32> = (0..dga.meps.n_vertices())
            .into_par_iter()
            .flat_map_iter(|v| std::iter::repeat_n(v as u32, dga.meps.dim(v)))
            .collect();
        let boff: Vec<u64> = dga.meps.off.par_iter().map(|&x| x as u64).collect();
        let csr = if resident_csr.is_some() {
            resident_csr
        } else if dual == DualForm::Csr {
            let m = build_csr(&dga, 1.0);
            if m.nnz() >= u32::MAX as usize {
                return Err(Error::DeviceMemory(format!(
                    "the CSR matrix has {} nonzeros, above the 32-bit index limit; use --dual factored",
                    m.nnz()
                )));
            }
            let ip: Vec<u32> = m.indptr().raw_storage().iter().map(|&x| x as u32).collect();
            let ix: Vec<u32> = m.indices().iter().map(|&x| f_slot(x as u32, tp)).collect();
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
            p_per_tet: variants.primal.per_tet(),
            pe,
            u: dev.alloc(nh, "U")?,
            f: dev.alloc(4 * tp, "F")?,
            c: dev.alloc(ne, "edge circulations")?,
            circ_ptr: dev.upload(&dga.circ_ptr, "circulation pointers")?,
            circ,
            vptr: dev.upload(&vptr, "vertex pointers")?,
            vh: dev.upload(&dga.meps.h, "vertex half-edges")?,
            hvert: dev.upload(&hvert, "half-edge vertices")?,
            hrow: dev.upload(&hrow, "half-edge rows")?,
            slot_vertex: dev.upload(&slot_vertex, "slot vertices")?,
            boff: dev.upload(&boff, "block offsets")?,
            poff: match poff {
                Some(p) => p,
                None => dev.upload::<u64>(&[], "packed block offsets")?,
            },
            nfree: dga.meps.h.len(),
            block_len,
            block,
            block_layout,
            csr,
            nsrc: sidx.len(),
            src_idx: dev.upload(&sidx, "source indices")?,
            src_g: dev.upload(&sg, "source pattern")?,
            wave: None,
            probe_slots: dev.upload(&slots, "probe slots")?,
            probe_w: dev.upload(&w, "probe weights")?,
            samples: dev.alloc(SAMPLE_CHUNK * np * 3, "probe samples")?,
            np,
            loss: None,
            dft: None,
            mag: None,
            disp: None,
            energy: None,
            resident_masses,
            source: source.cloned(),
            slots: None,
            nonfree_zero: true,
            ghosts: None,
            k,
            stage_cap: (STAGE_BYTES / std::mem::size_of::<T>()) as u32,
            dev,
            dga,
            dual,
            variants,
            t,
            tp,
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

    /// Limits the local staging of `vertex_block_sl` to `reals` per work-group (default: 32
    /// KiB of them); 0 sends every work-group down its global-memory path (for tests).
    #[doc(hidden)]
    pub fn set_stage_cap(&mut self, reals: u32) {
        self.stage_cap = reals.min((STAGE_BYTES / std::mem::size_of::<T>()) as u32);
    }

    /// Chooses the kernel variants (a CSR variant needs the stepper built with the CSR
    /// dual). A primal or block variant with another storage layout replaces the operator
    /// on the device, built on the host for the current Δt (only one layout is resident).
    pub fn set_variants(&mut self, v: Variants) -> Result<()> {
        let old = self.variants;
        let relayout =
            v.primal.per_tet() != old.primal.per_tet() || v.block.layout() != self.block_layout;
        if relayout && self.t > 0 && self.dga.mmu_inv.is_empty() {
            return Err(Error::config(
                "variant",
                format!("{} / {}", v.primal.name(), v.block.name()),
                "the operators are resident on the device (device assembly) in the default layouts only; another layout needs the host's operators",
            ));
        }
        if v.circ != old.circ {
            self.circ = self.dev.upload(
                &circulation_words(&self.dga, v.circ)?,
                "circulation entries",
            )?;
        }
        self.variants = v;
        if v.primal.per_tet() != old.primal.per_tet() {
            self.p_per_tet = v.primal.per_tet();
            match self.dga.mag.clone() {
                Some(_) => self.install_mag(self.dt)?,
                None => {
                    let dt = self.dt;
                    self.p = upload_primal(&self.dev, &self.dga, v.primal, &|_| dt)?;
                }
            }
        }
        if v.block.layout() != self.block_layout {
            self.block_layout = v.block.layout();
            if self.dga.msig.is_some() || self.dga.disp.is_some() {
                self.install_losses(self.dt)?;
            } else {
                let (dga, dt) = (self.dga.clone(), self.dt);
                self.put_blocks(&dga.meps_inv.data, |x| T::of(dt * x))?;
            }
        }
        self.keep_layout_in_scope()
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
        self.keep_layout_in_scope()
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
        self.nonfree_zero = true;
        if let Some(st) = self.slots.as_mut() {
            self.dev.fill_zero(&mut st.sm.us, self.nfree + 1)?;
        }
        self.dev.fill_zero(&mut self.f, 4 * self.tp)?;
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
    /// source waveform. With conducting tets the dual blocks depend on Δt nonlinearly
    /// (`Δt (Meps + Δt/2 Msig)⁻¹` at lossy vertices): they, the CSR values and the loss
    /// step's `B̂` blocks are recomputed on the host for `dt` and uploaded, with the values
    /// of [`crate::dga::operators::Operators::new`] (the same as the CPU backend's).
    pub fn set_time_step(&mut self, dt: f64, wave: Option<Waveform>) -> Result<()> {
        let a = dt / self.dt;
        if self.dga.mag.is_some() {
            self.install_mag(dt)?;
        } else {
            self.scale_buf(&self.p, self.p_per_tet * self.tp, a)?;
        }
        if self.nsrc > 0 {
            self.scale_buf(&self.src_g, self.nsrc, a)?;
        }
        if self.dga.msig.is_some() || self.dga.disp.is_some() {
            // after the source's scaling: it may replace the pattern for this dt
            self.install_losses(dt)?;
        } else {
            self.scale_buf(&self.block, self.block_len, a)?;
            if let Some((_, _, v, nnz)) = &self.csr {
                self.scale_buf(v, *nnz, a)?;
            }
        }
        self.dev.finish()?;
        self.dt = dt;
        self.wave = wave;
        Ok(())
    }

    /// Uploads the primal blocks `Δt/(1 + b) Mmu⁻¹ C` and the lossy tets' factors of a
    /// `Dga` with magnetic conductivity for `dt`.
    fn install_mag(&mut self, dt: f64) -> Result<()> {
        let mag = self.dga.mag.as_ref().expect("checked by the caller");
        let t = self.t;
        self.p = upload_primal(&self.dev, &self.dga, self.variants.primal, &|n| {
            dt / (1.0 + 0.5 * mag[n] * dt)
        })?;
        let (idx, a): (Vec<u32>, Vec<T>) = (0..t)
            .filter(|&n| mag[n] != 0.0)
            .map(|n| {
                let b = 0.5 * mag[n] * dt;
                (n as u32, T::of((1.0 - b) / (1.0 + b)))
            })
            .unzip();
        self.mag = Some((
            idx.len(),
            self.dev.upload(&idx, "magnetically lossy tets")?,
            self.dev.upload(&a, "magnetic loss factors")?,
        ));
        Ok(())
    }

    /// Replaces the device blocks with `f(full)` (full blocks in `dga.meps`'s layout) in the
    /// resident layout, and the packed offsets with that layout's.
    fn put_blocks<U: Copy + Sync>(&mut self, full: &[U], f: impl Fn(U) -> T + Sync) -> Result<()> {
        let (b, n, off) = upload_blocks(&self.dev, &self.dga.meps, full, self.block_layout, f)?;
        (self.block, self.block_len) = (b, n);
        if let Some(off) = off {
            self.poff = off;
        }
        Ok(())
    }

    /// Uploads the dual blocks, CSR values and loss step of a conducting `Dga` for `dt`.
    fn install_losses(&mut self, dt: f64) -> Result<()> {
        let ops = Operators::<T>::new(&self.dga, dt, self.csr.is_some());
        if self.block_layout != BlockLayout::Full {
            self.put_blocks(&ops.block, |x| x)?;
        } else {
            if self.block_len != ops.block.len() {
                self.block = self.dev.alloc(ops.block.len(), "vertex blocks")?;
                self.block_len = ops.block.len();
            }
            self.dev
                .write(&mut self.block, &ops.block, "vertex blocks")?;
        }
        if let (Some((_, _, v, nnz)), Some(m)) = (&mut self.csr, &ops.csr) {
            if m.data().len() != *nnz {
                return Err(Error::config(
                    "dual",
                    "csr",
                    "the lossy CSR matrix changed its sparsity",
                ));
            }
            self.dev.write(v, m.data(), "CSR values")?;
        }
        let n = ops.loss_h.len();
        self.loss = (n > 0)
            .then(|| -> Result<DeviceLoss<T>> {
                Ok(DeviceLoss {
                    n,
                    entries: ops.loss_block.len(),
                    h: self.dev.upload(&ops.loss_h, "loss rows")?,
                    vert: self.dev.upload(&ops.loss_vert, "loss vertices")?,
                    row: self.dev.upload(&ops.loss_row, "loss row offsets")?,
                    block: self.dev.upload(&ops.loss_block, "loss blocks")?,
                    tmp: self.dev.alloc(n, "loss scratch")?,
                })
            })
            .transpose()?;
        if let Some(p) = self.source.as_ref().and_then(|s| ops.source_pattern(s)) {
            let (idx, g): (Vec<u32>, Vec<T>) = p.into_iter().unzip();
            self.nsrc = idx.len();
            self.src_idx = self.dev.upload(&idx, "source indices")?;
            self.src_g = self.dev.upload(&g, "source pattern")?;
        }
        self.disp = None;
        // every half-edge the source kernel may write stays out of the fused kernel
        let skip: Vec<u32> = self
            .source
            .as_ref()
            .map(|s| {
                let pat = ops.source_pattern(s).unwrap_or_default();
                (s.pattern.iter().map(|p| p.0))
                    .chain(s.current.iter().map(|p| p.0))
                    .chain(pat.iter().map(|p| p.0))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(d) = ops.disp {
            let dev = &self.dev;
            let fused = if self.dual == DualForm::Factored {
                let f = d.fused(&ops.vptr, &ops.vh, &skip);
                Self::upload_fused(dev, &d, f, (&ops.vptr, &ops.vh, &self.dga.meps.off))?
            } else {
                None
            };
            self.disp = Some(DeviceDisp {
                fused,
                h: dev.upload(&d.h, "dispersive rows")?,
                row: dev.upload(&d.row, "dispersive row offsets")?,
                len: dev.upload(&d.len, "dispersive row lengths")?,
                goff: dev.upload(&d.goff, "dispersive state offsets")?,
                block: dev.upload(&d.block, "dispersive couplings")?,
                ent_h: dev.upload(&d.ent_h, "pole entries")?,
                ent_g: dev.upload(&d.ent_g, "pole entry offsets")?,
                coef: dev.upload(&d.coef, "pole coefficients")?,
                s: dev.upload(&vec![T::zero(); d.n_state], "pole states")?,
                g: dev.upload(&vec![T::zero(); d.n_g.max(1)], "pole changes")?,
                host: d,
            });
        }
        Ok(())
    }

    /// The fused layout on the device (None when no vertex qualifies).
    /// `slots`: the vertex block's `vptr`, `vh` and block offsets.
    fn upload_fused(
        dev: &ClDevice,
        d: &crate::dga::operators::DispOps<T>,
        f: crate::dga::operators::FusedDisp,
        slots: (&[u32], &[u32], &[usize]),
    ) -> Result<Option<DeviceFused>> {
        if f.vertices == 0 {
            return Ok(None);
        }
        let (vptr, vh, off) = slots;
        let nv = vptr.len() - 1;
        // fused vertices first, each group in its original order (locality kept)
        let order: Vec<usize> = (0..nv)
            .filter(|&v| f.fm[v] != u32::MAX)
            .chain((0..nv).filter(|&v| f.fm[v] == u32::MAX))
            .collect();
        let (mut vptr2, mut vh2, mut sv2) = (vec![0u32], Vec::with_capacity(vh.len()), Vec::new());
        for (j, &v) in order.iter().enumerate() {
            let hs = &vh[vptr[v] as usize..vptr[v + 1] as usize];
            vh2.extend_from_slice(hs);
            sv2.extend(std::iter::repeat_n(j as u32, hs.len()));
            vptr2.push(vh2.len() as u32);
        }
        let boff2: Vec<u64> = order.iter().map(|&v| off[v] as u64).collect();
        let pv = |x: &[u32]| {
            order[..f.vertices]
                .iter()
                .map(|&v| x[v])
                .collect::<Vec<u32>>()
        };
        let pick = |v: &[u32]| f.rows.iter().map(|&r| v[r]).collect::<Vec<u32>>();
        let row: Vec<u64> = f.rows.iter().map(|&r| d.row[r]).collect();
        let rest = f
            .rest
            .iter()
            .map(|r| {
                (!r.is_empty())
                    .then(|| dev.upload(r, "split pole entries"))
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(DeviceFused {
            nfused: f.slots,
            slot_vertex: dev.upload(&sv2, "renumbered slot vertices")?,
            vptr: dev.upload(&vptr2, "renumbered vertex pointers")?,
            boff: dev.upload(&boff2, "renumbered block offsets")?,
            vh: dev.upload(&vh2, "renumbered vertex half-edges")?,
            fm: dev.upload(&pv(&f.fm), "fused vertex materials")?,
            fe: dev.upload(&pv(&f.fe), "fused vertex entries")?,
            fg: dev.upload(&pv(&f.fg), "fused vertex changes")?,
            mt: dev.upload(&f.mt, "dispersive material table")?,
            h: dev.upload(&pick(&d.h), "split dispersive rows")?,
            row: dev.upload(&row, "split dispersive row offsets")?,
            len: dev.upload(&pick(&d.len), "split dispersive row lengths")?,
            goff: dev.upload(&pick(&d.goff), "split dispersive state offsets")?,
            rest,
            host: f,
        }))
    }

    /// The fused dispersion, when this step uses it (factored dual, vertex-major blocks,
    /// [`DispVariant::Fused`], and some vertex qualifies).
    fn fused(&self) -> Option<(&DeviceDisp<T>, &DeviceFused)> {
        let d = self.disp.as_ref()?;
        let f = d.fused.as_ref()?;
        (self.dual == DualForm::Factored
            && self.variants.block == BlockVariant::Vertex
            && self.variants.disp == DispVariant::Fused)
            .then_some((d, f))
    }

    /// The bytes the dispersion adds to a step as this stepper runs it (the byte models
    /// [`crate::cost::disp_bytes`] and [`crate::cost::disp_bytes_fused`]; 0 without
    /// dispersion).
    pub fn disp_bytes(&self) -> f64 {
        let s = std::mem::size_of::<T>();
        match (self.fused(), &self.disp) {
            (Some((d, f)), _) => {
                let (rest, fused) = f.host.counts(&d.host);
                crate::cost::disp_bytes_fused(&rest, &fused, s)
            }
            (None, Some(d)) => crate::cost::disp_bytes(&d.host.counts(), s),
            (None, None) => 0.0,
        }
    }

    /// The bytes the losses add to a step as this stepper runs it ([`crate::cost::loss_bytes`]:
    /// the loss step of the conducting vertices and the magnetic loss of the σ* tets; 0
    /// when lossless).
    pub fn loss_bytes(&self) -> f64 {
        let c = crate::cost::LossCounts {
            rows: self.loss.as_ref().map_or(0, |l| l.n),
            entries: self.loss.as_ref().map_or(0, |l| l.entries),
            mag_tets: self.mag.as_ref().map_or(0, |m| m.0),
        };
        crate::cost::loss_bytes(&c, std::mem::size_of::<T>())
    }

    /// The dispersive correction before the dual update (nothing without dispersion; in
    /// the fused form, the rows the fused kernel does not take).
    pub fn disp_correct(&self) -> Result<Option<Event>> {
        let Some(d) = &self.disp else { return Ok(None) };
        let (n, h, row, len, goff) = match self.fused() {
            Some((_, f)) => (f.host.rows.len(), &f.h, &f.row, &f.len, &f.goff),
            None => (d.host.h.len(), &d.h, &d.row, &d.len, &d.goff),
        };
        if n == 0 {
            return Ok(None);
        }
        launch(
            &self.dev,
            &self.k.disp_correct,
            n,
            LOCAL,
            &[
                Arg::U32(n as u32),
                Arg::BufU32(h),
                Arg::BufU64(row),
                Arg::BufU32(len),
                Arg::BufU32(goff),
                Arg::Buf(&d.block),
                Arg::Buf(&d.g),
                Arg::Buf(&self.u),
            ],
        )
        .map(Some)
    }

    /// The pole step after the dual update and the source, one launch per dispersive
    /// material (nothing without dispersion; in the fused form, only the entries the fused
    /// kernel does not take, through `disp_poles_idx`).
    pub fn disp_poles(&self) -> Result<Vec<Event>> {
        let Some(d) = &self.disp else {
            return Ok(vec![]);
        };
        let hd = &d.host;
        let fused = self.fused().map(|x| x.1);
        let mut ev = Vec::new();
        for m in 0..hd.ptr.len() - 1 {
            let n = hd.ptr[m + 1] - hd.ptr[m];
            // (kernel, work-items, leading arguments)
            let (kernel, items, mut args) = match fused {
                None if n > 0 => (&self.k.disp_poles, n, vec![Arg::U32(n as u32)]),
                Some(f) => match &f.rest[m] {
                    Some(_) => {
                        let nl = f.host.rest[m].len();
                        let a = vec![Arg::U32(nl as u32), Arg::U32(n as u32)];
                        (&self.k.disp_poles_idx, nl, a)
                    }
                    None => continue,
                },
                None => continue,
            };
            args.extend([
                Arg::U32((hd.cptr[m + 1] - hd.cptr[m]) as u32),
                Arg::U32(hd.orders(m)),
                Arg::U32(hd.ptr[m] as u32),
                Arg::U32((5 * hd.cptr[m]) as u32),
                Arg::U64(hd.sptr[m] as u64),
            ]);
            if let Some(list) = fused.and_then(|f| f.rest[m].as_ref()) {
                args.push(Arg::BufU32(list));
            }
            args.extend([
                Arg::BufU32(&d.ent_h),
                Arg::BufU32(&d.ent_g),
                Arg::Buf(&d.coef),
                Arg::Buf(&d.s),
                Arg::Buf(&self.u),
                Arg::Buf(&d.g),
            ]);
            ev.push(launch(&self.dev, kernel, items, LOCAL, &args)?);
        }
        Ok(ev)
    }

    /// The vertex-major dual update with the pure vertices' dispersion fused in
    /// (`vertex_block_vf` on the fused slots, `vertex_block_v_from` on the others;
    /// [`DispVariant::Fused`]).
    fn vertex_blocks_disp(&self, d: &DeviceDisp<T>, f: &DeviceFused) -> Result<Vec<Event>> {
        let tables = [
            Arg::BufU32(&f.slot_vertex),
            Arg::BufU32(&f.vptr),
            Arg::BufU64(&f.boff),
            Arg::BufU32(&f.vh),
            Arg::Buf(&self.block),
            Arg::Buf(&self.c),
            Arg::Buf(&self.u),
        ];
        let mut ev = Vec::new();
        if f.nfused < self.nfree {
            let mut args = vec![Arg::U32(f.nfused as u32), Arg::U32(self.nfree as u32)];
            args.extend(tables.iter().copied());
            let n = self.nfree - f.nfused;
            ev.push(launch(
                &self.dev,
                &self.k.vertex_block_v_from,
                n,
                LOCAL,
                &args,
            )?);
        }
        let mut args = vec![Arg::U32(f.nfused as u32)];
        args.extend(tables);
        args.extend([
            Arg::BufU32(&f.fm),
            Arg::BufU32(&f.fe),
            Arg::BufU32(&f.fg),
            Arg::BufU64(&f.mt),
            Arg::Buf(&d.coef),
            Arg::Buf(&d.block),
            Arg::Buf(&d.s),
            Arg::Buf(&d.g),
        ]);
        ev.push(launch(
            &self.dev,
            &self.k.vertex_block_vf,
            f.nfused,
            LOCAL,
            &args,
        )?);
        Ok(ev)
    }

    /// The pole states `(s, g)` read back (empty without dispersion).
    pub fn disp_state(&self) -> Result<(Vec<T>, Vec<T>)> {
        let Some(d) = &self.disp else {
            return Ok((vec![], vec![]));
        };
        Ok((
            self.dev.read(&d.s, d.host.n_state, "pole states")?,
            self.dev.read(&d.g, d.host.n_g, "pole changes")?,
        ))
    }

    /// The loss step `U_v ← B̂_v U_v` at the lossy vertices (nothing when lossless).
    pub fn loss_update(&self) -> Result<Vec<Event>> {
        let Some(l) = &self.loss else {
            return Ok(vec![]);
        };
        let a = launch(
            &self.dev,
            &self.k.loss_rows,
            l.n,
            LOCAL,
            &[
                Arg::U32(l.n as u32),
                Arg::BufU32(&l.vert),
                Arg::BufU64(&l.row),
                Arg::BufU32(&self.vptr),
                Arg::BufU32(&self.vh),
                Arg::Buf(&l.block),
                Arg::Buf(&self.u),
                Arg::Buf(&l.tmp),
            ],
        )?;
        let b = launch(
            &self.dev,
            &self.k.loss_scatter,
            l.n,
            LOCAL,
            &[
                Arg::U32(l.n as u32),
                Arg::BufU32(&l.h),
                Arg::Buf(&l.tmp),
                Arg::Buf(&self.u),
            ],
        )?;
        Ok(vec![a, b])
    }

    /// `F -= P U` with the chosen variant.
    pub fn primal_update(&self) -> Result<Event> {
        self.mag_loss()?;
        self.primal_in_layout()
    }

    /// `F -= P U` on the stepper's own `U` in its layout ([`ULayout`]).
    fn primal_in_layout(&self) -> Result<Event> {
        match &self.slots {
            Some(st) => self.primal_update_sm(&st.sm),
            None => self.launch_primal(&self.u, &self.f),
        }
    }

    /// The operators of this stepper (its Δt) in mixed storage ([`MixedOperators`]): an
    /// f64 stepper of a lossless, non-dispersive mesh whose host `Dga` holds the operators;
    /// else an error naming what is missing.
    pub fn mixed_operators(&self) -> Result<MixedOperators> {
        let why = if T::NAME != "f64" {
            Some("mixed storage keeps the fields in f64: use --precision f64")
        } else if self.dga.msig.is_some() || self.dga.mag.is_some() || self.dga.disp.is_some() {
            Some("mixed storage covers lossless, non-dispersive media only")
        } else if self.t > 0 && self.dga.mmu_inv.is_empty() {
            Some("mixed storage is built from the host's operators (not resident ones)")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::config("variant", "mixed", why));
        }
        let [primal, block] = self.dgatd_kernels(true, ["primal_sym", "vertex_block_s"])?;
        let dt = self.dt;
        let d = &self.dga;
        let p = upload_columns(&self.dev, self.t, 10, "mixed primal blocks", 0.0, |k, n| {
            (dt * d.mmu_inv[n][k]) as f32
        })?;
        let poff = d.meps.packed_offsets();
        let packed = d
            .meps_inv
            .pack(&d.meps_inv.data, &poff, |x| (dt * x) as f32);
        Ok(MixedOperators {
            primal,
            block,
            p,
            b: self.dev.upload(&packed, "mixed vertex blocks")?,
            dt,
        })
    }

    /// `F -= P U` with the mixed operators `m` (from this stepper, at its Δt).
    pub fn primal_update_mixed(&self, m: &MixedOperators) -> Result<Event> {
        launch(
            &self.dev,
            &m.primal,
            self.tp,
            LOCAL,
            &[
                Arg::U32(self.tp as u32),
                Arg::BufF32(&m.p),
                Arg::BufU32(&self.pe),
                Arg::Buf(&self.u),
                Arg::Buf(&self.f),
            ],
        )
    }

    /// `U += B c` with the mixed blocks `m` (after [`Self::circulation`]); the stepper's
    /// packed offsets must be resident (the default layout).
    pub fn vertex_blocks_mixed(&self, m: &MixedOperators) -> Result<Event> {
        if self.block_layout != BlockLayout::Tri {
            return Err(Error::config(
                "variant",
                "mixed",
                "the mixed blocks need the packed layout's offsets resident (the default block variant)",
            ));
        }
        launch(
            &self.dev,
            &m.block,
            self.nfree,
            LOCAL,
            &self.vertex_major_args(&self.poff, Arg::BufF32(&m.b), &self.u),
        )
    }

    /// Slot-major `U` for this stepper ([`SlotMajor`]), with the operators in f32 when
    /// `mixed` ([`Self::mixed_operators`]): the default layouts (`primal_sym`, the packed
    /// blocks) of a lossless, non-dispersive mesh; else an error naming what is missing.
    pub fn slot_major(&self, mixed: bool) -> Result<SlotMajor<T>> {
        let why = if self.dga.msig.is_some() || self.dga.mag.is_some() || self.dga.disp.is_some() {
            Some("slot-major U covers lossless, non-dispersive media only")
        } else if self.p_per_tet != 10 || self.block_layout != BlockLayout::Tri {
            Some("slot-major U needs the default layouts resident (primal_sym, the packed blocks)")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::config("variant", "slot-major", why));
        }
        self.slot_major_with(mixed, &self.half_edge_slots())
    }

    /// [`Self::slot_major`] with the half-edge slots `es` ([`Self::half_edge_slots`]) given.
    fn slot_major_with(&self, mixed: bool, es: &[u32]) -> Result<SlotMajor<T>> {
        let mixed = mixed.then(|| self.mixed_operators()).transpose()?;
        let [primal, block, primal_idx, block_idx] = self.dgatd_kernels(
            mixed.is_some(),
            [
                "primal_sym_sm",
                "vertex_block_s_sm",
                "primal_sym_sm_idx",
                "vertex_block_s_sm_idx",
            ],
        )?;
        Ok(SlotMajor {
            primal,
            block,
            primal_idx,
            block_idx,
            es: self.dev.upload(es, "half-edge slots")?,
            table: None,
            us: self.dev.upload(
                &vec![
                    T::zero();
                    self.nfree + 1 + self.ghosts.as_ref().map_or(0, |g| g.halves.len())
                ],
                "slot-major U",
            )?,
            mixed,
        })
    }

    /// Kernels of `cl/dgatd.cl` for this stepper's precision: from the stepper's own program,
    /// or, with `f32_operators` (mixed storage), from a program built for them.
    fn dgatd_kernels<const N: usize>(
        &self,
        f32_operators: bool,
        names: [&str; N],
    ) -> Result<[Kernel; N]> {
        let built;
        let program = if f32_operators {
            let opts = dgatd_options::<T>(true);
            built = self.dev.build_source(SOURCE, "cl/dgatd.cl", &opts)?;
            &built
        } else {
            &self.k.program
        };
        let mut out = Vec::with_capacity(N);
        for name in names {
            out.push(Kernel::create(program, name).map_err(cl_err(name))?);
        }
        Ok(out.try_into().unwrap_or_else(|_| unreachable!("N kernels")))
    }

    /// The slot of each half-edge (`NF`, the number of free half-edges, for one that is not
    /// free).
    fn half_edge_slots(&self) -> Vec<u32> {
        let mut es = vec![self.nfree as u32; self.nh];
        for (g, &h) in self.dga.meps.h.iter().enumerate() {
            es[h as usize] = g as u32;
        }
        if let Some(gh) = &self.ghosts {
            for (i, &h) in gh.halves.iter().enumerate() {
                es[h as usize] = (self.nfree + 1 + i) as u32;
            }
        }
        es
    }

    /// Declares a partitioned rank's ghost half-edges (the neighbours' free half-edges whose
    /// values the halo brings): in slot-major `U` each gets a slot after the zero slot, so
    /// the primal update reads it like an own one. Call while `U` is by half-edge, before
    /// [`Self::set_u_layout`]; `halves` distinct, none of them this rank's free ones.
    pub fn set_ghost_halves(&mut self, halves: &[u32]) -> Result<()> {
        if self.slots.is_some() {
            return Err(Error::config(
                "u layout",
                ULayout::SlotMajor.name(),
                "ghost half-edges are declared while U is by half-edge",
            ));
        }
        let own = self.half_edge_slots();
        let nf = self.nfree as u32;
        let mut seen = vec![false; self.nh];
        for &h in halves {
            let ok = (h as usize) < self.nh && own[h as usize] == nf && !seen[h as usize];
            if !ok {
                return Err(Error::config(
                    "ghost half-edges",
                    h,
                    "out of range, repeated, or a free half-edge of this rank",
                ));
            }
            seen[h as usize] = true;
        }
        if halves.is_empty() {
            self.ghosts = None;
            return Ok(());
        }
        let slots: Vec<u32> = (0..halves.len()).map(|i| nf + 1 + i as u32).collect();
        let [kernel] = self.dgatd_kernels(false, ["copy_idx"])?;
        self.ghosts = Some(Ghosts {
            halves: halves.to_vec(),
            kernel,
            dh: self.dev.upload(halves, "ghost half-edges")?,
            ds: self.dev.upload(&slots, "ghost slots")?,
        });
        Ok(())
    }

    /// The layout `U` is stored in on the device.
    pub fn u_layout(&self) -> ULayout {
        match self.slots {
            Some(_) => ULayout::SlotMajor,
            None => ULayout::HalfEdge,
        }
    }

    /// Why [`ULayout::SlotMajor`] cannot hold this stepper's `U` now; None when it can.
    pub fn slot_major_refusal(&self) -> Option<&'static str> {
        self.refusal_but_source()
            .or_else(|| self.source_off_slots(&self.half_edge_slots()))
    }

    /// The source's part of [`Self::slot_major_refusal`], with the half-edge slots `es`.
    fn source_off_slots(&self, es: &[u32]) -> Option<&'static str> {
        let nf = self.nfree as u32;
        let on_wall = self
            .source
            .as_ref()
            .is_some_and(|s| s.pattern.iter().any(|&(h, _)| es[h as usize] == nf));
        on_wall.then_some("the source drives a half-edge that is not free")
    }

    /// [`Self::slot_major_refusal`] but for the source (no pass over the half-edges).
    fn refusal_but_source(&self) -> Option<&'static str> {
        if self.dga.msig.is_some() || self.dga.mag.is_some() || self.dga.disp.is_some() {
            Some("slot-major U covers lossless, non-dispersive media only")
        } else if self.dual != DualForm::Factored {
            Some("slot-major U steps with the factored dual only")
        } else if (Variants {
            circ: CircVariant::Paired,
            ..self.variants
        }) != Variants::default()
            || self.p_per_tet != 10
            || self.block_layout != BlockLayout::Tri
        {
            Some("slot-major U steps with the default kernels only (primal_sym, vertex_block_sym)")
        } else if !self.nonfree_zero {
            Some("a half-edge that is not free (a PEC wall's) holds a nonzero value")
        } else {
            None
        }
    }

    /// Stores `U` in `layout`, moving the state (same values). Slot-major is refused, with
    /// the reason ([`Self::slot_major_refusal`]), where it does not apply; a later change
    /// that it does not cover (another dual, variant, or a state with a nonzero value on a
    /// half-edge that is not free) returns the stepper to the half-edge layout. A
    /// partitioned rank's subset launches follow the layout ([`Self::primal_on`],
    /// [`Self::vertex_blocks_on`]); its halo and source lists must then hold slots
    /// ([`Self::slot_of_half`]).
    pub fn set_u_layout(&mut self, layout: ULayout) -> Result<()> {
        match (layout, self.slots.is_some()) {
            (ULayout::HalfEdge, true) => {
                self.sync_u()?;
                self.slots = None;
                self.dev.finish()?;
            }
            (ULayout::SlotMajor, false) => {
                // the half-edge slots once: the refusal, the layout and the index maps
                let es = self.half_edge_slots();
                let why = self
                    .refusal_but_source()
                    .or_else(|| self.source_off_slots(&es));
                if let Some(why) = why {
                    return Err(Error::config("u layout", layout.name(), why));
                }
                let sm = self.slot_major_with(false, &es)?;
                let at = |h: &[u32]| -> Vec<u32> { h.iter().map(|&h| es[h as usize]).collect() };
                let src: Vec<u32> = self
                    .source
                    .as_ref()
                    .map(|s| s.pattern.iter().map(|&(h, _)| es[h as usize]).collect())
                    .unwrap_or_default();
                debug_assert_eq!(src.len(), self.nsrc);
                let probes = at(&self
                    .dev
                    .read(&self.probe_slots, 3 * self.np, "probe slots")?);
                self.to_slot_major(&sm)?;
                self.slots = Some(SlotState {
                    src_idx: self.dev.upload(&src, "source slots")?,
                    probe_slots: self.dev.upload(&probes, "probe slots")?,
                    sm,
                });
                self.dev.finish()?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Brings the free entries of the half-edge `U` up to date from slot-major `US` (nothing
    /// in the half-edge layout).
    fn sync_u(&self) -> Result<()> {
        if let Some(st) = &self.slots {
            self.from_slot_major(&st.sm)?;
        }
        Ok(())
    }

    /// The slot of every half-edge in slot-major `U` (the number of free half-edges for
    /// one that is not free, which slot-major `U` reads as zero): what turns a partitioned
    /// rank's half-edge lists (halo, source) into positions of [`Self::state_buffers`]' `U`
    /// while [`Self::u_layout`] is slot-major.
    pub fn slot_of_half(&self) -> Vec<u32> {
        self.half_edge_slots()
    }

    /// Returns to the half-edge layout when a change leaves slot-major `U` out of its scope.
    fn keep_layout_in_scope(&mut self) -> Result<()> {
        if self.slots.is_some() && self.slot_major_refusal().is_some() {
            self.set_u_layout(ULayout::HalfEdge)?;
        }
        Ok(())
    }

    /// `US[g] = U[vh[g]]`: the stepper's `U` into `sm`.
    pub fn to_slot_major(&self, sm: &SlotMajor<T>) -> Result<Event> {
        let e = self.move_slots(&self.k.gather, &self.u, &sm.us)?;
        match &self.ghosts {
            Some(g) => self.move_ghosts(g, &g.dh, &g.ds, &self.u, &sm.us),
            None => Ok(e),
        }
    }

    /// `U[vh[g]] = US[g]`: `sm` back into the stepper's `U` (its other half-edges unchanged).
    pub fn from_slot_major(&self, sm: &SlotMajor<T>) -> Result<Event> {
        let e = self.move_slots(&self.k.scatter, &sm.us, &self.u)?;
        match &self.ghosts {
            Some(g) => self.move_ghosts(g, &g.ds, &g.dh, &sm.us, &self.u),
            None => Ok(e),
        }
    }

    /// `dst[to[i]] = src[from[i]]` over the ghosts (`copy_idx`).
    fn move_ghosts(
        &self,
        g: &Ghosts,
        from: &Buffer<u32>,
        to: &Buffer<u32>,
        src: &Buffer<T>,
        dst: &Buffer<T>,
    ) -> Result<Event> {
        launch(
            &self.dev,
            &g.kernel,
            g.halves.len(),
            LOCAL,
            &[
                Arg::U32(g.halves.len() as u32),
                Arg::BufU32(from),
                Arg::BufU32(to),
                Arg::Buf(src),
                Arg::Buf(dst),
            ],
        )
    }

    fn move_slots(&self, k: &Kernel, src: &Buffer<T>, dst: &Buffer<T>) -> Result<Event> {
        launch(
            &self.dev,
            k,
            self.nfree,
            LOCAL,
            &[
                Arg::U32(self.nfree as u32),
                Arg::BufU32(&self.vh),
                Arg::Buf(src),
                Arg::Buf(dst),
            ],
        )
    }

    /// Adds to `sm` the per-tet slot table of `primal_sym_st` (a bench variant: each tet's
    /// six edges as pairs of slots, the orientation in bit 31 of the first; 48 bytes per tet
    /// instead of the 24 of the edge ids and the gathers of the half-edge slots).
    pub fn slot_table(&self, sm: &mut SlotMajor<T>) -> Result<()> {
        if self.nfree > EDGE_MASK as usize {
            return Err(Error::config(
                "variant",
                "slot table",
                "more free half-edges than bit 31 leaves slot indices for",
            ));
        }
        let [kernel] = self.dgatd_kernels(sm.mixed.is_some(), ["primal_sym_st"])?;
        let es = self.half_edge_slots();
        let (t, tp, dga) = (self.t, self.tp, &self.dga);
        let nf = self.nfree as u32;
        let ts = self.dev.upload_with(12 * tp, "per-tet slot table", |i| {
            let (cn, s) = (i / 2, i % 2);
            let (c, n) = (cn / tp, cn % tp);
            if n >= t {
                return nf; // a padding tet: the zero slot
            }
            let e = dga.tet_edges[n][c] as usize;
            let orient = ((dga.tet_orient[n] >> c) & 1) as u32;
            es[2 * e + s] | if s == 0 { orient << 31 } else { 0 }
        })?;
        sm.table = Some((kernel, ts));
        Ok(())
    }

    /// `F -= P U` with slot-major `U` through the per-tet slot table (`primal_sym_st`, after
    /// [`Self::slot_table`]).
    pub fn primal_update_st(&self, sm: &SlotMajor<T>) -> Result<Event> {
        let Some((kernel, ts)) = &sm.table else {
            return Err(Error::config(
                "variant",
                "slot table",
                "ClStepper::slot_table was not called",
            ));
        };
        let m = sm
            .mixed
            .as_ref()
            .map_or(Arg::Buf(&self.p), |m| Arg::BufF32(&m.p));
        let args = [
            Arg::U32(self.tp as u32),
            m,
            Arg::BufU32(ts),
            Arg::Buf(&sm.us),
            Arg::Buf(&self.f),
        ];
        launch(&self.dev, kernel, self.tp, LOCAL, &args)
    }

    /// `F -= P U` with slot-major `U` (`primal_sym_sm`).
    pub fn primal_update_sm(&self, sm: &SlotMajor<T>) -> Result<Event> {
        let t = Arg::U32(self.tp as u32);
        let m = sm
            .mixed
            .as_ref()
            .map_or(Arg::Buf(&self.p), |m| Arg::BufF32(&m.p));
        let (pe, es) = (Arg::BufU32(&self.pe), Arg::BufU32(&sm.es));
        let args = [t, m, pe, es, Arg::Buf(&sm.us), Arg::Buf(&self.f)];
        launch(&self.dev, &sm.primal, self.tp, LOCAL, &args)
    }

    /// `U += B c` with slot-major `U` (`vertex_block_s_sm`, after [`Self::circulation`]).
    pub fn vertex_blocks_sm(&self, sm: &SlotMajor<T>) -> Result<Event> {
        let b = sm
            .mixed
            .as_ref()
            .map_or(Arg::Buf(&self.block), |m| Arg::BufF32(&m.b));
        launch(
            &self.dev,
            &sm.block,
            self.nfree,
            LOCAL,
            &self.vertex_major_args(&self.poff, b, &sm.us),
        )
    }

    /// The magnetic loss `F_n ← a_n F_n` of the σ* tets, before the primal update (None
    /// without σ*).
    fn mag_loss(&self) -> Result<Option<Event>> {
        let Some((n, idx, a)) = self.mag.as_ref().filter(|m| m.0 > 0) else {
            return Ok(None);
        };
        launch(
            &self.dev,
            &self.k.mag_loss,
            *n,
            LOCAL,
            &[
                Arg::U32(*n as u32),
                Arg::U32(self.tp as u32),
                Arg::BufU32(idx),
                Arg::Buf(a),
                Arg::Buf(&self.f),
            ],
        )
        .map(Some)
    }

    /// `f -= P u` for given buffers.
    fn launch_primal(&self, u: &Buffer<T>, f: &Buffer<T>) -> Result<Event> {
        let (tp, pk) = (self.tp, &self.k);
        let args = [
            Arg::U32(tp as u32),
            Arg::Buf(&self.p),
            Arg::BufU32(&self.pe),
            Arg::Buf(u),
            Arg::Buf(f),
        ];
        match self.variants.primal {
            PrimalVariant::Tet => launch(&self.dev, &pk.primal_tet, tp, LOCAL, &args),
            PrimalVariant::Row => launch(&self.dev, &pk.primal_row, 4 * tp, LOCAL, &args),
            PrimalVariant::Sym => launch(&self.dev, &pk.primal_sym, tp, LOCAL, &args),
        }
    }

    /// First half of the factored dual update: per-edge circulations.
    pub fn circulation(&self) -> Result<Event> {
        self.launch_circulation(&self.f)
    }

    /// The device words of circulation form `v` in sliced ELL form: chunks of 32 edges, each
    /// chunk's lists interleaved word by word and padded to its longest; returns the chunk
    /// offsets and the words (edge `e`'s words are `[ptr[e] / w, ptr[e + 1] / w)` of
    /// [`circulation_words`], `w` = 1 for the lists, 2 for the pairs).
    fn sliced_ell(&self, v: CircVariant) -> Result<(Vec<u64>, Vec<u32>)> {
        let (ptr, e) = (&self.dga.circ_ptr, self.ne);
        let words = circulation_words(&self.dga, v)?;
        let w = match v {
            CircVariant::Lists => 1,
            CircVariant::Paired => 2,
        };
        let list = |e: usize| ptr[e] as usize / w..ptr[e + 1] as usize / w;
        let chunks = e.div_ceil(32);
        let mut so = Vec::with_capacity(chunks + 1);
        so.push(0u64);
        for c in 0..chunks {
            let longest = (32 * c..(32 * c + 32).min(e))
                .map(|e| list(e).len())
                .max()
                .unwrap_or(0);
            so.push(so[c] + 32 * longest as u64);
        }
        let mut out = vec![0u32; so[chunks] as usize];
        for e in 0..e {
            let base = so[e / 32] as usize + e % 32;
            for (k, &y) in words[list(e)].iter().enumerate() {
                out[base + 32 * k] = y;
            }
        }
        Ok((so, out))
    }

    /// The circulation lists in sliced ELL form ([`SellCirculation`], a bench variant).
    pub fn sell_circulation(&self) -> Result<SellCirculation> {
        let (so, sc) = self.sliced_ell(CircVariant::Lists)?;
        let [kernel] = self.dgatd_kernels(false, ["circulation_sell"])?;
        Ok(SellCirculation {
            kernel,
            entries: sc.len(),
            so: self.dev.upload(&so, "sliced ELL chunk offsets")?,
            sc: self.dev.upload(&sc, "sliced ELL circulation entries")?,
        })
    }

    /// The circulation lists in paired form ([`PairCirculation`]), in sliced ELL form with
    /// `sell`; an error when a list is not in pairs `+F(n, ·)`, `-F(n, ·)` (never for a
    /// `Dga` of this crate) or a tet index needs more than 28 bits.
    pub fn pair_circulation(&self, sell: bool) -> Result<PairCirculation> {
        let (so, data) = if sell {
            let (so, sp) = self.sliced_ell(CircVariant::Paired)?;
            (Some(so), sp)
        } else {
            (None, circulation_words(&self.dga, CircVariant::Paired)?)
        };
        let name = if sell {
            "circulation_pair_sell"
        } else {
            "circulation_pair"
        };
        let [kernel] = self.dgatd_kernels(false, [name])?;
        Ok(PairCirculation {
            kernel,
            entries: data.len(),
            pairs: self.dev.upload(&data, "paired circulation entries")?,
            so: match so {
                Some(so) => Some(self.dev.upload(&so, "paired sliced ELL chunk offsets")?),
                None => None,
            },
        })
    }

    /// `c = C̃ F` through the paired lists (`circulation_pair`, `circulation_pair_sell`).
    pub fn circulation_pair(&self, pc: &PairCirculation) -> Result<Event> {
        let (e, t) = (Arg::U32(self.ne as u32), Arg::U32(self.tp as u32));
        let (ptr, pairs) = (Arg::BufU32(&self.circ_ptr), Arg::BufU32(&pc.pairs));
        let (f, c) = (Arg::Buf(&self.f), Arg::Buf(&self.c));
        match &pc.so {
            Some(so) => launch(
                &self.dev,
                &pc.kernel,
                self.ne,
                LOCAL,
                &[e, t, ptr, Arg::BufU64(so), pairs, f, c],
            ),
            None => launch(
                &self.dev,
                &pc.kernel,
                self.ne,
                LOCAL,
                &[e, t, ptr, pairs, f, c],
            ),
        }
    }

    /// `c = C̃ F` through the sliced ELL lists (`circulation_sell`).
    pub fn circulation_sell(&self, sl: &SellCirculation) -> Result<Event> {
        launch(
            &self.dev,
            &sl.kernel,
            self.ne,
            LOCAL,
            &[
                Arg::U32(self.ne as u32),
                Arg::BufU32(&self.circ_ptr),
                Arg::BufU64(&sl.so),
                Arg::BufU32(&sl.sc),
                Arg::Buf(&self.f),
                Arg::Buf(&self.c),
            ],
        )
    }

    /// `c = C̃ f` into the stepper's circulation buffer.
    fn launch_circulation(&self, f: &Buffer<T>) -> Result<Event> {
        self.launch_circulation_on(f, None, Lane::Main, &[])
    }

    /// `c = C̃ f` on the edges `idx` (`(list, count)`; None: every edge) in the stepper's
    /// circulation form, on `lane` after `wait`.
    fn launch_circulation_on(
        &self,
        f: &Buffer<T>,
        idx: Option<(&Buffer<u32>, usize)>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let paired = self.variants.circ == CircVariant::Paired;
        let n = idx.map_or(self.ne, |(_, n)| n);
        let kernel = match (idx.is_some(), paired) {
            (false, false) => &self.k.circulation,
            (false, true) => &self.k.circulation_pair,
            (true, false) => &self.k.circulation_idx,
            (true, true) => &self.k.circulation_pair_idx,
        };
        // (n, [T], [idx], ptr, circ, F, C): the kernels' parameter order
        let args: Vec<Arg<T>> = [
            Some(Arg::U32(n as u32)),
            paired.then_some(Arg::U32(self.tp as u32)),
            idx.map(|(i, _)| Arg::BufU32(i)),
        ]
        .into_iter()
        .flatten()
        .chain([
            Arg::BufU32(&self.circ_ptr),
            Arg::BufU32(&self.circ),
            Arg::Buf(f),
            Arg::Buf(&self.c),
        ])
        .collect();
        launch_on(&self.dev, lane, kernel, n, LOCAL, &args, wait)
    }

    /// Second half of the factored dual update: per-vertex blocks.
    pub fn vertex_blocks(&self) -> Result<Event> {
        match &self.slots {
            Some(st) => self.vertex_blocks_sm(&st.sm),
            None => self.launch_vertex_blocks(&self.u),
        }
    }

    /// `u += B c` with the configured mapping (c: the stepper's circulation buffer).
    fn launch_vertex_blocks(&self, u: &Buffer<T>) -> Result<Event> {
        // the vertex-major kernels share their arguments; the staged forms add local memory
        let (kernel, extra) = match self.variants.block {
            BlockVariant::PackedLocal => (
                &self.k.vertex_block_sl,
                vec![Arg::U32(self.stage_cap), Arg::Local(STAGE_BYTES)],
            ),
            BlockVariant::PackedSharedC => (
                &self.k.vertex_block_sc,
                vec![Arg::Local(LOCAL * std::mem::size_of::<T>())],
            ),
            _ => (self.block_kernels().0, vec![]),
        };
        match self.variants.block {
            BlockVariant::Vertex
            | BlockVariant::Packed
            | BlockVariant::Diag
            | BlockVariant::PackedLocal
            | BlockVariant::PackedSharedC => {
                let args: Vec<Arg<T>> = self
                    .vertex_major_args(self.block_offsets(), Arg::Buf(&self.block), u)
                    .into_iter()
                    .chain(extra)
                    .collect();
                launch(&self.dev, kernel, self.nfree, LOCAL, &args)
            }
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

    /// The arguments the vertex-major block kernels share: slots, vertex pointers, the
    /// blocks (`offsets`, `block`), circulations and the `U` they update.
    fn vertex_major_args<'a>(
        &'a self,
        offsets: &'a Buffer<u64>,
        block: Arg<'a, T>,
        u: &'a Buffer<T>,
    ) -> [Arg<'a, T>; 8] {
        [
            Arg::U32(self.nfree as u32),
            Arg::BufU32(&self.slot_vertex),
            Arg::BufU32(&self.vptr),
            Arg::BufU64(offsets),
            Arg::BufU32(&self.vh),
            block,
            Arg::Buf(&self.c),
            Arg::Buf(u),
        ]
    }

    /// The offsets of the resident block layout (full or packed).
    fn block_offsets(&self) -> &Buffer<u64> {
        if self.block_layout == BlockLayout::Full {
            &self.boff
        } else {
            &self.poff
        }
    }

    /// The vertex-major block kernels (whole range, index subset) of the resident layout.
    fn block_kernels(&self) -> (&Kernel, &Kernel) {
        match self.block_layout {
            BlockLayout::Full => (&self.k.vertex_block_v, &self.k.vertex_block_v_idx),
            BlockLayout::Tri => (&self.k.vertex_block_s, &self.k.vertex_block_s_idx),
            BlockLayout::Diag => (&self.k.vertex_block_d, &self.k.vertex_block_d_idx),
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
        self.step_events(k).map(drop)
    }

    /// [`Self::step`], returning the events of its kernels (the bench times them).
    pub fn step_events(&self, k: usize) -> Result<Vec<Event>> {
        // (the magnetic loss's event first: the bench times from the first start)
        let mut ev: Vec<Event> = self.mag_loss()?.into_iter().collect();
        ev.push(self.primal_in_layout()?);
        ev.extend(self.loss_update()?);
        ev.extend(self.disp_correct()?);
        match self.fused() {
            Some((d, f)) => {
                ev.push(self.circulation()?);
                ev.extend(self.vertex_blocks_disp(d, f)?);
            }
            None => ev.extend(self.dual_update()?),
        }
        let (idx, u) = match &self.slots {
            Some(st) => (&st.src_idx, &st.sm.us),
            None => (&self.src_idx, &self.u),
        };
        ev.extend(self.source_into(idx, &self.src_g, self.nsrc, u, k, Lane::Main, &[])?);
        ev.extend(self.disp_poles()?);
        Ok(ev)
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
        if self.loss.is_some() || self.disp.is_some() {
            return Err(Error::config(
                "power iteration",
                "lossy operators",
                "run it before set_time_step installs the loss step (σ does not change ρ(K))",
            ));
        }
        let mut rng = Rng::new(seed);
        let mut x0 = vec![T::zero(); self.nh];
        for &h in &self.dga.meps.h {
            x0[h as usize] = T::of(rng.sym());
        }
        self.power_iteration(iters, &x0, &mut NoHalo)
    }

    /// The power iteration of [`Self::spectral_radius`] from the start vector `x0` (U
    /// layout), with `halo` completing ghost values and summing over ranks (a partitioned
    /// rank: its operators hold its own rows only, so its dot products are its share).
    pub fn power_iteration(
        &mut self,
        iters: usize,
        x0: &[T],
        halo: &mut dyn PowerHalo<T>,
    ) -> Result<f64> {
        // Meps: the host's, uploaded for the iteration, or the one assembled on the device
        let resident = self.resident_masses.take();
        let mbuf = match (&resident, self.dga.has_masses()) {
            (_, true) => {
                let dga = self.dga.clone();
                Some(self.dev.upload_with(
                    dga.meps.data.len(),
                    "Meps blocks (power iteration)",
                    |i| T::of(dga.meps.data[i]),
                )?)
            }
            (Some(_), false) => None,
            (None, false) => {
                self.resident_masses = resident;
                return self
                    .dga
                    .require_masses("power iteration")
                    .map(|()| f64::NAN);
            }
        };
        let r = self.power_iteration_with(
            iters,
            x0,
            halo,
            mbuf.as_ref()
                .unwrap_or_else(|| &resident.as_ref().expect("checked above").meps_full),
        );
        self.resident_masses = resident;
        r
    }

    /// [`Self::power_iteration`] with `Meps`'s full blocks `mbuf` on the device.
    fn power_iteration_with(
        &mut self,
        iters: usize,
        x0: &[T],
        halo: &mut dyn PowerHalo<T>,
        mbuf: &Buffer<T>,
    ) -> Result<f64> {
        let x = self.dev.upload(x0, "power iteration vector")?;
        halo.exchange(self, &x, Field::U)?;
        let kx = self.dev.alloc::<T>(self.nh, "power iteration vector")?;
        let mx = self.dev.alloc::<T>(self.nh, "power iteration vector")?;
        // Up to 256 work-groups; fewer when fewer already give every element its own
        // work-item (then the extra groups only added exact zeros: the sums are the same
        // bit for bit, and a simulator such as Oclgrind runs far fewer work-items).
        let groups = dot_groups(self.nh);
        let partial = self.dev.alloc::<T>(groups, "partial sums")?;
        // Operate on (x -> f -> kx) with the stepper's own F and C buffers, saved around.
        // the iteration works in F (and the circulations, scratch of every step): F is
        // saved on the device and restored after it (U is not touched)
        let n4 = 4 * self.tp;
        let f_saved = self
            .dev
            .alloc::<T>(n4.max(1), "saved F (power iteration)")?;
        let copy_f = |a: &Buffer<T>, b: &Buffer<T>| {
            launch(
                &self.dev,
                &self.k.copy,
                n4,
                LOCAL,
                &[Arg::U64(n4 as u64), Arg::Buf(a), Arg::Buf(b)],
            )
        };
        copy_f(&self.f, &f_saved)?;
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
            self.dev.fill_zero(&mut self.f, 4 * self.tp)?;
            self.dev.fill_zero(&mut kxb, self.nh)?; // the block kernel accumulates
            self.launch_primal(&x, &self.f)?;
            halo.exchange(self, &self.f, Field::F)?;
            self.launch_circulation(&self.f)?;
            self.launch_vertex_blocks(&kxb)?; // kxb = -dt² K x
            vb_h(mbuf, &kxb, &mx)?;
            let num = self.dot(&x, &mx, self.nh, &partial, groups)?;
            vb_h(mbuf, &x, &mx)?;
            let den = self.dot(&x, &mx, self.nh, &partial, groups)?;
            let nrm2 = self.dot(&kxb, &kxb, self.nh, &partial, groups)?;
            let [num, den, nrm2] = halo.sum([num, den, nrm2])?;
            lambda = -num / den / (self.dt * self.dt);
            let nrm = nrm2.sqrt();
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
            halo.exchange(self, &x, Field::U)?;
        }
        launch(
            &self.dev,
            &self.k.copy,
            n4,
            LOCAL,
            &[Arg::U64(n4 as u64), Arg::Buf(&f_saved), Arg::Buf(&self.f)],
        )?;
        self.dev.finish()?;
        Ok(lambda)
    }

    /// The energy's masses and scratch on the device ([`DeviceEnergy`]).
    /// The masses come from the host's `Dga`, or are those assembled on this device
    /// ([`ResidentMasses`], moved into the energy's operands).
    fn energy_operands(&mut self) -> Result<DeviceEnergy<T>> {
        let (dga, tp) = (self.dga.clone(), self.tp);
        let poff = dga.meps.packed_offsets();
        let (meps, mmu) = if dga.has_masses() {
            let packed = dga.meps.pack(&dga.meps.data, &poff, T::of);
            // the upper triangle row by row, as primal_sym's layout
            let mmu = upload_columns(&self.dev, self.t, 10, "energy: Mmu", T::zero(), |k, n| {
                let (r, c) = crate::dga::SYM4_RC[k];
                T::of(dga.mmu[n][4 * r + c])
            })?;
            (self.dev.upload(&packed, "energy: Meps blocks")?, mmu)
        } else {
            let m = self.resident_masses.take();
            let why = "the masses are neither on the host nor on the device";
            let ResidentMasses {
                meps_full,
                meps_packed,
                mmu,
            } = m.ok_or_else(|| Error::config("energy", "resident operators", why))?;
            // the power iteration's full blocks stay for a later iteration
            self.resident_masses = Some(ResidentMasses {
                meps_full,
                meps_packed: self.dev.alloc(1, "energy: moved")?,
                mmu: self.dev.alloc(1, "energy: moved")?,
            });
            (meps_packed, mmu)
        };
        let groups = dot_groups(self.nfree.max(4 * tp));
        Ok(DeviceEnergy {
            meps,
            poff: self.dev.upload(&poff, "energy: block offsets")?,
            mmu,
            xs: self.dev.alloc(self.nfree.max(1), "energy: U by slot")?,
            y: self
                .dev
                .alloc(self.nfree.max(4 * tp).max(1), "energy: products")?,
            f_old: self.dev.alloc((4 * tp).max(1), "energy: saved F")?,
            partial: self.dev.alloc(groups, "energy: partial sums")?,
        })
    }

    /// `W = ½ Uᵀ Meps U + ½ F_oldᵀ Mmu F_new` on the device, with `F_new = F_old - P U` as
    /// [`Self::state_with_next`] computes it (F is restored): the host's
    /// [`super::cpu::energy_of`] without moving the state (two dot products of `NF` and
    /// `4 TP` values, summed per work-group on the device and over the groups on the host in
    /// f64).
    fn device_energy(&self, d: &DeviceEnergy<T>) -> Result<f64> {
        let (nf, n4) = (self.nfree, 4 * self.tp);
        let copy = |a: &Buffer<T>, b: &Buffer<T>| {
            launch(
                &self.dev,
                &self.k.copy,
                n4,
                LOCAL,
                &[Arg::U64(n4 as u64), Arg::Buf(a), Arg::Buf(b)],
            )
        };
        // U by slot: slot-major U as it is, else gathered through the slots' half-edges
        let xs = match &self.slots {
            Some(st) => &st.sm.us,
            None => {
                let args = [
                    Arg::U32(nf as u32),
                    Arg::BufU32(&self.vh),
                    Arg::Buf(&self.u),
                    Arg::Buf(&d.xs),
                ];
                launch(&self.dev, &self.k.gather, nf, LOCAL, &args)?;
                &d.xs
            }
        };
        let args = [
            Arg::U32(nf as u32),
            Arg::BufU32(&self.slot_vertex),
            Arg::BufU32(&self.vptr),
            Arg::BufU64(&d.poff),
            Arg::Buf(&d.meps),
            Arg::Buf(xs),
            Arg::Buf(&d.y),
        ];
        launch(&self.dev, &self.k.meps_slots, nf, LOCAL, &args)?;
        let we = self.dot(xs, &d.y, nf, &d.partial, dot_groups(nf))?;
        copy(&self.f, &d.f_old)?;
        self.primal_update()?;
        let args = [
            Arg::U32(self.tp as u32),
            Arg::Buf(&d.mmu),
            Arg::Buf(&self.f),
            Arg::Buf(&d.y),
        ];
        launch(&self.dev, &self.k.sym4_apply, self.tp, LOCAL, &args)?;
        let wm = self.dot(&d.f_old, &d.y, n4, &d.partial, dot_groups(n4))?;
        copy(&d.f_old, &self.f)?;
        Ok(0.5 * (we + wm))
    }

    /// `(U, F_old, F_new)` in host layouts, with `F_new = F_old - P U` computed on the device.
    pub fn state_with_next(&mut self) -> Result<(Vec<T>, Vec<T>, Vec<T>)> {
        self.sync_u()?;
        let u = self.dev.read(&self.u, self.nh, "U")?;
        let f = self.dev.read(&self.f, 4 * self.tp, "F")?;
        self.primal_update()?;
        let fnew = self.dev.read(&self.f, 4 * self.tp, "F")?;
        self.dev.write(&mut self.f, &f, "F")?;
        let host = |d: &[T]| f_to_host(d, self.t, self.tp, |x| x);
        Ok((u, host(&f), host(&fnew)))
    }
}

/// A subset of a stepper's tets, edges or free half-edge slots (or, for halo packing, of
/// the slots of a field) for index-subset launches: the ids on the device, or all of them
/// (no index list: the plain kernel runs).
pub struct Subset {
    idx: Option<Buffer<u32>>,
    n: usize,
}

impl Subset {
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// Which state vector a halo hook works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Half-edge values (`U`, `2e + s`).
    U,
    /// Half dual-edge values (`F`, device slot `k T + n`).
    F,
}

/// What a distributed power iteration needs from its transport
/// ([`ClStepper::power_iteration`]).
pub trait PowerHalo<T: Real> {
    /// Brings the ghost values of `b` (a vector of layout `field` of stepper `s`) up to date.
    fn exchange(&mut self, s: &ClStepper<T>, b: &Buffer<T>, field: Field) -> Result<()>;
    /// Global sums of the per-rank partial sums.
    fn sum(&mut self, x: [f64; 3]) -> Result<[f64; 3]>;
}

/// One device holds the whole problem: nothing to exchange, nothing to add.
pub struct NoHalo;

impl<T: Real> PowerHalo<T> for NoHalo {
    fn exchange(&mut self, _: &ClStepper<T>, _: &Buffer<T>, _: Field) -> Result<()> {
        Ok(())
    }
    fn sum(&mut self, x: [f64; 3]) -> Result<[f64; 3]> {
        Ok(x)
    }
}

/// Index-subset launches for a partitioned rank (`crate::partition`): the same kernels on a
/// selection of entities, on either queue, after given events. A subset launch does the
/// same arithmetic as the whole launch for each entity it covers; the primal update uses the
/// per-tet mapping and the dual update the factored form with the vertex-major blocks.
impl<T: Real> ClStepper<T> {
    /// A subset of `total` entities: `ids` uploaded, or no list when `ids` is `0..total`.
    pub fn subset(&self, ids: &[u32], total: usize, what: &str) -> Result<Subset> {
        if ids.len() == total && ids.iter().enumerate().all(|(i, &x)| x as usize == i) {
            return Ok(Subset {
                idx: None,
                n: total,
            });
        }
        self.indices(ids, what)
    }

    /// An explicit index list (for packing halos).
    pub fn indices(&self, ids: &[u32], what: &str) -> Result<Subset> {
        Ok(Subset {
            idx: Some(self.dev.upload(ids, what)?),
            n: ids.len(),
        })
    }

    /// Tets, edges and free half-edge slots of the local mesh.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.t, self.ne, self.nfree)
    }

    /// The column length of F and the per-tet operators on the device ([`tet_stride`]):
    /// F value `k` of tet `n` is at `k * tet_stride + n` in [`Self::state_buffers`]' F.
    pub fn tet_stride(&self) -> usize {
        self.tp
    }

    /// The device buffers of `U` (in the stepper's [`ULayout`]: `US` while slot-major) and `F`.
    pub fn state_buffers(&self) -> (&Buffer<T>, &Buffer<T>) {
        (self.slots.as_ref().map_or(&self.u, |st| &st.sm.us), &self.f)
    }

    /// `F -= P U` on the tets of `s`.
    pub fn primal_on(&self, s: &Subset, lane: Lane, wait: &[&Event]) -> Result<Event> {
        if let Some(st) = &self.slots {
            return self.primal_on_sm(&st.sm, s, lane, wait);
        }
        let t = self.tp as u32;
        let (p, pe, u, f) = (&self.p, &self.pe, &self.u, &self.f);
        let sym = self.variants.primal == PrimalVariant::Sym;
        let (whole, part) = if sym {
            (&self.k.primal_sym, &self.k.primal_sym_idx)
        } else {
            (&self.k.primal_tet, &self.k.primal_tet_idx)
        };
        match &s.idx {
            None => launch_on(
                &self.dev,
                lane,
                whole,
                self.tp,
                LOCAL,
                &[
                    Arg::U32(t),
                    Arg::Buf(p),
                    Arg::BufU32(pe),
                    Arg::Buf(u),
                    Arg::Buf(f),
                ],
                wait,
            ),
            Some(i) => launch_on(
                &self.dev,
                lane,
                part,
                s.n,
                LOCAL,
                &[
                    Arg::U32(t),
                    Arg::U32(s.n as u32),
                    Arg::BufU32(i),
                    Arg::Buf(p),
                    Arg::BufU32(pe),
                    Arg::Buf(u),
                    Arg::Buf(f),
                ],
                wait,
            ),
        }
    }

    /// [`Self::primal_on`] with slot-major `U` (`primal_sym_sm`, `primal_sym_sm_idx`).
    fn primal_on_sm(
        &self,
        sm: &SlotMajor<T>,
        s: &Subset,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let m = sm
            .mixed
            .as_ref()
            .map_or(Arg::Buf(&self.p), |m| Arg::BufF32(&m.p));
        let t = Arg::U32(self.tp as u32);
        let tail = [
            m,
            Arg::BufU32(&self.pe),
            Arg::BufU32(&sm.es),
            Arg::Buf(&sm.us),
            Arg::Buf(&self.f),
        ];
        let (kernel, n, head) = match &s.idx {
            None => (&sm.primal, self.tp, vec![t]),
            Some(i) => (
                &sm.primal_idx,
                s.n,
                vec![t, Arg::U32(s.n as u32), Arg::BufU32(i)],
            ),
        };
        let args: Vec<Arg<T>> = head.into_iter().chain(tail).collect();
        launch_on(&self.dev, lane, kernel, n, LOCAL, &args, wait)
    }

    /// Circulations of the edges of `s`.
    pub fn circulation_on(&self, s: &Subset, lane: Lane, wait: &[&Event]) -> Result<Event> {
        let idx = s.idx.as_ref().map(|i| (i, s.n));
        self.launch_circulation_on(&self.f, idx, lane, wait)
    }

    /// `U += B c` on the free half-edge slots of `s` (positions in `vh`, vertex-major).
    pub fn vertex_blocks_on(&self, s: &Subset, lane: Lane, wait: &[&Event]) -> Result<Event> {
        if let Some(st) = &self.slots {
            let sm = &st.sm;
            let b = sm
                .mixed
                .as_ref()
                .map_or(Arg::Buf(&self.block), |m| Arg::BufF32(&m.b));
            let tail = [
                Arg::BufU32(&self.slot_vertex),
                Arg::BufU32(&self.vptr),
                Arg::BufU64(&self.poff),
                Arg::BufU32(&self.vh),
                b,
                Arg::Buf(&self.c),
                Arg::Buf(&sm.us),
            ];
            let (kernel, head) = match &s.idx {
                None => (&sm.block, vec![Arg::U32(self.nfree as u32)]),
                Some(i) => (&sm.block_idx, vec![Arg::U32(s.n as u32), Arg::BufU32(i)]),
            };
            let args: Vec<Arg<T>> = head.into_iter().chain(tail).collect();
            return launch_on(&self.dev, lane, kernel, s.n, LOCAL, &args, wait);
        }
        let tail = [
            Arg::BufU32(&self.slot_vertex),
            Arg::BufU32(&self.vptr),
            Arg::BufU64(self.block_offsets()),
            Arg::BufU32(&self.vh),
            Arg::Buf(&self.block),
            Arg::Buf(&self.c),
            Arg::Buf(&self.u),
        ];
        let (whole, part) = self.block_kernels();
        let (kernel, head) = match &s.idx {
            None => (whole, vec![Arg::U32(self.nfree as u32)]),
            Some(i) => (part, vec![Arg::U32(s.n as u32), Arg::BufU32(i)]),
        };
        let args: Vec<Arg<T>> = head.into_iter().chain(tail).collect();
        launch_on(&self.dev, lane, kernel, s.n, LOCAL, &args, wait)
    }

    /// `U[idx] -= w((k + 1/2) Δt) g` for a source pattern held by the caller (`g` with Δt
    /// folded in; `idx` half-edges, or slots while `U` is slot-major: [`Self::slot_of_half`]);
    /// nothing without a waveform or an empty pattern.
    #[allow(clippy::too_many_arguments)]
    pub fn source_on(
        &self,
        idx: &Buffer<u32>,
        g: &Buffer<T>,
        n: usize,
        k: usize,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Option<Event>> {
        let u = self.slots.as_ref().map_or(&self.u, |st| &st.sm.us);
        self.source_into(idx, g, n, u, k, lane, wait)
    }

    /// The source kernel adding `g w(t)` at `idx` into `u` (half-edges or slots), at
    /// `t = (k + 1/2) Δt`; nothing without a waveform or entries.
    #[allow(clippy::too_many_arguments)]
    fn source_into(
        &self,
        idx: &Buffer<u32>,
        g: &Buffer<T>,
        n: usize,
        u: &Buffer<T>,
        k: usize,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Option<Event>> {
        let Some(w) = self.wave.filter(|_| n > 0) else {
            return Ok(None);
        };
        let t = (k as f64 + 0.5) * self.dt;
        launch_on(
            &self.dev,
            lane,
            &self.k.source,
            n,
            LOCAL.min(64),
            &[
                Arg::U32(n as u32),
                Arg::BufU32(idx),
                Arg::Buf(g),
                Arg::Buf(u),
                Arg::Real(T::of(t)),
                Arg::Real(T::of(w.t0)),
                Arg::Real(T::of(w.tau)),
            ],
            wait,
        )
        .map(Some)
    }

    /// `dst[i] = src[s[i]]` (packing the values a neighbour needs).
    pub fn gather(
        &self,
        src: &Buffer<T>,
        s: &Subset,
        dst: &Buffer<T>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        self.pack(&self.k.gather, src, s, dst, lane, wait)
    }

    /// `dst[s[i]] = src[i]` (putting received ghost values in place).
    pub fn scatter(
        &self,
        src: &Buffer<T>,
        s: &Subset,
        dst: &Buffer<T>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        self.pack(&self.k.scatter, src, s, dst, lane, wait)
    }

    fn pack(
        &self,
        kernel: &Kernel,
        src: &Buffer<T>,
        s: &Subset,
        dst: &Buffer<T>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let Some(i) = &s.idx else {
            return Err(Error::config(
                "halo list",
                s.n,
                "packing needs an explicit index list (ClStepper::indices)",
            ));
        };
        launch_on(
            &self.dev,
            lane,
            kernel,
            s.n,
            LOCAL,
            &[
                Arg::U32(s.n as u32),
                Arg::BufU32(i),
                Arg::Buf(src),
                Arg::Buf(dst),
            ],
            wait,
        )
    }

    /// The probe kernel writing slot `j` of the sample buffer (main queue), after `wait`;
    /// nothing without probes.
    pub fn sample_probes(&self, j: usize, wait: &[&Event]) -> Result<Option<Event>> {
        if self.np == 0 {
            return Ok(None);
        }
        let (slots, u) = match &self.slots {
            Some(st) => (&st.probe_slots, &st.sm.us),
            None => (&self.probe_slots, &self.u),
        };
        launch_on(
            &self.dev,
            Lane::Main,
            &self.k.probe,
            self.np,
            LOCAL.min(64),
            &[
                Arg::U32(self.np as u32),
                Arg::U32(j as u32),
                Arg::BufU32(slots),
                Arg::Buf(&self.probe_w),
                Arg::Buf(u),
                Arg::Buf(&self.samples),
            ],
            wait,
        )
        .map(Some)
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
        self.sample_probes(j, &[])?;
        Ok(())
    }
}

impl<T: Real> Stepper for ClStepper<T> {
    fn name(&self) -> String {
        let layout = match self.u_layout() {
            ULayout::HalfEdge => "",
            ULayout::SlotMajor => " (slot-major U)",
        };
        format!(
            "opencl {} / {}{layout}",
            self.dev.info.platform, self.dev.info.name
        )
    }

    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        advance_sampled(self, first, n, samples)
    }

    fn energy(&mut self) -> Result<f64> {
        let on_device = matches!(self.energy, Some(Ok(_))) || self.resident_masses.is_some();
        if !on_device {
            self.dga.require_masses("energy")?;
        }
        if self.disp.is_none() {
            if self.energy.is_none() {
                self.energy = Some(self.energy_operands().map_err(|_| ()));
            }
            if let Some(Ok(d)) = &self.energy {
                return self.device_energy(d);
            }
        }
        self.dga.require_masses("energy")?;
        // on the host: dispersive runs (the pole states' energy), or no room on the device
        let (u, f, fnew) = self.state_with_next()?;
        let aux = match &self.disp {
            Some(d) => {
                let (s, _) = self.disp_state()?;
                super::cpu::aux_energy_of(&self.dga, &d.host, self.dt, &u, &s)
            }
            None => 0.0,
        };
        Ok(super::cpu::energy_of(&self.dga, &u, &f, &fnew) + aux)
    }

    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        self.sync_u()?;
        let u = self.dev.read(&self.u, self.nh, "U")?;
        let fd = self.dev.read(&self.f, 4 * self.tp, "F")?;
        let f = f_to_host(&fd, self.t, self.tp, |x| x.f64());
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
        let fd = f_to_device::<T>(f, self.t, self.tp);
        let es = self.half_edge_slots();
        let nf = self.nfree as u32;
        self.nonfree_zero = u.iter().zip(&es).all(|(&x, &g)| g != nf || x == 0.0);
        if !self.nonfree_zero {
            self.slots = None; // (its values are replaced below)
        }
        self.dev.write(&mut self.u, &ut, "U")?;
        if let Some(st) = &self.slots {
            self.to_slot_major(&st.sm)?;
        }
        self.dev.write(&mut self.f, &fd, "F")
    }

    fn aux_state(&self) -> Result<Vec<f64>> {
        let (s, g) = self.disp_state()?;
        Ok(s.iter().chain(&g).map(|x| x.f64()).collect())
    }
    fn set_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        let (ns, ng) = self
            .disp
            .as_ref()
            .map_or((0, 0), |d| (d.host.n_state, d.host.n_g));
        if aux.len() != ns + ng {
            return Err(Error::config(
                "state",
                aux.len(),
                format!("this run has {} dispersive state values", ns + ng),
            ));
        }
        if let Some(d) = self.disp.as_mut() {
            let to = |v: &[f64]| v.iter().map(|&x| T::of(x)).collect::<Vec<T>>();
            self.dev.write(&mut d.s, &to(&aux[..ns]), "pole states")?;
            if ng > 0 {
                self.dev.write(&mut d.g, &to(&aux[ns..]), "pole changes")?;
            }
        }
        Ok(())
    }
    fn dft_start(&mut self, m: usize) -> Result<()> {
        self.dft = None; // release the old accumulators first
        let what = |x: &str| format!("mode-shape transforms of {x} ({m} frequencies)");
        // accumulate U where it lives: no move between layouts in the time loop
        let slots = self.slots.is_some();
        let nu = if slots { self.nfree + 1 } else { self.nh };
        self.dft = Some(DeviceDft {
            m,
            slots,
            acc_u: self.dev.alloc(2 * m * nu, &what("U"))?,
            acc_f: self.dev.alloc(2 * m * 4 * self.tp, &what("F"))?,
            pu: self.dev.alloc(2 * m, "phase factors")?,
            pf: self.dev.alloc(2 * m, "phase factors")?,
        });
        Ok(())
    }

    fn dft_add(&mut self, pu: &[C64], pf: &[C64]) -> Result<()> {
        let Some(d) = self.dft.as_mut() else {
            return Err(Error::config(
                "mode shapes",
                "dft_add",
                "dft_start was not called",
            ));
        };
        if pu.len() != d.m || pf.len() != d.m {
            return Err(Error::config(
                "mode shapes",
                pu.len(),
                "phase factors do not match the started transforms",
            ));
        }
        let pairs =
            |p: &[C64]| -> Vec<T> { p.iter().flat_map(|z| [T::of(z.re), T::of(z.im)]).collect() };
        self.dev.write(&mut d.pu, &pairs(pu), "phase factors")?;
        self.dev.write(&mut d.pf, &pairs(pf), "phase factors")?;
        let d = self.dft.as_ref().expect("set above");
        let (nu, u) = match (&self.slots, d.slots) {
            (Some(st), true) => (self.nfree + 1, &st.sm.us),
            (None, false) => (self.nh, &self.u),
            _ => {
                return Err(Error::config(
                    "mode shapes",
                    "dft_add",
                    "the layout of U changed since dft_start (start the transforms again)",
                ));
            }
        };
        for (n, p, x, acc) in [
            (nu, &d.pu, u, &d.acc_u),
            (4 * self.tp, &d.pf, &self.f, &d.acc_f),
        ] {
            launch(
                &self.dev,
                &self.k.dft_acc,
                n,
                LOCAL,
                &[
                    Arg::U32(n as u32),
                    Arg::U32(d.m as u32),
                    Arg::Buf(p),
                    Arg::Buf(x),
                    Arg::Buf(acc),
                ],
            )?;
        }
        Ok(())
    }

    fn dft_take(&self, m: usize) -> Result<(Vec<C64>, Vec<C64>)> {
        let Some(d) = self.dft.as_ref().filter(|d| m < d.m) else {
            return Err(Error::config("mode shapes", m, "no such running transform"));
        };
        let plane = |b: &Buffer<T>, n: usize, k: usize| -> Result<Vec<f64>> {
            let p = self
                .dev
                .read_range(b, (2 * m + k) * n, n, "mode-shape transform")?;
            Ok(p.iter().map(|x| x.f64()).collect())
        };
        let nf = 4 * self.tp;
        let nu = if d.slots { self.nfree + 1 } else { self.nh };
        let (ur, ui) = (plane(&d.acc_u, nu, 0)?, plane(&d.acc_u, nu, 1)?);
        let (fr, fi) = (plane(&d.acc_f, nf, 0)?, plane(&d.acc_f, nf, 1)?);
        let x = match d.slots {
            // back to half-edges: slot NF (zero) for those that are not free
            true => self
                .half_edge_slots()
                .iter()
                .map(|&g| C64::new(ur[g as usize], ui[g as usize]))
                .collect(),
            false => ur.iter().zip(&ui).map(|(&a, &b)| C64::new(a, b)).collect(),
        };
        let (fr, fi) = (
            f_to_host(&fr, self.t, self.tp, |v| v),
            f_to_host(&fi, self.t, self.tp, |v| v),
        );
        let y = fr.iter().zip(&fi).map(|(&a, &b)| C64::new(a, b)).collect();
        Ok((x, y))
    }
}

/// Writes `program`'s binaries to `dir/<name>_<n>.bin` (`name` with its path separators
/// replaced), `n` counting the files already there, with the options in a `.opts` file beside
/// each. A tuning aid ([`Device::build_source`], `DGATD_CL_DUMP_BINARY`): a failure is
/// reported on stderr and does not stop the run.
fn dump_binary(program: &Program, dir: &str, name: &str, opts: &str) {
    let stem = name.replace(['/', '\\', '.'], "_");
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let n = std::fs::read_dir(dir)?.count();
        let bins = program
            .get_binaries()
            .map_err(|e| std::io::Error::other(format!("clGetProgramInfo: {e}")))?;
        for (d, b) in bins.iter().enumerate() {
            let p = std::path::Path::new(dir).join(format!("{stem}_{n}_{d}"));
            std::fs::write(p.with_extension("bin"), b)?;
            std::fs::write(p.with_extension("opts"), opts)?;
        }
        Ok(())
    };
    if let Err(e) = write() {
        eprintln!("warning: DGATD_CL_DUMP_BINARY: binary of {name} not written to {dir}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::{TET_ALIGN, f_slot, f_to_device, f_to_host, tet_stride};

    #[test]
    fn the_tet_stride_is_the_next_multiple_of_the_alignment() {
        assert_eq!(tet_stride(0), 0);
        for t in [1, 63, 64, 65, 998250, 10110954, 100663296] {
            let s = tet_stride(t);
            assert!(
                s >= t && s < t + TET_ALIGN && s.is_multiple_of(TET_ALIGN),
                "{t} -> {s}"
            );
        }
        assert_eq!(tet_stride(64), 64);
        assert_eq!(tet_stride(65), 128);
    }

    #[test]
    fn f_slots_and_the_host_layout_are_inverse() {
        // F value k of tet n: host 4n + k, device k * tp + n
        let (t, tp) = (5, tet_stride(5));
        let mut dev = vec![-1.0; 4 * tp];
        for x in 0..4 * t as u32 {
            dev[f_slot(x, tp) as usize] = x as f64;
        }
        let host = f_to_host(&dev, t, tp, |v| v);
        assert_eq!(host, (0..4 * t).map(|x| x as f64).collect::<Vec<_>>());
        // the padding was never named
        assert_eq!(dev.iter().filter(|&&v| v < 0.0).count(), 4 * (tp - t));
        // and back: the same values at the named slots, zero at the padding
        let back = f_to_device::<f64>(&host, t, tp);
        let want: Vec<f64> = dev.iter().map(|&v| v.max(0.0)).collect();
        assert_eq!(back, want);
    }
}
