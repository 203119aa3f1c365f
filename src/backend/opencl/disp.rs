//! Dispersion on the device (design note §13): the correction, the pole step and the
//! fused vertex-block form.

use super::*;

/// Dispersion on the device ([`crate::dga::operators::DispOps`]): the correction rows and
/// blocks, the pole entries, coefficients and states, the changes `g`; `host` keeps the
/// layout (and the coefficients) for the energy.
pub(super) struct DeviceDisp<T> {
    pub(super) host: crate::dga::operators::DispOps<T>,
    pub(super) h: Buffer<u32>,
    pub(super) row: Buffer<u64>,
    pub(super) len: Buffer<u32>,
    pub(super) goff: Buffer<u32>,
    pub(super) block: Buffer<T>,
    pub(super) ent_h: Buffer<u32>,
    pub(super) ent_g: Buffer<u32>,
    pub(super) coef: Buffer<T>,
    pub(super) s: Buffer<T>,
    pub(super) g: Buffer<T>,
    /// The fused form (factored dual only; None when no vertex qualifies).
    pub(super) fused: Option<DeviceFused>,
}

/// The fused dispersion on the device ([`crate::dga::operators::FusedDisp`]): the vertex
/// block's slot tables (`slot_vertex`, `vptr`, `boff`, `vh` of [`ClStepper`]) with the fused
/// vertices renumbered first (their `nfused` slots go to `vertex_block_vf`, the others to
/// `vertex_block_v_from`); per renumbered fused vertex its material, first entry and first
/// `g` index; the material table; the correction rows left to `disp_correct` (as `h`, `row`,
/// `len`, `goff` of [`DeviceDisp`]) and per material the entries left to `disp_poles_idx`.
pub(super) struct DeviceFused {
    pub(super) host: crate::dga::operators::FusedDisp,
    pub(super) nfused: usize,
    pub(super) slot_vertex: Buffer<u32>,
    pub(super) vptr: Buffer<u32>,
    pub(super) boff: Buffer<u64>,
    pub(super) vh: Buffer<u32>,
    pub(super) fm: Buffer<u32>,
    pub(super) fe: Buffer<u32>,
    pub(super) fg: Buffer<u32>,
    pub(super) mt: Buffer<u64>,
    pub(super) h: Buffer<u32>,
    pub(super) row: Buffer<u64>,
    pub(super) len: Buffer<u32>,
    pub(super) goff: Buffer<u32>,
    pub(super) rest: Vec<Option<Buffer<u32>>>,
}

