//! The command-line front end. `main.rs` only calls [`main`].

use crate::dga::operators::DualForm;
use crate::mesh::{Topology, gmsh};
use crate::solver::resonator::{self, BackendSpec, CavitySpec, MeshSpec, ResonatorConfig};
use crate::spectrum::analytic::Cavity;
use crate::util::V3;
use crate::{Error, Result};
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;

/// `println!` that ignores a closed stdout (`dgatd ... | head`) instead of panicking: the
/// results are in the output files either way.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}
/// `print!` that ignores a closed stdout.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

#[derive(Parser, Debug)]
#[command(
    name = "dgatd",
    version,
    about = "Time-domain Maxwell solver (fractioned DGA) on tetrahedral meshes.\n\nWith no command, runs the resonator job on the bundled medium cylinder mesh."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once; boxing would only obscure the code
pub enum Command {
    /// Excite a PEC cavity with a pulse and extract its resonances.
    Resonator(ResonatorArgs),
    /// Print counts, quality figures and the estimated memory of a mesh.
    MeshInfo(MeshInfoArgs),
    /// List the OpenCL platforms and devices.
    Devices,
    /// Bandwidth probes, every kernel variant and the whole step over a mesh-size ladder.
    Bench(BenchArgs),
    /// Plots (PNG and SVG) and Markdown tables from bench CSV files.
    Report(ReportArgs),
    /// DGA against nodal DG on the same meshes and device: errors, time, bytes, flops.
    Compare(CompareArgs),
}

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// Comma list of meshes (files or bundled:coarse|medium|fine).
    #[arg(long, default_value = "bundled:coarse,bundled:medium")]
    pub mesh: String,
    /// DG orders.
    #[arg(long, default_value = "1,2,3")]
    pub orders: String,
    /// DG fluxes.
    #[arg(long, default_value = "upwind,central")]
    pub fluxes: String,
    /// Simulated time of every run, in seconds.
    #[arg(long, default_value_t = 3e-7)]
    pub time: f64,
    #[arg(long, default_value = "auto", value_parser = ["auto", "cpu", "opencl"])]
    pub backend: String,
    #[arg(long)]
    pub device: Option<String>,
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    pub precision: String,
    #[arg(long, default_value = "compare")]
    pub out: PathBuf,
}

/// `dgatd compare`.
pub fn compare(a: &CompareArgs) -> Result<()> {
    use crate::compare::{Plan, run, write_csv, write_plots};
    let orders = a
        .orders
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|o| (1..=10).contains(o))
                .ok_or_else(|| Error::config("orders", s, "expected orders in 1..=10"))
        })
        .collect::<Result<Vec<_>>>()?;
    let fluxes = a
        .fluxes
        .split(',')
        .map(|s| s.trim().parse())
        .collect::<Result<Vec<_>>>()?;
    if !(a.time > 0.0 && a.time.is_finite()) {
        return Err(Error::config(
            "time",
            a.time,
            "must be a positive number of seconds",
        ));
    }
    let backend = match (a.backend.as_str(), &a.device) {
        ("cpu", _) => BackendSpec::Cpu,
        (_, Some(d)) => BackendSpec::Opencl(Some(d.clone())),
        ("opencl", None) => BackendSpec::Opencl(None),
        _ => BackendSpec::Auto,
    };
    let plan = Plan {
        meshes: a.mesh.split(',').map(|s| s.trim().to_string()).collect(),
        orders,
        fluxes,
        time_s: a.time,
        backend,
        precision: a.precision.parse()?,
    };
    std::fs::create_dir_all(&a.out).map_err(|e| Error::io(&a.out, e))?;
    let csv = a.out.join("compare.csv");
    let mut done = vec![];
    let rows = run(&plan, &mut |r| {
        eprintln!(
            "{} {} N={} {}: {} DoFs, {} steps in {:.2} s, max error {:.3}%, {} spurious",
            r.mesh,
            r.method.name(),
            r.order,
            r.flux,
            r.dofs,
            r.steps,
            r.wall_s,
            r.max_abs_err(),
            r.n_spurious
        );
        done.push(r.clone());
        // written after every run, so that a long comparison never loses finished rows
        write_csv(&csv, &done)
    })?;
    let mut files = vec![csv];
    let plots = write_plots(&a.out, &rows)?;
    if plots.is_empty() {
        eprintln!("note: no run found all four modes (record too short?); no plots written");
    }
    files.extend(plots);
    outln!(
        "{} runs; wrote {}",
        rows.len(),
        crate::report::path_list(&files)
    );
    Ok(())
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// bench.csv files written by dgatd bench (rows of several machines may be mixed).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// OpenCL devices: all, none, or a comma list of indices / name substrings.
    #[arg(long, default_value = "all")]
    pub devices: String,
    /// Skip the CPU backend.
    #[arg(long)]
    pub no_cpu: bool,
    #[arg(long, default_value = "f64,f32")]
    pub precision: String,
    /// Target tet counts of the generated box meshes (6 n³ tets, n rounded).
    #[arg(long, default_value = "1e3,1e4,1e5,1e6")]
    pub sizes: String,
    #[arg(long, default_value_t = 30)]
    pub reps: usize,
    #[arg(long, default_value_t = 5)]
    pub warmup: usize,
    /// CSR variants are skipped above this many tets.
    #[arg(long, default_value = "6e6")]
    pub csr_max_tets: String,
    /// The CPU backend is skipped above this many tets.
    #[arg(long, default_value = "2e6")]
    pub cpu_max_tets: String,
    /// Elements of the copy/triad arrays.
    #[arg(long, default_value = "1.34e8")]
    pub stream_elems: String,
    /// DG orders timed at each mesh size ("" for none).
    #[arg(long, default_value = "1,2,3,4")]
    pub dg_orders: String,
    /// DG rows are skipped above this many tets.
    #[arg(long, default_value = "1.1e6")]
    pub dg_max_tets: String,
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
}

