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
    crate::bin::scratch("rel7", name)
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

/// Waits (up to `secs`) for `needle` in the file `p`.
fn wait_for(p: &Path, needle: &str, secs: u64) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed().as_secs() < secs {
        if std::fs::read_to_string(p).is_ok_and(|s| s.contains(needle)) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// Round five, sig-454: SIGUSR1 (and SIGUSR2, SIGXCPU), which batch schedulers send
/// before they end a job, killed the run by their default action, without a checkpoint.
/// Now they save it like SIGTERM: checkpoint and probe.csv, exit 130.
#[test]
fn scheduler_warning_signals_save_the_run() {
    for sig in ["USR1", "XCPU"] {
        let dir = tmp(&format!("sig{sig}"));
        let out = dir.join("out");
        let log = dir.join("stderr.txt");
        let mut child = dgatd()
            .args([
                "resonator",
                "--backend",
                "cpu",
                "--box",
                "6,6,6",
                "--steps",
                "200000",
                "--checkpoint-minutes",
                "0",
            ])
            .arg("--out")
            .arg(&out)
            .stderr(std::fs::File::create(&log).unwrap())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        assert!(wait_for(&log, "] step ", 120), "no step logged");
        let k = Command::new("kill")
            .args([format!("-{sig}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(k.success());
        let status = child.wait().unwrap();
        let err = std::fs::read_to_string(&log).unwrap();
        assert_eq!(status.code(), Some(130), "SIG{sig}: {status:?}: {err}");
        assert!(
            out.join("checkpoint.bin").is_file(),
            "SIG{sig}: no checkpoint"
        );
        assert!(out.join("probe.csv").is_file(), "SIG{sig}: no probe.csv");
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// Nodes and 6 Kuhn tets of the unit cube, as MSH 2.2 with a volume group and the
/// boundary triangles in a surface group; `extra` goes after `$EndElements`.
fn cube22(extra: &str) -> String {
    let nodes = [
        [0., 0., 0.],
        [1., 0., 0.],
        [0., 1., 0.],
        [1., 1., 0.],
        [0., 0., 1.],
        [1., 0., 1.],
        [0., 1., 1.],
        [1., 1., 1.],
    ];
    // Kuhn tets of the cube (node 1 to node 8 along each axis order)
    let tets = [
        [1, 2, 4, 8],
        [1, 2, 6, 8],
        [1, 3, 4, 8],
        [1, 3, 7, 8],
        [1, 5, 6, 8],
        [1, 5, 7, 8],
    ];
    let mut s = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n");
    s += "$PhysicalNames\n2\n3 1 \"air\"\n2 2 \"wall\"\n$EndPhysicalNames\n";
    s += &format!("$Nodes\n{}\n", nodes.len());
    for (i, p) in nodes.iter().enumerate() {
        s += &format!("{} {} {} {}\n", i + 1, p[0], p[1], p[2]);
    }
    s += "$EndNodes\n";
    s += &format!("$Elements\n{}\n", tets.len());
    for (i, t) in tets.iter().enumerate() {
        s += &format!("{} 4 2 1 1 {} {} {} {}\n", i + 1, t[0], t[1], t[2], t[3]);
    }
    s += "$EndElements\n";
    s + extra
}

/// Round five, m22-036 and gm-111: a `$Periodic` section (Gmsh's periodic surfaces) was
/// skipped like a comment, so the periodic faces ran as PEC walls without a word; now a
/// warning names the line and what the faces are. An empty one says nothing.
#[test]
fn a_periodic_section_is_named_in_a_warning() {
    let dir = tmp("periodic");
    let p = dir.join("p.msh");
    std::fs::write(&p, cube22("$Periodic\n1\n2 1 2\n1\n1 2\n$EndPeriodic\n")).unwrap();
    let o = dgatd().arg("mesh-info").arg(&p).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("warning:")
            && l.contains("p.msh")
            && l.contains("line ")
            && l.contains("$Periodic")
            && l.contains("walls")),
        "no warning: {err}"
    );
    std::fs::write(&p, cube22("$Periodic\n0\n$EndPeriodic\n")).unwrap();
    let o = dgatd().arg("mesh-info").arg(&p).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success() && !err.contains("$Periodic"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Round five, gm-112/113 and m22-033: a Gmsh partitioned mesh was refused as "an element
/// block of entity 29 (dimension 1), which $Entities does not define" (its partition
/// entities), and a second `$MeshFormat` (two files pasted together) was skipped. Both
/// are named now.
#[test]
fn partitioned_and_concatenated_meshes_are_named() {
    let dir = tmp("partitioned");
    let p = dir.join("p.msh");
    let body = cube22("");
    let part = body.replacen(
        "$Nodes",
        "$PartitionedEntities\n2\n0\n0 0 0 0\n$EndPartitionedEntities\n$Nodes",
        1,
    );
    std::fs::write(&p, part).unwrap();
    let o = dgatd().arg("mesh-info").arg(&p).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("p.msh")
            && err.contains("line ")
            && err.contains("partitioned mesh ($PartitionedEntities)"),
        "{err}"
    );
    let twice = format!("{body}{}", body.replace("2.2 0 8", "4.1 0 8"));
    std::fs::write(&p, twice).unwrap();
    let o = dgatd().arg("mesh-info").arg(&p).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("line ") && err.contains("a second $MeshFormat"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `dgatd BOX extra --out DIR` must exit 0 with a warning line holding every needle.
fn warned(name: &str, extra: &[&str], needles: &[&str]) {
    let dir = tmp(name);
    let o = dgatd()
        .args(BOX)
        .args(extra)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{extra:?}: {err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("warning:") && needles.iter().all(|n| l.contains(n))),
        "{extra:?}: no warning with {needles:?} in: {err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Round five, cli-300/cfg-185/cfg-291 and cli-311/cfg-206: `--time` beside `--steps` (the
/// step count wins) and a `--partitioner` on one process with one GPU were dropped
/// without a word.
#[test]
fn time_beside_steps_and_a_lone_partitioner_are_named() {
    warned("time", &["--time", "1e-8"], &["time = ", "--steps"]);
    warned(
        "partitioner",
        &["--partitioner", "rcb"],
        &["partitioner = \"rcb\"", "one process"],
    );
}

/// Round five, cli-395/396/400 and cli-316: a single-valued flag given twice (`--steps 40
/// --steps 60`: the last wins) and a probe point given twice ran without a word.
#[test]
fn repeated_flags_and_probes_are_named() {
    warned(
        "repeated",
        &["--steps", "30"],
        &["--steps is given 2 times", "last value"],
    );
    warned(
        "probes",
        &["--probe", "0.3,0.3,0.3", "--probe", "0.3,0.3,0.3"],
        &["probe [0.3, 0.3, 0.3]", "2 times"],
    );
}

/// Round five, cfg-192/193 and cli-324/325: a direction whose length underflows
/// (`1e-310,0,0`) or overflows (`1e308,1e308,0`) was refused as "must be a non-zero
/// finite vector", which it is; the message now says what fails.
#[test]
fn a_direction_whose_length_fails_says_so() {
    for d in ["1e-310,0,0", "1e308,1e308,0"] {
        let dir = tmp("dir");
        let o = dgatd()
            .args(BOX)
            .args(["--source-dir", d, "--out"])
            .arg(dir.join("out"))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{d}: {err}");
        assert!(
            err.contains("invalid source direction")
                && err.contains("length underflows or overflows"),
            "{d}: {err}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// Round five, m22-047: a surface triangle listing a node twice was counted as an
/// interior face of its group; it is refused naming the line and the triangle.
#[test]
fn a_degenerate_triangle_is_refused() {
    let dir = tmp("degenerate");
    let p = dir.join("d.msh");
    let text = cube22("").replacen("$Elements\n6\n", "$Elements\n7\n7 2 2 2 2 1 1 2\n", 1);
    std::fs::write(&p, text).unwrap();
    let o = dgatd().arg("mesh-info").arg(&p).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("d.msh")
            && err.contains("line ")
            && err.contains("triangle 7 lists a node twice"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Round five, rep-562: a bench CSV with its header only was refused as "invalid report =
/// inputs: the CSV files hold no rows", naming no file.
#[test]
fn a_report_of_headers_only_names_the_files() {
    let dir = tmp("report");
    let p = dir.join("empty_bench.csv");
    std::fs::write(
        &p,
        "timestamp,commit,host,platform,device,driver,precision,kernel,variant,tets,dofs,reps,median_s,min_s,max_s,bytes_model,gbs,frac_copy_bw,gdofs_per_s,flops_model,gflops,frac_roof\n",
    )
    .unwrap();
    let o = dgatd()
        .arg("report")
        .arg("--out")
        .arg(dir.join("out"))
        .arg(&p)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("empty_bench.csv") && err.contains("no rows"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Round five, bench-547..550: under a 4 GiB address-space limit, `bench` on PoCL (a CPU
/// OpenCL device) aborted in PoCL's allocator (SIGABRT): its default stream probe of 134M
/// doubles needs 4.3 GB of host memory there. The default is now fitted to the memory
/// available. Skipped where OpenCL lists no device.
#[test]
fn a_default_bench_fits_an_address_space_limit() {
    let listed = dgatd().arg("devices").output().unwrap();
    let text = String::from_utf8_lossy(&listed.stdout).to_lowercase();
    if !listed.status.success() || !text.contains("default: ") {
        eprintln!("SKIPPED: no OpenCL device listed");
        return;
    }
    let dir = tmp("bench");
    let out = dir.join("out");
    let o = limited(
        4 << 20,
        &[
            "bench",
            "--devices",
            "0",
            "--no-cpu",
            "--sizes",
            "1e3",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--precision",
            "f64",
            "--dg-orders",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{:?}: {err}", o.status);
    assert!(out.join("bench.csv").is_file());
    std::fs::remove_dir_all(&dir).ok();
}

/// Round five, bench-552/553 and bench-522/535/540: `bench --reps 1e9` aborted
/// allocating its timings and `--warmup 1e9` ran on without end; `--sizes -1e3`,
/// `--csr-max-tets -1` and `--dispersion -1` were taken for flags ("unexpected argument
/// '-1'"). The counts are bounded and the negative values are the flags' values.
#[test]
fn bench_counts_are_bounded_and_negative_values_named() {
    let dir = tmp("benchflags");
    let base = [
        "bench",
        "--devices",
        "none",
        "--sizes",
        "1e3",
        "--precision",
        "f64",
        "--dg-orders",
        "1",
    ];
    for (extra, needle) in [
        (
            ["--reps", "1000000000"],
            "invalid reps = 1000000000: at most 100000",
        ),
        (
            ["--warmup", "1000000000"],
            "invalid warmup = 1000000000: at most 100000",
        ),
        (["--csr-max-tets", "-1"], "invalid csr-max-tets = -1"),
        (["--dispersion", "-1"], "invalid dispersion = -1"),
        (["--stream-elems", "-5"], "invalid stream-elems = -5"),
    ] {
        let t = std::time::Instant::now();
        let o = dgatd()
            .args(base)
            .args(extra)
            .arg("--out")
            .arg(dir.join("out"))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {err}");
        assert!(err.contains(needle), "{extra:?}: {needle:?} not in {err}");
        assert!(t.elapsed().as_secs() < 10, "{extra:?}: {:?}", t.elapsed());
    }
    let o = dgatd()
        .args(["bench", "--devices", "none", "--sizes", "-1e3", "--out"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("invalid sizes = -1e3"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Round five, bench-549: `bench --devices ''` (or an empty item, `0,`) benched the first
/// OpenCL device without a word; it is refused naming the flag.
#[test]
fn an_empty_bench_device_is_refused() {
    let dir = tmp("benchdev");
    for d in ["", "0,"] {
        let o = dgatd()
            .args([
                "bench",
                "--sizes",
                "1e3",
                "--reps",
                "1",
                "--devices",
                d,
                "--out",
            ])
            .arg(dir.join("out"))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{d:?}: {err}");
        assert!(
            err.contains("invalid devices = ") && err.contains("an empty device name"),
            "{d:?}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--converge` whose finest level cannot be held is refused before the first level runs
/// (a spot check after round five: `--converge 4 --refine 3` ran the 1.3M-tet level for
/// minutes before the 5.5e9-tet one could fail).
#[test]
fn a_ladder_too_fine_to_hold_is_refused_before_it_runs() {
    let out = tmp("ladder_too_fine");
    let t0 = std::time::Instant::now();
    let o = dgatd()
        .args(["resonator", "--mesh", "bundled:coarse", "--backend", "cpu"])
        .args(["--converge", "4", "--refine", "3", "--time", "1e-8"])
        .args(["--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("converge") && e.contains("tetrahedra"), "{e}");
    assert!(!e.contains("level 1 of 5"), "a level ran first: {e}");
    assert!(t0.elapsed().as_secs() < 20, "took {:?}", t0.elapsed());
}
