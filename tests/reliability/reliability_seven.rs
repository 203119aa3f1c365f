//! Reliability, round five of the hostile pass of issue 47
//! (`results/reliability_round5/README.md`): a stderr that cannot be written, a generated
//! ball whose shell count is huge, batch schedulers' warning signals, mesh sections that
//! were skipped without a word (`$Periodic`, `$PartitionedEntities`, a second
//! `$MeshFormat`) and keys that do nothing (`time` beside `steps`, a partitioner on one
//! process). Each case checks the exit status and what the message names.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::bin::{dgatd, path, stderr};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-rel7-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A short CPU run on the 2x2x2 box (48 tets).
const BOX: [&str; 8] = [
    "resonator",
    "--backend",
    "cpu",
    "--box",
    "2,2,2",
    "--steps",
    "40",
    "--quiet",
];

/// A write end of a pipe whose reader is gone: every write fails with EPIPE.
fn broken_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

/// Round five, cli-444/447/448 and disk-478: with stderr a pipe nobody reads (`2>&1 |
/// head` after head exits) or a file that is full, the first message was a panic ("failed
/// printing to stderr", exit 101) and the run was lost. Now messages that cannot be
/// written are dropped: the run finishes and writes its outputs, an error still exits 1.
#[test]
fn a_stderr_that_cannot_be_written_is_not_a_panic() {
    let dir = tmp("stderr");
    let out = dir.join("out");
    let o = dgatd()
        .args(BOX)
        .arg("--out")
        .arg(&out)
        .stderr(broken_pipe())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "a run with a closed stderr");
    assert!(out.join("modes.csv").is_file(), "no modes.csv");
    let o = dgatd()
        .args(["mesh-info", "/nonexistent/x.msh"])
        .stderr(broken_pipe())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "an error with a closed stderr");
    std::fs::remove_dir_all(&dir).ok();
}

/// `sh -c 'ulimit -v KiB; exec dgatd args'`: the binary under an address-space limit.
fn limited(kib: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(path())
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// Round five, cli-355: `--ball 1:a=1,b=1e9` built the radii of its 1e9 shells (8 GB)
/// to count them, before the size check: an allocation abort under a 4 GiB limit. The
/// count is now arithmetic, and the ball is refused naming the flag and its size.
#[test]
fn a_ball_of_a_billion_shells_is_refused_before_it_is_built() {
    let dir = tmp("ball");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let t = std::time::Instant::now();
    let o = limited(
        4 << 20,
        &[
            "resonator",
            "--backend",
            "cpu",
            "--ball",
            "1:a=1,b=1e9",
            "--steps",
            "10",
            "--out",
            out,
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "accepted or crashed: {err}");
    assert!(
        err.contains("invalid ball = ") && err.contains("tetrahedra"),
        "{err}"
    );
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
    std::fs::remove_dir_all(&dir).ok();
}

