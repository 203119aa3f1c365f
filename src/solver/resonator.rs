//! The resonator job: configuration → plan → build → leapfrog (or LSERK4) with a pulse →
//! analysis of the probe spectra → resonances compared with analytic modes. The command
//! line's `dgatd resonator` is a thin wrapper that writes the outputs ([`crate::report`]).

use super::analyse::{self, Analysis};
use super::build::{self, Built, Discretisation};
use super::checkpoint::{self, Checkpoint};
use super::config::{Config, Method};
use super::plan::Plan;
use super::run::{Record, RunControl, RunSoFar};
use crate::backend::Stepper;
use crate::dga::excitation::Source;
use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::problem::Waveform;
use crate::spectrum::Peak;
use crate::util::V3;
use std::path::PathBuf;

/// Everything a resonator run produced.
pub struct ResonatorResult {
    /// The configuration of the run (written to `run.toml`).
    pub config: Config,
    /// `probe.csv`, when the run wrote it before the analysis (`RunOptions::out`).
    pub probe_csv: Option<PathBuf>,
    pub mesh: Mesh,
    pub mesh_hash: Option<u64>,
    pub n_edges: usize,
    pub n_free_half: usize,
    pub dt_s: f64,
    /// ρ(K) with its margin (0 when the time step was given).
    pub rho: f64,
    pub source: Source,
    pub probe_points: Vec<V3>,
    pub waveform: Waveform,
    pub record: Record,
    pub analysis: Analysis,
    pub fmax_hz: f64,
    pub setup_s: f64,
    /// Rank 0's set-up phases of a partitioned run (None on one process).
    pub setup_times: Option<super::setup_times::SetupTimes>,
    pub backend: String,
    /// One-line notices (backend choice, unchecked time step, a record that runs past the
    /// echo of an open boundary).
    pub notices: Vec<String>,
    /// The earliest echo of an open boundary at the probes ([`super::echo`]); None for a
    /// closed problem (and for partitioned runs, which have no absorbing boundaries).
    pub echo: Option<super::echo::Echo>,
    /// Complex field of the strongest resonances (with `mode_shapes > 0`).
    pub mode_shapes: Vec<super::modeshape::ModeShape>,
    /// Wall-loss Q of each peak (in the order of [`Self::peaks`]) with `conductor` walls,
    /// by the perturbation method ([`super::wallq`]); empty without such walls.
    pub q_wall: Vec<Option<f64>>,
    /// Richardson-extrapolated frequency of each peak (in the order of [`Self::peaks`]) in a
    /// refinement ladder ([`super::converge`]); empty otherwise.
    pub extrapolated: Vec<Option<crate::spectrum::richardson::Extrapolated>>,
    /// Each peak across the levels of a refinement ladder (in the order of
    /// [`Self::peaks`]): how it was followed, its series, extrapolated Q and why it is not
    /// matched ([`crate::spectrum::track::Track`]); empty otherwise.
    pub tracks: Vec<crate::spectrum::track::Track>,
    /// Unknowns of the time loop (DGA: 4 per tet + free half-edges; DG: 6 Np per tet).
    pub dofs: usize,
    pub method: Method,
    /// Bytes and flops of one time step ([`crate::cost`]).
    pub model_bytes_per_step: f64,
    pub model_flops_per_step: f64,
}

impl ResonatorResult {
    /// The extracted resonances.
    pub fn peaks(&self) -> &[Peak] {
        &self.analysis.peaks
    }
    /// Wall-loss Q of a peak (conductor walls only).
    pub fn q_wall_of(&self, p: &Peak) -> Option<f64> {
        let i = self.analysis.peaks.iter().position(|x| x.f_hz == p.f_hz)?;
        self.q_wall.get(i).copied().flatten()
    }
    /// Corrected frequency of a peak.
    pub fn corrected(&self, p: &Peak) -> f64 {
        self.analysis.correction.of_peak(p)
    }
    /// `(corrected frequency, Q)` of every line that has a Q (harmonic inversion).
    pub fn lines_with_q(&self) -> Vec<(f64, f64)> {
        self.analysis
            .peaks
            .iter()
            .filter_map(|p| Some((self.corrected(p), p.q?)))
            .collect()
    }
}

