//! The OpenCL backend of the DGA: the whole leapfrog on any OpenCL device (GPU of any
//! vendor, or PoCL on a CPU), tested against [`super::cpu`]. Built on the runtime layer
//! [`crate::ocl`] (devices, buffers, builds, launches), which holds every `unsafe` block.
//!
//! Kernels are in `cl/common.cl` and `cl/dga/*.cl` (one file per operator), built as one
//! program with `-D REAL=double|float` ([`kernels`]). Double
//! precision is only built for devices reporting `cl_khr_fp64`, and the kernels enable that
//! pragma only where the compiler defines it.
//!
//! Device layouts: `U[2e + s]` as on the host, or slot-major ([`ULayout::SlotMajor`]: the
//! free half-edges' values in the factored dual's slot order, so the vertex-block update
//! reads and writes them coalesced; the main job's layout where it applies, set by
//! [`ClStepper::set_u_layout`]; the state is returned in the host layout either way);
//! `F[k*TP + n]` (structure of arrays, host slot `4n + k`), so the per-tet primal kernel
//! reads and writes coalesced, with `TP` ([`tet_stride`]) the tet count rounded up to a
//! multiple of 64 so that every column of F and of the per-tet operators and tables starts
//! on a 256-byte boundary (the padding tets carry zero operators and F); the dual-face
//! circulation lists paired ([`CircVariant::Paired`]: one word `(n << 4) | (fp << 2) | fm`
//! for a tet's two entries `+F(n, fp) - F(n, fm)`, half the index bytes of one word per
//! entry, the same sums). Index tables are remapped once on upload. Inside the time loop
//! nothing crosses the bus but the buffered probe samples, read every [`SAMPLE_CHUNK`]
//! steps: the source waveform is evaluated in the kernel.
//!
//! One file per concern: [`variant`] (the kernel forms), `kernels` (the program and its
//! options), `layout` (the tet stride, F slots and uploads), `resident` (operators
//! assembled on the device), the operators `primal`, `dual`, `loss`, `disp`, the storage
//! `slot_major`, the run's `sampling` (source and probes), `energy` (the energy and the
//! power iteration), `subset` (a partitioned rank's launches), `forms` (bench-only forms)
//! and `stepper` (the [`Stepper`] trait, running transforms).

mod dft;
mod disp;
mod dual;
mod energy;
mod excite;
mod forms;
mod install;
mod kernels;
mod layout;
mod loss;
mod primal;
mod resident;
mod sampling;
mod slot_major;
mod stepper;
mod subset;
pub mod variant;

pub use crate::ocl::{
    Arg, BuildLog, ClDevice, DeviceInfo, FILL_SOURCE, LOCAL, Lane, Pinned, ZERO_BY_WRITE_MAX,
    cl_std_option, event_seconds, launch, launch_on, list_devices, select_device,
};
pub use energy::{Field, NoHalo, PowerHalo};
pub use forms::{MixedOperators, PairCirculation, SellCirculation};
pub use kernels::{CSR_LANES, Kernels, PROGRAM, SOURCE};
pub use layout::{TET_ALIGN, csr_nnz_estimate, tet_stride};
pub use resident::{DeviceCsr, ResidentMasses, ResidentOperators};
pub use sampling::{DeviceSampling, SAMPLE_CHUNK, advance_sampled};
pub use slot_major::SlotMajor;
pub use subset::Subset;
pub use variant::{
    BlockVariant, CircVariant, CsrVariant, DispVariant, PrimalVariant, ULayout, Variants,
};

use super::Stepper;
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::{DualForm, Operators, build_csr};
use crate::ocl::cl_err;
use crate::problem::Waveform;
use crate::util::{C64, Rng};
use crate::{Error, Real, Result};
use dft::Dft;
use disp::*;
use energy::*;
use excite::{ProbeSet, SourceTerm};
use layout::*;
use loss::*;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use rayon::prelude::*;
use slot_major::*;
use std::sync::Arc;
use variant::BlockLayout;

