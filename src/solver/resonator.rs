//! The resonator job: mesh -> operators -> leapfrog with a pulse -> probe spectra ->
//! resonances matched to analytic modes. The CLI's `dgatd resonator` is a thin wrapper.

use super::{Probe, Record, Source, Waveform};
use crate::backend::Stepper;
use crate::backend::cpu::CpuStepper;
use crate::backend::opencl;
use crate::dga::operators::{DualForm, Operators};
use crate::dga::{Dga, Materials};
use crate::mesh::{Mesh, Topology, generate, gmsh};
use crate::spectrum::analytic::{Cavity, Mode};
use crate::spectrum::{self, Peak, Spectrum};
use crate::util::{Rng, V3};
use crate::{C0, Error, Result};
use std::path::PathBuf;
use std::sync::Arc;

/// Floating-point precision of the time loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F32,
    F64,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "f32" => Ok(Precision::F32),
            "f64" => Ok(Precision::F64),
            _ => Err(Error::config("precision", s, "expected f32 or f64")),
        }
    }
}

/// Where the mesh comes from.
#[derive(Clone, Debug, serde::Serialize)]
pub enum MeshSpec {
    File(PathBuf),
    /// One of the meshes compiled into the binary: coarse, medium or fine.
    Bundled(String),
    /// Structured box: cells per axis and side lengths (m).
    Box {
        n: [usize; 3],
        l: [f64; 3],
    },
}

/// How resonances are extracted from the probe signals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Extract {
    /// Harmonic inversion (matrix pencil) of every probe component, clustered.
    Harminv,
    /// Peaks of the combined FFT spectrum.
    Fft,
}

impl std::str::FromStr for Extract {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "harminv" => Ok(Extract::Harminv),
            "fft" => Ok(Extract::Fft),
            _ => Err(Error::config("extract", s, "expected harminv or fft")),
        }
    }
}

/// Which analytic resonances to compare with.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub enum CavitySpec {
    /// Recognise a z-axis cylinder or a box from the mesh.
    Auto,
    None,
    Given(#[serde(skip)] Cavity),
}

/// Which backend runs the time loop.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendSpec {
    /// The CPU reference backend.
    Cpu,
    /// An OpenCL device (index or name substring; None: the first GPU, else CPU device).
    Opencl(Option<String>),
    /// The best OpenCL device found, else the CPU backend.
    Auto,
}

/// Every parameter of a resonator run (written to `run.toml`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct ResonatorConfig {
    pub mesh: MeshSpec,
    /// Uniform 1:8 refinements applied after reading (cylinder walls are projected).
    pub refine: u32,
    pub steps: Option<usize>,
    /// Simulated time in seconds when `steps` is not given.
    pub time_s: f64,
    pub cfl: f64,
    pub precision: Precision,
    pub dual: DualForm,
    pub backend: BackendSpec,
    pub source: Option<V3>,
    pub source_dir: V3,
    pub probes: Vec<V3>,
    /// Peak frequency of the Gaussian-derivative pulse (default c / largest extent).
    pub f_peak_hz: Option<f64>,
    /// Upper end of the analysed band (default 2.2 f_peak).
    pub fmax_hz: Option<f64>,
    /// Peaks below this prominence (relative to the largest peak in the band) are dropped.
    pub min_prominence: f64,
    /// Harmonic inversion: modes with a lower quality factor (or growing) are dropped.
    /// None: 1e4 for DGA (the leapfrog does not damp), 10 for DG (upwind damping sets Q).
    pub min_q: Option<f64>,
    pub materials: Vec<(String, f64, f64)>,
    pub cavity: CavitySpec,
    pub extract: Extract,
    /// Mode shapes of the strongest resonances (second pass on the CPU), 0 for none.
    pub mode_shapes: usize,
    pub seed: u64,
    /// Discretisation: the DGA leapfrog (default) or nodal DG with LSERK4.
    pub method: Method,
    /// DG polynomial order (with `method = dg`).
    pub order: usize,
    /// DG numerical flux (with `method = dg`).
    pub flux: crate::dg::Flux,
}

/// Spatial discretisation of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Dga,
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

impl std::str::FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "dga" => Ok(Method::Dga),
            "dg" => Ok(Method::Dg),
            _ => Err(Error::config("method", s, "expected dga or dg")),
        }
    }
}

