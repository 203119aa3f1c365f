//! Perfectly matched layers (`src/problem/pml.rs`, `src/dga/stretch.rs`): CFS stretching as
//! an anisotropic dispersive medium on both sides of the leapfrog.
//!
//! Reflection is measured as in tests/dga/absorbing_layer.rs: the same run in a domain large
//! enough that nothing comes back within the window is the reference, on the same cell
//! grid (box meshes, Kuhn split, shifted by whole cells so that the tets around source and
//! probes are the same), and the largest `|short − long|` over the window, relative to the
//! reference's peak at that probe, is the reflection. Source and probes sit at generic
//! points (off node planes and cell diagonals).
//!
//! - Normal incidence: the TEM pulse of a parallel-plate guide (PEC z-walls, PMC y-walls)
//!   meets a PML at both ends.
//! - Oblique incidence: a z-directed point current in a cube with a PML on all six faces;
//!   one probe in front of a face (near normal incidence there), one near a corner of the
//!   interior (the waves reach the layer at 35–70° from the normals), one near an edge.
//!   The absorbing layer (`absorbing = true`, a matched isotropic conductor) of the same
//!   thickness is run beside it as the comparison.

use dgatd::Real;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::dga::{Dga, DualForm, Operators, Probe, Source};
use dgatd::mesh::{Mesh, Topology, box_mesh};
use dgatd::problem::pml::Stretch;
use dgatd::problem::{Boundary, BoundaryKind, Media, Walls, Waveform};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Probe records (`[probe][step]` of the source-directed component) of a CPU run.
fn pulse<T: Real>(
    m: &Mesh,
    d: &Arc<Dga>,
    dt: f64,
    steps: usize,
    (src, dir, wave): (dgatd::V3, dgatd::V3, Waveform),
    probes: &[dgatd::V3],
) -> (Vec<Vec<f64>>, CpuStepper<T>) {
    let t = Topology::build(m).unwrap();
    let ops = Arc::new(Operators::<T>::new(d, dt, false));
    let src = Source::new(m, &t, d, src, dir).unwrap();
    let pr: Vec<Probe> = probes
        .iter()
        .map(|&p| Probe::new(m, &t, p).unwrap())
        .collect();
    let mut s =
        CpuStepper::new(d.clone(), ops, DualForm::Factored, Some((&src, wave)), pr).unwrap();
    let rec = dgatd::solver::run(
        &mut s,
        dt,
        steps,
        Some(wave.end()),
        probes.len(),
        4,
        &mut |_| {},
    )
    .unwrap();
    let c = dir.iter().position(|&x| x != 0.0).unwrap();
    ((0..probes.len()).map(|p| rec.series(p, c)).collect(), s)
}

/// A box mesh of `n` cells of size `h` centred on the origin.
fn centred_box(n: [usize; 3], h: f64) -> Mesh {
    let mut m = box_mesh(n, [n[0] as f64 * h, n[1] as f64 * h, n[2] as f64 * h]);
    for p in &mut m.nodes {
        for k in 0..3 {
            p[k] -= 0.5 * n[k] as f64 * h;
        }
    }
    m
}

pub(super) fn centroid(m: &Mesh, n: usize) -> dgatd::V3 {
    let x = m.tet_x(n);
    std::array::from_fn(|k| x.iter().map(|p| p[k]).sum::<f64>() / 4.0)
}

/// How the layer tets `in_layer` absorb.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Absorber {
    None,
    Pml {
        order: f64,
        refl: f64,
    },
    Layer {
        order: f64,
        refl: f64,
    },
    /// The first-order condition on every outer wall (no layer tets).
    Abc,
}

/// The layers every comparison uses: order 3, target R 1e-6.
const PML: Absorber = Absorber::Pml {
    order: 3.0,
    refl: 1e-6,
};
const LAYER: Absorber = Absorber::Layer {
    order: 3.0,
    refl: 1e-6,
};

