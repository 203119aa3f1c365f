//! OpenCL kernels and whole runs against the CPU reference backend, on seeded random data.
//! Runs on any OpenCL device (PoCL in CI). Without a device the tests print SKIPPED, and
//! fail when DGATD_REQUIRE_OPENCL=1 (set in CI).
//!
//! Tolerances (relative, 2-norm): single kernels 1e-12 in f64 and 1e-5 in f32 (sums of up
//! to ~70 terms, different order and FMA contraction on the device); whole runs of a few
//! hundred steps 1e-9 in f64 and 1e-4 in f32 (round-off differences propagate through the
//! leapfrog without growing, as the energy test shows, but accumulate like sqrt(steps)).
#![allow(clippy::needless_range_loop)]

use crate::common::*;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::{self, CpuStepper};
use dgatd::backend::opencl::DgUpdate;
use dgatd::backend::opencl::{
    BlockVariant, CircVariant, ClDevice, ClStepper, CsrVariant, PrimalVariant, ULayout, Variants,
    list_devices,
};
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::problem::Waveform;
use dgatd::solver;
use std::sync::Arc;

#[test]
fn lists_devices_with_their_properties() {
    let Some(d) = cl_device() else { return };
    let all = list_devices().unwrap();
    assert!(all.iter().any(|x| x.name == d.info.name));
    assert!(d.info.global_mem > 0 && d.info.max_alloc > 0 && d.info.compute_units > 0);
}

fn kernels_agree<T: dgatd::Real>(dev: &Arc<ClDevice>, tol: f64) {
    let (_m, _t, d, _) = setup(jittered_box([5, 4, 4], 31, 0.3), Some(8));
    let d = Arc::new(d);
    let dt = 0.37;
    let ops = Operators::<f64>::new(&d, dt, true);
    let mut s = ClStepper::<T>::new(dev.clone(), d.clone(), DualForm::Csr, None, &[]).unwrap();
    s.set_time_step(dt, None).unwrap();
    let (u0, f0) = random_state(&d, 91);
    // primal, both variants
    for v in [PrimalVariant::Tet, PrimalVariant::Sym] {
        s.set_variants(Variants {
            primal: v,
            ..Variants::default()
        })
        .unwrap();
        s.set_state(&u0, &f0).unwrap();
        s.primal_update().unwrap();
        let (_, fd) = s.state().unwrap();
        let mut fc = f0.clone();
        cpu::primal(&ops, &u0, &mut fc);
        let e = rel_err(&diff(&fd, &f0), &diff(&fc, &f0));
        eprintln!("primal {v:?} {}: relative error {e:.2e}", T::NAME);
        assert!(e < tol, "primal {v:?} {}: {e:e}", T::NAME);
    }
    // dual: factored over full and packed blocks, and CSR
    let mut c = vec![0.0; d.n_edges];
    let mut uc = u0.clone();
    cpu::circulations(&ops, &f0, &mut c);
    cpu::vertex_blocks(&ops, &c, &mut uc);
    let mut uc2 = u0.clone();
    cpu::dual_csr(&ops, &f0, &mut uc2);
    for (form, var, bv) in [
        (DualForm::Factored, CsrVariant::Vector, BlockVariant::Vertex),
        (DualForm::Factored, CsrVariant::Vector, BlockVariant::Packed),
        (DualForm::Csr, CsrVariant::Vector, BlockVariant::Vertex),
    ] {
        s.set_dual(form).unwrap();
        s.set_variants(Variants {
            csr: var,
            block: bv,
            ..Variants::default()
        })
        .unwrap();
        s.set_state(&u0, &f0).unwrap();
        s.dual_update().unwrap();
        let (ud, _) = s.state().unwrap();
        let reference = if form == DualForm::Csr { &uc2 } else { &uc };
        let e = rel_err(&diff(&ud, &u0), &diff(reference, &u0));
        eprintln!(
            "dual {form:?} {var:?} {bv:?} {}: relative error {e:.2e}",
            T::NAME
        );
        assert!(e < tol, "dual {form:?} {var:?} {bv:?} {}: {e:e}", T::NAME);
    }
}

