//! The dual update `U += D F` (design note §7–8), `D = Δt Meps⁻¹ C̃` (at lossy vertices
//! `Δt (Meps + Δt/2 Msig)⁻¹ C̃`, design note §12): factored, as the dual-face circulations
//! `c = C̃ F` (one value per edge) and then the vertex blocks `U_v += B_v c_v`, or as one CSR
//! product.
//!
//! [`Dual`] owns the circulation lists, the vertex blocks in their resident layout, the CSR
//! matrix where the stepper was built with it, the circulation scratch `c`, its variants
//! and its kernels (`cl/dga/{circulation, vertex_block, csr}.cl`); the stepper hands it
//! `F` and `U`.

use super::kernels::{CSR_LANES, Kernels};
use super::layout::{circulation_words, f_slot, upload_blocks};
use super::resident::DeviceCsr;
use super::slot_major::SlotMajor;
use super::variant::{BlockLayout, BlockVariant, CircVariant, CsrVariant};
use crate::dga::Dga;
use crate::dga::operators::{DualForm, build_csr};
use crate::error::{Error, Result};
use crate::ocl::{Arg, ClDevice, LOCAL, Lane, kernels, launch, launch_on};
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use rayon::prelude::*;

/// The vertex blocks of the dual update in their resident layout.
pub(super) struct Blocks<T> {
    pub(super) data: Buffer<T>,
    pub(super) len: usize,
    pub(super) layout: BlockLayout,
    /// Offsets of the full blocks (`Meps_v`'s layout) and of the packed ones
    /// ([`crate::dga::VertexBlocks::packed_offsets`]; empty until a packed layout is
    /// resident).
    pub(super) boff: Buffer<u64>,
    pub(super) poff: Buffer<u64>,
}

/// The dual operator on the device, its variants and kernels.
pub(super) struct Dual<T> {
    form: DualForm,
    pub(super) circ_variant: CircVariant,
    pub(super) block_variant: BlockVariant,
    pub(super) csr_variant: CsrVariant,
    /// Edges, half-edges, free half-edges, and the tet stride.
    ne: usize,
    nh: usize,
    pub(super) nfree: usize,
    tp: usize,
    /// The circulations `c = C̃ F`, one per edge (scratch of every step).
    pub(super) c: Buffer<T>,
    pub(super) circ_ptr: Buffer<u32>,
    circ: Buffer<u32>,
    /// Per vertex its first slot, the slots' half-edges, and each slot's vertex.
    pub(super) vptr: Buffer<u32>,
    pub(super) vh: Buffer<u32>,
    pub(super) slot_vertex: Buffer<u32>,
    pub(super) blocks: Blocks<T>,
    csr: Option<DeviceCsr<T>>,
    /// `[whole, subset]` of the plain and the paired circulation kernels.
    k_circ: [Kernel; 2],
    k_circ_pair: [Kernel; 2],
    /// `[whole, subset]` of the full (`vertex_block_v`) and packed (`vertex_block_s`) blocks.
    k_full: [Kernel; 2],
    k_tri: [Kernel; 2],
    k_csr: Kernel,
}

/// What [`Dual::new`] starts from: the blocks and the CSR matrix already on the device
/// (assembled there), or None to upload `dga`'s at unit Δt.
pub(super) struct DualStart<T> {
    pub(super) blocks: Option<(Buffer<T>, usize, Buffer<u64>)>,
    pub(super) csr: Option<DeviceCsr<T>>,
}

impl<T: Real> Dual<T> {
    pub(super) fn new(
        k: &Kernels,
        dev: &ClDevice,
        dga: &Dga,
        form: DualForm,
        circ_variant: CircVariant,
        block_variant: BlockVariant,
        start: DualStart<T>,
    ) -> Result<Self> {
        let tp = super::tet_stride(dga.n_tets);
        let layout = block_variant.layout();
        let (data, len, poff) = match start.blocks {
            Some((b, n, poff)) => (b, n, Some(poff)),
            None => upload_blocks(dev, &dga.meps, &dga.meps_inv.data, layout, T::of)?,
        };
        let csr = match start.csr {
            Some(c) => Some(c),
            None if form == DualForm::Csr => Some(upload_csr(dev, dga, tp)?),
            None => None,
        };
        let vptr: Vec<u32> = dga.meps.ptr.par_iter().map(|&x| x as u32).collect();
        let slot_vertex: Vec<u32> = (0..dga.meps.n_vertices())
            .into_par_iter()
            .flat_map_iter(|v| std::iter::repeat_n(v as u32, dga.meps.dim(v)))
            .collect();
        let boff: Vec<u64> = dga.meps.off.par_iter().map(|&x| x as u64).collect();
        let [c0, c1, p0, p1, v0, v1, s0, s1, k_csr] = kernels(
            k.program(),
            [
                "circulation",
                "circulation_idx",
                "circulation_pair",
                "circulation_pair_idx",
                "vertex_block_v",
                "vertex_block_v_idx",
                "vertex_block_s",
                "vertex_block_s_idx",
                "csr_vector",
            ],
        )?;
        Ok(Dual {
            form,
            circ_variant,
            block_variant,
            csr_variant: CsrVariant::Vector,
            ne: dga.n_edges,
            nh: 2 * dga.n_edges,
            nfree: dga.meps.h.len(),
            tp,
            c: dev.alloc(dga.n_edges, "edge circulations")?,
            circ_ptr: dev.upload(&dga.circ_ptr, "circulation pointers")?,
            circ: dev.upload(
                &circulation_words(dga, circ_variant)?,
                "circulation entries",
            )?,
            vptr: dev.upload(&vptr, "vertex pointers")?,
            vh: dev.upload(&dga.meps.h, "vertex half-edges")?,
            slot_vertex: dev.upload(&slot_vertex, "slot vertices")?,
            blocks: Blocks {
                data,
                len,
                layout,
                boff: dev.upload(&boff, "block offsets")?,
                poff: match poff {
                    Some(p) => p,
                    None => dev.upload::<u64>(&[], "packed block offsets")?,
                },
            },
            csr,
            k_circ: [c0, c1],
            k_circ_pair: [p0, p1],
            k_full: [v0, v1],
            k_tri: [s0, s1],
            k_csr,
        })
    }

