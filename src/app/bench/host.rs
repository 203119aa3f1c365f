//! Bench rows of the CPU backend (the host).

use super::*;

/// The CPU backend's rows (wall clock): the full layouts, the lean layouts (the stepper's
/// default), and the CSR dual up to `cfg.csr_max_tets`. Its copy bandwidth is measured
/// with a parallel copy of the same size as the device probe (capped at 64 Mi elements).
pub(super) fn cpu_rows<T: Real>(
    dga: &Dga,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Vec<Row> {
    let with_csr = dga.n_tets <= cfg.csr_max_tets;
    let mut b = CpuBench::<T>::new(dga, cfg, base, copy_gbs, with_csr);
    b.full_rows();
    // the lean layouts (the stepper's default, dgatd::backend::cpu::lean)
    if let Ok(l) = cpu::Lean::new(dga, &b.ops, true) {
        b.lean_rows(&l);
    }
    if with_csr {
        b.csr_rows();
    }
    b.rows
}

/// The CPU backend's rows in the making ([`cpu_rows`]): the operators, a seeded random
/// state and the work arrays the kernels update in turn, the byte models, and the rows so
/// far.
struct CpuBench<'a, T: Real> {
    dga: &'a Dga,
    ops: Operators<T>,
    /// U (the primal's input), U updated by the dual, F and the circulations.
    u: Vec<T>,
    uo: Vec<T>,
    f: Vec<T>,
    c: Vec<T>,
    by: cost::KernelBytes,
    base: &'a Row,
    copy_gbs: f64,
    /// Untimed and timed repetitions of each row.
    w: usize,
    n: usize,
    rows: Vec<Row>,
}

impl<'a, T: Real> CpuBench<'a, T> {
    /// The operators of `dga` at Δt = 1e-3 (with the CSR dual when `with_csr`) and the
    /// state from a seeded random U and F.
    fn new(dga: &'a Dga, cfg: &BenchConfig, base: &'a Row, copy_gbs: f64, with_csr: bool) -> Self {
        let ops = Operators::<T>::new(dga, 1e-3, with_csr);
        let mut r = dgatd::internal::Rng::new(5);
        let u: Vec<T> = (0..2 * dga.n_edges).map(|_| T::of(r.sym())).collect();
        let uo = u.clone();
        let f: Vec<T> = (0..4 * dga.n_tets).map(|_| T::of(r.sym())).collect();
        let c = vec![T::zero(); dga.n_edges];
        let nnz = ops.csr.as_ref().map(|m| m.nnz() as u64).unwrap_or(0);
        let by = cost::kernel_bytes(&dga.counts(), std::mem::size_of::<T>(), nnz);
        CpuBench {
            dga,
            ops,
            u,
            uo,
            f,
            c,
            by,
            base,
            copy_gbs,
            w: cfg.warmup,
            n: cfg.reps,
            rows: Vec::new(),
        }
    }

    /// Appends the row of `kernel`/`variant` from its wall times `v`, moving `bytes`.
    fn push(&mut self, kernel: &str, variant: &str, v: Vec<f64>, bytes: f64) {
        let size = (self.dga.n_tets, self.dga.counts().dofs());
        let r = Row::timed(self.base, kernel, variant, size, v, bytes, self.copy_gbs);
        self.rows.push(r);
    }

    /// The full layouts: the primal (`tet`), both dual kernels, and the step.
    fn full_rows(&mut self) {
        let (w, n, by) = (self.w, self.n, self.by);
        let (ops, u, uo, f, c) = (&self.ops, &self.u, &mut self.uo, &mut self.f, &mut self.c);
        let primal = time_wall(w, n, || cpu::primal(ops, u, f));
        let dual = time_wall(w, n, || {
            cpu::circulations(ops, f, c);
            cpu::vertex_blocks(ops, c, uo)
        });
        let step = time_wall(w, n, || {
            cpu::primal(ops, uo, f);
            cpu::circulations(ops, f, c);
            cpu::vertex_blocks(ops, c, uo)
        });
        self.push("primal", "tet", primal, by.primal);
        let both = by.circulation_list + by.vertex_block;
        self.push("dual_factored", "both", dual, both);
        let bytes = by.primal + by.circulation_list + by.vertex_block;
        self.push("step", "tet+factored", step, bytes);
    }

    /// The lean layouts `l` (the stepper's default, [`cpu::lean_primal`]): the primal, the dual, the
    /// step.
    fn lean_rows(&mut self, l: &cpu::Lean<T>) {
        let (w, n, by) = (self.w, self.n, self.by);
        let (ops, u, uo, f, c) = (&self.ops, &self.u, &mut self.uo, &mut self.f, &mut self.c);
        let mut y = l.scratch();
        let primal = time_wall(w, n, || cpu::lean_primal(ops, l, u, f));
        let dual = time_wall(w, n, || {
            cpu::lean_circulations(ops, l, f, c);
            cpu::lean_vertex_blocks(l, c, &mut y, uo)
        });
        let step = time_wall(w, n, || {
            cpu::lean_primal(ops, l, uo, f);
            cpu::lean_circulations(ops, l, f, c);
            cpu::lean_vertex_blocks(l, c, &mut y, uo)
        });
        self.push("primal", "tet_lean", primal, by.primal_sym);
        let dual_bytes = by.circulation_list + by.vertex_block_lean;
        self.push("dual_factored", "lean", dual, dual_bytes);
        let bytes = by.primal_sym + by.circulation_list + by.vertex_block_lean;
        self.push("step", "tet_lean+factored_lean", step, bytes);
    }

    /// The CSR dual (`rows`): alone, in the step with the full primal, and in the step
    /// with the lean primal (where its layout builds).
    fn csr_rows(&mut self) {
        let (w, n, by) = (self.w, self.n, self.by);
        let (ops, uo, f) = (&self.ops, &mut self.uo, &mut self.f);
        let dual = time_wall(w, n, || cpu::dual_csr(ops, f, uo));
        let step = time_wall(w, n, || {
            cpu::primal(ops, uo, f);
            cpu::dual_csr(ops, f, uo)
        });
        let lean_step = cpu::Lean::new(self.dga, ops, false).ok().map(|l| {
            time_wall(w, n, || {
                cpu::lean_primal(ops, &l, uo, f);
                cpu::dual_csr(ops, f, uo)
            })
        });
        self.push("dual_csr", "rows", dual, by.csr);
        self.push("step", "tet+csr_rows", step, by.primal + by.csr);
        if let Some(t) = lean_step {
            self.push("step", "tet_lean+csr_rows", t, by.primal_sym + by.csr);
        }
    }
}
