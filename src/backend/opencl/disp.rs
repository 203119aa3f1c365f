//! Dispersion on the device (design note §13): before the dual update the correction
//! `U[h] -= Σ_j DB_j g_j` of the dispersive rows, after it and the source the pole step (each
//! pole of each entry a second-order section in transposed direct form II, coefficients from
//! the bilinear (Möbius) map of its susceptibility), and the fused form in which the
//! vertices inside one material take both inside the vertex-block update
//! (`vertex_block_vf`).
//!
//! [`Dispersion`] owns its buffers and kernels (`cl/dga/disp.cl`); the stepper hands it
//! the state it works on and says whether this step may use the fused form.

use super::kernels::Kernels;
use super::variant::DispVariant;
use crate::dga::FusedDisp;
use crate::dga::operators::DispOps;
use crate::error::{Error, Result};
use crate::ocl::{Arg, ClDevice, LOCAL, kernels, launch};
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

/// Dispersion on the device ([`crate::dga::operators::DispOps`]): the correction rows and
/// blocks, the pole entries, coefficients and states, the changes `g`; `host` keeps the
/// layout (and the coefficients) for the energy.
struct DeviceDisp<T> {
    host: DispOps<T>,
    h: Buffer<u32>,
    row: Buffer<u64>,
    len: Buffer<u32>,
    goff: Buffer<u32>,
    block: Buffer<T>,
    ent_h: Buffer<u32>,
    ent_g: Buffer<u32>,
    coef: Buffer<T>,
    s: Buffer<T>,
    g: Buffer<T>,
    /// The fused form (factored dual only; None when no vertex qualifies).
    fused: Option<DeviceFused>,
}

/// The fused dispersion on the device ([`crate::dga::FusedDisp`]): the vertex
/// block's slot tables (`slot_vertex`, `vptr`, `boff`, `vh` of [`ClStepper`]) with the fused
/// vertices renumbered first (their `nfused` slots go to `vertex_block_vf`, the others to
/// `vertex_block_v_from`); per renumbered fused vertex its material, first entry and first
/// `g` index; the material table; the correction rows left to `disp_correct` (as `h`, `row`,
/// `len`, `goff` of [`DeviceDisp`]) and per material the entries left to `disp_poles_idx`.
struct DeviceFused {
    host: FusedDisp,
    nfused: usize,
    slot_vertex: Buffer<u32>,
    vptr: Buffer<u32>,
    boff: Buffer<u64>,
    vh: Buffer<u32>,
    fm: Buffer<u32>,
    fe: Buffer<u32>,
    fg: Buffer<u32>,
    mt: Buffer<u64>,
    h: Buffer<u32>,
    row: Buffer<u64>,
    len: Buffer<u32>,
    goff: Buffer<u32>,
    rest: Vec<Option<Buffer<u32>>>,
}

/// The dispersion of a stepper: none until [`Dispersion::install`] is given the dispersive
/// operators of a Δt.
pub(super) struct Dispersion<T> {
    /// The form of the correction and pole step ([`DispVariant::Fused`] where the dual
    /// takes it).
    pub(super) variant: DispVariant,
    on: Option<DeviceDisp<T>>,
    k_correct: Kernel,
    k_poles: Kernel,
    k_poles_idx: Kernel,
    k_vf: Kernel,
    k_v_from: Kernel,
}

/// The vertex-block slot tables the fused form renumbers, and the half-edges it must leave
/// to the split kernels (those the source writes).
pub(super) struct FusedTables<'a> {
    pub(super) vptr: &'a [u32],
    pub(super) vh: &'a [u32],
    pub(super) off: &'a [usize],
    pub(super) skip: &'a [u32],
}

impl<T: Real> Dispersion<T> {
    /// No dispersion, with the kernels of the DGA program `k`.
    pub(super) fn new(k: &Kernels) -> Result<Self> {
        let [k_correct, k_poles, k_poles_idx, k_vf, k_v_from] = kernels(
            k.program(),
            [
                "disp_correct",
                "disp_poles",
                "disp_poles_idx",
                "vertex_block_vf",
                "vertex_block_v_from",
            ],
        )?;
        Ok(Dispersion {
            variant: DispVariant::Fused,
            on: None,
            k_correct,
            k_poles,
            k_poles_idx,
            k_vf,
            k_v_from,
        })
    }

