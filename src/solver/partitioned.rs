//! The resonator job on P ranks (feature `partition`; under MPI with the `mpi` feature, or
//! with [`crate::partition::LocalComm`] threads in tests): the same plan → build → run →
//! analyse path as [`super::resonator::run_with`], split between the ranks.
//!
//! - **Rank 0** reads or generates the mesh, resolves the problem onto it (materials,
//!   walls), places the source and probes exactly as the single-process build does
//!   ([`super::build`]), partitions the mesh and sends every rank its part
//!   ([`crate::partition::distribute`]); the other ranks never hold the global mesh.
//! - **Every rank** assembles its local operators, takes part in the distributed power
//!   iteration for Δt (the same start vector as one process; global sums in rank order, so
//!   Δt is the same on every rank and the same for every run with the same P), and steps
//!   its part (CPU [`crate::partition::PartStepper`] or OpenCL
//!   [`crate::partition::ClPartStepper`]), exchanging halos.
//! - **Global quantities by collectives**: energy and the blow-up guard (global sums),
//!   probes (recorded by the owner of the probe's tet and gathered on every rank), the
//!   interrupt and checkpoint triggers (`Stepper::agree`: any rank's flag stops or saves
//!   all of them).
//! - **Checkpoints** are gathered on rank 0 and written there in the single-process format
//!   (the global `U`, `F` in global numbering, checksummed and atomic). The fingerprint of a
//!   P-rank run mixes in P ([`ranks_fingerprint`]): a resume with another rank count is
//!   refused with a message naming the rank count the checkpoint needs; with the same P the
//!   resumed run is bit for bit the uninterrupted one.
//! - **Outputs** (probe record, analysis) are made on rank 0 only.
//!
//! Partitioner: the plan's `partitioner` ([`crate::partition::Scheme`]): `auto` takes METIS
//! k-way below [`crate::partition::RCB_FROM_TETS`] tets and recursive coordinate bisection
//! from there; `metis`, `rcb` and `slab` force one. With `auto`, the environment variable
//! `DGATD_PARTITION=slab` (read on rank 0) still selects x slabs. The partitioner that ran
//! and its time are in the partition statistics; rank 0's set-up phases
//! ([`super::setup_times::SetupTimes`]) are printed as a notice and written to `run.toml`.
//!
//! Devices ([`super::rank_devices`]): with an OpenCL backend and no `device` in the plan,
//! rank r takes the (node rank)-th GPU of its node (modulo their number); a rank that sees
//! no GPU stops the run with what it sees and the fix, never falling to a CPU OpenCL device
//! by default. A given `device` applies to every rank, whatever its kind. `auto` without
//! GPUs anywhere runs every rank on the CPU device or the CPU backend, unless GPUs seem
//! hidden from OpenCL (then it stops too).
//! Losses, absorbing boundaries and layers, dispersive media and perfectly matched layers
//! run on the CPU ranks as in one process ([`crate::partition::PartStepper`]; the OpenCL
//! ranks refuse them, naming them); `conductor` walls need mode shapes for their wall-loss Q and are refused.
//! The DG method, mode shapes and fault injection need one process.

use super::analyse;
use super::build;
use super::checkpoint;
use super::config::Method;
use super::defaults::{self, Scales};
use super::plan::Plan;
use super::resonator::{self, Phase, ResonatorResult, RunOptions};
use super::run::{Resume, RunControl, RunSoFar};
use super::setup_times::SetupTimes;
use super::timestep::RHO_MARGIN;
use crate::backend::Stepper;
use crate::backend::opencl::ClDevice;
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::error::{Error, Result};
use crate::mesh::Topology;
use crate::partition::{
    ClPartStepper, Comm, HaloTiming, PartStepper, Scheme, Stats, broadcast_setup,
    distribute_with_surface, stepper,
};
use crate::problem::{Media, Waveform};
use crate::real::Precision;
use crate::real::Real;
use crate::util::C0;
use crate::util::V3;
use std::sync::Arc;
use std::time::Instant;

use super::checkpoint::ranks_fingerprint;