fn diff(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

#[test]
fn every_kernel_matches_the_cpu_f64() {
    let Some(dev) = cl_device() else { return };
    if !dev.info.fp64 {
        eprintln!("*** SKIPPED f64 kernels: {} has no fp64 ***", dev.info.name);
        return;
    }
    kernels_agree::<f64>(&dev, 1e-12);
}

#[test]
fn every_kernel_matches_the_cpu_f32() {
    let Some(dev) = cl_device() else { return };
    kernels_agree::<f32>(&dev, 1e-5);
}

/// Slot-major `U` (a bench variant, issue 19): the same products in the same order as the
/// default kernels, so 5 steps from a random state (with the PEC walls' half-edges zero)
/// equal the default step's to round-off: 16 unit round-offs of the state (2-norm), the
/// staged kernels' bound (PoCL gives the same bits). In f64 also with the operators in f32,
/// against the mixed kernels.
fn slot_major_agrees<T: dgatd::Real>(dev: &Arc<ClDevice>) {
    let (_m, _t, d, _) = setup(jittered_box([5, 4, 4], 33, 0.3), Some(9));
    let d = Arc::new(d);
    let mut s = ClStepper::<T>::new(dev.clone(), d.clone(), DualForm::Factored, None, &[]).unwrap();
    s.set_time_step(0.37, None).unwrap();
    let (u0, f0) = random_state(&d, 92);
    let free = d.meps.h.len();
    assert!(
        free < d.n_half(),
        "the box has no PEC half-edges to read as zero"
    );
    for mixed in [false, true] {
        if mixed && T::NAME != "f64" {
            continue;
        }
        let m = mixed.then(|| s.mixed_operators().unwrap());
        s.set_state(&u0, &f0).unwrap();
        for _ in 0..5 {
            match &m {
                Some(m) => {
                    s.primal_update_mixed(m).unwrap();
                    s.circulation().unwrap();
                    s.vertex_blocks_mixed(m).unwrap();
                }
                None => {
                    s.primal_update().unwrap();
                    s.circulation().unwrap();
                    s.vertex_blocks().unwrap();
                }
            }
        }
        let (ua, fa) = s.state().unwrap();
        let a = [ua, fa].concat();
        let mut sm = s.slot_major(mixed).unwrap();
        // the slot-major primal, then the same through the per-tet slot table, then that
        // with the circulations through sliced ELL and paired lists (bench variants)
        let sell = s.sell_circulation().unwrap();
        let pairs = [
            s.pair_circulation(false).unwrap(),
            s.pair_circulation(true).unwrap(),
        ];
        // the circulations: 0 the stepper's (paired lists, the default), 1 sliced ELL
        // lists, 2 paired (a bench copy), 3 paired sliced ELL, 4 the stepper's with the
        // lists of one index per entry (CircVariant::Lists); all sum the same entries in the
        // same order (additions only, so no contraction can differ): bit for bit
        let mut plain: Option<Vec<f64>> = None;
        for (table, ell) in [
            (false, 0),
            (true, 0),
            (true, 1),
            (true, 2),
            (true, 3),
            (true, 4),
        ] {
            if table {
                s.slot_table(&mut sm).unwrap();
            }
            let circ = if ell == 4 {
                CircVariant::Lists
            } else {
                CircVariant::Paired
            };
            s.set_variants(Variants {
                circ,
                ..Variants::default()
            })
            .unwrap();
            s.set_state(&u0, &f0).unwrap();
            s.to_slot_major(&sm).unwrap();
            for _ in 0..5 {
                match table {
                    false => s.primal_update_sm(&sm).unwrap(),
                    true => s.primal_update_st(&sm).unwrap(),
                };
                match ell {
                    0 | 4 => s.circulation().unwrap(),
                    1 => s.circulation_sell(&sell).unwrap(),
                    k => s.circulation_pair(&pairs[k - 2]).unwrap(),
                };
                s.vertex_blocks_sm(&sm).unwrap();
            }
            s.from_slot_major(&sm).unwrap();
            let (ub, fb) = s.state().unwrap();
            let b = [ub, fb].concat();
            let e = rel_err(&b, &a);
            eprintln!(
                "slot-major {} (mixed {mixed}, slot table {table}, circulation form {ell}) against the default, 5 steps: {e:.2e} ({})",
                T::NAME,
                if a == b { "bit for bit" } else { "round-off" }
            );
            assert!(e <= 16.0 * T::EPS, "slot-major {}: {e:e}", T::NAME);
            if table && ell == 0 {
                plain = Some(b.clone());
            } else if table {
                assert!(
                    plain.as_ref() == Some(&b),
                    "circulation form {ell} does not give the default's sums bit for bit"
                );
            }
            assert!(rel_err(&b, &[u0.clone(), f0.clone()].concat()) > 1e-3);
        }
    }
}

/// Runs `f32` on `dev`, and `f64` where it has fp64 (else says loudly that `what` in f64 was
/// skipped).
fn f32_and_f64(dev: &Arc<ClDevice>, what: &str, f32: fn(&Arc<ClDevice>), f64: fn(&Arc<ClDevice>)) {
    f32(dev);
    if dev.info.fp64 {
        f64(dev);
    } else {
        eprintln!("*** SKIPPED f64 {what}: {} has no fp64 ***", dev.info.name);
    }
}

#[test]
fn slot_major_u_steps_like_the_default_layout() {
    let Some(dev) = cl_device() else { return };
    let (a, b) = (slot_major_agrees::<f32>, slot_major_agrees::<f64>);
    f32_and_f64(&dev, "slot-major", a, b);
}

/// The per-tet device arrays are padded to `tet_stride(t)` tets (a multiple of 64): on a box
/// of random size whose tet count is no multiple of 64, after steps in every primal layout
/// (the symmetric, the 24-value per tet and per row ones, slot-major through the edge table
/// and the per-tet slot table), the padding entries of the device F are exactly zero (their
/// operators are zero and their tables point at valid zero DoFs), and the state comes back
/// with `4 t` values, equal to the CPU's one step at a time (1e-12 / 1e-5, this file's
/// single-kernel bounds).
fn padding_stays_zero<T: dgatd::Real>(dev: &Arc<ClDevice>) {
    let mut r = dgatd::internal::Rng::new(0x9ad);
    let mut pick = |lo: u64, k: u64| (lo + r.next_u64() % k) as usize;
    let n = loop {
        let n = [pick(3, 4), pick(3, 4), pick(2, 3)];
        if !(6 * n[0] * n[1] * n[2]).is_multiple_of(64) {
            break n;
        }
    };
    let (_m, _t, d, _) = setup(jittered_box(n, 41, 0.25), Some(17));
    let d = Arc::new(d);
    let t = d.n_tets;
    let mut s = ClStepper::<T>::new(dev.clone(), d.clone(), DualForm::Factored, None, &[]).unwrap();
    let tp = s.tet_stride();
    assert_eq!(tp, dgatd::backend::opencl::tet_stride(t));
    assert!(
        !t.is_multiple_of(64) && tp.is_multiple_of(64) && tp > t && tp < t + 64,
        "{t} tets, stride {tp}"
    );
    s.set_time_step(0.31, None).unwrap();
    let (u0, f0) = random_state(&d, 5);
    // the half-edge layouts also from a state with edge 0 (which the padding tets' edge
    // table names) nonzero, though it lies on the PEC wall: the padding's zero operators
    // alone then keep its F zero
    let mut u1 = u0.clone();
    (u1[0], u1[1]) = (0.5, -0.25);
    let ops = Arc::new(Operators::<T>::new(&d, 0.31, false));
    let cpu = |u: &[f64]| {
        let mut c =
            CpuStepper::new(d.clone(), ops.clone(), DualForm::Factored, None, vec![]).unwrap();
        c.set_state(u, &f0).unwrap();
        c.advance(0, 3, &mut vec![]).unwrap();
        let (uc, fc) = c.state().unwrap();
        [uc, fc].concat()
    };
    let (want0, want1) = (cpu(&u0), cpu(&u1));
    let tol = if T::NAME == "f64" { 1e-12 } else { 1e-5 };
    let check = |s: &ClStepper<T>, want: &[f64], what: &str| {
        let (_, fbuf) = s.state_buffers();
        let raw = s.device().read(fbuf, 4 * tp, "F").unwrap();
        for k in 0..4 {
            for n in t..tp {
                assert_eq!(raw[k * tp + n].f64(), 0.0, "{what}: padding F({n}, {k})");
            }
        }
        let (u, f) = s.state().unwrap();
        assert_eq!(f.len(), 4 * t, "{what}");
        let e = rel_err(&[u, f].concat(), want);
        assert!(e < tol, "{what}: {e:e} from the CPU");
    };
    for primal in [PrimalVariant::Sym, PrimalVariant::Tet] {
        s.set_variants(Variants {
            primal,
            ..Variants::default()
        })
        .unwrap();
        s.set_state(&u1, &f0).unwrap();
        for _ in 0..3 {
            s.primal_update().unwrap();
            s.circulation().unwrap();
            s.vertex_blocks().unwrap();
        }
        check(&s, &want1, primal.name());
    }
    s.set_variants(Variants::default()).unwrap();
    let mut sm = s.slot_major(false).unwrap();
    for table in [false, true] {
        if table {
            s.slot_table(&mut sm).unwrap();
        }
        s.set_state(&u0, &f0).unwrap();
        s.to_slot_major(&sm).unwrap();
        for _ in 0..3 {
            match table {
                true => s.primal_update_st(&sm).unwrap(),
                false => s.primal_update_sm(&sm).unwrap(),
            };
            s.circulation().unwrap();
            s.vertex_blocks_sm(&sm).unwrap();
        }
        s.from_slot_major(&sm).unwrap();
        check(&s, &want0, if table { "slot table" } else { "slot-major" });
    }
}

/// The energy computed on the device (`meps_slots`, `sym4_apply` and two dot products, the
/// state never downloaded) equals the CPU stepper's energy of the same state: from a random
/// state and after 40 sourced steps, in the half-edge and the slot-major layout of U, on a box
/// of random size with random media. Bounds: 1e-12 (f64: sums of ~10⁴ terms in another order)
/// and 1e-5 (f32: the device sums in f32 per work-group); also with magnetic conductivity σ*
/// on half the tets (half-edge U), whose primal update carries the loss factors. The state is
/// left as it was.
fn device_energy_agrees<T: dgatd::Real>(dev: &Arc<ClDevice>) {
    let mut r = dgatd::internal::Rng::new(0xe7e);
    let mut pick = |lo: u64, k: u64| (lo + r.next_u64() % k) as usize;
    let n = [pick(3, 3), pick(3, 3), pick(2, 3)];
    let (m, t, d, mut mat) = setup(jittered_box(n, 77, 0.25), Some(23));
    // σ* on about half the tets: the energy's F_new then comes from the primal update with
    // their loss factors, as on the host
    mat.sigma_m = (0..m.n_tets())
        .map(|_| {
            if r.uniform() < 0.5 {
                2.0 * r.uniform()
            } else {
                0.0
            }
        })
        .collect();
    let d_mag = Arc::new(dgatd::dga::Dga::assemble(&m, &t, &mat).unwrap());
    assert!(d_mag.mag.is_some());
    let d = Arc::new(d);
    for d in [d, d_mag] {
        energy_case::<T>(dev, &m, &t, d, &mut r);
    }
}

fn energy_case<T: dgatd::Real>(
    dev: &Arc<ClDevice>,
    m: &dgatd::Mesh,
    t: &dgatd::mesh::Topology,
    d: Arc<dgatd::dga::Dga>,
    r: &mut dgatd::internal::Rng,
) {
    let mag = d.mag.is_some();
    let (m, t) = (m, t);
    let (dt, _) = solver::time_step(&d, 0.9).unwrap();
    let w = Waveform {
        tau: 3.0 * dt,
        t0: 6.0 * dt,
    };
    let src = Source::new(m, t, &d, [0.5, 0.35, 0.3], [0.3, -0.2, 0.9]).unwrap();
    let ops = Arc::new(Operators::<T>::new(&d, dt, false));
    let mut c =
        CpuStepper::new(d.clone(), ops, DualForm::Factored, Some((&src, w)), vec![]).unwrap();
    let mut g =
        ClStepper::<T>::new(dev.clone(), d.clone(), DualForm::Factored, Some(&src), &[]).unwrap();
    g.set_time_step(dt, Some(w)).unwrap();
    let tol = if T::NAME == "f64" { 1e-12 } else { 1e-5 };
    let (u0, f0) = random_state(&d, r.next_u64());
    // slot-major U covers lossless media only
    let layouts = match mag {
        true => vec![ULayout::HalfEdge],
        false => vec![ULayout::HalfEdge, ULayout::SlotMajor],
    };
    for layout in layouts {
        for steps in [0, 40] {
            c.set_state(&u0, &f0).unwrap();
            g.set_state(&u0, &f0).unwrap();
            g.set_u_layout(layout).unwrap();
            c.advance(0, steps, &mut vec![]).unwrap();
            g.advance(0, steps, &mut vec![]).unwrap();
            let before = g.state().unwrap();
            let (wg, wc) = (g.energy().unwrap(), c.energy().unwrap());
            let e = (wg - wc).abs() / wc;
            eprintln!(
                "{} {} U, σ* {mag}, {steps} steps: energy {wg:e} vs CPU {wc:e} ({e:.1e})",
                T::NAME,
                layout.name()
            );
            assert!(e < tol, "{} {}: {e:e}", T::NAME, layout.name());
            assert_eq!(g.state().unwrap(), before, "the energy changed the state");
        }
    }
}

#[test]
fn device_energy_matches_the_cpu() {
    let Some(dev) = cl_device() else { return };
    let (a, b) = (device_energy_agrees::<f32>, device_energy_agrees::<f64>);
    f32_and_f64(&dev, "device energy", a, b);
}

#[test]
fn padding_tets_stay_zero_and_out_of_the_state() {
    let Some(dev) = cl_device() else { return };
    let (a, b) = (padding_stays_zero::<f32>, padding_stays_zero::<f64>);
    f32_and_f64(&dev, "tet padding", a, b);
}

/// The stepper's own slot-major `U` (`ULayout::SlotMajor`, the main job's default where it
/// applies) against the half-edge layout over a whole sourced run: the probe records, the
/// state, the energy and the mode-shape transforms agree to round-off (the same products in
/// the same order, bit for bit where the compiler contracts both kernels alike; a PoCL on
/// another CPU contracts them differently, so the bound is the whole-run rule of this file,
/// a few ulp per step growing like sqrt(steps): 32 ulp times sqrt(400), 1.4e-13 in f64 and
/// 7.6e-5 in f32, ten times the 1.4e-14 seen in f64 on such a CPU), on a jittered
/// box with random media and on the bundled coarse cylinder. Then what leaves its scope
/// returns the stepper to the half-edge layout with the state intact: another dual
/// variant, and a state with a nonzero value on a PEC half-edge; the CSR dual is refused.
fn slot_major_layout_agrees<T: dgatd::Real>(dev: &Arc<ClDevice>) {
    use dgatd::C64;
    use dgatd::backend::opencl::ULayout;
    let cases = [
        (
            jittered_box([5, 3, 4], 47, 0.25),
            Some(13),
            [0.41, 0.37, 0.29],
            vec![[0.2, 0.6, 0.4], [0.8, 0.2, 0.15]],
        ),
        (
            cylinder("cylinder_coarse.msh"),
            None,
            [0.6, 0.3, 0.24],
            vec![[-0.3, 0.5, 0.2], [0.4, -0.5, 0.3]],
        ),
    ];
    for (mesh, media, at, probe_at) in cases {
        let (m, t, d, _) = setup(mesh, media);
        let d = Arc::new(d);
        let (dt, _) = solver::time_step(&d, 0.95).unwrap();
        let w =
            Waveform::gaussian_derivative(2.99792458e8 / (2.0 * std::f64::consts::PI * 8.0 * dt));
        let probes: Vec<Probe> = probe_at
            .iter()
            .map(|&p| Probe::new(&m, &t, p).unwrap())
            .collect();
        let mk = |layout: ULayout| {
            let src = Source::new(&m, &t, &d, at, [0.3, -0.5, 0.8]).unwrap();
            let mut g = ClStepper::<T>::new(
                dev.clone(),
                d.clone(),
                DualForm::Factored,
                Some(&src),
                &probes,
            )
            .unwrap();
            g.set_time_step(dt, Some(w)).unwrap();
            assert_eq!(g.slot_major_refusal(), None);
            g.set_u_layout(layout).unwrap();
            assert_eq!(g.u_layout(), layout);
            g
        };
        let (mut a, mut b) = (mk(ULayout::HalfEdge), mk(ULayout::SlotMajor));
        assert!(b.name().ends_with("(slot-major U)") && !a.name().contains("slot"));
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        for g in [&mut a, &mut b] {
            g.dft_start(2).unwrap();
        }
        let (steps, chunk) = (400, 50);
        for k in (0..steps).step_by(chunk) {
            a.advance(k, chunk, &mut ra).unwrap();
            b.advance(k, chunk, &mut rb).unwrap();
            let ph = |x: f64| vec![C64::new(x.cos(), x.sin()), C64::new(0.5, -x)];
            for g in [&mut a, &mut b] {
                g.dft_add(&ph(k as f64 * 0.01), &ph(k as f64 * 0.02))
                    .unwrap();
            }
        }
        let peak = ra.iter().fold(0.0f64, |x, y| x.max(y.abs()));
        assert!(peak > 0.0, "the source reached no probe");
        let tol = 32.0 * T::EPS * (steps as f64).sqrt();
        let e = rel_err(&rb, &ra);
        let (sa, sb) = (a.state().unwrap(), b.state().unwrap());
        let es = rel_err(
            &[sb.0.clone(), sb.1].concat(),
            &[sa.0.clone(), sa.1].concat(),
        );
        let (ea, eb) = (a.energy().unwrap(), b.energy().unwrap());
        let planes = |g: &ClStepper<T>| -> Vec<f64> {
            let (x, y) = g.dft_take(1).unwrap();
            x.iter().chain(&y).flat_map(|z| [z.re, z.im]).collect()
        };
        let ed = rel_err(&planes(&b), &planes(&a));
        eprintln!(
            "slot-major layout {} ({} tets, {steps} steps): records {e:.2e}, state {es:.2e}, energy {:.2e}, transforms {ed:.2e}{}",
            T::NAME,
            d.n_tets,
            (eb - ea).abs() / ea,
            if ra == rb {
                " (records bit for bit)"
            } else {
                ""
            }
        );
        assert!(e <= tol && es <= tol && ed <= tol, "{e:e} {es:e} {ed:e}");
        assert!((eb - ea).abs() <= tol * ea, "energy {eb} vs {ea}");
        // a state given back reads back, in either layout
        let (u0, f0) = random_state(&d, 5);
        b.set_state(&u0, &f0).unwrap();
        assert_eq!(b.u_layout(), ULayout::SlotMajor);
        let (u1, f1) = b.state().unwrap();
        assert!(u1 == u0.iter().map(|&x| T::of(x).f64()).collect::<Vec<_>>());
        assert!(f1 == f0.iter().map(|&x| T::of(x).f64()).collect::<Vec<_>>());
        // a nonzero PEC value: back to the half-edge layout, the value kept
        let wall = (0..d.n_half())
            .find(|h| !d.meps.h.contains(&(*h as u32)))
            .expect("a PEC half-edge");
        let mut u2 = u0.clone();
        u2[wall] = 0.5;
        b.set_state(&u2, &f0).unwrap();
        assert_eq!(b.u_layout(), ULayout::HalfEdge);
        assert_eq!(b.state().unwrap().0[wall], 0.5);
        assert!(b.set_u_layout(ULayout::SlotMajor).is_err());
        // another variant: back to the half-edge layout with the state
        b.set_state(&u0, &f0).unwrap();
        b.set_u_layout(ULayout::SlotMajor).unwrap();
        b.advance(0, 3, &mut Vec::new()).unwrap();
        let before = b.state().unwrap();
        let v = Variants {
            block: BlockVariant::Vertex,
            ..Variants::default()
        };
        b.set_variants(v).unwrap();
        assert_eq!(b.u_layout(), ULayout::HalfEdge);
        assert!(b.state().unwrap() == before);
        assert!(b.set_u_layout(ULayout::SlotMajor).is_err());
    }
    // the CSR dual is refused
    let (_m, _t, d, _) = setup(jittered_box([3, 3, 2], 3, 0.2), None);
    let mut c = ClStepper::<T>::new(dev.clone(), Arc::new(d), DualForm::Csr, None, &[]).unwrap();
    let err = c.set_u_layout(ULayout::SlotMajor).unwrap_err().to_string();
    assert!(err.contains("factored dual"), "{err}");
}

#[test]
fn the_slot_major_layout_runs_like_the_half_edge_layout() {
    let Some(dev) = cl_device() else { return };
    let (a, b) = (
        slot_major_layout_agrees::<f32>,
        slot_major_layout_agrees::<f64>,
    );
    f32_and_f64(&dev, "slot-major layout", a, b);
}

#[test]
fn device_power_iteration_matches_the_host() {
    let Some(dev) = cl_device() else { return };
    if !dev.info.fp64 {
        return;
    }
    let (_m, _t, d, _) = setup(jittered_box([4, 4, 3], 32, 0.3), Some(2));
    let d = Arc::new(d);
    let host = solver::spectral_radius(&d, 60, 0x5eed);
    let mut s = ClStepper::<f64>::new(dev, d.clone(), DualForm::Factored, None, &[]).unwrap();
    s.set_time_step(0.5, None).unwrap(); // the result must not depend on the current Δt
    let devr = s.spectral_radius(60, 0x5eed).unwrap();
    // Same start vector and iteration; only summation order differs.
    eprintln!(
        "power iteration: device {devr} host {host} ({:.2e})",
        (devr - host).abs() / host
    );
    assert!(
        (devr - host).abs() < 1e-9 * host,
        "device {devr} host {host}"
    );
}

fn whole_run<T: dgatd::Real>(
    dev: &Arc<ClDevice>,
    dual: DualForm,
    steps: usize,
) -> (Vec<f64>, Vec<f64>, f64, f64) {
    let (m, t, d, _) = setup(cylinder("cylinder_coarse.msh"), None);
    let d = Arc::new(d);
    let (dt, _) = solver::time_step(&d, 0.95).unwrap();
    let w = Waveform::gaussian_derivative(150e6);
    let probes = vec![
        Probe::new(&m, &t, [-0.3, 0.5, 0.2]).unwrap(),
        Probe::new(&m, &t, [0.4, -0.5, 0.3]).unwrap(),
    ];
    // CPU reference
    let src = Source::new(&m, &t, &d, [0.6, 0.3, 0.24], [0.0, 0.0, 1.0]).unwrap();
    let ops = Arc::new(Operators::<T>::new(&d, dt, dual == DualForm::Csr));
    let mut c = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), probes.clone()).unwrap();
    let rc = solver::run(&mut c, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap();
    // Device: unit pattern, rescaled on the device.
    let src1 = Source::new(&m, &t, &d, [0.6, 0.3, 0.24], [0.0, 0.0, 1.0]).unwrap();
    let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), dual, Some(&src1), &probes).unwrap();
    g.set_time_step(dt, Some(w)).unwrap();
    let rg = solver::run(&mut g, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap();
    (
        rg.samples,
        rc.samples,
        g.energy().unwrap(),
        c.energy().unwrap(),
    )
}

