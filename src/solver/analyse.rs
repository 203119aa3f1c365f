//! Analysis of a run's probe record: the combined spectrum, the resonances (harmonic
//! inversion or FFT peaks) and their comparison with the analytic modes of the cavity.
//!
//! The leapfrog shifts every resonance up exactly (design note §10); `corrected` frequencies
//! undo it (`f = sin(π f_td Δt)/(π Δt)`), leaving only the spatial error. DG's LSERK4 phase
//! error is left in (`f_corrected_hz = f_hz`).

use super::config::{Extract, Method};
use super::plan::{CavitySpec, Plan};
use super::run::Record;
use crate::mesh::Mesh;
use crate::mesh::shape::{self, Shape};
use crate::spectrum::analytic::{Cavity, Mode};
use crate::spectrum::{self, Peak, Spectrum};

/// A resonance compared with an analytic mode.
#[derive(Clone, Debug)]
pub struct Matched {
    pub mode: Mode,
    /// The strongest resonance within 3% (after the leapfrog correction), if any.
    pub peak: Option<(Peak, f64)>,
}

/// What the analysis of a record found.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// First sample used (after the pulse has ended).
    pub start: usize,
    pub spectrum: Spectrum,
    pub peaks: Vec<Peak>,
    pub cavity: Option<Cavity>,
    pub matched: Vec<Matched>,
}

/// The leapfrog's exact frequency correction for DGA; none for DG.
pub fn correct(method: Method, f_hz: f64, dt_s: f64) -> f64 {
    match method {
        Method::Dga => spectrum::leapfrog_correction(f_hz, dt_s),
        Method::Dg => f_hz,
    }
}

/// The analytic cavity of a mesh recognised by [`shape::detect`].
pub fn cavity_of(mesh: &Mesh) -> Option<Cavity> {
    shape::detect(mesh).map(|s| match s {
        Shape::Box { ext, .. } => Cavity::Box {
            a: ext[0],
            b: ext[1],
            d: ext[2],
        },
        Shape::Cylinder { radius, height, .. } => Cavity::Cylinder { radius, height },
        Shape::Sphere { radius, .. } => Cavity::Sphere { radius },
    })
}

/// Analyses `record` (probe samples every `dt_s` seconds; the pulse ends at sample
/// `pulse_end`) in the band up to `fmax_hz`, for the pulse peaking at `f_peak_hz`.
pub fn analyse(
    plan: &Plan,
    mesh: &Mesh,
    record: &Record,
    pulse_end: usize,
    f_peak_hz: f64,
    fmax_hz: f64,
) -> Analysis {
    let steps = record.steps;
    let dt_s = record.dt_s;
    let start = pulse_end.min(steps.saturating_sub(16));
    let signals: Vec<Vec<f64>> = (0..record.n_probes)
        .flat_map(|p| (0..3).map(move |c| (p, c)))
        .map(|(p, c)| record.series(p, c)[start..].to_vec())
        .collect();
    let spec = spectrum::spectrum(&signals, dt_s, 8);
    let fmin = 0.05 * f_peak_hz;
    let peaks = match plan.extract {
        Extract::Fft => spectrum::find_peaks(&spec, fmin, fmax_hz, plan.min_prominence),
        Extract::Harminv => {
            use rayon::prelude::*;
            let params = spectrum::harminv::Params::band(fmin, fmax_hz);
            let per: Vec<Vec<spectrum::harminv::HMode>> = signals
                .par_iter()
                .map(|sig| spectrum::harminv::harminv(sig, dt_s, &params))
                .collect();
            spectrum::harminv::cluster(&per, 1e-5, plan.min_q, (steps - start) as f64 * dt_s)
        }
    };
    let cavity = match plan.cavity {
        CavitySpec::Auto => cavity_of(mesh),
        CavitySpec::None => None,
        CavitySpec::Given(c) => Some(c),
    };
    let matched = cavity
        .map(|c| c.modes(fmax_hz))
        .unwrap_or_default()
        .into_iter()
        .map(|mode| {
            let peak = peaks
                .iter()
                .map(|p| (p.clone(), correct(plan.method, p.f_hz, dt_s)))
                .filter(|(_, f)| (f - mode.f_hz).abs() < 0.03 * mode.f_hz)
                // the strongest resonance within 3% (doublet members are equally valid)
                .max_by(|a, b| a.0.amplitude.total_cmp(&b.0.amplitude));
            Matched { mode, peak }
        })
        .collect();
    Analysis {
        start,
        spectrum: spec,
        peaks,
        cavity,
        matched,
    }
}

impl Analysis {
    /// The analytic mode nearest to a corrected frequency.
    pub fn nearest_mode(&self, f: f64) -> Option<&Mode> {
        self.matched
            .iter()
            .map(|m| &m.mode)
            .min_by(|a, b| (a.f_hz - f).abs().total_cmp(&(b.f_hz - f).abs()))
    }

    /// The `n` strongest resonances by ascending frequency, labelled for mode shapes
    /// (`TM010_114.4991MHz`), with their measured frequencies.
    pub fn strongest(&self, n: usize, method: Method, dt_s: f64) -> Vec<(String, f64)> {
        let mut strongest: Vec<&Peak> = self.peaks.iter().collect();
        strongest.sort_by(|a, b| b.amplitude.total_cmp(&a.amplitude));
        strongest.truncate(n);
        strongest.sort_by(|a, b| a.f_hz.total_cmp(&b.f_hz));
        strongest
            .iter()
            .map(|p| {
                let fc = correct(method, p.f_hz, dt_s);
                let near = self
                    .matched
                    .iter()
                    .filter(|m| (m.mode.f_hz - fc).abs() < 0.03 * m.mode.f_hz)
                    .min_by(|a, b| {
                        (a.mode.f_hz - fc)
                            .abs()
                            .total_cmp(&(b.mode.f_hz - fc).abs())
                    });
                (
                    format!(
                        "{}{:.4}MHz",
                        near.map(|m| format!("{}_", m.mode.name))
                            .unwrap_or_default(),
                        fc / 1e6
                    ),
                    p.f_hz,
                )
            })
            .collect()
    }
}
