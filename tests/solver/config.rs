//! The problem layer end to end: configuration files (`--config`), `run.toml` as a valid
//! configuration that reproduces its run, materials and boundaries from TOML, and the
//! physics they must give (a homogeneous fill scales the discrete spectrum exactly; PMC
//! walls give the analytic PMC-box modes at second order).

use dgatd::solver::{BackendKind, Config};
use std::path::PathBuf;
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-cfg-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn dgatd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dgatd"));
    c.env_remove("DGATD_FAULT_AT_STEP");
    c
}

/// A run from a configuration file, then a second run from the first run's `run.toml`
/// (to another folder): the same `modes.csv`, byte for byte.
#[test]
fn run_toml_reproduces_its_run() {
    let d = tmp("rerun");
    let cfg = d.join("job.toml");
    std::fs::write(
        &cfg,
        "mesh = \"bundled:coarse\"\nbackend = \"cpu\"\nsteps = 2500\nseed = 7\n\n[materials.vacuum]\neps_r = 2.25\n",
    )
    .unwrap();
    let (a, b) = (d.join("a"), d.join("b"));
    let o = dgatd()
        .args(["resonator", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&a)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let toml = std::fs::read_to_string(a.join("run.toml")).unwrap();
    assert!(
        toml.contains("[materials.vacuum]") && toml.contains("[run]"),
        "{toml}"
    );
    // a key at its default that older files lack is not written
    assert!(!toml.contains("source_radius"), "{toml}");
    let o = dgatd()
        .args(["resonator", "--quiet", "--config"])
        .arg(a.join("run.toml"))
        .arg("--out")
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ma = std::fs::read(a.join("modes.csv")).unwrap();
    assert!(ma.len() > 200, "modes.csv too short");
    assert_eq!(ma, std::fs::read(b.join("modes.csv")).unwrap());
    // a flag overrides the file
    let o = dgatd()
        .args(["resonator", "--quiet", "--steps", "300"])
        .args(["--source-radius", "0.05", "--config"])
        .arg(a.join("run.toml"))
        .arg("--out")
        .arg(d.join("c"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = std::fs::read_to_string(d.join("c").join("run.toml")).unwrap();
    assert!(c.contains("\nsteps = 300\n"), "{c}");
    assert!(c.contains("\nsource_radius = 0.05\n"), "{c}");
    std::fs::remove_dir_all(&d).ok();
}

/// Unknown keys, wrong types and unknown groups are refused naming the file, line and key.
#[test]
fn configuration_errors_name_file_line_and_key() {
    let d = tmp("errors");
    let cases: &[(&str, &[&str])] = &[
        (
            "mesh = \"bundled:coarse\"\nsteps = 10\ncolour = \"red\"\n",
            &["job.toml: line 3", "colour", "unknown field"],
        ),
        (
            "mesh = \"bundled:coarse\"\ncfl = \"fast\"\n",
            &["job.toml: line 2", "cfl", "invalid type"],
        ),
        (
            "mesh = \"bundled:coarse\"\nsteps = 10\n\n[materials.glass]\neps_r = 4\n",
            &[
                "job.toml: line 4",
                "materials.glass",
                "no volume group",
                "vacuum (1)",
            ],
        ),
        (
            "box = \"2,2,2\"\nsteps = 10\n[boundaries.top]\nkind = \"pmc\"\n",
            &[
                "job.toml: line 3",
                "boundaries.top",
                "no surface group",
                "xmin (1)",
            ],
        ),
        (
            "box = \"2,2,2\"\n[boundaries.xmin]\nkind = \"wet\"\n",
            &["job.toml: line 3", "kind", "unknown variant"],
        ),
        (
            "box = \"2,2,2\"\n[materials.vacuum]\neps_r = -4\n",
            &["invalid eps_r = -4"],
        ),
        (
            "ball = \"2:core=0.3,air=0.2\"\nsteps = 10\n",
            &["ball", "radii must increase"],
        ),
        (
            "ball = \"2:core=0.3@2,air=0.5\"\nsteps = 10\n",
            &["ball", "the first group has none"],
        ),
        (
            "ball = \"2:core=0.3,air=0.5@0.5\"\nsteps = 10\n",
            &["ball", "between 1 and 100"],
        ),
        (
            "ball = \"2:core=0.3,core=0.5\"\nsteps = 10\n",
            &["ball", "named twice"],
        ),
        (
            "ball = \"two:core=0.3\"\nsteps = 10\n",
            &["ball", "expected N:NAME=R"],
        ),
        (
            "ball = \"2:core=0.3,outer=0.5\"\nsteps = 10\n",
            &["ball", "not \"outer\" (the outer surface)"],
        ),
        (
            "ball = \"2:core=0.3\"\nbox = \"2,2,2\"\nsteps = 10\n",
            &["exclude each other"],
        ),
        (
            "ball = \"2:core=0.3,air=0.6\"\nsteps = 10\n[materials.glass]\neps_r = 4\n",
            &["materials.glass", "no volume group", "core (1)", "air (2)"],
        ),
        (
            "box = \"2,2,2\"\nsteps = 10\nsource_radius = -0.1\n",
            &["source_radius", "-0.1", "finite length >= 0"],
        ),
        (
            "box = \"2,2,2\"\nsteps = 10\nmethod = \"dg\"\nsource_radius = 0.3\n",
            &[
                "source_radius",
                "--method dg drives the tet containing the source point only",
            ],
        ),
    ];
    for (text, want) in cases {
        let p = d.join("job.toml");
        std::fs::write(&p, text).unwrap();
        let o = dgatd()
            .args(["resonator", "--quiet", "--backend", "cpu", "--config"])
            .arg(&p)
            .arg("--out")
            .arg(d.join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{text}: {err}");
        for w in *want {
            assert!(err.contains(w), "{text}: expected {w:?} in {err}");
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

fn corrected(r: &dgatd::solver::ResonatorResult) -> Vec<f64> {
    let mut v: Vec<f64> = r.peaks().iter().map(|p| r.corrected(p)).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// `[materials.vacuum] eps_r = 4` on the whole mesh divides K by 4 exactly (Meps scales by
/// a power of two), so every corrected frequency halves. With the pulse's peak frequency
/// halved too, the record in units of Δt is the same bit for bit (Δt doubles exactly), so
/// the extracted frequencies halve to round-off; 1e-9 is the bound the issue asks.
#[test]
fn a_homogeneous_fill_halves_every_frequency() {
    let base = coarse_cpu_3000();
    let vac = dgatd::run(&base, &mut |_, _| {}).unwrap();
    let mut filled = base.clone();
    filled.f_peak = Some(0.75e8);
    filled
        .materials
        .insert("vacuum".into(), dgatd::problem::Material::new(4.0, 1.0));
    let fil = dgatd::run(&filled, &mut |_, _| {}).unwrap();
    assert_eq!(fil.dt_s, 2.0 * vac.dt_s, "the time step doubles exactly");
    assert_lines_scale(&corrected(&vac), &corrected(&fil), 2.0);
}

/// The bundled coarse cylinder on the CPU, 3000 steps, f_peak 150 MHz (the base of the
/// tests that compare two runs' lines).
fn coarse_cpu_3000() -> Config {
    Config {
        mesh: Some("bundled:coarse".into()),
        backend: BackendKind::Cpu,
        steps: Some(3000),
        f_peak: Some(1.5e8),
        ..Config::default()
    }
}

/// At least 6 lines in `a`, as many in `b`, each `x` of `a` within 1e-9 of `s` times its `y`.
fn assert_lines_scale(a: &[f64], b: &[f64], s: f64) {
    assert!(a.len() >= 6, "{a:?}");
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        let e = (s * y - x).abs() / x;
        assert!(e < 1e-9, "{x} vs {s} x {y}: {e:e}");
    }
}

/// Analytic modes of the box [0,a]x[0,b]x[0,d] with PMC walls at x = 0, a and PEC walls
/// elsewhere. Along x an E component normal to the wall is sin-like and a tangential one
/// cos-like (PMC: zero normal E, zero normal derivative of tangential E); along y and z the
/// reverse (PEC). A component vanishes when one of its sines has index 0; the modes of an
/// index triple are the non-vanishing components less one divergence constraint when some
/// non-vanishing component has a non-zero wave number along its own axis.
fn pmc_x_box_modes(l: [f64; 3], fmax: f64) -> Vec<f64> {
    let c0 = dgatd::C0;
    let mut out = vec![];
    let lim = |s: f64| (2.0 * fmax * s / c0).ceil() as usize + 1;
    for i in 0..=lim(l[0]) {
        for j in 0..=lim(l[1]) {
            for k in 0..=lim(l[2]) {
                let idx = [i, j, k];
                let f = 0.5
                    * c0
                    * (0..3)
                        .map(|a| (idx[a] as f64 / l[a]).powi(2))
                        .sum::<f64>()
                        .sqrt();
                if f == 0.0 || f > fmax {
                    continue;
                }
                // sin factors per component c along axis a: PMC axis 0: sin iff c == 0;
                // PEC axes 1, 2: sin iff c != a
                let alive: Vec<usize> = (0..3)
                    .filter(|&c| {
                        (0..3).all(|a| {
                            let sin = if a == 0 { c == 0 } else { c != a };
                            !(sin && idx[a] == 0)
                        })
                    })
                    .collect();
                let constrained = alive.iter().any(|&c| idx[c] != 0);
                let n = alive.len().saturating_sub(constrained as usize);
                out.extend(std::iter::repeat_n(f, n));
            }
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

/// A box with PMC walls on the x faces (surface groups of the box mesher) and PEC elsewhere:
/// the lowest resonances converge at second order to the analytic PMC-box modes.
#[test]
fn pmc_walls_give_the_pmc_box_modes_at_second_order() {
    let l = [1.0, 0.8, 0.6];
    let exact = pmc_x_box_modes(l, 320e6);
    // the lowest: (0,1,0), E_z = sin(πy/b), at c/(2b) = 187.4 MHz (a PEC box of these
    // sides has none below 291 MHz), then (1,1,0) at 240.0 and (0,0,1) at 249.8 MHz
    assert!((exact[0] - dgatd::C0 / 1.6).abs() < 1.0, "{exact:?}");
    let lowest = &exact[..3];
    let mut errs = vec![];
    for n in [4usize, 8, 16] {
        let mut cfg = Config {
            box_mesh: Some(
                format!(
                    "{},{},{}:{},{},{}",
                    n,
                    (n * 4).div_ceil(5),
                    (n * 3).div_ceil(5),
                    l[0],
                    l[1],
                    l[2]
                )
                .parse()
                .unwrap(),
            ),
            backend: BackendKind::Cpu,
            steps: Some(4000),
            cavity: "none".parse().unwrap(),
            f_peak: Some(2.0e8),
            fmax: Some(3.0e8),
            source_dir: [0.3, 0.8, 0.5],
            ..Config::default()
        };
        for w in ["xmin", "xmax"] {
            cfg.boundaries.insert(
                w.into(),
                dgatd::problem::Boundary::of(dgatd::problem::BoundaryKind::Pmc),
            );
        }
        let r = dgatd::run(&cfg, &mut |_, _| {}).unwrap();
        let got = corrected(&r);
        let mut worst = 0.0f64;
        for &f0 in lowest {
            let near = got
                .iter()
                .copied()
                .min_by(|a, b| (a - f0).abs().total_cmp(&(b - f0).abs()))
                .unwrap_or(f64::NAN);
            let e = (near - f0).abs() / f0;
            eprintln!(
                "n = {n}: {:.5} MHz vs {:.5} MHz, error {e:.3e}",
                near / 1e6,
                f0 / 1e6
            );
            worst = worst.max(e);
        }
        errs.push(worst);
    }
    // 16 x 13 x 10 cells: a few 1e-3, falling 4x per halving of h
    assert!(errs[2] < 5e-3, "{errs:?}");
    let order = (errs[1] / errs[2]).log2();
    eprintln!("observed order {order:.2}");
    assert!((1.5..2.8).contains(&order), "order {order}: {errs:?}");
}

/// `mesh_order = "morton"` renumbers the mesh's tets and nodes along a Z-order curve
/// (`mesh::order`): the same discretisation, so the same resonances. With the time step
/// fixed to the file order's, the two records differ by round-off only (the sums run in
/// another order), and the corrected frequencies agree to 1e-9, the bound above. The key
/// appears in the configuration only when it is not the default (old `run.toml` files and
/// checkpoint fingerprints are unchanged).
#[test]
fn a_morton_ordered_mesh_gives_the_same_resonances() {
    let base = coarse_cpu_3000();
    let file = dgatd::run(&base, &mut |_, _| {}).unwrap();
    let mut morton = base.clone();
    morton.mesh_order = dgatd::mesh::MeshOrder::Morton;
    morton.dt = Some(file.dt_s);
    let text = toml::to_string(&morton).unwrap();
    assert!(text.contains("mesh_order = \"morton\""), "{text}");
    assert!(!toml::to_string(&base).unwrap().contains("mesh_order"));
    let mo = dgatd::run(&morton, &mut |_, _| {}).unwrap();
    assert_lines_scale(&corrected(&file), &corrected(&mo), 1.0);
}
