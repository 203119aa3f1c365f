//! `mpirun -np P dgatd resonator …` (feature `mpi`): when the program was started by an MPI
//! launcher with more than one rank, the resonator job runs partitioned, one rank per part
//! ([`dgatd::solver::partitioned`]). One rank (or no launcher) takes the ordinary path.
//!
//! Rank 0 reads the flags, `--config` or `--resume` (the checkpoint), validates the plan,
//! prepares and locks the output folder and sends the configuration (its TOML text, the
//! form checkpoints store) to the other ranks, which parse the same plan from it. Rank 0
//! alone prints, writes the outputs and reads and writes the checkpoint. Device: the node's
//! (node rank)-th GPU unless `--device` is given; `--backend cpu` runs the CPU stepper on
//! every rank. A rank that sees no GPU where `--backend opencl` asks for one, or where
//! another rank sees one, stops the run: rank 0 prints what each such rank sees and the
//! fix ([`dgatd::solver::rank_devices`]).

use super::*;
use dgatd::partition::Comm;
use dgatd::partition::MpiComm;
use dgatd::report::OutputDir;
use dgatd::solver::Origin;

/// The rank count the MPI launcher announced (OpenMPI, MPICH/PMI), if any.
pub(crate) fn launched_ranks() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.parse().ok())
}

/// The partitioned resonator command when launched on several ranks, else None (the
/// ordinary path).
pub(super) fn command(args: &ResonatorArgs) -> Option<Result<()>> {
    if launched_ranks()? <= 1 {
        return None;
    }
    Some(run(args))
}

fn words_of(s: &str) -> Vec<u64> {
    s.bytes().map(u64::from).collect()
}

fn string_of(w: &[u64]) -> Result<String> {
    String::from_utf8(w.iter().map(|&x| x as u8).collect()).map_err(|_| Error::Comm {
        what: "receiving the configuration".into(),
        msg: "not UTF-8".into(),
    })
}

fn run(args: &ResonatorArgs) -> Result<()> {
    let universe = mpi::initialize().ok_or_else(|| Error::Comm {
        what: "starting MPI".into(),
        msg: "MPI could not be initialised (or was already)".into(),
    })?;
    let comm = MpiComm::new(universe.world());
    let node_rank = comm.node_rank();
    let root = comm.rank() == 0;
    install_interrupt_handler();
    // rank 0 reads and checks everything the run needs; the others get the configuration
    let mut lock = None;
    let (plan, prepared) = if root {
        let (plan, p) = root_plan(args, &comm, &mut lock)?;
        (plan, Some(p))
    } else {
        match received_plan(&comm)? {
            Some(plan) => (plan, None),
            None => {
                // rank 0 prints the reason and exits non-zero; this rank leaves with status 0
                // so that mpirun does not kill rank 0 before it has printed it
                drop(comm);
                drop(universe);
                std::process::exit(0);
            }
        }
    };
    let mut opts = RunOptions {
        interrupt: Some(&INTERRUPT),
        on_phase: Some(&set_phase),
        ..Default::default()
    };
    let out = prepared.as_ref().map(|p| p.out.clone());
    if let Some(p) = prepared {
        opts.out = Some(p.out);
        opts.resume = p.resume;
    }
    let progress = Progress::new(args.quiet || !root);
    let status = |m: &str| progress.status(m);
    if root {
        opts.on_status = Some(&status);
    }
    let r = dgatd::solver::run_partitioned(&comm, node_rank, &plan, &mut opts, &mut |d, t| {
        progress.steps(d, t)
    });
    progress.finish();
    let run = match r {
        Ok(run) => run,
        // the other ranks' errors are rank 0's (it prints them) or their own
        Err(e) if !root => leave_after(e, comm, universe),
        Err(e) => return Err(e),
    };
    let (Some(r), Some(out)) = (run.result, out) else {
        return Ok(());
    };
    write_outputs(&r, &plan, &out, run.halo_values_per_step)?;
    drop(lock);
    Ok(())
}

