//! The resonator job's `f_corrected_hz` in cavities filled with one dispersive medium
//! (`dgatd::problem::dispersion_relation`), end to end from config files on the bundled
//! coarse cylinder (a Gmsh mesh the scheme was not tuned on), with seeded random poles.
//!
//! The reference is independent of the code under test: the same mesh run in vacuum gives
//! the discrete operator's eigenvalues `λ = (2π f_vac)²` (its corrected lines; the leapfrog
//! correction is exact without poles), and the continuum resonance of each mode in the fill
//! solves `ε(s) s² + λ = 0` in closed form (Drude: `ω² = (λ + ω_p²)/ε∞`; Lorentz: both roots
//! of `ε∞ ω⁴ − (ε∞ ω₀² + Δε ω₀² + λ) ω² + λ ω₀² = 0`) or by Newton (Debye). Every line of
//! the fill with a clear Q must be such an image (or the medium's own line: the plasma
//! frequency of the discrete gradients for Drude, the longitudinal frequency for Lorentz),
//! its corrected frequency within the extraction's accuracy of it, and never farther from
//! it than the raw frequency.

use crate::common::*;
use dgatd::internal::{C64, Rng};
use std::f64::consts::TAU;

const BIN: &str = env!("CARGO_BIN_EXE_dgatd");

/// One line of `modes.csv`.
#[derive(Clone, Copy, Debug)]
struct Line {
    f: f64,
    fc: f64,
    decay: f64,
    q: f64,
    dt: f64,
}

/// Runs the cylinder with the material table `poles` (none: vacuum) and returns its lines
/// and the run's stderr.
fn run(dir: &std::path::Path, name: &str, poles: &str, steps: usize) -> (Vec<Line>, String) {
    let cfg = format!(
        "mesh = {:?}\nsteps = {steps}\nfmax = 4.0e8\nf_peak = 1.5e8\nbackend = \"cpu\"\n\n[materials.vacuum]\neps_r = 1.0\n{poles}\n",
        mesh_path("cylinder_coarse.msh").display().to_string()
    );
    let c = dir.join(format!("{name}.toml"));
    std::fs::write(&c, cfg).unwrap();
    let out = dir.join(name);
    let o = std::process::Command::new(BIN)
        .args(["resonator", "--quiet", "--config"])
        .arg(&c)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    let t = std::fs::read_to_string(out.join("modes.csv")).unwrap();
    let mut rows = t.lines();
    let head: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (f, fc, decay, q, dt) = (
        col("f_hz"),
        col("f_corrected_hz"),
        col("decay_per_s"),
        col("q"),
        col("dt_s"),
    );
    let lines = rows
        .map(|l| {
            let v: Vec<f64> = l
                .split(',')
                .map(|x| x.parse().unwrap_or(f64::NAN))
                .collect();
            Line {
                f: v[f],
                fc: v[fc],
                decay: v[decay],
                q: v[q],
                dt: v[dt],
            }
        })
        .collect();
    (lines, err)
}

