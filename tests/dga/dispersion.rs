//! Dispersive media (design note §13, `dgatd::problem::dispersion`): Debye, Drude and Lorentz
//! poles by the bilinear transform, realised in transposed direct form II and coupled into
//! the vertex blocks.
//!
//! Exact facts tested:
//! - For a homogeneous fill, every discrete mode (`K x = λ x` of the vacuum operator on the
//!   same mesh) evolves by itself and its amplification factors `z` are the roots of
//!   `(ε∞ + χ(z)) (z − 2 + z⁻¹) + Δt² λ = 0` (leapfrog in `D = (ε∞ + χ(z)) U`). The roots
//!   are read from the run by exact linear prediction and checked to 1e-9 against that
//!   relation, with χ evaluated by the continuous formula at the warped frequency (Drude:
//!   the closed form `Ω̂² = (λ + ω_p²)/(ε∞ + ω_p²Δt²/4)`; Lorentz: both branches; Debye:
//!   the damped root, whose Q is Re ε / Im ε at its frequency to first order).
//! - Field energy plus the poles' stored energy is conserved to round-off for lossless
//!   poles on random media with several dispersive materials (interface vertices included),
//!   and decreases with lossy poles.

use crate::common::*;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::internal::{C64, Rng};
use dgatd::mesh::Topology;
use dgatd::problem::Media;
use dgatd::problem::Pole;
use nalgebra::DMatrix;
use std::f64::consts::TAU;
use std::sync::Arc;

const C0: f64 = dgatd::C0;

/// Media with ε∞ = `eps` everywhere and the pole lists `poles[k]` on the tets `which(n) = k+1`.
fn dispersive(
    n: usize,
    eps: impl Fn(usize) -> f64,
    which: impl Fn(usize) -> u16,
    poles: Vec<Vec<Pole>>,
) -> Media {
    let mut m = Media::lossless((0..n).map(&eps).collect(), vec![1.0; n]);
    m.disp = (0..n).map(which).collect();
    m.poles = poles
        .into_iter()
        .enumerate()
        .map(|(k, p)| (format!("m{k}"), p))
        .collect();
    m
}

/// The lowest few generalised eigenpairs `(λ, x)` of the vacuum-relative `K` of `d`
/// (`Meps⁻¹ C̃ Mmu⁻¹ C`, Meps with ε∞), x over the free half-edges (`free`).
fn eigenpairs(d: &Dga) -> (Vec<usize>, Vec<(f64, Vec<f64>)>) {
    let (free, a, linv) = symmetric_k(d);
    let nf = free.len();
    let eig = a.symmetric_eigen();
    let lmax = eig.eigenvalues.max();
    let mut pairs: Vec<(f64, Vec<f64>)> = (0..nf)
        .filter(|&i| eig.eigenvalues[i] > 1e-6 * lmax)
        .map(|i| {
            let y = eig.eigenvectors.column(i).into_owned();
            let x = linv.transpose() * y;
            (eig.eigenvalues[i], x.iter().copied().collect())
        })
        .collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    (free, pairs)
}

/// The roots of the order-`p` linear recurrence that fits `a` exactly (least squares over
/// the whole record, then the companion matrix's eigenvalues).
fn recurrence_roots(a: &[f64], p: usize) -> Vec<C64> {
    let rows = a.len() - p;
    let m = DMatrix::<f64>::from_fn(rows, p, |r, c| a[r + c]);
    let y = nalgebra::DVector::<f64>::from_fn(rows, |r, _| a[r + p]);
    let c = m.svd(true, true).solve(&y, 1e-300).unwrap();
    // z^p = Σ c_k z^k
    let mut comp = DMatrix::<f64>::zeros(p, p);
    for k in 0..p {
        comp[(0, k)] = c[p - 1 - k];
        if k + 1 < p {
            comp[(k + 1, k)] = 1.0;
        }
    }
    comp.complex_eigenvalues()
        .iter()
        .map(|z| C64::new(z.re, z.im))
        .collect()
}