#[test]
fn whole_runs_match_the_cpu() {
    let Some(dev) = cl_device() else { return };
    let duals = [DualForm::Factored, DualForm::Csr];
    if dev.info.fp64 {
        for dual in duals {
            let (g, c, eg, ec) = whole_run::<f64>(&dev, dual, 600);
            assert!(c.iter().map(|x| x.abs()).fold(0.0, f64::max) > 0.0);
            let e = rel_err(&g, &c);
            eprintln!(
                "whole run f64 {dual:?}: probe records differ by {e:.2e}, energy by {:.2e}",
                (eg - ec).abs() / ec
            );
            assert!(e < 1e-9, "f64 {dual:?}: probe records differ by {e:e}");
            assert!((eg - ec).abs() < 1e-9 * ec, "f64 energy {eg} vs {ec}");
        }
    }
    let (g, c, _, _) = whole_run::<f32>(&dev, DualForm::Factored, 600);
    let e = rel_err(&g, &c);
    eprintln!("whole run f32 factored: probe records differ by {e:.2e}");
    assert!(e < 1e-4, "f32: probe records differ by {e:e}");
}

/// What may differ on a device: nothing between two runs on the same device (every kernel
/// writes each output from one work-item in a fixed order; there are no atomics), and the
/// state of a resumed run equals the uninterrupted one bit for bit. Against the CPU the
/// difference is round-off of summation order and FMA contraction, bounded in
/// `whole_runs_match_the_cpu`; the energy and power-iteration reductions differ in order
/// (work-group trees) and are bounded there and in `device_power_iteration_matches_the_host`.
#[test]
fn device_runs_are_repeatable_and_resume_exactly() {
    let Some(dev) = cl_device() else { return };
    fn go<T: dgatd::Real>(dev: &Arc<ClDevice>) {
        let (m, t, d, _) = setup(cylinder("cylinder_coarse.msh"), None);
        let d = Arc::new(d);
        let (dt, _) = solver::time_step(&d, 0.95).unwrap();
        let w = Waveform::gaussian_derivative(150e6);
        let probes = vec![Probe::new(&m, &t, [-0.3, 0.5, 0.2]).unwrap()];
        let src1 = Source::new(&m, &t, &d, [0.6, 0.3, 0.24], [0.0, 0.0, 1.0]).unwrap();
        let mk = || {
            let mut g = ClStepper::<T>::new(
                dev.clone(),
                d.clone(),
                DualForm::Factored,
                Some(&src1),
                &probes,
            )
            .unwrap();
            g.set_time_step(dt, Some(w)).unwrap();
            g
        };
        let run = |g: &mut ClStepper<T>, first: usize, n: usize| {
            let mut s = vec![];
            g.advance(first, n, &mut s).unwrap();
            s
        };
        let (mut a, mut b) = (mk(), mk());
        let sa = run(&mut a, 0, 700);
        let sb = run(&mut b, 0, 700);
        assert!(sa.iter().any(|&x| x != 0.0));
        assert!(
            sa.iter().zip(&sb).all(|(x, y)| x.to_bits() == y.to_bits()),
            "two device runs differ"
        );
        assert_eq!(a.energy().unwrap().to_bits(), b.energy().unwrap().to_bits());
        // resume: state after 300 steps into a fresh stepper, then 400 more
        let mut c = mk();
        let s1 = run(&mut c, 0, 300);
        let (u, f) = c.state().unwrap();
        let mut r = mk();
        r.set_state(&u, &f).unwrap();
        let s2 = run(&mut r, 300, 400);
        let joined: Vec<f64> = s1.into_iter().chain(s2).collect();
        assert!(
            joined
                .iter()
                .zip(&sa)
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "resumed device run differs"
        );
        let (ua, _) = a.state().unwrap();
        let (ur, _) = r.state().unwrap();
        assert!(ua.iter().zip(&ur).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
    if dev.info.fp64 {
        go::<f64>(&dev);
    }
    go::<f32>(&dev);
}

/// A kernel that does not compile: the error names the source and options and carries the
/// compiler's build log (which names the undeclared identifier).
#[test]
fn build_failure_carries_the_build_log() {
    let Some(dev) = cl_device() else { return };
    let src = "__kernel void broken(__global float* x) { x[get_global_id(0)] = undeclared_thing; }";
    let e = match dev.build_source(src, "broken.cl", "-D REAL=float") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a broken kernel built"),
    };
    eprintln!("{e}");
    assert!(
        e.contains("build of broken.cl") && e.contains("-D REAL=float"),
        "{e}"
    );
    assert!(
        e.contains("build log") && e.contains("undeclared_thing"),
        "{e}"
    );
}

/// A device too small for the mesh (the real device with its memory figures lowered) is
/// refused before any allocation, with the figures; so is one allocation above the
/// maximum allocation size.
#[test]
fn too_small_devices_are_refused_with_figures() {
    let Some(dev) = cl_device() else { return };
    let (_m, _t, d, _) = setup(cylinder("cylinder_coarse.msh"), None);
    let d = Arc::new(d);
    let mut info = dev.info.clone();
    info.global_mem = 64 << 10;
    let small = ClDevice::open(info).unwrap();
    let e = match ClStepper::<f32>::new(small, d.clone(), DualForm::Factored, None, &[]) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a 64 KiB device accepted the mesh"),
    };
    eprintln!("{e}");
    assert!(
        e.contains("needs about") && e.contains("KiB") && e.contains("2609 tets"),
        "{e}"
    );
    let mut info = dev.info.clone();
    info.max_alloc = 4096;
    let narrow = ClDevice::open(info).unwrap();
    let e = match ClStepper::<f32>::new(narrow.clone(), d, DualForm::Csr, None, &[]) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a 4 KiB max allocation accepted the mesh"),
    };
    eprintln!("{e}");
    assert!(e.contains("maximum allocation"), "{e}");
    let e = narrow
        .alloc::<f64>(1 << 20, "test buffer")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("test buffer") && e.contains("maximum allocation"),
        "{e}"
    );
}

