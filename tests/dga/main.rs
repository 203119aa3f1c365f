//! `dgatd::dga` and the CPU reference backend (`backend::cpu`): the exact identities of the
//! discrete operators, the leapfrog, the lean CPU kernels, conduction and magnetic losses,
//! open boundaries (first-order absorbing condition, graded layers) and dispersive media.
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

#[path = "../common/mod.rs"]
mod common;

mod abc;
mod absorbing_layer;
mod cpu_lean;
mod dispersion;
mod identities;
mod losses;
mod magnetic_loss;
mod open_boundary;
mod pml;
mod pml_device;
mod timestepping;
