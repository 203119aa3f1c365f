//! The discrete energy and the power iteration for ρ(K) on the device.

use super::*;

/// The energy's operands on the device: the masses `Meps` (packed as the vertex blocks of
/// `vertex_block_s`, at `poff`) and `Mmu` (`primal_sym`'s symmetric layout, columns of the tet
/// stride), in the stepper's precision, and scratch for `U` in slot order, the products and
/// the saved F.
pub(super) struct DeviceEnergy<T> {
    pub(super) meps: Buffer<T>,
    pub(super) poff: Buffer<u64>,
    pub(super) mmu: Buffer<T>,
    pub(super) xs: Buffer<T>,
    pub(super) y: Buffer<T>,
    pub(super) f_old: Buffer<T>,
    pub(super) partial: Buffer<T>,
}

/// Which state vector a halo hook works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Half-edge values (`U`, `2e + s`).
    U,
    /// Half dual-edge values (`F`, device slot `k T + n`).
    F,
}

/// What a distributed power iteration needs from its transport
/// ([`ClStepper::power_iteration`]).
pub trait PowerHalo<T: Real> {
    /// Brings the ghost values of `b` (a vector of layout `field` of stepper `s`) up to date.
    fn exchange(&mut self, s: &ClStepper<T>, b: &Buffer<T>, field: Field) -> Result<()>;
    /// Global sums of the per-rank partial sums.
    fn sum(&mut self, x: [f64; 3]) -> Result<[f64; 3]>;
}

/// One device holds the whole problem: nothing to exchange, nothing to add.
pub struct NoHalo;

impl<T: Real> PowerHalo<T> for NoHalo {
    fn exchange(&mut self, _: &ClStepper<T>, _: &Buffer<T>, _: Field) -> Result<()> {
        Ok(())
    }
    fn sum(&mut self, x: [f64; 3]) -> Result<[f64; 3]> {
        Ok(x)
    }
}

impl<T: Real> ClStepper<T> {
    pub(super) fn dot(
        &self,
        x: &Buffer<T>,
        y: &Buffer<T>,
        n: usize,
        partial: &Buffer<T>,
        groups: usize,
    ) -> Result<f64> {
        launch(
            &self.dev,
            &self.k.dot_partial,
            groups * LOCAL,
            LOCAL,
            &[
                Arg::U64(n as u64),
                Arg::Buf(x),
                Arg::Buf(y),
                Arg::Buf(partial),
                Arg::Local(LOCAL * std::mem::size_of::<T>()),
            ],
        )?;
        Ok(self
            .dev
            .read(partial, groups, "dot product")?
            .iter()
            .map(|v| v.f64())
            .sum())
    }

    /// Power iteration for ρ(K) on the device (Rayleigh quotient in the Meps inner
    /// product), on the current operators divided by Δt² (so the result is for unit Δt).
    /// Uses the same seeded start vector as [`crate::solver::spectral_radius`].
    pub fn spectral_radius(&mut self, iters: usize, seed: u64) -> Result<f64> {
        if self.losses.has_rows() || self.disp.is_on() {
            return Err(Error::config(
                "power iteration",
                "lossy operators",
                "run it before set_time_step installs the loss step (σ does not change ρ(K))",
            ));
        }
        let mut rng = Rng::new(seed);
        let mut x0 = vec![T::zero(); self.nh];
        for &h in &self.dga.meps.h {
            x0[h as usize] = T::of(rng.sym());
        }
        self.power_iteration(iters, &x0, &mut NoHalo)
    }

    /// The power iteration of [`Self::spectral_radius`] from the start vector `x0` (U
    /// layout), with `halo` completing ghost values and summing over ranks (a partitioned
    /// rank: its operators hold its own rows only, so its dot products are its share).
    pub fn power_iteration(
        &mut self,
        iters: usize,
        x0: &[T],
        halo: &mut dyn PowerHalo<T>,
    ) -> Result<f64> {
        // Meps: the host's, uploaded for the iteration, or the one assembled on the device
        let resident = self.resident_masses.take();
        let mbuf = match (&resident, self.dga.has_masses()) {
            (_, true) => {
                let dga = self.dga.clone();
                Some(self.dev.upload_with(
                    dga.meps.data.len(),
                    "Meps blocks (power iteration)",
                    |i| T::of(dga.meps.data[i]),
                )?)
            }
            (Some(_), false) => None,
            (None, false) => {
                self.resident_masses = resident;
                return self
                    .dga
                    .require_masses("power iteration")
                    .map(|()| f64::NAN);
            }
        };
        let r = self.power_iteration_with(
            iters,
            x0,
            halo,
            mbuf.as_ref()
                .unwrap_or_else(|| &resident.as_ref().expect("checked above").meps_full),
        );
        self.resident_masses = resident;
        r
    }

