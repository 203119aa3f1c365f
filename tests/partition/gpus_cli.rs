//! `dgatd resonator --gpus N` (one process driving N devices, one thread per part, the
//! halos through host memory; feature `partition`, on by default) against the one-process
//! run of the same flags on the same device.
//!
//! Here every part runs on the same PoCL device (`--device 0`: CI has no GPU), which checks
//! everything but the GPU choice: the partition, the threads' halo exchange and
//! collectives, rank 0's outputs. Bound: the parts' kernels do each entity's arithmetic of
//! the one-device stepper, but Δt comes from the distributed power iteration (global sums
//! in another order: ρ agrees to ~1e-15) and PoCL may contract differently in the subset
//! kernels: 1e-10 on the 2-norm of the record, relative (measured ~1e-14 for `mpirun`
//! ranks, tests/mpi/mpi_cli.rs); `probe.csv` holds 13 digits. Mode lists: the same count,
//! frequencies within 1e-5 (harminv amplifies the record's round-off).
//!
//! Skips loudly without an OpenCL device unless `DGATD_REQUIRE_OPENCL=1`.
#![cfg(feature = "partition")]

use dgatd::internal::Rng;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_dgatd");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-gpuscli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn log(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn have_device() -> bool {
    let o = Command::new(BIN).arg("devices").output().unwrap();
    let found = o.status.success() && String::from_utf8_lossy(&o.stdout).contains(" 0 ");
    if !found {
        assert!(
            std::env::var("DGATD_REQUIRE_OPENCL").as_deref() != Ok("1"),
            "DGATD_REQUIRE_OPENCL=1 but `dgatd devices` lists no device:\n{}",
            log(&o)
        );
        eprintln!("\n*** SKIPPED: no OpenCL device; the --gpus test did not run ***\n");
    }
    found
}

/// A small run on a box of seeded random size with `n_probes` probes at seeded points.
fn flags(seed: u64, n_probes: usize, steps: usize) -> Vec<String> {
    let mut r = Rng::new(seed);
    let mut u = |a: f64, b: f64| a + (b - a) * 0.5 * (r.sym() + 1.0);
    let n: Vec<usize> = (0..3).map(|_| u(4.0, 8.0) as usize).collect();
    let l: Vec<f64> = (0..3).map(|_| u(0.5, 1.2)).collect();
    let mut f = vec![
        "resonator".to_string(),
        "--box".into(),
        format!("{},{},{}:{},{},{}", n[0], n[1], n[2], l[0], l[1], l[2]),
        "--steps".into(),
        steps.to_string(),
        "--quiet".into(),
        "--cavity".into(),
        "none".into(),
        "--fmax".into(),
        format!(
            "{:e}",
            2.2 * 299_792_458.0 / l.iter().cloned().fold(0.0, f64::max)
        ),
        "--backend".into(),
        "opencl".into(),
        "--device".into(),
        "0".into(),
    ];
    for _ in 0..n_probes {
        let p: Vec<f64> = (0..3).map(|c| l[c] * u(0.1, 0.9)).collect();
        f.push("--probe".into());
        f.push(format!("{},{},{}", p[0], p[1], p[2]));
    }
    f
}

fn run(args: &[String], extra: &[&str], out: &Path) -> (bool, String) {
    run_env(args, extra, out, None)
}

fn run_env(
    args: &[String],
    extra: &[&str],
    out: &Path,
    env: Option<(&str, &str)>,
) -> (bool, String) {
    let mut c = Command::new(BIN);
    c.args(args)
        .args(extra)
        .arg("--out")
        .arg(out)
        .env("RAYON_NUM_THREADS", "1");
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (o.status.success(), log(&o))
}

fn probe_record(dir: &Path) -> Vec<f64> {
    let t = std::fs::read_to_string(dir.join("probe.csv")).unwrap();
    t.lines()
        .skip(1)
        .flat_map(|l| l.split(',').skip(1).map(|x| x.parse::<f64>().unwrap()))
        .collect()
}

fn modes(dir: &Path) -> Vec<f64> {
    let t = std::fs::read_to_string(dir.join("modes.csv")).unwrap();
    t.lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse::<f64>().unwrap())
        .collect()
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let n = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!(n > 0.0, "all-zero record");
    let d = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>();
    d.sqrt() / n
}

