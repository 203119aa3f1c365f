//! Perfectly matched layers in partitioned CPU runs (issue 45) against the single-process
//! CPU run: a box PML two cells thick on every side of a jittered core with random ε, μ, a
//! Lorentz block and a conducting block (`open_mesh.rs`'s [`pml_box`]), PEC behind it.
//!
//! Bound: each rank steps the magnetic correction and pole step of its owned layer tets with
//! the single-process kernels on the same per-tet operators (checked here, bit for bit:
//! `M0`, `Ã⁻¹`, `G`, the pseudo-materials' vertex rows), in the same order, so in f64 and
//! in f32 the records, the final state and the auxiliary states (the dispersive and
//! electric stretch poles, then the magnetic `ms`, `mg`, in the single-process layout) are
//! equal **bit for bit**; the lean kernels of one process agree to 1e-12 of the peak.
//!
//! Run: `cargo test --release --test partition pml::`.
#![cfg(feature = "partition")]

use crate::open_lossy::{Open, RankOut, at, max_diff, partitioned, parts, peak, single};
use crate::open_mesh::{pml_box, pml_group};
use dgatd::V3;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuKernels;
use dgatd::dga::{Dga, Operators, Probe, Source};
use dgatd::mesh::{Mesh, Topology};
use dgatd::partition::{Comm, LocalComm, PartStepper, Scheme};
use dgatd::problem::pml::Stretch;
use dgatd::problem::{Media, Pole, Waveform};
use dgatd::solver;
use std::sync::Arc;

fn centroid(m: &Mesh, n: usize) -> V3 {
    let x = m.tet_x(n);
    std::array::from_fn(|c| x.iter().map(|p| p[c]).sum::<f64>() / 4.0)
}

/// The problem: random ε in [1, 2), μ in [1, 1.3) in the core, the groups of
/// [`pml_group`] (Lorentz block, conducting block), the layer at ε 1.3, μ 1.1.
pub(crate) fn pml_problem(seed: u64) -> Open {
    let mesh = pml_box(seed);
    let topo = Topology::build(&mesh).unwrap();
    let nt = mesh.n_tets();
    let mut rng = dgatd::internal::Rng::new(seed ^ 0x9e11);
    let mut media = Media::lossless(
        (0..nt).map(|_| 1.0 + rng.uniform()).collect(),
        (0..nt).map(|_| 1.0 + 0.3 * rng.uniform()).collect(),
    );
    media.sigma = vec![0.0; nt];
    media.disp = vec![0; nt];
    media.poles = vec![(
        "lorentz".into(),
        vec![Pole::Lorentz {
            delta_eps: 1.5,
            f_0: 250e6,
            delta: 3e7,
        }],
    )];
    let group: Vec<usize> = (0..nt).map(|n| pml_group(centroid(&mesh, n))).collect();
    for (n, g) in group.iter().enumerate() {
        match g {
            1 => {
                media.disp[n] = 1;
                media.eps[n] = 2.0;
            }
            2 => media.sigma[n] = 1.2,
            3 => {
                media.eps[n] = 1.3;
                media.mu[n] = 1.1;
            }
            _ => {}
        }
    }
    let layer: Vec<bool> = group.iter().map(|&g| g == 3).collect();
    let mut st = Stretch::default();
    st.add_layer(&mesh, &layer, &media.eps, &media.mu, 3.0, 1e-5, None, "pml")
        .unwrap();
    assert_eq!(st.layers[0].shape, "box");
    media.pml = Some(st);
    let fixed = topo.boundary_edge.clone();
    let dga = Dga::assemble_with(&mesh, &topo, &media, &fixed, false).unwrap();
    assert!(dga.mpml.is_some() && dga.msig.is_some());
    let ds = dga.disp.as_ref().unwrap();
    assert!(ds.n_media == 1 && ds.poles.len() > 1);
    Open {
        mesh,
        topo,
        media,
        fixed,
        surface: Vec::new(),
        dga,
    }
}

/// Source in the core near the Lorentz block; probes in the core, one in the layer.
pub(crate) fn src(o: &Open) -> (V3, V3) {
    (at(&o.mesh, [0.43, 0.37, 0.41]), [0.3, 0.2, 1.0])
}
pub(crate) fn probes(o: &Open) -> Vec<V3> {
    vec![
        at(&o.mesh, [0.62, 0.44, 0.33]),
        at(&o.mesh, [0.31, 0.27, 0.52]),
        at(&o.mesh, [0.9, 0.35, 0.45]),
    ]
}