impl Default for ResonatorConfig {
    fn default() -> Self {
        ResonatorConfig {
            mesh: MeshSpec::Bundled("medium".into()),
            refine: 0,
            steps: None,
            time_s: 1.0e-6,
            cfl: 0.95,
            precision: Precision::F64,
            dual: DualForm::Factored,
            backend: BackendSpec::Cpu,
            source: None,
            source_dir: [0.0, 0.0, 1.0],
            probes: vec![],
            f_peak_hz: None,
            fmax_hz: None,
            min_prominence: 0.02,
            min_q: None,
            materials: vec![],
            cavity: CavitySpec::Auto,
            extract: Extract::Harminv,
            mode_shapes: 0,
            seed: 1,
            method: Method::Dga,
            order: 3,
            flux: crate::dg::Flux::Upwind,
        }
    }
}

/// A resonance compared with an analytic mode.
#[derive(Clone, Debug)]
pub struct Matched {
    pub mode: Mode,
    /// The strongest resonance within 3% (after the leapfrog correction), if any.
    pub peak: Option<(Peak, f64)>,
}

/// Everything a resonator run produced.
pub struct ResonatorResult {
    pub mesh: Mesh,
    pub n_edges: usize,
    pub n_free_half: usize,
    pub dt_s: f64,
    pub rho: f64,
    pub mesh_hash: Option<u64>,
    pub source: Source,
    pub probes: Vec<Probe>,
    pub waveform: Waveform,
    pub record: Record,
    /// First sample used for the spectrum (after the pulse has ended).
    pub analysis_start: usize,
    pub spectrum: Spectrum,
    pub peaks: Vec<Peak>,
    pub cavity: Option<Cavity>,
    pub matched: Vec<Matched>,
    pub fmax_hz: f64,
    pub setup_s: f64,
    pub backend: String,
    /// Why the backend was chosen (auto selection), for a one-line notice.
    pub backend_notice: Option<String>,
    /// Complex field of the strongest resonances (with `mode_shapes > 0`).
    pub mode_shapes: Vec<super::modeshape::ModeShape>,
    /// Unknowns of the time loop (DGA: 4 per tet + free half-edges; DG: 6 Np per tet).
    pub dofs: usize,
    pub method: Method,
    /// Bytes and flops of one time step in the bench's models (`bench::step_model`,
    /// `bench::dg_models`).
    pub model_bytes_per_step: f64,
    pub model_flops_per_step: f64,
}

impl ResonatorResult {
    /// Peak frequency of the exciting pulse in Hz.
    pub fn waveform_f_peak(&self) -> f64 {
        crate::C0 / (2.0 * std::f64::consts::PI * self.waveform.tau)
    }
    /// Corrected frequency of a peak.
    pub fn corrected(&self, p: &Peak) -> f64 {
        correct(self.method, p.f_hz, self.dt_s)
    }
    /// The analytic mode nearest to a corrected frequency.
    pub fn nearest_mode(&self, f: f64) -> Option<&Mode> {
        self.matched
            .iter()
            .map(|m| &m.mode)
            .min_by(|a, b| (a.f_hz - f).abs().total_cmp(&(b.f_hz - f).abs()))
    }
}

/// The leapfrog's exact frequency correction for DGA; DG's LSERK4 phase error is left in
/// (`f_corrected_hz = f_hz`).
pub fn correct(method: Method, f_hz: f64, dt_s: f64) -> f64 {
    match method {
        Method::Dga => spectrum::leapfrog_correction(f_hz, dt_s),
        Method::Dg => f_hz,
    }
}

/// The error of a run that stopped early, after writing the probe data recorded so far.
fn stopped(
    cause: Error,
    record: &Record,
    checkpointed: Option<usize>,
    out: Option<&std::path::Path>,
) -> Error {
    let Some(dir) = out else { return cause };
    let mut saved = match crate::report::write_probe_csv(dir, record) {
        Ok(p) => format!(
            "the {} steps recorded before the stop are in {}",
            record.steps,
            p.display()
        ),
        Err(e) => format!("the probe data could not be written: {e}"),
    };
    let ck = dir.join(super::checkpoint::FILE);
    match checkpointed {
        Some(k) => saved += &format!("; checkpoint at step {k}: {}", ck.display()),
        None if ck.exists() => saved += &format!("; an earlier checkpoint is {}", ck.display()),
        None => {}
    }
    if !matches!(cause, Error::Unstable(_)) && (checkpointed.is_some() || ck.exists()) {
        saved += &format!(
            "\ncontinue with: dgatd resonator --resume {}",
            dir.display()
        );
    }
    Error::Stopped {
        cause: Box::new(cause),
        saved,
    }
}

/// Host memory of a resonator run per tetrahedron (measured: 843 MB peak for 493k tets).
pub const HOST_BYTES_PER_TET: f64 = 1800.0;
/// Largest mesh the 32-bit edge and half-edge indices allow (half-edges ≈ 2.35 per tet).
pub const MAX_TETS: f64 = 1.5e9;