#[test]
fn gpus_2_and_3_on_one_device_equal_one_process() {
    if !have_device() {
        return;
    }
    for (n, seed, probes) in [(2usize, 21u64, 3usize), (3, 22, 1)] {
        let args = flags(seed, probes, 500);
        let (one, many) = (tmp(&format!("one-{n}")), tmp(&format!("gpus{n}")));
        let (ok, l1) = run(&args, &[], &one);
        assert!(ok, "one process failed:\n{l1}");
        let (ok, l) = run(&args, &["--gpus", &n.to_string()], &many);
        assert!(ok, "--gpus {n} failed:\n{l}");
        assert!(l.contains(&format!(" s, {n} ranks,")), "{l}");
        assert!(l.contains("through host memory"), "{l}");
        let e = rel(&probe_record(&one), &probe_record(&many));
        eprintln!("--gpus {n}, {probes} probes: probe record relative difference {e:e}");
        assert!(e < 1e-10, "--gpus {n}: {e:e}");
        let (a, b) = (modes(&one), modes(&many));
        assert!(!a.is_empty(), "no modes:\n{l1}");
        assert_eq!(a.len(), b.len(), "mode lists {a:?} vs {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert!(((x - y) / x).abs() < 1e-5, "{x} vs {y}");
        }
        // the key is part of the run's configuration: run.toml reproduces the run
        let toml = std::fs::read_to_string(many.join("run.toml")).unwrap();
        assert!(toml.contains(&format!("gpus = {n}")), "{toml}");
        let toml = std::fs::read_to_string(one.join("run.toml")).unwrap();
        assert!(!toml.contains("gpus ="), "{toml}");
        // the parts store U slot-major (the single device's layout); by half-edge
        // (DGATD_PART_U=half-edge) the same record to round-off
        assert!(l.contains("ranks (slot-major U)"), "{l}");
        let half = tmp(&format!("half{n}"));
        let env = Some(("DGATD_PART_U", "half-edge"));
        let (ok, lh) = run_env(&args, &["--gpus", &n.to_string()], &half, env);
        assert!(ok, "--gpus {n}, half-edge U failed:\n{lh}");
        assert!(!lh.contains("slot-major"), "{lh}");
        let e = rel(&probe_record(&many), &probe_record(&half));
        eprintln!("--gpus {n}: slot-major against half-edge U {e:e}");
        assert!(e < 1e-10, "--gpus {n}, half-edge U: {e:e}");
        for d in [one, many, half] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Asking for what cannot be had is an error naming the flag, before anything runs.
#[test]
fn gpus_that_cannot_be_had_are_refused() {
    let args = flags(23, 1, 50);
    let strip = |a: &[String]| -> Vec<String> {
        // the flags without --backend opencl --device 0
        let mut v = a.to_vec();
        let i = v.iter().position(|x| x == "--backend").unwrap();
        v.drain(i..i + 4);
        v
    };
    let cases: Vec<(Vec<String>, Vec<&str>, &str)> = vec![
        (
            strip(&args),
            vec!["--gpus", "2", "--backend", "cpu"],
            "--gpus drives GPUs",
        ),
        // no machine lists 64 GPUs to OpenCL
        (
            strip(&args),
            vec!["--gpus", "64", "--backend", "opencl"],
            "give --gpus",
        ),
        (strip(&args), vec!["--gpus", "65"], "65"),
        (
            strip(&args)
                .into_iter()
                .filter(|x| x != "--steps" && x != "50")
                .collect(),
            vec!["--gpus", "2", "--converge", "1"],
            "leave --gpus out",
        ),
        (
            strip(&args),
            vec!["--gpus", "2", "--method", "dg", "--backend", "cpu"],
            "gpus",
        ),
    ];
    for (i, (a, extra, want)) in cases.into_iter().enumerate() {
        let out = tmp(&format!("refused{i}"));
        let (ok, l) = run(&a, &extra, &out);
        assert!(!ok, "{extra:?} ran:\n{l}");
        assert!(l.contains(want), "{extra:?}: wanted {want:?} in:\n{l}");
        assert!(!l.contains("panicked"), "{l}");
        let _ = std::fs::remove_dir_all(out);
    }
}

/// The parts on OpenCL devices step losses, absorbing surfaces and dispersive poles:
/// `--gpus 2` and `--gpus 3` on the open problem of `open_mesh.rs` (first-order absorbing
/// walls, an absorbing layer, Lorentz, Drude and Debye media, a conducting region) equal
/// the one-process run on the same device (bound of the module docs).
#[test]
fn gpus_step_an_open_lossy_dispersive_problem_as_one_process() {
    if !have_device() {
        return;
    }
    let dir = tmp("open");
    let cfg = crate::open_mesh::write_open_problem(&dir, 4508, 300);
    gpus_equal(&cfg, &dir, &[2, 3], "open lossy dispersive");
    let _ = std::fs::remove_dir_all(dir);
}

/// The same for the perfectly matched layer of `open_mesh.rs`'s PML problem.
#[test]
fn gpus_step_a_perfectly_matched_layer_as_one_process() {
    if !have_device() {
        return;
    }
    let dir = tmp("pml");
    let cfg = crate::open_mesh::write_pml_problem(&dir, 4517, 300);
    gpus_equal(&cfg, &dir, &[2], "pml");
    let _ = std::fs::remove_dir_all(dir);
}

/// The configuration `cfg` on OpenCL device 0 in one process and with `--gpus N` for each
/// of `ns` (outputs under `dir`): the runs succeed and their probe records agree to 1e-10.
fn gpus_equal(cfg: &std::path::Path, dir: &std::path::Path, ns: &[usize], what: &str) {
    let args: Vec<String> = vec![
        "resonator".into(),
        "--config".into(),
        cfg.display().to_string(),
        "--quiet".into(),
        "--backend".into(),
        "opencl".into(),
        "--device".into(),
        "0".into(),
    ];
    let one = dir.join("one");
    let (ok, l1) = run(&args, &[], &one);
    assert!(
        ok,
        "one process failed:
{l1}"
    );
    for &n in ns {
        let many = dir.join(format!("gpus{n}"));
        let (ok, l) = run(&args, &["--gpus", &n.to_string()], &many);
        assert!(
            ok,
            "--gpus {n} failed:
{l}"
        );
        assert!(!l.contains("panicked"), "{l}");
        let e = rel(&probe_record(&one), &probe_record(&many));
        eprintln!("{what}, --gpus {n}: probe record relative difference {e:e}");
        assert!(e < 1e-10, "{what}, --gpus {n}: {e:e}");
    }
}
