//! Device layouts of the per-tet arrays (the tet stride, F slots), the uploads of the
//! operators in them, and the device-memory check.

use super::*;
use crate::dga::stretch::MagOps;

/// The device words of the circulation lists of `dga` in form `v` (F slots of a mesh of
/// `t` tets), or an error naming what does not fit.
pub(super) fn circulation_words(dga: &Dga, v: CircVariant) -> Result<Vec<u32>> {
    let (circ, t) = (&dga.circ, dga.n_tets);
    match v {
        CircVariant::Lists => Ok(circ
            .par_iter()
            .map(|&x| (f_slot(x >> 1, tet_stride(t)) << 1) | (x & 1))
            .collect()),
        CircVariant::Paired => {
            if t >= CircVariant::PAIRED_MAX_TETS {
                return Err(Error::DeviceMemory(format!(
                    "{t} tets: the paired circulation entries hold 28-bit tet indices; use the circulation lists"
                )));
            }
            let pair = |k: usize| -> Result<u32> {
                let (a, b) = (circ[2 * k], circ[2 * k + 1]);
                let (fa, fb) = (a >> 1, b >> 1);
                if a & 1 != 0 || b & 1 != 1 || fa / 4 != fb / 4 {
                    return Err(Error::config(
                        "circulation",
                        format!("entries {a:#x}, {b:#x}"),
                        "not a tet's pair +F(n, fp), -F(n, fm)",
                    ));
                }
                Ok(((fa / 4) << 4) | ((fa % 4) << 2) | (fb % 4))
            };
            (0..circ.len() / 2).into_par_iter().map(pair).collect()
        }
    }
}

/// Refuses a mesh whose operators do not fit the device (total memory, largest buffer),
/// before anything is allocated, with the figures ([`crate::cost::dga_device_bytes`]).
pub(super) fn check_device_memory<T: Real>(
    dev: &ClDevice,
    dga: &Dga,
    dual: DualForm,
) -> Result<()> {
    let real = std::mem::size_of::<T>();
    let nnz = (dual == DualForm::Csr).then(|| csr_nnz_estimate(dga));
    let mut counts = dga.counts();
    if Variants::for_dga(dga).block == BlockVariant::Vertex {
        counts.packed = counts.block; // full blocks resident
    }
    let (total, largest) = crate::cost::dga_device_bytes(&counts, real, nnz);
    let avail = dev.info.global_mem;
    if total as f64 > 0.92 * avail as f64 {
        return Err(Error::DeviceMemory(format!(
            "the mesh needs about {} on the device ({} tets, {} precision, {} dual), but {} has {}",
            indicatif::HumanBytes(total),
            dga.n_tets,
            T::NAME,
            dual.name(),
            dev.info.name,
            indicatif::HumanBytes(avail)
        )));
    }
    if largest > dev.info.max_alloc {
        return Err(Error::DeviceMemory(format!(
            "the largest operator array needs {}, above the maximum allocation of {} on {}",
            indicatif::HumanBytes(largest),
            indicatif::HumanBytes(dev.info.max_alloc),
            dev.info.name
        )));
    }
    Ok(())
}

/// The exact number of nonzeros of the CSR matrix: per vertex, (free rows) x (distinct
/// F columns of its dual faces).
pub fn csr_nnz_estimate(dga: &Dga) -> u64 {
    use rayon::prelude::*;
    (0..dga.meps.n_vertices())
        .into_par_iter()
        .map(|v| {
            let hs = dga.meps.halves(v);
            let mut cols: Vec<u32> = hs
                .iter()
                .flat_map(|&h| {
                    let e = (h >> 1) as usize;
                    dga.circ[dga.circ_ptr[e] as usize..dga.circ_ptr[e + 1] as usize]
                        .iter()
                        .map(|x| x >> 1)
                })
                .collect();
            cols.sort_unstable();
            cols.dedup();
            (hs.len() * cols.len()) as u64
        })
        .sum()
}

/// Bits of an edge id in the primal edge table (bit 31 holds the edge's orientation).
pub(super) const EDGE_MASK: u32 = 0x7fff_ffff;

