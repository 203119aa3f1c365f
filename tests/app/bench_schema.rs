//! `dgatd bench` writes a CSV that parses back with every column documented in
//! results/README.md, finite positive numbers, and that `dgatd report` turns into plots.
//! Uses the OpenCL devices when there are any (PoCL in CI), the CPU backend always.

use std::process::Command;

fn documented_columns() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/results/README.md")).unwrap();
    let section = readme
        .split("## Bench CSV columns")
        .nth(1)
        .expect("results/README.md documents the bench columns");
    section
        .lines()
        .skip_while(|l| !l.starts_with("| `"))
        .take_while(|l| l.starts_with('|'))
        .flat_map(|l| {
            let first = l.split('|').nth(1).unwrap_or("").to_string();
            first
                .split(',')
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty())
        .collect()
}

/// The bench CSV's columns in order: a contract with users' scripts (extend, never rename).
const BENCH_COLUMNS: [&str; 22] = [
    "timestamp",
    "commit",
    "host",
    "platform",
    "device",
    "driver",
    "precision",
    "kernel",
    "variant",
    "tets",
    "dofs",
    "reps",
    "median_s",
    "min_s",
    "max_s",
    "bytes_model",
    "gbs",
    "frac_copy_bw",
    "gdofs_per_s",
    "flops_model",
    "gflops",
    "frac_roof",
];

