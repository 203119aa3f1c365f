//! Open resonators on unstructured meshes (issue 45): a dielectric sphere meshed by Gmsh
//! splits each degenerate Mie mode (TE1 ×3, TM1 ×3) into members about 1e-4 apart, while
//! each line is a few percent wide (Q ≈ 40 at ε_r = 36). No record separates such members;
//! the extraction must report each multiplet as one line, never an empty table.
//!
//! Meshes: a sphere of seeded random radius and centre offset in air out to 8 radii, with
//! the first-order absorbing condition outside, generated here by Gmsh (Debian's
//! `python3-gmsh`, run as `/usr/bin/python3`) with a seeded random mesh seed. The source and
//! three probes sit at seeded random points inside the sphere.
//!
//! References:
//! - Mie theory (`spectrum::mie`). On meshes this coarse (h = 0.22 r in the sphere, about
//!   6 edges per wavelength in the dielectric at TM1) and with the first-order condition only
//!   8 radii out, the lines are off by up to ~3% in f and ~25% in Q (the
//!   condition lowers Q by about 12%, issue 45); the bounds (5% and 35%) say that the
//!   reported line is that mode, not that the mesh is fine.
//! - A brute-force fit of the same record (`brute_force`: the exact DFT of one damped
//!   exponential against the components' DFTs near the line, grid search): bounds 0.3% in f
//!   and 5% in Q for TE1 (measured 0.03% and 0.6%).
//! - The `harminv` program on the same record (filter diagonalization): per component, its
//!   line nearest the reported one; the median over the components. Its Q of a line this
//!   broad moves by 10% with the band it is given, so its bounds are 0.5% in f and 15% in Q.
//!
//! Skips (saying so) without Gmsh's Python module unless `DGATD_REQUIRE_GMSH=1`, and without
//! harminv unless `DGATD_REQUIRE_HARMINV=1` (both set in CI).

use crate::oracle;
use dgatd::internal::Rng;
use dgatd::spectrum::{MiePol, mie_resonance as resonance, nearest_line};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{PY, have_gmsh};

fn have_harminv() -> bool {
    let ok = oracle::harminv_available();
    if !ok {
        assert!(
            std::env::var("DGATD_REQUIRE_HARMINV").as_deref() != Ok("1"),
            "DGATD_REQUIRE_HARMINV=1 but harminv was not found"
        );
        eprintln!("\n*** SKIPPED: harminv not found; the multiplet test did not run ***\n");
    }
    ok
}

