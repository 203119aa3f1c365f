//! Build: from a validated [`Plan`] to everything the run needs — the mesh (read, generated,
//! refined), the problem resolved onto it, the discretisation (DGA operators or the DG
//! operator), the device, the source and probes, and a stepper chosen by a small selector
//! over method × backend × precision, with its time step.

use super::defaults::{self, Scales};
use super::plan::{MeshSpec, Plan};
use super::setup_times::SetupTimes;
use super::timestep::{self, PoleRate, RHO_MARGIN};
use crate::backend::device_assembly::{self, AssemblyKernels, PackKernels};
use crate::backend::opencl::{ClDevice, DeviceInfo};
use crate::backend::{Excitation, Method as Discretised, Request, Stepper, Target, select};
use crate::cost;
use crate::dg::DgOperator;
use crate::dg::rhs::time_step_for;
use crate::dg::{DgProbe, DgSource, RHO_ITERS};
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::DualForm;
use crate::error::{Error, Result};
use crate::mesh::shape;
use crate::mesh::{Mesh, Topology, generate, gmsh};
use crate::problem::placement::default_points_drawn;
use crate::problem::{Media, Walls, Waveform};
use crate::real::Precision;
use crate::real::Real;
use crate::solver::config::Assembly;
use crate::solver::config::Method;
use crate::util::C0;
use crate::util::{Rng, V3};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

/// The spatial discretisation of a run.
pub enum Discretisation {
    Dga(Arc<Dga>),
    Dg(Arc<DgOperator>),
}

impl Discretisation {
    /// Unknowns of the time loop (DGA: 4 per tet + free half-edges; DG: 6 Np per tet).
    pub fn dofs(&self) -> usize {
        match self {
            Discretisation::Dga(d) => d.counts().dofs(),
            Discretisation::Dg(op) => op.n_dofs(),
        }
    }
    /// Modelled bytes and flops of one time step ([`crate::cost`]).
    pub fn step_model(&self, p: Precision) -> (f64, f64) {
        match self {
            Discretisation::Dga(d) => cost::dga_step(&d.counts(), p.bytes()),
            Discretisation::Dg(op) => cost::dg_step(&op.counts(), p.bytes()),
        }
    }
}

/// Everything a run needs but its stepper, built from a plan.
pub struct Built {
    pub mesh: Mesh,
    /// FNV-1a of the mesh file (None for generated meshes).
    pub mesh_hash: Option<u64>,
    pub topo: Topology,
    pub walls: Walls,
    /// Per-tet media (relative ε, μ; σ η₀).
    pub media: Media,
    pub disc: Discretisation,
    /// Time step in metres of light travel, and ρ(K) (with the margin; 0 when `dt` was given).
    pub dt: f64,
    pub rho: f64,
    pub wave: Waveform,
    /// The source (DGA: with its unit-Δt current pattern; DG: located only).
    pub source: Source,
    pub probe_points: Vec<V3>,
    pub steps: usize,
    pub fmax_hz: f64,
    /// One-line notices for the user (backend choice, unchecked time step).
    pub notices: Vec<String>,
    /// The earliest echo of the absorbing surfaces at the probes (None: closed problem).
    pub echo: Option<super::echo::Echo>,
    /// Where the set-up went (one process: no partition or distribution phase).
    pub times: SetupTimes,
}

impl Built {
    pub fn dt_s(&self) -> f64 {
        self.dt / C0
    }
}

