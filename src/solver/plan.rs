//! The validated plan of a run: every value of a [`Config`] checked in one place and turned
//! into the types the build needs. Checks that need the mesh or the time step (groups,
//! points inside the mesh, `fmax` below Nyquist) are done by the build, which names the
//! same flags.

use super::config::{BackendKind, Config, Extract, Method, Origin};
use crate::dg::Flux;
use crate::dga::operators::DualForm;
use crate::error::{Error, Result};
use crate::problem::{BoundaryKind, Problem};
use crate::real::Precision;
use crate::util::V3;
use std::path::PathBuf;
use std::time::Duration;

/// Where the mesh comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum MeshSpec {
    File(PathBuf),
    /// One of the meshes compiled into the binary: coarse, medium or fine.
    Bundled(String),
    /// Structured box: cells per axis and side lengths (m).
    Box {
        n: [usize; 3],
        l: [f64; 3],
    },
    /// Concentric balls ([`crate::mesh::generate::ball_mesh`]): shells across the first
    /// radius, then each group's name and outer radius (m).
    Ball {
        n: usize,
        shells: Vec<crate::mesh::generate::Shell>,
    },
}

/// Which analytic resonances to compare with (the `cavity` key, read and checked as such).
pub use super::spec::CavitySpec;

/// Which backend runs the time loop.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendSpec {
    Cpu,
    /// An OpenCL device (index or name substring; None: the first GPU, else CPU device).
    Opencl(Option<String>),
    /// The best OpenCL device found, else the CPU backend.
    Auto,
}

/// How long the record is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Length {
    Steps(usize),
    /// Simulated time in seconds.
    Time(f64),
    /// Neither `steps` nor `time` given: the mesh's default record
    /// ([`super::defaults::Scales::record_s`]).
    Default,
}

/// A validated run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The configuration it came from (written to `run.toml`, fingerprinted in checkpoints).
    pub config: Config,
    /// The configuration file, to locate keys in messages.
    pub origin: Option<Origin>,
    pub mesh: MeshSpec,
    pub refine: u32,
    /// The numbering of the mesh's tets and nodes ([`crate::mesh::order::MeshOrder`]).
    pub mesh_order: crate::mesh::order::MeshOrder,
    pub length: Length,
    pub cfl: f64,
    /// A given time step in seconds.
    pub dt_s: Option<f64>,
    pub precision: Precision,
    pub method: Method,
    pub dual: DualForm,
    pub order: usize,
    pub flux: Flux,
    pub backend: BackendSpec,
    pub problem: Problem,
    pub f_peak_hz: Option<f64>,
    pub fmax_hz: Option<f64>,
    pub extract: Extract,
    pub min_prominence: f64,
    /// Harmonic inversion: modes with a lower quality factor are dropped.
    pub min_q: f64,
    pub cavity: CavitySpec,
    pub mode_shapes: usize,
    pub seed: u64,
    pub checkpoint_steps: usize,
    pub checkpoint_every: Option<Duration>,
    /// Energy checks of the blow-up guard over the run (0: none).
    pub energy_checks: usize,
    /// The partitioner of a run on several ranks.
    pub partitioner: super::config::Partitioner,
    /// Where the DGA operators are assembled (one OpenCL process).
    pub assembly: super::config::Assembly,
    /// GPUs this process drives (`gpus`; 1: the ordinary single-device run).
    pub gpus: usize,
    /// Keys given that do nothing in this run ([`inert_keys`]), told before it starts.
    pub warnings: Vec<String>,
}

