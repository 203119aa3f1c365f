//! The OpenCL runtime layer: no physics. Device listing and choice ([`list_devices`],
//! [`select_device`]), an opened device with its context and two queues ([`ClDevice`],
//! [`Lane`]), buffers that are never left undefined ([`ClDevice::alloc`],
//! [`ClDevice::upload`]), pinned host staging ([`Pinned`]), program building with its
//! options and logs ([`ClDevice::build_source`]), and typed kernel launches ([`Arg`],
//! [`launch`], [`launch_on`]; [`kernels`] creates a program's kernels by name).
//!
//! The OpenCL library is loaded at run time (opencl3's `dynamic` feature): the binary
//! builds and starts without OpenCL, and [`list_devices`] says clearly when none is found.
//! Every program is built with an explicit `-cl-std` (OpenCL C 1.2, or the device's own
//! version when older, see [`cl_std_option`]); a build failure carries the build log, and
//! the log of every successful build is kept ([`ClDevice::build_log`]) and printed to
//! stderr when `DGATD_CL_BUILD_LOG=1`, so compiler warnings are visible.
//!
//! OpenCL does not promise zeroed allocations: every buffer is zeroed or written in full
//! when it is allocated ([`ClDevice::alloc`], [`ClDevice::upload`]), so no kernel reads a
//! value nothing wrote (checked under Oclgrind by `tests/opencl/oclgrind.rs`).
//!
//! Every `unsafe` block of the crate is in this module; each says why it is sound. The
//! operators and steppers built on it live in [`crate::backend::opencl`] and
//! [`crate::backend::opencl::DgClStepper`].

mod context;
mod device;
mod launch;
mod pinned;
mod program;

pub use context::{ClDevice, Lane};
pub use device::{DeviceInfo, cl_std_option, list_devices, select_device};
pub use launch::{Arg, event_seconds, kernels, launch, launch_on};
pub use pinned::Pinned;
pub use program::BuildLog;

use crate::error::Error;

/// The buffer-fill kernel (`fill_u32`), built once per device on first use.
pub const FILL_SOURCE: &str = include_str!("../../cl/ocl/fill.cl");
/// Buffers up to this many bytes are zeroed at allocation by a host write (see
/// [`ClDevice::alloc`]), larger ones by the fill kernel.
pub const ZERO_BY_WRITE_MAX: usize = 64 << 20;
/// Work-group size used for every 1-D kernel.
pub const LOCAL: usize = 256;

/// Maps an OpenCL error to the crate's, naming what failed.
pub(crate) fn cl_err(what: &str) -> impl Fn(opencl3::error_codes::ClError) -> Error + '_ {
    move |e| Error::OpenCl {
        what: what.to_string(),
        msg: e.to_string(),
    }
}