/// The DG kernels (flux, volume + lift + LSERK update, probes) against the CPU DG reference:
/// 60 steps of a seeded random field with a source, upwind and central, orders 1 and 3.
/// Tolerances as for the DGA runs: 1e-9 (f64), 1e-4 (f32) relative.
#[test]
fn dg_runs_match_the_cpu() {
    use dgatd::backend::Stepper;
    use dgatd::backend::cpu::DgCpuStepper;
    use dgatd::backend::opencl::DgClStepper;
    use dgatd::dg::{DgOperator, Flux};
    use dgatd::dg::{DgProbe, DgSource};
    let Some(dev) = cl_device() else { return };
    let m = jittered_box([2, 2, 2], 11, 0.2);
    let k = m.n_tets();
    let mut rng = dgatd::internal::Rng::new(5);
    let eps: Vec<f64> = (0..k).map(|_| 1.0 + rng.uniform()).collect();
    let mu: Vec<f64> = (0..k).map(|_| 1.0 + 0.5 * rng.uniform()).collect();
    for (order, flux) in [(1, Flux::Upwind), (3, Flux::Central), (3, Flux::Upwind)] {
        let op = Arc::new(DgOperator::new(&m, order, flux, &eps, &mu).unwrap());
        let (dt, _) = dgatd::dg::time_step(&op, 0.9);
        let src = DgSource {
            tet: 5,
            dir: [0.3, -0.2, 0.9],
            wave: Waveform::gaussian_derivative(3e8),
        };
        let probes = vec![
            DgProbe::new(&m, &op, [0.31, 0.42, 0.27]).unwrap(),
            DgProbe::new(&m, &op, [0.7, 0.2, 0.4]).unwrap(),
        ];
        let q0: Vec<f64> = (0..op.n_dofs()).map(|_| rng.sym()).collect();
        let mut c = DgCpuStepper::new(op.clone(), dt, Some(src.clone()), probes.clone());
        c.set_state(&q0, &[]).unwrap();
        let mut sc = vec![];
        c.advance(0, 60, &mut sc).unwrap();
        let (qc, _) = c.state().unwrap();
        let check = |name: &str, qg: Vec<f64>, sg: Vec<f64>, tol: f64| {
            let e = rel_err(&qg, &qc);
            let es = rel_err(&sg, &sc);
            eprintln!("DG N={order} {flux:?} {name}: field differs by {e:.2e}, probes by {es:.2e}");
            assert!(e < tol && es < tol, "{name}: {e:e} {es:e}");
        };
        if dev.info.fp64 {
            let mut g = DgClStepper::<f64>::new(
                dev.clone(),
                op.clone(),
                dt,
                Some(src.clone()),
                probes.clone(),
            )
            .unwrap();
            for u in DgUpdate::ALL {
                g.set_update(u).unwrap();
                g.set_state(&q0, &[]).unwrap();
                let mut sg = vec![];
                g.advance(0, 60, &mut sg).unwrap();
                check(&format!("f64 {}", u.name()), g.state().unwrap().0, sg, 1e-9);
            }
        }
        let mut g =
            DgClStepper::<f32>::new(dev.clone(), op.clone(), dt, Some(src), probes).unwrap();
        for u in DgUpdate::ALL {
            g.set_update(u).unwrap();
            g.set_state(&q0, &[]).unwrap();
            let mut sg = vec![];
            g.advance(0, 60, &mut sg).unwrap();
            check(&format!("f32 {}", u.name()), g.state().unwrap().0, sg, 1e-4);
        }
    }
}

