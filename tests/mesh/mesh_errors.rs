//! Every broken mesh of tests/data/bad gives its message (naming the file and the line or
//! element) through the library, and a non-zero exit with that message from the CLI.
#![allow(clippy::needless_range_loop)]

use std::path::PathBuf;
use std::process::Command;

const CASES: &[(&str, &[&str])] = &[
    (
        "unknown_version.msh",
        &["line 2", "unsupported MSH version 3.0"],
    ),
    ("not_gmsh.msh", &["line 1", "not a Gmsh mesh file"]),
    (
        "missing_node.msh",
        &["line 15", "tetrahedron 1 refers to missing node 99"],
    ),
    ("no_tets.msh", &["has no tetrahedra"]),
    ("degenerate.msh", &["tetrahedron 7 is degenerate"]),
    ("duplicate.msh", &["tetrahedra 1 and 2 are duplicates"]),
    (
        "nonmanifold.msh",
        &["non-manifold face", "shared by 3 tetrahedra (1, 2, 3)"],
    ),
    (
        "second_order.msh",
        &["line 15", "volume element type 11 is not supported"],
    ),
    ("bad_number.msh", &["line 7", "bad node line"]),
    ("truncated.msh", &["truncated"]),
    ("truncated_binary.msh", &["truncated"]),
    // second round (issue 13)
    (
        "folded.msh",
        &["tetrahedra 1 and 2 are folded over each other"],
    ),
    (
        "duplicate_node_tag.msh",
        &["line 10", "node tag 2 is defined twice"],
    ),
    (
        "nonmanifold_edge.msh",
        &["non-manifold edge", "touch only along the edge"],
    ),
    (
        "nonmanifold_vertex.msh",
        &["non-manifold vertex", "touch only at this point"],
    ),
    (
        "overflow.msh",
        &["tetrahedron 1 has coordinates out of range"],
    ),
    (
        "negative_node.msh",
        &["line 13", "element 1 refers to node -1"],
    ),
    (
        "byteswapped_binary.msh",
        &["looks byte-swapped", "with the other byte order it is 2"],
    ),
];

/// Meshes accepted with a warning that says what will happen.
const WARNINGS: &[(&str, &[&str])] = &[
    (
        "crack.msh",
        &[
            "3 pairs of distinct nodes share a position",
            "conducting sheet",
        ],
    ),
    ("disconnected.msh", &["2 disconnected parts", "not excited"]),
];

#[test]
fn accepted_with_a_warning() {
    for (name, expect) in WARNINGS {
        let m = dgatd::mesh::read_gmsh(&path(name)).unwrap();
        let t = dgatd::mesh::Topology::build(&m).unwrap();
        let w = dgatd::mesh::check(&m, &t).unwrap().join("\n");
        for e in *expect {
            assert!(w.contains(e), "{name}: expected {e:?} in {w:?}");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_dgatd"))
            .arg("mesh-info")
            .arg(path(name))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        assert!(stderr.contains("warning:"), "{name}: {stderr}");
    }
    // the bundled meshes and a byte-order mark raise nothing
    for p in ["meshes/cylinder_coarse.msh", "tests/data/bom.msh"] {
        let m = dgatd::mesh::read_gmsh(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)).unwrap();
        let t = dgatd::mesh::Topology::build(&m).unwrap();
        assert!(dgatd::mesh::check(&m, &t).unwrap().is_empty(), "{p}");
    }
}

