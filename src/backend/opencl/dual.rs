//! The dual update `U += D F`: factored (circulations, then vertex blocks) or CSR.

use super::*;

impl<T: Real> ClStepper<T> {
    /// Whether this step may run the fused dispersion (factored dual, vertex-major full
    /// blocks, [`DispVariant::Fused`]).
    pub(super) fn fused_allowed(&self) -> bool {
        self.dual == DualForm::Factored
            && self.variants.block == BlockVariant::Vertex
            && self.variants.disp == DispVariant::Fused
    }

    /// The bytes the dispersion adds to a step as this stepper runs it (the byte models
    /// [`crate::cost::disp_bytes`] and [`crate::cost::disp_bytes_fused`]; 0 without
    /// dispersion).
    pub fn disp_bytes(&self) -> f64 {
        self.disp.bytes(self.fused_allowed())
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
        self.launch_circulation_on(f, None, Lane::Main, &[])
    }

    /// `c = C̃ f` on the edges `idx` (`(list, count)`; None: every edge) in the stepper's
    /// circulation form, on `lane` after `wait`.
    pub(super) fn launch_circulation_on(
        &self,
        f: &Buffer<T>,
        idx: Option<(&Buffer<u32>, usize)>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let paired = self.variants.circ == CircVariant::Paired;
        let n = idx.map_or(self.ne, |(_, n)| n);
        let kernel = match (idx.is_some(), paired) {
            (false, false) => &self.k.circulation,
            (false, true) => &self.k.circulation_pair,
            (true, false) => &self.k.circulation_idx,
            (true, true) => &self.k.circulation_pair_idx,
        };
        // (n, [T], [idx], ptr, circ, F, C): the kernels' parameter order
        let args: Vec<Arg<T>> = [
            Some(Arg::U32(n as u32)),
            paired.then_some(Arg::U32(self.tp as u32)),
            idx.map(|(i, _)| Arg::BufU32(i)),
        ]
        .into_iter()
        .flatten()
        .chain([
            Arg::BufU32(&self.circ_ptr),
            Arg::BufU32(&self.circ),
            Arg::Buf(f),
            Arg::Buf(&self.c),
        ])
        .collect();
        launch_on(&self.dev, lane, kernel, n, LOCAL, &args, wait)
    }

    /// Second half of the factored dual update: per-vertex blocks.
    pub fn vertex_blocks(&self) -> Result<Event> {
        match &self.slots {
            Some(st) => self.vertex_blocks_sm(&st.sm),
            None => self.launch_vertex_blocks(&self.u),
        }
    }

    /// `u += B c` with the configured mapping (c: the stepper's circulation buffer).
    pub(super) fn launch_vertex_blocks(&self, u: &Buffer<T>) -> Result<Event> {
        let args = self.vertex_major_args(self.block_offsets(), Arg::Buf(&self.block), u);
        launch(&self.dev, self.block_kernels().0, self.nfree, LOCAL, &args)
    }

    /// The arguments the vertex-major block kernels share: slots, vertex pointers, the
    /// blocks (`offsets`, `block`), circulations and the `U` they update.
    pub(super) fn vertex_major_args<'a>(
        &'a self,
        offsets: &'a Buffer<u64>,
        block: Arg<'a, T>,
        u: &'a Buffer<T>,
    ) -> [Arg<'a, T>; 8] {
        [
            Arg::U32(self.nfree as u32),
            Arg::BufU32(&self.slot_vertex),
            Arg::BufU32(&self.vptr),
            Arg::BufU64(offsets),
            Arg::BufU32(&self.vh),
            block,
            Arg::Buf(&self.c),
            Arg::Buf(u),
        ]
    }

    /// The offsets of the resident block layout (full or packed).
    pub(super) fn block_offsets(&self) -> &Buffer<u64> {
        if self.block_layout == BlockLayout::Full {
            &self.boff
        } else {
            &self.poff
        }
    }

    /// The vertex-major block kernels (whole range, index subset) of the resident layout.
    pub(super) fn block_kernels(&self) -> (&Kernel, &Kernel) {
        match self.block_layout {
            BlockLayout::Full => (&self.k.vertex_block_v, &self.k.vertex_block_v_idx),
            BlockLayout::Tri => (&self.k.vertex_block_s, &self.k.vertex_block_s_idx),
        }
    }

    /// `U += D F` with the CSR matrix (the vector kernel).
    pub fn csr_update(&self) -> Result<Event> {
        let (ip, ix, dv, _) = self.csr.as_ref().ok_or_else(|| {
            Error::config(
                "dual",
                "csr",
                "the stepper was built without the CSR matrix",
            )
        })?;
        let nr = self.nh as u32;
        match self.variants.csr {
            CsrVariant::Vector => launch(
                &self.dev,
                &self.k.csr_vector,
                self.nh * CSR_LANES,
                LOCAL,
                &[
                    Arg::U32(nr),
                    Arg::BufU32(ip),
                    Arg::BufU32(ix),
                    Arg::Buf(dv),
                    Arg::Buf(&self.f),
                    Arg::Buf(&self.u),
                    Arg::Local(LOCAL * std::mem::size_of::<T>()),
                ],
            ),
        }
    }

    /// The dual update in the configured form; returns the events of its kernels.
    pub fn dual_update(&self) -> Result<Vec<Event>> {
        Ok(match self.dual {
            DualForm::Factored => vec![self.circulation()?, self.vertex_blocks()?],
            DualForm::Csr => vec![self.csr_update()?],
        })
    }
}
