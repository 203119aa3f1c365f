//! `mpirun -np P dgatd resonator …` on the program itself (feature `mpi`): the partitioned
//! run's outputs against the one-process run of the same flags.
//!
//! Bounds: `probe.csv` holds 13 significant digits, so two runs that agree to round-off
//! differ there by at most ~1e-12 relative. The CPU partitioned time loop is bit for bit the
//! one-process loop (module doc of `dgatd::partition`) and Δt comes from the distributed
//! power iteration, whose global sums are added in another order (ρ, hence Δt, agree to
//! ~1e-15): bound 1e-10 on the 2-norm of the whole record (measured: 0 at 13 digits). PoCL
//! ranks differ from the CPU by contraction and summation order inside kernels (a few ulps
//! per step): the same 1e-10 in f64 (measured ~4e-14). Mode lists: the same number of modes,
//! frequencies within 1e-5 relative (harminv on a short record amplifies the record's
//! round-off: measured 5e-7 between CPU and PoCL).
//!
//! Skips (saying so) without mpirun, fails then if `DGATD_REQUIRE_MPI=1`; the PoCL case
//! skips without an OpenCL device unless `DGATD_REQUIRE_OPENCL=1`.
//! Run: `cargo test --release --features mpi --test mpi mpi_cli::`.
#![cfg(feature = "mpi")]

use dgatd::internal::Rng;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_dgatd");

fn have_mpirun() -> bool {
    let found = Command::new("mpirun").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var("DGATD_REQUIRE_MPI").as_deref() != Ok("1"),
            "DGATD_REQUIRE_MPI=1 but mpirun was not found (apt-get install openmpi-bin libopenmpi-dev)"
        );
        eprintln!("\n*** SKIPPED: mpirun not found; the MPI command-line test did not run ***\n");
    }
    found
}

/// `mpirun`'s options before the first `-np`.
fn mpirun_options() -> Vec<&'static str> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let mut o = if root {
        vec!["--allow-run-as-root"]
    } else {
        vec![]
    };
    o.push("--oversubscribe");
    o
}

fn mpirun(np: usize) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args(mpirun_options());
    cmd.args(["-np", &np.to_string(), BIN]);
    cmd.env("RAYON_NUM_THREADS", "1");
    cmd
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-mpicli-{}-{name}", std::process::id()));
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

/// The flags of a small resonator run on a box of seeded random size, with `n_probes`
/// probes at seeded random points.
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
        // the band of 2.2 c / L: these coarse boxes resolve less (solver::defaults), and
        // the comparison needs lines
        "--fmax".into(),
        format!(
            "{:e}",
            2.2 * 299_792_458.0 / l.iter().cloned().fold(0.0, f64::max)
        ),
    ];
    for _ in 0..n_probes {
        let p: Vec<f64> = (0..3).map(|c| l[c] * u(0.1, 0.9)).collect();
        f.push("--probe".into());
        f.push(format!("{},{},{}", p[0], p[1], p[2]));
    }
    f
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
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    assert!(n > 0.0, "all-zero record");
    d / n
}

fn run_one(args: &[String], out: &Path) -> String {
    let o = Command::new(BIN)
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let l = log(&o);
    assert!(o.status.success(), "one process failed:\n{l}");
    l
}

fn run_np(np: usize, args: &[String], out: &Path) -> String {
    let o = mpirun(np)
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let l = log(&o);
    assert!(o.status.success(), "mpirun -np {np} failed:\n{l}");
    l
}

fn compare(one: &Path, many: &Path, what: &str) {
    let e = rel(&probe_record(one), &probe_record(many));
    eprintln!("{what}: probe record relative difference {e:e}");
    assert!(e < 1e-10, "{what}: {e:e}");
    let (a, b) = (modes(one), modes(many));
    assert!(!a.is_empty(), "{what}: no modes");
    assert_eq!(a.len(), b.len(), "{what}: mode lists {a:?} vs {b:?}");
    for (x, y) in a.iter().zip(&b) {
        assert!(((x - y) / x).abs() < 1e-5, "{what}: {x} vs {y}");
    }
}