/// The primal operator of `dga` in the layout of `v`, column-major across tets, each tet's
/// values scaled by `scale(n)` (Δt, or Δt/(1 + b) with magnetic loss), converted chunk by
/// chunk: `Δt Mmu⁻¹ C` (24 per tet) or `Δt Mmu⁻¹`'s upper triangle (10 per tet).
pub(super) fn upload_primal<T: Real>(
    dev: &ClDevice,
    dga: &Dga,
    v: PrimalVariant,
    scale: &(dyn Fn(usize) -> f64 + Sync),
    pml: Option<(&MagOps<T>, f64)>,
) -> Result<Buffer<T>> {
    let (t, what) = (dga.n_tets, "primal blocks");
    // a layer tet's block is Δt Ã_n⁻¹ C_n (dga::stretch; its tets have no σ*)
    let layer = |n: usize| pml.and_then(|(mp, dt)| Some((mp, mp.index(n)?, dt)));
    match v {
        PrimalVariant::Sym => upload_columns(dev, t, 10, what, T::zero(), |k, n| {
            T::of(match layer(n) {
                Some((mp, i, dt)) => dt * mp.inv[i][k],
                None => scale(n) * dga.mmu_inv[n][k],
            })
        }),
        PrimalVariant::Tet => upload_columns(dev, t, 24, what, T::zero(), |rl, n| {
            T::of(match layer(n) {
                Some((mp, i, dt)) => dt * mp.primal_block(dga, i)[rl / 6][rl % 6],
                None => scale(n) * dga.primal_entry(n, rl / 6, rl % 6),
            })
        }),
    }
}

/// A per-tet device array of `cols` columns of the tet stride ([`tet_stride`]): `f(k, n)`
/// at `k * tet_stride(t) + n` for the `t` tets, `pad` at the padding tets.
pub(super) fn upload_columns<U: Copy + Default + Send + Sync>(
    dev: &ClDevice,
    t: usize,
    cols: usize,
    what: &str,
    pad: U,
    f: impl Fn(usize, usize) -> U + Sync,
) -> Result<Buffer<U>> {
    let tp = tet_stride(t);
    dev.upload_with(cols * tp, what, |i| match i % tp < t {
        true => f(i / tp, i % tp),
        false => pad,
    })
}

/// Work-groups of a [`ClStepper`] dot product of `n` values: at most 256, fewer when fewer
/// already give every value its own work-item.
pub(super) fn dot_groups(n: usize) -> usize {
    n.div_ceil(LOCAL).clamp(1, 256)
}

/// The vertex blocks `scale · full` (in the layout of `layout`), full or packed
/// ([`crate::dga::VertexBlocks::pack`]), and their length.
/// The vertex blocks `f(full)` in `lay`, their length, and the offsets of a packed layout
/// (uploaded into the stepper's `poff`; None for the full layout, which reads `boff`).
pub(super) fn upload_blocks<U: Copy + Sync, T: Real>(
    dev: &ClDevice,
    layout: &crate::dga::VertexBlocks,
    full: &[U],
    lay: BlockLayout,
    f: impl Fn(U) -> T + Sync,
) -> Result<(Buffer<T>, usize, Option<Buffer<u64>>)> {
    let packed = |data: Vec<T>, off: Vec<u64>| -> Result<(Buffer<T>, usize, Option<Buffer<u64>>)> {
        Ok((
            dev.upload(&data, "vertex blocks")?,
            data.len(),
            Some(dev.upload(&off, "packed block offsets")?),
        ))
    };
    match lay {
        BlockLayout::Tri => {
            let off = layout.packed_offsets();
            packed(layout.pack(full, &off, f), off)
        }
        BlockLayout::Full => {
            let b = dev.upload_with(full.len(), "vertex blocks", |i| f(full[i]))?;
            Ok((b, full.len(), None))
        }
    }
}

/// Tets per column of the stepper's per-tet device arrays are rounded up to a multiple of
/// this ([`tet_stride`]).
pub const TET_ALIGN: usize = 64;

