//! Partitioned runs of an open, lossy, dispersive problem (issue 45) against the
//! single-process CPU run: first-order absorbing walls (`abc`), a graded absorbing layer (σ
//! and the matched σ*), a conducting region, and Lorentz, Drude and Debye materials (one of
//! them conducting too, so some vertices couple σ and poles), on a jittered box with seeded
//! materials.
//!
//! Bound: the partitioned stepper runs the single-process CPU kernels (reference layouts) on
//! each rank's owned entities, with the same operators (the part's rows equal the global
//! rows bit for bit, checked here), in the same order: in f64 the probe records, the final
//! state and the poles' states are equal **bit for bit** (0 differing values; in f32 too). Against the
//! default lean kernels of one process (what `dgatd resonator` runs) the record agrees to
//! round-off (measured and bounded at 1e-12 relative to its peak). The energy (with the
//! poles' energy) is a global sum added in another order: 1e-11 relative.
//!
//! Run: `cargo test --release --test partition open_lossy::`.
#![cfg(feature = "partition")]

use crate::common::jittered_box;
use dgatd::V3;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::{CpuKernels, CpuStepper};
use dgatd::dga::{Dga, DualForm, Operators, Probe, Source, surface_conductance};
use dgatd::mesh::{Mesh, Topology};
use dgatd::partition::{
    Comm, HaloLists, LocalComm, Part, PartBuilder, PartStepper, Partition, Scheme, Stats,
};
use dgatd::problem::{Boundary, BoundaryKind, Media, Pole, Walls, Waveform};
use dgatd::solver::{self, Record};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The problem: mesh, topology, media, walls' fixed edges and surface entries, operators.
pub struct Open {
    pub mesh: Mesh,
    pub topo: Topology,
    pub media: Media,
    pub fixed: Vec<bool>,
    pub surface: Vec<dgatd::dga::SurfaceEntry>,
    pub dga: Dga,
}

fn centroid(m: &Mesh, n: usize) -> V3 {
    let x = m.tet_x(n);
    std::array::from_fn(|c| x.iter().map(|p| p[c]).sum::<f64>() / 4.0)
}

/// The jittered box `[0,1]x[0,0.8]x[0,0.6]` (seed `seed`) with absorbing walls at x = 0
/// and y = 0, a PMC wall at z = 0.6, PEC elsewhere; a graded absorbing layer beyond
/// x = 0.8; a Lorentz block, a conducting Drude block, a Debye block and a conducting
/// block; random ε, μ elsewhere.
pub fn open_problem(seed: u64) -> Open {
    open_problem_with(seed, true)
}

