//! `dgatd::mesh`: the Gmsh readers' messages on broken files (library and CLI), locality
//! orderings, and curved walls under refinement (also on a coarse Gmsh sphere, where the
//! projection must not fold the mesh). (The readers' fuzzing is its own binary,
//! `tests/fuzz_mesh`: its counting allocator is process-wide.)
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

#[path = "../common/mod.rs"]
mod common;

mod geometry;
mod mesh_errors;
mod mesh_order;
mod refine_fold;
