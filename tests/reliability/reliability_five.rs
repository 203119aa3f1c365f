//! Reliability of the command line, round four's open causes (issue 47,
//! `results/reliability_round4/README.md`, S1–S10, V1–V6, V9, A1): records that cannot show
//! a line, keys that do nothing, wall metals out of range, one group under two keys, empty
//! names and paths, negative numbers, values beyond TOML's integers, overflowing pulse and
//! loss frequencies, dangling output links, files that are no checkpoint, and a record
//! whose analysis does not fit in memory. Each case checks the exit status and that the
//! message names the key or flag and what is wrong.

use std::path::PathBuf;
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-rel5-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    d
}

use crate::bin::{dgatd, stderr};

/// The round-four reproduction's base: a CPU run on the 1 m box of 384 tets.
const BASE: [&str; 10] = [
    "resonator",
    "--backend",
    "cpu",
    "--quiet",
    "--box",
    "4,4,4",
    "--fmax",
    "4e8",
    "--steps",
    "2000",
];

/// `dgatd BASE extra --out DIR`, its output (DIR removed after).
fn run(name: &str, extra: &[&str]) -> Output {
    let dir = tmp(name);
    let o = dgatd()
        .args(BASE)
        .args(extra)
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    o
}

/// Exit 1 (an error, not a panic) and every needle in the message.
fn refused(name: &str, extra: &[&str], needles: &[&str]) {
    let o = run(name, extra);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{extra:?} accepted or crashed: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "{extra:?}: {n:?} not in: {err}");
    }
}

/// Exit 0 and a line starting with "warning:" that holds every needle.
fn warned(name: &str, extra: &[&str], needles: &[&str]) {
    let o = run(name, extra);
    let err = stderr(&o);
    assert!(o.status.success(), "{extra:?}: {err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("warning:") && needles.iter().all(|n| l.contains(n))),
        "{extra:?}: no warning with {needles:?} in: {err}"
    );
}

/// S1: a time step that underflows is refused naming dt or cfl (it ran, printing
/// `dt = 4.9407e-324 s` and a table of "not seen").
#[test]
fn a_time_step_that_underflows_is_refused() {
    refused(
        "dt",
        &["--dt", "5e-324"],
        &["invalid dt = 5e-324", "smallest normal"],
    );
    refused(
        "cfl",
        &["--cfl", "5e-324"],
        &["invalid cfl = 5e-324", "smallest normal"],
    );
}

/// S1/S2: a band below the record's resolution (`--fmax 1`) and a pulse that peaks after
/// the record's end (`--f-peak 1`) run, but a warning names the flag and why no line can
/// be seen.
#[test]
fn records_that_cannot_show_a_line_say_so() {
    warned(
        "fmax",
        &["--fmax", "1"],
        &["shorter than one period", "--fmax", "--steps"],
    );
    warned(
        "f-peak",
        &["--f-peak", "1"],
        &["after the record's end", "--f-peak"],
    );
    // the ordinary run says neither
    let o = run("plain", &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        !err.contains("shorter than one period") && !err.contains("after the record's end"),
        "{err}"
    );
}