/// Memory the OS reports as available (Linux `/proc/meminfo`), if known.
pub fn available_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let l = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Refuses a mesh of `tets` tetrahedra (asked for by `name = value`) that exceeds the index
/// limit or the host memory available, before anything is allocated.
fn check_host_memory(tets: f64, name: &str, value: &str) -> Result<()> {
    let need = tets * HOST_BYTES_PER_TET;
    if tets > MAX_TETS {
        return Err(Error::config(
            name,
            value,
            format!(
                "it gives {tets:.3e} tetrahedra, above the {MAX_TETS:.1e} that 32-bit indices allow"
            ),
        ));
    }
    if let Some(avail) = available_memory()
        && need > avail as f64
    {
        return Err(Error::config(
            name,
            value,
            format!(
                "it gives {tets:.3e} tetrahedra, needing about {} of host memory; {} is available",
                crate::util::human_bytes(need as u64),
                crate::util::human_bytes(avail)
            ),
        ));
    }
    Ok(())
}

/// The DG stepper of a run (CPU or OpenCL) and its time step and spectral radius, at the
/// run's source and probe points.
#[allow(clippy::too_many_arguments)]
fn dg_stepper(
    op: &Arc<crate::dg::DgOperator>,
    device: Option<opencl::DeviceInfo>,
    cfg: &ResonatorConfig,
    mesh: &Mesh,
    src: &Source,
    probe_pts: &[V3],
    wave: Waveform,
) -> Result<(Box<dyn Stepper>, f64, f64)> {
    use crate::dg::cpu::{DgCpuStepper, DgProbe, DgSource, RHO_ITERS, RHO_SEED, time_step_for};
    use crate::dg::opencl::DgClStepper;
    let source = DgSource {
        tet: src.tet,
        dir: src.dir,
        wave,
    };
    let probes = probe_pts
        .iter()
        .map(|&p| DgProbe::new(mesh, op, p))
        .collect::<Result<Vec<_>>>()?;
    // On a device, ρ comes from the device kernels (as for DGA); on the CPU, from the CPU.
    fn on_device<T: crate::Real + 'static>(
        dev: Arc<opencl::ClDevice>,
        op: &Arc<crate::dg::DgOperator>,
        cfl: f64,
        source: DgSource,
        probes: Vec<DgProbe>,
    ) -> Result<(Box<dyn Stepper>, f64, f64)> {
        let mut s = DgClStepper::<T>::new(dev, op.clone(), 0.0, Some(source), probes)?;
        let (dt, rho) = time_step_for(s.spectral_radius(RHO_ITERS, RHO_SEED)?, cfl);
        s.set_time_step(dt);
        Ok((Box::new(s), dt, rho))
    }
    let (s, dt, rho): (Box<dyn Stepper>, f64, f64) = match device {
        None => {
            if cfg.precision == Precision::F32 {
                return Err(Error::config(
                    "precision",
                    "f32",
                    "the DG CPU reference runs in f64; use --backend opencl for f32",
                ));
            }
            let (dt, rho) = crate::dg::cpu::time_step(op, cfg.cfl);
            (
                Box::new(DgCpuStepper::new(op.clone(), dt, Some(source), probes)),
                dt,
                rho,
            )
        }
        Some(info) => {
            let dev = opencl::ClDevice::open(info)?;
            match cfg.precision {
                Precision::F64 => on_device::<f64>(dev, op, cfg.cfl, source, probes)?,
                Precision::F32 => on_device::<f32>(dev, op, cfg.cfl, source, probes)?,
            }
        }
    };
    Ok((s, dt, rho))
}

/// Loads or generates the mesh of a config (with refinements).
pub fn load_mesh(cfg: &ResonatorConfig) -> Result<(Mesh, Option<u64>)> {
    let (mut mesh, hash) = match &cfg.mesh {
        MeshSpec::File(p) => {
            let bytes = std::fs::read(p).map_err(|e| Error::io(p, e))?;
            (
                gmsh::parse(&bytes, &p.display().to_string())?,
                Some(crate::util::fnv1a64(&bytes)),
            )
        }
        MeshSpec::Bundled(name) => {
            let bytes = bundled_mesh(name)?;
            (
                gmsh::parse(bytes, &format!("bundled:cylinder_{name}.msh"))?,
                Some(crate::util::fnv1a64(bytes)),
            )
        }
        MeshSpec::Box { n, l } => {
            if n.contains(&0) || l.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
                return Err(Error::config(
                    "box",
                    format!("{n:?} {l:?}"),
                    "cells must be >= 1 and sides positive",
                ));
            }
            let tets = 6.0 * n.iter().map(|&k| k as f64).product::<f64>();
            check_host_memory(tets, "box", &format!("{n:?}"))?;
            (generate::box_mesh(*n, *l), None)
        }
    };
    if cfg.refine > 0 {
        let tets = mesh.n_tets() as f64 * 8f64.powi(cfg.refine as i32);
        check_host_memory(tets, "refine", &cfg.refine.to_string())?;
    }
    let cyl = match detect_cavity(&mesh) {
        Some((Cavity::Cylinder { radius, .. }, c)) => Some(generate::Cylinder {
            origin: c,
            axis: [0.0, 0.0, 1.0],
            radius,
        }),
        _ => None,
    };
    for _ in 0..cfg.refine {
        mesh = generate::refine(&mesh, cyl);
    }
    Ok((mesh, hash))
}

