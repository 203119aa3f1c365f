//! The primal update `F -= P U`.

use super::*;

impl<T: Real> ClStepper<T> {
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
            PrimalVariant::Row => launch(&self.dev, &pk.primal_row, 4 * tp, LOCAL, &args),
            PrimalVariant::Sym => launch(&self.dev, &pk.primal_sym, tp, LOCAL, &args),
        }
    }
}
