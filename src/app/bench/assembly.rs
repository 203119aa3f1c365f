//! Bench rows of the operators' assembly: on the host, on the device, and left resident there.

use super::*;

/// The largest difference of `x` (device operators) from `y` (the host's), relative to the
/// largest entry of `y` (absolute when `y` is all zeros).
pub(super) fn rel_to_largest<T: Real>(x: &[T], y: &[f64]) -> f64 {
    let s = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let d = x
        .iter()
        .zip(y)
        .fold(0.0f64, |m, (p, q)| m.max((p.f64() - q).abs()));
    if s > 0.0 { d / s } else { d }
}

/// `preprocess` rows of the masses and inverses assembled on `dev`
/// ([`dgatd::backend::assemble_masses`]): variant `device` (layout on the host, uploads, kernels and
/// downloads: what replaces [`host_masses`] in the pipeline) and `device_kernels` (the two
/// kernels alone), over `min(reps, 3)` runs after one that builds the program. The first
/// run's operators are checked against the host's `dga` (lean); a difference above 1e-10 of
/// a block's largest entry is an error, not a row.
#[allow(clippy::too_many_arguments)]
pub(super) fn device_assembly_rows(
    dev: &Arc<ClDevice>,
    mesh: &dgatd::mesh::Mesh,
    topo: &Topology,
    mat: &Media,
    dga: &Dga,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    // The downloaded operators (f64 Mmu⁻¹ and full Meps⁻¹ blocks) sit beside the host's
    // until they are compared: skip, saying so, when the host cannot hold them.
    let need = 8.0 * (10 * dga.n_tets + dga.meps_inv.data.len()) as f64 * 1.1;
    if let Some(avail) = cost::available_memory()
        && need > avail as f64
    {
        log(&format!(
            "{} tets on {}: device assembly rows skipped: the downloaded operators need {:.1} GB of host memory, {:.1} GB available",
            dga.n_tets,
            dev.info.name,
            need / 1e9,
            avail as f64 / 1e9
        ));
        return Ok(Vec::new());
    }
    let k = dgatd::backend::AssemblyKernels::build(dev)?;
    timed_assembly(
        &["device", "device_kernels"],
        "device assembly",
        dev,
        dga,
        cfg,
        base,
        log,
        || dgatd::backend::assemble_masses(dev, &k, mesh, topo, mat, &dga.free_edge, true),
        |m, log| {
            // largest difference relative to the largest host entry, per tet or vertex
            let rel = rel_to_largest::<f64>;
            let e_mmu = (m.mmu_inv.par_iter().zip(&dga.mmu_inv))
                .map(|(x, y)| rel(x, y))
                .reduce(|| 0.0, f64::max);
            let e_meps = if m.meps_inv.off == dga.meps_inv.off {
                (0..dga.meps_inv.n_vertices())
                    .into_par_iter()
                    .map(|v| rel(m.meps_inv.block(v), dga.meps_inv.block(v)))
                    .reduce(|| 0.0, f64::max)
            } else {
                f64::INFINITY
            };
            log(&format!(
                "{} tets on {}: device masses against the host's: Mmu⁻¹ {e_mmu:.1e}, Meps⁻¹ {e_meps:.1e}",
                dga.n_tets, dev.info.name
            ));
            Ok((e_mmu <= 1e-10 && e_meps <= 1e-10).then_some(()).ok_or_else(|| {
                format!(
                    "the operators assembled on {} differ from the host's (Mmu⁻¹ {e_mmu:e}, Meps⁻¹ {e_meps:e})",
                    dev.info.name
                )
            }))
        },
    )
}

/// Runs a device assembly (`assemble`) `min(reps, 3) + 1` times: the first builds the
/// program(s) and is checked by `check` (Ok(Err(message)): an error naming the bench, no
/// row), the others are timed and logged as `"… tets on …: {what} … s (layout …, upload …,
/// kernels …, download …)"` (the form `results/h200/device_assembly/summary.py` reads).
/// Rows `variants[0]` (the whole call) and, when given, `variants[1]` (its kernels).
#[allow(clippy::too_many_arguments)]
pub(super) fn timed_assembly<M>(
    variants: &[&str],
    what: &str,
    dev: &ClDevice,
    dga: &Dga,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
    mut assemble: impl FnMut() -> dgatd::Result<(M, dgatd::backend::AssemblyTimes)>,
    mut check: impl FnMut(&M, &mut dyn FnMut(&str)) -> dgatd::Result<std::result::Result<(), String>>,
) -> Result<Vec<Row>> {
    let reps = cfg.reps.clamp(1, 3);
    let (mut total, mut kern) = (Vec::new(), Vec::new());
    for rep in 0..=reps {
        let (m, t) = assemble()?;
        if rep == 0 {
            check(&m, log)?.map_err(|e| Error::config("bench", what, e))?;
            continue;
        }
        log(&format!(
            "{} tets on {}: {what} {:.3} s (layout {:.3}, upload {:.3}, kernels {:.3}, download {:.3})",
            dga.n_tets, dev.info.name, t.total_s, t.layout_s, t.upload_s, t.kernels_s, t.download_s
        ));
        total.push(t.total_s);
        kern.push(t.kernels_s);
    }
    let dofs = (dga.n_tets, dga.counts().dofs());
    Ok(variants
        .iter()
        .zip([total, kern])
        .map(|(v, times)| Row::preprocess(base, v, dofs, times))
        .collect())
}

