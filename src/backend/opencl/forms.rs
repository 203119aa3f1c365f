//! Bench-only forms: mixed storage, paired circulation lists, the slot table of
//! `primal_sym_st` (the sliced ELL lists are in `sell.rs`).

use super::*;

/// Mixed storage (issue 19, a bench variant): the default layouts' operators, `Δt Mmu⁻¹`'s
/// triangle (`primal_sym`) and the packed `Δt Meps_v⁻¹` blocks (`vertex_block_s`), rounded
/// to f32 once on the host, with the kernels of the DGA program (`cl/dga/*.cl`) built with `-D OPREAL=float`
/// for double-precision fields: every product and sum is in f64, only the operators'
/// stored values are rounded. Built by [`ClStepper::mixed_operators`] for the stepper's Δt.
///
/// Rounding keeps both operators symmetric (each stored once), so the scheme with them is
/// again an exactly energy-conserving leapfrog, of an operator `K̃` within a relative 2⁻²⁴
/// entry by entry of `K`'s factors (`tests/opencl/mixed.rs` bounds the shift of its eigenvalues).
pub struct MixedOperators {
    pub(super) primal: Kernel,
    pub(super) block: Kernel,
    pub(super) p: Buffer<f32>,
    pub(super) b: Buffer<f32>,
    /// The Δt the operators were scaled by.
    pub dt: f64,
}

/// The circulation lists with each tet's two entries in one word (`circulation_pair`,
/// `circulation_pair_sell`, bench variants): `(n << 4) | (fp << 2) | fm` for the entries
/// `+F(n, fp)`, `-F(n, fm)`, half the index bytes; optionally in sliced ELL form.
pub struct PairCirculation {
    pub(super) kernel: Kernel,
    pub(super) pairs: Buffer<u32>,
    /// Chunk offsets of the sliced ELL form (None: the lists as `circ`).
    pub(super) so: Option<Buffer<u64>>,
    /// Words stored, padding included (the byte model's).
    pub entries: usize,
}

