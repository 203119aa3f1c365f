//! Resonances of a set of probe signals by harmonic inversion: every probe component is
//! band-pass filtered and decimated in frequency windows, and one matrix pencil per window
//! fits all components jointly (they share the poles, the resonances of the cavity).
//!
//! Model: each real signal `x_c(t) = Σ_k A_ck exp(-α_k t) cos(2π f_k t + φ_ck)`, t = 0 at
//! its first sample, plus noise. A line is reported once however many components see it;
//! the two members of a mesh-split doublet are two poles, so two lines — unless they lie
//! closer than the lines are wide (their decay rate, or one Fourier bin), where no record
//! separates them: such a multiplet is one line, with its member count and spread
//! ([`multiplet`], step 4 below).
//!
//! Per window (keep band `[lo, hi)`, centre `f_c` on the FFT grid):
//! 1. Filter and decimate in the frequency domain: the FFT of the whole record is multiplied
//!    by the DFT of a centred Kaiser-windowed sinc low-pass `h` (length `L_h`, stopband
//!    below -240 dB, i.e. 1e-12 of the passband), shifted to `f_c`; only the `B` bins around
//!    `f_c` where `|H|` exceeds the stopband are kept and inverse-transformed. This is the
//!    linear convolution `h * x`, heterodyned by `f_c` and sampled every `N Δt / B`, except
//!    within `L_h / 2` samples of either end of the record, which are discarded. A filter
//!    maps `exp(s t)` to `G(s) exp(s t)` (`G(s) = Σ_j h_j exp(-s j Δt)`), so poles are
//!    unchanged and amplitudes are divided by `G`.
//! 2. Joint pencil (Hua & Sarkar 1990, several channels): the Hankel matrices
//!    `H_c[i][j] = y_c[i + j]` (j = 0..L) of all components are stacked; their common row
//!    space is spanned by `[1, z, ..., z^L]` of the poles `z`. Order `m` = singular values
//!    above `max(1e-13 σ_1, 8 σ_noise)` (`σ_noise`: the singular value at 90% of the list);
//!    poles = eigenvalues of `W_1⁺ W_2` (the top-`m` right singular vectors without their
//!    last / first row); complex amplitudes per component by least squares.
//! 3. The fit is repeated with a second pencil parameter (`L_1 = Nd min(C/(C+1), 0.8)` for C
//!    signals, then `L_2 = 0.9 L_1`: close enough that both fits can hold as many poles); a
//!    pole's error is the distance `|Δs|` (1/s) to the nearest pole of the second fit. Noise
//!    poles move between the fits; poles of the signal do not.
//!
//! 4. Multiplets: poles within a line width (`max(α, 2π/T)`) of a pole whose amplitudes
//!    cancel (next list, [`Rejection::Cancelling`]) are merged into one pole, the
//!    least-squares one-pole model of their joint signal, in both fits alike; the
//!    amplitudes are refitted ([`multiplet`] module docs). A merged line that still cancels
//!    is rejected as below.
//!
//! A line is reported when (in this order; [`Rejection`] names the first test it fails):
//! - its two fits agree to `max_bin_error` Fourier bins: `|Δs| T / (2π) <= max_bin_error`
//!   (`T = N Δt`, the record length; default 1e-3), or, for a line whose decay is resolved,
//!   to a fraction `max_decay_error` of its decay rate: `|Δs| <= max_decay_error α`
//!   (default 0.02: Q known to about 2%). The second test is for broad lines: a Q of a few
//!   units (a radiating resonator) decays within a few periods, so its pole is fitted from a
//!   short stretch of the record and moves between the fits by far more than a thousandth
//!   of a bin while being known far more precisely than its width. Noise poles move by a
//!   large fraction of their decay rate. The second test holds only for a line that has
//!   decayed by at most [`MAX_DECAY_BEFORE_FIT`] e-folds before the first fitted sample
//!   (the filter's half-length after the record's start). A broad line that fails both is
//!   still reported when its fits agree to `loose_decay_error` of its decay rate (default
//!   0.1) and it is clear: its magnitude at the first fitted sample is at least
//!   `loose_amplitude` (0.25) times the strongest line's (the lines passing every test but
//!   the floor, and these). The
//!   disagreement of a broad line's fits is model error, not noise: it sits on a
//!   background of a layer's heavily damped modes, and the few periods before it has
//!   decayed hold more exponentials than the pencil resolves. On the TM₁₁ eighth of an
//!   ε_r = 10 sphere with the PML (Q 3.9) it was 2.9% and 5.3% on two meshes of 5 shells
//!   (with and without the sphere refined; TM₁₂ beside it: 6.3% and 9.3%), while the other
//!   poles of those records moved by 54% to 9 times their decay rate. The amplitude
//!   condition keeps out broad poles of the background that a loose fit also admits: on
//!   a subset of the same record's components one at 726 MHz, Q 7 (no Mie mode of the class
//!   near) came out at 7.6% and 0.11 of TM₁₁'s amplitude; TM₁₂ stands at 0.78. Such a
//!   line's neighbourhood is marked ([`Unresolved::loose`]);
//! - it does not grow: `α >= -(3 |Δs| + 1e-3 / T)` (a leapfrog or any passive run has no
//!   growing mode; a growing pole is an artefact). Decays with `|α| <= 3 |Δs| + 1e-3 / T` are
//!   not resolved by the record: their Q is reported as `+inf`, otherwise `Q = π f / α`;
//! - `Q >= min_q`;
//! - its amplitude (the largest cosine amplitude `A_ck` over the components) is at least
//!   `amplitude_floor` times that of the strongest line passing the tests above
//!   (default 1e-4: the stated floor).
//!
//! **Unresolved parts of the band.** Four signs (and the loose lines above) that a record did not separate the lines
//! somewhere, and that a line may be missing there, are not dropped silently: the band within
//! one Fourier bin `1/T` of each (the whole keep band of a saturated window) is returned as
//! [`Unresolved`] (neighbouring intervals merged).
//! - A pole that fails only the consistency test while its amplitude is at or above the
//!   floor is not reported. That is where a record too short for the local density of lines
//!   leaves lines unfitted: on the sweep of `results/extraction/` (random boxes, cylinders
//!   and balls of 162–384 tets, 1 000 to 20 000 steps, dense K as the truth) every line the
//!   extraction missed lay within one bin of such a pole, and no such pole occurred in an f64
//!   record where nothing was missed.
//! - A line whose fitted amplitudes cancel: its magnitude at the first fitted sample
//!   exceeds `max_amplitude_excess` (default [`CANCELLING`] = 10) times the largest
//!   magnitude of the filtered window signal in some component. A line cannot be larger than
//!   the signal it is part of unless a neighbour cancels it, which happens when poles lie
//!   far closer than `1/T`: on meshes of 1.5k–13k tets in the band the resonator job defaults
//!   to (the `--larger` sweep), the members of a mesh-split multiplet a thousandth of a bin
//!   apart came out as one pole between them plus neighbours of 36 to 1600 times the
//!   signal's magnitude, and the missing member was flagged by nothing else. Both fits agree
//!   on such poles, but they are not the lines (the merged pole lies between its members),
//!   so they are not reported as they stand: their cluster is merged into one line
//!   (step 4), and only a line that cancels after that is rejected
//!   ([`Rejection::Cancelling`]) and its neighbourhood flagged.
//!   Lines of resolved records stayed below 5 times the signal (close pairs a few hundredths
//!   of a bin apart reach 4).
//! - A pole at or above the floor that grows ([`Rejection::Growing`]): no line of a passive
//!   run grows, so the fit does not model the signal there. In f32 records a line next to a
//!   close neighbour came out so, and nothing else marked it.
//! - A saturated window (its pencil order reached three quarters of its capacity even with
//!   the largest window tried): the window holds more exponentials than the record can fit,
//!   the lines above the band in the filter's transition included, and a multiplet whose
//!   members lie a thousandth of a bin apart can come out as one clean pole at their
//!   amplitude-weighted mean, which both fits agree on and nothing else reveals. Its whole
//!   keep band is marked. This is conservative: such a window often resolves every line in
//!   it (records of 1 000-2 000 steps, whose single window spans the band).
//!
//! With all four, no missed line lay outside every interval on the sweeps of
//! `results/extraction/` (before the last two, one in 106 in f64 and four in 130 in f32 on
//! the `--larger` sweep did). The resonator job prints the intervals as a warning and writes
//! them to `unresolved.csv`.
//!
//! Bounded work: the record is cut into at most [`MAX_WINDOWS`] windows of at most about
//! [`ND_MAX`] decimated samples; every SVD and Schur decomposition has an iteration limit
//! (a window whose decomposition does not converge reports nothing); records shorter than
//! [`MIN_SAMPLES`] samples, or without any nonzero sample, give no lines, nor do windows
//! whose content is below [`ABS_FLOOR`] of the largest sample (round-off of a constant). Signals are
//! divided by their largest magnitude first (denormal input is harmless). Nothing here
//! depends on the thread count: windows and components are computed independently and
//! combined in a fixed order.

