//! The primal update `F -= P U` (design note §7–8): per tet, the 4 face values of `F` lose
//! `P_n` times the tet's 6 full-edge sums `U_(e,a) + U_(e,b)`, with `P_n = Δt Mmu_n⁻¹ C_n`
//! (`Δt/(1 + b_n) Mmu_n⁻¹ C_n` on magnetically lossy tets, design note §12).
//!
//! [`Primal`] owns the operator in the layout of its [`PrimalVariant`] (columns of the tet
//! stride), the edge table, and the kernels `primal_tet`, `primal_sym` and their index-subset
//! forms (`cl/dga/primal.cl`); the stepper hands it `U` and `F`.

use super::kernels::Kernels;
use super::layout::{upload_columns, upload_primal};
use super::slot_major::SlotMajor;
use super::variant::PrimalVariant;
use crate::dga::Dga;
use crate::dga::stretch::MagOps;
use crate::error::Result;
use crate::ocl::{Arg, ClDevice, LOCAL, Lane, kernels, launch_on};
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

/// The primal operator on the device and its kernels.
pub(super) struct Primal<T> {
    variant: PrimalVariant,
    /// The operator, `variant.per_tet()` values per tet, column-major across tets.
    p: Buffer<T>,
    /// Edge ids with the edge's orientation in the tet in bit 31 (6 columns); edge 0 for
    /// the padding tets.
    pe: Buffer<u32>,
    /// The column length ([`super::tet_stride`]).
    tp: usize,
    /// `[whole, subset]` kernels of each variant.
    k_tet: [Kernel; 2],
    k_sym: [Kernel; 2],
}

impl<T: Real> Primal<T> {
    /// The edge table of `dga` and the operator `p` (in `variant`'s layout: already on the
    /// device, e.g. assembled there, or None to upload `dga`'s at unit Δt).
    pub(super) fn new(
        k: &Kernels,
        dev: &ClDevice,
        dga: &Dga,
        variant: PrimalVariant,
        p: Option<Buffer<T>>,
    ) -> Result<Self> {
        let t = dga.n_tets;
        let pe = upload_columns(dev, t, 6, "primal edge table", 0, |l, n| {
            dga.tet_edges[n][l] | (((dga.tet_orient[n] >> l) & 1) as u32) << 31
        })?;
        let p = match p {
            Some(p) => p,
            None => upload_primal(dev, dga, variant, &|_| 1.0, None)?,
        };
        let [tet, tet_idx, sym, sym_idx] = kernels(
            k.program(),
            [
                "primal_tet",
                "primal_tet_idx",
                "primal_sym",
                "primal_sym_idx",
            ],
        )?;
        Ok(Primal {
            variant,
            p,
            pe,
            tp: super::tet_stride(t),
            k_tet: [tet, tet_idx],
            k_sym: [sym, sym_idx],
        })
    }

    pub(super) fn variant(&self) -> PrimalVariant {
        self.variant
    }

    /// Switches to a variant of the same layout (`per_tet`).
    pub(super) fn set_variant(&mut self, v: PrimalVariant) {
        debug_assert_eq!(v.per_tet(), self.variant.per_tet());
        self.variant = v;
    }

    /// Records `v` as the variant before [`Self::install`]-ing its layout (the magnetic
    /// loss's installation reads the variant).
    pub(super) fn set_variant_layout(&mut self, v: PrimalVariant) {
        self.variant = v;
    }

    /// Values per tet of the resident layout.
    pub(super) fn per_tet(&self) -> usize {
        self.variant.per_tet()
    }

    /// The operator and the edge table (for the bench's forms and the mixed copies).
    pub(super) fn buffers(&self) -> (&Buffer<T>, &Buffer<u32>) {
        (&self.p, &self.pe)
    }

    /// The operator as an argument: the resident one, or an f32 copy of it (`mixed`).
    pub(super) fn op_arg<'a>(&'a self, mixed: Option<&'a Buffer<f32>>) -> Arg<'a, T> {
        mixed.map_or(Arg::Buf(&self.p), Arg::BufF32)
    }

    /// Replaces the operator with `dga`'s in `variant`'s layout, tet `n` scaled by
    /// `scale(n)` (the Δt, and the magnetic loss's `1/(1 + b_n)`), and the layer tets of
    /// `pml` (with its Δt) at `Δt Ã_n⁻¹ C_n`.
    pub(super) fn install(
        &mut self,
        dev: &ClDevice,
        dga: &Dga,
        variant: PrimalVariant,
        scale: &(dyn Fn(usize) -> f64 + Sync),
        pml: Option<(&MagOps<T>, f64)>,
    ) -> Result<()> {
        self.p = upload_primal(dev, dga, variant, scale, pml)?;
        self.variant = variant;
        Ok(())
    }

    /// Scales the operator by `a` (a new Δt over the old) with the `scale` kernel.
    pub(super) fn scale(&self, dev: &ClDevice, scale: &Kernel, a: f64) -> Result<()> {
        super::layout::scale(dev, scale, &self.p, self.per_tet() * self.tp, a)
    }

    /// `f -= P u` on every tet, or on the tets `idx` (`(list, count)`), on `lane` after
    /// `wait`.
    pub(super) fn launch(
        &self,
        dev: &ClDevice,
        u: &Buffer<T>,
        f: &Buffer<T>,
        idx: Option<(&Buffer<u32>, usize)>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let [whole, part] = match self.variant {
            PrimalVariant::Tet => &self.k_tet,
            PrimalVariant::Sym => &self.k_sym,
        };
        let t = Arg::U32(self.tp as u32);
        let tail = [
            Arg::Buf(&self.p),
            Arg::BufU32(&self.pe),
            Arg::Buf(u),
            Arg::Buf(f),
        ];
        let (kernel, n, head) = match idx {
            None => (whole, self.tp, vec![t]),
            Some((i, n)) => (part, n, vec![t, Arg::U32(n as u32), Arg::BufU32(i)]),
        };
        let args: Vec<Arg<T>> = head.into_iter().chain(tail).collect();
        launch_on(dev, lane, kernel, n, LOCAL, &args, wait)
    }

    /// `F -= P U` with slot-major `U` (`primal_sym_sm`, `primal_sym_sm_idx` on the tets
    /// `idx`), the operator from `sm`'s f32 copy where it has one.
    pub(super) fn launch_sm(
        &self,
        dev: &ClDevice,
        sm: &SlotMajor<T>,
        f: &Buffer<T>,
        idx: Option<(&Buffer<u32>, usize)>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let t = Arg::U32(self.tp as u32);
        let tail = [
            self.op_arg(sm.mixed.as_ref().map(|m| &m.p)),
            Arg::BufU32(&self.pe),
            Arg::BufU32(&sm.es),
            Arg::Buf(&sm.us),
            Arg::Buf(f),
        ];
        let (kernel, n, head) = match idx {
            None => (&sm.primal, self.tp, vec![t]),
            Some((i, n)) => (
                &sm.primal_idx,
                n,
                vec![t, Arg::U32(n as u32), Arg::BufU32(i)],
            ),
        };
        let args: Vec<Arg<T>> = head.into_iter().chain(tail).collect();
        launch_on(dev, lane, kernel, n, LOCAL, &args, wait)
    }
}
