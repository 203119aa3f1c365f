//! `dgatd resonator`: flags over a configuration file over the defaults, the run, its
//! outputs and the printed table. Flags given on the command line override the file;
//! `--resume DIR` reads the configuration stored in the checkpoint.

use super::{out, outln};
use dgatd::dg::Flux;
use dgatd::dga::DualForm;
use dgatd::problem::{Boundary, BoundaryKind, Material};
use dgatd::solver::{self, Checkpoint, Phase, RunOptions};
use dgatd::solver::{
    BackendKind, BallSpec, BoxSpec, CavitySpec, Config, Extract, Method, Origin, SymmetrySpec,
};
use dgatd::solver::{Plan, parse_point};
use dgatd::{Error, Precision, Result};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

mod ladder;
#[cfg(feature = "mpi")]
mod ranks;
#[cfg(feature = "partition")]
mod threads;

/// Flags of `dgatd resonator`. Every flag is optional: what is not given comes from
/// `--config FILE` if given, else the default shown in brackets.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(args_override_self = true)]
pub struct ResonatorArgs {
    /// TOML configuration file (keys = these flags' long names with - -> _, plus
    /// [materials.NAME] and [boundaries.NAME] tables; a run's run.toml is one). Flags
    /// given here override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Gmsh mesh file (MSH 4.1 ASCII/binary or 2.2 ASCII), or bundled:coarse|medium|fine
    /// [bundled:medium].
    #[arg(long, conflicts_with = "box_mesh")]
    pub mesh: Option<String>,
    /// Generated box instead of a file: NX,NY,NZ[:LX,LY,LZ] (cells; side lengths in m,
    /// default 1); its walls are the surface groups xmin, xmax, ymin, ymax, zmin, zmax.
    #[arg(long = "box", allow_hyphen_values = true)]
    pub box_mesh: Option<BoxSpec>,
    /// Generated concentric balls instead of a file: N:NAME=R[@F],NAME=R[@F],.. (N shells
    /// across the first radius; volume groups NAME out to radius R in m, increasing, each
    /// with a radial step F >= 1 times the first group's [1]; the outer sphere is the surface
    /// group outer). An equiangular cubed-sphere mesh of 48 S^3 tets, S shells in all.
    #[arg(long, conflicts_with_all = ["mesh", "box_mesh"])]
    pub ball: Option<BallSpec>,
    /// Symmetry planes: AXIS=pec|pmc,..[:X0,Y0,Z0] (e.g. x=pmc,y=pec). The run steps the
    /// part of the mesh on one side of each plane (through the origin, or X0,Y0,Z0) with a
    /// PEC or PMC wall on it, and finds the modes of that symmetry class at a half (a
    /// quarter, an eighth) of the cost. The mesh must have faces on each plane.
    #[arg(long)]
    pub symmetry: Option<SymmetrySpec>,
    /// Uniform 1:8 refinements of the mesh (new nodes on cylinder walls and on curved
    /// interfaces that a sphere or a cylinder fits are projected onto them) [0].
    #[arg(long, allow_negative_numbers = true)]
    pub refine: Option<u32>,
    /// Volume groups refined 1:8 once before --refine and every --converge level, their
    /// neighbours split to keep the mesh conforming: GROUP,GROUP (names or tags), e.g.
    /// sphere,near (resolution where the field needs it, not in the whole domain).
    #[arg(long, value_delimiter = ',')]
    pub refine_region: Vec<String>,
    /// Numbering of the tets and nodes after refinement: file (as read or generated) or
    /// morton (along a Z-order curve, so the step's gathers touch nearby memory; the
    /// bundled meshes are stored in an order almost as scattered as a random one,
    /// results/h200/locality/) [file].
    #[arg(long, value_enum)]
    pub mesh_order: Option<dgatd::mesh::MeshOrder>,
    /// Converged resonances: run at refinements R..=R+N (R from --refine), match the modes
    /// across levels and report Richardson-extrapolated frequencies with an error estimate
    /// and the observed order (modes.csv, convergence.csv, the table). Each level costs
    /// about 16 times the one before. Lines without an analytic label are matched by
    /// frequency, decay and their pattern over the probes.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=4))]
    pub converge: Option<u32>,
    /// Number of time steps (overrides --time).
    #[arg(long, allow_hyphen_values = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: Option<u64>,
    /// Simulated time in seconds [150 n L / c: L the largest mesh extent, n the fill's mean index].
    #[arg(long, allow_hyphen_values = true)]
    pub time: Option<f64>,
    /// Courant number: dt = CFL * 2 / sqrt(rho(K)), in (0, 1] [0.95].
    #[arg(long, allow_hyphen_values = true)]
    pub cfl: Option<f64>,
    /// A given time step in seconds instead of the power iteration (refused above the
    /// stability bound where it is known; the energy guard stays on).
    #[arg(long, allow_hyphen_values = true)]
    pub dt: Option<f64>,
    /// Precision of the time loop [f64].
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,
    /// Dual update: the seed's CSR SpMV or the factored form [factored].
    #[arg(long, value_enum)]
    pub dual: Option<DualForm>,
    /// auto: the first OpenCL GPU, else OpenCL CPU device, else the CPU backend [auto].
    #[arg(long, value_enum)]
    pub backend: Option<BackendKind>,
    /// OpenCL device: index or name substring (see dgatd devices).
    #[arg(long, allow_hyphen_values = true)]
    pub device: Option<String>,
    /// Output directory [out].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Source point x,y,z (m) [inside the mesh, off every symmetry plane].
    #[arg(long, allow_hyphen_values = true)]
    pub source: Option<String>,
    /// Source current direction x,y,z [0.48,0.36,0.8] (oblique: excites TE and TM modes).
    #[arg(long, allow_hyphen_values = true)]
    pub source_dir: Option<String>,
    /// The source current fills every tet within this radius (m) of the source point, all
    /// four vertices inside [0: the tet containing the point]. A ball symmetric about the
    /// point has no magnetic dipole or quadrupole moment, which one tet has.
    #[arg(long, allow_hyphen_values = true)]
    pub source_radius: Option<f64>,
    /// Probe point x,y,z (repeatable) [three points at fixed fractions of the bounding box,
    /// off its symmetry planes; one that falls outside the mesh is replaced by the centroid
    /// of a tet drawn with --seed].
    #[arg(long = "probe", allow_hyphen_values = true)]
    pub probes: Vec<String>,
    /// Peak frequency of the pulse in Hz [c / (n L)].
    #[arg(long, allow_hyphen_values = true)]
    pub f_peak: Option<f64>,
    /// Upper end of the analysed band in Hz [2.2 x f-peak, at most c / (2 pi n h) with h the mean edge, and Nyquist / 2].
    #[arg(long, allow_hyphen_values = true)]
    pub fmax: Option<f64>,
    /// FFT extraction: minimum peak prominence relative to the largest peak [0.02].
    #[arg(long, allow_hyphen_values = true)]
    pub min_prominence: Option<f64>,
    /// Harmonic inversion: drop modes with a lower quality factor (or growing ones)
    /// [1e4 with --method dga and no losses; 10 with losses (σ, σ*, lossy poles) or
    /// --method dg; 1 with an open boundary (abc walls, absorbing layers), whose radiation
    /// Q can be a few units].
    #[arg(long, allow_hyphen_values = true)]
    pub min_q: Option<f64>,
    /// Material of a volume group: NAME_OR_TAG=EPS_R[,MU_R[,SIGMA[,SIGMA_M]]] (σ in S/m,
    /// magnetic σ* in ohm/m; repeatable).
    #[arg(long = "material")]
    pub materials: Vec<String>,
    /// Condition of a surface group: NAME_OR_TAG=pec|pmc|abc|conductor:SIGMA[,MU_R]
    /// (σ in S/m; repeatable) [pec].
    #[arg(long = "boundary")]
    pub boundaries: Vec<String>,
    /// Analytic modes to compare with: auto, none, cylinder:R,H, box:A,B,D or sphere:R
    /// [auto].
    #[arg(long)]
    pub cavity: Option<CavitySpec>,
    /// Resonance extraction [harminv].
    #[arg(long, value_enum)]
    pub extract: Option<Extract>,
    /// Write modes.vtu with the complex field of the N strongest resonances (a second pass
    /// of the run on the same backend) [0].
    #[arg(long, allow_negative_numbers = true)]
    pub mode_shapes: Option<usize>,
    /// Seed of the draw that replaces a default source or probe point falling outside the
    /// mesh (the defaults are fixed fractions of the bounding box; on a mesh that contains
    /// them all the seed changes nothing) [1].
    #[arg(long, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Spatial discretisation: the fractioned DGA (leapfrog) or nodal DG (LSERK4) [dga].
    #[arg(long, value_enum)]
    pub method: Option<Method>,
    /// DG polynomial order N, with --method dg [3].
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..=dgatd::solver::MAX_DG_ORDER as u64))]
    pub order: Option<u64>,
    /// DG numerical flux, with --method dg [upwind].
    #[arg(long, value_enum)]
    pub flux: Option<Flux>,
    /// Save a checkpoint (OUT/checkpoint.bin) every N steps (0: only by time) [0].
    #[arg(long, allow_negative_numbers = true)]
    pub checkpoint_steps: Option<u64>,
    /// Save a checkpoint after this many minutes of running (0: only by steps) [10].
    #[arg(long, allow_hyphen_values = true)]
    pub checkpoint_minutes: Option<f64>,
    /// Energy checks of the blow-up guard over the run (0: none; the probe samples are
    /// still checked for non-finite values) [50]. Each check reads the whole state back
    /// from a device: lower it for short runs on very large meshes.
    #[arg(long, allow_hyphen_values = true)]
    pub energy_checks: Option<u64>,
    /// Partitioner of a run on several ranks (mpirun): auto (METIS below 1M tets,
    /// recursive coordinate bisection from there), metis, rcb or slab (x slabs) [auto].
    #[arg(long, value_enum)]
    pub partitioner: Option<dgatd::solver::Partitioner>,
    /// Where the DGA operators of a one-process OpenCL run are assembled: auto (on the
    /// device where the run allows it and the device is a GPU), host, or device (an error
    /// where the run does not allow it: losses, dispersion, absorbing surfaces, no fp64) [auto].
    #[arg(long, value_enum)]
    pub assembly: Option<dgatd::solver::Assembly>,
    /// GPUs this one process drives [1]: N > 1 splits the mesh into N parts (by
    /// --partitioner) and steps each on its own GPU, one thread per part, the halos going
    /// through host memory; no MPI needed. GPU r of OpenCL's list takes part r (--device
    /// puts every part on that one device instead).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=dgatd::solver::MAX_GPUS as i64))]
    pub gpus: Option<u32>,
    /// Continue the run whose checkpoint is in DIR (its configuration comes from the
    /// checkpoint; outputs go to DIR unless --out is given). The result is bit-for-bit that
    /// of an uninterrupted run.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// With --resume: continue a checkpoint that was written for another output folder
    /// (copied or moved here).
    #[arg(long, requires = "resume")]
    pub force: bool,
}

