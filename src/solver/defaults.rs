//! Defaults that fit the mesh: the pulse, the analysis band and the record length of a run
//! that gave none of them, derived from three lengths of the mesh and its fill.
//!
//! - `L`: the largest side of the mesh's bounding box (m);
//! - `n`: the effective refractive index of the fill, the volume-weighted mean of
//!   `√(ε_r μ_r)` over the tets (`ε_∞` for a dispersive material), exact for a homogeneous
//!   fill, where every resonance is the vacuum one divided by `n`;
//! - `h`: the edge of the regular tetrahedron of the mean tet volume, `h = (6√2 V/T)^{1/3}`
//!   (a mean edge length that needs no edge list).
//!
//! With these:
//!
//! - **pulse**: `f_peak = c / (n L)` (a wave that crosses the mesh once per period: the
//!   lowest resonances of any cavity of size `L` lie at 0.5–0.9 `f_peak`);
//! - **band**: `fmax = min(2.2 f_peak, f_res, f_Nyquist / 2)` with the resolution limit
//!   `f_res = c / (2π n h)`, where `k h = 1`. The DGA's resonance error on the bundled
//!   cylinders follows `δf/f ≈ −0.025 (k h)²` (coarse, medium and fine: 0.0244–0.0248 for
//!   TM011 and 0.023 for TM010, where the geometric error of the polygonal wall adds), so
//!   every resonance below `f_res` is within about 2.5% of the continuum (the time error of
//!   the leapfrog is removed before comparing, see `spectrum::correct`);
//! - **record**: `T = 150 n L / c`, 150 periods of the default `f_peak` whatever pulse was
//!   asked for: the lowest resonances are seen for 75–135 periods, enough for the joint
//!   pencil to separate mesh-split doublets of the bundled meshes (1 µs for the bundled
//!   2 m cylinder in vacuum).
//!
//! A value the user gave is never replaced; one that cannot work is an error naming its
//! flag (`fmax` above Nyquist, `time` shorter than one step).

use super::plan::Length;
use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::problem::{Media, Waveform};
use crate::util::C0;

/// Periods of the default `f_peak` in the default record.
pub const RECORD_PERIODS: f64 = 150.0;
/// The band's default upper edge in units of `f_peak`.
pub const BAND_PEAKS: f64 = 2.2;

/// The lengths of a mesh and its fill that the defaults follow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scales {
    /// Largest side of the bounding box (m).
    pub extent_m: f64,
    /// Volume-weighted mean of `√(ε_r μ_r)`.
    pub index: f64,
    /// Edge of the regular tet of the mean volume (m).
    pub h_m: f64,
}

impl Scales {
    /// The scales of `mesh` filled with `media` (per tet).
    pub fn of(mesh: &Mesh, media: &Media) -> Scales {
        let (lo, hi) = mesh.bbox();
        let extent_m = (0..3).map(|c| hi[c] - lo[c]).fold(0.0, f64::max);
        let (mut vol, mut nv) = (0.0, 0.0);
        for t in 0..mesh.n_tets() {
            let v = mesh.tet_volume(t).abs();
            let n = (media.eps.get(t).copied().unwrap_or(1.0)
                * media.mu.get(t).copied().unwrap_or(1.0))
            .max(0.0)
            .sqrt();
            vol += v;
            nv += n * v;
        }
        let index = if vol > 0.0 && nv > 0.0 { nv / vol } else { 1.0 };
        let tets = mesh.n_tets().max(1) as f64;
        let h_m = (6.0 * std::f64::consts::SQRT_2 * vol / tets).cbrt();
        Scales {
            extent_m,
            index,
            h_m,
        }
    }

    /// The default peak frequency of the pulse (Hz).
    pub fn f_peak_hz(&self) -> f64 {
        C0 / (self.index * self.extent_m)
    }

    /// The highest frequency the mesh resolves to about 2.5% (Hz): `k h = 1`.
    pub fn f_resolved_hz(&self) -> f64 {
        C0 / (2.0 * std::f64::consts::PI * self.index * self.h_m)
    }

    /// The default record length (s).
    pub fn record_s(&self) -> f64 {
        RECORD_PERIODS / self.f_peak_hz()
    }
}