    /// [`Self::power_iteration`] with `Meps`'s full blocks `mbuf` on the device.
    pub(super) fn power_iteration_with(
        &mut self,
        iters: usize,
        x0: &[T],
        halo: &mut dyn PowerHalo<T>,
        mbuf: &Buffer<T>,
    ) -> Result<f64> {
        let x = self.dev.upload(x0, "power iteration vector")?;
        halo.exchange(self, &x, Field::U)?;
        let kx = self.dev.alloc::<T>(self.nh, "power iteration vector")?;
        let mx = self.dev.alloc::<T>(self.nh, "power iteration vector")?;
        // Up to 256 work-groups; fewer when fewer already give every element its own
        // work-item (then the extra groups only added exact zeros: the sums are the same
        // bit for bit, and a simulator such as Oclgrind runs far fewer work-items).
        let groups = dot_groups(self.nh);
        let partial = self.dev.alloc::<T>(groups, "partial sums")?;
        // Operate on (x -> f -> kx) with the stepper's own F and C buffers, saved around.
        // the iteration works in F (and the circulations, scratch of every step): F is
        // saved on the device and restored after it (U is not touched)
        let n4 = 4 * self.tp;
        let f_saved = self
            .dev
            .alloc::<T>(n4.max(1), "saved F (power iteration)")?;
        let copy_f = |a: &Buffer<T>, b: &Buffer<T>| {
            launch(
                &self.dev,
                &self.k.copy,
                n4,
                LOCAL,
                &[Arg::U64(n4 as u64), Arg::Buf(a), Arg::Buf(b)],
            )
        };
        copy_f(&self.f, &f_saved)?;
        let mut lambda = 0.0;
        let nh = self.nh as u32;
        // each half-edge's vertex and the offset of its row in that vertex's block (only
        // the power iteration's mass product reads them)
        let (hvert, hrow) = self.dga.half_edge_rows();
        let hvert = self.dev.upload(&hvert, "half-edge vertices")?;
        let hrow = self.dev.upload(&hrow, "half-edge rows")?;
        let vb_h = |m: &Buffer<T>, xin: &Buffer<T>, out: &Buffer<T>| {
            launch(
                &self.dev,
                &self.k.vertex_block_h,
                self.nh,
                LOCAL,
                &[
                    Arg::U32(nh),
                    Arg::BufU64(&hrow),
                    Arg::BufU32(&hvert),
                    Arg::BufU32(&self.dual.vptr),
                    Arg::BufU32(&self.dual.vh),
                    Arg::Buf(m),
                    Arg::Buf(xin),
                    Arg::Buf(out),
                ],
            )
        };
        let mut kxb = kx;
        for _ in 0..iters {
            self.dev.fill_zero(&mut self.f, 4 * self.tp)?;
            self.dev.fill_zero(&mut kxb, self.nh)?; // the block kernel accumulates
            self.launch_primal(&x, &self.f)?;
            halo.exchange(self, &self.f, Field::F)?;
            self.launch_circulation(&self.f)?;
            self.launch_vertex_blocks(&kxb)?; // kxb = -dt² K x
            vb_h(mbuf, &kxb, &mx)?;
            let num = self.dot(&x, &mx, self.nh, &partial, groups)?;
            vb_h(mbuf, &x, &mx)?;
            let den = self.dot(&x, &mx, self.nh, &partial, groups)?;
            let nrm2 = self.dot(&kxb, &kxb, self.nh, &partial, groups)?;
            let [num, den, nrm2] = halo.sum([num, den, nrm2])?;
            lambda = -num / den / (self.dt * self.dt);
            let nrm = nrm2.sqrt();
            if nrm == 0.0 {
                break;
            }
            launch(
                &self.dev,
                &self.k.axpy0,
                self.nh,
                LOCAL,
                &[
                    Arg::U64(self.nh as u64),
                    Arg::Real(T::of(-1.0 / nrm)),
                    Arg::Buf(&kxb),
                    Arg::Buf(&x),
                ],
            )?;
            halo.exchange(self, &x, Field::U)?;
        }
        launch(
            &self.dev,
            &self.k.copy,
            n4,
            LOCAL,
            &[Arg::U64(n4 as u64), Arg::Buf(&f_saved), Arg::Buf(&self.f)],
        )?;
        self.dev.finish()?;
        Ok(lambda)
    }

