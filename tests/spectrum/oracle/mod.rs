//! Independent references for resonance extraction, shared by `tests/spectrum/extraction_oracle.rs`
//! and `studies/extraction_sweep.rs` (included there by path):
//!
//! - meshes the extraction was not tuned on: boxes, cylinders and balls of random size,
//!   position and orientation, jittered (`random_box`, `random_cylinder`, `random_ball`);
//!   cylinders and balls map a box mesh onto the shape by `p ↦ p |p|_∞ / |p|_2` (cross-section
//!   or whole box), which takes the square (cube) onto the disk (ball) and its boundary onto
//!   the circle (sphere);
//! - the exact discrete answer: the eigenpairs of K (dense, `common::dense_k`), the time-domain
//!   frequencies `f_td = arccos(1 - λ Δt²/2) / (2π Δt)` of the leapfrog, and the amplitude and
//!   phase each probe component sees, from the state after the pulse projected on the
//!   Meps-orthonormal eigenvectors (`Truth`);
//! - the `harminv` program (filter diagonalization, Mandelshtam & Taylor), run on the same
//!   signals (`harminv`).

#![allow(dead_code, clippy::needless_range_loop)]

use super::common::{dense_k, dense_meps};
use dgatd::C0;
use dgatd::backend::{Stepper, cpu::CpuStepper};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::internal::{Rng, V3};
use dgatd::mesh::{Mesh, RawTet, Topology, box_mesh};
use dgatd::problem::{Media, Waveform};
use dgatd::solver;
use dgatd::spectrum::Peak;
use std::f64::consts::PI;
use std::sync::Arc;

/// A random rotation (uniform unit quaternion) and translation applied to every node.
fn place(m: &mut Mesh, rng: &mut Rng) {
    let mut q = [0.0f64; 4];
    loop {
        for v in q.iter_mut() {
            *v = rng.sym();
        }
        let n = q.iter().map(|v| v * v).sum::<f64>();
        if n > 0.01 && n <= 1.0 {
            q.iter_mut().for_each(|v| *v /= n.sqrt());
            break;
        }
    }
    let [w, x, y, z] = q;
    let r = [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ];
    let t = [3.0 * rng.sym(), 3.0 * rng.sym(), 3.0 * rng.sym()];
    for p in m.nodes.iter_mut() {
        let o = *p;
        for i in 0..3 {
            p[i] = r[i][0] * o[0] + r[i][1] * o[1] + r[i][2] * o[2] + t[i];
        }
    }
}

/// Rebuilds `m` with new node positions through the validating constructor (orientation).
fn rebuild(m: Mesh, nodes: Vec<V3>, name: String) -> Mesh {
    let raw = m
        .tets
        .iter()
        .enumerate()
        .map(|(i, t)| RawTet {
            id: i as u64 + 1,
            nodes: *t,
            phys: m.tet_phys[i],
        })
        .collect();
    Mesh::from_raw(&name, nodes, raw, vec![], m.physical_names.clone())
        .expect("generated mesh is valid")
}

/// Moves nodes strictly inside the reference box `[lo, hi]` by up to `amp` cells.
fn jitter(nodes: &mut [V3], lo: V3, hi: V3, n: [usize; 3], amp: f64, rng: &mut Rng) {
    let h: Vec<f64> = (0..3).map(|c| (hi[c] - lo[c]) / n[c] as f64).collect();
    for p in nodes.iter_mut() {
        if (0..3).all(|c| p[c] > lo[c] + 1e-9 && p[c] < hi[c] - 1e-9) {
            for c in 0..3 {
                p[c] += amp * h[c] * rng.sym();
            }
        }
    }
}

/// Box of random sides (0.5..1.5 m) and cells (3..5 per side), jittered, rotated, moved.
pub fn random_box(seed: u64) -> Mesh {
    random_box_n(seed, 1)
}