/// The upper edge of the analysis band (Hz): the given `fmax`, else the smallest of
/// `2.2 f_peak`, the resolution limit and half the Nyquist frequency, with a notice when a
/// limit other than the pulse decides. A given `fmax` at or above Nyquist is an error; one
/// beyond the resolution limit gets a notice.
pub fn band(
    given_hz: Option<f64>,
    wave: &Waveform,
    f_resolved_hz: f64,
    dt_s: f64,
    notices: &mut Vec<String>,
) -> Result<f64> {
    let nyquist = 0.5 / dt_s;
    let fmax_hz = match given_hz {
        Some(f) => {
            if f > f_resolved_hz && f < nyquist {
                notices.push(format!(
                    "fmax = {f:.4e} Hz is beyond what this mesh resolves to about 2.5% ({f_resolved_hz:.4e} Hz, k h = 1 with the mean edge): expect larger errors near the top of the band"
                ));
            }
            f
        }
        None => {
            let want = BAND_PEAKS * wave.f_peak_hz();
            let (limit, why) = if f_resolved_hz < 0.5 * nyquist {
                (
                    f_resolved_hz,
                    "the highest frequency this mesh resolves to about 2.5% (k h = 1 with the mean edge)",
                )
            } else {
                (
                    0.5 * nyquist,
                    "half the Nyquist frequency of this mesh's time step",
                )
            };
            if want > limit {
                notices.push(format!(
                    "fmax = {limit:.4e} Hz: {why} (2.2 f_peak = {want:.4e} Hz is beyond it; --fmax sets it)"
                ));
                limit
            } else {
                want
            }
        }
    };
    if !(fmax_hz > 0.0 && fmax_hz < nyquist) {
        return Err(Error::config(
            "fmax",
            fmax_hz,
            format!("must be in (0, {nyquist:.4e}) Hz (the Nyquist frequency)"),
        ));
    }
    Ok(fmax_hz)
}

/// A time step that is not a normal double (`dt = 5e-324`, or `cfl = 5e-324`, which gave
/// Δt = 0) is refused, naming `dt` or `cfl` (issue 47, round four S1).
pub fn check_time_step(plan: &super::Plan, dt_s: f64) -> Result<()> {
    if dt_s.is_normal() {
        return Ok(());
    }
    let (key, value) = match plan.dt_s {
        Some(d) => ("dt", format!("{d:e}")),
        None => ("cfl", format!("{:e}", plan.cfl)),
    };
    Err(Error::config(
        key,
        value,
        format!(
            "gives a time step of {dt_s:e} s, below the smallest normal double ({:e}): no record of any length can hold a period",
            f64::MIN_POSITIVE
        ),
    ))
}

/// What a record of `steps` steps of `dt_s` seconds can show of the band up to `fmax_hz`
/// and of the pulse `wave` (issue 47, round four S1/S2). Records that run but cannot show a
/// line are told in `notices`, naming the flags that would fix them (they used to end in a
/// table of "not seen" without a word): a record shorter than one period of the band's top
/// (`T fmax < 1`, the same as a band below the record's resolution `1/T`: `--fmax 1`), and
/// a pulse centred after the record's end (the source never rises above its tail:
/// `--f-peak 1` on a 1 m box).
pub fn check_record(
    plan: &super::Plan,
    steps: usize,
    flag: &str,
    dt_s: f64,
    fmax_hz: f64,
    wave: &Waveform,
    notices: &mut Vec<String>,
) {
    let dt_key = if plan.dt_s.is_some() { "dt" } else { "cfl" };
    let t = steps as f64 * dt_s;
    if t * fmax_hz < 1.0 {
        let fix = if plan.fmax_hz.is_some() {
            format!("a larger --fmax, a longer --{flag} or a larger --{dt_key}")
        } else {
            format!("a longer --{flag} or a larger --{dt_key}")
        };
        notices.push(format!(
            "warning: the record ({steps} steps of {dt_s:.4e} s = {t:.4e} s) is shorter than one period of the band's top (fmax = {fmax_hz:.4e} Hz, period {:.4e} s): its resolution 1/T = {:.4e} Hz is wider than the band, and no line in it can be measured; give {fix}",
            1.0 / fmax_hz,
            1.0 / t
        ));
    }
    let t0_s = wave.t0 / C0;
    if t < t0_s {
        let fix = if plan.f_peak_hz.is_some() {
            "a higher --f-peak or a longer "
        } else {
            "a longer "
        };
        notices.push(format!(
            "warning: the pulse (f_peak = {:.4e} Hz) is centred at t0 = {t0_s:.4e} s, after the record's end ({t:.4e} s): the source has not risen when the record stops; give {fix}--{flag}",
            wave.f_peak_hz()
        ));
    }
}

