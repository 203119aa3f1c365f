//! The leapfrog run loop: steps in chunks, probe samples, energy checks with the blow-up
//! guard, checkpoints and interruption. Never loses the samples recorded before a failure.

use crate::backend::Stepper;
use crate::error::{Error, Result};
use crate::util::C0;
use std::path::{Path, PathBuf};

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

    /// Every probe component from sample `start` on, in the order of the probe CSV (probe
    /// 0's x, y, z, then probe 1's, ...): the signals the analysis extracts from.
    pub fn signals(&self, start: usize) -> Vec<Vec<f64>> {
        (0..self.n_probes * 3)
            .map(|pc| {
                (start..self.steps)
                    .map(|k| self.samples[k * self.n_probes * 3 + pc])
                    .collect()
            })
            .collect()
    }

    /// Writes `dir/probe.csv` (atomically; `dir` created if missing): `t_s, ex, ey, ez` for
    /// probe 0 (V/m up to the source's arbitrary scale), then `ex_1, ey_1, ez_1, ...` for
    /// further probes, after each recorded step.
    pub fn write_probe_csv(&self, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let p = dir.join("probe.csv");
        // a resumed run whose record was already written (the disk filled after it) keeps
        // that file: no second copy is made beside it, so no space is needed for it. The
        // rows are streamed (round four A1: the text of 12M rows, 2.5 times the record,
        // was built in memory and its allocation aborted the run after the time loop).
        let same = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file())
            && std::fs::File::open(&p).is_ok_and(|f| {
                let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                let mut cmp = crate::util::SameAs {
                    expect: std::io::BufReader::with_capacity(1 << 20, f),
                    same: true,
                    len: 0,
                };
                self.emit_probe_csv(&mut cmp).is_ok() && cmp.same && cmp.len == len
            });
        if !same {
            crate::util::write_atomic_with(&p, |w| self.emit_probe_csv(w))?;
        }
        Ok(p)
    }

    /// The text of `probe.csv` into `out`: `t_s` then the three components of each probe
    /// (`ex, ey, ez, ex_1, ...`), every value with 13 significant digits.
    fn emit_probe_csv(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let np = self.n_probes;
        let mut w = csv::Writer::from_writer(out);
        let mut header = vec!["t_s".to_string(), "ex".into(), "ey".into(), "ez".into()];
        for k in 1..np {
            header.extend([format!("ex_{k}"), format!("ey_{k}"), format!("ez_{k}")]);
        }
        w.write_record(&header)?;
        let g = |x: f64| format!("{x:.12e}");
        let mut row: Vec<String> = Vec::with_capacity(1 + 3 * np);
        for k in 0..self.steps {
            row.clear();
            row.push(g((k + 1) as f64 * self.dt_s));
            row.extend((0..3 * np).map(|i| g(self.samples[k * 3 * np + i])));
            w.write_record(&row)?;
        }
        w.flush()
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
    /// the same steps). 0: none (progress is then reported every `steps.min(2000)` steps).
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
    /// The blow-up guard's reference energy (for a checkpoint at the end).
    pub reference: Option<f64>,
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
            // grown as needed: a huge step count fails in the build's memory check, not here
            Vec::with_capacity(steps.min(1 << 16) * n_probes * 3),
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
            let source_over = source_end.map(|e| done as f64 * dt > e).unwrap_or(true);
            if ctl.checks > 0
                && let Err(e) =
                    check_energy(stepper, done, source_over, &mut energy, &mut reference)
            {
                stop = Some(e);
                break;
            }
            progress(done);
        }
        let interrupted = ctl
            .interrupt
            .map(|f| f.load(Ordering::SeqCst))
            .unwrap_or(false);
        let due = (ctl.every_steps > 0 && done % ctl.every_steps == 0 && done > last_ck.0)
            || ctl.every.map(|d| last_ck.1.elapsed() >= d).unwrap_or(false);
        // the ranks of a partitioned run stop and checkpoint together
        let (interrupted, due) = match stepper.agree(&[interrupted, due]) {
            Ok(v) => (v[0], v[1]),
            Err(e) => {
                stop = Some(e);
                break;
            }
        };
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
        reference,
    }
}

/// One energy check at step `done`: records `W`, and fails when it is negative or not
/// finite (above the stability limit), or, once the source is over, when it has grown past
/// twice the first post-source value (the guard's reference).
fn check_energy(
    stepper: &mut dyn Stepper,
    done: usize,
    source_over: bool,
    energy: &mut Vec<(usize, f64)>,
    reference: &mut Option<f64>,
) -> Result<()> {
    let w = stepper.energy()?;
    energy.push((done, w));
    if w < 0.0 {
        // W is positive definite exactly when Δt is below the stability limit
        return Err(Error::Unstable(format!(
            "the discrete energy became negative ({w:.6e}) by step {done}: the time step is above the stability limit; reduce --cfl"
        )));
    }
    if !w.is_finite() {
        return Err(Error::Unstable(format!(
            "the field became non-finite by step {done}: reduce --cfl (the time step is above the stability limit?)"
        )));
    }
    if source_over {
        match *reference {
            None => *reference = Some(w),
            Some(r) if w > 2.0 * r.abs() + f64::MIN_POSITIVE => {
                return Err(Error::Unstable(format!(
                    "discrete energy grew from {r:.6e} to {w:.6e} by step {done}: the scheme is unstable; reduce --cfl"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_the_series_from_the_start_in_probe_csv_order() {
        let mut r = crate::util::Rng::new(3);
        let (steps, n_probes) = (7, 2);
        let rec = Record {
            dt_s: 1e-11,
            steps,
            n_probes,
            samples: (0..steps * n_probes * 3).map(|_| r.sym()).collect(),
            energy: vec![],
            wall_s: 0.0,
        };
        let s = rec.signals(3);
        assert_eq!(s.len(), 6);
        for p in 0..n_probes {
            for c in 0..3 {
                assert_eq!(s[3 * p + c], rec.series(p, c)[3..]);
            }
        }
    }
}
