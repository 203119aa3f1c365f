//! `dgatd bench --losses F,..`: the whole leapfrog step with losses and absorbing
//! boundaries (design note §12) against the same step without, on the bench's box meshes.
//!
//! Cases, on the tets whose centroid has `x < F` (the slab; F = 1 is every tet):
//! - `sigma_<pct>%`: electric conductivity `σ η₀ = 1 /m` (the loss step `U_v ← B̂_v U_v`
//!   at every vertex touching the slab, the dual blocks `Δt Ã_v⁻¹` there);
//! - `layer_<pct>%`: the same σ with the matched magnetic conductivity `σ*/η₀ = 1 /m`, as in
//!   an absorbing layer (adds the magnetic loss `F_n ← a_n F_n` on the slab's tets);
//! - `abc` (once, whatever F): vacuum with every wall a first-order absorbing condition
//!   (its half-edges become unknowns, with a surface conductance).
//!
//! Rows: kernel `step_lossy`, variant `none` (PEC walls, lossless: the baseline) and the
//! cases. Device rows time every kernel of one step ([`ClStepper::step_events`]: magnetic
//! loss, primal, loss step, circulation, vertex blocks), first start to last end, with the
//! default variants; `bytes_model` is the step's ([`cost::kernel_bytes`] in the default
//! layouts, for the case's own counts: `abc` has more unknowns) plus the losses'
//! ([`ClStepper::loss_bytes`], [`cost::loss_bytes`]). The CPU backend's rows time one
//! `advance` step (wall clock) with its default (lean) kernels; their model is the lean
//! step's plus [`cost::loss_bytes_cpu`].

use super::common::{
    BenchConfig, CaseKind, DeviceBases, Row, StepCase, box_dt, case_rows, cpu_step_times,
    ladder_box, random_state, time_events,
};
use dgatd::backend::Stepper;
use dgatd::backend::opencl::{ClDevice, ClStepper};
use dgatd::cost;
use dgatd::dga::Dga;
use dgatd::dga::{DualForm, Operators};
use dgatd::mesh::{Mesh, Topology};
use dgatd::problem::Media;
use dgatd::{Real, Result};
use std::sync::Arc;

/// Conductivities of the cases in library units (1/m): about one e-fold of decay per metre
/// of light travel, so the bench's random state stays finite over its repetitions.
const SIGMA: f64 = 1.0;

/// A case: its name, media and whether every wall absorbs.
pub struct Case {
    pub name: String,
    pub media: Media,
    pub abc: bool,
}

/// The cases on `mesh` for the slab fractions `fracs`, the baseline `none` first and `abc`
/// last.
pub fn cases(mesh: &Mesh, fracs: &[f64]) -> Vec<Case> {
    let nt = mesh.n_tets();
    let cx: Vec<f64> = mesh
        .tets
        .iter()
        .map(|tv| tv.iter().map(|&v| mesh.nodes[v as usize][0]).sum::<f64>() / 4.0)
        .collect();
    let mut out = vec![Case {
        name: "none".into(),
        media: Media::vacuum(nt),
        abc: false,
    }];
    for (name, magnetic) in [("sigma", false), ("layer", true)] {
        for &f in fracs {
            let mut md = Media::vacuum(nt);
            // F = 1 takes every tet (centroids are below 1)
            let on: Vec<f64> = cx
                .iter()
                .map(|&x| if x < f || f >= 1.0 { SIGMA } else { 0.0 })
                .collect();
            if magnetic {
                md.sigma_m = on.clone();
            }
            md.sigma = on;
            out.push(Case {
                name: format!("{name}_{}%", (100.0 * f.min(1.0)).round()),
                media: md,
                abc: false,
            });
        }
    }
    out.push(Case {
        name: "abc".into(),
        media: Media::vacuum(nt),
        abc: true,
    });
    out
}

/// The operators of `case` on `mesh` (PEC walls, or every wall absorbing).
pub fn assemble(mesh: &Mesh, topo: &Topology, case: &Case) -> Result<Dga> {
    if !case.abc {
        return Dga::assemble_with(mesh, topo, &case.media, &topo.boundary_edge, false);
    }
    let mut d = Dga::assemble_with(mesh, topo, &case.media, &vec![false; topo.n_edges()], false)?;
    let faces: Vec<u32> = topo.boundary_faces.iter().map(|&(f, _)| f).collect();
    let y = vec![1.0; faces.len()];
    d.add_surface(&dgatd::dga::surface_conductance(mesh, topo, &faces, &y));
    Ok(d)
}

/// The device row of one case: the lossy step in the default variants.
pub fn device_row<T: Real>(
    dev: &Arc<ClDevice>,
    d: &Arc<Dga>,
    case: &str,
    dt: f64,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Row> {
    let mut s = ClStepper::<T>::new(dev.clone(), d.clone(), DualForm::Factored, None, &[])?;
    s.set_time_step(dt, None)?;
    let (u, f) = random_state(d);
    s.set_state(&u, &f)?;
    let (step, _) = cost::dga_step(&d.counts(), std::mem::size_of::<T>());
    let mut k = 0;
    let times = time_events(dev, cfg.warmup, cfg.reps, || {
        k += 1;
        s.step_events(k)
    })?;
    Ok(row(base, d, case, times, step + s.loss_bytes(), copy_gbs))
}

/// The CPU backend's row of one case (wall clock of one `advance` step, lean kernels).
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
    let extra = cost::loss_bytes_cpu(&ops.loss_counts(d), ops.mag.len(), sb);
    let times = cpu_step_times(d, ops, cfg)?;
    let by = cost::kernel_bytes(&d.counts(), sb, 0);
    let step = by.primal_sym + by.circulation_list + by.vertex_block_lean;
    Ok(row(base, d, case, times, step + extra, copy_gbs))
}

fn row(base: &Row, d: &Dga, case: &str, times: Vec<f64>, bytes: f64, bw: f64) -> Row {
    let size = (d.n_tets, d.counts().dofs());
    Row::timed(base, "step_lossy", case, size, times, bytes, bw)
}

/// The `step_lossy` rows.
struct Lossy;

impl CaseKind for Lossy {
    fn device<T: Real>(c: &StepCase, dev: &Arc<ClDevice>, base: &Row, bw: f64) -> Result<Vec<Row>> {
        device_row::<T>(dev, &c.d, &c.name, c.dt, c.cfg, base, bw).map(|r| vec![r])
    }
    fn cpu<T: Real>(c: &StepCase, base: &Row, bw: f64) -> Result<Row> {
        cpu_row::<T>(&c.d, &c.name, c.dt, c.cfg, base, bw)
    }
}

/// Every lossy row at the bench size `size`: each case assembled once and timed on each
/// device and precision (and the CPU backend below its size limit).
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
    for case in cases(&mesh, fracs) {
        let d = Arc::new(assemble(&mesh, &topo, &case)?);
        let case = StepCase {
            name: case.name,
            d,
            dt,
            cfg,
        };
        case_rows::<Lossy>(&case, devices, cpu, report, log)?;
    }
    Ok(())
}