impl ResonatorArgs {
    /// Names of the run parameters given on the command line (not --out, --quiet,
    /// --config, --resume or the checkpoint flags).
    fn given_parameters(&self) -> Vec<&'static str> {
        let mut g = vec![];
        macro_rules! some {
            ($($f:ident => $n:literal),*) => {$(if self.$f.is_some() { g.push($n); })*};
        }
        some!(mesh => "mesh", box_mesh => "box", ball => "ball", symmetry => "symmetry", refine => "refine", mesh_order => "mesh-order", converge => "converge", steps => "steps",
            time => "time", cfl => "cfl", dt => "dt", precision => "precision", dual => "dual",
            backend => "backend", device => "device", source => "source",
            source_dir => "source-dir", source_radius => "source-radius", f_peak => "f-peak", fmax => "fmax",
            min_prominence => "min-prominence", min_q => "min-q", cavity => "cavity",
            extract => "extract", mode_shapes => "mode-shapes", seed => "seed",
            method => "method", order => "order", flux => "flux", partitioner => "partitioner",
            assembly => "assembly", gpus => "gpus");
        for (v, n) in [
            (&self.refine_region, "refine-region"),
            (&self.probes, "probe"),
            (&self.materials, "material"),
            (&self.boundaries, "boundary"),
        ] {
            if !v.is_empty() {
                g.push(n);
            }
        }
        g
    }

    /// Applies the flags given on the command line to `cfg`.
    pub fn overlay(&self, cfg: &mut Config) -> Result<()> {
        macro_rules! set {
            ($($f:ident),*) => {$(if let Some(v) = &self.$f { cfg.$f = v.clone().into(); })*};
        }
        if let Some(m) = &self.mesh {
            cfg.mesh = Some(m.clone());
            cfg.box_mesh = None;
            cfg.ball = None;
        }
        if let Some(b) = &self.box_mesh {
            cfg.box_mesh = Some(*b);
            cfg.mesh = None;
            cfg.ball = None;
        }
        if let Some(b) = &self.ball {
            cfg.ball = Some(b.clone());
            cfg.mesh = None;
            cfg.box_mesh = None;
        }
        set!(
            refine,
            mesh_order,
            cfl,
            precision,
            dual,
            backend,
            min_prominence,
            cavity,
            extract,
            source_radius
        );
        set!(
            mode_shapes,
            seed,
            method,
            flux,
            checkpoint_steps,
            checkpoint_minutes,
            energy_checks,
            partitioner,
            assembly,
            gpus
        );
        set!(
            steps, time, dt, device, f_peak, fmax, min_q, converge, symmetry
        );
        if let Some(o) = self.order {
            cfg.order = o as usize;
        }
        if !self.refine_region.is_empty() {
            cfg.refine_region = self.refine_region.clone();
        }
        if let Some(s) = &self.source {
            cfg.source = Some(parse_point("source", s)?);
        }
        if let Some(s) = &self.source_dir {
            cfg.source_dir = parse_point("source-dir", s)?;
        }
        if !self.probes.is_empty() {
            cfg.probe = self
                .probes
                .iter()
                .map(|p| parse_point("probe", p))
                .collect::<Result<_>>()?;
        }
        for (k, m) in parse_pairs("material", &self.materials, parse_material)? {
            cfg.materials.insert(k, m);
        }
        for (k, b) in parse_pairs("boundary", &self.boundaries, parse_boundary)? {
            cfg.boundaries.insert(k, b);
        }
        // keys that do nothing in this run are told by the plan (`Plan::warnings`), which
        // sees only values: --order at its default value is told here
        if cfg.method == Method::Dga
            && let Some(o) = self.order
            && o as usize == Config::default().order
        {
            eprintln!("warning: --order {o} has no effect without --method dg");
        }
        Ok(())
    }
}

