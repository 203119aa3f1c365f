//! A one-process run that lands on the CPU while the machine seems to have a GPU OpenCL
//! does not show warns before it runs (`dgatd::backend::discovery`): here the evidence is a
//! fake `nvidia.icd` (naming NVIDIA's library, which does not load on this machine) in an
//! `OCL_ICD_VENDORS` folder next to a copy of PoCL's `.icd`. `--backend opencl` and `auto`
//! warn, naming the evidence and the recipe, and so does `dgatd devices`; a named
//! `--device`, or the folder without the fake file, does not. (`tests/mpi/mpi_cli.rs` checks that `mpirun -np 1` does the same and
//! that several ranks stop.)
//!
//! Needs a machine whose OpenCL shows no GPU and PoCL's `.icd` in `/etc/OpenCL/vendors`;
//! skips (saying so) otherwise, a failure then with `DGATD_REQUIRE_OPENCL=1`.

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_dgatd");

/// The folder with PoCL's `.icd` (and the fake NVIDIA one when `fake`), or None (skip).
fn vendors(fake: bool) -> Option<PathBuf> {
    let devices = Command::new(BIN).arg("devices").output().ok()?;
    let listing = String::from_utf8_lossy(&devices.stdout).into_owned();
    let gpu = listing
        .lines()
        .skip(1)
        .any(|l| l.split_whitespace().nth(1) == Some("GPU"));
    let d = std::env::temp_dir().join(format!("dgatd-hidden-{}-{fake}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut pocl = false;
    for e in std::fs::read_dir("/etc/OpenCL/vendors")
        .into_iter()
        .flatten()
        .flatten()
    {
        let t = std::fs::read_to_string(e.path()).unwrap_or_default();
        if e.path().extension().is_some_and(|x| x == "icd") && t.contains("pocl") {
            std::fs::write(d.join(e.file_name()), t).unwrap();
            pocl = true;
        }
    }
    if !devices.status.success() || gpu || !pocl {
        assert!(
            std::env::var("DGATD_REQUIRE_OPENCL").as_deref() != Ok("1") || gpu,
            "DGATD_REQUIRE_OPENCL=1 but no OpenCL device or no PoCL .icd file"
        );
        eprintln!(
            "\n*** SKIPPED: needs PoCL's .icd and an OpenCL without GPUs (gpu: {gpu}, pocl: {pocl}) ***\n"
        );
        return None;
    }
    if fake {
        std::fs::write(d.join("nvidia.icd"), "libnvidia-opencl.so.1\n").unwrap();
    }
    Some(d)
}

fn warnings(vendors: &PathBuf, backend: &[&str]) -> Vec<String> {
    let out = vendors.join("out");
    let o = Command::new(BIN)
        .args(["resonator", "--box", "3,3,3", "--steps", "40", "--quiet"])
        .args(["--backend"])
        .args(backend)
        .arg("--out")
        .arg(&out)
        .env("OCL_ICD_VENDORS", vendors)
        .output()
        .unwrap();
    let l = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{l}");
    assert!(out.join("probe.csv").exists(), "{l}");
    let _ = std::fs::remove_dir_all(&out);
    l.lines()
        .filter(|l| l.starts_with("warning: running on"))
        .map(String::from)
        .collect()
}

#[test]
fn a_fake_nvidia_icd_makes_the_cpu_fallback_warn() {
    let (Some(fake), Some(plain)) = (vendors(true), vendors(false)) else {
        return;
    };
    let evidence = format!(
        "{} names libnvidia-opencl.so.1, but no NVIDIA OpenCL platform is listed",
        fake.join("nvidia.icd").display()
    );
    for backend in [&["opencl"][..], &["auto"]] {
        let w = warnings(&fake, backend);
        assert_eq!(w.len(), 1, "{backend:?}: {w:?}");
        for n in [
            evidence.as_str(),
            "the CPU OpenCL device 0 (Portable Computing Language",
            "OpenCL here sees: Portable Computing Language: #0 CPU",
            "OCL_ICD_VENDORS=",
            "export OCL_ICD_FILENAMES=libnvidia-opencl.so.1",
            "--device 0",
        ] {
            assert!(w[0].contains(n), "{n:?} missing from {}", w[0]);
        }
        assert!(warnings(&plain, backend).is_empty(), "{backend:?}");
    }
    // `dgatd devices` says so too, on stderr (stdout stays the listing)
    let listing = |d: &PathBuf| {
        let o = Command::new(BIN)
            .arg("devices")
            .env("OCL_ICD_VENDORS", d)
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = listing(&fake);
    assert!(
        e.contains(&evidence) && e.contains("export OCL_ICD_FILENAMES=libnvidia-opencl.so.1"),
        "{e}"
    );
    assert!(!listing(&plain).contains("warning"));
    let named = warnings(
        &fake,
        &["opencl", "--device", "Portable Computing Language"],
    );
    assert!(named.is_empty(), "{named:?}");
    for d in [fake, plain] {
        let _ = std::fs::remove_dir_all(d);
    }
}