#[derive(clap::Args, Debug, Clone)]
#[command(args_override_self = true)]
pub struct ResonatorArgs {
    /// Gmsh mesh file (MSH 4.1 ASCII/binary or 2.2 ASCII), or bundled:coarse|medium|fine.
    #[arg(long, default_value = "bundled:medium", conflicts_with = "box_mesh")]
    pub mesh: String,
    /// Generated box instead of a file: NX,NY,NZ[:LX,LY,LZ] (cells; side lengths in m, default 1).
    #[arg(long = "box")]
    pub box_mesh: Option<String>,
    /// Uniform 1:8 refinements of the mesh (cylinder walls are projected).
    #[arg(long, default_value_t = 0)]
    pub refine: u32,
    /// Number of time steps (overrides --time).
    #[arg(long, allow_hyphen_values = true)]
    pub steps: Option<i64>,
    /// Simulated time in seconds.
    #[arg(long, default_value_t = 1.0e-6, allow_hyphen_values = true)]
    pub time: f64,
    /// Courant number: dt = CFL * 2 / sqrt(rho(K)), in (0, 1].
    #[arg(long, default_value_t = 0.95, allow_hyphen_values = true)]
    pub cfl: f64,
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    pub precision: String,
    /// Dual update: the seed's CSR SpMV or the factored form.
    #[arg(long, default_value = "factored", value_parser = ["csr", "factored"])]
    pub dual: String,
    /// auto: the first OpenCL GPU, else OpenCL CPU device, else the CPU backend.
    #[arg(long, default_value = "auto", value_parser = ["auto", "cpu", "opencl"])]
    pub backend: String,
    /// OpenCL device: index or name substring (see dgatd devices).
    #[arg(long)]
    pub device: Option<String>,
    /// Output directory.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Source point x,y,z (m); default: inside the mesh, off every symmetry plane.
    #[arg(long, allow_hyphen_values = true)]
    pub source: Option<String>,
    /// Source current direction x,y,z.
    #[arg(long, default_value = "0,0,1", allow_hyphen_values = true)]
    pub source_dir: String,
    /// Probe point x,y,z (repeatable); default: three seeded random points inside the mesh,
    /// off its symmetry planes (see --seed).
    #[arg(long = "probe", allow_hyphen_values = true)]
    pub probes: Vec<String>,
    /// Peak frequency of the pulse in Hz (default c / largest mesh extent).
    #[arg(long, allow_hyphen_values = true)]
    pub f_peak: Option<f64>,
    /// Upper end of the analysed band in Hz (default 2.2 x f-peak).
    #[arg(long, allow_hyphen_values = true)]
    pub fmax: Option<f64>,
    /// Minimum peak prominence relative to the largest peak.
    #[arg(long, default_value_t = 0.02, allow_hyphen_values = true)]
    pub min_prominence: f64,
    /// Harmonic inversion: drop modes with a lower quality factor (or growing ones).
    /// Default 1e4 with --method dga, 10 with --method dg (upwind damping sets DG's Q).
    #[arg(long, allow_hyphen_values = true)]
    pub min_q: Option<f64>,
    /// Material of a volume group: NAME_OR_TAG=EPS_R[,MU_R] (repeatable).
    #[arg(long = "material")]
    pub materials: Vec<String>,
    /// Analytic modes to compare with: auto, none, cylinder:R,H, box:A,B,D or sphere:R.
    #[arg(long, default_value = "auto")]
    pub cavity: String,
    /// Resonance extraction: harmonic inversion (matrix pencil) or FFT peaks.
    #[arg(long, default_value = "harminv", value_parser = ["harminv", "fft"])]
    pub extract: String,
    /// Write modes.vtu with the complex field of the N strongest resonances (a second pass
    /// of the run on the CPU backend).
    #[arg(long, default_value_t = 0)]
    pub mode_shapes: usize,
    /// Seed for the default probe placement.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Spatial discretisation: the fractioned DGA (leapfrog) or nodal DG (LSERK4).
    #[arg(long, default_value = "dga", value_parser = ["dga", "dg"])]
    pub method: String,
    /// DG polynomial order N (1..=10), with --method dg.
    #[arg(long, default_value_t = 3)]
    pub order: usize,
    /// DG numerical flux, with --method dg.
    #[arg(long, default_value = "upwind", value_parser = ["upwind", "central"])]
    pub flux: String,
    /// Save a checkpoint (OUT/checkpoint.bin) every N steps (0: only by time).
    #[arg(long, default_value_t = 0)]
    pub checkpoint_steps: usize,
    /// Save a checkpoint after this many minutes of running (0: only by steps).
    #[arg(long, default_value_t = 10.0, allow_hyphen_values = true)]
    pub checkpoint_minutes: f64,
    /// Continue the run whose checkpoint is in DIR (its parameters come from the
    /// checkpoint; outputs go to DIR unless --out is given). The result is bit-for-bit that
    /// of an uninterrupted run.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
}

