//! Domain decomposition (feature `partition`): METIS partitions, ownership and halo lists,
//! local operators, and P ranks (threads exchanging halos in memory) against the
//! single-process CPU run.
//!
//! Run: `cargo test --release --features partition --test partition partition::`.
#![cfg(feature = "partition")]
#![allow(clippy::needless_range_loop)]

use crate::common::{cylinder, jittered_box, setup};
use dgatd::V3;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::{CpuKernels, CpuStepper};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::mesh::{Mesh, Topology};
use dgatd::partition::PartBuilder;
use dgatd::partition::{
    Comm, HaloLists, LocalComm, Part, PartStepper, Partition, Scheme, Stats, distribute,
};
use dgatd::problem::{Media, Waveform};
use dgatd::solver::{self, Record};
use std::sync::Arc;

fn parts_of(mesh: &Mesh, topo: &Topology, mat: &Media, np: usize) -> (Partition, Vec<Part>) {
    parts_with(mesh, topo, mat, &topo.boundary_edge, np, Scheme::Metis)
}

fn parts_with(
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    fixed: &[bool],
    np: usize,
    scheme: Scheme,
) -> (Partition, Vec<Part>) {
    let p = Partition::with(scheme, mesh, topo, np).unwrap();
    let h = HaloLists::build(mesh, topo, fixed, &p);
    let b = PartBuilder::new(mesh, topo, mat, fixed, &p, &h);
    let parts = (0..np).map(|r| b.build(r).unwrap()).collect();
    (p, parts)
}

fn at(mesh: &Mesh, frac: V3) -> V3 {
    let (lo, hi) = mesh.bbox();
    std::array::from_fn(|c| lo[c] + frac[c] * (hi[c] - lo[c]))
}

#[test]
fn partition_ownership_and_halo_lists_are_consistent() {
    let (m, t, _, mat) = setup(jittered_box([6, 5, 4], 41, 0.25), Some(7));
    for np in [2, 3, 7] {
        let (p, parts) = parts_of(&m, &t, &mat, np);
        // every tet in one part; a vertex belongs to the part of its lowest-numbered tet
        assert!(p.tet_part.iter().all(|&r| (r as usize) < np));
        let mut first = vec![usize::MAX; m.n_vertices()];
        for (n, tv) in m.tets.iter().enumerate() {
            for &v in tv {
                first[v as usize] = first[v as usize].min(n);
            }
        }
        for v in 0..m.n_vertices() {
            assert_eq!(p.vertex_owner[v], p.tet_part[first[v]], "vertex {v}");
        }
        // every tet is owned by exactly one part; the parts' owned counts add up
        let owned: usize = parts.iter().map(|q| q.n_owned_tets()).sum();
        assert_eq!(owned, m.n_tets());
        let owned_v: usize = parts.iter().map(|q| q.n_owned_vertices()).sum();
        assert_eq!(owned_v, m.n_vertices());
        // what r sends to s is, in global ids and in order, what s receives from r
        let gslot = |q: &Part, s: u32| 2 * q.edge_global[(s >> 1) as usize] + (s & 1);
        for a in &parts {
            for h in &a.halos {
                let b = &parts[h.peer];
                let back = b
                    .halos
                    .iter()
                    .find(|x| x.peer == a.rank)
                    .expect("symmetric");
                let st: Vec<u32> = h
                    .send_tets
                    .iter()
                    .map(|&n| a.tet_global[n as usize])
                    .collect();
                let rt: Vec<u32> = back
                    .recv_tets
                    .iter()
                    .map(|&n| b.tet_global[n as usize])
                    .collect();
                assert_eq!(st, rt);
                let su: Vec<u32> = h.send_halves.iter().map(|&s| gslot(a, s)).collect();
                let ru: Vec<u32> = back.recv_halves.iter().map(|&s| gslot(b, s)).collect();
                assert_eq!(su, ru);
                // only owned values are sent, only foreign ones received
                assert!(h.send_tets.iter().all(|&n| a.own_tet[n as usize]));
                assert!(h.recv_tets.iter().all(|&n| !a.own_tet[n as usize]));
                for &s in &h.send_halves {
                    let [v0, v1] = a.topo.edges[(s >> 1) as usize];
                    let v = if s & 1 == 0 { v0 } else { v1 };
                    assert!(a.own_vertex[v as usize] && a.free_edge[(s >> 1) as usize]);
                }
            }
            // every ghost tet is received exactly once
            let mut got = vec![0; a.mesh.n_tets()];
            for h in &a.halos {
                for &n in &h.recv_tets {
                    got[n as usize] += 1;
                }
            }
            for n in 0..a.mesh.n_tets() {
                assert_eq!(
                    got[n],
                    if a.own_tet[n] { 0 } else { 1 },
                    "rank {} tet {n}",
                    a.rank
                );
            }
        }
        let st = Stats::compute(
            &m,
            &t,
            &t.boundary_edge,
            &p,
            &HaloLists::build(&m, &t, &t.boundary_edge, &p),
        );
        assert!(st.imbalance >= 1.0 && st.imbalance < 1.10, "{st:?}");
        assert!(st.cut_faces > 0 && st.halo_values > 0);
    }
}

