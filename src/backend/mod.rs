//! Time-stepping backends. [`cpu`] is the public reference every device path is tested
//! against.

pub mod cpu;
pub(crate) mod device_assembly;
pub(crate) mod discovery;
pub mod opencl;
pub(crate) mod planner;

pub use device_assembly::{
    AssemblyKernels, AssemblyTimes, PACK_SOURCE, PackKernels, SOURCE as ASSEMBLY_SOURCE,
    assemble_with, csr as assemble_csr, masses as assemble_masses, resident as assemble_resident,
    resident_csr as assemble_resident_csr, resident_with_masses as assemble_resident_with_masses,
};
pub use discovery::{evidence_line, hidden_gpus, loader_env_line, recipe, recipe_library};
pub use planner::{dg_opencl, dga_opencl};

pub use discovery::Hidden as HiddenGpu;
pub use planner::{Excitation, Method, Request, Selected, Target, select};

use crate::error::Result;
use crate::util::C64;

/// A leapfrog time stepper holding the state `U^n`, `F^(n-1/2)` on some device.
pub trait Stepper {
    /// Human-readable backend and device name.
    fn name(&self) -> String;
    /// Advances `n` steps, the first of which is step number `first` (its source amplitude is
    /// the stepper's waveform at `(first + 1/2) Δt`). After every step, appends
    /// `ex, ey, ez` of each probe to `samples`.
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()>;
    /// The exactly conserved discrete energy `W^n` of design note §9.
    fn energy(&mut self) -> Result<f64>;
    /// The state `(U^n, F^(n-1/2))` converted to f64.
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)>;
    /// Replaces the state.
    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()>;
    /// Auxiliary state beyond `(U, F)` (the dispersive poles' states and changes), for
    /// checkpoints; empty when there is none.
    fn aux_state(&self) -> Result<Vec<f64>> {
        Ok(Vec::new())
    }
    /// Replaces the auxiliary state ([`Stepper::aux_state`]).
    fn set_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        if aux.is_empty() {
            Ok(())
        } else {
            Err(crate::error::Error::config(
                "state",
                aux.len(),
                "auxiliary (dispersive) state given to a run without dispersive media",
            ))
        }
    }
    /// Per flag, whether any rank of a partitioned run passed true: the run loop's stop and
    /// checkpoint decisions are taken together (collective for a partitioned stepper; one
    /// process keeps its own flags).
    fn agree(&self, flags: &[bool]) -> Result<Vec<bool>> {
        Ok(flags.to_vec())
    }
    /// The state `(U, F)` on the rank that writes checkpoints, None on the other ranks of a
    /// partitioned run (collective there); [`Stepper::state`] for one process.
    fn gathered_state(&self) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
        self.state().map(Some)
    }
    /// Starts running discrete Fourier transforms of the state at `n` frequencies (mode
    /// shapes, [`crate::solver::modeshape`]): `n` zeroed accumulators for `U` and `n` for
    /// `F`, kept where the state is (on the device for a device stepper).
    fn dft_start(&mut self, n: usize) -> Result<()> {
        let _ = n;
        Err(no_dft(&self.name()))
    }
    /// Adds the current state times one phase factor per frequency:
    /// `X_m += U^n pu[m]`, `Y_m += F^(n-1/2) pf[m]`.
    fn dft_add(&mut self, pu: &[C64], pf: &[C64]) -> Result<()> {
        let _ = (pu, pf);
        Err(no_dft(&self.name()))
    }
    /// Accumulator `m`: `(X_m, Y_m)` in host layouts (those of [`Stepper::state`]).
    fn dft_take(&self, m: usize) -> Result<(Vec<C64>, Vec<C64>)> {
        let _ = m;
        Err(no_dft(&self.name()))
    }
}

fn no_dft(name: &str) -> crate::error::Error {
    crate::error::Error::config(
        "mode shapes",
        name,
        "this stepper keeps no running Fourier transforms (DGA on one process only)",
    )
}

/// Wraps a stepper and fails like a lost device once step `at` is reached: for testing the
/// failure path (partial output, checkpoints). Enabled in the CLI by the environment
/// variable `DGATD_FAULT_AT_STEP=N`.
pub struct FaultAt {
    pub inner: Box<dyn Stepper>,
    pub at: usize,
}

impl Stepper for FaultAt {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        if first + n > self.at {
            // the steps before the fault complete, like a device that dies mid-chunk
            let ok = self.at.saturating_sub(first);
            if ok > 0 {
                self.inner.advance(first, ok, samples)?;
            }
            return Err(crate::error::Error::OpenCl {
                what: format!("kernel at step {} (injected fault)", self.at),
                msg: "CL_DEVICE_NOT_AVAILABLE (-2): the device was lost".into(),
            });
        }
        self.inner.advance(first, n, samples)
    }
    fn energy(&mut self) -> Result<f64> {
        self.inner.energy()
    }
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        self.inner.state()
    }
    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        self.inner.set_state(u, f)
    }
    fn aux_state(&self) -> Result<Vec<f64>> {
        self.inner.aux_state()
    }
    fn set_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        self.inner.set_aux_state(aux)
    }
    fn agree(&self, flags: &[bool]) -> Result<Vec<bool>> {
        self.inner.agree(flags)
    }
    fn gathered_state(&self) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
        self.inner.gathered_state()
    }
    fn dft_start(&mut self, n: usize) -> Result<()> {
        self.inner.dft_start(n)
    }
    fn dft_add(&mut self, pu: &[C64], pf: &[C64]) -> Result<()> {
        self.inner.dft_add(pu, pf)
    }
    fn dft_take(&self, m: usize) -> Result<(Vec<C64>, Vec<C64>)> {
        self.inner.dft_take(m)
    }
}
