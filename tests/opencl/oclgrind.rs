//! The kernel smoke run (`tests/kernel_smoke/smoke.rs`: every kernel of `cl/*.cl` launched on
//! a tiny case and checked against the CPU) on the default OpenCL device, and the same run
//! under Oclgrind, the OpenCL device simulator, with its uninitialised-value, data-race and
//! API checks on (out-of-bounds accesses and barrier divergence are always checked): any
//! report on its stderr fails the test, with the count per kernel.
//!
//! Without a device the first test prints SKIPPED (a failure with DGATD_REQUIRE_OPENCL=1);
//! without Oclgrind (`apt-get install oclgrind`) the second prints SKIPPED (a failure with
//! DGATD_REQUIRE_OCLGRIND=1). `OCLGRIND_ICD=/path/liboclgrind-rt-icd.so` names a
//! non-default install.

// The same file is the `kernel_smoke` test target's run (`tests/kernel_smoke/main.rs`).
#[path = "../kernel_smoke/smoke.rs"]
mod kernel_smoke;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

fn required(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

/// The smoke run on `DGATD_TEST_DEVICE` (or the default device), both precisions.
#[test]
fn smoke_every_kernel() {
    let spec = std::env::var("DGATD_TEST_DEVICE").ok();
    let s = match kernel_smoke::run(spec.as_deref(), &["f64", "f32"]) {
        Ok(s) => s,
        Err(e @ dgatd::Error::NoOpenCl(_)) if !required("DGATD_REQUIRE_OPENCL") => {
            eprintln!("\n*** SKIPPED: kernel smoke run needs an OpenCL device ({e}) ***\n");
            return;
        }
        Err(e) => panic!("kernel smoke run: {e}"),
    };
    // stdout only: under Oclgrind, stderr is kept for the simulator's reports.
    for l in &s.lines {
        println!("{l}");
    }
    assert!(s.failures.is_empty(), "failed checks: {:#?}", s.failures);
    for k in kernel_smoke::declared_kernels() {
        assert!(s.launched.contains(&k), "kernel {k} was not launched");
    }
}

/// The declared-kernel scan finds the kernels of all three sources (so the coverage check
/// above cannot pass vacuously).
#[test]
fn every_declared_kernel_is_found() {
    let k = kernel_smoke::declared_kernels();
    for name in [
        "primal_tet",
        "triad4",
        "vertex_block_v",
        "dg_flux",
        "dg_probe",
        "fill_u32",
        "loss_rows",
        "primal_tet_idx",
        "scatter",
    ] {
        assert!(k.iter().any(|x| x == name), "{name} not in {k:?}");
    }
    assert!(k.len() >= 28, "{k:?}");
}

fn oclgrind_icd() -> Option<PathBuf> {
    let p = std::env::var_os("OCLGRIND_ICD")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/oclgrind/liboclgrind-rt-icd.so"));
    p.exists().then_some(p)
}

/// Oclgrind's reports in `stderr`, counted per kernel ("(no kernel)" for API errors).
fn reports_per_kernel(stderr: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for block in stderr.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let kernel = block
            .lines()
            .find_map(|l| l.trim().strip_prefix("Kernel: "))
            .unwrap_or("(no kernel)")
            .to_string();
        *out.entry(kernel).or_insert(0) += 1;
    }
    out
}

#[test]
fn report_counting_reads_oclgrind_messages() {
    let sample = "\nUninitialized value written to global memory address 0x6000000000000\n\tKernel: primal_tet\n\tEntity: Global(0,0,0)\n\n\nInvalid read of size 8 at global memory address 0x1\n\tKernel: dg_flux\n\n\nUninitialized value written to local memory address 0x2\n\tKernel: primal_tet\n";
    let r = reports_per_kernel(sample);
    assert_eq!(r.get("primal_tet"), Some(&2));
    assert_eq!(r.get("dg_flux"), Some(&1));
}

/// The smoke test above, re-run in a child process on Oclgrind as the only OpenCL platform.
#[test]
fn every_kernel_is_clean_under_oclgrind() {
    let Some(icd) = oclgrind_icd() else {
        if required("DGATD_REQUIRE_OCLGRIND") {
            panic!("DGATD_REQUIRE_OCLGRIND=1 but Oclgrind's ICD library was not found");
        }
        eprintln!("\n*** SKIPPED: Oclgrind not installed (apt-get install oclgrind) ***\n");
        return;
    };
    let dir = std::env::temp_dir().join(format!("dgatd-oclgrind-icd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("oclgrind.icd"), format!("{}\n", icd.display())).unwrap();
    // The test's name in this binary: its module path without the crate's name
    // (`oclgrind::smoke_every_kernel` in `tests/opencl`).
    let name = match module_path!().split_once("::") {
        Some((_, m)) => format!("{m}::smoke_every_kernel"),
        None => "smoke_every_kernel".to_string(),
    };
    let started = std::time::Instant::now();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name.as_str(), "--nocapture", "--test-threads=1"])
        .env("OCL_ICD_VENDORS", &dir)
        .env("DGATD_TEST_DEVICE", "Oclgrind")
        .env("DGATD_REQUIRE_OPENCL", "1")
        .env("OCLGRIND_UNINITIALIZED", "1")
        .env("OCLGRIND_DATA_RACES", "1")
        .env("OCLGRIND_CHECK_API", "1")
        .env_remove("DGATD_CL_BUILD_LOG")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!(
        "Oclgrind smoke run: {:.0} s, exit {:?}",
        started.elapsed().as_secs_f64(),
        out.status.code()
    );
    assert!(
        stdout.contains("device: Oclgrind") && stdout.contains("kernels launched"),
        "the child did not run on Oclgrind:\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.trim().is_empty(),
        "Oclgrind reported (per kernel: {:?}):\n{}",
        reports_per_kernel(&stderr),
        stderr.chars().take(20_000).collect::<String>()
    );
    assert!(out.status.success(), "the smoke run failed under Oclgrind");
}