/// Builds the run of `plan`: the run's parts and its stepper (state zero). `status` hears
/// what the build is doing (for a progress display).
pub fn build(plan: &Plan, status: &dyn Fn(&str)) -> Result<(Built, Box<dyn Stepper>)> {
    let mut times = SetupTimes::default();
    let mut clock = Instant::now();
    let mut lap = |slot: &mut f64| {
        let now = Instant::now();
        *slot += (now - clock).as_secs_f64();
        clock = now;
    };
    status("reading the mesh");
    let (mesh, mesh_hash) = load_mesh(plan)?;
    lap(&mut times.mesh_s);
    status(&format!("topology and checks of {} tets", mesh.n_tets()));
    let topo = Topology::build(&mesh)?;
    let mut notices = crate::mesh::check::check(&mesh, &topo)?;
    // every material and boundary key covers elements, or the run stops here naming it
    let covered = crate::problem::coverage::materials(&mesh, &topo, &plan.problem.materials)
        .map_err(|e| plan.locate(e))?;
    let media = Media::resolve(&mesh, &plan.problem.materials).map_err(|e| plan.locate(e))?;
    let (walls, mut coverage) =
        crate::problem::coverage::walls(&mesh, &topo, &plan.problem.boundaries)
            .map_err(|e| plan.locate(e))?;
    coverage.materials = covered;
    if let Some(l) = coverage.line() {
        status(&l);
    }
    notices.extend(coverage.warnings);
    notices.extend(pml_notices(&media));
    lap(&mut times.topology_s);
    let device = choose_device(plan, &mut notices)?;
    let dev = match &device {
        Some(info) => Some(ClDevice::open(info.clone())?),
        None => None,
    };
    lap(&mut times.stepper_s);
    let (faces, y) = walls.absorbing(&topo, &media);
    let on_device = on_device(plan, dev.as_deref(), &media, faces.is_empty())?;
    status(&format!(
        "assembling the {} operators of {} tets{}",
        plan.method.name().to_uppercase(),
        mesh.n_tets(),
        if on_device { " on the device" } else { "" }
    ));
    let mut resident = None;
    // the device's assembly; where `auto` chose it and it fails (device memory, a build),
    // the host's, with a notice
    let on_device_dga = match (plan.method, on_device, dev.as_ref()) {
        (Method::Dga, true, Some(dev)) => {
            let fixed = walls.fixed_edges(&topo);
            match device_dga(plan, dev, &mesh, &topo, &media, &fixed) {
                Ok((dga, r)) => {
                    resident = Some(r);
                    Some(dga)
                }
                Err(e) if plan.assembly == Assembly::Auto => {
                    notices.push(format!(
                        "the operators are assembled on the host: the device's assembly failed ({e}); --assembly host skips it"
                    ));
                    None
                }
                Err(e) => return Err(box_flag(plan, e)),
            }
        }
        _ => None,
    };
    let disc = match (plan.method, on_device_dga) {
        (Method::Dga, Some(dga)) => Discretisation::Dga(Arc::new(dga)),
        (Method::Dga, None) => {
            let fixed = walls.fixed_edges(&topo);
            let mut dga = Dga::assemble_with(&mesh, &topo, &media, &fixed, false)
                .map_err(|e| box_flag(plan, e))?;
            dga.add_surface(&crate::dga::surface::surface_conductance(
                &mesh, &topo, &faces, &y,
            ));
            Discretisation::Dga(Arc::new(dga))
        }
        (Method::Dg, _) => Discretisation::Dg(Arc::new(DgOperator::new(
            &mesh, plan.order, plan.flux, &media.eps, &media.mu,
        )?)),
    };
    lap(&mut times.assembly_s);
    times.assembled_on_device = resident.is_some();
    let (wave, sp, probe_points, scales) = placement(plan, &mesh, &media, &mut notices)?;
    let dir = plan.problem.source_dir;
    // the source's and the probes' tets, in one search
    let mut all = vec![sp];
    all.extend(&probe_points);
    let tets = mesh.locate_all(&all);
    let (source, probes) = match &disc {
        Discretisation::Dga(d) => (
            Source::region_on(
                &mesh,
                &topo,
                d,
                &media,
                (sp, tets[0]),
                dir,
                plan.problem.source_radius,
            )?,
            probe_points
                .iter()
                .zip(&tets[1..])
                .map(|(&p, &t)| Probe::in_tet(&mesh, &topo, p, t))
                .collect::<Result<Vec<_>>>()?,
        ),
        Discretisation::Dg(_) => (Source::located_in(&mesh, sp, dir, tets[0])?, vec![]),
    };
    let surface = super::echo::absorbing_vertices(&mesh, &topo, &walls, &plan.problem);
    let echo = super::echo::earliest(&mesh, &surface, &media, sp, &probe_points, &wave);
    lap(&mut times.topology_s);
    let on_host = device.is_none();
    let sel = Selection {
        plan,
        device: dev,
        resident: std::cell::RefCell::new(resident),
        source: &source,
        probes: &probes,
        probe_points: &probe_points,
        mesh: &mesh,
        wave,
        power_s: Cell::new(0.0),
        poles: timestep::pole_rates(&media),
    };
    status(&match plan.dt_s {
        Some(_) => "setting up the stepper (given time step)".to_string(),
        None => {
            let apps = match plan.method {
                Method::Dga => 60,
                Method::Dg => 2 * RHO_ITERS,
            };
            // On the CPU the DG power iteration can take minutes (high orders): one timed
            // application of the operator says how long.
            let eta = match &disc {
                Discretisation::Dg(op) if on_host => format!(
                    ", about {:.0} s",
                    apps as f64 * crate::dg::rhs::seconds_per_application(op)
                ),
                _ => String::new(),
            };
            format!(
                "setting up the stepper; time step by power iteration ({apps} applications of the operator to {} unknowns{eta})",
                disc.dofs()
            )
        }
    });
    let (stepper, dt, rho) = sel.stepper(&disc, &mut notices)?;
    lap(&mut times.stepper_s);
    times.power_s = sel.power_s.get();
    times.stepper_s -= times.power_s;
    let dt_s = dt / C0;
    defaults::check_time_step(plan, dt_s)?;
    // a pulse the time step cannot sample would leave an all-zero record, analysed as if
    // the cavity were silent
    if let Some(f) = plan.f_peak_hz
        && f > 0.25 / dt_s
    {
        return Err(Error::config(
            "f-peak",
            f,
            format!(
                "above what the time step carries: the pulse needs at least 4 steps per period, so f_peak <= {:.4e} Hz at dt = {dt_s:.4e} s",
                0.25 / dt_s
            ),
        ));
    }
    let (steps, flag) = defaults::steps(plan.length, scales.record_s(), dt_s)?;
    check_record_memory(steps, probe_points.len(), flag, dt_s)?;
    notices.extend(analysis_time_notice(steps, probe_points.len(), flag));
    let fmax_hz = defaults::band(
        plan.fmax_hz,
        &wave,
        scales.f_resolved_hz(),
        dt_s,
        &mut notices,
    )?;
    defaults::check_record(plan, steps, flag, dt_s, fmax_hz, &wave, &mut notices);
    super::limits::check_wall_in_band(&plan.config, fmax_hz)?;
    super::analyse::check_given_cavity(plan, &mesh, fmax_hz)?;
    let built = Built {
        mesh,
        mesh_hash,
        topo,
        walls,
        media,
        disc,
        dt,
        rho,
        wave,
        source,
        probe_points,
        steps,
        fmax_hz,
        notices,
        echo,
        times,
    };
    Ok((built, stepper))
}

