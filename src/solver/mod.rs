//! Leapfrog driver, time step, sources and probes (design note §8–9).
//!
//! Time is in metres of light travel inside the library (c = 1); `dt_s = dt / C0`.
//!
//! - Time step: `Δt = CFL · 2 / sqrt(ρ(K))`, `K = Meps⁻¹ C̃ Mmu⁻¹ C`, with ρ estimated by
//!   power iteration (generalised Rayleigh quotient in the `Meps` inner product) and
//!   enlarged by a 2% margin.
//! - Source: a uniform current density `J = w(t) d̂` inside the tet containing a point;
//!   the current through the dual face part of each free edge `e` of that tet is
//!   `j_e = d̂ · S̃_e(n)` (both half-edges of `e` get it), and the update subtracts
//!   `w(t_(n+1/2)) Δt Meps⁻¹ j`.
//! - Waveform: derivative of a Gaussian (zero mean), peak amplitude 1, spectrum peaking at
//!   `f_peak`: `w(t) = -(t - t0)/τ · exp(½ - (t - t0)²/(2τ²))`, `τ = 1/(2π f_peak)`,
//!   `t0 = 6τ`.
//! - Probe: the uniform field of the hexahedron containing the point (the barycentric
//!   dual cell of the vertex with the largest barycentric coordinate):
//!   `E = Σ_i U_(h_i) w^i`, `w^i` the dual basis of the 3 half-edge vectors.

use crate::backend::Stepper;
use crate::backend::cpu;
use crate::complex::TetGeom;
use crate::dga::Dga;
use crate::dga::operators::Operators;
use crate::mesh::{Mesh, Topology};
use crate::util::{Rng, V3, dot, norm};
use crate::{C0, Error, Real, Result};
use nalgebra::Matrix3;

pub mod checkpoint;
pub mod modeshape;
pub mod resonator;

/// Power-iteration estimate of ρ(K) (no margin). Uses the CPU kernels on unit operators.
pub fn spectral_radius(dga: &Dga, iters: usize, seed: u64) -> f64 {
    let ops = Operators::<f64>::new(dga, 1.0, false);
    let mut rng = Rng::new(seed);
    let mut x = vec![0.0; dga.n_half()];
    for &h in &dga.meps.h {
        x[h as usize] = rng.sym();
    }
    let mut f = vec![0.0; dga.n_dual()];
    let mut c = vec![0.0; dga.n_edges];
    let mut kx = vec![0.0; dga.n_half()];
    let mut lambda = 0.0;
    for _ in 0..iters {
        f.iter_mut().for_each(|v| *v = 0.0);
        kx.iter_mut().for_each(|v| *v = 0.0);
        cpu::primal(&ops, &x, &mut f); // f = -P x
        cpu::circulations(&ops, &f, &mut c);
        cpu::vertex_blocks(&ops, &c, &mut kx); // kx = -K x
        kx.iter_mut().for_each(|v| *v = -*v);
        let mut mkx = vec![0.0; x.len()];
        dga.meps.apply_add(&kx, &mut mkx);
        let num: f64 = x.iter().zip(&mkx).map(|(a, b)| a * b).sum();
        let den = dga.meps.quad(&x);
        lambda = num / den;
        let nrm = kx.iter().map(|v| v * v).sum::<f64>().sqrt();
        if nrm == 0.0 {
            break;
        }
        x.iter_mut().zip(&kx).for_each(|(a, b)| *a = b / nrm);
    }
    lambda
}

/// Margin applied to the power-iteration estimate of ρ(K).
pub const RHO_MARGIN: f64 = 1.02;

/// The stable time step (in metres of light travel) for a CFL number in (0, 1].
pub fn time_step(dga: &Dga, cfl: f64) -> Result<(f64, f64)> {
    if !(cfl > 0.0 && cfl <= 1.0) {
        return Err(Error::config("cfl", cfl, "must be in (0, 1]"));
    }
    let rho = spectral_radius(dga, 60, 0x5eed) * RHO_MARGIN;
    Ok((cfl * 2.0 / rho.sqrt(), rho))
}

/// Zero-mean derivative-of-Gaussian waveform (times in metres of light travel).
#[derive(Clone, Copy, Debug)]
pub struct Waveform {
    pub tau: f64,
    pub t0: f64,
}

