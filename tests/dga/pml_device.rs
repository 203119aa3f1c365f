//! Perfectly matched layers on the OpenCL backend against the CPU reference
//! (`src/backend/opencl/pml.rs`, `cl/dga/pml.cl`; the electric side in the dispersive
//! kernels): a box of seeded random cell sizes and random interior ε and μ, a Drude
//! region inside, a PML on all six faces (faces, edges and corners of the stretching), a
//! source and probes at generic points; the same operators stepped on the device and on
//! the CPU in f64 and f32, both dual forms. Then a checkpointed run on the device resumes
//! with the record of the run that never stopped.

use super::common::{cl_device, rel_err};
use super::pml::centroid;
use dgatd::Real;
use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::backend::opencl::{ClDevice, ClStepper};
use dgatd::dga::{Dga, DualForm, Operators, Probe, Source};
use dgatd::internal::Rng;
use dgatd::mesh::{Mesh, Topology, box_mesh};
use dgatd::problem::pml::Stretch;
use dgatd::problem::{Media, Pole, Waveform};
use std::sync::Arc;

/// Cells per axis, of which `L` on each side are layer.
const N: [usize; 3] = [11, 9, 10];
const L: usize = 3;

/// The box (centred on the origin, cell sizes drawn from `seed`), its media with the PML,
/// and the operators.
fn problem(seed: u64, drude: bool) -> (Mesh, Arc<Dga>) {
    let mut r = Rng::new(seed);
    let h: Vec<f64> = (0..3).map(|_| 0.03 + 0.02 * r.uniform()).collect();
    let len: [f64; 3] = std::array::from_fn(|k| N[k] as f64 * h[k]);
    let mut m = box_mesh(N, len);
    for p in &mut m.nodes {
        for k in 0..3 {
            p[k] -= 0.5 * len[k];
        }
    }
    let lim: [f64; 3] = std::array::from_fn(|k| 0.5 * len[k] - L as f64 * h[k]);
    let in_layer: Vec<bool> = (0..m.n_tets())
        .map(|n| (0..3).any(|k| centroid(&m, n)[k].abs() > lim[k]))
        .collect();
    let t = m.n_tets();
    let mut media = Media::lossless(
        (0..t)
            .map(|n| {
                if in_layer[n] {
                    1.0
                } else {
                    1.0 + 2.0 * r.uniform()
                }
            })
            .collect(),
        (0..t)
            .map(|n| if in_layer[n] { 1.0 } else { 1.0 + r.uniform() })
            .collect(),
    );
    // a Drude region in the interior (the real dispersive media come before the layer's
    // pseudo-materials)
    if drude {
        media.disp = (0..t)
            .map(|n| {
                let c = centroid(&m, n);
                u16::from(!in_layer[n] && c[0] < -0.2 * lim[0] && c[1] > 0.0)
            })
            .collect();
        media.poles = vec![(
            "drude".into(),
            vec![Pole::Drude {
                f_p: 6e8,
                gamma: 5e7,
            }],
        )];
    }
    let mut st = Stretch::default();
    st.add_layer(&m, &in_layer, &media.eps, &media.mu, 3.0, 1e-6, None, "pml")
        .unwrap();
    media.pml = Some(st);
    let topo = Topology::build(&m).unwrap();
    let d = Dga::assemble(&m, &topo, &media).unwrap();
    assert!(d.mpml.is_some());
    assert_eq!(d.disp.as_ref().map(|x| x.n_media), Some(usize::from(drude)));
    (m, Arc::new(d))
}

/// The CPU and the device run of `steps` steps: the relative difference of the probe
/// records, of the layer's magnetic states, and of the final energies.
fn device_and_cpu<T: Real>(
    dev: &Arc<ClDevice>,
    dual: DualForm,
    steps: usize,
    drude: bool,
) -> [f64; 3] {
    let (m, d) = problem(4501, drude);
    let t = Topology::build(&m).unwrap();
    let (dt, _) = dgatd::solver::time_step(&d, 0.95).unwrap();
    let w = Waveform::gaussian_derivative(1.2e9);
    let probes: Vec<Probe> = [[0.043, -0.031, 0.027], [-0.061, 0.052, -0.018]]
        .iter()
        .map(|&p| Probe::new(&m, &t, p).unwrap())
        .collect();
    let src = Source::new(&m, &t, &d, [0.017, 0.011, -0.009], [0.3, 0.5, 0.8]).unwrap();
    let ops = Arc::new(Operators::<T>::new(&d, dt, dual == DualForm::Csr));
    let mag = ops.mpml.as_ref().map_or(0, |m| m.n_state() + m.n_g());
    assert!(mag > 0, "no magnetic layer terms");
    let mut c = CpuStepper::new(d.clone(), ops, dual, Some((&src, w)), probes.clone()).unwrap();
    let run = |s: &mut dyn Stepper| {
        dgatd::solver::run(s, dt, steps, Some(w.end()), 2, 5, &mut |_| {}).unwrap()
    };
    let rc = run(&mut c);
    let mut g = ClStepper::<T>::new(dev.clone(), d.clone(), dual, Some(&src), &probes).unwrap();
    g.set_time_step(dt, Some(w)).unwrap();
    let rg = run(&mut g);
    let peak = rc.samples.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
    assert!(peak > 0.0, "the CPU record is all zero");
    let (ag, ac) = (g.aux_state().unwrap(), c.aux_state().unwrap());
    assert_eq!(ag.len(), ac.len());
    // the pulse reached the layer: its magnetic poles hold a state
    let tail = &ac[ac.len() - mag..];
    assert!(
        tail.iter().any(|&x| x != 0.0),
        "the magnetic poles never moved"
    );
    let (eg, ec) = (g.energy().unwrap(), c.energy().unwrap());
    [
        rel_err(&rg.samples, &rc.samples),
        rel_err(&ag, &ac),
        (eg - ec).abs() / ec.abs().max(f64::MIN_POSITIVE),
    ]
}