    /// Whether dispersion is installed.
    pub(super) fn is_on(&self) -> bool {
        self.on.is_some()
    }

    /// The host layout and coefficients (None without dispersion).
    pub(super) fn host(&self) -> Option<&DispOps<T>> {
        self.on.as_ref().map(|d| &d.host)
    }

    /// Installs the dispersive operators `d` (None: no dispersion), zero pole states, and the
    /// fused form over `fused` where given (the factored dual) and some vertex qualifies.
    pub(super) fn install(
        &mut self,
        dev: &ClDevice,
        d: Option<DispOps<T>>,
        fused: Option<FusedTables>,
    ) -> Result<()> {
        self.on = None;
        let Some(d) = d else { return Ok(()) };
        let fused = match fused {
            Some(t) => {
                let f = d.fused(t.vptr, t.vh, t.skip);
                upload_fused(dev, &d, f, (t.vptr, t.vh, t.off))?
            }
            None => None,
        };
        self.on = Some(DeviceDisp {
            fused,
            h: dev.upload(&d.h, "dispersive rows")?,
            row: dev.upload(&d.row, "dispersive row offsets")?,
            len: dev.upload(&d.len, "dispersive row lengths")?,
            goff: dev.upload(&d.goff, "dispersive state offsets")?,
            block: dev.upload(&d.block, "dispersive couplings")?,
            ent_h: dev.upload(&d.ent_h, "pole entries")?,
            ent_g: dev.upload(&d.ent_g, "pole entry offsets")?,
            coef: dev.upload(&d.coef, "pole coefficients")?,
            s: dev.upload(&vec![T::zero(); d.n_state], "pole states")?,
            g: dev.upload(&vec![T::zero(); d.n_g.max(1)], "pole changes")?,
            host: d,
        });
        Ok(())
    }

    /// The fused form, when `allowed` (the stepper's dual and variants take it) and some
    /// vertex qualifies.
    fn fused(&self, allowed: bool) -> Option<(&DeviceDisp<T>, &DeviceFused)> {
        let d = self.on.as_ref()?;
        let f = d.fused.as_ref()?;
        allowed.then_some((d, f))
    }

    /// Whether this step runs the fused form (`allowed` as in [`Self::fused`]).
    pub(super) fn runs_fused(&self, allowed: bool) -> bool {
        self.fused(allowed).is_some()
    }

    /// The bytes the dispersion adds to a step (the byte models [`crate::cost::disp_bytes`]
    /// and [`crate::cost::disp_bytes_fused`]; 0 without dispersion).
    pub(super) fn bytes(&self, allowed: bool) -> f64 {
        let s = std::mem::size_of::<T>();
        match (self.fused(allowed), &self.on) {
            (Some((d, f)), _) => {
                let (rest, fused) = f.host.counts(&d.host);
                crate::cost::disp_bytes_fused(&rest, &fused, s)
            }
            (None, Some(d)) => crate::cost::disp_bytes(&d.host.counts(), s),
            (None, None) => 0.0,
        }
    }

    /// Replaces the pole states and changes (`aux`: `n_state` then `n_g` values).
    pub(super) fn set_state(&mut self, dev: &ClDevice, aux: &[f64]) -> Result<()> {
        let (ns, ng) = self.host().map_or((0, 0), |d| (d.n_state, d.n_g));
        if aux.len() != ns + ng {
            return Err(Error::config(
                "state",
                aux.len(),
                format!("this run has {} dispersive state values", ns + ng),
            ));
        }
        if let Some(d) = self.on.as_mut() {
            let to = |v: &[f64]| v.iter().map(|&x| T::of(x)).collect::<Vec<T>>();
            dev.write(&mut d.s, &to(&aux[..ns]), "pole states")?;
            if ng > 0 {
                dev.write(&mut d.g, &to(&aux[ns..]), "pole changes")?;
            }
        }
        Ok(())
    }

