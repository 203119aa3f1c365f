//! Criterion benches of the CPU reference paths: preprocessing (topology, dual complex,
//! mass matrices and inverses) per million tets, the three leapfrog kernels and a whole
//! step, and the spectrum. Run: `cargo bench --bench cpu`.
//! Box meshes are generated in-process (6 n³ tets), so nothing large is read.
#![allow(clippy::needless_range_loop)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dgatd::backend::cpu;
use dgatd::dga::Dga;
use dgatd::dga::Operators;
use dgatd::mesh::{Topology, box_mesh};
use dgatd::problem::Media;
use std::hint::black_box;
use std::time::Duration;

fn preprocessing(c: &mut Criterion) {
    let mut g = c.benchmark_group("preprocessing");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    for n in [20usize, 40] {
        let m = box_mesh([n, n, n], [1.0, 1.0, 1.0]);
        g.throughput(Throughput::Elements(m.n_tets() as u64));
        g.bench_function(format!("topology_{}tets", m.n_tets()), |b| {
            b.iter(|| black_box(Topology::build(&m).unwrap()))
        });
        let t = Topology::build(&m).unwrap();
        let mat = Media::vacuum(m.n_tets());
        g.bench_function(format!("assemble_{}tets", m.n_tets()), |b| {
            b.iter(|| black_box(Dga::assemble(&m, &t, &mat).unwrap()))
        });
    }
    g.finish();
}

/// The seed's CSR dual `Δt Meps⁻¹ C̃`: the hand-written per-vertex parallel builder of the
/// time loop against the same matrix as sprs triplet assembly and sparse products.
fn csr_assembly(c: &mut Criterion) {
    let mut g = c.benchmark_group("csr_dual_assembly");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    let m = box_mesh([26, 26, 26], [1.0, 1.0, 1.0]);
    let t = Topology::build(&m).unwrap();
    let d = Dga::assemble(&m, &t, &Media::vacuum(m.n_tets())).unwrap();
    g.throughput(Throughput::Elements(m.n_tets() as u64));
    g.bench_function(format!("hand_{}tets", m.n_tets()), |b| {
        b.iter(|| black_box(dgatd::dga::build_csr(&d, 1e-3)))
    });
    g.bench_function(format!("sprs_{}tets", m.n_tets()), |b| {
        b.iter(|| black_box(dgatd::dga::dual_matrix(&d, 1e-3)))
    });
    g.finish();
}

fn kernels(c: &mut Criterion) {
    let m = box_mesh([30, 30, 30], [1.0, 1.0, 1.0]);
    let t = Topology::build(&m).unwrap();
    let d = Dga::assemble(&m, &t, &Media::vacuum(m.n_tets())).unwrap();
    let mut g = c.benchmark_group(format!("step_{}tets", m.n_tets()));
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    let dofs = (d.n_dual() + d.n_free_half()) as u64;
    g.throughput(Throughput::Elements(dofs));
    fn both<T: dgatd::Real>(
        g: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
        d: &Dga,
    ) {
        let ops = Operators::<T>::new(d, 1e-3, true);
        let mut rng = dgatd::internal::Rng::new(3);
        let u: Vec<T> = (0..d.n_half()).map(|_| T::of(rng.sym())).collect();
        let mut f: Vec<T> = (0..d.n_dual()).map(|_| T::of(rng.sym())).collect();
        let mut uo = u.clone();
        let mut c = vec![T::zero(); d.n_edges];
        g.bench_function(format!("primal_{}", T::NAME), |b| {
            b.iter(|| cpu::primal(&ops, &u, &mut f))
        });
        g.bench_function(format!("dual_factored_{}", T::NAME), |b| {
            b.iter(|| {
                cpu::circulations(&ops, &f, &mut c);
                cpu::vertex_blocks(&ops, &c, &mut uo)
            })
        });
        g.bench_function(format!("dual_csr_{}", T::NAME), |b| {
            b.iter(|| cpu::dual_csr(&ops, &f, &mut uo))
        });
    }
    both::<f64>(&mut g, &d);
    both::<f32>(&mut g, &d);
    g.finish();
}

fn spectrum(c: &mut Criterion) {
    let sig: Vec<Vec<f64>> = (0..3)
        .map(|k| {
            (0..20000)
                .map(|i| ((i * (k + 3)) as f64 * 0.01).sin())
                .collect()
        })
        .collect();
    c.bench_function("spectrum_3x20000_pad8", |b| {
        b.iter(|| {
            let s = dgatd::spectrum::spectrum(&sig, 1e-10, 8);
            black_box(dgatd::spectrum::find_peaks(&s, 1e6, 4e9, 0.02))
        })
    });
}

criterion_group! {
    name = benches;
    // no plots: criterion's plotting backend needs system fonts (the embedded font serves
    // dgatd's own plots only)
    config = Criterion::default().without_plots();
    targets = preprocessing, csr_assembly, kernels, spectrum
}
criterion_main!(benches);