/// Flags that may accompany `--resume` (everything else comes from the checkpoint).
const RESUME_FLAGS: &[&str] = &[
    "resume",
    "out",
    "quiet",
    "checkpoint_steps",
    "checkpoint_minutes",
];

/// Set by the Ctrl-C handler; the time loop saves and stops at its next look.
static INTERRUPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the Ctrl-C handler (SIGINT, SIGTERM, SIGHUP) once: the first signal asks the run to save
/// a checkpoint and the probe data and stop; a second one exits at once with status 130.
fn install_interrupt_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let r = ctrlc::set_handler(|| {
            if INTERRUPT.swap(true, std::sync::atomic::Ordering::SeqCst) {
                eprintln!("\nsecond interrupt: exiting without saving");
                std::process::exit(130);
            }
            eprintln!(
                "\ninterrupt: saving a checkpoint and the probe data (Ctrl-C again to quit now)"
            );
        });
        if let Err(e) = r {
            eprintln!("warning: no Ctrl-C handler ({e}); an interrupt will lose the run");
        }
    });
}

#[derive(clap::Args, Debug)]
pub struct MeshInfoArgs {
    /// Gmsh mesh file, or bundled:coarse|medium|fine.
    pub path: String,
}

fn parse_vec(name: &str, s: &str) -> Result<V3> {
    let v: Vec<f64> = s
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::config(name, s, "expected three numbers x,y,z"))?;
    if v.len() != 3 || v.iter().any(|x| !x.is_finite()) {
        return Err(Error::config(
            name,
            s,
            "expected three finite numbers x,y,z",
        ));
    }
    Ok([v[0], v[1], v[2]])
}

