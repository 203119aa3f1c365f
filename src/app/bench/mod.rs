//! `dgatd bench`: the device's own bandwidth ceiling (copy and triad), every DGATD kernel
//! variant and the whole time step, over a ladder of box meshes generated in-process, on
//! OpenCL devices (timed with profiling events) and on the CPU backend (wall clock).
//!
//! One CSV row per (device, precision, kernel, variant, mesh size); columns are documented
//! in `results/README.md` and listed in [`COLUMNS`].
//!
//! Byte and flop models: [`dgatd::cost`].

use dgatd::backend::cpu::{self, lean};
use dgatd::backend::device_assembly;
use dgatd::backend::opencl::{
    self, Arg, BlockVariant, CircVariant, ClDevice, ClStepper, CsrVariant, LOCAL, PrimalVariant,
    Variants, launch,
};
use dgatd::cost;
use dgatd::dga::operators::{DualForm, Operators};
use dgatd::dga::{Dga, host_masses};
use dgatd::mesh::Topology;
use dgatd::problem::Media;
use dgatd::{Error, Real, Result};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

use common::{BenchConfig, Row, ladder_box};
use common::{emit, stats, time_events, time_wall};

/// CSV columns, in order. Stable: rows from different machines concatenate.
pub const COLUMNS: [&str; 22] = [
    "timestamp",
    "commit",
    "host",
    "platform",
    "device",
    "driver",
    "precision",
    "kernel",
    "variant",
    "tets",
    "dofs",
    "reps",
    "median_s",
    "min_s",
    "max_s",
    "bytes_model",
    "gbs",
    "frac_copy_bw",
    "gdofs_per_s",
    "flops_model",
    "gflops",
    "frac_roof",
];

mod assembly;
mod cli;
mod common;
mod dg;
mod dga;
mod disp;
mod host;
mod loss;
mod streams;

use assembly::*;
pub(super) use cli::{BenchArgs, command};
use dg::*;
use dga::*;
use host::*;
use streams::*;

/// The roofs of each (device, precision) seen so far in a bench's rows (the best copy
/// GB/s and the `fma` row's GFLOP/s), for the `frac_roof` column: a row's modelled time at
/// its binding roof, `max(bytes / copy, flops / peak)`, over its measured median.
#[derive(Default)]
pub struct Roofs {
    seen: Vec<(String, String, f64, f64)>,
}

impl Roofs {
    /// Records the roofs a probe row (copy, fma) carries.
    pub fn note(&mut self, r: &Row) {
        let i = match self
            .seen
            .iter()
            .position(|x| x.0 == r.device && x.1 == r.precision)
        {
            Some(i) => i,
            None => {
                self.seen
                    .push((r.device.clone(), r.precision.clone(), 0.0, 0.0));
                self.seen.len() - 1
            }
        };
        if r.kernel == "copy" {
            self.seen[i].2 = self.seen[i].2.max(r.gbs());
        } else if r.kernel == "fma" {
            self.seen[i].3 = self.seen[i].3.max(r.gflops());
        }
    }

    /// `frac_roof` of a row (0 where no roof is known or the row is a probe).
    pub fn frac(&self, r: &Row) -> f64 {
        let Some(x) = self
            .seen
            .iter()
            .find(|x| x.0 == r.device && x.1 == r.precision)
        else {
            return 0.0;
        };
        if r.kernel == "copy" || r.kernel == "fma" || r.median_s <= 0.0 {
            return if r.kernel == "fma" {
                1.0
            } else {
                r.frac_copy_bw
            };
        }
        let t_bw = if x.2 > 0.0 {
            r.bytes_model / (x.2 * 1e9)
        } else {
            0.0
        };
        let t_fl = if x.3 > 0.0 {
            r.flops_model / (x.3 * 1e9)
        } else {
            0.0
        };
        t_bw.max(t_fl) / r.median_s
    }
}

/// Times of the factored step (primal, circulation, vertex blocks) in `s`'s variants.
fn step_times<T: Real>(dev: &ClDevice, w: usize, n: usize, s: &ClStepper<T>) -> Result<Vec<f64>> {
    time_events(dev, w, n, || {
        Ok(vec![
            s.primal_update()?,
            s.circulation()?,
            s.vertex_blocks()?,
        ])
    })
}

