//! Symmetry planes (`symmetry = "x=pec"`, `"x=pmc"`; issue 48), against the whole model.
//!
//! The exact identity: on a mesh that is mirror-symmetric about `x = 0`, the whole model's
//! response to a source at `p` (x > 0) is, on the half x > 0, the mean of the two halves'
//! responses to the same source, one with a PEC wall on the plane and one with a PMC wall
//! (the source plus its image of either sign is a source of one class; the two images
//! cancel). The scheme's operators on the mirror-symmetric mesh commute with the mirror,
//! and a half's operators are the whole mesh's on the class's subspace (PEC: the plane's
//! half-edges fixed; PMC: the natural condition), so the identity holds to round-off in
//! the step (asserted: 1e-11 of the record's largest value in f64; the records differ from
//! each other by order one, asserted > 0.1, so the test sees a wrong wall).
//!
//! The mesh: a box of seeded random sides holding a dielectric ball of random radius and
//! permittivity centred on the plane, its half x > 0 meshed by Gmsh (Debian's
//! `python3-gmsh`, run as `/usr/bin/python3`; seeded) and mirrored here, written as MSH 2.2.
//! The source, its direction and the probes are seeded random, at x > 0. The three runs
//! share one time step (the whole model's; the halves' spectra are parts of it).
//!
//! Also: the lines of the two halves are the whole model's lines (each of the whole
//! model's five strongest lines within 1e-6 of a half's line), and the refusals: a given
//! point on the cut-away side, a mesh with a tet across the plane, a boundary named as a
//! plane's group, `--method dg` with a PMC plane. Skips (saying so) without Gmsh's Python
//! module unless `DGATD_REQUIRE_GMSH=1` (set in CI).

use dgatd::internal::Rng;
use dgatd::solver::{Config, Origin};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{PY, have_gmsh};

