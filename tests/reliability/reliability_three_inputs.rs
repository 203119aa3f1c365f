//! Reliability, round three (issue 47), continued: inputs that are not what they claim
//! (devices, FIFOs, directories, large files of garbage) are refused at once naming the
//! path; sizes the host cannot hold are refused before allocating; what each material and
//! boundary covers is reported. Each case runs the built binary.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-rel3i-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    d
}

fn dgatd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dgatd"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("DGATD_FAULT_AT_STEP")
        .env_remove("DGATD_FAULT_WRITE");
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `c` to its end, failing the test (and killing it) past `secs` seconds: a liveness
/// limit for inputs that used to block or read for ever, not a timing.
fn output_within(c: &mut Command, secs: u64) -> Output {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(secs) {
            child.kill().ok();
            panic!("{c:?} did not end within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn refused(o: &Output, want: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for w in want {
        assert!(err.contains(w), "{w:?} not in: {err}");
    }
}

/// A directory as `--mesh` or `--config`, a sparse 8 GiB file of zeros as `--mesh` (read
/// whole before; now refused from its head), a large non-checkpoint as `--resume`, and a
/// FIFO at `OUT/checkpoint.bin` (opened by a new run's folder check and by `--resume`,
/// where it blocked) are all refused at once, naming the path.
#[cfg(unix)]
#[test]
fn non_regular_and_garbage_inputs_are_refused_at_once() {
    let dir = tmp("garbage");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("o");
    let big = dir.join("big.msh");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let fake = dir.join("fake");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::File::create(fake.join("checkpoint.bin"))
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (
            vec!["resonator".into(), "--mesh".into(), s(&dir)],
            vec!["not a regular file"],
        ),
        (
            vec!["resonator".into(), "--config".into(), s(&dir)],
            vec!["not a regular file"],
        ),
        (
            vec!["mesh-info".into(), s(&dir)],
            vec!["not a regular file"],
        ),
        (
            vec!["resonator".into(), "--mesh".into(), s(&big)],
            vec!["big.msh", "line 1", "not a Gmsh mesh file"],
        ),
        (
            vec!["mesh-info".into(), s(&big)],
            vec!["big.msh", "not a Gmsh mesh file"],
        ),
        (
            vec!["resonator".into(), "--resume".into(), s(&fake)],
            vec!["checkpoint.bin", "bad magic"],
        ),
    ];
    for (args, want) in cases {
        let mut c = dgatd();
        c.args(&args);
        if args[0] == "resonator" {
            c.arg("--out").arg(&out);
        }
        refused(&output_within(&mut c, 30), &want);
    }
    // a FIFO at the checkpoint's name
    let fifo_run = dir.join("fifo-run");
    std::fs::create_dir_all(&fifo_run).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(fifo_run.join("checkpoint.bin"))
            .status()
            .unwrap()
            .success()
    );
    let o = output_within(
        dgatd()
            .args(["resonator", "--mesh", "bundled:coarse", "--backend", "cpu"])
            .args(["--quiet", "--steps", "200", "--out"])
            .arg(&fifo_run),
        60,
    );
    refused(&o, &["checkpoint.bin", "not a regular file"]);
    let o = output_within(dgatd().args(["resonator", "--resume"]).arg(&fifo_run), 30);
    refused(&o, &["checkpoint.bin", "not a regular file"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `bench --sizes 9.9e11` is refused before anything is allocated, naming the flag, the
/// memory the box needs and what is available (before: an allocation abort).
#[test]
fn bench_refuses_a_size_the_host_cannot_hold() {
    let dir = tmp("bench-size");
    let o = output_within(
        dgatd()
            .args([
                "bench",
                "--devices",
                "none",
                "--sizes",
                "1e3,9.9e11",
                "--out",
            ])
            .arg(&dir),
        30,
    );
    refused(
        &o,
        &[
            "invalid sizes = 9.9e11",
            "host memory",
            "available",
            "32-bit indices",
        ],
    );
    assert!(!dir.join("bench.csv.partial").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// What each key covers is said: `mesh-info` lists every group with its tets or faces, and
/// a run's log names each material's tets and each boundary's wall faces; a key on a
/// group of the wrong kind of elements is refused naming it.
#[test]
fn mesh_info_and_the_log_count_what_each_group_covers() {
    let o = output_within(dgatd().args(["mesh-info", "bundled:coarse"]), 60);
    assert!(o.status.success(), "{}", stderr(&o));
    let info = String::from_utf8_lossy(&o.stdout).into_owned();
    let groups = info
        .lines()
        .find(|l| l.starts_with("groups"))
        .unwrap_or_default()
        .to_string();
    assert!(
        groups.contains("tets)") && groups.contains("wall faces"),
        "{info}"
    );
    let dir = tmp("coverage");
    let o = output_within(
        dgatd()
            .args([
                "resonator",
                "--box",
                "4,4,4",
                "--backend",
                "cpu",
                "--steps",
                "200",
            ])
            .args(["--material", "vacuum=2", "--boundary", "xmin=pmc", "--out"])
            .arg(&dir),
        120,
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("materials: vacuum 384 tets")
            && err.contains("boundaries: xmin 32 wall faces"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