fn media_with(m: &Mesh, in_layer: &[bool], a: Absorber) -> Media {
    let mut media = Media::lossless(vec![1.0; m.n_tets()], vec![1.0; m.n_tets()]);
    match a {
        Absorber::None | Absorber::Abc => {}
        Absorber::Pml { order, refl } => {
            let mut st = Stretch::default();
            st.add_layer(m, in_layer, &media.eps, &media.mu, order, refl, None, "pml")
                .unwrap();
            media.pml = Some(st);
        }
        Absorber::Layer { order, refl } => {
            media.add_layer(m, in_layer, order, refl, "layer").unwrap()
        }
    }
    media
}

/// Largest `|a − b|` over the window relative to the peak of `b`.
fn rel_max(a: &[f64], b: &[f64]) -> f64 {
    let peak = b.iter().fold(0.0f64, |x, &y| x.max(y.abs()));
    assert!(peak > 0.0, "the reference record is all zero");
    a.iter()
        .zip(b)
        .fold(0.0f64, |x, (p, q)| x.max((p - q).abs()))
        / peak
}

fn db(r: f64) -> f64 {
    20.0 * r.log10()
}

const H: f64 = 0.04;

/// The guide of tests/dga/absorbing_layer.rs: length `len`, `cells` of absorber at both ends.
fn guide<T: Real>(len: f64, cells: usize, a: Absorber, steps: usize) -> (Vec<f64>, f64, Arc<Dga>) {
    let nx = (len / H).round() as usize;
    let nc = (0.2 / H).round() as usize;
    let m = box_mesh([nx, nc, nc], [len, 0.2, 0.2]);
    let t = Topology::build(&m).unwrap();
    let lp = cells as f64 * H;
    let in_layer: Vec<bool> = (0..m.n_tets())
        .map(|n| {
            let x = centroid(&m, n)[0];
            cells > 0 && (x < lp || x > len - lp)
        })
        .collect();
    let media = media_with(&m, &in_layer, if cells == 0 { Absorber::None } else { a });
    let walls: BTreeMap<String, Boundary> =
        [("ymin", BoundaryKind::Pmc), ("ymax", BoundaryKind::Pmc)]
            .iter()
            .map(|(n, k)| (n.to_string(), Boundary::of(*k)))
            .collect();
    let w = Walls::resolve(&m, &t, &walls).unwrap();
    let d = Arc::new(Dga::assemble_with(&m, &t, &media, &w.fixed_edges(&t), false).unwrap());
    let dt = 0.4 * H / 3f64.sqrt();
    let x0 = len / 2.0 + 0.37 * H;
    let wave = Waveform::gaussian_derivative(150e6);
    let (rec, _) = pulse::<T>(
        &m,
        &d,
        dt,
        steps,
        ([x0, 0.093, 0.107], [0.0, 0.0, 1.0], wave),
        &[[x0 + 0.313, 0.087, 0.111]],
    );
    (rec[0].clone(), dt, d)
}

/// The guide at normal incidence. Measured (h = 0.04 m, the pulse's spectrum peaks at
/// λ = 50 cells): 10 cells of PML −47 dB, 8 cells −44 dB, 5 cells −36 dB, the 10-cell
/// absorbing layer −44 dB (at normal incidence a PML and a matched isotropic conductor are
/// the same medium). The floor falls as the layer thickens (about 1/L²) and hardly moves with
/// the target R from 1e-5 to 1e-8, the number of grading levels (16 to 1024) or Δt: it is
/// the discretisation of the graded medium on the mesh, not the continuous profile.
/// Asserted: the 10-cell PML below −44 dB, and not worse than the layer.
#[test]
fn a_pml_absorbs_a_normally_incident_pulse() {
    let steps = (28.0 / H) as usize;
    let (long, dt, _) = guide::<f64>(10.0, 0, Absorber::None, steps);
    let window = ((4.0 / dt) as usize).min(steps);
    let mut got = Vec::new();
    for (cells, a) in [(10, PML), (8, PML), (10, LAYER)] {
        let (short, _, _) = guide::<f64>(2.0, cells, a, steps);
        let r = rel_max(&short[..window], &long[..window]);
        eprintln!(
            "normal incidence, {cells} cells of {a:?}: {r:.3e} ({:.1} dB)",
            db(r)
        );
        got.push(db(r));
    }
    assert!(got[0] < -44.0, "the 10-cell PML reflects {:.1} dB", got[0]);
    assert!(
        got[0] <= got[2] + 0.5,
        "the PML ({:.1} dB) reflects more than the layer ({:.1} dB)",
        got[0],
        got[2]
    );
}

