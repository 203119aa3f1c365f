//! Installing the operators of a Δt that enters them nonlinearly: the dual blocks, CSR
//! values, loss step and dispersion of conducting or dispersive media, and the primal rows
//! of magnetically lossy tets.

use super::*;

impl<T: Real> ClStepper<T> {
    /// Uploads the primal blocks `Δt/(1 + b) Mmu⁻¹ C` and the lossy tets' factors of a
    /// `Dga` with magnetic conductivity for `dt`.
    pub(super) fn install_mag(&mut self, dt: f64) -> Result<()> {
        let mag = self.dga.mag.as_ref().expect("checked by the caller");
        self.p = upload_primal(&self.dev, &self.dga, self.variants.primal, &|n| {
            dt / (1.0 + 0.5 * mag[n] * dt)
        })?;
        self.losses.set_mag(&self.dev, mag, dt)
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
        self.losses.set_rows(&self.dev, &ops)?;
        if let Some(p) = self.source.as_ref().and_then(|s| ops.source_pattern(s)) {
            self.src.set_pattern(&self.dev, p)?;
        }
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
        let tables = (self.dual == DualForm::Factored).then_some(FusedTables {
            vptr: &ops.vptr,
            vh: &ops.vh,
            off: &self.dga.meps.off,
            skip: &skip,
        });
        self.disp.install(&self.dev, ops.disp, tables)?;
        Ok(())
    }
}