/// [`random_box`] with `k` times the cells per side.
pub fn random_box_n(seed: u64, k: usize) -> Mesh {
    let mut rng = Rng::new(seed);
    let l = [
        0.5 + rng.uniform(),
        0.5 + rng.uniform(),
        0.5 + rng.uniform(),
    ];
    let n = [
        k * (3 + (rng.uniform() * 2.5) as usize),
        k * (3 + (rng.uniform() * 2.5) as usize),
        k * (3 + (rng.uniform() * 1.5) as usize),
    ];
    let m = box_mesh(n, l);
    let mut nodes = m.nodes.clone();
    jitter(&mut nodes, [0.0; 3], l, n, 0.2, &mut rng);
    let mut out = rebuild(m, nodes, format!("random box {seed}"));
    place(&mut out, &mut rng);
    out
}

/// `p |p|_∞ / |p|_2` on the first `dims` coordinates (square → disk, cube → ball).
fn round(p: V3, dims: usize) -> V3 {
    let inf = (0..dims).map(|c| p[c].abs()).fold(0.0, f64::max);
    let two = (0..dims).map(|c| p[c] * p[c]).sum::<f64>().sqrt();
    let s = if two > 0.0 { inf / two } else { 1.0 };
    let mut q = p;
    for c in 0..dims {
        q[c] *= s;
    }
    q
}

/// Cylinder of random radius (0.3..0.8 m) and height (0.3..1.0 m).
pub fn random_cylinder(seed: u64) -> (Mesh, f64, f64) {
    random_cylinder_n(seed, 1)
}

/// [`random_cylinder`] with `k` times the cells per side.
pub fn random_cylinder_n(seed: u64, k: usize) -> (Mesh, f64, f64) {
    let mut rng = Rng::new(seed);
    let (r, h) = (0.3 + 0.5 * rng.uniform(), 0.3 + 0.7 * rng.uniform());
    let n = [4 * k, 4 * k, k * (2 + (rng.uniform() * 1.5) as usize)];
    let mut m = box_mesh(n, [2.0, 2.0, 1.0]);
    for p in m.nodes.iter_mut() {
        p[0] -= 1.0;
        p[1] -= 1.0;
    }
    let mut nodes = m.nodes.clone();
    jitter(
        &mut nodes,
        [-1.0, -1.0, 0.0],
        [1.0, 1.0, 1.0],
        n,
        0.15,
        &mut rng,
    );
    let nodes = nodes
        .into_iter()
        .map(|p| {
            let q = round(p, 2);
            [r * q[0], r * q[1], h * q[2]]
        })
        .collect();
    let mut out = rebuild(m, nodes, format!("random cylinder {seed}"));
    place(&mut out, &mut rng);
    (out, r, h)
}

/// Ball of random radius (0.3..0.8 m).
pub fn random_ball(seed: u64) -> (Mesh, f64) {
    random_ball_n(seed, 1)
}

/// [`random_ball`] with `k` times the cells per side.
pub fn random_ball_n(seed: u64, k: usize) -> (Mesh, f64) {
    let mut rng = Rng::new(seed);
    let r = 0.3 + 0.5 * rng.uniform();
    let n = [4 * k, 4 * k, 4 * k];
    let mut m = box_mesh(n, [2.0, 2.0, 2.0]);
    for p in m.nodes.iter_mut() {
        for c in p.iter_mut() {
            *c -= 1.0;
        }
    }
    let mut nodes = m.nodes.clone();
    jitter(&mut nodes, [-1.0; 3], [1.0; 3], n, 0.15, &mut rng);
    let nodes = nodes
        .into_iter()
        .map(|p| {
            let q = round(p, 3);
            [r * q[0], r * q[1], r * q[2]]
        })
        .collect();
    let mut out = rebuild(m, nodes, format!("random ball {seed}"));
    place(&mut out, &mut rng);
    (out, r)
}

/// A random point inside tet `t` (barycentric weights at least 0.1).
fn point_in(m: &Mesh, t: usize, rng: &mut Rng) -> V3 {
    let mut w = [0.0; 4];
    for v in w.iter_mut() {
        *v = 0.1 + rng.uniform();
    }
    let s: f64 = w.iter().sum();
    let x = m.tet_x(t);
    let mut p = [0.0; 3];
    for k in 0..4 {
        for c in 0..3 {
            p[c] += w[k] / s * x[k][c];
        }
    }
    p
}

