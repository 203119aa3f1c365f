//! Reliability of the command line, round four (issue 47,
//! `results/reliability_round4/README.md`): signals after the last step and during a
//! pending save, `--resume` into a used folder, older `previous/` folders, links in a
//! report folder, two benches on one folder, records too long for memory, huge lock files,
//! hostile report CSVs. Each case checks the exit status, the message and what is left on
//! disk.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-rel4-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    d
}

use crate::bin::{dgatd, stderr};

/// Runs `c` to its end, failing the test (and killing it) past `secs` seconds.
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

fn kill(sig: &str, child: &Child) {
    let st = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

/// Starts a logged (not `--quiet`) run and returns it with its stderr so far, once a line
/// of its log contains `until`; the rest of the log is collected by a thread.
fn started_until_logged(args: &[&str], until: &str) -> (Child, std::sync::mpsc::Receiver<String>) {
    let mut child = dgatd()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (seen_tx, seen_rx) = std::sync::mpsc::channel();
    let until = until.to_string();
    std::thread::spawn(move || {
        let mut all = String::new();
        let mut told = false;
        for line in std::io::BufReader::new(err).lines().map_while(|l| l.ok()) {
            all += &line;
            all.push('\n');
            if !told && line.contains(&until) {
                told = true;
                let _ = seen_tx.send(());
            }
        }
        let _ = tx.send(all);
    });
    if seen_rx.recv_timeout(Duration::from_secs(300)).is_err() {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &child.id().to_string()])
            .status();
        panic!("the run never logged {:?}: {:?}", args, rx.recv().ok());
    }
    (child, rx)
}