/// Long-run controls of [`run_with`]: checkpoints, resume, interruption, fault injection.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Directory for checkpoints and, when the run stops early, the partial `probe.csv`.
    /// None: the run writes nothing itself.
    pub out: Option<PathBuf>,
    /// Continue from this checkpoint (it must come from the same configuration and mesh).
    pub resume: Option<Checkpoint>,
    /// Set by a signal handler: the run saves a checkpoint and the probe data, and stops.
    pub interrupt: Option<&'a std::sync::atomic::AtomicBool>,
    /// Fail like a lost device at this step (testing the failure path).
    pub fault_at_step: Option<usize>,
    /// Hears what the run is doing outside the time loop (setup, extraction), for a
    /// progress display.
    pub on_status: Option<&'a (dyn Fn(&str) + Sync)>,
    /// Told when the run enters each phase (a signal handler decides what an interrupt
    /// means: in the time loop, save and stop; elsewhere, stop at once).
    pub on_phase: Option<&'a (dyn Fn(Phase) + Sync)>,
}

/// The phases of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Reading the mesh, assembling, the power iteration.
    Setup,
    /// The time loop (an interrupt saves a checkpoint and the probe data).
    Stepping,
    /// The time loop has ended and the probe record (and a long run's final checkpoint) is
    /// being written: an interrupt waits for it to be on disk, then stops the run
    /// ([`interrupted_after_record`]).
    Recording,
    /// Extraction and mode shapes (the probe record is already on disk when `out` is set).
    Analysis,
}

/// Identifies a run configuration and its mesh; a checkpoint is only resumed by the run it
/// came from. Checkpoint settings are not part of it (a resume may change them).
pub fn fingerprint(cfg: &Config, mesh_hash: Option<u64>, n_tets: usize) -> u64 {
    let mut c = cfg.clone();
    let d = Config::default();
    c.checkpoint_steps = d.checkpoint_steps;
    c.checkpoint_minutes = d.checkpoint_minutes;
    c.run = None;
    crate::util::fnv1a64(format!("{:016x}|{mesh_hash:?}|{n_tets}", c.fingerprint()).as_bytes())
}

/// Runs the whole job on one mesh. `progress(done, total)` is called as steps complete.
/// A configuration with `converge` is refused: the refinement ladder is
/// [`super::ladder`] (what `dgatd resonator --converge N` runs).
pub fn run(cfg: &Config, progress: &mut dyn FnMut(usize, usize)) -> Result<ResonatorResult> {
    if let Some(n) = cfg.converge {
        return Err(Error::config(
            "converge",
            n,
            "solver::run runs one mesh; run the refinement ladder with solver::ladder (the command line's --converge)",
        ));
    }
    run_with(&Plan::new(cfg, None)?, &mut RunOptions::default(), progress)
}

/// The error of a run that stopped early, after writing the probe data recorded so far.
pub(crate) fn stopped(
    cause: Error,
    record: &Record,
    checkpointed: Option<usize>,
    out: Option<&std::path::Path>,
) -> Error {
    let Some(dir) = out else { return cause };
    let mut saved = match record.write_probe_csv(dir) {
        Ok(p) => format!(
            "the {} steps recorded before the stop are in {}",
            record.steps,
            p.display()
        ),
        Err(e) => format!("the probe data could not be written: {e}"),
    };
    let ck = dir.join(checkpoint::FILE);
    match checkpointed {
        Some(k) => saved += &format!("; checkpoint at step {k}: {}", ck.display()),
        None if ck.exists() => saved += &format!("; an earlier checkpoint is {}", ck.display()),
        None => {}
    }
    if !matches!(cause, Error::Unstable(_)) && (checkpointed.is_some() || ck.exists()) {
        saved += &format!(
            "\ncontinue with: dgatd resonator --resume {}",
            dir.display()
        );
    }
    Error::Stopped {
        cause: Box::new(cause),
        saved,
    }
}

