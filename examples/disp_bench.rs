//! Cost of the dispersive step (design note §13, issue 16) against the non-dispersive one:
//! ms per leapfrog step on a box mesh of 6 n³ tets with no dispersive tet, one Debye pole,
//! and two Lorentz pole pairs (the seed's 4th-order case) on 10%, 50% and 100% of the tets
//! (the slab x < fraction), with the byte model of the extra kernels
//! ([`dgatd::cost::disp_bytes`]) and the bandwidth they reach. Writes
//! `results/dispersive/bench_<label>.csv`. Run:
//! `cargo run --release --example disp_bench -- [n] [steps] [label] [cpu|opencl] [f64|f32|both] [factored|csr|both]`
//! (defaults 24, 40, host, opencl, both, factored). Rows are printed and written as measured.

use dgatd::backend::Stepper;
use dgatd::backend::opencl::{ClDevice, select_device};
use dgatd::dga::Dga;
use dgatd::dga::operators::{DualForm, Operators};
use dgatd::mesh::{Topology, generate::box_mesh};
use dgatd::problem::Media;
use dgatd::problem::dispersion::Pole;
use dgatd::{Real, solver};
use std::sync::Arc;

mod step_bench;
use step_bench::{stepper, time_steps};

/// The stepper of [`stepper`] and the modelled bytes per step of its dispersive kernels
/// ([`dgatd::cost::disp_bytes`], from the host operators' counts).
fn with_extra<T: Real>(
    d: &Arc<Dga>,
    dt: f64,
    dual: DualForm,
    dev: Option<&Arc<ClDevice>>,
) -> Result<(Box<dyn Stepper>, f64), dgatd::Error> {
    let extra = Operators::<T>::new(d, dt, false)
        .disp
        .as_ref()
        .map(|x| dgatd::cost::disp_bytes(&x.counts(), std::mem::size_of::<T>()))
        .unwrap_or(0.0);
    Ok((stepper::<T>(d, dt, dual, dev)?, extra))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let n: usize = arg(1, "24").parse()?;
    let steps: usize = arg(2, "40").parse()?;
    let label = arg(3, "host");
    let which = arg(4, "opencl");
    let precs: Vec<&str> = match arg(5, "both").as_str() {
        "both" => vec!["f64", "f32"],
        "f64" => vec!["f64"],
        "f32" => vec!["f32"],
        p => return Err(format!("precision: f64, f32 or both, got {p:?}").into()),
    };
    let duals: Vec<DualForm> = match arg(6, "factored").as_str() {
        "both" => vec![DualForm::Factored, DualForm::Csr],
        "factored" => vec![DualForm::Factored],
        "csr" => vec![DualForm::Csr],
        d => return Err(format!("dual: factored, csr or both, got {d:?}").into()),
    };
    let dev = match which.as_str() {
        "cpu" => None,
        "opencl" => Some(select_device(None).and_then(ClDevice::open)?),
        b => return Err(format!("backend: cpu or opencl, got {b:?}").into()),
    };
    let bname = dev
        .as_ref()
        .map_or("cpu".to_string(), |d| format!("opencl:{}", d.info.name));
    let m = box_mesh([n, n, n], [1.0, 1.0, 1.0]);
    let t = Topology::build(&m)?;
    let nt = m.n_tets();
    let centre_x: Vec<f64> = m
        .tets
        .iter()
        .map(|tv| tv.iter().map(|&v| m.nodes[v as usize][0]).sum::<f64>() / 4.0)
        .collect();
    let debye = vec![Pole::Debye {
        delta_eps: 2.0,
        tau: 1e-10,
    }];
    let lorentz = vec![
        Pole::Lorentz {
            delta_eps: 1.0,
            f_0: 2e8,
            delta: 1e6,
        },
        Pole::Lorentz {
            delta_eps: 0.5,
            f_0: 4e8,
            delta: 2e6,
        },
    ];
    let fill = |poles: &[Pole], frac: f64| {
        let mut md = Media::vacuum(nt);
        md.disp = centre_x
            .iter()
            .map(|&x| if x < frac { 1 } else { 0 })
            .collect();
        md.poles = vec![("d".into(), poles.to_vec())];
        md
    };
    let mut cases: Vec<(String, Media)> = vec![("none".into(), Media::vacuum(nt))];
    for (name, p) in [("debye1", &debye), ("lorentz2", &lorentz)] {
        for frac in [0.1f64, 0.5, 1.01] {
            let pct = (frac.min(1.0) * 100.0).round();
            cases.push((format!("{name}_{pct}%"), fill(p, frac)));
        }
    }
    std::fs::create_dir_all("results/dispersive")?;
    let path = format!("results/dispersive/bench_{label}.csv");
    let mut w = csv::Writer::from_path(&path)?;
    w.write_record([
        "backend",
        "precision",
        "dual",
        "case",
        "tets",
        "dispersive_tets",
        "ms_per_step",
        "ratio_to_plain",
        "step_bytes_model",
        "extra_bytes_model",
        "extra_gbs",
    ])?;
    let (dt, _) = {
        let d0 = Dga::assemble(&m, &t, &cases[0].1)?;
        solver::time_step(&d0, 0.95)?
    };
    println!("{bname}: {nt} tets, {steps} steps per row");
    let mut base = std::collections::HashMap::new();
    for (case, media) in &cases {
        let d = Arc::new(Dga::assemble(&m, &t, media)?);
        let ndisp = media.disp.iter().filter(|&&k| k > 0).count();
        for &prec in &precs {
            if prec == "f64" && dev.as_ref().is_some_and(|d| !d.info.fp64) {
                continue;
            }
            let sb = if prec == "f64" { 8 } else { 4 };
            let step_bytes = dgatd::cost::dga_step(&d.counts(), sb).0;
            for &dual in &duals {
                let (mut s, extra) = if prec == "f64" {
                    with_extra::<f64>(&d, dt, dual, dev.as_ref())?
                } else {
                    with_extra::<f32>(&d, dt, dual, dev.as_ref())?
                };
                let ms = time_steps(s.as_mut(), steps)?;
                drop(s);
                let key = (prec, dual.name());
                if case == "none" {
                    base.insert(key, ms);
                }
                let b = base.get(&key).copied().unwrap_or(f64::NAN);
                let gbs = extra / ((ms - b).max(1e-9) * 1e-3) / 1e9;
                println!(
                    "{prec} {:>8} {case:>14}: {ms:8.3} ms/step ({:.3}x), extra {:.3e} B/step (+{:.0}% of the step model), {gbs:.0} GB/s on the extra",
                    dual.name(),
                    ms / b,
                    extra,
                    100.0 * extra / step_bytes
                );
                w.write_record([
                    bname.clone(),
                    prec.into(),
                    dual.name().into(),
                    case.clone(),
                    nt.to_string(),
                    ndisp.to_string(),
                    format!("{ms:.4}"),
                    format!("{:.3}", ms / b),
                    format!("{step_bytes:.4e}"),
                    format!("{extra:.4e}"),
                    format!("{gbs:.1}"),
                ])?;
                w.flush()?;
            }
        }
    }
    println!("wrote {path}");
    Ok(())
}
