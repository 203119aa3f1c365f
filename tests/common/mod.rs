//! Shared fixtures for the integration tests.
#![allow(dead_code)]
use dgatd::dga::Dga;
use dgatd::internal::Rng;
use dgatd::mesh::{Mesh, Topology, box_mesh};
use dgatd::problem::Media;

/// A box mesh with interior nodes moved randomly (seeded), so no symmetry hides bugs.
pub fn jittered_box(n: [usize; 3], seed: u64, amp: f64) -> Mesh {
    let l = [1.0, 0.8, 0.6];
    let mut m = box_mesh(n, l);
    let mut r = Rng::new(seed);
    let h = [l[0] / n[0] as f64, l[1] / n[1] as f64, l[2] / n[2] as f64];
    for p in m.nodes.iter_mut() {
        let interior = (0..3).all(|c| p[c] > 1e-9 && p[c] < l[c] - 1e-9);
        if interior {
            for c in 0..3 {
                p[c] += amp * h[c] * r.sym();
            }
        }
    }
    m
}

pub fn mesh_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("meshes")
        .join(name)
}

pub fn cylinder(name: &str) -> Mesh {
    dgatd::mesh::read_gmsh(&mesh_path(name)).expect("bundled mesh reads")
}

/// Mesh, topology and assembled operators (vacuum, or random materials when `seed` is Some).
pub fn setup(m: Mesh, materials_seed: Option<u64>) -> (Mesh, Topology, Dga, Media) {
    let t = Topology::build(&m).unwrap();
    let mat = match materials_seed {
        None => Media::vacuum(m.n_tets()),
        Some(s) => {
            let mut r = Rng::new(s);
            Media::lossless(
                (0..m.n_tets()).map(|_| 1.0 + 3.0 * r.uniform()).collect(),
                (0..m.n_tets()).map(|_| 1.0 + 2.0 * r.uniform()).collect(),
            )
        }
    };
    let d = Dga::assemble(&m, &t, &mat).unwrap();
    (m, t, d, mat)
}

pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    let den = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    num / den
}

pub fn random_state(d: &Dga, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut r = Rng::new(seed);
    let mut u = vec![0.0; d.n_half()];
    for &h in &d.meps.h {
        u[h as usize] = r.sym();
    }
    let f = (0..d.n_dual()).map(|_| r.sym()).collect();
    (u, f)
}

/// K = Meps⁻¹ C̃ Mmu⁻¹ C as a dense matrix over the free half-edges (column j = K e_j),
/// applied through the CPU kernels with unit Δt; returns it with the free half-edge slots.
pub fn dense_k(d: &Dga) -> (Vec<usize>, nalgebra::DMatrix<f64>) {
    let free: Vec<usize> = d.meps.h.iter().map(|&h| h as usize).collect();
    let ops = dgatd::dga::Operators::<f64>::lossless(d, 1.0, false);
    let mut k = nalgebra::DMatrix::<f64>::zeros(free.len(), free.len());
    for (j, &h) in free.iter().enumerate() {
        let mut x = vec![0.0; d.n_half()];
        x[h] = 1.0;
        let mut f = vec![0.0; d.n_dual()];
        let mut c = vec![0.0; d.n_edges];
        let mut y = vec![0.0; d.n_half()];
        dgatd::backend::cpu::primal(&ops, &x, &mut f); // f = -P x
        dgatd::backend::cpu::circulations(&ops, &f, &mut c);
        dgatd::backend::cpu::vertex_blocks(&ops, &c, &mut y); // y = -K x
        for (i, &hh) in free.iter().enumerate() {
            k[(i, j)] = -y[hh];
        }
    }
    (free, k)
}

/// `Meps` as a dense matrix over the free half-edge slots `free` (the order of
/// [`dense_k`]).
pub fn dense_meps(d: &Dga, free: &[usize]) -> nalgebra::DMatrix<f64> {
    let nf = free.len();
    let pos: std::collections::HashMap<usize, usize> =
        free.iter().enumerate().map(|(i, &h)| (h, i)).collect();
    let mut meps = nalgebra::DMatrix::<f64>::zeros(nf, nf);
    for v in 0..d.meps.n_vertices() {
        let hs = d.meps.halves(v);
        let b = d.meps.block(v);
        for (a, &ha) in hs.iter().enumerate() {
            for (bb, &hb) in hs.iter().enumerate() {
                meps[(pos[&(ha as usize)], pos[&(hb as usize)])] = b[a * hs.len() + bb];
            }
        }
    }
    meps
}