/// After the record of a finished time loop is on disk (`probe_csv`, None without an
/// output folder): the stop an interrupt that came after the loop's last look at it asks
/// for (while the record was written), saying where the record and the final checkpoint
/// are; None when no interrupt came.
pub(crate) fn interrupted_after_record(
    interrupt: Option<&std::sync::atomic::AtomicBool>,
    record: &Record,
    probe_csv: Option<&std::path::Path>,
) -> Option<Error> {
    if !interrupt.is_some_and(|i| i.load(std::sync::atomic::Ordering::SeqCst)) {
        return None;
    }
    let cause = Error::Interrupted {
        step: record.steps,
        steps: record.steps,
    };
    let Some(p) = probe_csv else {
        return Some(cause);
    };
    let mut saved = format!(
        "interrupted after the last step: the record of all {} steps is in {} (the analysis was not run)",
        record.steps,
        p.display()
    );
    if let Some(dir) = p.parent() {
        let ck = dir.join(checkpoint::FILE);
        if ck.exists() {
            saved += &format!(
                "; final checkpoint: {}\ncontinue with: dgatd resonator --resume {} (runs the analysis without rerunning the steps)",
                ck.display(),
                dir.display()
            );
        }
    }
    Some(Error::Stopped {
        cause: Box::new(cause),
        saved,
    })
}

/// Restores a checkpoint into the stepper after checking it belongs to this run; returns
/// where the run goes on.
fn restore(
    ck: Checkpoint,
    fp: u64,
    b: &Built,
    stepper: &mut dyn Stepper,
    out: Option<&std::path::Path>,
) -> Result<super::run::Resume> {
    let path = out
        .unwrap_or(std::path::Path::new(""))
        .join(checkpoint::FILE);
    let bad = |why: String| Error::Checkpoint {
        path: path.clone(),
        why,
    };
    if let Some(q) = checkpoint::checkpoint_ranks(ck.fingerprint, fp).filter(|&q| q > 1) {
        return Err(bad(format!(
            "it was written by a run on {q} ranks; resume it with `mpirun -np {q} dgatd resonator --resume ...`"
        )));
    }
    if ck.fingerprint != fp {
        return Err(bad(format!(
            "it was written by a different run (configuration or mesh fingerprint {:016x}, this run {fp:016x})",
            ck.fingerprint
        )));
    }
    if ck.dt_bits != b.dt.to_bits() {
        return Err(bad(format!(
            "its time step {:e} m differs from this run's {:e} m (another backend or device?)",
            f64::from_bits(ck.dt_bits),
            b.dt
        )));
    }
    let np = b.probe_points.len();
    if ck.done > b.steps || ck.samples.len() != ck.done * 3 * np {
        return Err(bad(format!(
            "it holds {} steps and {} samples, inconsistent with this run ({} steps, {np} probes)",
            ck.done,
            ck.samples.len(),
            b.steps
        )));
    }
    stepper
        .set_state(&ck.u, &ck.f)
        .map_err(|e| bad(e.to_string()))?;
    stepper
        .set_aux_state(&ck.aux)
        .map_err(|e| bad(e.to_string()))?;
    Ok((ck.done, ck.samples, ck.energy, ck.reference))
}

