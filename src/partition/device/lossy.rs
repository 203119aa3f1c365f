//! The step of a partitioned device run with losses, poles or layers, and the checkpoint
//! state of its poles and layer (module docs of [`super`], "Losses, poles and layers").

use super::{ClPartStepper, Events};
use crate::backend::Stepper;
use crate::backend::opencl::{Field, Lane};
use crate::dga::Dga;
use crate::dga::operators::Operators;
use crate::error::{Error, Result};
use crate::partition::Comm;
use crate::partition::stepper::{gather_aux, gather_mag, mag_len, scatter_aux, scatter_mag};
use crate::real::Real;
use std::sync::Arc;

impl<T: Real, C: Comm> ClPartStepper<T, C> {
    /// [`Self::step`] of a run with losses (module docs, "Losses, poles and layers"): every kernel on the
    /// main queue, in the single-device order, each exchange blocking. Collective.
    pub(super) fn step_lossy(&mut self, k: usize) -> Result<()> {
        let ClPartStepper {
            comm,
            cl,
            phases: ph,
            halo,
            src,
            events,
            ..
        } = self;
        let mut ev = Events::default();
        let (ubuf, fbuf) = cl.state_buffers();
        for e in [cl.mag_loss()?, cl.pml_correct()?].into_iter().flatten() {
            ev.main(e);
        }
        for tets in &ph.tets {
            ev.main(cl.primal_on(tets, Lane::Main, &[])?);
        }
        halo.exchange(cl, comm, fbuf, Field::F)?;
        if let Some(e) = cl.pml_poles()? {
            ev.main(e);
        }
        for e in cl.loss_update()? {
            ev.main(e);
        }
        if let Some(e) = cl.disp_correct()? {
            ev.main(e);
        }
        for edges in &ph.edges {
            ev.main(cl.circulation_on(edges, Lane::Main, &[])?);
        }
        for slots in &ph.slots {
            ev.main(cl.vertex_blocks_on(slots, Lane::Main, &[])?);
        }
        for (idx, g, n) in src.iter() {
            if let Some(e) = cl.source_on(idx, g, *n, k, Lane::Main, &[])? {
                ev.main(e);
            }
        }
        for e in cl.disp_poles()? {
            ev.main(e);
        }
        halo.exchange(cl, comm, ubuf, Field::U)?;
        *events = ev;
        Ok(())
    }

    /// The host operators of a run with losses, poles or layers (module docs).
    fn host_ops(&self) -> Result<&Arc<Operators<T>>> {
        self.host.as_ref().ok_or_else(|| {
            Error::config(
                "time step",
                "unset",
                "ClPartStepper::set_time_step must be called before its state is read",
            )
        })
    }

    /// The dispersive state of every rank in the single-process layout, on rank
    /// 0, followed by the magnetic PML states, as [`super::PartStepper`] gives them; the
    /// other ranks get an empty vector. Empty without losses, poles or layers.
    pub(super) fn gathered_aux(&self) -> Result<Vec<f64>> {
        if !self.lossy {
            return Ok(Vec::new());
        }
        let ops = self.host_ops()?;
        self.cl.device().finish()?;
        let (s, g) = self.cl.disp_state()?;
        let mut aux = gather_aux(&self.comm, &self.part, ops, &s, &g)?;
        if self.part.materials.pml.is_some() {
            let (ms, mg) = self.cl.pml_state()?;
            aux.extend(gather_mag(&self.comm, &self.part, ops, &ms, &mg)?);
        }
        Ok(aux)
    }

    /// Collective: rank 0 passes the global state of [`Stepper::aux_state`], the others an
    /// empty one; every rank takes its entries.
    pub(super) fn scatter_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        if !self.lossy {
            return Stepper::set_aux_state(&mut self.cl, aux);
        }
        let ops = self.host_ops()?.clone();
        let root = self.comm.rank() == 0;
        let pml = self.part.materials.pml.is_some();
        let n_mag = if pml {
            mag_len(&self.comm, &self.part, &ops)?
        } else {
            0
        };
        let (disp, mag) = aux.split_at(aux.len().saturating_sub(n_mag));
        let (s, g) = scatter_aux(&self.comm, &self.part, &ops, root.then_some(disp))?;
        let (ms, mg) = if pml {
            scatter_mag(&self.comm, &self.part, &ops, root.then_some(mag))?
        } else {
            (Vec::new(), Vec::new())
        };
        let flat: Vec<f64> = (s.iter().chain(&g).chain(&ms).chain(&mg))
            .map(|x| x.f64())
            .collect();
        self.cl.device().finish()?;
        Stepper::set_aux_state(&mut self.cl, &flat)
    }
}

/// Whether any rank has conduction, absorbing surfaces, magnetic conductivity, dispersive
/// poles or a perfectly matched layer: the step of module docs' "Losses, poles and
/// layers". Collective.
pub(super) fn plain_step<C: Comm>(comm: &C, dga: &Dga) -> Result<bool> {
    let mine = dga.msig.is_some() || dga.mag.is_some() || dga.disp.is_some() || dga.mpml.is_some();
    comm.any(mine)
}
