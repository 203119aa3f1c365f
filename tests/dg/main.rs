//! `dgatd::dg`: the nodal discontinuous Galerkin comparison path on the CPU.
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

mod dg;