/// Whether the DGA operators of `plan` are assembled on the device `dev` (`plan.assembly`:
/// `auto` where the run allows it and `dev` is a GPU; `device` where the run allows it, an
/// error naming what does not; `host` never). The device assembly covers what
/// [`crate::backend::opencl::ClStepper::with_resident`] steps: lossless, non-dispersive media, no absorbing surface
/// (first-order condition), a device with double precision.
fn on_device(plan: &Plan, dev: Option<&ClDevice>, media: &Media, no_surface: bool) -> Result<bool> {
    if plan.assembly == Assembly::Host || plan.method != Method::Dga {
        return Ok(false);
    }
    let why = match dev {
        None => Some("the run has no OpenCL device (CPU backend)".to_string()),
        Some(d) if !d.info.fp64 => Some(format!(
            "device {} has no double precision (cl_khr_fp64)",
            d.info.name
        )),
        Some(_) if media.is_lossy() || media.is_magnetically_lossy() => {
            Some("conducting media need the host's operators".into())
        }
        Some(_) if media.is_dispersive() => {
            Some("dispersive media need the host's operators".into())
        }
        Some(_) if media.has_pml() => {
            Some("a perfectly matched layer needs the host's operators".into())
        }
        Some(_) if !no_surface => {
            Some("an absorbing (first-order) boundary needs the host's operators".into())
        }
        Some(_) => None,
    };
    match (plan.assembly, why) {
        (Assembly::Device, Some(why)) => Err(Error::config("assembly", "device", why)),
        (_, Some(_)) => Ok(false),
        (Assembly::Device, None) => Ok(true),
        (_, None) => Ok(dev.is_some_and(|d| d.info.is_gpu())),
    }
}

