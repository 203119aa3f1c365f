//! Conducting walls: the wall-loss Q of each mode by the perturbation method from the mode
//! shapes of a second pass (`src/solver/wallq.rs`), against the analytic wall Q of the
//! copper pillbox's modes (`cylinder_wall_q`, itself checked against the closed forms
//! `a d / (δ (a + d))` and Pozar's TE formula), on the bundled meshes; and the device's
//! running transforms against the CPU's.
//!
//! Tolerances: the mesh's H next to the wall is uniform per hexahedron and its faces are
//! flat, so Q_wall carries a first-order discretisation error: measured on the bundled
//! meshes (coarse, medium, fine: TM010 −3.3%, −2.3%, −1.7%; TE111 on medium +5.2%, fine
//! +2.1%); asserted within 6% on medium and decreasing from coarse to medium. Between
//! backends only the accumulation order differs: f64 to 1e-9, f32 to 2e-3 (a transform of
//! ~5000 single-precision terms).

use dgatd::Precision;
use dgatd::problem::{Boundary, BoundaryKind};
use dgatd::solver::ResonatorResult;
use dgatd::solver::{BackendKind, Config};
use dgatd::spectrum::cylinder_wall_q;

const COPPER: f64 = 5.8e7;

fn run(mesh: &str, backend: BackendKind, precision: Precision) -> ResonatorResult {
    let mut cfg = Config {
        mesh: Some(format!("bundled:{mesh}")),
        backend,
        precision,
        seed: 11,
        ..Config::default()
    };
    // the bundled meshes name their whole wall "pec"
    cfg.boundaries
        .insert("pec".into(), Boundary::conductor(COPPER, 1.0));
    dgatd::run(&cfg, &mut |_, _| {}).unwrap()
}

/// `(mode, Q_wall, analytic)` of the labelled modes with a wall Q.
fn wall_qs(r: &ResonatorResult) -> Vec<(String, f64, f64)> {
    r.analysis
        .matched
        .iter()
        .filter_map(|m| {
            let (p, _) = m.peak.as_ref()?;
            let q = r.q_wall_of(p)?;
            let want = cylinder_wall_q(&m.mode.name, 1.0, 0.5, COPPER, 1.0)?;
            Some((m.mode.name.clone(), q, want))
        })
        .collect()
}

fn err_of(list: &[(String, f64, f64)], name: &str) -> f64 {
    let (_, q, want) = list
        .iter()
        .find(|x| x.0 == name)
        .unwrap_or_else(|| panic!("{name} not found with a wall Q in {list:?}"));
    q / want - 1.0
}

#[test]
fn copper_pillbox_wall_q_matches_the_analytic_q_and_converges() {
    let coarse = wall_qs(&run("coarse", BackendKind::Cpu, Precision::F64));
    let medium_run = run("medium", BackendKind::Cpu, Precision::F64);
    let medium = wall_qs(&medium_run);
    for (name, q, want) in &medium {
        println!(
            "medium {name}: Q_wall {q:.5e}, analytic {want:.5e} ({:+.2}%)",
            100.0 * (q / want - 1.0)
        );
    }
    for name in ["TM010", "TM110", "TE111"] {
        let e = err_of(&medium, name);
        assert!(
            e.abs() < 0.06,
            "{name}: {:+.2}% on the medium mesh",
            100.0 * e
        );
    }
    for name in ["TM010", "TM110"] {
        let (ec, em) = (err_of(&coarse, name), err_of(&medium, name));
        assert!(
            em.abs() < ec.abs(),
            "{name}: coarse {ec:+.4}, medium {em:+.4}"
        );
    }
    // every peak has a wall Q; q_total = q_wall for a lossless record (q infinite or huge)
    assert_eq!(medium_run.q_wall.len(), medium_run.peaks().len());
    assert!(medium_run.q_wall.iter().all(|q| q.is_some_and(|q| q > 1e3)));
}

fn cl_available() -> bool {
    use dgatd::backend::opencl::{ClDevice, select_device};
    let required = std::env::var("DGATD_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
    match select_device(None).and_then(ClDevice::open) {
        Ok(_) => true,
        Err(e) if required => panic!("DGATD_REQUIRE_OPENCL=1 but no OpenCL device: {e}"),
        Err(e) => {
            eprintln!("\n*** SKIPPED: OpenCL test needs a device ({e}) ***\n");
            false
        }
    }
}

#[test]
fn device_transforms_give_the_cpu_wall_q() {
    if !cl_available() {
        return;
    }
    let cpu = run("coarse", BackendKind::Cpu, Precision::F64);
    for (precision, tol) in [(Precision::F64, 1e-9), (Precision::F32, 2e-3)] {
        let cl = run("coarse", BackendKind::Opencl, precision);
        assert!(cl.backend.starts_with("opencl"), "{}", cl.backend);
        let mut compared = 0;
        for (p, q) in cpu.peaks().iter().zip(&cpu.q_wall) {
            // the same line in the device's record
            let Some(i) = cl
                .peaks()
                .iter()
                .position(|x| (x.f_hz / p.f_hz - 1.0).abs() < 1e-6)
            else {
                continue;
            };
            let (a, b) = (q.unwrap(), cl.q_wall[i].unwrap());
            assert!(
                (b / a - 1.0).abs() < tol,
                "{precision:?} at {:.4} MHz: cpu {a:.8e}, opencl {b:.8e}",
                p.f_hz / 1e6
            );
            compared += 1;
        }
        assert!(
            compared >= 5,
            "{precision:?}: only {compared} lines compared"
        );
    }
}

fn err(cfg: &Config) -> String {
    match dgatd::run(cfg, &mut |_, _| {}) {
        Ok(_) => panic!("the run was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn conductor_walls_need_a_conductivity_and_only_they_take_one() {
    let mut cfg = Config {
        mesh: Some("bundled:coarse".into()),
        backend: BackendKind::Cpu,
        steps: Some(10),
        ..Config::default()
    };
    cfg.boundaries.insert(
        "pec".into(),
        Boundary {
            kind: BoundaryKind::Conductor,
            sigma: None,
            mu_r: None,
        },
    );
    let e = err(&cfg);
    assert!(e.contains("sigma") && e.contains("pec"), "{e}");
    cfg.boundaries.insert(
        "pec".into(),
        Boundary {
            kind: BoundaryKind::Pmc,
            sigma: Some(1e7),
            mu_r: None,
        },
    );
    let e = err(&cfg);
    assert!(e.contains("conductor") && e.contains("sigma"), "{e}");
    cfg.boundaries
        .insert("pec".into(), Boundary::conductor(-3.0, 1.0));
    let e = err(&cfg);
    assert!(e.contains("positive"), "{e}");
}