mod multiplet;
mod plan;
mod unresolved;

use super::Peak;
use crate::error::{Error, Result};
use nalgebra::DMatrix;
use plan::{Plan, Window, decimate};
use rayon::prelude::*;
use rustfft::{FftPlanner, num_complex::Complex};
use std::f64::consts::PI;
use unresolved::{Marks, unresolved};

type C64 = Complex<f64>;

/// Records shorter than this give no lines.
pub const MIN_SAMPLES: usize = 64;
/// Target number of decimated samples per window (the pencil costs O(C Nd³)).
pub const ND_MAX: usize = 96;
/// Upper bound on the number of windows.
pub const MAX_WINDOWS: usize = 4096;
/// Lines weaker than this fraction of the largest sample of all signals are not fitted.
pub const ABS_FLOOR: f64 = 1e-12;
/// A broad line passes the test relative to its decay rate only if it had decayed by at most
/// this many e-folds before the first fitted sample (e⁴ ≈ 55): a pole fitted to a tail it
/// extrapolates back by more is not known, and its extrapolated amplitude would sink the
/// real lines below the amplitude floor.
const MAX_DECAY_BEFORE_FIT: f64 = 4.0;
/// Stopband attenuation of the decimation filter, dB (1e-12).
const STOP_DB: f64 = 240.0;
/// A line whose magnitude at the first fitted sample exceeds this many times the largest
/// magnitude of its filtered window signal (in some component) is fitted with amplitudes
/// that cancel against a neighbour's (module docs, "Unresolved parts of the band").
pub const CANCELLING: f64 = 10.0;