/// A sphere of radius `r` centred at `(c, 0, 0)` (volume group `sphere`) in a ball of
/// radius `8 r` (`air`, surface group `outer`), element sizes `0.22 r` on the sphere and
/// `1.6 r` outside, Gmsh's mesh seed `seed`.
fn gmsh_sphere(dir: &Path, r: f64, c: f64, seed: u64) -> PathBuf {
    let out = dir.join("sphere.msh");
    let script = format!(
        r#"
import gmsh
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.option.setNumber("Mesh.RandomSeed", {seed})
gmsh.model.add("s")
s1 = gmsh.model.occ.addSphere({c}, 0, 0, {r})
s2 = gmsh.model.occ.addSphere(0, 0, 0, {big})
gmsh.model.occ.fragment([(3, s2)], [(3, s1)])
gmsh.model.occ.synchronize()
vols = gmsh.model.getEntities(3)
small = min(vols, key=lambda v: gmsh.model.occ.getMass(3, v[1]))
inner = [small]
outer = [v for v in vols if v != small]
gmsh.model.addPhysicalGroup(3, [v[1] for v in inner], 1)
gmsh.model.setPhysicalName(3, 1, "sphere")
gmsh.model.addPhysicalGroup(3, [v[1] for v in outer], 2)
gmsh.model.setPhysicalName(3, 2, "air")
ib = set(b[1] for b in gmsh.model.getBoundary(inner, oriented=False))
ob = [b[1] for b in gmsh.model.getBoundary(outer, oriented=False) if b[1] not in ib]
gmsh.model.addPhysicalGroup(2, ob, 3)
gmsh.model.setPhysicalName(2, 3, "outer")
gmsh.model.mesh.setSize(gmsh.model.getEntities(0), {h_out})
gmsh.model.mesh.setSize(gmsh.model.getBoundary(inner, recursive=True), {h_in})
gmsh.model.mesh.generate(3)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.write("{path}")
gmsh.finalize()
"#,
        big = 8.0 * r,
        h_in = 0.22 * r,
        h_out = 1.6 * r,
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

/// A seeded random point inside the ball of radius `rad` about `(c, 0, 0)`, at least
/// `0.2 rad` from its centre (off-centre: every multiplet member reaches some probe).
fn point_in(rng: &mut Rng, c: f64, rad: f64) -> [f64; 3] {
    loop {
        let p = [rng.sym(), rng.sym(), rng.sym()];
        let n = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        if (0.2..1.0).contains(&n) {
            return [c + rad * p[0], rad * p[1], rad * p[2]];
        }
    }
}

fn run(mesh: &Path, eps: f64, r: f64, pts: &[[f64; 3]], length: &str) -> dgatd::ResonatorResult {
    let fmt = |p: &[f64; 3]| format!("[{}, {}, {}]", p[0], p[1], p[2]);
    let probes: Vec<String> = pts[1..].iter().map(fmt).collect();
    // f_peak and fmax as the issue's run at r = 1 m, ε_r = 36 (TE1 at 24.4 MHz)
    let s = (36.0 / eps).sqrt() / r;
    let text = format!(
        "mesh = \"{}\"\n{length}\nf_peak = {:e}\nfmax = {:e}\nsource = {}\nprobe = [{}]\n\
         backend = \"cpu\"\ncavity = \"none\"\n\
         [materials.sphere]\neps_r = {eps}\n[boundaries.outer]\nkind = \"abc\"\n",
        mesh.display(),
        3e7 * s,
        4e7 * s,
        fmt(&pts[0]),
        probes.join(", ")
    );
    let cfg = dgatd::Config::parse(&dgatd::solver::Origin {
        path: "sphere.toml".into(),
        text,
    })
    .unwrap();
    dgatd::run(&cfg, &mut |_, _| {}).unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median over the record's components of harminv's line nearest `f` (within 2%):
/// `(f, Q)`. harminv runs on the band `[0.8, 1.6] f_te1` (TE1 to above TE2, as one would
/// run it on this resonator; a band of a few line widths about a line this broad misses it).
fn harminv_near(res: &dgatd::ResonatorResult, f: f64, f_te1: f64) -> (f64, f64) {
    let start = res.analysis.start;
    let (mut fs, mut qs) = (Vec::new(), Vec::new());
    for x in res.record.signals(start) {
        let lines = oracle::harminv(&x, res.dt_s, 0.8 * f_te1, 1.6 * f_te1, 0.7 * f_te1, 100);
        if let Some(l) = lines
            .iter()
            .filter(|l| l.decay_per_s > 0.0 && (l.f_hz / f - 1.0).abs() < 0.02)
            .min_by(|a, b| (a.f_hz - f).abs().total_cmp(&(b.f_hz - f).abs()))
        {
            fs.push(l.f_hz);
            qs.push(std::f64::consts::PI * l.f_hz / l.decay_per_s);
        }
    }
    assert!(
        fs.len() >= 3,
        "harminv found the line near {f} Hz in {} components",
        fs.len()
    );
    (median(fs), median(qs))
}

/// A brute-force fit of one line to the record's spectra, independent of any pencil or
/// filter diagonalization: the DFT of every component on 81 frequencies within 1.5 half
/// widths of the line, against the exact DFT of one damped exponential `exp(s t)` over the
/// record, `G(ν) = (1 − w^N) / (1 − w)`, `w = exp((s − 2πiν) Δt)`, plus a linear background
/// per component (the other lines' tails), complex amplitudes by least squares per
/// component; `(f, α)` by a grid search refined five times around the best point.
/// Returns `(f, Q)`.
fn brute_force(res: &dgatd::ResonatorResult, f0: f64, q0: f64) -> (f64, f64) {
    use dgatd::C64;
    use nalgebra::{DMatrix, DVector};
    use std::f64::consts::PI;
    let sig = res.record.signals(res.analysis.start);
    let dt = res.dt_s;
    let hw = f0 / (2.0 * q0); // half width at half maximum, Hz
    let nus: Vec<f64> = (0..81)
        .map(|i| f0 + hw * 1.5 * (i as f64 / 40.0 - 1.0))
        .collect();
    // the components' DFTs on the grid
    let dft: Vec<Vec<C64>> = sig
        .iter()
        .map(|x| {
            nus.iter()
                .map(|&nu| {
                    let w = C64::new(0.0, -2.0 * PI * nu * dt).exp();
                    let mut p = C64::new(1.0, 0.0);
                    let mut acc = C64::new(0.0, 0.0);
                    for &v in x {
                        acc += p * v;
                        p *= w;
                    }
                    acc
                })
                .collect()
        })
        .collect();
    let n = sig[0].len() as i32;
    let resid = |f: f64, alpha: f64| -> f64 {
        let s = C64::new(-alpha, 2.0 * PI * f);
        let m = DMatrix::<C64>::from_fn(nus.len(), 3, |i, j| match j {
            0 => {
                let w = ((s - C64::new(0.0, 2.0 * PI * nus[i])) * dt).exp();
                (C64::new(1.0, 0.0) - w.powi(n)) / (C64::new(1.0, 0.0) - w)
            }
            1 => C64::new(1.0, 0.0),
            _ => C64::new((nus[i] - f0) / hw, 0.0),
        });
        let qr = m.clone().qr();
        dft.iter()
            .map(|x| {
                let y = DVector::from_column_slice(x);
                let a = qr
                    .r()
                    .solve_upper_triangular(&(qr.q().adjoint() * &y))
                    .unwrap();
                (y - &m * a).norm_squared()
            })
            .sum()
    };
    let (mut f, mut alpha) = (f0, PI * f0 / q0);
    let (mut df, mut da) = (0.5 * hw, 0.3 * alpha);
    for _ in 0..6 {
        let mut best = (f64::INFINITY, f, alpha);
        for i in -8..=8 {
            for j in -8..=8 {
                let (fi, aj) = (f + df * i as f64 / 8.0, alpha + da * j as f64 / 8.0);
                if aj > 0.0 {
                    let r = resid(fi, aj);
                    if r < best.0 {
                        best = (r, fi, aj);
                    }
                }
            }
        }
        (f, alpha) = (best.1, best.2);
        df /= 4.0;
        da /= 4.0;
    }
    (f, PI * f / alpha)
}

#[test]
fn broad_multiplets_of_a_gmsh_sphere_are_reported_at_every_record_length() {
    if !(have_gmsh("the multiplet test") && have_harminv()) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dgatd-multiplets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let eps = 36.0;
    for seed in [11_u64, 12] {
        let mut rng = Rng::new(seed);
        let r = 0.8 + 0.4 * 0.5 * (rng.sym() + 1.0);
        let c = 0.1 * r * rng.sym();
        let mesh = gmsh_sphere(&dir, r, c, seed);
        let pts: Vec<[f64; 3]> = (0..4).map(|_| point_in(&mut rng, c, 0.7 * r)).collect();
        let te = resonance(MiePol::Te, 1, 1, eps, r).unwrap();
        let tm = resonance(MiePol::Tm, 1, 1, eps, r).unwrap();
        // Short records too: 1000 and 3000 steps, then the issue's 3 µs (scaled with r).
        for length in [
            "steps = 1000",
            "steps = 3000",
            &format!("time = {:e}", 3e-6 * r),
        ] {
            let res = run(&mesh, eps, r, &pts, length);
            let peaks = res.peaks();
            eprintln!(
                "seed {seed}, r = {r:.4} m, {} tets, {length}: {:?}",
                res.mesh.n_tets(),
                peaks
                    .iter()
                    .map(|p| (p.f_hz / 1e6, p.q.unwrap_or(0.0), p.members))
                    .collect::<Vec<_>>()
            );
            assert!(!peaks.is_empty(), "seed {seed}, {length}: an empty table");
            // the TE1 multiplet is the first clear line at every length
            // the line nearest the Mie pole in f and Q (`mie::nearest_line`), within `tol` in f
            let lines = res.lines_with_q();
            let near = |m: &dgatd::spectrum::MieMode, tol: f64| {
                let (f, _) = nearest_line(&lines, m)?;
                ((f / m.f_hz - 1.0).abs() < tol)
                    .then(|| peaks.iter().find(|p| res.corrected(p) == f).cloned())
                    .flatten()
            };
            let p = near(&te, 0.05).unwrap_or_else(|| panic!("seed {seed}, {length}: no TE1"));
            let q = p.q.unwrap();
            assert!(
                (q / te.q - 1.0).abs() < 0.35,
                "seed {seed}, {length}: TE1 Q {q} against Mie {}",
                te.q
            );
            if !length.starts_with("time") {
                continue;
            }
            // The whole record: TE1 and TM1, each one line, against Mie and harminv.
            for m in [&te, &tm] {
                let p = near(m, 0.05).unwrap_or_else(|| panic!("seed {seed}: no {}", m.name()));
                let (f, q) = (p.f_hz, p.q.unwrap());
                let (hf, hq) = harminv_near(&res, f, te.f_hz);
                let (bf, bq) = brute_force(&res, f, q);
                eprintln!(
                    "  {}: {:.4} MHz Q {q:.2} ({} members); brute force {:.4} MHz Q {bq:.2}; harminv {:.4} MHz Q {hq:.2}; Mie {:.4} MHz Q {:.2}",
                    m.name(),
                    f / 1e6,
                    p.members,
                    bf / 1e6,
                    hf / 1e6,
                    m.f_hz / 1e6,
                    m.q
                );
                // TM1 lies 3 of its half widths below the strong, narrow TE2 line, whose
                // tail a linear background does not absorb, and the record runs past the
                // boundary's echo: the two oracles then disagree with each other by more
                // than 30% in Q (measured: brute force Q 21, harminv Q 45, this line 29.5;
                // Mie 38), so TM1 is held to Mie's bounds only.
                if std::ptr::eq(m, &te) {
                    assert!(
                        (f / bf - 1.0).abs() < 0.003,
                        "TE1: f {f} vs brute force {bf}"
                    );
                    assert!(
                        (q / bq - 1.0).abs() < 0.05,
                        "TE1: Q {q} vs brute force {bq}"
                    );
                    assert!((f / hf - 1.0).abs() < 0.005, "TE1: f {f} vs harminv {hf}");
                    assert!((q / hq - 1.0).abs() < 0.15, "TE1: Q {q} vs harminv {hq}");
                }
                assert!(
                    (q / m.q - 1.0).abs() < 0.35,
                    "{}: Q {q} vs Mie {}",
                    m.name(),
                    m.q
                );
                // one line per multiplet: no second line within its width
                let width = f / q;
                let others = peaks
                    .iter()
                    .filter(|o| (o.f_hz - f).abs() < 0.5 * width && o.f_hz != f)
                    .count();
                assert_eq!(others, 0, "{}: members reported apart", m.name());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