/// The generalised problem `K x = λ x` (`Cᵀ Mmu⁻¹ C x = λ Meps x`) of [`dense_k`] in
/// symmetric form: with `Meps = L Lᵀ`, `A = L⁻¹ (Meps K) L⁻ᵀ` (symmetrised), whose eigenpairs
/// `(λ, y)` give `x = L⁻ᵀ y`. Returns the free half-edge slots, `A` and `L⁻¹`.
pub fn symmetric_k(d: &Dga) -> (Vec<usize>, nalgebra::DMatrix<f64>, nalgebra::DMatrix<f64>) {
    let (free, kmat) = dense_k(d);
    let meps = dense_meps(d, &free);
    let s = &meps * &kmat;
    let s = 0.5 * (&s + s.transpose());
    let l = meps.cholesky().unwrap().l();
    let linv = l.try_inverse().unwrap();
    let a = &linv * s * linv.transpose();
    let a = 0.5 * (&a + a.transpose());
    (free, a, linv)
}

/// The nonzero eigenvalues of K (above 1e-9 of the largest), ascending, by a dense solve.
pub fn k_eigenvalues(d: &Dga) -> Vec<f64> {
    let (_, a, _) = symmetric_k(d);
    let mut ev: Vec<f64> = a.symmetric_eigenvalues().iter().cloned().collect();
    ev.sort_by(|x, y| x.total_cmp(y));
    let lmax = ev[ev.len() - 1];
    ev.into_iter().filter(|&x| x > 1e-9 * lmax).collect()
}

/// The OpenCL device of the tests (`DGATD_TEST_DEVICE`, else the default); None, said loudly,
/// when there is none, and a panic then when `DGATD_REQUIRE_OPENCL=1`.
pub fn cl_device() -> Option<std::sync::Arc<dgatd::backend::opencl::ClDevice>> {
    use dgatd::backend::opencl::{ClDevice, select_device};
    let required = std::env::var("DGATD_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
    match select_device(std::env::var("DGATD_TEST_DEVICE").ok().as_deref()).and_then(ClDevice::open)
    {
        Ok(d) => Some(d),
        Err(e) if required => panic!("DGATD_REQUIRE_OPENCL=1 but no OpenCL device: {e}"),
        Err(e) => {
            eprintln!("\n*** SKIPPED: OpenCL test needs a device ({e}) ***\n");
            None
        }
    }
}

/// A 600-step pulse (Gaussian derivative at 300 MHz, a dipole at `src` along `dir`) on the
/// device against the CPU backend, both from the same operators: returns the relative
/// difference of the probe records, the final energies (device, CPU) and the largest energy
/// of the CPU run's checks.
pub fn device_vs_cpu<T: dgatd::Real>(
    dev: &std::sync::Arc<dgatd::backend::opencl::ClDevice>,
    m: &Mesh,
    d: &std::sync::Arc<Dga>,
    dual: dgatd::dga::DualForm,
    probes: &[dgatd::V3],
    src: dgatd::V3,
    dir: dgatd::V3,
) -> (f64, (f64, f64), f64) {
    use dgatd::backend::Stepper;
    use dgatd::backend::cpu::CpuStepper;
    use dgatd::backend::opencl::ClStepper;
    use dgatd::dga::{DualForm, Operators};
    use dgatd::dga::{Probe, Source};
    use dgatd::solver;
    let t = Topology::build(m).unwrap();
    let (dt, _) = solver::time_step(d, 0.95).unwrap();
    let w = dgatd::problem::Waveform::gaussian_derivative(300e6);
    let probes: Vec<Probe> = probes
        .iter()
        .map(|&p| Probe::new(m, &t, p).unwrap())
        .collect();
    let src = Source::new(m, &t, d, src, dir).unwrap();
    let ops = std::sync::Arc::new(Operators::<T>::new(d, dt, dual == DualForm::Csr));
    let n = probes.len();
    let mut c = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), probes.clone()).unwrap();
    let steps = 600;
    let rc = solver::run(&mut c, dt, steps, Some(w.end()), n, 5, &mut |_| {}).unwrap();
    let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), dual, Some(&src), &probes).unwrap();
    g.set_time_step(dt, Some(w)).unwrap();
    let rg = solver::run(&mut g, dt, steps, Some(w.end()), n, 5, &mut |_| {}).unwrap();
    let (eg, ec) = (g.energy().unwrap(), c.energy().unwrap());
    let largest = rc.energy.iter().map(|e| e.1).fold(ec, f64::max);
    (rel_err(&rg.samples, &rc.samples), (eg, ec), largest)
}