impl<T: Real> ClStepper<T> {
    /// The fused layout on the device (None when no vertex qualifies).
    /// `slots`: the vertex block's `vptr`, `vh` and block offsets.
    pub(super) fn upload_fused(
        dev: &ClDevice,
        d: &crate::dga::operators::DispOps<T>,
        f: crate::dga::operators::FusedDisp,
        slots: (&[u32], &[u32], &[usize]),
    ) -> Result<Option<DeviceFused>> {
        if f.vertices == 0 {
            return Ok(None);
        }
        let (vptr, vh, off) = slots;
        let nv = vptr.len() - 1;
        // fused vertices first, each group in its original order (locality kept)
        let order: Vec<usize> = (0..nv)
            .filter(|&v| f.fm[v] != u32::MAX)
            .chain((0..nv).filter(|&v| f.fm[v] == u32::MAX))
            .collect();
        let (mut vptr2, mut vh2, mut sv2) = (vec![0u32], Vec::with_capacity(vh.len()), Vec::new());
        for (j, &v) in order.iter().enumerate() {
            let hs = &vh[vptr[v] as usize..vptr[v + 1] as usize];
            vh2.extend_from_slice(hs);
            sv2.extend(std::iter::repeat_n(j as u32, hs.len()));
            vptr2.push(vh2.len() as u32);
        }
        let boff2: Vec<u64> = order.iter().map(|&v| off[v] as u64).collect();
        let pv = |x: &[u32]| {
            order[..f.vertices]
                .iter()
                .map(|&v| x[v])
                .collect::<Vec<u32>>()
        };
        let pick = |v: &[u32]| f.rows.iter().map(|&r| v[r]).collect::<Vec<u32>>();
        let row: Vec<u64> = f.rows.iter().map(|&r| d.row[r]).collect();
        let rest = f
            .rest
            .iter()
            .map(|r| {
                (!r.is_empty())
                    .then(|| dev.upload(r, "split pole entries"))
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(DeviceFused {
            nfused: f.slots,
            slot_vertex: dev.upload(&sv2, "renumbered slot vertices")?,
            vptr: dev.upload(&vptr2, "renumbered vertex pointers")?,
            boff: dev.upload(&boff2, "renumbered block offsets")?,
            vh: dev.upload(&vh2, "renumbered vertex half-edges")?,
            fm: dev.upload(&pv(&f.fm), "fused vertex materials")?,
            fe: dev.upload(&pv(&f.fe), "fused vertex entries")?,
            fg: dev.upload(&pv(&f.fg), "fused vertex changes")?,
            mt: dev.upload(&f.mt, "dispersive material table")?,
            h: dev.upload(&pick(&d.h), "split dispersive rows")?,
            row: dev.upload(&row, "split dispersive row offsets")?,
            len: dev.upload(&pick(&d.len), "split dispersive row lengths")?,
            goff: dev.upload(&pick(&d.goff), "split dispersive state offsets")?,
            rest,
            host: f,
        }))
    }

    /// The fused dispersion, when this step uses it (factored dual, vertex-major blocks,
    /// [`DispVariant::Fused`], and some vertex qualifies).
    pub(super) fn fused(&self) -> Option<(&DeviceDisp<T>, &DeviceFused)> {
        let d = self.disp.as_ref()?;
        let f = d.fused.as_ref()?;
        (self.dual == DualForm::Factored
            && self.variants.block == BlockVariant::Vertex
            && self.variants.disp == DispVariant::Fused)
            .then_some((d, f))
    }

    /// The bytes the dispersion adds to a step as this stepper runs it (the byte models
    /// [`crate::cost::disp_bytes`] and [`crate::cost::disp_bytes_fused`]; 0 without
    /// dispersion).
    pub fn disp_bytes(&self) -> f64 {
        let s = std::mem::size_of::<T>();
        match (self.fused(), &self.disp) {
            (Some((d, f)), _) => {
                let (rest, fused) = f.host.counts(&d.host);
                crate::cost::disp_bytes_fused(&rest, &fused, s)
            }
            (None, Some(d)) => crate::cost::disp_bytes(&d.host.counts(), s),
            (None, None) => 0.0,
        }
    }

    /// The dispersive correction before the dual update (nothing without dispersion; in
    /// the fused form, the rows the fused kernel does not take).
    pub fn disp_correct(&self) -> Result<Option<Event>> {
        let Some(d) = &self.disp else { return Ok(None) };
        let (n, h, row, len, goff) = match self.fused() {
            Some((_, f)) => (f.host.rows.len(), &f.h, &f.row, &f.len, &f.goff),
            None => (d.host.h.len(), &d.h, &d.row, &d.len, &d.goff),
        };
        if n == 0 {
            return Ok(None);
        }
        launch(
            &self.dev,
            &self.k.disp_correct,
            n,
            LOCAL,
            &[
                Arg::U32(n as u32),
                Arg::BufU32(h),
                Arg::BufU64(row),
                Arg::BufU32(len),
                Arg::BufU32(goff),
                Arg::Buf(&d.block),
                Arg::Buf(&d.g),
                Arg::Buf(&self.u),
            ],
        )
        .map(Some)
    }

    /// The pole step after the dual update and the source, one launch per dispersive
    /// material (nothing without dispersion; in the fused form, only the entries the fused
    /// kernel does not take, through `disp_poles_idx`).
    pub fn disp_poles(&self) -> Result<Vec<Event>> {
        let Some(d) = &self.disp else {
            return Ok(vec![]);
        };
        let hd = &d.host;
        let fused = self.fused().map(|x| x.1);
        let mut ev = Vec::new();
        for m in 0..hd.ptr.len() - 1 {
            let n = hd.ptr[m + 1] - hd.ptr[m];
            // (kernel, work-items, leading arguments)
            let (kernel, items, mut args) = match fused {
                None if n > 0 => (&self.k.disp_poles, n, vec![Arg::U32(n as u32)]),
                Some(f) => match &f.rest[m] {
                    Some(_) => {
                        let nl = f.host.rest[m].len();
                        let a = vec![Arg::U32(nl as u32), Arg::U32(n as u32)];
                        (&self.k.disp_poles_idx, nl, a)
                    }
                    None => continue,
                },
                None => continue,
            };
            args.extend([
                Arg::U32((hd.cptr[m + 1] - hd.cptr[m]) as u32),
                Arg::U32(hd.orders(m)),
                Arg::U32(hd.ptr[m] as u32),
                Arg::U32((5 * hd.cptr[m]) as u32),
                Arg::U64(hd.sptr[m] as u64),
            ]);
            if let Some(list) = fused.and_then(|f| f.rest[m].as_ref()) {
                args.push(Arg::BufU32(list));
            }
            args.extend([
                Arg::BufU32(&d.ent_h),
                Arg::BufU32(&d.ent_g),
                Arg::Buf(&d.coef),
                Arg::Buf(&d.s),
                Arg::Buf(&self.u),
                Arg::Buf(&d.g),
            ]);
            ev.push(launch(&self.dev, kernel, items, LOCAL, &args)?);
        }
        Ok(ev)
    }

    /// The vertex-major dual update with the pure vertices' dispersion fused in
    /// (`vertex_block_vf` on the fused slots, `vertex_block_v_from` on the others;
    /// [`DispVariant::Fused`]).
    pub(super) fn vertex_blocks_disp(
        &self,
        d: &DeviceDisp<T>,
        f: &DeviceFused,
    ) -> Result<Vec<Event>> {
        let tables = [
            Arg::BufU32(&f.slot_vertex),
            Arg::BufU32(&f.vptr),
            Arg::BufU64(&f.boff),
            Arg::BufU32(&f.vh),
            Arg::Buf(&self.block),
            Arg::Buf(&self.c),
            Arg::Buf(&self.u),
        ];
        let mut ev = Vec::new();
        if f.nfused < self.nfree {
            let mut args = vec![Arg::U32(f.nfused as u32), Arg::U32(self.nfree as u32)];
            args.extend(tables.iter().copied());
            let n = self.nfree - f.nfused;
            ev.push(launch(
                &self.dev,
                &self.k.vertex_block_v_from,
                n,
                LOCAL,
                &args,
            )?);
        }
        let mut args = vec![Arg::U32(f.nfused as u32)];
        args.extend(tables);
        args.extend([
            Arg::BufU32(&f.fm),
            Arg::BufU32(&f.fe),
            Arg::BufU32(&f.fg),
            Arg::BufU64(&f.mt),
            Arg::Buf(&d.coef),
            Arg::Buf(&d.block),
            Arg::Buf(&d.s),
            Arg::Buf(&d.g),
        ]);
        ev.push(launch(
            &self.dev,
            &self.k.vertex_block_vf,
            f.nfused,
            LOCAL,
            &args,
        )?);
        Ok(ev)
    }

    /// The pole states `(s, g)` read back (empty without dispersion).
    pub fn disp_state(&self) -> Result<(Vec<T>, Vec<T>)> {
        let Some(d) = &self.disp else {
            return Ok((vec![], vec![]));
        };
        Ok((
            self.dev.read(&d.s, d.host.n_state, "pole states")?,
            self.dev.read(&d.g, d.host.n_g, "pole changes")?,
        ))
    }
}