/// What to extract.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Band, Hz: lines with `fmin_hz <= f < fmax_hz` are reported.
    pub fmin_hz: f64,
    pub fmax_hz: f64,
    /// Lines weaker than this fraction of the strongest line are dropped (default 1e-4).
    pub amplitude_floor: f64,
    /// Lines with a lower quality factor are dropped (default 0: none).
    pub min_q: f64,
    /// Largest disagreement of the two fits, in Fourier bins `1/T` (default 1e-3).
    pub max_bin_error: f64,
    /// ... or, for a line whose decay is resolved, as a fraction of its decay rate
    /// (default 0.02).
    pub max_decay_error: f64,
    /// A broad line that fails both tests above is still reported when its two fits agree
    /// to this fraction of its decay rate (default 0.1: Q known to about 10%) and it is a
    /// clear line: its magnitude at the first fitted sample is at least `loose_amplitude`
    /// times that of the strongest line of the band (default 0.25). Its neighbourhood is marked
    /// ([`Unresolved::loose`]; module docs).
    pub loose_decay_error: f64,
    pub loose_amplitude: f64,
    /// Drop lines that grow beyond their uncertainty (default true).
    pub drop_growing: bool,
    /// A line whose magnitude at the first fitted sample exceeds this many times the
    /// largest magnitude of its filtered window signal is not reported and marks its
    /// neighbourhood as unresolved (default [`CANCELLING`]; module docs).
    pub max_amplitude_excess: f64,
}

impl Settings {
    /// The band `[fmin_hz, fmax_hz)` with the default tests.
    pub fn band(fmin_hz: f64, fmax_hz: f64) -> Self {
        Settings {
            fmin_hz,
            fmax_hz,
            amplitude_floor: 1e-4,
            min_q: 0.0,
            max_bin_error: 1e-3,
            max_decay_error: 0.02,
            loose_decay_error: 0.1,
            loose_amplitude: 0.25,
            drop_growing: true,
            max_amplitude_excess: CANCELLING,
        }
    }
}

/// Why a fitted pole in the band was not reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The two fits disagree by more than `max_bin_error` bins (and, for a decaying line,
    /// by more than `max_decay_error` of its decay rate).
    Inconsistent,
    /// It grows faster than its uncertainty allows.
    Growing,
    /// Its quality factor is below `min_q`.
    LowQ,
    /// Its amplitude is below the floor.
    BelowFloor,
    /// Its fitted amplitudes cancel against a neighbour's: the record does not separate it
    /// from another line (module docs, "Unresolved parts of the band").
    Cancelling,
}

/// A part of the band where the record did not resolve the lines (module docs): poles at
/// or above the amplitude floor whose two fits disagreed, or reported lines whose fitted
/// amplitudes cancel.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Unresolved {
    /// The interval, Hz: one Fourier bin `1/T` either side of its poles, within the band.
    pub f_lo_hz: f64,
    pub f_hi_hz: f64,
    /// Unreported poles in it (inconsistent fits).
    pub poles: usize,
    /// The largest of their amplitudes relative to the strongest reported line (0 when it
    /// holds only cancelling lines).
    pub amplitude: f64,
    /// The largest disagreement of their two fits, in Fourier bins.
    pub bins: f64,
    /// Unreported lines in it whose fitted amplitudes cancel ([`Rejection::Cancelling`]):
    /// the record did not separate them from a neighbour.
    pub cancelling: usize,
    /// Unreported poles in it at or above the amplitude floor that grow
    /// ([`Rejection::Growing`]): no line of a passive run grows, so the fit does not model
    /// the signal there.
    pub growing: usize,
    /// Windows whose keep band it covers and whose pencils were saturated (filled to three
    /// quarters of their capacity with the largest window tried): the record holds more
    /// lines there than it can fit, and close lines come out merged.
    pub saturated: usize,
    /// Reported lines in it that stand for a multiplet whose members lie closer than one
    /// Fourier bin but not well within their own width (spread above a quarter of the decay
    /// rate): a longer record would separate them, so members are missing here. A broad
    /// multiplet, whose spread is well within its width, is not marked: no record
    /// separates it.
    pub merged: usize,
    /// Reported broad lines in it whose two fits agree only to `loose_decay_error` of
    /// their decay rate, not to `max_decay_error`: clear lines, but the fit does not model
    /// the signal there exactly, so their Q is known only to about that fraction (their
    /// `error` holds the disagreement) and a weaker line nearby may be missing.
    pub loose: usize,
}

