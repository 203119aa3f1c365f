//! Helpers that the application, the tests, the benches and the studies share: seeded
//! random numbers, file writes that are atomic and follow no link, and small vector
//! algebra. Not part of the API: they may change without notice.

pub use crate::util::{C64, Rng, V3, create_fresh, dot, norm, regular_file, sub, write_atomic};
