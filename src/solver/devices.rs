//! The OpenCL device of a one-process run (also `mpirun -np 1`, which takes the one-process
//! path), and the warning of a run that lands on the CPU while the machine has GPUs that
//! OpenCL does not show ([`crate::backend::discovery`]).
//!
//! - `--backend opencl --device NAME|INDEX`: that device, whatever it is (the user asked).
//! - `--backend opencl`: the first GPU, else the first CPU device (no device at all: an
//!   error, naming the evidence of hidden GPUs if any); on a CPU device with
//!   evidence of hidden GPUs, the run goes on with [`Choice::warning`] set (the command line
//!   prints it before the run starts, and it is kept among the run's notices).
//! - `auto`: the first GPU, else the first CPU device if it has what the precision needs,
//!   else the CPU backend; a fall-back to the CPU with evidence of hidden GPUs warns the same
//!   way.
//!
//! Multi-rank runs stop instead of warning: [`super::rank_devices`].

use super::plan::{BackendSpec, Plan};
use crate::backend::discovery;
use crate::backend::opencl::{self, DeviceInfo};
use crate::error::{Error, Result};
use crate::real::Precision;

/// A one-process run's device.
#[derive(Debug)]
pub struct Choice {
    /// None: the CPU backend.
    pub device: Option<DeviceInfo>,
    /// Notices (which device `auto` took, or why it took none).
    pub notices: Vec<String>,
    /// The run lands on the CPU by default while GPUs seem hidden from OpenCL: the
    /// evidence, what OpenCL shows, the loader's environment and the fix.
    pub warning: Option<String>,
}

/// The device of `plan`'s run on one process.
pub fn choose(plan: &Plan) -> Result<Choice> {
    let mut notices = Vec::new();
    let device = match &plan.backend {
        BackendSpec::Cpu => None,
        BackendSpec::Opencl(spec) => {
            Some(opencl::select_device(spec.as_deref()).map_err(with_hidden_gpus)?)
        }
        BackendSpec::Auto => match opencl::select_device(None) {
            Ok(d) if plan.precision == Precision::F32 || d.fp64 => {
                notices.push(format!(
                    "using OpenCL device {} ({} / {})",
                    d.index, d.platform, d.name
                ));
                Some(d)
            }
            Ok(d) => {
                notices.push(format!(
                    "OpenCL device {} has no fp64; using the CPU backend",
                    d.name
                ));
                None
            }
            Err(e) => {
                notices.push(format!("{e}; using the CPU backend"));
                None
            }
        },
    };
    let by_default = matches!(plan.backend, BackendSpec::Opencl(None) | BackendSpec::Auto);
    let warning = if by_default && !device.as_ref().is_some_and(DeviceInfo::is_gpu) {
        hidden_gpu_warning(device.as_ref())
    } else {
        None
    };
    Ok(Choice {
        device,
        notices,
        warning,
    })
}

/// A "no OpenCL" error, with the evidence of hidden GPUs and the fix when there is some.
fn with_hidden_gpus(e: Error) -> Error {
    match e {
        Error::NoOpenCl(msg) => {
            let hidden = discovery::hidden_gpus(&[]);
            if hidden.is_empty() {
                return Error::NoOpenCl(msg);
            }
            Error::NoOpenCl(format!(
                "{msg}; but this machine seems to have a GPU: {} ({}). To show it to OpenCL: {}",
                discovery::evidence_line(&hidden),
                discovery::loader_env_line(),
                discovery::recipe(discovery::recipe_library(&hidden))
            ))
        }
        e => e,
    }
}

/// The warning of a run landing on `on` (None: the CPU backend) when something points at a
/// GPU OpenCL does not show; None when nothing does.
fn hidden_gpu_warning(on: Option<&DeviceInfo>) -> Option<String> {
    let visible = opencl::list_devices();
    let hidden = discovery::hidden_gpus(visible.as_deref().unwrap_or(&[]));
    if hidden.is_empty() {
        return None;
    }
    Some(discovery::hidden_warning(on, &visible, &hidden))
}
