//! The resonator job's configuration: every parameter of a run, read from a TOML file
//! (`dgatd resonator --config FILE.toml`) and written back as the head of `run.toml`, so
//! that a finished run's `run.toml` is a valid `--config` reproducing it.
//!
//! Layout: top-level keys are the `dgatd resonator` flags' long names with `-` → `_`
//! (`mesh`, `box`, `ball`, `symmetry`, `refine`, `refine_region` (an array of volume group names), `mesh_order`, `converge`, `steps`, `time`, `cfl`, `dt`, `precision`, `dual`, `backend`,
//! `device`, `source`, `source_dir`, `source_radius`, `probe` (an array of points), `f_peak`, `fmax`,
//! `min_prominence`, `min_q`, `cavity`, `extract`, `mode_shapes`, `seed`, `method`,
//! `order`, `flux`, `checkpoint_steps`, `checkpoint_minutes`, `energy_checks`, `partitioner`,
//! `assembly`, `gpus`),
//! then the tables
//! `[box]`, `[ball]`, `[cavity]` and `[symmetry]` (the table forms of those keys,
//! [`super::spec`], [`super::symmetry`]),
//! `[materials.NAME]` (`eps_r`, `mu_r`, `sigma` S/m, `tan_delta` at `f_tan_delta` Hz, `sigma_m`
//! ohm/m; `absorbing = true` with `layer_order`, `layer_reflection` for a graded matched
//! absorbing layer; `pml = true` with `pml_order`, `pml_reflection`, `pml_alpha` (Hz) for a
//! perfectly matched layer; dispersive poles `debye = [{ delta_eps, tau }]`, `drude = [{ f_p,
//! gamma }]`, `lorentz = [{ delta_eps, f_0, delta }]`, with `eps_r` as ε∞) and `[boundaries.NAME]` (`kind = "pec" | "pmc" | "abc" | "conductor"`, the last with
//! `sigma` S/m and `mu_r`).
//! A `[run]` table (what `run.toml` adds: provenance and results) is ignored on input.
//! Unknown keys, wrong types and groups the mesh does not have are errors naming the file,
//! the line and the key. Points are arrays `[x, y, z]` in metres; times in seconds;
//! frequencies in hertz.
//!
//! Invocation options (`--out`, `--quiet`, `--resume`, `--config` itself) are not part of
//! a run's configuration.

pub use super::spec::{BallSpec, BoxSpec, CavitySpec};
pub use super::symmetry::SymmetrySpec;
use crate::dg::Flux;
use crate::dga::operators::DualForm;
use crate::error::{Error, Result};
pub use crate::mesh::order::MeshOrder;
use crate::problem::{Boundary, Material};
use crate::real::Precision;
use crate::util::V3;
use std::collections::BTreeMap;
use std::path::Path;

/// Spatial discretisation of a run.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The fractioned DGA with the leapfrog.
    #[default]
    Dga,
    /// Nodal discontinuous Galerkin with LSERK4.
    Dg,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Dga => "dga",
            Method::Dg => "dg",
        }
    }
}

/// How resonances are extracted from the probe signals.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Extract {
    /// Harmonic inversion of every probe component, clustered over probes.
    #[default]
    Harminv,
    /// Peaks of the combined FFT spectrum.
    Fft,
}

/// Which backend runs the time loop.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The first OpenCL GPU, else the first OpenCL CPU device, else the CPU backend.
    #[default]
    Auto,
    /// The CPU reference backend.
    Cpu,
    /// An OpenCL device (`device`: index or name substring; default as for `auto`).
    Opencl,
}

/// Which partitioner splits the mesh of a run on several ranks (ignored on one process).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Partitioner {
    /// METIS below a million tets, recursive coordinate bisection from there
    /// (`partition::RCB_FROM_TETS`, which states why).
    #[default]
    Auto,
    /// METIS k-way on the tets' dual graph (smallest cut; 1-2.5 s per million tets on
    /// rank 0).
    Metis,
    /// Recursive coordinate bisection of the tet centroids (fast, parallel).
    Rcb,
    /// Slabs across x of equal tet count (boxes).
    Slab,
}