impl Waveform {
    /// Spectrum peaking at `f_peak_hz`.
    pub fn gaussian_derivative(f_peak_hz: f64) -> Self {
        let tau = C0 / (2.0 * std::f64::consts::PI * f_peak_hz);
        Waveform { tau, t0: 6.0 * tau }
    }
    pub fn at(&self, t: f64) -> f64 {
        let x = (t - self.t0) / self.tau;
        -x * (0.5 - 0.5 * x * x).exp()
    }
    /// Time after which the waveform is below 1e-7 of its peak.
    pub fn end(&self) -> f64 {
        self.t0 + 6.5 * self.tau
    }
}

/// A current source: sparse pattern `g = Δt Meps⁻¹ j` over half-edge slots.
#[derive(Clone, Debug)]
pub struct Source {
    pub point: V3,
    pub dir: V3,
    pub tet: usize,
    pub edges: Vec<u32>,
    pub pattern: Vec<(u32, f64)>,
}

impl Source {
    /// The source's point, unit direction and tet, without the DGA current pattern (what a
    /// DG run needs; `edges` and `pattern` are empty).
    pub fn located(mesh: &Mesh, point: V3, dir: V3) -> Result<Source> {
        let nd = norm(dir);
        if !(nd > 0.0 && nd.is_finite()) {
            return Err(Error::config(
                "source direction",
                format!("{dir:?}"),
                "must be a non-zero finite vector",
            ));
        }
        let tet = mesh.locate(point).ok_or_else(|| {
            Error::config(
                "source point",
                format!("{point:?}"),
                format!("outside the mesh {}", mesh.source),
            )
        })?;
        Ok(Source {
            point,
            dir: crate::util::scale(dir, 1.0 / nd),
            tet,
            edges: vec![],
            pattern: vec![],
        })
    }

    pub fn new(
        mesh: &Mesh,
        topo: &Topology,
        dga: &Dga,
        dt: f64,
        point: V3,
        dir: V3,
    ) -> Result<Source> {
        let Source { dir, tet, .. } = Source::located(mesh, point, dir)?;
        let g = TetGeom::new(mesh, tet);
        let mut j = vec![0.0; dga.n_half()];
        let mut edges = Vec::new();
        for l in 0..6 {
            let e = topo.tet_edges[tet][l] as usize;
            if !dga.free_edge[e] {
                continue;
            }
            let je = dot(dir, g.dual_face_area(l));
            j[2 * e] = je;
            j[2 * e + 1] = je;
            edges.push(e as u32);
        }
        if edges.is_empty() {
            return Err(Error::config(
                "source point",
                format!("{point:?}"),
                format!(
                    "tetrahedron {} has no interior edge: move the source away from the wall",
                    mesh.tet_ids[tet]
                ),
            ));
        }
        let mut gv = vec![0.0; dga.n_half()];
        dga.meps_inv.apply_add(&j, &mut gv);
        let pattern = gv
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(h, &x)| (h as u32, dt * x))
            .collect();
        Ok(Source {
            point,
            dir,
            tet,
            edges,
            pattern,
        })
    }
}

/// A point probe of the electric field.
#[derive(Clone, Debug)]
pub struct Probe {
    pub point: V3,
    pub tet: usize,
    pub slots: [u32; 3],
    /// Dual basis vectors `w^i` (rows).
    pub w: [V3; 3],
}

