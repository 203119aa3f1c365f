//! Dielectric spheres in free space against Mie theory (issue 15): the lowest TE (magnetic
//! dipole) and TM (electric dipole) resonances, frequency and radiation Q, with an absorbing
//! layer or the first-order absorbing boundary on the outside.
//!
//! Each run is the resonator pipeline on a generated ball (`ball = "N:sphere=a,air=R,..."`):
//! a sphere of radius a = 0.1 m and permittivity `eps_r`, air out to `--air`, then either a
//! graded absorbing layer out to `--outer` (`--boundary layer`), a perfectly matched layer
//! out to `--outer` (`--boundary pml`) or the `abc` condition on
//! the sphere of radius `--air` (`--boundary abc`). A y-directed dipole off the centre
//! excites both modes (`--excite both`), or a z-directed dipole at 2 mm from the centre
//! only the TM (electric-dipole) ones (`--excite tm`), or a z-directed current filling the
//! sphere's first shell (`--excite tm-ball`, `source_radius`: symmetric about the centre,
//! so without the single tet's magnetic moments); four probes inside and near the sphere
//! record E (six with `tm-ball`, two of them within 2 cm of the centre). The measured mode is the line of the extraction that
//! `spectrum::mie::nearest_line` picks for each Mie root (Q within a factor 3, frequency
//! within the larger of 5% and the half-width); NaN where there is none. One CSV row per
//! (run, mode); `run_s` is the whole job (a ladder's every level), `setup_s` and `loop_s`
//! the set-up and the time loop of its (finest) run.
//!
//! `cargo run --release --example mie_sphere -- --eps 10,40 --n 4,6 --csv out.csv`

use clap::Parser;
use dgatd::Config;
use dgatd::solver::Origin;
use dgatd::spectrum::{MiePol, mie_resonance as resonance, nearest_line};
use std::io::Write;

