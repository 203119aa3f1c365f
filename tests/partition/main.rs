//! `dgatd::partition` (feature `partition`, on by default): METIS and RCB partitions, halo
//! lists, local operators, the in-process multi-rank CPU and OpenCL steppers, and
//! `dgatd resonator --gpus N`.
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

#[cfg(feature = "partition")]
#[path = "../common/mod.rs"]
mod common;

mod gpus_cli;
mod open_lossy;
mod open_lossy_cl;
mod open_mesh;
mod partition;
mod partition_cl;
mod partitioners;
mod pml;