/// Device buffers of the operators and the state.
pub struct ClStepper<T: Real> {
    dev: Arc<ClDevice>,
    k: Kernels,
    dga: Arc<Dga>,
    dual: DualForm,
    variants: Variants,
    t: usize,
    /// The column length of the per-tet arrays (F, `p`, `pe`, slot tables): [`tet_stride`].
    tp: usize,
    ne: usize,
    nh: usize,
    /// Current time step (metres of light travel); 1 until [`ClStepper::set_time_step`].
    dt: f64,
    /// The primal operator in the layout of `variants.primal` (`p_per_tet` values per tet).
    p: Buffer<T>,
    p_per_tet: usize,
    pe: Buffer<u32>,
    u: Buffer<T>,
    f: Buffer<T>,
    c: Buffer<T>,
    circ_ptr: Buffer<u32>,
    circ: Buffer<u32>,
    vptr: Buffer<u32>,
    vh: Buffer<u32>,
    hvert: Buffer<u32>,
    hrow: Buffer<u64>,
    slot_vertex: Buffer<u32>,
    boff: Buffer<u64>,
    /// Offsets of the packed blocks ([`crate::dga::VertexBlocks::packed_offsets`]).
    poff: Buffer<u64>,
    nfree: usize,
    /// The vertex blocks in `block_layout` (`block_len` values).
    block: Buffer<T>,
    block_len: usize,
    block_layout: BlockLayout,
    csr: Option<DeviceCsr<T>>,
    /// The source pattern and waveform.
    src: SourceTerm<T>,
    /// The probes and their sample buffer.
    probes: ProbeSet<T>,
    /// The losses (none until [`ClStepper::set_time_step`] installs them for a conducting
    /// or magnetically lossy `Dga`).
    losses: Losses<T>,
    /// Running Fourier transforms of U and F ([`Stepper::dft_start`]).
    dft: Dft<T>,
    /// Dispersion, installed by [`ClStepper::set_time_step`] for a dispersive `Dga`.
    disp: Dispersion<T>,
    /// The masses and scratch of the energy on the device ([`DeviceEnergy`]), built at the
    /// first [`Stepper::energy`]; `Err` once their allocation failed (the energy is then
    /// computed on the host).
    energy: Option<std::result::Result<DeviceEnergy<T>, ()>>,
    /// The masses assembled on this device, where the host's `Dga` has none
    /// ([`ClStepper::with_resident`]): the energy takes its two at its first use.
    resident_masses: Option<ResidentMasses<T>>,
    /// The source (its current, for a pattern with the run's blocks at lossy or
    /// dispersive vertices).
    source: Option<Source>,
    /// Slot-major `U` while [`ULayout::SlotMajor`] is the layout: then `US` holds the free
    /// half-edges' values and `u` only the others (zero), its free entries stale until
    /// [`ClStepper::sync_u`].
    slots: Option<SlotState<T>>,
    /// Whether every half-edge that is not free holds zero in `U` (as in any physical state:
    /// the kernels never write there), as set by [`ClStepper::zero_state`] and
    /// [`Stepper::set_state`]; slot-major `U` stores no such values.
    nonfree_zero: bool,
    /// A partitioned rank's ghost half-edges ([`ClStepper::set_ghost_halves`]): slots of
    /// their own in slot-major `U`, after the zero slot.
    ghosts: Option<Ghosts>,
}

impl<T: Real> ClStepper<T> {
    /// Uploads the unit-Δt operators (Δt = 1; call [`Self::set_time_step`] before stepping),
    /// the unit source pattern (built with Δt = 1) and the probes.
    pub fn new(
        dev: Arc<ClDevice>,
        dga: Arc<Dga>,
        dual: DualForm,
        source: Option<&Source>,
        probes: &[Probe],
    ) -> Result<Self> {
        Self::build(dev, dga, dual, source, probes, None)
    }

