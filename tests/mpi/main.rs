//! `dgatd::partition::mpi` (feature `mpi`): `examples/mpi_run` and `dgatd resonator` under
//! `mpirun` against the one-process run. Build the example first:
//! `cargo build --release --features mpi --example mpi_run && cargo test --release
//! --features mpi --test mpi`. Without the feature this binary holds no test.
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

#[cfg(feature = "mpi")]
#[path = "../common/mod.rs"]
mod common;

mod mpi;
mod mpi_cli;
#[cfg(feature = "mpi")]
#[path = "../partition/open_mesh.rs"]
mod open_mesh;