/// The operators of `mesh` assembled and packed on `dev` in the plan's precision (boxed
/// [`ResidentOperators`], with the masses), and the host's `Dga` of their layouts (no
/// masses: [`Dga::has_masses`] is false).
fn device_dga(
    plan: &Plan,
    dev: &ClDevice,
    mesh: &Mesh,
    topo: &Topology,
    media: &Media,
    fixed: &[bool],
) -> Result<(Dga, Box<dyn std::any::Any>)> {
    let free_edge: Vec<bool> = fixed.iter().map(|&b| !b).collect();
    crate::dga::check_free_edges(topo, &free_edge)?;
    let k = AssemblyKernels::build(dev)?;
    let csr = plan.dual == DualForm::Csr;
    type Parts<'a> = (&'a Mesh, &'a Topology, &'a Media, &'a [bool]);
    fn packed<T: Real>(
        dev: &ClDevice,
        k: &AssemblyKernels,
        (mesh, topo, media, free): Parts<'_>,
        csr: bool,
    ) -> Result<(crate::dga::Masses, Box<dyn std::any::Any>)> {
        let pk = PackKernels::build::<T>(dev)?;
        let (ops, _) =
            device_assembly::resident_with_masses::<T>(dev, k, &pk, mesh, topo, media, free, csr)?;
        Ok((ops.layout_only(), Box::new(ops)))
    }
    let parts = (mesh, topo, media, free_edge.as_slice());
    let (masses, ops) = match plan.precision {
        Precision::F64 => packed::<f64>(dev, &k, parts, csr)?,
        Precision::F32 => packed::<f32>(dev, &k, parts, csr)?,
    };
    let dga = Dga::from_masses(mesh, topo, media, free_edge, None, masses)?;
    Ok((dga, ops))
}

/// A mass matrix that is not SPD on a generated box means its cells are too elongated:
/// the error names the `--box` flag.
fn box_flag(plan: &Plan, e: Error) -> Error {
    match (&plan.mesh, &e) {
        (MeshSpec::Box { n, l }, Error::NotSpd { .. }) => {
            let h: Vec<f64> = (0..3).map(|c| l[c] / n[c] as f64).collect();
            let aspect = h.iter().cloned().fold(0.0, f64::max)
                / h.iter().cloned().fold(f64::INFINITY, f64::min);
            Error::config(
                "box",
                plan.config
                    .box_mesh
                    .map(|b| b.to_string())
                    .unwrap_or_default(),
                format!(
                    "its cells have an aspect ratio of {aspect:.3e}: too elongated for the hexahedral mass matrices in f64 ({e})"
                ),
            )
        }
        _ => e,
    }
}

/// Refuses a record (probe samples) that would not fit in the memory available, naming
/// the flag that set its length.
fn check_record_memory(steps: usize, n_probes: usize, flag: &str, dt_s: f64) -> Result<()> {
    let record = cost::record_bytes(steps, n_probes);
    // the analysis after the time loop holds the record and more (round four A1: a record
    // that fitted was accepted, and the analysis's allocation aborted the run after 80 s
    // of stepping)
    let need = cost::analysis_bytes(steps, n_probes);
    let avail = cost::available_memory().unwrap_or(u64::MAX);
    if need > avail {
        return Err(Error::config(
            flag,
            format!("{steps} steps of {dt_s:.4e} s"),
            format!(
                "the probe record of {n_probes} probes ({}) and its analysis (the spectrum of each signal, zero-padded 8x) would need {} of memory; {} is available to this process (fewer steps, a larger --cfl, or fewer probes)",
                indicatif::HumanBytes(record),
                indicatif::HumanBytes(need),
                indicatif::HumanBytes(avail)
            ),
        ));
    }
    Ok(())
}

/// Seconds per sample and signal of the extraction after the time loop, and per row of
/// `probe.csv`, measured on the 2-core development machine (round four U3: 1M steps of 9
/// signals took about 45 s to extract and 3.7 s to write); a faster host takes less.
const EXTRACT_S_PER_SAMPLE: f64 = 5e-6;
const WRITE_S_PER_ROW: f64 = 3.7e-6;

/// Records longer than this many samples (all signals together) get [`analysis_time_notice`].
const LONG_RECORD_SAMPLES: f64 = 3e6;