/// Runs a homogeneous `poles` fill of ε∞ from one eigenvector of the vacuum operator and
/// returns (λ_vac, Δt, roots of the mode's recurrence of order `p`).
fn mode_roots(eps_inf: f64, poles: Vec<Pole>, p: usize, which_mode: usize) -> (f64, f64, Vec<C64>) {
    let m = jittered_box([3, 3, 2], 71, 0.2);
    let t = Topology::build(&m).unwrap();
    let n = m.n_tets();
    let media = dispersive(n, |_| eps_inf, |_| 1, vec![poles]);
    let d = Arc::new(Dga::assemble(&m, &t, &media).unwrap());
    assert!(d.disp.as_ref().unwrap().pure.iter().all(|&k| k == 1));
    let (dt, _) = dgatd::solver::time_step(&d, 0.9).unwrap();
    let (free, pairs) = eigenpairs(&d);
    let (lam_eps, x) = &pairs[which_mode];
    let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
    let mut s = CpuStepper::new(d.clone(), ops, DualForm::Factored, None, vec![]).unwrap();
    let mut u = vec![0.0; d.n_half()];
    for (i, &h) in free.iter().enumerate() {
        u[h] = x[i];
    }
    s.set_state(&u, &vec![0.0; d.n_dual()]).unwrap();
    // the amplitude of the mode: xᵀ Meps U / xᵀ Meps x (the field stays along x)
    let proj = |s: &CpuStepper<f64>| {
        let (uu, _) = s.state().unwrap();
        let mut mx = vec![0.0; d.n_half()];
        d.meps.apply_add(&u, &mut mx);
        let num: f64 = mx.iter().zip(&uu).map(|(a, b)| a * b).sum();
        let den: f64 = mx.iter().zip(&u).map(|(a, b)| a * b).sum();
        num / den
    };
    let mut a = vec![proj(&s)];
    let mut sink = vec![];
    for k in 0..160 {
        s.advance(k, 1, &mut sink).unwrap();
        a.push(proj(&s));
    }
    // the state stays in the mode: U ∥ x at the end
    let (uu, _) = s.state().unwrap();
    let last = a[a.len() - 1];
    let off: f64 = uu
        .iter()
        .zip(&u)
        .map(|(p, q)| (p - last * q).powi(2))
        .sum::<f64>()
        .sqrt();
    let nrm: f64 = u.iter().map(|q| q * q).sum::<f64>().sqrt();
    assert!(off <= 1e-9 * nrm * a.iter().fold(0.0f64, |m, x| m.max(x.abs())));
    (eps_inf * lam_eps, dt, recurrence_roots(&a, p))
}

/// `(ε∞ + χ(z)) (z − 2 + z⁻¹) + Δt² λ` relative to `Δt² λ`, with χ from the continuous
/// formula at the bilinear image `s = (2/Δt)(z − 1)/(z + 1)` of z (time unit: metres).
fn residual(eps_inf: f64, poles: &[Pole], lam: f64, dt: f64, z: C64) -> f64 {
    let s = (z - 1.0) / (z + 1.0) * (2.0 / dt);
    let chi: C64 = poles.iter().map(|p| p.in_metres().chi(s)).sum();
    ((C64::new(eps_inf, 0.0) + chi) * (z - 2.0 + z.inv()) + dt * dt * lam).norm() / (dt * dt * lam)
}

#[test]
fn lossless_drude_fill_follows_the_discrete_relation() {
    let mut r = Rng::new(0xd40de);
    for mode in [0usize, 3] {
        let eps_inf = 1.0 + 2.0 * r.uniform();
        let f_p = 2e8 * (1.0 + r.uniform());
        let pole = Pole::Drude { f_p, gamma: 0.0 };
        let (lam, dt, roots) = mode_roots(eps_inf, vec![pole], 4, mode);
        let z = *roots.iter().max_by(|a, b| a.im.total_cmp(&b.im)).unwrap();
        assert!((z.norm() - 1.0).abs() < 1e-10, "|z| = {}", z.norm());
        let theta = z.arg();
        let w_hat = 2.0 / dt * (theta / 2.0).sin();
        let wp = TAU * f_p / C0;
        let want = dgatd::problem::drude_discrete_omega_hat(lam, eps_inf, wp, dt);
        let rel = (w_hat - want).abs() / want;
        let res = residual(eps_inf, &[pole], lam, dt, z);
        eprintln!(
            "Drude mode {mode}: f_p {f_p:.4e} Hz, eps_inf {eps_inf:.3}, f {:.6e} Hz, Ω̂ rel err {rel:.2e}, residual {res:.2e}; continuum ω²=(ω_c²+ω_p²)/ε∞ off by {:.2e}",
            w_hat * C0 / TAU,
            (w_hat / ((lam + wp * wp) / eps_inf).sqrt() - 1.0)
        );
        assert!(rel < 1e-9 && res < 1e-9, "{rel:e} {res:e}");
    }
}