mod checkpoints;
use checkpoints::{
    Checked, RankSaver, check_checkpoint, rank0_failed, resume_of_words, resume_words,
};

/// What a partitioned run reports besides the [`ResonatorResult`] (rank 0).
pub struct PartitionedRun {
    /// The result (rank 0 only).
    pub result: Option<ResonatorResult>,
    /// Partition statistics (rank 0 only).
    pub stats: Option<Stats>,
    /// Halo values this rank sends per time step (U and F), summed over the ranks.
    pub halo_values_per_step: u64,
}

/// Rank 0's view of the global problem.
struct Global {
    mesh: crate::mesh::Mesh,
    mesh_hash: Option<u64>,
    n_edges: usize,
    source: Source,
    probes: Vec<Probe>,
    probe_points: Vec<V3>,
    wave: Waveform,
    scales: Scales,
    notices: Vec<String>,
    /// Rank 0's set-up phases so far.
    times: SetupTimes,
    /// The absorbing surfaces' conductances on the global mesh, in its order.
    surface: Vec<crate::dga::SurfaceEntry>,
    /// The earliest echo of the absorbing surfaces at the probes (None: closed problem).
    echo: Option<super::echo::Echo>,
    /// The dispersive poles, which may shorten the default time step.
    poles: Vec<super::timestep::PoleRate>,
}

/// Reads, checks and resolves the problem on rank 0 (as [`build::build`] does).
fn global_setup(plan: &Plan) -> Result<(Global, Topology, Media, Vec<bool>)> {
    let t0 = Instant::now();
    let (mesh, mesh_hash) = build::load_mesh(plan)?;
    let mesh_s = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let topo = Topology::build(&mesh)?;
    let mut notices = crate::mesh::check::check(&mesh, &topo)?;
    // every material and boundary key covers elements, or the run stops here naming it
    let covered = crate::problem::coverage::materials(&mesh, &topo, &plan.problem.materials)
        .map_err(|e| plan.locate(e))?;
    let media = Media::resolve(&mesh, &plan.problem.materials).map_err(|e| plan.locate(e))?;
    let (walls, mut coverage) =
        crate::problem::coverage::walls(&mesh, &topo, &plan.problem.boundaries)
            .map_err(|e| plan.locate(e))?;
    coverage.materials = covered;
    notices.extend(coverage.warnings);
    notices.extend(build::pml_notices(&media));
    if walls
        .kind
        .contains(&crate::problem::BoundaryKind::Conductor)
    {
        return Err(Error::config(
            "boundary",
            "conductor",
            "conductor walls need mode shapes for their wall-loss Q, which partitioned runs do not compute yet; run on one process",
        ));
    }
    let fixed = walls.fixed_edges(&topo);
    // the absorbing faces' conductances, as the single-process build adds them
    let (faces, y) = walls.absorbing(&topo, &media);
    let surface = crate::dga::surface_conductance(&mesh, &topo, &faces, &y);
    let (wave, sp, probe_points, scales) = build::placement(plan, &mesh, &media, &mut notices)?;
    let absorbing = super::echo::absorbing_vertices(&mesh, &topo, &walls, &plan.problem);
    let echo = super::echo::earliest(&mesh, &absorbing, &media, sp, &probe_points, &wave);
    let source = Source::located(&mesh, sp, plan.problem.source_dir)?;
    let probes = probe_points
        .iter()
        .map(|&p| Probe::new(&mesh, &topo, p))
        .collect::<Result<Vec<_>>>()?;
    let g = Global {
        n_edges: topo.n_edges(),
        mesh,
        mesh_hash,
        source,
        probes,
        probe_points,
        wave,
        scales,
        notices,
        times: SetupTimes {
            mesh_s,
            topology_s: t0.elapsed().as_secs_f64(),
            ..SetupTimes::default()
        },
        surface,
        echo,
        poles: super::timestep::pole_rates(&media),
    };
    Ok((g, topo, media, fixed))
}