impl Probe {
    pub fn new(mesh: &Mesh, topo: &Topology, point: V3) -> Result<Probe> {
        let tet = mesh.locate(point).ok_or_else(|| {
            Error::config(
                "probe point",
                format!("{point:?}"),
                format!("outside the mesh {}", mesh.source),
            )
        })?;
        let lam = mesh.barycentric(tet, point);
        let i = (0..4)
            .max_by(|&a, &b| lam[a].total_cmp(&lam[b]))
            .unwrap_or(0);
        let g = TetGeom::new(mesh, tet);
        let h = g.hexahedron(i);
        let a = Matrix3::from_fn(|r, c| h.a[c][r]);
        let winv = a.try_inverse().ok_or_else(|| {
            Error::config("probe point", format!("{point:?}"), "degenerate hexahedron")
        })?;
        // rows of A⁻¹ are the dual basis vectors: w^i · a_l = δ_il
        let w = std::array::from_fn(|r| [winv[(r, 0)], winv[(r, 1)], winv[(r, 2)]]);
        let slots = std::array::from_fn(|s| {
            topo.half_edge(topo.tet_edges[tet][h.edges[s]] as usize, g.v[i]) as u32
        });
        Ok(Probe {
            point,
            tet,
            slots,
            w,
        })
    }
    pub fn sample<T: Real>(&self, u: &[T]) -> [f64; 3] {
        let mut e = [0.0; 3];
        for s in 0..3 {
            let us = u[self.slots[s] as usize].f64();
            for c in 0..3 {
                e[c] += us * self.w[s][c];
            }
        }
        e
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Record {
    /// Time step in seconds.
    pub dt_s: f64,
    pub steps: usize,
    pub n_probes: usize,
    /// `samples[(k * n_probes + p) * 3 + c]`: component c of probe p after step k,
    /// at `t = (k + 1) dt`.
    pub samples: Vec<f64>,
    /// `(step, energy)` checks.
    pub energy: Vec<(usize, f64)>,
    pub wall_s: f64,
}

impl Record {
    /// Component `c` of probe `p` as a time series.
    pub fn series(&self, p: usize, c: usize) -> Vec<f64> {
        (0..self.steps)
            .map(|k| self.samples[(k * self.n_probes + p) * 3 + c])
            .collect()
    }
}

/// Runs `steps` leapfrog steps, checking the energy `checks` times; stops with
/// [`Error::Unstable`] if the energy (after the source, which ends at `source_end`, has
/// ended) grows by more than 2x or any value becomes non-finite. `progress(done)` is
/// called between chunks.
pub fn run(
    stepper: &mut dyn Stepper,
    dt: f64,
    steps: usize,
    source_end: Option<f64>,
    n_probes: usize,
    checks: usize,
    progress: &mut dyn FnMut(usize),
) -> Result<Record> {
    let out = run_controlled(
        stepper,
        dt,
        steps,
        source_end,
        n_probes,
        &mut RunControl {
            checks,
            ..RunControl::default()
        },
        progress,
    );
    match out.stop {
        None => Ok(out.record),
        Some(e) => Err(e),
    }
}

/// Steps advanced between looks at the interrupt flag and the checkpoint clock.
pub const SUB_CHUNK: usize = 256;

/// Where a resumed run starts: steps done, probe samples and energy checks so far, and the
/// blow-up guard's reference energy.
pub type Resume = (usize, Vec<f64>, Vec<(usize, f64)>, Option<f64>);

/// Options of [`run_controlled`]: energy checks, resume, checkpoints, interruption.
pub struct RunControl<'a> {
    /// Number of energy checks over the run (at steps that are multiples of
    /// `(steps / checks).clamp(1, 2000)`, counted from step 0 so that a resumed run checks at
    /// the same steps).
    pub checks: usize,
    /// Continue from this state: steps done, samples and energy checks so far, the
    /// guard's reference energy. The stepper must already hold the state.
    pub resume: Option<Resume>,
    /// Called with the run so far (`done`, samples, energy checks, reference) and the
    /// stepper when a checkpoint is due or the run is interrupted.
    #[allow(clippy::type_complexity)]
    pub checkpoint: Option<&'a mut dyn FnMut(&RunSoFar, &dyn Stepper) -> Result<()>>,
    /// A checkpoint is due after this many steps since the last one (0: never).
    pub every_steps: usize,
    /// ... or after this much wall time (None: never).
    pub every: Option<std::time::Duration>,
    /// Set (by a signal handler) to stop at the next sub-chunk boundary.
    pub interrupt: Option<&'a std::sync::atomic::AtomicBool>,
}

impl Default for RunControl<'_> {
    fn default() -> Self {
        RunControl {
            checks: 50,
            resume: None,
            checkpoint: None,
            every_steps: 0,
            every: None,
            interrupt: None,
        }
    }
}

/// The part of a run done so far (given to checkpoint writers).
pub struct RunSoFar<'a> {
    pub done: usize,
    pub samples: &'a [f64],
    pub energy: &'a [(usize, f64)],
    pub reference: Option<f64>,
}

/// What [`run_controlled`] produced: the record of the steps done (all of them, or those
/// before a stop) and why it stopped early, if it did.
pub struct RunOutcome {
    pub record: Record,
    /// [`Error::Interrupted`], [`Error::Unstable`], a backend failure, or a checkpoint
    /// write failure.
    pub stop: Option<Error>,
    /// Steps whose state the last checkpoint holds (None: none written).
    pub checkpointed: Option<usize>,
}

