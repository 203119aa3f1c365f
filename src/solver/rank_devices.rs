//! The OpenCL devices of a multi-rank run (feature `partition`): every rank says what it
//! sees, every rank weighs all the answers the same way, and the run either has a device
//! on every rank, or runs every rank on the CPU backend, or stops with an error that rank 0
//! prints, naming each rank at fault, what it sees and the fix.
//!
//! - `--backend cpu`: no rank touches OpenCL.
//! - `--device NAME|INDEX`: that device on every rank, whatever its kind (the user asked);
//!   a rank without it stops the run.
//! - `--backend opencl`: rank r takes the (node rank)-th GPU of its node (modulo their
//!   number). A rank that sees no GPU stops the run: several ranks are never put on a CPU
//!   OpenCL device by default (name it with `--device` to do that on purpose).
//! - `auto`: GPUs as for `opencl` when any rank sees one, and then a rank that sees none
//!   stops the run. When no rank sees a GPU: the CPU OpenCL device where every rank has a
//!   usable one, else the CPU backend on every rank; but if any rank finds evidence of a
//!   GPU OpenCL does not show ([`crate::backend::discovery`]), the run stops (it would run
//!   on the CPU while the machine has GPUs).
//!
//! Only the device a rank runs on gets a context and programs: a rank on a GPU builds
//! nothing on PoCL. If any rank cannot open its device, `--backend opencl` stops and
//! `auto` runs every rank on the CPU backend (Δt must come from the same power iteration
//! on every rank).

use super::plan::{BackendSpec, Plan};
use crate::backend::discovery;
use crate::backend::opencl::{self, ClDevice, DeviceInfo};
use crate::error::{Error, Result};
use crate::partition::Comm;
use crate::real::Precision;
use std::sync::Arc;

/// What one rank sees, as exchanged between ranks.
#[derive(Clone, Debug, PartialEq)]
struct View {
    /// GPUs listed.
    gpus: usize,
    /// Pieces of evidence of GPUs OpenCL does not show.
    hidden: usize,
    /// The rank's own choice failed (`--device` not found, no OpenCL at all).
    failed: bool,
    /// The OpenCL library its evidence points at (empty: none).
    library: String,
    /// For messages: the rank, its host, platforms and devices, loader environment,
    /// evidence, and its choice's error.
    text: String,
}

impl View {
    fn words(&self) -> Vec<f64> {
        let mut w = vec![
            self.gpus as f64,
            self.hidden as f64,
            self.failed as u8 as f64,
            self.library.len() as f64,
        ];
        w.extend(self.library.bytes().map(f64::from));
        w.extend(self.text.bytes().map(f64::from));
        w
    }
    fn of_words(w: &[f64]) -> View {
        let n = |i: usize| w.get(i).copied().unwrap_or(0.0);
        let text = |from: usize, len: usize| {
            let b: Vec<u8> = w.iter().skip(from).take(len).map(|&x| x as u8).collect();
            String::from_utf8_lossy(&b).into_owned()
        };
        let l = n(3) as usize;
        View {
            gpus: n(0) as usize,
            hidden: n(1) as usize,
            failed: n(2) != 0.0,
            library: text(4, l),
            text: text(4 + l, usize::MAX),
        }
    }
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "?".into())
}

/// This rank's device before the ranks agree (None: none by default), and its view.
fn look(plan: &Plan, rank: usize, node_rank: usize) -> (Result<Option<DeviceInfo>>, View) {
    let visible = opencl::list_devices();
    let all: &[DeviceInfo] = visible.as_deref().unwrap_or(&[]);
    let gpus: Vec<&DeviceInfo> = all.iter().filter(|d| d.is_gpu()).collect();
    let usable = |d: &DeviceInfo| plan.precision == Precision::F32 || d.fp64;
    let choice: Result<Option<DeviceInfo>> = match &plan.backend {
        BackendSpec::Cpu => Ok(None),
        BackendSpec::Opencl(Some(spec)) => opencl::select_device(Some(spec)).map(Some),
        BackendSpec::Opencl(None) | BackendSpec::Auto if !gpus.is_empty() => {
            Ok(Some(gpus[node_rank % gpus.len()].clone()))
        }
        BackendSpec::Opencl(None) => Ok(None),
        BackendSpec::Auto => Ok(opencl::select_device(None).ok().filter(usable)),
    };
    let hidden = discovery::hidden_gpus(all);
    let mut text = format!(
        "rank {rank} (host {}, node rank {node_rank}) sees {}; {}",
        host(),
        discovery::seen_line(&visible),
        discovery::loader_env_line()
    );
    if !hidden.is_empty() {
        text += &format!(
            "; evidence of GPUs OpenCL does not show: {}",
            discovery::evidence_line(&hidden)
        );
    }
    if let Err(e) = &choice {
        text += &format!("; its device: {e}");
    }
    let view = View {
        gpus: gpus.len(),
        hidden: hidden.len(),
        failed: choice.is_err(),
        library: if hidden.is_empty() {
            String::new()
        } else {
            discovery::recipe_library(&hidden).into()
        },
        text,
    };
    (choice, view)
}

