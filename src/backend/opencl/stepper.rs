//! [`Stepper`] for [`ClStepper`].

use super::*;

impl<T: Real> Stepper for ClStepper<T> {
    fn name(&self) -> String {
        let layout = match self.u_layout() {
            ULayout::HalfEdge => "",
            ULayout::SlotMajor => " (slot-major U)",
        };
        format!(
            "opencl {} / {}{layout}",
            self.dev.info.platform, self.dev.info.name
        )
    }

    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        advance_sampled(self, first, n, samples)
    }

    fn energy(&mut self) -> Result<f64> {
        let on_device = matches!(self.energy, Some(Ok(_))) || self.resident_masses.is_some();
        if !on_device {
            self.dga.require_masses("energy")?;
        }
        // the poles' energy needs the state on the host, but only that of real dispersive
        // media: a PML's stretch poles carry none (crate::backend::cpu::aux_energy)
        let aux_media = self.dga.disp.as_ref().is_some_and(|d| d.n_media > 0);
        if !aux_media {
            if self.energy.is_none() {
                self.energy = Some(self.energy_operands().map_err(|_| ()));
            }
            if let Some(Ok(d)) = &self.energy {
                return self.device_energy(d);
            }
        }
        self.dga.require_masses("energy")?;
        // on the host: dispersive media (the pole states' energy), or no room on the device
        let (u, f, fnew) = self.state_with_next()?;
        let aux = match self.disp.host() {
            Some(d) => {
                let (s, _) = self.disp_state()?;
                crate::backend::cpu::aux_energy_of(&self.dga, d, self.dt, &u, &s)
            }
            None => 0.0,
        };
        Ok(crate::backend::cpu::energy_of(&self.dga, &u, &f, &fnew) + aux)
    }

    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        self.sync_u()?;
        let u = self.dev.read(&self.u, self.nh, "U")?;
        let fd = self.dev.read(&self.f, 4 * self.tp, "F")?;
        let f = f_to_host(&fd, self.t, self.tp, |x| x.f64());
        Ok((u.iter().map(|x| x.f64()).collect(), f))
    }

    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        if u.len() != self.nh || f.len() != 4 * self.t {
            return Err(Error::config(
                "state",
                format!("{}+{}", u.len(), f.len()),
                "length does not match the mesh",
            ));
        }
        let ut: Vec<T> = u.iter().map(|&x| T::of(x)).collect();
        let fd = f_to_device::<T>(f, self.t, self.tp);
        let es = self.half_edge_slots();
        let nf = self.nfree as u32;
        self.nonfree_zero = u.iter().zip(&es).all(|(&x, &g)| g != nf || x == 0.0);
        if !self.nonfree_zero {
            self.slots = None; // (its values are replaced below)
        }
        self.dev.write(&mut self.u, &ut, "U")?;
        if let Some(st) = &self.slots {
            self.to_slot_major(&st.sm)?;
        }
        self.dev.write(&mut self.f, &fd, "F")
    }

    fn aux_state(&self) -> Result<Vec<f64>> {
        // the CPU stepper's order: pole states, changes, then the layer's magnetic ones
        let (s, g) = self.disp_state()?;
        let (ms, mg) = self.pml.state(&self.dev)?;
        Ok(s.iter()
            .chain(&g)
            .chain(&ms)
            .chain(&mg)
            .map(|x| x.f64())
            .collect())
    }
    fn set_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        let (ns, ng) = self.pml.counts();
        let Some(k) = aux.len().checked_sub(ns + ng) else {
            return Err(Error::config(
                "state",
                aux.len(),
                format!("this run has at least {} PML state values", ns + ng),
            ));
        };
        self.disp.set_state(&self.dev, &aux[..k])?;
        self.pml
            .set_state(&self.dev, &aux[k..k + ns], &aux[k + ns..])
    }
    fn dft_start(&mut self, m: usize) -> Result<()> {
        // accumulate U where it lives: no move between layouts in the time loop
        let slots = self.slots.is_some();
        let nu = if slots { self.nfree + 1 } else { self.nh };
        self.dft.start(&self.dev, m, nu, 4 * self.tp, slots)
    }

    fn dft_add(&mut self, pu: &[C64], pf: &[C64]) -> Result<()> {
        let u = match &self.slots {
            Some(st) => (&st.sm.us, self.nfree + 1, true),
            None => (&self.u, self.nh, false),
        };
        self.dft.add(&self.dev, pu, pf, u, &self.f)
    }

    fn dft_take(&self, m: usize) -> Result<(Vec<C64>, Vec<C64>)> {
        let (slots, [ur, ui, fr, fi]) = self.dft.take(&self.dev, m)?;
        let x = match slots {
            // back to half-edges: slot NF (zero) for those that are not free
            true => self
                .half_edge_slots()
                .iter()
                .map(|&g| C64::new(ur[g as usize], ui[g as usize]))
                .collect(),
            false => ur.iter().zip(&ui).map(|(&a, &b)| C64::new(a, b)).collect(),
        };
        let (fr, fi) = (
            f_to_host(&fr, self.t, self.tp, |v| v),
            f_to_host(&fi, self.t, self.tp, |v| v),
        );
        let y = fr.iter().zip(&fi).map(|(&a, &b)| C64::new(a, b)).collect();
        Ok((x, y))
    }
}
