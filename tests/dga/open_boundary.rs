//! Open boundaries (issue 15) beyond normal incidence: the reflection of the first-order
//! absorbing boundary and of the graded absorbing layer versus the angle of incidence, the
//! device against the CPU with absorbing faces and layers, and late-time stability.
//!
//! Oblique incidence, measured in a parallel-plate guide: PEC plates at z = 0 and z = b,
//! PMC sides at y = 0 and y = w (fields uniform in y), along x. Its TM₁ mode,
//! `E_z ∝ cos(πz/b)`, is the sum of two plane waves at the angle `θ = asin(f_c / f)` to the
//! axis (`f_c = c / (2b)`), polarised in the plane of incidence; a planar absorber across
//! the guide reflects the mode as it reflects each wave. Probes at `z = b/4` and `3b/4` give
//! the TEM part (`θ = 0`) as their mean and the TM₁ part as their half difference (TM₂
//! vanishes at both; TM₃ starts at `3 f_c`, above the band). The reference is the same guide
//! long enough that no echo of its far end reaches the probe in the window, so the difference
//! of the two records is the absorber's reflection alone, and the ratio of their DFTs is
//! `R(f)`. The first-order condition `E_t = η H_t` against the TM wave impedance `η cos θ`
//! reflects `|R| = (1 − cos θ) / (1 + cos θ)`: −15.3 dB at 45°, −9.5 dB at 60°.

use crate::common::*;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::mesh::box_mesh;
use dgatd::problem::{BoundaryKind, Media, Waveform};
use dgatd::solver;
use std::sync::Arc;

/// The far end of the oblique-incidence guide.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    /// First-order absorbing wall right behind the probe region.
    Abc,
    /// A graded layer `thickness` m thick (order 3, target R 1e-6) backed by PEC.
    Layer(f64),
    /// A perfectly matched layer `thickness` m thick (order 3, target R 1e-6) backed by PEC.
    Pml(f64),
    /// The reference: the wall so far away that its echo misses the window.
    Far,
}

struct Guide {
    h: f64,
    b: f64,
    /// Light travel (m) the records cover.
    window: f64,
}

impl Guide {
    const W_CELLS: usize = 2;
    /// Source → probe distance (m), and probe → absorber.
    const PROBE: f64 = 0.3;
    const GAP: f64 = 0.4;

    /// `(E_z at z = b/4, E_z at z = 3b/4, Δt in m)` of the guide ending in `end`.
    fn records(&self, end: End) -> (Vec<f64>, Vec<f64>, f64) {
        let h = self.h;
        // the near end is as far behind the source as the reference's far end is ahead
        let back = 0.5 * self.window + 0.2;
        let x_src = back;
        let absorber = x_src + Self::PROBE + Self::GAP;
        let len = match end {
            End::Abc => absorber,
            End::Layer(t) | End::Pml(t) => absorber + t,
            End::Far => x_src + Self::PROBE + 0.5 * self.window + 0.2,
        };
        let nx = (len / h).round() as usize;
        let nz = (self.b / h).round() as usize;
        let wy = Self::W_CELLS as f64 * h;
        let m = box_mesh([nx, Self::W_CELLS, nz], [nx as f64 * h, wy, nz as f64 * h]);
        let mut media = Media::lossless(vec![1.0; m.n_tets()], vec![1.0; m.n_tets()]);
        let xmax_kind = match end {
            End::Abc => BoundaryKind::Abc,
            _ => BoundaryKind::Pec,
        };
        if let End::Layer(th) = end {
            let cx = |n: usize| m.tet_x(n).iter().map(|p| p[0]).sum::<f64>() / 4.0;
            let inside: Vec<bool> = (0..m.n_tets()).map(|n| cx(n) > absorber).collect();
            assert!(th > 0.0);
            media.add_layer(&m, &inside, 3.0, 1e-6, "layer").unwrap();
        }
        if let End::Pml(th) = end {
            let cx = |n: usize| m.tet_x(n).iter().map(|p| p[0]).sum::<f64>() / 4.0;
            let inside: Vec<bool> = (0..m.n_tets()).map(|n| cx(n) > absorber).collect();
            assert!(th > 0.0);
            let mut st = dgatd::problem::pml::Stretch::default();
            st.add_layer(&m, &inside, &media.eps, &media.mu, 3.0, 1e-6, None, "pml")
                .unwrap();
            media.pml = Some(st);
        }
        let walls = walls_of(&[
            ("xmin", BoundaryKind::Abc),
            ("xmax", xmax_kind),
            ("ymin", BoundaryKind::Pmc),
            ("ymax", BoundaryKind::Pmc),
        ]);
        let d = Arc::new(assemble_walled(&m, &media, &walls));
        // the same Δt for every guide (the same cells), below the stability limit
        let dt = 0.4 * h / 3f64.sqrt();
        // a broad pulse over the TM₁ band (f_c to 3 f_c); generic points (off node planes)
        let fc = dgatd::C0 / (2.0 * self.b);
        let wave = Waveform::gaussian_derivative(1.6 * fc);
        let xp = x_src + Self::PROBE + 0.21 * h;
        let steps = (self.window / dt).ceil() as usize;
        let (rec, _) = cpu_pulse(
            &m,
            &d,
            dt,
            steps,
            (
                [x_src + 0.37 * h, 0.43 * wy, 0.31 * self.b],
                [0.0, 0.0, 1.0],
                wave,
            ),
            &[
                [xp, 0.57 * wy, 0.25 * self.b],
                [xp, 0.57 * wy, 0.75 * self.b],
            ],
        );
        (rec.series(0, 2), rec.series(1, 2), dt)
    }
}