/// The steps of a record of `length` with time step `dt_s`, and the flag that set it (for
/// messages): `steps` as given, `time` converted, or the mesh's default record of
/// `record_s` seconds (reported as `time`).
pub fn steps(length: Length, record_s: f64, dt_s: f64) -> Result<(usize, &'static str)> {
    Ok(match length {
        Length::Steps(s) => (s, "steps"),
        Length::Time(t) => (steps_for(t, dt_s, "time")?, "time"),
        Length::Default => (steps_for(record_s, dt_s, "time")?, "time"),
    })
}

/// Steps for a simulated time `t` (s) named by `flag`, refused when shorter than one step or
/// absurd (more than 2^40).
pub fn steps_for(t: f64, dt_s: f64, flag: &str) -> Result<usize> {
    if t < dt_s {
        return Err(Error::config(
            flag,
            t,
            format!("shorter than one time step ({dt_s:.4e} s)"),
        ));
    }
    let n = (t / dt_s).ceil();
    if !(n >= 1.0 && n < (1u64 << 40) as f64) {
        return Err(Error::config(
            flag,
            t,
            format!("gives {n:.3e} steps of {dt_s:.4e} s (a shorter --time or a larger --cfl)"),
        ));
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate;

    #[test]
    fn scales_of_a_filled_box() {
        // 2 x 1 x 0.5 m, 4 x 2 x 1 cubes of 0.5 m, 6 tets each: h = (6√2 · 0.125/6)^{1/3}
        let mesh = generate::box_mesh([4, 2, 1], [2.0, 1.0, 0.5]);
        let mut media = Media::vacuum(mesh.n_tets());
        media.eps.iter_mut().for_each(|e| *e = 4.0);
        let s = Scales::of(&mesh, &media);
        assert!((s.extent_m - 2.0).abs() < 1e-15);
        assert!((s.index - 2.0).abs() < 1e-14);
        let h = (6.0 * std::f64::consts::SQRT_2 * 0.125 / 6.0).cbrt();
        assert!((s.h_m - h).abs() < 1e-14 * h);
        assert!((s.f_peak_hz() - C0 / 4.0).abs() < 1e-6);
        assert!((s.record_s() - 150.0 * 4.0 / C0).abs() < 1e-20);
        assert!((s.f_resolved_hz() * 2.0 * std::f64::consts::PI * 2.0 * h - C0).abs() < 1e-3);
    }

    #[test]
    fn band_takes_the_binding_limit_and_refuses_nyquist() {
        let wave = Waveform::gaussian_derivative(100e6);
        let mut n = Vec::new();
        // pulse decides: no notice
        assert!((band(None, &wave, 1e9, 1e-10, &mut n).unwrap() / 220e6 - 1.0).abs() < 1e-15);
        assert!(n.is_empty());
        // resolution decides
        assert_eq!(band(None, &wave, 150e6, 1e-10, &mut n).unwrap(), 150e6);
        assert!(n[0].contains("resolves"), "{n:?}");
        // half Nyquist (0.25 / dt) decides
        n.clear();
        assert_eq!(band(None, &wave, 1e9, 2.5e-9, &mut n).unwrap(), 1e8);
        assert!(n[0].contains("Nyquist"), "{n:?}");
        // a given value is kept, with a notice beyond the resolution
        n.clear();
        assert_eq!(
            band(Some(300e6), &wave, 150e6, 1e-10, &mut n).unwrap(),
            300e6
        );
        assert_eq!(n.len(), 1);
        let e = band(Some(6e9), &wave, 150e6, 1e-10, &mut n).unwrap_err();
        assert!(e.to_string().contains("fmax"), "{e}");
    }

    #[test]
    fn steps_name_their_flag() {
        assert_eq!(steps_for(1e-6, 1e-9, "time").unwrap(), 1000);
        let e = steps_for(1e-12, 1e-9, "time").unwrap_err().to_string();
        assert!(e.contains("time") && e.contains("shorter"), "{e}");
    }
}