/// The keys `cfg` sets that this run does not use, each with why (issue 47, round four S3:
/// they were ignored without a word): the DG `order` and `flux` without `method = "dg"`, the
/// DGA `dual` form with it, `min_prominence` (the FFT extraction's) with harminv and
/// `min_q` (harminv's) with the FFT, `cfl` beside a given `dt`, and a material table that
/// sets nothing.
pub fn inert_keys(cfg: &Config) -> Vec<String> {
    let d = Config::default();
    let mut w = vec![];
    if cfg.method != Method::Dg {
        if cfg.order != d.order {
            w.push(format!(
                "order = {} (--order) has no effect without method = \"dg\" (--method dg)",
                cfg.order
            ));
        }
        if cfg.flux != d.flux {
            w.push(format!(
                "flux = {:?} (--flux) has no effect without method = \"dg\" (--method dg)",
                cfg.flux
            ));
        }
    } else if cfg.dual != d.dual {
        w.push(format!(
            "dual = {:?} (--dual) has no effect with method = \"dg\": it selects the DGA's dual update",
            cfg.dual
        ));
    }
    match cfg.extract {
        Extract::Harminv if cfg.min_prominence != d.min_prominence => w.push(format!(
            "min_prominence = {} (--min-prominence) has no effect with extract = \"harminv\": it thresholds the FFT extraction's peaks (extract = \"fft\")",
            cfg.min_prominence
        )),
        Extract::Fft if cfg.min_q.is_some() => w.push(format!(
            "min_q = {} (--min-q) has no effect with extract = \"fft\": the FFT extraction measures no Q",
            cfg.min_q.unwrap_or_default()
        )),
        _ => {}
    }
    if cfg.dt.is_some() && cfg.cfl != d.cfl {
        w.push(format!(
            "cfl = {} (--cfl) has no effect beside dt (--dt): the given time step is used",
            cfg.cfl
        ));
    }
    if let (Some(steps), Some(t)) = (cfg.steps, cfg.time) {
        // (issue 47 round five: `steps` overrides `time`, which was dropped without a word)
        w.push(format!(
            "time = {t:e} (--time) has no effect beside steps = {steps} (--steps): the step count is used"
        ));
    }
    if cfg.seed != d.seed && cfg.source.is_some() && !cfg.probe.is_empty() {
        w.push(format!(
            "seed = {} (--seed) has no effect: it draws only default source and probe points, and both are given",
            cfg.seed
        ));
    }
    // (issue 47 round five: a point given twice added the same signals twice, unsaid)
    for (i, p) in cfg.probe.iter().enumerate() {
        if cfg.probe[..i].contains(p) {
            continue;
        }
        let n = cfg.probe.iter().filter(|q| *q == p).count();
        if n > 1 {
            w.push(format!(
                "probe {p:?} (--probe) is given {n} times: each copy records the same signals"
            ));
        }
    }
    for (k, m) in &cfg.materials {
        if *m == crate::problem::Material::default() {
            w.push(format!(
                "[materials.{k}] sets nothing: the group keeps vacuum (eps_r = 1, mu_r = 1, lossless)"
            ));
        }
    }
    w
}

/// Most GPUs one process drives (`gpus`): more than any one host holds today.
pub const MAX_GPUS: u32 = 64;

fn gpus(n: u32) -> Result<usize> {
    if (1..=MAX_GPUS).contains(&n) {
        Ok(n as usize)
    } else {
        Err(Error::config(
            "gpus",
            n,
            format!("must be 1 to {MAX_GPUS} (the GPUs one process drives)"),
        ))
    }
}

/// Largest DG order accepted (setup cost grows like N^9 in the reference element).
pub const MAX_DG_ORDER: usize = 10;

fn positive(name: &str, x: f64) -> Result<f64> {
    if x > 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(Error::config(name, x, "must be a positive finite number"))
    }
}

fn finite_point(name: &str, p: V3) -> Result<V3> {
    if p.iter().all(|c| c.is_finite()) {
        Ok(p)
    } else {
        Err(Error::config(
            name,
            format!("{p:?}"),
            "coordinates must be finite",
        ))
    }
}