impl Partitioner {
    pub fn is_auto(&self) -> bool {
        *self == Partitioner::Auto
    }
}

/// Where the DGA operators of a one-process OpenCL run are assembled.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Assembly {
    /// On the device where the run allows it and the device is a GPU (the fastest set-up:
    /// a 10M-tet mesh in about 0.5 s on an H200 against about 5 s on 16 host cores), else
    /// on the host.
    #[default]
    Auto,
    /// On the host (the CPU backend's operators, bit for bit).
    Host,
    /// On the device, left there (lossless, non-dispersive media without absorbing
    /// surfaces, on a device with double precision); an error where the run does not allow it.
    Device,
}

impl Assembly {
    pub fn is_auto(&self) -> bool {
        *self == Assembly::Auto
    }
    pub fn name(&self) -> &'static str {
        match self {
            Assembly::Auto => "auto",
            Assembly::Host => "host",
            Assembly::Device => "device",
        }
    }
}

fn default_cfl() -> f64 {
    0.95
}
/// The default source direction: oblique (a unit vector with every component non-zero), so
/// that a cavity's TE modes (no E along the axis of a z-axis cylinder) are excited as well as
/// its TM modes; a z-directed current leaves the TE modes at round-off amplitude.
fn default_dir() -> V3 {
    [0.48, 0.36, 0.8]
}
fn default_prominence() -> f64 {
    0.02
}
fn default_seed() -> u64 {
    1
}
fn default_order() -> usize {
    3
}
fn default_checkpoint_minutes() -> f64 {
    10.0
}

/// Energy checks of the blow-up guard over a run (design: every `steps / N` steps).
pub const DEFAULT_ENERGY_CHECKS: u64 = 50;

fn default_energy_checks() -> u64 {
    DEFAULT_ENERGY_CHECKS
}

