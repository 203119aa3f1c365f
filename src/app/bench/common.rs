//! What the bench's row producers share ([`super`], [`super::disp`],
//! [`super::loss`]): the row, the configuration, the timers (OpenCL profiling events,
//! wall clock), the box ladder and the driver of the whole-step cases ([`case_rows`]).

use dgatd::backend::Stepper;
use dgatd::backend::cpu::CpuStepper;
use dgatd::backend::opencl::{ClDevice, event_seconds};
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::mesh::Mesh;
use dgatd::mesh::box_mesh;
use dgatd::{Error, Real, Result};
use std::sync::Arc;
use std::time::Instant;

/// One measurement.
#[derive(Clone, Debug)]
pub struct Row {
    pub platform: String,
    pub device: String,
    pub driver: String,
    pub precision: String,
    pub kernel: String,
    pub variant: String,
    pub tets: usize,
    pub dofs: usize,
    pub reps: usize,
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub bytes_model: f64,
    pub frac_copy_bw: f64,
    /// Modelled floating-point operations (DG rows; 0 where not modelled).
    pub flops_model: f64,
}

impl Row {
    /// The row of `kernel`/`variant` on `base`'s device and precision from the timed
    /// repetitions `times` (median, min, max), moving `bytes` in the model, as a fraction
    /// of the copy ceiling `copy_gbs`; `reps` is the number of times.
    pub fn timed(
        base: &Row,
        kernel: &str,
        variant: &str,
        (tets, dofs): (usize, usize),
        times: Vec<f64>,
        bytes: f64,
        copy_gbs: f64,
    ) -> Row {
        let reps = times.len();
        let (m, lo, hi) = stats(times);
        let mut r = Row {
            kernel: kernel.into(),
            variant: variant.into(),
            tets,
            dofs,
            reps,
            median_s: m,
            min_s: lo,
            max_s: hi,
            bytes_model: bytes,
            frac_copy_bw: 0.0,
            ..base.clone()
        };
        r.frac_copy_bw = r.gbs() / copy_gbs;
        r
    }
    /// A `preprocess` row: wall times of a one-off setup step, no modelled bytes or flops
    /// (so `frac_copy_bw` and `frac_roof` are 0).
    pub fn preprocess(
        base: &Row,
        variant: &str,
        (tets, dofs): (usize, usize),
        times: Vec<f64>,
    ) -> Row {
        let mut r = Row::timed(base, "preprocess", variant, (tets, dofs), times, 0.0, 1.0);
        r.frac_copy_bw = 0.0;
        r
    }
    pub fn gflops(&self) -> f64 {
        self.flops_model / self.median_s / 1e9
    }
    pub fn gbs(&self) -> f64 {
        self.bytes_model / self.median_s / 1e9
    }
    pub fn gdofs(&self) -> f64 {
        if self.dofs == 0 {
            0.0
        } else {
            self.dofs as f64 / self.median_s / 1e9
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// OpenCL device specs (index or name substring); "all" for every device.
    pub devices: Vec<String>,
    /// Also time the CPU backend.
    pub cpu: bool,
    pub precisions: Vec<String>,
    /// Target tet counts (box meshes of 6 n³ tets, n rounded).
    pub sizes: Vec<usize>,
    pub reps: usize,
    pub warmup: usize,
    /// CSR variants are skipped above this many tets (host and device memory).
    pub csr_max_tets: usize,
    /// The CPU backend is skipped above this many tets.
    pub cpu_max_tets: usize,
    /// Elements of the copy/triad arrays as `--stream-elems` gives them (checked against
    /// the memory); None: [`super::streams::DEVICE_STREAM_ELEMS`] fitted to each device,
    /// [`super::streams::CPU_STREAM_ELEMS`] on the CPU backend.
    pub stream_elems: Option<usize>,
    /// DG orders timed at each mesh size (DG rows), and the largest mesh for them.
    pub dg_orders: Vec<usize>,
    pub dg_max_tets: usize,
    /// Slab fractions of the dispersive step's rows ([`super::disp`]; empty: none).
    pub dispersion: Vec<f64>,
    /// Slab fractions of the lossy step's rows ([`super::loss`]; empty: none).
    pub losses: Vec<f64>,
}

pub fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    };
    (med, v[0], v[n - 1])
}

/// A box mesh of about `tets` tetrahedra (6 n³, n rounded).
pub fn ladder_box(tets: usize) -> dgatd::mesh::Mesh {
    let n = ladder_n(tets);
    box_mesh([n, n, n], [1.0, 1.0, 1.0])
}

/// Cells per side of the box of about `tets` tetrahedra (6 n³).
fn ladder_n(tets: usize) -> usize {
    ((tets as f64 / 6.0).cbrt().round() as usize).max(1)
}

/// Tetrahedra of the box [`ladder_box`] makes for a target of `tets`.
pub fn ladder_tets(tets: usize) -> f64 {
    6.0 * (ladder_n(tets) as f64).powi(3)
}

