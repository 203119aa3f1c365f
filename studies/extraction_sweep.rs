//! The extraction sweep of results/extraction/: meshes x record lengths x backends, each
//! record analysed by `spectrum::extract` (this project), by the previous per-signal pencil
//! (`spectrum::harminv` + `cluster`, as the resonator pipeline called it) and by the
//! `harminv` program (filter diagonalization), and scored against the eigenvalues of the
//! discrete operator K (dense, with the amplitude each probe component sees).
//!
//! Run: `cargo run --release --example extraction_sweep -- [--quick] [--extract-only] [--larger] [--out DIR]`
//! (writes DIR/sweep.csv, default results/extraction). `--quick` skips the 200 000-step
//! records and the coarse cylinder. `--larger` (with `--extract-only`) takes meshes of 1.5k to
//! 4k tets instead (random boxes, cylinders and balls of twice the cells per side, seeds
//! 51-53), each in the band the resonator job defaults to for it
//! (`solver::defaults::band`), and scores the records of 1 000 to 20 000 steps against
//! the extraction of the same run at [`LONG`] steps: dense K is out of reach at that size,
//! and on the small meshes that extraction matches it to 1e-13 (results/extraction/). OpenCL rows use the first device (PoCL on a CPU):
//! set POCL_CACHE_DIR; they are skipped when no device opens.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/spectrum/oracle/mod.rs"]
mod oracle;

use dgatd::spectrum::Peak;
// (Peak: the lines of both pencils)
use oracle::*;
use std::io::Write;
use std::time::Instant;

/// Amplitude floor stated for the sweep (relative to the strongest line).
const FLOOR: f64 = 1e-4;
/// Steps of the reference record of `--larger`.
const LONG: usize = 40000;

struct Row {
    mesh: String,
    tets: usize,
    free: usize,
    fmin: f64,
    fmax: f64,
    backend: &'static str,
    steps: usize,
    method: &'static str,
    score: Score,
    reported: usize,
    seconds: f64,
    threads_same: String,
    perturbed_same: String,
    /// `extract` only: its unresolved intervals, and the missed lines outside all of them.
    unresolved: Option<Vec<dgatd::spectrum::Unresolved>>,
    /// What the lines are scored against (`dense-K`, or `long-record` with `--larger`).
    reference: &'static str,
}

fn header() -> &'static str {
    "mesh,tets,free_half_edges,fmin_hz,fmax_hz,backend,steps,samples,method,reference,expected,found,missed,spurious,max_rel_err,reported,extract_s,threads_identical,perturbed_same,missed_hz,spurious_hz,unresolved_intervals,missed_unflagged"
}