/// A device or a pipe is refused before it is read (reading /dev/zero never ends; a FIFO
/// with no writer blocks forever).
#[cfg(unix)]
#[test]
fn non_regular_files_are_refused_without_reading() {
    let fifo = std::env::temp_dir().join(format!("dgatd-fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .map(|s| s.success());
    let mut targets = vec![PathBuf::from("/dev/zero")];
    if made.unwrap_or(false) {
        targets.push(fifo.clone());
    }
    for p in targets {
        let e = dgatd::mesh::read_gmsh(&p).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let out = Command::new(env!("CARGO_BIN_EXE_dgatd"))
            .arg("mesh-info")
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
    }
    let _ = std::fs::remove_file(&fifo);
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/bad")
        .join(name)
}

fn check_lib(name: &str, expect: &[&str]) -> dgatd::Error {
    let p = path(name);
    let err = dgatd::mesh::read_gmsh(&p)
        .and_then(|m| {
            let t = dgatd::mesh::Topology::build(&m)?;
            dgatd::mesh::check(&m, &t).map(|_| ())
        })
        .expect_err(&format!("{name} must be refused"));
    let msg = err.to_string();
    assert!(
        msg.contains(name),
        "{name}: message does not name the file: {msg}"
    );
    for e in expect {
        assert!(msg.contains(e), "{name}: expected {e:?} in {msg:?}");
    }
    err
}

#[test]
fn library_reports_each_fault() {
    for (name, expect) in CASES {
        check_lib(name, expect);
    }
}

#[test]
fn cli_exits_non_zero_with_the_message_and_no_panic() {
    for (name, expect) in CASES {
        let out = Command::new(env!("CARGO_BIN_EXE_dgatd"))
            .arg("mesh-info")
            .arg(path(name))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: exit status 0");
        assert!(!stderr.contains("panicked"), "{name}: panic: {stderr}");
        for e in *expect {
            assert!(stderr.contains(e), "{name}: expected {e:?} in {stderr:?}");
        }
    }
}

#[test]
fn cli_refuses_bad_values_naming_them() {
    let cases: &[(&[&str], &str)] = &[
        (&["--cfl", "1.5"], "invalid cfl = 1.5"),
        (&["--cfl", "NaN"], "invalid cfl = NaN"),
        (&["--steps", "-5"], "invalid value '-5' for '--steps"),
        (&["--time", "-1e-6"], "invalid time = -0.000001"),
        (&["--precision", "f16"], "f16"),
        (&["--dual", "coo"], "coo"),
        (&["--backend", "cuda"], "cuda"),
        (&["--probe", "5,5,5"], "probe point = [5.0, 5.0, 5.0]"),
        (&["--probe", "1,2"], "invalid probe = 1,2"),
        (
            &["--material", "copper=2"],
            "material group \"copper\": no such group",
        ),
        (&["--mesh", "/nonexistent/x.msh"], "/nonexistent/x.msh"),
        (&["--cfl", "0"], "invalid cfl = 0"),
        (&["--steps", "0"], "invalid value '0' for '--steps"),
        (&["--steps", "NaN"], "'NaN'"),
        (&["--f-peak", "-1"], "invalid f-peak = -1"),
        (&["--fmax", "1e12"], "invalid fmax = 1000000000000"),
        (&["--min-q", "0"], "invalid min-q = 0"),
        (&["--material", "1=-1"], "invalid eps_r = -1"),
        (&["--cavity", "sphere:-1"], "invalid cavity = sphere:-1"),
        (&["--source-dir", "0,0,0"], "invalid source direction"),
        (
            &["--checkpoint-minutes", "-1"],
            "invalid checkpoint-minutes = -1",
        ),
        (
            &["--method", "dg", "--order", "0"],
            "invalid value '0' for '--order",
        ),
        (&["--material", "1=2", "--material", "1=3"], "given twice"),
        (&["--boundary", "top=pmc"], "boundary group \"top\""),
        (&["--boundary", "1=wet"], "invalid boundary = wet"),
        (&["--dt", "1e-6"], "above the stability bound"),
        (&["--dt", "-1"], "invalid dt = -1"),
        (
            &["--method", "dg", "--precision", "f32", "--backend", "cpu"],
            "f32",
        ),
        (
            &["--method", "dg", "--mode-shapes", "2"],
            "invalid mode-shapes = 2",
        ),
        (&["--refine", "9"], "invalid refine = 9"),
        (
            &["--box", "100000,100000,100000"],
            "invalid box = [100000, 100000, 100000]",
        ),
        (&["--resume", "/nonexistent/run"], "/nonexistent/run"),
        (
            &[
                "--mesh",
                "tests/data/one_tet.msh",
                "--source",
                "0.1,0.1,0.1",
            ],
            "tetrahedron 1 has no interior edge",
        ),
    ];
    for (args, expect) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dgatd"));
        cmd.arg("resonator");
        if !args.contains(&"--resume") {
            cmd.args(["--steps", "10", "--quiet", "--out"])
                .arg(std::env::temp_dir().join("dgatd-bad-values"));
        }
        if !args.contains(&"--mesh") && !args.contains(&"--box") && !args.contains(&"--resume") {
            cmd.args(["--mesh", "bundled:coarse"]);
        }
        let out = cmd
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(*args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: panic exit");
        assert!(
            stderr.contains(expect),
            "{args:?}: expected {expect:?} in {stderr:?}"
        );
    }
}

/// Output piped into a reader that closes early (`dgatd mesh-info ... | head -1`) is not a
/// panic.
#[cfg(unix)]
#[test]
fn closed_stdout_is_not_a_panic() {
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' mesh-info bundled:coarse | head -c 1 >/dev/null; sleep 0.5",
            env!("CARGO_BIN_EXE_dgatd")
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
