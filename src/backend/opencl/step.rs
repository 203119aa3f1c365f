//! One leapfrog step from the components (design note §8): the magnetic loss, the layer's
//! magnetic correction, the primal update, the layer's magnetic poles, the loss step, the dispersive correction, the dual update (or its fused
//! dispersive form), the source, the pole step.

use super::*;

impl<T: Real> ClStepper<T> {
    /// One leapfrog step number `k` (source at `(k + 1/2) Δt`).
    pub fn step(&self, k: usize) -> Result<()> {
        self.step_events(k).map(drop)
    }

    /// [`Self::step`], returning the events of its kernels (the bench times them).
    pub fn step_events(&self, k: usize) -> Result<Vec<Event>> {
        // (the magnetic loss's event first: the bench times from the first start)
        let mut ev: Vec<Event> = self.mag_loss()?.into_iter().collect();
        ev.extend(self.pml.correct(&self.dev, self.tp, &self.f)?);
        ev.push(self.primal_in_layout()?);
        ev.extend(self.pml.poles(&self.dev, self.tp, &self.f)?);
        ev.extend(self.loss_update()?);
        ev.extend(self.disp_correct()?);
        if self.disp.runs_fused(self.fused_allowed()) {
            ev.push(self.circulation()?);
            let (nfree, dev, b) = (self.nfree, &self.dev, &self.dual.blocks.data);
            ev.extend(
                self.disp
                    .vertex_blocks(dev, b, &self.dual.c, &self.u, nfree)?,
            );
        } else {
            ev.extend(self.dual_update()?);
        }
        let (idx, u) = match &self.slots {
            Some(st) => (&st.src_idx, &st.sm.us),
            None => (&self.src.idx, &self.u),
        };
        ev.extend(self.source_into(idx, &self.src.g, self.src.n, u, k, Lane::Main, &[])?);
        ev.extend(self.disp_poles()?);
        Ok(ev)
    }

    /// The bytes the losses add to a step as this stepper runs it ([`crate::cost::loss_bytes`]:
    /// the loss step of the conducting vertices and the magnetic loss of the σ* tets; 0
    /// when lossless).
    pub fn loss_bytes(&self) -> f64 {
        self.losses.bytes()
    }

    /// The loss step `U_v ← B̂_v U_v` at the lossy vertices (nothing when lossless).
    pub fn loss_update(&self) -> Result<Vec<Event>> {
        let d = &self.dual;
        self.losses.update(&self.dev, &d.vptr, &d.vh, &self.u)
    }

    /// The magnetic loss of the σ* tets before the primal update (None without σ*).
    pub fn mag_loss(&self) -> Result<Option<Event>> {
        self.losses.mag_update(&self.dev, self.tp, &self.f)
    }

    /// The layer's magnetic correction `F_n −= Σ G g` before the primal update (None
    /// without a layer).
    pub fn pml_correct(&self) -> Result<Option<Event>> {
        self.pml.correct(&self.dev, self.tp, &self.f)
    }

    /// The layer's magnetic pole step on the new `F`, after the primal update (None
    /// without a layer).
    pub fn pml_poles(&self) -> Result<Option<Event>> {
        self.pml.poles(&self.dev, self.tp, &self.f)
    }

    /// The layer's magnetic pole states and changes `(ms, mg)` read back (empty without a
    /// layer).
    pub fn pml_state(&self) -> Result<(Vec<T>, Vec<T>)> {
        self.pml.state(&self.dev)
    }

    /// `F -= P U` with the chosen variant.
    pub fn primal_update(&self) -> Result<Event> {
        self.mag_loss()?;
        self.primal_in_layout()
    }

    /// `F -= P U` on the stepper's own `U` in its layout ([`ULayout`]).
    pub(super) fn primal_in_layout(&self) -> Result<Event> {
        match &self.slots {
            Some(st) => self.primal_update_sm(&st.sm),
            None => self.launch_primal(&self.u, &self.f),
        }
    }