/// [`run`] with checkpoints, resume, interruption and fault injection (see [`RunOptions`]).
/// If the time loop stops early (interrupt, device failure, blow-up) and `opts.out` is set,
/// the probe samples recorded so far are written to `out/probe.csv` and the error
/// ([`Error::Stopped`]) says where they and the last checkpoint are.
pub fn run_with(
    plan: &Plan,
    opts: &mut RunOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ResonatorResult> {
    let phase = |p: Phase| {
        if let Some(f) = opts.on_phase {
            f(p)
        }
    };
    phase(Phase::Setup);
    let t0 = std::time::Instant::now();
    let status = |m: &str| {
        if let Some(f) = opts.on_status {
            f(m)
        }
    };
    let (b, mut stepper) = build::build(plan, &status)?;
    let setup_s = t0.elapsed().as_secs_f64();
    let fp = fingerprint(&plan.config, b.mesh_hash, b.mesh.n_tets());
    let steps = b.steps;
    if let Some(dir) = &opts.out {
        let resumed_at = opts.resume.as_ref().map(|ck| ck.done);
        check_output_space(plan, &b, dir, resumed_at)?;
    }
    let resume = match opts.resume.take() {
        Some(ck) => {
            let r = restore(ck, fp, &b, stepper.as_mut(), opts.out.as_deref())?;
            progress(r.0, steps);
            Some(r)
        }
        None => None,
    };
    if let Some(at) = opts.fault_at_step {
        stepper = Box::new(crate::backend::FaultAt { inner: stepper, at });
    }
    let dt = b.dt;
    let saver = Saver::new(plan, fp, dt, opts.out.as_deref())?;
    let mut write_ck = |so_far: &RunSoFar, st: &dyn Stepper| saver.write(so_far, st);
    let mut ctl = RunControl {
        checks: plan.energy_checks,
        resume,
        checkpoint: Some(&mut write_ck),
        every_steps: plan.checkpoint_steps,
        every: plan.checkpoint_every,
        interrupt: opts.interrupt,
    };
    phase(Phase::Stepping);
    let outcome = super::run_controlled(
        stepper.as_mut(),
        dt,
        steps,
        Some(b.wave.end()),
        b.probe_points.len(),
        &mut ctl,
        &mut |d| progress(d, steps),
    );
    drop(ctl);
    let record = outcome.record;
    if let Some(cause) = outcome.stop {
        return Err(stopped(
            cause,
            &record,
            outcome.checkpointed,
            opts.out.as_deref(),
        ));
    }
    // the record is written before the phase says it is on disk: a signal in between waits
    // for it (before, a signal there exited at once saying the record was in probe.csv)
    phase(Phase::Recording);
    let ends = (outcome.checkpointed, outcome.reference);
    let probe_csv = saver.keep_record(plan, &record, ends, stepper.as_ref())?;
    if let Some(e) = interrupted_after_record(opts.interrupt, &record, probe_csv.as_deref()) {
        return Err(e);
    }
    phase(Phase::Analysis);
    status(&format!(
        "extracting resonances from {} probe signals of {} samples",
        3 * b.probe_points.len(),
        record.steps
    ));
    let pulse_end = (b.wave.end() / dt).ceil() as usize;
    let analysis = analyse::analyse(
        plan,
        &b.mesh,
        &record,
        pulse_end,
        b.wave.f_peak_hz(),
        b.fmax_hz,
    );
    let (mode_shapes, q_wall) = shapes_and_wall_q(plan, &b, &analysis, stepper.as_mut(), &status)?;
    let backend = stepper.name();
    let mut r = result(
        plan,
        b,
        record,
        analysis,
        mode_shapes,
        probe_csv,
        setup_s,
        backend,
    );
    r.q_wall = q_wall;
    Ok(r)
}

/// The outputs needed by the application, from the run's parts.
#[allow(clippy::too_many_arguments)]
fn result(
    plan: &Plan,
    b: Built,
    record: Record,
    analysis: Analysis,
    mode_shapes: Vec<super::modeshape::ModeShape>,
    probe_csv: Option<std::path::PathBuf>,
    setup_s: f64,
    backend: String,
) -> ResonatorResult {
    let (model_bytes, model_flops) = b.disc.step_model(plan.precision);
    let dt_s = b.dt_s();
    let times = b.times;
    let mut notices = b.notices;
    notices.push(times.line());
    if analysis.correction == analyse::Correction::PartlyDispersive {
        notices.push("f_corrected_hz = f_hz: dispersive media fill only part of the mesh, where no exact discrete relation undoes the time step's shift (a homogeneous dispersive fill is corrected exactly)".into());
    }
    notices.extend(b.echo.as_ref().and_then(|e| {
        super::echo::notice(
            e,
            record.steps as f64 * dt_s,
            b.wave.end() / crate::util::C0,
        )
    }));
    ResonatorResult {
        probe_csv,
        config: plan.config.clone(),
        dofs: b.disc.dofs(),
        method: plan.method,
        mode_shapes,
        model_bytes_per_step: model_bytes,
        model_flops_per_step: model_flops,
        n_edges: b.topo.n_edges(),
        n_free_half: match &b.disc {
            Discretisation::Dga(d) => d.n_free_half(),
            Discretisation::Dg(_) => {
                2 * b.walls.fixed_edges(&b.topo).iter().filter(|&&f| !f).count()
            }
        },
        dt_s,
        rho: b.rho,
        mesh_hash: b.mesh_hash,
        source: b.source,
        probe_points: b.probe_points,
        waveform: b.wave,
        record,
        analysis,
        fmax_hz: b.fmax_hz,
        setup_s,
        setup_times: Some(times),
        backend,
        notices,
        echo: b.echo,
        mesh: b.mesh,
        q_wall: vec![],
        extrapolated: vec![],
        tracks: vec![],
    }
}

/// Writes checkpoints and, before the analysis, the probe record of a run with an output
/// folder (does nothing without one).
struct Saver {
    dir: Option<std::path::PathBuf>,
    fingerprint: u64,
    dt: f64,
    config: String,
    /// The output folder's canonical name, stored in checkpoints.
    out: String,
}

impl Saver {
    fn new(plan: &Plan, fingerprint: u64, dt: f64, dir: Option<&std::path::Path>) -> Result<Self> {
        let out = super::checkpoint::out_name(dir);
        Ok(Saver {
            dir: dir.map(|d| d.to_path_buf()),
            fingerprint,
            dt,
            config: plan.config.to_toml()?.to_string(),
            out,
        })
    }

    fn write(&self, so_far: &RunSoFar, st: &dyn Stepper) -> Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let (u, f) = st.state()?;
        let aux = st.aux_state()?;
        Checkpoint {
            fingerprint: self.fingerprint,
            done: so_far.done,
            dt_bits: self.dt.to_bits(),
            reference: so_far.reference,
            config: self.config.clone(),
            out: self.out.clone(),
            u,
            f,
            samples: so_far.samples.to_vec(),
            energy: so_far.energy.to_vec(),
            aux,
        }
        .write(dir)
        .map(|_| ())
    }

    /// Before the analysis, the record goes to disk; a long run also leaves a checkpoint at
    /// its end, so that a failure writing the outputs costs a `--resume` of no steps.
    fn keep_record(
        &self,
        plan: &Plan,
        record: &Record,
        (checkpointed, reference): (Option<usize>, Option<f64>),
        st: &dyn Stepper,
    ) -> Result<Option<std::path::PathBuf>> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        let long = plan.checkpoint_steps > 0
            || plan
                .checkpoint_every
                .is_some_and(|e| record.wall_s >= e.as_secs_f64());
        // a run resumed from its final checkpoint (the disk filled while the outputs were
        // written) has it in the folder already: it is not written a second time
        let final_there = checkpoint::header(&dir.join(checkpoint::FILE))
            == Some((self.fingerprint, record.steps));
        if long && checkpointed != Some(record.steps) && !final_there {
            let so_far = RunSoFar {
                done: record.steps,
                samples: &record.samples,
                energy: &record.energy,
                reference,
            };
            self.write(&so_far, st)?;
        }
        Ok(Some(record.write_probe_csv(dir)?))
    }
}

