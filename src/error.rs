//! Typed errors of the library. Every message names the file, line, element or value at fault.

use std::path::PathBuf;

/// Result alias of the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything the library can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A mesh file is malformed; `location` is "line N" (ASCII) or "byte N" (binary).
    #[error("{path}: {location}: {msg}")]
    MeshParse {
        path: String,
        location: String,
        msg: String,
    },
    /// The mesh parsed but is unusable (no tets, inverted or degenerate elements, ...).
    #[error("{path}: {msg}")]
    MeshInvalid { path: String, msg: String },
    /// A local mass matrix is not symmetric positive definite.
    #[error("{what} {index} is not symmetric positive definite ({detail})")]
    NotSpd {
        what: &'static str,
        index: usize,
        detail: String,
    },
    /// A user-supplied parameter is out of range.
    #[error("invalid {name} = {value}: {why}")]
    Config {
        name: String,
        value: String,
        why: String,
    },
    /// A material or boundary names a physical group the mesh does not have.
    #[error("{what} group {key:?}: no such group in {mesh} (known: {known})")]
    UnknownGroup {
        what: &'static str,
        key: String,
        mesh: String,
        known: String,
    },
    /// A configuration file is malformed: an unknown key, a wrong type, a bad value.
    #[error("{path}: line {line}: key `{key}`: {msg}")]
    ConfigFile {
        path: String,
        line: usize,
        key: String,
        msg: String,
    },
    /// The simulation became unstable.
    #[error("{0}")]
    Unstable(String),
    /// No usable OpenCL runtime or device.
    #[error("OpenCL: {0}")]
    NoOpenCl(String),
    /// An OpenCL call failed; `what` says which operation (with the build log for builds).
    #[error("OpenCL {what} failed: {msg}")]
    OpenCl { what: String, msg: String },
    /// The problem does not fit the device.
    #[error("{0}")]
    DeviceMemory(String),
    /// Writing a CSV file failed.
    #[error("{path}: {msg}")]
    Output { path: PathBuf, msg: String },
    /// A checkpoint file is unreadable, corrupt or belongs to another run.
    #[error("checkpoint {}: {why}", path.display())]
    Checkpoint { path: PathBuf, why: String },
    /// The user interrupted the run (Ctrl-C / SIGINT).
    #[error("interrupted at step {step} of {steps}")]
    Interrupted { step: usize, steps: usize },
    /// Communication between ranks failed (domain decomposition, `crate::partition`); `what`
    /// names the operation and the ranks involved.
    #[error("rank communication ({what}): {msg}")]
    Comm { what: String, msg: String },
    /// Rank 0 failed while `what` and told the other ranks; rank 0 prints its own error.
    #[error("rank 0 failed while {what} (its error is printed by rank 0)")]
    RankZeroFailed { what: String },
    /// The ranks of a multi-rank run cannot all run on the devices asked for; the message
    /// names what each such rank sees and the fix.
    #[error("{0}")]
    RankDevices(String),
    /// A run stopped before its end (`cause`); `saved` says what was written and how to go on.
    #[error("{cause}\n{saved}")]
    Stopped { cause: Box<Error>, saved: String },
}

impl Error {
    /// Shorthand for a [`Error::Config`].
    pub fn config(name: &str, value: impl std::fmt::Display, why: impl Into<String>) -> Self {
        Error::Config {
            name: name.to_string(),
            value: value.to_string(),
            why: why.into(),
        }
    }
    /// Whether the run was interrupted by the user (exit status 130 in the CLI).
    pub fn is_interrupted(&self) -> bool {
        match self {
            Error::Interrupted { .. } => true,
            Error::Stopped { cause, .. } => cause.is_interrupted(),
            _ => false,
        }
    }
    /// Whether this is another rank's notice that rank 0 failed ([`Error::RankZeroFailed`]).
    pub fn is_rank_zero_failure(&self) -> bool {
        matches!(self, Error::RankZeroFailed { .. })
    }
    /// Shorthand for an [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