/// The result of [`extract`].
#[derive(Clone, Debug, Default)]
pub struct Extraction {
    /// Reported lines, by ascending frequency.
    pub peaks: Vec<Peak>,
    /// Poles in the band that were not reported, with the first test they failed.
    pub rejected: Vec<(Peak, Rejection)>,
    /// Where lines may be missing: intervals around the [`Rejection::Inconsistent`] poles
    /// at or above the amplitude floor and around the [`Rejection::Cancelling`] lines, by
    /// ascending frequency.
    pub unresolved: Vec<Unresolved>,
    /// Windows the band was cut into and decimated samples per window (0 when the record
    /// was too short or silent).
    pub windows: usize,
    pub samples_per_window: usize,
    /// Windows whose pencils were filled to three quarters of their capacity even with the
    /// largest window tried: lines there may be missed (too many lines for the record).
    pub saturated_windows: usize,
    /// Record length `N Δt`, s.
    pub record_s: f64,
}

/// Lines of `signals` (equally long, sampled every `dt_s` seconds) per [`Settings`].
/// The entry point for the resonator pipeline.
pub fn resonances(signals: &[Vec<f64>], dt_s: f64, s: &Settings) -> Result<Vec<Peak>> {
    extract(signals, dt_s, s).map(|e| e.peaks)
}

