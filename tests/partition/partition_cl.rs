//! The partitioned OpenCL stepper (feature `partition`): P ranks as threads of one process
//! (`LocalComm`), each with its own OpenCL context on the test device (PoCL in CI),
//! against the single-process CPU run, the partitioned CPU run and the single-device run.
//!
//! Tolerances (relative, 2-norm of the whole probe record): f64 1e-11 and f32 1e-4 against
//! the CPU runs, as in `tests/opencl/opencl.rs` for a single device (the device and the CPU differ
//! by contraction and summation order inside kernels, a few ulps per step that travel
//! through the leapfrog without growing; the measured values are printed: ~1e-14 in f64 and
//! ~1e-6 in f32 here). Against the single-device run of the same device the kernels' bodies
//! are the same, so the bound is 1e-12 in f64 and 1e-5 in f32, and one rank is bit for bit.
//!
//! Without a device the tests print SKIPPED, and fail when DGATD_REQUIRE_OPENCL=1.
//! Run: `cargo test --release --features partition --test partition partition_cl::`.
#![cfg(feature = "partition")]

use crate::common::{cylinder, jittered_box, rel_err, setup};
use dgatd::V3;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::{CpuKernels, CpuStepper};
use dgatd::backend::opencl::{ClDevice, ClStepper, DeviceInfo, select_device};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::dga::{Probe, Source};
use dgatd::mesh::{Mesh, Topology};
use dgatd::partition::PartBuilder;
use dgatd::partition::{ClPartStepper, Comm, HaloLists, LocalComm, Part, PartStepper, Partition};
use dgatd::problem::{Media, Waveform};
use dgatd::solver::{self, Record};
use dgatd::{Precision, Real};
use std::sync::Arc;

/// The test device (PoCL in CI), or None after a loud skip; a panic when
/// DGATD_REQUIRE_OPENCL=1 and there is none.
pub(crate) fn device_info() -> Option<DeviceInfo> {
    let required = std::env::var("DGATD_REQUIRE_OPENCL").as_deref() == Ok("1");
    match select_device(std::env::var("DGATD_TEST_DEVICE").ok().as_deref()) {
        Ok(d) => Some(d),
        Err(e) if required => panic!("DGATD_REQUIRE_OPENCL=1 but no OpenCL device: {e}"),
        Err(e) => {
            eprintln!("\n*** SKIPPED: partitioned OpenCL test needs a device ({e}) ***\n");
            None
        }
    }
}

fn at(mesh: &Mesh, frac: V3) -> V3 {
    let (lo, hi) = mesh.bbox();
    std::array::from_fn(|c| lo[c] + frac[c] * (hi[c] - lo[c]))
}

struct Case {
    mesh: Mesh,
    topo: Topology,
    dga: Dga,
    mat: Media,
    source: (V3, V3),
    probes: Vec<V3>,
}

impl Case {
    fn source(&self) -> Source {
        Source::located(&self.mesh, self.source.0, self.source.1).unwrap()
    }
    fn probes(&self) -> Vec<Probe> {
        self.probes
            .iter()
            .map(|&p| Probe::new(&self.mesh, &self.topo, p).unwrap())
            .collect()
    }
    fn parts(&self, np: usize) -> Vec<Part> {
        let fixed = &self.topo.boundary_edge;
        let p = Partition::metis(&self.mesh, &self.topo, None, np).unwrap();
        let h = HaloLists::build(&self.mesh, &self.topo, fixed, &p);
        let b = PartBuilder::new(&self.mesh, &self.topo, &self.mat, fixed, &p, &h);
        (0..np).map(|r| b.build(r).unwrap()).collect()
    }
}

fn wave() -> Waveform {
    Waveform::gaussian_derivative(300e6)
}

/// The single-process CPU run (f64).
fn cpu_single(c: &Case, dt: f64, steps: usize) -> (Record, (Vec<f64>, Vec<f64>)) {
    let d = Arc::new(c.dga.clone());
    let ops = Arc::new(Operators::<f64>::new(&d, dt, false));
    let src = Source::new(&c.mesh, &c.topo, &d, c.source.0, c.source.1).unwrap();
    let probes = c.probes();
    let mut s = CpuStepper::new(d, ops, DualForm::Factored, Some((&src, wave())), probes).unwrap();
    // the partitioned stepper computes with the reference kernels: compare like with like
    s.set_kernels(CpuKernels::Reference).unwrap();
    let rec = solver::run(&mut s, dt, steps, Some(wave().end()), 2, 10, &mut |_| {}).unwrap();
    (rec, s.state().unwrap())
}

