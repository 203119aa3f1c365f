//! Slot-major `U` ([`ULayout::SlotMajor`]) and a partitioned rank's ghost slots.

use super::*;

/// Slot-major `U` (issue 19; the stepper's own layout through [`ClStepper::set_u_layout`],
/// and bench variants with explicit moves): the free half-edges' DoFs stored in the
/// factored dual's slot order (`US[g] = U[vh[g]]`, vertex by vertex), so that the
/// vertex-block update reads and writes them coalesced; the primal update gathers each
/// edge's two halves through `ES` (slot of every half-edge, `NF` for one that is not free,
/// and `US[NF] = 0`). Built by [`ClStepper::slot_major`]; [`ClStepper::to_slot_major`] and
/// [`ClStepper::from_slot_major`] move the stepper's `U` in and out (a half-edge that is not
/// free is read as zero, as in any physical state: a PEC wall's). Same products in the same
/// order as `primal_sym` and `vertex_block_s` (`tests/opencl/opencl.rs`).
pub struct SlotMajor<T: Real> {
    pub(super) primal: Kernel,
    pub(super) block: Kernel,
    /// The same on index subsets (`primal_sym_sm_idx`, `vertex_block_s_sm_idx`: a
    /// partitioned rank's interface and interior parts).
    pub(super) primal_idx: Kernel,
    pub(super) block_idx: Kernel,
    pub(super) es: Buffer<u32>,
    /// `primal_sym_st` and its per-tet slot table ([`ClStepper::slot_table`]; a bench
    /// variant).
    pub(super) table: Option<(Kernel, Buffer<u32>)>,
    pub(super) us: Buffer<T>,
    /// The operators stored in f32 ([`MixedOperators`]) when built for mixed storage.
    pub(super) mixed: Option<MixedOperators>,
}

/// The stepper's slot-major state ([`ULayout::SlotMajor`]): the kernels and `US`, and the
/// source's and probes' half-edges mapped to their slots.
pub(super) struct SlotState<T: Real> {
    pub(super) sm: SlotMajor<T>,
    pub(super) src_idx: Buffer<u32>,
    pub(super) probe_slots: Buffer<u32>,
}

/// Ghost half-edges (values a neighbouring rank owns and sends) in slot-major `U`: ghost
/// `i` (half-edge `halves[i]`) at slot `NF + 1 + i`, moved in and out by `copy_idx`.
pub(super) struct Ghosts {
    pub(super) halves: Vec<u32>,
    pub(super) kernel: Kernel,
    pub(super) dh: Buffer<u32>,
    pub(super) ds: Buffer<u32>,
}

