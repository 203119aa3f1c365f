//! Bench rows of the CPU backend (the host).

use super::*;

/// The CPU backend's rows (wall clock). Its copy bandwidth is measured with a parallel
/// copy of the same size as the device probe (capped at 64 Mi elements).
pub(super) fn cpu_rows<T: Real>(
    dga: &Dga,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Vec<Row> {
    let with_csr = dga.n_tets <= cfg.csr_max_tets;
    let ops = Operators::<T>::new(dga, 1e-3, with_csr);
    let mut r = dgatd::util::Rng::new(5);
    let u: Vec<T> = (0..2 * dga.n_edges).map(|_| T::of(r.sym())).collect();
    let mut uo = u.clone();
    let mut f: Vec<T> = (0..4 * dga.n_tets).map(|_| T::of(r.sym())).collect();
    let mut c = vec![T::zero(); dga.n_edges];
    let nnz = ops.csr.as_ref().map(|m| m.nnz() as u64).unwrap_or(0);
    let by = cost::kernel_bytes(&dga.counts(), std::mem::size_of::<T>(), nnz);
    let dofs = dga.counts().dofs();
    let (w, n) = (cfg.warmup, cfg.reps);
    let mut rows = Vec::new();
    let mut push = |kernel: &str, variant: &str, v: Vec<f64>, bytes: f64| {
        let size = (dga.n_tets, dofs);
        rows.push(Row::timed(base, kernel, variant, size, v, bytes, copy_gbs));
    };
    push(
        "primal",
        "tet",
        time_wall(w, n, || cpu::primal(&ops, &u, &mut f)),
        by.primal,
    );
    push(
        "dual_factored",
        "both",
        time_wall(w, n, || {
            cpu::circulations(&ops, &f, &mut c);
            cpu::vertex_blocks(&ops, &c, &mut uo)
        }),
        by.circulation_list + by.vertex_block,
    );
    push(
        "step",
        "tet+factored",
        time_wall(w, n, || {
            cpu::primal(&ops, &uo, &mut f);
            cpu::circulations(&ops, &f, &mut c);
            cpu::vertex_blocks(&ops, &c, &mut uo)
        }),
        by.primal + by.circulation_list + by.vertex_block,
    );
    // the lean layouts (the stepper's default, dgatd::backend::cpu::lean)
    if let Ok(l) = cpu::Lean::new(dga, &ops, true) {
        let mut y = l.scratch();
        push(
            "primal",
            "tet_lean",
            time_wall(w, n, || lean::primal(&ops, &l, &u, &mut f)),
            by.primal_sym,
        );
        push(
            "dual_factored",
            "lean",
            time_wall(w, n, || {
                lean::circulations(&ops, &l, &f, &mut c);
                lean::vertex_blocks(&l, &c, &mut y, &mut uo)
            }),
            by.circulation_list + by.vertex_block_lean,
        );
        push(
            "step",
            "tet_lean+factored_lean",
            time_wall(w, n, || {
                lean::primal(&ops, &l, &uo, &mut f);
                lean::circulations(&ops, &l, &f, &mut c);
                lean::vertex_blocks(&l, &c, &mut y, &mut uo)
            }),
            by.primal_sym + by.circulation_list + by.vertex_block_lean,
        );
    }
    if with_csr {
        push(
            "dual_csr",
            "rows",
            time_wall(w, n, || cpu::dual_csr(&ops, &f, &mut uo)),
            by.csr,
        );
        push(
            "step",
            "tet+csr_rows",
            time_wall(w, n, || {
                cpu::primal(&ops, &uo, &mut f);
                cpu::dual_csr(&ops, &f, &mut uo)
            }),
            by.primal + by.csr,
        );
        if let Ok(l) = cpu::Lean::new(dga, &ops, false) {
            push(
                "step",
                "tet_lean+csr_rows",
                time_wall(w, n, || {
                    lean::primal(&ops, &l, &uo, &mut f);
                    cpu::dual_csr(&ops, &f, &mut uo)
                }),
                by.primal_sym + by.csr,
            );
        }
    }
    rows
}