/// [`resonances`] with the rejected poles and the window plan.
pub fn extract(signals: &[Vec<f64>], dt_s: f64, s: &Settings) -> Result<Extraction> {
    check(signals, dt_s, s)?;
    let n = signals.first().map(|x| x.len()).unwrap_or(0);
    let record_s = n as f64 * dt_s;
    let empty = Extraction {
        record_s,
        ..Default::default()
    };
    if n < MIN_SAMPLES {
        return Ok(empty);
    }
    let scale = signals
        .iter()
        .flat_map(|x| x.iter())
        .fold(0.0f64, |a, v| a.max(v.abs()));
    if !(scale > 0.0) {
        return Ok(empty);
    }
    // Spectra of the scaled signals (division, not a reciprocal: denormal scales are fine).
    let mut planner = FftPlanner::<f64>::new();
    let fwd = planner.plan_fft_forward(n);
    let spectra: Vec<Vec<C64>> = signals
        .par_iter()
        .map(|x| {
            let mut b: Vec<C64> = x.iter().map(|&v| C64::new(v / scale, 0.0)).collect();
            fwd.process(&mut b);
            b
        })
        .collect();
    // Windows of about ND_MAX decimated samples; where a window holds about as many lines
    // as its pencil can fit (dense spectra, short records), the plan is redone with twice,
    // then four times as many samples per window (wider windows: filters take less of the
    // record and each pencil fits more poles).
    let mut result = None;
    for nd_max in [ND_MAX, 2 * ND_MAX, 4 * ND_MAX] {
        let Some(plan) = Plan::new(n, dt_s, s.fmin_hz, s.fmax_hz, nd_max) else {
            break;
        };
        if let Some((ref p, _, _)) = result
            && plan_eq(p, &plan)
        {
            break;
        }
        let inv = planner.plan_fft_inverse(plan.b);
        let raw: Vec<Fitted> = plan
            .windows
            .par_iter()
            .enumerate()
            .map(|(iw, w)| fit_window(&plan, iw, w, &spectra, inv.as_ref(), s))
            .collect();
        let saturated = raw.iter().filter(|r| r.saturated).count();
        let done = saturated == 0;
        result = Some((plan, raw, saturated));
        if done {
            break;
        }
    }
    let Some((plan, raw, saturated)) = result else {
        return Ok(empty);
    };
    let saturated_bands: Vec<(f64, f64)> = (raw.iter().zip(&plan.windows))
        .filter(|(r, _)| r.saturated)
        .map(|(_, w)| (w.lo, w.hi))
        .collect();
    let mut lines: Vec<Line> = raw.into_iter().flat_map(|r| r.lines).collect();
    lines.sort_by(|a, b| a.f.total_cmp(&b.f));
    // The keep bands of neighbouring windows overlap slightly so that no line falls between
    // them; a line seen by two windows is kept once, from the fit with the smaller error.
    let mut merged: Vec<Line> = Vec::with_capacity(lines.len());
    for l in lines {
        if let Some(last) = merged.last_mut()
            && last.window != l.window
            && (l.f - last.f).abs() * record_s <= s.max_bin_error
        {
            if l.err_s < last.err_s {
                *last = l;
            }
            continue;
        }
        merged.push(l);
    }
    let mut out = Extraction {
        record_s,
        windows: plan.windows.len(),
        samples_per_window: plan.nd(),
        saturated_windows: saturated,
        ..Default::default()
    };
    // (peak, whether its amplitudes cancel: see CANCELLING)
    let mut kept: Vec<(Peak, bool)> = Vec::new();
    // the spread (Hz) of the members of each merged line, by its frequency
    let mut spans: Vec<(f64, f64)> = Vec::new();
    // broad lines that pass only the loose consistency test (Settings::loose_decay_error)
    let mut loose: Vec<Peak> = Vec::new();
    for l in merged {
        if !(l.f >= s.fmin_hz && l.f < s.fmax_hz) {
            continue;
        }
        if l.members > 1 {
            spans.push((l.f, l.spread_s / (2.0 * PI)));
        }
        let (q, why, loosely) = l.judge(s, record_s, plan.t0());
        let peak = l.peak(q, scale);
        let cancels = l.excess > s.max_amplitude_excess;
        match why {
            Some(Rejection::Inconsistent) if loosely && q >= s.min_q && !cancels => {
                loose.push(peak)
            }
            Some(r) => out.rejected.push((peak, r)),
            None => kept.push((peak, cancels)),
        }
    }
    // A loosely consistent line is reported when it is clear: at least `loose_amplitude`
    // times the strongest line whose amplitudes do not cancel, itself included, each line's
    // magnitude taken at the first fitted sample (a broad pole's amplitude at the record's
    // start is an extrapolation, by up to MAX_DECAY_BEFORE_FIT e-folds).
    let t0 = plan.t0();
    let fitted = |p: &Peak| p.amplitude * (-p.decay_per_s.unwrap_or(0.0).max(0.0) * t0).exp();
    let clear = (kept.iter().filter(|k| !k.1).map(|k| &k.0))
        .chain(&loose)
        .map(fitted)
        .fold(0.0, f64::max);
    let mut loose_f: Vec<f64> = Vec::new();
    for p in loose {
        if fitted(&p) >= s.loose_amplitude * clear {
            loose_f.push(p.f_hz);
            kept.push((p, false));
        } else {
            out.rejected.push((p, Rejection::Inconsistent));
        }
    }
    kept.sort_by(|a, b| a.0.f_hz.total_cmp(&b.0.f_hz));
    out.rejected.sort_by(|a, b| a.0.f_hz.total_cmp(&b.0.f_hz));
    // The floor refers to the strongest line whose amplitude is known.
    let top = kept
        .iter()
        .filter(|k| !k.1)
        .map(|k| k.0.amplitude)
        .fold(0.0, f64::max);
    let top = if top > 0.0 {
        top
    } else {
        kept.iter().map(|k| k.0.amplitude).fold(0.0, f64::max)
    };
    for (p, c) in kept {
        if c {
            out.rejected.push((p, Rejection::Cancelling));
        } else if p.amplitude >= s.amplitude_floor * top {
            out.peaks.push(p);
        } else {
            out.rejected.push((p, Rejection::BelowFloor));
        }
    }
    let spread_of = |f: f64| spans.iter().find(|x| x.0 == f).map_or(0.0, |x| x.1);
    // (f, spread in Hz): a merged line that still cancels marks its members' span too
    let cancelling: Vec<(f64, f64)> = (out.rejected.iter())
        .filter(|(_, r)| *r == Rejection::Cancelling)
        .map(|(p, _)| (p.f_hz, spread_of(p.f_hz)))
        .collect();
    // Merged multiplets whose members a longer record would split (reported lines whose
    // spread is not well within their width), and merged lines above the floor that failed
    // the consistency or growth test: their members' span is where lines may be missing.
    let merged: Vec<(f64, f64)> = (out.peaks.iter())
        .filter(|p| {
            let sp = 2.0 * PI * spread_of(p.f_hz);
            p.members > 1 && 4.0 * sp > p.decay_per_s.unwrap_or(0.0).max(0.0)
        })
        .chain(out.rejected.iter().filter_map(|(p, r)| {
            let failed = matches!(r, Rejection::Inconsistent | Rejection::Growing);
            (failed && p.members > 1 && p.amplitude >= s.amplitude_floor * top).then_some(p)
        }))
        .map(|p| (p.f_hz, spread_of(p.f_hz)))
        .collect();
    out.unresolved = unresolved(
        &out.rejected,
        &Marks {
            cancelling: &cancelling,
            merged: &merged,
            saturated_bands: &saturated_bands,
            loose: &loose_f,
        },
        s,
        record_s,
        top,
    );
    // n_signals: components seeing the line above the floor.
    for p in out.peaks.iter_mut() {
        p.n_signals = p
            .amplitudes
            .iter()
            .filter(|&&a| a >= s.amplitude_floor * top)
            .count();
    }
    Ok(out)
}

fn plan_eq(a: &Plan, b: &Plan) -> bool {
    a.b == b.b && a.windows.len() == b.windows.len() && a.m_lo == b.m_lo && a.m_hi == b.m_hi
}