/// The cube: interior half-width `a` cells, absorber `l` cells, record at the probes.
fn cube<T: Real>(
    half: usize,
    cells: usize,
    a: Absorber,
    steps: usize,
    probes: &[dgatd::V3],
) -> (Vec<Vec<f64>>, f64) {
    let n = 2 * (half + cells);
    let m = centred_box([n; 3], H);
    let t = Topology::build(&m).unwrap();
    let lim = half as f64 * H;
    let in_layer: Vec<bool> = (0..m.n_tets())
        .map(|k| cells > 0 && centroid(&m, k).iter().any(|x| x.abs() > lim))
        .collect();
    let media = media_with(
        &m,
        &in_layer,
        if cells == 0 && a != Absorber::Abc {
            Absorber::None
        } else {
            a
        },
    );
    let d = if a == Absorber::Abc {
        let walls: BTreeMap<String, Boundary> = dgatd::mesh::BOX_WALLS
            .iter()
            .map(|n| (n.to_string(), Boundary::of(BoundaryKind::Abc)))
            .collect();
        let w = Walls::resolve(&m, &t, &walls).unwrap();
        let mut d = Dga::assemble_with(&m, &t, &media, &w.fixed_edges(&t), false).unwrap();
        let (faces, y) = w.absorbing(&t, &media);
        d.add_surface(&dgatd::dga::surface_conductance(&m, &t, &faces, &y));
        Arc::new(d)
    } else {
        Arc::new(Dga::assemble(&m, &t, &media).unwrap())
    };
    let dt = 0.4 * H / 3f64.sqrt();
    // λ at the spectrum's peak = 10 cells; emitted from t = 0 (t0 = 5τ: 3e-5 of the peak
    // at t = 0) so that it has passed the probes well before the window ends
    let g = Waveform::gaussian_derivative(dgatd::C0 / (10.0 * H));
    let wave = Waveform {
        tau: g.tau,
        t0: 5.0 * g.tau,
    };
    let (rec, _) = pulse::<T>(
        &m,
        &d,
        dt,
        steps,
        ([0.37 * H, -0.21 * H, 0.13 * H], [0.0, 0.0, 1.0], wave),
        probes,
    );
    (rec, dt)
}