/// Rank 0's plan ([`checked_plan`]), sent to the other ranks as its configuration's TOML
/// text after a word saying whether there is one (1) or rank 0 failed (0, and no text).
fn root_plan(
    args: &ResonatorArgs,
    comm: &MpiComm,
    lock: &mut Option<OutputDir>,
) -> Result<(Plan, Prepared)> {
    let p = checked_plan(args, lock);
    let text = match &p {
        Ok((plan, _)) => plan.config.to_toml().map(|t| t.to_string()),
        Err(_) => Ok(String::new()),
    };
    let mut w = vec![(p.is_ok() && text.is_ok()) as u64];
    w.extend(words_of(text.as_deref().unwrap_or("")));
    comm.broadcast_words(0, w)?;
    text?;
    p
}

/// Rank 0's checks: the flags and configuration ([`prepare`]), the plan (one GPU per rank:
/// no `--gpus`), and the output folder prepared and locked (into `lock`), started fresh
/// unless resuming.
fn checked_plan(args: &ResonatorArgs, lock: &mut Option<OutputDir>) -> Result<(Plan, Prepared)> {
    let p = prepare(args)?;
    let plan = Plan::new(&p.cfg, p.origin.clone())?;
    for w in &plan.warnings {
        eprintln!("warning: {w}");
    }
    if plan.gpus > 1 {
        return Err(Error::config(
            "gpus",
            plan.gpus,
            "under mpirun every rank drives one GPU: leave --gpus out (or run one process with --gpus and no mpirun)",
        ));
    }
    let (dir, stale) = OutputDir::prepare(&p.out)?;
    if let Some(n) = stale {
        eprintln!("note: {n}");
    }
    if p.resume.is_none()
        && let Some(n) = dir.start_fresh()?
    {
        eprintln!("note: {n}");
    }
    *lock = Some(dir);
    Ok((plan, p))
}

/// Another rank's plan, from the configuration rank 0 sent ([`root_plan`]); None when rank
/// 0 failed.
fn received_plan(comm: &MpiComm) -> Result<Option<Plan>> {
    let w = comm.broadcast_words(0, vec![])?;
    if w.first() != Some(&1) {
        return Ok(None);
    }
    let origin = Origin {
        path: "rank 0's configuration".into(),
        text: string_of(&w[1..])?,
    };
    let cfg = Config::parse(&origin)?;
    Ok(Some(Plan::new(&cfg, Some(origin))?))
}

/// Ends a rank other than 0 after its run failed with `e`: prints `e` where it is the
/// rank's own (not a communication failure, an interrupt or rank 0's failure), closes MPI
/// and exits, with 130 for an interrupt, 0 when rank 0 failed, else 1.
fn leave_after(e: Error, comm: MpiComm, universe: mpi::environment::Universe) -> ! {
    if !matches!(e, Error::Comm { .. }) && !e.is_interrupted() && !e.is_rank_zero_failure() {
        eprintln!("error on rank {}: {e}", comm.rank());
    }
    drop(comm);
    drop(universe);
    // when rank 0 failed it reports and exits non-zero itself: a non-zero status here
    // would have mpirun kill rank 0 before it printed why (seen on 2-core CI)
    std::process::exit(if e.is_interrupted() {
        130
    } else if e.is_rank_zero_failure() {
        0
    } else {
        1
    });
}

/// Rank 0's end of a run: its notes and warnings, the halo exchange's size, the outputs
/// and the spectrum plot written into `out`, the checkpoint removed, and the summary.
fn write_outputs(
    r: &solver::ResonatorResult,
    plan: &Plan,
    out: &Path,
    halo_values_per_step: u64,
) -> Result<()> {
    for n in &r.notices {
        super::notice(n);
    }
    for w in dgatd::report::unresolved_lines(r) {
        eprintln!("warning: {w}");
    }
    eprintln!(
        "note: halo exchange: {} values per time step over all ranks ({} in f64)",
        halo_values_per_step,
        indicatif::HumanBytes(8 * halo_values_per_step)
    );
    let mut files = dgatd::report::write_resonator(out, r)?;
    files.extend(super::super::plots::spectrum_plot(out, r)?);
    let ck = out.join(solver::CHECKPOINT_FILE);
    if ck.exists() {
        std::fs::remove_file(&ck).map_err(|e| Error::io(&ck, e))?;
    }
    print_summary(r, plan);
    outln!("wrote {}", dgatd::report::path_list(&files));
    Ok(())
}