fn check(signals: &[Vec<f64>], dt_s: f64, s: &Settings) -> Result<()> {
    if !(dt_s > 0.0 && dt_s.is_finite()) {
        return Err(Error::config(
            "dt",
            dt_s,
            "must be a positive number of seconds",
        ));
    }
    let nyq = 0.5 / dt_s;
    if !(s.fmin_hz >= 0.0 && s.fmax_hz > s.fmin_hz && s.fmax_hz <= nyq) {
        return Err(Error::config(
            "band",
            format!("{:e}-{:e} Hz", s.fmin_hz, s.fmax_hz),
            format!("needs 0 <= fmin < fmax <= the Nyquist frequency {nyq:e} Hz"),
        ));
    }
    for (name, v) in [
        ("amplitude floor", s.amplitude_floor),
        ("min-q", s.min_q),
        ("max bin error", s.max_bin_error),
        ("max decay error", s.max_decay_error),
        ("loose decay error", s.loose_decay_error),
        ("loose amplitude", s.loose_amplitude),
    ] {
        if !(v >= 0.0) {
            return Err(Error::config(name, v, "must be a number >= 0"));
        }
    }
    let n = signals.first().map(|x| x.len()).unwrap_or(0);
    for (i, x) in signals.iter().enumerate() {
        if x.len() != n {
            return Err(Error::config(
                "signal",
                i,
                format!("has {} samples, signal 0 has {n}", x.len()),
            ));
        }
        if let Some(k) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::config(
                "signal",
                i,
                format!("sample {k} is {} (not finite)", x[k]),
            ));
        }
    }
    Ok(())
}

/// A fitted pole with its amplitudes in every component.
#[derive(Clone, Debug)]
struct Line {
    window: usize,
    f: f64,
    decay: f64,
    /// |Δs| between the two fits, 1/s.
    err_s: f64,
    /// Complex amplitude `a_c` of `exp(s t)` in each (scaled) component at t = 0.
    amps: Vec<C64>,
    /// The largest over the components of the line's magnitude at the first fitted sample
    /// over the largest magnitude of that component's filtered window signal.
    excess: f64,
    /// Poles merged into this line (1: a single pole; `multiplet` module docs) and their
    /// largest distance to it, 1/s.
    members: usize,
    spread_s: f64,
}

impl Line {
    /// The line's Q (`+inf` when the record does not resolve its decay) and the first test
    /// of the module docs it fails, if any (all but the amplitude floor).
    /// `t0`: time from the record's first sample to the first fitted one ([`Plan::t0`]).
    /// The third value: the line fails the consistency tests but passes the loose one
    /// (`loose_decay_error`; the caller applies the amplitude condition).
    fn judge(&self, s: &Settings, record_s: f64, t0: f64) -> (f64, Option<Rejection>, bool) {
        let zero = 3.0 * self.err_s + 1e-3 / record_s;
        let resolved_decay = self.decay.abs() > zero;
        let q = if resolved_decay && self.decay > 0.0 {
            PI * self.f / self.decay
        } else {
            f64::INFINITY
        };
        let broad = resolved_decay && self.decay > 0.0 && self.decay * t0 <= MAX_DECAY_BEFORE_FIT;
        let consistent = self.err_s * record_s / (2.0 * PI) <= s.max_bin_error
            || (broad && self.err_s <= s.max_decay_error * self.decay);
        let loose = !consistent && broad && self.err_s <= s.loose_decay_error * self.decay;
        let why = if !consistent {
            Some(Rejection::Inconsistent)
        } else if s.drop_growing && resolved_decay && self.decay < 0.0 {
            Some(Rejection::Growing)
        } else if q < s.min_q {
            Some(Rejection::LowQ)
        } else {
            None
        };
        (q, why, loose)
    }

    fn peak(&self, q: f64, scale: f64) -> Peak {
        let amplitudes: Vec<f64> = self.amps.iter().map(|a| 2.0 * a.norm() * scale).collect();
        let phases: Vec<f64> = self.amps.iter().map(|a| a.arg()).collect();
        let best = (0..amplitudes.len())
            .max_by(|&i, &j| amplitudes[i].total_cmp(&amplitudes[j]))
            .unwrap_or(0);
        Peak {
            f_hz: self.f,
            amplitude: amplitudes.get(best).copied().unwrap_or(0.0),
            prominence: None,
            decay_per_s: Some(self.decay),
            q: Some(q),
            phase: phases.get(best).copied(),
            error: Some(
                self.err_s.max(self.spread_s) / (2.0 * PI * self.f.abs().max(f64::MIN_POSITIVE)),
            ),
            n_signals: 0,
            members: self.members,
            amplitudes,
            phases,
        }
    }
}