/// The single-device run in precision T.
fn device_single<T: Real>(c: &Case, info: &DeviceInfo, dt: f64, steps: usize) -> Record {
    let d = Arc::new(c.dga.clone());
    let src = Source::new(&c.mesh, &c.topo, &d, c.source.0, c.source.1).unwrap();
    let dev = ClDevice::open(info.clone()).unwrap();
    let mut s = ClStepper::<T>::new(dev, d, DualForm::Factored, Some(&src), &c.probes()).unwrap();
    s.set_time_step(dt, Some(wave())).unwrap();
    solver::run(&mut s, dt, steps, Some(wave().end()), 2, 10, &mut |_| {}).unwrap()
}

struct RankOut {
    rec: Record,
    state: (Vec<f64>, Vec<f64>),
    rho: f64,
    probes: Vec<usize>,
    halo_sent: usize,
}

/// The partitioned device run in precision T on `np` ranks (threads), each with its own
/// context on the device.
fn device_parts<T: Real>(
    c: &Case,
    parts: &[Part],
    info: &DeviceInfo,
    dt: f64,
    steps: usize,
) -> Vec<RankOut> {
    let (src, probes) = (c.source(), c.probes());
    LocalComm::run(parts.len(), |comm| {
        let part = Arc::new(parts[comm.rank()].clone());
        let dga = Arc::new(part.assemble().unwrap());
        let dev = ClDevice::open(info.clone()).unwrap();
        let mut s = ClPartStepper::<T, _>::new(comm, part, dga, dev, Some(&src), &probes).unwrap();
        let rho = s.spectral_radius(60, 0x5eed).unwrap();
        s.set_time_step(dt, Some(wave())).unwrap();
        // lossless media: the ranks store U slot-major, ghosts in slots of their own
        assert!(s.name().contains("slot-major U"), "{}", s.name());
        let rec = solver::run(&mut s, dt, steps, Some(wave().end()), 2, 10, &mut |_| {}).unwrap();
        RankOut {
            state: s.state().unwrap(),
            rec,
            rho,
            probes: s.owned_probes(),
            halo_sent: s.halo_values_sent(),
        }
    })
}

/// The partitioned CPU run (f64).
fn cpu_parts(c: &Case, parts: &[Part], dt: f64, steps: usize) -> Record {
    let (src, probes) = (c.source(), c.probes());
    LocalComm::run(parts.len(), |comm| {
        let part = Arc::new(parts[comm.rank()].clone());
        let dga = Arc::new(part.assemble().unwrap());
        let mut s =
            PartStepper::<f64, _>::new(comm, part, dga, dt, Some((&src, wave())), &probes).unwrap();
        solver::run(&mut s, dt, steps, Some(wave().end()), 2, 10, &mut |_| {}).unwrap()
    })
    .remove(0)
}

fn max_energy_diff(a: &Record, b: &Record) -> f64 {
    assert_eq!(a.energy.len(), b.energy.len());
    a.energy
        .iter()
        .zip(&b.energy)
        .map(|(x, y)| {
            assert_eq!(x.0, y.0);
            ((x.1 - y.1) / y.1).abs()
        })
        .fold(0.0, f64::max)
}