/// The values of the magnetic PML states at the tail of a one-process auxiliary state.
fn mag_tail<'a>(dga: &Dga, aux: &'a [f64]) -> &'a [f64] {
    let n = 12 * dga.mpml.as_ref().unwrap().pole.len();
    &aux[aux.len() - n..]
}

/// Every PML row a rank assembles is the global row bit for bit: the electric stretch
/// pseudo-materials' vertex blocks at its owned vertices (in the global material numbering,
/// also on a part with no dispersive tet), the magnetic masses of its owned layer tets (and
/// of no other tet), and the operators built from them (`Ã⁻¹`, `G`, the pole coefficients).
#[test]
fn local_pml_rows_are_the_global_rows() {
    let o = pml_problem(4511);
    let d = &o.dga;
    let gd = d.disp.as_ref().unwrap();
    let gm = d.mpml.as_ref().unwrap();
    let dt = 1e-3;
    let gops = Operators::<f64>::new(d, dt, false);
    let gmp = gops.mpml.as_ref().unwrap();
    let mut without_real = 0;
    for scheme in [Scheme::Metis, Scheme::Rcb] {
        for q in parts(&o, 3, scheme) {
            let ld = q.assemble().unwrap();
            let Some(lds) = ld.disp.as_ref() else {
                panic!("rank {}: a part without the layer's poles", q.rank)
            };
            if lds.n_media == 0 {
                without_real += 1;
            }
            assert_eq!(lds.poles.len() - lds.n_media, gd.poles.len() - gd.n_media);
            for v in (0..ld.meps.n_vertices()).filter(|&v| q.own_vertex[v]) {
                let gv = q.vertex_global[v] as usize;
                for k in 0..lds.poles.len() - lds.n_media {
                    assert_eq!(
                        lds.m0[lds.n_media + k].block(v),
                        gd.m0[gd.n_media + k].block(gv),
                        "stretch pole {k} at vertex {gv}"
                    );
                }
            }
            let lops = Operators::<f64>::new(&ld, dt, false);
            let (lm, lmp) = match (ld.mpml.as_ref(), lops.mpml.as_ref()) {
                (Some(a), Some(b)) => (a, b),
                _ => panic!("rank {}: no magnetic layer terms", q.rank),
            };
            let owned_layer: Vec<u32> = (0..ld.n_tets as u32)
                .filter(|&n| q.own_tet[n as usize])
                .filter(|&n| gm.tets.binary_search(&q.tet_global[n as usize]).is_ok())
                .collect();
            assert_eq!(
                lm.tets, owned_layer,
                "rank {}: the owned layer tets",
                q.rank
            );
            for (i, &n) in lm.tets.iter().enumerate() {
                let g = q.tet_global[n as usize];
                let gi = gm.tets.binary_search(&g).unwrap();
                let (a, b) = (lm.ptr[i]..lm.ptr[i + 1], gm.ptr[gi]..gm.ptr[gi + 1]);
                assert_eq!(lm.pole[a.clone()], gm.pole[b.clone()], "tet {g}");
                assert_eq!(lm.m0[a.clone()], gm.m0[b.clone()], "M0 of tet {g}");
                assert_eq!(lmp.inv[i], gmp.inv[gi], "Ã⁻¹ of tet {g}");
                assert_eq!(lmp.g[a], gmp.g[b], "G of tet {g}");
            }
            assert_eq!(lmp.coef, gmp.coef);
        }
    }
    eprintln!("{without_real} of 6 parts hold no dispersive tet");
    assert!(
        without_real > 0,
        "no part tests the pseudo-materials' renumbering"
    );
}

/// `|a − b|₂ / |b|₂`.
fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let n = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!(n > 0.0, "all-zero record");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
        / n
}