#[test]
fn bench_csv_round_trip_and_report() {
    let dir = std::env::temp_dir().join(format!("dgatd-schema-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let have_cl = dgatd::backend::opencl::list_devices().is_ok();
    if !have_cl {
        eprintln!("*** bench schema test without OpenCL devices: CPU backend rows only ***");
    }
    let bin = env!("CARGO_BIN_EXE_dgatd");
    let out = Command::new(bin)
        .args([
            "bench",
            "--devices",
            if have_cl { "all" } else { "none" },
            "--sizes",
            "1e3,6e3",
            "--reps",
            "3",
            "--warmup",
            "1",
            "--stream-elems",
            "1e6",
            "--dg-orders",
            "1,2",
            "--dispersion",
            "0.5,1",
            "--losses",
            "1",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join("bench.csv");
    let mut r = csv::Reader::from_path(&path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, BENCH_COLUMNS.to_vec(), "column order is a contract");
    let doc = documented_columns();
    assert_eq!(doc.len(), header.len(), "documented {doc:?}");
    for c in &header {
        assert!(
            doc.contains(c),
            "column {c} is not documented in results/README.md"
        );
    }
    let col = |c: &str| header.iter().position(|h| h == c).unwrap();
    let mut n = 0;
    let mut dg_rows = 0;
    let mut dg_update = std::collections::BTreeSet::new();
    let mut kernels = std::collections::BTreeSet::new();
    let mut disp = Vec::new();
    let mut lossy = Vec::new();
    let mut preprocess = std::collections::BTreeSet::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        n += 1;
        let num = |c: &str| -> f64 {
            rec[col(c)]
                .parse()
                .unwrap_or_else(|_| panic!("{c} = {:?} is not a number", &rec[col(c)]))
        };
        let kernel = rec[col("kernel")].to_string();
        // the host preprocessing row is a time, not a kernel: no bytes, no roof
        let timed_only = kernel == "preprocess";
        for c in [
            "median_s",
            "min_s",
            "max_s",
            "bytes_model",
            "gbs",
            "frac_copy_bw",
            "frac_roof",
        ] {
            let x = num(c);
            if timed_only && c != "median_s" && c != "min_s" && c != "max_s" {
                assert_eq!(x, 0.0, "{c} of {rec:?}");
                continue;
            }
            // the CPU backend has no fma probe: its roof is the copy bandwidth alone
            assert!(x.is_finite() && x > 0.0, "{c} = {x} in {rec:?}");
        }
        if kernel == "fma" {
            assert!(num("flops_model") > 0.0 && num("gflops") > 0.0, "{rec:?}");
            assert_eq!(num("frac_roof"), 1.0);
        }
        if timed_only {
            assert!(num("tets") > 0.0, "{rec:?}");
            preprocess.insert(rec[col("variant")].to_string());
        }
        assert!(num("min_s") <= num("median_s") && num("median_s") <= num("max_s"));
        assert!(num("reps") >= 1.0);
        if num("tets") > 0.0 {
            assert!(num("dofs") > num("tets") && num("gdofs_per_s") > 0.0);
        }
        if rec.get(col("kernel")).unwrap_or("").starts_with("dg_") {
            dg_rows += 1;
            if rec[col("kernel")] == *"dg_update" {
                dg_update.insert(rec[col("variant")].to_string());
            }
            assert!(num("flops_model") > 0.0 && num("gflops") > 0.0, "{rec:?}");
        }
        for c in [
            "timestamp",
            "commit",
            "host",
            "platform",
            "device",
            "driver",
            "precision",
            "kernel",
            "variant",
        ] {
            assert!(!rec[col(c)].is_empty(), "{c} empty");
        }
        kernels.insert(rec[col("kernel")].to_string());
        if &rec[col("kernel")] == "step_lossy" {
            lossy.push((
                rec[col("platform")].to_string(),
                rec[col("precision")].to_string(),
                num("tets") as usize,
                rec[col("variant")].to_string(),
                num("bytes_model"),
                num("dofs") as usize,
            ));
        }
        if &rec[col("kernel")] == "step_dispersive" {
            disp.push((
                rec[col("platform")].to_string(),
                rec[col("precision")].to_string(),
                num("tets") as usize,
                rec[col("variant")].to_string(),
                num("bytes_model"),
            ));
        }
    }
    // preprocess: the whole host preprocessing and its masses, and with an fp64 OpenCL
    // device (PoCL has one) the masses assembled on the device, with and without transfers
    // (and the CSR form's matrix, on the host and on the device: these meshes are below the
    // CSR variant's size limit)
    for v in ["host", "host_masses", "host_csr"] {
        assert!(
            preprocess.contains(v),
            "no preprocess/{v} row: {preprocess:?}"
        );
    }
    let fp64 = dgatd::backend::opencl::list_devices().is_ok_and(|d| d.iter().any(|x| x.fp64));
    if fp64 {
        for v in [
            "device",
            "device_kernels",
            "device_csr",
            "device_csr_kernels",
        ] {
            assert!(
                preprocess.contains(v),
                "no preprocess/{v} row: {preprocess:?}"
            );
        }
    }
    // step_dispersive: a baseline and both cases at both fractions in each form (the
    // CPU backend: split only), each moving more bytes than the baseline, the fused form
    // fewer than the split one
    for (pl, pr, t, _, b0) in disp.iter().filter(|r| r.3 == "none") {
        let same = |v: &str| {
            disp.iter()
                .find(|r| (&r.0, &r.1, r.2, r.3.as_str()) == (pl, pr, *t, v))
                .map(|r| r.4)
        };
        for case in ["debye1_50%", "debye1_100%", "lorentz2_50%", "lorentz2_100%"] {
            let split = same(&format!("{case}+split")).expect("a split row per case");
            assert!(split > *b0, "{case}: {split} vs {b0}");
            if pl != "cpu-backend" {
                let fused = same(&format!("{case}+fused")).expect("a fused row per case");
                assert!(*b0 < fused && fused < split, "{case}: {b0} {fused} {split}");
            }
        }
    }
    assert!(disp.len() >= 9, "only {} step_dispersive rows", disp.len());
    // step_lossy: a baseline and every case, each moving more bytes than the baseline
    // (the loss step; the layer's magnetic loss on top of σ's; abc: the wall half-edges
    // become unknowns, so more DoFs, and their loss step)
    for (pl, pr, t, _, b0, n0) in lossy.iter().filter(|r| r.3 == "none") {
        let same = |v: &str| {
            lossy
                .iter()
                .find(|r| (&r.0, &r.1, r.2, r.3.as_str()) == (pl, pr, *t, v))
                .unwrap_or_else(|| panic!("no {v} row for {pl} {pr} {t}"))
        };
        let (sigma, layer, abc) = (same("sigma_100%"), same("layer_100%"), same("abc"));
        assert!(
            *b0 < sigma.4 && sigma.4 < layer.4,
            "{b0} {sigma:?} {layer:?}"
        );
        assert_eq!((sigma.5, layer.5), (*n0, *n0), "losses keep the unknowns");
        assert!(abc.4 > *b0 && abc.5 > *n0, "{abc:?} vs {b0} {n0}");
    }
    assert!(lossy.len() >= 8, "only {} step_lossy rows", lossy.len());
    assert!(n >= 10, "only {n} rows");
    for k in [
        "copy",
        "preprocess",
        "primal",
        "dual_factored",
        "dual_csr",
        "step",
        "dg_step",
        "step_dispersive",
        "step_lossy",
    ] {
        assert!(kernels.contains(k), "no {k} rows");
    }
    assert!(dg_rows >= 2, "only {dg_rows} DG rows");
    if have_cl {
        // the default DG update and two other kernels, per order
        for n in [1, 2] {
            for v in ["", "+node", "+blocked"] {
                let v = format!("N={n}{v}");
                assert!(
                    dg_update.contains(&v),
                    "no dg_update/{v} row: {dg_update:?}"
                );
            }
        }
        assert!(kernels.contains("fma"), "no fma probe row");
    }
    // report
    let rep = dir.join("report");
    let out = Command::new(bin)
        .arg("report")
        .arg(&path)
        .arg("--out")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(rep.join("step_time.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let svg = std::fs::read_to_string(rep.join("step_time.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("Time per leapfrog step"));
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    assert!(md.contains("| device | precision | tets |"));
    // A file that is not a bench CSV is refused with its name and the missing column.
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "a,b\n1,2\n").unwrap();
    let out = Command::new(bin).arg("report").arg(&bad).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && e.contains("bad.csv")
            && e.contains("missing column \"timestamp\""),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `dgatd compare` on the CPU backend with a short record (0.1 µs): every column is documented
/// in results/README.md, one DGA row and one DG row per (order, flux), DoFs and models
/// positive, TM010 found by both, plots written.
#[test]
fn compare_csv_is_documented() {
    let dir = std::env::temp_dir().join(format!("dgatd-compare-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_dgatd"))
        .args([
            "compare",
            "--mesh",
            "bundled:coarse",
            "--orders",
            "1",
            "--fluxes",
            "upwind",
            "--time",
            // 2e-7 s: the DGA record then holds ~1000 samples after the pulse, enough for
            // the extraction to resolve all four modes (at 500 samples the TM110 doublet is
            // rejected by the two-fit test and nothing is plotted)
            "2e-7",
            "--backend",
            "cpu",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/results/README.md")).unwrap();
    let mut r = csv::Reader::from_path(dir.join("compare.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    for c in header.iter() {
        assert!(
            readme.contains(&format!("`{c}`")),
            "compare column {c} undocumented"
        );
    }
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    let col = |c: &str| header.iter().position(|h| h == c).unwrap();
    for rec in &rows {
        for c in [
            "dofs",
            "steps",
            "wall_s",
            "bytes_per_dof_step",
            "flops_per_dof_step",
        ] {
            let x: f64 = rec[col(c)].parse().unwrap();
            assert!(x > 0.0, "{c} = {x}");
        }
    }
    assert_eq!(&rows[0][col("method")], "dga");
    for rec in &rows {
        let e: f64 = rec[col("err_tm010_pct")].parse().unwrap();
        assert!(e.abs() < 2.0, "TM010 error {e}%");
    }
    assert_eq!(&rows[1][col("method")], "dg");
    assert!(dir.join("error_vs_dofs.png").exists() && dir.join("error_vs_time.svg").exists());
    std::fs::remove_dir_all(&dir).ok();
}
