//! Converged resonances: the job at refinement levels `r0 .. r0 + n` (each a uniform 1:8
//! refinement, the mesh size halved, the time step with it), the modes matched across levels
//! by their analytic label, and Richardson-extrapolated frequencies.
//!
//! With the leapfrog's exact frequency correction removed (the `f_corrected` of each level),
//! what is left is the spatial error `f_h = f + C h^p + …`, `p = 2` for the scheme on
//! smooth fields. From the last three levels (sizes h, h/2, h/4) the observed order is
//! `p = log2((f_(h) − f_(h/2)) / (f_(h/2) − f_(h/4)))` and the extrapolated value
//! `f = f_(h/4) + (f_(h/4) − f_(h/2)) / (2^p − 1)`; the error estimate is the larger of the
//! last correction and the difference from the `p = 2` extrapolation. With two levels, or
//! differences that do not shrink monotonically, `p = 2` is assumed and the order is not
//! reported; the estimate is then the size of the correction `|f_(h/2) − f_(h)| / 3` (two
//! levels) or the last difference itself (non-monotone: no asymptotic range is seen).

use super::plan::Plan;
use super::resonator::{self, ResonatorResult, RunOptions};
use crate::error::{Error, Result};
pub use crate::spectrum::richardson::{Extrapolated, richardson};

/// One level of a ladder: its refinement, size and the corrected frequency of each
/// labelled mode (the strongest line assigned to it).
#[derive(Clone, Debug)]
pub struct Level {
    pub refine: u32,
    pub tets: usize,
    pub dofs: usize,
    pub run_s: f64,
    pub modes: Vec<(String, f64)>,
}

/// The result of a ladder: the finest level's full result (with
/// [`ResonatorResult::extrapolated`] filled) and every level's summary.
pub struct Ladder {
    pub finest: ResonatorResult,
    pub levels: Vec<Level>,
}

/// Runs `plan` at refinements `plan.refine ..= plan.refine + extra` (`plan_at(r)` gives the
/// plan of refinement `r`), then extrapolates every mode labelled at the finest level.
/// `before(level, refine)` is called before each run (progress). The finest run gets
/// `opts` (its outputs, checkpoints, interrupt); the coarser ones only the interrupt.
pub fn ladder(
    extra: u32,
    plan_at: &dyn Fn(u32) -> Result<Plan>,
    base_refine: u32,
    opts: &mut RunOptions,
    before: &mut dyn FnMut(usize, u32),
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Ladder> {
    if extra == 0 {
        return Err(Error::config(
            "converge",
            extra,
            "needs at least one refinement above the base mesh (--converge 1 or more)",
        ));
    }
    let mut levels = Vec::new();
    for (i, r) in (base_refine..=base_refine + extra).enumerate() {
        before(i, r);
        let plan = plan_at(r)?;
        let result = if r == base_refine + extra {
            resonator::run_with(&plan, opts, progress)?
        } else {
            let mut coarse = RunOptions {
                interrupt: opts.interrupt,
                on_status: opts.on_status,
                on_phase: opts.on_phase,
                ..Default::default()
            };
            resonator::run_with(&plan, &mut coarse, progress)?
        };
        levels.push(Level {
            refine: r,
            tets: result.mesh.n_tets(),
            dofs: result.dofs,
            run_s: result.record.wall_s,
            modes: result
                .analysis
                .matched
                .iter()
                .filter_map(|m| Some((m.mode.name.clone(), m.peak.as_ref()?.1)))
                .collect(),
        });
        if r == base_refine + extra {
            let mut finest = result;
            finest.extrapolated = extrapolate(&finest, &levels);
            return Ok(Ladder { finest, levels });
        }
    }
    unreachable!("the loop returns at the finest level")
}

/// Per peak of the finest level: the extrapolation of the mode it is the matched line of,
/// over the consecutive levels ending at the finest where that mode was found.
fn extrapolate(finest: &ResonatorResult, levels: &[Level]) -> Vec<Option<Extrapolated>> {
    finest
        .peaks()
        .iter()
        .map(|p| {
            let m = finest
                .analysis
                .matched
                .iter()
                .find(|m| m.peak.as_ref().is_some_and(|(q, _)| q.f_hz == p.f_hz))?;
            let mut series: Vec<f64> = levels
                .iter()
                .rev()
                .map_while(|l| l.modes.iter().find(|x| x.0 == m.mode.name).map(|x| x.1))
                .collect();
            series.reverse();
            richardson(&series)
        })
        .collect()
}