#[derive(Parser)]
struct Args {
    /// Sphere permittivities.
    #[arg(long, value_delimiter = ',', default_value = "10,40")]
    eps: Vec<f64>,
    /// Shells across the sphere's radius (mesh resolution).
    #[arg(long, value_delimiter = ',', default_value = "4")]
    n: Vec<usize>,
    /// layer, pml or abc.
    #[arg(long, default_value = "layer")]
    boundary: String,
    /// Outer radius of the air (m): the layer's inner surface, or the abc sphere.
    #[arg(long, default_value_t = 0.25)]
    air: f64,
    /// Outer radius of the layer (m).
    #[arg(long, default_value_t = 0.45)]
    outer: f64,
    /// Radial step of the air and the layer, in units of the sphere's (`@F` of the ball key).
    #[arg(long, default_value_t = 1.0)]
    step: f64,
    /// Record length after the pulse, in decay times (1/e of the amplitude) of the slower
    /// of the modes the source excites (both with `--excite both`, TM₁₁ alone with `tm` and
    /// `tm-ball`). With an open boundary a longer record adds only the absorber's echo, which
    /// can hide a broad line (README of `results/open`, "The layer's echo and the record
    /// length").
    #[arg(long, default_value_t = 4.0)]
    decays: f64,
    /// Record length (s), instead of the one `--decays` sets.
    #[arg(long)]
    time: Option<f64>,
    /// Which modes the source excites: `both` (a y-directed dipole off the centre, the
    /// default) or `tm` (a z-directed dipole 2 mm from the centre: by symmetry it couples to
    /// the electric-dipole (TM, l = 1) modes and, to O(k d), to nothing else, so the TM line
    /// is not mixed with TE₁₁ in the record; TE rows are then NaN), or `tm-ball` (a
    /// z-directed current filling the first shell around the centre, `source_radius` = the
    /// radius over `--n`: the ball of tets is symmetric about the centre, so unlike the one
    /// tet of `tm` (whose centroid is a quarter cell off) it has no magnetic dipole or
    /// quadrupole moment and leaves TE₁₁ and TE₂₁ (651.8 MHz, Q 32 at ε_r = 10, next to
    /// TM₁₁) out of the record; TE rows are NaN).
    #[arg(long, value_enum, default_value_t = Excite::Both)]
    excite: Excite,
    /// Peak frequency of the source pulse (Hz); default the mean of the two Mie frequencies.
    /// A higher one ends the pulse sooner (its end, after which the record is analysed, is
    /// `12.5 / (2π f_peak)`), which leaves more of a broad line's decay to fit.
    #[arg(long)]
    f_peak: Option<f64>,
    /// Run each job as a refinement ladder of this many levels above the base mesh
    /// (`dgatd resonator --converge N`; with `--out`, each job's `convergence.csv`): the row's `f_conv_hz`, `q_conv` are the Richardson-extrapolated
    /// frequency and Q of the finest level's line (its `f_hz`, `q` that level's own).
    #[arg(long, default_value_t = 0)]
    converge: u32,
    /// auto, cpu or opencl.
    #[arg(long, default_value = "auto")]
    backend: String,
    #[arg(long, default_value = "f64")]
    precision: String,
    /// Symmetry planes through the sphere's centre (`dgatd resonator --symmetry`), e.g.
    /// `x=pec,y=pmc`: the quarter whose class holds one member of each of TE₁₁ (the
    /// magnetic dipole along y) and TM₁₁ (the electric dipole along x). The source and the
    /// probes are mirrored into the part kept, and the source current takes the generic
    /// direction (0.6, 0.7, 0.4), which drives the modes of every class.
    #[arg(long)]
    symmetry: Option<dgatd::solver::SymmetrySpec>,
    /// Volume groups refined 1:8 once before the run and each `--converge` level
    /// (`dgatd resonator --refine-region`), e.g. `sphere`: the sphere resolved without
    /// refining the air and the absorber.
    #[arg(long, value_delimiter = ',')]
    refine_region: Vec<String>,
    /// A Gmsh mesh instead of the generated ball: volume groups `sphere`, `air` and `layer`
    /// or `pml` (as `--boundary`; with `abc`, the surface group `outer`), the sphere of
    /// radius `--radius` centred at the origin (e.g. `results/symmetry/gmsh_sphere.py`).
    /// `--n` then only labels the rows (use 0).
    #[arg(long)]
    mesh: Option<std::path::PathBuf>,
    /// The sphere's radius (m); the source and probe points scale with it.
    #[arg(long, default_value_t = A0)]
    radius: f64,
    /// CSV output (appended, with a header when new).
    #[arg(long)]
    csv: Option<std::path::PathBuf>,
    /// Also write each run's resonator outputs (probe record, spectrum, modes) into
    /// `DIR/eps<ε>_n<n>/`.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

/// The source of `--excite`.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
enum Excite {
    Both,
    Tm,
    TmBall,
}

/// The generated sphere's radius (m); the source and probe points are given for it.
const A0: f64 = 0.1;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let args = Args::parse();
    #[allow(non_snake_case)]
    let A = args.radius;
    if args.mesh.is_some() && args.excite == Excite::TmBall {
        return Err("--excite tm-ball needs the generated ball (its first shell)".into());
    }
    let header = "eps_r,n,step,boundary,r_air_m,r_outer_m,tets,dt_s,steps,mode,f_mie_hz,q_mie,f_hz,q,f_err_pct,q_err_pct,backend,precision,run_s,f_conv_hz,q_conv,f_conv_err_pct,q_conv_err_pct,setup_s,loop_s,symmetry,refine_region";
    let mut out: Box<dyn Write> = match &args.csv {
        Some(p) => {
            let new = !p.exists();
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)?;
            if new {
                writeln!(f, "{header}")?;
            }
            Box::new(f)
        }
        None => {
            println!("{header}");
            Box::new(std::io::stdout())
        }
    };
    for &eps in &args.eps {
        let modes = [
            resonance(MiePol::Te, 1, 1, eps, A).ok_or("no TE root")?,
            resonance(MiePol::Tm, 1, 1, eps, A).ok_or("no TM root")?,
        ];
        // the decay time of the slower excited mode: a TM-only source leaves TE₁₁ out
        let tau = modes
            .iter()
            .filter(|m| args.excite == Excite::Both || m.pol == MiePol::Tm)
            .map(|m| m.q / (std::f64::consts::PI * m.f_hz))
            .fold(0.0, f64::max);
        let f_peak = args.f_peak.unwrap_or(0.5 * (modes[0].f_hz + modes[1].f_hz));
        for &n in &args.n {
            let ball = match args.boundary.as_str() {
                "layer" => format!(
                    "{n}:sphere={A},air={}@{s},layer={}@{s}",
                    args.air,
                    args.outer,
                    s = args.step
                ),
                "pml" => format!(
                    "{n}:sphere={A},air={}@{s},pml={}@{s}",
                    args.air,
                    args.outer,
                    s = args.step
                ),
                "abc" => format!("{n}:sphere={A},air={}@{}", args.air, args.step),
                b => return Err(format!("--boundary {b}: expected layer, pml or abc").into()),
            };
            let tail = match args.boundary.as_str() {
                "layer" => "[materials.layer]\nabsorbing = true\n",
                "pml" => "[materials.pml]\npml = true\n",
                _ => "[boundaries.outer]\nkind = \"abc\"\n",
            };
            // generic points (off node planes and cell diagonals), see `excite`
            let (source, probes) = match args.excite {
                Excite::Both => (
                    "source = [0.043, 0.011, 0.017]\nsource_dir = [0.0, 1.0, 0.0]".to_string(),
                    "probe = [[0.031, -0.022, 0.013], [-0.047, 0.021, -0.019], [0.012, 0.052, 0.037], [0.151, 0.062, -0.043]]",
                ),
                Excite::Tm => (
                    "source = [0.0013, -0.0007, 0.0014]\nsource_dir = [0.0, 0.0, 1.0]".to_string(),
                    "probe = [[0.0031, -0.0022, 0.0413], [-0.0047, 0.0021, -0.0519], [0.0512, 0.0052, 0.0037], [0.0061, 0.0072, 0.1531]]",
                ),
                // the first shell's nodes lie on the sphere of radius A / n
                Excite::TmBall => (
                    format!(
                        "source = [0.0, 0.0, 0.0]\nsource_dir = [0.0, 0.0, 1.0]\nsource_radius = {:e}",
                        A / n as f64
                    ),
                    "probe = [[0.0031, -0.0022, 0.0413], [-0.0047, 0.0021, -0.0519], [0.0512, 0.0052, 0.0037], [0.0061, 0.0072, 0.1531], [0.0083, -0.0061, 0.0137], [-0.0121, 0.0093, -0.0072]]",
                ),
            };
            // with symmetry planes: the points mirrored into the part kept (x, y, z > 0)
            let (source, probes, sym) = match &args.symmetry {
                None => (source, probes.to_string(), String::new()),
                Some(s) => (
                    mirrored(&source, s).replace(
                        "source_dir = [0.0, 1.0, 0.0]",
                        "source_dir = [0.6, 0.7, 0.4]",
                    ),
                    mirrored(probes, s),
                    format!("symmetry = \"{s}\"\n"),
                ),
            };
            // the points are given for the radius A0
            let (source, probes) = (scaled(&source, A / A0), scaled(&probes, A / A0));
            let ball = match &args.mesh {
                Some(m) => format!("mesh = \"{}\"", m.display()),
                None => format!("ball = \"{ball}\""),
            };
            let region = match args.refine_region.as_slice() {
                [] => String::new(),
                g => format!("refine_region = {g:?}\n"),
            };
            let text = format!(
                "{sym}{region}{ball}\ntime = {time:e}\n{source}\n{probes}\n\
                 f_peak = {f_peak:e}\nfmax = {fmax:e}\nmin_q = 1\nbackend = \"{}\"\nprecision = \"{}\"\n\
                 [materials.sphere]\neps_r = {eps}\n{tail}",
                args.backend,
                args.precision,
                time = args.time.unwrap_or(3.0 / f_peak + args.decays * tau),
                fmax = 2.0 * modes[1].f_hz,
            );
            let cfg = Config::parse(&Origin {
                path: "mie_sphere".into(),
                text,
            })?;
            let t0 = std::time::Instant::now();
            let (r, levels) = if args.converge > 0 {
                // the ladder of `dgatd resonator --converge N` (solver::ladder)
                let plan_at = |level: u32| {
                    let mut c = cfg.clone();
                    c.refine = level;
                    dgatd::solver::Plan::new(&c, None)
                };
                let l = dgatd::solver::ladder(
                    args.converge,
                    &plan_at,
                    0,
                    &mut dgatd::solver::RunOptions::default(),
                    &mut |i, level| {
                        eprintln!("eps {eps}, {n} shells: level {i} (--refine {level})")
                    },
                    &mut |_, _| {},
                )?;
                (l.finest, Some(l.levels))
            } else {
                (dgatd::run(&cfg, &mut |_, _| {})?, None)
            };
            let run_s = t0.elapsed().as_secs_f64();
            if let Some(dir) = &args.out {
                let dir = dir.join(format!("eps{eps}_n{n}"));
                dgatd::report::write_resonator(&dir, &r)?;
                if let Some(levels) = &levels {
                    dgatd::report::write_convergence(&dir, levels, &r)?;
                }
            }
            let lines = r.lines_with_q();
            for m in &modes {
                let (f, q) = match (args.excite, m.pol) {
                    (Excite::Tm | Excite::TmBall, MiePol::Te) => (f64::NAN, f64::NAN),
                    _ => nearest_line(&lines, m).unwrap_or((f64::NAN, f64::NAN)),
                };
                // the ladder's extrapolation of that line (the peak it came from)
                let (fc, qc) = r
                    .peaks()
                    .iter()
                    .position(|p| p.q.is_some_and(|pq| pq == q && r.corrected(p) == f))
                    .map_or((f64::NAN, f64::NAN), |i| {
                        let fx = r.extrapolated.get(i).and_then(|e| e.as_ref());
                        let qx = r.tracks.get(i).and_then(|t| t.q.as_ref());
                        (
                            fx.map_or(f64::NAN, |e| e.f_hz),
                            qx.map_or(f64::NAN, |e| e.f_hz),
                        )
                    });
                writeln!(
                    out,
                    "{eps},{n},{},{},{},{},{},{:.6e},{},{},{:.6e},{:.4},{:.6e},{:.4},{:.3},{:.2},{},{},{run_s:.1},{fc:.6e},{qc:.4},{:.3},{:.2},{:.2},{:.2},{},{}",
                    args.step,
                    args.boundary,
                    args.air,
                    if args.boundary != "abc" {
                        args.outer
                    } else {
                        args.air
                    },
                    r.mesh.n_tets(),
                    r.dt_s,
                    r.record.steps,
                    m.name(),
                    m.f_hz,
                    m.q,
                    f,
                    q,
                    100.0 * (f / m.f_hz - 1.0),
                    100.0 * (q / m.q - 1.0),
                    r.backend.replace(',', ";"),
                    args.precision,
                    100.0 * (fc / m.f_hz - 1.0),
                    100.0 * (qc / m.q - 1.0),
                    r.setup_s,
                    r.record.wall_s,
                    args.symmetry
                        .map(|s| s.to_string().replace(',', ";"))
                        .unwrap_or_default(),
                    args.refine_region.join(";"),
                )?;
                out.flush()?;
            }
        }
    }
    Ok(())
}