fn is_default_energy_checks(n: &u64) -> bool {
    *n == DEFAULT_ENERGY_CHECKS
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Every parameter of a resonator run. `None` means "derived": from the mesh, or the
/// documented default.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Gmsh file or `bundled:coarse|medium|fine` (default `bundled:medium`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<String>,
    /// Generated box instead of a file: `"NX,NY,NZ[:LX,LY,LZ]"` or a `[box]` table
    /// ([`BoxSpec`]).
    #[serde(rename = "box", default, skip_serializing_if = "Option::is_none")]
    pub box_mesh: Option<BoxSpec>,
    /// Generated concentric balls instead of a file: `"N:NAME=R[@F],.."` (N shells
    /// across the first radius; volume groups NAME, outer surface `outer`; `@F` a group's
    /// radial step in units of the first group's) or a `[ball]` table ([`BallSpec`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ball: Option<BallSpec>,
    /// Symmetry planes ([`super::symmetry`]): `"x=pmc,y=pec[:X0,Y0,Z0]"` or a `[symmetry]`
    /// table; the run steps the part of the mesh on one side of each plane, with that wall
    /// on the plane, and finds the modes of that symmetry class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symmetry: Option<SymmetrySpec>,
    /// Uniform 1:8 refinements.
    #[serde(default)]
    pub refine: u32,
    /// Volume groups (names or tags) refined 1:8 once, before `refine` and every
    /// `converge` level, with their neighbours closed conformingly
    /// ([`crate::mesh::refine_region`]): resolution where the field needs it (a sphere's
    /// near air) without refining the whole domain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refine_region: Vec<String>,
    /// Numbering of the tets and nodes (after refinement): `file` (default) or `morton`
    /// (along a Z-order curve: the step's gathers then touch nearby memory,
    /// `results/h200/locality/`).
    #[serde(default, skip_serializing_if = "MeshOrder::is_file")]
    pub mesh_order: MeshOrder,
    /// Converged resonances: the run at refinements `refine ..= refine + converge` (1 to
    /// 4), the lines matched across the levels and extrapolated ([`super::converge`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converge: Option<u32>,
    /// Number of time steps (overrides `time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// Simulated time in seconds (default from the mesh, [`super::defaults`]: 1 µs for the
    /// bundled cylinder in vacuum).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<f64>,
    /// Courant number: `Δt = CFL · 2/sqrt(ρ(K))`.
    #[serde(default = "default_cfl")]
    pub cfl: f64,
    /// A given time step in seconds instead of the power iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt: Option<f64>,
    #[serde(default)]
    pub precision: Precision,
    #[serde(default)]
    pub dual: DualForm,
    #[serde(default)]
    pub backend: BackendKind,
    /// OpenCL device: index or name substring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Source point (m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<V3>,
    /// Source current direction.
    #[serde(default = "default_dir")]
    pub source_dir: V3,
    /// Radius (m) of the ball of tets around the source point that the source current
    /// fills (0: the tet containing the point). Written to `run.toml` only when not 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub source_radius: f64,
    /// Probe points (m).
    #[serde(default)]
    pub probe: Vec<V3>,
    /// Peak frequency of the pulse in Hz (default from the mesh, [`super::defaults`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f_peak: Option<f64>,
    /// Upper end of the analysed band in Hz (default from the mesh, [`super::defaults`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fmax: Option<f64>,
    /// FFT extraction: minimum peak prominence relative to the largest peak.
    #[serde(default = "default_prominence")]
    pub min_prominence: f64,
    /// Harmonic inversion: drop modes with a lower quality factor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_q: Option<f64>,
    /// Analytic modes to compare with: auto, none, cylinder:R,H, box:A,B,D or sphere:R, or
    /// a `[cavity]` table ([`CavitySpec`]).
    #[serde(default)]
    pub cavity: CavitySpec,
    #[serde(default)]
    pub extract: Extract,
    /// Mode shapes of the N strongest resonances (modes.vtu).
    #[serde(default)]
    pub mode_shapes: usize,
    /// Seed of the draw that replaces a default source or probe point (a fixed fraction of
    /// the bounding box) that falls outside the mesh.
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default)]
    pub method: Method,
    /// DG polynomial order.
    #[serde(default = "default_order")]
    pub order: usize,
    /// DG numerical flux.
    #[serde(default)]
    pub flux: Flux,
    /// Checkpoint every N steps (0: only by time).
    #[serde(default)]
    pub checkpoint_steps: u64,
    /// Checkpoint after this many minutes of running (0: only by steps).
    #[serde(default = "default_checkpoint_minutes")]
    pub checkpoint_minutes: f64,
    /// Energy checks of the blow-up guard over the run (default 50; 0: none, only the
    /// non-finite check of the probe samples). Each check reads the whole state back from
    /// a device and evaluates the energy on the host: on a 20M-tet mesh one check costs
    /// about as much as several hundred device steps. Written to `run.toml` only when not
    /// the default.
    #[serde(
        default = "default_energy_checks",
        skip_serializing_if = "is_default_energy_checks"
    )]
    pub energy_checks: u64,
    /// Partitioner of a run on several ranks (default `auto`; written to `run.toml` only
    /// when not the default).
    #[serde(default, skip_serializing_if = "Partitioner::is_auto")]
    pub partitioner: Partitioner,
    /// Where the DGA operators are assembled on a one-process OpenCL run (default `auto`;
    /// written to `run.toml` only when not the default).
    #[serde(default, skip_serializing_if = "Assembly::is_auto")]
    pub assembly: Assembly,
    /// GPUs driven by this one process (default 1; written to `run.toml` only when not 1):
    /// N > 1 splits the mesh into N parts by `partitioner` and steps each on its own GPU,
    /// one thread per part, the halos going through host memory (no MPI).
    #[serde(default = "default_gpus", skip_serializing_if = "is_one_gpu")]
    pub gpus: u32,
    /// Materials of volume groups (name or number); vacuum elsewhere.
    #[serde(default)]
    pub materials: BTreeMap<String, Material>,
    /// Conditions of surface groups (name or number); PEC elsewhere.
    #[serde(default)]
    pub boundaries: BTreeMap<String, Boundary>,
    /// What `run.toml` adds after the configuration (provenance and results); ignored.
    #[serde(default, skip_serializing)]
    pub run: Option<toml::Table>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mesh: None,
            box_mesh: None,
            ball: None,
            symmetry: None,
            refine: 0,
            refine_region: Vec::new(),
            mesh_order: MeshOrder::File,
            converge: None,
            steps: None,
            time: None,
            cfl: default_cfl(),
            dt: None,
            precision: Precision::default(),
            dual: DualForm::default(),
            backend: BackendKind::default(),
            device: None,
            source: None,
            source_dir: default_dir(),
            source_radius: 0.0,
            probe: vec![],
            f_peak: None,
            fmax: None,
            min_prominence: default_prominence(),
            min_q: None,
            cavity: CavitySpec::Auto,
            extract: Extract::default(),
            mode_shapes: 0,
            seed: default_seed(),
            method: Method::default(),
            order: default_order(),
            flux: Flux::default(),
            checkpoint_steps: 0,
            checkpoint_minutes: default_checkpoint_minutes(),
            energy_checks: DEFAULT_ENERGY_CHECKS,
            partitioner: Partitioner::Auto,
            assembly: Assembly::Auto,
            gpus: 1,
            materials: BTreeMap::new(),
            boundaries: BTreeMap::new(),
            run: None,
        }
    }
}

