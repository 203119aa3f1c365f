//! `dgatd`: the fractioned Discrete Geometric Approach in the time domain (DGATD) for
//! Maxwell's equations on unstructured tetrahedral meshes.
//!
//! The method follows Cicuttin, Codecasa, Kapidani, Specogna, Trevisan, "GPU accelerated
//! time-domain discrete geometric approach method for Maxwell's equations on tetrahedral
//! grids" (IEEE Trans. Magn.); the scheme is written out in `shared/design/dgatd.md`.
//!
//! Units: lengths in metres; internally time is measured in metres of light travel
//! (c = 1, so `eps = eps_r`, `mu = mu_r`); every time and frequency a user sees is in
//! seconds and hertz, converted with [`C0`].
//!
//! Module map (each follows the maths):
//! - [`mesh`]: reading Gmsh files, validation, topology, generators (box, 1:8 refinement);
//! - [`complex`]: the barycentric dual geometry (hexahedra, dual edges and faces);
//! - [`dga`]: fractioned degrees of freedom, local mass matrices, incidence, operators;
//! - [`backend`]: the CPU reference time stepper;
//! - [`solver`]: leapfrog driver, time step, sources, probes, energy;
//! - [`spectrum`]: FFT, peak detection, leapfrog correction, analytic cavity modes;
//! - [`cli`]: the command-line front end used by `main.rs`.

// Index loops mirror the formulas (i, j, k over local entities) and are kept on purpose;
// `!(x > y)` comparisons are deliberate: they also reject NaN.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

pub mod backend;
pub mod bench;
pub mod cli;
pub mod compare;
pub mod complex;
pub mod dg;
pub mod dga;
pub mod error;
pub mod mesh;
pub mod real;
pub mod report;
pub mod solver;
pub mod spectrum;
pub mod util;

pub use error::{Error, Result};
pub use real::Real;

/// Speed of light in vacuum, m/s (exact, SI).
pub const C0: f64 = 299_792_458.0;