#[test]
fn lossless_lorentz_fill_has_both_branches() {
    let mut r = Rng::new(0x10e);
    let eps_inf = 1.0 + r.uniform();
    let pole = Pole::Lorentz {
        delta_eps: 1.0 + r.uniform(),
        f_0: 2.4e8 * (1.0 + 0.3 * r.uniform()),
        delta: 0.0,
    };
    let (lam, dt, roots) = mode_roots(eps_inf, vec![pole], 4, 1);
    let mut upper: Vec<C64> = roots.iter().copied().filter(|z| z.im > 0.0).collect();
    upper.sort_by(|a, b| a.arg().total_cmp(&b.arg()));
    assert_eq!(upper.len(), 2, "{roots:?}");
    let Pole::Lorentz { f_0, delta_eps, .. } = pole else {
        unreachable!()
    };
    let w0 = TAU * f_0 / C0;
    for (b, z) in upper.iter().enumerate() {
        let res = residual(eps_inf, &[pole], lam, dt, *z);
        let w = z.arg() / dt;
        eprintln!(
            "Lorentz branch {b}: f {:.6e} Hz (f_0 {f_0:.4e}, upper edge {:.4e}, vacuum mode {:.4e}), |z|-1 {:.1e}, residual {res:.2e}",
            w * C0 / TAU,
            f_0 * ((eps_inf + delta_eps) / eps_inf).sqrt(),
            lam.sqrt() * C0 / TAU,
            z.norm() - 1.0
        );
        assert!((z.norm() - 1.0).abs() < 1e-10 && res < 1e-9, "{res:e}");
        // lower branch below the resonance, upper above the longitudinal frequency (warped)
        let wd = 2.0 / dt * (z.arg() / 2.0).tan();
        if b == 0 {
            assert!(wd < w0);
        } else {
            assert!(wd > w0 * ((eps_inf + delta_eps) / eps_inf).sqrt());
        }
    }
}

#[test]
fn debye_fill_damps_with_q_re_eps_over_im_eps() {
    let eps_inf = 2.0;
    // a weak, fast pole: tan δ of a few 1e-4 at the mode
    let pole = Pole::Debye {
        delta_eps: 0.05,
        tau: 2e-11,
    };
    // leapfrog + first-order filter: order 3, and one more lag for the start (a root at 0)
    let (lam, dt, roots) = mode_roots(eps_inf, vec![pole], 4, 0);
    let z = *roots.iter().max_by(|a, b| a.im.total_cmp(&b.im)).unwrap();
    let res = residual(eps_inf, &[pole], lam, dt, z);
    let theta = z.arg();
    let q = theta / (-2.0 * z.norm().ln());
    // e^{st} with s = iω: a loss is Im ε < 0. Continuum: Re ε/Im ε at the mode frequency.
    let eps_at = |w_m: f64| C64::new(eps_inf, 0.0) + pole.chi(C64::new(0.0, w_m * C0));
    let e = eps_at(theta / dt);
    let q_cont = e.re / -e.im;
    // first order in Im ε on the discrete relation: θ_i = (Im χ/ε) tan(θ/2), χ at the
    // warped frequency (2/Δt) tan(θ/2)
    let ew = eps_at(2.0 / dt * (theta / 2.0).tan());
    let q_disc = (theta / 2.0) / (theta / 2.0).tan() * ew.re / -ew.im;
    eprintln!(
        "Debye: f {:.6e} Hz (θ = ωΔt = {theta:.3}), |z| {:.9}, Q {q:.5e}; first order: discrete {q_disc:.5e} ({:+.2e}), continuum Re ε/Im ε {q_cont:.5e} ({:+.2e}); residual {res:.2e}",
        theta / dt * C0 / TAU,
        z.norm(),
        q / q_disc - 1.0,
        q / q_cont - 1.0
    );
    assert!(res < 1e-9, "{res:e}");
    // the first-order error is O(tan δ) ~ 5e-4
    assert!((q / q_disc - 1.0).abs() < 2e-3, "{q} vs {q_disc}");
    // and the discrete factors are O((ωΔt)²) at this coarse step
    assert!(
        (q / q_cont - 1.0).abs() < (theta * theta / 4.0),
        "{q} vs {q_cont}"
    );
}

/// Random ε∞ and two dispersive materials on random thirds of the tets (so vertices of one
/// material, of two, and of a material and vacuum all occur).
fn mixed_media(n: usize, seed: u64, lossy: bool) -> Media {
    let mut r = Rng::new(seed);
    let eps: Vec<f64> = (0..n).map(|_| 1.0 + 3.0 * r.uniform()).collect();
    let which: Vec<u16> = (0..n).map(|_| (3.0 * r.uniform()) as u16).collect();
    let g = if lossy { 3e8 } else { 0.0 };
    dispersive(
        n,
        |k| eps[k],
        |k| which[k],
        vec![
            vec![Pole::Drude { f_p: 3e8, gamma: g }],
            vec![
                Pole::Lorentz {
                    delta_eps: 1.5,
                    f_0: 2e8,
                    delta: g,
                },
                Pole::Lorentz {
                    delta_eps: 0.7,
                    f_0: 4.5e8,
                    delta: 0.5 * g,
                },
            ],
        ],
    )
}