/// A notice of what a long record costs after the time loop (round four U3: 3M steps ran
/// 7 s and then analysed for 190 s without a word): its estimated time, and how to
/// shorten it.
fn analysis_time_notice(steps: usize, n_probes: usize, flag: &str) -> Option<String> {
    let signals = 3 * n_probes;
    let samples = steps as f64 * signals as f64;
    if samples < LONG_RECORD_SAMPLES {
        return None;
    }
    let t = samples * EXTRACT_S_PER_SAMPLE + steps as f64 * WRITE_S_PER_ROW;
    Some(format!(
        "a long record ({steps} steps of {signals} signals): after the time loop, writing probe.csv and extracting the resonances take time in proportion to it, about {t:.0} s on a 2-core machine (less on a faster host); a shorter --{flag} shortens it"
    ))
}

/// Refuses a mesh of `tets` tetrahedra (asked for by `name = value`) that exceeds the index
/// limit or the host memory available, before anything is allocated.
fn check_host_memory(tets: f64, name: &str, value: &str) -> Result<()> {
    let need = cost::dga_host_bytes(tets);
    if tets > cost::MAX_TETS {
        return Err(Error::config(
            name,
            value,
            format!(
                "it gives {tets:.3e} tetrahedra, above the {:.1e} that 32-bit indices allow",
                cost::MAX_TETS
            ),
        ));
    }
    if let Some(avail) = cost::available_memory()
        && need > avail as f64
    {
        return Err(Error::config(
            name,
            value,
            format!(
                "it gives {tets:.3e} tetrahedra, needing about {} of host memory; {} is available",
                indicatif::HumanBytes(need as u64),
                indicatif::HumanBytes(avail)
            ),
        ));
    }
    Ok(())
}

/// The notice of each perfectly matched layer of `media`: its shape, thickness, `σ_max`
/// and shift `α` (the same in one process and on rank 0 of a partitioned run).
pub(crate) fn pml_notices(media: &Media) -> Vec<String> {
    media
        .pml
        .iter()
        .flat_map(|p| &p.layers)
        .map(|l| {
            format!(
                "perfectly matched layer {}: {} of thickness {:.4} m, σ_max {:.4e} /m, α {:.4e} /m ({:.4e} Hz)",
                l.name,
                l.shape,
                l.thickness,
                l.sigma_max,
                l.alpha,
                l.alpha * C0 / std::f64::consts::TAU
            )
        })
        .collect()
}

/// Loads or generates the mesh of a plan (with refinements; cylinder walls projected;
/// renumbered in the plan's [`crate::mesh::order::MeshOrder`]).
pub fn load_mesh(plan: &Plan) -> Result<(Mesh, Option<u64>)> {
    let (mut mesh, hash) = base_mesh(plan)?;
    let region = &plan.config.refine_region;
    // the wall and the curved interfaces are fitted once, on the given mesh, and used at
    // every level
    let (wall, fits) = if plan.refine > 0 || !region.is_empty() {
        surfaces_of(&mesh)
    } else {
        (None, crate::mesh::Surfaces::default())
    };
    if !region.is_empty() {
        let marked = region_mask(&mesh, region)?;
        mesh = crate::mesh::refine_region(&mesh, &marked, wall, &fits.fits)
            .map_err(|why| Error::config("refine_region", region.join(","), why))?;
    }
    if plan.refine > 0 {
        let tets = mesh.n_tets() as f64 * 8f64.powi(plan.refine as i32);
        check_host_memory(tets, "refine", &plan.refine.to_string())?;
    }
    for _ in 0..plan.refine {
        mesh = crate::mesh::refine_onto(&mesh, wall, &fits.fits);
    }
    if plan.mesh_order == crate::mesh::order::MeshOrder::Morton {
        mesh = mesh.morton_ordered();
    }
    Ok((mesh, hash))
}

/// The tets of the volume groups named in `refine_region` (names or tags); an unknown
/// group is refused naming the mesh's groups.
fn region_mask(mesh: &Mesh, groups: &[String]) -> Result<Vec<bool>> {
    let mut marked = vec![false; mesh.n_tets()];
    for g in groups {
        let Some(tag) = mesh.volume_group(g.trim()) else {
            return Err(Error::config(
                "refine_region",
                g,
                format!(
                    "no volume group of that name or tag in {} (its groups: {})",
                    mesh.source,
                    mesh.group_list(3)
                ),
            ));
        };
        for (m, inside) in marked.iter_mut().zip(mesh.volume_mask(tag)) {
            *m |= inside;
        }
    }
    Ok(marked)
}

