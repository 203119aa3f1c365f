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

mod common;
use common::*;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::dga::Dga;
use dgatd::dga::excitation::{Probe, Source};
use dgatd::dga::operators::{DualForm, Operators};
use dgatd::dga::surface::surface_conductance;
use dgatd::mesh::Topology;
use dgatd::mesh::generate::box_mesh;
use dgatd::problem::layer::graded_sigma;
use dgatd::problem::{Boundary, BoundaryKind, Media, Walls, Waveform};
use dgatd::solver;
use std::collections::BTreeMap;
use std::sync::Arc;

fn walls_of(kinds: &[(&str, BoundaryKind)]) -> BTreeMap<String, Boundary> {
    kinds
        .iter()
        .map(|(n, k)| (n.to_string(), Boundary::of(*k)))
        .collect()
}

/// The operators of `mesh` with the given walls (absorbing faces as surface conductance).
fn assemble(mesh: &dgatd::mesh::Mesh, media: &Media, walls: &BTreeMap<String, Boundary>) -> Dga {
    let topo = Topology::build(mesh).unwrap();
    let w = Walls::resolve(mesh, &topo, walls).unwrap();
    let mut d = Dga::assemble_with(mesh, &topo, media, &w.fixed_edges(&topo), false).unwrap();
    let (faces, y) = w.absorbing(&topo, media);
    d.add_surface(&surface_conductance(mesh, &topo, &faces, &y));
    d
}

/// The far end of the oblique-incidence guide.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    /// First-order absorbing wall right behind the probe region.
    Abc,
    /// A graded layer `thickness` m thick (order 3, target R 1e-6) backed by PEC.
    Layer(f64),
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
            End::Layer(t) => absorber + t,
            End::Far => x_src + Self::PROBE + 0.5 * self.window + 0.2,
        };
        let nx = (len / h).round() as usize;
        let nz = (self.b / h).round() as usize;
        let wy = Self::W_CELLS as f64 * h;
        let m = box_mesh([nx, Self::W_CELLS, nz], [nx as f64 * h, wy, nz as f64 * h]);
        let t = Topology::build(&m).unwrap();
        let mut media = Media::lossless(vec![1.0; m.n_tets()], vec![1.0; m.n_tets()]);
        let xmax_kind = match end {
            End::Abc => BoundaryKind::Abc,
            _ => BoundaryKind::Pec,
        };
        if let End::Layer(th) = end {
            let cx = |n: usize| m.tet_x(n).iter().map(|p| p[0]).sum::<f64>() / 4.0;
            let inside: Vec<bool> = (0..m.n_tets()).map(|n| cx(n) > absorber).collect();
            assert!(th > 0.0);
            let s = graded_sigma(&m, &inside, &media.eps, &media.mu, 3.0, 1e-6, "layer").unwrap();
            media.sigma = s.clone();
            media.sigma_m = s;
        }
        let walls = walls_of(&[
            ("xmin", BoundaryKind::Abc),
            ("xmax", xmax_kind),
            ("ymin", BoundaryKind::Pmc),
            ("ymax", BoundaryKind::Pmc),
        ]);
        let d = Arc::new(assemble(&m, &media, &walls));
        // the same Δt for every guide (the same cells), below the stability limit
        let dt = 0.4 * h / 3f64.sqrt();
        let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
        // a broad pulse over the TM₁ band (f_c to 3 f_c); generic points (off node planes)
        let fc = dgatd::C0 / (2.0 * self.b);
        let wave = Waveform::gaussian_derivative(1.6 * fc);
        let src = Source::new(&m, &t, &d, [x_src + 0.37 * h, 0.43 * wy, 0.31 * self.b], [0.0, 0.0, 1.0])
            .unwrap();
        let xp = x_src + Self::PROBE + 0.21 * h;
        let probes = vec![
            Probe::new(&m, &t, [xp, 0.57 * wy, 0.25 * self.b]).unwrap(),
            Probe::new(&m, &t, [xp, 0.57 * wy, 0.75 * self.b]).unwrap(),
        ];
        let mut s =
            CpuStepper::new(d.clone(), ops, DualForm::Factored, Some((&src, wave)), probes).unwrap();
        let steps = (self.window / dt).ceil() as usize;
        let rec = solver::run(&mut s, dt, steps, Some(wave.end()), 1, 4, &mut |_| {}).unwrap();
        (rec.series(0, 2), rec.series(1, 2), dt)
    }
}

/// `Σ x_k e^{-2πi f k dt}`.
fn dft(x: &[f64], f: f64, dt_s: f64) -> (f64, f64) {
    let (mut re, mut im) = (0.0, 0.0);
    for (k, v) in x.iter().enumerate() {
        let ph = -2.0 * std::f64::consts::PI * f * k as f64 * dt_s;
        re += v * ph.cos();
        im += v * ph.sin();
    }
    (re, im)
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
                theta_deg: if oblique { (fc / f).asin().to_degrees() } else { 0.0 },
                r_db: 20.0 * ratio(s, l, f).log10(),
            })
            .collect()
    };
    (rows(&tm_s, &tm_l, true), rows(&tem_s, &tem_l, false))
}

/// The first-order condition's reflection at oblique incidence follows
/// `(1 − cos θ)/(1 + cos θ)` (to within the discretisation: 1.5 dB between 30° and 65°,
/// where |R| is −23 to −7 dB), and the graded layer (0.4 m, 20 cells) stays below −30 dB up
/// to 60°. With `DGATD_RESULTS_DIR` set, the curves are written there as
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
    let mut worst_abc: f64 = 0.0;
    let mut worst_layer = f64::NEG_INFINITY;
    for (name, end) in [("abc", End::Abc), ("layer_0.4m", End::Layer(0.4))] {
        let (tm, tem) = reflection(&g, end, &far, &freqs);
        for (mode, rows) in [("TM1", &tm), ("TEM", &tem)] {
            for r in rows.iter() {
                let th = theory(r.theta_deg);
                csv.push_str(&format!(
                    "{name},{mode},{:.6e},{:.3},{:.3},{}\n",
                    r.f_hz,
                    r.theta_deg,
                    r.r_db,
                    if r.theta_deg > 0.0 { format!("{th:.3}") } else { String::new() }
                ));
                eprintln!(
                    "{name} {mode} {:.0} MHz, {:.1}°: {:.1} dB (first-order theory {:.1})",
                    r.f_hz / 1e6,
                    r.theta_deg,
                    r.r_db,
                    th
                );
                if end == End::Abc && mode == "TM1" && (30.0..=65.0).contains(&r.theta_deg) {
                    worst_abc = worst_abc.max((r.r_db - th).abs());
                }
                if end != End::Abc && r.theta_deg <= 60.0 {
                    worst_layer = worst_layer.max(r.r_db);
                }
            }
        }
    }
    if let Ok(dir) = std::env::var("DGATD_RESULTS_DIR") {
        std::fs::write(std::path::Path::new(&dir).join("reflection_angle.csv"), &csv).unwrap();
    }
    assert!(worst_abc < 1.5, "the condition departs from (1-cos)/(1+cos) by {worst_abc} dB");
    assert!(worst_layer < -30.0, "the layer reflects {worst_layer} dB up to 60°");
}