/// A point current in a cube with an absorber on all six faces (module docs). Measured
/// (the pulse's spectrum peaks at λ = 10 cells): the 10-cell PML about −50 … −60 dB at the
/// face, corner and edge probes, the 10-cell absorbing layer −23 … −30 dB, the first-order
/// condition on the cube's walls (no layer) about −20 dB; the PEC cube above −10 dB.
/// Asserted: the PML below −45 dB at every probe, 15 dB or more below the layer at the
/// corner and edge probes, and the PEC box seen.
#[test]
fn a_pml_absorbs_oblique_waves_in_three_dimensions() {
    let (half, big) = (6, 26);
    // face (x), corner and edge probes, inside the interior's last cell or two
    let probes = [
        [4.63 * H, 0.41 * H, -0.27 * H],
        [4.61 * H, 4.37 * H, 4.53 * H],
        [-4.47 * H, 4.58 * H, 0.33 * H],
    ];
    // the reference's walls are 26 cells out: its first echo reaches the probes after
    // at least 2·26 − 0.5 − 4.7 ≈ 46 cells of light travel; the pulse (10τ ≈ 16 cells
    // long) has passed the farthest probe by about 24 cells
    let window_travel = 42.0 * H;
    let dt = 0.4 * H / 3f64.sqrt();
    let steps = (window_travel / dt) as usize;
    let (long, _) = cube::<f64>(big, 0, Absorber::None, steps, &probes);
    let mut rows = Vec::new();
    for (cells, a) in [
        (10, PML),
        (8, PML),
        (10, LAYER),
        (0, Absorber::Abc),
        (0, Absorber::None),
    ] {
        let (short, _) = cube::<f64>(half, cells, a, steps, &probes);
        let r: Vec<f64> = (0..probes.len())
            .map(|p| db(rel_max(&short[p], &long[p])))
            .collect();
        eprintln!(
            "3-D, {cells} cells of {a:?}: face {:.1} dB, corner {:.1} dB, edge {:.1} dB",
            r[0], r[1], r[2]
        );
        rows.push(r);
    }
    assert!(
        rows[4].iter().all(|&r| r > -10.0),
        "the PEC box reflects only {:?} dB: the window sees nothing",
        rows[4]
    );
    for (p, &x) in rows[0].iter().enumerate() {
        assert!(x < -45.0, "10-cell PML, probe {p}: {x:.1} dB");
    }
    for p in [1, 2] {
        assert!(
            rows[2][p] - rows[0][p] > 15.0,
            "probe {p}: PML {:.1} dB, layer {:.1} dB",
            rows[0][p],
            rows[2][p]
        );
    }
}

/// The PML in f32 follows the f64 run to single-precision round-off.
#[test]
fn the_pml_in_f32_follows_f64() {
    let steps = 700;
    let (a, _, _) = guide::<f64>(2.0, 10, PML, steps);
    let (b, _, _) = guide::<f32>(2.0, 10, PML, steps);
    let e = rel_max(&b, &a);
    eprintln!("f32 against f64 with a PML: {e:.2e} of the peak");
    assert!(e < 1e-4, "{e:e}");
}

/// 40 000 steps after the pulse: the field energy never grows past its post-pulse level and
/// falls to a thousandth (the layer's poles all lie in the left half plane: no late-time
/// growth).
#[test]
fn the_pml_is_stable_late() {
    let (_, dt, d) = guide::<f64>(2.0, 10, PML, 10);
    let nx = (2.0 / H).round() as usize;
    let m = box_mesh([nx, 5, 5], [2.0, 0.2, 0.2]);
    let t = Topology::build(&m).unwrap();
    let wave = Waveform::gaussian_derivative(150e6);
    let src = Source::new(&m, &t, &d, [1.0 + 0.37 * H, 0.093, 0.107], [0.0, 0.0, 1.0]).unwrap();
    let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
    let mut s = CpuStepper::new(
        d.clone(),
        ops,
        DualForm::Factored,
        Some((&src, wave)),
        vec![],
    )
    .unwrap();
    let mut sink = vec![];
    let end = (wave.end() / dt) as usize + 1;
    s.advance(0, end, &mut sink).unwrap();
    let w0 = s.energy().unwrap();
    assert!(w0 > 0.0);
    let mut wmax: f64 = w0;
    let mut w = w0;
    for k in 0..400 {
        s.advance(end + 100 * k, 100, &mut sink).unwrap();
        w = s.energy().unwrap();
        wmax = wmax.max(w);
    }
    eprintln!("energy after 40 000 steps: {w:.3e} of {w0:.3e} (largest {wmax:.3e})");
    assert!(wmax <= 1.05 * w0, "energy grew to {wmax} from {w0}");
    assert!(w.abs() < 1e-3 * w0, "{w} of {w0} left");
}

fn parse(text: &str) -> dgatd::Config {
    dgatd::Config::parse(&dgatd::solver::Origin {
        path: "pml.toml".into(),
        text: text.into(),
    })
    .unwrap()
}

