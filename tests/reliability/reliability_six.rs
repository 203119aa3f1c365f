//! Reliability of `report`, `bench` and `compare`, round four's open causes of those
//! commands (issue 47, `results/reliability_round4/README.md`, S11, S12, V3, V4, V5, V8,
//! A4): device names that break report.md's tables, plots that replace each other, series
//! merged by a shortened name, duplicated columns and inputs, line numbers after a quoted
//! multi-line field, an `--out` that is a file or a dangling link, benches that measure
//! less than asked, `--stream-elems` beyond the host's or the device's memory, negative
//! numbers and an empty mesh path. Each case checks the exit status and that the message
//! names the flag or file and what is wrong.

use std::path::{Path, PathBuf};
use std::process::Output;

fn tmp(name: &str) -> PathBuf {
    crate::bin::scratch("rel6", name)
}

use crate::bin::{dgatd, stderr};

/// Exit 1 (an error, not a panic or abort) and every needle in the message.
fn refused(o: &Output, what: &str, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{what}: accepted or crashed: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "{what}: {n:?} not in: {err}");
    }
}

/// The bench CSV header (`dgatd bench`'s columns).
const HEADER: &str = "timestamp,commit,host,platform,device,driver,precision,kernel,variant,tets,dofs,reps,median_s,min_s,max_s,bytes_model,gbs,frac_copy_bw,gdofs_per_s,flops_model,gflops,frac_roof";

/// `s` as a quoted CSV field.
fn q(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// A bench row of `device` (on an OpenCL platform), f64, `kernel`/`variant` at `tets` tets
/// taking `median_s`, at a fraction 0.5 of the copy bandwidth.
fn row(device: &str, kernel: &str, variant: &str, tets: &str, median_s: &str) -> String {
    format!(
        "2026-01-01T00:00:00Z,abc,h,Portable Computing Language,{},3.1,f64,{kernel},{variant},{tets},7000,3,{median_s},{median_s},{median_s},1e6,10.0,0.5,0.1,0,0,0.5",
        q(device)
    )
}

/// Writes `rows` under [`HEADER`] into `dir/name`; its path.
fn csv(dir: &Path, name: &str, rows: &[String]) -> PathBuf {
    let p = dir.join(name);
    let mut s = format!("{HEADER}\n");
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    std::fs::write(&p, s).unwrap();
    p
}

/// `dgatd report --out DIR/rep FILES...`.
fn report(dir: &Path, files: &[&Path]) -> Output {
    dgatd()
        .arg("report")
        .arg("--out")
        .arg(dir.join("rep"))
        .args(files)
        .output()
        .unwrap()
}

/// The rows of a device: a primal kernel and the custom step.
fn device_rows(device: &str) -> Vec<String> {
    vec![
        row(device, "primal", "tet_sym", "6000", "1e-4"),
        row(device, "step", "tet+factored", "6000", "3e-4"),
    ]
}

/// The plot files `bandwidth_*.png` in `dir`, sorted.
fn bandwidth_pngs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("bandwidth_") && n.ends_with(".png"))
        .collect();
    v.sort();
    v
}

