//! Losses on the device (design note §12): the loss step `U_v ← B̂_v U_v` of the conducting
//! vertices (Crank–Nicolson in σ: `B̂_v = (Meps_v + Δt/2 Msig_v)⁻¹ (Meps_v − Δt/2 Msig_v)`)
//! and the magnetic loss `F_n ← (1 − b_n)/(1 + b_n) F_n` of the σ* tets
//! (`b_n = σ*_n Δt / 2`; the primal rows carry `1/(1 + b_n)`).
//!
//! [`Losses`] owns its buffers and kernels (`loss_rows`, `loss_scatter`, `mag_loss` of
//! `cl/dga/loss.cl`); the stepper hands it the state it works on.

use super::kernels::Kernels;
use crate::dga::operators::Operators;
use crate::error::Result;
use crate::ocl::{Arg, ClDevice, LOCAL, kernels, launch};
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

/// The loss step on the device: rows' half-edges, vertices, row offsets, `B̂` blocks, and
/// a scratch of one value per row.
struct LossRows<T> {
    n: usize,
    /// Entries of the `B̂` rows (the byte model's `entries`).
    entries: usize,
    h: Buffer<u32>,
    vert: Buffer<u32>,
    row: Buffer<u64>,
    block: Buffer<T>,
    tmp: Buffer<T>,
}

/// The magnetic loss on the device: the lossy tets and their factors `(1 − b)/(1 + b)`.
struct MagLoss<T> {
    n: usize,
    idx: Buffer<u32>,
    a: Buffer<T>,
}

/// The losses of a stepper: none until [`Losses::set_rows`] / [`Losses::set_mag`] install
/// them for a Δt.
pub(super) struct Losses<T> {
    rows: Option<LossRows<T>>,
    mag: Option<MagLoss<T>>,
    k_rows: Kernel,
    k_scatter: Kernel,
    k_mag: Kernel,
}

impl<T: Real> Losses<T> {
    /// No losses, with the kernels of the DGA program `k`.
    pub(super) fn new(k: &Kernels) -> Result<Self> {
        let [k_rows, k_scatter, k_mag] =
            kernels(k.program(), ["loss_rows", "loss_scatter", "mag_loss"])?;
        Ok(Losses {
            rows: None,
            mag: None,
            k_rows,
            k_scatter,
            k_mag,
        })
    }

    /// Whether a loss step of conducting vertices is installed.
    pub(super) fn has_rows(&self) -> bool {
        self.rows.is_some()
    }

    /// Installs the loss step of `ops` (nothing when it has no lossy rows).
    pub(super) fn set_rows(&mut self, dev: &ClDevice, ops: &Operators<T>) -> Result<()> {
        let n = ops.loss_h.len();
        self.rows = None;
        if n > 0 {
            self.rows = Some(LossRows {
                n,
                entries: ops.loss_block.len(),
                h: dev.upload(&ops.loss_h, "loss rows")?,
                vert: dev.upload(&ops.loss_vert, "loss vertices")?,
                row: dev.upload(&ops.loss_row, "loss row offsets")?,
                block: dev.upload(&ops.loss_block, "loss blocks")?,
                tmp: dev.alloc(n, "loss scratch")?,
            });
        }
        Ok(())
    }

    /// Installs the magnetic loss of the tets with `mag[n] != 0` (σ*, metres⁻¹) for `dt`.
    pub(super) fn set_mag(&mut self, dev: &ClDevice, mag: &[f64], dt: f64) -> Result<()> {
        let (idx, a): (Vec<u32>, Vec<T>) = (0..mag.len())
            .filter(|&n| mag[n] != 0.0)
            .map(|n| {
                let b = 0.5 * mag[n] * dt;
                (n as u32, T::of((1.0 - b) / (1.0 + b)))
            })
            .unzip();
        self.mag = Some(MagLoss {
            n: idx.len(),
            idx: dev.upload(&idx, "magnetically lossy tets")?,
            a: dev.upload(&a, "magnetic loss factors")?,
        });
        Ok(())
    }

    /// The bytes the losses add to a step ([`crate::cost::loss_bytes`]: the loss step of the
    /// conducting vertices and the magnetic loss of the σ* tets; 0 when lossless).
    pub(super) fn bytes(&self) -> f64 {
        let c = crate::cost::LossCounts {
            rows: self.rows.as_ref().map_or(0, |l| l.n),
            entries: self.rows.as_ref().map_or(0, |l| l.entries),
            mag_tets: self.mag.as_ref().map_or(0, |m| m.n),
        };
        crate::cost::loss_bytes(&c, std::mem::size_of::<T>())
    }

    /// The loss step `U_v ← B̂_v U_v` at the lossy vertices of the vertex block layout
    /// (`vptr`, `vh`), on `u` (nothing when lossless).
    pub(super) fn update(
        &self,
        dev: &ClDevice,
        vptr: &Buffer<u32>,
        vh: &Buffer<u32>,
        u: &Buffer<T>,
    ) -> Result<Vec<Event>> {
        let Some(l) = &self.rows else {
            return Ok(vec![]);
        };
        let a = launch(
            dev,
            &self.k_rows,
            l.n,
            LOCAL,
            &[
                Arg::U32(l.n as u32),
                Arg::BufU32(&l.vert),
                Arg::BufU64(&l.row),
                Arg::BufU32(vptr),
                Arg::BufU32(vh),
                Arg::Buf(&l.block),
                Arg::Buf(u),
                Arg::Buf(&l.tmp),
            ],
        )?;
        let b = launch(
            dev,
            &self.k_scatter,
            l.n,
            LOCAL,
            &[
                Arg::U32(l.n as u32),
                Arg::BufU32(&l.h),
                Arg::Buf(&l.tmp),
                Arg::Buf(u),
            ],
        )?;
        Ok(vec![a, b])
    }

    /// The magnetic loss `F_n ← a_n F_n` of the σ* tets on `f` (tet stride `tp`), before
    /// the primal update (None without σ*).
    pub(super) fn mag_update(
        &self,
        dev: &ClDevice,
        tp: usize,
        f: &Buffer<T>,
    ) -> Result<Option<Event>> {
        let Some(m) = self.mag.as_ref().filter(|m| m.n > 0) else {
            return Ok(None);
        };
        launch(
            dev,
            &self.k_mag,
            m.n,
            LOCAL,
            &[
                Arg::U32(m.n as u32),
                Arg::U32(tp as u32),
                Arg::BufU32(&m.idx),
                Arg::Buf(&m.a),
                Arg::Buf(f),
            ],
        )
        .map(Some)
    }
}
