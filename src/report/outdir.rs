//! The output directory of a run, made ready before the first step: created, checked to be
//! a writable directory (a test file is written, synced and removed), and locked so that a
//! second run on the same folder is refused instead of destroying the first run's
//! checkpoint and outputs.
//!
//! The lock is `DIR/.dgatd.lock`, an exclusive advisory lock (`flock`) held for the whole
//! run, whose content names the owner (pid, host, start time). The operating system drops
//! the lock when its process dies, so a lock file left by a killed run is recognised as
//! stale (the lock is free again) and taken over with a notice naming the dead owner.

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Name of the lock file inside an output directory.
pub const LOCK: &str = ".dgatd.lock";

/// The files a resonator run writes into its folder (the probe record, the report, the
/// plots); [`OutputDir::start_fresh`] moves an earlier run's into [`PREVIOUS`].
pub const RUN_OUTPUTS: [&str; 10] = [
    "probe.csv",
    "spectrum.csv",
    "modes.csv",
    "unresolved.csv",
    "run.toml",
    "summary.md",
    "modes.vtu",
    "convergence.csv",
    "spectrum.png",
    "spectrum.svg",
];

/// The folder (inside an output directory) that holds the outputs of the run before.
pub const PREVIOUS: &str = "previous";

/// The checkpoint's name (`solver::checkpoint::FILE`).
const CHECKPOINT: &str = crate::solver::checkpoint::FILE;