/// The points of the `source = [..]` and `probe = [[..], ..]` lines with the coordinate of
/// each symmetry plane's axis made non-negative (the planes pass through the centre).
fn mirrored(text: &str, s: &dgatd::solver::SymmetrySpec) -> String {
    map_points(text, |a, v| if s.walls[a].is_some() { v.abs() } else { v })
}

/// The `source = [..]` and `probe = [[..], ..]` lines of `text` with every coordinate `v`
/// of axis `a` replaced by `f(a, v)`; other lines as they are.
fn map_points(text: &str, f: impl Fn(usize, f64) -> f64) -> String {
    text.lines()
        .map(|line| {
            let Some((key, rest)) = line.split_once(" = ") else {
                return line.to_string();
            };
            if key != "source" && key != "probe" {
                return line.to_string();
            }
            // every point `[a, b, c]` of the line, innermost brackets
            let mut out = String::new();
            let mut rest = rest;
            while let Some(i) = rest.find(|c: char| c == '-' || c.is_ascii_digit()) {
                let j = rest[i..].find(']').map_or(rest.len(), |j| i + j);
                out.push_str(&rest[..i]);
                let coords: Vec<String> = rest[i..j]
                    .split(',')
                    .enumerate()
                    .map(|(a, c)| format!("{:e}", f(a, c.trim().parse().unwrap_or(f64::NAN))))
                    .collect();
                out.push_str(&coords.join(", "));
                rest = &rest[j..];
            }
            out.push_str(rest);
            format!("{key} = {out}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The points of the `source = [..]` and `probe = [[..], ..]` lines scaled by `k`.
fn scaled(text: &str, k: f64) -> String {
    map_points(text, |_, v| v * k)
}