    /// [`ClStepper::new`] over operators assembled on this device and left there
    /// (`backend::device_assembly::resident`): nothing of the operators is uploaded, and
    /// `dga` needs only the layouts (its masses may be empty,
    /// [`ResidentOperators::layout_only`]). The default layouts only
    /// (`primal_sym`, `vertex_block_s`, factored dual) for a lossless, non-dispersive mesh;
    /// anything else is an error naming what needs the host's operators. Operators that
    /// carry the CSR matrix (`device_assembly::resident_csr`) give a stepper on the CSR
    /// dual, which can switch to the factored one ([`Self::set_dual`]).
    pub fn with_resident(
        dev: Arc<ClDevice>,
        dga: Arc<Dga>,
        ops: ResidentOperators<T>,
        source: Option<&Source>,
        probes: &[Probe],
    ) -> Result<Self> {
        let host_only = [
            (dga.msig.is_some(), "conducting media"),
            (dga.mag.is_some(), "magnetic loss"),
            (dga.disp.is_some(), "dispersive media"),
        ];
        if let Some((_, what)) = host_only.iter().find(|x| x.0) {
            return Err(Error::config(
                "assembly",
                "device (resident)",
                format!("{what} need the operators assembled on the host"),
            ));
        }
        if ops.n_tets != dga.n_tets || ops.layout.ptr != dga.meps.ptr || ops.layout.h != dga.meps.h
        {
            return Err(Error::config(
                "assembly",
                "device (resident)",
                format!(
                    "the resident operators ({} tets, {} block slots) are not those of this mesh ({} tets, {} block slots)",
                    ops.n_tets,
                    ops.layout.h.len(),
                    dga.n_tets,
                    dga.meps.h.len()
                ),
            ));
        }
        let dual = if ops.csr.is_some() {
            DualForm::Csr
        } else {
            DualForm::Factored
        };
        Self::build(dev, dga, dual, source, probes, Some(ops))
    }

    fn build(
        dev: Arc<ClDevice>,
        dga: Arc<Dga>,
        dual: DualForm,
        source: Option<&Source>,
        probes: &[Probe],
        resident: Option<ResidentOperators<T>>,
    ) -> Result<Self> {
        check_device_memory::<T>(&dev, &dga, dual)?;
        let k = Kernels::build::<T>(&dev)?;
        let t = dga.n_tets;
        let tp = tet_stride(t);
        let ne = dga.n_edges;
        let nh = 2 * ne;
        if ne > EDGE_MASK as usize {
            return Err(Error::DeviceMemory(format!(
                "the mesh has {ne} edges, above the 31-bit edge index of the primal kernels"
            )));
        }
        let variants = Variants::for_dga(&dga);
        let block_layout = variants.block.layout();
        // Primal operator column-major across tets (unit Δt), converted chunk by chunk, and
        // the vertex blocks; or those already on the device.
        let (resident, resident_csr, resident_masses) = match resident {
            Some(mut r) => {
                let c = r.csr.take();
                let m = r.masses.take();
                (Some(r), c, m)
            }
            None => (None, None, None),
        };
        let (p, (block, block_len, poff)) = match resident {
            Some(r) => {
                debug_assert!(
                    variants.primal == PrimalVariant::Sym && block_layout == BlockLayout::Tri
                );
                let len = r.block_len();
                let poff = dev.upload(&r.poff, "packed block offsets")?;
                (r.primal, (r.blocks, len, Some(poff)))
            }
            None => (
                upload_primal(&dev, &dga, variants.primal, &|_| 1.0)?,
                upload_blocks(&dev, &dga.meps, &dga.meps_inv.data, block_layout, T::of)?,
            ),
        };
        // edge ids with the edge's orientation in the tet in bit 31 (primal_sym); edge 0
        // for the padding tets
        let pe = upload_columns(&dev, t, 6, "primal edge table", 0, |l, n| {
            dga.tet_edges[n][l] | (((dga.tet_orient[n] >> l) & 1) as u32) << 31
        })?;
        let circ = dev.upload(
            &circulation_words(&dga, variants.circ)?,
            "circulation entries",
        )?;
        let (hvert, hrow) = dga.half_edge_rows();
        let vptr: Vec<u32> = dga.meps.ptr.par_iter().map(|&x| x as u32).collect();
        let slot_vertex: Vec<u32> = (0..dga.meps.n_vertices())
            .into_par_iter()
            .flat_map_iter(|v| std::iter::repeat_n(v as u32, dga.meps.dim(v)))
            .collect();
        let boff: Vec<u64> = dga.meps.off.par_iter().map(|&x| x as u64).collect();
        let csr = if resident_csr.is_some() {
            resident_csr
        } else if dual == DualForm::Csr {
            let m = build_csr(&dga, 1.0);
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
            Some((
                dev.upload(&ip, "CSR row pointers")?,
                dev.upload(&ix, "CSR columns")?,
                dev.upload(&dv, "CSR values")?,
                nnz,
            ))
        } else {
            None
        };
        let mut s = ClStepper {
            p,
            p_per_tet: variants.primal.per_tet(),
            pe,
            u: dev.alloc(nh, "U")?,
            f: dev.alloc(4 * tp, "F")?,
            c: dev.alloc(ne, "edge circulations")?,
            circ_ptr: dev.upload(&dga.circ_ptr, "circulation pointers")?,
            circ,
            vptr: dev.upload(&vptr, "vertex pointers")?,
            vh: dev.upload(&dga.meps.h, "vertex half-edges")?,
            hvert: dev.upload(&hvert, "half-edge vertices")?,
            hrow: dev.upload(&hrow, "half-edge rows")?,
            slot_vertex: dev.upload(&slot_vertex, "slot vertices")?,
            boff: dev.upload(&boff, "block offsets")?,
            poff: match poff {
                Some(p) => p,
                None => dev.upload::<u64>(&[], "packed block offsets")?,
            },
            nfree: dga.meps.h.len(),
            block_len,
            block,
            block_layout,
            csr,
            src: SourceTerm::new(&k, &dev, source)?,
            probes: ProbeSet::new(&k, &dev, probes)?,
            losses: Losses::new(&k)?,
            dft: Dft::new(&k)?,
            disp: Dispersion::new(&k)?,
            energy: None,
            resident_masses,
            source: source.cloned(),
            slots: None,
            nonfree_zero: true,
            ghosts: None,
            k,
            dev,
            dga,
            dual,
            variants,
            t,
            tp,
            ne,
            nh,
            dt: 1.0,
        };
        s.zero_state()?;
        Ok(s)
    }

