//! `dgatd bench`: the device's own bandwidth ceiling (copy and triad), every DGATD kernel
//! variant and the whole time step, over a ladder of box meshes generated in-process, on
//! OpenCL devices (timed with profiling events) and on the CPU backend (wall clock).
//!
//! One CSV row per (device, precision, kernel, variant, mesh size); columns are documented
//! in `results/README.md`, listed in [`COLUMNS`] and written as `cli::CsvRow` (serde).
//!
//! Byte and flop models: [`dgatd::cost`].

use dgatd::backend::cpu;

use dgatd::backend::opencl::{
    self, Arg, BlockVariant, CircVariant, ClDevice, ClStepper, CsrVariant, LOCAL, PrimalVariant,
    Variants, launch,
};
use dgatd::cost;
use dgatd::dga::{Dga, host_masses};
use dgatd::dga::{DualForm, Operators};
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
    let devices = open_devices(cfg)?;
    check_device_streams(cfg, &devices)?;
    let mut m = Machines::new(devices);
    let mut out = Sink { report, log };
    // Bandwidth ceilings first.
    ceiling_rows(cfg, &mut m, &mut out)?;
    for &size in &cfg.sizes {
        size_rows(size, cfg, &m, &mut out)?;
    }
    Ok(())
}

/// Where a bench's rows and progress lines go: `report(row)` as each row completes,
/// `log(line)` for what the bench does and skips.
struct Sink<'a> {
    report: &'a mut dyn FnMut(&Row) -> Result<()>,
    log: &'a mut dyn FnMut(&str),
}

impl Sink<'_> {
    /// Reports each of `rows`, in order.
    fn rows(&mut self, rows: &[Row]) -> Result<()> {
        rows.iter().try_for_each(&mut *self.report)
    }

    /// Reports the rows of one device measurement ([`emit`]): a mesh too large for the
    /// device is logged as `skip {what}: …` and skipped, any other error ends the bench.
    fn emit(&mut self, rows: Result<Vec<Row>>, what: &str) -> Result<()> {
        emit(rows, self.report, self.log, what)
    }
}

/// The OpenCL devices `cfg.devices` names (`all`: every device listed), opened; none when
/// it names none.
fn open_devices(cfg: &BenchConfig) -> Result<Vec<Arc<ClDevice>>> {
    if cfg.devices.is_empty() {
        return Ok(Vec::new());
    }
    let all = opencl::list_devices()?;
    let chosen: Vec<opencl::DeviceInfo> = if cfg.devices.iter().any(|d| d == "all") {
        all
    } else {
        cfg.devices
            .iter()
            .map(|d| opencl::select_device(Some(d)))
            .collect::<Result<_>>()?
    };
    chosen.into_iter().map(ClDevice::open).collect()
}

/// The host CPU's model name (`/proc/cpuinfo`; `cpu` where it does not say).
fn cpu_model_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|x| x.trim().to_string())
        })
        .unwrap_or_else(|| "cpu".into())
}

/// An empty row of `device` (on `platform`, with `driver`) in precision `p`: the base the
/// row producers fill in.
fn base_row(platform: &str, device: &str, driver: &str, p: &str) -> Row {
    Row {
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
    }
}

/// The base row of OpenCL device `d` in precision `p`.
fn device_base(d: &ClDevice, p: &str) -> Row {
    base_row(&d.info.platform, &d.info.name, &d.info.driver, p)
}

/// What a bench runs on: the opened OpenCL devices, the host CPU (its name and the CPU
/// backend's driver, `rayon N threads`), and the copy ceilings measured so far.
struct Machines {
    devices: Vec<Arc<ClDevice>>,
    cpu_name: String,
    cpu_driver: String,
    /// (device name or `cpu-backend`, precision, copy GB/s) of each ceiling measured.
    copy_bw: Vec<(String, String, f64)>,
}

impl Machines {
    /// The host's side of a bench on `devices`; no ceilings measured yet.
    fn new(devices: Vec<Arc<ClDevice>>) -> Machines {
        Machines {
            devices,
            cpu_name: cpu_model_name(),
            cpu_driver: format!("rayon {} threads", rayon::current_num_threads()),
            copy_bw: Vec::new(),
        }
    }

    /// The base row of the CPU backend in precision `p`.
    fn cpu_base(&self, p: &str) -> Row {
        base_row("cpu-backend", &self.cpu_name, &self.cpu_driver, p)
    }

    /// The base row of the host's own preprocessing (always f64).
    fn host_base(&self) -> Row {
        base_row("host", &self.cpu_name, &self.cpu_driver, "f64")
    }