/// `NAME=VALUE` pairs of a repeatable flag; a name given twice is refused.
fn parse_pairs<T>(
    flag: &str,
    items: &[String],
    value: impl Fn(&str) -> Result<T>,
) -> Result<Vec<(String, T)>> {
    let mut out: Vec<(String, T)> = vec![];
    for it in items {
        // at the last '=': no value holds one, and a group name may (`a=b=pmc` names the
        // group "a=b"; round four V9)
        let (k, v) = it
            .rsplit_once('=')
            .ok_or_else(|| Error::config(flag, it, "expected NAME=VALUE"))?;
        if out.iter().any(|(x, _)| x == k) {
            return Err(Error::config(
                flag,
                it,
                format!("group {k} is given twice; give each group once"),
            ));
        }
        out.push((k.to_string(), value(v)?));
    }
    Ok(out)
}

/// `EPS_R[,MU_R[,SIGMA[,SIGMA_M]]]` (σ in S/m, σ* in ohm/m).
fn parse_material(v: &str) -> Result<Material> {
    let nums: Vec<f64> = v
        .split(',')
        .map(|x| x.trim().parse())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::config("material", v, "expected numbers after ="))?;
    match nums.as_slice() {
        [e] => Ok(Material::new(*e, 1.0)),
        [e, u] => Ok(Material::new(*e, *u)),
        [e, u, s] => Ok(Material {
            sigma: *s,
            ..Material::new(*e, *u)
        }),
        [e, u, s, sm] => Ok(Material {
            sigma: *s,
            sigma_m: *sm,
            ..Material::new(*e, *u)
        }),
        _ => Err(Error::config(
            "material",
            v,
            "expected NAME=EPS_R[,MU_R[,SIGMA[,SIGMA_M]]]",
        )),
    }
}