/// [`open_problem`], or without its dispersive materials (`dispersive` false: the same
/// regions, their ε∞ and σ kept, no poles): losses and absorbing walls only.
pub fn open_problem_with(seed: u64, dispersive: bool) -> Open {
    let mesh = jittered_box([8, 6, 5], seed, 0.3);
    let topo = Topology::build(&mesh).unwrap();
    let nt = mesh.n_tets();
    let mut rng = dgatd::internal::Rng::new(seed ^ 0x5a5a);
    let mut media = Media::lossless(
        (0..nt).map(|_| 1.0 + 2.0 * rng.uniform()).collect(),
        (0..nt).map(|_| 1.0 + 0.5 * rng.uniform()).collect(),
    );
    media.sigma = vec![0.0; nt];
    media.disp = vec![0; nt];
    media.poles = vec![
        (
            "lorentz".into(),
            vec![Pole::Lorentz {
                delta_eps: 1.5,
                f_0: 250e6,
                delta: 3e7,
            }],
        ),
        (
            "drude".into(),
            vec![Pole::Drude {
                f_p: 300e6,
                gamma: 1e8,
            }],
        ),
        (
            "debye".into(),
            vec![
                Pole::Debye {
                    delta_eps: 2.0,
                    tau: 1e-9,
                },
                Pole::Lorentz {
                    delta_eps: 0.5,
                    f_0: 400e6,
                    delta: 1e7,
                },
            ],
        ),
    ];
    let inside = |c: V3, lo: V3, hi: V3| (0..3).all(|k| c[k] >= lo[k] && c[k] < hi[k]);
    for n in 0..nt {
        let c = centroid(&mesh, n);
        if inside(c, [0.15, 0.1, 0.1], [0.45, 0.4, 0.35]) {
            media.disp[n] = 1;
            media.eps[n] = 2.0;
            media.mu[n] = 1.0;
        } else if inside(c, [0.45, 0.4, 0.2], [0.7, 0.75, 0.5]) {
            media.disp[n] = 2;
            media.eps[n] = 1.0;
            media.mu[n] = 1.0;
            media.sigma[n] = 0.8;
        } else if inside(c, [0.2, 0.45, 0.3], [0.45, 0.75, 0.6]) {
            media.disp[n] = 3;
            media.eps[n] = 1.5;
            media.mu[n] = 1.0;
        } else if inside(c, [0.5, 0.05, 0.05], [0.75, 0.35, 0.3]) {
            media.sigma[n] = 1.5;
        }
    }
    if !dispersive {
        media.disp = vec![0; nt];
        media.poles.clear();
    }
    let layer: Vec<bool> = (0..nt).map(|n| centroid(&mesh, n)[0] > 0.8).collect();
    media.add_layer(&mesh, &layer, 3.0, 1e-4, "layer").unwrap();
    let mut named = mesh.clone();
    let b = dgatd::mesh::box_mesh([8, 6, 5], [1.0, 0.8, 0.6]);
    named.surfaces = b.surfaces;
    named.physical_names = b.physical_names;
    let walls: BTreeMap<String, Boundary> = [
        ("xmin", BoundaryKind::Abc),
        ("ymin", BoundaryKind::Abc),
        ("zmax", BoundaryKind::Pmc),
    ]
    .iter()
    .map(|(n, k)| (n.to_string(), Boundary::of(*k)))
    .collect();
    let w = Walls::resolve(&named, &topo, &walls).unwrap();
    let fixed = w.fixed_edges(&topo);
    let (faces, y) = w.absorbing(&topo, &media);
    assert!(!faces.is_empty());
    let surface = surface_conductance(&mesh, &topo, &faces, &y);
    let mut dga = Dga::assemble_with(&mesh, &topo, &media, &fixed, false).unwrap();
    dga.add_surface(&surface);
    assert!(dga.msig.is_some() && dga.mag.is_some() && dga.disp.is_some() == dispersive);
    Open {
        mesh,
        topo,
        media,
        fixed,
        surface,
        dga,
    }
}

pub(crate) fn at(mesh: &Mesh, frac: V3) -> V3 {
    let (lo, hi) = mesh.bbox();
    std::array::from_fn(|c| lo[c] + frac[c] * (hi[c] - lo[c]))
}

/// The parts of `np` ranks, each sent through its message (as to an MPI rank).
pub fn parts(o: &Open, np: usize, scheme: Scheme) -> Vec<Part> {
    let p = Partition::with(scheme, &o.mesh, &o.topo, np).unwrap();
    let h = HaloLists::build(&o.mesh, &o.topo, &o.fixed, &p);
    let st = Stats::compute(&o.mesh, &o.topo, &o.fixed, &p, &h);
    assert!(st.cut_faces > 0);
    let b = PartBuilder::new(&o.mesh, &o.topo, &o.media, &o.fixed, &p, &h).with_surface(&o.surface);
    (0..np)
        .map(|r| {
            let w = b.build(r).unwrap().to_words();
            let q = Part::from_words(&w).unwrap();
            assert_eq!(q.to_words(), w, "rank {r}: the message round-trips");
            q
        })
        .collect()
}

pub(crate) const WAVE_HZ: f64 = 300e6;