pub fn time_events<F: FnMut() -> Result<Vec<opencl3::event::Event>>>(
    dev: &ClDevice,
    warmup: usize,
    reps: usize,
    mut f: F,
) -> Result<Vec<f64>> {
    for _ in 0..warmup {
        f()?;
    }
    dev.finish()?;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        let ev = f()?;
        let mut first = u64::MAX;
        let mut last = 0u64;
        for e in &ev {
            event_seconds(e)?;
            first = first.min(e.profiling_command_start().map_err(|x| Error::OpenCl {
                what: "profiling".into(),
                msg: x.to_string(),
            })?);
            last = last.max(e.profiling_command_end().map_err(|x| Error::OpenCl {
                what: "profiling".into(),
                msg: x.to_string(),
            })?);
        }
        out.push(last.saturating_sub(first) as f64 * 1e-9);
    }
    Ok(out)
}

pub fn time_wall<F: FnMut()>(warmup: usize, reps: usize, mut f: F) -> Vec<f64> {
    for _ in 0..warmup {
        f();
    }
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect()
}

/// Reports the rows of one device measurement; a mesh too large for the device is logged and
/// skipped, any other error ends the bench.
pub fn emit(
    rows: Result<Vec<Row>>,
    report: &mut dyn FnMut(&Row) -> Result<()>,
    log: &mut dyn FnMut(&str),
    what: &str,
) -> Result<()> {
    match rows {
        Ok(rows) => rows.iter().try_for_each(report),
        Err(Error::DeviceMemory(m)) => {
            log(&format!("skip {what}: {m}"));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// A stable time step for the bench's unit box of `n` cells a side (metres of light
/// travel): a quarter of the cell side, below the CFL limit of its 6-tet cubes.
pub fn box_dt(mesh: &Mesh) -> f64 {
    let n = (mesh.n_tets() as f64 / 6.0).cbrt().round().max(1.0);
    0.25 / n
}

/// A seeded random state (U on every half-edge, F on every dual edge).
pub fn random_state(d: &Dga) -> (Vec<f64>, Vec<f64>) {
    let mut r = dgatd::internal::Rng::new(5);
    let u = (0..2 * d.n_edges).map(|_| r.sym()).collect();
    let f = (0..4 * d.n_tets).map(|_| r.sym()).collect();
    (u, f)
}

/// Wall-clock times of one CPU-backend `advance` step (factored dual, the stepper's default
/// kernels) from [`random_state`], `cfg.warmup` untimed then `cfg.reps` timed; the first
/// error of any step is returned.
pub fn cpu_step_times<T: Real>(
    d: &Arc<Dga>,
    ops: Arc<Operators<T>>,
    cfg: &BenchConfig,
) -> Result<Vec<f64>> {
    let mut s = CpuStepper::new(d.clone(), ops, DualForm::Factored, None, vec![])?;
    let (u, f) = random_state(d);
    s.set_state(&u, &f)?;
    let mut sink = Vec::new();
    let mut k = 0;
    let mut err = None;
    let times = time_wall(cfg.warmup, cfg.reps, || {
        if let Err(e) = s.advance(k, 1, &mut sink) {
            err.get_or_insert(e);
        }
        k += 1;
    });
    match err {
        Some(e) => Err(e),
        None => Ok(times),
    }
}

/// A device and, per precision it runs, the base row and the copy ceiling (GB/s).
pub type DeviceBases = (Arc<ClDevice>, Vec<(Row, f64)>);

/// One case of the whole-step rows (`step_dispersive`, `step_lossy`): its name and its
/// assembled operators, with the bench's time step and settings.
pub struct StepCase<'a> {
    pub name: String,
    pub d: Arc<Dga>,
    pub dt: f64,
    pub cfg: &'a BenchConfig,
}

/// What one kind of whole-step row times: a case's rows on a device and its row on the CPU
/// backend, in either precision.
pub trait CaseKind {
    fn device<T: Real>(
        case: &StepCase,
        dev: &Arc<ClDevice>,
        base: &Row,
        copy_gbs: f64,
    ) -> Result<Vec<Row>>;
    fn cpu<T: Real>(case: &StepCase, base: &Row, copy_gbs: f64) -> Result<Row>;
}

/// Times `case` as kind `K` on each device and precision (a device without the memory for
/// it is skipped with a line in the log, [`emit`]), then on the CPU backend in each
/// precision when the mesh has at most `cfg.cpu_max_tets` tets.
pub fn case_rows<K: CaseKind>(
    case: &StepCase,
    devices: &[DeviceBases],
    cpu: &[(Row, f64)],
    report: &mut dyn FnMut(&Row) -> Result<()>,
    log: &mut dyn FnMut(&str),
) -> Result<()> {
    for (dev, per_prec) in devices {
        for (base, bw) in per_prec {
            let rows = if base.precision == "f64" {
                K::device::<f64>(case, dev, base, *bw)
            } else {
                K::device::<f32>(case, dev, base, *bw)
            };
            let what = format!("{} on {} {}", case.name, dev.info.name, base.precision);
            emit(rows, report, log, &what)?;
        }
    }
    if case.d.n_tets <= case.cfg.cpu_max_tets {
        for (base, bw) in cpu {
            let r = if base.precision == "f64" {
                K::cpu::<f64>(case, base, *bw)?
            } else {
                K::cpu::<f32>(case, base, *bw)?
            };
            report(&r)?;
        }
    }
    Ok(())
}
