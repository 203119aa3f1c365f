//! Bench rows of the DGA kernels and steps on a device, every variant, and the locality study.

use super::*;

/// Meshes up to this many tets also run renumbered (the `…_morton` and `…_shuffled` step
/// rows): the renumbered mesh's operators are a second `Dga` in host memory.
pub(super) const LOCALITY_MAX_TETS: usize = 21_000_000;

/// The main job's step (slot-major U, the default kernels: the row
/// `tet_sym_slot+factored_sym_slot`) on `dga`, a renumbering of the ladder's box
/// ([`dgatd::mesh::order`]): row `tet_sym_slot+factored_sym_slot_{order}`, the same byte
/// model (the same counts).
pub(super) fn locality_rows<T: Real>(
    dev: &Arc<ClDevice>,
    dga: &Arc<Dga>,
    order: &str,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Vec<Row>> {
    let mut s = dgatd::backend::dga_opencl::<T>(dev, dga, DualForm::Factored, None, &[])?;
    s.set_time_step(1e-3, None)?;
    let mut r = dgatd::internal::Rng::new(5);
    // the PEC half-edges at zero, as in any physical state (slot-major U needs it)
    let u: Vec<f64> = (0..2 * dga.n_edges)
        .map(|h| if dga.free_edge[h / 2] { r.sym() } else { 0.0 })
        .collect();
    let f: Vec<f64> = (0..4 * dga.n_tets).map(|_| r.sym()).collect();
    dgatd::backend::Stepper::set_state(&mut s, &u, &f)?;
    s.set_u_layout(opencl::ULayout::SlotMajor)?;
    let by = cost::kernel_bytes(&dga.counts(), std::mem::size_of::<T>(), 0);
    let bytes = by.primal_sym + 8.0 * dga.n_edges as f64 + by.circulation + by.vertex_block_sym;
    let times = step_times(dev, cfg.warmup, cfg.reps, &s)?;
    let size = (dga.n_tets, dga.counts().dofs());
    let variant = format!("tet_sym_slot+factored_sym_slot_{order}");
    Ok(vec![Row::timed(
        base, "step", &variant, size, times, bytes, copy_gbs,
    )])
}

/// All kernel rows of one OpenCL device, precision and mesh, in this order: the default
/// (symmetric) layouts, their bench variants (mixed storage, slot-major U, slot tables,
/// sliced ELL circulations), the full layouts, and the CSR dual (up to `cfg.csr_max_tets`).
pub(super) fn device_rows<T: Real>(
    dev: &Arc<ClDevice>,
    dga: &Arc<Dga>,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Vec<Row>> {
    let with_csr = dga.n_tets <= cfg.csr_max_tets;
    let mut b = KernelBench::<T>::new(dev, dga, cfg, base, copy_gbs)?;
    default_layout_rows(&mut b)?;
    // Bench variants of the default layouts, each as primal, dual and step rows named
    // `tet_sym{x}`, `vertex_block_sym{x}`, `tet_sym{x}+factored_sym{x}`:
    // - `_mixed` (f64 only): mixed storage, the same operators stored in f32 with f64 fields
    //   (not a default: it does not match the f64 reference to round-off);
    // - `_slot`, `_slot_mixed`: slot-major U, the free half-edges' DoFs in the dual's slot
    //   order (the vertex-block update reads and writes them coalesced; the primal gathers
    //   each edge's halves through a slot table, 8 more bytes per edge).
    // The slot-table and sliced ELL rows follow those.
    let mut later = slot_major_rows(&mut b)?;
    later.extend(sliced_ell_rows(&b)?);
    b.rows.extend(later);
    full_layout_rows(&mut b)?;
    if with_csr {
        csr_rows(&mut b)?;
    }
    Ok(b.rows)
}

/// One device's kernel rows in the making ([`device_rows`]): the stepper on the mesh (a
/// seeded random state, Δt = 1e-3), the byte models of its kernels, and the rows so far.
struct KernelBench<'a, T: Real> {
    dev: &'a ClDevice,
    dga: &'a Dga,
    s: ClStepper<T>,
    by: cost::KernelBytes,
    base: &'a Row,
    copy_gbs: f64,
    /// Untimed and timed repetitions of each row.
    w: usize,
    n: usize,
    rows: Vec<Row>,
}

/// The events of one timed repetition of some kernels on a stepper.
type Events = Result<Vec<opencl3::event::Event>>;

impl<'a, T: Real> KernelBench<'a, T> {
    /// The stepper on `dga` (CSR dual up to `cfg.csr_max_tets` tets, else factored) from a
    /// seeded random state, and the byte models at its CSR size.
    fn new(
        dev: &'a Arc<ClDevice>,
        dga: &'a Arc<Dga>,
        cfg: &BenchConfig,
        base: &'a Row,
        copy_gbs: f64,
    ) -> Result<Self> {
        let dual = if dga.n_tets <= cfg.csr_max_tets {
            DualForm::Csr
        } else {
            DualForm::Factored
        };
        let mut s = dgatd::backend::dga_opencl::<T>(dev, dga, dual, None, &[])?;
        s.set_time_step(1e-3, None)?;
        let (u, f) = {
            let mut r = dgatd::internal::Rng::new(5);
            let u: Vec<f64> = (0..2 * dga.n_edges).map(|_| r.sym()).collect();
            let f: Vec<f64> = (0..4 * dga.n_tets).map(|_| r.sym()).collect();
            (u, f)
        };
        dgatd::backend::Stepper::set_state(&mut s, &u, &f)?;
        let nnz = s.csr_nnz() as u64;
        let by = cost::kernel_bytes(&dga.counts(), std::mem::size_of::<T>(), nnz);
        Ok(KernelBench {
            dev,
            dga,
            s,
            by,
            base,
            copy_gbs,
            w: cfg.warmup,
            n: cfg.reps,
            rows: Vec::new(),
        })
    }

    /// The row of `kernel`/`variant` moving `bytes`, timed over the events `f` enqueues on
    /// the stepper.
    fn timed(
        &self,
        kernel: &str,
        variant: &str,
        bytes: f64,
        mut f: impl FnMut(&ClStepper<T>) -> Events,
    ) -> Result<Row> {
        let s = &self.s;
        let times = time_events(self.dev, self.w, self.n, || f(s))?;
        let size = (self.dga.n_tets, self.dga.counts().dofs());
        Ok(Row::timed(
            self.base,
            kernel,
            variant,
            size,
            times,
            bytes,
            self.copy_gbs,
        ))
    }

    /// Times a row as [`Self::timed`] and appends it to the rows.
    fn row(
        &mut self,
        kernel: &str,
        variant: &str,
        bytes: f64,
        f: impl FnMut(&ClStepper<T>) -> Events,
    ) -> Result<()> {
        let r = self.timed(kernel, variant, bytes, f)?;
        self.rows.push(r);
        Ok(())
    }

    /// The primal, dual and step rows of one bench variant `x` of the default layouts
    /// (`tet_sym{x}`, `vertex_block_sym{x}`, `tet_sym{x}+factored_sym{x}`): its primal and
    /// vertex-block kernels and their bytes `(bp, bb)`, the step with the paired
    /// circulation between them.
    fn variant_rows(
        &mut self,
        x: &str,
        primal: &dyn Fn(&ClStepper<T>) -> Result<opencl3::event::Event>,
        block: &dyn Fn(&ClStepper<T>) -> Result<opencl3::event::Event>,
        (bp, bb): (f64, f64),
    ) -> Result<()> {
        let primal_v = format!("tet_sym{x}");
        self.row("primal", &primal_v, bp, |s| Ok(vec![primal(s)?]))?;
        let block_v = format!("vertex_block_sym{x}");
        self.row("dual_factored", &block_v, bb, |s| Ok(vec![block(s)?]))?;
        let step_v = format!("{primal_v}+factored_sym{x}");
        let bytes = bp + self.by.circulation + bb;
        self.row("step", &step_v, bytes, |s| {
            Ok(vec![primal(s)?, s.circulation()?, block(s)?])
        })
    }
}

/// The default, symmetric layouts first; then the full ones (the stepper keeps one
/// layout resident and rebuilds the operator when a variant needs the other): the primal,
/// the circulations (the lists of one signed index per entry, `circulation`, then the
/// paired lists, `circulation_pair`, the default of every row below), the packed vertex
/// blocks, both dual kernels, and the step.
fn default_layout_rows<T: Real>(b: &mut KernelBench<T>) -> Result<()> {
    let by = b.by;
    let sym_v = Variants::default();
    b.s.set_variants(sym_v)?;
    b.row("primal", PrimalVariant::Sym.name(), by.primal_sym, |s| {
        Ok(vec![s.primal_update()?])
    })?;
    b.s.set_variants(Variants {
        circ: CircVariant::Lists,
        ..sym_v
    })?;
    let circ = |s: &ClStepper<T>| Ok(vec![s.circulation()?]);
    b.row(
        "dual_factored",
        CircVariant::Lists.name(),
        by.circulation_list,
        circ,
    )?;
    b.s.set_variants(sym_v)?;
    b.row(
        "dual_factored",
        CircVariant::Paired.name(),
        by.circulation,
        circ,
    )?;
    b.row(
        "dual_factored",
        BlockVariant::Packed.name(),
        by.vertex_block_sym,
        |s| Ok(vec![s.vertex_blocks()?]),
    )?;
    let both = by.circulation + by.vertex_block_sym;
    b.row("dual_factored", "both_sym", both, |s| {
        Ok(vec![s.circulation()?, s.vertex_blocks()?])
    })?;
    let step = by.primal_sym + by.circulation + by.vertex_block_sym;
    b.row("step", "tet_sym+factored_sym", step, |s| {
        Ok(vec![
            s.primal_update()?,
            s.circulation()?,
            s.vertex_blocks()?,
        ])
    })
}

/// The `_mixed` (f64 only), `_slot` and `_slot_mixed` (f64 only) variant rows
/// ([`KernelBench::variant_rows`]), appended to `b`'s rows. Returned, for the caller to
/// append after all of those (the CSV's row order): each slot-major variant `x`'s primal
/// through a per-tet slot table (48 bytes per tet instead of the 24 of the edge ids and the
/// 8 per edge of the half-edge slots) with the same dual, `tet_sym{x}_tet` and its step.
fn slot_major_rows<T: Real>(b: &mut KernelBench<T>) -> Result<Vec<Row>> {
    let (by, dga) = (b.by, b.dga);
    let saved = std::mem::size_of::<T>() as f64 - 4.0;
    let (prim_saved, blk_saved) = (
        10.0 * dga.n_tets as f64 * saved,
        dga.counts().packed as f64 * saved,
    );
    let slot_table = 8.0 * dga.n_edges as f64;
    if T::NAME == "f64" {
        let m = b.s.mixed_operators()?;
        b.variant_rows(
            "_mixed",
            &|s| s.primal_update_mixed(&m),
            &|s| s.vertex_blocks_mixed(&m),
            (by.primal_sym - prim_saved, by.vertex_block_sym - blk_saved),
        )?;
    }
    let mut table_rows = Vec::new();
    for mixed in [false, true] {
        if mixed && T::NAME != "f64" {
            continue;
        }
        let mut sm = b.s.slot_major(mixed)?;
        b.s.to_slot_major(&sm)?;
        let (x, bytes) = if mixed {
            (
                "_slot_mixed",
                (
                    by.primal_sym + slot_table - prim_saved,
                    by.vertex_block_sym - blk_saved,
                ),
            )
        } else {
            ("_slot", (by.primal_sym + slot_table, by.vertex_block_sym))
        };
        b.variant_rows(
            x,
            &|s| s.primal_update_sm(&sm),
            &|s| s.vertex_blocks_sm(&sm),
            bytes,
        )?;
        b.s.slot_table(&mut sm)?;
        let bp = bytes.0 + 24.0 * dga.n_tets as f64 - slot_table;
        let primal_v = format!("tet_sym{x}_tet");
        table_rows.push(b.timed("primal", &primal_v, bp, |s| {
            Ok(vec![s.primal_update_st(&sm)?])
        })?);
        let step_v = format!("{primal_v}+factored_sym{x}");
        let step = bp + by.circulation + bytes.1;
        table_rows.push(b.timed("step", &step_v, step, |s| {
            Ok(vec![
                s.primal_update_st(&sm)?,
                s.circulation()?,
                s.vertex_blocks_sm(&sm)?,
            ])
        })?);
    }
    Ok(table_rows)
}

/// The circulations through sliced ELL lists, alone and in the fastest exact step (the
/// slot-table primal, slot-major blocks; the lists are read with their padding): the
/// lists of one index per entry (`circulation_sell`), then the paired lists, the default,
/// in that form (`circulation_pair_sell`). Returned, not appended.
fn sliced_ell_rows<T: Real>(b: &KernelBench<T>) -> Result<Vec<Row>> {
    let (by, dga, s) = (b.by, b.dga, &b.s);
    let mut rows = Vec::new();
    let sell = s.sell_circulation()?;
    let by_sell = by.circulation_list + 4.0 * (sell.entries as f64 - dga.circ.len() as f64);
    rows.push(b.timed("dual_factored", "circulation_sell", by_sell, |s| {
        Ok(vec![s.circulation_sell(&sell)?])
    })?);
    let mut sm = s.slot_major(false)?;
    s.slot_table(&mut sm)?;
    s.to_slot_major(&sm)?;
    let bp = by.primal_sym + 24.0 * dga.n_tets as f64;
    rows.push(b.timed(
        "step",
        "tet_sym_slot_tet+factored_sym_slot_sell",
        bp + by_sell + by.vertex_block_sym,
        |s| {
            Ok(vec![
                s.primal_update_st(&sm)?,
                s.circulation_sell(&sell)?,
                s.vertex_blocks_sm(&sm)?,
            ])
        },
    )?);
    // the paired lists (the default) in sliced ELL form, alone and in that step
    let pc = s.pair_circulation(true)?;
    let pairs = dga.circ.len() as f64 / 2.0;
    let by_pair = by.circulation + 4.0 * (pc.entries as f64 - pairs);
    let x = "_pair_sell";
    rows.push(
        b.timed("dual_factored", &format!("circulation{x}"), by_pair, |s| {
            Ok(vec![s.circulation_pair(&pc)?])
        })?,
    );
    rows.push(b.timed(
        "step",
        &format!("tet_sym_slot_tet+factored_sym_slot{x}"),
        bp + by_pair + by.vertex_block_sym,
        |s| {
            Ok(vec![
                s.primal_update_st(&sm)?,
                s.circulation_pair(&pc)?,
                s.vertex_blocks_sm(&sm)?,
            ])
        },
    )?);
    Ok(rows)
}

/// The full layouts (the default variants but the `tet` primal and `vertex` blocks).
fn full_variants() -> Variants {
    Variants {
        primal: PrimalVariant::Tet,
        block: BlockVariant::Vertex,
        ..Variants::default()
    }
}

/// The full layouts' rows ([`full_variants`]): the primal, the vertex blocks, both dual
/// kernels, and the step.
fn full_layout_rows<T: Real>(b: &mut KernelBench<T>) -> Result<()> {
    let by = b.by;
    b.s.set_variants(full_variants())?;
    b.row("primal", PrimalVariant::Tet.name(), by.primal, |s| {
        Ok(vec![s.primal_update()?])
    })?;
    b.row(
        "dual_factored",
        BlockVariant::Vertex.name(),
        by.vertex_block,
        |s| Ok(vec![s.vertex_blocks()?]),
    )?;
    let both = by.circulation + by.vertex_block;
    b.row("dual_factored", "both", both, |s| {
        Ok(vec![s.circulation()?, s.vertex_blocks()?])
    })?;
    let step = by.primal + by.circulation + by.vertex_block;
    b.row("step", "tet+factored", step, |s| {
        Ok(vec![
            s.primal_update()?,
            s.circulation()?,
            s.vertex_blocks()?,
        ])
    })
}

/// The CSR dual's rows (the `vector` kernel on the full layouts): alone, and in the step
/// with the `tet` primal.
fn csr_rows<T: Real>(b: &mut KernelBench<T>) -> Result<()> {
    let by = b.by;
    b.s.set_variants(Variants {
        csr: CsrVariant::Vector,
        ..full_variants()
    })?;
    let name = "vector";
    b.row("dual_csr", name, by.csr, |s| Ok(vec![s.csr_update()?]))?;
    b.row(
        "step",
        &format!("tet+csr_{name}"),
        by.primal + by.csr,
        |s| Ok(vec![s.primal_update()?, s.csr_update()?]),
    )
}