    /// The energy's masses and scratch on the device ([`DeviceEnergy`]).
    /// The masses come from the host's `Dga`, or are those assembled on this device
    /// ([`ResidentMasses`], moved into the energy's operands).
    pub(super) fn energy_operands(&mut self) -> Result<DeviceEnergy<T>> {
        let (dga, tp) = (self.dga.clone(), self.tp);
        let poff = dga.meps.packed_offsets();
        let (meps, mmu) = if dga.has_masses() {
            let packed = dga.meps.pack(&dga.meps.data, &poff, T::of);
            // the upper triangle row by row, as primal_sym's layout
            let mmu = upload_columns(&self.dev, self.t, 10, "energy: Mmu", T::zero(), |k, n| {
                let (r, c) = crate::dga::SYM4_RC[k];
                T::of(dga.mmu[n][4 * r + c])
            })?;
            (self.dev.upload(&packed, "energy: Meps blocks")?, mmu)
        } else {
            let m = self.resident_masses.take();
            let why = "the masses are neither on the host nor on the device";
            let ResidentMasses {
                meps_full,
                meps_packed,
                mmu,
            } = m.ok_or_else(|| Error::config("energy", "resident operators", why))?;
            // the power iteration's full blocks stay for a later iteration
            self.resident_masses = Some(ResidentMasses {
                meps_full,
                meps_packed: self.dev.alloc(1, "energy: moved")?,
                mmu: self.dev.alloc(1, "energy: moved")?,
            });
            (meps_packed, mmu)
        };
        let groups = dot_groups(self.nfree.max(4 * tp));
        Ok(DeviceEnergy {
            meps,
            poff: self.dev.upload(&poff, "energy: block offsets")?,
            mmu,
            xs: self.dev.alloc(self.nfree.max(1), "energy: U by slot")?,
            y: self
                .dev
                .alloc(self.nfree.max(4 * tp).max(1), "energy: products")?,
            f_old: self.dev.alloc((4 * tp).max(1), "energy: saved F")?,
            partial: self.dev.alloc(groups, "energy: partial sums")?,
        })
    }

    /// `W = ½ Uᵀ Meps U + ½ F_oldᵀ Mmu F_new` on the device, with `F_new = F_old - P U` as
    /// [`Self::state_with_next`] computes it (F is restored): the host's
    /// [`super::cpu::energy_of`] without moving the state (two dot products of `NF` and
    /// `4 TP` values, summed per work-group on the device and over the groups on the host in
    /// f64).
    pub(super) fn device_energy(&self, d: &DeviceEnergy<T>) -> Result<f64> {
        let (nf, n4) = (self.nfree, 4 * self.tp);
        let copy = |a: &Buffer<T>, b: &Buffer<T>| {
            launch(
                &self.dev,
                &self.k.copy,
                n4,
                LOCAL,
                &[Arg::U64(n4 as u64), Arg::Buf(a), Arg::Buf(b)],
            )
        };
        // U by slot: slot-major U as it is, else gathered through the slots' half-edges
        let xs = match &self.slots {
            Some(st) => &st.sm.us,
            None => {
                let args = [
                    Arg::U32(nf as u32),
                    Arg::BufU32(&self.dual.vh),
                    Arg::Buf(&self.u),
                    Arg::Buf(&d.xs),
                ];
                launch(&self.dev, &self.k.gather, nf, LOCAL, &args)?;
                &d.xs
            }
        };
        let args = [
            Arg::U32(nf as u32),
            Arg::BufU32(&self.dual.slot_vertex),
            Arg::BufU32(&self.dual.vptr),
            Arg::BufU64(&d.poff),
            Arg::Buf(&d.meps),
            Arg::Buf(xs),
            Arg::Buf(&d.y),
        ];
        launch(&self.dev, &self.k.meps_slots, nf, LOCAL, &args)?;
        let we = self.dot(xs, &d.y, nf, &d.partial, dot_groups(nf))?;
        copy(&self.f, &d.f_old)?;
        self.primal_update()?;
        let args = [
            Arg::U32(self.tp as u32),
            Arg::Buf(&d.mmu),
            Arg::Buf(&self.f),
            Arg::Buf(&d.y),
        ];
        launch(&self.dev, &self.k.sym4_apply, self.tp, LOCAL, &args)?;
        let wm = self.dot(&d.f_old, &d.y, n4, &d.partial, dot_groups(n4))?;
        copy(&d.f_old, &self.f)?;
        Ok(0.5 * (we + wm))
    }

    /// `(U, F_old, F_new)` in host layouts, with `F_new = F_old - P U` computed on the device.
    pub fn state_with_next(&mut self) -> Result<(Vec<T>, Vec<T>, Vec<T>)> {
        self.sync_u()?;
        let u = self.dev.read(&self.u, self.nh, "U")?;
        let f = self.dev.read(&self.f, 4 * self.tp, "F")?;
        self.primal_update()?;
        let fnew = self.dev.read(&self.f, 4 * self.tp, "F")?;
        self.dev.write(&mut self.f, &f, "F")?;
        let host = |d: &[T]| f_to_host(d, self.t, self.tp, |x| x);
        Ok((u, host(&f), host(&fnew)))
    }
}
