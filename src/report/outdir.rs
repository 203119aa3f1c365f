//! The output directory of a run, made ready before the first step: created, checked to be
//! a writable directory (a test file is written, synced and removed), and locked so that a
//! second run on the same folder is refused instead of destroying the first run's
//! checkpoint and outputs.
//!
//! The lock is `DIR/.dgatd.lock`, an exclusive advisory lock (`flock`) held for the whole
//! run, whose content names the owner (pid, host, start time). The operating system drops
//! the lock when its process dies, so a lock file left by a killed run is recognised as
//! stale (the lock is free again) and taken over with a notice naming the dead owner.

use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Name of the lock file inside an output directory.
pub const LOCK: &str = ".dgatd.lock";

/// A prepared, locked output directory; the lock is released when this is dropped.
pub struct OutputDir {
    path: PathBuf,
    lock: Option<File>,
}

fn owner() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "pid {} on host {host}, since unix time {secs}",
        std::process::id()
    )
}

impl OutputDir {
    /// Creates (if needed), tests and locks `path`. Returns the directory and, when a stale
    /// lock of a dead run was replaced, a notice saying so.
    pub fn prepare(path: &Path) -> Result<(OutputDir, Option<String>)> {
        let bad = |why: String| Error::config("out", path.display(), why);
        if path.exists() && !path.is_dir() {
            return Err(bad("exists and is not a directory".into()));
        }
        std::fs::create_dir_all(path)
            .map_err(|e| bad(format!("the output directory cannot be created: {e}")))?;
        let probe = path.join(".dgatd-write-test");
        (|| -> std::io::Result<()> {
            let mut f = File::create(&probe)?;
            f.write_all(b"dgatd")?;
            f.sync_all()
        })()
        .map_err(|e| {
            let _ = std::fs::remove_file(&probe);
            bad(format!("the output directory is not writable: {e}"))
        })?;
        std::fs::remove_file(&probe).map_err(|e| bad(format!("{e}")))?;
        let lock_path = path.join(LOCK);
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| bad(format!("its lock file cannot be opened: {e}")))?;
        let mut previous = String::new();
        let _ = f.read_to_string(&mut previous);
        match f.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(bad(format!(
                    "another dgatd run is using it ({}); wait for it to finish or choose another --out",
                    previous.trim()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(bad(format!("it cannot be locked: {e}")));
            }
        }
        let notice = (!previous.trim().is_empty()).then(|| {
            format!(
                "{} held a stale lock of a run that is no longer running ({}); taken over",
                lock_path.display(),
                previous.trim()
            )
        });
        f.set_len(0)
            .and_then(|_| f.rewind())
            .and_then(|_| writeln!(f, "{}", owner()))
            .and_then(|_| f.sync_all())
            .map_err(|e| bad(format!("its lock file cannot be written: {e}")))?;
        Ok((
            OutputDir {
                path: path.to_path_buf(),
                lock: Some(f),
            },
            notice,
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if let Some(f) = self.lock.take() {
            let _ = std::fs::remove_file(self.path.join(LOCK));
            let _ = f.unlock();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_is_refused_and_a_stale_lock_is_taken_over() {
        let d = std::env::temp_dir().join(format!("dgatd-outdir-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        let (a, n) = OutputDir::prepare(&d).unwrap();
        assert!(n.is_none());
        let e = OutputDir::prepare(&d).err().unwrap().to_string();
        assert!(
            e.contains("another dgatd run") && e.contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        drop(a);
        assert!(!d.join(LOCK).exists());
        // a lock file whose owner died: the file is there, the lock is free
        std::fs::write(d.join(LOCK), "pid 999999 on host gone, since unix time 1\n").unwrap();
        let (_b, n) = OutputDir::prepare(&d).unwrap();
        assert!(n.unwrap().contains("pid 999999"));
        // a file in the way
        let f = d.join("file");
        std::fs::write(&f, "x").unwrap();
        let e = OutputDir::prepare(&f).err().unwrap().to_string();
        assert!(e.contains("not a directory"), "{e}");
        std::fs::remove_dir_all(&d).ok();
    }
}
