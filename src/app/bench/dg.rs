//! Bench rows of the nodal DG path, on a device and on the CPU.

use super::*;

pub(super) fn dg_device_rows<T: Real>(
    dev: &Arc<ClDevice>,
    op: &Arc<dgatd::dg::DgOperator>,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Vec<Row>> {
    use dgatd::backend::Stepper;
    let mut s = dgatd::backend::dg_opencl::<T>(dev, op, 1e-3, None, vec![])?;
    let mut r = dgatd::internal::Rng::new(9);
    let q: Vec<f64> = (0..op.n_dofs()).map(|_| r.sym()).collect();
    s.set_state(&q, &[])?;
    let real = std::mem::size_of::<T>();
    let [(fb, ff), (ub, uf)] = cost::dg_kernels(&op.counts(), real);
    let variant = format!("N={}", op.re.n);
    let mut rows = vec![];
    let mut push = |kernel: &str, suffix: &str, v: Vec<f64>, bytes: f64, flops: f64| {
        let (m, lo, hi) = stats(v);
        let mut row = Row {
            kernel: kernel.into(),
            variant: format!("{variant}{suffix}"),
            tets: op.k,
            dofs: op.n_dofs(),
            reps: cfg.reps,
            median_s: m,
            min_s: lo,
            max_s: hi,
            bytes_model: bytes,
            flops_model: flops,
            ..base.clone()
        };
        row.frac_copy_bw = row.gbs() / copy_gbs;
        rows.push(row);
    };
    // Each kernel timed by its own profiling event (both are launched every time).
    let flux = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![s.stage_events(1, 0.0)?.0])
    })?;
    let upd = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![s.stage_events(1, 0.0)?.1])
    })?;
    push("dg_flux", "", flux, fb, ff);
    push("dg_update", "", upd, ub, uf);
    // The other update kernels, each as its own row (`N=k+node`, `N=k+blocked`, `N=k+resident`,
    // `N=k+paired`).
    use dgatd::backend::opencl::DgUpdate;
    let default = s.update();
    for u in DgUpdate::ALL {
        if u == default || s.set_update(u).is_err() {
            continue;
        }
        let t = time_events(dev, cfg.warmup, cfg.reps, || {
            Ok(vec![s.stage_events(1, 0.0)?.1])
        })?;
        push("dg_update", &format!("+{}", u.name()), t, ub, uf);
    }
    s.set_update(default)?;
    let step = time_events(dev, cfg.warmup, cfg.reps, || {
        let mut ev = vec![];
        for st in 0..5 {
            let (a, b) = s.stage_events(st, 0.0)?;
            ev.push(a);
            ev.push(b);
        }
        Ok(ev)
    })?;
    push("dg_step", "", step, 5.0 * (fb + ub), 5.0 * (ff + uf));
    Ok(rows)
}

pub(super) fn dg_cpu_row(
    op: &Arc<dgatd::dg::DgOperator>,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Row {
    let mut s = dgatd::backend::cpu::DgCpuStepper::new(op.clone(), 1e-3, None, vec![]);
    let mut r = dgatd::internal::Rng::new(9);
    s.q.iter_mut().for_each(|x| *x = r.sym());
    for _ in 0..cfg.warmup {
        s.step(0.0);
    }
    let v: Vec<f64> = (0..cfg.reps)
        .map(|_| {
            let t = Instant::now();
            s.step(0.0);
            t.elapsed().as_secs_f64()
        })
        .collect();
    let [(fb, ff), (ub, uf)] = cost::dg_kernels(&op.counts(), 8);
    let (m, lo, hi) = stats(v);
    let mut row = Row {
        kernel: "dg_step".into(),
        variant: format!("N={}", op.re.n),
        tets: op.k,
        dofs: op.n_dofs(),
        reps: cfg.reps,
        median_s: m,
        min_s: lo,
        max_s: hi,
        bytes_model: 5.0 * (fb + ub),
        flops_model: 5.0 * (ff + uf),
        ..base.clone()
    };
    row.frac_copy_bw = row.gbs() / copy_gbs;
    row
}