fn device() -> Option<std::sync::Arc<dgatd::backend::opencl::ClDevice>> {
    use dgatd::backend::opencl::{ClDevice, select_device};
    match select_device(std::env::var("DGATD_TEST_DEVICE").ok().as_deref()).and_then(ClDevice::open)
    {
        Ok(d) => Some(d),
        Err(e) if required("DGATD_REQUIRE_OPENCL") => {
            panic!("DGATD_REQUIRE_OPENCL=1 but no OpenCL device: {e}")
        }
        Err(e) => {
            eprintln!("\n*** SKIPPED: OpenCL test needs a device ({e}) ***\n");
            None
        }
    }
}

/// The OpenCL C version option from the device's `CL_DEVICE_OPENCL_C_VERSION` string.
#[test]
fn cl_std_follows_the_device_version() {
    use dgatd::backend::opencl::cl_std_option;
    for (s, want) in [
        ("OpenCL C 1.2 PoCL", "-cl-std=CL1.2"),
        ("OpenCL C 1.2 (Oclgrind 21.10)", "-cl-std=CL1.2"),
        ("OpenCL C 3.1", "-cl-std=CL1.2"),
        ("OpenCL C 2.0 ", "-cl-std=CL1.2"),
        ("OpenCL C 1.1", "-cl-std=CL1.1"),
        ("OpenCL C 1.0 vendor", "-cl-std=CL1.0"),
        ("", "-cl-std=CL1.2"),
        ("garbage", "-cl-std=CL1.2"),
    ] {
        assert_eq!(cl_std_option(s), want, "{s:?}");
    }
}

/// Every build names its OpenCL C version and keeps its log, successful builds included
/// (what a successful log holds is the compiler's choice: PoCL 3.1 leaves it empty even for
/// an unused variable, Intel's runtime lists its vectoriser remarks).
#[test]
fn builds_use_an_explicit_cl_std_and_keep_their_logs() {
    let Some(dev) = device() else { return };
    let n0 = dev.build_logs().len();
    let src = "__kernel void warns(__global float* x) { int unused_variable_here; x[get_global_id(0)] = 1.0f; }";
    dev.build_source(src, "warns.cl", "-D X=1").unwrap();
    let logs = dev.build_logs();
    assert_eq!(logs.len(), n0 + 1);
    let b = logs.last().unwrap();
    let std = dgatd::backend::opencl::cl_std_option(&dev.info.opencl_c);
    assert_eq!(b.name, "warns.cl");
    assert_eq!(b.options, format!("{std} -D X=1"));
    let text = dev.build_log();
    assert!(
        text.contains("== warns.cl with \"") && text.contains(std),
        "{text}"
    );
    println!("build log on {}: {:?}", dev.info.name, b.log);
    // The stepper's own build is recorded with its precision options.
    let mesh = dgatd::mesh::box_mesh([1, 1, 1], [1.0, 1.0, 1.0]);
    let topo = dgatd::mesh::Topology::build(&mesh).unwrap();
    let d = dgatd::dga::Dga::assemble(&mesh, &topo, &dgatd::problem::Media::vacuum(mesh.n_tets()))
        .unwrap();
    dgatd::backend::opencl::ClStepper::<f32>::new(
        dev.clone(),
        std::sync::Arc::new(d),
        dgatd::dga::DualForm::Factored,
        None,
        &[],
    )
    .unwrap();
    assert!(
        dev.build_logs()
            .iter()
            .any(|b| b.name == dgatd::backend::opencl::PROGRAM
                && b.options.starts_with(&format!("{std} -D REAL=float"))),
        "{}",
        dev.build_log()
    );
}

/// A new buffer reads zero, by both zeroing paths (a host write up to ZERO_BY_WRITE_MAX
/// bytes, the fill kernel above), also where it likely reuses the memory of a just released
/// buffer of random data.
#[test]
fn new_buffers_are_zero() {
    use dgatd::backend::opencl::ZERO_BY_WRITE_MAX;
    let Some(dev) = device() else { return };
    for n in [1000usize, ZERO_BY_WRITE_MAX / 8 + 4096] {
        if (n * 8) as u64 > dev.info.max_alloc {
            continue;
        }
        let mut r = dgatd::internal::Rng::new(n as u64);
        let junk: Vec<f64> = (0..n).map(|_| 1.0 + r.uniform()).collect();
        drop(dev.upload(&junk, "junk").unwrap());
        let b = dev.alloc::<f64>(n, "fresh").unwrap();
        let v = dev.read(&b, n, "fresh").unwrap();
        assert!(
            v.iter().all(|x| x.to_bits() == 0),
            "{n} elements: {} nonzero",
            v.iter().filter(|x| x.to_bits() != 0).count()
        );
    }
}
