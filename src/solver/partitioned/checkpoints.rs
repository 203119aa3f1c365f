//! The checkpoints of a partitioned run: rank 0 gathers the state and writes it
//! ([`RankSaver`]), checks a checkpoint against the run's rank count, time step and record
//! ([`check_checkpoint`]), and sends the resume point to every rank as words
//! ([`resume_words`], [`resume_of_words`]).

use super::super::checkpoint::{self, Checkpoint, checkpoint_ranks, ranks_fingerprint};
use super::super::plan::Plan;
use super::super::run::{Resume, RunSoFar};
use crate::backend::Stepper;
use crate::error::{Error, Result};
use crate::partition::Comm;

/// The error of a rank that learns that rank 0 failed at `what`.
pub(super) fn rank0_failed(what: &str) -> Error {
    Error::RankZeroFailed { what: what.into() }
}

/// Words for [`Resume`] (rank 0 → every rank).
pub(super) fn resume_words(r: &Resume) -> Vec<u64> {
    let (done, samples, energy, reference) = r;
    let mut w = vec![
        *done as u64,
        samples.len() as u64,
        energy.len() as u64,
        reference.is_some() as u64,
        reference.unwrap_or(0.0).to_bits(),
    ];
    w.extend(samples.iter().map(|x| x.to_bits()));
    for (k, e) in energy {
        w.push(*k as u64);
        w.push(e.to_bits());
    }
    w
}

pub(super) fn resume_of_words(w: &[u64]) -> Result<Resume> {
    let bad = || Error::Comm {
        what: "receiving the resumed run".into(),
        msg: "malformed message".into(),
    };
    if w.len() < 5 {
        return Err(bad());
    }
    let (ns, ne) = (w[1] as usize, w[2] as usize);
    if w.len() != 5 + ns + 2 * ne {
        return Err(bad());
    }
    let samples = w[5..5 + ns].iter().map(|&x| f64::from_bits(x)).collect();
    let energy = w[5 + ns..]
        .chunks(2)
        .map(|p| (p[0] as usize, f64::from_bits(p[1])))
        .collect();
    let reference = (w[3] == 1).then(|| f64::from_bits(w[4]));
    Ok((w[0] as usize, samples, energy, reference))
}

/// Writes the checkpoints of a partitioned run: gathers on rank 0, which writes; every
/// rank learns whether it worked. Collective.
pub(super) struct RankSaver {
    /// Whether checkpoints are written at all (rank 0 alone has the folder).
    writes: bool,
    dir: Option<std::path::PathBuf>,
    out_name: String,
    config: String,
    fingerprint: u64,
    dt: f64,
}

impl RankSaver {
    pub(super) fn new<C: Comm>(
        comm: &C,
        plan: &Plan,
        out: Option<&std::path::Path>,
        fingerprint: u64,
        dt: f64,
    ) -> Result<Self> {
        let root = comm.rank() == 0;
        let dir = if root {
            out.map(|d| d.to_path_buf())
        } else {
            None
        };
        if let Some(d) = &dir {
            std::fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
        }
        let out_name = checkpoint::out_name(dir.as_deref());
        Ok(RankSaver {
            writes: comm.any(root && out.is_some())?,
            dir,
            out_name,
            config: plan.config.to_toml()?.to_string(),
            fingerprint,
            dt,
        })
    }

    pub(super) fn write(&self, so_far: &RunSoFar, st: &dyn Stepper) -> Result<()> {
        if !self.writes {
            return Ok(());
        }
        let state = st.gathered_state()?;
        // the poles' states in the single-process layout on rank 0 (collective)
        let aux = st.aux_state()?;
        let r = match (&self.dir, state) {
            (Some(dir), Some((u, f))) => Checkpoint {
                fingerprint: self.fingerprint,
                done: so_far.done,
                dt_bits: self.dt.to_bits(),
                reference: so_far.reference,
                config: self.config.clone(),
                out: self.out_name.clone(),
                u,
                f,
                samples: so_far.samples.to_vec(),
                energy: so_far.energy.to_vec(),
                aux,
            }
            .write(dir)
            .map(|_| ()),
            _ => Ok(()),
        };
        if st.agree(&[r.is_err()])?[0] {
            return Err(r
                .err()
                .unwrap_or_else(|| rank0_failed("writing the checkpoint")));
        }
        r
    }
}

/// The resume point and the global state `(U, F, aux)` of a checked checkpoint (rank 0).
pub(super) type Checked = (Resume, Vec<f64>, Vec<f64>, Vec<f64>);

/// Checks a checkpoint against this P-rank run (rank 0); returns the resume point and the
/// global state.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_checkpoint(
    ck: Checkpoint,
    fp1: u64,
    np: usize,
    dt: f64,
    steps: usize,
    n_probes: usize,
    path: &std::path::Path,
) -> Result<Checked> {
    let bad = |why: String| Error::Checkpoint {
        path: path.to_path_buf(),
        why,
    };
    if ck.fingerprint != ranks_fingerprint(fp1, np) {
        return Err(bad(match checkpoint_ranks(ck.fingerprint, fp1) {
            Some(q) => format!(
                "it was written by a run on {q} rank{} and this run has {np}; resume it with the same number of ranks ({})",
                if q == 1 { "" } else { "s" },
                if q == 1 {
                    "without mpirun".to_string()
                } else {
                    format!("mpirun -np {q}")
                }
            ),
            None => format!(
                "it was written by a different run (configuration or mesh fingerprint {:016x}, this run {:016x})",
                ck.fingerprint,
                ranks_fingerprint(fp1, np)
            ),
        }));
    }
    if ck.dt_bits != dt.to_bits() {
        return Err(bad(format!(
            "its time step {:e} m differs from this run's {:e} m (another backend or device?)",
            f64::from_bits(ck.dt_bits),
            dt
        )));
    }
    if ck.done > steps || ck.samples.len() != ck.done * 3 * n_probes {
        return Err(bad(format!(
            "it holds {} steps and {} samples, inconsistent with this run ({steps} steps, {n_probes} probes)",
            ck.done,
            ck.samples.len()
        )));
    }
    Ok((
        (ck.done, ck.samples, ck.energy, ck.reference),
        ck.u,
        ck.f,
        ck.aux,
    ))
}