/// `Δt` of the CSR matrices the `preprocess` rows build (any value: it only scales them).
pub(super) const CSR_DT: f64 = 1e-3;

/// `preprocess` rows of the CSR form's matrix `Δt Meps⁻¹ C̃` assembled on `dev`
/// ([`dgatd::backend::assemble_csr`]): variant `device_csr` (the masses and inverses, the host's
/// structure, the values on the device and their download: what replaces `host_masses` plus
/// `host_csr`) and `device_csr_kernels` (the three kernels alone), over `min(reps, 3)` runs
/// after one that builds the program and is checked against `want` (the host's
/// `build_csr`): the same structure, and values within 1e-10 of each row's largest, or an
/// error, not a row.
#[allow(clippy::too_many_arguments)]
pub(super) fn device_csr_rows(
    dev: &Arc<ClDevice>,
    mesh: &dgatd::mesh::Mesh,
    topo: &Topology,
    mat: &Media,
    dga: &Dga,
    want: &sprs::CsMat<f64>,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    let k = dgatd::backend::AssemblyKernels::build(dev)?;
    timed_assembly(
        &["device_csr", "device_csr_kernels"],
        "device CSR",
        dev,
        dga,
        cfg,
        base,
        log,
        || dgatd::backend::assemble_csr(dev, &k, mesh, topo, mat, &dga.free_edge, CSR_DT),
        |m, log| {
            let same = m.indptr() == want.indptr() && m.indices() == want.indices();
            let ip = want.indptr().raw_storage().to_vec();
            let e = if same {
                (0..want.rows())
                    .into_par_iter()
                    .map(|r| {
                        let rows = ip[r]..ip[r + 1];
                        rel_to_largest::<f64>(&m.data()[rows.clone()], &want.data()[rows])
                    })
                    .reduce(|| 0.0, f64::max)
            } else {
                f64::INFINITY
            };
            log(&format!(
                "{} tets on {}: device CSR against the host's: {} nonzeros, values {e:.1e}",
                dga.n_tets,
                dev.info.name,
                want.nnz()
            ));
            Ok((e <= 1e-10).then_some(()).ok_or_else(|| {
                format!(
                    "the CSR matrix assembled on {} differs from the host's (structure equal: {same}, values {e:e})",
                    dev.info.name
                )
            }))
        },
    )
}

/// `preprocess` rows of the operators assembled on `dev` and left there, packed into the
/// stepper's layouts in precision `T` ([`dgatd::backend::assemble_resident`]): variant
/// `device_resident` (layout on the host, uploads, assembly and packing kernels; nothing is
/// downloaded: what replaces [`host_masses`] and the operators' upload when the stepper is
/// built with [`dgatd::backend::opencl::ClStepper::with_resident`]), over `min(reps, 3)` runs
/// after one that builds the programs and whose packed operators are read back and checked
/// against the host's `dga` packed on the host: a difference above 1e-10 (f64) or 1e-6
/// (f32, the rounding) of a tet's or block's largest entry is an error, not a row.
#[allow(clippy::too_many_arguments)]
pub(super) fn resident_rows<T: Real>(
    dev: &Arc<ClDevice>,
    mesh: &dgatd::mesh::Mesh,
    topo: &Topology,
    mat: &Media,
    dga: &Dga,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    let k = dgatd::backend::AssemblyKernels::build(dev)?;
    let pk = dgatd::backend::PackKernels::build::<T>(dev)?;
    let tol = if T::NAME == "f64" { 1e-10 } else { 1e-6 };
    timed_assembly(
        &["device_resident"],
        &format!("resident {} assembly", T::NAME),
        dev,
        dga,
        cfg,
        base,
        log,
        || dgatd::backend::assemble_resident::<T>(dev, &k, &pk, mesh, topo, mat, &dga.free_edge),
        |ops, log| {
            let (nt, tp) = (dga.n_tets, opencl::tet_stride(dga.n_tets));
            let rel = rel_to_largest::<T>;
            let p = dev.read(&ops.primal, 10 * tp, "resident primal")?;
            let e_mmu = (0..nt)
                .into_par_iter()
                .map(|n| {
                    let x: Vec<T> = (0..10).map(|k| p[k * tp + n]).collect();
                    rel(&x, &dga.mmu_inv[n])
                })
                .reduce(|| 0.0, f64::max);
            drop(p);
            let b = dev.read(&ops.blocks, ops.block_len(), "resident blocks")?;
            let e_meps = if ops.layout.off == dga.meps_inv.off {
                (0..dga.meps_inv.n_vertices())
                    .into_par_iter()
                    .map(|v| {
                        let r = ops.poff[v] as usize..ops.poff[v + 1] as usize;
                        // the block's upper triangle column by column (VertexBlocks::pack)
                        let (blk, d) = (dga.meps_inv.block(v), dga.meps_inv.dim(v));
                        let want: Vec<f64> = (0..d)
                            .flat_map(|i| (0..=i).map(move |j| blk[j * d + i]))
                            .collect();
                        rel(&b[r], &want)
                    })
                    .reduce(|| 0.0, f64::max)
            } else {
                f64::INFINITY
            };
            log(&format!(
                "{} tets on {}: resident {} operators against the host's: Mmu⁻¹ {e_mmu:.1e}, Meps⁻¹ {e_meps:.1e}",
                dga.n_tets,
                dev.info.name,
                T::NAME
            ));
            Ok((e_mmu <= tol && e_meps <= tol).then_some(()).ok_or_else(|| {
                format!(
                    "the {} operators assembled and packed on {} differ from the host's (Mmu⁻¹ {e_mmu:e}, Meps⁻¹ {e_meps:e})",
                    T::NAME,
                    dev.info.name
                )
            }))
        },
    )
}

