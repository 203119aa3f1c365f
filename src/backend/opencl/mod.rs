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
mod dg;
mod disp;
mod dual;
mod energy;
mod excite;
mod forms;
mod install;
mod kernels;
mod layout;
mod loss;
mod pml;
mod primal;
mod resident;
mod sampling;
mod sell;
mod slot_major;
mod step;
mod stepper;
mod subset;
pub(crate) mod variant;

pub use crate::ocl::{
    Arg, BuildLog, ClDevice, DeviceInfo, FILL_SOURCE, LOCAL, Lane, Pinned, ZERO_BY_WRITE_MAX,
    cl_std_option, event_seconds, kernels, launch, launch_on, list_devices, select_device,
};
pub use dg::{DgClStepper, DgUpdate, PROGRAM as DG_PROGRAM, SOURCE as DG_SOURCE};
pub use energy::{Field, NoHalo, PowerHalo};
pub use forms::{MixedOperators, PairCirculation};
pub use kernels::{CSR_LANES, Kernels, PROBE_PROGRAM, PROBE_SOURCE, PROGRAM, SOURCE, real_options};
pub use layout::{TET_ALIGN, csr_nnz_estimate, tet_stride};
pub use resident::{DeviceCsr, ResidentMasses, ResidentOperators};
pub use sampling::{DeviceSampling, SAMPLE_CHUNK, advance_sampled};
pub use sell::SellCirculation;
pub use slot_major::SlotMajor;
pub use subset::Subset;
pub use variant::{
    BlockVariant, CircVariant, CsrVariant, DispVariant, PrimalVariant, ULayout, Variants,
};

use super::Stepper;
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::{DualForm, Operators};
use crate::error::{Error, Result};
use crate::ocl::cl_err;
use crate::problem::Waveform;
use crate::real::Real;
use crate::util::{C64, Rng};
use dft::Dft;
use disp::*;
use dual::{Dual, DualStart};
use energy::*;
use excite::{ProbeSet, SourceTerm};
use layout::*;
use loss::*;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use pml::MagPml;
use primal::Primal;
use rayon::prelude::*;
use slot_major::*;
use std::sync::Arc;
use variant::BlockLayout;