/// A resonator run set up like `dgatd resonator` (Gaussian-derivative pulse at `c / extent`,
/// band `[0.05, 2.2] f_peak`), with the source and three probes at random interior points.
pub struct Rig {
    pub mesh: Mesh,
    pub topo: Topology,
    pub dga: Arc<Dga>,
    /// Time step, m (c = 1) and s.
    pub dt: f64,
    pub dt_s: f64,
    pub source: Source,
    pub probes: Vec<Probe>,
    pub wave: Waveform,
    /// First analysed step (after the pulse).
    pub start: usize,
    pub fmin_hz: f64,
    pub fmax_hz: f64,
}

/// What a run produced: the analysed signals (probe-major, components x, y, z) and the
/// states one step before and at the first analysed sample.
pub struct RunOut {
    pub signals: Vec<Vec<f64>>,
    pub u_before: Vec<f64>,
    pub u_first: Vec<f64>,
}

impl Rig {
    pub fn new(mesh: Mesh, seed: u64) -> Rig {
        let topo = Topology::build(&mesh).unwrap();
        let dga = Arc::new(Dga::assemble(&mesh, &topo, &Media::vacuum(mesh.n_tets())).unwrap());
        let (dt, _) = solver::time_step(&dga, 0.95).unwrap();
        let (lo, hi) = mesh.bbox();
        let extent = (0..3).map(|c| hi[c] - lo[c]).fold(0.0, f64::max);
        let f_peak = C0 / extent;
        let wave = Waveform::gaussian_derivative(f_peak);
        let mut rng = Rng::new(seed ^ 0x5ca1ab1e);
        let source = loop {
            let t = (rng.uniform() * mesh.n_tets() as f64) as usize;
            let p = point_in(&mesh, t, &mut rng);
            let d = [rng.sym(), rng.sym(), rng.sym()];
            if let Ok(s) = Source::new(&mesh, &topo, &dga, p, d) {
                break s;
            }
        };
        let probes = (0..3)
            .map(|_| {
                let t = (rng.uniform() * mesh.n_tets() as f64) as usize;
                Probe::new(&mesh, &topo, point_in(&mesh, t, &mut rng)).unwrap()
            })
            .collect();
        Rig {
            start: (wave.end() / dt).ceil() as usize,
            dt_s: dt / C0,
            mesh,
            topo,
            dga,
            dt,
            source,
            probes,
            wave,
            fmin_hz: 0.05 * f_peak,
            fmax_hz: 2.2 * f_peak,
        }
    }

    /// The rig with the band the resonator job defaults to for its mesh
    /// (`solver::defaults::band`: up to k h = 1 with the mean edge, or 2.2 f_peak, or half
    /// the Nyquist frequency).
    pub fn with_default_band(mut self) -> Rig {
        let media = Media::vacuum(self.mesh.n_tets());
        let scales = solver::Scales::of(&self.mesh, &media);
        self.fmax_hz = solver::default_band(
            None,
            &self.wave,
            scales.f_resolved_hz(),
            self.dt_s,
            &mut vec![],
        )
        .expect("the default band of a generated mesh");
        self
    }

    /// Free half-edges (the size of the dense K).
    pub fn n_free(&self) -> usize {
        self.dga.meps.h.len()
    }

    /// Runs `steps` leapfrog steps on the CPU backend in f64 or f32.
    pub fn run(&self, steps: usize, f32: bool) -> RunOut {
        if f32 {
            self.run_t::<f32>(steps)
        } else {
            self.run_t::<f64>(steps)
        }
    }

    /// Runs `steps` steps in f64 on an OpenCL device, with the CPU's time step.
    pub fn run_opencl(
        &self,
        steps: usize,
        dev: Arc<dgatd::backend::opencl::ClDevice>,
    ) -> dgatd::Result<RunOut> {
        let mut s = dgatd::backend::opencl::ClStepper::<f64>::new(
            dev,
            self.dga.clone(),
            DualForm::Factored,
            Some(&self.source),
            &self.probes,
        )?;
        s.set_time_step(self.dt, Some(self.wave))?;
        self.drive(&mut s, steps)
    }