fn default_gpus() -> u32 {
    1
}

fn is_one_gpu(n: &u32) -> bool {
    *n == 1
}

/// Where a configuration came from, to name the file and line of a key in messages.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    /// The file's path as given.
    pub path: String,
    /// The file's text.
    pub text: String,
}

impl Origin {
    /// The line of the table or key `keys` (e.g. `["materials", "vacuum"]`), if found.
    pub fn locate(&self, keys: &[&str]) -> Option<usize> {
        use toml::de::{DeTable, DeValue};
        let root = DeTable::parse(&self.text).ok()?;
        let mut table = root.get_ref();
        let mut span = None;
        for (i, k) in keys.iter().enumerate() {
            let (key, value) = table.iter().find(|(key, _)| key.get_ref().as_ref() == *k)?;
            span = Some(key.span());
            if i + 1 < keys.len() {
                match value.get_ref() {
                    DeValue::Table(t) => table = t,
                    _ => return None,
                }
            }
        }
        Some(line_of(&self.text, span?.start))
    }
}

fn line_of(text: &str, byte: usize) -> usize {
    1 + text.as_bytes()[..byte.min(text.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
}

impl Config {
    /// Reads a configuration file.
    pub fn read(path: &Path) -> Result<(Config, Origin)> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if !meta.is_file() {
            return Err(Error::config(
                "config",
                path.display(),
                "not a regular file",
            ));
        }
        if meta.len() > 16 << 20 {
            return Err(Error::config(
                "config",
                path.display(),
                format!("{} bytes: too large for a configuration file", meta.len()),
            ));
        }
        let text = crate::util::regular_file(path)
            .and_then(|()| std::fs::read_to_string(path))
            .map_err(|e| Error::io(path, e))?;
        let origin = Origin {
            path: path.display().to_string(),
            text,
        };
        Ok((Config::parse(&origin)?, origin))
    }

    /// Parses configuration text; errors name `origin.path`, the line and the key.
    pub fn parse(origin: &Origin) -> Result<Config> {
        let text = origin.text.strip_prefix('\u{feff}').unwrap_or(&origin.text);
        toml::from_str::<Config>(text).map_err(|e| {
            let (line, key) = match e.span() {
                Some(s) => {
                    let line = line_of(text, s.start);
                    let l = text.lines().nth(line - 1).unwrap_or("");
                    let key = l
                        .split_once('=')
                        .map(|(k, _)| k)
                        .unwrap_or(l)
                        .trim()
                        .trim_matches(['[', ']', '"'])
                        .to_string();
                    (line, key)
                }
                None => (0, String::new()),
            };
            Error::ConfigFile {
                path: origin.path.clone(),
                line,
                key,
                msg: e.message().trim().to_string(),
            }
        })
    }

    /// Makes a mesh file's path absolute (canonical), as a new run stores it in `run.toml`
    /// and its checkpoints: `--resume` and a rerun from `run.toml` then find the mesh from
    /// any working directory. `bundled:` names stay; a path that cannot be resolved (a
    /// missing file) stays as given, for the mesh reader to report.
    pub fn absolute_mesh_path(&mut self) {
        if let Some(m) = &self.mesh
            && !m.starts_with("bundled:")
            && let Ok(p) = std::fs::canonicalize(m)
            && let Some(s) = p.to_str()
        {
            self.mesh = Some(s.to_string());
        }
    }

    /// The configuration as TOML (the head of `run.toml`).
    pub fn to_toml(&self) -> Result<toml::Table> {
        toml::Table::try_from(self).map_err(|e| Error::config("config", "toml", e.to_string()))
    }

    /// A short fingerprint of the configuration (FNV-1a of its TOML form).
    pub fn fingerprint(&self) -> u64 {
        let t = self.to_toml().map(|t| t.to_string()).unwrap_or_default();
        crate::util::fnv1a64(t.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config> {
        Config::parse(&Origin {
            path: "test.toml".into(),
            text: text.into(),
        })
    }

    #[test]
    fn round_trip_through_toml() {
        let mut c = Config {
            mesh: Some("bundled:coarse".into()),
            steps: Some(1234),
            cfl: 0.9,
            probe: vec![[0.1, 0.2, 0.3], [-0.4, 0.5, 0.06]],
            f_peak: Some(1.234_567_890_123e8),
            ..Config::default()
        };
        c.materials.insert(
            "vacuum".into(),
            Material {
                sigma: 0.25,
                ..Material::new(4.0, 1.0)
            },
        );
        c.boundaries.insert(
            "xmin".into(),
            Boundary::of(crate::problem::BoundaryKind::Pmc),
        );
        let text = c.to_toml().unwrap().to_string();
        assert_eq!(parse(&text).unwrap(), c, "{text}");
    }

    /// `converge` is a key like every flag's long name (it was refused as an unknown
    /// field), written back when given; out of the flag's range 1..=4 the plan refuses it.
    #[test]
    fn converge_is_a_key() {
        let c = parse("converge = 2\n").unwrap();
        assert_eq!(c.converge, Some(2));
        let text = c.to_toml().unwrap().to_string();
        assert!(text.contains("converge = 2"), "{text}");
        assert!(
            !Config::default()
                .to_toml()
                .unwrap()
                .to_string()
                .contains("converge")
        );
        let e = crate::solver::Plan::new(&parse("converge = 9\n").unwrap(), None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("converge") && e.contains("1 to 4"), "{e}");
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let e = parse("steps = 10\ncfl = 0.5\nbogus = 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("test.toml: line 3") && e.contains("bogus"),
            "{e}"
        );
        let e = parse("steps = 10\ncfl = \"fast\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("cfl"), "{e}");
        let e = parse("[materials.glass]\neps_r = 4\ncolour = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3") && e.contains("colour"), "{e}");
        let e = parse("[boundaries.top]\nkind = \"wet\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("kind"), "{e}");
        let o = Origin {
            path: "a.toml".into(),
            text: "steps = 3\n\n[materials.glass]\neps_r = 2\n".into(),
        };
        assert_eq!(o.locate(&["materials", "glass"]), Some(3));
    }
}
