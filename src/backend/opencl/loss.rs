//! Losses on the device: the loss step of the conducting vertices and the magnetic loss
//! of the σ* tets (design note §12).

use super::*;

/// The loss step on the device: rows' half-edges, vertices, row offsets, `B̂` blocks, and
/// a scratch of one value per row.
pub(super) struct DeviceLoss<T> {
    pub(super) n: usize,
    /// Entries of the `B̂` rows (the byte model's `entries`).
    pub(super) entries: usize,
    pub(super) h: Buffer<u32>,
    pub(super) vert: Buffer<u32>,
    pub(super) row: Buffer<u64>,
    pub(super) block: Buffer<T>,
    pub(super) tmp: Buffer<T>,
}

impl<T: Real> ClStepper<T> {
    /// Uploads the primal blocks `Δt/(1 + b) Mmu⁻¹ C` and the lossy tets' factors of a
    /// `Dga` with magnetic conductivity for `dt`.
    pub(super) fn install_mag(&mut self, dt: f64) -> Result<()> {
        let mag = self.dga.mag.as_ref().expect("checked by the caller");
        let t = self.t;
        self.p = upload_primal(&self.dev, &self.dga, self.variants.primal, &|n| {
            dt / (1.0 + 0.5 * mag[n] * dt)
        })?;
        let (idx, a): (Vec<u32>, Vec<T>) = (0..t)
            .filter(|&n| mag[n] != 0.0)
            .map(|n| {
                let b = 0.5 * mag[n] * dt;
                (n as u32, T::of((1.0 - b) / (1.0 + b)))
            })
            .unzip();
        self.mag = Some((
            idx.len(),
            self.dev.upload(&idx, "magnetically lossy tets")?,
            self.dev.upload(&a, "magnetic loss factors")?,
        ));
        Ok(())
    }