#[test]
fn bad_rank_counts_are_errors() {
    let (m, t, _, _) = setup(jittered_box([2, 2, 2], 3, 0.2), None);
    assert!(Partition::metis(&m, &t, None, 0).is_err());
    let e = Partition::metis(&m, &t, None, m.n_tets() + 1).unwrap_err();
    assert!(e.to_string().contains("ranks"), "{e}");
    assert!(Partition::metis(&m, &t, Some(vec![1; 3]), 2).is_err());
    // weights whose sum overflows METIS's 32-bit sums are rescaled, not refused
    let p = Partition::metis(&m, &t, Some(vec![u32::MAX / 3; m.n_tets()]), 2).unwrap();
    let n0 = p.tet_part.iter().filter(|&&r| r == 0).count();
    assert!(
        n0.abs_diff(m.n_tets() / 2) <= m.n_tets() / 20,
        "{n0} of {}",
        m.n_tets()
    );
}

#[test]
fn local_operators_are_the_global_rows_and_no_rank_holds_them_all() {
    let (m, t, d, mat) = setup(jittered_box([5, 4, 4], 9, 0.25), Some(11));
    let np = 3;
    let (_, parts) = parts_of(&m, &t, &mat, np);
    let mut free_halves = 0;
    for q in &parts {
        let ld = q.assemble().unwrap();
        free_halves += ld.n_free_half();
        assert!(ld.n_free_half() < d.n_free_half());
        // owned tets: Mmu and Mmu⁻¹C bit for bit; ghost tets: nothing assembled
        for n in 0..ld.n_tets {
            let g = q.tet_global[n] as usize;
            if q.own_tet[n] {
                assert_eq!(ld.mmu[n], d.mmu[g]);
                assert_eq!(ld.mmu_inv[n], d.mmu_inv[g]);
                assert_eq!(ld.primal_block(n), d.primal_block(g));
            } else {
                assert_eq!(ld.mmu_inv[n], [0.0; 10]);
            }
        }
        // owned vertices: the same block over the same halves in the same order
        for v in 0..ld.meps.n_vertices() {
            let gv = q.vertex_global[v] as usize;
            if !q.own_vertex[v] {
                assert_eq!(ld.meps.dim(v), 0);
                continue;
            }
            let gh: Vec<u32> = ld
                .meps
                .halves(v)
                .iter()
                .map(|&h| 2 * q.edge_global[(h >> 1) as usize] + (h & 1))
                .collect();
            assert_eq!(gh, d.meps.halves(gv));
            assert_eq!(ld.meps.block(v), d.meps.block(gv));
            assert_eq!(ld.meps_inv.block(v), d.meps_inv.block(gv));
        }
    }
    // each row of the global operator is assembled on exactly one rank
    assert_eq!(free_halves, d.n_free_half());
}

#[test]
fn parts_survive_encoding_and_distribution() {
    let (m, t, _, mat) = setup(jittered_box([4, 3, 3], 5, 0.2), Some(2));
    let (_, parts) = parts_of(&m, &t, &mat, 3);
    for q in &parts {
        let w = q.to_words();
        let back = Part::from_words(&w).unwrap();
        assert_eq!(back.to_words(), w);
        assert_eq!(back.topo.edges, q.topo.edges);
        assert_eq!(back.halos, q.halos);
        for cut in [1, w.len() / 2, w.len() - 1] {
            assert!(Part::from_words(&w[..cut]).is_err(), "truncated at {cut}");
        }
    }
    let mut bad = parts[1].to_words();
    bad[0] ^= 1;
    assert!(Part::from_words(&bad).is_err());
    // rank 0 partitions and sends; every rank gets the part the builder makes
    let got = LocalComm::run(3, |c| {
        let g = (c.rank() == 0).then_some((&m, &t, &mat, t.boundary_edge.as_slice()));
        distribute(&c, g).unwrap().0.to_words()
    });
    for (r, w) in got.iter().enumerate() {
        assert_eq!(*w, parts[r].to_words(), "rank {r}");
    }
}