impl Plan {
    /// Validates `cfg` (read from `origin`, if from a file).
    pub fn new(cfg: &Config, origin: Option<Origin>) -> Result<Plan> {
        if !(cfg.cfl > 0.0 && cfg.cfl <= 1.0) {
            return Err(Error::config("cfl", cfg.cfl, "must be in (0, 1]"));
        }
        if let Some(t) = cfg.time
            && !(t > 0.0 && t.is_finite())
        {
            return Err(Error::config(
                "time",
                t,
                "must be a positive number of seconds",
            ));
        }
        let length = match (cfg.steps, cfg.time) {
            (Some(0), _) => return Err(Error::config("steps", 0, "must be at least 1")),
            (Some(s), _) => Length::Steps(usize::try_from(s).unwrap_or(usize::MAX)),
            (None, Some(t)) => Length::Time(t),
            (None, None) => Length::Default,
        };
        let dt_s = cfg.dt.map(|d| positive("dt", d)).transpose()?;
        let f_peak_hz = cfg.f_peak.map(|f| {
            positive("f-peak", f)
                .map_err(|_| Error::config("f-peak", f, "must be a positive frequency in Hz"))
        });
        let fmax_hz = cfg.fmax.map(|f| positive("fmax", f)).transpose()?;
        if let Some(q) = cfg.min_q
            && !(q > 0.0 && q.is_finite())
        {
            // (inf dropped every mode without a word)
            return Err(Error::config("min-q", q, "must be positive and finite"));
        }
        if let Some(d) = &cfg.device
            && d.trim().is_empty()
        {
            // (an empty name matched the first device, whatever it was)
            return Err(Error::config(
                "device",
                format!("{d:?}"),
                "empty: give a device index (see `dgatd devices`) or a part of its name",
            ));
        }
        if !(cfg.min_prominence > 0.0 && cfg.min_prominence < 1.0) {
            return Err(Error::config(
                "min-prominence",
                cfg.min_prominence,
                "must be in (0, 1)",
            ));
        }
        // run.toml and the checkpoint store the configuration as TOML, whose integers are
        // i64 (beyond, writing run.toml failed with "u64 value was too large", naming no key)
        for (key, v) in [
            ("seed", cfg.seed),
            ("steps", cfg.steps.unwrap_or(0)),
            ("checkpoint-steps", cfg.checkpoint_steps),
            ("energy-checks", cfg.energy_checks),
            ("mode-shapes", cfg.mode_shapes as u64),
        ] {
            if v > i64::MAX as u64 {
                return Err(Error::config(
                    key,
                    v,
                    format!(
                        "must be at most {} (2^63 - 1): run.toml stores it as a TOML integer",
                        i64::MAX
                    ),
                ));
            }
        }
        if let Some(n) = cfg.converge
            && !(1..=4).contains(&n)
        {
            // the flag's range (each level costs about 16 times the one before)
            return Err(Error::config(
                "converge",
                n,
                "must be 1 to 4 (levels above the base mesh; each costs about 16 times the one before)",
            ));
        }
        if !(cfg.checkpoint_minutes >= 0.0 && cfg.checkpoint_minutes.is_finite()) {
            return Err(Error::config(
                "checkpoint-minutes",
                cfg.checkpoint_minutes,
                "must be a non-negative number of minutes",
            ));
        }
        let backend = match (cfg.backend, &cfg.device) {
            (BackendKind::Cpu, Some(d)) => {
                return Err(Error::config(
                    "device",
                    d,
                    "--device needs --backend opencl or auto",
                ));
            }
            (BackendKind::Cpu, None) => BackendSpec::Cpu,
            (BackendKind::Opencl, d) => BackendSpec::Opencl(d.clone()),
            (BackendKind::Auto, Some(d)) => BackendSpec::Opencl(Some(d.clone())),
            (BackendKind::Auto, None) => BackendSpec::Auto,
        };
        Self::check_method(cfg, &backend)?;
        let problem = Self::problem(cfg)?;
        // counts and ranges a run's arithmetic carries, before any work
        super::limits::check_config(cfg)?;
        Ok(Plan {
            config: cfg.clone(),
            origin,
            mesh: mesh_spec(cfg)?,
            refine: cfg.refine,
            mesh_order: cfg.mesh_order,
            length,
            cfl: cfg.cfl,
            dt_s,
            precision: cfg.precision,
            method: cfg.method,
            dual: cfg.dual,
            order: cfg.order,
            flux: cfg.flux,
            backend,
            problem,
            f_peak_hz: f_peak_hz.transpose()?,
            fmax_hz,
            extract: cfg.extract,
            min_prominence: cfg.min_prominence,
            // a lossless DGA record has no damped modes (low-Q fits are leakage); with
            // conducting materials or lossy poles (Debye, damped Drude/Lorentz) every mode is
            // damped; an open resonator radiates, down to Q of a few units (a dielectric
            // sphere of ε_r = 10: TE₁ 9.1, TM₁ 4.2)
            min_q: cfg.min_q.unwrap_or(if open_boundary(cfg) {
                1.0
            } else {
                match cfg.method {
                    Method::Dga
                        if !cfg
                            .materials
                            .values()
                            .any(|m| m.is_lossy() || m.poles().iter().any(|p| p.is_lossy()))
                            && !cfg.boundaries.values().any(|b| b.kind == BoundaryKind::Abc) =>
                    {
                        1e4
                    }
                    _ => 10.0,
                }
            }),
            cavity: cfg.cavity,
            mode_shapes: cfg.mode_shapes,
            seed: cfg.seed,
            checkpoint_steps: usize::try_from(cfg.checkpoint_steps).unwrap_or(usize::MAX),
            // minutes beyond what a Duration holds (1e300) are "never by the clock"
            checkpoint_every: (cfg.checkpoint_minutes > 0.0).then(|| {
                Duration::try_from_secs_f64(60.0 * cfg.checkpoint_minutes).unwrap_or(Duration::MAX)
            }),
            energy_checks: usize::try_from(cfg.energy_checks).unwrap_or(usize::MAX),
            partitioner: cfg.partitioner,
            assembly: cfg.assembly,
            gpus: gpus(cfg.gpus)?,
            warnings: inert_keys(cfg),
        })
    }