    /// The dispersive correction before the dual update (nothing without dispersion; in
    /// the fused form, the rows the fused kernel does not take).
    pub(super) fn correct(
        &self,
        dev: &ClDevice,
        fused: bool,
        u: &Buffer<T>,
    ) -> Result<Option<Event>> {
        let Some(d) = &self.on else { return Ok(None) };
        let (n, h, row, len, goff) = match self.fused(fused) {
            Some((_, f)) => (f.host.rows.len(), &f.h, &f.row, &f.len, &f.goff),
            None => (d.host.h.len(), &d.h, &d.row, &d.len, &d.goff),
        };
        if n == 0 {
            return Ok(None);
        }
        launch(
            dev,
            &self.k_correct,
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
                Arg::Buf(u),
            ],
        )
        .map(Some)
    }

    /// The pole step after the dual update and the source, one launch per dispersive
    /// material (nothing without dispersion; in the fused form, only the entries the fused
    /// kernel does not take, through `disp_poles_idx`).
    pub(super) fn poles(&self, dev: &ClDevice, fused: bool, u: &Buffer<T>) -> Result<Vec<Event>> {
        let Some(d) = &self.on else {
            return Ok(vec![]);
        };
        let hd = &d.host;
        let fused = self.fused(fused).map(|x| x.1);
        let mut ev = Vec::new();
        for m in 0..hd.ptr.len() - 1 {
            let n = hd.ptr[m + 1] - hd.ptr[m];
            // (kernel, work-items, leading arguments)
            let (kernel, items, mut args) = match fused {
                None if n > 0 => (&self.k_poles, n, vec![Arg::U32(n as u32)]),
                Some(f) => match &f.rest[m] {
                    Some(_) => {
                        let nl = f.host.rest[m].len();
                        let a = vec![Arg::U32(nl as u32), Arg::U32(n as u32)];
                        (&self.k_poles_idx, nl, a)
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
                Arg::Buf(u),
                Arg::Buf(&d.g),
            ]);
            ev.push(launch(dev, kernel, items, LOCAL, &args)?);
        }
        Ok(ev)
    }

    /// The vertex-major dual update with the pure vertices' dispersion fused in
    /// (`vertex_block_vf` on the fused slots, `vertex_block_v_from` on the others;
    /// [`DispVariant::Fused`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn vertex_blocks(
        &self,
        dev: &ClDevice,
        block: &Buffer<T>,
        c: &Buffer<T>,
        u: &Buffer<T>,
        nfree: usize,
    ) -> Result<Vec<Event>> {
        let Some((d, f)) = self.fused(true) else {
            return Ok(vec![]);
        };
        let tables = [
            Arg::BufU32(&f.slot_vertex),
            Arg::BufU32(&f.vptr),
            Arg::BufU64(&f.boff),
            Arg::BufU32(&f.vh),
            Arg::Buf(block),
            Arg::Buf(c),
            Arg::Buf(u),
        ];
        let mut ev = Vec::new();
        if f.nfused < nfree {
            let mut args = vec![Arg::U32(f.nfused as u32), Arg::U32(nfree as u32)];
            args.extend(tables.iter().copied());
            let n = nfree - f.nfused;
            ev.push(launch(dev, &self.k_v_from, n, LOCAL, &args)?);
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
        ev.push(launch(dev, &self.k_vf, f.nfused, LOCAL, &args)?);
        Ok(ev)
    }

    /// The pole states `(s, g)` read back (empty without dispersion).
    pub(super) fn state(&self, dev: &ClDevice) -> Result<(Vec<T>, Vec<T>)> {
        let Some(d) = &self.on else {
            return Ok((vec![], vec![]));
        };
        Ok((
            dev.read(&d.s, d.host.n_state, "pole states")?,
            dev.read(&d.g, d.host.n_g, "pole changes")?,
        ))
    }
}

/// The fused layout on the device (None when no vertex qualifies).
/// `slots`: the vertex block's `vptr`, `vh` and block offsets.
fn upload_fused<T: Real>(
    dev: &ClDevice,
    d: &DispOps<T>,
    f: FusedDisp,
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