struct Case {
    mesh: Mesh,
    topo: Topology,
    dga: Dga,
    mat: Media,
    /// Edges whose halves are not unknowns (PEC walls).
    fixed: Vec<bool>,
    source: (V3, V3),
    probes: Vec<V3>,
}

fn single_run(c: &Case, dt: f64, steps: usize) -> (Record, (Vec<f64>, Vec<f64>)) {
    let d = Arc::new(c.dga.clone());
    let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
    let src = Source::new(&c.mesh, &c.topo, &d, c.source.0, c.source.1).unwrap();
    let wave = Waveform::gaussian_derivative(300e6);
    let probes: Vec<Probe> = c
        .probes
        .iter()
        .map(|&p| Probe::new(&c.mesh, &c.topo, p).unwrap())
        .collect();
    let mut s = CpuStepper::new(
        d,
        ops,
        DualForm::Factored,
        Some((&src, wave)),
        probes.clone(),
    )
    .unwrap();
    // the partitioned stepper computes with the reference kernels: compare like with like
    s.set_kernels(CpuKernels::Reference).unwrap();
    let rec = solver::run(
        &mut s,
        dt,
        steps,
        Some(wave.end()),
        probes.len(),
        10,
        &mut |_| {},
    )
    .unwrap();
    (rec, s.state().unwrap())
}

struct RankOut {
    rec: Record,
    state: (Vec<f64>, Vec<f64>),
    rho: f64,
    has_source: bool,
    probes: Vec<usize>,
}

fn partitioned_run(c: &Case, np: usize, dt: f64, steps: usize, scheme: Scheme) -> Vec<RankOut> {
    let (_, parts) = parts_with(&c.mesh, &c.topo, &c.mat, &c.fixed, np, scheme);
    run_parts(c, &parts, dt, steps)
}

fn run_parts(c: &Case, parts: &[Part], dt: f64, steps: usize) -> Vec<RankOut> {
    let np = parts.len();
    let src = Source::located(&c.mesh, c.source.0, c.source.1).unwrap();
    let wave = Waveform::gaussian_derivative(300e6);
    let probes: Vec<Probe> = c
        .probes
        .iter()
        .map(|&p| Probe::new(&c.mesh, &c.topo, p).unwrap())
        .collect();
    LocalComm::run(np, |comm| {
        let part = Arc::new(parts[comm.rank()].clone());
        let dga = Arc::new(part.assemble().unwrap());
        let rho = dgatd::partition::spectral_radius(&comm, &part, &dga, 60, 0x5eed).unwrap();
        let mut s =
            PartStepper::<f64, _>::new(comm, part, dga, dt, Some((&src, wave)), &probes).unwrap();
        let rec = solver::run(
            &mut s,
            dt,
            steps,
            Some(wave.end()),
            probes.len(),
            10,
            &mut |_| {},
        )
        .unwrap();
        RankOut {
            state: s.state().unwrap(),
            rec,
            rho,
            has_source: s.has_source(),
            probes: s.owned_probes(),
        }
    })
}

fn check(c: &Case, nps: &[usize], steps: usize) {
    check_with(c, nps, steps, Scheme::Metis)
}

