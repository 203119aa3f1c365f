//! Lines followed across refinement levels without an analytic label: by frequency, decay
//! and mode shape (the arithmetic of [`crate::solver::converge`] for resonators the
//! catalogue does not know: a dielectric sphere, any open resonator).
//!
//! A line is its corrected frequency `f`, its quality factor `Q` (harmonic inversion) and
//! its shape: the complex amplitudes `z_i = a_i e^{i φ_i}` over the probe components
//! (`Peak::amplitudes`, `Peak::phases`), normalised, `u = z / |z|`. The source is the same
//! at every level, so a mode's pattern over fixed probes converges with the mesh while its
//! overall scale and phase (the first analysed sample differs between levels) do not
//! matter: the overlap of two shapes is `s = |Σ conj(u_i) v_i|` in `[0, 1]` (1: the same
//! pattern up to a complex factor).
//!
//! Between a line `(f, Q, u)` of one level and a candidate `(f', Q', v)` of the next
//! coarser one, with `g = 1/(2Q)` (decay per radian, 0 without a Q):
//!
//! - `δf = |f' − f| / f` at most [`MAX_DF`],
//! - `δg = |g' − g|` at most `0.5 max(g, g') + 1e-4` (Q within a factor 2; two high-Q
//!   lines of a closed cavity, `g` at the noise level, always agree),
//! - `s` at least [`MIN_OVERLAP`] where both lines have a shape (and the probes are the
//!   same points),
//!
//! and the cost `c = (δf / 0.02)² + (δg / (0.2 max(g, g') + 1e-4))² + ((1 − s) / 0.3)²`.
//! The shape is a weak criterion for degenerate multiplets (every mode of a sphere is
//! `2l + 1`-fold): the mesh splits them, the extraction reports one member or a merged
//! line, and which combination it is changes between levels (measured on a dielectric
//! sphere at 3 and 6 shells: overlaps 0.3 to 0.7 for lines that agree in f and Q to 1%
//! and 4%, against about 0.1 to 0.3 between different lines); hence the low gate, the shape
//! deciding mostly between close lines of similar decay.
//! Pairs are taken one-to-one by ascending cost (greedy), so that two close lines do not
//! both claim one coarse line. A line without a partner (or whose best partner is within
//! 10% of the cost of another line's claim on it) ends its chain there, with the reason.

use super::richardson::Extrapolated;
use crate::util::C64;

/// The largest relative frequency change between two consecutive levels.
pub const MAX_DF: f64 = 0.1;
/// The smallest shape overlap of a match (where both lines have a shape).
pub const MIN_OVERLAP: f64 = 0.25;

/// A line of one level, as matched across levels.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Corrected frequency, Hz.
    pub f_hz: f64,
    /// Quality factor (harmonic inversion), if known.
    pub q: Option<f64>,
    /// Normalised complex amplitudes over the probe components (empty where unknown).
    pub shape: Vec<C64>,
}

impl Line {
    /// A line from its amplitudes and phases (per probe component); the shape is empty
    /// when they are missing or all zero.
    pub fn new(f_hz: f64, q: Option<f64>, amplitudes: &[f64], phases: &[f64]) -> Line {
        let z: Vec<C64> = amplitudes
            .iter()
            .zip(phases)
            .map(|(&a, &p)| C64::from_polar(a, p))
            .collect();
        let n = z.iter().map(|x| x.norm_sqr()).sum::<f64>().sqrt();
        let shape = if n > 0.0 && n.is_finite() && z.len() == amplitudes.len() {
            z.into_iter().map(|x| x / n).collect()
        } else {
            vec![]
        };
        Line { f_hz, q, shape }
    }

    fn decay(&self) -> f64 {
        match self.q {
            Some(q) if q.is_finite() && q > 0.0 => 0.5 / q,
            _ => 0.0,
        }
    }
}

/// The overlap `|Σ conj(u_i) v_i|` of two shapes; None where either is missing or their
/// lengths differ.
pub fn overlap(a: &Line, b: &Line) -> Option<f64> {
    if a.shape.is_empty() || a.shape.len() != b.shape.len() {
        return None;
    }
    let s: C64 = a
        .shape
        .iter()
        .zip(&b.shape)
        .map(|(x, y)| x.conj() * y)
        .sum();
    Some(s.norm().min(1.0))
}