/// A one-process run's record, final state and auxiliary (poles') state.
pub(crate) struct Single {
    pub rec: Record,
    pub state: (Vec<f64>, Vec<f64>),
    pub aux: Vec<f64>,
}

/// The one-process CPU run of `o` in precision `T` with the kernels `k`.
pub(crate) fn single<T: dgatd::Real>(
    o: &Open,
    src: (V3, V3),
    probes: &[V3],
    dt: f64,
    steps: usize,
    k: CpuKernels,
) -> Single {
    let d = Arc::new(o.dga.clone());
    let ops = Arc::new(Operators::<T>::new(&d, dt, false));
    let s = Source::new(&o.mesh, &o.topo, &d, src.0, src.1).unwrap();
    let wave = Waveform::gaussian_derivative(WAVE_HZ);
    let probes: Vec<Probe> = probes
        .iter()
        .map(|&p| Probe::new(&o.mesh, &o.topo, p).unwrap())
        .collect();
    let mut st =
        CpuStepper::new(d, ops, DualForm::Factored, Some((&s, wave)), probes.clone()).unwrap();
    st.set_kernels(k).unwrap();
    let rec = solver::run(
        &mut st,
        dt,
        steps,
        Some(wave.end()),
        probes.len(),
        10,
        &mut |_| {},
    )
    .unwrap();
    Single {
        state: st.state().unwrap(),
        aux: st.aux_state().unwrap(),
        rec,
    }
}

/// A rank's view of a partitioned run: the record, the gathered state, the auxiliary
/// state (rank 0: every rank's, in the single-process layout) and ρ.
pub(crate) struct RankOut {
    pub rec: Record,
    pub state: (Vec<f64>, Vec<f64>),
    pub aux: Vec<f64>,
    pub rho: f64,
}

/// The partitioned CPU run of `o` on `parts` (threads) in precision `T`.
pub(crate) fn partitioned<T: dgatd::Real>(
    o: &Open,
    parts: &[Part],
    src: (V3, V3),
    probes: &[V3],
    dt: f64,
    steps: usize,
) -> Vec<RankOut> {
    let s = Source::located(&o.mesh, src.0, src.1).unwrap();
    let wave = Waveform::gaussian_derivative(WAVE_HZ);
    let probes: Vec<Probe> = probes
        .iter()
        .map(|&p| Probe::new(&o.mesh, &o.topo, p).unwrap())
        .collect();
    LocalComm::run(parts.len(), |comm| {
        let part = Arc::new(parts[comm.rank()].clone());
        let dga = Arc::new(part.assemble().unwrap());
        let rho = dgatd::partition::spectral_radius(&comm, &part, &dga, 60, 0x5eed).unwrap();
        let mut st =
            PartStepper::<T, _>::new(comm, part, dga, dt, Some((&s, wave)), &probes).unwrap();
        let rec = solver::run(
            &mut st,
            dt,
            steps,
            Some(wave.end()),
            probes.len(),
            10,
            &mut |_| {},
        )
        .unwrap();
        RankOut {
            state: st.state().unwrap(),
            aux: st.aux_state().unwrap(),
            rec,
            rho,
        }
    })
}

pub(crate) fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