fn check(o: &Open, out: &[RankOut], one: &crate::open_lossy::Single, what: &str) {
    let p = peak(&one.rec.samples);
    for (r, x) in out.iter().enumerate() {
        let differ = x
            .rec
            .samples
            .iter()
            .zip(&one.rec.samples)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        let d = max_diff(&x.rec.samples, &one.rec.samples) / p;
        if r == 0 {
            eprintln!(
                "{what}: {differ} of {} samples differ from one process (max {d:.2e} of the peak)",
                one.rec.samples.len()
            );
        }
        assert_eq!(differ, 0, "{what} rank {r}: max diff {d:e}");
        assert!(x.state == one.state, "{what} rank {r}: state");
        if r == 0 {
            assert_eq!(x.aux.len(), one.aux.len(), "{what}: aux length");
            let differ = x.aux.iter().zip(&one.aux).filter(|(a, b)| a != b).count();
            assert_eq!(differ, 0, "{what}: {differ} auxiliary values differ");
            assert!(mag_tail(&o.dga, &x.aux).iter().any(|&v| v != 0.0));
        } else {
            assert!(x.aux.is_empty());
        }
    }
}

/// The run on 2 and 3 ranks (METIS and RCB) is the one-process run bit for bit in f64:
/// records, state, and the poles' states with the magnetic PML states.
#[test]
fn a_pml_run_on_2_and_3_ranks_equals_one_process() {
    let o = pml_problem(4512);
    let (dt, _) = solver::time_step(&o.dga, 0.95).unwrap();
    let (s, pr) = (src(&o), probes(&o));
    let steps = 300;
    let one = single::<f64>(&o, s, &pr, dt, steps, CpuKernels::Reference);
    let lean = single::<f64>(&o, s, &pr, dt, steps, CpuKernels::Lean);
    let p = peak(&one.rec.samples);
    assert!(p > 0.0, "the source reaches the probes");
    let ld = max_diff(&lean.rec.samples, &one.rec.samples) / p;
    eprintln!("one process, lean against reference kernels: {ld:.2e} of the peak");
    assert!(ld <= 1e-12, "{ld:e}");
    let tail = mag_tail(&o.dga, &one.aux);
    assert!(tail.iter().any(|&v| v != 0.0), "the magnetic poles moved");
    // the layer probe sees the pulse, and the layer takes energy out of the box
    let layer_probe = &one.rec.samples[6..];
    assert!(layer_probe.iter().step_by(9).any(|&v| v != 0.0));
    let e = &one.rec.energy;
    let emax = e.iter().map(|x| x.1).fold(0.0, f64::max);
    assert!(e.last().unwrap().1 < 0.5 * emax, "{e:?}");
    for np in [2, 3] {
        for scheme in [Scheme::Metis, Scheme::Rcb] {
            let out = partitioned::<f64>(&o, &parts(&o, np, scheme), s, &pr, dt, steps);
            check(&o, &out, &one, &format!("f64 P={np} {}", scheme.name()));
            for x in &out {
                for (a, b) in x.rec.energy.iter().zip(&one.rec.energy) {
                    assert!((a.1 - b.1).abs() <= 1e-11 * b.1.abs(), "{a:?} vs {b:?}");
                }
            }
        }
    }
}

/// In f32 too (the same kernels in the same precision on the same operators).
#[test]
fn a_pml_run_in_f32_on_3_ranks_equals_one_process() {
    let o = pml_problem(4513);
    let (dt, _) = solver::time_step(&o.dga, 0.95).unwrap();
    let (s, pr) = (src(&o), probes(&o));
    let one = single::<f32>(&o, s, &pr, dt, 250, CpuKernels::Reference);
    assert!(peak(&one.rec.samples) > 0.0);
    for scheme in [Scheme::Metis, Scheme::Rcb] {
        let out = partitioned::<f32>(&o, &parts(&o, 3, scheme), s, &pr, dt, 250);
        check(&o, &out, &one, &format!("f32 P=3 {}", scheme.name()));
    }
}