    /// The copy ceiling (GB/s) measured on `dev` (a device name or `cpu-backend`) in
    /// precision `p`; NaN where none was.
    fn bw(&self, dev: &str, p: &str) -> f64 {
        self.copy_bw
            .iter()
            .find(|x| x.0 == dev && x.1 == p)
            .map(|x| x.2)
            .unwrap_or(f64::NAN)
    }

    /// The devices that run precision `p` (f64 needs fp64), in order.
    fn devices_for<'a>(&'a self, p: &'a str) -> impl Iterator<Item = &'a Arc<ClDevice>> {
        self.devices
            .iter()
            .filter(move |d| p != "f64" || d.info.fp64)
    }
}

/// The bandwidth ceilings, per precision: each device's copy and triad rows
/// ([`stream_rows`]; f64 is skipped, saying so, on a device without fp64), then the CPU
/// backend's copy row ([`cpu_stream`]). Each copy ceiling is noted in `m.copy_bw`.
fn ceiling_rows(cfg: &BenchConfig, m: &mut Machines, out: &mut Sink) -> Result<()> {
    for p in &cfg.precisions {
        for d in &m.devices {
            if p == "f64" && !d.info.fp64 {
                (out.log)(&format!("skip f64 on {}: no fp64", d.info.name));
                continue;
            }
            let base = device_base(d, p);
            let rows = if p == "f64" {
                stream_rows::<f64>(d, cfg, &base)?
            } else {
                stream_rows::<f32>(d, cfg, &base)?
            };
            (out.log)(&format!(
                "{} {p}: copy ceiling {:.1} GB/s ({})",
                d.info.name,
                rows[0].gbs(),
                rows[0].variant
            ));
            m.copy_bw
                .push((d.info.name.clone(), p.clone(), rows[0].gbs()));
            out.rows(&rows)?;
        }
        if cfg.cpu {
            let base = m.cpu_base(p);
            let c = if p == "f64" {
                cpu_stream::<f64>(cfg, &base)
            } else {
                cpu_stream::<f32>(cfg, &base)
            };
            (out.log)(&format!("cpu backend {p}: copy {:.1} GB/s", c.gbs()));
            m.copy_bw.push(("cpu-backend".into(), p.clone(), c.gbs()));
            (out.report)(&c)?;
        }
    }
    Ok(())
}

/// Every row of the ladder's mesh of about `size` tets, in the bench's order: the host's
/// preprocessing, the assembly on each fp64 device, the locality study, the kernels, the
/// dispersive and lossy steps, and DG. The mesh, its topology and media are dropped before
/// the kernels run; only the operators stay.
fn size_rows(size: usize, cfg: &BenchConfig, m: &Machines, out: &mut Sink) -> Result<()> {
    let (lm, times) = LadderMesh::prepare(size, out)?;
    let csr_host = preprocess_rows(&lm.dga, times, cfg, m, out)?;
    assembly_rows(&lm, csr_host.as_ref(), cfg, m, out)?;
    // the main job's step on the same box renumbered: along a Z-order curve, and at
    // random (issue 19's locality-ordering route; the generator's order is already
    // local: cells in lexicographic order, edges numbered by first appearance)
    if !m.devices.is_empty() && lm.mesh.n_tets() <= LOCALITY_MAX_TETS {
        renumbered_rows(&lm.mesh, cfg, m, out)?;
    }
    let LadderMesh {
        mesh,
        topo,
        vacuum,
        dga,
    } = lm;
    drop((mesh, topo, vacuum));
    kernel_rows(&dga, cfg, m, out)?;
    if !cfg.dispersion.is_empty() || !cfg.losses.is_empty() {
        material_rows(size, cfg, m, out)?;
    }
    // DG rows: each operator built once, then timed in every precision.
    if dga.n_tets <= cfg.dg_max_tets && !cfg.dg_orders.is_empty() {
        dg_rows(size, cfg, m, out)?;
    }
    Ok(())
}

/// One mesh of the ladder in vacuum, its topology and its (lean) DGA operators.
struct LadderMesh {
    mesh: dgatd::mesh::Mesh,
    topo: Topology,
    vacuum: Media,
    dga: Arc<Dga>,
}

/// Wall times of a [`LadderMesh`]'s preparation (seconds).
struct PrepTimes {
    /// The whole preparation: mesh, topology, masses, inverses and operators.
    total_s: f64,
    /// The masses and their inverses alone.
    masses_s: f64,
}