fn check_with(c: &Case, nps: &[usize], steps: usize, scheme: Scheme) {
    let (dt, _) = solver::time_step(&c.dga, 0.95).unwrap();
    let rho = solver::spectral_radius(&c.dga, 60, 0x5eed);
    let (single, state) = single_run(c, dt, steps);
    let peak = single.samples.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    assert!(peak > 0.0, "the source reaches the probes");
    let mut idle_rank_seen = false;
    for &np in nps {
        let out = partitioned_run(c, np, dt, steps, scheme);
        for (r, o) in out.iter().enumerate() {
            // Same operators, same arithmetic, same order: bit for bit (module doc).
            assert_eq!(o.rec.samples.len(), single.samples.len());
            let diff = o
                .rec
                .samples
                .iter()
                .zip(&single.samples)
                .filter(|(a, b)| a.to_bits() != b.to_bits())
                .count();
            assert_eq!(diff, 0, "P={np} rank {r}: {diff} probe samples differ");
            assert!(
                o.state.0 == state.0 && o.state.1 == state.1,
                "P={np} rank {r}: state"
            );
            // Global sums are added in another order: round-off only. The energy terms are
            // (nearly all) positive, so the relative error of a sum of N terms is below
            // N·eps ≈ 1e-11 for N ≤ 1e5 terms.
            assert_eq!(o.rec.energy.len(), single.energy.len());
            for (a, b) in o.rec.energy.iter().zip(&single.energy) {
                assert_eq!(a.0, b.0);
                assert!(
                    (a.1 - b.1).abs() <= 1e-11 * b.1.abs(),
                    "P={np}: {a:?} vs {b:?}"
                );
            }
            // the power iteration: the same start vector and iterates up to round-off
            assert!(
                (o.rho - rho).abs() <= 1e-10 * rho,
                "P={np}: rho {} vs {rho}",
                o.rho
            );
            let de = o
                .rec
                .energy
                .iter()
                .zip(&single.energy)
                .map(|(a, b)| ((a.1 - b.1) / b.1).abs())
                .fold(0.0, f64::max);
            if r == 0 {
                eprintln!(
                    "{} P={np}: energy max rel diff {de:.2e}, rho rel diff {:.2e}",
                    c.mesh.source,
                    (o.rho - rho).abs() / rho
                );
            }
            if !o.has_source && o.probes.is_empty() {
                idle_rank_seen = true;
            }
        }
        // probes are recorded once
        let mut owned: Vec<usize> = out.iter().flat_map(|o| o.probes.clone()).collect();
        owned.sort_unstable();
        assert_eq!(owned, (0..c.probes.len()).collect::<Vec<_>>());
    }
    assert!(
        idle_rank_seen,
        "some rank owns neither a probe nor the source"
    );
}

#[test]
fn partitioned_jittered_box_equals_single_process_run() {
    let (mesh, topo, dga, mat) = setup(jittered_box([7, 5, 4], 1234, 0.3), Some(99));
    let c = Case {
        source: (at(&mesh, [0.37, 0.41, 0.52]), [0.2, 0.3, 1.0]),
        probes: vec![at(&mesh, [0.71, 0.23, 0.44]), at(&mesh, [0.18, 0.66, 0.27])],
        fixed: topo.boundary_edge.clone(),
        mesh,
        topo,
        dga,
        mat,
    };
    check(&c, &[2, 3, 5], 400);
}

/// The exactness of the partitioned run does not depend on the partitioner: recursive
/// coordinate bisection (odd part counts included) gives the single-process run bit for
/// bit, global sums to round-off.
#[test]
fn rcb_partitioned_jittered_box_equals_single_process_run() {
    let (mesh, topo, dga, mat) = setup(jittered_box([7, 5, 4], 4321, 0.3), Some(17));
    let c = Case {
        source: (at(&mesh, [0.37, 0.41, 0.52]), [0.2, 0.3, 1.0]),
        probes: vec![at(&mesh, [0.71, 0.23, 0.44]), at(&mesh, [0.18, 0.66, 0.27])],
        fixed: topo.boundary_edge.clone(),
        mesh,
        topo,
        dga,
        mat,
    };
    check_with(&c, &[2, 3, 7], 400, Scheme::Rcb);
}

#[test]
fn partitioned_coarse_cylinder_equals_single_process_run() {
    let (mesh, topo, dga, mat) = setup(cylinder("cylinder_coarse.msh"), None);
    let c = Case {
        source: (at(&mesh, [0.62, 0.45, 0.5]), [0.0, 0.0, 1.0]),
        probes: vec![
            at(&mesh, [0.31, 0.57, 0.41]),
            at(&mesh, [0.55, 0.72, 0.63]),
            at(&mesh, [0.47, 0.26, 0.35]),
        ],
        fixed: topo.boundary_edge.clone(),
        mesh,
        topo,
        dga,
        mat,
    };
    check(&c, &[2, 3, 5], 300);
}

#[test]
fn a_rank_with_no_tetrahedra_takes_part_and_changes_nothing() {
    let (mesh, topo, dga, mat) = setup(jittered_box([5, 4, 3], 321, 0.25), None);
    let c = Case {
        source: (at(&mesh, [0.3, 0.4, 0.5]), [1.0, 0.2, 0.4]),
        probes: vec![at(&mesh, [0.8, 0.3, 0.6])],
        fixed: topo.boundary_edge.clone(),
        mesh,
        topo,
        dga,
        mat,
    };
    // parts 0 and 2 split the box at x = 0.5; part 1 is empty
    let tet_part: Vec<u32> = (0..c.mesh.n_tets())
        .map(|n| {
            if c.mesh.tet_x(n).iter().map(|x| x[0]).sum::<f64>() < 2.0 {
                0
            } else {
                2
            }
        })
        .collect();
    let p = Partition::from_tet_parts(&c.mesh, &c.topo, tet_part, vec![1; c.mesh.n_tets()], 3);
    let h = HaloLists::build(&c.mesh, &c.topo, &c.topo.boundary_edge, &p);
    let b = PartBuilder::new(&c.mesh, &c.topo, &c.mat, &c.topo.boundary_edge, &p, &h);
    let parts: Vec<Part> = (0..3).map(|r| b.build(r).unwrap()).collect();
    assert_eq!(parts[1].mesh.n_tets(), 0);
    assert!(parts[1].halos.is_empty());
    let (dt, _) = solver::time_step(&c.dga, 0.9).unwrap();
    let (single, state) = single_run(&c, dt, 200);
    for o in run_parts(&c, &parts, dt, 200) {
        assert!(o.rec.samples == single.samples && o.state == state);
    }
}