/// The half x > 0 of a box `[-a, a] x [0, b] x [0, c]` holding a ball of radius `r` centred
/// at `(0, yc, zc)` (volume groups `glass`, `air`), element size `h`, Gmsh seed `seed`.
fn gmsh_half(dir: &Path, [a, b, c]: [f64; 3], [yc, zc, r]: [f64; 3], h: f64, seed: u64) -> PathBuf {
    let out = dir.join("half.msh");
    let script = format!(
        r#"
import gmsh
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.option.setNumber("Mesh.RandomSeed", {seed})
gmsh.model.add("h")
bx = gmsh.model.occ.addBox(0, 0, 0, {a}, {b}, {c})
ball = gmsh.model.occ.addSphere(0, {yc}, {zc}, {r})
gmsh.model.occ.intersect([(3, ball)], [(3, gmsh.model.occ.copy([(3, bx)])[0][1])], removeTool=True)
gmsh.model.occ.fragment([(3, bx)], gmsh.model.occ.getEntities(3)[1:])
gmsh.model.occ.synchronize()
vols = gmsh.model.getEntities(3)
half_ball = 2.0 / 3.0 * 3.141592653589793 * {r} ** 3
glass = min(vols, key=lambda v: abs(gmsh.model.occ.getMass(3, v[1]) - half_ball))
gmsh.model.addPhysicalGroup(3, [glass[1]], 1)
gmsh.model.setPhysicalName(3, 1, "glass")
gmsh.model.addPhysicalGroup(3, [v[1] for v in vols if v != glass], 2)
gmsh.model.setPhysicalName(3, 2, "air")
gmsh.model.mesh.setSize(gmsh.model.getEntities(0), {h})
gmsh.model.mesh.generate(3)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.write("{path}")
gmsh.finalize()
"#,
        path = out.display()
    );
    let o = Command::new(PY).args(["-c", &script]).output().unwrap();
    assert!(
        o.status.success(),
        "gmsh failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// The half mesh and its mirror image in `x`, joined at the plane, written as MSH 2.2.
fn mirrored(half: &Path, out: &Path) {
    let m = dgatd::mesh::read_gmsh(half).unwrap();
    let (lo, hi) = m.bbox();
    let tol = 1e-9 * (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
    assert!(lo[0].abs() <= tol, "the half starts at x = {}", lo[0]);
    let n = m.nodes.len();
    // node v keeps its number; its image is v itself on the plane, else n + v
    let image = |v: u32| {
        if m.nodes[v as usize][0].abs() <= tol {
            v
        } else {
            n as u32 + v
        }
    };
    let mut s = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n");
    let vols: Vec<_> = m.physical_names.iter().filter(|p| p.dim == 3).collect();
    writeln!(s, "{}", vols.len()).unwrap();
    for p in &vols {
        writeln!(s, "3 {} \"{}\"", p.tag, p.name).unwrap();
    }
    s += "$EndPhysicalNames\n$Nodes\n";
    writeln!(s, "{}", 2 * n).unwrap();
    for (k, p) in m.nodes.iter().enumerate() {
        let x = if p[0].abs() <= tol { 0.0 } else { p[0] };
        writeln!(s, "{} {:e} {:e} {:e}", k + 1, x, p[1], p[2]).unwrap();
    }
    for (k, p) in m.nodes.iter().enumerate() {
        // the plane's nodes are not used twice; written anyway (unused nodes are dropped)
        writeln!(
            s,
            "{} {:e} {:e} {:e}",
            n + k + 1,
            -p[0].max(0.0),
            p[1],
            p[2]
        )
        .unwrap();
    }
    s += "$EndNodes\n$Elements\n";
    writeln!(s, "{}", 2 * m.n_tets()).unwrap();
    let mut id = 1;
    for mirror in [false, true] {
        for (t, tet) in m.tets.iter().enumerate() {
            let v = tet.map(|v| if mirror { image(v) } else { v } + 1);
            let g = m.tet_phys[t];
            writeln!(s, "{id} 4 2 {g} {g} {} {} {} {}", v[0], v[1], v[2], v[3]).unwrap();
            id += 1;
        }
    }
    s += "$EndElements\n";
    std::fs::write(out, s).unwrap();
}

fn run(text: &str) -> dgatd::ResonatorResult {
    let cfg = Config::parse(&Origin {
        path: "symmetry.toml".into(),
        text: text.into(),
    })
    .unwrap();
    dgatd::run(&cfg, &mut |_, _| {}).unwrap()
}

fn fmt(p: [f64; 3]) -> String {
    format!("[{:e}, {:e}, {:e}]", p[0], p[1], p[2])
}

#[test]
fn the_whole_model_is_the_mean_of_its_pec_and_pmc_halves() {
    if !have_gmsh("the symmetry test") {
        return;
    }
    let mut rng = Rng::new(4848);
    let dir = std::env::temp_dir().join(format!("dgatd_symmetry_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let side = [
        0.4 + 0.3 * rng.uniform(),
        0.7 + 0.4 * rng.uniform(),
        0.6 + 0.4 * rng.uniform(),
    ];
    let r = 0.15 + 0.1 * rng.uniform();
    let ball = [
        r + 0.05 + (side[1] - 2.0 * r - 0.1) * rng.uniform(),
        r + 0.05 + (side[2] - 2.0 * r - 0.1) * rng.uniform(),
        r,
    ];
    let half = gmsh_half(&dir, side, ball, 0.12, 1 + (rng.uniform() * 1000.0) as u64);
    let full = dir.join("full.msh");
    mirrored(&half, &full);
    let point = |rng: &mut Rng| {
        [
            side[0] * (0.2 + 0.7 * rng.uniform()),
            side[1] * (0.1 + 0.8 * rng.uniform()),
            side[2] * (0.1 + 0.8 * rng.uniform()),
        ]
    };
    let src = point(&mut rng);
    let dir_s = [rng.sym(), rng.sym(), rng.sym()];
    let probes: Vec<String> = (0..3).map(|_| fmt(point(&mut rng))).collect();
    let eps = 2.0 + 6.0 * rng.uniform();
    let base = |extra: &str| {
        format!(
            "mesh = \"{}\"\nsteps = 1500\nbackend = \"cpu\"\ncavity = \"none\"\nsource = {}\n\
             source_dir = {}\nprobe = [{}]\n{extra}\n[materials.glass]\neps_r = {eps}\n",
            full.display(),
            fmt(src),
            fmt(dir_s),
            probes.join(", ")
        )
    };
    let whole = run(&base(""));
    let dt = format!("dt = {:e}", whole.dt_s);
    let pec = run(&base(&format!("{dt}\nsymmetry = \"x=pec\"")));
    let pmc = run(&base(&format!("{dt}\n[symmetry]\nx = \"pmc\"")));
    assert_eq!(pec.dt_s, whole.dt_s);
    // each half steps half the tets
    assert_eq!(2 * pec.mesh.n_tets(), whole.mesh.n_tets());
    assert_eq!(pmc.mesh.n_tets(), pec.mesh.n_tets());
    let (a, b, c) = (
        &whole.record.samples,
        &pec.record.samples,
        &pmc.record.samples,
    );
    assert_eq!(a.len(), b.len());
    let peak = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(peak > 0.0);
    let mean_err = a
        .iter()
        .zip(b.iter().zip(c))
        .map(|(a, (b, c))| (a - 0.5 * (b + c)).abs())
        .fold(0.0, f64::max)
        / peak;
    let apart = b
        .iter()
        .zip(c)
        .map(|(b, c)| (b - c).abs())
        .fold(0.0, f64::max)
        / peak;
    eprintln!(
        "{} tets whole; ε_r = {eps:.3}; |whole − (pec + pmc)/2| = {mean_err:.2e}, |pec − pmc| = {apart:.3} of the peak",
        whole.mesh.n_tets()
    );
    assert!(mean_err < 1e-11, "{mean_err:e}");
    assert!(apart > 0.1, "{apart}");
    // the lines: the whole model's strongest are the halves'
    let mut lines: Vec<_> = whole.peaks().to_vec();
    lines.sort_by(|x, y| y.amplitude.total_cmp(&x.amplitude));
    let halves: Vec<f64> = pec
        .peaks()
        .iter()
        .chain(pmc.peaks())
        .map(|p| p.f_hz)
        .collect();
    assert!(lines.len() >= 5, "{} lines", lines.len());
    for l in &lines[..5] {
        let near = halves
            .iter()
            .map(|f| (f / l.f_hz - 1.0).abs())
            .fold(f64::MAX, f64::min);
        assert!(
            near < 1e-6,
            "the line at {} Hz: nearest half line {near:e} away",
            l.f_hz
        );
    }
    // run.toml's symmetry reads back
    let cfg = pmc.config.clone();
    assert_eq!(cfg.symmetry.unwrap().to_string(), "x=pmc");
    let _ = std::fs::remove_dir_all(&dir);
}

fn refused(text: &str) -> String {
    let cfg = Config::parse(&Origin {
        path: "symmetry.toml".into(),
        text: text.into(),
    });
    match cfg {
        Err(e) => e.to_string(),
        Ok(cfg) => dgatd::run(&cfg, &mut |_, _| {})
            .err()
            .expect("the run is refused")
            .to_string(),
    }
}

#[test]
fn bad_symmetry_inputs_are_refused_with_the_reason() {
    let cfg = |extra: &str| {
        format!("box = \"4,2,2:1,0.5,0.5\"\nsteps = 20\nbackend = \"cpu\"\n{extra}\n")
    };
    // a given point on the side the plane cuts away
    let e = refused(&cfg(
        "symmetry = \"x=pmc:0.5,0,0\"\nprobe = [[0.2, 0.2, 0.2]]\nsource = [0.8, 0.2, 0.3]",
    ));
    assert!(e.contains("cuts away") && e.contains("probe"), "{e}");
    // a tet across the plane (the box's cells are 0.25 wide along x)
    let e = refused(&cfg("symmetry = \"x=pec:0.3,0,0\""));
    assert!(
        e.contains("crosses the plane") && e.contains("x = 0.3"),
        "{e}"
    );
    // a plane off the mesh
    let e = refused(&cfg("symmetry = \"y=pec:0,2,0\""));
    assert!(e.contains("no face of the mesh lies on the plane"), "{e}");
    // a boundary named as the plane's group
    let e = refused(&cfg(
        "symmetry = \"x=pmc:0.5,0,0\"\n[boundaries.symmetry_x]\nkind = \"pec\"",
    ));
    assert!(
        e.contains("symmetry_x") && e.contains("symmetry plane"),
        "{e}"
    );
    // DG has PEC walls only
    let e = refused(&cfg("method = \"dg\"\nsymmetry = \"x=pmc:0.5,0,0\""));
    assert!(e.contains("--method dg supports PEC walls only"), "{e}");
    // the plane's faces are counted like any boundary's, and a half box at PEC is a box
    let ok = run(&cfg("symmetry = \"x=pec:0.5,0,0\""));
    assert_eq!(ok.mesh.n_tets(), 48);
}