/// The detected outer wall of a mesh ([`generate::CurvedWall::of`]) and its fitted curved
/// surfaces ([`crate::mesh::interfaces`]: the interfaces, and the boundary where no wall
/// is detected).
fn surfaces_of(mesh: &Mesh) -> (Option<generate::CurvedWall>, crate::mesh::Surfaces) {
    let wall = shape::detect(mesh).and_then(|s| generate::CurvedWall::of(&s, mesh));
    let fits = crate::mesh::fit_surfaces(mesh, wall.is_none());
    (wall, fits)
}

/// The checks of a refinement ladder before it runs, on the plan of its base level: the
/// finest level (`finest` refinements of the given mesh) fits the index limit and the host
/// memory (`--converge` is refused naming the size otherwise: round five's spot check ran
/// four levels before the fifth could fail), and the warnings of every curved interface or
/// boundary surface that fits no sphere or cylinder, so that refinement cannot follow it
/// ([`crate::mesh::Surfaces::warnings`]).
pub fn refinement_warnings(plan: &Plan, finest: u32) -> Result<Vec<String>> {
    let (mesh, _) = base_mesh(plan)?;
    let tets = mesh.n_tets() as f64 * 8f64.powi(finest as i32);
    check_host_memory(
        tets,
        "converge",
        &format!(
            "{} (up to --refine {finest})",
            finest - plan.refine.min(finest)
        ),
    )?;
    let (_, fits) = surfaces_of(&mesh);
    Ok(fits.warnings(&mesh))
}

/// The mesh of a plan as read or generated, before refinement.
fn base_mesh(plan: &Plan) -> Result<(Mesh, Option<u64>)> {
    let (mesh, hash) = match &plan.mesh {
        MeshSpec::File(p) => {
            let bytes = gmsh::read_file(p)?;
            (
                gmsh::parse(&bytes, &p.display().to_string())?,
                Some(crate::util::fnv1a64(&bytes)),
            )
        }
        MeshSpec::Bundled(name) => {
            let bytes = crate::mesh::bundled(name)?;
            (
                gmsh::parse(bytes, &format!("bundled:cylinder_{name}.msh"))?,
                Some(crate::util::fnv1a64(bytes)),
            )
        }
        MeshSpec::Box { n, l } => {
            let tets = 6.0 * n.iter().map(|&k| k as f64).product::<f64>();
            check_host_memory(tets, "box", &format!("{n:?}"))?;
            (generate::box_mesh(*n, *l), None)
        }
        MeshSpec::Ball { n, shells } => {
            let value = plan
                .config
                .ball
                .as_ref()
                .map(|b| b.to_string())
                .unwrap_or_default();
            let bad = |why| Error::config("ball", &value, why);
            let total = generate::ball_shells(*n, shells).map_err(bad)?;
            check_host_memory(48.0 * (total as f64).powi(3), "ball", &value)?;
            let m = generate::ball_mesh(*n, shells).map_err(bad)?;
            (m, None)
        }
    };
    // a mesh in the wrong unit (1e70, 1e-80) is refused before its operators overflow
    super::limits::check_mesh_scale(&mesh)?;
    // the part on one side of each symmetry plane (before refinement: the new nodes of a
    // plane's edges stay on it)
    let mesh = match &plan.config.symmetry {
        Some(s) => s.cut_mesh(mesh)?,
        None => mesh,
    };
    Ok((mesh, hash))
}