#[test]
fn gathered_state_resumes_bit_for_bit_with_the_same_ranks() {
    // What a checkpoint stores (the gathered global state) and how a resume loads it: a run
    // cut at step 120 and continued by fresh steppers equals the uninterrupted run.
    let (mesh, topo, _, mat) = setup(jittered_box([4, 5, 3], 606, 0.25), Some(5));
    let (_, parts) = parts_of(&mesh, &topo, &mat, 3);
    let src = Source::located(&mesh, at(&mesh, [0.4, 0.55, 0.45]), [0.3, 1.0, 0.1]).unwrap();
    let wave = Waveform::gaussian_derivative(300e6);
    let probes = vec![Probe::new(&mesh, &topo, at(&mesh, [0.7, 0.3, 0.6])).unwrap()];
    let out = LocalComm::run(3, |comm| {
        let part = Arc::new(parts[comm.rank()].clone());
        let dga = Arc::new(part.assemble().unwrap());
        let (dt, _) = dgatd::partition::time_step(&comm, &part, &dga, 0.9).unwrap();
        let make = |c: LocalComm| {
            PartStepper::<f64, _>::new(
                c,
                part.clone(),
                dga.clone(),
                dt,
                Some((&src, wave)),
                &probes,
            )
            .unwrap()
        };
        let mut whole = make(comm.clone());
        let mut a = Vec::new();
        whole.advance(0, 300, &mut a).unwrap();
        let mut first = make(comm.clone());
        let mut b = Vec::new();
        first.advance(0, 120, &mut b).unwrap();
        let (u, f) = first.state().unwrap();
        let mut second = make(comm.clone());
        second.set_state(&u, &f).unwrap();
        second.advance(120, 180, &mut b).unwrap();
        (a, b, whole.state().unwrap(), second.state().unwrap())
    });
    for (a, b, sa, sb) in out {
        assert!(a.iter().any(|&x| x != 0.0));
        assert!(a == b && sa == sb);
    }
}

#[test]
fn partitioned_run_with_pmc_walls_equals_single_process_run() {
    // No fixed edge: every boundary half-edge is an unknown (PMC), so boundary values travel.
    let (mesh, topo, _, mat) = setup(jittered_box([6, 4, 5], 2024, 0.25), Some(3));
    let fixed = vec![false; topo.n_edges()];
    let dga = Dga::assemble_with(&mesh, &topo, &mat, &fixed, false).unwrap();
    let c = Case {
        source: (at(&mesh, [0.45, 0.35, 0.6]), [0.5, -0.2, 1.0]),
        probes: vec![at(&mesh, [0.2, 0.7, 0.3]), at(&mesh, [0.8, 0.6, 0.75])],
        fixed,
        mesh,
        topo,
        dga,
        mat,
    };
    check(&c, &[2, 5], 300);
}

/// What a partitioned run cannot do is refused on every rank, by name, before any
/// collective step: here a source filling a ball of tets (`source_radius`).
#[test]
fn a_source_ball_is_refused_on_several_ranks() {
    use dgatd::Plan;
    use dgatd::solver::RunOptions;
    use dgatd::solver::run_partitioned;
    let cfg = dgatd::Config {
        box_mesh: Some("2,2,2".parse().unwrap()),
        source_radius: 0.3,
        steps: Some(10),
        ..dgatd::Config::default()
    };
    let plan = Plan::new(&cfg, None).unwrap();
    for r in LocalComm::run(2, |c| {
        run_partitioned(&c, 0, &plan, &mut RunOptions::default(), &mut |_, _| {})
            .err()
            .map(|e| e.to_string())
    }) {
        let e = r.expect("refused");
        assert!(
            e.contains("source_radius") && e.contains("one process"),
            "{e}"
        );
    }
}