/// One row of the reflection curve.
struct Row {
    f_hz: f64,
    theta_deg: f64,
    r_db: f64,
}

/// `|R|` of the TM₁ mode (angles from `asin(f_c/f)`) at `freqs`, and of the TEM mode (0°)
/// at the same frequencies, for the end `end` against the reference `far`.
fn reflection(
    g: &Guide,
    end: End,
    far: &(Vec<f64>, Vec<f64>, f64),
    freqs: &[f64],
) -> (Vec<Row>, Vec<Row>) {
    let (a, b, dt) = g.records(end);
    let dt_s = dt / dgatd::C0;
    let n = a.len().min(far.0.len());
    let odd = |p: &[f64], q: &[f64]| -> Vec<f64> { (0..n).map(|k| 0.5 * (p[k] - q[k])).collect() };
    let even = |p: &[f64], q: &[f64]| -> Vec<f64> { (0..n).map(|k| 0.5 * (p[k] + q[k])).collect() };
    let ratio = |short: &[f64], long: &[f64], f: f64| {
        let diff: Vec<f64> = short.iter().zip(long).map(|(x, y)| x - y).collect();
        let (r, i) = dft(&diff, f, dt_s);
        let (rr, ii) = dft(long, f, dt_s);
        ((r * r + i * i) / (rr * rr + ii * ii)).sqrt()
    };
    let (tm_s, tm_l) = (odd(&a, &b), odd(&far.0, &far.1));
    let (tem_s, tem_l) = (even(&a, &b), even(&far.0, &far.1));
    let fc = dgatd::C0 / (2.0 * g.b);
    let rows = |s: &[f64], l: &[f64], oblique: bool| -> Vec<Row> {
        freqs
            .iter()
            .map(|&f| Row {
                f_hz: f,
                theta_deg: if oblique {
                    (fc / f).asin().to_degrees()
                } else {
                    0.0
                },
                r_db: 20.0 * ratio(s, l, f).log10(),
            })
            .collect()
    };
    (rows(&tm_s, &tm_l, true), rows(&tem_s, &tem_l, false))
}