    fn run_t<T: dgatd::Real>(&self, steps: usize) -> RunOut {
        assert!(steps > self.start + 1);
        let ops = Arc::new(Operators::<T>::new(&self.dga, self.dt, false));
        let mut s = CpuStepper::new(
            self.dga.clone(),
            ops,
            DualForm::Factored,
            Some((&self.source, self.wave)),
            self.probes.clone(),
        )
        .unwrap();
        self.drive(&mut s, steps).unwrap()
    }

    fn drive(&self, s: &mut dyn Stepper, steps: usize) -> dgatd::Result<RunOut> {
        let mut samples = Vec::new();
        s.advance(0, self.start, &mut samples)?;
        let u_before = s.state()?.0;
        s.advance(self.start, 1, &mut samples)?;
        let u_first = s.state()?.0;
        s.advance(self.start + 1, steps - self.start - 1, &mut samples)?;
        let np = self.probes.len();
        let signals = (0..np)
            .flat_map(|p| (0..3).map(move |c| (p, c)))
            .map(|(p, c)| {
                (self.start..steps)
                    .map(|k| samples[(k * np + p) * 3 + c])
                    .collect()
            })
            .collect();
        Ok(RunOut {
            signals,
            u_before,
            u_first,
        })
    }
}

/// A resonance of the discrete operator as the probes see it.
#[derive(Clone, Debug)]
pub struct Line {
    /// Time-domain (leapfrog) frequency, Hz.
    pub f_hz: f64,
    /// Semi-discrete frequency `sqrt(λ) c / 2π`, Hz.
    pub f_k_hz: f64,
    /// Cosine amplitude and phase per signal (signal j = sample after step start + 1 + j).
    pub amplitudes: Vec<f64>,
    pub phases: Vec<f64>,
    /// Eigenvalues merged into this line (exact degeneracy, relative gap < 1e-10).
    pub multiplicity: usize,
}

impl Line {
    pub fn amplitude(&self) -> f64 {
        self.amplitudes.iter().cloned().fold(0.0, f64::max)
    }
}

/// The discrete answer: every nonzero eigenvalue of K with what each probe component sees.
pub struct Truth {
    pub lines: Vec<Line>,
}

impl Truth {
    pub fn new(rig: &Rig, run: &RunOut) -> Truth {
        let d = &rig.dga;
        let (free, kmat) = dense_k(d);
        let nf = free.len();
        let meps = dense_meps(d, &free);
        // Meps K is symmetric; with Meps = L Lᵀ, A = L⁻¹ (Meps K) L⁻ᵀ has eigenvectors y and
        // K has e = L⁻ᵀ y, Meps-orthonormal; the modal coordinate of u is yᵀ Lᵀ u.
        let s = &meps * &kmat;
        let s = 0.5 * (&s + s.transpose());
        let l = meps.cholesky().expect("Meps is SPD").l();
        let linv = l.clone().try_inverse().unwrap();
        let a = &linv * s * linv.transpose();
        let a = 0.5 * (&a + a.transpose());
        let eig = a.symmetric_eigen();
        let lt = l.transpose();
        let restrict = |u: &[f64]| nalgebra::DVector::from_iterator(nf, free.iter().map(|&h| u[h]));
        let ca = eig.eigenvectors.transpose() * (&lt * restrict(&run.u_before));
        let cb = eig.eigenvectors.transpose() * (&lt * restrict(&run.u_first));
        let lmax = eig.eigenvalues.max();
        let mut order: Vec<usize> = (0..nf)
            .filter(|&k| eig.eigenvalues[k] > 1e-9 * lmax)
            .collect();
        order.sort_by(|&i, &j| eig.eigenvalues[i].total_cmp(&eig.eigenvalues[j]));
        let ltinv = linv.transpose();
        let nsig = 3 * rig.probes.len();
        let mut lines: Vec<Line> = Vec::new();
        let mut acc: Vec<nalgebra::Complex<f64>> = Vec::new();
        let mut last_lambda = f64::NAN;
        for &k in &order {
            let lam = eig.eigenvalues[k];
            let cos = 1.0 - 0.5 * lam * rig.dt * rig.dt;
            let theta = cos.acos();
            // c(j) = Re(a e^{iθ j}) with c(-1) = ca, c(0) = cb.
            let amp = nalgebra::Complex::new(cb[k], (ca[k] - cb[k] * cos) / theta.sin());
            let e = &ltinv * eig.eigenvectors.column(k);
            let mut full = vec![0.0; d.n_half()];
            for (i, &h) in free.iter().enumerate() {
                full[h] = e[i];
            }
            let seen: Vec<nalgebra::Complex<f64>> = rig
                .probes
                .iter()
                .flat_map(|p| p.sample(&full))
                .map(|w| amp * w)
                .collect();
            let degenerate = (lam - last_lambda).abs() <= 1e-10 * lam;
            if degenerate {
                for (s, v) in acc.iter_mut().zip(&seen) {
                    *s += v;
                }
                lines.last_mut().unwrap().multiplicity += 1;
            } else {
                acc = seen;
                lines.push(Line {
                    f_hz: theta / (2.0 * PI * rig.dt_s),
                    f_k_hz: lam.sqrt() * C0 / (2.0 * PI),
                    amplitudes: vec![],
                    phases: vec![],
                    multiplicity: 1,
                });
            }
            let line = lines.last_mut().unwrap();
            line.amplitudes = acc.iter().map(|v| v.norm()).collect();
            line.phases = acc.iter().map(|v| v.arg()).collect();
            debug_assert_eq!(line.amplitudes.len(), nsig);
            last_lambda = lam;
        }
        Truth { lines }
    }