fn check<T: Real>(c: &Case, info: &DeviceInfo, nps: &[usize], steps: usize) {
    let (tol_cpu, tol_dev) = if T::NAME == "f64" {
        (1e-11, 1e-12)
    } else {
        (1e-4, 1e-5)
    };
    let (dt, _) = solver::time_step(&c.dga, 0.95).unwrap();
    let rho = solver::spectral_radius(&c.dga, 60, 0x5eed);
    let (single, state) = cpu_single(c, dt, steps);
    let dev1 = device_single::<T>(c, info, dt, steps);
    assert!(
        single.samples.iter().any(|&x| x != 0.0),
        "the pulse reaches the probes"
    );
    let mut idle = false;
    for &np in nps {
        let parts = c.parts(np);
        let cpu_p = cpu_parts(c, &parts, dt, steps);
        assert!(
            cpu_p.samples == single.samples,
            "the CPU partitioned run is bit for bit"
        );
        let out = device_parts::<T>(c, &parts, info, dt, steps);
        for (r, o) in out.iter().enumerate() {
            assert_eq!(o.rec.samples.len(), single.samples.len());
            let e_cpu = rel_err(&o.rec.samples, &single.samples);
            let e_dev = rel_err(&o.rec.samples, &dev1.samples);
            let e_state = rel_err(&o.state.0, &state.0).max(rel_err(&o.state.1, &state.1));
            let de = max_energy_diff(&o.rec, &single);
            let bits = o
                .rec
                .samples
                .iter()
                .zip(&dev1.samples)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            if r == 0 {
                eprintln!(
                    "{} {} P={np}: probes vs CPU {e_cpu:.2e}, vs single device {e_dev:.2e} (bit for bit: {bits}), state {e_state:.2e}, energy {de:.2e}, rho {:.2e}, halo values sent by rank 0 per step {}",
                    c.mesh.source,
                    T::NAME,
                    ((o.rho - rho) / rho).abs(),
                    o.halo_sent
                );
            }
            assert!(e_cpu < tol_cpu, "{} P={np} rank {r}: {e_cpu:e}", T::NAME);
            assert!(
                e_state < tol_cpu,
                "{} P={np} rank {r}: state {e_state:e}",
                T::NAME
            );
            assert!(de < tol_cpu, "{} P={np} rank {r}: energy {de:e}", T::NAME);
            assert!(e_dev < tol_dev, "{} P={np} rank {r}: {e_dev:e}", T::NAME);
            // the device power iteration in precision T
            assert!(
                ((o.rho - rho) / rho).abs() < 10.0 * tol_cpu,
                "rho {}",
                o.rho
            );
            // every rank sees the same record
            assert!(o.rec.samples == out[0].rec.samples);
            if o.probes.is_empty() {
                idle = true;
            }
            assert!(np == 1 || o.halo_sent > 0);
        }
        let mut owned: Vec<usize> = out.iter().flat_map(|o| o.probes.clone()).collect();
        owned.sort_unstable();
        assert_eq!(owned, (0..c.probes.len()).collect::<Vec<_>>());
        if np == 1 {
            // one rank runs the single device's kernels in the same order
            assert!(
                out[0]
                    .rec
                    .samples
                    .iter()
                    .zip(&dev1.samples)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "one rank equals the single-device run bit for bit"
            );
        }
    }
    assert!(nps == [1] || idle, "some rank records no probe");
}

fn box_case() -> Case {
    let (mesh, topo, dga, mat) = setup(jittered_box([7, 5, 4], 4321, 0.3), Some(17));
    Case {
        source: (at(&mesh, [0.37, 0.41, 0.52]), [0.2, 0.3, 1.0]),
        probes: vec![at(&mesh, [0.71, 0.23, 0.44]), at(&mesh, [0.18, 0.66, 0.27])],
        mesh,
        topo,
        dga,
        mat,
    }
}

fn fp64(info: &DeviceInfo) -> bool {
    if !info.fp64 {
        eprintln!("*** SKIPPED f64: {} has no fp64 ***", info.name);
    }
    info.fp64
}

#[test]
fn partitioned_device_run_f64_matches_cpu_and_single_device() {
    let Some(info) = device_info() else { return };
    if fp64(&info) {
        check::<f64>(&box_case(), &info, &[1, 2, 3], 300);
    }
}

#[test]
fn partitioned_device_run_f32_matches_cpu_and_single_device() {
    let Some(info) = device_info() else { return };
    check::<f32>(&box_case(), &info, &[2, 3], 300);
}

#[test]
fn partitioned_device_run_on_the_coarse_cylinder() {
    let Some(info) = device_info() else { return };
    if !fp64(&info) {
        return;
    }
    let (mesh, topo, dga, mat) = setup(cylinder("cylinder_coarse.msh"), None);
    let c = Case {
        source: (at(&mesh, [0.62, 0.45, 0.5]), [0.0, 0.0, 1.0]),
        probes: vec![at(&mesh, [0.31, 0.57, 0.41]), at(&mesh, [0.55, 0.72, 0.63])],
        mesh,
        topo,
        dga,
        mat,
    };
    check::<f64>(&c, &info, &[3], 200);
}