/// The first-order condition's reflection at oblique incidence follows
/// `(1 − cos θ)/(1 + cos θ)` (to within the discretisation: 1.5 dB between 30° and 65°,
/// where |R| is −23 to −8 dB; measured at most 1.1 dB). The graded layer (0.4 m, 20 cells)
/// is an isotropic matched conductor, not a PML: below −40 dB at normal incidence (TEM, the
/// whole band), below −30 dB up to 35° (measured: up to 39°), and never above the condition
/// by more than 0.5 dB from 30° to 65°; towards grazing both approach total reflection
/// (measured −6 dB at 71°). With `DGATD_RESULTS_DIR` set, the curves are written there as
/// `reflection_angle.csv`.
#[test]
fn reflection_versus_angle_of_the_condition_and_the_layer() {
    let g = Guide {
        h: 0.02,
        b: 0.2,
        window: 8.0,
    };
    let fc = dgatd::C0 / (2.0 * g.b);
    let freqs: Vec<f64> = (0..=28).map(|k| fc * (1.06 + 0.06 * k as f64)).collect();
    let far = g.records(End::Far);
    let mut csv = String::from("end,mode,f_hz,theta_deg,r_db,first_order_theory_db\n");
    let theory = |theta_deg: f64| {
        let c = theta_deg.to_radians().cos();
        20.0 * ((1.0 - c) / (1.0 + c)).log10()
    };
    let (abc_tm, abc_tem) = reflection(&g, End::Abc, &far, &freqs);
    let (lay_tm, lay_tem) = reflection(&g, End::Layer(0.4), &far, &freqs);
    for (name, tm, tem) in [
        ("abc", &abc_tm, &abc_tem),
        ("layer_0.4m", &lay_tm, &lay_tem),
    ] {
        for (mode, rows) in [("TM1", tm), ("TEM", tem)] {
            for r in rows.iter() {
                let th = if r.theta_deg > 0.0 {
                    format!("{:.3}", theory(r.theta_deg))
                } else {
                    String::new()
                };
                csv.push_str(&format!(
                    "{name},{mode},{:.6e},{:.3},{:.3},{th}\n",
                    r.f_hz, r.theta_deg, r.r_db
                ));
                eprintln!(
                    "{name} {mode} {:.0} MHz, {:.1}°: {:.1} dB (first-order theory {th})",
                    r.f_hz / 1e6,
                    r.theta_deg,
                    r.r_db
                );
            }
        }
    }
    let band = |r: &Row| (30.0..=65.0).contains(&r.theta_deg);
    let worst_abc = abc_tm
        .iter()
        .filter(|r| band(r))
        .map(|r| (r.r_db - theory(r.theta_deg)).abs())
        .fold(0.0, f64::max);
    let worst_layer = lay_tm
        .iter()
        .filter(|r| r.theta_deg <= 35.0)
        .map(|r| r.r_db)
        .fold(f64::NEG_INFINITY, f64::max);
    let worst_tem = lay_tem
        .iter()
        .map(|r| r.r_db)
        .fold(f64::NEG_INFINITY, f64::max);
    let layer_over_abc = lay_tm
        .iter()
        .zip(&abc_tm)
        .filter(|(l, _)| band(l))
        .map(|(l, a)| l.r_db - a.r_db)
        .fold(f64::NEG_INFINITY, f64::max);
    if let Ok(dir) = std::env::var("DGATD_RESULTS_DIR") {
        std::fs::write(
            std::path::Path::new(&dir).join("reflection_angle.csv"),
            &csv,
        )
        .unwrap();
    }
    assert!(
        worst_abc < 1.5,
        "the condition departs from (1-cos)/(1+cos) by {worst_abc} dB"
    );
    assert!(
        worst_layer < -30.0,
        "the layer reflects {worst_layer} dB up to 35°"
    );
    assert!(
        worst_tem < -40.0,
        "the layer reflects {worst_tem} dB at normal incidence"
    );
    assert!(
        layer_over_abc < 0.5,
        "the layer reflects {layer_over_abc} dB more than the condition"
    );
}