/// The layer on the device steps like the CPU reference: probe records to 1e-9 (f64) and
/// 1e-4 (f32), relative; the dispersive and magnetic pole states to 1e-6 in f64 (the Drude
/// pole's double root at z = 1 lets round-off drift in its states, tests/dga/dispersion.rs);
/// energies to the same tolerance as the records (computed on the host with the Drude
/// region, on the device without it).
#[test]
fn the_pml_on_opencl_matches_the_cpu() {
    let Some(dev) = cl_device() else { return };
    // (precision, dual, tolerance, with the Drude region: the energy on the host; without
    // it on the device, the layer's poles carrying no energy of their own)
    let mut cases = vec![];
    if dev.info.fp64 {
        cases.push(("f64", DualForm::Factored, 1e-9, true));
        cases.push(("f64", DualForm::Csr, 1e-9, true));
        cases.push(("f64", DualForm::Factored, 1e-9, false));
    }
    cases.push(("f32", DualForm::Factored, 1e-4, true));
    cases.push(("f32", DualForm::Csr, 1e-4, true));
    cases.push(("f32", DualForm::Factored, 1e-4, false));
    for (p, dual, tol, drude) in cases {
        let [e, es, ee] = match p {
            "f64" => device_and_cpu::<f64>(&dev, dual, 500, drude),
            _ => device_and_cpu::<f32>(&dev, dual, 500, drude),
        };
        eprintln!(
            "{p} {}{}: probe records differ by {e:.2e}, pole states by {es:.2e}, energy by {ee:.2e}",
            dual.name(),
            if drude { ", Drude region" } else { "" }
        );
        assert!(e < tol, "{p} {}: records {e:e}", dual.name());
        assert!(
            p == "f32" || es < 1e-6,
            "{p} {}: states {es:e}",
            dual.name()
        );
        assert!(ee < tol, "{p} {}: energy {ee:e}", dual.name());
    }
}

/// A PML run on the device through the configuration, interrupted at step 300 (the
/// checkpoint of step 200 is left) and resumed, ends with the probe record of the run that
/// never stopped, byte for byte: the layer's magnetic pole states travel in the checkpoint
/// beside the electric ones.
#[test]
fn a_pml_run_on_opencl_resumes_bit_for_bit() {
    if cl_device().is_none() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_dgatd");
    let dir = std::env::temp_dir().join(format!("dgatd-pml-ck-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("job.toml");
    std::fs::write(
        &cfg,
        "ball = \"3:sphere=0.1,air=0.3@2,pml=0.5@2\"\nsteps = 500\ncheckpoint_steps = 200\n\
         source = [0.043, 0.011, 0.017]\nsource_dir = [0.0, 1.0, 0.0]\n\
         probe = [[0.031, -0.022, 0.013], [-0.047, 0.021, -0.019]]\nf_peak = 4e8\nfmax = 9e8\n\
         backend = \"opencl\"\nenergy_checks = 0\n[materials.sphere]\neps_r = 20\n\
         [materials.pml]\npml = true\n",
    )
    .unwrap();
    let run = |out: &std::path::Path, fault: Option<&str>| {
        let mut c = std::process::Command::new(bin);
        c.env_remove("DGATD_FAULT_AT_STEP");
        if let Some(k) = fault {
            c.env("DGATD_FAULT_AT_STEP", k);
        }
        c.args(["resonator", "--quiet", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let (full, cut) = (dir.join("full"), dir.join("cut"));
    let o = run(&full, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&cut, Some("300"));
    assert!(!o.status.success(), "the fault did not stop the run");
    let ck = dgatd::solver::Checkpoint::read(&cut).unwrap();
    assert_eq!(ck.done, 200);
    assert!(
        ck.aux.iter().any(|&x| x != 0.0),
        "no pole state in the checkpoint"
    );
    let o = std::process::Command::new(bin)
        .env_remove("DGATD_FAULT_AT_STEP")
        .args(["resonator", "--quiet", "--resume"])
        .arg(&cut)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |d: &std::path::Path| std::fs::read_to_string(d.join("probe.csv")).unwrap();
    assert!(read(&full) == read(&cut), "the resumed record differs");
    let _ = std::fs::remove_dir_all(&dir);
}