    /// The kernel variants launched.
    pub fn variants(&self) -> Variants {
        self.variants
    }

    /// Chooses the kernel variants (a CSR variant needs the stepper built with the CSR
    /// dual). A primal or block variant with another storage layout replaces the operator
    /// on the device, built on the host for the current Δt (only one layout is resident).
    pub fn set_variants(&mut self, v: Variants) -> Result<()> {
        let old = self.variants;
        let relayout =
            v.primal.per_tet() != old.primal.per_tet() || v.block.layout() != self.block_layout;
        if relayout && self.t > 0 && self.dga.mmu_inv.is_empty() {
            return Err(Error::config(
                "variant",
                format!("{} / {}", v.primal.name(), v.block.name()),
                "the operators are resident on the device (device assembly) in the default layouts only; another layout needs the host's operators",
            ));
        }
        if v.circ != old.circ {
            self.circ = self.dev.upload(
                &circulation_words(&self.dga, v.circ)?,
                "circulation entries",
            )?;
        }
        self.variants = v;
        if v.primal.per_tet() != old.primal.per_tet() {
            self.p_per_tet = v.primal.per_tet();
            match self.dga.mag.clone() {
                Some(_) => self.install_mag(self.dt)?,
                None => {
                    let dt = self.dt;
                    self.p = upload_primal(&self.dev, &self.dga, v.primal, &|_| dt)?;
                }
            }
        }
        if v.block.layout() != self.block_layout {
            self.block_layout = v.block.layout();
            if self.dga.msig.is_some() || self.dga.disp.is_some() {
                self.install_losses(self.dt)?;
            } else {
                let (dga, dt) = (self.dga.clone(), self.dt);
                self.put_blocks(&dga.meps_inv.data, |x| T::of(dt * x))?;
            }
        }
        self.keep_layout_in_scope()
    }

    /// The dual form of the time step.
    pub fn dual(&self) -> DualForm {
        self.dual
    }

    /// Switches the dual form (the CSR form needs the stepper built with the CSR dual).
    pub fn set_dual(&mut self, d: DualForm) -> Result<()> {
        if d == DualForm::Csr && self.csr.is_none() {
            return Err(Error::config(
                "dual",
                "csr",
                "the stepper was built without the CSR matrix",
            ));
        }
        self.dual = d;
        self.keep_layout_in_scope()
    }

    /// Nonzeros of the device CSR matrix (0 without it).
    pub fn csr_nnz(&self) -> usize {
        self.csr.as_ref().map(|c| c.3).unwrap_or(0)
    }

