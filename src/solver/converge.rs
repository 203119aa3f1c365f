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
use crate::error::{Error, Result};
pub use crate::spectrum::richardson::{Extrapolated, richardson};
use crate::spectrum::track::{self, Line, Step};
pub use crate::spectrum::track::{Point, Track, Tracking};
use crate::util::V3;

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
            let followed = tracks(&levels);
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
pub fn tracks(levels: &[Level]) -> Vec<Track> {
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
        let from: Vec<Line> = alive
            .iter()
            .map(|&(_, j)| fine.lines[j].0.clone())
            .collect();
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
    for t in out.iter_mut() {
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
            if !c.f_ok {
                why.push(format!(
                    "{:+.1}% in f",
                    100.0 * (other.f_hz / line.f_hz - 1.0)
                ));
            }
            if !c.q_ok {
                why.push("Q off by more than a factor 2".into());
            }
            if !c.shape_ok
                && let Some(s) = c.overlap
            {
                why.push(format!("shape overlap {s:.2}"));
            }
            if c.cost.is_finite()
                && let Some(m) = &coarse.lines[*j].1
            {
                why.push(format!("the matched line of the labelled {m}"));
            }
            if why.is_empty() {
                why.push("taken by a closer line".into());
            }
            format!(
                "not matched at {at}: no line within {:.0}% in f, a factor 2 in Q{}; the nearest in f, {}, is {}",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn level(refine: u32, lines: Vec<(Line, Option<&str>)>) -> Level {
        Level {
            refine,
            tets: 100 << (3 * refine),
            dofs: 0,
            run_s: 0.0,
            modes: lines
                .iter()
                .filter_map(|(l, m)| Some(((*m)?.to_string(), l.f_hz)))
                .collect(),
            lines: lines
                .into_iter()
                .map(|(l, m)| (l, m.map(str::to_string)))
                .collect(),
            probes: vec![[0.1, 0.2, 0.3]],
        }
    }

    fn line(f: f64, q: f64, z: [f64; 3]) -> Line {
        Line::new(f, Some(q), &z, &[0.0, 0.5, 1.0])
    }

    /// Three levels: an unlabelled line converging at second order is followed by shape
    /// and extrapolated (f and Q); a line that appears at the finest level only gets its
    /// note and no extrapolation; a labelled mode keeps its label's series.
    #[test]
    fn lines_without_labels_are_followed_and_a_lone_line_is_named() {
        let a = [1.0, 0.2, 0.4];
        let b = [0.1, 1.0, -0.3];
        let f = |h: f64| 100e6 * (1.0 + 0.04 * h * h);
        let q = |h: f64| 8.0 * (1.0 - 0.1 * h * h);
        let levels = vec![
            level(
                0,
                vec![
                    (line(f(1.0), q(1.0), a), None),
                    (line(150e6, 1e5, b), Some("TM010")),
                ],
            ),
            level(
                1,
                vec![
                    (line(f(0.5), q(0.5), a), None),
                    (line(150.5e6, 1e5, b), Some("TM010")),
                ],
            ),
            level(
                2,
                vec![
                    (line(f(0.25), q(0.25), a), None),
                    (line(120e6, 30.0, b), None),
                    (line(150.6e6, 1e5, b), Some("TM010")),
                ],
            ),
        ];
        let t = tracks(&levels);
        assert_eq!(t.len(), 3);
        assert_eq!((t[0].name.as_str(), t[0].by), ("line0", Tracking::Shape));
        assert_eq!(t[0].series.len(), 3);
        let x = t[0].f.unwrap();
        assert!((x.f_hz / 100e6 - 1.0).abs() < 1e-12, "{x:?}");
        assert!((x.order.unwrap() - 2.0).abs() < 1e-9);
        assert!((t[0].q.unwrap().f_hz - 8.0).abs() < 1e-9);
        assert!(t[0].note.is_none());
        assert!(t[0].series[1].overlap.unwrap() > 0.999);
        // the lone line: a note naming the level and the nearest line, no extrapolation
        assert!(t[1].f.is_none() && t[1].q.is_none());
        let note = t[1].note.as_deref().unwrap();
        assert!(
            note.contains("not matched at refine 1") && note.contains("in f"),
            "{note}"
        );
        // the labelled mode: by its label over every level
        assert_eq!((t[2].name.as_str(), t[2].by), ("TM010", Tracking::Label));
        assert_eq!(t[2].series.len(), 3);
        assert_eq!(t[2].f, richardson(&[150e6, 150.5e6, 150.6e6]));
    }
}