fn tmp(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dgatd-dispcorr-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The eigenvalues `λ` (rad²/s²) of the vacuum lines with a clear Q.
fn vacuum_lambdas(dir: &std::path::Path) -> Vec<f64> {
    let (vac, _) = run(dir, "vacuum", "", 6000);
    let l: Vec<f64> = vac
        .iter()
        .filter(|l| l.q > 1e3)
        .map(|l| (TAU * l.fc).powi(2))
        .collect();
    assert!(l.len() >= 4, "{vac:?}");
    l
}

/// Checks every clear line of `lines` against the nearest of `images` (Hz): the corrected
/// frequency within `tol` of it (relative) and no farther than the raw one; returns the
/// worst corrected and the worst raw distance.
fn check(
    what: &str,
    lines: &[Line],
    images: &[f64],
    min_q: f64,
    tol: f64,
    below: f64,
) -> (f64, f64) {
    let near = |f: f64| {
        images
            .iter()
            .map(|&p| (f - p).abs() / p)
            .fold(f64::INFINITY, f64::min)
    };
    let (mut worst_c, mut worst_raw, mut n) = (0.0f64, 0.0f64, 0);
    for l in lines.iter().filter(|l| l.q > min_q && l.fc < below) {
        let (c, raw) = (near(l.fc), near(l.f));
        eprintln!(
            "{what}: f {:.6e} Hz, corrected {:.6e} Hz, Q {:.3e}: corrected off the nearest image by {c:.2e}, raw by {raw:.2e}",
            l.f, l.fc, l.q
        );
        assert!(
            c < tol,
            "{what}: line {l:?} is {c:e} from every image {images:?}"
        );
        assert!(
            c <= raw,
            "{what}: the correction moved {l:?} away ({c:e} > {raw:e})"
        );
        worst_c = worst_c.max(c);
        worst_raw = worst_raw.max(raw);
        n += 1;
    }
    assert!(n >= 3, "{what}: only {n} clear lines in {lines:?}");
    (worst_c, worst_raw)
}

#[test]
fn lossless_drude_and_lorentz_fills_are_corrected_to_their_continuum_roots() {
    let dir = tmp("lossless");
    let lam = vacuum_lambdas(&dir);
    let mut r = Rng::new(0x10a7);
    // Lorentz (the case, Δε and f₀ drawn around 1 and 200 MHz), both branches
    let (de, f0) = (0.8 + 0.4 * r.uniform(), 1.9e8 + 2e7 * r.uniform());
    let (lines, err) = run(
        &dir,
        "lorentz",
        &format!("lorentz = [{{ delta_eps = {de:e}, f_0 = {f0:e} }}]"),
        12000,
    );
    let w0 = TAU * f0;
    let mut images: Vec<f64> = vec![f0 * (1.0 + de).sqrt()];
    for &l in &lam {
        let (b, c) = (-(w0 * w0 * (1.0 + de) + l), l * w0 * w0);
        let d = (b * b - 4.0 * c).sqrt();
        images.push(((-b - d) / 2.0).sqrt() / TAU);
        images.push(((-b + d) / 2.0).sqrt() / TAU);
    }
    let (c, raw) = check("Lorentz", &lines, &images, 1e3, 1e-7, f64::INFINITY);
    eprintln!("Lorentz fill: worst corrected {c:.2e}, worst raw {raw:.2e}; {err}");
    // the upper branch of the lowest mode is found, and corrected to round-off
    let top = images[2];
    assert!(
        lines.iter().any(|l| (l.fc - top).abs() < 1e-7 * top),
        "the upper branch {top:e} Hz of the lowest mode is missing: {lines:?}"
    );
    // Drude, lossless: the images and the plasma line ω_p of the discrete gradients
    let f_p = 1.5e8 + 5e7 * r.uniform();
    let (lines, _) = run(
        &dir,
        "drude",
        &format!("drude = [{{ f_p = {f_p:e} }}]"),
        6000,
    );
    let wp = TAU * f_p;
    let images: Vec<f64> = std::iter::once(f_p)
        .chain(lam.iter().map(|&l| (l + wp * wp).sqrt() / TAU))
        .collect();
    let (c, raw) = check("Drude", &lines, &images, 1e3, 1e-7, f64::INFINITY);
    eprintln!("Drude fill: worst corrected {c:.2e}, worst raw {raw:.2e}");
    assert!(raw > 1e3 * c, "the raw lines carry the time step's shift");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lossy (Debye) fill: the damped lines' corrected frequencies are the continuum roots of
/// `ε(s) s² + λ = 0`, to the accuracy of a damped line's extraction. A weak pole (Δε ≈
/// 0.05–0.1, Q ≈ 25–60 at the lowest modes) and only the lines below 240 MHz, where the
/// damped lines are apart by more than their widths (above, the mesh's multiplets of width
/// 1/Q merge into lines that stand for several images at once).
#[test]
fn debye_fill_is_corrected_to_its_continuum_roots() {
    let dir = tmp("debye");
    let lam = vacuum_lambdas(&dir);
    let mut r = Rng::new(0xdeb1e);
    let (de, tau) = (0.05 + 0.05 * r.uniform(), 1e-9 * (0.5 + r.uniform()));
    let (lines, _) = run(
        &dir,
        "debye",
        &format!("debye = [{{ delta_eps = {de:e}, tau = {tau:e} }}]"),
        6000,
    );
    let eps = |s: C64| 1.0 + de / (1.0 + s * tau);
    let images: Vec<(f64, f64)> = lam
        .iter()
        .map(|&l| {
            let mut s = C64::new(0.0, l.sqrt());
            for _ in 0..100 {
                let g = |s: C64| eps(s) * s * s + l;
                let h = 1e-7 * s.norm();
                s -= g(s) / ((g(s + h) - g(s - h)) / (2.0 * h));
            }
            assert!((eps(s) * s * s + l).norm() < 1e-10 * l);
            (s.im / TAU, -s.re)
        })
        .collect();
    let f_images: Vec<f64> = images.iter().map(|i| i.0).collect();
    let (c, raw) = check("Debye", &lines, &f_images, 5.0, 1e-4, 2.4e8);
    eprintln!("Debye fill: worst corrected {c:.2e}, worst raw {raw:.2e}");
    // the decay of the lowest mode's line is the continuum root's
    let (f1, a1) = images[0];
    let l1 = lines
        .iter()
        .min_by(|a, b| (a.fc - f1).abs().total_cmp(&(b.fc - f1).abs()))
        .unwrap();
    assert!(
        (l1.decay - a1).abs() < 0.02 * a1,
        "decay {} vs {a1}",
        l1.decay
    );
    assert!(l1.dt > 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}