/// Runs the benchmark; `report(row)` is called as rows complete (for progress and for
/// writing the CSV incrementally, so a long run never loses what it measured).
pub fn run(
    cfg: &BenchConfig,
    report: &mut dyn FnMut(&Row) -> Result<()>,
    log: &mut dyn FnMut(&str),
) -> Result<()> {
    let mut devices: Vec<Arc<ClDevice>> = Vec::new();
    if !cfg.devices.is_empty() {
        let all = opencl::list_devices()?;
        let chosen: Vec<opencl::DeviceInfo> = if cfg.devices.iter().any(|d| d == "all") {
            all
        } else {
            cfg.devices
                .iter()
                .map(|d| opencl::select_device(Some(d)))
                .collect::<Result<_>>()?
        };
        for d in chosen {
            devices.push(ClDevice::open(d)?);
        }
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let cpu_name = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|x| x.trim().to_string())
        })
        .unwrap_or_else(|| "cpu".into());
    let _ = host;
    // Bandwidth ceilings first.
    let mut copy_bw: Vec<(String, String, f64)> = Vec::new(); // (device key, precision, GB/s)
    let base_for = |platform: &str, device: &str, driver: &str, p: &str| Row {
        platform: platform.into(),
        device: device.into(),
        driver: driver.into(),
        precision: p.into(),
        kernel: String::new(),
        variant: String::new(),
        tets: 0,
        dofs: 0,
        reps: 0,
        median_s: 0.0,
        min_s: 0.0,
        max_s: 0.0,
        bytes_model: 0.0,
        frac_copy_bw: 0.0,
        flops_model: 0.0,
    };
    let cpu_driver = format!("rayon {} threads", rayon::current_num_threads());
    for p in &cfg.precisions {
        for d in &devices {
            if p == "f64" && !d.info.fp64 {
                log(&format!("skip f64 on {}: no fp64", d.info.name));
                continue;
            }
            let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
            let rows = if p == "f64" {
                stream_rows::<f64>(d, cfg, &base)?
            } else {
                stream_rows::<f32>(d, cfg, &base)?
            };
            log(&format!(
                "{} {p}: copy ceiling {:.1} GB/s ({})",
                d.info.name,
                rows[0].gbs(),
                rows[0].variant
            ));
            copy_bw.push((d.info.name.clone(), p.clone(), rows[0].gbs()));
            for r in &rows {
                report(r)?;
            }
        }
        if cfg.cpu {
            let base = base_for("cpu-backend", &cpu_name, &cpu_driver, p);
            let c = if p == "f64" {
                cpu_stream::<f64>(cfg, &base)
            } else {
                cpu_stream::<f32>(cfg, &base)
            };
            log(&format!("cpu backend {p}: copy {:.1} GB/s", c.gbs()));
            copy_bw.push(("cpu-backend".into(), p.clone(), c.gbs()));
            report(&c)?;
        }
    }
    let bw = |dev: &str, p: &str| {
        copy_bw
            .iter()
            .find(|x| x.0 == dev && x.1 == p)
            .map(|x| x.2)
            .unwrap_or(f64::NAN)
    };
    for &size in &cfg.sizes {
        let t0 = Instant::now();
        let mesh = ladder_box(size);
        let topo = Topology::build(&mesh)?;
        let t1 = Instant::now();
        let vacuum = Media::vacuum(mesh.n_tets());
        let free: Vec<bool> = topo.boundary_edge.iter().map(|&b| !b).collect();
        let masses = host_masses(&mesh, &topo, &vacuum, true, &free, None, None)?;
        let masses_s = t1.elapsed().as_secs_f64();
        // Lean: the benchmark never evaluates the energy, and this halves peak host memory.
        let dga = Arc::new(Dga::from_masses(&mesh, &topo, &vacuum, free, None, masses)?);
        let pre_s = t0.elapsed().as_secs_f64();
        log(&format!(
            "mesh {} tets, {} DoFs: preprocessing {pre_s:.1} s (mesh and topology {:.2} s, \
             masses and inverses {masses_s:.2} s)",
            dga.n_tets,
            4 * dga.n_tets + dga.n_free_half(),
            (t1 - t0).as_secs_f64(),
        ));
        // the host assembly (topology, masses, inverses), once per mesh: one row
        let base = base_for("host", &cpu_name, &cpu_driver, "f64");
        report(&Row::preprocess(
            &base,
            "host",
            (dga.n_tets, dga.counts().dofs()),
            vec![pre_s],
        ))?;
        // The masses and their inverses alone, on the host and on each fp64 device: the
        // scope of `backend::device_assembly`.
        report(&Row::preprocess(
            &base,
            "host_masses",
            (dga.n_tets, dga.counts().dofs()),
            vec![masses_s],
        ))?;
        // The CSR form's matrix on the host from its masses (`host_csr`), where the CSR
        // variant runs at all: the reference of the `device_csr` rows.
        let csr_host = if dga.n_tets <= cfg.csr_max_tets {
            let mut times = Vec::new();
            let mut m = None;
            for _ in 0..cfg.reps.clamp(1, 3) {
                let t = Instant::now();
                m = Some(dgatd::dga::operators::build_csr(&dga, CSR_DT));
                times.push(t.elapsed().as_secs_f64());
            }
            report(&Row::preprocess(
                &base,
                "host_csr",
                (dga.n_tets, dga.counts().dofs()),
                times,
            ))?;
            m
        } else {
            None
        };
        for d in devices.iter().filter(|d| d.info.fp64) {
            let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, "f64");
            let rows = device_assembly_rows(d, &mesh, &topo, &vacuum, &dga, cfg, &base, log);
            emit(
                rows,
                report,
                log,
                &format!("device assembly of {} tets on {}", dga.n_tets, d.info.name),
            )?;
            if let Some(want) = &csr_host {
                let rows = device_csr_rows(d, &mesh, &topo, &vacuum, &dga, want, cfg, &base, log);
                emit(
                    rows,
                    report,
                    log,
                    &format!("device CSR of {} tets on {}", dga.n_tets, d.info.name),
                )?;
            }
            for p in &cfg.precisions {
                let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
                let rows = if p == "f64" {
                    resident_rows::<f64>(d, &mesh, &topo, &vacuum, &dga, cfg, &base, log)
                } else {
                    resident_rows::<f32>(d, &mesh, &topo, &vacuum, &dga, cfg, &base, log)
                };
                emit(
                    rows,
                    report,
                    log,
                    &format!(
                        "resident {p} assembly of {} tets on {}",
                        dga.n_tets, d.info.name
                    ),
                )?;
                if let Some(want) = &csr_host {
                    let rows = if p == "f64" {
                        resident_csr_rows::<f64>(
                            d, &mesh, &topo, &vacuum, &dga, want, cfg, &base, log,
                        )
                    } else {
                        resident_csr_rows::<f32>(
                            d, &mesh, &topo, &vacuum, &dga, want, cfg, &base, log,
                        )
                    };
                    emit(
                        rows,
                        report,
                        log,
                        &format!("resident {p} CSR of {} tets on {}", dga.n_tets, d.info.name),
                    )?;
                }
            }
        }
        // the main job's step on the same box renumbered: along a Z-order curve, and at
        // random (issue 19's locality-ordering route; the generator's order is already
        // local: cells in lexicographic order, edges numbered by first appearance)
        if !devices.is_empty() && mesh.n_tets() <= LOCALITY_MAX_TETS {
            for (order, m) in [
                ("morton", mesh.morton_ordered()),
                ("shuffled", mesh.shuffled(0x5eed)),
            ] {
                let t = Topology::build(&m)?;
                let d = Arc::new(Dga::assemble_with(
                    &m,
                    &t,
                    &Media::vacuum(m.n_tets()),
                    &t.boundary_edge,
                    true,
                )?);
                drop((m, t));
                for p in &cfg.precisions {
                    for dev in devices.iter().filter(|x| p != "f64" || x.info.fp64) {
                        let base =
                            base_for(&dev.info.platform, &dev.info.name, &dev.info.driver, p);
                        let cb = bw(&dev.info.name, p);
                        let rows = if p == "f64" {
                            locality_rows::<f64>(dev, &d, order, cfg, &base, cb)
                        } else {
                            locality_rows::<f32>(dev, &d, order, cfg, &base, cb)
                        };
                        emit(
                            rows,
                            report,
                            log,
                            &format!("{} tets ({order} order) on {} {p}", d.n_tets, dev.info.name),
                        )?;
                    }
                }
            }
        }
        drop((mesh, topo, vacuum));
        for p in &cfg.precisions {
            for d in &devices {
                if p == "f64" && !d.info.fp64 {
                    continue;
                }
                let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
                let cb = bw(&d.info.name, p);
                let rows = if p == "f64" {
                    device_rows::<f64>(d, &dga, cfg, &base, cb)
                } else {
                    device_rows::<f32>(d, &dga, cfg, &base, cb)
                };
                emit(
                    rows,
                    report,
                    log,
                    &format!("{} tets on {} {p}", dga.n_tets, d.info.name),
                )?;
            }
            if cfg.cpu && dga.n_tets <= cfg.cpu_max_tets {
                let base = base_for("cpu-backend", &cpu_name, &cpu_driver, p);
                let cb = bw("cpu-backend", p);
                let rows = if p == "f64" {
                    cpu_rows::<f64>(&dga, cfg, &base, cb)
                } else {
                    cpu_rows::<f32>(&dga, cfg, &base, cb)
                };
                for r in &rows {
                    report(r)?;
                }
            }
        }
        if !cfg.dispersion.is_empty() || !cfg.losses.is_empty() {
            let per_dev: Vec<common::DeviceBases> = devices
                .iter()
                .map(|d| {
                    let per = (cfg.precisions.iter())
                        .filter(|p| *p != "f64" || d.info.fp64)
                        .map(|p| {
                            let b = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
                            (b, bw(&d.info.name, p))
                        })
                        .collect();
                    (d.clone(), per)
                })
                .collect();
            let cpu: Vec<(Row, f64)> = if cfg.cpu {
                (cfg.precisions.iter())
                    .map(|p| {
                        let b = base_for("cpu-backend", &cpu_name, &cpu_driver, p);
                        (b, bw("cpu-backend", p))
                    })
                    .collect()
            } else {
                vec![]
            };
            if !cfg.dispersion.is_empty() {
                disp::rows_at(size, &cfg.dispersion, cfg, &per_dev, &cpu, report, log)?;
            }
            if !cfg.losses.is_empty() {
                loss::rows_at(size, &cfg.losses, cfg, &per_dev, &cpu, report, log)?;
            }
        }
        // DG rows: each operator built once, then timed in every precision.
        if dga.n_tets <= cfg.dg_max_tets && !cfg.dg_orders.is_empty() {
            let mesh = ladder_box(size);
            let k = mesh.n_tets();
            for &order in &cfg.dg_orders {
                let op = Arc::new(dgatd::dg::DgOperator::new(
                    &mesh,
                    order,
                    dgatd::dg::Flux::Upwind,
                    &vec![1.0; k],
                    &vec![1.0; k],
                )?);
                for p in &cfg.precisions {
                    for d in &devices {
                        if p == "f64" && !d.info.fp64 {
                            continue;
                        }
                        let base = base_for(&d.info.platform, &d.info.name, &d.info.driver, p);
                        let cb = bw(&d.info.name, p);
                        let rows = if p == "f64" {
                            dg_device_rows::<f64>(d, &op, cfg, &base, cb)
                        } else {
                            dg_device_rows::<f32>(d, &op, cfg, &base, cb)
                        };
                        emit(
                            rows,
                            report,
                            log,
                            &format!("DG N={order} on {} {p}", d.info.name),
                        )?;
                    }
                    if cfg.cpu && p == "f64" && k <= cfg.cpu_max_tets {
                        let base = base_for("cpu-backend", &cpu_name, &cpu_driver, p);
                        report(&dg_cpu_row(&op, cfg, &base, bw("cpu-backend", p)))?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Reports the rows of one device measurement; a mesh too large for the device is logged and
/// skipped, any other error ends the bench.
/// Formats a row as CSV fields in [`COLUMNS`] order.
pub fn csv_fields(r: &Row, timestamp: &str, host: &str, roofs: &Roofs) -> Vec<String> {
    vec![
        timestamp.to_string(),
        dgatd::report::COMMIT.to_string(),
        host.to_string(),
        r.platform.clone(),
        r.device.clone(),
        r.driver.clone(),
        r.precision.clone(),
        r.kernel.clone(),
        r.variant.clone(),
        r.tets.to_string(),
        r.dofs.to_string(),
        r.reps.to_string(),
        format!("{:.6e}", r.median_s),
        format!("{:.6e}", r.min_s),
        format!("{:.6e}", r.max_s),
        format!("{:.6e}", r.bytes_model),
        format!("{:.3}", r.gbs()),
        format!("{:.4}", r.frac_copy_bw),
        format!("{:.4}", r.gdofs()),
        format!("{:.6e}", r.flops_model),
        format!("{:.3}", r.gflops()),
        format!("{:.4}", roofs.frac(r)),
    ]
}