/// The perfectly matched layer against the graded layer of the same thickness, versus the
/// angle (the harness above, h = 0.02 m): 10 cells (0.2 m) and 8 cells (0.16 m) of PML, 10
/// cells of layer. The PML's continuous reflection is the same at every angle; what is left
/// is the discretisation's. Asserted: the 10-cell PML below −40 dB at every angle up to 65°
/// and at normal incidence, and at least 15 dB below the layer from 45° to 65°. With
/// `DGATD_RESULTS_DIR` set, the curves are written there as `pml_reflection_angle.csv`.
#[test]
fn the_pml_reflects_little_at_every_angle() {
    let g = Guide {
        h: 0.02,
        b: 0.2,
        window: 8.0,
    };
    let fc = dgatd::C0 / (2.0 * g.b);
    let freqs: Vec<f64> = (0..=28).map(|k| fc * (1.06 + 0.06 * k as f64)).collect();
    let far = g.records(End::Far);
    let mut csv = String::from("end,mode,f_hz,theta_deg,r_db\n");
    let mut curves = Vec::new();
    for (name, end) in [
        ("pml_10_cells", End::Pml(0.2)),
        ("pml_8_cells", End::Pml(0.16)),
        ("layer_10_cells", End::Layer(0.2)),
        ("abc", End::Abc),
    ] {
        let (tm, tem) = reflection(&g, end, &far, &freqs);
        for (mode, rows) in [("TM1", &tm), ("TEM", &tem)] {
            for r in rows.iter() {
                csv.push_str(&format!(
                    "{name},{mode},{:.6e},{:.3},{:.3}\n",
                    r.f_hz, r.theta_deg, r.r_db
                ));
                eprintln!(
                    "{name} {mode} {:.0} MHz, {:.1}°: {:.1} dB",
                    r.f_hz / 1e6,
                    r.theta_deg,
                    r.r_db
                );
            }
        }
        curves.push((name, tm, tem));
    }
    if let Ok(dir) = std::env::var("DGATD_RESULTS_DIR") {
        std::fs::write(
            std::path::Path::new(&dir).join("pml_reflection_angle.csv"),
            &csv,
        )
        .unwrap();
    }
    let (_, pml_tm, pml_tem) = &curves[0];
    let (_, lay_tm, _) = &curves[2];
    let worst_pml = pml_tm
        .iter()
        .filter(|r| r.theta_deg <= 65.0)
        .chain(pml_tem.iter())
        .map(|r| r.r_db)
        .fold(f64::NEG_INFINITY, f64::max);
    let least_gain = pml_tm
        .iter()
        .zip(lay_tm)
        .filter(|(p, _)| (45.0..=65.0).contains(&p.theta_deg))
        .map(|(p, l)| l.r_db - p.r_db)
        .fold(f64::INFINITY, f64::min);
    eprintln!(
        "10-cell PML: worst {worst_pml:.1} dB up to 65°; at least {least_gain:.1} dB below the layer at 45–65°"
    );
    assert!(
        worst_pml < -40.0,
        "the 10-cell PML reflects {worst_pml:.1} dB"
    );
    assert!(
        least_gain > 15.0,
        "the PML is only {least_gain:.1} dB below the layer at 45–65°"
    );
}

/// A dielectric sphere (ε_r = 20, radius 0.1 m) in a ball of air closed by the first-order
/// condition at 0.45 m, through the configuration (`ball` key) on the CPU, at a coarse 3
/// shells across the sphere (132k tets), with the default min_q of an open problem (1): the
/// lowest TE and TM lines against the Mie roots
/// (`spectrum::mie`: TE 323.6 MHz, Q 20.5; TM 451.5 MHz, Q 10.8). The tolerances are the
/// coarse mesh's and the near boundary's (measured here: TE +1.5% and Q +9.1%, TM −4.2%
/// and Q −3.7%); the converged
/// figures, within 1% and 5% with the condition at 1.2 m and 6 shells, are the device runs
/// of `results/open/README.md` (`studies/mie_sphere.rs`).
#[test]
fn dielectric_sphere_resonances_match_mie_theory() {
    // the frequency error converges at second order in the cell size (TM on the device:
    // −2.35% at 4 shells, −0.91% at 6, so −4.2% expected at 3); Q is set by the near
    // boundary (+10.8% / −6.4% at 4 shells with the condition at 0.45 m)
    sphere_against_mie(20.0, 9e-8, 3.9e8, 9e8, [(0.03, 0.15), (0.06, 0.15)]);
}

/// The resonator pipeline on the configuration `text` (named `path` in errors).
fn run_toml(path: &str, text: String) -> dgatd::ResonatorResult {
    let cfg = dgatd::Config::parse(&dgatd::solver::Origin {
        path: path.into(),
        text,
    })
    .unwrap();
    dgatd::run(&cfg, &mut |_, _| {}).unwrap()
}

