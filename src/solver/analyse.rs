//! Analysis of a run's probe record: the combined spectrum, the resonances (harmonic
//! inversion of all probe components jointly, [`spectrum::extract`], or FFT peaks) and their
//! comparison with the analytic modes of the cavity: every TE/TM mode up to 1.1 `fmax`
//! ([`Cavity::catalogue`], divided by `sqrt(eps_r mu_r)` when all tets have the same
//! material), assigned one-to-one to the lines by [`spectrum::assign`] (the terminal table,
//! `summary.md` and `modes.csv` use the same assignment).
//!
//! The leapfrog shifts every resonance up exactly (design note §10); `corrected` frequencies
//! undo it (`f = sin(π f_td Δt)/(π Δt)`), leaving only the spatial error. DG's LSERK4 phase
//! error is left in (`f_corrected_hz = f_hz`).

use super::config::{Extract, Method};
use super::plan::{CavitySpec, Plan};
use super::run::Record;
use crate::mesh::Mesh;
use crate::mesh::shape::{self, Shape};
use crate::problem::Media;
use crate::spectrum::analytic::{Cavity, Mode};
use crate::spectrum::assign::{self, Label};
use crate::spectrum::{self, Peak, Spectrum, extract};

/// A resonance compared with an analytic mode.
#[derive(Clone, Debug)]
pub struct Matched {
    pub mode: Mode,
    /// The strongest resonance assigned to the mode ([`spectrum::assign`]) and its corrected
    /// frequency, if any.
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
    /// The catalogue modes up to `fmax`, each with its strongest assigned line.
    pub matched: Vec<Matched>,
    /// One label per peak, in the order of `peaks` (empty mode without a cavity).
    pub labels: Vec<Label>,
    /// `sqrt(eps_r mu_r)` of a homogeneous fill the catalogue was divided by (1 in vacuum;
    /// None when the materials differ between tets: no analytic comparison).
    pub fill_index: Option<f64>,
    /// Parts of the band the record did not resolve ([`extract::Unresolved`]): lines there
    /// may be missing from `peaks`. Empty for the FFT extraction.
    pub unresolved: Vec<extract::Unresolved>,
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
    let signals = record.signals(start);
    let spec = spectrum::spectrum(&signals, dt_s, 8);
    let fmin = 0.05 * f_peak_hz;
    let (peaks, unresolved) = match plan.extract {
        Extract::Fft => (
            spectrum::find_peaks(&spec, fmin, fmax_hz, plan.min_prominence),
            vec![],
        ),
        Extract::Harminv => {
            let mut s = extract::Settings::band(fmin, fmax_hz);
            s.min_q = plan.min_q;
            // The band and signals were checked by the build; an error here (a band the
            // record cannot hold) means no lines, as for a silent record.
            let e = extract::extract(&signals, dt_s, &s).unwrap_or_default();
            (e.peaks, e.unresolved)
        }
    };
    let cavity = match plan.cavity {
        CavitySpec::Auto => cavity_of(mesh),
        CavitySpec::None => None,
        CavitySpec::Given(c) => Some(c),
    };
    let fill_index = homogeneous_index(plan, mesh);
    let catalogue: Vec<Mode> = match (cavity, fill_index) {
        (Some(c), Some(n)) => c.catalogue(1.1 * fmax_hz, n * n, 1.0),
        _ => vec![],
    };
    let corrected: Vec<f64> = peaks
        .iter()
        .map(|p| correct(plan.method, p.f_hz, dt_s))
        .collect();
    let labels = if catalogue.is_empty() {
        vec![Label::default(); peaks.len()]
    } else {
        assign::assign(&corrected, &catalogue, &assign::Settings::default()).labels
    };
    let matched = catalogue
        .iter()
        .filter(|m| m.f_hz <= fmax_hz)
        .map(|mode| {
            let peak = peaks
                .iter()
                .zip(&corrected)
                .zip(&labels)
                .filter(|(_, l)| {
                    l.mode
                        .as_deref()
                        .is_some_and(|m| m.split('+').any(|x| x == mode.name))
                })
                .map(|((p, &f), _)| (p.clone(), f))
                // the strongest line of the mode (both members of a split doublet are valid)
                .max_by(|a, b| a.0.amplitude.total_cmp(&b.0.amplitude));
            Matched {
                mode: mode.clone(),
                peak,
            }
        })
        .collect();
    Analysis {
        start,
        spectrum: spec,
        peaks,
        cavity,
        matched,
        labels,
        fill_index,
        unresolved,
    }
}

/// `sqrt(eps_r mu_r)` when every tet has the same material (None otherwise, or when the
/// materials cannot be resolved).
fn homogeneous_index(plan: &Plan, mesh: &Mesh) -> Option<f64> {
    let m = Media::resolve(mesh, &plan.problem.materials).ok()?;
    if m.is_dispersive() {
        // ε depends on frequency: no analytic catalogue (and no labels) for the fill
        return None;
    }
    let (e0, m0) = (*m.eps.first()?, *m.mu.first()?);
    let same = m.eps.iter().all(|&e| e == e0) && m.mu.iter().all(|&u| u == m0);
    (same && e0 > 0.0 && m0 > 0.0).then(|| (e0 * m0).sqrt())
}

impl Analysis {
    /// The analytic mode nearest to a corrected frequency.
    pub fn nearest_mode(&self, f: f64) -> Option<&Mode> {
        self.matched
            .iter()
            .map(|m| &m.mode)
            .min_by(|a, b| (a.f_hz - f).abs().total_cmp(&(b.f_hz - f).abs()))
    }

    /// The label of a peak (by its index in `peaks`).
    pub fn label(&self, i: usize) -> Option<&Label> {
        self.labels.get(i)
    }

    /// The `n` strongest resonances by ascending frequency, labelled for mode shapes
    /// (`TM010_114.4991MHz`: the assigned mode, if any), with their measured frequencies.
    pub fn strongest(&self, n: usize, method: Method, dt_s: f64) -> Vec<(String, f64)> {
        let mut strongest: Vec<usize> = (0..self.peaks.len()).collect();
        strongest.sort_by(|&a, &b| self.peaks[b].amplitude.total_cmp(&self.peaks[a].amplitude));
        strongest.truncate(n);
        strongest.sort_by(|&a, &b| self.peaks[a].f_hz.total_cmp(&self.peaks[b].f_hz));
        strongest
            .iter()
            .map(|&i| {
                let p = &self.peaks[i];
                let fc = correct(method, p.f_hz, dt_s);
                let name = self.label(i).and_then(|l| l.mode.as_deref());
                (
                    format!(
                        "{}{:.4}MHz",
                        name.map(|m| format!("{m}_")).unwrap_or_default(),
                        fc / 1e6
                    ),
                    p.f_hz,
                )
            })
            .collect()
    }
}