/// A rank's stepper behind the [`Stepper`] trait, with what the driver needs of it.
trait RankStepper: Stepper {
    fn set_local(&mut self, u: &[f64], f: &[f64]) -> Result<()>;
    fn halo_values(&self) -> usize;
    /// The device halo's phase times so far (zero for the CPU ranks), reset.
    fn halo_timing(&mut self) -> HaloTiming {
        HaloTiming::default()
    }
}

impl<T: Real, C: Comm> RankStepper for PartStepper<T, C> {
    fn set_local(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        self.set_local_state(u, f)
    }
    fn halo_values(&self) -> usize {
        self.part
            .halos
            .iter()
            .map(|h| 4 * h.send_tets.len() + h.send_halves.len())
            .sum()
    }
}

impl<T: Real, C: Comm> RankStepper for ClPartStepper<T, C> {
    fn set_local(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        self.set_local_state(u, f)
    }
    fn halo_values(&self) -> usize {
        self.halo_values_sent()
    }
    fn halo_timing(&mut self) -> HaloTiming {
        self.take_timing()
    }
}

/// The halo's phase times per step, the largest over the ranks, as a notice (None when no
/// rank timed any: CPU ranks). Collective.
fn halo_timing_line<C: Comm>(comm: &C, st: &mut dyn RankStepper) -> Result<Option<String>> {
    let t = st.halo_timing();
    let all = comm.all_gather(&t.per_step_ms())?;
    let timed = comm.sum(&[t.timed_steps as f64])?[0];
    let max = |i: usize| all.iter().map(|v| v[i]).fold(0.0, f64::max);
    if all.iter().all(|v| v.iter().all(|&x| x == 0.0)) {
        return Ok(None);
    }
    Ok(Some(format!(
        "halo timing, ms per step, largest over the ranks: exchange {:.4} on the host (device to host {:.4}, transport {:.4}, host to device {:.4}); kernels on the device {:.4} interface + {:.4} interior ({} sampled steps)",
        max(0),
        max(2),
        max(1),
        max(3),
        max(4),
        max(5),
        timed as usize
    )))
}

/// This rank's stepper, its Δt, ρ (with the margin; 0 for a given Δt), the power
/// iteration's time and the notices of the time step's choice.
type RankStepperOf<'c> = (Box<dyn RankStepper + 'c>, f64, f64, f64, Vec<String>);

/// Builds this rank's stepper: `(stepper, Δt, ρ with margin, ...)`; the default Δt is
/// shortened by the dispersive `poles` as in one process. Collective.
#[allow(clippy::too_many_arguments)]
fn rank_stepper<'c, C: Comm>(
    comm: &'c C,
    plan: &Plan,
    part: Arc<crate::partition::Part>,
    dga: Arc<Dga>,
    dev: Option<Arc<ClDevice>>,
    source: &Source,
    probes: &[Probe],
    (wave, poles): (Waveform, &[super::timestep::PoleRate]),
) -> Result<RankStepperOf<'c>> {
    let mut notices = Vec::new();
    let mut dt_of = |rho: f64| -> f64 {
        match plan.dt_s {
            Some(s) => {
                super::timestep::check_given_against_poles(s * C0, poles, &mut notices);
                s * C0
            }
            None => {
                super::timestep::pole_limited(plan.cfl * 2.0 / rho.sqrt(), rho, poles, &mut notices)
            }
        }
    };
    let check_dt = |dt: f64, rho: f64| -> Result<()> {
        if let Some(s) = plan.dt_s {
            let bound = 2.0 / (rho / RHO_MARGIN).sqrt();
            if dt > bound {
                return Err(Error::config(
                    "dt",
                    s,
                    format!(
                        "above the stability bound {:.6e} s of this mesh (power iteration)",
                        bound / C0
                    ),
                ));
            }
        }
        Ok(())
    };
    let f64s = plan.precision == Precision::F64;
    macro_rules! cpu {
        ($t:ty) => {{
            let t0 = Instant::now();
            let rho = stepper::spectral_radius(comm, &part, &dga, 60, 0x5eed)? * RHO_MARGIN;
            let power_s = t0.elapsed().as_secs_f64();
            let dt = dt_of(rho);
            check_dt(dt, rho)?;
            let s = PartStepper::<$t, &C>::new(comm, part, dga, dt, Some((source, wave)), probes)?;
            let b: Box<dyn RankStepper + 'c> = Box::new(s);
            (b, dt, rho, power_s)
        }};
    }
    macro_rules! device {
        ($t:ty, $dev:expr) => {{
            let mut s = ClPartStepper::<$t, &C>::new(comm, part, dga, $dev, Some(source), probes)?;
            let t0 = Instant::now();
            let rho = s.spectral_radius(60, 0x5eed)? * RHO_MARGIN;
            let power_s = t0.elapsed().as_secs_f64();
            let dt = dt_of(rho);
            check_dt(dt, rho)?;
            s.set_time_step(dt, Some(wave))?;
            let b: Box<dyn RankStepper + 'c> = Box::new(s);
            (b, dt, rho, power_s)
        }};
    }
    let (s, dt, rho, power_s) = match dev {
        None if f64s => cpu!(f64),
        None => cpu!(f32),
        Some(d) if f64s => device!(f64, d),
        Some(d) => device!(f32, d),
    };
    let rho = if plan.dt_s.is_some() { 0.0 } else { rho };
    Ok((s, dt, rho, power_s, notices))
}

