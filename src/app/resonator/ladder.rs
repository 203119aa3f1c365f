//! `--converge N` (or `converge = N`): the ladder of refinements from `cfg.refine`
//! ([`dgatd::solver::ladder`]), refused with what a ladder cannot vary per level, and a
//! warning before it runs for every curved surface the refinement cannot follow.

use super::{Progress, ResonatorArgs};
use dgatd::solver::{Config, Origin, Plan, RunOptions};
use dgatd::{Error, Result};

/// `--converge N`: the ladder of refinements from `cfg.refine` (solver::converge).
pub(super) fn converge(
    args: &ResonatorArgs,
    cfg: &Config,
    origin: &Option<Origin>,
    n: u32,
    opts: &mut RunOptions,
    progress: &Progress,
) -> Result<dgatd::solver::Ladder> {
    for (given, flag, why) in [
        (
            args.resume.is_some(),
            "resume",
            "a ladder is not resumed; rerun it",
        ),
        (
            cfg.steps.is_some(),
            "steps",
            "the step count changes with each level's time step; give --time instead",
        ),
        (
            cfg.dt.is_some(),
            "dt",
            "each level has its own time step; leave --dt out",
        ),
        (
            cfg.gpus > 1,
            "gpus",
            "a ladder runs its levels on one device; leave --gpus out",
        ),
    ] {
        if given {
            return Err(Error::config(
                flag,
                "given",
                format!("with --converge: {why}"),
            ));
        }
    }
    let base = cfg.refine;
    // a curved surface the refinement cannot follow is told before any level runs
    let mut c = cfg.clone();
    c.refine = base;
    // the finest level's size is checked before the first level runs
    for w in dgatd::solver::refinement_warnings(&Plan::new(&c, origin.clone())?, base + n)? {
        eprintln!("warning: with --converge: {w}");
    }
    let plan_at = |r: u32| {
        let mut c = cfg.clone();
        c.refine = r;
        Plan::new(&c, origin.clone())
    };
    let level = std::cell::Cell::new(0usize);
    let r = dgatd::solver::ladder(
        n,
        &plan_at,
        base,
        opts,
        &mut |i, r| {
            level.set(i);
            progress.status(&format!("level {} of {}: --refine {r}", i + 1, n + 1))
        },
        &mut |done, total| progress.steps(done, total),
    );
    // a coarser level keeps no checkpoint or record: an interrupt there saves nothing,
    // whatever the signal's first notice said (round five's spot check)
    if let Err(e) = &r
        && e.is_interrupted()
        && level.get() < n as usize
    {
        eprintln!(
            "note: the ladder was stopped in level {} of {} (--refine {}); its coarser levels keep no checkpoint or probe record, so nothing was saved: run the command again to start the ladder over",
            level.get() + 1,
            n + 1,
            base as usize + level.get()
        );
    }
    r
}