/// Poles of the stacked Hankel matrices of `ys` with pencil parameter `l`, and whether the
/// order reached three quarters of the pencil's capacity `l - 1` (the window holds about as
/// many lines as it can fit: a longer decimated record is needed).
fn pencil_poles(ys: &[Vec<C64>], l: usize) -> Option<(Vec<C64>, bool)> {
    let nd = ys[0].len();
    if l < 2 || l + 2 > nd {
        return None;
    }
    let rows = nd - l;
    let c = ys.len();
    let hs = DMatrix::from_fn(c * rows, l + 1, |i, j| ys[i / rows][i % rows + j]);
    // Reduce to a square triangle first (same right singular vectors).
    let r = if c * rows > l + 1 { hs.qr().r() } else { hs };
    let cols = r.ncols();
    let svd = nalgebra::linalg::SVD::try_new(r, false, true, 1e-15, 200 * cols + 1000)?;
    let vt = svd.v_t?;
    let sv = &svd.singular_values;
    let s1 = sv.max();
    if !(s1 > 0.0) {
        return None;
    }
    let k = sv.len();
    let floor = sv[((9 * k) / 10).min(k - 1)];
    // Signals are scaled to a largest sample of 1: a line of amplitude a gives singular
    // values ~ a sqrt(rows cols) / 2, so `ABS_FLOOR` keeps round-off (~1e-16) out.
    let abs = ABS_FLOOR * ((c * rows) as f64 * (l + 1) as f64).sqrt();
    let thr = (1e-13 * s1).max(8.0 * floor).max(abs);
    if !(s1 > thr) {
        return Some((vec![], false));
    }
    let m = sv.iter().filter(|&&v| v > thr).count().clamp(1, l - 1);
    let saturated = 4 * m >= 3 * (l - 1);
    // Columns of conj(V_m) contain the vectors [1, z, ..., z^L] of the poles.
    let w = vt.rows(0, m).transpose();
    let w1 = w.rows(0, l).into_owned();
    let w2 = w.rows(1, l).into_owned();
    let qr = w1.qr();
    let phi = qr.r().solve_upper_triangular(&(qr.q().adjoint() * w2))?;
    let schur = nalgebra::linalg::Schur::try_new(phi, 1e-15, 200 * m + 1000)?;
    let z: Vec<C64> = schur.eigenvalues()?.iter().cloned().collect();
    let z = z
        .into_iter()
        .filter(|z| z.norm() > 0.0 && z.is_finite())
        .collect();
    Some((z, saturated))
}

/// Least-squares complex amplitudes of the poles `z` in every signal, referred to sample 0.
fn amplitudes(ys: &[Vec<C64>], z: &[C64]) -> Option<Vec<Vec<C64>>> {
    let nd = ys[0].len();
    // Columns scaled to unit largest magnitude (z^0 or z^(nd-1)).
    let colscale: Vec<f64> = z
        .iter()
        .map(|zi| {
            if zi.norm() > 1.0 {
                zi.norm().powi(nd as i32 - 1)
            } else {
                1.0
            }
        })
        .collect();
    if colscale.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let v = DMatrix::from_fn(nd, z.len(), |k, i| z[i].powu(k as u32) / colscale[i]);
    let rhs = DMatrix::from_fn(nd, ys.len(), |k, c| ys[c][k]);
    // Least squares by Householder QR (direct, no iteration): the poles passed here are
    // the ones both fits agree on, so the columns are far from dependent.
    let qr = v.qr();
    let sol = qr.r().solve_upper_triangular(&(qr.q().adjoint() * rhs))?;
    if sol.iter().any(|v| !v.is_finite()) {
        return None;
    }
    Some(
        (0..ys.len())
            .map(|c| (0..z.len()).map(|i| sol[(i, c)] / colscale[i]).collect())
            .collect(),
    )
}

