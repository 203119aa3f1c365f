//! Bench rows of the DGA kernels and steps on a device, every variant, and the locality study.

use super::*;
use dgatd::backend::planner;

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
    let mut s = planner::dga_opencl::<T>(dev, dga, DualForm::Factored, None, &[])?;
    s.set_time_step(1e-3, None)?;
    let mut r = dgatd::util::Rng::new(5);
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

/// All kernel rows of one OpenCL device, precision and mesh.
pub(super) fn device_rows<T: Real>(
    dev: &Arc<ClDevice>,
    dga: &Arc<Dga>,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Vec<Row>> {
    let with_csr = dga.n_tets <= cfg.csr_max_tets;
    let dual = if with_csr {
        DualForm::Csr
    } else {
        DualForm::Factored
    };
    let mut s = planner::dga_opencl::<T>(dev, dga, dual, None, &[])?;
    s.set_time_step(1e-3, None)?;
    let (u, f) = {
        let mut r = dgatd::util::Rng::new(5);
        let u: Vec<f64> = (0..2 * dga.n_edges).map(|_| r.sym()).collect();
        let f: Vec<f64> = (0..4 * dga.n_tets).map(|_| r.sym()).collect();
        (u, f)
    };
    dgatd::backend::Stepper::set_state(&mut s, &u, &f)?;
    let nnz = s.csr_nnz() as u64;
    let by = cost::kernel_bytes(&dga.counts(), std::mem::size_of::<T>(), nnz);
    let dofs = dga.counts().dofs();
    let mut rows = Vec::new();
    let mut push = |kernel: &str, variant: &str, v: Vec<f64>, bytes: f64| {
        let size = (dga.n_tets, dofs);
        rows.push(Row::timed(base, kernel, variant, size, v, bytes, copy_gbs));
    };
    let (w, n) = (cfg.warmup, cfg.reps);
    // The default, symmetric layouts first; then the full ones (the stepper keeps one
    // layout resident and rebuilds the operator when a variant needs the other).
    let sym_v = Variants::default();
    s.set_variants(sym_v)?;
    push(
        "primal",
        PrimalVariant::Sym.name(),
        time_events(dev, w, n, || Ok(vec![s.primal_update()?]))?,
        by.primal_sym,
    );
    // the circulations: the lists of one signed index per entry (`circulation`), then the
    // paired lists (`circulation_pair`), the default of every row below
    s.set_variants(Variants {
        circ: CircVariant::Lists,
        ..sym_v
    })?;
    push(
        "dual_factored",
        CircVariant::Lists.name(),
        time_events(dev, w, n, || Ok(vec![s.circulation()?]))?,
        by.circulation_list,
    );
    s.set_variants(sym_v)?;
    push(
        "dual_factored",
        CircVariant::Paired.name(),
        time_events(dev, w, n, || Ok(vec![s.circulation()?]))?,
        by.circulation,
    );
    push(
        "dual_factored",
        BlockVariant::Packed.name(),
        time_events(dev, w, n, || Ok(vec![s.vertex_blocks()?]))?,
        by.vertex_block_sym,
    );
    push(
        "dual_factored",
        "both_sym",
        time_events(dev, w, n, || Ok(vec![s.circulation()?, s.vertex_blocks()?]))?,
        by.circulation + by.vertex_block_sym,
    );
    push(
        "step",
        "tet_sym+factored_sym",
        step_times(dev, w, n, &s)?,
        by.primal_sym + by.circulation + by.vertex_block_sym,
    );
    // Bench variants of the default layouts, each as primal, dual and step rows named
    // `tet_sym{x}`, `vertex_block_sym{x}`, `tet_sym{x}+factored_sym{x}`:
    // - `_mixed` (f64 only): mixed storage, the same operators stored in f32 with f64 fields
    //   (not a default: it does not match the f64 reference to round-off);
    // - `_slot`, `_slot_mixed`: slot-major U, the free half-edges' DoFs in the dual's slot
    //   order (the vertex-block update reads and writes them coalesced; the primal gathers
    //   each edge's halves through a slot table, 8 more bytes per edge).
    {
        let saved = std::mem::size_of::<T>() as f64 - 4.0;
        let (prim_saved, blk_saved) = (
            10.0 * dga.n_tets as f64 * saved,
            dga.counts().packed as f64 * saved,
        );
        let slot_table = 8.0 * dga.n_edges as f64;
        let mut table_rows: Vec<(&str, String, Vec<f64>, f64)> = Vec::new();
        let mut rows3 = |x: &str,
                         primal: &dyn Fn() -> Result<opencl3::event::Event>,
                         block: &dyn Fn() -> Result<opencl3::event::Event>,
                         (bp, bb): (f64, f64)|
         -> Result<()> {
            let primal_v = format!("tet_sym{x}");
            push(
                "primal",
                &primal_v,
                time_events(dev, w, n, || Ok(vec![primal()?]))?,
                bp,
            );
            push(
                "dual_factored",
                &format!("vertex_block_sym{x}"),
                time_events(dev, w, n, || Ok(vec![block()?]))?,
                bb,
            );
            push(
                "step",
                &format!("{primal_v}+factored_sym{x}"),
                time_events(dev, w, n, || {
                    Ok(vec![primal()?, s.circulation()?, block()?])
                })?,
                bp + by.circulation + bb,
            );
            Ok(())
        };
        if T::NAME == "f64" {
            let m = s.mixed_operators()?;
            rows3(
                "_mixed",
                &|| s.primal_update_mixed(&m),
                &|| s.vertex_blocks_mixed(&m),
                (by.primal_sym - prim_saved, by.vertex_block_sym - blk_saved),
            )?;
        }
        for mixed in [false, true] {
            if mixed && T::NAME != "f64" {
                continue;
            }
            let sm = s.slot_major(mixed)?;
            s.to_slot_major(&sm)?;
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
            rows3(
                x,
                &|| s.primal_update_sm(&sm),
                &|| s.vertex_blocks_sm(&sm),
                bytes,
            )?;
            // the primal through a per-tet slot table (48 bytes per tet instead of the 24
            // of the edge ids and the 8 per edge of the half-edge slots), the same dual
            let mut sm = sm;
            s.slot_table(&mut sm)?;
            let bp = bytes.0 + 24.0 * dga.n_tets as f64 - slot_table;
            let primal_v = format!("tet_sym{x}_tet");
            table_rows.push((
                "primal",
                primal_v.clone(),
                time_events(dev, w, n, || Ok(vec![s.primal_update_st(&sm)?]))?,
                bp,
            ));
            table_rows.push((
                "step",
                format!("{primal_v}+factored_sym{x}"),
                time_events(dev, w, n, || {
                    Ok(vec![
                        s.primal_update_st(&sm)?,
                        s.circulation()?,
                        s.vertex_blocks_sm(&sm)?,
                    ])
                })?,
                bp + by.circulation + bytes.1,
            ));
        }
        // the circulations through sliced ELL lists, alone and in the fastest exact step
        // (the slot-table primal, slot-major blocks); its lists are read with their padding
        let sell = s.sell_circulation()?;
        let by_sell = by.circulation_list + 4.0 * (sell.entries as f64 - dga.circ.len() as f64);
        table_rows.push((
            "dual_factored",
            "circulation_sell".into(),
            time_events(dev, w, n, || Ok(vec![s.circulation_sell(&sell)?]))?,
            by_sell,
        ));
        let mut sm = s.slot_major(false)?;
        s.slot_table(&mut sm)?;
        s.to_slot_major(&sm)?;
        let bp = by.primal_sym + 24.0 * dga.n_tets as f64;
        table_rows.push((
            "step",
            "tet_sym_slot_tet+factored_sym_slot_sell".into(),
            time_events(dev, w, n, || {
                Ok(vec![
                    s.primal_update_st(&sm)?,
                    s.circulation_sell(&sell)?,
                    s.vertex_blocks_sm(&sm)?,
                ])
            })?,
            bp + by_sell + by.vertex_block_sym,
        ));
        // the paired lists (the default) in sliced ELL form, alone and in that step
        {
            let pc = s.pair_circulation(true)?;
            let pairs = dga.circ.len() as f64 / 2.0;
            let by_pair = by.circulation + 4.0 * (pc.entries as f64 - pairs);
            let x = "_pair_sell";
            table_rows.push((
                "dual_factored",
                format!("circulation{x}"),
                time_events(dev, w, n, || Ok(vec![s.circulation_pair(&pc)?]))?,
                by_pair,
            ));
            table_rows.push((
                "step",
                format!("tet_sym_slot_tet+factored_sym_slot{x}"),
                time_events(dev, w, n, || {
                    Ok(vec![
                        s.primal_update_st(&sm)?,
                        s.circulation_pair(&pc)?,
                        s.vertex_blocks_sm(&sm)?,
                    ])
                })?,
                bp + by_pair + by.vertex_block_sym,
            ));
        }
        for (kernel, variant, v, bytes) in table_rows {
            push(kernel, &variant, v, bytes);
        }
    }
    let base_v = Variants {
        primal: PrimalVariant::Tet,
        block: BlockVariant::Vertex,
        ..sym_v
    };
    s.set_variants(base_v)?;
    push(
        "primal",
        PrimalVariant::Tet.name(),
        time_events(dev, w, n, || Ok(vec![s.primal_update()?]))?,
        by.primal,
    );
    push(
        "dual_factored",
        BlockVariant::Vertex.name(),
        time_events(dev, w, n, || Ok(vec![s.vertex_blocks()?]))?,
        by.vertex_block,
    );
    push(
        "dual_factored",
        "both",
        time_events(dev, w, n, || Ok(vec![s.circulation()?, s.vertex_blocks()?]))?,
        by.circulation + by.vertex_block,
    );
    push(
        "step",
        "tet+factored",
        step_times(dev, w, n, &s)?,
        by.primal + by.circulation + by.vertex_block,
    );
    if with_csr {
        {
            s.set_variants(Variants {
                csr: CsrVariant::Vector,
                ..base_v
            })?;
            let name = "vector";
            push(
                "dual_csr",
                name,
                time_events(dev, w, n, || Ok(vec![s.csr_update()?]))?,
                by.csr,
            );
            push(
                "step",
                &format!("tet+csr_{name}"),
                time_events(dev, w, n, || Ok(vec![s.primal_update()?, s.csr_update()?]))?,
                by.primal + by.csr,
            );
        }
    }
    Ok(rows)
}