    /// `f -= P u` for given buffers.
    pub(super) fn launch_primal(&self, u: &Buffer<T>, f: &Buffer<T>) -> Result<Event> {
        self.primal.launch(&self.dev, u, f, None, Lane::Main, &[])
    }

    /// `F -= P U` with slot-major `U` (`primal_sym_sm`).
    pub fn primal_update_sm(&self, sm: &SlotMajor<T>) -> Result<Event> {
        self.primal
            .launch_sm(&self.dev, sm, &self.f, None, Lane::Main, &[])
    }

    /// Whether this step may run the fused dispersion (factored dual, vertex-major full
    /// blocks, [`DispVariant::Fused`]).
    pub(super) fn fused_allowed(&self) -> bool {
        self.dual.form() == DualForm::Factored
            && self.dual.block_variant == BlockVariant::Vertex
            && self.disp.variant == DispVariant::Fused
    }

    /// The bytes the dispersion adds to a step as this stepper runs it (the byte models
    /// [`crate::cost::disp_bytes`] and [`crate::cost::disp_bytes_fused`]; 0 without
    /// dispersion).
    pub fn disp_bytes(&self) -> f64 {
        self.disp.bytes(self.fused_allowed())
    }

    /// The bytes the magnetic side of perfectly matched layers adds to a step (0 without
    /// a layer; the electric side is in [`Self::disp_bytes`]).
    pub fn pml_bytes(&self) -> f64 {
        self.pml.bytes()
    }

    /// The dispersive correction before the dual update (nothing without dispersion; in
    /// the fused form, the rows the fused kernel does not take).
    pub fn disp_correct(&self) -> Result<Option<Event>> {
        self.disp.correct(&self.dev, self.fused_allowed(), &self.u)
    }

    /// The pole step after the dual update and the source, one launch per dispersive
    /// material (nothing without dispersion; in the fused form, only the entries the fused
    /// kernel does not take).
    pub fn disp_poles(&self) -> Result<Vec<Event>> {
        self.disp.poles(&self.dev, self.fused_allowed(), &self.u)
    }

    /// The pole states `(s, g)` read back (empty without dispersion).
    pub fn disp_state(&self) -> Result<(Vec<T>, Vec<T>)> {
        self.disp.state(&self.dev)
    }

    /// First half of the factored dual update: per-edge circulations.
    pub fn circulation(&self) -> Result<Event> {
        self.launch_circulation(&self.f)
    }

    /// `c = C̃ f` into the stepper's circulation buffer.
    pub(super) fn launch_circulation(&self, f: &Buffer<T>) -> Result<Event> {
        self.dual.circulation(&self.dev, f, None, Lane::Main, &[])
    }

    /// Second half of the factored dual update: per-vertex blocks.
    pub fn vertex_blocks(&self) -> Result<Event> {
        match &self.slots {
            Some(st) => self.vertex_blocks_sm(&st.sm),
            None => self.launch_vertex_blocks(&self.u),
        }
    }

    /// `U += B c` with slot-major `U` (`vertex_block_s_sm`, after [`Self::circulation`]).
    pub fn vertex_blocks_sm(&self, sm: &SlotMajor<T>) -> Result<Event> {
        self.dual
            .vertex_blocks_sm(&self.dev, sm, None, Lane::Main, &[])
    }

    /// `u += B c` with the configured mapping (c: the stepper's circulation buffer).
    pub(super) fn launch_vertex_blocks(&self, u: &Buffer<T>) -> Result<Event> {
        self.dual.vertex_blocks(&self.dev, u, None, Lane::Main, &[])
    }

    /// `U += D F` with the CSR matrix (the vector kernel).
    pub fn csr_update(&self) -> Result<Event> {
        self.dual.csr(&self.dev, &self.f, &self.u)
    }

    /// The dual update in the configured form; returns the events of its kernels.
    pub fn dual_update(&self) -> Result<Vec<Event>> {
        Ok(match self.dual.form() {
            DualForm::Factored => vec![self.circulation()?, self.vertex_blocks()?],
            DualForm::Csr => vec![self.csr_update()?],
        })
    }
}
