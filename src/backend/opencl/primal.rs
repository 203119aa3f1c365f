//! The primal update `F -= P U`.

use super::*;

impl<T: Real> ClStepper<T> {
    /// The bytes the losses add to a step as this stepper runs it ([`crate::cost::loss_bytes`]:
    /// the loss step of the conducting vertices and the magnetic loss of the σ* tets; 0
    /// when lossless).
    pub fn loss_bytes(&self) -> f64 {
        self.losses.bytes()
    }

    /// The loss step `U_v ← B̂_v U_v` at the lossy vertices (nothing when lossless).
    pub fn loss_update(&self) -> Result<Vec<Event>> {
        self.losses.update(&self.dev, &self.vptr, &self.vh, &self.u)
    }

    /// The magnetic loss of the σ* tets before the primal update (None without σ*).
    pub(super) fn mag_loss(&self) -> Result<Option<Event>> {
        self.losses.mag_update(&self.dev, self.tp, &self.f)
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
        let (tp, pk) = (self.tp, &self.k);
        let args = [
            Arg::U32(tp as u32),
            Arg::Buf(&self.p),
            Arg::BufU32(&self.pe),
            Arg::Buf(u),
            Arg::Buf(f),
        ];
        match self.variants.primal {
            PrimalVariant::Tet => launch(&self.dev, &pk.primal_tet, tp, LOCAL, &args),
            PrimalVariant::Sym => launch(&self.dev, &pk.primal_sym, tp, LOCAL, &args),
        }
    }
}
