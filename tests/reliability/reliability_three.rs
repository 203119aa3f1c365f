//! Reliability of the command line, round three (issue 47): nothing lost to a second
//! signal, no crash on extreme but finite settings. Each case checks the exit status, the
//! message and what is left on disk.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-rel3-{}-{name}", std::process::id()));
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

/// Starts `dgatd ARGS --out dir` and returns it once its first checkpoint exists (the run is
/// then in its time loop).
fn started_until_checkpoint(args: &[&str], dir: &std::path::Path) -> std::process::Child {
    let child = dgatd()
        .args(args)
        .arg("--out")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !dir.join("checkpoint.bin").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no checkpoint appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Runs `c` to its end, failing the test (and killing it) if it runs past `secs` seconds:
/// a liveness limit for inputs that used to make the program hang, not a timing.
fn output_within(c: &mut Command, secs: u64) -> Output {
    let mut child = c
        .stdout(Stdio::null())
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

/// A CPU run on the coarse cylinder, long enough to be interrupted in its time loop, with a
/// checkpoint every 1000 steps.
const LONG: [&str; 10] = [
    "resonator",
    "--mesh",
    "bundled:coarse",
    "--backend",
    "cpu",
    "--steps",
    "40000",
    "--quiet",
    "--checkpoint-steps",
    "1000",
];

/// `timeout` (and a terminal's hang-up) signals the process and its group: the run gets
/// two SIGTERMs at once. That is one request: the run saves its checkpoint and the probe
/// data and exits with 130, as after one signal. (Before, the second SIGTERM counted as
/// "Ctrl-C again" and the run exited without saving.)
#[cfg(unix)]
#[test]
fn two_sigterms_at_once_still_save_the_run() {
    let dir = tmp("two-sigterms");
    let child = started_until_checkpoint(&LONG, &dir);
    let pid = child.id().to_string();
    // both signals from one shell, back to back
    let st = Command::new("sh")
        .args(["-c", &format!("kill -TERM {pid}; kill -TERM {pid}")])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    // (the notice on a repeated signal names SIGQUIT as the way to quit "without saving";
    // the old exit on a second signal said "exiting without saving")
    assert!(!err.contains("exiting without saving"), "{err}");
    assert!(
        err.contains("interrupted at step") && err.contains("--resume"),
        "{err}"
    );
    let rows = std::fs::read_to_string(dir.join("probe.csv"))
        .unwrap()
        .lines()
        .count();
    assert!(rows > 1000, "{rows} rows in probe.csv");
    assert!(dir.join("checkpoint.bin").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `--checkpoint-minutes 1e300` (a finite number of minutes no `Duration` holds) means
/// "never by the clock"; it used to panic. Also from a config file.
#[test]
fn huge_checkpoint_minutes_do_not_crash() {
    let dir = tmp("ck-minutes");
    let o = dgatd()
        .args([
            "resonator",
            "--mesh",
            "bundled:coarse",
            "--backend",
            "cpu",
            "--steps",
            "300",
            "--quiet",
            "--checkpoint-minutes",
            "1e300",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("modes.csv").exists());
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("c.toml");
    std::fs::write(
        &cfg,
        "mesh = \"bundled:coarse\"\nbackend = \"cpu\"\nsteps = 300\ncheckpoint_minutes = 1e300\n",
    )
    .unwrap();
    let out2 = dir.join("b");
    let o = dgatd()
        .args(["resonator", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out2)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out2.join("modes.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `dgatd bench --out D` measures into `D/bench.csv.partial` and replaces `D/bench.csv`
/// only when it ends: an earlier `bench.csv` is never truncated before the measurement,
/// and a link left at the partial file's place is removed, not followed (its target is
/// untouched).
#[cfg(unix)]
#[test]
fn bench_replaces_its_csv_only_at_the_end_and_follows_no_link() {
    let dir = tmp("bench-out");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bench.csv"), "an earlier bench\n").unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("bench.csv.partial")).unwrap();
    let o = dgatd()
        .args([
            "bench",
            "--devices",
            "none",
            "--sizes",
            "1e3",
            "--reps",
            "2",
            "--warmup",
            "1",
            "--stream-elems",
            "1e5",
            "--dg-orders",
            "1",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(!dir.join("bench.csv.partial").exists());
    let csv = std::fs::read_to_string(dir.join("bench.csv")).unwrap();
    assert!(
        csv.starts_with("timestamp,commit,host") && csv.lines().count() > 1,
        "{csv}"
    );
    assert!(!csv.contains("an earlier bench"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Symbolic links in `--out` are never written through: a link at the write test's name,
/// at an output's name or at its temporary name is replaced (the output becomes a regular
/// file, the link's target is untouched), and a link at the lock file's name is refused
/// with a message naming it.
#[cfg(unix)]
#[test]
fn links_in_the_output_folder_are_not_followed() {
    let dir = tmp("links");
    let elsewhere = tmp("links-elsewhere");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let names = [
        ".dgatd-write-test",
        "probe.csv",
        "probe.csv.tmp",
        "modes.csv.tmp",
        "run.toml",
        "spectrum.png",
        "spectrum.tmp.png",
        "spectrum.tmp.svg",
    ];
    for (i, n) in names.iter().enumerate() {
        let v = elsewhere.join(format!("victim{i}"));
        std::fs::write(&v, format!("keep {i}\n")).unwrap();
        std::os::unix::fs::symlink(&v, dir.join(n)).unwrap();
    }
    let run = |out: &PathBuf| {
        dgatd()
            .args([
                "resonator",
                "--mesh",
                "bundled:coarse",
                "--backend",
                "cpu",
                "--steps",
                "300",
                "--quiet",
                "--out",
            ])
            .arg(out)
            .output()
            .unwrap()
    };
    let o = run(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    for (i, n) in names.iter().enumerate() {
        let v = elsewhere.join(format!("victim{i}"));
        assert_eq!(
            std::fs::read_to_string(&v).unwrap(),
            format!("keep {i}\n"),
            "the target of the link {n} was written"
        );
    }
    for n in ["probe.csv", "run.toml", "spectrum.png"] {
        let m = std::fs::symlink_metadata(dir.join(n)).unwrap();
        assert!(m.file_type().is_file(), "{n} is not a regular file");
    }
    // a link at the lock file's name
    let lock_dir = tmp("links-lock");
    std::fs::create_dir_all(&lock_dir).unwrap();
    let v = elsewhere.join("lock-victim");
    std::fs::write(&v, "keep\n").unwrap();
    std::os::unix::fs::symlink(&v, lock_dir.join(".dgatd.lock")).unwrap();
    let o = run(&lock_dir);
    let err = stderr(&o);
    assert!(
        !o.status.success() && err.contains(".dgatd.lock") && err.contains("not a regular file"),
        "{err}"
    );
    assert_ne!(o.status.code(), Some(101), "{err}");
    assert_eq!(std::fs::read_to_string(&v).unwrap(), "keep\n");
    for d in [dir, elsewhere, lock_dir] {
        std::fs::remove_dir_all(d).ok();
    }
}

fn short_run(out: &PathBuf, steps: &str) -> Command {
    let mut c = dgatd();
    c.args([
        "resonator",
        "--mesh",
        "bundled:coarse",
        "--backend",
        "cpu",
        "--steps",
        steps,
        "--quiet",
        "--out",
    ])
    .arg(out);
    c
}

/// A new run in a folder never mixes its files with an earlier run's, and loses none: the
/// folder of an interrupted run (its checkpoint) is refused, naming `--resume`, and the
/// checkpoint stays; an earlier finished run's outputs move into `previous/`; a run that
/// fails there leaves the earlier run's consistent set in `previous/` and no stale
/// `modes.csv` beside its own partial record.
#[cfg(unix)]
#[test]
fn a_new_run_keeps_the_earlier_runs_files_apart() {
    let dir = tmp("fresh");
    // an interrupted run: its checkpoint
    let child = started_until_checkpoint(&LONG, &dir);
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let ck = std::fs::read(dir.join("checkpoint.bin")).unwrap();
    let o = short_run(&dir, "300").output().unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert_ne!(o.status.code(), Some(101), "{err}");
    assert!(
        err.contains("--resume") && err.contains("checkpoint.bin") && err.contains("at step"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.join("checkpoint.bin")).unwrap(),
        ck,
        "the checkpoint was touched"
    );
    std::fs::remove_dir_all(&dir).ok();
    // a finished run, then another: the first one's outputs are in previous/
    let o = short_run(&dir, "300").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let first = std::fs::read(dir.join("modes.csv")).unwrap();
    let o = short_run(&dir, "400").output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success() && err.contains("previous"), "{err}");
    assert_eq!(
        std::fs::read(dir.join("previous/modes.csv")).unwrap(),
        first
    );
    let toml = std::fs::read_to_string(dir.join("run.toml")).unwrap();
    assert!(toml.contains("400"), "{toml}");
    // a run that fails at step 100 in that folder: the 400-step run's set is in previous/,
    // only the failed run's partial record is beside it
    let second = std::fs::read(dir.join("modes.csv")).unwrap();
    let o = short_run(&dir, "500")
        .env("DGATD_FAULT_AT_STEP", "100")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(dir.join("previous/modes.csv")).unwrap(),
        second
    );
    assert!(!dir.join("modes.csv").exists() && !dir.join("run.toml").exists());
    assert!(dir.join("probe.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A `--cavity` that does not fit the mesh (millimetres for metres, or another cavity) is
/// refused before the run, naming the flag and both extents, instead of enumerating a
/// catalogue of billions of modes or labelling the lines with another cavity's modes.
#[test]
fn a_cavity_that_does_not_fit_the_mesh_is_refused() {
    for (cavity, mesh) in [
        ("box:1000,800,600", ["--box", "10,8,6:1,0.8,0.6"]),
        ("box:1,0.8,0.6", ["--box", "10,8,6:1,0.8,0.5"]),
        ("box:0.8,0.6,1", ["--box", "10,8,6:1,0.8,0.6"]),
        ("sphere:1", ["--mesh", "bundled:coarse"]),
    ] {
        let dir = tmp("cavity");
        let t0 = Instant::now();
        let o = dgatd()
            .args(["resonator", "--backend", "cpu", "--quiet", "--steps", "200"])
            .args(mesh)
            .args(["--cavity", cavity, "--out"])
            .arg(&dir)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(!o.status.success(), "{cavity}: accepted: {err}");
        assert_ne!(o.status.code(), Some(101), "{err}");
        assert!(
            err.contains("cavity") && err.contains(cavity) && err.contains("does not fit the mesh"),
            "{err}"
        );
        assert!(t0.elapsed() < Duration::from_secs(60));
        std::fs::remove_dir_all(&dir).ok();
    }
    // the mesh's own cavity is accepted
    let dir = tmp("cavity-ok");
    let o = dgatd()
        .args(["resonator", "--backend", "cpu", "--quiet", "--steps", "200"])
        .args([
            "--box",
            "10,8,6:1,0.8,0.6",
            "--cavity",
            "box:1,0.8,0.6",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// `--f-peak 1e300` (a pulse no time step samples) is refused naming the flag and the
/// largest pulse frequency the time step carries, instead of an all-zero record analysed
/// as a silent cavity.
#[test]
fn a_pulse_the_time_step_cannot_carry_is_refused() {
    let dir = tmp("f-peak");
    let o = dgatd()
        .args(["resonator", "--backend", "cpu", "--quiet", "--steps", "200"])
        .args(["--mesh", "bundled:coarse", "--f-peak", "1e300", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "accepted: {err}");
    assert_ne!(o.status.code(), Some(101), "{err}");
    assert!(
        err.contains("f-peak") && err.contains("4 steps per period"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--seed 2^63` (beyond the TOML integers run.toml stores) is refused before the run,
/// naming the flag and the largest seed, instead of failing when the outputs are written.
#[test]
fn a_seed_beyond_toml_integers_names_the_flag() {
    let dir = tmp("seed");
    let o = dgatd()
        .args(["resonator", "--backend", "cpu", "--quiet", "--steps", "200"])
        .args([
            "--mesh",
            "bundled:coarse",
            "--seed",
            "9223372036854775808",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "accepted: {err}");
    assert!(
        err.contains("seed") && err.contains("9223372036854775807"),
        "{err}"
    );
    assert!(!dir.join("probe.csv").exists());
    // the largest seed runs
    let o = dgatd()
        .args(["resonator", "--backend", "cpu", "--quiet", "--steps", "200"])
        .args([
            "--mesh",
            "bundled:coarse",
            "--seed",
            "9223372036854775807",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// Inputs that are not regular files (`/dev/zero` would be read forever, a FIFO would
/// block) are refused at once, naming the path: `--resume`, `--config`, `--mesh` and
/// `report`'s CSV files.
#[cfg(unix)]
#[test]
fn devices_and_fifos_as_inputs_are_refused_at_once() {
    let dir = tmp("inputs");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.csv");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let fifo = fifo.to_str().unwrap().to_string();
    let out = dir.join("o").to_str().unwrap().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["resonator", "--resume", "/dev/zero"],
        vec!["resonator", "--config", "/dev/zero", "--out", &out],
        vec!["resonator", "--config", &fifo, "--out", &out],
        vec!["resonator", "--mesh", "/dev/zero", "--out", &out],
        vec!["report", "--out", &out, "/dev/zero"],
        vec!["report", "--out", &out, &fifo],
    ];
    for args in cases {
        let o = output_within(dgatd().args(&args), 30);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} accepted: {err}");
        assert_ne!(o.status.code(), Some(101), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// One bench CSV row of the 22 documented columns.
fn bench_row(device: &str, precision: &str, kernel: &str, tets: &str, median: &str) -> String {
    format!(
        "2026-12-01T00:00:00Z,abc,host,NVIDIA CUDA,{device},1,{precision},{kernel},tet+factored,{tets},{tets},3,{median},{median},{median},1e6,100,0.5,1,1e6,1,0.1"
    )
}

const BENCH_HEAD: &str = "timestamp,commit,host,platform,device,driver,precision,kernel,variant,tets,dofs,reps,median_s,min_s,max_s,bytes_model,gbs,frac_copy_bw,gdofs_per_s,flops_model,gflops,frac_roof";

/// `dgatd report`: a row with `inf` or `1e308` (which made the plots' axes endless) is
/// refused naming the file, line and column; a precision such as `../../x` does not put a
/// plot outside `--out`; 40 000 rows are reported (the report was quadratic in the rows:
/// 87 s) well within the liveness limit.
#[test]
fn report_refuses_unmeasured_values_and_writes_only_into_out() {
    let dir = tmp("report");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |csv: &std::path::Path, out: &std::path::Path| {
        output_within(dgatd().arg("report").arg("--out").arg(out).arg(csv), 120)
    };
    for bad in ["inf", "1e308", "NaN", "-5"] {
        let csv = dir.join("bad.csv");
        std::fs::write(
            &csv,
            format!(
                "{BENCH_HEAD}\n{}\n{}\n",
                bench_row("GPU", "f64", "step", "1000", "1e-3"),
                bench_row("GPU", "f64", "step", "2000", bad)
            ),
        )
        .unwrap();
        let o = run(&csv, &dir.join("out-bad"));
        let err = stderr(&o);
        assert!(!o.status.success(), "{bad} accepted: {err}");
        assert!(
            err.contains("bad.csv") && err.contains("line 3") && err.contains("median_s"),
            "{err}"
        );
    }
    // a precision that is a path
    let csv = dir.join("path.csv");
    std::fs::write(
        &csv,
        format!(
            "{BENCH_HEAD}\n{}\n",
            bench_row("GPU", "/../../evil", "primal", "1000", "1e-3")
        ),
    )
    .unwrap();
    let out = dir.join("nested/out");
    let o = run(&csv, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let outside: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("evil"))
        .collect();
    assert!(outside.is_empty(), "{outside:?} written outside --out");
    assert!(!dir.join("nested").join("bandwidth_gpu_evil.png").exists());
    // 40 000 rows
    let mut big = String::from(BENCH_HEAD);
    for i in 0..40_000 {
        big.push('\n');
        big.push_str(&bench_row(
            &format!("GPU{}", i % 7),
            if i % 2 == 0 { "f64" } else { "f32" },
            if i % 3 == 0 { "step" } else { "primal" },
            &format!("{}", 1000 + i),
            "1e-3",
        ));
    }
    let csv = dir.join("big.csv");
    std::fs::write(&csv, big + "\n").unwrap();
    let o = run(&csv, &dir.join("out-big"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("out-big/report.md").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// Two runs started together on a folder that does not exist yet: one takes the lock and
/// runs, the other is refused as "another dgatd run is using it", never with an error of
/// the file system ("No such file or directory", "File exists") from the other run's
/// write test. Three processes at once, five times.
#[cfg(unix)]
#[test]
fn runs_started_together_on_a_new_folder_meet_the_lock() {
    for round in 0..5 {
        let dir = tmp(&format!("together-{round}"));
        let children: Vec<_> = (0..3)
            .map(|_| {
                short_run(&dir, "200")
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut ran = 0;
        for c in children {
            let o = c.wait_with_output().unwrap();
            let err = stderr(&o);
            if o.status.success() {
                ran += 1;
                continue;
            }
            assert_eq!(o.status.code(), Some(1), "round {round}: {err}");
            assert!(
                err.contains("another dgatd run is using it"),
                "round {round}: {err}"
            );
        }
        assert!(ran >= 1, "round {round}: no run took the folder");
        assert!(!dir.join(".dgatd.lock").exists());
        assert!(!dir.join(".dgatd-write-test").exists());
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// The mesh path is stored absolute (canonical) in run.toml and the checkpoint: a run
/// given `--mesh meshes/cylinder_coarse.msh` (relative to where it started) resumes from
/// another working directory (before: "meshes/cylinder_coarse.msh: No such file").
#[test]
fn a_run_with_a_relative_mesh_path_resumes_from_another_directory() {
    let dir = tmp("relative-mesh");
    // a full disk at the end leaves the final checkpoint (as in reliability_cli)
    let o = dgatd()
        .args([
            "resonator",
            "--mesh",
            "meshes/cylinder_coarse.msh",
            "--backend",
            "cpu",
            "--quiet",
            "--steps",
            "3000",
            "--checkpoint-steps",
            "1000",
            "--out",
        ])
        .arg(&dir)
        .env("DGATD_FAULT_WRITE", "modes.csv")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(dir.join("checkpoint.bin").exists());
    let elsewhere = tmp("relative-mesh-cwd");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let o = dgatd()
        .current_dir(&elsewhere)
        .args(["resonator", "--quiet", "--resume"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let toml = std::fs::read_to_string(dir.join("run.toml")).unwrap();
    let abs = std::fs::canonicalize("meshes/cylinder_coarse.msh").unwrap();
    assert!(
        toml.contains(&format!("mesh = \"{}\"", abs.display())),
        "{toml}"
    );
    for d in [dir, elsewhere] {
        std::fs::remove_dir_all(d).ok();
    }
}

/// After a disk-full stop (the outputs failed after the record and the final checkpoint
/// were written) and space freed, `--resume` is accepted: the space check credits what is
/// already there (the checkpoint, and a probe.csv it would rewrite unchanged) instead of
/// asking for the whole run's outputs again. A real 32 MiB tmpfs, filled until less is
/// free than the whole run's estimate but more than what the resume writes; SKIPPED
/// where no tmpfs can be mounted.
#[cfg(target_os = "linux")]
#[test]
fn a_resume_after_a_full_disk_needs_only_the_space_it_writes() {
    let d = tmp("full-resume");
    std::fs::create_dir_all(&d).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=32m", "tmpfs"])
        .arg(&d)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!(
            "SKIPPED a_resume_after_a_full_disk_needs_only_the_space_it_writes: cannot mount a tmpfs here"
        );
        return;
    }
    let run = d.join("run");
    let r = || {
        let o = short_run(&run, "12000")
            .args(["--checkpoint-steps", "5000"])
            .env("DGATD_FAULT_WRITE", "modes.csv")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let size = |n: &str| std::fs::metadata(run.join(n)).unwrap().len();
        let (p, c) = (size("probe.csv"), size("checkpoint.bin"));
        // what the resume writes: the small outputs (8 MiB in the estimate) and at most a
        // checkpoint; what the whole run's estimate asks for: p + 8 MiB + 2 c
        let free = (8 << 20) + c + p / 2;
        let avail = fs4::available_space(&d).unwrap();
        assert!(avail > free, "the tmpfs is too small: {avail} B free");
        let filler = d.join("filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![1u8; 1 << 20];
        let mut left = avail - free;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            std::io::Write::write_all(&mut f, &chunk[..n]).unwrap();
            left -= n as u64;
        }
        f.sync_all().unwrap();
        let probe = std::fs::read(run.join("probe.csv")).unwrap();
        let o = dgatd()
            .args(["resonator", "--quiet", "--resume"])
            .arg(&run)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(run.join("modes.csv").exists() && !run.join("checkpoint.bin").exists());
        assert_eq!(std::fs::read(run.join("probe.csv")).unwrap(), probe);
    };
    let result = std::panic::catch_unwind(r);
    let _ = Command::new("umount").arg(&d).status();
    std::fs::remove_dir_all(&d).ok();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// Counts and values a run's arithmetic cannot carry are refused before the run, naming
/// the key: 1001 probes, 33 poles in one material, eps_r = 1e300, a Drude f_p = 1e-300,
/// sigma = 1e300, a mesh in units of 1e70 (before: NaN after the setup, "reduce --cfl").
#[test]
fn counts_and_extreme_values_are_refused_before_the_run() {
    let dir = tmp("extreme");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("mesh = \"bundled:coarse\"\nbackend = \"cpu\"\nsteps = 200\n{text}"),
        )
        .unwrap();
        p
    };
    let poles: Vec<String> = (0..33)
        .map(|_| "{ delta_eps = 1.0, f_0 = 1e9, delta = 1e7 }".to_string())
        .collect();
    let many = cfg(
        "poles.toml",
        &format!(
            "[materials.vacuum]\neps_r = 1\nlorentz = [{}]\n",
            poles.join(", ")
        ),
    );
    let drude = cfg(
        "drude.toml",
        "[materials.vacuum]\neps_r = 1\ndrude = [{ f_p = 1e-300, gamma = 0 }]\n",
    );
    let huge = dir.join("huge.msh");
    std::fs::write(
        &huge,
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1e70 0 0\n3 0 1e70 0\n4 0 0 1e70\n$EndNodes\n$Elements\n1\n1 4 2 1 1 1 2 3 4\n$EndElements\n",
    )
    .unwrap();
    let probes: Vec<String> = (0..1001)
        .flat_map(|i| {
            [
                "--probe".to_string(),
                format!("0.1,0.1,{}", 0.001 * i as f64),
            ]
        })
        .collect();
    let out = dir.join("o");
    let base = ["resonator", "--backend", "cpu", "--quiet", "--steps", "200"];
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (
            [&base[..], &["--mesh", "bundled:coarse"]]
                .concat()
                .iter()
                .map(|s| s.to_string())
                .chain(probes)
                .collect(),
            vec!["invalid probe = 1001 points", "at most 1000"],
        ),
        (
            vec![
                "resonator".into(),
                "--config".into(),
                many.display().to_string(),
            ],
            vec!["materials.vacuum", "33 poles", "memory"],
        ),
        (
            vec![
                "resonator".into(),
                "--config".into(),
                drude.display().to_string(),
            ],
            vec!["invalid f_p = 1e-300", "material vacuum"],
        ),
        (
            [
                &base[..],
                &["--mesh", "bundled:coarse", "--material", "vacuum=1e300"],
            ]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .collect(),
            vec!["invalid eps_r = 1e300", "material vacuum"],
        ),
        (
            [
                &base[..],
                &["--mesh", "bundled:coarse", "--material", "vacuum=1,1,1e300"],
            ]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .collect(),
            vec!["invalid sigma = 1e300", "pec wall"],
        ),
        (
            [&base[..], &["--mesh", huge.to_str().unwrap()]]
                .concat()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            vec!["huge.msh", "the mesh spans 1.000e70 m", "rescale"],
        ),
    ];
    for (args, want) in cases {
        let o = output_within(dgatd().args(&args).arg("--out").arg(&out), 60);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{want:?}: {err}");
        for w in want {
            assert!(err.contains(w), "{w:?} not in: {err}");
        }
        assert!(!out.join("probe.csv").exists());
    }
    std::fs::remove_dir_all(&dir).ok();
}
