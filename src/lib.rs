//! `dgatd`: the fractioned Discrete Geometric Approach in the time domain (DGATD) for
//! Maxwell's equations on unstructured tetrahedral meshes.
//!
//! The method follows Cicuttin, Codecasa, Kapidani, Specogna, Trevisan, "GPU accelerated
//! time-domain discrete geometric approach method for Maxwell's equations on tetrahedral
//! grids" (IEEE Trans. Magn.); the scheme is written out in the design note
//! `docs/design.md` in the repository (cited below by section, e.g. "design note §8"), and every
//! module states the equations it implements.
//!
//! Units: lengths in metres; internally time is measured in metres of light travel
//! (c = 1, so `eps = eps_r`, `mu = mu_r`); every time and frequency a user sees is in
//! seconds and hertz, converted with [`C0`].
//!
//! Module map (each follows the maths; lower modules never import higher ones):
//! - [`mesh`]: reading Gmsh files, validation, topology, shapes, generators (box, 1:8
//!   refinement);
//! - [`complex`]: the barycentric dual geometry (hexahedra, dual edges and faces);
//! - [`problem`]: materials, boundaries, source, probes and waveform as data, resolved onto
//!   a mesh;
//! - [`dga`]: fractioned degrees of freedom, local mass matrices, incidence, operators,
//!   sources and probes; [`dg`]: the nodal DG comparison path;
//! - [`cost`]: one model of bytes, flops and memory;
//! - [`backend`]: the steppers as a method × device matrix ([`backend::cpu`], the reference;
//!   [`backend::opencl`], with the OpenCL runtime layer's API re-exported) and the planner
//!   [`select`];
//! - [`spectrum`]: FFT, harmonic inversion, leapfrog correction, analytic cavity modes;
//! - `partition` (feature `partition`; MPI transport with feature `mpi`): METIS domain
//!   decomposition, per-rank operators and halo exchange;
//! - [`solver`]: configuration → plan → build → run → analyse;
//! - [`report`]: the output files of a run.
//!
//! The command line, `bench` and `compare` are the application (`src/app/`, in the binary).
//!
//! The surface most users need is re-exported here: [`Config`], [`Plan`], [`run`],
//! [`ResonatorResult`], [`Mesh`], [`Problem`], [`Error`], [`Stepper`], [`select`].
//!
//! Each public module's submodules are private: what they offer is re-exported by the module
//! itself (`dgatd::mesh::read_gmsh`, `dgatd::solver::Config`, `dgatd::spectrum::extract`), so
//! files can move without breaking a caller. The helpers the application and the tests share
//! sit in the hidden module `internal`, outside the API.

// Index loops mirror the formulas (i, j, k over local entities) and are kept on purpose;
// `!(x > y)` comparisons are deliberate: they also reject NaN.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

pub mod backend;
pub mod complex;
pub mod cost;
pub mod dg;
pub mod dga;
mod error;
pub mod mesh;
mod ocl;
#[cfg(feature = "partition")]
pub mod partition;
pub mod problem;
mod real;
pub mod report;
pub mod solver;
pub mod spectrum;
mod util;

pub use backend::{Stepper, select};
pub use error::{Error, Result};
pub use mesh::Mesh;
pub use problem::Problem;
pub use real::{Precision, Real};
pub use solver::resonator::run;
pub use solver::{Config, Plan, ResonatorResult};
pub use util::{C0, C64, V3};

#[doc(hidden)]
pub mod internal;