/// The cylinder meshes of `meshes/`, compiled into the binary so the main job runs from
/// anywhere (and on machines the repository is not copied to).
pub fn bundled_mesh(name: &str) -> Result<&'static [u8]> {
    Ok(match name {
        "coarse" => include_bytes!("../../meshes/cylinder_coarse.msh"),
        "medium" => include_bytes!("../../meshes/cylinder_medium.msh"),
        "fine" => include_bytes!("../../meshes/cylinder_fine.msh"),
        _ => {
            return Err(Error::config(
                "mesh",
                format!("bundled:{name}"),
                "bundled meshes are coarse, medium and fine",
            ));
        }
    })
}

/// Recognises a box or a z-axis circular cylinder by comparing the mesh volume with the
/// bounding box. Returns the cavity and its axis origin.
pub fn detect_cavity(mesh: &Mesh) -> Option<(Cavity, V3)> {
    let (lo, hi) = mesh.bbox();
    let ext = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    let vol: f64 = (0..mesh.n_tets()).map(|n| mesh.tet_volume(n)).sum();
    let boxv = ext[0] * ext[1] * ext[2];
    if (vol - boxv).abs() < 1e-9 * boxv {
        return Some((
            Cavity::Box {
                a: ext[0],
                b: ext[1],
                d: ext[2],
            },
            lo,
        ));
    }
    // Sphere about the bbox centre: equal extents, volume within 3% of 4/3 π r³.
    let ctr = [
        0.5 * (lo[0] + hi[0]),
        0.5 * (lo[1] + hi[1]),
        0.5 * (lo[2] + hi[2]),
    ];
    let rs = mesh
        .nodes
        .iter()
        .map(|p| crate::util::norm(crate::util::sub(*p, ctr)))
        .fold(0.0, f64::max);
    let sphv = 4.0 / 3.0 * std::f64::consts::PI * rs * rs * rs;
    if (0..3).all(|c| (ext[c] - 2.0 * rs).abs() < 0.02 * rs) && (vol - sphv).abs() < 0.03 * sphv {
        return Some((Cavity::Sphere { radius: rs }, ctr));
    }
    // Cylinder about the z axis through the bbox centre: radius = largest node distance
    // from the axis; x and y extents equal to mesh resolution; volume of the inscribed
    // polyhedron within 3% of π r² h.
    let c = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), lo[2]];
    let r = mesh
        .nodes
        .iter()
        .map(|p| ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2)).sqrt())
        .fold(0.0, f64::max);
    let cylv = std::f64::consts::PI * r * r * ext[2];
    if (ext[0] - ext[1]).abs() < 0.02 * r
        && (ext[0] - 2.0 * r).abs() < 0.02 * r
        && (vol - cylv).abs() < 0.03 * cylv
    {
        return Some((
            Cavity::Cylinder {
                radius: r,
                height: ext[2],
            },
            c,
        ));
    }
    None
}

/// A point inside the mesh: `frac` of the bounding box if inside, otherwise the
/// barycentre of a seeded random tetrahedron.
fn default_point(mesh: &Mesh, frac: V3, rng: &mut Rng) -> V3 {
    let (lo, hi) = mesh.bbox();
    let p = std::array::from_fn(|c| lo[c] + frac[c] * (hi[c] - lo[c]));
    if mesh.locate(p).is_some() {
        return p;
    }
    let n = (rng.next_u64() % mesh.n_tets() as u64) as usize;
    let x = mesh.tet_x(n);
    std::array::from_fn(|c| 0.25 * (x[0][c] + x[1][c] + x[2][c] + x[3][c]))
}

