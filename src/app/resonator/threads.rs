//! `dgatd resonator --gpus N` (feature `partition`): one process drives N GPUs. The mesh is
//! split into N parts ([`dgatd::solver::partitioned`], the same partitioned run as under
//! `mpirun`), and N threads step them, rank r on the r-th GPU of OpenCL's list (or every
//! rank on the device `--device` names). The ranks talk through
//! [`dgatd::partition::LocalComm`]: halos and collectives are copies in host memory, so no
//! MPI library, launcher or environment recipe is involved and no second process competes
//! for the CPU. Rank 0's thread reads and partitions the mesh, writes checkpoints and gets
//! the result, which the caller writes like any other run's.
//!
//! Before any thread starts, the GPUs are counted: asking for more GPUs than OpenCL lists
//! is an error naming what it lists (two parts on one GPU would only be slower), and so is
//! `--backend cpu` (the CPU backend already uses every core in one process).

use super::Progress;
use dgatd::backend::opencl;
use dgatd::partition::{Comm, LocalComm};

use dgatd::solver::{BackendSpec, Plan};
use dgatd::solver::{ResonatorResult, RunOptions};
use dgatd::{Error, Result};
use std::time::Duration;

/// How long a rank waits for another's message before calling it lost (rank 0 reads and
/// partitions a large mesh while the others wait; a rank that fails ends their waits at
/// once through [`LocalComm::abort`]).
const WAIT: Duration = Duration::from_secs(6 * 3600);

/// Checks that `plan.gpus` GPUs exist for it (or that `--device` names one device for all).
fn check_gpus(plan: &Plan) -> Result<()> {
    let n = plan.gpus;
    match &plan.backend {
        BackendSpec::Cpu => Err(Error::config(
            "gpus",
            n,
            "--gpus drives GPUs through OpenCL; with --backend cpu run one part (the CPU backend already uses every core)",
        )),
        BackendSpec::Opencl(Some(_)) => Ok(()),
        BackendSpec::Opencl(None) | BackendSpec::Auto => {
            let all = opencl::list_devices().unwrap_or_default();
            let gpus: Vec<String> = all
                .iter()
                .filter(|d| d.is_gpu())
                .map(|d| d.name.clone())
                .collect();
            if gpus.len() >= n {
                return Ok(());
            }
            let seen = if gpus.is_empty() {
                "no GPU".to_string()
            } else {
                format!("{} GPUs ({})", gpus.len(), gpus.join(", "))
            };
            Err(Error::config(
                "gpus",
                n,
                format!(
                    "OpenCL lists {seen}: give --gpus {} at most, or --device NAME|INDEX to put every part on one device on purpose (see dgatd devices)",
                    gpus.len().max(1)
                ),
            ))
        }
    }
}

/// Runs `plan` on `plan.gpus` threads, one GPU each; returns rank 0's result, with the halo
/// volume among its notices. `opts.out`, `opts.resume` and `opts.on_status` serve rank 0,
/// `opts.interrupt` and `opts.on_phase` every rank.
pub(super) fn run(
    plan: &Plan,
    opts: &mut RunOptions,
    progress: &Progress,
) -> Result<ResonatorResult> {
    check_gpus(plan)?;
    let n = plan.gpus;
    let mut root_opts = Some(RunOptions {
        out: opts.out.clone(),
        resume: opts.resume.take(),
        interrupt: opts.interrupt,
        fault_at_step: None,
        on_status: opts.on_status,
        on_phase: opts.on_phase,
    });
    let (interrupt, on_phase) = (opts.interrupt, opts.on_phase);
    let results: Vec<Result<dgatd::solver::PartitionedRun>> = std::thread::scope(|s| {
        let handles: Vec<_> = LocalComm::world_with_timeout(n, WAIT)
            .into_iter()
            .map(|comm| {
                let rank = comm.rank();
                let mut o = match rank {
                    0 => root_opts.take().expect("one rank 0"),
                    _ => RunOptions {
                        interrupt,
                        on_phase,
                        ..Default::default()
                    },
                };
                s.spawn(move || {
                    let mut steps = |d: usize, t: usize| {
                        if rank == 0 {
                            progress.steps(d, t)
                        }
                    };
                    let r = dgatd::solver::run_partitioned(&comm, rank, plan, &mut o, &mut steps);
                    if r.is_err() {
                        comm.abort();
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(rank, h)| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::Comm {
                        what: format!("rank {rank} (thread)"),
                        msg: "panicked".into(),
                    })
                })
            })
            .collect()
    });
    // the first failure that is not another rank's echo of it
    let cause = |e: &Error| !matches!(e, Error::Comm { .. }) && !e.is_rank_zero_failure();
    let mut first = None;
    for (rank, r) in results.iter().enumerate() {
        if let Err(e) = r
            && (first.is_none() || cause(e))
        {
            first = Some((rank, e));
            if cause(e) {
                break;
            }
        }
    }
    if let Some((rank, _)) = first {
        let mut results = results;
        let e = results.swap_remove(rank).err().expect("an error");
        return Err(if rank == 0 || !cause(&e) {
            e
        } else {
            Error::Comm {
                what: format!("rank {rank} of {n} (GPU thread)"),
                msg: e.to_string(),
            }
        });
    }
    let run = results
        .into_iter()
        .next()
        .and_then(|r| r.ok())
        .expect("rank 0 succeeded");
    let mut r = run.result.ok_or_else(|| Error::Comm {
        what: "rank 0".into(),
        msg: "returned no result".into(),
    })?;
    r.notices.push(format!(
        "halo exchange: {} values per time step over all {n} GPUs ({} in f64), through host memory",
        run.halo_values_per_step,
        indicatif::HumanBytes(8 * run.halo_values_per_step)
    ));
    Ok(r)
}