/// A run cut at step 150, its gathered state and auxiliary state (the magnetic PML states
/// included) loaded into fresh steppers, continues bit for bit as the uninterrupted run; a
/// wrong length is refused on every rank.
#[test]
fn a_pml_run_resumes_bit_for_bit_from_its_gathered_state() {
    let o = pml_problem(4514);
    let ps = parts(&o, 3, Scheme::Metis);
    let (dt, _) = solver::time_step(&o.dga, 0.9).unwrap();
    let (sp, sd) = src(&o);
    let s = Source::located(&o.mesh, sp, sd).unwrap();
    let wave = Waveform::gaussian_derivative(crate::open_lossy::WAVE_HZ);
    let probes: Vec<Probe> = probes(&o)
        .iter()
        .map(|&p| Probe::new(&o.mesh, &o.topo, p).unwrap())
        .collect();
    let n_mag = 12 * o.dga.mpml.as_ref().unwrap().pole.len();
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
        // without its magnetic states (or with one value too many) the state is refused
        let mut refused = Vec::new();
        for cut in [aux.len().saturating_sub(n_mag), aux.len() + 1] {
            let mut third = make(comm.clone());
            let mut bad = aux.clone();
            bad.resize(if root { cut } else { 0 }, 0.5);
            refused.push(third.set_aux_state(&bad).is_err());
        }
        (
            a,
            b,
            whole.aux_state().unwrap(),
            second.aux_state().unwrap(),
            aux,
            refused,
        )
    });
    for (r, (a, b, xa, xb, aux, refused)) in out.into_iter().enumerate() {
        assert!(a.iter().any(|&x| x != 0.0));
        assert!(a == b, "rank {r}: the resumed record differs");
        assert!(xa == xb, "rank {r}: the resumed poles' states differ");
        if r == 0 {
            assert!(aux[aux.len() - n_mag..].iter().any(|&x| x != 0.0));
        }
        assert_eq!(refused, [true, true], "rank {r}");
    }
}

/// Through the library's plan (the PML problem as files): the job on 2 ranks equals the
/// one-process job to 1e-10 (Δt from the distributed power iteration), names the layer as
/// one process does; the job on 3 ranks interrupted mid-run resumes from its checkpoint
/// (which carries the magnetic PML states) bit for bit.
#[test]
fn a_pml_config_on_ranks_equals_one_process_and_resumes_from_its_checkpoint() {
    use dgatd::solver::{RunOptions, run_partitioned, run_with};
    use std::sync::atomic::AtomicBool;
    let dir = std::env::temp_dir().join(format!("dgatd-pml-part-{}", std::process::id()));
    let path = crate::open_mesh::write_pml_problem(&dir, 4515, 500);
    let (cfg, origin) = dgatd::Config::read(&path).unwrap();
    let plan = dgatd::Plan::new(&cfg, Some(origin)).unwrap();
    let one = run_with(&plan, &mut RunOptions::default(), &mut |_, _| {}).unwrap();
    let note = |n: &[String]| {
        n.iter()
            .find(|x| x.starts_with("perfectly matched layer pml: box"))
            .cloned()
    };
    assert!(note(&one.notices).is_some(), "{:?}", one.notices);
    let r = LocalComm::run(2, |c| {
        run_partitioned(&c, 0, &plan, &mut RunOptions::default(), &mut |_, _| {})
            .unwrap()
            .result
    })
    .into_iter()
    .next()
    .unwrap()
    .expect("rank 0's result");
    let e = rel_l2(&r.record.samples, &one.record.samples);
    eprintln!("pml config P=2: record relative difference {e:.2e}");
    assert!(e < 1e-10, "{e:e}");
    assert_eq!(note(&r.notices), note(&one.notices));
    let job = |out: &str, stop: Option<&AtomicBool>, resume: bool| {
        crate::open_lossy::three_rank_job(&dir, &plan, 200, out, stop, resume)
    };
    let full = job("full", None, false).unwrap().unwrap();
    let stop = AtomicBool::new(false);
    let e = job("cut", Some(&stop), false).unwrap_err();
    assert!(e.contains("interrupt"), "{e}");
    let ck = dgatd::solver::Checkpoint::read(&dir.join("cut").join(dgatd::solver::CHECKPOINT_FILE))
        .unwrap();
    assert!(ck.done >= 200 && ck.done < 500, "{}", ck.done);
    // the tail of the auxiliary state: the magnetic PML states
    let tail = ck.aux.len() / 10;
    assert!(ck.aux.iter().rev().take(tail).any(|&x| x != 0.0));
    let resumed = job("cut", None, true).unwrap().unwrap();
    assert!(resumed == full, "the resumed record differs");
    let _ = std::fs::remove_dir_all(dir);
}
