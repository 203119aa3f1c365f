//! Analysis of a run's probe record: the combined spectrum, the resonances (harmonic
//! inversion of all probe components jointly, [`spectrum::extract`], or FFT peaks) and their
//! comparison with the analytic modes of the cavity: every TE/TM mode up to 1.1 `fmax`
//! ([`Cavity::catalogue`], divided by `sqrt(eps_r mu_r)` when all tets have the same
//! material), assigned one-to-one to the lines by [`spectrum::assign`] (the terminal table,
//! `summary.md` and `modes.csv` use the same assignment).
//!
//! The leapfrog shifts every resonance up exactly (design note §10); `corrected` frequencies
//! undo it (`f = sin(π f_td Δt)/(π Δt)`), leaving only the spatial error. In a cavity filled
//! with one dispersive medium the shift also holds the bilinear transform's warping of the
//! poles, and the correction inverts that exact discrete relation instead
//! ([`crate::problem::dispersion_relation`]); with dispersive media in only part of the mesh
//! no exact relation exists and the frequencies are left as measured
//! (`f_corrected_hz = f_hz`, with a notice). DG's LSERK4 phase error is left in
//! (`f_corrected_hz = f_hz`). [`Correction`] says which applies.

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
    /// How `f_corrected_hz` is obtained from the measured lines.
    pub correction: Correction,
}

/// The leapfrog's exact frequency correction for DGA in non-dispersive media; none for DG
/// ([`Correction`] covers dispersive fills too).
pub fn correct(method: Method, f_hz: f64, dt_s: f64) -> f64 {
    match method {
        Method::Dga => spectrum::leapfrog_correction(f_hz, dt_s),
        Method::Dg => f_hz,
    }
}

/// How the measured frequencies of a run are corrected for its time scheme (module docs).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Correction {
    /// None (DG's LSERK4): `f_corrected = f`.
    None,
    /// The leapfrog's exact shift in non-dispersive media, time step `dt_s` (s).
    Leapfrog { dt_s: f64 },
    /// One dispersive medium (`eps_inf`, `poles`) fills the mesh: the exact discrete
    /// relation of the leapfrog with bilinear poles, inverted.
    DispersiveFill {
        dt_s: f64,
        eps_inf: f64,
        poles: Vec<crate::problem::dispersion::Pole>,
    },
    /// Dispersive media in part of the mesh: no exact relation, `f_corrected = f`.
    PartlyDispersive,
}

impl Correction {
    /// The correction of a run of `method` at time step `dt_s` (s) in `media`.
    pub fn of(method: Method, media: &Media, dt_s: f64) -> Self {
        match (method, media.is_dispersive(), media.dispersive_fill()) {
            (Method::Dg, ..) => Correction::None,
            (Method::Dga, false, _) => Correction::Leapfrog { dt_s },
            (Method::Dga, true, Some((eps_inf, poles))) => Correction::DispersiveFill {
                dt_s,
                eps_inf,
                poles: poles.to_vec(),
            },
            (Method::Dga, true, None) => Correction::PartlyDispersive,
        }
    }

    /// The corrected frequency (Hz) of a line at `f_hz` decaying at `decay_per_s` (1/s, 0
    /// where unknown). A dispersive fill's line that the inverse cannot follow (far beyond
    /// what the time step resolves) keeps its measured frequency.
    pub fn frequency(&self, f_hz: f64, decay_per_s: f64) -> f64 {
        match self {
            Correction::None | Correction::PartlyDispersive => f_hz,
            Correction::Leapfrog { dt_s } => spectrum::leapfrog_correction(f_hz, *dt_s),
            Correction::DispersiveFill {
                dt_s,
                eps_inf,
                poles,
            } => {
                let s_d = crate::util::C64::new(-decay_per_s, std::f64::consts::TAU * f_hz);
                crate::problem::dispersion_relation::continuum_of_discrete(
                    s_d, *dt_s, *eps_inf, poles,
                )
                .map_or(f_hz, |s| s.im / std::f64::consts::TAU)
            }
        }
    }

    /// The corrected frequency of `peak`.
    pub fn of_peak(&self, peak: &Peak) -> f64 {
        self.frequency(peak.f_hz, peak.decay_per_s.unwrap_or(0.0))
    }
}

/// The most analytic modes a `--cavity` catalogue may hold: far more than a record
/// resolves, far fewer than a cavity given in the wrong unit (millimetres for metres)
/// would enumerate.
pub const MAX_CATALOGUE: f64 = 1e5;