fn line(r: &Row, start: usize) -> String {
    let list = |v: &[f64]| {
        v.iter()
            .map(|f| format!("{f:.9e}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (intervals, unflagged) = match &r.unresolved {
        Some(u) => (
            u.len().to_string(),
            missed_unflagged(&r.score.missed, u).len().to_string(),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        "{},{},{},{:.6e},{:.6e},{},{},{},{},{},{},{},{},{},{:.2e},{},{:.3},{},{},{},{},{intervals},{unflagged}",
        r.mesh,
        r.tets,
        r.free,
        r.fmin,
        r.fmax,
        r.backend,
        r.steps,
        r.steps - start,
        r.method,
        r.reference,
        r.score.expected,
        r.score.found,
        r.score.missed.len(),
        r.score.spurious.len(),
        r.score.max_rel_err,
        r.reported,
        r.seconds,
        r.threads_same,
        r.perturbed_same,
        list(&r.score.missed),
        list(&r.score.spurious),
    )
}

type NewOut = (
    Vec<Peak>,
    f64,
    String,
    String,
    Vec<dgatd::spectrum::Unresolved>,
);

fn new_method(signals: &[Vec<f64>], dt_s: f64, rig: &Rig) -> NewOut {
    let mut s = dgatd::spectrum::ExtractSettings::band(rig.fmin_hz, rig.fmax_hz);
    s.amplitude_floor = FLOOR;
    s.min_q = 1e4;
    let pool = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let t = Instant::now();
    let e = pool(2)
        .install(|| dgatd::spectrum::extract(signals, dt_s, &s))
        .unwrap();
    let a = e.peaks;
    let secs = t.elapsed().as_secs_f64();
    let b = pool(1)
        .install(|| dgatd::spectrum::resonances(signals, dt_s, &s))
        .unwrap();
    let mut r = dgatd::internal::Rng::new(7);
    let pert: Vec<Vec<f64>> = signals
        .iter()
        .map(|x| x.iter().map(|v| v * (1.0 + 1e-14 * r.sym())).collect())
        .collect();
    let c = pool(2)
        .install(|| dgatd::spectrum::resonances(&pert, dt_s, &s))
        .unwrap();
    let same = a.len() == c.len()
        && a.iter()
            .zip(&c)
            .all(|(p, q)| (p.f_hz - q.f_hz).abs() <= 1e-10 * p.f_hz);
    let same_threads = (a == b).to_string();
    (a, secs, same_threads, same.to_string(), e.unresolved)
}

fn old_method(signals: &[Vec<f64>], dt_s: f64, rig: &Rig) -> (Vec<Peak>, f64) {
    let t = Instant::now();
    let p = dgatd::spectrum::HarminvParams::band(rig.fmin_hz, rig.fmax_hz);
    let per: Vec<Vec<dgatd::spectrum::HMode>> = signals
        .iter()
        .map(|s| dgatd::spectrum::harminv(s, dt_s, &p))
        .collect();
    let out = dgatd::spectrum::cluster_harminv(&per, 1e-5, 1e4, signals[0].len() as f64 * dt_s);
    (out, t.elapsed().as_secs_f64())
}

/// The harminv program on every signal (`-f 300` basis functions over the band, its default
/// screening), keeping lines in the band with an error estimate below 1e-4, |Q| >= 100 and
/// an amplitude at least 1e-4 of the strongest in that signal. Scored per signal (harminv
/// fits each signal alone): a reference line counts as found when some signal found it
/// within max(10 x harminv's error, 1e-5); each unmatched line of a signal is spurious.
fn program(signals: &[Vec<f64>], dt_s: f64, rig: &Rig, refs: &[(f64, f64)]) -> (Score, usize, f64) {
    let t = Instant::now();
    let top = refs.iter().map(|r| r.1).fold(0.0, f64::max);
    let mut found = vec![false; refs.len()];
    let mut sc = Score::default();
    let mut reported = 0;
    for s in signals {
        let lines = harminv(s, dt_s, rig.fmin_hz, rig.fmax_hz, 0.0, 300);
        let amax = lines.iter().map(|l| l.amplitude).fold(0.0, f64::max);
        for l in lines.iter().filter(|l| {
            l.f_hz >= rig.fmin_hz
                && l.f_hz < rig.fmax_hz
                && l.err_hz <= 1e-4 * l.f_hz
                && std::f64::consts::PI * l.f_hz >= 100.0 * l.decay_per_s.abs()
                && l.amplitude >= FLOOR * amax
        }) {
            reported += 1;
            let tol = (10.0 * l.err_hz).max(1e-5 * l.f_hz);
            let best = (0..refs.len())
                .filter(|&i| (refs[i].0 - l.f_hz).abs() <= tol)
                .min_by(|&i, &j| {
                    (refs[i].0 - l.f_hz)
                        .abs()
                        .total_cmp(&(refs[j].0 - l.f_hz).abs())
                });
            match best {
                Some(i) => {
                    found[i] = true;
                    sc.max_rel_err = sc.max_rel_err.max((refs[i].0 - l.f_hz).abs() / refs[i].0);
                }
                None => sc.spurious.push(l.f_hz),
            }
        }
    }
    for (i, r) in refs.iter().enumerate() {
        if r.1 >= 2.0 * FLOOR * top {
            sc.expected += 1;
            if found[i] {
                sc.found += 1;
            } else {
                sc.missed.push(r.0);
            }
        }
    }
    (sc, reported, t.elapsed().as_secs_f64())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // only this project's extraction (no old pencil, no harminv program): the unresolved
    // columns of results/extraction/sweep_unresolved.csv
    let extract_only = args.iter().any(|a| a == "--extract-only");
    let out = args
        .iter()
        .position(|a| a == "--out")
        .map(|i| args[i + 1].clone())
        .unwrap_or("results/extraction".into());
    std::fs::create_dir_all(&out)?;
    let path = format!("{out}/sweep.csv");
    let mut csv = std::fs::File::create(&path)?;
    writeln!(csv, "{}", header())?;
    let have_harminv = !extract_only && harminv_available();
    if !have_harminv && !extract_only {
        eprintln!("*** the harminv program is missing: its rows are skipped ***");
    }
    let dev = dgatd::backend::opencl::select_device(None)
        .and_then(dgatd::backend::opencl::ClDevice::open)
        .map_err(|e| eprintln!("*** no OpenCL device ({e}): OpenCL rows skipped ***"))
        .ok();
    let larger = args.iter().any(|a| a == "--larger");
    if larger && !extract_only {
        return Err("--larger scores this project's extraction only: add --extract-only".into());
    }
    let mut meshes: Vec<(String, dgatd::mesh::Mesh)> = Vec::new();
    if larger {
        for seed in [51u64, 52, 53] {
            meshes.push((format!("box2-{seed}"), random_box_n(seed, 2)));
            meshes.push((format!("cylinder2-{seed}"), random_cylinder_n(seed, 2).0));
            meshes.push((format!("ball2-{seed}"), random_ball_n(seed, 2).0));
        }
    } else {
        for seed in [11u64, 12, 13] {
            meshes.push((format!("box-{seed}"), random_box(seed)));
            meshes.push((format!("cylinder-{seed}"), random_cylinder(seed).0));
            meshes.push((format!("ball-{seed}"), random_ball(seed).0));
        }
    }
    if !quick && !larger {
        let coarse = dgatd::mesh::parse_gmsh(dgatd::mesh::bundled("coarse")?, "coarse")?;
        meshes.push(("coarse-cylinder".into(), coarse));
    }
    let lengths: Vec<usize> = if quick || larger {
        vec![1000, 2000, 5000, 20000]
    } else {
        vec![1000, 2000, 5000, 20000, 200000]
    };
    for (name, mesh) in meshes {
        let rig = if larger {
            Rig::new(mesh, 5).with_default_band()
        } else {
            Rig::new(mesh, 5)
        };
        let longest = *lengths.last().unwrap();
        let t = Instant::now();
        let reference = rig.run(if larger { LONG } else { longest }, false);
        eprintln!(
            "{name}: {} tets, {} free half-edges, run {:.1}s",
            rig.mesh.n_tets(),
            rig.n_free(),
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        let refs = if larger {
            let mut s = dgatd::spectrum::ExtractSettings::band(rig.fmin_hz, rig.fmax_hz);
            s.amplitude_floor = FLOOR;
            s.min_q = 1e4;
            long_record_references(&rig, &reference, &s)
        } else {
            Truth::new(&rig, &reference).references(&rig)
        };
        eprintln!(
            "  reference {:.1}s: {} lines",
            t.elapsed().as_secs_f64(),
            refs.len()
        );
        let mut runs: Vec<(&'static str, RunOut)> = vec![("cpu-f64", reference)];
        runs.push(("cpu-f32", rig.run(longest.min(20000), true)));
        if let Some(d) = &dev
            && rig.mesh.n_tets() < 1000
            && !larger
        {
            match rig.run_opencl(20000, d.clone()) {
                Ok(r) => runs.push(("opencl-f64", r)),
                Err(e) => eprintln!("  OpenCL run failed: {e}"),
            }
        }
        for (backend, run) in &runs {
            // f32 operators move the eigenvalues by ~1e-7 relative
            let tol: f64 = if backend.ends_with("f32") { 2e-6 } else { 1e-9 };
            for &steps in &lengths {
                let Some(n) = steps.checked_sub(rig.start) else {
                    continue;
                };
                if n > run.signals[0].len() {
                    continue;
                }
                let sig: Vec<Vec<f64>> = run.signals.iter().map(|s| s[..n].to_vec()).collect();
                let mut rows = Vec::new();
                let (p, secs, th, pe, unres) = new_method(&sig, rig.dt_s, &rig);
                rows.push((
                    "extract",
                    score(&p, &refs, FLOOR, tol),
                    p.len(),
                    secs,
                    th,
                    pe,
                    Some(unres),
                ));
                if steps <= 5000 && !extract_only {
                    let (p, secs) = old_method(&sig, rig.dt_s, &rig);
                    let sc = score(&p, &refs, FLOOR, tol);
                    rows.push((
                        "old-pencil",
                        sc,
                        p.len(),
                        secs,
                        String::new(),
                        String::new(),
                        None,
                    ));
                }
                if have_harminv {
                    let (sc, n, secs) = program(&sig, rig.dt_s, &rig, &refs);
                    rows.push((
                        "harminv-program",
                        sc,
                        n,
                        secs,
                        String::new(),
                        String::new(),
                        None,
                    ));
                }
                for (method, score, reported, seconds, threads_same, perturbed_same, unresolved) in
                    rows
                {
                    let r = Row {
                        mesh: name.clone(),
                        tets: rig.mesh.n_tets(),
                        free: rig.n_free(),
                        fmin: rig.fmin_hz,
                        fmax: rig.fmax_hz,
                        backend,
                        steps,
                        method,
                        score,
                        reported,
                        seconds,
                        threads_same,
                        perturbed_same,
                        unresolved,
                        reference: if larger { "long-record" } else { "dense-K" },
                    };
                    eprintln!(
                        "  {backend} {steps:>6} {method:<16} expected {:>3} found {:>3} missed {:>2} spurious {:>2} err {:.1e} {:.2}s",
                        r.score.expected,
                        r.score.found,
                        r.score.missed.len(),
                        r.score.spurious.len(),
                        r.score.max_rel_err,
                        seconds
                    );
                    writeln!(csv, "{}", line(&r, rig.start))?;
                    csv.flush()?;
                }
            }
        }
    }
    eprintln!("wrote {path}");
    Ok(())
}