#[test]
fn field_plus_pole_energy_is_conserved_for_lossless_poles() {
    for (dims, seed, lossy) in [
        ([4, 3, 3], 5u64, false),
        ([3, 4, 2], 19, false),
        ([3, 3, 3], 23, true),
    ] {
        let m = jittered_box(dims, seed, 0.25);
        let t = Topology::build(&m).unwrap();
        let media = mixed_media(m.n_tets(), seed + 1, lossy);
        let d = Arc::new(Dga::assemble(&m, &t, &media).unwrap());
        let ds = d.disp.as_ref().unwrap();
        let pure = ds.pure.iter().filter(|&&k| k > 0).count();
        let (dt, _) = dgatd::solver::time_step(&d, 0.95).unwrap();
        let ops = Arc::new(Operators::<f64>::new(&d, dt, true));
        let dops = ops.disp.as_ref().unwrap();
        let full = dops.len.iter().filter(|&&l| l > 0).count();
        assert!(
            full > 0,
            "no interface vertex: the test would miss the full coupling"
        );
        for dual in [DualForm::Factored, DualForm::Csr] {
            let mut s = CpuStepper::new(d.clone(), ops.clone(), dual, None, vec![]).unwrap();
            let (u, f) = random_state(&d, seed + 2);
            s.set_state(&u, &f).unwrap();
            let mut w = vec![s.energy().unwrap()];
            let mut sink = vec![];
            for k in 0..400 {
                s.advance(k, 1, &mut sink).unwrap();
                w.push(s.energy().unwrap());
            }
            let worst = w
                .windows(2)
                .map(|p| (p[1] - p[0]) / w[0])
                .fold(0.0f64, |m, x| if lossy { m.max(x) } else { m.max(x.abs()) });
            let (s0, _) = s.disp_state();
            let pole_part = dgatd::backend::cpu::aux_energy(&d, &ops, s.u(), s0);
            eprintln!(
                "{dims:?} lossy {lossy} {}: {pure} pure vertices, {full} interface rows; W {:.6e} -> {:.6e} (poles hold {:.1}%), worst step change {worst:.2e}",
                dual.name(),
                w[0],
                w[400],
                100.0 * pole_part / w[400]
            );
            assert!(
                pole_part > 1e-3 * w[400],
                "the poles hold no energy: nothing tested"
            );
            if lossy {
                assert!(worst <= 1e-14, "energy grew by {worst:e}");
                assert!(w[400] < 0.8 * w[0], "too little loss to test");
            } else {
                assert!(worst < 1e-13, "{worst:e}");
            }
        }
    }
}

/// Without dispersive tets the operators and the run are those of before (no dispersion
/// data), and dispersion leaves the stable time step unchanged (it is set by ε∞).
#[test]
fn dispersion_leaves_the_time_step_to_eps_inf() {
    let m = jittered_box([3, 3, 3], 41, 0.2);
    let t = Topology::build(&m).unwrap();
    let media = mixed_media(m.n_tets(), 42, false);
    let plain = Media::lossless(media.eps.clone(), media.mu.clone());
    let (dd, dp) = (
        Dga::assemble(&m, &t, &media).unwrap(),
        Dga::assemble(&m, &t, &plain).unwrap(),
    );
    assert!(dp.disp.is_none() && dd.disp.is_some());
    let (a, b) = (
        dgatd::solver::time_step(&dd, 0.9).unwrap(),
        dgatd::solver::time_step(&dp, 0.9).unwrap(),
    );
    assert_eq!(a.0.to_bits(), b.0.to_bits());
    assert!(Operators::<f64>::new(&dp, a.0, false).disp.is_none());
}