fn mesh_spec(mesh: &str, box_mesh: &Option<String>) -> Result<MeshSpec> {
    if let Some(b) = box_mesh {
        let (n, l) = b.split_once(':').unwrap_or((b, "1,1,1"));
        let n: Vec<usize> = n
            .split(',')
            .map(|x| x.trim().parse())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| Error::config("box", b, "expected NX,NY,NZ[:LX,LY,LZ]"))?;
        let l = parse_vec("box", l)?;
        if n.len() != 3 {
            return Err(Error::config("box", b, "expected three cell counts"));
        }
        return Ok(MeshSpec::Box {
            n: [n[0], n[1], n[2]],
            l,
        });
    }
    Ok(match mesh.strip_prefix("bundled:") {
        Some(name) => MeshSpec::Bundled(name.to_string()),
        None => MeshSpec::File(PathBuf::from(mesh)),
    })
}

impl ResonatorArgs {
    pub fn to_config(&self) -> Result<ResonatorConfig> {
        let backend = match (self.backend.as_str(), &self.device) {
            ("cpu", Some(d)) => {
                return Err(Error::config(
                    "device",
                    d,
                    "--device needs --backend opencl or auto",
                ));
            }
            ("cpu", None) => BackendSpec::Cpu,
            ("opencl", d) => BackendSpec::Opencl(d.clone()),
            (_, Some(d)) => BackendSpec::Opencl(Some(d.clone())),
            (_, None) => BackendSpec::Auto,
        };
        if let Some(s) = self.steps
            && s <= 0
        {
            return Err(Error::config(
                "steps",
                s,
                "must be a positive number of steps",
            ));
        }
        if !(self.time > 0.0 && self.time.is_finite()) {
            return Err(Error::config(
                "time",
                self.time,
                "must be a positive number of seconds",
            ));
        }
        if !(self.cfl > 0.0 && self.cfl <= 1.0) {
            return Err(Error::config("cfl", self.cfl, "must be in (0, 1]"));
        }
        if let Some(q) = self.min_q
            && !(q > 0.0)
        {
            return Err(Error::config("min-q", q, "must be positive"));
        }
        if self.method == "dg" && !(1..=10).contains(&self.order) {
            return Err(Error::config("order", self.order, "must be in 1..=10"));
        }
        if self.method == "dg" && self.mode_shapes > 0 {
            return Err(Error::config(
                "mode-shapes",
                self.mode_shapes,
                "mode shapes are computed for --method dga only",
            ));
        }
        if !(self.min_prominence > 0.0 && self.min_prominence < 1.0) {
            return Err(Error::config(
                "min-prominence",
                self.min_prominence,
                "must be in (0, 1)",
            ));
        }
        let materials = self
            .materials
            .iter()
            .map(|m| {
                let (k, v) = m
                    .split_once('=')
                    .ok_or_else(|| Error::config("material", m, "expected NAME=EPS_R[,MU_R]"))?;
                let nums: Vec<f64> = v
                    .split(',')
                    .map(|x| x.trim().parse())
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|_| Error::config("material", m, "expected numbers after ="))?;
                match nums.as_slice() {
                    [e] => Ok((k.to_string(), *e, 1.0)),
                    [e, u] => Ok((k.to_string(), *e, *u)),
                    _ => Err(Error::config("material", m, "expected NAME=EPS_R[,MU_R]")),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let cavity = match self.cavity.as_str() {
            "auto" => CavitySpec::Auto,
            "none" => CavitySpec::None,
            c => {
                let (kind, dims) = c.split_once(':').ok_or_else(|| {
                    Error::config(
                        "cavity",
                        c,
                        "expected auto, none, cylinder:R,H, box:A,B,D or sphere:R",
                    )
                })?;
                let d: Vec<f64> = dims
                    .split(',')
                    .map(|x| x.trim().parse())
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|_| Error::config("cavity", c, "dimensions must be numbers"))?;
                if d.iter().any(|x| !(*x > 0.0 && x.is_finite())) {
                    return Err(Error::config("cavity", c, "dimensions must be positive"));
                }
                match (kind, d.as_slice()) {
                    ("cylinder", [r, h]) => CavitySpec::Given(Cavity::Cylinder {
                        radius: *r,
                        height: *h,
                    }),
                    ("box", [a, b, dd]) => CavitySpec::Given(Cavity::Box {
                        a: *a,
                        b: *b,
                        d: *dd,
                    }),
                    ("sphere", [r]) => CavitySpec::Given(Cavity::Sphere { radius: *r }),
                    _ => {
                        return Err(Error::config(
                            "cavity",
                            c,
                            "expected cylinder:R,H, box:A,B,D or sphere:R",
                        ));
                    }
                }
            }
        };
        Ok(ResonatorConfig {
            mesh: mesh_spec(&self.mesh, &self.box_mesh)?,
            refine: self.refine,
            steps: self.steps.map(|s| s as usize),
            time_s: self.time,
            cfl: self.cfl,
            precision: self.precision.parse()?,
            dual: self.dual.parse::<DualForm>()?,
            backend,
            source: self
                .source
                .as_deref()
                .map(|s| parse_vec("source", s))
                .transpose()?,
            source_dir: parse_vec("source-dir", &self.source_dir)?,
            probes: self
                .probes
                .iter()
                .map(|p| parse_vec("probe", p))
                .collect::<Result<_>>()?,
            f_peak_hz: self.f_peak,
            fmax_hz: self.fmax,
            min_prominence: self.min_prominence,
            min_q: self.min_q,
            materials,
            cavity,
            extract: self.extract.parse()?,
            mode_shapes: self.mode_shapes,
            seed: self.seed,
            method: self.method.parse()?,
            order: self.order,
            flux: self.flux.parse()?,
        })
    }
}

/// Runs the resonator job and writes its outputs; prints the mode table. `raw` are the
/// command-line arguments after `resonator` (stored in checkpoints), `given` the ids of the
/// flags given on the command line.
pub fn resonator(args: &ResonatorArgs, raw: Vec<String>, given: &[String]) -> Result<()> {
    if !(args.checkpoint_minutes >= 0.0 && args.checkpoint_minutes.is_finite()) {
        return Err(Error::config(
            "checkpoint-minutes",
            args.checkpoint_minutes,
            "must be a non-negative number of minutes",
        ));
    }
    let mut opts =
        resonator::RunOptions {
            checkpoint_steps: args.checkpoint_steps,
            checkpoint_every: (args.checkpoint_minutes > 0.0)
                .then(|| std::time::Duration::from_secs_f64(60.0 * args.checkpoint_minutes)),
            interrupt: Some(&INTERRUPT),
            fault_at_step: match std::env::var("DGATD_FAULT_AT_STEP") {
                Ok(v) => Some(v.parse().map_err(|_| {
                    Error::config("DGATD_FAULT_AT_STEP", &v, "must be a step number")
                })?),
                Err(_) => None,
            },
            ..Default::default()
        };
    let (cfg, out) = match &args.resume {
        Some(dir) => {
            if let Some(bad) = given.iter().find(|g| !RESUME_FLAGS.contains(&g.as_str())) {
                return Err(Error::config(
                    "flag",
                    format!("--{}", bad.replace('_', "-")),
                    "--resume takes the run's parameters from its checkpoint; only --out, --quiet and the --checkpoint-* flags may be given with it",
                ));
            }
            let ck = crate::solver::checkpoint::Checkpoint::read(dir)?;
            let stored = match Cli::try_parse_from(
                ["dgatd".to_string(), "resonator".to_string()]
                    .into_iter()
                    .chain(ck.args.iter().cloned()),
            ) {
                Ok(Cli {
                    command: Some(Command::Resonator(a)),
                }) => a,
                _ => {
                    return Err(Error::Checkpoint {
                        path: dir.join(crate::solver::checkpoint::FILE),
                        why: format!("its stored arguments {:?} do not parse", ck.args),
                    });
                }
            };
            let out = if given.iter().any(|g| g == "out") {
                args.out.clone()
            } else {
                dir.clone()
            };
            eprintln!(
                "resuming at step {} from {} (arguments: {})",
                ck.done,
                dir.display(),
                ck.args.join(" ")
            );
            opts.args = ck.args.clone();
            opts.resume = Some(ck);
            (stored.to_config()?, out)
        }
        None => {
            opts.args = raw;
            (args.to_config()?, args.out.clone())
        }
    };
    opts.out = Some(out.clone());
    install_interrupt_handler();
    let bar = (!args.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(1);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} steps {pos}/{len} [{bar:40}] {per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let r = resonator::run_with(&cfg, &mut opts, &mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(n) = &r.backend_notice {
        eprintln!("note: {n}");
    }
    let files = crate::report::write_resonator(&out, &cfg, &r)?;
    // the outputs are complete: the checkpoint is no longer needed
    let ck = out.join(crate::solver::checkpoint::FILE);
    if ck.exists() {
        std::fs::remove_file(&ck).map_err(|e| Error::io(&ck, e))?;
    }
    let dofs = r.dofs;
    outln!(
        "dgatd {} ({}) | {} | {} tets, {} DoFs | {} {} | dt = {:.4e} s, {} steps ({:.3} us) | setup {:.2} s, run {:.2} s ({:.1} ns/DoF/step)",
        crate::report::VERSION,
        crate::report::COMMIT,
        r.backend,
        r.mesh.n_tets(),
        dofs,
        cfg.precision.name(),
        match cfg.method {
            resonator::Method::Dga => format!("DGA, {} dual", cfg.dual.name()),
            resonator::Method::Dg => format!("DG N={} {} flux, LSERK4", cfg.order, cfg.flux.name()),
        },
        r.dt_s,
        r.record.steps,
        r.record.steps as f64 * r.dt_s * 1e6,
        r.setup_s,
        r.record.wall_s,
        1e9 * r.record.wall_s / (r.record.steps as f64 * dofs as f64)
    );
    out!("{}", crate::report::mode_table(&r));
    outln!("wrote {}", crate::report::path_list(&files));
    Ok(())
}

/// `dgatd mesh-info`.
pub fn mesh_info(args: &MeshInfoArgs) -> Result<()> {
    let mesh = match args.path.strip_prefix("bundled:") {
        Some(n) => gmsh::parse(resonator::bundled_mesh(n)?, &args.path)?,
        None => gmsh::read(std::path::Path::new(&args.path))?,
    };
    let t = Topology::build(&mesh)?;
    let q = mesh.quality();
    let nb_e = t.boundary_edge.iter().filter(|&&b| b).count();
    let nb_v = t.boundary_vertex.iter().filter(|&&b| b).count();
    let free_half = 2 * t.n_free_edges();
    // Σ d_v² over free half-edges per vertex, for the block storage.
    let mut d2 = 0usize;
    for v in 0..mesh.n_vertices() {
        let d = t
            .edges_at(v)
            .iter()
            .filter(|&&e| !t.boundary_edge[e as usize])
            .count();
        d2 += d * d;
    }
    let nt = mesh.n_tets();
    let ne = t.n_edges();
    let (lo, hi) = mesh.bbox();
    outln!("mesh            {}", mesh.source);
    outln!(
        "vertices        {} ({} on the boundary)",
        mesh.n_vertices(),
        nb_v
    );
    outln!("edges           {} ({} on the boundary)", ne, nb_e);
    outln!(
        "faces           {} ({} on the boundary)",
        t.n_faces(),
        t.n_boundary_faces
    );
    outln!(
        "tetrahedra      {} ({} reoriented on input)",
        nt,
        mesh.reoriented
    );
    outln!(
        "DoFs            {} = 4T ({}) + free half-edges ({})  [{:.2} per tet]",
        4 * nt + free_half,
        4 * nt,
        free_half,
        (4 * nt + free_half) as f64 / nt as f64
    );
    outln!(
        "bounding box    [{:.4}, {:.4}] x [{:.4}, {:.4}] x [{:.4}, {:.4}] m",
        lo[0],
        hi[0],
        lo[1],
        hi[1],
        lo[2],
        hi[2]
    );
    outln!("volume          {:.6} m^3", q.volume);
    outln!(
        "edge length     min {:.4e} m, max {:.4e} m",
        q.min_edge,
        q.max_edge
    );
    outln!(
        "shape 6√2V/l³   min {:.4}, mean {:.4} (1 = regular tet)",
        q.min_shape,
        q.mean_shape
    );
    let groups: Vec<String> = mesh
        .physical_names
        .iter()
        .map(|p| format!("{}:{} \"{}\"", p.dim, p.tag, p.name))
        .collect();
    outln!(
        "groups          {}",
        if groups.is_empty() {
            "none".into()
        } else {
            groups.join(", ")
        }
    );
    for (name, s) in [("f64", 8usize), ("f32", 4)] {
        // primal 24 coefficients + 6 indices per tet, F, U, circulations (12T indices),
        // edge circulation buffer, vertex blocks, per-half-edge row data (12 B).
        let factored = nt * (24 * s + 24 + 4 * s + 48) + ne * (2 * s + 4 + s + 24) + d2 * s;
        let csr_nnz = free_half * 70;
        let csr = factored + csr_nnz * (s + 8);
        outln!(
            "memory ({name})    factored ~{:.1} MiB, with CSR (~70 nnz/row) ~{:.1} MiB",
            factored as f64 / 1048576.0,
            csr as f64 / 1048576.0
        );
    }
    Ok(())
}

/// `dgatd devices`: every OpenCL device with the properties that matter here.
pub fn devices() -> Result<()> {
    let all = crate::backend::opencl::list_devices()?;
    outln!(
        "{:>3}  {:<5} {:<28} {:<30} {:<20} {:>4} {:>9} {:>9} {:>5}  {:<18} driver",
        "idx",
        "type",
        "platform",
        "device",
        "vendor",
        "CUs",
        "mem GiB",
        "alloc GiB",
        "fp64",
        "OpenCL C"
    );
    for d in &all {
        outln!(
            "{:>3}  {:<5} {:<28} {:<30} {:<20} {:>4} {:>9.2} {:>9.2} {:>5}  {:<18} {}",
            d.index,
            d.kind,
            d.platform.chars().take(28).collect::<String>(),
            d.name.chars().take(30).collect::<String>(),
            d.vendor.chars().take(20).collect::<String>(),
            d.compute_units,
            d.global_mem as f64 / 1073741824.0,
            d.max_alloc as f64 / 1073741824.0,
            if d.fp64 { "yes" } else { "no" },
            d.opencl_c,
            d.driver
        );
    }
    let def = crate::backend::opencl::select_device(None)?;
    outln!("default: {} ({} / {})", def.index, def.platform, def.name);
    Ok(())
}

fn count(name: &str, s: &str) -> Result<usize> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| Error::config(name, s, "expected a number like 1e6"))?;
    if !(x >= 1.0 && x.is_finite() && x < 1e12) {
        return Err(Error::config(name, s, "must be a positive count"));
    }
    Ok(x.round() as usize)
}

/// ISO 8601 UTC time of now (civil-from-days, no time-zone database needed).
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// `dgatd bench`: writes DIR/bench.csv row by row and prints a summary.
pub fn bench(a: &BenchArgs) -> Result<()> {
    let precisions: Vec<String> = a
        .precision
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    for p in &precisions {
        if p != "f32" && p != "f64" {
            return Err(Error::config("precision", p, "expected f32 and/or f64"));
        }
    }
    let sizes = a
        .sizes
        .split(',')
        .map(|s| count("sizes", s))
        .collect::<Result<Vec<_>>>()?;
    if a.reps == 0 {
        return Err(Error::config("reps", 0, "must be at least 1"));
    }
    let devices: Vec<String> = match a.devices.as_str() {
        "none" => vec![],
        d => d.split(',').map(|s| s.trim().to_string()).collect(),
    };
    let cfg = crate::bench::BenchConfig {
        devices,
        cpu: !a.no_cpu,
        precisions,
        sizes,
        reps: a.reps,
        warmup: a.warmup,
        csr_max_tets: count("csr-max-tets", &a.csr_max_tets)?,
        cpu_max_tets: count("cpu-max-tets", &a.cpu_max_tets)?,
        stream_elems: count("stream-elems", &a.stream_elems)?,
        dg_orders: a
            .dg_orders
            .split(',')
            .filter(|x| !x.trim().is_empty())
            .map(|x| {
                x.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|o| (1..=10).contains(o))
                    .ok_or_else(|| Error::config("dg-orders", x, "expected orders in 1..=10"))
            })
            .collect::<Result<Vec<_>>>()?,
        dg_max_tets: count("dg-max-tets", &a.dg_max_tets)?,
    };
    std::fs::create_dir_all(&a.out).map_err(|e| Error::io(&a.out, e))?;
    let path = a.out.join("bench.csv");
    let file = std::fs::File::create(&path).map_err(|e| Error::io(&path, e))?;
    let mut w = csv::Writer::from_writer(file);
    let werr = |e: csv::Error| Error::Output {
        path: path.clone(),
        msg: e.to_string(),
    };
    w.write_record(crate::bench::COLUMNS).map_err(werr)?;
    w.flush().map_err(|e| Error::io(&path, e))?;
    let ts = timestamp();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let mut rows = Vec::new();
    crate::bench::run(
        &cfg,
        &mut |r| {
            w.write_record(crate::bench::csv_fields(r, &ts, &host))
                .map_err(werr)?;
            w.flush().map_err(|e| Error::io(&path, e))?;
            rows.push(r.clone());
            Ok(())
        },
        &mut |m| eprintln!("{m}"),
    )?;
    outln!(
        "{:<28} {:<4} {:<14} {:<16} {:>10} {:>11} {:>9} {:>7} {:>8}",
        "device",
        "prec",
        "kernel",
        "variant",
        "tets",
        "median ms",
        "GB/s",
        "frac",
        "GDoF/s"
    );
    for r in &rows {
        outln!(
            "{:<28} {:<4} {:<14} {:<16} {:>10} {:>11.4} {:>9.1} {:>7.3} {:>8.3}",
            r.device.chars().take(28).collect::<String>(),
            r.precision,
            r.kernel,
            r.variant,
            r.tets,
            r.median_s * 1e3,
            r.gbs(),
            r.frac_copy_bw,
            r.gdofs()
        );
    }
    outln!("wrote {}", path.display());
    Ok(())
}

