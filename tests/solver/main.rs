//! `dgatd::solver`: resonator runs end to end (the seed paper's resonances, convergence),
//! configuration files, defaults that fit the mesh, `--converge`, `refine_region`, symmetry
//! planes, wall-loss Q and the dispersive correction of `f_corrected_hz`.
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

#[path = "../common/mod.rs"]
mod common;

mod config;
mod converge;
mod defaults;
mod dispersive_correction;
mod refine_region;
mod resonator;
mod symmetry;
mod wall_q;