/// 600 steps with two dispersive materials (Drude; two lossy Lorentz pairs), a conducting
/// region overlapping them, a source inside a dispersive tet and two probes, on the device
/// against the CPU: probe records and energies (with the poles' energy) to 1e-9 (f64) and
/// 1e-4 (f32).
#[test]
fn opencl_dispersion_matches_the_cpu() {
    use dgatd::backend::opencl::ClStepper;
    use dgatd::dga::{Probe, Source};
    use dgatd::problem::Waveform;
    let Some(dev) = cl_device() else { return };
    fn go<T: dgatd::Real>(dev: &Arc<dgatd::backend::opencl::ClDevice>, dual: DualForm, tol: f64) {
        let m = jittered_box([4, 4, 3], 83, 0.25);
        let t = Topology::build(&m).unwrap();
        let mut media = mixed_media(m.n_tets(), 84, true);
        let src_point = [0.37, 0.29, 0.23];
        let st = m.locate(src_point).unwrap();
        media.disp[st] = 2;
        let mut r = Rng::new(85);
        media.sigma = (0..m.n_tets())
            .map(|_| if r.uniform() < 0.3 { 0.5 } else { 0.0 })
            .collect();
        let d = Arc::new(Dga::assemble(&m, &t, &media).unwrap());
        let (dt, _) = dgatd::solver::time_step(&d, 0.95).unwrap();
        let w = Waveform::gaussian_derivative(300e6);
        let probes = vec![
            Probe::new(&m, &t, [0.61, 0.47, 0.33]).unwrap(),
            Probe::new(&m, &t, [0.22, 0.58, 0.41]).unwrap(),
        ];
        let src = Source::new(&m, &t, &d, src_point, [0.3, 0.5, 0.8]).unwrap();
        let ops = Arc::new(Operators::<T>::new(&d, dt, dual == DualForm::Csr));
        assert!(ops.source_pattern(&src).is_some());
        let mut c = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), probes.clone()).unwrap();
        let steps = 600;
        let run = |s: &mut dyn Stepper| {
            dgatd::solver::run(s, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap()
        };
        let rc = run(&mut c);
        let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), dual, Some(&src), &probes).unwrap();
        g.set_time_step(dt, Some(w)).unwrap();
        let rg = run(&mut g);
        let e = rel_err(&rg.samples, &rc.samples);
        let (eg, ec) = (g.energy().unwrap(), c.energy().unwrap());
        let (sg, _) = g.disp_state().unwrap();
        let (sc, _) = c.disp_state();
        let es = rel_err(
            &sg.iter().map(|x| x.f64()).collect::<Vec<_>>(),
            &sc.iter().map(|x| x.f64()).collect::<Vec<_>>(),
        );
        eprintln!(
            "{} {}: probe records differ by {e:.2e}, pole states by {es:.2e}, energy by {:.2e}",
            T::NAME,
            dual.name(),
            (eg - ec).abs() / ec
        );
        // the states themselves carry the Drude integrator's drift (a double pole at z = 1,
        // so round-off differences such as fused multiply-adds accumulate in them without
        // reaching the fields): compared loosely, the fields and energies tightly
        assert!(e < tol && (T::NAME == "f32" || es < 1e-6), "{e:e} {es:e}");
        assert!((eg - ec).abs() < tol * ec, "{eg} vs {ec}");
    }
    if dev.info.fp64 {
        go::<f64>(&dev, DualForm::Factored, 1e-9);
        go::<f64>(&dev, DualForm::Csr, 1e-9);
    }
    go::<f32>(&dev, DualForm::Factored, 1e-4);
    go::<f32>(&dev, DualForm::Csr, 1e-4);
}

const BIN: &str = env!("CARGO_BIN_EXE_dgatd");