/// Parses the command line and runs.
pub fn main() -> Result<()> {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli.command {
        Some(Command::Resonator(a)) => {
            let sub = matches.subcommand_matches("resonator");
            let cmd = Cli::command();
            let arg_ids: Vec<String> = cmd
                .find_subcommand("resonator")
                .map(|c| c.get_arguments().map(|a| a.get_id().to_string()).collect())
                .unwrap_or_default();
            let given: Vec<String> = sub
                .map(|m| {
                    m.ids()
                        .filter(|id| arg_ids.iter().any(|a| a == id.as_str()))
                        .filter(|id| {
                            m.value_source(id.as_str())
                                == Some(clap::parser::ValueSource::CommandLine)
                        })
                        .map(|id| id.to_string())
                        .collect()
                })
                .unwrap_or_default();
            let raw: Vec<String> = std::env::args_os()
                .skip(2)
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            resonator(&a, raw, &given)
        }
        Some(Command::MeshInfo(a)) => mesh_info(&a),
        Some(Command::Devices) => devices(),
        Some(Command::Bench(a)) => bench(&a),
        Some(Command::Compare(a)) => compare(&a),
        Some(Command::Report(a)) => {
            let rows = crate::report::perf::read_rows(&a.files)?;
            let files = crate::report::perf::write_report(&rows, &a.out)?;
            outln!(
                "{} rows; wrote {}",
                rows.len(),
                crate::report::path_list(&files)
            );
            Ok(())
        }
        None => {
            let a = Cli::parse_from(["dgatd", "resonator"]);
            match a.command {
                Some(Command::Resonator(a)) => resonator(&a, vec![], &[]),
                _ => unreachable!("the resonator subcommand parses"),
            }
        }
    }
}