/// `pec`, `pmc`, `abc` or `conductor:SIGMA[,MU_R]` (σ in S/m).
fn parse_boundary(v: &str) -> Result<Boundary> {
    const EXPECTED: &str = "expected NAME=pec, NAME=pmc, NAME=abc or NAME=conductor:SIGMA[,MU_R]";
    let (kind, params) = match v.split_once(':') {
        Some((k, p)) => (k.trim(), Some(p)),
        None => (v.trim(), None),
    };
    let kind = kind
        .parse::<BoundaryKind>()
        .map_err(|_| Error::config("boundary", v, EXPECTED))?;
    match (kind, params) {
        (BoundaryKind::Conductor, Some(p)) => {
            let nums: Vec<f64> = p
                .split(',')
                .map(|x| x.trim().parse())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| Error::config("boundary", v, EXPECTED))?;
            match nums.as_slice() {
                [s] => Ok(Boundary::conductor(*s, 1.0)),
                [s, m] => Ok(Boundary::conductor(*s, *m)),
                _ => Err(Error::config("boundary", v, EXPECTED)),
            }
        }
        (BoundaryKind::Conductor, None) => Err(Error::config(
            "boundary",
            v,
            "a conductor wall needs its conductivity: NAME=conductor:SIGMA[,MU_R] (S/m)",
        )),
        (k, None) => Ok(Boundary::of(k)),
        (_, Some(_)) => Err(Error::config("boundary", v, EXPECTED)),
    }
}

/// Set by the Ctrl-C handler; the time loop saves and stops at its next look.
static INTERRUPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The lock file of the output folder, removed by the handler before it exits (an
/// interrupted run leaves no lock behind to be reported as stale).
static LOCK_FILE: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Exits with status 130 after removing the output folder's lock file.
fn exit_interrupted() -> ! {
    if let Some(p) = LOCK_FILE.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = std::fs::remove_file(p);
    }
    std::process::exit(130);
}

/// The run's phase (0 setup, 1 time loop, 2 analysis, 3 writing the record), for the
/// handler.
static PHASE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

fn set_phase(p: Phase) {
    let v = match p {
        Phase::Setup => 0,
        Phase::Stepping => 1,
        Phase::Analysis => 2,
        Phase::Recording => 3,
    };
    PHASE.store(v, std::sync::atomic::Ordering::SeqCst);
}

