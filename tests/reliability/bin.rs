//! The `dgatd` binary the command-line tests run, shared by the reliability modules.

use std::path::PathBuf;
use std::process::{Command, Output};

/// The built `dgatd`, or the one `DGATD_TEST_BIN` names (to show a case failing on an
/// older build).
pub fn path() -> PathBuf {
    std::env::var_os("DGATD_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_dgatd")))
}

/// [`path`] as a command run from the repository, with no injected faults.
pub fn dgatd() -> Command {
    let mut c = Command::new(path());
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("DGATD_FAULT_AT_STEP")
        .env_remove("DGATD_FAULT_WRITE");
    c
}

/// A command's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// An empty scratch folder of its own for a test: `dgatd-<tag>-<pid>-<name>` under the
/// system's temporary folder, emptied and made afresh.
pub fn scratch(tag: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-{tag}-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}
