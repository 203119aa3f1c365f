//! Partitioned runs under `mpirun` (feature `mpi`): `examples/mpi_run` on 2 and 3 ranks
//! against the single-process CPU run of the same problem with the same Δt.
//!
//! Skips (saying so) when `mpirun` is absent, fails then if `DGATD_REQUIRE_MPI=1`.
//! Run: `cargo build --release --features mpi --example mpi_run && cargo test --release
//! --features mpi --test mpi mpi::` (a plain `cargo test --features mpi` builds the example too).
#![cfg(feature = "mpi")]

use crate::common::{cylinder, jittered_box, setup};
use dgatd::V3;
use dgatd::backend::cpu::{CpuKernels, CpuStepper};
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::mesh::Mesh;
use dgatd::problem::Waveform;
use dgatd::solver;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

fn at(mesh: &Mesh, frac: V3) -> V3 {
    let (lo, hi) = mesh.bbox();
    std::array::from_fn(|c| lo[c] + frac[c] * (hi[c] - lo[c]))
}

fn mpirun() -> Option<PathBuf> {
    let found = Command::new("mpirun").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var("DGATD_REQUIRE_MPI").as_deref() != Ok("1"),
            "DGATD_REQUIRE_MPI=1 but mpirun was not found (apt-get install openmpi-bin libopenmpi-dev)"
        );
        eprintln!("SKIPPED: mpirun not found; the MPI test did not run");
        return None;
    }
    Some(PathBuf::from("mpirun"))
}

fn example() -> PathBuf {
    // target/release/deps/mpi-HASH -> target/release/examples/mpi_run
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples")
        .join("mpi_run");
    assert!(
        p.exists(),
        "{} missing: cargo build --release --features mpi --example mpi_run",
        p.display()
    );
    p
}

struct MpiOut {
    dt: f64,
    rho: f64,
    energy: Vec<(usize, f64)>,
    samples: Vec<f64>,
    ranks: Vec<String>,
}

fn run_mpi(np: usize, mesh: &str, steps: usize) -> Option<MpiOut> {
    let mpirun = mpirun()?;
    let dir = std::env::temp_dir().join(format!("dgatd-mpi-{}-{np}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.txt");
    let mut cmd = Command::new(mpirun);
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if root {
        cmd.arg("--allow-run-as-root");
    }
    let o = cmd
        .args(["--oversubscribe", "-np", &np.to_string()])
        .arg(example())
        .args(["--mesh", mesh, "--steps", &steps.to_string(), "--out"])
        .arg(&out)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "mpirun -np {np} failed:\n{log}");
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut r = MpiOut {
        dt: 0.0,
        rho: 0.0,
        energy: vec![],
        samples: vec![],
        ranks: log
            .lines()
            .filter(|l| l.starts_with("rank "))
            .map(String::from)
            .collect(),
    };
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w[0] {
            "dt" => {
                r.dt = w[1].parse().unwrap();
                r.rho = w[2].parse().unwrap();
                assert_eq!(w[3], np.to_string());
            }
            "energy" => r
                .energy
                .push((w[1].parse().unwrap(), w[2].parse().unwrap())),
            "state" => {}
            _ => r.samples.push(w[0].parse().unwrap()),
        }
    }
    Some(r)
}

fn compare(np: usize, spec: &str, mesh: Mesh, steps: usize) {
    let Some(m) = run_mpi(np, spec, steps) else {
        return;
    };
    let (mesh, topo, dga, _) = setup(mesh, None);
    // the distributed power iteration equals the serial one up to round-off in its sums
    let rho = solver::spectral_radius(&dga, 60, 0x5eed);
    assert!((m.rho - rho).abs() <= 1e-10 * rho, "rho {} vs {rho}", m.rho);
    let dt = m.dt;
    let d = Arc::new(dga);
    let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
    let src = Source::new(
        &mesh,
        &topo,
        &d,
        at(&mesh, [0.62, 0.45, 0.5]),
        [0.2, 0.1, 1.0],
    )
    .unwrap();
    let wave = Waveform::gaussian_derivative(300e6);
    let probes: Vec<Probe> = [[0.31, 0.57, 0.41], [0.55, 0.72, 0.63]]
        .iter()
        .map(|&f| Probe::new(&mesh, &topo, at(&mesh, f)).unwrap())
        .collect();
    let mut s = CpuStepper::new(d, ops, DualForm::Factored, Some((&src, wave)), probes).unwrap();
    // the partitioned stepper computes with the reference kernels: compare like with like
    s.set_kernels(CpuKernels::Reference).unwrap();
    let rec = solver::run(&mut s, dt, steps, Some(wave.end()), 2, 10, &mut |_| {}).unwrap();
    // Same Δt, operators and arithmetic order: the probe samples agree bit for bit (written
    // with `{:e}`, which round-trips f64).
    assert_eq!(m.samples.len(), rec.samples.len());
    let peak = rec.samples.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    assert!(peak > 0.0);
    let differ = m
        .samples
        .iter()
        .zip(&rec.samples)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert_eq!(differ, 0, "-np {np}: {differ} samples differ");
    // energies: sums in another order, round-off (see tests/partition/partition.rs)
    assert_eq!(m.energy.len(), rec.energy.len());
    for (a, b) in m.energy.iter().zip(&rec.energy) {
        assert_eq!(a.0, b.0);
        assert!((a.1 - b.1).abs() <= 1e-11 * b.1.abs(), "{a:?} vs {b:?}");
    }
    assert_eq!(m.ranks.len(), np, "{:?}", m.ranks);
    eprintln!("-np {np} {spec}: {:?}", m.ranks);
    // a rank that records no probe (its samples come from the others)
    assert!(
        m.ranks.iter().any(|l| l.contains("probes []")),
        "{:?}",
        m.ranks
    );
}

#[test]
fn mpirun_2_ranks_jittered_box_equals_single_run() {
    compare(2, "box:6,5,4:78", jittered_box([6, 5, 4], 78, 0.3), 300);
}

#[test]
fn mpirun_3_ranks_coarse_cylinder_equals_single_run() {
    compare(3, "coarse", cylinder("cylinder_coarse.msh"), 300);
}