    /// Lines in `[fmin, fmax)`.
    pub fn in_band(&self, fmin: f64, fmax: f64) -> Vec<&Line> {
        self.lines
            .iter()
            .filter(|l| l.f_hz >= fmin && l.f_hz < fmax)
            .collect()
    }

    /// `(f_hz, amplitude)` of the lines in the rig's band: the reference list of [`score`].
    pub fn references(&self, rig: &Rig) -> Vec<(f64, f64)> {
        self.in_band(rig.fmin_hz, rig.fmax_hz)
            .iter()
            .map(|l| (l.f_hz, l.amplitude()))
            .collect()
    }
}

/// The reference list `(f_hz, amplitude)` of a record long enough to resolve its band: the
/// lines `extract` finds in the whole of `run` with settings `s` (where the dense K is out of
/// reach; on small meshes these lines match it to 1e-13). Panics when the record leaves any
/// part of the band unresolved: it would not be a reference.
pub fn long_record_references(
    rig: &Rig,
    run: &RunOut,
    s: &dgatd::spectrum::ExtractSettings,
) -> Vec<(f64, f64)> {
    let e = dgatd::spectrum::extract(&run.signals, rig.dt_s, s).unwrap();
    assert!(
        e.unresolved.is_empty(),
        "the reference record of {} samples leaves {:?} unresolved",
        run.signals[0].len(),
        e.unresolved
    );
    e.peaks.iter().map(|p| (p.f_hz, p.amplitude)).collect()
}

/// A random mesh of `kind`: 0 a box, 1 a cylinder, otherwise a ball.
pub fn random_mesh(kind: u32, seed: u64) -> Mesh {
    match kind {
        0 => random_box(seed),
        1 => random_cylinder(seed).0,
        _ => random_ball(seed).0,
    }
}

/// The missed lines (`Score::missed`) outside every unresolved interval of the extraction:
/// lines lost without a warning.
pub fn missed_unflagged(missed: &[f64], unresolved: &[dgatd::spectrum::Unresolved]) -> Vec<f64> {
    missed
        .iter()
        .copied()
        .filter(|&f| !unresolved.iter().any(|u| u.f_lo_hz <= f && f <= u.f_hi_hz))
        .collect()
}