/// The blocked DG updates (several tets per work-group, staged in local memory; the
/// operators also in local memory, the work-groups walking over chunks of tets) against the
/// node-per-work-item update, orders 1 to 4, on a box of random size with tets taken off its
/// end until their count is no multiple of any kernel's tets per work-group (so the last
/// work-group is partial): one stage from a seeded random field with a source, residual and
/// field within round-off (1e-13 f64 / 1e-5 f32 of the largest value: the kernels sum in
/// the same order, but the compiler may contract differently).
#[test]
fn dg_blocked_update_matches_the_node_update() {
    use dgatd::backend::Stepper;
    use dgatd::backend::opencl::DgClStepper;
    use dgatd::dg::DgSource;
    use dgatd::dg::{DgOperator, Flux};
    let Some(dev) = cl_device() else { return };
    let mut rng = dgatd::internal::Rng::new(77);
    let n = [3, 3, 1 + 2 * (rng.uniform() < 0.5) as usize];
    let full = jittered_box(n, 19, 0.25);
    // every form but the node kernel, the reference
    fn kernels() -> Vec<DgUpdate> {
        DgUpdate::ALL
            .into_iter()
            .filter(|&u| u != DgUpdate::Node)
            .collect()
    }
    // the tets per work-group of every kernel at `order` (they do not depend on the mesh)
    let groups = |order: usize| -> Vec<usize> {
        let one = jittered_box([1, 1, 1], 3, 0.0);
        let op =
            Arc::new(DgOperator::new(&one, order, Flux::Upwind, &[1.0; 6], &[1.0; 6]).unwrap());
        let mut g = vec![];
        if dev.info.fp64 {
            let s = DgClStepper::<f64>::new(dev.clone(), op.clone(), 1e-3, None, vec![]).unwrap();
            g.extend(kernels().into_iter().map(|u| s.tets_per_group(u)));
        }
        let s = DgClStepper::<f32>::new(dev.clone(), op, 1e-3, None, vec![]).unwrap();
        g.extend(kernels().into_iter().map(|u| s.tets_per_group(u)));
        g
    };
    fn one<T: dgatd::Real>(
        dev: &Arc<ClDevice>,
        op: &Arc<DgOperator>,
        src: &DgSource,
        q0: &[f64],
        tol: f64,
    ) {
        let mut g = DgClStepper::<T>::new(dev.clone(), op.clone(), 1e-3, Some(src.clone()), vec![])
            .unwrap();
        let groups: Vec<usize> = kernels().into_iter().map(|u| g.tets_per_group(u)).collect();
        let mut run = |u: DgUpdate| {
            g.set_update(u).unwrap();
            g.set_state(q0, &[]).unwrap();
            g.step(0.0).unwrap();
            g.state().unwrap().0
        };
        let node = run(DgUpdate::Node);
        for (u, kb) in kernels().into_iter().zip(groups) {
            let e = rel_err(&run(u), &node);
            eprintln!(
                "DG N={} {}: {} tets, {} {kb} per work-group, against node {e:.2e}",
                op.re.n,
                T::NAME,
                op.k,
                u.name()
            );
            assert!(kb > 0, "order {} should fit a work-group", op.re.n);
            assert!(
                !op.k.is_multiple_of(kb),
                "the last work-group should be partial"
            );
            assert!(e < tol, "{e:e}");
        }
    }
    for order in 1..=4 {
        let g = groups(order);
        let mut m = full.clone();
        while g.iter().any(|&kb| kb > 1 && m.n_tets().is_multiple_of(kb)) {
            m.tets.pop();
            m.tet_phys.pop();
            m.tet_ids.pop();
        }
        let k = m.n_tets();
        assert!(k + 6 > full.n_tets(), "{k} of {} tets left", full.n_tets());
        let eps: Vec<f64> = (0..k).map(|_| 1.0 + 3.0 * rng.uniform()).collect();
        let mu: Vec<f64> = (0..k).map(|_| 1.0 + rng.uniform()).collect();
        let op = Arc::new(DgOperator::new(&m, order, Flux::Upwind, &eps, &mu).unwrap());
        let src = DgSource {
            tet: (rng.uniform() * k as f64) as usize,
            dir: [0.3, -0.2, 0.9],
            wave: Waveform::gaussian_derivative(3e8),
        };
        let q0: Vec<f64> = (0..op.n_dofs()).map(|_| rng.sym()).collect();
        if dev.info.fp64 {
            one::<f64>(&dev, &op, &src, &q0, 1e-13);
        }
        one::<f32>(&dev, &op, &src, &q0, 1e-5);
    }
}