/// Whether a repeated interrupt was already told that the save goes on.
static REPEAT_TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the Ctrl-C handler (SIGINT, SIGTERM, SIGHUP) once. In the time loop the first
/// signal asks the run to save a checkpoint and the probe data and stop; later signals
/// while that save is pending or under way are ignored (said once), so that a scheduler
/// repeating SIGTERM or a second Ctrl-C cannot lose the run (before, a second signal a
/// second or more after the first exited without saving, even when the save had not
/// started yet). SIGQUIT (Ctrl-\\), which this handler does not catch, still quits at
/// once. While the probe record is being written after the last step, a signal stops the
/// run once the record is on disk. In setup (nothing to save yet) and in the analysis (the
/// probe record is already written) a signal exits at once. Exit status 130.
fn install_interrupt_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // before ctrlc's thread starts, so that it inherits the mask
        forward_scheduler_signals();
        let r = ctrlc::set_handler(move || {
            use std::sync::atomic::Ordering;
            match PHASE.load(Ordering::SeqCst) {
                0 => {
                    eprintln!("\ninterrupted during setup: nothing was run, nothing to save");
                    exit_interrupted();
                }
                2 => {
                    eprintln!(
                        "\ninterrupted during the analysis: the probe record is in probe.csv (and a final checkpoint for long runs)"
                    );
                    exit_interrupted();
                }
                3 => {
                    // the record is being written: the run stops once it is on disk
                    if !INTERRUPT.swap(true, Ordering::SeqCst) {
                        eprintln!(
                            "\ninterrupt: the time loop has ended; the run stops once the probe record (and a long run's final checkpoint) is on disk"
                        );
                    }
                    return;
                }
                _ => {}
            }
            if INTERRUPT.swap(true, Ordering::SeqCst) {
                // the save asked for by the first signal is pending or under way
                if !REPEAT_TOLD.swap(true, Ordering::SeqCst) {
                    eprintln!(
                        "\ninterrupt again: the save is already under way and completes first (further signals are ignored; SIGQUIT, Ctrl-\\, quits without saving)"
                    );
                }
                return;
            }
            eprintln!(
                "\ninterrupt: saving a checkpoint and the probe data at the run's next check (further signals are ignored until it is done)"
            );
        });
        if let Err(e) = r {
            eprintln!("warning: no Ctrl-C handler ({e}); an interrupt will lose the run");
        }
    });
}

/// The single-valued flags given more than once on this command line, each as a
/// sentence: the last value is used (`args_override_self`), which a repeated `--steps`
/// or `--mesh` did without a word (issue 47 round five). The flags that collect values
/// (`--probe`, `--material`, `--boundary`) and the switches are not counted.
fn repeated_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<String> {
    const MANY: [&str; 5] = ["probe", "material", "boundary", "quiet", "force"];
    let mut seen: Vec<(String, usize)> = vec![];
    for a in args {
        let Some(name) = a.to_str().and_then(|a| a.strip_prefix("--")) else {
            continue;
        };
        let name = name.split('=').next().unwrap_or(name);
        if name.is_empty() || MANY.contains(&name) {
            continue;
        }
        match seen.iter_mut().find(|(n, _)| n == name) {
            Some((_, c)) => *c += 1,
            None => seen.push((name.to_string(), 1)),
        }
    }
    seen.into_iter()
        .filter(|(_, c)| *c > 1)
        .map(|(n, c)| format!("--{n} is given {c} times: the last value is used"))
        .collect()
}

/// SIGUSR1, SIGUSR2 and SIGXCPU are what batch schedulers send before they end a job
/// (Slurm's `--signal`, Grid Engine's `-notify`, a CPU-time limit); their default action
/// killed the run without a checkpoint (issue 47 round five). They are blocked in this
/// thread, so in every thread started after it, and a thread waiting for them sends the
/// process SIGTERM, which saves the run like Ctrl-C.
fn forward_scheduler_signals() {
    use nix::sys::signal::{SigSet, Signal, kill};
    let mut set = SigSet::empty();
    for s in [Signal::SIGUSR1, Signal::SIGUSR2, Signal::SIGXCPU] {
        set.add(s);
    }
    if set.thread_block().is_err() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            loop {
                if set.wait().is_ok() {
                    let _ = kill(nix::unistd::Pid::this(), Signal::SIGTERM);
                }
            }
        });
    if spawned.is_err() {
        // no thread to take them: their default action again
        let _ = set.thread_unblock();
    }
}