/// The resonator pipeline on the 3-shell ball (sphere of radius 0.1 m and permittivity
/// `eps`, the first-order condition at 0.45 m; the y dipole and four probes of
/// `studies/mie_sphere.rs`) with the record `time_s`, pulse `f_peak` and band `fmax`; then
/// the lowest TE and TM lines against their Mie roots, within `(f_tol, q_tol)` each.
fn sphere_against_mie(
    eps: f64,
    time_s: f64,
    f_peak: f64,
    fmax: f64,
    tol: [(f64, f64); 2],
) -> dgatd::ResonatorResult {
    use dgatd::spectrum::{MiePol, mie_resonance as resonance, nearest_line};
    let text = format!(
        "ball = \"3:sphere=0.1,air=0.45\"\ntime = {time_s:e}\nsource = [0.043, 0.011, 0.017]\n\
         source_dir = [0.0, 1.0, 0.0]\n\
         probe = [[0.031, -0.022, 0.013], [-0.047, 0.021, -0.019], [0.012, 0.052, 0.037], [0.151, 0.062, -0.043]]\n\
         f_peak = {f_peak:e}\nfmax = {fmax:e}\nbackend = \"cpu\"\n\
         [materials.sphere]\neps_r = {eps}\n[boundaries.outer]\nkind = \"abc\"\n"
    );
    let r = run_toml("sphere.toml", text);
    let lines = r.lines_with_q();
    for (pol, (f_tol, q_tol)) in [MiePol::Te, MiePol::Tm].into_iter().zip(tol) {
        let m = resonance(pol, 1, 1, eps, 0.1).unwrap();
        let (f, q) = nearest_line(&lines, &m).unwrap_or_else(|| {
            panic!(
                "no line near {} ({:.1} MHz) in {lines:?}",
                m.name(),
                m.f_hz / 1e6
            )
        });
        let (ef, eq) = (f / m.f_hz - 1.0, q / m.q - 1.0);
        eprintln!(
            "ε_r {eps} {}: {:.2} MHz (Mie {:.2}, {:+.2}%), Q {q:.3} (Mie {:.3}, {:+.1}%)",
            m.name(),
            f / 1e6,
            m.f_hz / 1e6,
            100.0 * ef,
            m.q,
            100.0 * eq
        );
        assert!(ef.abs() < f_tol, "{}: frequency off by {ef}", m.name());
        assert!(eq.abs() < q_tol, "{}: Q off by {eq}", m.name());
    }
    r
}

/// The electric dipole line of a low-index sphere (ε_r = 10: Q 4.2, it decays within about
/// one period) among the higher, longer-lived modes: on a record of 860 samples after the
/// pulse, the extraction must report it. It was lost before the extraction's plan kept its
/// filter within a quarter of a short record and accepted broad lines whose two fits agree
/// to 2% of their decay rate.
#[test]
fn the_broad_electric_dipole_line_of_a_low_index_sphere_is_extracted() {
    use dgatd::spectrum::{
        ExtractSettings as Settings, MiePol, extract, mie_resonance as resonance, nearest_line,
    };
    // Measured here: TM −6.2%, Q −2.1%; TE +1.0%, Q −8.8%. At 4 and 5 shells (a source and
    // a probe near the centre): TM −3.9%, −3.0% with Q +0.5%, +1.9%; TE +0.4%, +0.1% with
    // Q −6.7%, −5.8%. Tolerances of about 1.3 times the 3-shell errors: the coarse mesh
    // and the near condition are the test's limits, not the method's.
    let r = sphere_against_mie(10.0, 3.2e-8, 5.48e8, 1.295e9, [(0.02, 0.12), (0.08, 0.05)]);
    // The broad line's two fits disagree by far more than the bin test allows: it is the
    // tests relative to the decay rate (the tight one, and the loose one for clear lines)
    // that report it.
    let signals = r.record.signals(r.analysis.start);
    let mut s = Settings::band(0.05 * 5.48e8, 1.295e9);
    s.min_q = 1.0;
    s.max_decay_error = 0.0;
    s.loose_decay_error = 0.0;
    let e = extract(&signals, r.dt_s, &s).unwrap();
    let tm = resonance(MiePol::Tm, 1, 1, 10.0, 0.1).unwrap();
    let bare: Vec<(f64, f64)> = e.peaks.iter().map(|p| (p.f_hz, p.q.unwrap())).collect();
    assert!(
        nearest_line(&bare, &tm).is_none_or(|(f, _)| (f / tm.f_hz - 1.0).abs() > 0.1),
        "{bare:?}"
    );
}