/// Creates the output folder and checks that its filesystem can hold the probe record and
/// the checkpoints (sizes from `cost::output_bytes`). A resumed run (`resumed_at`: the
/// checkpoint's step) is credited with what is already there: its checkpoint (the new one
/// is written beside it, which the two checkpoints of the estimate count) and, when it
/// resumes at the last step, its `probe.csv` (rewritten only if it differs).
fn check_output_space(
    plan: &Plan,
    b: &Built,
    dir: &std::path::Path,
    resumed_at: Option<usize>,
) -> Result<()> {
    let steps = b.steps;
    // the library creates the folder itself (the application has already locked it)
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let (u, f) = (b.topo.n_edges() * 2, 4 * b.mesh.n_tets());
    let checkpoints = plan.checkpoint_steps > 0 || plan.checkpoint_every.is_some();
    let need = crate::cost::output_bytes(steps, b.probe_points.len(), u + f, checkpoints);
    let need = need.saturating_sub(resume_credit(dir, resumed_at, steps));
    crate::util::check_space(
        dir,
        need,
        &format!(
            "the outputs of {steps} steps{}",
            if checkpoints {
                " and its checkpoints"
            } else {
                ""
            }
        ),
    )?;
    Ok(())
}

/// Bytes a resumed run finds already written in `dir` that count against its outputs'
/// estimate (see [`check_output_space`]); 0 for a new run.
fn resume_credit(dir: &std::path::Path, resumed_at: Option<usize>, steps: usize) -> u64 {
    let Some(done) = resumed_at else { return 0 };
    let size = |n: &str| {
        std::fs::symlink_metadata(dir.join(n))
            .ok()
            .filter(|m| m.is_file())
            .map_or(0, |m| m.len())
    };
    size(checkpoint::FILE) + if done == steps { size("probe.csv") } else { 0 }
}

