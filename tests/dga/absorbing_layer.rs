//! Absorbing layers (`src/problem/layer.rs`): graded matched σ, σ* in a volume group.
//!
//! A TEM pulse in a parallel-plate guide (PEC at z = 0 and 0.2 m, PMC at y = 0 and 0.2 m)
//! meets a layer at each end, backed by the PEC end walls; the reference is the same guide
//! five times longer without layers, identical at the probe until its far end walls are
//! reached (4 m of light travel). The reflection is measured in the time domain (the largest
//! `|short − long|` over the window, relative to the incident peak) and per frequency (the
//! DFT of the difference over the DFT of the reference, 50–300 MHz). Measured, h = 0.04 m:
//! 5-cell layer (order 3, R = 1e-4) −33 dB in time, −30 … −40 dB in the band; 10 cells
//! (order 3, R = 1e-6) −44 dB, −41 … −56 dB; 10 cells order 2 −47 dB; the PEC end without
//! a layer +0.4 dB. Asserted: below −40 dB at every frequency of the band for the 10-cell
//! order-3 layer, and the PEC end above −6 dB (so the measurement sees reflections); and the
//! energy never grows over a long run with the layer (late-time stability). Source and probe
//! sit at generic points: a point on a node plane or on a cell's diagonal lies in several
//! tets, and the two guides could pick different ones (a 5–10% "reflection" before the fix).

use crate::common;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::mesh::Topology;
use dgatd::mesh::box_mesh;
use dgatd::problem::{Boundary, BoundaryKind, Media, Walls, Waveform};
use std::collections::BTreeMap;
use std::sync::Arc;

const H: f64 = 0.04;

/// Probe E_z of a guide of length `len` (source at the middle, probe 0.3 m towards +x)
/// with layers `lp` m thick at both ends (none when `lp == 0`).
fn guide(
    len: f64,
    lp: f64,
    order: f64,
    refl: f64,
    steps: usize,
) -> (Vec<f64>, f64, Arc<Dga>, Vec<f64>) {
    let nx = (len / H).round() as usize;
    let nc = (0.2 / H).round() as usize;
    let m = box_mesh([nx, nc, nc], [len, 0.2, 0.2]);
    let t = Topology::build(&m).unwrap();
    let x = |n: usize| m.tet_x(n).iter().map(|p| p[0]).sum::<f64>() / 4.0;
    let in_layer: Vec<bool> = (0..m.n_tets())
        .map(|n| lp > 0.0 && (x(n) < lp || x(n) > len - lp))
        .collect();
    let mut media = Media::lossless(vec![1.0; m.n_tets()], vec![1.0; m.n_tets()]);
    if lp > 0.0 {
        media
            .add_layer(&m, &in_layer, order, refl, "layer")
            .unwrap();
    }
    let walls: BTreeMap<String, Boundary> =
        [("ymin", BoundaryKind::Pmc), ("ymax", BoundaryKind::Pmc)]
            .iter()
            .map(|(n, k)| (n.to_string(), Boundary::of(*k)))
            .collect();
    let w = Walls::resolve(&m, &t, &walls).unwrap();
    let d = Arc::new(Dga::assemble_with(&m, &t, &media, &w.fixed_edges(&t), false).unwrap());
    let dt = 0.4 * H / 3f64.sqrt();
    // generic points: one on a node plane or a cell's diagonal lies in several tets, and
    // the two guides could pick different ones
    let x0 = len / 2.0 + 0.37 * H;
    let wave = Waveform::gaussian_derivative(150e6);
    let (rec, s) = common::cpu_pulse(
        &m,
        &d,
        dt,
        steps,
        ([x0, 0.093, 0.107], [0.0, 0.0, 1.0], wave),
        &[[x0 + 0.313, 0.087, 0.111]],
    );
    let (u, f) = s.state().unwrap();
    let state: Vec<f64> = u.into_iter().chain(f).collect();
    (rec.series(0, 2), dt, d, state)
}

/// `|Σ x_k e^{-2πi f k dt}|`.
fn dft_abs(x: &[f64], f: f64, dt_s: f64) -> f64 {
    let (re, im) = common::dft(x, f, dt_s);
    (re * re + im * im).sqrt()
}

#[test]
fn a_graded_matched_layer_absorbs_a_normally_incident_pulse() {
    let steps = (28.0 / H) as usize;
    let (long, dt, _, _) = guide(10.0, 0.0, 3.0, 1e-6, steps);
    let window = ((4.0 / dt) as usize).min(steps);
    let peak = long[..window].iter().fold(0.0f64, |a, &b| a.max(b.abs()));
    let dt_s = dt / dgatd::C0;
    let mut worst_db = f64::NEG_INFINITY;
    for (lp, order, refl) in [
        (0.2, 3.0, 1e-4),
        (0.4, 3.0, 1e-6),
        (0.4, 2.0, 1e-6),
        (0.0, 3.0, 1e-6),
    ] {
        let (short, _, _, _) = guide(2.0, lp, order, refl, steps);
        let diff: Vec<f64> = short[..window]
            .iter()
            .zip(&long[..window])
            .map(|(a, b)| a - b)
            .collect();
        let r_time = diff.iter().fold(0.0f64, |a, &b| a.max(b.abs())) / peak;
        let mut line = String::new();
        let mut band_worst = f64::NEG_INFINITY;
        for f in [50e6, 100e6, 150e6, 200e6, 250e6, 300e6] {
            let r = dft_abs(&diff, f, dt_s) / dft_abs(&long[..window], f, dt_s);
            let db = 20.0 * r.log10();
            band_worst = band_worst.max(db);
            line.push_str(&format!(" {:.0} MHz {db:.1} dB;", f / 1e6));
        }
        eprintln!(
            "layer {lp} m ({:.0} cells), order {order}, R {refl:e}: time-domain {r_time:.3e} ({:.1} dB);{line}",
            lp / H,
            20.0 * r_time.log10()
        );
        if lp == 0.4 && order == 3.0 {
            worst_db = band_worst;
        }
        if lp == 0.0 {
            assert!(
                r_time > 0.5,
                "the PEC-ended guide reflects only {r_time}: the test sees nothing"
            );
        }
    }
    assert!(peak > 0.0);
    assert!(
        worst_db < -40.0,
        "the 10-cell layer reflects {worst_db:.1} dB in the band"
    );
}

/// 40 000 steps with the layer and no source after the pulse: the discrete energy never
/// grows (it only falls, by the dissipation identity of tests/dga/losses.rs and
/// tests/dga/magnetic_loss.rs), and most of it leaves through the layers.
#[test]
fn the_layer_is_stable_late() {
    let (_, dt, d, state) = guide(2.0, 0.4, 3.0, 1e-6, 400);
    let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
    let mut s = CpuStepper::new(d.clone(), ops, DualForm::Factored, None, vec![]).unwrap();
    let nh = d.n_half();
    s.set_state(&state[..nh], &state[nh..]).unwrap();
    let w0 = s.energy().unwrap();
    let mut w = w0;
    let mut sink = vec![];
    for _ in 0..400 {
        s.advance(0, 100, &mut sink).unwrap();
        let w1 = s.energy().unwrap();
        assert!(w1 <= w * (1.0 + 1e-12), "energy grew: {w} -> {w1}");
        w = w1;
    }
    eprintln!("energy after 40 000 steps: {:.3e} of {:.3e}", w, w0);
    assert!(w < 1e-3 * w0, "only {w} of {w0} left");
}
