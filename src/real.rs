//! The floating-point type the operators and time stepping are generic over (f32 or f64).
//! Geometry and mass matrices are always computed in f64 and converted once.

use std::fmt::{Debug, Display};
use std::iter::Sum;

/// f32 or f64.
pub trait Real:
    num_traits::Float + num_traits::NumAssign + Sum + Default + Debug + Display + Send + Sync + 'static
{
    /// Name used in CLI values, CSV columns and OpenCL `-D REAL=` options.
    const NAME: &'static str;
    /// Unit round-off of the type.
    const EPS: f64;
    fn of(x: f64) -> Self;
    fn f64(self) -> f64;
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    const EPS: f64 = f64::EPSILON;
    #[inline(always)]
    fn of(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self
    }
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    const EPS: f64 = f32::EPSILON as f64;
    #[inline(always)]
    fn of(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self as f64
    }
}

/// Floating-point precision of the time loop (operators and state). Geometry and mass
/// matrices are always computed in f64.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F32,
    #[default]
    F64,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
    /// Bytes per real.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}
