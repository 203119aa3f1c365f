//! Converged resonances: the job at refinement levels `r0 .. r0 + n` (each a uniform 1:8
//! refinement, the mesh size halved, the time step with it), the modes matched across levels
//! by their analytic label or, without one, by frequency, decay and mode shape
//! ([`crate::spectrum::track`]), and Richardson-extrapolated frequencies and Q.
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

//!
//! Labelled modes: the strongest line assigned to each catalogue mode, at the consecutive
//! levels ending at the finest where the mode was found. Every other line of the finest level
//! is followed down the ladder by [`crate::spectrum::track::match_levels`] (one-to-one
//! between consecutive levels, the lines of labelled modes excluded), and extrapolated
//! over the levels it was followed to; one that is not found at the level below the finest
//! has no extrapolation and a note saying why ([`Track::note`]). The quality factor is
//! extrapolated by the same rule as the frequency (`Q_h = Q + C h^p + …`).
use super::plan::Plan;
use super::resonator::{self, ResonatorResult, RunOptions};
pub use crate::spectrum::richardson::{Extrapolated, richardson};
use crate::spectrum::track::{self, Line, Step};
pub use crate::spectrum::track::{Point, Track, Tracking};
use crate::util::V3;
use crate::{Error, Result};

/// One level of a ladder: its refinement, size and the corrected frequency of each
/// labelled mode (the strongest line assigned to it).
#[derive(Clone, Debug)]
pub struct Level {
    pub refine: u32,
    pub tets: usize,
    pub dofs: usize,
    pub run_s: f64,
    pub modes: Vec<(String, f64)>,
    /// Every line of the level (in the order of its peaks) with the catalogue mode it is
    /// the matched line of, if any.
    pub lines: Vec<(Line, Option<String>)>,
    /// The probe points (shapes are compared only between levels with the same points).
    pub probes: Vec<V3>,
}

/// The result of a ladder: the finest level's full result (with
/// [`ResonatorResult::extrapolated`] and [`ResonatorResult::tracks`] filled) and every level's summary.
pub struct Ladder {
    pub finest: ResonatorResult,
    pub levels: Vec<Level>,
}

/// Runs `plan` at refinements `plan.refine ..= plan.refine + extra` (`plan_at(r)` gives the
/// plan of refinement `r`), then extrapolates every line of the finest level.
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
        levels.push(level_of(r, &result));
        if r == base_refine + extra {
            let mut finest = result;
            let followed = tracks(&finest, &levels);
            finest.extrapolated = extrapolate(&finest, &levels, &followed);
            finest.tracks = followed;
            return Ok(Ladder { finest, levels });
        }
    }
    unreachable!("the loop returns at the finest level")
}

/// The summary of one level's result.
pub fn level_of(refine: u32, result: &ResonatorResult) -> Level {
    let label = |p: &crate::spectrum::Peak| {
        result
            .analysis
            .matched
            .iter()
            .find(|m| m.peak.as_ref().is_some_and(|(q, _)| q.f_hz == p.f_hz))
            .map(|m| m.mode.name.clone())
    };
    Level {
        refine,
        tets: result.mesh.n_tets(),
        dofs: result.dofs,
        run_s: result.record.wall_s,
        modes: result
            .analysis
            .matched
            .iter()
            .filter_map(|m| Some((m.mode.name.clone(), m.peak.as_ref()?.1)))
            .collect(),
        lines: result
            .peaks()
            .iter()
            .map(|p| {
                (
                    Line::new(result.corrected(p), p.q, &p.amplitudes, &p.phases),
                    label(p),
                )
            })
            .collect(),
        probes: result.probe_points.clone(),
    }
}

/// Per peak of the finest level: the extrapolation of the mode it is the matched line of,
/// over the consecutive levels ending at the finest where that mode was found; for a line
/// without a label, over the levels it was followed to ([`tracks`]).
fn extrapolate(
    finest: &ResonatorResult,
    levels: &[Level],
    followed: &[Track],
) -> Vec<Option<Extrapolated>> {
    finest
        .peaks()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let Some(m) = finest
                .analysis
                .matched
                .iter()
                .find(|m| m.peak.as_ref().is_some_and(|(q, _)| q.f_hz == p.f_hz))
            else {
                return followed.get(i).and_then(|t| t.f);
            };
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

/// Whether two levels' probe points are the same (to 1e-9 of their largest coordinate).
fn same_probes(a: &[V3], b: &[V3]) -> bool {
    let scale = a
        .iter()
        .flat_map(|p| p.iter())
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| (0..3).all(|c| (p[c] - q[c]).abs() <= 1e-9 * scale))
}

