//! The resonator job as one straight path: configuration ([`config`]) → validated plan
//! ([`plan`]) → build (mesh, operators, stepper: [`build`]) → run ([`run`]) → analyse
//! ([`analyse`]) → results ([`resonator`]), with checkpoints ([`checkpoint`]) and mode
//! shapes ([`modeshape`]) and their wall-loss Q ([`wallq`]); refinement ladders with
//! extrapolated frequencies ([`converge`]); the earliest echo of an open boundary at the
//! probes ([`echo`]); where the set-up time of a partitioned run goes ([`setup_times`]).
//!
//! Time is in metres of light travel inside the library (c = 1); `dt_s = dt / C0`.

pub mod analyse;
pub(crate) mod build;
pub mod checkpoint;
pub mod config;
pub mod converge;
pub mod defaults;
pub mod devices;
pub mod echo;
pub mod limits;
pub mod modeshape;
#[cfg(feature = "partition")]
pub mod partitioned;
pub mod plan;
#[cfg(feature = "partition")]
pub mod rank_devices;
pub mod resonator;
pub mod run;
pub mod setup_times;
pub mod spec;
pub mod timestep;
pub mod wallq;

pub use run::{Record, RunControl, RunOutcome, RunSoFar, run, run_controlled};
pub use timestep::{RHO_MARGIN, spectral_radius, time_step};