/// Checks a `--cavity` given by the user against the mesh before the run: its extents
/// must be the mesh's (to 3%: a polyhedral cylinder or sphere is within that), else the
/// labels would belong to another cavity; and its catalogue up to `1.1 fmax_hz` (Weyl's
/// estimate `(8π/3) V (n f / c)³` of the mode count) must stay below [`MAX_CATALOGUE`].
pub fn check_given_cavity(plan: &Plan, mesh: &Mesh, fmax_hz: f64) -> crate::error::Result<()> {
    let CavitySpec::Given(c) = plan.cavity else {
        return Ok(());
    };
    let (mut want, volume) = match c {
        Cavity::Cylinder { radius, height } => (
            [2.0 * radius, 2.0 * radius, height],
            std::f64::consts::PI * radius * radius * height,
        ),
        Cavity::Sphere { radius } => (
            [2.0 * radius; 3],
            4.0 / 3.0 * std::f64::consts::PI * radius.powi(3),
        ),
        Cavity::Box { a, b, d } | Cavity::WalledBox { a, b, d, .. } => ([a, b, d], a * b * d),
    };
    let (lo, hi) = mesh.bbox();
    let mut have = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    // a box's sides are x, y, z (its mode names depend on it); a cylinder's axis or a
    // sphere may lie along any
    let axes = if matches!(c, Cavity::Box { .. } | Cavity::WalledBox { .. }) {
        "x, y, z"
    } else {
        want.sort_by(f64::total_cmp);
        have.sort_by(f64::total_cmp);
        "sorted"
    };
    let off = want
        .iter()
        .zip(&have)
        .map(|(w, h)| (w - h).abs() / h)
        .fold(0.0, f64::max);
    let given = plan.config.cavity.to_string();
    if !(off <= 0.03) {
        return Err(crate::error::Error::config(
            "cavity",
            &given,
            format!(
                "does not fit the mesh: its extents are {:.4} x {:.4} x {:.4} m, the mesh's {:.4} x {:.4} x {:.4} m ({axes}); the labels would name another cavity's modes. Give the mesh's cavity in metres, or --cavity none",
                want[0], want[1], want[2], have[0], have[1], have[2]
            ),
        ));
    }
    // the extents fit; so must the volume: a sphere or cylinder given for a box of its
    // extents (round four S8: `--cavity sphere:0.5` on the 1 m cube labelled the cube's
    // modes from the sphere's catalogue). A polygonal wall loses a few percent of the
    // volume (a 12-gon cylinder 4.5%): 10% separates that from another shape (an inscribed
    // cylinder is 21% smaller than its box, a sphere 48%).
    let have_v: f64 = (0..mesh.n_tets()).map(|t| mesh.tet_volume(t).abs()).sum();
    let dv = (volume - have_v).abs() / have_v;
    if !(dv <= 0.10) {
        return Err(crate::error::Error::config(
            "cavity",
            &given,
            format!(
                "does not fit the mesh: its extents do, but its volume is {volume:.4e} m^3 and the mesh's {have_v:.4e} m^3 ({:.0}% apart), so it is another shape; the labels would name another cavity's modes. Give the mesh's cavity, or --cavity none",
                100.0 * dv
            ),
        ));
    }
    let n = homogeneous_index(plan, mesh).unwrap_or(1.0);
    let modes =
        8.0 * std::f64::consts::PI / 3.0 * volume * (1.1 * fmax_hz * n / crate::util::C0).powi(3);
    if modes > MAX_CATALOGUE {
        return Err(crate::error::Error::config(
            "cavity",
            &given,
            format!(
                "its analytic catalogue up to {:.4e} Hz would hold about {modes:.2e} modes (at most {MAX_CATALOGUE:.0e}): lower --fmax, or --cavity none",
                1.1 * fmax_hz
            ),
        ));
    }
    Ok(())
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
        // the catalogues hold PEC walls' modes
        CavitySpec::Auto if plan.config.symmetry.is_some_and(|s| s.has_pmc()) => None,
        CavitySpec::Auto => cavity_of(mesh),
        CavitySpec::None => None,
        CavitySpec::Given(c) => Some(c),
    };
    let fill_index = homogeneous_index(plan, mesh);
    let catalogue: Vec<Mode> = match (cavity, fill_index) {
        (Some(c), Some(n)) => c.catalogue(1.1 * fmax_hz, n * n, 1.0),
        _ => vec![],
    };
    let correction = match Media::resolve(mesh, &plan.problem.materials) {
        Ok(media) => Correction::of(plan.method, &media, dt_s),
        // the build resolved the same materials; a run that got here has them
        Err(_) => Correction::of(plan.method, &Media::vacuum(0), dt_s),
    };
    let corrected: Vec<f64> = peaks.iter().map(|p| correction.of_peak(p)).collect();
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
        correction,
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
    pub fn strongest(&self, n: usize) -> Vec<(String, f64)> {
        let mut strongest: Vec<usize> = (0..self.peaks.len()).collect();
        strongest.sort_by(|&a, &b| self.peaks[b].amplitude.total_cmp(&self.peaks[a].amplitude));
        strongest.truncate(n);
        strongest.sort_by(|&a, &b| self.peaks[a].f_hz.total_cmp(&self.peaks[b].f_hz));
        strongest
            .iter()
            .map(|&i| {
                let p = &self.peaks[i];
                let fc = self.correction.of_peak(p);
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