impl LadderMesh {
    /// The box of about `size` tets and its operators, timed; logs the times.
    fn prepare(size: usize, out: &mut Sink) -> Result<(LadderMesh, PrepTimes)> {
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
        (out.log)(&format!(
            "mesh {} tets, {} DoFs: preprocessing {pre_s:.1} s (mesh and topology {:.2} s, \
             masses and inverses {masses_s:.2} s)",
            dga.n_tets,
            4 * dga.n_tets + dga.n_free_half(),
            (t1 - t0).as_secs_f64(),
        ));
        let lm = LadderMesh {
            mesh,
            topo,
            vacuum,
            dga,
        };
        let times = PrepTimes {
            total_s: pre_s,
            masses_s,
        };
        Ok((lm, times))
    }
}

/// The host's `preprocess` rows of one mesh: the whole assembly (`host`), the masses and
/// inverses alone (`host_masses`), and the CSR matrix from the masses (`host_csr`, where
/// the CSR variant runs at all), which is returned: the reference of the device CSR rows.
fn preprocess_rows(
    dga: &Dga,
    times: PrepTimes,
    cfg: &BenchConfig,
    m: &Machines,
    out: &mut Sink,
) -> Result<Option<sprs::CsMat<f64>>> {
    // the host assembly (topology, masses, inverses), once per mesh: one row
    let base = m.host_base();
    let size = (dga.n_tets, dga.counts().dofs());
    (out.report)(&Row::preprocess(&base, "host", size, vec![times.total_s]))?;
    // The masses and their inverses alone, on the host and on each fp64 device: the
    // scope of `backend::device_assembly`.
    (out.report)(&Row::preprocess(
        &base,
        "host_masses",
        size,
        vec![times.masses_s],
    ))?;
    // The CSR form's matrix on the host from its masses (`host_csr`), where the CSR
    // variant runs at all: the reference of the `device_csr` rows.
    if dga.n_tets > cfg.csr_max_tets {
        return Ok(None);
    }
    let mut times = Vec::new();
    let mut csr = None;
    for _ in 0..cfg.reps.clamp(1, 3) {
        let t = Instant::now();
        csr = Some(dgatd::dga::build_csr(dga, CSR_DT));
        times.push(t.elapsed().as_secs_f64());
    }
    (out.report)(&Row::preprocess(&base, "host_csr", size, times))?;
    Ok(csr)
}

/// The assembly rows of each fp64 device: the masses and inverses on the device, the CSR
/// matrix there (when `csr_host`, the host's, is given), then per precision the operators
/// assembled and left resident (and their CSR matrix).
fn assembly_rows(
    lm: &LadderMesh,
    csr_host: Option<&sprs::CsMat<f64>>,
    cfg: &BenchConfig,
    m: &Machines,
    out: &mut Sink,
) -> Result<()> {
    let LadderMesh {
        mesh,
        topo,
        vacuum,
        dga,
    } = lm;
    for d in m.devices.iter().filter(|d| d.info.fp64) {
        let base = device_base(d, "f64");
        let rows = device_assembly_rows(d, mesh, topo, vacuum, dga, cfg, &base, out.log);
        let on = format!("{} tets on {}", dga.n_tets, d.info.name);
        out.emit(rows, &format!("device assembly of {on}"))?;
        if let Some(want) = csr_host {
            let rows = device_csr_rows(d, mesh, topo, vacuum, dga, want, cfg, &base, out.log);
            out.emit(rows, &format!("device CSR of {on}"))?;
        }
        for p in &cfg.precisions {
            let base = device_base(d, p);
            let rows = if p == "f64" {
                resident_rows::<f64>(d, mesh, topo, vacuum, dga, cfg, &base, out.log)
            } else {
                resident_rows::<f32>(d, mesh, topo, vacuum, dga, cfg, &base, out.log)
            };
            out.emit(rows, &format!("resident {p} assembly of {on}"))?;
            if let Some(want) = csr_host {
                let rows = if p == "f64" {
                    resident_csr_rows::<f64>(d, mesh, topo, vacuum, dga, want, cfg, &base, out.log)
                } else {
                    resident_csr_rows::<f32>(d, mesh, topo, vacuum, dga, want, cfg, &base, out.log)
                };
                out.emit(rows, &format!("resident {p} CSR of {on}"))?;
            }
        }
    }
    Ok(())
}