/// Runs the resonator job of `plan` on `comm.size()` ranks; every rank calls it with the
/// same plan. `node_rank` is this rank's position among the ranks of its node (device
/// choice). `opts.out`, `opts.resume`, `opts.on_status` and `progress` matter on rank 0
/// only (the checkpoint is read and written there); `opts.interrupt` on every rank (any
/// rank's interrupt stops all of them at the same step). Rank 0 gets the result.
/// Collective.
pub fn run_partitioned<C: Comm>(
    comm: &C,
    node_rank: usize,
    plan: &Plan,
    opts: &mut RunOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PartitionedRun> {
    let np = comm.size();
    let root = comm.rank() == 0;
    check_plan(plan)?;
    let phase = |p: Phase| {
        if let Some(f) = opts.on_phase {
            f(p)
        }
    };
    let status = |m: &str| {
        if root && let Some(f) = opts.on_status {
            f(m)
        }
    };
    phase(Phase::Setup);
    let t0 = Instant::now();
    status("rank 0: reading the mesh, partitioning it");
    let Setup {
        mut global,
        src,
        probes,
        part,
        stats,
        wave,
        f_resolved_hz,
        record_s,
        mut times,
        poles,
    } = setup_ranks(comm, plan)?;
    let n_probes = probes.len();
    status(&format!("assembling the local operators of {} ranks", np));
    let t1 = Instant::now();
    let dga = Arc::new(part.assemble()?);
    times.assembly_s = t1.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let dev = super::rank_devices::rank_devices(comm, plan, node_rank)?;
    status("steppers, and the time step by the distributed power iteration");
    let (mut st, dt, rho, power_s, dt_notices) = rank_stepper(
        comm,
        plan,
        part.clone(),
        dga.clone(),
        dev,
        &src,
        &probes,
        (wave, &poles),
    )?;
    if let Some(g) = global.as_mut() {
        g.notices.extend(dt_notices);
    }
    let dt_s = dt / C0;
    let (steps, fmax_hz, band_notices) =
        steps_and_band(plan, dt_s, &wave, f_resolved_hz, record_s)?;
    if let Some(g) = global.as_mut() {
        g.notices.extend(band_notices);
    }
    times.power_s = power_s;
    times.stepper_s = t1.elapsed().as_secs_f64() - power_s;
    let summed = summed_counts(comm, &dga, st.as_ref())?;
    let setup_s = t0.elapsed().as_secs_f64();
    status(&times.line());
    if let Some(g) = global.as_mut() {
        g.notices.push(times.line());
    }
    // fingerprint and resume (rank 0 checks, every rank restores its share)
    let fp1 = global
        .as_ref()
        .map(|g| resonator::fingerprint(&plan.config, g.mesh_hash, g.mesh.n_tets()))
        .unwrap_or(0);
    let fp = ranks_fingerprint(fp1, np);
    let ck_path = opts
        .out
        .as_deref()
        .unwrap_or(std::path::Path::new(""))
        .join(checkpoint::FILE);
    let checked = opts
        .resume
        .take()
        .map(|ck| check_checkpoint(ck, fp1, np, dt, steps, n_probes, &ck_path));
    let resumed = resume_ranks(comm, &part, st.as_mut(), checked, &mut |d| {
        progress(d, steps)
    })?;
    let saver = RankSaver::new(comm, plan, opts.out.as_deref(), fp, dt)?;
    phase(Phase::Stepping);
    let record = step_ranks(
        st.as_mut(),
        plan,
        &saver,
        Loop {
            dt,
            steps,
            wave,
            n_probes,
            resumed,
            interrupt: opts.interrupt,
            out: opts.out.as_deref(),
            root,
        },
        progress,
    )?;
    phase(Phase::Recording);
    if let Some(line) = halo_timing_line(comm, st.as_mut())?
        && let Some(g) = global.as_mut()
    {
        g.notices.push(line);
    }
    let halo_values_per_step = summed[6] as u64;
    let backend = st.name();
    drop(st);
    let Some(g) = global.take() else {
        return Ok(PartitionedRun {
            result: None,
            stats: None,
            halo_values_per_step,
        });
    };
    let probe_csv = match &opts.out {
        Some(dir) => Some(record.write_probe_csv(dir)?),
        None => None,
    };
    if let Some(e) =
        super::resonator::interrupted_after_record(opts.interrupt, &record, probe_csv.as_deref())
    {
        return Err(e);
    }
    phase(Phase::Analysis);
    status(&format!(
        "extracting resonances from {} probe signals of {} samples",
        3 * n_probes,
        record.steps
    ));
    let result = result_of(
        plan,
        g,
        &part,
        record,
        Outcome {
            probe_csv,
            wave,
            dt,
            rho,
            fmax_hz,
            setup_s,
            times,
            backend,
            summed: &summed,
            stats: stats.as_ref(),
        },
    );
    Ok(PartitionedRun {
        result: Some(result),
        stats,
        halo_values_per_step,
    })
}

/// The checks of a plan that only a single process supports.
fn check_plan(plan: &Plan) -> Result<()> {
    if plan.method != Method::Dga {
        return Err(Error::config(
            "method",
            plan.method.name(),
            "a run on several ranks supports the DGA method only (run DG in one process)",
        ));
    }
    if plan.mode_shapes > 0 {
        return Err(Error::config(
            "mode-shapes",
            plan.mode_shapes,
            "mode shapes need one process (run without mpirun, or --mode-shapes 0)",
        ));
    }
    if plan.problem.source_radius > 0.0 {
        return Err(Error::config(
            "source_radius",
            plan.problem.source_radius,
            "partitioned runs drive the tet containing the source point only; leave source_radius at 0 or run on one process",
        ));
    }
    Ok(())
}

/// The discretisation counts summed over the ranks, and the halo values sent per step
/// (last). Collective.
fn summed_counts<C: Comm>(comm: &C, dga: &Dga, st: &dyn RankStepper) -> Result<Vec<f64>> {
    let counts = dga.counts();
    comm.sum(&[
        counts.tets as f64,
        counts.edges as f64,
        counts.vertices as f64,
        counts.free_half as f64,
        counts.circ as f64,
        counts.block as f64,
        st.halo_values() as f64,
        counts.packed as f64,
    ])
}

/// The time loop's parameters ([`step_ranks`]).
struct Loop<'a> {
    dt: f64,
    steps: usize,
    wave: Waveform,
    n_probes: usize,
    resumed: Option<Resume>,
    interrupt: Option<&'a std::sync::atomic::AtomicBool>,
    out: Option<&'a std::path::Path>,
    root: bool,
}