fn fit_window(
    plan: &Plan,
    iw: usize,
    w: &Window,
    spectra: &[Vec<C64>],
    inv: &dyn rustfft::Fft<f64>,
    s: &Settings,
) -> Fitted {
    let max_bin_error = s.max_bin_error;
    let ys: Vec<Vec<C64>> = spectra.iter().map(|x| decimate(plan, w, x, inv)).collect();
    let nd = ys[0].len();
    let dtd = plan.dtd();
    let fc = w.kc as f64 / (plan.n as f64 * plan.dt);
    let t0 = plan.t0();
    let to_s = |z: C64| z.ln() / dtd + C64::new(0.0, 2.0 * PI * fc);
    // Pencil parameters: with C signals stacked, C (Nd - L) rows must exceed L columns.
    let c = ys.len() as f64;
    let l1 = (nd as f64 * (c / (c + 1.0)).min(0.8)).round() as usize;
    let l2 = (0.9 * l1 as f64).round() as usize;
    let (Some((z1, sat1)), Some((z2, sat2))) = (pencil_poles(&ys, l1), pencil_poles(&ys, l2))
    else {
        return Fitted::default();
    };
    let saturated = sat1 || sat2;
    let s2: Vec<C64> = z2.iter().map(|&z| to_s(z)).collect();
    // Every pole of the first fit with its distance to the second fit.
    let poles: Vec<(C64, C64, f64)> = z1
        .iter()
        .map(|&z| {
            let s = to_s(z);
            let err_s = s2
                .iter()
                .map(|t| (t - s).norm())
                .fold(f64::INFINITY, f64::min);
            (z, s, err_s)
        })
        .collect();
    // Amplitudes from the poles both fits agree on (noise poles, which the fits place
    // differently, would make the least-squares problem ill-conditioned), plus those in
    // the keep band.
    let record_s = plan.n as f64 * plan.dt;
    let basis: Vec<usize> = (0..poles.len())
        .filter(|&i| {
            let f = poles[i].1.im / (2.0 * PI);
            poles[i].2 * record_s / (2.0 * PI) <= max_bin_error || (f >= w.lo && f < w.hi)
        })
        .collect();
    let zb: Vec<C64> = basis.iter().map(|&i| poles[i].0).collect();
    let Some(amps) = amplitudes(&ys, &zb) else {
        return Fitted {
            saturated,
            ..Default::default()
        };
    };
    let ymax: Vec<f64> = ys
        .iter()
        .map(|y| y.iter().map(|v| v.norm()).fold(0.0, f64::max))
        .collect();
    let excess_of = |amps: &[Vec<C64>], k: usize| -> f64 {
        amps.iter()
            .zip(&ymax)
            .map(|(ac, &m)| ac[k].norm() / m.max(f64::MIN_POSITIVE))
            .fold(0.0, f64::max)
    };
    let cancelling = |amps: &[Vec<C64>]| -> Vec<bool> {
        (0..amps.first().map_or(0, |a| a.len()))
            .map(|k| excess_of(amps, k) > s.max_amplitude_excess)
            .collect()
    };
    // Multiplets the record does not separate: clusters around cancelling poles become
    // one pole each (`multiplet` module docs), in both fits alike. Eligible: poles that
    // both fits place within their width (or one bin).
    let bin_s = 2.0 * PI / record_s;
    let width = |x: C64| (-x.re).max(0.0).max(bin_s);
    let from_s = |x: C64| ((x - C64::new(0.0, 2.0 * PI * fc)) * dtd).exp();
    let sb: Vec<C64> = zb.iter().map(|&z| to_s(z)).collect();
    let eligible: Vec<bool> = (basis.iter().zip(&sb))
        .map(|(&i, &x)| poles[i].2 <= width(x))
        .collect();
    let mut m1 = multiplet::merge(&sb, &cancelling(&amps), &eligible);
    // The merged poles' refitted amplitudes; where a merged line still cancels, the window
    // keeps its unmerged poles (the members that do not cancel are reported as before).
    let refit = (m1.members.iter().any(|&m| m > 1))
        .then(|| {
            let z: Vec<C64> = m1.s.iter().map(|&x| from_s(x)).collect();
            let a = amplitudes(&ys, &z)?;
            let cancels = cancelling(&a);
            let ok = (0..z.len()).all(|k| m1.members[k] == 1 || !cancels[k]);
            ok.then_some((z, a))
        })
        .flatten();
    if refit.is_none() {
        m1 = multiplet::merge(&sb, &vec![false; sb.len()], &eligible);
    }
    let (zb, amps, err_s) = match refit {
        None => {
            let err: Vec<f64> = basis.iter().map(|&i| poles[i].2).collect();
            (zb, amps, err)
        }
        Some((z, amps)) => {
            // the second fit, with the same basis rule and the same merging
            let near1 = |t: C64| {
                (poles.iter())
                    .map(|p| (p.1 - t).norm())
                    .fold(f64::INFINITY, f64::min)
            };
            let basis2: Vec<usize> = (0..s2.len())
                .filter(|&j| {
                    let f = s2[j].im / (2.0 * PI);
                    near1(s2[j]) * record_s / (2.0 * PI) <= max_bin_error || (f >= w.lo && f < w.hi)
                })
                .collect();
            let zb2: Vec<C64> = basis2.iter().map(|&j| z2[j]).collect();
            let merged2: Vec<C64> = match amplitudes(&ys, &zb2) {
                Some(a2) => {
                    let sb2: Vec<C64> = basis2.iter().map(|&j| s2[j]).collect();
                    let el2: Vec<bool> = sb2.iter().map(|&x| near1(x) <= width(x)).collect();
                    let m2 = multiplet::merge(&sb2, &cancelling(&a2), &el2);
                    (m2.s.iter().zip(&m2.members))
                        .filter(|(_, m)| **m > 1)
                        .map(|(&x, _)| x)
                        .collect()
                }
                None => Vec::new(),
            };
            let nearest = |x: C64, set: &mut dyn Iterator<Item = C64>| -> f64 {
                set.map(|t| (t - x).norm()).fold(f64::INFINITY, f64::min)
            };
            let err: Vec<f64> = (m1.s.iter().zip(&m1.members))
                .map(|(&x, &m)| {
                    if m > 1 {
                        nearest(x, &mut merged2.iter().copied())
                    } else {
                        nearest(x, &mut s2.iter().copied().chain(merged2.iter().copied()))
                    }
                })
                .collect();
            (z, amps, err)
        }
    };
    let mut out = Vec::new();
    for (bi, &z) in zb.iter().enumerate() {
        let s = to_s(z);
        let f = s.im / (2.0 * PI);
        if !(f >= w.lo && f < w.hi) {
            continue;
        }
        let rel = s - C64::new(0.0, 2.0 * PI * fc);
        let g = plan.gain(rel);
        let back = (-rel * t0).exp();
        let a: Vec<C64> = amps.iter().map(|ac| ac[bi] * back / g).collect();
        let (members, spread_s) = (m1.members[bi], m1.spread_s[bi]);
        out.push(Line {
            window: iw,
            f,
            decay: -s.re,
            err_s: err_s[bi],
            amps: a,
            excess: excess_of(&amps, bi),
            members,
            spread_s,
        });
    }
    Fitted {
        lines: out,
        saturated,
    }
}

/// What one window's fit gives: its lines and whether its pencils were saturated.
#[derive(Default)]
struct Fitted {
    lines: Vec<Line>,
    saturated: bool,
}

#[cfg(test)]
mod tests;