/// The waveform (default peak frequency from the mesh's extent and fill,
/// [`defaults::Scales`]), the source point and the probe points of a run (defaults placed by
/// the seeded generator), and the mesh's scales, the same for one process and for a
/// partitioned run.
///
/// A given `--seed` that draws no point (every default lies in the mesh) is named in a
/// warning (round four S10, cli-646: two seeds gave the same record without a word; the
/// case of a given source and probes is the plan's).
pub(crate) fn placement(
    plan: &Plan,
    mesh: &Mesh,
    media: &Media,
    notices: &mut Vec<String>,
) -> Result<(Waveform, V3, Vec<V3>, Scales)> {
    let mut scales = Scales::of(mesh, media);
    if let Some(sym) = &plan.config.symmetry {
        scales.extent_m = sym.whole_extent(mesh);
    }
    let wave = Waveform::gaussian_derivative(plan.f_peak_hz.unwrap_or(scales.f_peak_hz()));
    let mut rng = Rng::new(plan.seed);
    // the defaults, searched for together, drawn for in order: the source, then the probes
    let mut fracs = vec![];
    if plan.problem.source.is_none() {
        fracs.push([0.81, 0.67, 0.47]);
    }
    if plan.problem.probes.is_empty() {
        fracs.extend([[0.38, 0.77, 0.55], [0.26, 0.35, 0.41], [0.70, 0.24, 0.60]]);
    }
    let (defaults, drawn) = default_points_drawn(mesh, &fracs, &mut rng);
    if drawn == 0 && !fracs.is_empty() && plan.seed != super::config::Config::default().seed {
        notices.push(format!(
            "warning: seed = {} (--seed) has no effect on this mesh: it draws only default points that fall outside the mesh, and every default source and probe point lies inside it (give --probe/--source to place them)",
            plan.seed
        ));
    }
    let mut defaults = defaults.into_iter();
    let sp = match plan.problem.source {
        Some(p) => p,
        None => defaults.next().expect("a default source point"),
    };
    let probe_points: Vec<V3> = match plan.problem.probes.is_empty() {
        true => defaults.collect(),
        false => plan.problem.probes.clone(),
    };
    // a given point on the side a symmetry plane cut away is refused, one on a plane told
    if let Some(sym) = &plan.config.symmetry {
        let given = plan
            .problem
            .source
            .iter()
            .map(|&p| ("source", p))
            .chain(plan.problem.probes.iter().map(|&p| ("probe", p)));
        for (what, p) in given {
            notices.extend(sym.check_point(what, p, mesh)?);
        }
    }
    Ok((wave, sp, probe_points, scales))
}

/// The OpenCL device of a plan (None: the CPU backend), with its notices
/// ([`super::devices::choose`]).
fn choose_device(plan: &Plan, notices: &mut Vec<String>) -> Result<Option<DeviceInfo>> {
    let c = super::devices::choose(plan)?;
    notices.extend(c.notices);
    notices.extend(c.warning);
    Ok(c.device)
}

/// What the stepper selector needs.
struct Selection<'a> {
    plan: &'a Plan,
    device: Option<Arc<ClDevice>>,
    /// The operators assembled on the device ([`crate::backend::opencl::ResidentOperators`] of the run's precision),
    /// taken by the stepper.
    resident: std::cell::RefCell<Option<Box<dyn std::any::Any>>>,
    source: &'a Source,
    probes: &'a [Probe],
    probe_points: &'a [V3],
    mesh: &'a Mesh,
    wave: Waveform,
    /// Seconds spent in the power iteration for Δt (a part of the stepper's set-up).
    power_s: Cell<f64>,
    /// The dispersive poles, which may shorten the default time step.
    poles: Vec<PoleRate>,
}

type Chosen = (Box<dyn Stepper>, f64, f64);