/// Every line of the finest level across the ladder (in the order of its peaks): a
/// labelled mode by its label, any other line by [`track::match_levels`].
pub fn tracks(finest: &ResonatorResult, levels: &[Level]) -> Vec<Track> {
    let Some(top) = levels.last() else {
        return vec![];
    };
    let n = levels.len();
    let labels: Vec<&str> = top.lines.iter().filter_map(|l| l.1.as_deref()).collect();
    let mut out: Vec<Track> = top
        .lines
        .iter()
        .enumerate()
        .map(|(i, (line, label))| Track {
            name: label.clone().unwrap_or_else(|| format!("line{i}")),
            by: if label.is_some() {
                Tracking::Label
            } else {
                Tracking::Shape
            },
            series: vec![Point {
                level: n - 1,
                f_hz: line.f_hz,
                q: line.q,
                overlap: None,
            }],
            f: None,
            q: None,
            note: None,
        })
        .collect();
    // labelled modes: the consecutive levels with the label (the f series is
    // `extrapolate`'s)
    for t in out.iter_mut().filter(|t| t.by == Tracking::Label) {
        for k in (0..n - 1).rev() {
            let Some((l, _)) = levels[k]
                .lines
                .iter()
                .find(|x| x.1.as_deref() == Some(t.name.as_str()))
            else {
                if k == n - 2 {
                    t.note = Some(format!(
                        "not matched at refine {}: no line there is labelled {}",
                        levels[k].refine, t.name
                    ));
                }
                break;
            };
            t.series.insert(
                0,
                Point {
                    level: k,
                    f_hz: l.f_hz,
                    q: l.q,
                    overlap: None,
                },
            );
        }
    }
    // the others, level by level down the ladder: (track index, its line at level k + 1)
    let mut alive: Vec<(usize, usize)> = (0..out.len())
        .filter(|&i| out[i].by != Tracking::Label)
        .map(|i| (i, i))
        .collect();
    for k in (0..n - 1).rev() {
        if alive.is_empty() {
            break;
        }
        let (fine, coarse) = (&levels[k + 1], &levels[k]);
        let shapes = same_probes(&fine.probes, &coarse.probes);
        let taken: Vec<bool> = coarse
            .lines
            .iter()
            .map(|l| l.1.as_deref().is_some_and(|m| labels.contains(&m)))
            .collect();
        let from: Vec<Line> = alive.iter().map(|&(_, j)| fine.lines[j].0.clone()).collect();
        let to: Vec<Line> = coarse.lines.iter().map(|l| l.0.clone()).collect();
        let steps = track::match_levels(&from, &to, &taken, shapes);
        let mut next = vec![];
        for (&(t, j), step) in alive.iter().zip(&steps) {
            let here = &fine.lines[j].0;
            match step {
                Step::Matched(c, cmp) => {
                    let l = &coarse.lines[*c].0;
                    if cmp.overlap.is_none() {
                        out[t].by = Tracking::Frequency;
                    }
                    out[t].series[0].overlap = cmp.overlap;
                    out[t].series.insert(
                        0,
                        Point {
                            level: k,
                            f_hz: l.f_hz,
                            q: l.q,
                            overlap: None,
                        },
                    );
                    next.push((t, *c));
                }
                _ => {
                    out[t].note = Some(unmatched_note(here, coarse, step, shapes));
                }
            }
        }
        alive = next;
    }
    for (t, peak) in out.iter_mut().zip(finest.peaks()) {
        debug_assert!(t.series.last().is_some_and(|p| p.f_hz == finest.corrected(peak)));
        let qs: Option<Vec<f64>> = t.series.iter().map(|p| p.q).collect();
        t.q = qs.and_then(|q| richardson(&q));
        if t.by != Tracking::Label {
            let fs: Vec<f64> = t.series.iter().map(|p| p.f_hz).collect();
            t.f = richardson(&fs);
        } else {
            let mut series: Vec<f64> = levels
                .iter()
                .rev()
                .map_while(|l| l.modes.iter().find(|x| x.0 == t.name).map(|x| x.1))
                .collect();
            series.reverse();
            t.f = richardson(&series);
        }
        if t.by != Tracking::Label && t.series.len() == 1 && t.note.is_none() {
            t.note = Some("not matched: the ladder has one level".into());
        }
    }
    out
}

/// Why a line of the level above `coarse` has no partner there.
fn unmatched_note(line: &Line, coarse: &Level, step: &Step, shapes: bool) -> String {
    let at = format!("refine {}", coarse.refine);
    let desc = |l: &Line| match l.q {
        Some(q) => format!("{:.4} MHz, Q {q:.3}", l.f_hz / 1e6),
        None => format!("{:.4} MHz", l.f_hz / 1e6),
    };
    match step {
        Step::Ambiguous(a, b) => format!(
            "not matched at {at}: two lines fit alike ({} and {})",
            desc(&coarse.lines[*a].0),
            desc(&coarse.lines[*b].0)
        ),
        Step::Unmatched(Some((j, c))) => {
            let other = &coarse.lines[*j].0;
            let mut why = vec![];
            if c.df > track::MAX_DF {
                why.push(format!("{:+.1}% in f", 100.0 * (other.f_hz / line.f_hz - 1.0)));
            }
            if c.dg > 0.0 && c.cost.is_infinite() && c.df <= track::MAX_DF {
                why.push("Q off by more than a factor 2".into());
            }
            if let Some(s) = c.overlap
                && s < track::MIN_OVERLAP
            {
                why.push(format!("shape overlap {s:.2}"));
            }
            if coarse.lines[*j].1.is_some() && c.cost.is_finite() {
                why.push(format!("it is the labelled {}", coarse.lines[*j].1.as_deref().unwrap_or("")));
            }
            if why.is_empty() {
                why.push("taken by a closer line".into());
            }
            format!(
                "not matched at {at}: no line within {:.0}% in f, a factor 2 in Q{}; the nearest, {}, is {}",
                100.0 * track::MAX_DF,
                if shapes {
                    format!(" and an overlap of {} in shape", track::MIN_OVERLAP)
                } else {
                    String::new()
                },
                desc(other),
                why.join(", ")
            )
        }
        _ => format!("not matched at {at}: that level has no line"),
    }
}