    pub(super) fn form(&self) -> DualForm {
        self.form
    }

    /// Switches the form (the CSR form needs the matrix, built with the CSR form).
    pub(super) fn set_form(&mut self, d: DualForm) -> Result<()> {
        if d == DualForm::Csr && self.csr.is_none() {
            return Err(no_csr());
        }
        self.form = d;
        Ok(())
    }

    /// Nonzeros of the CSR matrix (0 without it).
    pub(super) fn csr_nnz(&self) -> usize {
        self.csr.as_ref().map_or(0, |c| c.3)
    }

    /// Whether the CSR matrix is resident.
    pub(super) fn has_csr(&self) -> bool {
        self.csr.is_some()
    }

    /// The CSR values and their count, to rewrite for a new Δt.
    pub(super) fn csr_values(&mut self) -> Option<(&mut Buffer<T>, usize)> {
        self.csr.as_mut().map(|c| (&mut c.2, c.3))
    }

    /// Re-uploads the circulation entries in `v`'s form.
    pub(super) fn set_circ_variant(
        &mut self,
        dev: &ClDevice,
        dga: &Dga,
        v: CircVariant,
    ) -> Result<()> {
        if v != self.circ_variant {
            self.circ = dev.upload(&circulation_words(dga, v)?, "circulation entries")?;
            self.circ_variant = v;
        }
        Ok(())
    }

    /// Replaces the blocks with `f(full)` (full blocks in `dga.meps`'s layout) in `layout`,
    /// and the packed offsets with that layout's.
    pub(super) fn put_blocks<U: Copy + Sync>(
        &mut self,
        dev: &ClDevice,
        dga: &Dga,
        layout: BlockLayout,
        full: &[U],
        f: impl Fn(U) -> T + Sync,
    ) -> Result<()> {
        let (b, n, off) = upload_blocks(dev, &dga.meps, full, layout, f)?;
        (self.blocks.data, self.blocks.len, self.blocks.layout) = (b, n, layout);
        if let Some(off) = off {
            self.blocks.poff = off;
        }
        Ok(())
    }

    /// Writes full blocks (`Meps_v`'s layout) `full` in place (the full layout resident).
    pub(super) fn write_full(&mut self, dev: &ClDevice, full: &[T]) -> Result<()> {
        if self.blocks.len != full.len() {
            self.blocks.data = dev.alloc(full.len(), "vertex blocks")?;
            self.blocks.len = full.len();
        }
        dev.write(&mut self.blocks.data, full, "vertex blocks")
    }

    /// Scales the blocks and the CSR values by `a` with the `scale` kernel.
    pub(super) fn scale(&self, dev: &ClDevice, scale: &Kernel, a: f64) -> Result<()> {
        super::layout::scale(dev, scale, &self.blocks.data, self.blocks.len, a)?;
        if let Some((_, _, v, nnz)) = &self.csr {
            super::layout::scale(dev, scale, v, *nnz, a)?;
        }
        Ok(())
    }

    /// `c = C̃ f` on every edge or on the edges `idx` (`(list, count)`), on `lane` after
    /// `wait`.
    pub(super) fn circulation(
        &self,
        dev: &ClDevice,
        f: &Buffer<T>,
        idx: Option<(&Buffer<u32>, usize)>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let paired = self.circ_variant == CircVariant::Paired;
        let n = idx.map_or(self.ne, |(_, n)| n);
        let ks = if paired {
            &self.k_circ_pair
        } else {
            &self.k_circ
        };
        let kernel = &ks[idx.is_some() as usize];
        // (n, [T], [idx], ptr, circ, F, C): the kernels' parameter order
        let args: Vec<Arg<T>> = [
            Some(Arg::U32(n as u32)),
            paired.then_some(Arg::U32(self.tp as u32)),
            idx.map(|(i, _)| Arg::BufU32(i)),
        ]
        .into_iter()
        .flatten()
        .chain([
            Arg::BufU32(&self.circ_ptr),
            Arg::BufU32(&self.circ),
            Arg::Buf(f),
            Arg::Buf(&self.c),
        ])
        .collect();
        launch_on(dev, lane, kernel, n, LOCAL, &args, wait)
    }

