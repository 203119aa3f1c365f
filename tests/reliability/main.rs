//! Reliability (issues 13 and 47) across the library and the command line: checkpoints and
//! resume, lost devices, signals, full disks, hostile inputs and configuration values,
//! coverage of materials and boundaries.
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

#[path = "../common/mod.rs"]
mod common;

mod bin;
mod hostile_config;
mod reliability;
mod reliability_47;
mod reliability_cli;
mod reliability_five;
mod reliability_four;
mod reliability_seven;
mod reliability_six;
mod reliability_three;
mod reliability_three_inputs;
