//! Where the record did not resolve the lines: the [`Unresolved`] intervals of
//! [`super::extract`] (module docs there, "Unresolved parts of the band"), built from the
//! rejected poles and the other marks one fit leaves.

use super::{Rejection, Settings, Unresolved};
use crate::spectrum::Peak;

/// What marks the band besides the rejected poles: cancelling lines and reported multiplets
/// a longer record would split, each `(f, spread)` (Hz; one bin or twice the spread of a
/// merged line's members either side is marked), saturated windows' keep bands.
pub(super) struct Marks<'a> {
    pub(super) cancelling: &'a [(f64, f64)],
    pub(super) merged: &'a [(f64, f64)],
    pub(super) saturated_bands: &'a [(f64, f64)],
    /// Reported lines that passed only the loose consistency test (their frequencies):
    /// one bin either side is marked.
    pub(super) loose: &'a [f64],
}

/// The [`Unresolved`] intervals: one bin either side of the inconsistent and the growing
/// poles at or above `floor x top` (`top`: the strongest reported line; with none, the
/// strongest such pole) and of the `cancelling` lines, and the keep bands
/// `saturated_bands` of the saturated windows, merged where they touch.
pub(super) fn unresolved(
    rejected: &[(Peak, Rejection)],
    m: &Marks,
    s: &Settings,
    record_s: f64,
    top: f64,
) -> Vec<Unresolved> {
    let bin = 1.0 / record_s;
    let mark = |lo: f64, hi: f64| Unresolved {
        f_lo_hz: lo.max(s.fmin_hz),
        f_hi_hz: hi.min(s.fmax_hz),
        poles: 0,
        amplitude: 0.0,
        bins: 0.0,
        cancelling: 0,
        growing: 0,
        saturated: 0,
        merged: 0,
        loose: 0,
    };
    // (amplitude, mark): the poles that the floor applies to
    let mut poles: Vec<(f64, Unresolved)> = rejected
        .iter()
        .filter_map(|(p, r)| {
            let mut u = mark(p.f_hz - bin, p.f_hz + bin);
            match r {
                Rejection::Inconsistent => {
                    u.poles = 1;
                    // the error estimate is |Δs| / (2π f): back to bins of the record
                    u.bins = p.error.unwrap_or(f64::INFINITY) * p.f_hz * record_s;
                }
                Rejection::Growing => u.growing = 1,
                _ => return None,
            }
            Some((p.amplitude, u))
        })
        .collect();
    let top = if top > 0.0 {
        top
    } else {
        poles.iter().map(|p| p.0).fold(0.0, f64::max)
    };
    if top > 0.0 {
        poles.retain(|p| p.0 >= s.amplitude_floor * top);
    } else {
        poles.clear();
    }
    let mut marks: Vec<Unresolved> = poles
        .into_iter()
        .map(|(a, mut u)| {
            // an inconsistent pole's amplitude is reported, relative to the strongest line
            if u.poles > 0 {
                u.amplitude = a / top;
            }
            u
        })
        .collect();
    marks.extend(m.cancelling.iter().map(|&(f, spread)| {
        let w = bin.max(2.0 * spread);
        Unresolved {
            cancelling: 1,
            ..mark(f - w, f + w)
        }
    }));
    marks.extend(m.merged.iter().map(|&(f, spread)| {
        let w = bin.max(2.0 * spread);
        Unresolved {
            merged: 1,
            ..mark(f - w, f + w)
        }
    }));
    marks.extend(m.saturated_bands.iter().map(|&(lo, hi)| Unresolved {
        saturated: 1,
        ..mark(lo, hi)
    }));
    marks.extend(m.loose.iter().map(|&f| Unresolved {
        loose: 1,
        ..mark(f - bin, f + bin)
    }));
    marks.retain(|u| u.f_lo_hz < u.f_hi_hz);
    marks.sort_by(|a, b| a.f_lo_hz.total_cmp(&b.f_lo_hz));
    let mut out: Vec<Unresolved> = Vec::new();
    for m in marks {
        match out.last_mut() {
            Some(u) if m.f_lo_hz <= u.f_hi_hz => {
                u.f_hi_hz = u.f_hi_hz.max(m.f_hi_hz);
                u.poles += m.poles;
                u.cancelling += m.cancelling;
                u.growing += m.growing;
                u.saturated += m.saturated;
                u.merged += m.merged;
                u.loose += m.loose;
                u.amplitude = u.amplitude.max(m.amplitude);
                u.bins = u.bins.max(m.bins);
            }
            _ => out.push(m),
        }
    }
    out
}
