//! `dgatd::spectrum`: harmonic inversion on real runs, the extraction defects of issue 12,
//! the extraction against independent oracles (dense eigenvalues of K, the `harminv`
//! program), and multiplets of open resonators on Gmsh meshes.
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

#[path = "../common/mod.rs"]
mod common;
mod oracle;

mod extraction;
mod extraction_defects;
mod extraction_oracle;
mod multiplets;
