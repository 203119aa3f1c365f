//! The OpenCL backend (`backend::opencl`, `ocl`, `backend::device_assembly`,
//! `backend::discovery`, `backend::opencl::dg`): kernels and whole runs against the CPU reference,
//! mixed storage, device assembly, the kernel smoke run on the default device and under
//! Oclgrind, and the hidden-GPU warning. Without a device the tests print SKIPPED (a
//! failure with DGATD_REQUIRE_OPENCL=1).
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

#[path = "../common/mod.rs"]
mod common;

mod concurrent;
mod device_assembly;
mod hidden_gpu;
mod mixed;
mod oclgrind;
mod opencl;
mod planner;