    /// The offsets of the resident block layout (full or packed).
    pub(super) fn block_offsets(&self) -> &Buffer<u64> {
        match self.blocks.layout {
            BlockLayout::Full => &self.blocks.boff,
            BlockLayout::Tri => &self.blocks.poff,
        }
    }

    /// The arguments the vertex-major block kernels share after the count: slots, vertex
    /// pointers, the blocks (`offsets`, `block`), circulations and the `U` they update.
    pub(super) fn block_args<'a>(
        &'a self,
        offsets: &'a Buffer<u64>,
        block: Arg<'a, T>,
        u: &'a Buffer<T>,
    ) -> [Arg<'a, T>; 7] {
        [
            Arg::BufU32(&self.slot_vertex),
            Arg::BufU32(&self.vptr),
            Arg::BufU64(offsets),
            Arg::BufU32(&self.vh),
            block,
            Arg::Buf(&self.c),
            Arg::Buf(u),
        ]
    }

    /// `u += B c` on every free slot or on the slots `idx`, in the resident layout.
    pub(super) fn vertex_blocks(
        &self,
        dev: &ClDevice,
        u: &Buffer<T>,
        idx: Option<(&Buffer<u32>, usize)>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let ks = match self.blocks.layout {
            BlockLayout::Full => &self.k_full,
            BlockLayout::Tri => &self.k_tri,
        };
        let tail = self.block_args(self.block_offsets(), Arg::Buf(&self.blocks.data), u);
        self.launch_blocks(dev, (&ks[0], &ks[1]), tail, idx, lane, wait)
    }

    /// `U += B c` with slot-major `U` (`vertex_block_s_sm` and its subset form), the blocks
    /// from `sm`'s f32 copy where it has one.
    pub(super) fn vertex_blocks_sm(
        &self,
        dev: &ClDevice,
        sm: &SlotMajor<T>,
        idx: Option<(&Buffer<u32>, usize)>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let b = sm
            .mixed
            .as_ref()
            .map_or(Arg::Buf(&self.blocks.data), |m| Arg::BufF32(&m.b));
        let tail = self.block_args(&self.blocks.poff, b, &sm.us);
        self.launch_blocks(dev, (&sm.block, &sm.block_idx), tail, idx, lane, wait)
    }

    fn launch_blocks<'a>(
        &'a self,
        dev: &ClDevice,
        ks: (&Kernel, &Kernel),
        tail: [Arg<'a, T>; 7],
        idx: Option<(&'a Buffer<u32>, usize)>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let (kernel, n, head) = match idx {
            None => (ks.0, self.nfree, vec![Arg::U32(self.nfree as u32)]),
            Some((i, n)) => (ks.1, n, vec![Arg::U32(n as u32), Arg::BufU32(i)]),
        };
        let args: Vec<Arg<T>> = head.into_iter().chain(tail).collect();
        launch_on(dev, lane, kernel, n, LOCAL, &args, wait)
    }

    /// `u += D f` with the CSR matrix (the vector kernel).
    pub(super) fn csr(&self, dev: &ClDevice, f: &Buffer<T>, u: &Buffer<T>) -> Result<Event> {
        let (ip, ix, dv, _) = self.csr.as_ref().ok_or_else(no_csr)?;
        match self.csr_variant {
            CsrVariant::Vector => launch(
                dev,
                &self.k_csr,
                self.nh * CSR_LANES,
                LOCAL,
                &[
                    Arg::U32(self.nh as u32),
                    Arg::BufU32(ip),
                    Arg::BufU32(ix),
                    Arg::Buf(dv),
                    Arg::Buf(f),
                    Arg::Buf(u),
                    Arg::Local(LOCAL * std::mem::size_of::<T>()),
                ],
            ),
        }
    }
}

fn no_csr() -> Error {
    Error::config(
        "dual",
        "csr",
        "the stepper was built without the CSR matrix",
    )
}

/// `dga`'s CSR matrix at unit Δt on the device, columns in the device's F slots.
fn upload_csr<T: Real>(dev: &ClDevice, dga: &Dga, tp: usize) -> Result<DeviceCsr<T>> {
    let m = build_csr(dga, 1.0);
    if m.nnz() >= u32::MAX as usize {
        return Err(Error::DeviceMemory(format!(
            "the CSR matrix has {} nonzeros, above the 32-bit index limit; use --dual factored",
            m.nnz()
        )));
    }
    let ip: Vec<u32> = m.indptr().raw_storage().iter().map(|&x| x as u32).collect();
    let ix: Vec<u32> = m.indices().iter().map(|&x| f_slot(x as u32, tp)).collect();
    let dv: Vec<T> = m.data().iter().map(|&x| T::of(x)).collect();
    let nnz = dv.len();
    Ok((
        dev.upload(&ip, "CSR row pointers")?,
        dev.upload(&ix, "CSR columns")?,
        dev.upload(&dv, "CSR values")?,
        nnz,
    ))
}
