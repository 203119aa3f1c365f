//! Installing the operators of a Δt that enters them nonlinearly: the dual blocks, CSR
//! values, loss step and dispersion of conducting or dispersive media, the primal rows
//! of magnetically lossy tets, and those and the magnetic poles of perfectly matched layers.

use super::*;
use crate::dga::stretch::MagOps;

impl<T: Real> ClStepper<T> {
    /// Uploads the primal blocks `Δt/(1 + b) Mmu⁻¹ C` and the lossy tets' factors of a
    /// `Dga` with magnetic conductivity for `dt`, and the layer tets' blocks `Δt Ã⁻¹ C`
    /// and magnetic poles of a `Dga` with perfectly matched layers (`Ã` depends on `dt`).
    pub(super) fn install_mag(&mut self, dt: f64) -> Result<()> {
        let mp = self.install_mag_primal(dt)?;
        self.pml.install(&self.dev, mp.as_ref())
    }

    /// [`Self::install_mag`] without the layer's poles (a new layout of the primal
    /// operator keeps their states); returns the layer's operators for `dt`.
    fn install_mag_primal(&mut self, dt: f64) -> Result<Option<MagOps<T>>> {
        let dga = self.dga.clone();
        let v = self.primal.variant();
        let mp = crate::dga::stretch::mag_ops::<T>(&dga, dt);
        let scale = |n: usize| match &dga.mag {
            Some(m) => dt / (1.0 + 0.5 * m[n] * dt),
            None => dt,
        };
        let pml = mp.as_ref().map(|m| (m, dt));
        (self.primal).install(&self.dev, &dga, v, &scale, pml)?;
        if let Some(mag) = &dga.mag {
            self.losses.set_mag(&self.dev, mag, dt)?;
        }
        Ok(mp)
    }

    /// Replaces the primal operator with `v`'s layout at the current Δt.
    pub(super) fn install_primal(&mut self, v: PrimalVariant) -> Result<()> {
        let dga = self.dga.clone();
        if dga.mag.is_some() || dga.mpml.is_some() {
            self.primal.set_variant_layout(v);
            self.install_mag_primal(self.dt).map(drop)
        } else {
            let dt = self.dt;
            self.primal.install(&self.dev, &dga, v, &|_| dt, None)
        }
    }

    /// Uploads the dual blocks, CSR values and loss step of a conducting `Dga` for `dt`.
    pub(super) fn install_losses(&mut self, dt: f64) -> Result<()> {
        self.install_losses_in(dt, self.dual.blocks.layout)
    }

    /// [`Self::install_losses`] with the blocks in `layout`.
    pub(super) fn install_losses_in(&mut self, dt: f64, layout: BlockLayout) -> Result<()> {
        let dga = self.dga.clone();
        let ops = Operators::<T>::new(&dga, dt, self.dual.has_csr());
        if layout != BlockLayout::Full {
            self.dual
                .put_blocks(&self.dev, &dga, layout, &ops.block, |x| x)?;
        } else {
            self.dual.blocks.layout = layout;
            self.dual.write_full(&self.dev, &ops.block)?;
        }
        if let (Some((v, nnz)), Some(m)) = (self.dual.csr_values(), &ops.csr) {
            if m.data().len() != nnz {
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
        let tables = (self.dual.form() == DualForm::Factored).then_some(FusedTables {
            vptr: &ops.vptr,
            vh: &ops.vh,
            off: &dga.meps.off,
            skip: &skip,
        });
        self.disp.install(&self.dev, ops.disp, tables)?;
        Ok(())
    }
}
