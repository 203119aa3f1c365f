//! The application (`src/app`): `dgatd bench`'s CSV schema and `dgatd report`.
//!
//! Each module is one of the former single-file test binaries (`tests/README.md` maps them).

mod bench_schema;