/// The step a checkpoint file was written at, from its header, if it is one (a FIFO or a
/// device at its name is not opened).
fn checkpoint_step(path: &Path) -> Option<usize> {
    crate::solver::checkpoint::header(path).map(|(_, step)| step)
}

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
        Self::check_path(path)?;
        std::fs::create_dir_all(path)
            .map_err(|e| bad(format!("the output directory cannot be created: {e}")))?;
        let lock_path = path.join(LOCK);
        // The lock is taken before anything else is written there: two runs started
        // together on a new folder both create it, and the one that does not get the lock
        // is refused as "in use" (before, both wrote and removed the same write-test file,
        // and the slower one failed with "No such file or directory").
        let (mut f, previous) = (|| {
            // a run that ends removes its lock file before it unlocks: a lock taken on the
            // removed file is not the folder's, so the file is opened again (a few times)
            for _ in 0..8 {
                let (f, previous) = Self::open_and_lock(&lock_path, &bad)?;
                if same_file(&f, &lock_path) {
                    return Ok((f, previous));
                }
            }
            Err(bad(format!(
                "its lock file {LOCK} keeps being replaced by another process; wait for the other runs there to finish"
            )))
        })()?;
        let probe = path.join(".dgatd-write-test");
        (|| -> std::io::Result<()> {
            let mut f = crate::util::create_fresh(&probe)?;
            f.write_all(b"dgatd")?;
            f.sync_all()
        })()
        .map_err(|e| {
            let _ = std::fs::remove_file(&probe);
            let _ = std::fs::remove_file(&lock_path);
            bad(format!("the output directory is not writable: {e}"))
        })?;
        std::fs::remove_file(&probe).map_err(|e| bad(format!("{e}")))?;
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

    /// Refuses `path` as the `--out` folder where one cannot be made there: something that
    /// is not a folder (a file) is at it, or a symbolic link whose target does not exist
    /// (`create_dir_all` said only "File exists" of both).
    pub fn check_path(path: &Path) -> Result<()> {
        let bad = |why: String| Error::config("out", path.display(), why);
        if path.exists() && !path.is_dir() {
            return Err(bad("exists and is not a directory".into()));
        }
        if !path.exists()
            && let Ok(m) = std::fs::symlink_metadata(path)
            && m.file_type().is_symlink()
        {
            let to = std::fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            return Err(bad(format!(
                "is a symbolic link to {to}, which does not exist: create the folder it names, or give another --out"
            )));
        }
        Ok(())
    }

    /// Opens (creating it if needed) and locks the lock file; returns it with the owner
    /// line it held (a dead run's, when the lock was free but the file there).
    fn open_and_lock(lock_path: &Path, bad: &dyn Fn(String) -> Error) -> Result<(File, String)> {
        // the lock file is opened, not made anew (a live run holds it); a link there would
        // have this run write its owner line into the link's target
        if let Ok(m) = std::fs::symlink_metadata(lock_path)
            && !m.file_type().is_file()
        {
            return Err(bad(format!(
                "its lock file {LOCK} is not a regular file (a symbolic link or another kind); remove it"
            )));
        }
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                    bad(format!("the output directory is not writable: {e}"))
                }
                _ => bad(format!("its lock file cannot be opened: {e}")),
            })?;
        match f.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let owner = owner_line(&mut f);
                let owner = owner.trim();
                return Err(bad(format!(
                    "another dgatd run is using it ({}); wait for it to finish or choose another --out",
                    if owner.is_empty() {
                        "it is just starting"
                    } else {
                        owner
                    }
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(bad(format!("it cannot be locked: {e}")));
            }
        }
        let previous = owner_line(&mut f);
        Ok((f, previous))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the folder ready for a new run (not `--resume`), so that it never mixes two
    /// runs' files and loses none: a folder holding a checkpoint (an interrupted run, or
    /// the final state of a long one) is refused, naming `--resume`; the outputs of an
    /// earlier finished or failed run ([`RUN_OUTPUTS`]) are moved into [`PREVIOUS`]`/`,
    /// with a notice naming them; an older `previous` (folder or file) is kept, renamed to
    /// the first free `previous.N` (`previous.1` the oldest), never deleted.
    pub fn start_fresh(&self) -> Result<Option<String>> {
        let bad = |why: String| Error::config("out", self.path.display(), why);
        let ck = self.path.join(CHECKPOINT);
        if let Ok(m) = std::fs::symlink_metadata(&ck)
            && !m.is_file()
        {
            return Err(bad(format!(
                "its {CHECKPOINT} is not a regular file (a FIFO, device, link or directory); remove it"
            )));
        }
        if let Ok(m) = std::fs::symlink_metadata(&ck) {
            // a file without the checkpoint header is no run to resume (round four V6:
            // 23 bytes of text were called an earlier run's checkpoint, and the suggested
            // --resume then failed with "bad magic")
            let Some(n) = checkpoint_step(&ck) else {
                return Err(bad(format!(
                    "its {CHECKPOINT} ({} bytes) is not a dgatd checkpoint (it lacks the checkpoint header), so there is no run to resume there; move or remove it to start afresh in this folder",
                    m.len()
                )));
            };
            let step = format!(" at step {n}");
            return Err(bad(format!(
                "it holds the checkpoint of an earlier run{step} ({CHECKPOINT}): `dgatd resonator --resume {}` continues that run (or rewrites a finished run's outputs); choose another --out to start afresh beside it, or remove {CHECKPOINT} to discard it",
                self.path.display()
            )));
        }
        let found: Vec<&str> = RUN_OUTPUTS
            .iter()
            .copied()
            .filter(|n| std::fs::symlink_metadata(self.path.join(n)).is_ok())
            .collect();
        if found.is_empty() {
            return Ok(None);
        }
        let prev = self.path.join(PREVIOUS);
        // an older previous/ (or anything else of that name: a user's file) is kept, renamed
        // to the first free previous.N; nothing there is deleted
        let kept = match std::fs::symlink_metadata(&prev) {
            Ok(_) => {
                let older = (1..)
                    .map(|n| self.path.join(format!("{PREVIOUS}.{n}")))
                    .find(|p| std::fs::symlink_metadata(p).is_err())
                    .expect("a free previous.N");
                std::fs::rename(&prev, &older).map_err(|e| {
                    bad(format!(
                        "its {PREVIOUS} cannot be kept as {}: {e}",
                        older.display()
                    ))
                })?;
                Some(older)
            }
            Err(_) => None,
        };
        std::fs::create_dir(&prev).map_err(|e| bad(format!("{PREVIOUS}/ cannot be made: {e}")))?;
        for n in &found {
            std::fs::rename(self.path.join(n), prev.join(n))
                .map_err(|e| bad(format!("{n} cannot be moved into {PREVIOUS}/: {e}")))?;
        }
        Ok(Some(format!(
            "{} held the outputs of an earlier run ({}): moved into {}{}",
            self.path.display(),
            found.join(", "),
            prev.display(),
            match kept {
                Some(o) => format!(" (the {PREVIOUS} there before was kept as {})", o.display()),
                None => String::new(),
            }
        )))
    }

    /// The lock file (`.dgatd.lock` in the folder).
    pub fn lock_path(&self) -> PathBuf {
        self.path.join(LOCK)
    }
}