/// The DG spectral radius from the device kernels equals the CPU power iteration (same seed
/// and iterations) to round-off in f64, and leaves the device field zero.
#[test]
fn dg_device_spectral_radius_matches_the_cpu() {
    use dgatd::backend::Stepper;
    use dgatd::backend::opencl::DgClStepper;
    use dgatd::dg::{DgOperator, Flux};
    use dgatd::dg::{RHO_ITERS, RHO_SEED, spectral_radius};
    let Some(dev) = cl_device() else { return };
    if !dev.info.fp64 {
        eprintln!("SKIPPED: no fp64");
        return;
    }
    let m = jittered_box([2, 2, 2], 3, 0.2);
    let k = m.n_tets();
    let mut rng = dgatd::internal::Rng::new(8);
    let eps: Vec<f64> = (0..k).map(|_| 1.0 + rng.uniform()).collect();
    let op = Arc::new(DgOperator::new(&m, 2, Flux::Upwind, &eps, &vec![1.0; k]).unwrap());
    let host = spectral_radius(&op, RHO_ITERS, RHO_SEED);
    let mut g = DgClStepper::<f64>::new(dev.clone(), op.clone(), 0.0, None, vec![]).unwrap();
    let devr = g.spectral_radius(RHO_ITERS, RHO_SEED).unwrap();
    eprintln!("DG rho: host {host}, device {devr}");
    assert!(
        host > 0.0 && (devr - host).abs() < 1e-9 * host,
        "{devr} vs {host}"
    );
    assert!(g.state().unwrap().0.iter().all(|&x| x == 0.0));
}
