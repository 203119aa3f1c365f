//! Cost of the conduction loss step (design note §12) against the lossless step: ms per
//! leapfrog step on a box mesh of 6 n³ tets with no conductor, a conductor filling the half
//! x < 0.5 m, and a conductor everywhere, for the CPU backend and (when a device is found)
//! the OpenCL backend, f64 and f32, factored and CSR dual. Writes
//! results/losses/bench_<label>.csv. Run:
//! `cargo run --release --example loss_bench -- [n] [steps] [label] [cpu|opencl|all]`
//! (defaults 24, 40, host, all). Rows are printed and written as they are measured.

use dgatd::backend::opencl::{ClDevice, select_device};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::mesh::{Topology, box_mesh};
use dgatd::problem::Media;
use dgatd::solver;
use std::sync::Arc;

mod step_bench;
use step_bench::{stepper, time_steps};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(24);
    let steps: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(40);
    let label = args.get(3).cloned().unwrap_or_else(|| "host".into());
    let which = args.get(4).cloned().unwrap_or_else(|| "all".into());
    if !["cpu", "opencl", "all"].contains(&which.as_str()) {
        return Err(format!("backends: expected cpu, opencl or all, got {which:?}").into());
    }
    let m = box_mesh([n, n, n], [1.0, 1.0, 1.0]);
    let t = Topology::build(&m)?;
    let nt = m.n_tets();
    let half: Vec<f64> = m
        .tets
        .iter()
        .map(|tv| {
            let x: f64 = tv.iter().map(|&v| m.nodes[v as usize][0]).sum::<f64>() / 4.0;
            if x < 0.5 { 0.3 } else { 0.0 }
        })
        .collect();
    let fills: Vec<(&str, Media)> = vec![
        ("lossless", Media::vacuum(nt)),
        (
            "half",
            Media {
                sigma: half,
                ..Media::vacuum(nt)
            },
        ),
        (
            "all",
            Media {
                sigma: vec![0.3; nt],
                ..Media::vacuum(nt)
            },
        ),
    ];
    let mut backends: Vec<(String, Option<Arc<ClDevice>>)> = vec![];
    if which != "opencl" {
        backends.push(("cpu".into(), None));
    }
    if which != "cpu" {
        let d = select_device(None).and_then(ClDevice::open)?;
        backends.push((format!("opencl:{}", d.info.name), Some(d)));
    }
    std::fs::create_dir_all("results/losses")?;
    let path = format!("results/losses/bench_{label}.csv");
    let mut w = csv::Writer::from_path(&path)?;
    w.write_record([
        "backend",
        "precision",
        "dual",
        "fill",
        "tets",
        "lossy_rows",
        "ms_per_step",
        "ratio_to_lossless",
    ])?;
    let dgas: Vec<(&str, Arc<Dga>)> = fills
        .iter()
        .map(|(name, media)| Ok((*name, Arc::new(Dga::assemble(&m, &t, media)?))))
        .collect::<Result<_, dgatd::Error>>()?;
    let (dt, _) = solver::time_step(&dgas[0].1, 0.95)?;
    let lossy_rows: Vec<usize> = dgas
        .iter()
        .map(|(_, d)| Operators::<f64>::new(d, dt, false).loss_h.len())
        .collect();
    println!("{nt} tets, {steps} steps per row");
    for (bname, dev) in &backends {
        for prec in ["f64", "f32"] {
            if prec == "f64" && dev.as_ref().is_some_and(|d| !d.info.fp64) {
                continue;
            }
            for dual in [DualForm::Factored, DualForm::Csr] {
                let mut base = f64::NAN;
                for ((fill, d), &rows) in dgas.iter().zip(&lossy_rows) {
                    let mut s = if prec == "f64" {
                        stepper::<f64>(d, dt, dual, dev.as_ref())?
                    } else {
                        stepper::<f32>(d, dt, dual, dev.as_ref())?
                    };
                    let ms = time_steps(s.as_mut(), steps)?;
                    if *fill == "lossless" {
                        base = ms;
                    }
                    println!(
                        "{bname:>24} {prec} {:>8} {fill:>8}: {ms:8.3} ms/step ({:.2}x), {rows} lossy rows",
                        dual.name(),
                        ms / base
                    );
                    w.write_record([
                        bname.clone(),
                        prec.into(),
                        dual.name().into(),
                        fill.to_string(),
                        nt.to_string(),
                        rows.to_string(),
                        format!("{ms:.4}"),
                        format!("{:.3}", ms / base),
                    ])?;
                    w.flush()?;
                }
            }
        }
    }
    w.flush()?;
    println!("wrote {path}");
    Ok(())
}