pub(crate) fn peak(a: &[f64]) -> f64 {
    a.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Every row a rank assembles (conduction with the surface conductances, magnetic loss,
/// the dispersive masses and couplings) is the global row, bit for bit.
#[test]
fn local_loss_and_dispersion_rows_are_the_global_rows() {
    let o = open_problem(4501);
    let d = &o.dga;
    for q in parts(&o, 3, Scheme::Metis) {
        let ld = q.assemble().unwrap();
        let (lm, gm) = (ld.mag.as_ref(), d.mag.as_ref().unwrap());
        for n in 0..ld.n_tets {
            let g = q.tet_global[n] as usize;
            assert_eq!(lm.map_or(0.0, |m| m[n]), gm[g], "σ* of tet {g}");
        }
        let gs = d.msig.as_ref().unwrap();
        let gd = d.disp.as_ref().unwrap();
        let ldisp = ld.disp.as_ref();
        for v in 0..ld.meps.n_vertices() {
            if !q.own_vertex[v] {
                continue;
            }
            let gv = q.vertex_global[v] as usize;
            let zero = vec![0.0; gs.block(gv).len()];
            let ls = ld.msig.as_ref().map_or(&zero[..], |m| m.block(v));
            assert_eq!(ls, gs.block(gv), "Msig of vertex {gv}");
            for k in 0..gd.m0.len() {
                let l0 = ldisp.map_or(&zero[..], |x| x.m0[k].block(v));
                assert_eq!(l0, gd.m0[k].block(gv), "M0 of material {k} at vertex {gv}");
            }
            assert_eq!(ldisp.map_or(0, |x| x.pure[v]), gd.pure[gv], "vertex {gv}");
        }
        if let Some(x) = ldisp {
            assert_eq!(x.eps_inf, gd.eps_inf);
        }
    }
}

fn check_case(seed: u64, src: (V3, V3), probes: &[V3], steps: usize, nps: &[usize]) -> f64 {
    let o = open_problem(seed);
    let (dt, _) = solver::time_step(&o.dga, 0.95).unwrap();
    let rho = solver::spectral_radius(&o.dga, 60, 0x5eed);
    let one = single::<f64>(&o, src, probes, dt, steps, CpuKernels::Reference);
    let lean = single::<f64>(&o, src, probes, dt, steps, CpuKernels::Lean);
    let p = peak(&one.rec.samples);
    assert!(p > 0.0, "the source reaches the probes");
    assert!(!one.aux.is_empty() && one.aux.iter().any(|&x| x != 0.0));
    // the run is lossy: the energy falls after the pulse
    let e = &one.rec.energy;
    assert!(e.last().unwrap().1 < 0.9 * e.iter().map(|x| x.1).fold(0.0, f64::max));
    let lean_d = max_diff(&lean.rec.samples, &one.rec.samples) / p;
    eprintln!("seed {seed}: one process, lean against reference kernels: {lean_d:.2e} of the peak");
    assert!(lean_d <= 1e-12, "{lean_d:e}");
    let mut worst = 0.0f64;
    for &np in nps {
        for scheme in [Scheme::Metis, Scheme::Rcb] {
            let out = partitioned::<f64>(&o, &parts(&o, np, scheme), src, probes, dt, steps);
            for (r, x) in out.iter().enumerate() {
                let differ = x
                    .rec
                    .samples
                    .iter()
                    .zip(&one.rec.samples)
                    .filter(|(a, b)| a.to_bits() != b.to_bits())
                    .count();
                let d = max_diff(&x.rec.samples, &one.rec.samples) / p;
                let dl = max_diff(&x.rec.samples, &lean.rec.samples) / p;
                worst = worst.max(dl);
                if r == 0 {
                    eprintln!(
                        "seed {seed} P={np} {}: {differ} of {} samples differ from one process (max {d:.2e} of the peak; {dl:.2e} against the lean kernels)",
                        scheme.name(),
                        one.rec.samples.len()
                    );
                }
                assert_eq!(differ, 0, "P={np} rank {r}: max diff {d:e}");
                assert!(x.state == one.state, "P={np} rank {r}: state");
                if r == 0 {
                    assert!(x.aux == one.aux, "P={np}: the poles' states");
                } else {
                    assert!(x.aux.is_empty());
                }
                assert!(dl <= 1e-12, "P={np}: {dl:e} against the lean kernels");
                assert_eq!(x.rec.energy.len(), one.rec.energy.len());
                for (a, b) in x.rec.energy.iter().zip(&one.rec.energy) {
                    assert!(
                        (a.1 - b.1).abs() <= 1e-11 * b.1.abs(),
                        "P={np}: {a:?} vs {b:?}"
                    );
                }
                assert!(
                    (x.rho - rho).abs() <= 1e-10 * rho,
                    "P={np}: ρ {} vs {rho}",
                    x.rho
                );
            }
        }
    }
    worst
}

/// The source in the Lorentz block: its pattern takes the dispersive vertices'
/// blocks (`Δt Ã⁻¹ j`), as in one process.
#[test]
fn open_lossy_dispersive_run_on_2_and_3_ranks_equals_one_process() {
    let o = open_problem(4502);
    let src = (at(&o.mesh, [0.3, 0.25, 0.22]), [0.3, 0.2, 1.0]);
    let probes = [
        at(&o.mesh, [0.6, 0.55, 0.35]),
        at(&o.mesh, [0.85, 0.3, 0.5]),
        at(&o.mesh, [0.3, 0.6, 0.45]),
        at(&o.mesh, [0.62, 0.2, 0.15]),
    ];
    check_case(4502, src, &probes, 300, &[2, 3]);
}

/// The source in a lossless region (the unit pattern times Δt), a longer run.
#[test]
fn open_lossy_dispersive_run_with_a_lossless_source_equals_one_process() {
    let o = open_problem(4503);
    let src = (at(&o.mesh, [0.6, 0.15, 0.75]), [1.0, -0.4, 0.2]);
    let probes = [at(&o.mesh, [0.3, 0.3, 0.3]), at(&o.mesh, [0.55, 0.6, 0.4])];
    check_case(4503, src, &probes, 400, &[2, 3]);
}

/// A run cut at step 150, its global state and poles' states gathered (what a checkpoint
/// stores, in the single-process layout) and loaded into fresh steppers, continues bit for
/// bit as the uninterrupted run.
#[test]
fn gathered_state_and_poles_resume_bit_for_bit() {
    let o = open_problem(4504);
    let ps = parts(&o, 3, Scheme::Metis);
    let (dt, _) = solver::time_step(&o.dga, 0.9).unwrap();
    let s = Source::located(&o.mesh, at(&o.mesh, [0.3, 0.55, 0.45]), [0.2, 1.0, 0.3]).unwrap();
    let wave = Waveform::gaussian_derivative(WAVE_HZ);
    let probes = vec![Probe::new(&o.mesh, &o.topo, at(&o.mesh, [0.6, 0.5, 0.4])).unwrap()];
    let out = LocalComm::run(3, |comm| {
        let root = comm.rank() == 0;
        let part = Arc::new(ps[comm.rank()].clone());
        let dga = Arc::new(part.assemble().unwrap());
        let make = |c: LocalComm| {
            PartStepper::<f64, _>::new(c, part.clone(), dga.clone(), dt, Some((&s, wave)), &probes)
                .unwrap()
        };
        let mut whole = make(comm.clone());
        let mut a = Vec::new();
        whole.advance(0, 300, &mut a).unwrap();
        let mut first = make(comm.clone());
        let mut b = Vec::new();
        first.advance(0, 150, &mut b).unwrap();
        let (u, f) = first.state().unwrap();
        let aux = first.aux_state().unwrap();
        assert_eq!(root, !aux.is_empty());
        let mut second = make(comm.clone());
        second.set_state(&u, &f).unwrap();
        second.set_aux_state(&aux).unwrap();
        second.advance(150, 150, &mut b).unwrap();
        // a wrong length is refused on every rank
        let mut third = make(comm.clone());
        let bad = if root { vec![0.0; 3] } else { vec![] };
        let refused = third.set_aux_state(&bad).is_err();
        (
            a,
            b,
            whole.aux_state().unwrap(),
            second.aux_state().unwrap(),
            refused,
        )
    });
    for (a, b, xa, xb, refused) in out {
        assert!(a.iter().any(|&x| x != 0.0));
        assert!(a == b && xa == xb);
        assert!(refused);
    }
}

/// The same open problem as files (a Gmsh mesh with named groups and a `--config` file,
/// `open_mesh.rs`), through the library's plan: the partitioned job on 2 and 3 ranks against
/// the one-process job (lean kernels; Δt from the distributed power iteration, whose global
/// sums agree to ~1e-15). Bound 1e-10 on the record's 2-norm, relative (as the other
/// end-to-end comparisons); the dispersive poles set the same Δt, and the absorbing
/// surfaces give the same echo estimate.
#[test]
fn an_open_config_on_2_and_3_ranks_equals_one_process() {
    use dgatd::solver::{RunOptions, run_partitioned, run_with};
    let dir = std::env::temp_dir().join(format!("dgatd-open-lossy-{}", std::process::id()));
    let path = crate::open_mesh::write_open_problem(&dir, 4505, 400);
    let (cfg, origin) = dgatd::Config::read(&path).unwrap();
    let plan = dgatd::Plan::new(&cfg, Some(origin)).unwrap();
    let one = run_with(&plan, &mut RunOptions::default(), &mut |_, _| {}).unwrap();
    let p = peak(&one.record.samples);
    assert!(p > 0.0);
    assert!(one.echo.is_some(), "an open problem has an echo estimate");
    let pole_note = |n: &[String]| {
        n.iter()
            .any(|x| x.contains("the time step is") && x.contains("set by"))
    };
    for np in [2, 3] {
        let out = LocalComm::run(np, |c| {
            run_partitioned(&c, 0, &plan, &mut RunOptions::default(), &mut |_, _| {})
                .unwrap()
                .result
        });
        let r = out.into_iter().next().unwrap().expect("rank 0's result");
        assert_eq!(r.record.samples.len(), one.record.samples.len());
        let num = r
            .record
            .samples
            .iter()
            .zip(&one.record.samples)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        let den = one.record.samples.iter().map(|x| x * x).sum::<f64>().sqrt();
        let e = num / den;
        let ddt = ((r.dt_s - one.dt_s) / one.dt_s).abs();
        eprintln!("config P={np}: record relative difference {e:.2e} (Δt {ddt:.1e})");
        assert!(e < 1e-10, "P={np}: {e:e}");
        assert!(ddt < 1e-13, "P={np}: Δt {} vs {}", r.dt_s, one.dt_s);
        assert_eq!(
            pole_note(&r.notices),
            pole_note(&one.notices),
            "{:?}",
            r.notices
        );
        let (a, b) = (r.echo.unwrap(), one.echo.as_ref().unwrap());
        assert_eq!(a.t_s, b.t_s);
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The open config's job on 3 ranks, interrupted mid-run: rank 0's checkpoint carries the
/// poles' states (the single-process layout), and the resumed job's record is the
/// uninterrupted one bit for bit.
#[test]
fn an_interrupted_open_job_resumes_bit_for_bit_from_its_checkpoint() {
    use std::sync::atomic::AtomicBool;
    let dir = std::env::temp_dir().join(format!("dgatd-open-resume-{}", std::process::id()));
    let path = crate::open_mesh::write_open_problem(&dir, 4507, 600);
    let (cfg, origin) = dgatd::Config::read(&path).unwrap();
    let plan = dgatd::Plan::new(&cfg, Some(origin)).unwrap();
    let job = |out: &str, stop: Option<&AtomicBool>, resume: bool| {
        crate::open_lossy::three_rank_job(&dir, &plan, 250, out, stop, resume)
    };
    let full = job("full", None, false).unwrap().unwrap();
    let stop = AtomicBool::new(false);
    let e = job("cut", Some(&stop), false).unwrap_err();
    assert!(e.contains("interrupt"), "{e}");
    let ck = dgatd::solver::Checkpoint::read(&dir.join("cut").join(dgatd::solver::CHECKPOINT_FILE))
        .unwrap();
    assert!(ck.done >= 250 && ck.done < 600, "{}", ck.done);
    assert!(
        ck.aux.iter().any(|&x| x != 0.0),
        "the checkpoint carries the poles' states"
    );
    let resumed = job("cut", None, true).unwrap().unwrap();
    assert!(resumed == full, "the resumed record differs");
    let _ = std::fs::remove_dir_all(dir);
}

/// One run of the job `plan` on 3 in-process ranks with its outputs in `dir/out`: stopped
/// through `stop` once `stop_at` steps are done, or resumed from that folder's checkpoint;
/// rank 0's probe samples, or the error's text.
pub(crate) fn three_rank_job(
    dir: &std::path::Path,
    plan: &dgatd::Plan,
    stop_at: usize,
    out: &str,
    stop: Option<&std::sync::atomic::AtomicBool>,
    resume: bool,
) -> Result<Option<Vec<f64>>, String> {
    use dgatd::solver::{RunOptions, run_partitioned};
    use std::sync::atomic::Ordering;
    let out = dir.join(out);
    LocalComm::run(3, |c| {
        let mut o = RunOptions {
            out: Some(out.clone()),
            interrupt: stop,
            resume: (resume && c.rank() == 0).then(|| {
                dgatd::solver::Checkpoint::read(&out.join(dgatd::solver::CHECKPOINT_FILE)).unwrap()
            }),
            ..RunOptions::default()
        };
        let r = run_partitioned(&c, 0, plan, &mut o, &mut |d, _| {
            if d >= stop_at
                && let Some(s) = stop
            {
                s.store(true, Ordering::SeqCst)
            }
        });
        r.map(|x| x.result.map(|r| r.record.samples))
            .map_err(|e| e.to_string())
    })
    .into_iter()
    .next()
    .unwrap()
}

/// In f32 too the partitioned run is the one-process reference run bit for bit (the same
/// kernels in the same precision on the same operators).
#[test]
fn open_lossy_dispersive_run_in_f32_equals_one_process() {
    let o = open_problem(4509);
    let (dt, _) = solver::time_step(&o.dga, 0.95).unwrap();
    let src = (at(&o.mesh, [0.3, 0.25, 0.22]), [0.3, 0.2, 1.0]);
    let probes: Vec<Probe> = [
        at(&o.mesh, [0.6, 0.55, 0.35]),
        at(&o.mesh, [0.85, 0.3, 0.5]),
    ]
    .iter()
    .map(|&p| Probe::new(&o.mesh, &o.topo, p).unwrap())
    .collect();
    let wave = Waveform::gaussian_derivative(WAVE_HZ);
    let d = Arc::new(o.dga.clone());
    let ops = Arc::new(Operators::<f32>::new(&d, dt, false));
    let s = Source::new(&o.mesh, &o.topo, &d, src.0, src.1).unwrap();
    let mut one =
        CpuStepper::new(d, ops, DualForm::Factored, Some((&s, wave)), probes.clone()).unwrap();
    one.set_kernels(CpuKernels::Reference).unwrap();
    let mut a = Vec::new();
    one.advance(0, 250, &mut a).unwrap();
    assert!(peak(&a) > 0.0);
    let s = Source::located(&o.mesh, src.0, src.1).unwrap();
    let ps = parts(&o, 3, Scheme::Metis);
    for b in LocalComm::run(3, |comm| {
        let part = Arc::new(ps[comm.rank()].clone());
        let dga = Arc::new(part.assemble().unwrap());
        let mut st =
            PartStepper::<f32, _>::new(comm, part, dga, dt, Some((&s, wave)), &probes).unwrap();
        let mut b = Vec::new();
        st.advance(0, 250, &mut b).unwrap();
        b
    }) {
        let differ = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x.to_bits() != y.to_bits())
            .count();
        assert_eq!(differ, 0, "f32: {differ} samples differ");
    }
}