/// `preprocess` rows of the operators and the CSR form's matrix assembled on `dev` and left
/// there in precision `T` ([`dgatd::backend::assemble_resident_csr`]: the structure, the columns and
/// the values built by kernels, no host pass over the matrix): variant
/// `device_resident_csr`, what replaces [`host_masses`], `host_csr` and the CSR stepper's
/// upload. Over `min(reps, 3)` runs after one whose matrix is read back and checked against
/// `want` (the host's `build_csr` at [`CSR_DT`]): the same row pointers, the columns as the
/// stepper's F slots, and values within 1e-10 (f64) or 1e-6 (f32, the rounding) of each
/// row's largest, or an error, not a row.
#[allow(clippy::too_many_arguments)]
pub(super) fn resident_csr_rows<T: Real>(
    dev: &Arc<ClDevice>,
    mesh: &dgatd::mesh::Mesh,
    topo: &Topology,
    mat: &Media,
    dga: &Dga,
    want: &sprs::CsMat<f64>,
    cfg: &BenchConfig,
    base: &Row,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Row>> {
    let k = dgatd::backend::AssemblyKernels::build(dev)?;
    let pk = dgatd::backend::PackKernels::build::<T>(dev)?;
    let tol = if T::NAME == "f64" { 1e-10 } else { 1e-6 };
    timed_assembly(
        &["device_resident_csr"],
        &format!("resident {} assembly with the CSR matrix", T::NAME),
        dev,
        dga,
        cfg,
        base,
        log,
        || {
            dgatd::backend::assemble_resident_csr::<T>(
                dev,
                &k,
                &pk,
                mesh,
                topo,
                mat,
                &dga.free_edge,
            )
        },
        |ops, log| {
            let Some((ip, ix, dv, nnz)) = &ops.csr else {
                unreachable!("resident_csr returns the matrix")
            };
            let tp = opencl::tet_stride(dga.n_tets); // F value k of tet n at k * tp + n
            let wip = want.indptr();
            let wip = wip.raw_storage();
            let same_ip = *nnz == want.nnz()
                && dev
                    .read(ip, want.rows() + 1, "resident CSR row pointers")?
                    .par_iter()
                    .zip(wip)
                    .all(|(&a, &b)| a as usize == b);
            let e = if same_ip {
                let ix = dev.read(ix, *nnz, "resident CSR columns")?;
                let dv = dev.read(dv, *nnz, "resident CSR values")?;
                (0..want.rows())
                    .into_par_iter()
                    .map(|r| {
                        let rows = wip[r]..wip[r + 1];
                        let cols_equal = ix[rows.clone()]
                            .iter()
                            .zip(&want.indices()[rows.clone()])
                            .all(|(&a, &c)| a as usize == (c % 4) * tp + c / 4);
                        if !cols_equal {
                            return f64::INFINITY;
                        }
                        // want is at Δt = CSR_DT, the resident matrix at unit Δt
                        let w: Vec<f64> = want.data()[rows.clone()]
                            .iter()
                            .map(|x| x / CSR_DT)
                            .collect();
                        rel_to_largest::<T>(&dv[rows], &w)
                    })
                    .reduce(|| 0.0, f64::max)
            } else {
                f64::INFINITY
            };
            log(&format!(
                "{} tets on {}: resident {} CSR against the host's: {nnz} nonzeros, structure equal: {same_ip}, values {e:.1e}",
                dga.n_tets,
                dev.info.name,
                T::NAME
            ));
            Ok((e <= tol).then_some(()).ok_or_else(|| {
                format!(
                    "the {} CSR matrix built on {} differs from the host's (structure equal: {same_ip}, values {e:e})",
                    T::NAME,
                    dev.info.name
                )
            }))
        },
    )
}