/// The time loop of a partitioned run with its checkpoints, and the final checkpoint of a
/// long run; a stop is reported as in one process (on rank 0). Collective.
fn step_ranks(
    st: &mut dyn RankStepper,
    plan: &Plan,
    saver: &RankSaver,
    l: Loop,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<super::run::Record> {
    let (dt, steps, root) = (l.dt, l.steps, l.root);
    let mut write_ck = |so_far: &RunSoFar, st: &dyn Stepper| saver.write(so_far, st);
    let mut ctl = RunControl {
        checks: plan.energy_checks,
        resume: l.resumed,
        checkpoint: Some(&mut write_ck),
        every_steps: plan.checkpoint_steps,
        every: plan.checkpoint_every,
        interrupt: l.interrupt,
    };
    let outcome = super::run_controlled(
        st,
        dt,
        steps,
        Some(l.wave.end()),
        l.n_probes,
        &mut ctl,
        &mut |d| {
            if root {
                progress(d, steps)
            }
        },
    );
    drop(ctl);
    let record = outcome.record;
    if let Some(cause) = outcome.stop {
        return Err(if root {
            resonator::stopped(cause, &record, outcome.checkpointed, l.out)
        } else {
            cause
        });
    }
    // a long run leaves a final checkpoint (collective), as in one process
    let long = plan.checkpoint_steps > 0
        || plan
            .checkpoint_every
            .is_some_and(|e| record.wall_s >= e.as_secs_f64());
    let long = st.agree(&[long])?[0];
    if long && outcome.checkpointed != Some(steps) {
        let so_far = RunSoFar {
            done: steps,
            samples: &record.samples,
            energy: &record.energy,
            reference: outcome.reference,
        };
        saver.write(&so_far, st)?;
    }
    Ok(record)
}

/// What [`setup_ranks`] gives every rank (`global` on rank 0 only).
struct Setup {
    global: Option<Global>,
    src: Source,
    probes: Vec<Probe>,
    part: Arc<crate::partition::Part>,
    stats: Option<Stats>,
    wave: Waveform,
    /// The mesh's resolution limit (Hz) and default record (s), [`Scales`].
    f_resolved_hz: f64,
    record_s: f64,
    /// Rank 0's set-up phases up to the parts' arrival (mesh to distribute).
    times: SetupTimes,
    /// The dispersive poles' rates (the names on rank 0 only), for the time step.
    poles: Vec<super::timestep::PoleRate>,
}

/// The partitioner of `plan` (None: `auto`, resolved by rank 0 from the mesh's size), and a
/// notice when the environment variable `DGATD_PARTITION=slab` chose it.
fn scheme_of(plan: &Plan) -> (Option<Scheme>, Option<String>) {
    use super::config::Partitioner;
    match plan.partitioner {
        Partitioner::Auto if std::env::var("DGATD_PARTITION").as_deref() == Ok("slab") => (
            Some(Scheme::Slab),
            Some("DGATD_PARTITION=slab: x slabs (the flag --partitioner slab does the same and is kept in run.toml)".into()),
        ),
        Partitioner::Auto => (None, None),
        Partitioner::Metis => (Some(Scheme::Metis), None),
        Partitioner::Rcb => (Some(Scheme::Rcb), None),
        Partitioner::Slab => (Some(Scheme::Slab), None),
    }
}

/// Rank 0 reads, checks and resolves the problem and partitions the mesh; every rank gets
/// its part, the source, the probes and the waveform. Collective.
fn setup_ranks<C: Comm>(comm: &C, plan: &Plan) -> Result<Setup> {
    let root = comm.rank() == 0;
    // Rank 0 sets up the global problem; the others learn whether it succeeded.
    let global = if root {
        let g = global_setup(plan);
        comm.broadcast_words(0, vec![g.is_ok() as u64])?;
        Some(g?)
    } else {
        if comm.broadcast_words(0, vec![])?.first() != Some(&1) {
            return Err(rank0_failed("setting up the problem"));
        }
        None
    };
    let (src, probes) = broadcast_setup(
        comm,
        global
            .as_ref()
            .map(|g| (Some(&g.0.source), g.0.probes.as_slice())),
    )?;
    let t0 = Instant::now();
    let (scheme, env_notice) = scheme_of(plan);
    let (part, stats) = distribute_with_surface(
        comm,
        global.as_ref().map(|(g, topo, media, fixed)| {
            (&g.mesh, topo, media, fixed.as_slice(), g.surface.as_slice())
        }),
        scheme,
    )?;
    // rank 0 keeps the mesh (outputs) but not the topology
    let mut global = global.map(|(g, ..)| g);
    if let Some(g) = global.as_mut() {
        g.notices.extend(env_notice);
    }
    let src = src.ok_or_else(|| rank0_failed("receiving the source"))?;
    let bits = comm.broadcast_words(
        0,
        global
            .as_ref()
            .map(|g| {
                [
                    g.wave.f_peak_hz(),
                    g.scales.f_resolved_hz(),
                    g.scales.record_s(),
                ]
                .into_iter()
                .chain(g.poles.iter().map(|p| p.rate))
                .map(f64::to_bits)
                .collect()
            })
            .unwrap_or_default(),
    )?;
    if bits.len() < 3 {
        return Err(rank0_failed("receiving the waveform"));
    }
    let [f_peak_hz, f_resolved_hz, record_s] = [bits[0], bits[1], bits[2]].map(f64::from_bits);
    // rank 0 keeps its poles' names (for its notices); the others need the rates only
    let poles = match &global {
        Some(g) => g.poles.clone(),
        None => bits[3..]
            .iter()
            .map(|&b| super::timestep::PoleRate {
                what: String::new(),
                rate: f64::from_bits(b),
            })
            .collect(),
    };
    let wave = Waveform::gaussian_derivative(f_peak_hz);
    let mut times = global.as_ref().map(|g| g.times).unwrap_or_default();
    times.partition_s = stats.as_ref().map_or(0.0, |s| s.partition_s);
    times.distribute_s = t0.elapsed().as_secs_f64() - times.partition_s;
    Ok(Setup {
        global,
        src,
        probes,
        part: Arc::new(part),
        stats,
        wave,
        f_resolved_hz,
        record_s,
        times,
        poles,
    })
}

/// The number of steps and the analysis band of a run with time step `dt_s` (seconds), as
/// [`build::build`] sets them ([`defaults`]), with the notices of the band.
fn steps_and_band(
    plan: &Plan,
    dt_s: f64,
    wave: &Waveform,
    f_resolved_hz: f64,
    record_s: f64,
) -> Result<(usize, f64, Vec<String>)> {
    defaults::check_time_step(plan, dt_s)?;
    let (steps, flag) = defaults::steps(plan.length, record_s, dt_s)?;
    let mut notices = Vec::new();
    let fmax_hz = defaults::band(plan.fmax_hz, wave, f_resolved_hz, dt_s, &mut notices)?;
    defaults::check_record(plan, steps, flag, dt_s, fmax_hz, wave, &mut notices);
    super::limits::check_wall_in_band(&plan.config, fmax_hz)?;
    Ok((steps, fmax_hz, notices))
}

/// The resume point: rank 0 passes its checked checkpoint (None: a fresh run), every rank
/// restores its share of the state. Collective.
fn resume_ranks<C: Comm>(
    comm: &C,
    part: &crate::partition::Part,
    st: &mut dyn RankStepper,
    checked: Option<Result<Checked>>,
    progress: &mut dyn FnMut(usize),
) -> Result<Option<Resume>> {
    if comm.rank() == 0 {
        let checked = checked.transpose();
        let w = match &checked {
            Ok(Some((r, ..))) => {
                let mut w = vec![1];
                w.extend(resume_words(r));
                w
            }
            Ok(None) => vec![0],
            Err(_) => vec![2],
        };
        comm.broadcast_words(0, w)?;
        Ok(match checked? {
            Some((r, u, f, aux)) => {
                let (lu, lf) = stepper::scatter_state(comm, part, Some((&u, &f)))?;
                drop((u, f));
                // collective: rank 0 sends every rank its poles' states
                st.set_aux_state(&aux)?;
                st.set_local(&lu, &lf)?;
                progress(r.0);
                Some(r)
            }
            None => None,
        })
    } else {
        let w = comm.broadcast_words(0, vec![])?;
        match w.first() {
            Some(1) => {
                let r = resume_of_words(&w[1..])?;
                let (u, f) = stepper::scatter_state(comm, part, None)?;
                st.set_aux_state(&[])?;
                st.set_local(&u, &f)?;
                Ok(Some(r))
            }
            Some(0) => Ok(None),
            _ => Err(rank0_failed("checking the checkpoint")),
        }
    }
}

/// What the run gives [`result_of`] besides the record.
struct Outcome<'a> {
    probe_csv: Option<std::path::PathBuf>,
    wave: Waveform,
    dt: f64,
    rho: f64,
    fmax_hz: f64,
    setup_s: f64,
    times: SetupTimes,
    backend: String,
    /// Counts summed over the ranks (tets, edges, vertices, free halves, circ, block, halo,
    /// packed block).
    summed: &'a [f64],
    stats: Option<&'a Stats>,
}

