//! `dgatd bench --dispersion F,..`: the whole leapfrog step with dispersive tets (design
//! note §13) against the same step without, on the bench's box meshes.
//!
//! Cases: one Debye pole (`debye1`) and two Lorentz pole pairs (`lorentz2`, seed 004's
//! fourth-order case) on the tets whose centroid has `x < F` (the slab; F = 1 is every tet),
//! ε∞ = 1. Rows: kernel `step_dispersive`, variant `none` (no dispersive tet, the baseline)
//! and `<case>_<pct>%+<fused|split>` ([`DispVariant`]): every kernel of one step
//! ([`ClStepper::step_events`]: primal, correction, circulation, vertex blocks, poles), first
//! start to last end. `bytes_model` is the step's ([`cost::dga_step`]) plus the
//! dispersion's ([`ClStepper::disp_bytes`]: [`cost::disp_bytes`] split,
//! [`cost::disp_bytes_fused`] fused). The CPU backend's rows time one `advance` step (wall
//! clock) with the split form, its only one.

use super::common::{
    BenchConfig, CaseKind, DeviceBases, Row, StepCase, box_dt, case_rows, cpu_step_times,
    ladder_box, random_state, time_events,
};
use dgatd::backend::Stepper;
use dgatd::backend::opencl::{BlockVariant, ClDevice, ClStepper, DispVariant, Variants};
use dgatd::cost;
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::mesh::{Mesh, Topology};
use dgatd::problem::Media;
use dgatd::problem::Pole;
use dgatd::{Real, Result};
use std::sync::Arc;

/// The dispersive cases on `mesh` for the slab fractions `fracs`: `(name, media)`, the
/// baseline `none` first.
pub fn cases(mesh: &Mesh, fracs: &[f64]) -> Vec<(String, Media)> {
    let nt = mesh.n_tets();
    let cx: Vec<f64> = mesh
        .tets
        .iter()
        .map(|tv| tv.iter().map(|&v| mesh.nodes[v as usize][0]).sum::<f64>() / 4.0)
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
    let mut out = vec![("none".to_string(), Media::vacuum(nt))];
    for (name, poles) in [("debye1", &debye), ("lorentz2", &lorentz)] {
        for &f in fracs {
            let mut md = Media::vacuum(nt);
            // F = 1 takes every tet (centroids are below 1)
            md.disp = cx.iter().map(|&x| u16::from(x < f || f >= 1.0)).collect();
            md.poles = vec![("d".into(), poles.clone())];
            out.push((format!("{name}_{}%", (100.0 * f.min(1.0)).round()), md));
        }
    }
    out
}

/// The device rows of one case: the dispersive step in each form (one row for `none`).
pub fn device_rows<T: Real>(
    dev: &Arc<ClDevice>,
    d: &Arc<Dga>,
    case: &str,
    dt: f64,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Vec<Row>> {
    let mut s = ClStepper::<T>::new(dev.clone(), d.clone(), DualForm::Factored, None, &[])?;
    s.set_time_step(dt, None)?;
    let (u, f) = random_state(d);
    s.set_state(&u, &f)?;
    // the step's kernels in the layouts this stepper holds (full blocks with dispersion)
    let by = cost::kernel_bytes(&d.counts(), std::mem::size_of::<T>(), 0);
    let block = match Variants::for_dga(d).block {
        BlockVariant::Packed => by.vertex_block_sym,
        _ => by.vertex_block,
    };
    let step = by.primal_sym + by.circulation + block;
    let forms: &[DispVariant] = if case == "none" {
        &[DispVariant::Fused]
    } else {
        &[DispVariant::Fused, DispVariant::Split]
    };
    let mut rows = Vec::new();
    for &v in forms {
        s.set_variants(Variants {
            disp: v,
            ..Variants::for_dga(d)
        })?;
        let mut k = 0;
        let times = time_events(dev, cfg.warmup, cfg.reps, || {
            k += 1;
            s.step_events(k)
        })?;
        let bytes = step + s.disp_bytes();
        rows.push(row(base, d, case, v.name(), times, bytes, copy_gbs));
    }
    Ok(rows)
}

/// The CPU backend's row of one case (the split form, wall clock of one `advance` step).
pub fn cpu_row<T: Real>(
    d: &Arc<Dga>,
    case: &str,
    dt: f64,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Row> {
    let ops = Arc::new(Operators::<T>::new(d, dt, false));
    let sb = std::mem::size_of::<T>();
    let extra = ops
        .disp
        .as_ref()
        .map_or(0.0, |x| cost::disp_bytes(&x.counts(), sb));
    let times = cpu_step_times(d, ops, cfg)?;
    // the CPU backend holds the full layouts
    let by = cost::kernel_bytes(&d.counts(), sb, 0);
    let step = by.primal + by.circulation_list + by.vertex_block;
    Ok(row(base, d, case, "split", times, step + extra, copy_gbs))
}

/// The step_dispersive row of `case` in `form` (`none` has no form).
fn row(base: &Row, d: &Dga, case: &str, form: &str, times: Vec<f64>, bytes: f64, bw: f64) -> Row {
    let variant = if case == "none" {
        case.to_string()
    } else {
        format!("{case}+{form}")
    };
    let size = (d.n_tets, d.counts().dofs());
    Row::timed(base, "step_dispersive", &variant, size, times, bytes, bw)
}

/// The `step_dispersive` rows.
struct Dispersive;

impl CaseKind for Dispersive {
    fn device<T: Real>(c: &StepCase, dev: &Arc<ClDevice>, base: &Row, bw: f64) -> Result<Vec<Row>> {
        device_rows::<T>(dev, &c.d, &c.name, c.dt, c.cfg, base, bw)
    }
    fn cpu<T: Real>(c: &StepCase, base: &Row, bw: f64) -> Result<Row> {
        cpu_row::<T>(&c.d, &c.name, c.dt, c.cfg, base, bw)
    }
}

/// Every dispersive row at the bench size `size`: each case assembled once (lean, as the
/// bench's own mesh) and timed on each device and precision (and the CPU backend below
/// its size limit). `devices`: `(device, base row per precision, copy GB/s per precision)`.
pub fn rows_at(
    size: usize,
    fracs: &[f64],
    cfg: &BenchConfig,
    devices: &[DeviceBases],
    cpu: &[(Row, f64)],
    report: &mut dyn FnMut(&Row) -> Result<()>,
    log: &mut dyn FnMut(&str),
) -> Result<()> {
    let mesh = ladder_box(size);
    let topo = Topology::build(&mesh)?;
    let dt = box_dt(&mesh);
    for (name, media) in cases(&mesh, fracs) {
        let d = Arc::new(Dga::assemble_with(
            &mesh,
            &topo,
            &media,
            &topo.boundary_edge,
            true,
        )?);
        let case = StepCase { name, d, dt, cfg };
        case_rows::<Dispersive>(&case, devices, cpu, report, log)?;
    }
    Ok(())
}