/// fault-501/502: a signal right after the last step, while `probe.csv` is being written,
/// used to exit at once, leaving no record, saying "the probe record is in probe.csv". The
/// run now writes the record, then stops (130), saying where it is; the file is complete.
#[cfg(unix)]
#[test]
fn a_signal_after_the_last_step_waits_for_the_record() {
    let dir = tmp("after-last-step");
    let out = dir.to_str().unwrap();
    let steps = "300000";
    let (child, log) = started_until_logged(
        &[
            "resonator",
            "--box",
            "2,2,2",
            "--backend",
            "cpu",
            "--steps",
            steps,
            "--energy-checks",
            "0",
            "--out",
            out,
        ],
        &format!("step {steps} of {steps}"),
    );
    kill("-TERM", &child);
    let mut child = child;
    let st = child.wait().unwrap();
    let err = log.recv().unwrap();
    assert_eq!(st.code(), Some(130), "{err}");
    let rows = std::fs::read_to_string(dir.join("probe.csv"))
        .unwrap_or_else(|e| panic!("no probe.csv ({e}); the run said:\n{err}"))
        .lines()
        .count();
    assert_eq!(rows, 300001, "{err}");
    assert!(err.contains("probe.csv"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// fault-497/498: a second signal more than a second after the first, before the run's
/// next look at the flag (every 256 steps: seconds on a large mesh), used to exit without
/// saving. Later signals are now ignored until the save is done: the run saves its
/// checkpoint and the probe data and exits with 130.
#[cfg(unix)]
#[test]
fn a_second_signal_while_the_save_is_pending_does_not_lose_it() {
    let dir = tmp("second-signal");
    let out = dir.to_str().unwrap();
    // a mesh on which 256 steps of a debug build take several seconds
    let (mut child, log) = started_until_logged(
        &[
            "resonator",
            "--box",
            "14,14,14",
            "--backend",
            "cpu",
            "--steps",
            "5000",
            "--energy-checks",
            "0",
            "--checkpoint-steps",
            "256",
            "--out",
            out,
        ],
        "setting up the stepper",
    );
    // in the time loop once its first checkpoint is there; the next look at the flag is
    // 256 steps (several seconds) later
    let t0 = Instant::now();
    while !dir.join("checkpoint.bin").exists() {
        assert!(t0.elapsed() < Duration::from_secs(300), "no checkpoint");
        std::thread::sleep(Duration::from_millis(20));
    }
    kill("-TERM", &child);
    std::thread::sleep(Duration::from_millis(1200));
    kill("-TERM", &child);
    let st = child.wait().unwrap();
    let err = log.recv().unwrap();
    assert_eq!(st.code(), Some(130), "{err}");
    assert!(!err.contains("exiting without saving"), "{err}");
    assert!(dir.join("probe.csv").exists(), "{err}");
    assert!(dir.join("checkpoint.bin").exists(), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A short CPU run into `out` (a few seconds).
fn short(out: &Path) -> Command {
    let mut c = dgatd();
    c.args([
        "resonator",
        "--box",
        "4,4,4",
        "--backend",
        "cpu",
        "--steps",
        "2000",
        "--fmax",
        "4e8",
        "--quiet",
    ])
    .arg("--out")
    .arg(out);
    c
}

/// fault-515/516: `--resume A --out B` used to write into B without a new run's checks,
/// replacing B's finished outputs and deleting B's own checkpoint. B is now met as by a new
/// run: its outputs are moved to B/previous/, and a checkpoint there is refused.
#[test]
fn a_resume_into_a_used_folder_keeps_its_files() {
    let dir = tmp("resume-into-used");
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    // a: a run stopped at step 1000 (a lost device), with its checkpoint
    let o = output_within(
        short(&a)
            .args(["--checkpoint-steps", "256"])
            .env("DGATD_FAULT_AT_STEP", "1000"),
        300,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(a.join("checkpoint.bin").exists(), "{}", stderr(&o));
    // b: a finished run
    let o = output_within(short(&b).args(["--seed", "3"]), 300);
    assert!(o.status.success(), "{}", stderr(&o));
    let modes = std::fs::read(b.join("modes.csv")).unwrap();
    let o = output_within(
        dgatd()
            .arg("resonator")
            .arg("--resume")
            .arg(&a)
            .arg("--out")
            .arg(&b),
        300,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("previous"), "{}", stderr(&o));
    assert_eq!(std::fs::read(b.join("previous/modes.csv")).unwrap(), modes);
    // c: holds a checkpoint of its own, which a resume of a into c would have replaced
    std::fs::create_dir_all(&c).unwrap();
    std::fs::write(c.join("checkpoint.bin"), b"not a but mine").unwrap();
    let o = output_within(
        dgatd()
            .arg("resonator")
            .arg("--resume")
            .arg(&a)
            .arg("--out")
            .arg(&c),
        300,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("checkpoint"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(c.join("checkpoint.bin")).unwrap(),
        b"not a but mine"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// One bench CSV row of the 22 documented columns.
fn bench_row(tets: &str, dofs: &str, median: &str) -> String {
    format!(
        "2026-12-01T00:00:00Z,abc,host,NVIDIA CUDA,GPU,1,f64,step,tet+factored,{tets},{dofs},3,{median},{median},{median},1e6,100,0.5,1,1e6,1,0.1"
    )
}

const BENCH_HEAD: &str = "timestamp,commit,host,platform,device,driver,precision,kernel,variant,tets,dofs,reps,median_s,min_s,max_s,bytes_model,gbs,frac_copy_bw,gdofs_per_s,flops_model,gflops,frac_roof";

/// A valid bench CSV of two step rows.
fn good_csv(path: &Path) {
    std::fs::write(
        path,
        format!(
            "{BENCH_HEAD}\n{}\n{}\n",
            bench_row("1000", "6000", "1e-3"),
            bench_row("2000", "12000", "2e-3")
        ),
    )
    .unwrap();
}

/// report-619: the plots were drawn through a link at their name in `--out`, overwriting
/// the link's target; each is now made afresh and renamed over the link.
#[cfg(unix)]
#[test]
fn report_writes_no_plot_through_a_link() {
    let dir = tmp("report-link");
    let rep = dir.join("rep");
    std::fs::create_dir_all(&rep).unwrap();
    let victim = dir.join("victim.png");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, rep.join("step_time.png")).unwrap();
    std::os::unix::fs::symlink(&victim, rep.join("step_time.svg")).unwrap();
    let csv = dir.join("r.csv");
    good_csv(&csv);
    let o = output_within(dgatd().arg("report").arg("--out").arg(&rep).arg(&csv), 120);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    for n in ["step_time.png", "step_time.svg"] {
        let m = std::fs::symlink_metadata(rep.join(n)).unwrap();
        assert!(m.is_file() && m.len() > 100, "{n}: {m:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// report-602 and report-616: a denormal (5e-324) on a log axis made the plot hang; a field
/// of gigabytes was buffered whole. Both are refused, naming the file and where.
#[test]
fn report_refuses_denormals_and_endless_lines() {
    let dir = tmp("report-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("denormal.csv");
    std::fs::write(
        &csv,
        format!(
            "{BENCH_HEAD}\n{}\n{}\n",
            bench_row("1000", "6000", "1e-3"),
            bench_row("2000", "5e-324", "2e-3")
        ),
    )
    .unwrap();
    let o = output_within(
        dgatd()
            .arg("report")
            .arg("--out")
            .arg(dir.join("o1"))
            .arg(&csv),
        60,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("denormal.csv") && err.contains("line 3") && err.contains("dofs"),
        "{err}"
    );
    // the header, one row, then 2 GiB of NUL bytes (sparse)
    let csv = dir.join("long.csv");
    std::fs::write(
        &csv,
        format!("{BENCH_HEAD}\n{}\n", bench_row("1000", "6000", "1e-3")),
    )
    .unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&csv).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    let o = output_within(
        dgatd()
            .arg("report")
            .arg("--out")
            .arg(dir.join("o2"))
            .arg(&csv),
        60,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("long.csv") && err.contains("line 3") && err.contains("longer than"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// bench-591: a second bench on the same --out removed the first one's
/// bench.csv.partial, and the first failed at its end, its rows lost. The folder is locked
/// now: the second is refused naming the first, which completes.
#[test]
fn a_second_bench_on_one_folder_is_refused() {
    let dir = tmp("two-benches");
    let args = [
        "bench",
        "--devices",
        "none",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--dg-orders",
        "",
        "--precision",
        "f64",
        "--sizes",
        "1e3,3e4",
    ];
    let first = dgatd()
        .args(args)
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !dir.join("bench.csv.partial").exists() {
        assert!(t0.elapsed() < Duration::from_secs(120), "no partial file");
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = output_within(
        dgatd().args(&args[..12]).args(["1e3", "--out"]).arg(&dir),
        120,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("another dgatd run"), "{err}");
    let o = first.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = std::fs::read_to_string(dir.join("bench.csv")).unwrap();
    assert!(rows.lines().count() > 2, "{rows}");
    std::fs::remove_dir_all(&dir).ok();
}
