//! Program building: the `-cl-std` option for the device, extra options from the
//! environment, build failures with the compiler's log, and the log of every successful
//! build kept per device.

use super::{ClDevice, cl_std_option};
use crate::error::{Error, Result};
use opencl3::program::Program;
use opencl3::types::cl_device_id;

/// The compiler's log of one successful build (warnings, or vendor remarks; often empty).
#[derive(Clone, Debug)]
pub struct BuildLog {
    /// The source's name, e.g. `cl/ocl/fill.cl`.
    pub name: String,
    /// The full option string passed to the compiler.
    pub options: String,
    pub log: String,
}

impl ClDevice {
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
