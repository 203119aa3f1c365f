//! Kernel launches: one typed argument list per launch, on either queue, after given
//! events, and the kernel time of a completed event.

use super::{ClDevice, Lane, cl_err};
use crate::error::{Error, Result};
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::Buffer;
use opencl3::program::Program;
use std::sync::Mutex;

/// Held by each kernel launch on a device with [`ClDevice::serial_launches`] from its
/// enqueue until its kernel completes (see `context::serial_launches` for why).
static SERIAL: Mutex<()> = Mutex::new(());

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
    /// A double-precision buffer in a kernel of any precision (`cl/assembly/pack.cl`).
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
    let _alone = dev
        .serial
        .then(|| SERIAL.lock().unwrap_or_else(|p| p.into_inner()));
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
    .and_then(|ev| {
        if dev.serial {
            // the kernel completes before the lock is released
            ev.wait()?;
        }
        Ok(ev)
    })
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

/// The kernels `names` of a built `program`, in order (an error names the one missing).
pub fn kernels<const N: usize>(program: &Program, names: [&str; N]) -> Result<[Kernel; N]> {
    let mut out = Vec::with_capacity(N);
    for name in names {
        out.push(Kernel::create(program, name).map_err(cl_err(name))?);
    }
    Ok(out.try_into().unwrap_or_else(|_| unreachable!("N kernels")))
}