/// The column length of the stepper's per-tet device arrays (F, the primal operators, the
/// edge and slot tables) for `t` tets: `t` rounded up to [`TET_ALIGN`]. Column `k` then
/// starts at `k·stride`, a multiple of 256 bytes in f32 and 512 in f64, so a work-group's
/// coalesced loads cover whole 32-byte sectors and 128-byte lines. With the tet count as
/// the stride, every column but the first starts inside a sector unless `t` is a multiple of
/// 8 (f32) or 4 (f64): the H200 runs the primal kernel 1.2–1.4× slower then
/// (`results/h200/aligned/`). The padding tets `t..stride` have zero operators and point at
/// valid (zero) DoFs, so the kernels run over them unchanged and their F stays zero.
pub fn tet_stride(t: usize) -> usize {
    t.div_ceil(TET_ALIGN) * TET_ALIGN
}

/// Host F slot `4n + k` -> device slot `k*TP + n` (`tp` the [`tet_stride`]).
#[inline]
pub(super) fn f_slot(x: u32, tp: usize) -> u32 {
    let (n, k) = ((x / 4) as usize, (x % 4) as usize);
    (k * tp + n) as u32
}

/// The host layout (`4n + k`, `t` tets) of device F values `d` (`k*tp + n`).
pub(super) fn f_to_host<X: Copy, Y>(d: &[X], t: usize, tp: usize, f: impl Fn(X) -> Y) -> Vec<Y> {
    (0..4 * t).map(|i| f(d[(i % 4) * tp + i / 4])).collect()
}

/// The device layout (`k*tp + n`, zero at the padding tets) of host F values `h` (`4n + k`,
/// `t` tets): the inverse of [`f_to_host`].
pub(super) fn f_to_device<T: Real>(h: &[f64], t: usize, tp: usize) -> Vec<T> {
    (0..4 * tp)
        .map(|j| match j % tp < t {
            true => T::of(h[4 * (j % tp) + j / tp]),
            false => T::zero(),
        })
        .collect()
}

/// `b[0..n] *= a` with the `scale` kernel (a new Δt over the old).
pub(super) fn scale<T: Real>(
    dev: &ClDevice,
    k: &Kernel,
    b: &Buffer<T>,
    n: usize,
    a: f64,
) -> Result<()> {
    let args = [Arg::U64(n as u64), Arg::Buf(b), Arg::Real(T::of(a))];
    launch(dev, k, n, LOCAL, &args).map(drop)
}

#[cfg(test)]
mod tests {
    use super::{TET_ALIGN, f_slot, f_to_device, f_to_host, tet_stride};

    #[test]
    fn the_tet_stride_is_the_next_multiple_of_the_alignment() {
        assert_eq!(tet_stride(0), 0);
        for t in [1, 63, 64, 65, 998250, 10110954, 100663296] {
            let s = tet_stride(t);
            assert!(
                s >= t && s < t + TET_ALIGN && s.is_multiple_of(TET_ALIGN),
                "{t} -> {s}"
            );
        }
        assert_eq!(tet_stride(64), 64);
        assert_eq!(tet_stride(65), 128);
    }

    #[test]
    fn f_slots_and_the_host_layout_are_inverse() {
        // F value k of tet n: host 4n + k, device k * tp + n
        let (t, tp) = (5, tet_stride(5));
        let mut dev = vec![-1.0; 4 * tp];
        for x in 0..4 * t as u32 {
            dev[f_slot(x, tp) as usize] = x as f64;
        }
        let host = f_to_host(&dev, t, tp, |v| v);
        assert_eq!(host, (0..4 * t).map(|x| x as f64).collect::<Vec<_>>());
        // the padding was never named
        assert_eq!(dev.iter().filter(|&&v| v < 0.0).count(), 4 * (tp - t));
        // and back: the same values at the named slots, zero at the padding
        let back = f_to_device::<f64>(&host, t, tp);
        let want: Vec<f64> = dev.iter().map(|&v| v.max(0.0)).collect();
        assert_eq!(back, want);
    }
}