/// [`run`] with resume, checkpoints and interruption. Never loses the samples recorded
/// before a failure: they are in the returned record whatever happens.
pub fn run_controlled(
    stepper: &mut dyn Stepper,
    dt: f64,
    steps: usize,
    source_end: Option<f64>,
    n_probes: usize,
    ctl: &mut RunControl,
    progress: &mut dyn FnMut(usize),
) -> RunOutcome {
    use std::sync::atomic::Ordering;
    let start = std::time::Instant::now();
    let chunk = (steps / ctl.checks.max(1)).clamp(1, 2000);
    let (mut done, mut samples, mut energy, mut reference) = match ctl.resume.take() {
        Some(r) => r,
        None => (
            0,
            Vec::with_capacity(steps * n_probes * 3),
            Vec::new(),
            None,
        ),
    };
    let mut last_ck = (done, std::time::Instant::now());
    let mut checkpointed = None;
    let mut stop = None;
    let per_step = 3 * n_probes;
    while done < steps {
        let next_check = ((done / chunk + 1) * chunk).min(steps);
        let mut n = (next_check - done).min(SUB_CHUNK);
        if let Some(q) = done.checked_div(ctl.every_steps) {
            // stop at the next multiple of every_steps, where a checkpoint is due
            n = n.min((q + 1) * ctl.every_steps - done);
        }
        let before = samples.len();
        if let Err(e) = stepper.advance(done, n, &mut samples) {
            // keep whole steps only
            samples.truncate(samples.len() / per_step.max(1) * per_step);
            stop = Some(e);
            break;
        }
        done += n;
        if samples[before..].iter().any(|x| !x.is_finite()) {
            stop = Some(Error::Unstable(format!(
                "the field became non-finite by step {done}: reduce --cfl (the time step is above the stability limit?)"
            )));
            break;
        }
        if done == next_check {
            let w = match stepper.energy() {
                Ok(w) => w,
                Err(e) => {
                    stop = Some(e);
                    break;
                }
            };
            energy.push((done, w));
            if w < 0.0 {
                // W is positive definite exactly when Δt is below the stability limit
                stop = Some(Error::Unstable(format!(
                    "the discrete energy became negative ({w:.6e}) by step {done}: the time step is above the stability limit; reduce --cfl"
                )));
                break;
            }
            if !w.is_finite() {
                stop = Some(Error::Unstable(format!(
                    "the field became non-finite by step {done}: reduce --cfl (the time step is above the stability limit?)"
                )));
                break;
            }
            let source_over = source_end.map(|e| done as f64 * dt > e).unwrap_or(true);
            if source_over {
                match reference {
                    None => reference = Some(w),
                    Some(r) if w > 2.0 * r.abs() + f64::MIN_POSITIVE => {
                        stop = Some(Error::Unstable(format!(
                            "discrete energy grew from {r:.6e} to {w:.6e} by step {done}: the scheme is unstable; reduce --cfl"
                        )));
                        break;
                    }
                    _ => {}
                }
            }
            progress(done);
        }
        let interrupted = ctl
            .interrupt
            .map(|f| f.load(Ordering::SeqCst))
            .unwrap_or(false);
        let due = (ctl.every_steps > 0 && done % ctl.every_steps == 0 && done > last_ck.0)
            || ctl.every.map(|d| last_ck.1.elapsed() >= d).unwrap_or(false);
        if (interrupted || due)
            && done < steps
            && let Some(ck) = ctl.checkpoint.as_mut()
        {
            let so_far = RunSoFar {
                done,
                samples: &samples,
                energy: &energy,
                reference,
            };
            if let Err(e) = ck(&so_far, &*stepper) {
                stop = Some(e);
                break;
            }
            checkpointed = Some(done);
            last_ck = (done, std::time::Instant::now());
        }
        if interrupted && done < steps {
            stop = Some(Error::Interrupted { step: done, steps });
            break;
        }
    }
    let recorded = samples.len().checked_div(per_step).unwrap_or(done);
    RunOutcome {
        record: Record {
            dt_s: dt / C0,
            steps: recorded,
            n_probes,
            samples,
            energy,
            wall_s: start.elapsed().as_secs_f64(),
        },
        stop,
        checkpointed,
    }
}