/// A z-directed current at the centre of the sphere couples by symmetry to the electric
/// (TM) multipoles only, but one tet is not symmetric about the centre: its centroid is a
/// quarter cell off, which gives the source a magnetic dipole and quadrupole moment, and the
/// record holds TE₁₁ (448 MHz, Q 9) and TE₂₁ (652 MHz, Q 32, next to TM₁₁ at 648 MHz, Q 4)
/// as strongly as the electric lines. Filling the first shell (`source_radius`, a ball of
/// tets symmetric about the centre) leaves both out. The control (radius 0, the same point)
/// must show them, or the test would prove nothing.
#[test]
fn a_centred_ball_source_leaves_the_magnetic_modes_out() {
    use dgatd::spectrum::{MiePol, mie_resonance as resonance};
    let te = [
        resonance(MiePol::Te, 1, 1, 10.0, 0.1).unwrap(),
        resonance(MiePol::Te, 2, 1, 10.0, 0.1).unwrap(),
    ];
    let tm = resonance(MiePol::Tm, 1, 1, 10.0, 0.1).unwrap();
    // a line of `lines` within 3% of `f` with a Q between a third and three times `q`
    let near = |lines: &[(f64, f64)], f: f64, q: f64| {
        lines
            .iter()
            .copied()
            .find(|&(lf, lq)| (lf / f - 1.0).abs() < 0.03 && lq > q / 3.0 && lq < 3.0 * q)
    };
    for radius in [0.1 / 3.0, 0.0] {
        let text = format!(
            "ball = \"3:sphere=0.1,air=0.45\"\ntime = 3.2e-8\nsource = [0.0, 0.0, 0.0]\n\
             source_dir = [0.0, 0.0, 1.0]\nsource_radius = {radius:e}\n\
             probe = [[0.0031, -0.0022, 0.0413], [-0.0047, 0.0021, -0.0519], [0.0512, 0.0052, 0.0037], [0.0061, 0.0072, 0.1531], [0.0083, -0.0061, 0.0137], [-0.0121, 0.0093, -0.0072]]\n\
             f_peak = 5.48e8\nfmax = 1.295e9\nbackend = \"cpu\"\n\
             [materials.sphere]\neps_r = 10\n[boundaries.outer]\nkind = \"abc\"\n"
        );
        let r = run_toml("ball_source.toml", text);
        let lines = r.lines_with_q();
        eprintln!("source_radius {radius}: {lines:?}");
        // TM₁₁ is there either way (measured −6.15%, Q −2.1% on this coarse mesh)
        let (f, q) = near(&lines, tm.f_hz / 1.06, tm.q).expect("TM11 found");
        assert!((f / tm.f_hz - 1.0).abs() < 0.08 && (q / tm.q - 1.0).abs() < 0.05);
        for m in &te {
            let found = near(&lines, m.f_hz, m.q);
            if radius > 0.0 {
                assert!(
                    found.is_none(),
                    "{} excited by the ball: {found:?}",
                    m.name()
                );
            } else {
                assert!(found.is_some(), "control: no {} from one tet", m.name());
            }
        }
    }
}