/// Found / missed / spurious lines of an extraction against a reference list.
#[derive(Clone, Debug, Default)]
pub struct Score {
    /// Reference lines the probes see at least `2 x floor` (relative to the strongest).
    pub expected: usize,
    pub found: usize,
    /// Expected reference lines no reported line matched (their frequencies).
    pub missed: Vec<f64>,
    /// Reported lines matching no reference line, or a line already matched.
    pub spurious: Vec<f64>,
    /// Largest |f_reported - f_reference| / f_reference over matched lines.
    pub max_rel_err: f64,
}

/// Scores `peaks` against reference lines `(f_hz, amplitude)`. A reported line matches a
/// reference within `max(k_err · its error estimate, tol_rel)` (relative). Reference lines
/// between 0.5 and 2 times the floor may be reported or not.
pub fn score(peaks: &[Peak], reference: &[(f64, f64)], floor: f64, tol_rel: f64) -> Score {
    let top = reference.iter().map(|r| r.1).fold(0.0, f64::max);
    let mut used = vec![false; reference.len()];
    let mut sc = Score::default();
    for p in peaks {
        let tol = (10.0 * p.error.unwrap_or(0.0)).max(tol_rel) * p.f_hz;
        let best = (0..reference.len())
            .filter(|&i| (reference[i].0 - p.f_hz).abs() <= tol)
            .min_by(|&i, &j| {
                (reference[i].0 - p.f_hz)
                    .abs()
                    .total_cmp(&(reference[j].0 - p.f_hz).abs())
            });
        match best {
            Some(i) if !used[i] => {
                used[i] = true;
                sc.max_rel_err = sc
                    .max_rel_err
                    .max((reference[i].0 - p.f_hz).abs() / reference[i].0);
            }
            _ => sc.spurious.push(p.f_hz),
        }
    }
    for (i, r) in reference.iter().enumerate() {
        if r.1 >= 2.0 * floor * top {
            sc.expected += 1;
            if used[i] {
                sc.found += 1;
            } else {
                sc.missed.push(r.0);
            }
        }
    }
    sc
}

/// Whether the `harminv` program can be run.
pub fn harminv_available() -> bool {
    std::process::Command::new("harminv")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A line reported by the `harminv` program.
#[derive(Clone, Debug)]
pub struct HLine {
    pub f_hz: f64,
    pub decay_per_s: f64,
    /// harminv's amplitude (of each of the two complex exponentials of a real cosine: half
    /// the cosine amplitude).
    pub amplitude: f64,
    /// harminv's error estimate, converted to an absolute frequency error (Hz).
    pub err_hz: f64,
}

/// Runs `harminv -n -t DT -f NF -- (fmin-f0)-(fmax-f0)` on `signal · exp(-2πi f0 t)`.
/// harminv prints 6 significant digits; shifting the signal by `f0` (an exact change of
/// variable for a sum of exponentials) lets a line near `f0` be read to ~1e-6 of `f - f0`.
/// `-n` because harminv writes modes as `exp(-iωt)`.
pub fn harminv(signal: &[f64], dt_s: f64, fmin: f64, fmax: f64, f0: f64, nf: usize) -> Vec<HLine> {
    use std::io::Write;
    let mut input = String::with_capacity(signal.len() * 52);
    for (k, &v) in signal.iter().enumerate() {
        let ph = -2.0 * PI * f0 * k as f64 * dt_s;
        let (s, c) = ph.sin_cos();
        input.push_str(&format!("{:.17e}{:+.17e}i\n", v * c, v * s));
    }
    let mut child = std::process::Command::new("harminv")
        .args([
            "-n",
            "-t",
            &format!("{dt_s:e}"),
            "-f",
            &nf.to_string(),
            "--",
            &format!("{:e}-{:e}", fmin - f0, fmax - f0),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("harminv starts");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("harminv runs");
    writer.join().unwrap().expect("harminv reads its input");
    assert!(
        out.status.success(),
        "harminv failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let v: Vec<f64> = l
                .split(',')
                .map(|x| x.trim().parse::<f64>())
                .collect::<Result<_, _>>()
                .ok()?;
            (v.len() == 6).then(|| HLine {
                f_hz: v[0] + f0,
                decay_per_s: v[1],
                amplitude: v[3],
                err_hz: v[5] * v[0].abs(),
            })
        })
        .collect()
}