/// The walls `kinds` as boundary-condition entries.
pub fn walls_of(
    kinds: &[(&str, dgatd::problem::BoundaryKind)],
) -> std::collections::BTreeMap<String, dgatd::problem::Boundary> {
    kinds
        .iter()
        .map(|(n, k)| (n.to_string(), dgatd::problem::Boundary::of(*k)))
        .collect()
}

/// The operators of `mesh` with the given walls (absorbing faces as surface conductance).
pub fn assemble_walled(
    mesh: &Mesh,
    media: &Media,
    walls: &std::collections::BTreeMap<String, dgatd::problem::Boundary>,
) -> Dga {
    let topo = Topology::build(mesh).unwrap();
    let w = dgatd::problem::Walls::resolve(mesh, &topo, walls).unwrap();
    let mut d = Dga::assemble_with(mesh, &topo, media, &w.fixed_edges(&topo), false).unwrap();
    let (faces, y) = w.absorbing(&topo, media);
    d.add_surface(&dgatd::dga::surface_conductance(mesh, &topo, &faces, &y));
    d
}

/// `Σ x_k e^{-2πi f k dt}` as (re, im).
pub fn dft(x: &[f64], f: f64, dt_s: f64) -> (f64, f64) {
    let (mut re, mut im) = (0.0, 0.0);
    for (k, v) in x.iter().enumerate() {
        let ph = -2.0 * std::f64::consts::PI * f * k as f64 * dt_s;
        re += v * ph.cos();
        im += v * ph.sin();
    }
    (re, im)
}

/// `steps` leapfrog steps of Δt = `dt` on the CPU (f64, factored dual form) with the dipole
/// at `src` along `dir` driven by `wave` and E recorded at `probes`: the record and the
/// stepper (for its final state).
pub fn cpu_pulse(
    m: &Mesh,
    d: &std::sync::Arc<Dga>,
    dt: f64,
    steps: usize,
    (src, dir, wave): (dgatd::V3, dgatd::V3, dgatd::problem::Waveform),
    probes: &[dgatd::V3],
) -> (dgatd::solver::Record, dgatd::backend::cpu::CpuStepper<f64>) {
    use dgatd::dga::{DualForm, Operators};
    use dgatd::dga::{Probe, Source};
    let t = Topology::build(m).unwrap();
    let ops = std::sync::Arc::new(Operators::<f64>::new(d, dt, false));
    let src = Source::new(m, &t, d, src, dir).unwrap();
    let probes: Vec<Probe> = probes
        .iter()
        .map(|&p| Probe::new(m, &t, p).unwrap())
        .collect();
    let n = probes.len();
    let mut s = dgatd::backend::cpu::CpuStepper::new(
        d.clone(),
        ops,
        DualForm::Factored,
        Some((&src, wave)),
        probes,
    )
    .unwrap();
    let rec = dgatd::solver::run(&mut s, dt, steps, Some(wave.end()), n, 4, &mut |_| {}).unwrap();
    (rec, s)
}

/// Prints and asserts [`device_vs_cpu`]'s result: the probe records within `tol` (relative),
/// the final energies within `tol` of `scale`.
pub fn assert_device_agrees(label: &str, e: f64, (eg, ec): (f64, f64), scale: f64, tol: f64) {
    eprintln!(
        "{label}: probe records differ by {e:.2e}, final energy by {:.2e} of {scale:.3e} ({:.2e} of it left)",
        (eg - ec).abs() / scale,
        ec / scale
    );
    assert!(e < tol, "{label}: {e:e}");
    assert!(
        (eg - ec).abs() < tol * scale,
        "{label}: {eg} vs {ec} (scale {scale})"
    );
}

/// The Python that has Debian's `python3-gmsh` module (the Gmsh-meshed tests run it).
pub const PY: &str = "/usr/bin/python3";

/// Whether [`PY`] can import `gmsh`. Without it the calling test (`what`) says loudly that it
/// was skipped, or fails when `DGATD_REQUIRE_GMSH=1` (CI installs the module).
pub fn have_gmsh(what: &str) -> bool {
    let ok = std::process::Command::new(PY)
        .args(["-c", "import gmsh"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            std::env::var("DGATD_REQUIRE_GMSH").as_deref() != Ok("1"),
            "DGATD_REQUIRE_GMSH=1 but {PY} cannot import gmsh (apt-get install python3-gmsh)"
        );
        eprintln!("\n*** SKIPPED: Gmsh's Python module not found; {what} did not run ***\n");
    }
    ok
}