    /// Uploads the dual blocks, CSR values and loss step of a conducting `Dga` for `dt`.
    pub(super) fn install_losses(&mut self, dt: f64) -> Result<()> {
        let ops = Operators::<T>::new(&self.dga, dt, self.csr.is_some());
        if self.block_layout != BlockLayout::Full {
            self.put_blocks(&ops.block, |x| x)?;
        } else {
            if self.block_len != ops.block.len() {
                self.block = self.dev.alloc(ops.block.len(), "vertex blocks")?;
                self.block_len = ops.block.len();
            }
            self.dev
                .write(&mut self.block, &ops.block, "vertex blocks")?;
        }
        if let (Some((_, _, v, nnz)), Some(m)) = (&mut self.csr, &ops.csr) {
            if m.data().len() != *nnz {
                return Err(Error::config(
                    "dual",
                    "csr",
                    "the lossy CSR matrix changed its sparsity",
                ));
            }
            self.dev.write(v, m.data(), "CSR values")?;
        }
        let n = ops.loss_h.len();
        self.loss = (n > 0)
            .then(|| -> Result<DeviceLoss<T>> {
                Ok(DeviceLoss {
                    n,
                    entries: ops.loss_block.len(),
                    h: self.dev.upload(&ops.loss_h, "loss rows")?,
                    vert: self.dev.upload(&ops.loss_vert, "loss vertices")?,
                    row: self.dev.upload(&ops.loss_row, "loss row offsets")?,
                    block: self.dev.upload(&ops.loss_block, "loss blocks")?,
                    tmp: self.dev.alloc(n, "loss scratch")?,
                })
            })
            .transpose()?;
        if let Some(p) = self.source.as_ref().and_then(|s| ops.source_pattern(s)) {
            let (idx, g): (Vec<u32>, Vec<T>) = p.into_iter().unzip();
            self.nsrc = idx.len();
            self.src_idx = self.dev.upload(&idx, "source indices")?;
            self.src_g = self.dev.upload(&g, "source pattern")?;
        }
        self.disp = None;
        // every half-edge the source kernel may write stays out of the fused kernel
        let skip: Vec<u32> = self
            .source
            .as_ref()
            .map(|s| {
                let pat = ops.source_pattern(s).unwrap_or_default();
                (s.pattern.iter().map(|p| p.0))
                    .chain(s.current.iter().map(|p| p.0))
                    .chain(pat.iter().map(|p| p.0))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(d) = ops.disp {
            let dev = &self.dev;
            let fused = if self.dual == DualForm::Factored {
                let f = d.fused(&ops.vptr, &ops.vh, &skip);
                Self::upload_fused(dev, &d, f, (&ops.vptr, &ops.vh, &self.dga.meps.off))?
            } else {
                None
            };
            self.disp = Some(DeviceDisp {
                fused,
                h: dev.upload(&d.h, "dispersive rows")?,
                row: dev.upload(&d.row, "dispersive row offsets")?,
                len: dev.upload(&d.len, "dispersive row lengths")?,
                goff: dev.upload(&d.goff, "dispersive state offsets")?,
                block: dev.upload(&d.block, "dispersive couplings")?,
                ent_h: dev.upload(&d.ent_h, "pole entries")?,
                ent_g: dev.upload(&d.ent_g, "pole entry offsets")?,
                coef: dev.upload(&d.coef, "pole coefficients")?,
                s: dev.upload(&vec![T::zero(); d.n_state], "pole states")?,
                g: dev.upload(&vec![T::zero(); d.n_g.max(1)], "pole changes")?,
                host: d,
            });
        }
        Ok(())
    }

    /// The bytes the losses add to a step as this stepper runs it ([`crate::cost::loss_bytes`]:
    /// the loss step of the conducting vertices and the magnetic loss of the σ* tets; 0
    /// when lossless).
    pub fn loss_bytes(&self) -> f64 {
        let c = crate::cost::LossCounts {
            rows: self.loss.as_ref().map_or(0, |l| l.n),
            entries: self.loss.as_ref().map_or(0, |l| l.entries),
            mag_tets: self.mag.as_ref().map_or(0, |m| m.0),
        };
        crate::cost::loss_bytes(&c, std::mem::size_of::<T>())
    }

    /// The loss step `U_v ← B̂_v U_v` at the lossy vertices (nothing when lossless).
    pub fn loss_update(&self) -> Result<Vec<Event>> {
        let Some(l) = &self.loss else {
            return Ok(vec![]);
        };
        let a = launch(
            &self.dev,
            &self.k.loss_rows,
            l.n,
            LOCAL,
            &[
                Arg::U32(l.n as u32),
                Arg::BufU32(&l.vert),
                Arg::BufU64(&l.row),
                Arg::BufU32(&self.vptr),
                Arg::BufU32(&self.vh),
                Arg::Buf(&l.block),
                Arg::Buf(&self.u),
                Arg::Buf(&l.tmp),
            ],
        )?;
        let b = launch(
            &self.dev,
            &self.k.loss_scatter,
            l.n,
            LOCAL,
            &[
                Arg::U32(l.n as u32),
                Arg::BufU32(&l.h),
                Arg::Buf(&l.tmp),
                Arg::Buf(&self.u),
            ],
        )?;
        Ok(vec![a, b])
    }

    /// The magnetic loss `F_n ← a_n F_n` of the σ* tets, before the primal update (None
    /// without σ*).
    pub(super) fn mag_loss(&self) -> Result<Option<Event>> {
        let Some((n, idx, a)) = self.mag.as_ref().filter(|m| m.0 > 0) else {
            return Ok(None);
        };
        launch(
            &self.dev,
            &self.k.mag_loss,
            *n,
            LOCAL,
            &[
                Arg::U32(*n as u32),
                Arg::U32(self.tp as u32),
                Arg::BufU32(idx),
                Arg::Buf(a),
                Arg::Buf(&self.f),
            ],
        )
        .map(Some)
    }
}