    /// What only one method supports.
    fn check_method(cfg: &Config, backend: &BackendSpec) -> Result<()> {
        if cfg.method != Method::Dg {
            return Ok(());
        }
        if !(1..=MAX_DG_ORDER).contains(&cfg.order) {
            return Err(Error::config(
                "order",
                cfg.order,
                format!("must be in 1..={MAX_DG_ORDER}"),
            ));
        }
        if cfg.mode_shapes > 0 {
            return Err(Error::config(
                "mode-shapes",
                cfg.mode_shapes,
                "mode shapes are computed for --method dga only",
            ));
        }
        if cfg.precision == Precision::F32 && *backend == BackendSpec::Cpu {
            return Err(Error::config(
                "precision",
                "f32",
                "the DG CPU reference runs in f64; use --backend opencl for f32",
            ));
        }
        if let Some(s) = cfg.symmetry.filter(|s| s.has_pmc()) {
            return Err(Error::config(
                "symmetry",
                s,
                "--method dg supports PEC walls only (give the planes as pec, or run --method dga)",
            ));
        }
        if let Some((name, b)) = cfg
            .boundaries
            .iter()
            .find(|(_, b)| b.kind != BoundaryKind::Pec)
        {
            return Err(Error::config(
                "boundary",
                format!("{name}={}", b.kind.name()),
                "--method dg supports PEC walls only",
            ));
        }
        if let Some((name, _)) = cfg.materials.iter().find(|(_, m)| m.is_dispersive()) {
            return Err(Error::config(
                "material",
                name,
                "--method dg does not support dispersive materials (debye, drude, lorentz)",
            ));
        }
        if let Some((name, _)) = cfg.materials.iter().find(|(_, m)| m.pml) {
            return Err(Error::config(
                "material",
                name,
                "--method dg does not support perfectly matched layers (pml); use --method dga",
            ));
        }
        if let Some((name, _)) = cfg.materials.iter().find(|(_, m)| m.is_lossy()) {
            return Err(Error::config(
                "material",
                name,
                "--method dg does not support conducting materials (sigma, tan_delta, sigma_m, absorbing)",
            ));
        }
        if cfg.source_radius > 0.0 {
            return Err(Error::config(
                "source_radius",
                format!("{}", cfg.source_radius),
                "--method dg drives the tet containing the source point only; leave source_radius at 0",
            ));
        }
        Ok(())
    }

