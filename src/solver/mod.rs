//! The resonator job as one straight path: configuration ([`config`]) → validated plan
//! ([`plan`]) → build (mesh, operators, stepper: [`build`]) → run ([`run`]) → analyse
//! ([`analyse`]) → results ([`resonator`]), with checkpoints ([`checkpoint`]) and mode
//! shapes ([`modeshape`]) and their wall-loss Q ([`wallq`]); refinement ladders with
//! extrapolated frequencies ([`converge`]); the earliest echo of an open boundary at the
//! probes ([`echo`]); where the set-up time of a partitioned run goes ([`setup_times`]).
//!
//! Time is in metres of light travel inside the library (c = 1); `dt_s = dt / C0`.

pub(crate) mod analyse;
pub(crate) mod build;
pub(crate) mod checkpoint;
pub(crate) mod config;
pub(crate) mod converge;
pub(crate) mod defaults;
pub(crate) mod devices;
pub(crate) mod echo;
pub(crate) mod limits;
pub(crate) mod modeshape;
#[cfg(feature = "partition")]
pub(crate) mod partitioned;
pub(crate) mod plan;
#[cfg(feature = "partition")]
pub(crate) mod rank_devices;
pub(crate) mod resonator;
pub(crate) mod run;
pub(crate) mod setup_times;
pub(crate) mod spec;
pub(crate) mod symmetry;
pub(crate) mod timestep;
pub(crate) mod wallq;

pub use analyse::correct as correct_frequency;
pub use build::refinement_warnings;
pub use checkpoint::{Checkpoint, FILE as CHECKPOINT_FILE};
pub use config::{
    Assembly, BackendKind, BallSpec, BoxSpec, CavitySpec, Config, Extract, Method, Origin,
    Partitioner,
};
pub use converge::{Ladder, Level, Point, Track, Tracking, ladder, level_of, tracks};
pub use defaults::{BAND_PEAKS, RECORD_PERIODS, Scales, band as default_band};
pub use devices::choose as choose_device;
pub use limits::{check_mesh_memory, check_mesh_scale};
pub use modeshape::mode_shapes;
pub use partitioned::{PartitionedRun, run_partitioned};
pub use plan::{BackendSpec, MAX_DG_ORDER, MAX_GPUS, Plan, parse_point};
pub use resonator::{Phase, ResonatorResult, RunOptions, run_with};

pub use analyse::{Analysis, Correction, Matched};
pub use devices::Choice as DeviceChoice;
pub use echo::Echo;
pub use modeshape::ModeShape;
pub use plan::{Length, MeshSpec};
pub use run::{Record, RunControl, RunOutcome, RunSoFar, run, run_controlled};
pub use setup_times::SetupTimes;
pub use symmetry::SymmetrySpec;
pub use timestep::{RHO_MARGIN, spectral_radius, time_step};