/// An OpenCL leapfrog: the state `U`, `F` and the operator components that act on it.
pub struct ClStepper<T: Real> {
    dev: Arc<ClDevice>,
    k: Kernels,
    dga: Arc<Dga>,
    t: usize,
    /// The column length of the per-tet arrays (F, the primal operator, slot tables):
    /// [`tet_stride`].
    tp: usize,
    ne: usize,
    nh: usize,
    /// Free half-edges (the dual's slots).
    nfree: usize,
    /// Current time step (metres of light travel); 1 until [`ClStepper::set_time_step`].
    dt: f64,
    u: Buffer<T>,
    f: Buffer<T>,
    /// `F -= P U` ([`Primal`]).
    primal: Primal<T>,
    /// `U += D F` ([`Dual`]).
    dual: Dual<T>,
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
    /// The magnetic side of perfectly matched layers, installed by
    /// [`ClStepper::set_time_step`] for a `Dga` with layers (the electric side is in
    /// `disp`).
    pml: MagPml<T>,
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
        let ne = dga.n_edges;
        if ne > EDGE_MASK as usize {
            return Err(Error::DeviceMemory(format!(
                "the mesh has {ne} edges, above the 31-bit edge index of the primal kernels"
            )));
        }
        let v = Variants::for_dga(&dga);
        // the operators already on the device (assembled there), or None to upload the
        // host's at unit Δt
        let (p, start, resident_masses) = match resident {
            Some(r) => {
                debug_assert!(
                    v.primal == PrimalVariant::Sym && v.block.layout() == BlockLayout::Tri
                );
                let len = r.block_len();
                let poff = dev.upload(&r.poff, "packed block offsets")?;
                let start = DualStart {
                    blocks: Some((r.blocks, len, poff)),
                    csr: r.csr,
                };
                (Some(r.primal), start, r.masses)
            }
            None => (
                None,
                DualStart {
                    blocks: None,
                    csr: None,
                },
                None,
            ),
        };
        let primal = Primal::new(&k, &dev, &dga, v.primal, p)?;
        let mut dual = Dual::new(&k, &dev, &dga, dual, v.circ, v.block, start)?;
        dual.csr_variant = v.csr;
        let mut disp = Dispersion::new(&k)?;
        disp.variant = v.disp;
        let mut s = ClStepper {
            u: dev.alloc(2 * ne, "U")?,
            f: dev.alloc(4 * tet_stride(t), "F")?,
            primal,
            dual,
            src: SourceTerm::new(&k, &dev, source)?,
            probes: ProbeSet::new(&k, &dev, probes)?,
            losses: Losses::new(&k)?,
            dft: Dft::new(&k)?,
            disp,
            pml: MagPml::new(&k)?,
            energy: None,
            resident_masses,
            source: source.cloned(),
            slots: None,
            nonfree_zero: true,
            ghosts: None,
            k,
            dev,
            t,
            tp: tet_stride(t),
            ne,
            nh: 2 * ne,
            nfree: dga.meps.h.len(),
            dga,
            dt: 1.0,
        };
        s.zero_state()?;
        Ok(s)
    }

    /// The kernel variants launched (each component's).
    pub fn variants(&self) -> Variants {
        Variants {
            primal: self.primal.variant(),
            block: self.dual.block_variant,
            csr: self.dual.csr_variant,
            disp: self.disp.variant,
            circ: self.dual.circ_variant,
        }
    }

    /// Chooses the kernel variants (a CSR variant needs the stepper built with the CSR
    /// dual). A primal or block variant with another storage layout replaces the operator
    /// on the device, built on the host for the current Δt (only one layout is resident).
    pub fn set_variants(&mut self, v: Variants) -> Result<()> {
        let old = self.variants();
        let relayout = v.primal.per_tet() != old.primal.per_tet()
            || v.block.layout() != self.dual.blocks.layout;
        if relayout && self.t > 0 && self.dga.mmu_inv.is_empty() {
            return Err(Error::config(
                "variant",
                format!("{} / {}", v.primal.name(), v.block.name()),
                "the operators are resident on the device (device assembly) in the default layouts only; another layout needs the host's operators",
            ));
        }
        let dga = self.dga.clone();
        self.dual.set_circ_variant(&self.dev, &dga, v.circ)?;
        (self.dual.block_variant, self.dual.csr_variant) = (v.block, v.csr);
        self.disp.variant = v.disp;
        if v.primal != old.primal {
            if v.primal.per_tet() == old.primal.per_tet() {
                // the same layout: only the kernel changes
                self.primal.set_variant(v.primal);
            } else {
                self.install_primal(v.primal)?;
            }
        }
        if v.block.layout() != self.dual.blocks.layout {
            if dga.msig.is_some() || dga.disp.is_some() {
                self.install_losses_in(self.dt, v.block.layout())?;
            } else {
                let dt = self.dt;
                let f = |x: f64| T::of(dt * x);
                (self.dual).put_blocks(&self.dev, &dga, v.block.layout(), &dga.meps_inv.data, f)?;
            }
        }
        self.keep_layout_in_scope()
    }

    /// The dual form of the time step.
    pub fn dual(&self) -> DualForm {
        self.dual.form()
    }

    /// Switches the dual form (the CSR form needs the stepper built with the CSR dual).
    pub fn set_dual(&mut self, d: DualForm) -> Result<()> {
        self.dual.set_form(d)?;
        self.keep_layout_in_scope()
    }

    /// Nonzeros of the device CSR matrix (0 without it).
    pub fn csr_nnz(&self) -> usize {
        self.dual.csr_nnz()
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
        self.dev.fill_zero(&mut self.dual.c, self.ne)
    }

    /// Rescales the operators (and source pattern) from the current Δt to `dt`, and sets the
    /// source waveform. With conducting tets the dual blocks depend on Δt nonlinearly
    /// (`Δt (Meps + Δt/2 Msig)⁻¹` at lossy vertices): they, the CSR values and the loss
    /// step's `B̂` blocks are recomputed on the host for `dt` and uploaded, with the values
    /// of [`crate::dga::operators::Operators::new`] (the same as the CPU backend's).
    pub fn set_time_step(&mut self, dt: f64, wave: Option<Waveform>) -> Result<()> {
        let a = dt / self.dt;
        if self.dga.mag.is_some() || self.dga.mpml.is_some() {
            self.install_mag(dt)?;
        } else {
            self.primal.scale(&self.dev, &self.k.scale, a)?;
        }
        if self.src.n > 0 {
            layout::scale(&self.dev, &self.k.scale, &self.src.g, self.src.n, a)?;
        }
        if self.dga.msig.is_some() || self.dga.disp.is_some() {
            // after the source's scaling: it may replace the pattern for this dt
            self.install_losses(dt)?;
        } else {
            self.dual.scale(&self.dev, &self.k.scale, a)?;
        }
        self.dev.finish()?;
        self.dt = dt;
        self.src.wave = wave;
        Ok(())
    }
}