/// The configuration of a `--resume DIR` and the checkpoint to continue from.
fn resumed(args: &ResonatorArgs, dir: &Path) -> Result<(Config, Origin, Checkpoint)> {
    if let Some(bad) = args.given_parameters().first() {
        return Err(Error::config(
            "flag",
            format!("--{bad}"),
            "--resume takes the run's parameters from its checkpoint; only --out, --quiet and the --checkpoint-* flags may be given with it",
        ));
    }
    if args.config.is_some() {
        return Err(Error::config(
            "flag",
            "--config",
            "--resume takes the run's configuration from its checkpoint",
        ));
    }
    let ck_path = dir.join(solver::CHECKPOINT_FILE);
    if !ck_path.exists() && dir.join("run.toml").exists() && dir.join("modes.csv").exists() {
        return Err(Error::config(
            "resume",
            dir.display(),
            "the run in this folder is complete (its outputs are there); nothing to resume",
        ));
    }
    let ck = Checkpoint::read(dir)?;
    let here = std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string();
    if !ck.out.is_empty() && ck.out != here && !args.force {
        return Err(Error::Checkpoint {
            path: ck_path,
            why: format!(
                "it was written by the run in {}, not this folder ({here}); resuming would overwrite this folder's outputs with that run's. Give --force to continue it here",
                ck.out
            ),
        });
    }
    let origin = Origin {
        path: format!("{} (stored configuration)", ck_path.display()),
        text: ck.config.clone(),
    };
    let cfg = Config::parse(&origin)?;
    eprintln!("resuming at step {} from {}", ck.done, dir.display());
    Ok((cfg, origin, ck))
}

/// What a run takes from its flags, `--config` or `--resume` (the checkpoint): the
/// configuration with the flags overlaid, where it came from, the output folder and the
/// checkpoint to continue from.
struct Prepared {
    cfg: Config,
    origin: Option<Origin>,
    out: PathBuf,
    resume: Option<Checkpoint>,
}

/// The run's [`Prepared`] configuration: `--resume DIR`'s ([`resumed`]; output folder DIR
/// unless `--out`), else `--config`'s or the defaults (output folder `out` unless `--out`),
/// with the flags overlaid.
fn prepare(args: &ResonatorArgs) -> Result<Prepared> {
    let (mut cfg, origin, out, resume) = match &args.resume {
        Some(dir) => {
            let (cfg, origin, ck) = resumed(args, dir)?;
            let out = args.out.clone().unwrap_or_else(|| dir.clone());
            (cfg, Some(origin), out, Some(ck))
        }
        None => {
            let (cfg, origin) = match &args.config {
                Some(p) => {
                    let (c, o) = Config::read(p)?;
                    (c, Some(o))
                }
                None => (Config::default(), None),
            };
            let out = args.out.clone().unwrap_or_else(|| "out".into());
            (cfg, origin, out, None)
        }
    };
    args.overlay(&mut cfg)?;
    // the mesh path is stored absolute, so that `--resume` works from any directory
    if resume.is_none() {
        cfg.absolute_mesh_path();
    }
    Ok(Prepared {
        cfg,
        origin,
        out,
        resume,
    })
}

/// Writes a finished run's outputs into `out`: the result files, the convergence table of
/// a ladder's `levels`, the spectrum plot. A failure stops the run saying where its state
/// is kept (the checkpoint, else the probe record).
fn write_outputs(
    out: &Path,
    r: &solver::ResonatorResult,
    levels: Option<&[dgatd::solver::Level]>,
) -> Result<Vec<PathBuf>> {
    let write = || -> Result<Vec<PathBuf>> {
        let mut files = dgatd::report::write_resonator(out, r)?;
        if let Some(levels) = levels {
            files.push(dgatd::report::write_convergence(out, levels, r)?);
        }
        files.extend(super::plots::spectrum_plot(out, r)?);
        Ok(files)
    };
    write().map_err(|e| {
        let ck = out.join(solver::CHECKPOINT_FILE);
        let kept = if ck.exists() {
            format!(
                "the run's final state is kept in {}: free space, then `dgatd resonator --resume {}` writes the outputs without rerunning the steps",
                ck.display(),
                out.display()
            )
        } else {
            format!(
                "the probe record is in {}",
                out.join("probe.csv").display()
            )
        };
        Error::Stopped {
            cause: Box::new(e),
            saved: format!("writing the outputs failed; {kept}"),
        }
    })
}

/// The warnings known before the run starts: the plan's keys that do nothing, flags given
/// twice, a partitioner with nothing to split, a device that is not the one hoped for.
fn print_warnings(plan: &Plan) {
    for w in &plan.warnings {
        eprintln!("warning: {w}");
    }
    for w in repeated_flags(std::env::args_os().skip(1)) {
        eprintln!("warning: {w}");
    }
    // (issue 47 round five: a partitioner asked for on one process with one GPU was
    // ignored without a word; it acts with --gpus N and under mpirun)
    if plan.gpus == 1 && !plan.partitioner.is_auto() {
        eprintln!(
            "warning: partitioner = \"{}\" (--partitioner) has no effect on one process with one GPU: it splits the mesh for --gpus N or mpirun ranks",
            format!("{:?}", plan.partitioner).to_lowercase()
        );
    }
    // a run that lands on the CPU while GPUs seem hidden from OpenCL says so before it starts
    // (and again among the notices at its end)
    if let Ok(c) = dgatd::solver::choose_device(plan)
        && let Some(w) = c.warning
    {
        eprintln!("warning: {w}");
    }
}

