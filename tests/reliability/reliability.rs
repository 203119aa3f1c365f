//! Long-run reliability: checkpoints and bit-for-bit resume, a device lost mid-run, Ctrl-C,
//! blow-up detection with partial output, corrupt or foreign checkpoints, and bit-identical
//! CSVs from repeated CPU runs (the library and the `dgatd` binary).
#![allow(clippy::needless_range_loop)]

use crate::common::*;
use dgatd::Error;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::dga::{DualForm, Operators};
use dgatd::solver::Checkpoint;
use dgatd::solver::Plan;
use dgatd::solver::{self, RunControl, RunOptions};
use dgatd::solver::{BackendKind, Config};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-rel-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    d
}

fn cfg(steps: usize) -> Config {
    Config {
        mesh: Some("bundled:coarse".into()),
        steps: Some(steps as u64),
        backend: BackendKind::Cpu,
        ..Config::default()
    }
}

/// The plan of `c` with checkpoints every `every` steps.
fn plan(c: &Config, every: u64) -> Plan {
    Plan::new(
        &Config {
            checkpoint_steps: every,
            ..c.clone()
        },
        None,
    )
    .unwrap()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A device lost at step 1700 with checkpoints every 500 steps: the error names the fault,
/// the 1700 recorded steps are on disk, and resuming from the step-1500 checkpoint gives
/// the uninterrupted run bit for bit (probe samples, energy checks, resonances).
#[test]
fn device_failure_keeps_the_data_and_resume_is_bit_identical() {
    let steps = 3000;
    let full = dgatd::run(&cfg(steps), &mut |_, _| {}).unwrap();
    let dir = tmp("fault");
    let mut opts = RunOptions {
        out: Some(dir.clone()),
        fault_at_step: Some(1700),
        ..Default::default()
    };
    let err = match solver::run_with(&plan(&cfg(steps), 500), &mut opts, &mut |_, _| {}) {
        Err(e) => e,
        Ok(_) => panic!("the injected fault did not stop the run"),
    };
    let msg = err.to_string();
    eprintln!("{msg}");
    assert!(matches!(err, Error::Stopped { .. }), "{err:?}");
    for want in [
        "step 1700",
        "device was lost",
        "1700 steps recorded",
        "probe.csv",
        "checkpoint at step 1500",
        "--resume",
    ] {
        assert!(msg.contains(want), "message lacks {want:?}: {msg}");
    }
    // the partial probe data: a header and 1700 rows, equal to the full run's first rows
    let probe = std::fs::read_to_string(dir.join("probe.csv")).unwrap();
    assert_eq!(probe.lines().count(), 1 + 1700);
    let ck = Checkpoint::read(&dir).unwrap();
    assert_eq!(ck.done, 1500);
    assert_eq!(
        bits(&ck.samples),
        bits(&full.record.samples[..ck.samples.len()])
    );
    // resume
    let mut opts = RunOptions {
        out: Some(dir.clone()),
        resume: Some(ck),
        ..Default::default()
    };
    let resumed = solver::run_with(&plan(&cfg(steps), 0), &mut opts, &mut |_, _| {}).unwrap();
    assert_eq!(resumed.record.steps, steps);
    assert_eq!(bits(&resumed.record.samples), bits(&full.record.samples));
    assert_eq!(resumed.record.energy, full.record.energy);
    let f = |r: &solver::ResonatorResult| r.peaks().iter().map(|p| p.f_hz).collect::<Vec<_>>();
    assert!(!full.peaks().is_empty());
    assert_eq!(bits(&f(&resumed)), bits(&f(&full)));
    std::fs::remove_dir_all(&dir).ok();
}

/// A checkpoint is refused by a run with another configuration, and a corrupt one is
/// refused with the checksum message.
#[test]
fn foreign_or_corrupt_checkpoints_are_refused() {
    let dir = tmp("foreign");
    let mut opts = RunOptions {
        out: Some(dir.clone()),
        fault_at_step: Some(150),
        ..Default::default()
    };
    assert!(solver::run_with(&plan(&cfg(400), 100), &mut opts, &mut |_, _| {}).is_err());
    let ck = Checkpoint::read(&dir).unwrap();
    assert_eq!(ck.done, 100);
    let other = Config {
        cfl: 0.9,
        ..cfg(400)
    };
    let mut opts = RunOptions {
        out: Some(dir.clone()),
        resume: Some(ck),
        ..Default::default()
    };
    let e = solver::run_with(&plan(&other, 0), &mut opts, &mut |_, _| {})
        .err()
        .expect("a foreign checkpoint must be refused")
        .to_string();
    assert!(e.contains("different run"), "{e}");
    let p = dir.join("checkpoint.bin");
    let mut b = std::fs::read(&p).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 1;
    std::fs::write(&p, &b).unwrap();
    let e = Checkpoint::read(&dir).unwrap_err().to_string();
    assert!(
        e.contains("checksum mismatch") && e.contains("checkpoint.bin"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Above the stability limit the guard stops the run with the step and a CFL hint, and the
/// samples before the stop are kept.
#[test]
fn blow_up_stops_with_the_step_and_keeps_the_samples() {
    let (m, t, d, _) = setup(cylinder("cylinder_coarse.msh"), None);
    let d = Arc::new(d);
    let (dt, _) = solver::time_step(&d, 1.0).unwrap();
    let dt = 1.3 * dt; // beyond the limit
    let w = dgatd::problem::Waveform::gaussian_derivative(150e6);
    let src = dgatd::dga::Source::new(&m, &t, &d, [0.6, 0.3, 0.24], [0.0, 0.0, 1.0]).unwrap();
    let probes = vec![dgatd::dga::Probe::new(&m, &t, [-0.3, 0.5, 0.2]).unwrap()];
    let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
    let mut s =
        CpuStepper::new(d.clone(), ops, DualForm::Factored, Some((&src, w)), probes).unwrap();
    let out = solver::run_controlled(
        &mut s,
        dt,
        20_000,
        Some(w.end()),
        1,
        &mut RunControl {
            checks: 200,
            ..RunControl::default()
        },
        &mut |_| {},
    );
    let e = out.stop.expect("the run must be stopped").to_string();
    eprintln!("{e}; {} steps kept", out.record.steps);
    assert!(e.contains("by step") && e.contains("--cfl"), "{e}");
    assert!(out.record.steps > 0 && out.record.steps < 20_000);
    assert_eq!(out.record.samples.len(), 3 * out.record.steps);
    let first = &out.record.samples[..30];
    assert!(first.iter().all(|x| x.is_finite()) && first.iter().any(|&x| x != 0.0));
}

fn dgatd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dgatd"));
    c.env_remove("DGATD_FAULT_AT_STEP");
    c
}

/// A CPU run of 12 000 steps on the coarse cylinder with a checkpoint every 1000 steps.
const LONG_RUN: [&str; 10] = [
    "resonator",
    "--mesh",
    "bundled:coarse",
    "--backend",
    "cpu",
    "--steps",
    "12000",
    "--quiet",
    "--checkpoint-steps",
    "1000",
];

/// Starts `dgatd ARGS --out dir`, sends `signal` (e.g. `-INT`) once the first checkpoint
/// exists, and returns the finished process's output.
#[cfg(unix)]
fn signal_after_first_checkpoint(args: &[&str], dir: &Path, signal: &str) -> std::process::Output {
    let child = dgatd()
        .args(args)
        .arg("--out")
        .arg(dir)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !dir.join("checkpoint.bin").exists() {
        assert!(t0.elapsed().as_secs() < 120, "no checkpoint appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let st = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    child.wait_with_output().unwrap()
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The binary: the same run twice gives byte-identical CSVs; a run interrupted by SIGINT
/// exits with 130 after writing its probe data and a checkpoint, and `--resume` then
/// produces byte-identical CSVs too; a corrupt checkpoint and extra flags with --resume are
/// refused with messages naming them.
#[cfg(unix)]
#[test]
fn cli_repeatable_interruptible_resumable() {
    let args = LONG_RUN;
    let (a, b, c) = (tmp("cli-a"), tmp("cli-b"), tmp("cli-c"));
    for d in [&a, &b] {
        let o = dgatd().args(args).arg("--out").arg(d).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(!d.join("checkpoint.bin").exists(), "checkpoint left behind");
    }
    for f in ["probe.csv", "spectrum.csv", "modes.csv"] {
        assert_eq!(
            read(&a.join(f)),
            read(&b.join(f)),
            "{f} differs between two runs"
        );
    }
    // interrupt once the first checkpoint exists
    let o = signal_after_first_checkpoint(&args, &c, "-INT");
    let err = String::from_utf8_lossy(&o.stderr);
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted at step") && err.contains("--resume"),
        "{err}"
    );
    let rows = std::fs::read_to_string(c.join("probe.csv"))
        .unwrap()
        .lines()
        .count();
    let ck = Checkpoint::read(&c).unwrap();
    assert!(
        rows > 1 && ck.done < 12_000 && rows - 1 == ck.done,
        "{rows} rows, {}",
        ck.done
    );
    // extra flags with --resume are refused
    let o = dgatd()
        .args(["resonator", "--resume"])
        .arg(&c)
        .args(["--cfl", "0.5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--cfl"), "{err}");
    // resume
    let o = dgatd()
        .args(["resonator", "--quiet", "--resume"])
        .arg(&c)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["probe.csv", "spectrum.csv", "modes.csv"] {
        assert_eq!(
            read(&a.join(f)),
            read(&c.join(f)),
            "{f}: resumed run differs"
        );
    }
    // a corrupt checkpoint
    let p = c.join("checkpoint.bin");
    std::fs::write(&p, b"DGATDCK2 not really a checkpoint").unwrap();
    let o = dgatd()
        .args(["resonator", "--resume"])
        .arg(&c)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(1) && err.contains("checksum mismatch"),
        "{err}"
    );
    for d in [a, b, c] {
        std::fs::remove_dir_all(d).ok();
    }
}

/// `DGATD_FAULT_AT_STEP` through the binary: exit 1, the message, and the partial file.
#[test]
fn cli_device_failure_writes_partial_output() {
    let d = tmp("cli-fault");
    let o = dgatd()
        .args([
            "resonator",
            "--mesh",
            "bundled:coarse",
            "--backend",
            "cpu",
            "--steps",
            "2000",
            "--quiet",
            "--out",
        ])
        .arg(&d)
        .env("DGATD_FAULT_AT_STEP", "777")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("device was lost") && err.contains("777 steps recorded"),
        "{err}"
    );
    let rows = std::fs::read_to_string(d.join("probe.csv"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(rows, 778);
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn stepper_state_round_trips_through_a_checkpoint() {
    // f32 state: f32 -> f64 -> file -> f64 -> f32 is exact, so f32 runs resume bit for bit too
    let (_m, _t, d, _) = setup(jittered_box([3, 3, 3], 5, 0.2), Some(3));
    let d = Arc::new(d);
    let (dt, _) = solver::time_step(&d, 0.9).unwrap();
    let ops = Arc::new(Operators::<f32>::new(&d, dt, false));
    let mut s = CpuStepper::new(d.clone(), ops, DualForm::Factored, None, vec![]).unwrap();
    let (u, f) = random_state(&d, 9);
    s.set_state(&u, &f).unwrap();
    s.advance(0, 50, &mut vec![]).unwrap();
    let (u1, f1) = s.state().unwrap();
    let dir = tmp("f32");
    Checkpoint {
        fingerprint: 1,
        done: 50,
        dt_bits: dt.to_bits(),
        reference: None,
        config: String::new(),
        out: String::new(),
        u: u1.clone(),
        f: f1.clone(),
        samples: vec![],
        energy: vec![],
        aux: vec![],
    }
    .write(&dir)
    .unwrap();
    let ck = Checkpoint::read(&dir).unwrap();
    s.advance(50, 50, &mut vec![]).unwrap();
    let (u2, _) = s.state().unwrap();
    s.set_state(&ck.u, &ck.f).unwrap();
    s.advance(50, 50, &mut vec![]).unwrap();
    let (u3, _) = s.state().unwrap();
    assert_eq!(bits(&u2), bits(&u3));
    assert!(u2.iter().any(|&x| x != 0.0));
    std::fs::remove_dir_all(&dir).ok();
}

/// The same failure and resume on an OpenCL device (PoCL in CI): bit for bit as well.
#[test]
fn device_pipeline_resumes_bit_identical() {
    let required = std::env::var("DGATD_REQUIRE_OPENCL")
        .map(|v| v == "1")
        .unwrap_or(false);
    if let Err(e) = dgatd::backend::opencl::select_device(None) {
        assert!(
            !required,
            "DGATD_REQUIRE_OPENCL=1 but no OpenCL device: {e}"
        );
        eprintln!("\n*** SKIPPED: OpenCL test needs a device ({e}) ***\n");
        return;
    }
    let c = Config {
        backend: BackendKind::Opencl,
        precision: dgatd::Precision::F32,
        ..cfg(1200)
    };
    let full = dgatd::run(&c, &mut |_, _| {}).unwrap();
    let dir = tmp("device");
    let mut opts = RunOptions {
        out: Some(dir.clone()),
        fault_at_step: Some(700),
        ..Default::default()
    };
    assert!(solver::run_with(&plan(&c, 300), &mut opts, &mut |_, _| {}).is_err());
    let ck = Checkpoint::read(&dir).unwrap();
    assert_eq!(ck.done, 600);
    let mut opts = RunOptions {
        out: Some(dir.clone()),
        resume: Some(ck),
        ..Default::default()
    };
    let resumed = solver::run_with(&plan(&c, 0), &mut opts, &mut |_, _| {}).unwrap();
    assert!(full.record.samples.iter().any(|&x| x != 0.0));
    assert_eq!(bits(&resumed.record.samples), bits(&full.record.samples));
    std::fs::remove_dir_all(&dir).ok();
}

/// SIGTERM (what a batch scheduler sends before killing a job) saves like Ctrl-C.
#[cfg(unix)]
#[test]
fn sigterm_saves_like_ctrl_c() {
    let d = tmp("term");
    let o = signal_after_first_checkpoint(&LONG_RUN, &d, "-TERM");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted at step"), "{err}");
    let ck = Checkpoint::read(&d).unwrap();
    let rows = std::fs::read_to_string(d.join("probe.csv"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(rows - 1, ck.done);
    std::fs::remove_dir_all(d).ok();
}