/// Mode shapes of the strongest resonances (DGA runs with `mode_shapes > 0`) and, with
/// `conductor` walls, the wall-loss Q of every peak (in peak order; empty without such
/// walls). Both come from one second pass on the run's stepper ([`super::modeshape`]),
/// over every peak when the walls need it.
fn shapes_and_wall_q(
    plan: &Plan,
    b: &Built,
    analysis: &Analysis,
    stepper: &mut dyn Stepper,
    status: &dyn Fn(&str),
) -> Result<(Vec<super::modeshape::ModeShape>, Vec<Option<f64>>)> {
    let conductors = b.walls.metal.iter().any(Option::is_some);
    let wanted = match &b.disc {
        Discretisation::Dga(_) if !analysis.peaks.is_empty() => {
            if conductors {
                analysis.peaks.len()
            } else {
                plan.mode_shapes
            }
        }
        _ => 0,
    };
    if wanted == 0 {
        return Ok((vec![], vec![]));
    }
    let list = analysis.strongest(wanted);
    status(&format!(
        "mode shapes{}: a second pass of {} steps on {}, transforms at {} frequencies",
        if conductors { " and wall-loss Q" } else { "" },
        b.steps,
        stepper.name(),
        list.len()
    ));
    let shapes = super::modeshape::mode_shapes(
        stepper,
        &b.mesh,
        &b.topo,
        b.dt,
        b.steps,
        analysis.start,
        &list,
        &mut |_, _| {},
    )?;
    let q_wall = if conductors {
        analysis
            .peaks
            .iter()
            .map(|p| {
                shapes
                    .iter()
                    .find(|s| s.f_hz == p.f_hz)
                    .and_then(|s| super::wallq::wall_q(&b.mesh, &b.topo, &b.walls, &b.media.mu, s))
            })
            .collect()
    } else {
        vec![]
    };
    // the files keep the `mode_shapes` strongest only
    let keep: Vec<f64> = analysis
        .strongest(plan.mode_shapes)
        .iter()
        .map(|x| x.1)
        .collect();
    let shapes = shapes
        .into_iter()
        .filter(|s| keep.contains(&s.f_hz))
        .collect();
    Ok((shapes, q_wall))
}

#[cfg(test)]
mod space_tests {
    /// A resumed run is credited with its checkpoint, and with its probe.csv when it
    /// resumes at the last step (the file is then rewritten only if it differs); a new run
    /// with nothing.
    #[test]
    fn a_resume_is_credited_with_what_is_already_written() {
        let d = std::env::temp_dir().join(format!("dgatd-credit-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(super::checkpoint::FILE), vec![0u8; 1000]).unwrap();
        std::fs::write(d.join("probe.csv"), vec![b'1'; 300]).unwrap();
        assert_eq!(super::resume_credit(&d, None, 50), 0);
        assert_eq!(super::resume_credit(&d, Some(20), 50), 1000);
        assert_eq!(super::resume_credit(&d, Some(50), 50), 1300);
        std::fs::remove_dir_all(&d).ok();
    }
}