/// A jittered box whose boundary nodes also slide along their walls (by up to 0.4 of a
/// cell): skewed boundary tets, the walls named as the box mesher names them.
/// Until the first reflection from the boundary is back at the probes, the record is that of
/// the sphere in free space, whatever lies beyond (results/open/README.md, "The layer's echo
/// and the record length"). ε_r = 10, 3 shells, the centred ball source; two outsides: an
/// absorbing layer from 1.0 to 1.5 m, and a closed PEC sphere at 1.5 m (no loss anywhere).
/// Ending at 9.5 ns, before the PEC wall's echo (the pulse peaks at 1.74 ns; the round trip
/// to 1.5 m takes 10 ns), both records give the open sphere's TM₁₁, Q ≈ 4, and the same pole.
#[test]
fn a_record_that_ends_before_the_echo_does_not_see_the_boundary() {
    use dgatd::spectrum::{MiePol, mie_resonance as resonance};
    let tm = resonance(MiePol::Tm, 1, 1, 10.0, 0.1).unwrap();
    let run = |ball: &str, tail: &str| {
        let text = format!(
            "ball = \"{ball}\"\ntime = 9.5e-9\nsource = [0.0, 0.0, 0.0]\n\
             source_dir = [0.0, 0.0, 1.0]\nsource_radius = {:e}\n\
             probe = [[0.0031, -0.0022, 0.0413], [-0.0047, 0.0021, -0.0519], [0.0512, 0.0052, 0.0037], [0.0061, 0.0072, 0.1531], [0.0083, -0.0061, 0.0137], [-0.0121, 0.0093, -0.0072]]\n\
             f_peak = 5.48e8\nfmax = 1.295e9\nmin_q = 1\nbackend = \"cpu\"\n\
             [materials.sphere]\neps_r = 10\n{tail}",
            0.1 / 3.0
        );
        let r = run_toml("echo.toml", text);
        let lines = r.lines_with_q();
        eprintln!("{ball}: {lines:?}");
        let line = lines
            .iter()
            .copied()
            .filter(|&(f, q)| (f / tm.f_hz - 1.0).abs() < 0.1 && q > 2.0 && q < 8.0)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        (r, line.expect("TM11 found"))
    };
    // 14 and 7 shells of 2/30 m: the air is meshed alike in both, shell for shell
    let (open, (fo, qo)) = run(
        "3:sphere=0.1,air=1.0333333333333333@2,layer=1.5@2",
        "[materials.layer]\nabsorbing = true\n",
    );
    let (closed, (fc, qc)) = run("3:sphere=0.1,air=1.5@2", "");
    eprintln!("TM11: layer {fo:.6e} Hz Q {qo:.4}; PEC at 1.5 m {fc:.6e} Hz Q {qc:.4}");
    // this coarse mesh (3 shells, the air at twice the sphere's step) puts TM₁₁ low:
    // measured −5.4%, Q −10%
    assert!((fo / tm.f_hz - 1.0).abs() < 0.08 && (qo / tm.q - 1.0).abs() < 0.15);
    // the two outsides give the same pole from records that end before the echo (measured:
    // 7.5e-5 in f, 1.7e-4 in Q; the bounds leave room for the extraction's scatter)
    assert!((fc / fo - 1.0).abs() < 1e-3, "{fc} against {fo}");
    assert!((qc / qo - 1.0).abs() < 1e-2, "{qc} against {qo}");
    // Their records are the same to round-off until the layer's inner surface (1.03 m) can
    // have answered: a wave at c is back at the nearest probe (0.15 m) after 6.4 ns; the
    // discrete scheme's precursor of it appears from 5.5 ns (1e-14). Measured: 1e-15 until
    // 5.25 ns, and the layer's echo stays below 1.5e-4 of the largest value to 9.5 ns.
    let (a, b) = (open.record.signals(0), closed.record.signals(0));
    let dt = open.record.dt_s;
    let scale = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let quiet = (5.0e-9 / dt) as usize;
    let (mut before, mut after) = (0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(&b) {
        for (k, (u, v)) in x.iter().zip(y).enumerate() {
            let d = (u - v).abs() / scale;
            if k < quiet {
                before = before.max(d);
            } else {
                after = after.max(d);
            }
        }
    }
    eprintln!("records differ by {before:.2e} before 5 ns, {after:.2e} after");
    assert!(before < 1e-13, "{before}");
    assert!(after < 1e-3, "{after}");
    // The run says when the echo can first be back (`solver::echo`): the pulse's peak at
    // 1.74 ns, plus 1.03 m out from the source and about 0.88 m back to the outermost probe:
    // about 8.1 ns, where the records above have begun to part (1e-7 at 7.2 ns, 3e-5 at
    // 8.2 ns). This 9.5 ns record runs past it: a note says so, and `run.toml` keeps it.
    let echo = open.echo.expect("an echo estimate for the open problem");
    eprintln!("{echo:?}");
    assert!(echo.t_s > 7.8e-9 && echo.t_s < 8.4e-9, "{echo:?}");
    assert!(closed.echo.is_none(), "a closed cavity has no echo");
    assert!(
        open.notices.iter().any(|n| n.contains("earliest echo")),
        "{:?}",
        open.notices
    );
    assert!(!closed.notices.iter().any(|n| n.contains("echo")));
    let dir = std::env::temp_dir().join(format!("dgatd_echo_{}", std::process::id()));
    dgatd::report::write_resonator(&dir, &open).unwrap();
    let toml = std::fs::read_to_string(dir.join("run.toml")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(toml.contains(&format!("echo_s = {}", echo.t_s)), "{toml}");
}

fn skewed_box(n: [usize; 3], seed: u64) -> dgatd::mesh::Mesh {
    let l = [1.0, 0.8, 0.6];
    let mut m = jittered_box(n, seed, 0.25);
    let named = box_mesh(n, l);
    m.surfaces = named.surfaces.clone();
    m.physical_names = named.physical_names.clone();
    let mut rng = dgatd::internal::Rng::new(seed + 1);
    for p in m.nodes.iter_mut() {
        let on: Vec<bool> = (0..3).map(|c| p[c] < 1e-9 || p[c] > l[c] - 1e-9).collect();
        if on.iter().any(|&b| b) {
            for c in 0..3 {
                if !on[c] {
                    p[c] += 0.4 * (l[c] / n[c] as f64) * rng.sym();
                }
            }
        }
    }
    assert!((0..m.n_tets()).all(|k| m.tet_volume(k) > 0.0));
    m
}

/// Random ε, μ; every wall absorbing, or a graded layer (x > 0.55 m) inside PEC walls.
fn absorbing_case(m: &dgatd::mesh::Mesh, layer: bool, seed: u64) -> Arc<Dga> {
    let n = m.n_tets();
    let mut rng = dgatd::internal::Rng::new(seed);
    let mut media = Media::lossless(
        (0..n).map(|_| 1.0 + 2.0 * rng.uniform()).collect(),
        (0..n).map(|_| 1.0 + rng.uniform()).collect(),
    );
    let walls = if layer {
        let cx = |k: usize| m.tet_x(k).iter().map(|p| p[0]).sum::<f64>() / 4.0;
        let inside: Vec<bool> = (0..n).map(|k| cx(k) > 0.55).collect();
        media.add_layer(m, &inside, 3.0, 1e-6, "layer").unwrap();
        walls_of(&[])
    } else {
        walls_of(
            &dgatd::mesh::BOX_WALLS
                .iter()
                .map(|&w| (w, BoundaryKind::Abc))
                .collect::<Vec<_>>(),
        )
    };
    Arc::new(assemble_walled(m, &media, &walls))
}

/// Late-time stability: 10⁶ steps at 0.95 of the stability limit from a random state, on
/// skewed boundary tets, with every wall absorbing and with a graded layer: the discrete
/// energy (which the loss steps make non-increasing, design note §12) never grows by more
/// than round-off between checks, and ends below where it started.
#[test]
fn a_million_steps_do_not_grow() {
    let m = skewed_box([4, 3, 3], 91);
    for layer in [false, true] {
        let d = absorbing_case(&m, layer, 92);
        let (dt, _) = solver::time_step(&d, 0.95).unwrap();
        let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
        let mut s = CpuStepper::new(d.clone(), ops, DualForm::Factored, None, vec![]).unwrap();
        let (u, f) = random_state(&d, 93);
        s.set_state(&u, &f).unwrap();
        let w0 = s.energy().unwrap();
        let (mut w, mut worst_rise) = (w0, 0.0f64);
        let mut sink = Vec::new();
        let chunk = 10_000;
        for k in (0..1_000_000).step_by(chunk) {
            s.advance(k, chunk, &mut sink).unwrap();
            let w1 = s.energy().unwrap();
            assert!(w1.is_finite());
            worst_rise = worst_rise.max((w1 - w) / w0);
            w = w1;
        }
        eprintln!(
            "{}: W {w0:.4e} -> {w:.4e} after 1e6 steps; largest rise between checks {worst_rise:.2e} of W0",
            if layer { "layer" } else { "abc" }
        );
        assert!(worst_rise < 1e-12, "the energy grew by {worst_rise} of W0");
        assert!(w < w0, "{w} vs {w0}");
    }
}

/// The device against the CPU with absorbing walls and a graded layer (factored and CSR,
/// f64 and f32): probe records and energies agree to the tolerances of tests/opencl/opencl.rs
/// (1e-9 f64, 1e-4 f32) over 600 steps of a pulse.
#[test]
fn opencl_absorbing_runs_match_the_cpu() {
    use dgatd::backend::opencl::ClDevice;
    let Some(dev) = cl_device() else { return };
    fn go<T: dgatd::Real>(dev: &Arc<ClDevice>, layer: bool, dual: DualForm, tol: f64) {
        let m = skewed_box([5, 4, 3], 71);
        let d = absorbing_case(&m, layer, 72);
        let probes = [[0.61, 0.47, 0.33], [0.82, 0.58, 0.41]];
        let (e, energies, scale) = device_vs_cpu::<T>(
            dev,
            &m,
            &d,
            dual,
            &probes,
            [0.37, 0.29, 0.23],
            [0.3, 0.5, 0.8],
        );
        // most of the pulse has left by the end: the final energies are compared on the
        // scale of the largest energy of the run
        let label = format!(
            "{} {} {}",
            if layer { "layer" } else { "abc" },
            T::NAME,
            dual.name()
        );
        assert_device_agrees(&label, e, energies, scale, tol);
    }
    for layer in [false, true] {
        if dev.info.fp64 {
            go::<f64>(&dev, layer, DualForm::Factored, 1e-9);
            go::<f64>(&dev, layer, DualForm::Csr, 1e-9);
        }
        go::<f32>(&dev, layer, DualForm::Factored, 1e-4);
        go::<f32>(&dev, layer, DualForm::Csr, 1e-4);
    }
}
