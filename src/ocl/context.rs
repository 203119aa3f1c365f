//! An opened device: its context, its two in-order profiling queues, and buffers
//! (allocation that never leaves contents undefined, uploads, reads, zero fills).

use super::launch::{Arg, launch};
use super::{BuildLog, DeviceInfo, FILL_SOURCE, LOCAL, ZERO_BY_WRITE_MAX, cl_err};
use crate::error::{Error, Result};
use crate::real::Real;
use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::types::{CL_BLOCKING, cl_device_id};
use std::ptr;
use std::sync::{Arc, Mutex};

/// An opened device: context and two in-order profiling queues, the main one (every
/// command unless said otherwise) and a side one, on which a partitioned rank runs its
/// interior kernels while the main queue packs and moves the halo ([`Lane`]).
pub struct ClDevice {
    pub info: DeviceInfo,
    pub(super) context: Context,
    pub(super) queue: CommandQueue,
    /// `fill_u32` of `cl/ocl/fill.cl`, built on the first [`ClDevice::fill_zero`].
    pub(super) fill: Mutex<Option<Kernel>>,
    /// The log of every program built on this device, in build order.
    pub(super) logs: Mutex<Vec<BuildLog>>,
    pub(super) side: CommandQueue,
    /// Whether every kernel launch on this device runs alone in the process
    /// ([`super::launch::launch_on`]): true on PoCL, whose CPU driver can abort when one
    /// kernel is in flight with two grid sizes at once (see `serial_launches`).
    pub(super) serial: bool,
}

/// Which of a device's two queues a command goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Main,
    Side,
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
        let serial = serial_launches(&info.platform);
        Ok(Arc::new(ClDevice {
            info,
            context,
            queue,
            fill: Mutex::new(None),
            logs: Mutex::new(Vec::new()),
            side,
            serial,
        }))
    }

    /// Whether kernel launches on this device are serialized process-wide (PoCL).
    pub fn serial_launches(&self) -> bool {
        self.serial
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

    pub(super) fn queue_of(&self, lane: Lane) -> &CommandQueue {
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
            let program = self.build_source(FILL_SOURCE, "cl/ocl/fill.cl", "")?;
            *fill = Some(Kernel::create(&program, "fill_u32").map_err(cl_err("fill_u32"))?);
        }
        Ok(fill)
    }

    /// Creates a buffer of `n.max(1)` elements with undefined contents, refusing sizes above
    /// the device's maximum allocation; callers write all of it before any kernel reads it.
    pub(super) fn create<T>(&self, n: usize, what: &str) -> Result<Buffer<T>> {
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
}

/// Whether the platform named `platform` needs its kernel launches serialized.
///
/// Debian's PoCL 3.1 CPU driver aborted `dgatd resonator --gpus 3` on one PoCL device (three
/// ranks, each with its own context and two queues, in one process) in
/// `pocl_release_dlhandle_cache` on the assertion `found->ref_count > 0`: in CI once, and
/// here in 1 of 6 runs of `partition::gpus_cli` with this serialization off, 0 of 12 with it
/// on. Reading PoCL's `common.c`, the likely cause: it caches a kernel's loaded work-group
/// function per hash *and grid width*, takes a reference on the first entry whose width
/// suffices when a launch starts, and drops one on the first entry of the same hash when it
/// ends, whatever its width; with one kernel in flight twice at once with two grid sizes
/// (a rank's interface and interior on its two queues; ranks on one device) the two entries
/// can differ. So on PoCL each launch holds a process-wide lock until its kernel has
/// completed. Events order the commands as on any device; only the overlap of kernels,
/// which buys nothing on a CPU device, is lost. `DGATD_POCL_SERIAL=0` turns this off (for a
/// PoCL without the fault).
pub(crate) fn serial_launches(platform: &str) -> bool {
    platform.contains("Portable Computing Language")
        && std::env::var("DGATD_POCL_SERIAL").map_or(true, |v| v != "0")
}