/// S11 (report-605, report-606): a `|` or a newline in a device name is escaped in
/// report.md's tables (it split a row into more cells, or into two lines).
#[test]
fn report_tables_escape_device_names() {
    let dir = tmp("md-escape");
    let mut rows = device_rows("GPU|A");
    rows.extend(device_rows("GPU\nB"));
    let f = csv(&dir, "r.csv", &rows);
    let o = report(&dir, &[&f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(dir.join("rep/report.md")).unwrap();
    assert!(md.contains("| GPU\\|A | f64 | 6000 |"), "{md}");
    assert!(md.contains("| GPU B | f64 | 6000 |"), "{md}");
    // every row of a table has its header's number of cells
    let mut cells = None;
    for l in md.lines() {
        if !l.starts_with('|') {
            assert!(!l.starts_with("B |"), "a row split in two: {md}");
            cells = None;
            continue;
        }
        let n = l.replace("\\|", "").matches('|').count();
        assert_eq!(*cells.get_or_insert(n), n, "{l:?} in: {md}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// S11 (report-607, report-608): devices whose plot names collide (`GPU-A`, `GPU A`) or
/// that are equal in their first 24 characters get a plot each (one replaced the other, or
/// their series merged into one plot), and distinct labels in the step-time legend.
#[test]
fn report_plots_of_similar_devices_stay_apart() {
    let dir = tmp("slugs");
    let mut rows = device_rows("GPU-A");
    rows.extend(device_rows("GPU A"));
    let f = csv(&dir, "r.csv", &rows);
    let o = report(&dir, &[&f]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        bandwidth_pngs(&dir.join("rep")),
        ["bandwidth_gpu_a_f64.png", "bandwidth_gpu_a_f64_2.png"]
    );
    std::fs::remove_dir_all(dir.join("rep")).unwrap();
    let long = "Portable Computing Language pthread";
    let mut rows = device_rows(&format!("{long} AAA"));
    rows.extend(device_rows(&format!("{long} BBB")));
    let f = csv(&dir, "long.csv", &rows);
    let o = report(&dir, &[&f]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(bandwidth_pngs(&dir.join("rep")).len(), 2);
    let svg = std::fs::read_to_string(dir.join("rep/step_time.svg")).unwrap();
    assert!(
        svg.contains("#2 f64 tet+factored"),
        "one legend label for two devices"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// S11 (report-612, report-618): a column given twice in the header, and one file given
/// twice (by another path), are refused naming the file and the column (the first copy
/// was read, and the rows counted twice).
#[test]
fn report_refuses_duplicate_columns_and_inputs() {
    let dir = tmp("dups");
    let p = dir.join("dup.csv");
    let r = row("GPU", "primal", "tet_sym", "6000", "1e-4");
    std::fs::write(&p, format!("{HEADER},tets\n{r},6000\n")).unwrap();
    let o = report(&dir, &[&p]);
    refused(
        &o,
        "two tets columns",
        &["dup.csv", "column \"tets\" appears 2 times"],
    );
    let f = csv(&dir, "r.csv", &device_rows("GPU"));
    let again = dir.join(".").join("r.csv");
    let o = report(&dir, &[&f, &again]);
    refused(
        &o,
        "one file twice",
        &["r.csv", "given before it", "count twice"],
    );
    assert!(!dir.join("rep").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// V8 (report-614): after a quoted field spanning three lines, a bad value is reported on
/// the file line its row starts on (line 5), not as the row's number (line 3).
#[test]
fn report_names_the_file_line_after_a_multi_line_field() {
    let dir = tmp("lines");
    let f = csv(
        &dir,
        "r.csv",
        &[
            row(
                "GPU\nsecond line\nthird line",
                "primal",
                "tet_sym",
                "6000",
                "1e-4",
            ),
            row("GPU", "primal", "tet_sym", "x", "1e-4"),
        ],
    );
    let o = report(&dir, &[&f]);
    refused(
        &o,
        "bad tets",
        &["r.csv: line 5: column tets = \"x\" is not a number"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `dgatd bench` on the host only, as small as it goes, with `extra` flags and `--out out`.
fn bench(extra: &[&str], out: &Path) -> Output {
    dgatd()
        .args([
            "bench",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--dg-orders",
            "",
            "--precision",
            "f64",
            "--sizes",
            "1e3",
        ])
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// V5 (bench-589, report-621): `--out` naming a regular file, or a symbolic link to a
/// missing folder, is described as such, naming the flag and the path (it was
/// "File exists (os error 17)").
#[cfg(unix)]
#[test]
fn an_out_that_is_a_file_or_a_dangling_link_is_described() {
    let dir = tmp("out-file");
    let f = csv(&dir, "r.csv", &device_rows("GPU"));
    let file = dir.join("rep");
    std::fs::write(&file, "a file").unwrap();
    let o = report(&dir, &[&f]);
    refused(
        &o,
        "report --out FILE",
        &["invalid out", "rep", "exists and is not a directory"],
    );
    assert!(!stderr(&o).contains("File exists"));
    let o = bench(&["--devices", "none"], &file);
    refused(
        &o,
        "bench --out FILE",
        &["invalid out", "rep", "exists and is not a directory"],
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a file");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(dir.join("missing"), &file).unwrap();
    let o = report(&dir, &[&f]);
    refused(
        &o,
        "report --out LINK",
        &[
            "invalid out",
            "symbolic link to",
            "missing",
            "does not exist",
        ],
    );
    let o = bench(&["--devices", "none"], &file);
    refused(
        &o,
        "bench --out LINK",
        &[
            "invalid out",
            "symbolic link to",
            "missing",
            "does not exist",
        ],
    );
    assert!(!dir.join("missing").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// S12 (bench-577, bench-584): a bench with neither a device nor the CPU backend is refused
/// naming both flags (it timed the host's preprocessing and exited 0); a `--stream-elems`
/// beyond the host's memory is refused naming the flag (the CPU probe cut it to 64Mi
/// without a word), before anything is measured.
#[test]
fn a_bench_that_would_measure_less_than_asked_is_refused() {
    let dir = tmp("bench-less");
    let out = dir.join("b");
    let o = bench(&["--devices", "none", "--no-cpu"], &out);
    refused(
        &o,
        "--devices none --no-cpu",
        &["nothing to measure", "--devices none", "--no-cpu"],
    );
    assert!(!out.join("bench.csv").exists());
    let o = bench(&["--devices", "none", "--stream-elems", "9e11"], &out);
    refused(
        &o,
        "--stream-elems 9e11 on the CPU",
        &["invalid stream-elems = 9e11", "host memory"],
    );
    assert!(!out.join("bench.csv").exists());
    // a size that fits is used as asked: 2 arrays of 1e5 f64 in the copy row's bytes
    let o = bench(&["--devices", "none", "--stream-elems", "1e5"], &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = std::fs::read_to_string(out.join("bench.csv")).unwrap();
    assert!(
        rows.lines().any(|l| l.contains(",cpu-backend,")
            && l.contains(",copy,stream,")
            && l.contains(",1.600000e6,")),
        "{rows}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The OpenCL devices `dgatd devices` lists: true when there is one; false, said loudly,
/// when there is none, and a panic then when `DGATD_REQUIRE_OPENCL=1`.
fn have_opencl() -> bool {
    let required = std::env::var("DGATD_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
    match dgatd::backend::opencl::select_device(None) {
        Ok(_) => true,
        Err(e) if required => panic!("DGATD_REQUIRE_OPENCL=1 but no OpenCL device: {e}"),
        Err(e) => {
            eprintln!("\n*** SKIPPED: OpenCL test needs a device ({e}) ***\n");
            false
        }
    }
}

/// A4 (bench-585): `--stream-elems 9e11` on an OpenCL device (7.2 TB per f64 array) is
/// refused before anything is allocated, naming the flag, the bytes asked and the device's
/// limit (PoCL aborted in its allocator: SIGABRT).
#[test]
fn stream_elems_beyond_the_device_are_refused() {
    if !have_opencl() {
        return;
    }
    let dir = tmp("stream-device");
    let out = dir.join("b");
    let o = bench(
        &["--devices", "0", "--no-cpu", "--stream-elems", "9e11"],
        &out,
    );
    refused(
        &o,
        "--stream-elems 9e11 on device 0",
        &[
            "invalid stream-elems = 900000000000",
            "6.55 TiB each",
            "but its largest allocation is",
        ],
    );
    assert!(!out.join("bench.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// V3 (bench-567, bench-569, compare-641): a negative number after `--reps`, `--warmup` or
/// `compare --time` is that flag's (bad) value, not "unexpected argument '-1' found".
#[test]
fn negative_numbers_are_the_bench_and_compare_flags_values() {
    let dir = tmp("negative");
    for flag in ["--reps", "--warmup"] {
        let o = dgatd()
            .args(["bench", "--devices", "none", flag, "-1", "--out"])
            .arg(dir.join("b"))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flag} -1: {err}");
        assert!(!err.contains("unexpected argument"), "{flag} -1: {err}");
        assert!(
            err.contains(flag) && err.contains("a negative number"),
            "{flag} -1: {err}"
        );
    }
    let o = dgatd()
        .args(["compare", "--time", "-1", "--out"])
        .arg(dir.join("c"))
        .output()
        .unwrap();
    refused(
        &o,
        "compare --time -1",
        &["invalid time = -1", "positive number of seconds"],
    );
    assert!(!stderr(&o).contains("unexpected argument"));
    assert!(!dir.join("c").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// V4 (compare-644): `compare --mesh ''` (or an empty item in its list) is refused naming
/// the flag and saying the path is empty (it was ": No such file or directory").
#[test]
fn an_empty_compare_mesh_is_named() {
    let dir = tmp("compare-mesh");
    for mesh in ["", "bundled:coarse,"] {
        let o = dgatd()
            .args(["compare", "--mesh", mesh, "--out"])
            .arg(dir.join("c"))
            .output()
            .unwrap();
        refused(
            &o,
            &format!("--mesh {mesh:?}"),
            &["invalid mesh", "an empty path"],
        );
        assert!(!dir.join("c").exists());
    }
    std::fs::remove_dir_all(&dir).ok();
}