/// Runs the resonator job and writes its outputs; prints the mode table.
pub fn command(args: &ResonatorArgs) -> Result<()> {
    // under mpirun with several ranks: the partitioned run (resonator/ranks.rs)
    #[cfg(feature = "mpi")]
    if let Some(r) = ranks::command(args) {
        return r;
    }
    install_interrupt_handler();
    let mut opts =
        RunOptions {
            interrupt: Some(&INTERRUPT),
            on_phase: Some(&set_phase),
            fault_at_step: match std::env::var("DGATD_FAULT_AT_STEP") {
                Ok(v) => Some(v.parse().map_err(|_| {
                    Error::config("DGATD_FAULT_AT_STEP", &v, "must be a step number")
                })?),
                Err(_) => None,
            },
            ..Default::default()
        };
    let Prepared {
        cfg,
        origin,
        out,
        resume,
    } = prepare(args)?;
    opts.resume = resume;
    let plan = Plan::new(&cfg, origin)?;
    print_warnings(&plan);
    // the output folder is created, tested and locked before anything runs
    let (_dir, stale) = dgatd::report::OutputDir::prepare(&out)?;
    *LOCK_FILE.lock().unwrap_or_else(|e| e.into_inner()) = Some(_dir.lock_path());
    if let Some(n) = stale {
        eprintln!("note: {n}");
    }
    // a new run neither mixes its files with an earlier run's nor loses them; nor does a
    // run resumed into another folder (`--resume A --out B`), which meets B as a new run
    // does (before, it replaced B's outputs, and B's own checkpoint, without a word)
    let into_other = args.resume.as_ref().is_some_and(|a| !same_dir(a, &out));
    if (opts.resume.is_none() || into_other)
        && let Some(n) = _dir.start_fresh()?
    {
        eprintln!("note: {n}");
    }
    opts.out = Some(out.clone());
    let progress = Progress::new(args.quiet);
    let status = |m: &str| progress.status(m);
    opts.on_status = Some(&status);
    let (r, ladder) = match cfg.converge {
        None if plan.gpus > 1 => (run_on_gpus(&plan, &mut opts, &progress)?, None),
        None => (
            solver::run_with(&plan, &mut opts, &mut |done, total| {
                progress.steps(done, total)
            })?,
            None,
        ),
        Some(n) => {
            let l = ladder::converge(args, &cfg, &origin_of(&plan), n, &mut opts, &progress)?;
            (l.finest, Some(l.levels))
        }
    };
    progress.finish();
    for n in &r.notices {
        notice(n);
    }
    for w in dgatd::report::unresolved_lines(&r) {
        eprintln!("warning: {w}");
    }
    let files = write_outputs(&out, &r, ladder.as_deref())?;
    // the outputs are complete: the checkpoint is no longer needed
    let ck = out.join(solver::CHECKPOINT_FILE);
    if ck.exists() {
        std::fs::remove_file(&ck).map_err(|e| Error::io(&ck, e))?;
    }
    print_summary(&r, &plan);
    if let Some(levels) = &ladder {
        out!("{}", dgatd::report::ladder_table(levels, &r));
        for n in dgatd::report::ladder_notes(&r) {
            eprintln!("note: {n}");
        }
    }
    outln!("wrote {}", dgatd::report::path_list(&files));
    Ok(())
}

/// Prints a notice of the run: as a warning where it is one (it starts with "warning: "),
/// else as a note.
pub(crate) fn notice(n: &str) {
    if n.starts_with("warning: ") {
        eprintln!("{n}");
    } else {
        eprintln!("note: {n}");
    }
}

/// Whether `a` and `b` name the same folder (canonical paths; the names as given when
/// one cannot be resolved).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// `--gpus N`, N > 1: the partitioned run, one thread per GPU ([`threads`]).
#[cfg(feature = "partition")]
fn run_on_gpus(
    plan: &Plan,
    opts: &mut RunOptions,
    progress: &Progress,
) -> Result<solver::ResonatorResult> {
    threads::run(plan, opts, progress)
}

#[cfg(not(feature = "partition"))]
fn run_on_gpus(plan: &Plan, _: &mut RunOptions, _: &Progress) -> Result<solver::ResonatorResult> {
    Err(Error::config(
        "gpus",
        plan.gpus,
        "this dgatd was built without the `partition` feature (cargo build --release --features partition)",
    ))
}