/// How a line compares with a candidate of the next level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    pub df: f64,
    pub dg: f64,
    /// Which gates pass: frequency, decay, shape.
    pub f_ok: bool,
    pub q_ok: bool,
    pub shape_ok: bool,
    /// Shape overlap (None: not compared).
    pub overlap: Option<f64>,
    /// The cost (finite only where every gate passes).
    pub cost: f64,
}

/// Compares `a` with the candidate `b` (see the module documentation); `shapes`: whether
/// the shapes may be compared (the same probe points at both levels).
pub fn compare(a: &Line, b: &Line, shapes: bool) -> Comparison {
    let df = (b.f_hz - a.f_hz).abs() / a.f_hz.abs().max(f64::MIN_POSITIVE);
    let (ga, gb) = (a.decay(), b.decay());
    let dg = (gb - ga).abs();
    let gmax = ga.max(gb);
    let s = if shapes { overlap(a, b) } else { None };
    let (f_ok, q_ok, shape_ok) = (
        df <= MAX_DF,
        dg <= 0.5 * gmax + 1e-4,
        s.is_none_or(|s| s >= MIN_OVERLAP),
    );
    let pass = f_ok && q_ok && shape_ok;
    let cost = (df / 0.02).powi(2)
        + (dg / (0.2 * gmax + 1e-4)).powi(2)
        + s.map(|s| ((1.0 - s) / 0.3).powi(2)).unwrap_or(0.0);
    Comparison {
        df,
        dg,
        f_ok,
        q_ok,
        shape_ok,
        overlap: s,
        cost: if pass && cost.is_finite() {
            cost
        } else {
            f64::INFINITY
        },
    }
}

/// The outcome for one line of the finer level.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Matched to this candidate (index into the coarser level's lines), with the
    /// comparison.
    Matched(usize, Comparison),
    /// No candidate passes; the nearest in cost (or in frequency where none is finite),
    /// with its comparison, if the coarser level has any line.
    Unmatched(Option<(usize, Comparison)>),
    /// Two candidates are within 10% of each other's cost: the match is not taken.
    Ambiguous(usize, usize),
}

/// Matches each line of `fine` to at most one line of `coarse` (one-to-one, greedy by
/// ascending cost; `taken[j]`: coarse line `j` is not available). `shapes`: whether the
/// shapes may be compared.
pub fn match_levels(fine: &[Line], coarse: &[Line], taken: &[bool], shapes: bool) -> Vec<Step> {
    let cmp: Vec<Vec<Comparison>> = fine
        .iter()
        .map(|a| coarse.iter().map(|b| compare(a, b, shapes)).collect())
        .collect();
    let free = |j: usize| !taken.get(j).copied().unwrap_or(false);
    let mut pairs: Vec<(f64, usize, usize)> = vec![];
    for (i, row) in cmp.iter().enumerate() {
        for (j, c) in row.iter().enumerate() {
            if c.cost.is_finite() && free(j) {
                pairs.push((c.cost, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut out: Vec<Option<Step>> = vec![None; fine.len()];
    let mut used = vec![false; coarse.len()];
    for &(c, i, j) in &pairs {
        if out[i].is_some() || used[j] {
            continue;
        }
        // another free candidate of this line almost as good: ambiguous
        let rival = cmp[i]
            .iter()
            .enumerate()
            .filter(|&(k, x)| k != j && free(k) && !used[k] && x.cost.is_finite())
            .find(|(_, x)| x.cost <= 1.1 * c + 1e-9);
        if let Some((k, _)) = rival {
            out[i] = Some(Step::Ambiguous(j, k));
            continue;
        }
        used[j] = true;
        out[i] = Some(Step::Matched(j, cmp[i][j]));
    }
    out.into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.unwrap_or_else(|| {
                let nearest = cmp[i]
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.df.total_cmp(&b.1.df))
                    .map(|(j, c)| (j, *c));
                Step::Unmatched(nearest)
            })
        })
        .collect()
}

/// How a line of the finest level was followed across the levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracking {
    /// By its analytic label (today's rule).
    Label,
    /// By frequency, decay and mode shape ([`crate::spectrum::track`]).
    Shape,
    /// By frequency and decay only (the levels' probes or shapes could not be compared).
    Frequency,
}

impl Tracking {
    pub fn name(self) -> &'static str {
        match self {
            Tracking::Label => "label",
            Tracking::Shape => "shape",
            Tracking::Frequency => "frequency",
        }
    }
}