#[test]
fn device_ranks_resume_bit_for_bit_and_gather_on_rank_zero() {
    // A run cut at step 130 and continued by fresh steppers from the gathered global state
    // equals the uninterrupted run; the state gathered on rank 0 alone is the same.
    let Some(info) = device_info() else { return };
    let c = box_case();
    let parts = c.parts(3);
    let (dt, _) = solver::time_step(&c.dga, 0.9).unwrap();
    let (src, probes) = (c.source(), c.probes());
    let go = |p: Precision| {
        let out = LocalComm::run(3, |comm| {
            let part = Arc::new(parts[comm.rank()].clone());
            let dga = Arc::new(part.assemble().unwrap());
            let make = |c: LocalComm| -> Box<dyn Stepper> {
                let dev = ClDevice::open(info.clone()).unwrap();
                let mut s: Box<dyn Stepper> = if p == Precision::F64 {
                    let mut s = ClPartStepper::<f64, _>::new(
                        c,
                        part.clone(),
                        dga.clone(),
                        dev,
                        Some(&src),
                        &probes,
                    )
                    .unwrap();
                    s.set_time_step(dt, Some(wave())).unwrap();
                    Box::new(s)
                } else {
                    let mut s = ClPartStepper::<f32, _>::new(
                        c,
                        part.clone(),
                        dga.clone(),
                        dev,
                        Some(&src),
                        &probes,
                    )
                    .unwrap();
                    s.set_time_step(dt, Some(wave())).unwrap();
                    Box::new(s)
                };
                s.advance(0, 0, &mut vec![]).unwrap();
                s
            };
            let mut whole = make(comm.clone());
            let mut a = Vec::new();
            whole.advance(0, 300, &mut a).unwrap();
            let mut first = make(comm.clone());
            let mut b = Vec::new();
            first.advance(0, 130, &mut b).unwrap();
            let (u, f) = first.state().unwrap();
            let root = first.gathered_state().unwrap();
            let mut second = make(comm.clone());
            second.set_state(&u, &f).unwrap();
            second.advance(130, 170, &mut b).unwrap();
            let ws = whole.state().unwrap();
            let ss = second.state().unwrap();
            (comm.rank(), a, b, ws, ss, root.map(|r| r == (u, f)))
        });
        for (r, a, b, ws, ss, root) in out {
            assert!(a.iter().any(|&x| x != 0.0));
            assert!(a == b && ws == ss, "{p:?} rank {r}: resumed run differs");
            assert_eq!(root, (r == 0).then_some(true), "rank {r}: gathered state");
        }
    };
    if info.fp64 {
        go(Precision::F64);
    }
    go(Precision::F32);
}

#[test]
fn a_device_rank_with_no_tetrahedra_takes_part() {
    let Some(info) = device_info() else { return };
    if !fp64(&info) {
        return;
    }
    let c = box_case();
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
    let fixed = &c.topo.boundary_edge;
    let p = Partition::from_tet_parts(&c.mesh, &c.topo, tet_part, vec![1; c.mesh.n_tets()], 3);
    let h = HaloLists::build(&c.mesh, &c.topo, fixed, &p);
    let b = PartBuilder::new(&c.mesh, &c.topo, &c.mat, fixed, &p, &h);
    let parts: Vec<Part> = (0..3).map(|r| b.build(r).unwrap()).collect();
    assert_eq!(parts[1].mesh.n_tets(), 0);
    let (dt, _) = solver::time_step(&c.dga, 0.9).unwrap();
    let (single, _) = cpu_single(&c, dt, 150);
    for o in device_parts::<f64>(&c, &parts, &info, dt, 150) {
        let e = rel_err(&o.rec.samples, &single.samples);
        assert!(e < 1e-11, "{e:e}");
    }
    // the distributed CPU power iteration agrees with the device one
    let rho_cpu = LocalComm::run(3, |comm| {
        let part = Arc::new(parts[comm.rank()].clone());
        let dga = part.assemble().unwrap();
        dgatd::partition::spectral_radius(&comm, &part, &dga, 60, 0x5eed).unwrap()
    });
    let rho = solver::spectral_radius(&c.dga, 60, 0x5eed);
    assert!(((rho_cpu[0] - rho) / rho).abs() < 1e-10);
}