/// S3: keys that do nothing in this run are named in a warning: `cfl` beside `dt`, `min_q`
/// with the FFT extraction, `min_prominence` with harminv, the DG `order` and `flux`
/// without `method = "dg"` (from a file, where only the flag warned), and an empty
/// material table.
#[test]
fn keys_that_do_nothing_are_named() {
    warned(
        "dt-cfl",
        &["--dt", "1e-12", "--cfl", "0.5"],
        &["cfl = 0.5", "dt"],
    );
    warned(
        "fft-minq",
        &["--extract", "fft", "--min-q", "5"],
        &["min_q = 5", "fft"],
    );
    warned(
        "harminv-prom",
        &["--min-prominence", "0.2"],
        &["min_prominence = 0.2", "harminv"],
    );
    let dir = tmp("inert-file");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("c.toml");
    std::fs::write(&cfg, "order = 2\nflux = \"central\"\n[materials.vacuum]\n").unwrap();
    let o = dgatd()
        .args(BASE)
        .arg("--config")
        .arg(&cfg)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for n in [
        "warning: order = 2",
        "warning: flux = Central",
        "warning: [materials.vacuum] sets nothing",
    ] {
        assert!(err.contains(n), "{n:?} not in: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// S4: a conductor wall's metal is range-checked like a material's (`q_wall` came out blank
/// or 0): σ above 1e12 S/m, σ too poor for the wall-loss perturbation at the band's top,
/// and μ_r outside 1e-8..1e8.
#[test]
fn conductor_wall_values_are_checked() {
    refused(
        "sigma-big",
        &["--boundary", "xmin=conductor:1e300"],
        &["invalid sigma = 1e300", "boundary xmin", "pec wall"],
    );
    refused(
        "sigma-small",
        &["--boundary", "xmin=conductor:5e-324"],
        &["invalid sigma = 5e-324", "too poor a conductor"],
    );
    refused(
        "mu-big",
        &["--boundary", "xmin=conductor:5.8e7,1e300"],
        &["invalid mu_r = 1e300", "boundary xmin"],
    );
    // copper is fine
    let o = run("copper", &["--boundary", "xmin=conductor:5.8e7"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// S6: one group under two keys (its name and its tag) is refused naming both (both were
/// kept in run.toml, and which applied was not said).
#[test]
fn one_group_under_two_keys_is_refused() {
    refused(
        "two-keys",
        &["--material", "vacuum=2", "--material", "1=3"],
        &["material", "the same volume group (tag 1)", "vacuum"],
    );
}

/// S7, S9: an empty device name (it matched the first device) and `--min-q inf` (it
/// dropped every mode) are refused naming the flag.
#[test]
fn empty_device_and_infinite_min_q_are_refused() {
    refused(
        "device",
        &["--backend", "opencl", "--device", ""],
        &["invalid device", "empty"],
    );
    refused(
        "min-q",
        &["--min-q", "inf"],
        &["invalid min-q = inf", "finite"],
    );
}

/// S8: a sphere of the cube's extents is another shape: refused by its volume.
#[test]
fn a_cavity_of_another_shape_is_refused() {
    refused(
        "sphere-on-cube",
        &["--cavity", "sphere:0.5"],
        &["cavity", "does not fit the mesh", "volume"],
    );
    let o = run("box-on-cube", &["--cavity", "box:1,1,1"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// V1: integer keys beyond TOML's i64 are refused naming the key (writing run.toml failed
/// with "u64 value was too large"), from the command line and from a file.
#[test]
fn integers_beyond_toml_name_their_key() {
    refused(
        "energy-checks",
        &["--energy-checks", "18446744073709551615"],
        &["invalid energy-checks", "2^63 - 1"],
    );
    let dir = tmp("u64-file");
    std::fs::create_dir_all(&dir).unwrap();
    for key in ["checkpoint_steps", "mode_shapes"] {
        let cfg = dir.join(format!("{key}.toml"));
        std::fs::write(&cfg, format!("{key} = 18446744073709551615\n")).unwrap();
        let o = dgatd()
            .args(BASE)
            .arg("--config")
            .arg(&cfg)
            .arg("--out")
            .arg(dir.join("o"))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        let flag = key.replace('_', "-");
        assert!(
            err.contains(&format!("invalid {flag}")) || err.contains(key),
            "{key}: {err}"
        );
        assert!(!err.contains("u64 value was too large"), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// V2: a pulse frequency or a loss tangent's frequency whose arithmetic overflows is
/// refused naming it (the run ended in NaN blamed on --cfl).
#[test]
fn overflowing_frequencies_name_their_key() {
    refused(
        "f-peak",
        &["--f-peak", "1e-300"],
        &["invalid f-peak = 1e-300", "Hz a run resolves"],
    );
    let dir = tmp("f-tan");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("c.toml");
    std::fs::write(
        &cfg,
        "[materials.vacuum]\ntan_delta = 0.01\nf_tan_delta = 1.8e308\n",
    )
    .unwrap();
    let o = dgatd()
        .args(BASE)
        .arg("--config")
        .arg(&cfg)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("f_tan_delta") && !err.contains("--cfl"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// V3: a negative number after a flag that takes a count is that flag's (bad) value, not
/// "unexpected argument '-1'".
#[test]
fn negative_numbers_are_the_flags_values() {
    for (flag, v) in [
        ("--seed", "-1"),
        ("--checkpoint-steps", "-1"),
        ("--mode-shapes", "-1"),
        ("--refine", "-1"),
        ("--box", "-3,3,3"),
    ] {
        let o = run("negative", &[flag, v]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{flag} {v}: {err}");
        assert!(!err.contains("unexpected argument"), "{flag} {v}: {err}");
        assert!(
            err.contains(flag) || err.contains(flag.trim_start_matches("--")),
            "{flag} {v}: {err}"
        );
    }
}

/// V4: an empty mesh path names the flag and says it is empty.
#[test]
fn an_empty_mesh_path_is_named() {
    let o = dgatd()
        .args(["resonator", "--backend", "cpu", "--quiet", "--mesh", ""])
        .arg("--out")
        .arg(tmp("empty-mesh"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("invalid mesh") && err.contains("empty path"),
        "{err}"
    );
    let o = dgatd().args(["mesh-info", ""]).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("empty path"), "{err}");
}

/// V5, V6: an output folder that is a dangling link says so (not "File exists"); a
/// `checkpoint.bin` that is no checkpoint is not called an earlier run's (whose suggested
/// `--resume` then failed with "bad magic").
#[cfg(unix)]
#[test]
fn dangling_links_and_garbage_checkpoints_are_described() {
    let base = tmp("links");
    std::fs::create_dir_all(&base).unwrap();
    let link = base.join("o");
    std::os::unix::fs::symlink(base.join("missing"), &link).unwrap();
    let o = dgatd().args(BASE).arg("--out").arg(&link).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("symbolic link") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!err.contains("File exists"), "{err}");
    let d = base.join("garbage");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("checkpoint.bin"), "this is not a checkpoint").unwrap();
    let o = dgatd().args(BASE).arg("--out").arg(&d).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("is not a dgatd checkpoint"), "{err}");
    assert!(!err.contains("--resume"), "{err}");
    assert!(d.join("checkpoint.bin").exists(), "the file was removed");
    std::fs::remove_dir_all(&base).ok();
}

/// A1: a record whose analysis would not fit in what the process may allocate (here an
/// address-space limit of 2 GiB, which the check used to ignore for the 21 GB the OS
/// reported) is refused before the run, naming --steps, instead of aborting in the
/// analysis after the time loop.
#[cfg(target_os = "linux")]
#[test]
fn a_record_whose_analysis_does_not_fit_is_refused_first() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no prlimit (util-linux)");
        return;
    }
    let dir = tmp("analysis-memory");
    let o = Command::new("prlimit")
        .arg(format!("--as={}", 2u64 << 30))
        .arg(crate::bin::path())
        .args([
            "resonator",
            "--box",
            "2,2,2",
            "--backend",
            "cpu",
            "--steps",
            "6000000",
            "--energy-checks",
            "0",
            "--quiet",
            "--out",
        ])
        .arg(&dir)
        .env_remove("DGATD_FAULT_AT_STEP")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("invalid steps") && err.contains("its analysis"),
        "{err}"
    );
    assert!(!dir.join("probe.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// S10 (cli-646): a `--seed` that replaces no default point (all of them lie in the mesh)
/// is named in a warning; two seeds gave the same record without a word.
#[test]
fn a_seed_that_draws_nothing_is_named() {
    warned(
        "seed-inert",
        &["--seed", "999"],
        &["seed = 999", "has no effect on this mesh"],
    );
}