/// `count` seeded random points inside the mesh, off its symmetry planes and axis: each
/// coordinate at least 8% of the extent from the bounding-box mid-planes, at least 10% of
/// the extent from the other points, and inside a tet (rejection sampling).
pub fn random_probes(mesh: &Mesh, count: usize, seed: u64) -> Vec<V3> {
    let (lo, hi) = mesh.bbox();
    let ext: V3 = std::array::from_fn(|c| hi[c] - lo[c]);
    let emax = ext.iter().cloned().fold(0.0, f64::max);
    let mid: V3 = std::array::from_fn(|c| 0.5 * (lo[c] + hi[c]));
    let mut rng = Rng::new(seed ^ 0x9e37_79b9);
    let mut out: Vec<V3> = Vec::new();
    for _ in 0..20000 {
        if out.len() == count {
            break;
        }
        let p: V3 = std::array::from_fn(|c| lo[c] + ext[c] * (0.1 + 0.8 * rng.uniform()));
        let off_planes = (0..3).all(|c| (p[c] - mid[c]).abs() > 0.08 * ext[c]);
        let spread = out
            .iter()
            .all(|q| crate::util::norm(crate::util::sub(p, *q)) > 0.1 * emax);
        if off_planes && spread && mesh.locate(p).is_some() {
            out.push(p);
        }
    }
    let mut fb = Rng::new(seed);
    while out.len() < count {
        out.push(default_point(mesh, [0.38, 0.77, 0.55], &mut fb));
    }
    out
}

/// Long-run controls of [`run_with`]: checkpoints, resume, interruption, fault injection.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Directory for checkpoints and, when the run stops early, the partial `probe.csv`.
    /// None: the run writes nothing itself.
    pub out: Option<PathBuf>,
    /// Checkpoint every this many steps (0: not by steps).
    pub checkpoint_steps: usize,
    /// Checkpoint after this much wall time since the last one.
    pub checkpoint_every: Option<std::time::Duration>,
    /// Continue from this checkpoint (it must come from the same configuration and mesh).
    pub resume: Option<super::checkpoint::Checkpoint>,
    /// Command-line arguments stored in checkpoints (so that `--resume` can rebuild the run).
    pub args: Vec<String>,
    /// Set by a signal handler: the run saves a checkpoint and the probe data, and stops.
    pub interrupt: Option<&'a std::sync::atomic::AtomicBool>,
    /// Fail like a lost device at this step (testing the failure path).
    pub fault_at_step: Option<usize>,
}

/// Identifies a run configuration and its mesh; a checkpoint is only resumed by the run it
/// came from. Hashes the full `Debug` form of the config (f64 values print exactly) and
/// the mesh content hash.
pub fn fingerprint(cfg: &ResonatorConfig, mesh_hash: Option<u64>, n_tets: usize) -> u64 {
    crate::util::fnv1a64(format!("{cfg:?}|{mesh_hash:?}|{n_tets}").as_bytes())
}

