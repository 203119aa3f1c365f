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
    brute_force_of(&res.record.signals(res.analysis.start), res.dt_s, f0, q0)
}

/// [`brute_force`] on the signals `sig` sampled every `dt` seconds.
fn brute_force_of(sig: &[Vec<f64>], dt: f64, f0: f64, q0: f64) -> (f64, f64) {
    use dgatd::C64;
    use nalgebra::{DMatrix, DVector};
    use std::f64::consts::PI;
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

/// Lines of a record cut to its first `steps` steps, analysed as the resonator pipeline
/// analyses a run of that many steps (`solver::analyse`: from the pulse's end, the band from
/// 0.05 `f_peak` to `fmax`, `min_q` 1). `(f corrected, Q, amplitude)` per line.
fn lines_of_first(
    res: &dgatd::ResonatorResult,
    steps: usize,
    band: (f64, f64),
) -> Vec<(f64, f64, f64)> {
    let start = res.analysis.start;
    let sig: Vec<Vec<f64>> = (res.record.signals(start).into_iter())
        .map(|x| x[..steps - start].to_vec())
        .collect();
    let mut s = dgatd::spectrum::ExtractSettings::band(band.0, band.1);
    s.min_q = 1.0;
    let e = dgatd::spectrum::extract(&sig, res.dt_s, &s).unwrap();
    (e.peaks.iter())
        .map(|p| {
            let f = dgatd::spectrum::leapfrog_correction(p.f_hz, res.dt_s);
            (f, p.q.unwrap_or(f64::INFINITY), p.amplitude)
        })
        .collect()
}

/// The broad TM₁₁ line of a dielectric sphere in a PML at every record length (issue 45:
/// "no empty table at any record length from 10³ steps"). The TM₁₁ class of an ε_r = 10
/// sphere (eighth, planes x = PMC, y = PMC, z = PEC; Q 4.2) holds one broad line beside the
/// narrow TE₂₁ (Q 32) and the layer's own heavily damped modes.
///
/// Meshes: `results/symmetry/gmsh_sphere.py` eighths (seeded random radius 0.08–0.12 m,
/// the PML from one free-space wavelength of TE₁₁ beyond the sphere, coarse: `--h-factor
/// 1.5`, about 45k tets), source the z-directed ball at the centre, probes seeded random in
/// the sphere. One run of 3000 steps per seed; its record cut to 3000, 2000, 1500 and 1000
/// steps and analysed as a run of that length. Asserted: no table is empty; exactly one
/// broad line (Q < 10) within 12% of Mie's TM₁₁ is reported at every length, the same
/// line (f to 1e-4, Q to 1%), and it lies within the coarse mesh's distance of Mie
/// (measured −7.5% and −6.8% in f, +4.5% and +3.4% in Q; bounds 10% and 15%). Other
/// broad lines come and go with the length (seed 41: 717 MHz, Q 3.5 at 2000 steps only;
/// 513 MHz, Q 2.1 at 1500 only): fits of the layer's background, not modes, which a
/// single record cannot tell from lines (the tables flag nothing there). These meshes do not
/// hit the fault itself (the rule before the loose bound reports TM₁₁ on them too); the
/// record of the next test does. The brute-force fit is no oracle here: TE₂₁ lies within
/// TM₁₁'s half width on seed 41, where it pulls that fit to 664 MHz, Q 7.8.
#[test]
fn the_broad_tm11_line_with_a_pml_is_reported_at_every_record_length() {
    if !have_gmsh("the broad-line test") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dgatd-broad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/symmetry/gmsh_sphere.py");
    let eps = 10.0;
    for seed in [41_u64, 42] {
        let mesh = dir.join(format!("eighth{seed}.msh"));
        let out = Command::new(PY)
            .arg(&script)
            .args([
                "--seed",
                &seed.to_string(),
                "--eps",
                "10",
                "--cut",
                "eighth",
            ])
            .args(["--h-factor", "1.5", "--out"])
            .arg(&mesh)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "gmsh_sphere.py: {said}");
        let r: f64 = (said.split_whitespace())
            .find_map(|kv| kv.strip_prefix("r=")?.parse().ok())
            .unwrap_or_else(|| panic!("no r= in {said}"));
        let te = resonance(MiePol::Te, 1, 1, eps, r).unwrap();
        let tm = resonance(MiePol::Tm, 1, 1, eps, r).unwrap();
        let mut rng = Rng::new(seed);
        let fmt = |p: [f64; 3]| format!("[{:e}, {:e}, {:e}]", p[0], p[1], p[2]);
        let probes: Vec<String> = (0..4)
            .map(|_| {
                let p = point_in(&mut rng, 0.0, 0.8 * r);
                fmt([p[0].abs(), p[1].abs(), p[2].abs()])
            })
            .collect();
        let f_peak = 0.5 * (te.f_hz + tm.f_hz);
        let fmax = 2.0 * tm.f_hz;
        let text = format!(
            "mesh = \"{}\"\nsymmetry = \"x=pmc,y=pmc,z=pec\"\nsteps = 3000\n\
             source = [0.0, 0.0, 0.0]\nsource_dir = [0.0, 0.0, 1.0]\nsource_radius = {:e}\n\
             probe = [{}]\nf_peak = {f_peak:e}\nfmax = {fmax:e}\nmin_q = 1\nbackend = \"cpu\"\n\
             [materials.sphere]\neps_r = {eps}\n[materials.pml]\npml = true\n",
            mesh.display(),
            r / 4.0,
            probes.join(", ")
        );
        let cfg = dgatd::Config::parse(&dgatd::solver::Origin {
            path: "broad.toml".into(),
            text,
        })
        .unwrap();
        let res = dgatd::run(&cfg, &mut |_, _| {}).unwrap();
        // the broad lines (Q < 10) within 12% of Mie's TM11, at each length
        let mut broad: Vec<Vec<(f64, f64)>> = Vec::new();
        for steps in [3000, 2000, 1500, 1000] {
            let lines = lines_of_first(&res, steps, (0.05 * f_peak, fmax));
            eprintln!(
                "seed {seed}, r = {r:.4} m, {} tets, {steps} steps, Mie TM11 {:.4} MHz Q {:.3}: {:?}",
                res.mesh.n_tets(),
                tm.f_hz / 1e6,
                tm.q,
                (lines.iter())
                    .filter(|l| l.0 < 1.2 * tm.f_hz)
                    .map(|l| (l.0 / 1e6, l.1, l.2))
                    .collect::<Vec<_>>()
            );
            assert!(
                !lines.is_empty(),
                "seed {seed}, {steps} steps: an empty table"
            );
            broad.push(
                (lines.iter())
                    .filter(|l| l.1 < 10.0 && (l.0 / tm.f_hz - 1.0).abs() < 0.12)
                    .map(|l| (l.0, l.1))
                    .collect(),
            );
        }
        // TM11: the broad line that every length reports (f to 1e-4, Q to 1%)
        let same = |a: &(f64, f64), b: &(f64, f64)| {
            (a.0 / b.0 - 1.0).abs() < 1e-4 && (a.1 / b.1 - 1.0).abs() < 0.01
        };
        let kept: Vec<(f64, f64)> = (broad[0].iter())
            .filter(|l| broad[1..].iter().all(|b| b.iter().any(|m| same(l, m))))
            .copied()
            .collect();
        assert_eq!(
            kept.len(),
            1,
            "seed {seed}: TM11 not at every length: {broad:?}"
        );
        let (f, q) = kept[0];
        assert!((f / tm.f_hz - 1.0).abs() < 0.10, "seed {seed}: TM11 f {f}");
        assert!((q / tm.q - 1.0).abs() < 0.15, "seed {seed}: TM11 Q {q}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The record that gave an empty table (issue 45; `results/meep/README.md`): `probe.csv` of
/// `mie_sphere --eps 10 --step 2 --air 0.77 --outer 1.3 --boundary pml --backend cpu --n 5
/// --excite tm-ball --symmetry x=pmc,y=pmc,z=pec` (commit 4ed4c16: the 5-shell ball of a
/// 0.1 m sphere, 257k tets, Δt 27.4 ps), from the pipeline's analysis start (step 133) to
/// its end (step 503): 6 probes, 18 components, 13 significant digits, as written.
///
/// TM₁₁'s two fits disagree by 2.9% of its decay rate there, TM₁₂'s by 6.3%; with the rule
/// before the loose bound neither was reported, nor anything else. Now both are, against
/// Mie within the 5-shell mesh's own error (the same run at 6 shells gives TM₁₁ −0.31%,
/// +0.43%: the mesh converges; bounds just above the measured −2.1% / −9.8% for TM₁₁ and
/// −4.9% / −7.0% for TM₁₂: the record is fixed, so these only guard the result), against
/// the brute-force fit of the same record, with the disagreement in `error` and the band
/// around them marked `loose`.
#[test]
fn the_record_that_gave_an_empty_table_reports_tm11_and_tm12() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tm11_eighth_n5_probe.csv");
    let mut rd = csv::Reader::from_path(&path).unwrap();
    let rows: Vec<Vec<f64>> = (rd.records())
        .map(|r| r.unwrap().iter().map(|x| x.parse().unwrap()).collect())
        .collect();
    let dt = rows[1][0] - rows[0][0];
    let sig: Vec<Vec<f64>> = (1..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c]).collect())
        .collect();
    assert_eq!((sig.len(), sig[0].len()), (18, 370));
    // the pipeline's band: 0.05 f_peak to fmax = 2 f(TM11 of Mie), as mie_sphere sets them
    let te = resonance(MiePol::Te, 1, 1, 10.0, 0.1).unwrap();
    let tm = resonance(MiePol::Tm, 1, 1, 10.0, 0.1).unwrap();
    let tm12 = resonance(MiePol::Tm, 1, 2, 10.0, 0.1).unwrap();
    let mut s =
        dgatd::spectrum::ExtractSettings::band(0.05 * 0.5 * (te.f_hz + tm.f_hz), 2.0 * tm.f_hz);
    s.min_q = 1.0;
    let near = |e: &dgatd::spectrum::Extraction, m: &dgatd::spectrum::MieMode| {
        (e.peaks.iter())
            .find(|p| (p.f_hz / m.f_hz - 1.0).abs() < 0.08)
            .cloned()
    };
    let before = dgatd::spectrum::extract(&sig, dt, &{
        let mut b = s.clone();
        b.loose_decay_error = 0.0;
        b
    })
    .unwrap();
    assert!(
        near(&before, &tm).is_none() && near(&before, &tm12).is_none(),
        "the record no longer shows the fault: {:?}",
        before.peaks
    );
    let e = dgatd::spectrum::extract(&sig, dt, &s).unwrap();
    for (m, tol_f, tol_q) in [(&tm, 0.03, 0.12), (&tm12, 0.06, 0.10)] {
        let p = near(&e, m).unwrap_or_else(|| panic!("no {} in {:?}", m.name(), e.peaks));
        let f = dgatd::spectrum::leapfrog_correction(p.f_hz, dt);
        let q = p.q.unwrap();
        let (bf, bq) = brute_force_of(&sig, dt, p.f_hz, q);
        let bf = dgatd::spectrum::leapfrog_correction(bf, dt);
        // measured: TM11 0.56% and 0.3%, TM12 0.11% and 4.7% (its neighbours' tails in the
        // brute force's background)
        assert!(
            (f / bf - 1.0).abs() < 0.01,
            "{}: f {f} vs brute force {bf}",
            m.name()
        );
        assert!(
            (q / bq - 1.0).abs() < 0.08,
            "{}: Q {q} vs brute force {bq}",
            m.name()
        );
        eprintln!(
            "{}: {:.4} MHz Q {q:.3} (error {:.2e}); brute force {:.4} MHz Q {bq:.3}; Mie {:.4} MHz Q {:.3}",
            m.name(),
            f / 1e6,
            p.error.unwrap(),
            bf / 1e6,
            m.f_hz / 1e6,
            m.q
        );
        assert!(
            (f / m.f_hz - 1.0).abs() < tol_f,
            "{}: f {f} vs Mie",
            m.name()
        );
        assert!((q / m.q - 1.0).abs() < tol_q, "{}: Q {q} vs Mie", m.name());
        // the disagreement of the fits, above the tight bound's 2% of the decay rate
        let alpha = p.decay_per_s.unwrap();
        let ds = p.error.unwrap() * 2.0 * std::f64::consts::PI * p.f_hz;
        assert!(
            ds > 0.02 * alpha && ds <= 0.1 * alpha,
            "{}: |Δs| / α = {}",
            m.name(),
            ds / alpha
        );
        let marked = (e.unresolved.iter())
            .any(|u| u.f_lo_hz <= p.f_hz && p.f_hz <= u.f_hi_hz && u.loose > 0);
        assert!(marked, "{}: no loose mark in {:?}", m.name(), e.unresolved);
    }
}