impl<T: Real> ClStepper<T> {
    /// The operators of this stepper (its Δt) in mixed storage ([`MixedOperators`]): an
    /// f64 stepper of a lossless, non-dispersive mesh whose host `Dga` holds the operators;
    /// else an error naming what is missing.
    pub fn mixed_operators(&self) -> Result<MixedOperators> {
        let why = if T::NAME != "f64" {
            Some("mixed storage keeps the fields in f64: use --precision f64")
        } else if self.dga.msig.is_some() || self.dga.mag.is_some() || self.dga.disp.is_some() {
            Some("mixed storage covers lossless, non-dispersive media only")
        } else if self.t > 0 && self.dga.mmu_inv.is_empty() {
            Some("mixed storage is built from the host's operators (not resident ones)")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::config("variant", "mixed", why));
        }
        let [primal, block] = self.dgatd_kernels(true, ["primal_sym", "vertex_block_s"])?;
        let dt = self.dt;
        let d = &self.dga;
        let p = upload_columns(&self.dev, self.t, 10, "mixed primal blocks", 0.0, |k, n| {
            (dt * d.mmu_inv[n][k]) as f32
        })?;
        let poff = d.meps.packed_offsets();
        let packed = d
            .meps_inv
            .pack(&d.meps_inv.data, &poff, |x| (dt * x) as f32);
        Ok(MixedOperators {
            primal,
            block,
            p,
            b: self.dev.upload(&packed, "mixed vertex blocks")?,
            dt,
        })
    }

    /// `F -= P U` with the mixed operators `m` (from this stepper, at its Δt).
    pub fn primal_update_mixed(&self, m: &MixedOperators) -> Result<Event> {
        launch(
            &self.dev,
            &m.primal,
            self.tp,
            LOCAL,
            &[
                Arg::U32(self.tp as u32),
                Arg::BufF32(&m.p),
                Arg::BufU32(self.primal.buffers().1),
                Arg::Buf(&self.u),
                Arg::Buf(&self.f),
            ],
        )
    }

    /// `U += B c` with the mixed blocks `m` (after [`Self::circulation`]); the stepper's
    /// packed offsets must be resident (the default layout).
    pub fn vertex_blocks_mixed(&self, m: &MixedOperators) -> Result<Event> {
        if self.dual.blocks.layout != BlockLayout::Tri {
            return Err(Error::config(
                "variant",
                "mixed",
                "the mixed blocks need the packed layout's offsets resident (the default block variant)",
            ));
        }
        launch(
            &self.dev,
            &m.block,
            self.nfree,
            LOCAL,
            &self.vertex_major_args(&self.dual.blocks.poff, Arg::BufF32(&m.b), &self.u),
        )
    }

    /// Adds to `sm` the per-tet slot table of `primal_sym_st` (a bench variant: each tet's
    /// six edges as pairs of slots, the orientation in bit 31 of the first; 48 bytes per tet
    /// instead of the 24 of the edge ids and the gathers of the half-edge slots).
    pub fn slot_table(&self, sm: &mut SlotMajor<T>) -> Result<()> {
        if self.nfree > EDGE_MASK as usize {
            return Err(Error::config(
                "variant",
                "slot table",
                "more free half-edges than bit 31 leaves slot indices for",
            ));
        }
        let [kernel] = self.dgatd_kernels(sm.mixed.is_some(), ["primal_sym_st"])?;
        let es = self.half_edge_slots();
        let (t, tp, dga) = (self.t, self.tp, &self.dga);
        let nf = self.nfree as u32;
        let ts = self.dev.upload_with(12 * tp, "per-tet slot table", |i| {
            let (cn, s) = (i / 2, i % 2);
            let (c, n) = (cn / tp, cn % tp);
            if n >= t {
                return nf; // a padding tet: the zero slot
            }
            let e = dga.tet_edges[n][c] as usize;
            let orient = ((dga.tet_orient[n] >> c) & 1) as u32;
            es[2 * e + s] | if s == 0 { orient << 31 } else { 0 }
        })?;
        sm.table = Some((kernel, ts));
        Ok(())
    }

    /// `F -= P U` with slot-major `U` through the per-tet slot table (`primal_sym_st`, after
    /// [`Self::slot_table`]).
    pub fn primal_update_st(&self, sm: &SlotMajor<T>) -> Result<Event> {
        let Some((kernel, ts)) = &sm.table else {
            return Err(Error::config(
                "variant",
                "slot table",
                "ClStepper::slot_table was not called",
            ));
        };
        let m = sm
            .mixed
            .as_ref()
            .map_or(Arg::Buf(self.primal.buffers().0), |m| Arg::BufF32(&m.p));
        let args = [
            Arg::U32(self.tp as u32),
            m,
            Arg::BufU32(ts),
            Arg::Buf(&sm.us),
            Arg::Buf(&self.f),
        ];
        launch(&self.dev, kernel, self.tp, LOCAL, &args)
    }

    /// The circulation lists in paired form ([`PairCirculation`]), in sliced ELL form with
    /// `sell`; an error when a list is not in pairs `+F(n, ·)`, `-F(n, ·)` (never for a
    /// `Dga` of this crate) or a tet index needs more than 28 bits.
    pub fn pair_circulation(&self, sell: bool) -> Result<PairCirculation> {
        let (so, data) = if sell {
            let (so, sp) = self.sliced_ell(CircVariant::Paired)?;
            (Some(so), sp)
        } else {
            (None, circulation_words(&self.dga, CircVariant::Paired)?)
        };
        let name = if sell {
            "circulation_pair_sell"
        } else {
            "circulation_pair"
        };
        let [kernel] = self.dgatd_kernels(false, [name])?;
        Ok(PairCirculation {
            kernel,
            entries: data.len(),
            pairs: self.dev.upload(&data, "paired circulation entries")?,
            so: match so {
                Some(so) => Some(self.dev.upload(&so, "paired sliced ELL chunk offsets")?),
                None => None,
            },
        })
    }

    /// `c = C̃ F` through the paired lists (`circulation_pair`, `circulation_pair_sell`).
    pub fn circulation_pair(&self, pc: &PairCirculation) -> Result<Event> {
        let (e, t) = (Arg::U32(self.ne as u32), Arg::U32(self.tp as u32));
        let (ptr, pairs) = (Arg::BufU32(&self.dual.circ_ptr), Arg::BufU32(&pc.pairs));
        let (f, c) = (Arg::Buf(&self.f), Arg::Buf(&self.dual.c));
        match &pc.so {
            Some(so) => launch(
                &self.dev,
                &pc.kernel,
                self.ne,
                LOCAL,
                &[e, t, ptr, Arg::BufU64(so), pairs, f, c],
            ),
            None => launch(
                &self.dev,
                &pc.kernel,
                self.ne,
                LOCAL,
                &[e, t, ptr, pairs, f, c],
            ),
        }
    }

    /// The arguments of a vertex-major block kernel over every free slot: the count, then
    /// [`Dual::block_args`].
    fn vertex_major_args<'a>(
        &'a self,
        offsets: &'a Buffer<u64>,
        block: Arg<'a, T>,
        u: &'a Buffer<T>,
    ) -> Vec<Arg<'a, T>> {
        let head = [Arg::U32(self.nfree as u32)];
        head.into_iter()
            .chain(self.dual.block_args(offsets, block, u))
            .collect()
    }
}