/// Rank 0's result: the analysis of the record and the run's facts.
fn result_of(
    plan: &Plan,
    g: Global,
    part: &crate::partition::Part,
    record: super::run::Record,
    o: Outcome,
) -> ResonatorResult {
    let (wave, dt, summed) = (o.wave, o.dt, o.summed);
    let dt_s = dt / C0;
    let pulse_end = (wave.end() / dt).ceil() as usize;
    let analysis = analyse::analyse(
        plan,
        &g.mesh,
        &record,
        pulse_end,
        wave.f_peak_hz(),
        o.fmax_hz,
    );
    let model_counts = crate::cost::DgaCounts {
        tets: summed[0] as usize,
        edges: summed[1] as usize,
        vertices: summed[2] as usize,
        free_half: summed[3] as usize,
        circ: summed[4] as usize,
        block: summed[5] as usize,
        packed: summed[7] as usize,
    };
    let (model_bytes, model_flops) = crate::cost::dga_step(&model_counts, plan.precision.bytes());
    let mut notices = g.notices;
    if let Some(s) = o.stats {
        notices.push(stats_line(s));
    }
    if analysis.correction == analyse::Correction::PartlyDispersive {
        notices.push("f_corrected_hz = f_hz: dispersive media fill only part of the mesh, where no exact discrete relation undoes the time step's shift (a homogeneous dispersive fill is corrected exactly)".into());
    }
    notices.extend(
        g.echo
            .as_ref()
            .and_then(|e| super::echo::notice(e, record.steps as f64 * dt_s, wave.end() / C0)),
    );
    ResonatorResult {
        probe_csv: o.probe_csv,
        echo: g.echo,
        config: plan.config.clone(),
        dofs: 4 * part.global.n_tets + part.global.n_free_half,
        method: plan.method,
        mode_shapes: vec![],
        q_wall: vec![],
        extrapolated: vec![],
        tracks: vec![],
        model_bytes_per_step: model_bytes,
        model_flops_per_step: model_flops,
        n_edges: g.n_edges,
        n_free_half: part.global.n_free_half,
        dt_s,
        rho: o.rho,
        mesh_hash: g.mesh_hash,
        source: g.source,
        probe_points: g.probe_points,
        waveform: wave,
        record,
        analysis,
        fmax_hz: o.fmax_hz,
        setup_s: o.setup_s,
        setup_times: Some(o.times),
        backend: o.backend,
        notices,
        mesh: g.mesh,
    }
}

/// One line of partition statistics for the user.
pub fn stats_line(s: &Stats) -> String {
    format!(
        "partition: {} in {:.2} s, {} ranks, imbalance {:.3} (max/mean work), {} cut faces, interface {:.1}% of a rank's tets at most, halo {} values = {} per step (f64), at most {} neighbours",
        s.partitioner.map_or("given", |p| p.name()),
        s.partition_s,
        s.n_parts,
        s.imbalance,
        s.cut_faces,
        100.0 * s.max_interface_fraction,
        s.halo_values,
        indicatif::HumanBytes(s.halo_bytes_f64),
        s.max_neighbours
    )
}
