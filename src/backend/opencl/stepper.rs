//! [`Stepper`] for [`ClStepper`], with the running Fourier transforms.

use super::*;

/// The running transforms on the device: `m` frequencies, accumulators of `2 m nh` and
/// `2 m 4T` values (real and imaginary planes per frequency, F in the device layout) and
/// this step's phase factors for U and F (`2 m` values each).
pub(super) struct DeviceDft<T> {
    pub(super) m: usize,
    /// Whether `acc_u` accumulates slot-major `US` (`NF + 1` values per plane, the layout
    /// of `U` at [`Stepper::dft_start`]) instead of `U` by half-edge (`nh`).
    pub(super) slots: bool,
    pub(super) acc_u: Buffer<T>,
    pub(super) acc_f: Buffer<T>,
    pub(super) pu: Buffer<T>,
    pub(super) pf: Buffer<T>,
}

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
        if self.disp.is_none() {
            if self.energy.is_none() {
                self.energy = Some(self.energy_operands().map_err(|_| ()));
            }
            if let Some(Ok(d)) = &self.energy {
                return self.device_energy(d);
            }
        }
        self.dga.require_masses("energy")?;
        // on the host: dispersive runs (the pole states' energy), or no room on the device
        let (u, f, fnew) = self.state_with_next()?;
        let aux = match &self.disp {
            Some(d) => {
                let (s, _) = self.disp_state()?;
                crate::backend::cpu::aux_energy_of(&self.dga, &d.host, self.dt, &u, &s)
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
        let (s, g) = self.disp_state()?;
        Ok(s.iter().chain(&g).map(|x| x.f64()).collect())
    }
    fn set_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        let (ns, ng) = self
            .disp
            .as_ref()
            .map_or((0, 0), |d| (d.host.n_state, d.host.n_g));
        if aux.len() != ns + ng {
            return Err(Error::config(
                "state",
                aux.len(),
                format!("this run has {} dispersive state values", ns + ng),
            ));
        }
        if let Some(d) = self.disp.as_mut() {
            let to = |v: &[f64]| v.iter().map(|&x| T::of(x)).collect::<Vec<T>>();
            self.dev.write(&mut d.s, &to(&aux[..ns]), "pole states")?;
            if ng > 0 {
                self.dev.write(&mut d.g, &to(&aux[ns..]), "pole changes")?;
            }
        }
        Ok(())
    }
    fn dft_start(&mut self, m: usize) -> Result<()> {
        self.dft = None; // release the old accumulators first
        let what = |x: &str| format!("mode-shape transforms of {x} ({m} frequencies)");
        // accumulate U where it lives: no move between layouts in the time loop
        let slots = self.slots.is_some();
        let nu = if slots { self.nfree + 1 } else { self.nh };
        self.dft = Some(DeviceDft {
            m,
            slots,
            acc_u: self.dev.alloc(2 * m * nu, &what("U"))?,
            acc_f: self.dev.alloc(2 * m * 4 * self.tp, &what("F"))?,
            pu: self.dev.alloc(2 * m, "phase factors")?,
            pf: self.dev.alloc(2 * m, "phase factors")?,
        });
        Ok(())
    }

    fn dft_add(&mut self, pu: &[C64], pf: &[C64]) -> Result<()> {
        let Some(d) = self.dft.as_mut() else {
            return Err(Error::config(
                "mode shapes",
                "dft_add",
                "dft_start was not called",
            ));
        };
        if pu.len() != d.m || pf.len() != d.m {
            return Err(Error::config(
                "mode shapes",
                pu.len(),
                "phase factors do not match the started transforms",
            ));
        }
        let pairs =
            |p: &[C64]| -> Vec<T> { p.iter().flat_map(|z| [T::of(z.re), T::of(z.im)]).collect() };
        self.dev.write(&mut d.pu, &pairs(pu), "phase factors")?;
        self.dev.write(&mut d.pf, &pairs(pf), "phase factors")?;
        let d = self.dft.as_ref().expect("set above");
        let (nu, u) = match (&self.slots, d.slots) {
            (Some(st), true) => (self.nfree + 1, &st.sm.us),
            (None, false) => (self.nh, &self.u),
            _ => {
                return Err(Error::config(
                    "mode shapes",
                    "dft_add",
                    "the layout of U changed since dft_start (start the transforms again)",
                ));
            }
        };
        for (n, p, x, acc) in [
            (nu, &d.pu, u, &d.acc_u),
            (4 * self.tp, &d.pf, &self.f, &d.acc_f),
        ] {
            launch(
                &self.dev,
                &self.k.dft_acc,
                n,
                LOCAL,
                &[
                    Arg::U32(n as u32),
                    Arg::U32(d.m as u32),
                    Arg::Buf(p),
                    Arg::Buf(x),
                    Arg::Buf(acc),
                ],
            )?;
        }
        Ok(())
    }

    fn dft_take(&self, m: usize) -> Result<(Vec<C64>, Vec<C64>)> {
        let Some(d) = self.dft.as_ref().filter(|d| m < d.m) else {
            return Err(Error::config("mode shapes", m, "no such running transform"));
        };
        let plane = |b: &Buffer<T>, n: usize, k: usize| -> Result<Vec<f64>> {
            let p = self
                .dev
                .read_range(b, (2 * m + k) * n, n, "mode-shape transform")?;
            Ok(p.iter().map(|x| x.f64()).collect())
        };
        let nf = 4 * self.tp;
        let nu = if d.slots { self.nfree + 1 } else { self.nh };
        let (ur, ui) = (plane(&d.acc_u, nu, 0)?, plane(&d.acc_u, nu, 1)?);
        let (fr, fi) = (plane(&d.acc_f, nf, 0)?, plane(&d.acc_f, nf, 1)?);
        let x = match d.slots {
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