impl<T: Real> ClStepper<T> {
    /// Slot-major `U` for this stepper ([`SlotMajor`]), with the operators in f32 when
    /// `mixed` ([`Self::mixed_operators`]): the default layouts (`primal_sym`, the packed
    /// blocks) of a lossless, non-dispersive mesh; else an error naming what is missing.
    pub fn slot_major(&self, mixed: bool) -> Result<SlotMajor<T>> {
        let why = if self.dga.msig.is_some() || self.dga.mag.is_some() || self.dga.disp.is_some() {
            Some("slot-major U covers lossless, non-dispersive media only")
        } else if self.primal.per_tet() != 10 || self.dual.blocks.layout != BlockLayout::Tri {
            Some("slot-major U needs the default layouts resident (primal_sym, the packed blocks)")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::config("variant", "slot-major", why));
        }
        self.slot_major_with(mixed, &self.half_edge_slots())
    }

    /// [`Self::slot_major`] with the half-edge slots `es` ([`Self::half_edge_slots`]) given.
    pub(super) fn slot_major_with(&self, mixed: bool, es: &[u32]) -> Result<SlotMajor<T>> {
        let mixed = mixed.then(|| self.mixed_operators()).transpose()?;
        let [primal, block, primal_idx, block_idx] = self.dgatd_kernels(
            mixed.is_some(),
            [
                "primal_sym_sm",
                "vertex_block_s_sm",
                "primal_sym_sm_idx",
                "vertex_block_s_sm_idx",
            ],
        )?;
        Ok(SlotMajor {
            primal,
            block,
            primal_idx,
            block_idx,
            es: self.dev.upload(es, "half-edge slots")?,
            table: None,
            us: self.dev.upload(
                &vec![
                    T::zero();
                    self.nfree + 1 + self.ghosts.as_ref().map_or(0, |g| g.halves.len())
                ],
                "slot-major U",
            )?,
            mixed,
        })
    }

    /// The slot of each half-edge (`NF`, the number of free half-edges, for one that is not
    /// free).
    pub(super) fn half_edge_slots(&self) -> Vec<u32> {
        let mut es = vec![self.nfree as u32; self.nh];
        for (g, &h) in self.dga.meps.h.iter().enumerate() {
            es[h as usize] = g as u32;
        }
        if let Some(gh) = &self.ghosts {
            for (i, &h) in gh.halves.iter().enumerate() {
                es[h as usize] = (self.nfree + 1 + i) as u32;
            }
        }
        es
    }

    /// Declares a partitioned rank's ghost half-edges (the neighbours' free half-edges whose
    /// values the halo brings): in slot-major `U` each gets a slot after the zero slot, so
    /// the primal update reads it like an own one. Call while `U` is by half-edge, before
    /// [`Self::set_u_layout`]; `halves` distinct, none of them this rank's free ones.
    pub fn set_ghost_halves(&mut self, halves: &[u32]) -> Result<()> {
        if self.slots.is_some() {
            return Err(Error::config(
                "u layout",
                ULayout::SlotMajor.name(),
                "ghost half-edges are declared while U is by half-edge",
            ));
        }
        let own = self.half_edge_slots();
        let nf = self.nfree as u32;
        let mut seen = vec![false; self.nh];
        for &h in halves {
            let ok = (h as usize) < self.nh && own[h as usize] == nf && !seen[h as usize];
            if !ok {
                return Err(Error::config(
                    "ghost half-edges",
                    h,
                    "out of range, repeated, or a free half-edge of this rank",
                ));
            }
            seen[h as usize] = true;
        }
        if halves.is_empty() {
            self.ghosts = None;
            return Ok(());
        }
        let slots: Vec<u32> = (0..halves.len()).map(|i| nf + 1 + i as u32).collect();
        let [kernel] = self.dgatd_kernels(false, ["copy_idx"])?;
        self.ghosts = Some(Ghosts {
            halves: halves.to_vec(),
            kernel,
            dh: self.dev.upload(halves, "ghost half-edges")?,
            ds: self.dev.upload(&slots, "ghost slots")?,
        });
        Ok(())
    }

    /// The layout `U` is stored in on the device.
    pub fn u_layout(&self) -> ULayout {
        match self.slots {
            Some(_) => ULayout::SlotMajor,
            None => ULayout::HalfEdge,
        }
    }

    /// Why [`ULayout::SlotMajor`] cannot hold this stepper's `U` now; None when it can.
    pub fn slot_major_refusal(&self) -> Option<&'static str> {
        self.refusal_but_source()
            .or_else(|| self.source_off_slots(&self.half_edge_slots()))
    }

    /// The source's part of [`Self::slot_major_refusal`], with the half-edge slots `es`.
    pub(super) fn source_off_slots(&self, es: &[u32]) -> Option<&'static str> {
        let nf = self.nfree as u32;
        let on_wall = self
            .source
            .as_ref()
            .is_some_and(|s| s.pattern.iter().any(|&(h, _)| es[h as usize] == nf));
        on_wall.then_some("the source drives a half-edge that is not free")
    }

    /// [`Self::slot_major_refusal`] but for the source (no pass over the half-edges).
    pub(super) fn refusal_but_source(&self) -> Option<&'static str> {
        if self.dga.msig.is_some() || self.dga.mag.is_some() || self.dga.disp.is_some() {
            Some("slot-major U covers lossless, non-dispersive media only")
        } else if self.dual.form() != DualForm::Factored {
            Some("slot-major U steps with the factored dual only")
        } else if (Variants {
            circ: CircVariant::Paired,
            ..self.variants()
        }) != Variants::default()
            || self.primal.per_tet() != 10
            || self.dual.blocks.layout != BlockLayout::Tri
        {
            Some("slot-major U steps with the default kernels only (primal_sym, vertex_block_sym)")
        } else if !self.nonfree_zero {
            Some("a half-edge that is not free (a PEC wall's) holds a nonzero value")
        } else {
            None
        }
    }

    /// Stores `U` in `layout`, moving the state (same values). Slot-major is refused, with
    /// the reason ([`Self::slot_major_refusal`]), where it does not apply; a later change
    /// that it does not cover (another dual, variant, or a state with a nonzero value on a
    /// half-edge that is not free) returns the stepper to the half-edge layout. A
    /// partitioned rank's subset launches follow the layout ([`Self::primal_on`],
    /// [`Self::vertex_blocks_on`]); its halo and source lists must then hold slots
    /// ([`Self::slot_of_half`]).
    pub fn set_u_layout(&mut self, layout: ULayout) -> Result<()> {
        match (layout, self.slots.is_some()) {
            (ULayout::HalfEdge, true) => {
                self.sync_u()?;
                self.slots = None;
                self.dev.finish()?;
            }
            (ULayout::SlotMajor, false) => {
                // the half-edge slots once: the refusal, the layout and the index maps
                let es = self.half_edge_slots();
                let why = self
                    .refusal_but_source()
                    .or_else(|| self.source_off_slots(&es));
                if let Some(why) = why {
                    return Err(Error::config("u layout", layout.name(), why));
                }
                let sm = self.slot_major_with(false, &es)?;
                let at = |h: &[u32]| -> Vec<u32> { h.iter().map(|&h| es[h as usize]).collect() };
                let src: Vec<u32> = self
                    .source
                    .as_ref()
                    .map(|s| s.pattern.iter().map(|&(h, _)| es[h as usize]).collect())
                    .unwrap_or_default();
                debug_assert_eq!(src.len(), self.src.n);
                let probes =
                    at(&self
                        .dev
                        .read(&self.probes.slots, 3 * self.probes.n, "probe slots")?);
                self.to_slot_major(&sm)?;
                self.slots = Some(SlotState {
                    src_idx: self.dev.upload(&src, "source slots")?,
                    probe_slots: self.dev.upload(&probes, "probe slots")?,
                    sm,
                });
                self.dev.finish()?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Brings the free entries of the half-edge `U` up to date from slot-major `US` (nothing
    /// in the half-edge layout).
    pub(super) fn sync_u(&self) -> Result<()> {
        if let Some(st) = &self.slots {
            self.from_slot_major(&st.sm)?;
        }
        Ok(())
    }

    /// The slot of every half-edge in slot-major `U` (the number of free half-edges for
    /// one that is not free, which slot-major `U` reads as zero): what turns a partitioned
    /// rank's half-edge lists (halo, source) into positions of [`Self::state_buffers`]' `U`
    /// while [`Self::u_layout`] is slot-major.
    pub fn slot_of_half(&self) -> Vec<u32> {
        self.half_edge_slots()
    }

    /// Returns to the half-edge layout when a change leaves slot-major `U` out of its scope.
    pub(super) fn keep_layout_in_scope(&mut self) -> Result<()> {
        if self.slots.is_some() && self.slot_major_refusal().is_some() {
            self.set_u_layout(ULayout::HalfEdge)?;
        }
        Ok(())
    }

    /// `US[g] = U[vh[g]]`: the stepper's `U` into `sm`.
    pub fn to_slot_major(&self, sm: &SlotMajor<T>) -> Result<Event> {
        let e = self.move_slots(&self.k.gather, &self.u, &sm.us)?;
        match &self.ghosts {
            Some(g) => self.move_ghosts(g, &g.dh, &g.ds, &self.u, &sm.us),
            None => Ok(e),
        }
    }

    /// `U[vh[g]] = US[g]`: `sm` back into the stepper's `U` (its other half-edges unchanged).
    pub fn from_slot_major(&self, sm: &SlotMajor<T>) -> Result<Event> {
        let e = self.move_slots(&self.k.scatter, &sm.us, &self.u)?;
        match &self.ghosts {
            Some(g) => self.move_ghosts(g, &g.ds, &g.dh, &sm.us, &self.u),
            None => Ok(e),
        }
    }

    /// `dst[to[i]] = src[from[i]]` over the ghosts (`copy_idx`).
    pub(super) fn move_ghosts(
        &self,
        g: &Ghosts,
        from: &Buffer<u32>,
        to: &Buffer<u32>,
        src: &Buffer<T>,
        dst: &Buffer<T>,
    ) -> Result<Event> {
        launch(
            &self.dev,
            &g.kernel,
            g.halves.len(),
            LOCAL,
            &[
                Arg::U32(g.halves.len() as u32),
                Arg::BufU32(from),
                Arg::BufU32(to),
                Arg::Buf(src),
                Arg::Buf(dst),
            ],
        )
    }

    pub(super) fn move_slots(&self, k: &Kernel, src: &Buffer<T>, dst: &Buffer<T>) -> Result<Event> {
        launch(
            &self.dev,
            k,
            self.nfree,
            LOCAL,
            &[
                Arg::U32(self.nfree as u32),
                Arg::BufU32(&self.dual.vh),
                Arg::Buf(src),
                Arg::Buf(dst),
            ],
        )
    }
}