    /// The device.
    pub fn device(&self) -> &Arc<ClDevice> {
        &self.dev
    }

    /// The compiled kernels (for the bench's bandwidth probes).
    pub fn kernels(&self) -> &Kernels {
        &self.k
    }

    pub fn zero_state(&mut self) -> Result<()> {
        self.dev.fill_zero(&mut self.u, self.nh)?;
        self.nonfree_zero = true;
        if let Some(st) = self.slots.as_mut() {
            self.dev.fill_zero(&mut st.sm.us, self.nfree + 1)?;
        }
        self.dev.fill_zero(&mut self.f, 4 * self.tp)?;
        self.dev.fill_zero(&mut self.c, self.ne)
    }

    fn scale_buf(&self, b: &Buffer<T>, n: usize, a: f64) -> Result<()> {
        launch(
            &self.dev,
            &self.k.scale,
            n,
            LOCAL,
            &[Arg::U64(n as u64), Arg::Buf(b), Arg::Real(T::of(a))],
        )?;
        Ok(())
    }

    /// Rescales the operators (and source pattern) from the current Δt to `dt`, and sets the
    /// source waveform. With conducting tets the dual blocks depend on Δt nonlinearly
    /// (`Δt (Meps + Δt/2 Msig)⁻¹` at lossy vertices): they, the CSR values and the loss
    /// step's `B̂` blocks are recomputed on the host for `dt` and uploaded, with the values
    /// of [`crate::dga::operators::Operators::new`] (the same as the CPU backend's).
    pub fn set_time_step(&mut self, dt: f64, wave: Option<Waveform>) -> Result<()> {
        let a = dt / self.dt;
        if self.dga.mag.is_some() {
            self.install_mag(dt)?;
        } else {
            self.scale_buf(&self.p, self.p_per_tet * self.tp, a)?;
        }
        if self.src.n > 0 {
            self.scale_buf(&self.src.g, self.src.n, a)?;
        }
        if self.dga.msig.is_some() || self.dga.disp.is_some() {
            // after the source's scaling: it may replace the pattern for this dt
            self.install_losses(dt)?;
        } else {
            self.scale_buf(&self.block, self.block_len, a)?;
            if let Some((_, _, v, nnz)) = &self.csr {
                self.scale_buf(v, *nnz, a)?;
            }
        }
        self.dev.finish()?;
        self.dt = dt;
        self.src.wave = wave;
        Ok(())
    }

    /// Replaces the device blocks with `f(full)` (full blocks in `dga.meps`'s layout) in the
    /// resident layout, and the packed offsets with that layout's.
    fn put_blocks<U: Copy + Sync>(&mut self, full: &[U], f: impl Fn(U) -> T + Sync) -> Result<()> {
        let (b, n, off) = upload_blocks(&self.dev, &self.dga.meps, full, self.block_layout, f)?;
        (self.block, self.block_len) = (b, n);
        if let Some(off) = off {
            self.poff = off;
        }
        Ok(())
    }

    /// One leapfrog step number `k` (source at `(k + 1/2) Δt`).
    pub fn step(&self, k: usize) -> Result<()> {
        self.step_events(k).map(drop)
    }

    /// [`Self::step`], returning the events of its kernels (the bench times them).
    pub fn step_events(&self, k: usize) -> Result<Vec<Event>> {
        // (the magnetic loss's event first: the bench times from the first start)
        let mut ev: Vec<Event> = self.mag_loss()?.into_iter().collect();
        ev.push(self.primal_in_layout()?);
        ev.extend(self.loss_update()?);
        ev.extend(self.disp_correct()?);
        if self.disp.runs_fused(self.fused_allowed()) {
            ev.push(self.circulation()?);
            let (nfree, dev) = (self.nfree, &self.dev);
            ev.extend(
                self.disp
                    .vertex_blocks(dev, &self.block, &self.c, &self.u, nfree)?,
            );
        } else {
            ev.extend(self.dual_update()?);
        }
        let (idx, u) = match &self.slots {
            Some(st) => (&st.src_idx, &st.sm.us),
            None => (&self.src.idx, &self.u),
        };
        ev.extend(self.source_into(idx, &self.src.g, self.src.n, u, k, Lane::Main, &[])?);
        ev.extend(self.disp_poles()?);
        Ok(ev)
    }
}