/// The first line of a lock file, read from a bounded prefix (a lock file of any size, a
/// 3 GiB one left in the way, is not read whole), lossily as UTF-8.
fn owner_line(f: &mut File) -> String {
    let mut head = Vec::new();
    let _ = Read::by_ref(f).take(OWNER_MAX).read_to_end(&mut head);
    let text = String::from_utf8_lossy(&head);
    text.lines().next().unwrap_or("").to_string()
}

/// The most of a lock file read for its owner line.
const OWNER_MAX: u64 = 4096;

/// Whether the open file `f` is still the file at `path` (same device and inode).
#[cfg(unix)]
fn same_file(f: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, path: &Path) -> bool {
    path.exists()
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

    /// outdir-553, fault-519/520: a run used to delete `previous` whatever it held (the
    /// first run's outputs, a user's file, a file of that name); the older one is kept now.
    #[test]
    fn older_previous_folders_and_files_are_kept() {
        let d = std::env::temp_dir().join(format!("dgatd-outdir-prev-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(d.join(PREVIOUS)).unwrap();
        std::fs::write(d.join(PREVIOUS).join("my_notes.txt"), "mine").unwrap();
        std::fs::write(d.join("modes.csv"), "run 2").unwrap();
        let (o, _) = OutputDir::prepare(&d).unwrap();
        let n = o.start_fresh().unwrap().unwrap();
        assert!(n.contains("previous.1"), "{n}");
        assert_eq!(
            std::fs::read_to_string(d.join("previous.1/my_notes.txt")).unwrap(),
            "mine"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("previous/modes.csv")).unwrap(),
            "run 2"
        );
        // a third run, and a regular file named previous.2 in the way
        std::fs::write(d.join("previous.2"), "a file").unwrap();
        std::fs::write(d.join("modes.csv"), "run 3").unwrap();
        o.start_fresh().unwrap().unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("previous.2")).unwrap(),
            "a file"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("previous.3/modes.csv")).unwrap(),
            "run 2"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("previous/modes.csv")).unwrap(),
            "run 3"
        );
        // a regular file named previous
        drop(o);
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(PREVIOUS), "a file").unwrap();
        std::fs::write(d.join("probe.csv"), "x").unwrap();
        let (o, _) = OutputDir::prepare(&d).unwrap();
        o.start_fresh().unwrap().unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("previous.1")).unwrap(),
            "a file"
        );
        assert!(d.join("previous/probe.csv").exists());
        drop(o);
        std::fs::remove_dir_all(&d).ok();
    }

    /// fault-534: a huge stale lock file was read whole (a 3 GiB one aborted the run).
    #[test]
    fn a_huge_stale_lock_is_read_only_in_part() {
        let d = std::env::temp_dir().join(format!("dgatd-outdir-biglock-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        let f = File::create(d.join(LOCK)).unwrap();
        use std::io::Write as _;
        (&f).write_all(b"pid 1 on host x, since unix time 1\n")
            .unwrap();
        f.set_len(1 << 36).unwrap(); // sparse: 64 GiB, beyond memory
        drop(f);
        let (_o, n) = OutputDir::prepare(&d).unwrap();
        let n = n.unwrap();
        assert!(n.contains("pid 1 on host x") && n.len() < 1000, "{n}");
        drop(_o);
        std::fs::remove_dir_all(&d).ok();
    }
}