fn read_modes(dir: &std::path::Path) -> (f64, Vec<f64>) {
    let t = std::fs::read_to_string(dir.join("modes.csv")).unwrap();
    let mut lines = t.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (fc, dtc) = (col("f_corrected_hz"), col("dt_s"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',')
                .map(|x| x.parse().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    (rows[0][dtc], rows.iter().map(|r| r[fc]).collect())
}

/// The resonator job end to end on the bundled coarse cylinder (a mesh the scheme was not
/// tuned on), from a config file: filled with a lossless Drude medium, every reported line's
/// corrected frequency (the exact discrete relation inverted,
/// `dgatd::problem::dispersion_relation`) is either the bulk plasma line `ω_p` (the discrete
/// gradients, which a Drude medium turns into plasma oscillations) or the continuum image
/// `√(f² + f_p²)` of a corrected line `f` of the same cavity in vacuum; every vacuum line
/// whose image lies in the band is found. To 1e-9 relative (measured: ~1e-13). The Drude
/// pole at 200 MHz is carried by this mesh, so it sets the time step (ω_p Δt ≤ 0.2), which
/// the corrected frequencies do not depend on.
#[test]
fn drude_filled_cylinder_from_a_config_file() {
    let dir = std::env::temp_dir().join(format!("dgatd-drude-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mesh = mesh_path("cylinder_coarse.msh");
    let f_p = 2e8;
    let cfg = |poles: &str| {
        format!(
            "mesh = {:?}\nsteps = 5000\nfmax = 3.3e8\nbackend = \"cpu\"\n\n[materials.vacuum]\neps_r = 1.0\n{poles}\n",
            mesh.display().to_string()
        )
    };
    let run = |name: &str, poles: &str| {
        let c = dir.join(format!("{name}.toml"));
        std::fs::write(&c, cfg(poles)).unwrap();
        let out = dir.join(name);
        let o = std::process::Command::new(BIN)
            .args(["resonator", "--quiet", "--config"])
            .arg(&c)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        read_modes(&out)
    };
    let (dt_v, vac) = run("vacuum", "");
    let (dt_d, dru) = run("drude", &format!("drude = [{{ f_p = {f_p:e} }}]"));
    assert!(
        dt_d < dt_v && (TAU * f_p * dt_d - 0.2).abs() < 1e-12,
        "the pole sets the time step: {dt_d:e} s against {dt_v:e} s in vacuum"
    );
    let image = |f: f64| (f * f + f_p * f_p).sqrt();
    let top = dru.iter().cloned().fold(0.0, f64::max);
    let mut worst = 0.0f64;
    let mut found = 0;
    for &f in &dru {
        let plasma = f_p;
        let best = vac
            .iter()
            .map(|&v| image(v))
            .chain([plasma])
            .map(|p| (f - p).abs() / p)
            .fold(f64::INFINITY, f64::min);
        worst = worst.max(best);
    }
    for &v in &vac {
        if image(v) < 0.999 * top {
            let p = image(v);
            assert!(
                dru.iter().any(|&f| (f - p).abs() < 1e-9 * p),
                "the image {p} of vacuum line {v} is missing"
            );
            found += 1;
        }
    }
    eprintln!(
        "Drude fill: {} lines ({found} images of vacuum lines + plasma line), worst relative distance to the discrete relation {worst:.2e}",
        dru.len()
    );
    assert!(found >= 3 && worst < 1e-9, "{worst:e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Config keys: the pole tables parse, bad values are refused naming the key and the
/// material, and a dispersive material is refused where it is not supported (DG).
#[test]
fn pole_tables_parse_and_bad_values_are_refused() {
    use dgatd::solver::{Config, Origin};
    let parse = |text: &str| {
        Config::parse(&Origin {
            path: "test.toml".into(),
            text: text.into(),
        })
    };
    let ok = "[materials.water]\neps_r = 5.2\ndebye = [{ delta_eps = 74.1, tau = 8.3e-12 }]\n\
              [materials.plasma]\ndrude = [{ f_p = 1e9, gamma = 1e7 }]\n\
              [materials.glass]\nlorentz = [{ delta_eps = 1.0, f_0 = 3e9 }, { delta_eps = 0.5, f_0 = 5e9, delta = 1e6 }]\n";
    let c = parse(ok).unwrap();
    let w = &c.materials["water"];
    assert_eq!(w.poles().len(), 1);
    assert_eq!(c.materials["glass"].poles().len(), 2);
    // ε(ω) of water at 1 GHz: ε∞ + Δε/(1 + iωτ), a loss is Im ε < 0 (e^{iωt})
    let e = w.eps_of(C64::new(0.0, TAU * 1e9));
    assert!((e.re - (5.2 + 74.1 / (1.0 + (TAU * 1e9 * 8.3e-12f64).powi(2)))).abs() < 1e-9);
    assert!(e.im < 0.0);
    for (bad, key) in [
        ("[materials.x]\ndrude = [{ f_p = -1e9 }]\n", "f_p"),
        ("[materials.x]\ndebye = [{ delta_eps = 1.0 }]\n", "tau"),
        (
            "[materials.x]\nlorentz = [{ delta_eps = 1.0, f_0 = 1e9, delta = -3 }]\n",
            "delta",
        ),
        ("[materials.x]\ndrude = [{ f_p = 1e9, nu = 3 }]\n", "nu"),
    ] {
        let e = parse(bad)
            .and_then(|c| {
                for (k, m) in &c.materials {
                    m.validate(k)?;
                }
                Ok(())
            })
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{bad}: {e}");
    }
}

/// A dispersive run that fails at step 2500 (injected device loss) after checkpoints every
/// 1000 steps resumes from its checkpoint and ends with the probe record of the run that
/// never stopped, bit for bit: the poles' states travel in the checkpoint.
#[test]
fn dispersive_run_resumes_bit_for_bit() {
    let dir = std::env::temp_dir().join(format!("dgatd-disp-ck-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("job.toml");
    std::fs::write(
        &cfg,
        "mesh = \"bundled:coarse\"\nbackend = \"cpu\"\nsteps = 4000\ncheckpoint_steps = 1000\n\n\
         [materials.vacuum]\neps_r = 1.5\ndrude = [{ f_p = 1.5e8, gamma = 2e6 }]\n\
         lorentz = [{ delta_eps = 0.8, f_0 = 3e8, delta = 1e6 }]\n",
    )
    .unwrap();
    let cmd = || {
        let mut c = std::process::Command::new(BIN);
        c.env_remove("DGATD_FAULT_AT_STEP");
        c
    };
    let (full, cut) = (dir.join("full"), dir.join("cut"));
    let o = cmd()
        .args(["resonator", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&full)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cmd()
        .env("DGATD_FAULT_AT_STEP", "2500")
        .args(["resonator", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&cut)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(cut.join("checkpoint.bin").exists());
    let ck = dgatd::solver::Checkpoint::read(&cut).unwrap();
    assert!(
        ck.done == 2000 && !ck.aux.is_empty(),
        "{} {}",
        ck.done,
        ck.aux.len()
    );
    let o = cmd()
        .args(["resonator", "--quiet", "--resume"])
        .arg(&cut)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (
        std::fs::read_to_string(full.join("probe.csv")).unwrap(),
        std::fs::read_to_string(cut.join("probe.csv")).unwrap(),
    );
    assert!(a == b, "the resumed record differs");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A box in three slabs: a lossy Drude fill (ε∞ = 2) for x < 0.35, five poles (Lorentz,
/// Debye, Lorentz, Debye, Drude; ε∞ = 1.5) up to x = 0.7, and vacuum with a conducting corner beyond. The
/// slabs' inner vertices are pure (one material, no σ), their interfaces are not: both the
/// fused and the split paths have work. The source sits in the Drude slab.
fn slabs(seed: u64) -> (dgatd::Mesh, Topology, Media, [f64; 3]) {
    let m = jittered_box([7, 5, 4], seed, 0.2);
    let t = Topology::build(&m).unwrap();
    let cx: Vec<[f64; 3]> = m
        .tets
        .iter()
        .map(|tv| {
            let mut c = [0.0; 3];
            for &v in tv {
                for (k, ck) in c.iter_mut().enumerate() {
                    *ck += 0.25 * m.nodes[v as usize][k];
                }
            }
            c
        })
        .collect();
    let which = |n: usize| match cx[n][0] {
        x if x < 0.35 => 1,
        x if x < 0.7 => 2,
        _ => 0,
    };
    let mut media = dispersive(
        m.n_tets(),
        |n| [1.0, 2.0, 1.5][which(n) as usize],
        which,
        vec![
            vec![Pole::Drude {
                f_p: 3e8,
                gamma: 2e7,
            }],
            vec![
                Pole::Lorentz {
                    delta_eps: 1.2,
                    f_0: 2e8,
                    delta: 1e6,
                },
                Pole::Debye {
                    delta_eps: 0.6,
                    tau: 2e-10,
                },
                // five poles: the fused kernel prefetches four, the fifth takes its tail loop
                Pole::Lorentz {
                    delta_eps: 0.3,
                    f_0: 5e8,
                    delta: 3e6,
                },
                Pole::Debye {
                    delta_eps: 0.2,
                    tau: 5e-10,
                },
                Pole::Drude {
                    f_p: 1e8,
                    gamma: 1e7,
                },
            ],
        ],
    );
    media.sigma = cx
        .iter()
        .map(|c| if c[0] > 0.7 && c[1] > 0.4 { 0.8 } else { 0.0 })
        .collect();
    (m, t, media, [0.17, 0.41, 0.29])
}

/// The fused layout (`DispOps::fused`, the `vertex_block_vf` kernel's) on the slab media:
/// fused and split correction rows and pole entries partition the split layout's, every
/// fused slot's entry filters its own half-edge with the consecutive `g` index, no
/// half-edge the source writes is fused, and both paths have work.
#[test]
fn fused_layout_partitions_the_dispersive_rows() {
    use dgatd::dga::Source;
    let (m, t, media, sp) = slabs(301);
    let d = Dga::assemble(&m, &t, &media).unwrap();
    let (dt, _) = dgatd::solver::time_step(&d, 0.95).unwrap();
    let ops = Operators::<f64>::new(&d, dt, false);
    let src = Source::new(&m, &t, &d, sp, [0.3, 0.5, 0.8]).unwrap();
    let skip: Vec<u32> = src.current.iter().map(|p| p.0).collect();
    let ds = ops.disp.as_ref().unwrap();
    let f = ds.fused(&ops.vptr, &ops.vh, &skip);
    let nm = ds.ptr.len() - 1;
    let (mut row_seen, mut ent_seen) = (vec![0u8; ds.h.len()], vec![0u8; ds.ent_h.len()]);
    let mut slots = 0;
    for v in 0..ops.vptr.len() - 1 {
        if f.fm[v] == u32::MAX {
            continue;
        }
        let mt = f.fm[v] as usize;
        for (i, &h) in ops.vh[ops.vptr[v] as usize..ops.vptr[v + 1] as usize]
            .iter()
            .enumerate()
        {
            assert!(!skip.contains(&h), "source half-edge {h} fused");
            let k = ds.ptr[mt] + f.fe[v] as usize + i;
            assert!(k < ds.ptr[mt + 1]);
            assert_eq!(ds.ent_h[k], h);
            assert_eq!(ds.ent_g[k], f.fg[v] + i as u32);
            ent_seen[k] += 1;
            let r = ds.h.iter().position(|&x| x == h).unwrap();
            assert_eq!(
                (ds.len[r], ds.row[r], ds.goff[r]),
                (0, mt as u64, f.fg[v] + i as u32)
            );
            row_seen[r] += 1;
            slots += 1;
        }
    }
    for &r in &f.rows {
        row_seen[r] += 1;
    }
    for (mt, rest) in f.rest.iter().enumerate() {
        for &i in rest {
            ent_seen[ds.ptr[mt] + i as usize] += 1;
        }
    }
    assert!(row_seen.iter().all(|&x| x == 1), "rows not partitioned");
    assert!(ent_seen.iter().all(|&x| x == 1), "entries not partitioned");
    let (rest, fc) = f.counts(ds);
    eprintln!(
        "{} fused vertices ({} slots, {} states), {} split rows, {} split entries, {nm} materials",
        f.vertices, fc.slots, fc.states, rest.rows, rest.entries
    );
    assert_eq!(fc.slots, slots);
    assert!(f.vertices > 20 && rest.rows > 20 && rest.entries > 20);
    // the source's vertex is pure but stays split
    let sv = ops.hvert[skip[0] as usize] as usize;
    assert!(d.disp.as_ref().unwrap().pure[sv] > 0 && f.fm[sv] == u32::MAX);
    // Drude: 2 states per entry; Lorentz pair (2) + Debye (1): 3
    assert_eq!((ds.touched(0), ds.touched(1)), (2, 8));
    // the kernels' order bits: Drude second-order; Lorentz, Debye, Lorentz, Debye, Drude
    assert_eq!((ds.orders(0), ds.orders(1)), (0b1, 0b10101));
    assert_eq!(f.mt[4 + 2], 5 | (0b10101 << 32));
}

/// The fused dispersive step (`vertex_block_vf` + the split kernels on the rest) against
/// the split kernels and the CPU backend on the slab media, with the source in a
/// dispersive slab: probe records over 500 steps, pole states and energy. f64 to 1e-9,
/// f32 to 1e-4 (the tolerances of `opencl_dispersion_matches_the_cpu`; measured in the
/// output).
#[test]
fn fused_dispersion_matches_the_split_kernels_and_the_cpu() {
    use dgatd::backend::opencl::{ClStepper, DispVariant, Variants};
    use dgatd::dga::{Probe, Source};
    use dgatd::problem::Waveform;
    let Some(dev) = cl_device() else { return };
    fn go<T: dgatd::Real>(dev: &Arc<dgatd::backend::opencl::ClDevice>, tol: f64) {
        let (m, t, media, sp) = slabs(302);
        let d = Arc::new(Dga::assemble(&m, &t, &media).unwrap());
        let (dt, _) = dgatd::solver::time_step(&d, 0.95).unwrap();
        let w = Waveform::gaussian_derivative(300e6);
        let probes = vec![
            Probe::new(&m, &t, [0.21, 0.47, 0.33]).unwrap(),
            Probe::new(&m, &t, [0.52, 0.31, 0.27]).unwrap(),
            Probe::new(&m, &t, [0.85, 0.58, 0.41]).unwrap(),
        ];
        let src = Source::new(&m, &t, &d, sp, [0.3, 0.5, 0.8]).unwrap();
        let dual = DualForm::Factored;
        let ops = Arc::new(Operators::<T>::new(&d, dt, false));
        let mut c = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), probes.clone()).unwrap();
        let steps = 500;
        let run = |s: &mut dyn Stepper| {
            dgatd::solver::run(s, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap()
        };
        let rc = run(&mut c);
        let (sc, _) = c.disp_state();
        let sc: Vec<f64> = sc.iter().map(|x| x.f64()).collect();
        let mut recs = Vec::new();
        for v in [DispVariant::Fused, DispVariant::Split] {
            let mut g =
                ClStepper::<T>::new(dev.clone(), d.clone(), dual, Some(&src), &probes).unwrap();
            g.set_time_step(dt, Some(w)).unwrap();
            g.set_variants(Variants {
                disp: v,
                ..Variants::for_dga(&d)
            })
            .unwrap();
            let rg = run(&mut g);
            let (sg, _) = g.disp_state().unwrap();
            let sg: Vec<f64> = sg.iter().map(|x| x.f64()).collect();
            let (eg, ec) = (g.energy().unwrap(), c.energy().unwrap());
            let (e, es) = (rel_err(&rg.samples, &rc.samples), rel_err(&sg, &sc));
            eprintln!(
                "{} {}: probe records differ from the CPU's by {e:.2e}, pole states by {es:.2e}, energy by {:.2e}; modelled extra bytes {:.3e}",
                T::NAME,
                v.name(),
                (eg - ec).abs() / ec,
                g.disp_bytes()
            );
            assert!(e < tol && (T::NAME == "f32" || es < 1e-6), "{e:e} {es:e}");
            assert!((eg - ec).abs() < tol * ec, "{eg} vs {ec}");
            recs.push((rg.samples, g.disp_bytes()));
        }
        let e = rel_err(&recs[0].0, &recs[1].0);
        eprintln!("{}: fused vs split {e:.2e}", T::NAME);
        assert!(e < tol);
        // the fused form moves fewer bytes (a little here, where most vertices are on
        // the slabs' interfaces; results/dispersive/ for a filled box)
        assert!(recs[0].1 < recs[1].1, "{} vs {}", recs[0].1, recs[1].1);
    }
    if dev.info.fp64 {
        go::<f64>(&dev, 1e-9);
    }
    go::<f32>(&dev, 1e-4);
}