impl Selection<'_> {
    /// `f()`, its time added to the power iteration's.
    fn timed<R>(&self, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        self.power_s
            .set(self.power_s.get() + t.elapsed().as_secs_f64());
        r
    }

    /// The stepper for method × backend × precision, with its time step and ρ, from the
    /// planner ([`crate::backend::select`]) under this run's time-step rule.
    fn stepper(&self, disc: &Discretisation, notices: &mut Vec<String>) -> Result<Chosen> {
        let target = match self.device.clone() {
            Some(dev) => Target::OpenCl(dev),
            None => Target::Cpu,
        };
        let on_device = matches!(target, Target::OpenCl(_));
        let (method, excitation) = match disc {
            Discretisation::Dga(d) => (
                Discretised::Dga(d.clone()),
                Excitation::Dga {
                    source: Some(self.source),
                    wave: self.wave,
                    probes: self.probes,
                },
            ),
            Discretisation::Dg(op) => {
                let (source, probes) = self.dg_parts(op)?;
                (
                    Discretised::Dg(op.clone()),
                    Excitation::Dg {
                        source: Some(source),
                        probes,
                    },
                )
            }
        };
        let req = Request {
            method,
            target,
            precision: self.plan.precision,
            dual: self.plan.dual,
            excitation,
            resident: self.resident.borrow_mut().take(),
        };
        let sel = match disc {
            Discretisation::Dga(d) => {
                // a given dt is checked against the power iteration's bound where that is
                // cheap (the host's on the CPU; on a device, on meshes up to SMALL_MESH)
                let check = !on_device || d.n_tets <= SMALL_MESH;
                select(req, &mut |rho| match self.plan.dt_s {
                    Some(secs) => {
                        let est = if check {
                            Some(self.timed(&mut *rho)?)
                        } else {
                            None
                        };
                        Ok((self.given_dt(secs, est, notices)?, 0.0))
                    }
                    None => {
                        let rho = self.timed(&mut *rho)? * RHO_MARGIN;
                        Ok((self.default_dt(rho, notices), rho))
                    }
                })?
            }
            Discretisation::Dg(_) => select(req, &mut |rho| match self.plan.dt_s {
                Some(secs) if on_device => {
                    notices.push(format!(
                        "dt = {secs:e} s is not checked against the DG stability bound on a device; the energy guard stays on"
                    ));
                    Ok((secs * C0, 0.0))
                }
                Some(secs) => {
                    let (dt_max, _) = time_step_for(self.timed(&mut *rho)?, 1.0);
                    let dt = secs * C0;
                    if dt > dt_max {
                        return Err(Error::config(
                            "dt",
                            secs,
                            format!("above the LSERK4 stability bound {:.6e} s", dt_max / C0),
                        ));
                    }
                    Ok((dt, 0.0))
                }
                None => Ok(time_step_for(self.timed(&mut *rho)?, self.plan.cfl)),
            })?,
        };
        notices.extend(sel.notices);
        Ok((sel.stepper, sel.dt, sel.rho))
    }

    /// A given `dt` (seconds) in metres of light travel, checked against the stability
    /// bound `2/sqrt(ρ)` estimated by `rho_est` when that is affordable (`Some`).
    /// The default DGA time step (metres) for the spectral bound `rho` (margin included):
    /// the CFL step, shortened by the dispersive poles the mesh carries.
    fn default_dt(&self, rho: f64, notices: &mut Vec<String>) -> f64 {
        timestep::pole_limited(self.plan.cfl * 2.0 / rho.sqrt(), rho, &self.poles, notices)
    }

    fn given_dt(&self, dt_s: f64, rho_est: Option<f64>, notices: &mut Vec<String>) -> Result<f64> {
        let dt = dt_s * C0;
        timestep::check_given_against_poles(dt, &self.poles, notices);
        match rho_est {
            Some(rho) => {
                let bound = 2.0 / rho.sqrt();
                if dt > bound {
                    return Err(Error::config(
                        "dt",
                        dt_s,
                        format!(
                            "above the stability bound {:.6e} s of this mesh (power iteration)",
                            bound / C0
                        ),
                    ));
                }
                if dt > bound / RHO_MARGIN.sqrt() {
                    notices.push(format!(
                        "dt = {dt_s:e} s is within 1% of the estimated stability bound {:.6e} s; the energy guard stays on",
                        bound / C0
                    ));
                }
            }
            None => notices.push(format!(
                "dt = {dt_s:e} s is not checked against the stability bound on this mesh; the energy guard stays on"
            )),
        }
        Ok(dt)
    }

    fn dg_parts(&self, op: &DgOperator) -> Result<(DgSource, Vec<DgProbe>)> {
        let source = DgSource {
            tet: self.source.tet,
            dir: self.source.dir,
            wave: self.wave,
        };
        let probes = self
            .probe_points
            .iter()
            .map(|&p| DgProbe::new(self.mesh, op, p))
            .collect::<Result<Vec<_>>>()?;
        Ok((source, probes))
    }
}

/// Meshes up to this many tets get a host power iteration to check a given `dt`.
const SMALL_MESH: usize = 200_000;

#[cfg(test)]
mod tests {
    /// A record long enough for its analysis to outlast a short time loop is announced
    /// with the estimate and the flag that shortens it (round four U3); a usual one is not.
    #[test]
    fn a_long_record_announces_its_analysis_time() {
        assert_eq!(super::analysis_time_notice(100_000, 3, "steps"), None);
        let n = super::analysis_time_notice(3_000_000, 3, "steps").unwrap();
        // 3M x 9 samples x 5 us + 3M rows x 3.7 us = 146 s
        assert!(
            n.contains("3000000 steps of 9 signals")
                && n.contains("about 146 s")
                && n.contains("--steps"),
            "{n}"
        );
        let n = super::analysis_time_notice(2_000_000, 1, "time").unwrap();
        assert!(n.contains("--time"), "{n}");
    }
}