/// One level of a line's series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Index into the ladder's levels.
    pub level: usize,
    pub f_hz: f64,
    pub q: Option<f64>,
    /// Shape overlap with the line of the next finer level (None at the finest or where
    /// not compared).
    pub overlap: Option<f64>,
}

/// A line of the finest level across the ladder.
#[derive(Clone, Debug, PartialEq)]
pub struct Track {
    /// The mode's label, or `line{i}` (`i` the line's index in `modes.csv`).
    pub name: String,
    pub by: Tracking,
    /// The levels the line was found at, coarsest first, ending at the finest.
    pub series: Vec<Point>,
    /// Richardson-extrapolated frequency (the same as the result's `extrapolated`).
    pub f: Option<Extrapolated>,
    /// Richardson-extrapolated Q (its `f_hz` holds the Q, `error_hz` its error).
    pub q: Option<Extrapolated>,
    /// Why the line is not followed over every level (None where it is).
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(f: f64, q: f64, z: &[(f64, f64)]) -> Line {
        let a: Vec<f64> = z.iter().map(|x| x.0).collect();
        let p: Vec<f64> = z.iter().map(|x| x.1).collect();
        Line::new(f, Some(q), &a, &p)
    }

    #[test]
    fn the_overlap_ignores_scale_and_global_phase() {
        let a = line(1e8, 10.0, &[(1.0, 0.0), (2.0, 1.0), (0.5, -2.0)]);
        let b = line(1.01e8, 11.0, &[(3.0, 0.7), (6.0, 1.7), (1.5, -1.3)]);
        assert!((overlap(&a, &b).unwrap() - 1.0).abs() < 1e-12);
        let c = line(1e8, 10.0, &[(2.0, 0.0), (-1.0, 1.0), (0.0, 0.0)]);
        assert!(overlap(&a, &c).unwrap() < 0.5);
        assert!(overlap(&a, &Line::new(1e8, None, &[], &[])).is_none());
    }

    #[test]
    fn close_lines_are_told_apart_by_shape_and_decay() {
        // two lines 1% apart at the fine level, shifted by 3% at the coarse one: the shape
        // decides (by frequency alone, the fine line at 100 would take the coarse 101.5)
        let fine = [
            line(100.0, 20.0, &[(1.0, 0.0), (0.0, 0.0), (0.2, 0.0)]),
            line(101.0, 5.0, &[(0.0, 0.0), (1.0, 0.0), (0.1, 1.0)]),
        ];
        let coarse = [
            line(97.0, 22.0, &[(1.0, 0.3), (0.05, 0.3), (0.2, 0.3)]),
            line(98.0, 4.8, &[(0.0, 0.0), (1.0, 2.0), (0.1, 3.0)]),
            line(130.0, 5.0, &[(1.0, 0.0), (0.0, 0.0), (0.2, 0.0)]),
        ];
        let s = match_levels(&fine, &coarse, &[false; 3], true);
        assert!(matches!(s[0], Step::Matched(0, _)), "{s:?}");
        assert!(matches!(s[1], Step::Matched(1, _)), "{s:?}");
        // without the shapes: the decay still tells them apart
        let s = match_levels(&fine, &coarse, &[false; 3], false);
        assert!(matches!(s[0], Step::Matched(0, _)) && matches!(s[1], Step::Matched(1, _)));
        // a line with no counterpart: unmatched, the nearest named
        let lone = [line(120.0, 20.0, &[(1.0, 0.0), (0.0, 0.0), (0.2, 0.0)])];
        let s = match_levels(&lone, &coarse, &[false; 3], true);
        assert!(matches!(s[0], Step::Unmatched(Some((2, _)))), "{s:?}");
        // a taken coarse line is not matched again
        let s = match_levels(&fine[..1], &coarse, &[true, false, false], true);
        assert!(matches!(s[0], Step::Unmatched(_)), "{s:?}");
        // two equal candidates: ambiguous
        let twin = [
            line(97.0, 20.0, &[(1.0, 0.0), (0.0, 0.0), (0.2, 0.0)]),
            line(103.0, 20.0, &[(1.0, 0.0), (0.0, 0.0), (0.2, 0.0)]),
        ];
        let s = match_levels(&fine[..1], &twin, &[false; 2], true);
        assert!(matches!(s[0], Step::Ambiguous(_, _)), "{s:?}");
    }
}