/// Why the ranks with `views` cannot run `backend` (None: they can).
fn verdict(backend: &BackendSpec, views: &[View]) -> Option<String> {
    let np = views.len();
    let (at_fault, why): (Vec<&View>, String) = match backend {
        BackendSpec::Cpu => return None,
        BackendSpec::Opencl(Some(spec)) => (
            views.iter().filter(|v| v.failed).collect(),
            format!("--device {spec} is not a device on every rank"),
        ),
        BackendSpec::Opencl(None) => (
            views.iter().filter(|v| v.gpus == 0).collect(),
            format!(
                "--backend opencl on {np} ranks runs every rank on a GPU, and not every rank sees one"
            ),
        ),
        BackendSpec::Auto if views.iter().any(|v| v.gpus > 0) => (
            views.iter().filter(|v| v.gpus == 0).collect(),
            "some ranks see a GPU and others do not".into(),
        ),
        BackendSpec::Auto => (
            views.iter().filter(|v| v.hidden > 0).collect(),
            "no rank sees a GPU, but this machine seems to have GPUs that OpenCL does not show; the run would go to the CPU".into(),
        ),
    };
    if at_fault.is_empty() {
        return None;
    }
    let library = views
        .iter()
        .map(|v| v.library.as_str())
        .find(|l| !l.is_empty())
        .unwrap_or("libnvidia-opencl.so.1");
    let mut msg = format!("{why}:\n");
    const SHOWN: usize = 8;
    for v in at_fault.iter().take(SHOWN) {
        msg += &format!("  {}\n", v.text);
    }
    if at_fault.len() > SHOWN {
        msg += &format!("  … and {} more ranks\n", at_fault.len() - SHOWN);
    }
    if let Some(ok) = views.iter().find(|v| v.gpus > 0) {
        msg += &format!("  (while {})\n", ok.text);
    }
    msg += &format!(
        "To give every rank the GPUs (if this machine has any): {}.\nTo run the ranks on a CPU OpenCL device on purpose, name it with --device NAME|INDEX (see dgatd devices); --backend cpu runs the CPU backend on every rank.",
        discovery::recipe(library)
    );
    Some(msg)
}

/// This rank's OpenCL device: all ranks on devices, or all on the CPU backend (None), or
/// an error on every rank ([`Error::RankDevices`] on rank 0, which prints it; a
/// [`Error::RankZeroFailed`] on the others). Collective.
pub(crate) fn rank_devices<C: Comm>(
    comm: &C,
    plan: &Plan,
    node_rank: usize,
) -> Result<Option<Arc<ClDevice>>> {
    if matches!(plan.backend, BackendSpec::Cpu) {
        return Ok(None);
    }
    let (choice, view) = look(plan, comm.rank(), node_rank);
    let views: Vec<View> = comm
        .all_gather(&view.words())?
        .iter()
        .map(|w| View::of_words(w))
        .collect();
    if let Some(msg) = verdict(&plan.backend, &views) {
        return Err(if comm.rank() == 0 {
            Error::RankDevices(msg)
        } else {
            Error::RankZeroFailed {
                what: "choosing the ranks' devices".into(),
            }
        });
    }
    let dev = match choice {
        Ok(Some(i)) => ClDevice::open(i).ok(),
        _ => None,
    };
    let all_devices = !comm.any(dev.is_none())?;
    let dev = if all_devices { dev } else { None };
    if let (false, BackendSpec::Opencl(_)) = (all_devices, &plan.backend) {
        return Err(Error::NoOpenCl(
            "a rank could not open its OpenCL device (--backend opencl)".into(),
        ));
    }
    Ok(dev)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(gpus: usize, hidden: usize, failed: bool, who: &str) -> View {
        View {
            gpus,
            hidden,
            failed,
            library: if hidden > 0 {
                "libamdocl64.so".into()
            } else {
                String::new()
            },
            text: format!("rank {who} sees …"),
        }
    }

    #[test]
    fn views_survive_the_exchange() {
        let v = view(4, 1, true, "3 é");
        assert_eq!(View::of_words(&v.words()), v);
    }

    #[test]
    fn the_verdicts() {
        let gpu = view(4, 0, false, "0");
        let none = view(0, 0, false, "1");
        let hidden = view(0, 2, false, "2");
        let bad = view(0, 0, true, "3");
        let opencl = BackendSpec::Opencl(None);
        let named = BackendSpec::Opencl(Some("0".into()));
        // --backend opencl: a GPU on every rank
        assert!(verdict(&opencl, &[gpu.clone(), gpu.clone()]).is_none());
        let m = verdict(&opencl, &[gpu.clone(), none.clone()]).unwrap();
        assert!(
            m.contains("rank 1 sees") && m.contains("(while rank 0 sees"),
            "{m}"
        );
        assert!(
            m.contains("export OCL_ICD_FILENAMES=libnvidia-opencl.so.1"),
            "{m}"
        );
        assert!(
            m.contains("-x OCL_ICD_FILENAMES") && m.contains("--device"),
            "{m}"
        );
        assert!(verdict(&opencl, &[none.clone(), none.clone()]).is_some());
        // --device: whatever it names, as long as every rank has it
        assert!(verdict(&named, &[none.clone(), none.clone()]).is_none());
        let m = verdict(&named, &[none.clone(), bad.clone()]).unwrap();
        assert!(m.contains("rank 3") && !m.contains("rank 1"), "{m}");
        // auto: all GPUs, or none and nothing hidden
        assert!(verdict(&BackendSpec::Auto, &[gpu.clone(), gpu.clone()]).is_none());
        assert!(verdict(&BackendSpec::Auto, &[none.clone(), none.clone()]).is_none());
        assert!(verdict(&BackendSpec::Auto, &[gpu.clone(), none.clone()]).is_some());
        let m = verdict(&BackendSpec::Auto, &[none.clone(), hidden]).unwrap();
        assert!(m.contains("does not show") && m.contains("rank 2"), "{m}");
        assert!(m.contains("OCL_ICD_FILENAMES=libamdocl64.so"), "{m}");
        assert!(verdict(&BackendSpec::Cpu, &[bad.clone(), bad]).is_none());
    }
}