#[test]
fn resonator_on_2_and_3_cpu_ranks_equals_one_process() {
    if !have_mpirun() {
        return;
    }
    // three probes on 2 ranks; one probe on 3 ranks (two ranks own no probe)
    for (np, seed, probes) in [(2, 11, 3), (3, 12, 1)] {
        let mut args = flags(seed, probes, 600);
        args.extend(["--backend".into(), "cpu".into()]);
        let (one, many) = (tmp(&format!("cpu1-{np}")), tmp(&format!("cpu{np}")));
        run_one(&args, &one);
        let l = run_np(np, &args, &many);
        // "partition: NAME in T s, P ranks, ..." (the partitioner and its time come first)
        assert!(
            l.contains("partition: ") && l.contains(&format!(" s, {np} ranks,")),
            "{l}"
        );
        assert!(l.contains(&format!("x {np} ranks")), "{l}");
        compare(&one, &many, &format!("cpu, {np} ranks, {probes} probes"));
        for d in [one, many] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// An open, lossy, dispersive problem from files (`tests/partition/open_mesh.rs`: a
/// jittered Gmsh box with absorbing walls, a graded absorbing layer, conducting regions and
/// Lorentz, Drude and Debye materials) on 2 and 3 CPU ranks against one process: the CPU
/// ranks' time loop is the one-process reference loop bit for bit, and one process steps
/// with the lean kernels (round-off, measured ~1e-14 on the record in-process), so the same
/// 1e-10 bound; the same echo estimate in `run.toml`. So do 2 OpenCL ranks (PoCL).
#[test]
fn open_lossy_dispersive_config_on_2_and_3_cpu_ranks_equals_one_process() {
    if !have_mpirun() {
        return;
    }
    let dir = tmp("open");
    let cfg = crate::open_mesh::write_open_problem(&dir, 4506, 500);
    let args: Vec<String> = vec![
        "resonator".into(),
        "--config".into(),
        cfg.display().to_string(),
        "--quiet".into(),
    ];
    let one = dir.join("one");
    run_one(&args, &one);
    let echo = |d: &Path| {
        let t = std::fs::read_to_string(d.join("run.toml")).unwrap();
        t.lines()
            .find(|l| l.trim_start().starts_with("echo_s"))
            .map(String::from)
    };
    assert!(echo(&one).is_some(), "no echo_s in run.toml");
    for np in [2, 3] {
        let many = dir.join(format!("np{np}"));
        let l = run_np(np, &args, &many);
        assert!(l.contains(&format!("x {np} ranks")), "{l}");
        let e = rel(&probe_record(&one), &probe_record(&many));
        eprintln!(
            "open lossy dispersive config, {np} CPU ranks: probe record relative difference {e:e}"
        );
        assert!(e < 1e-10, "{np} ranks: {e:e}");
        assert_eq!(echo(&one), echo(&many));
    }
    if have_opencl("the OpenCL ranks' refusal") {
        opencl_ranks_equal(&args, &[], &one, &dir.join("cl"), "open lossy dispersive");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The PML problem from files (`tests/partition/open_mesh.rs`: a box PML two cells thick
/// around a jittered core with a Lorentz and a conducting block) on 2 CPU ranks against one
/// process: the CPU ranks step the layer's magnetic correction and poles as one process
/// does (bit for bit in-process, `tests/partition/pml.rs`), so the same 1e-10 bound as the
/// open problem; both name the layer. OpenCL ranks refuse it, naming `pml`.
#[test]
fn pml_config_on_2_cpu_ranks_equals_one_process() {
    if !have_mpirun() {
        return;
    }
    let dir = tmp("pml");
    let cfg = crate::open_mesh::write_pml_problem(&dir, 4518, 400);
    let args: Vec<String> = vec![
        "resonator".into(),
        "--config".into(),
        cfg.display().to_string(),
    ];
    let one = dir.join("one");
    let l1 = run_one(&args, &one);
    let many = dir.join("np2");
    let l2 = run_np(2, &args, &many);
    assert!(l2.contains("x 2 ranks"), "{l2}");
    for l in [&l1, &l2] {
        assert!(l.contains("perfectly matched layer pml: box"), "{l}");
    }
    let e = rel(&probe_record(&one), &probe_record(&many));
    eprintln!("pml config, 2 CPU ranks: probe record relative difference {e:e}");
    assert!(e < 1e-10, "{e:e}");
    if have_opencl("the OpenCL ranks with a PML") {
        opencl_ranks_equal(&args, &["--quiet"], &one, &dir.join("cl"), "pml");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The job `args` (with `flags`) on 2 OpenCL ranks of PoCL, writing into `out`: it runs
/// (losses, poles and layers on the device parts), and its probe record equals the
/// one-process run's in `one` to 1e-10 (relative 2-norm, as the CPU ranks').
fn opencl_ranks_equal(args: &[String], flags: &[&str], one: &Path, out: &Path, what: &str) {
    let mut cl: Vec<String> = args.to_vec();
    cl.extend(flags.iter().map(|f| f.to_string()));
    cl.extend(["--backend", "opencl", "--device", POCL].map(String::from));
    let l = run_np(2, &cl, out);
    assert!(l.contains("opencl") && l.contains("x 2 ranks"), "{l}");
    let e = rel(&probe_record(one), &probe_record(out));
    eprintln!("{what}, 2 PoCL ranks: probe record relative difference {e:e}");
    assert!(e < 1e-10, "{what}, 2 PoCL ranks: {e:e}");
}

/// With no `--steps`, `--time` or `--fmax`, the partitioned run takes the record and the band
/// from the mesh by the same rule as one process (`solver::defaults`): the same number of
/// samples, the same band notice and the same modes.
#[test]
fn defaults_from_the_mesh_are_the_same_on_2_ranks() {
    if !have_mpirun() {
        return;
    }
    let mut args = flags(31, 2, 1);
    let at = args.iter().position(|a| a == "--steps").unwrap();
    args.drain(at..at + 2);
    let at = args.iter().position(|a| a == "--fmax").unwrap();
    args.drain(at..at + 2);
    args.extend(["--backend".into(), "cpu".into()]);
    let (one, many) = (tmp("defaults1"), tmp("defaults2"));
    let l1 = run_one(&args, &one);
    let l = run_np(2, &args, &many);
    let notice = |t: &str| {
        t.lines()
            .find(|l| l.contains("note: fmax ="))
            .map(str::to_string)
    };
    assert_eq!(notice(&l1), notice(&l), "band notices differ:\n{l1}\n{l}");
    let (a, b) = (probe_record(&one), probe_record(&many));
    assert_eq!(a.len(), b.len(), "record lengths differ");
    assert!(a.len() > 1000, "default record of {} values", a.len());
    compare(&one, &many, "defaults, 2 ranks");
    for d in [one, many] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Whether `dgatd devices` lists a device; skips (saying why) otherwise, a failure with
/// `DGATD_REQUIRE_OPENCL=1`.
fn have_opencl(what: &str) -> bool {
    let ok = Command::new(BIN)
        .args(["devices"])
        .output()
        .map(|o| o.status.success() && !String::from_utf8_lossy(&o.stdout).trim().is_empty())
        .unwrap_or(false);
    if !ok {
        assert!(
            std::env::var("DGATD_REQUIRE_OPENCL").as_deref() != Ok("1"),
            "DGATD_REQUIRE_OPENCL=1 but no OpenCL device"
        );
        eprintln!("\n*** SKIPPED: no OpenCL device for {what} ***\n");
    }
    ok
}

/// The PoCL ranks' device, named: several ranks are put on a CPU OpenCL device only when
/// `--device` names it.
const POCL: &str = "Portable Computing Language";

#[test]
fn resonator_on_2_pocl_ranks_equals_one_cpu_process() {
    if !have_mpirun() || !have_opencl("the PoCL ranks") {
        return;
    }
    let args = flags(21, 2, 500);
    let mut cpu = args.clone();
    cpu.extend(["--backend".into(), "cpu".into()]);
    let mut cl = args;
    cl.extend([
        "--backend".into(),
        "opencl".into(),
        "--device".into(),
        POCL.into(),
    ]);
    let (one, many) = (tmp("pocl1"), tmp("pocl2"));
    run_one(&cpu, &one);
    let l = run_np(2, &cl, &many);
    assert!(l.contains("opencl") && l.contains("x 2 ranks"), "{l}");
    compare(&one, &many, "PoCL, 2 ranks");
    for d in [one, many] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn interrupted_3_rank_run_resumes_bit_for_bit_and_refuses_2_ranks() {
    if !have_mpirun() {
        return;
    }
    let steps = 3000;
    let mut args = flags(31, 2, steps);
    args.extend([
        "--backend".into(),
        "cpu".into(),
        "--checkpoint-steps".into(),
        "250".into(),
    ]);
    // the uninterrupted run
    let full = tmp("full");
    run_np(3, &args, &full);
    // the interrupted one: SIGINT to one rank once a checkpoint exists; all ranks stop at
    // the same step (the flag is agreed), rank 0 saves
    let cut = tmp("cut");
    let mut child = mpirun(3)
        .args(&args)
        .arg("--out")
        .arg(&cut)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !cut.join("checkpoint.bin").exists() {
        assert!(t0.elapsed().as_secs() < 300, "no checkpoint after 300 s");
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ranks = Command::new("pgrep")
        .args(["-P", &child.id().to_string()])
        .output()
        .unwrap();
    let pids: Vec<String> = String::from_utf8_lossy(&ranks.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    let signalled = match pids.last() {
        Some(p) => Command::new("kill")
            .args(["-INT", p])
            .status()
            .is_ok_and(|s| s.success()),
        None => false,
    };
    let o = child.wait_with_output().unwrap();
    if !signalled || o.status.success() {
        eprintln!(
            "\n*** the run ended before it could be interrupted; the interrupt part did not run ***\n"
        );
    } else {
        let l = log(&o);
        assert!(l.contains("interrupt"), "{l}");
        assert!(cut.join("checkpoint.bin").exists(), "{l}");
        // another rank count is refused, naming the one needed
        let o2 = mpirun(2)
            .args(["resonator", "--resume"])
            .arg(&cut)
            .output()
            .unwrap();
        let l2 = log(&o2);
        assert!(!o2.status.success(), "{l2}");
        assert!(
            l2.contains("3 ranks") && l2.contains("mpirun -np 3"),
            "{l2}"
        );
        // and one process too
        let o1 = Command::new(BIN)
            .args(["resonator", "--resume"])
            .arg(&cut)
            .output()
            .unwrap();
        let l1 = log(&o1);
        assert!(!o1.status.success() && l1.contains("3 ranks"), "{l1}");
        // the same rank count continues, bit for bit
        let o3 = mpirun(3)
            .args(["resonator", "--resume"])
            .arg(&cut)
            .output()
            .unwrap();
        assert!(o3.status.success(), "{}", log(&o3));
        let (a, b) = (
            std::fs::read_to_string(full.join("probe.csv")).unwrap(),
            std::fs::read_to_string(cut.join("probe.csv")).unwrap(),
        );
        assert!(
            a == b,
            "resumed probe.csv differs from the uninterrupted run"
        );
        assert_eq!(a.lines().count(), steps + 1);
    }
    for d in [full, cut] {
        let _ = std::fs::remove_dir_all(d);
    }
}

// ---- device discovery: ranks that find their GPUs, or say why not ----

/// Whether this machine's OpenCL lists a GPU (the no-GPU cases below need a machine without).
fn sees_a_gpu() -> bool {
    Command::new(BIN)
        .args(["devices"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .skip(1)
                .any(|l| l.split_whitespace().nth(1) == Some("GPU"))
        })
        .unwrap_or(false)
}

/// A folder for `OCL_ICD_VENDORS` with a copy of PoCL's `.icd` file from
/// `/etc/OpenCL/vendors` and the `extra` files (name, contents); None when there is no PoCL
/// ICD to copy.
fn icd_dir(name: &str, extra: &[(&str, &str)]) -> Option<PathBuf> {
    let d = tmp(name);
    std::fs::create_dir_all(&d).unwrap();
    let mut found = false;
    for e in std::fs::read_dir("/etc/OpenCL/vendors").ok()?.flatten() {
        let p = e.path();
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        if p.extension().is_some_and(|x| x == "icd") && text.contains("pocl") {
            std::fs::write(d.join(e.file_name()), text).unwrap();
            found = true;
        }
    }
    for (f, t) in extra {
        std::fs::write(d.join(f), format!("{t}\n")).unwrap();
    }
    found.then_some(d)
}

/// The no-GPU cases' preconditions: mpirun, an OpenCL device, no GPU, PoCL's ICD.
fn no_gpu_machine(what: &str) -> bool {
    if !have_mpirun() || !have_opencl(what) {
        return false;
    }
    if sees_a_gpu() {
        eprintln!("\n*** SKIPPED: {what} needs a machine whose OpenCL shows no GPU ***\n");
        return false;
    }
    // a folder of its own per call: the tests that call this run in parallel, and a shared
    // one was removed by one test while another wrote into it
    static PROBES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if icd_dir(&format!("probe-icd-{n}"), &[]).is_none() {
        assert!(
            std::env::var("DGATD_REQUIRE_OPENCL").as_deref() != Ok("1"),
            "DGATD_REQUIRE_OPENCL=1 but no PoCL .icd file in /etc/OpenCL/vendors"
        );
        eprintln!("\n*** SKIPPED: no PoCL .icd file in /etc/OpenCL/vendors for {what} ***\n");
        return false;
    }
    true
}

/// `mpirun` with one rank per entry of `envs`, rank i started as `env K=V… BIN args`
/// (MPMD), so that each rank has its own OpenCL loader environment.
fn mpmd(envs: &[Vec<(&str, String)>], args: &[String], out: &Path) -> Output {
    let mut line: Vec<String> = mpirun_options().into_iter().map(String::from).collect();
    for (i, env) in envs.iter().enumerate() {
        if i > 0 {
            line.push(":".into());
        }
        line.extend(["-np".into(), "1".into(), "env".into()]);
        line.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        line.push(BIN.into());
        line.extend(args.iter().cloned());
        line.push("--out".into());
        line.push(out.display().to_string());
    }
    Command::new("mpirun")
        .args(line)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap()
}

/// The run failed, and its output holds each of `needles` (exactly one copy of `once`).
fn stopped_with(o: &Output, once: &str, needles: &[&str]) -> String {
    let l = log(o);
    assert!(!o.status.success(), "the run should have stopped:\n{l}");
    assert_eq!(
        l.matches(once).count(),
        1,
        "{once:?} not printed once:\n{l}"
    );
    for n in needles {
        assert!(l.contains(n), "{n:?} missing from:\n{l}");
    }
    l
}

fn with_backend(seed: u64, backend: &[&str]) -> Vec<String> {
    let mut a = flags(seed, 1, 60);
    a.extend(["--backend".to_string()]);
    a.extend(backend.iter().map(|s| s.to_string()));
    a
}

/// `--backend opencl` on 2 ranks of a machine without GPUs stops (it would put both on
/// PoCL silently): rank 0 prints each rank, what it sees, the loader's environment and the
/// recipe, once; nothing is written.
#[test]
fn opencl_ranks_that_see_no_gpu_stop_and_name_the_fix() {
    if !no_gpu_machine("the no-GPU ranks") {
        return;
    }
    let out = tmp("nogpu");
    let o = mpirun(2)
        .args(with_backend(41, &["opencl"]))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    stopped_with(
        &o,
        "--backend opencl on 2 ranks runs every rank on a GPU",
        &[
            "rank 0 (host ",
            "rank 1 (host ",
            "node rank 1) sees Portable Computing Language: #0 CPU",
            "OCL_ICD_FILENAMES",
            "OCL_ICD_VENDORS",
            "export OCL_ICD_FILENAMES=libnvidia-opencl.so.1, then mpirun -x OCL_ICD_FILENAMES",
            "--device NAME|INDEX",
        ],
    );
    assert!(!out.join("probe.csv").exists());
    let _ = std::fs::remove_dir_all(out);
}

/// Oclgrind reports itself as a GPU: rank 0 sees it (and PoCL), rank 1 only PoCL. With
/// `opencl` and with `auto` the run stops, naming rank 1 and what it sees, and the GPU rank
/// 0 sees.
#[test]
fn a_rank_that_sees_no_gpu_where_another_does_stops_the_run() {
    if !no_gpu_machine("the GPU/no-GPU ranks") {
        return;
    }
    let icd = std::env::var("OCLGRIND_ICD")
        .unwrap_or_else(|_| "/usr/lib/oclgrind/liboclgrind-rt-icd.so".into());
    if !Path::new(&icd).exists() {
        assert!(
            std::env::var("DGATD_REQUIRE_OCLGRIND").as_deref() != Ok("1"),
            "DGATD_REQUIRE_OCLGRIND=1 but {icd} does not exist"
        );
        eprintln!("\n*** SKIPPED: Oclgrind (the stand-in GPU) not installed ***\n");
        return;
    }
    let grind = icd_dir("grind", &[("oclgrind.icd", &icd)]).unwrap();
    let plain = icd_dir("plain", &[]).unwrap();
    let envs = [
        vec![("OCL_ICD_VENDORS", grind.display().to_string())],
        vec![("OCL_ICD_VENDORS", plain.display().to_string())],
    ];
    for backend in ["opencl", "auto"] {
        let out = tmp(&format!("mixed-{backend}"));
        let o = mpmd(&envs, &with_backend(42, &[backend]), &out);
        let l = stopped_with(
            &o,
            "(while rank 0 (host",
            &[
                "  rank 1 (host ",
                "sees Portable Computing Language",
                "Oclgrind: #0 GPU Oclgrind Simulator",
                "export OCL_ICD_FILENAMES=",
            ],
        );
        assert!(
            !l.contains("\n  rank 0 (host"),
            "rank 0 is not at fault:\n{l}"
        );
        assert!(!out.join("probe.csv").exists());
        let _ = std::fs::remove_dir_all(out);
    }
    for d in [grind, plain] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// `--device` names the same device on every rank: a rank without it (here: no OpenCL
/// platform at all) stops the run, named.
#[test]
fn a_rank_without_the_named_device_stops_the_run() {
    if !no_gpu_machine("the missing-device rank") {
        return;
    }
    let empty = tmp("no-icd");
    std::fs::create_dir_all(&empty).unwrap();
    let envs = [
        vec![],
        vec![("OCL_ICD_VENDORS", empty.display().to_string())],
    ];
    let out = tmp("named");
    let o = mpmd(
        &envs,
        &with_backend(43, &["opencl", "--device", POCL]),
        &out,
    );
    let l = stopped_with(
        &o,
        &format!("--device {POCL} is not a device on every rank"),
        &[
            "  rank 1 (host ",
            "sees no OpenCL device",
            "its device: OpenCL",
        ],
    );
    assert!(
        !l.contains("\n  rank 0 (host"),
        "rank 0 is not at fault:\n{l}"
    );
    for d in [empty, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A fake `nvidia.icd` (naming a library that does not load) next to PoCL's: evidence of a
/// GPU OpenCL does not show. Two ranks that would land on PoCL stop (`auto` and `opencl`)
/// naming the evidence; `mpirun -np 1` runs as one process does, with the same warning
/// before the run; a named `--device`, or no fake ICD, gives no warning.
#[test]
fn hidden_gpus_stop_several_ranks_and_warn_one() {
    if !no_gpu_machine("the hidden-GPU ranks") {
        return;
    }
    let fake = icd_dir("fake-nv", &[("nvidia.icd", "libnvidia-opencl.so.1")]).unwrap();
    let plain = icd_dir("plain-nv", &[]).unwrap();
    let env = |d: &Path| vec![("OCL_ICD_VENDORS", d.display().to_string())];
    let evidence = format!(
        "{} names libnvidia-opencl.so.1, but no NVIDIA OpenCL platform is listed",
        fake.join("nvidia.icd").display()
    );
    for (backend, once) in [
        ("auto", "seems to have GPUs that OpenCL does not show"),
        ("opencl", "--backend opencl on 2 ranks"),
    ] {
        let out = tmp(&format!("hidden-{backend}"));
        let o = mpmd(
            &[env(&fake), env(&fake)],
            &with_backend(44, &[backend]),
            &out,
        );
        stopped_with(
            &o,
            once,
            &[
                evidence.as_str(),
                "export OCL_ICD_FILENAMES=libnvidia-opencl.so.1",
            ],
        );
        let _ = std::fs::remove_dir_all(out);
    }
    let warnings = |l: &str| -> Vec<String> {
        l.lines()
            .filter(|l| l.starts_with("warning: running on"))
            .map(String::from)
            .collect()
    };
    for (backend, warned) in [
        (vec!["opencl"], true),
        (vec!["auto"], true),
        (vec!["opencl", "--device", POCL], false),
    ] {
        let args = with_backend(45, &backend);
        for (dir, hidden) in [(&fake, true), (&plain, false)] {
            let (one, np1) = (tmp("hidden-one"), tmp("hidden-np1"));
            let o1 = Command::new(BIN)
                .args(&args)
                .arg("--out")
                .arg(&one)
                .env("OCL_ICD_VENDORS", dir)
                .output()
                .unwrap();
            let o = mpmd(&[env(dir)], &args, &np1);
            let (l1, l) = (log(&o1), log(&o));
            assert!(o1.status.success() && o.status.success(), "{l1}\n{l}");
            let (w1, w) = (warnings(&l1), warnings(&l));
            assert_eq!(w1, w, "mpirun -np 1 differs from one process");
            if warned && hidden {
                assert_eq!(w.len(), 1, "{backend:?}: no warning:\n{l}");
                for n in [
                    evidence.as_str(),
                    "CPU OpenCL device 0 (Portable Computing Language",
                    "OCL_ICD_VENDORS=",
                    "export OCL_ICD_FILENAMES=libnvidia-opencl.so.1",
                    "--device 0",
                ] {
                    assert!(w[0].contains(n), "{n:?} missing from {}", w[0]);
                }
            } else {
                assert!(w.is_empty(), "{backend:?}, hidden {hidden}: {w:?}");
            }
            assert!(np1.join("probe.csv").exists() && one.join("probe.csv").exists());
            for d in [one, np1] {
                let _ = std::fs::remove_dir_all(d);
            }
        }
    }
    for d in [fake, plain] {
        let _ = std::fs::remove_dir_all(d);
    }
}