fn sphere_toml(extra_top: &str, pml: &str) -> String {
    format!(
        "ball = \"3:sphere=0.1,air=0.3@2,pml=0.5@2\"\ntime = 2.5e-8\nsource = [0.043, 0.011, 0.017]\n\
         source_dir = [0.0, 1.0, 0.0]\nprobe = [[0.031, -0.022, 0.013], [-0.047, 0.021, -0.019]]\n\
         f_peak = 4e8\nfmax = 9e8\nbackend = \"cpu\"\n{extra_top}\
         [materials.sphere]\neps_r = 20\n[materials.pml]\npml = true\n{pml}"
    )
}

/// `[materials.NAME] pml = true` through the configuration: the run names the layer it
/// built (a sphere 0.2 m thick, from the inner surface the mesh has), finds the sphere's
/// magnetic dipole line near its Mie root (a coarse 3-shell mesh: within 5% in f and 30% in
/// Q), and writes `pml = true` back into its configuration.
#[test]
fn a_pml_runs_through_the_configuration() {
    use dgatd::spectrum::{MiePol, mie_resonance, nearest_line};
    let cfg = parse(&sphere_toml("", ""));
    let r = dgatd::run(&cfg, &mut |_, _| {}).unwrap();
    let note = r
        .notices
        .iter()
        .find(|n| n.starts_with("perfectly matched layer pml: sphere of thickness 0.2000 m"))
        .unwrap_or_else(|| panic!("no layer notice in {:?}", r.notices));
    eprintln!("{note}");
    let te = mie_resonance(MiePol::Te, 1, 1, 20.0, 0.1).unwrap();
    let lines = r.lines_with_q();
    let (f, q) = nearest_line(&lines, &te).unwrap_or_else(|| panic!("no TE line in {lines:?}"));
    eprintln!(
        "TE11: {:.2} MHz ({:+.2}% of Mie), Q {q:.2} ({:+.1}%)",
        f / 1e6,
        100.0 * (f / te.f_hz - 1.0),
        100.0 * (q / te.q - 1.0)
    );
    assert!((f / te.f_hz - 1.0).abs() < 0.05, "{f}");
    assert!((q / te.q - 1.0).abs() < 0.3, "{q}");
    assert!(r.config.materials["pml"].pml);
}

/// Where the layer cannot run, the run stops before stepping and says why.
#[test]
fn a_pml_is_refused_with_a_reason_where_it_does_not_run() {
    let err = |text: String| -> String {
        match dgatd::Config::parse(&dgatd::solver::Origin {
            path: "pml.toml".into(),
            text,
        }) {
            Err(e) => e.to_string(),
            Ok(cfg) => match dgatd::run(&cfg, &mut |_, _| {}) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("the run went ahead"),
            },
        }
    };
    let cases = [
        (
            sphere_toml("method = \"dg\"\n", ""),
            "does not support perfectly matched layers",
        ),
        (sphere_toml("", "sigma = 1.0\n"), "sets its own stretching"),
        (sphere_toml("", "pml_reflection = 2.0\n"), "pml_reflection"),
        (sphere_toml("", "pml_alpha = -1.0\n"), "pml_alpha"),
        (
            sphere_toml("", "").replace("pml = true\n", "pml_order = 2\n"),
            "need pml = true",
        ),
    ];
    for (text, want) in cases {
        let e = err(text);
        eprintln!("{e}");
        assert!(e.contains(want), "{e:?} does not say {want:?}");
    }
    // a layer whose inner surface is neither a box nor a sphere: half a cube's shell
    let m = centred_box([8, 8, 8], H);
    let lim = 2.0 * H;
    let in_layer: Vec<bool> = (0..m.n_tets())
        .map(|k| {
            let c = centroid(&m, k);
            c[0] > 0.0 && c.iter().any(|x| x.abs() > lim)
        })
        .collect();
    let one = vec![1.0; m.n_tets()];
    let e = Stretch::default()
        .add_layer(&m, &in_layer, &one, &one, 3.0, 1e-6, None, "shell")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("neither a sphere nor an axis-aligned box"),
        "{e}"
    );
}