    /// The physical problem of the configuration.
    fn problem(cfg: &Config) -> Result<Problem> {
        let d = cfg.source_dir;
        let nd = crate::util::norm(d);
        if !(nd > 0.0 && nd.is_finite()) {
            // (issue 47 round five: [1e-310, 0, 0] and [1e308, 1e308, 0] were called "not
            // a non-zero finite vector", which they are; their length is what fails)
            let finite = d.iter().all(|c| c.is_finite());
            let why = if finite && d.iter().any(|&c| c != 0.0) {
                "its length underflows or overflows in double precision: only the direction counts, so give it in ordinary numbers (e.g. [1, 0, 0])"
            } else {
                "must be a non-zero finite vector"
            };
            return Err(Error::config("source direction", format!("{d:?}"), why));
        }
        for (k, m) in &cfg.materials {
            m.validate(k)?;
        }
        for (k, b) in &cfg.boundaries {
            b.validate(k)?;
        }
        // the symmetry planes' faces are the groups symmetry_x, _y, _z, with their walls
        let mut boundaries = cfg.boundaries.clone();
        if let Some(sym) = &cfg.symmetry {
            for (group, b) in sym.boundaries() {
                if boundaries.insert(group.clone(), b).is_some() {
                    return Err(Error::config(
                        "boundary",
                        &group,
                        format!(
                            "{group} is the surface group of a symmetry plane (symmetry = \"{sym}\"), which sets its wall; give the wall in symmetry, or rename the group"
                        ),
                    ));
                }
            }
        }
        Ok(Problem {
            materials: cfg.materials.clone(),
            boundaries,
            source: cfg.source.map(|p| finite_point("source", p)).transpose()?,
            source_dir: d,
            source_radius: {
                crate::dga::excitation::check_radius(cfg.source_radius)?;
                cfg.source_radius
            },
            probes: cfg
                .probe
                .iter()
                .map(|&p| finite_point("probe", p))
                .collect::<Result<_>>()?,
        })
    }

    /// Names the configuration file, line and key of an unknown group, when the group
    /// came from the file.
    pub fn locate(&self, e: Error) -> Error {
        if let (
            Error::UnknownGroup {
                what,
                key,
                mesh,
                known,
            },
            Some(o),
        ) = (&e, &self.origin)
        {
            let table = if *what == "material" {
                "materials"
            } else {
                "boundaries"
            };
            if let Some(line) = o.locate(&[table, key]) {
                let dim = if *what == "material" {
                    "volume"
                } else {
                    "surface"
                };
                return Error::ConfigFile {
                    path: o.path.clone(),
                    line,
                    key: format!("{table}.{key}"),
                    msg: format!("no {dim} group {key:?} in {mesh} (known: {known})"),
                };
            }
        }
        e
    }
}

fn mesh_spec(cfg: &Config) -> Result<MeshSpec> {
    if let Some(b) = &cfg.ball {
        if cfg.mesh.is_some() || cfg.box_mesh.is_some() {
            return Err(Error::config(
                "ball",
                b,
                "a generated ball, a generated box and a mesh file exclude each other",
            ));
        }
        return Ok(MeshSpec::Ball {
            n: b.shells,
            shells: b.regions.clone(),
        });
    }
    if let Some(b) = &cfg.box_mesh {
        if cfg.mesh.is_some() {
            return Err(Error::config(
                "box",
                b,
                "a generated box and a mesh file exclude each other",
            ));
        }
        return Ok(MeshSpec::Box {
            n: b.cells,
            l: b.size,
        });
    }
    let mesh = cfg.mesh.as_deref().unwrap_or("bundled:medium");
    if mesh.trim().is_empty() {
        // (an empty path failed as ": No such file or directory", naming nothing)
        return Err(Error::config(
            "mesh",
            format!("{mesh:?}"),
            "an empty path: give a Gmsh .msh file or bundled:coarse|medium|fine",
        ));
    }
    Ok(match mesh.strip_prefix("bundled:") {
        Some(name) => MeshSpec::Bundled(name.to_string()),
        None => MeshSpec::File(PathBuf::from(mesh)),
    })
}

/// Whether the run has an open boundary: an absorbing wall, an absorbing layer or a PML.
fn open_boundary(cfg: &Config) -> bool {
    cfg.boundaries.values().any(|b| b.kind == BoundaryKind::Abc)
        || cfg.materials.values().any(|m| m.absorbing || m.pml)
}

/// `x,y,z` with finite numbers ([`super::spec::parse_point`]).
pub use super::spec::parse_point;