/// Runs the whole job. `progress(done, total)` is called as steps complete.
pub fn run(
    cfg: &ResonatorConfig,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ResonatorResult> {
    run_with(cfg, &mut RunOptions::default(), progress)
}

/// [`run`] with checkpoints, resume, interruption and fault injection (see [`RunOptions`]).
/// If the time loop stops early (interrupt, device failure, blow-up) and `opts.out` is set,
/// the probe samples recorded so far are written to `out/probe.csv` and the error
/// ([`Error::Stopped`]) says where they and the last checkpoint are.
pub fn run_with(
    cfg: &ResonatorConfig,
    opts: &mut RunOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ResonatorResult> {
    let t0 = std::time::Instant::now();
    if !(cfg.cfl > 0.0 && cfg.cfl <= 1.0) {
        return Err(Error::config("cfl", cfg.cfl, "must be in (0, 1]"));
    }
    if let Some(s) = cfg.steps
        && s == 0
    {
        return Err(Error::config("steps", s, "must be at least 1"));
    }
    if cfg.steps.is_none() && !(cfg.time_s > 0.0 && cfg.time_s.is_finite()) {
        return Err(Error::config(
            "time",
            cfg.time_s,
            "must be a positive number of seconds",
        ));
    }
    if cfg.mode_shapes > 0 && cfg.method == Method::Dg {
        return Err(Error::config(
            "mode-shapes",
            cfg.mode_shapes,
            "mode shapes are computed for --method dga only",
        ));
    }
    let (mesh, mesh_hash) = load_mesh(cfg)?;
    let topo = Topology::build(&mesh)?;
    let mat = Materials::from_groups(&mesh, &cfg.materials)?;
    // The DGA operators (only for DGA runs) or the DG operator.
    let dga = match cfg.method {
        Method::Dga => Some(Arc::new(Dga::assemble(&mesh, &topo, &mat)?)),
        Method::Dg => None,
    };
    let dg_op = match cfg.method {
        Method::Dg => Some(Arc::new(crate::dg::DgOperator::new(
            &mesh, cfg.order, cfg.flux, &mat.eps, &mat.mu,
        )?)),
        Method::Dga => None,
    };
    // Backend choice.
    let (device, backend_notice) = match &cfg.backend {
        BackendSpec::Cpu => (None, None),
        BackendSpec::Opencl(spec) => (Some(opencl::select_device(spec.as_deref())?), None),
        BackendSpec::Auto => match opencl::select_device(None) {
            Ok(d) if cfg.precision == Precision::F32 || d.fp64 => {
                let n = format!(
                    "using OpenCL device {} ({} / {})",
                    d.index, d.platform, d.name
                );
                (Some(d), Some(n))
            }
            Ok(d) => (
                None,
                Some(format!(
                    "OpenCL device {} has no fp64; using the CPU backend",
                    d.name
                )),
            ),
            Err(e) => (None, Some(format!("{e}; using the CPU backend"))),
        },
    };
    let (lo, hi) = mesh.bbox();
    let extent = (0..3).map(|c| hi[c] - lo[c]).fold(0.0, f64::max);
    let f_peak = cfg.f_peak_hz.unwrap_or(C0 / extent);
    if !(f_peak > 0.0 && f_peak.is_finite()) {
        return Err(Error::config(
            "f-peak",
            f_peak,
            "must be a positive frequency in Hz",
        ));
    }
    let wave = Waveform::gaussian_derivative(f_peak);
    let mut rng = Rng::new(cfg.seed);
    let sp = cfg
        .source
        .unwrap_or_else(|| default_point(&mesh, [0.81, 0.67, 0.47], &mut rng));
    let probe_pts: Vec<V3> = if cfg.probes.is_empty() {
        [[0.38, 0.77, 0.55], [0.26, 0.35, 0.41], [0.70, 0.24, 0.60]]
            .iter()
            .map(|&f| default_point(&mesh, f, &mut rng))
            .collect()
    } else {
        cfg.probes.clone()
    };
    let probes = probe_pts
        .iter()
        .map(|&p| Probe::new(&mesh, &topo, p))
        .collect::<Result<Vec<_>>>()?;
    // The source pattern scales with Δt; the device path rescales a unit pattern itself.
    let unit_source = match &dga {
        Some(d) => Source::new(&mesh, &topo, d, 1.0, sp, cfg.source_dir)?,
        None => Source::located(&mesh, sp, cfg.source_dir)?,
    };
    let real = match cfg.precision {
        Precision::F64 => 8,
        Precision::F32 => 4,
    };
    // Modelled bytes and flops of one step (the bench's models).
    let (model_bytes, model_flops) = match (&dga, &dg_op) {
        (Some(d), _) => crate::bench::step_model(d, real),
        (None, Some(op)) => {
            let [(fb, ff), (ub, uf)] = crate::bench::dg_models(op, real);
            (5.0 * (fb + ub), 5.0 * (ff + uf))
        }
        (None, None) => (0.0, 0.0),
    };
    let (mut stepper, dt, rho): (Box<dyn Stepper>, f64, f64) = match (&dga, &dg_op) {
        (None, Some(op)) => dg_stepper(op, device, cfg, &mesh, &unit_source, &probe_pts, wave)?,
        (None, None) => unreachable!("one of the two methods is assembled"),
        (Some(dga), _) => match device {
            Some(info) => {
                let dev = opencl::ClDevice::open(info)?;
                fn dev_stepper<T: crate::Real + 'static>(
                    dev: Arc<opencl::ClDevice>,
                    dga: &Arc<Dga>,
                    cfg: &ResonatorConfig,
                    src: &Source,
                    probes: &[Probe],
                    wave: Waveform,
                ) -> Result<(Box<dyn Stepper>, f64, f64)> {
                    let mut s =
                        opencl::ClStepper::<T>::new(dev, dga.clone(), cfg.dual, Some(src), probes)?;
                    let rho = s.spectral_radius(60, 0x5eed)? * super::RHO_MARGIN;
                    let dt = cfg.cfl * 2.0 / rho.sqrt();
                    s.set_time_step(dt, Some(wave))?;
                    Ok((Box::new(s), dt, rho))
                }
                match cfg.precision {
                    Precision::F64 => {
                        dev_stepper::<f64>(dev, dga, cfg, &unit_source, &probes, wave)?
                    }
                    Precision::F32 => {
                        dev_stepper::<f32>(dev, dga, cfg, &unit_source, &probes, wave)?
                    }
                }
            }
            None => {
                let (dt, rho) = super::time_step(dga, cfg.cfl)?;
                let source = Source {
                    pattern: unit_source
                        .pattern
                        .iter()
                        .map(|&(h, g)| (h, g * dt))
                        .collect(),
                    ..unit_source.clone()
                };
                let s: Box<dyn Stepper> = match cfg.precision {
                    Precision::F64 => {
                        let ops =
                            Arc::new(Operators::<f64>::new(dga, dt, cfg.dual == DualForm::Csr));
                        Box::new(CpuStepper::new(
                            dga.clone(),
                            ops,
                            cfg.dual,
                            Some((&source, wave)),
                            probes.clone(),
                        )?)
                    }
                    Precision::F32 => {
                        let ops =
                            Arc::new(Operators::<f32>::new(dga, dt, cfg.dual == DualForm::Csr));
                        Box::new(CpuStepper::new(
                            dga.clone(),
                            ops,
                            cfg.dual,
                            Some((&source, wave)),
                            probes.clone(),
                        )?)
                    }
                };
                (s, dt, rho)
            }
        },
    };
    let source = Source {
        pattern: unit_source
            .pattern
            .iter()
            .map(|&(h, g)| (h, g * dt))
            .collect(),
        ..unit_source
    };
    let dt_s = dt / C0;
    let steps = cfg
        .steps
        .unwrap_or_else(|| (cfg.time_s / dt_s).ceil() as usize);
    let fmax = cfg.fmax_hz.unwrap_or(2.2 * f_peak);
    let nyquist = 0.5 / dt_s;
    if !(fmax > 0.0 && fmax < nyquist) {
        return Err(Error::config(
            "fmax",
            fmax,
            format!("must be in (0, {nyquist:.4e}) Hz (the Nyquist frequency)"),
        ));
    }
    let setup_s = t0.elapsed().as_secs_f64();
    let fp = fingerprint(cfg, mesh_hash, mesh.n_tets());
    let mut resume = None;
    if let Some(ck) = opts.resume.take() {
        let path = opts
            .out
            .clone()
            .unwrap_or_default()
            .join(super::checkpoint::FILE);
        let bad = |why: String| Error::Checkpoint {
            path: path.clone(),
            why,
        };
        if ck.fingerprint != fp {
            return Err(bad(format!(
                "it was written by a different run (configuration or mesh fingerprint {:016x}, this run {fp:016x})",
                ck.fingerprint
            )));
        }
        if ck.dt_bits != dt.to_bits() {
            return Err(bad(format!(
                "its time step {:e} m differs from this run's {dt:e} m (another backend or device?)",
                f64::from_bits(ck.dt_bits)
            )));
        }
        if ck.done > steps || ck.samples.len() != ck.done * 3 * probes.len() {
            return Err(bad(format!(
                "it holds {} steps and {} samples, inconsistent with this run ({steps} steps, {} probes)",
                ck.done,
                ck.samples.len(),
                probes.len()
            )));
        }
        stepper
            .set_state(&ck.u, &ck.f)
            .map_err(|e| bad(e.to_string()))?;
        progress(ck.done, steps);
        resume = Some((ck.done, ck.samples, ck.energy, ck.reference));
    }
    if let Some(at) = opts.fault_at_step {
        stepper = Box::new(crate::backend::FaultAt { inner: stepper, at });
    }
    let out_dir = opts.out.clone();
    let args = opts.args.clone();
    let mut write_ck = |so_far: &super::RunSoFar, st: &dyn Stepper| -> Result<()> {
        let Some(dir) = &out_dir else { return Ok(()) };
        let (u, f) = st.state()?;
        super::checkpoint::Checkpoint {
            fingerprint: fp,
            done: so_far.done,
            dt_bits: dt.to_bits(),
            reference: so_far.reference,
            args: args.clone(),
            u,
            f,
            samples: so_far.samples.to_vec(),
            energy: so_far.energy.to_vec(),
        }
        .write(dir)
        .map(|_| ())
    };
    let mut ctl = super::RunControl {
        checks: 50,
        resume,
        checkpoint: Some(&mut write_ck),
        every_steps: opts.checkpoint_steps,
        every: opts.checkpoint_every,
        interrupt: opts.interrupt,
    };
    let outcome = super::run_controlled(
        stepper.as_mut(),
        dt,
        steps,
        Some(wave.end()),
        probes.len(),
        &mut ctl,
        &mut |d| progress(d, steps),
    );
    let record = outcome.record;
    if let Some(cause) = outcome.stop {
        return Err(stopped(
            cause,
            &record,
            outcome.checkpointed,
            opts.out.as_deref(),
        ));
    }
    let analysis_start = ((wave.end() / dt).ceil() as usize).min(steps.saturating_sub(16));
    let signals: Vec<Vec<f64>> = (0..probes.len())
        .flat_map(|p| (0..3).map(move |c| (p, c)))
        .map(|(p, c)| record.series(p, c)[analysis_start..].to_vec())
        .collect();
    let spec = spectrum::spectrum(&signals, dt_s, 8);
    let peaks = match cfg.extract {
        Extract::Fft => spectrum::find_peaks(&spec, 0.05 * f_peak, fmax, cfg.min_prominence),
        Extract::Harminv => {
            let params = spectrum::harminv::Params::band(0.05 * f_peak, fmax);
            let per: Vec<Vec<spectrum::harminv::HMode>> = {
                use rayon::prelude::*;
                signals
                    .par_iter()
                    .map(|sig| spectrum::harminv::harminv(sig, dt_s, &params))
                    .collect()
            };
            spectrum::harminv::cluster(
                &per,
                1e-5,
                cfg.min_q.unwrap_or(match cfg.method {
                    Method::Dga => 1e4,
                    Method::Dg => 10.0,
                }),
                (steps - analysis_start) as f64 * dt_s,
            )
        }
    };
    let cavity = match cfg.cavity {
        CavitySpec::Auto => detect_cavity(&mesh).map(|c| c.0),
        CavitySpec::None => None,
        CavitySpec::Given(c) => Some(c),
    };
    let matched: Vec<Matched> = cavity
        .map(|c| c.modes(fmax))
        .unwrap_or_default()
        .into_iter()
        .map(|mode| {
            let peak = peaks
                .iter()
                .map(|p| (p.clone(), correct(cfg.method, p.f_hz, dt_s)))
                .filter(|(_, f)| (f - mode.f_hz).abs() < 0.03 * mode.f_hz)
                // the strongest resonance within 3% (doublet members are equally valid)
                .max_by(|a, b| a.0.amplitude.total_cmp(&b.0.amplitude));
            Matched { mode, peak }
        })
        .collect();
    let mode_shapes = if let Some(dga) = &dga
        && cfg.mode_shapes > 0
        && !peaks.is_empty()
    {
        let mut strongest: Vec<&Peak> = peaks.iter().collect();
        strongest.sort_by(|a, b| b.amplitude.total_cmp(&a.amplitude));
        strongest.truncate(cfg.mode_shapes);
        strongest.sort_by(|a, b| a.f_hz.total_cmp(&b.f_hz));
        let list: Vec<(String, f64)> = strongest
            .iter()
            .map(|p| {
                let fc = correct(cfg.method, p.f_hz, dt_s);
                let near = matched
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
            .collect();
        super::modeshape::mode_shapes(
            &mesh,
            &topo,
            dga,
            dt,
            &source,
            wave,
            steps,
            analysis_start,
            &list,
        )?
    } else {
        vec![]
    };
    // Free half-edges: both halves of every edge off the PEC wall.
    let n_free_half = 2 * topo.boundary_edge.iter().filter(|&&b| !b).count();
    Ok(ResonatorResult {
        dofs: dg_op
            .as_ref()
            .map(|op| op.n_dofs())
            .unwrap_or(4 * mesh.n_tets() + n_free_half),
        method: cfg.method,
        mode_shapes,
        model_bytes_per_step: model_bytes,
        model_flops_per_step: model_flops,
        n_edges: topo.n_edges(),
        n_free_half,
        mesh,
        dt_s,
        rho,
        mesh_hash,
        source,
        probes,
        waveform: wave,
        record,
        analysis_start,
        spectrum: spec,
        peaks,
        cavity,
        matched,
        fmax_hz: fmax,
        setup_s,
        backend: stepper.name(),
        backend_notice,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn random_probes_are_seeded_inside_and_off_symmetry() {
        let m = crate::mesh::gmsh::parse(bundled_mesh("coarse").unwrap(), "coarse").unwrap();
        let a = random_probes(&m, 3, 1);
        assert_eq!(a, random_probes(&m, 3, 1));
        assert_ne!(a, random_probes(&m, 3, 2));
        for p in &a {
            assert!(m.locate(*p).is_some());
            assert!(
                p[0].abs() > 0.08 * 2.0 * 0.99
                    && p[1].abs() > 0.08 * 2.0 * 0.99
                    && (p[2] - 0.25).abs() > 0.08 * 0.5 * 0.99
            );
        }
    }
}