/// The origin of a plan's configuration (for the per-level plans of a ladder).
fn origin_of(plan: &Plan) -> Option<Origin> {
    plan.origin.clone()
}

/// A cost per DoF and step in ns, to three significant digits where it is below 1 (a GPU's
/// 0.039 would read 0.0 with one decimal).
fn per_dof_step(ns: f64) -> String {
    if ns < 1.0 {
        format!("{ns:.3}")
    } else {
        format!("{ns:.1}")
    }
}

fn print_summary(r: &solver::ResonatorResult, plan: &Plan) {
    outln!(
        "dgatd {} ({}) | {} | {} tets, {} DoFs | {} {} | dt = {:.4e} s, {} steps ({:.3} us) | setup {:.2} s, run {:.2} s ({} ns/DoF/step)",
        dgatd::report::VERSION,
        dgatd::report::COMMIT,
        r.backend,
        r.mesh.n_tets(),
        r.dofs,
        plan.precision.name(),
        match plan.method {
            Method::Dga => format!("DGA, {} dual", plan.dual.name()),
            Method::Dg => format!("DG N={} {} flux, LSERK4", plan.order, plan.flux.name()),
        },
        r.dt_s,
        r.record.steps,
        r.record.steps as f64 * r.dt_s * 1e6,
        r.setup_s,
        r.record.wall_s,
        per_dof_step(1e9 * r.record.wall_s / (r.record.steps as f64 * r.dofs as f64))
    );
    out!("{}", dgatd::report::mode_table(r));
}

/// Progress on stderr: a spinner with the current setup or analysis task and its elapsed
/// time, then a bar over the time steps (rate as whole steps per second). Without a
/// terminal (a batch job's log), each task is one line with its start time.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    log: bool,
    start: std::time::Instant,
    stepping: std::sync::atomic::AtomicBool,
    /// Last tenth of the steps logged (logs without a terminal).
    tenth: std::sync::atomic::AtomicUsize,
}

impl Progress {
    fn new(quiet: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        Progress {
            bar,
            log: !quiet && !tty,
            start: std::time::Instant::now(),
            stepping: std::sync::atomic::AtomicBool::new(false),
            tenth: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn status(&self, m: &str) {
        use std::sync::atomic::Ordering;
        if let Some(b) = &self.bar {
            if self.stepping.swap(false, Ordering::SeqCst) {
                b.set_style(
                    indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                );
            }
            b.set_message(m.to_string());
        }
        if self.log {
            eprintln!("[{:8.1} s] {m}", self.start.elapsed().as_secs_f64());
        }
    }

    fn steps(&self, done: usize, total: usize) {
        use std::sync::atomic::Ordering;
        if let Some(b) = &self.bar {
            if !self.stepping.swap(true, Ordering::SeqCst) {
                b.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{spinner} steps {pos}/{len} [{bar:40}] {per_sec:.0} eta {eta}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                b.set_message("");
            }
            b.set_length(total as u64);
            b.set_position(done as u64);
        } else if self.log
            && self
                .tenth
                .fetch_max(10 * done / total.max(1), Ordering::SeqCst)
                < 10 * done / total.max(1)
        {
            eprintln!(
                "[{:8.1} s] step {done} of {total}",
                self.start.elapsed().as_secs_f64()
            );
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    /// Round four V9: a group name may hold '=' (the value never does): `a=b=pmc` is the
    /// group "a=b".
    #[test]
    fn a_group_name_may_hold_an_equals_sign() {
        let items = ["a=b=pmc".to_string(), "wall=abc".to_string()];
        let p = super::parse_pairs("boundary", &items, super::parse_boundary).unwrap();
        assert_eq!(p[0].0, "a=b");
        assert_eq!(p[1].0, "wall");
        assert!(
            super::parse_pairs("boundary", &["pmc".to_string()], super::parse_boundary).is_err()
        );
    }

    /// Round five: a single-valued flag given twice is named; collecting flags are not.
    #[test]
    fn repeated_single_valued_flags_are_named() {
        let a = [
            "resonator",
            "--steps",
            "60",
            "--probe",
            "0,0,0",
            "--steps=70",
            "--probe",
            "1,1,1",
            "--quiet",
            "--quiet",
            "--mesh",
            "x",
        ]
        .map(std::ffi::OsString::from);
        let w = super::repeated_flags(a.into_iter());
        assert_eq!(w, vec!["--steps is given 2 times: the last value is used"]);
    }

    #[test]
    fn a_device_cost_per_dof_keeps_its_digits() {
        assert_eq!(super::per_dof_step(0.03898), "0.039");
        assert_eq!(super::per_dof_step(6.13), "6.1");
    }
}