/// The locality study: the main job's step ([`locality_rows`]) on `mesh` renumbered along
/// a Z-order curve (`morton`) and at random (`shuffled`), on each device and precision.
fn renumbered_rows(
    mesh: &dgatd::mesh::Mesh,
    cfg: &BenchConfig,
    m: &Machines,
    out: &mut Sink,
) -> Result<()> {
    for (order, r) in [
        ("morton", mesh.morton_ordered()),
        ("shuffled", mesh.shuffled(0x5eed)),
    ] {
        let t = Topology::build(&r)?;
        let d = Arc::new(Dga::assemble_with(
            &r,
            &t,
            &Media::vacuum(r.n_tets()),
            &t.boundary_edge,
            true,
        )?);
        drop((r, t));
        for p in &cfg.precisions {
            for dev in m.devices_for(p) {
                let base = device_base(dev, p);
                let cb = m.bw(&dev.info.name, p);
                let rows = if p == "f64" {
                    locality_rows::<f64>(dev, &d, order, cfg, &base, cb)
                } else {
                    locality_rows::<f32>(dev, &d, order, cfg, &base, cb)
                };
                let what = format!("{} tets ({order} order) on {} {p}", d.n_tets, dev.info.name);
                out.emit(rows, &what)?;
            }
        }
    }
    Ok(())
}

/// Per precision, every kernel row of each device ([`device_rows`]; f64 only on fp64
/// devices), then the CPU backend's ([`cpu_rows`]) up to `cfg.cpu_max_tets` tets.
fn kernel_rows(dga: &Arc<Dga>, cfg: &BenchConfig, m: &Machines, out: &mut Sink) -> Result<()> {
    for p in &cfg.precisions {
        for d in m.devices_for(p) {
            let base = device_base(d, p);
            let cb = m.bw(&d.info.name, p);
            let rows = if p == "f64" {
                device_rows::<f64>(d, dga, cfg, &base, cb)
            } else {
                device_rows::<f32>(d, dga, cfg, &base, cb)
            };
            out.emit(rows, &format!("{} tets on {} {p}", dga.n_tets, d.info.name))?;
        }
        if cfg.cpu && dga.n_tets <= cfg.cpu_max_tets {
            let base = m.cpu_base(p);
            let cb = m.bw("cpu-backend", p);
            let rows = if p == "f64" {
                cpu_rows::<f64>(dga, cfg, &base, cb)
            } else {
                cpu_rows::<f32>(dga, cfg, &base, cb)
            };
            out.rows(&rows)?;
        }
    }
    Ok(())
}

/// The whole-step rows with dispersive tets ([`disp::rows_at`]) and with losses
/// ([`loss::rows_at`]) at the ladder's size `size`, on each device and precision and on the
/// CPU backend.
fn material_rows(size: usize, cfg: &BenchConfig, m: &Machines, out: &mut Sink) -> Result<()> {
    let per_dev: Vec<common::DeviceBases> = m
        .devices
        .iter()
        .map(|d| {
            let per = (cfg.precisions.iter())
                .filter(|p| *p != "f64" || d.info.fp64)
                .map(|p| (device_base(d, p), m.bw(&d.info.name, p)))
                .collect();
            (d.clone(), per)
        })
        .collect();
    let cpu: Vec<(Row, f64)> = if cfg.cpu {
        (cfg.precisions.iter())
            .map(|p| (m.cpu_base(p), m.bw("cpu-backend", p)))
            .collect()
    } else {
        vec![]
    };
    if !cfg.dispersion.is_empty() {
        disp::rows_at(
            size,
            &cfg.dispersion,
            cfg,
            &per_dev,
            &cpu,
            out.report,
            out.log,
        )?;
    }
    if !cfg.losses.is_empty() {
        loss::rows_at(size, &cfg.losses, cfg, &per_dev, &cpu, out.report, out.log)?;
    }
    Ok(())
}

/// The DG rows at the ladder's size `size`: each order of `cfg.dg_orders` built once
/// (upwind flux, vacuum), then timed per precision on each device ([`dg_device_rows`]) and
/// in f64 on the CPU backend ([`dg_cpu_row`]) up to `cfg.cpu_max_tets` tets.
fn dg_rows(size: usize, cfg: &BenchConfig, m: &Machines, out: &mut Sink) -> Result<()> {
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
            for d in m.devices_for(p) {
                let base = device_base(d, p);
                let cb = m.bw(&d.info.name, p);
                let rows = if p == "f64" {
                    dg_device_rows::<f64>(d, &op, cfg, &base, cb)
                } else {
                    dg_device_rows::<f32>(d, &op, cfg, &base, cb)
                };
                out.emit(rows, &format!("DG N={order} on {} {p}", d.info.name))?;
            }
            if cfg.cpu && p == "f64" && k <= cfg.cpu_max_tets {
                let base = m.cpu_base(p);
                (out.report)(&dg_cpu_row(&op, cfg, &base, m.bw("cpu-backend", p)))?;
            }
        }
    }
    Ok(())
}
