//! The partitioned OpenCL stepper: one rank's part on one OpenCL device, exchanging halos
//! with its neighbours through a [`Comm`] (design note §14).
//!
//! The local operators are uploaded by [`ClStepper`] in its own layouts (`F[k T + n]`,
//! vertex-major blocks); this stepper adds index lists and launches the same kernels on
//! subsets of the local tets, edges and free half-edge slots (the DGA program (`cl/dga/*.cl`), `*_idx`).
//! From [`ClPartStepper::set_time_step`] on, `U` is stored slot-major where the single-device
//! main job would store it so (lossless, non-dispersive; every halo and source half-edge
//! free): the vertex-block update then writes it coalesced (`*_sm_idx` kernels), and the
//! halo's and source's half-edge lists are mapped to slots. The power iteration before it
//! runs by half-edge.
//! OpenCL has no device-aware MPI, so a halo goes device → host → transport → host →
//! device, and only the values that cross the cut travel, packed in one buffer per
//! neighbour. Per half step, with the device's two in-order queues (main and side):
//!
//! 1. main: the interface kernels (the primal update of the tets whose `F` a neighbour
//!    needs; or the circulations, vertex blocks and source at the vertices with a half a
//!    neighbour needs), then the `gather` kernel packing the sent values into one
//!    contiguous device buffer;
//! 2. side: the interior kernels (the rest of the rank's tets or vertices), submitted at
//!    once but waiting for step 1's last command: the small interface kernels run on an
//!    otherwise idle device (sharing it with the interior slowed them by up to the
//!    interior's own time on the 4-GPU H100 machine, and the copy to the host waited for
//!    them), and the copy runs beside the interior;
//! 3. host, while the side queue computes: blocking read of the packed values (main waits
//!    for step 1 only), non-blocking exchange with every neighbour ([`Comm::exchange`]),
//!    blocking write of the received values, then `scatter` into the ghost slots on main.
//!
//! Each queue's first command of a half step waits for the other queue's last command of
//! the previous one (profiling events), so the two queues never touch the same values at
//! the same time: interface and interior sets are disjoint, packing reads interface values
//! only and the ghost slots are read by neither queue during the half step that writes them.
//!
//! Each entity gets the arithmetic of the single-device [`ClStepper`] (the same kernels'
//! bodies on the same local operators, which equal the global rows; module doc of
//! [`crate::partition`]), so the partitioned device run equals the single-device run up to
//! the device's own round-off choices (contraction, summation order inside a kernel), and
//! the CPU runs to round-off (tested against both, `tests/partition/partition_cl.rs`).
//!
//! **Losses, poles and layers** (conduction, the absorbing boundaries' surface conductance,
//! absorbing layers' σ and σ*, dispersive poles, perfectly matched layers) take a path
//! without overlap: per step, on the main queue alone, the magnetic loss of the owned σ*
//! tets and the layer's magnetic correction, the primal update of all owned tets, the F
//! exchange, the layer's magnetic pole step, the loss step `U_v ← B̂_v U_v` and the
//! dispersive correction at the owned lossy and dispersive vertices, the dual update
//! (split dispersion: the fused kernel is not used on parts) and source of all owned
//! vertices, the pole step, the U exchange: the single-device step's order
//! ([`ClStepper::step`]) and the CPU parts' ([`super::PartStepper`]), on the part's
//! operators, whose loss, pole and layer rows are the owned ones ([`Part::assemble`]).
//! The source pattern is `Δt B j` with the lossy or dispersive blocks where it touches
//! such a vertex ([`scaled_pattern`]). Such a rank keeps its part's host operators for the
//! current Δt (host memory: one part's [`Operators`]): the poles' energy (owned entries)
//! and the checkpoints' pole and layer states (gathered to rank 0 in the single-process
//! layout, [`gather_aux`], [`gather_mag`]) need their layouts.
//!
//! Halo values travel as `T` over PCIe, through pinned host staging ([`Pinned`]), and as
//! `T` through the transport (f32 values two per 64-bit word). [`HaloTiming`] splits the
//! time of each phase (interface and interior kernels, device → host, transport, host →
//! device), so that a loss of scaling is measured, not guessed.

use super::stepper::{
    INTERFACE, INTERIOR, Layout, ProbeShare, agree, gather_state, local_of_global, owned_energy,
    owned_values, scaled_pattern, source_pattern,
};
mod lossy;

use super::{Comm, Part};
use crate::backend::Stepper;
use crate::backend::cpu::aux_energy;
use crate::backend::opencl::{
    ClDevice, ClStepper, DeviceSampling, DispVariant, Field, Lane, Pinned, PowerHalo, Subset,
    ULayout, Variants, advance_sampled, event_seconds,
};
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::{DualForm, Operators};
use crate::error::{Error, Result};
use crate::problem::Waveform;
use crate::real::Real;
use crate::util::Rng;
use opencl3::event::Event;
use opencl3::memory::Buffer;
use std::sync::Arc;
use std::time::Instant;

/// Time spent on halos since the last [`ClPartStepper::take_timing`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HaloTiming {
    /// Host wall time in the halo path: waiting for the packed values (device → host), the
    /// transport's exchange, and writing the received values (host → device).
    pub comm_s: f64,
    /// Of which the transport's exchange alone.
    pub mpi_s: f64,
    /// Of which the device → host read (it also waits for the interface kernels and the
    /// packing before it on the main queue).
    pub d2h_s: f64,
    /// Of which the host → device write.
    pub h2d_s: f64,
    /// Halo exchanges (two per step).
    pub exchanges: usize,
    /// Device time of the kernels (profiling events) of the steps sampled for it (every
    /// [`TIMED_EVERY`]-th step): the interface part with packing and scattering, and the
    /// interior part; and the number of such steps.
    pub interface_s: f64,
    pub interior_s: f64,
    pub timed_steps: usize,
}

impl HaloTiming {
    /// Per step, milliseconds: `[comm, mpi, d2h, h2d, interface, interior]` (the first four
    /// per exchanged step, the last two per sampled step).
    pub fn per_step_ms(&self) -> [f64; 6] {
        let steps = (self.exchanges as f64 / 2.0).max(1.0);
        let timed = (self.timed_steps as f64).max(1.0);
        [
            1e3 * self.comm_s / steps,
            1e3 * self.mpi_s / steps,
            1e3 * self.d2h_s / steps,
            1e3 * self.h2d_s / steps,
            1e3 * self.interface_s / timed,
            1e3 * self.interior_s / timed,
        ]
    }
}

/// Every this many steps, the device is drained after a step and its kernels' profiled
/// times are added to [`HaloTiming`] (one synchronisation per 64 steps).
pub const TIMED_EVERY: usize = 64;

/// Halo values on the wire: `f64` values as they are; `f32` values two per 64-bit word
/// (the low word first), bit for bit. Halos of f32 runs are thus f32 in the transport too.
fn pack_words<T: Real>(vals: &[T], out: &mut Vec<f64>) {
    out.clear();
    if std::mem::size_of::<T>() == 8 {
        out.extend(vals.iter().map(|x| x.f64()));
    } else {
        let bits = |x: Option<&T>| x.map_or(0u64, |v| (v.f64() as f32).to_bits() as u64);
        out.extend(
            vals.chunks(2)
                .map(|c| f64::from_bits(bits(c.first()) | (bits(c.get(1)) << 32))),
        );
    }
}

/// Words on the wire for `n` values of `T`.
fn words<T: Real>(n: usize) -> usize {
    if std::mem::size_of::<T>() == 8 {
        n
    } else {
        n.div_ceil(2)
    }
}

/// The inverse of [`pack_words`]: `out.len()` values from `w`.
fn unpack_words<T: Real>(w: &[f64], out: &mut [T]) {
    if std::mem::size_of::<T>() == 8 {
        for (o, &x) in out.iter_mut().zip(w) {
            *o = T::of(x);
        }
    } else {
        for (i, o) in out.iter_mut().enumerate() {
            let b = w[i / 2].to_bits() >> (32 * (i % 2));
            *o = T::of(f32::from_bits(b as u32) as f64);
        }
    }
}

/// Device index lists and staging buffers of one rank's halo.
struct DevHalo<T: Real> {
    peers: Vec<usize>,
    /// Device slots sent and received, concatenated over neighbours in `peers` order.
    f_send: Subset,
    f_recv: Subset,
    u_send: Subset,
    u_recv: Subset,
    /// The U lists as slots of slot-major `U` ([`DevHalo::slot_lists`]), while the stepper's
    /// `U` is slot-major.
    us_lists: Option<(Subset, Subset)>,
    /// Values per neighbour: (F sent, F received, U sent, U received).
    counts: Vec<[usize; 4]>,
    dsend: Buffer<T>,
    drecv: Buffer<T>,
    /// Pinned host staging (page-locked: the copies run by DMA).
    hsend: Pinned<T>,
    hrecv: Pinned<T>,
    send: Vec<Vec<f64>>,
    recv: Vec<Vec<f64>>,
    timing: HaloTiming,
}

impl<T: Real> DevHalo<T> {
    fn new(cl: &ClStepper<T>, dev: &Arc<ClDevice>, part: &Part) -> Result<Self> {
        let tp = cl.tet_stride(); // F value k of tet n at k * tp + n
        let fslots = |tets: &[u32]| -> Vec<u32> {
            tets.iter()
                .flat_map(|&n| (0..4).map(move |k| (k * tp + n as usize) as u32))
                .collect()
        };
        let (mut fs, mut fr, mut us, mut ur) = (vec![], vec![], vec![], vec![]);
        let mut counts = Vec::new();
        for h in &part.halos {
            fs.extend(fslots(&h.send_tets));
            fr.extend(fslots(&h.recv_tets));
            us.extend_from_slice(&h.send_halves);
            ur.extend_from_slice(&h.recv_halves);
            counts.push([
                4 * h.send_tets.len(),
                4 * h.recv_tets.len(),
                h.send_halves.len(),
                h.recv_halves.len(),
            ]);
        }
        let ns = fs.len().max(us.len());
        let nr = fr.len().max(ur.len());
        let np = part.halos.len();
        Ok(DevHalo {
            peers: part.halos.iter().map(|h| h.peer).collect(),
            f_send: cl.indices(&fs, "halo F send list")?,
            f_recv: cl.indices(&fr, "halo F receive list")?,
            u_send: cl.indices(&us, "halo U send list")?,
            u_recv: cl.indices(&ur, "halo U receive list")?,
            us_lists: None,
            counts,
            dsend: dev.alloc(ns, "halo send buffer")?,
            drecv: dev.alloc(nr, "halo receive buffer")?,
            hsend: dev.pinned(ns, "halo send staging")?,
            hrecv: dev.pinned(nr, "halo receive staging")?,
            send: vec![Vec::new(); np],
            recv: vec![Vec::new(); np],
            timing: HaloTiming::default(),
        })
    }

    /// The device lists of `field` in `U`'s current layout (`slots`: slot-major).
    fn lists(&self, field: Field, slots: bool) -> (&Subset, &Subset) {
        match (field, &self.us_lists) {
            (Field::F, _) => (&self.f_send, &self.f_recv),
            (Field::U, Some((s, r))) if slots => (s, r),
            (Field::U, _) => (&self.u_send, &self.u_recv),
        }
    }

    /// The U lists as slots of slot-major `U` (`slot` of each half-edge, `nf` for one that
    /// is not free); false, and nothing built, when a halo half-edge is not free (it has
    /// no slot: the rank keeps the half-edge layout).
    fn slot_lists(
        &mut self,
        cl: &ClStepper<T>,
        part: &Part,
        slot: &[u32],
        nf: u32,
    ) -> Result<bool> {
        // (halos carry free half-edges only, `HaloLists::build`: checked, not assumed)
        let map = |hs: &mut dyn Iterator<Item = &u32>| -> Option<Vec<u32>> {
            hs.map(|&h| Some(slot[h as usize]).filter(|&g| g != nf))
                .collect()
        };
        let send = map(&mut part.halos.iter().flat_map(|h| &h.send_halves));
        let recv = map(&mut part.halos.iter().flat_map(|h| &h.recv_halves));
        let (Some(send), Some(recv)) = (send, recv) else {
            return Ok(false);
        };
        self.us_lists = Some((
            cl.indices(&send, "halo U send list (slots)")?,
            cl.indices(&recv, "halo U receive list (slots)")?,
        ));
        Ok(true)
    }

    /// Packs the sent values of `buf` on the main queue (after `wait`).
    fn pack(
        &self,
        cl: &ClStepper<T>,
        buf: &Buffer<T>,
        field: Field,
        wait: &[&Event],
    ) -> Result<Option<Event>> {
        let (send, _) = self.lists(field, cl.u_layout() == ULayout::SlotMajor);
        if send.is_empty() {
            return Ok(None);
        }
        cl.gather(buf, send, &self.dsend, Lane::Main, wait)
            .map(Some)
    }

    /// Reads the packed values, exchanges them, writes the received ones and scatters them
    /// into `buf` on the main queue; returns the scatter's event.
    fn complete<C: Comm>(
        &mut self,
        cl: &ClStepper<T>,
        comm: &C,
        buf: &Buffer<T>,
        field: Field,
    ) -> Result<Option<Event>> {
        let t0 = Instant::now();
        let (si, ri) = match field {
            Field::F => (0, 1),
            Field::U => (2, 3),
        };
        let ns: usize = self.counts.iter().map(|c| c[si]).sum();
        let nr: usize = self.counts.iter().map(|c| c[ri]).sum();
        let dev = cl.device();
        dev.read_pinned(
            &self.dsend,
            &mut self.hsend,
            ns,
            "halo values (device to host)",
        )?;
        let t1 = Instant::now();
        // a transport that moves bytes between the staging buffers (threads of one process)
        let direct = {
            let send = self.hsend.byte_runs(self.counts.iter().map(|c| c[si]));
            let mut recv = self.hrecv.byte_runs_mut(self.counts.iter().map(|c| c[ri]));
            comm.exchange_bytes(&self.peers, &send, &mut recv)
        };
        let (t1, t2) = match direct {
            Some(r) => {
                r?;
                (t1, Instant::now())
            }
            None => {
                let mut at = 0;
                let hsend = self.hsend.as_slice();
                for (c, s) in self.counts.iter().zip(self.send.iter_mut()) {
                    pack_words(&hsend[at..at + c[si]], s);
                    at += c[si];
                }
                for (c, r) in self.counts.iter().zip(self.recv.iter_mut()) {
                    r.resize(words::<T>(c[ri]), 0.0);
                }
                let t1 = Instant::now();
                comm.exchange(&self.peers, &self.send, &mut self.recv, &mut || {})?;
                let t2 = Instant::now();
                let mut at = 0;
                let hrecv = self.hrecv.as_mut_slice();
                for (c, r) in self.counts.iter().zip(&self.recv) {
                    unpack_words(r, &mut hrecv[at..at + c[ri]]);
                    at += c[ri];
                }
                (t1, t2)
            }
        };
        let t3 = Instant::now();
        let ev = if nr > 0 {
            dev.write_pinned(
                &mut self.drecv,
                &self.hrecv,
                nr,
                "halo values (host to device)",
            )?;
            let (_, recv) = self.lists(field, cl.u_layout() == ULayout::SlotMajor);
            Some(cl.scatter(&self.drecv, recv, buf, Lane::Main, &[])?)
        } else {
            None
        };
        self.timing.d2h_s += (t1 - t0).as_secs_f64();
        self.timing.h2d_s += t3.elapsed().as_secs_f64();
        self.timing.comm_s += t0.elapsed().as_secs_f64();
        self.timing.mpi_s += (t2 - t1).as_secs_f64();
        self.timing.exchanges += 1;
        Ok(ev)
    }

    /// Pack, exchange and unpack with nothing to overlap.
    fn exchange<C: Comm>(
        &mut self,
        cl: &ClStepper<T>,
        comm: &C,
        buf: &Buffer<T>,
        field: Field,
    ) -> Result<()> {
        self.pack(cl, buf, field, &[])?;
        self.complete(cl, comm, buf, field)?;
        Ok(())
    }
}

/// The interface ([0]) and interior ([1]) subsets of a rank's tets, edges and free
/// half-edge slots (vertex-major positions), from the phase masks of [`Layout`].
struct Phases {
    tets: [Subset; 2],
    edges: [Subset; 2],
    slots: [Subset; 2],
}

impl Phases {
    fn new<T: Real>(cl: &ClStepper<T>, lay: &Layout, dga: &Dga) -> Result<Self> {
        let pick = |mask: &[u8], p: u8| -> Vec<u32> {
            (0..mask.len() as u32)
                .filter(|&i| mask[i as usize] == p)
                .collect()
        };
        let slot_phase: Vec<u8> = dga.meps.h.iter().map(|&h| lay.half[h as usize]).collect();
        let (t, e, f) = cl.counts();
        let two = |mask: &[u8], n: usize, what: &str| -> Result<[Subset; 2]> {
            Ok([
                cl.subset(&pick(mask, INTERFACE), n, what)?,
                cl.subset(&pick(mask, INTERIOR), n, what)?,
            ])
        };
        Ok(Phases {
            tets: two(&lay.tet, t, "tet phases")?,
            edges: two(&lay.edge, e, "edge phases")?,
            slots: two(&slot_phase, f, "slot phases")?,
        })
    }
}

/// One rank of a partitioned run on an OpenCL device. Implements [`Stepper`] with global
/// semantics, like [`super::PartStepper`]: `advance` appends every probe's samples
/// (gathered from their owners) on every rank, `energy` is the global energy,
/// `state`/`set_state` take the global vectors. All methods are collective.
pub struct ClPartStepper<T: Real, C: Comm> {
    comm: C,
    part: Arc<Part>,
    dga: Arc<Dga>,
    cl: ClStepper<T>,
    phases: Phases,
    halo: DevHalo<T>,
    /// Unit-Δt source share `(local half, g, phase)`, and on the device (Δt folded in) the
    /// interface ([0]) and interior ([1]) parts: indices, values, count.
    pattern: Vec<(u32, f64, u8)>,
    src: Vec<(Buffer<u32>, Buffer<T>, usize)>,
    /// The `U` layout `src` was uploaded for (its indices are half-edges or slots).
    src_layout: ULayout,
    /// Δt of the last [`Self::set_time_step`] (metres of light travel).
    dt: f64,
    probes: ProbeShare,
    /// The events of the last step (and its probe sampling).
    events: Events,
    /// Losses, poles or a layer on some rank: the step without overlap (module docs,
    /// "Losses, poles and layers").
    lossy: bool,
    /// The global source and the phase of each local half-edge: with losses the pattern is
    /// `Δt B j` with the lossy blocks where the source touches a lossy vertex
    /// ([`scaled_pattern`], as the CPU parts and the single device take it), rebuilt for
    /// each Δt.
    source: Option<Source>,
    half_phase: Vec<u8>,
    /// With `lossy`: the part's host operators at the current Δt (module docs).
    host: Option<Arc<Operators<T>>>,
}

/// The events of one step on both queues, and which are each queue's last.
#[derive(Default)]
struct Events {
    all: Vec<Event>,
    /// Per event: whether it was on the main queue (interface, packing, scattering, probes)
    /// or the side queue (interior).
    on_main: Vec<bool>,
    last_main: Option<usize>,
    last_side: Option<usize>,
}

impl Events {
    fn main(&mut self, e: Event) -> usize {
        self.all.push(e);
        self.on_main.push(true);
        self.last_main = Some(self.all.len() - 1);
        self.all.len() - 1
    }
    fn side(&mut self, e: Event) -> usize {
        self.all.push(e);
        self.on_main.push(false);
        self.last_side = Some(self.all.len() - 1);
        self.all.len() - 1
    }
    /// Device seconds of the main-queue and side-queue commands (all complete).
    fn seconds(&self) -> Result<(f64, f64)> {
        let (mut main, mut side) = (0.0, 0.0);
        for (e, &m) in self.all.iter().zip(&self.on_main) {
            let t = event_seconds(e)?;
            if m {
                main += t;
            } else {
                side += t;
            }
        }
        Ok((main, side))
    }
    fn main_wait(&self) -> Vec<&Event> {
        self.last_main.map(|i| &self.all[i]).into_iter().collect()
    }
    fn side_wait(&self) -> Vec<&Event> {
        self.last_side.map(|i| &self.all[i]).into_iter().collect()
    }
}

impl<T: Real, C: Comm> ClPartStepper<T, C> {
    /// A stepper at unit Δt (call [`Self::set_time_step`] before stepping) from a zero
    /// state. `source` is the global source (its global `tet` and `dir` are used) and
    /// `probes` the global probes; each rank builds its own share. Collective.
    pub fn new(
        comm: C,
        part: Arc<Part>,
        dga: Arc<Dga>,
        dev: Arc<ClDevice>,
        source: Option<&Source>,
        probes: &[Probe],
    ) -> Result<Self> {
        let lossy = lossy::plain_step(&comm, &dga)?;
        let probes = ProbeShare::new(&comm, &part, probes)?;
        let lay = Layout::new(&part, &dga);
        let pattern = source_pattern(&comm, &part, &dga, source)?
            .into_iter()
            .map(|(h, g)| (h, g, lay.half[h as usize]))
            .collect();
        let cl = crate::backend::planner::dga_opencl::<T>(
            &dev,
            &dga,
            DualForm::Factored,
            None,
            &probes.local,
        )?;
        let mut cl = cl;
        if lossy && dga.disp.is_some() {
            // the parts run the split dispersion (module docs)
            let v = cl.variants();
            cl.set_variants(Variants {
                disp: DispVariant::Split,
                ..v
            })?;
        }
        let phases = Phases::new(&cl, &lay, &dga)?;
        let halo = DevHalo::new(&cl, &dev, &part)?;
        Ok(ClPartStepper {
            comm,
            part,
            dga,
            cl,
            phases,
            halo,
            pattern,
            src: Vec::new(),
            src_layout: ULayout::HalfEdge,
            dt: 0.0,
            probes,
            events: Events::default(),
            lossy,
            source: source.cloned(),
            half_phase: lay.half.clone(),
            host: None,
        })
    }

    /// The transport.
    pub fn comm(&self) -> &C {
        &self.comm
    }
    /// This rank's part.
    pub fn part(&self) -> &Arc<Part> {
        &self.part
    }
    /// Global indices of the probes this rank records.
    pub fn owned_probes(&self) -> Vec<usize> {
        self.probes.owned(self.comm.rank())
    }
    /// Whether this rank holds part of the source pattern.
    pub fn has_source(&self) -> bool {
        !self.pattern.is_empty()
    }
    /// The device stepper of the local operators.
    pub fn device_stepper(&self) -> &ClStepper<T> {
        &self.cl
    }
    /// Halo values this rank sends per step (F and U together).
    pub fn halo_values_sent(&self) -> usize {
        self.halo.counts.iter().map(|c| c[0] + c[2]).sum()
    }
    /// The halo timing so far, reset to zero.
    pub fn take_timing(&mut self) -> HaloTiming {
        std::mem::take(&mut self.halo.timing)
    }
    /// The events of the last step (both queues, profiling enabled).
    pub fn last_step_events(&self) -> &[Event] {
        &self.events.all
    }

    /// Rescales the operators from the current Δt to `dt` (metres of light travel), sets
    /// the source waveform and uploads this rank's share of the source pattern (`Δt Meps⁻¹ j`).
    ///
    /// `U` then goes slot-major ([`ULayout::SlotMajor`], the single-device main job's
    /// layout: the vertex-block update writes it coalesced) where the stepper allows it
    /// (lossless, non-dispersive) and every halo and source half-edge is free; the
    /// environment variable `DGATD_PART_U=half-edge` keeps the half-edge layout (to measure
    /// the difference).
    pub fn set_time_step(&mut self, dt: f64, wave: Option<Waveform>) -> Result<()> {
        self.cl.set_time_step(dt, wave)?;
        self.dt = dt;
        let keep = std::env::var("DGATD_PART_U").is_ok_and(|v| v == "half-edge");
        if !keep
            && self.cl.u_layout() == ULayout::HalfEdge
            && self.cl.slot_major_refusal().is_none()
        {
            // the ghosts (every neighbour's halves this rank receives) get slots of their own
            let ghosts: Vec<u32> = self
                .part
                .halos
                .iter()
                .flat_map(|h| h.recv_halves.iter().copied())
                .collect();
            self.cl.set_ghost_halves(&ghosts)?;
            let slot = self.cl.slot_of_half();
            let nf = self.cl.counts().2 as u32;
            let src_free = self.pattern.iter().all(|p| slot[p.0 as usize] != nf);
            if src_free && self.halo.slot_lists(&self.cl, &self.part, &slot, nf)? {
                self.cl.set_u_layout(ULayout::SlotMajor)?;
            } else {
                self.cl.set_ghost_halves(&[])?;
            }
        }
        self.upload_source()
    }

    /// Uploads this rank's share of the source pattern (`Δt Meps⁻¹ j`) at the current Δt,
    /// as half-edges or slots after `U`'s current layout.
    fn upload_source(&mut self) -> Result<()> {
        let dev = self.cl.device().clone();
        let dt = self.dt;
        self.src_layout = self.cl.u_layout();
        let slot = (self.src_layout == ULayout::SlotMajor).then(|| self.cl.slot_of_half());
        let at = |h: u32| slot.as_ref().map_or(h, |s| s[h as usize]);
        // (half, Δt-scaled value, phase)
        let scaled: Vec<(u32, T, u8)> = if self.lossy {
            let ops = match self.host.take() {
                Some(o) if o.dt == dt => o,
                _ => Arc::new(Operators::<T>::new(&self.dga, dt, false)),
            };
            let p = scaled_pattern(
                &self.comm,
                &self.part,
                &self.dga,
                &ops,
                self.source.as_ref(),
            )?;
            self.host = Some(ops);
            (p.into_iter())
                .map(|(h, x)| (h, x, self.half_phase[h as usize]))
                .collect()
        } else {
            (self.pattern.iter())
                .map(|&(h, x, p)| (h, T::of(x * dt), p))
                .collect()
        };
        self.src.clear();
        for phase in [INTERFACE, INTERIOR] {
            let (idx, g): (Vec<u32>, Vec<T>) = scaled
                .iter()
                .filter(|p| p.2 == phase)
                .map(|&(h, x, _)| (at(h), x))
                .unzip();
            self.src.push((
                dev.upload(&idx, "source indices")?,
                dev.upload(&g, "source pattern")?,
                idx.len(),
            ));
        }
        Ok(())
    }

    /// Power-iteration estimate of ρ(K) over all ranks (no margin) on the devices, at unit
    /// Δt, the distributed form of [`ClStepper::spectral_radius`]: the same start vector as
    /// the single-process iteration (the seeded generator jumped to each free half's global
    /// position), global dot products. Call before [`Self::set_time_step`]. Collective.
    pub fn spectral_radius(&mut self, iters: usize, seed: u64) -> Result<f64> {
        const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15; // SplitMix64's increment (util::Rng)
        let mut x0 = vec![T::zero(); self.dga.n_half()];
        for v in 0..self.dga.meps.n_vertices() {
            let off = self.part.free_offset[v];
            for (i, &h) in self.dga.meps.halves(v).iter().enumerate() {
                let k = off + i as u64;
                x0[h as usize] = T::of(Rng::new(seed.wrapping_add(k.wrapping_mul(GAMMA))).sym());
            }
        }
        self.cl.device().finish()?;
        // the iteration's vectors and halo lists are by half-edge
        self.cl.set_u_layout(ULayout::HalfEdge)?;
        let ClPartStepper { cl, halo, comm, .. } = self;
        cl.power_iteration(iters, &x0, &mut Hooks { halo, comm })
    }

    /// One leapfrog step number `k` (source at `(k + 1/2) Δt`), overlapping each halo
    /// exchange with the interior part of its half step. Collective.
    pub fn step(&mut self, k: usize) -> Result<()> {
        if self.src.len() != 2 {
            return Err(Error::config(
                "time step",
                "unset",
                "ClPartStepper::set_time_step must be called before stepping",
            ));
        }
        if self.cl.u_layout() != self.src_layout {
            // a new state left slot-major's scope (ClStepper::set_state)
            self.upload_source()?;
        }
        if self.lossy {
            return self.step_lossy(k);
        }
        let ClPartStepper {
            comm,
            cl,
            phases: ph,
            halo,
            src,
            events,
            ..
        } = self;
        let prev = std::mem::take(events);
        let dev = cl.device().clone();
        if k % TIMED_EVERY == 1 && !prev.all.is_empty() {
            // the previous step is a sampled one: drain the device and read its kernels' times
            dev.finish()?;
            let (main, side) = prev.seconds()?;
            halo.timing.interface_s += main;
            halo.timing.interior_s += side;
            halo.timing.timed_steps += 1;
        }
        let mut ev = Events::default();
        let (ubuf, fbuf) = cl.state_buffers();
        // Faraday: F -= P U, interface tets first.
        let mut packed = ev.main(cl.primal_on(&ph.tets[0], Lane::Main, &prev.side_wait())?);
        if let Some(e) = halo.pack(cl, fbuf, Field::F, &[])? {
            packed = ev.main(e);
        }
        // the interior starts once the interface part is packed (in order after the previous
        // step's main queue): the small interface kernels then have the device to themselves
        // and the copy to the host starts early, instead of waiting behind the interior
        let e = cl.primal_on(&ph.tets[1], Lane::Side, &[&ev.all[packed]])?;
        let primal_in = ev.side(e);
        dev.flush_side()?;
        if let Some(e) = halo.complete(cl, comm, fbuf, Field::F)? {
            ev.main(e);
        }
        // Ampère: circulations, vertex blocks and source, interface vertices first.
        let circ_if =
            ev.main(cl.circulation_on(&ph.edges[0], Lane::Main, &[&ev.all[primal_in]])?);
        ev.main(cl.vertex_blocks_on(&ph.slots[0], Lane::Main, &[])?);
        if let Some(e) = cl.source_on(&src[0].0, &src[0].1, src[0].2, k, Lane::Main, &[])? {
            ev.main(e);
        }
        if let Some(e) = halo.pack(cl, ubuf, Field::U, &[])? {
            ev.main(e);
        }
        // the interior circulations read interface tets' F and the ghosts (scattered on
        // main above): after main's last command, the interface part and its packing
        let w: Vec<&Event> = ev.main_wait();
        let e = cl.circulation_on(&ph.edges[1], Lane::Side, &w)?;
        ev.side(e);
        // the interior vertices' blocks read circulations of interface edges
        let e = cl.vertex_blocks_on(&ph.slots[1], Lane::Side, &[&ev.all[circ_if]])?;
        ev.side(e);
        if let Some(e) = cl.source_on(&src[1].0, &src[1].1, src[1].2, k, Lane::Side, &[])? {
            ev.side(e);
        }
        dev.flush_side()?;
        if let Some(e) = halo.complete(cl, comm, ubuf, Field::U)? {
            ev.main(e);
        }
        drop(prev);
        *events = ev;
        Ok(())
    }

    /// Replaces the state by local vectors (this rank's slots, ghosts included; host
    /// layouts).
    pub fn set_local_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        self.cl.device().finish()?;
        self.events = Events::default();
        self.cl.set_state(u, f)?;
        // the next step's side-queue kernels wait on no event: nothing of the main queue
        // may still be pending then
        self.cl.device().finish()
    }

    /// This rank's share of the energy, with its dispersive entries' poles' energy
    /// ([`aux_energy`], as the CPU parts add it).
    pub fn local_energy(&mut self) -> Result<f64> {
        self.cl.device().finish()?;
        let (u, f, fnew) = self.cl.state_with_next()?;
        let mut w = owned_energy(&self.part, &self.dga, &u, &f, &fnew);
        // only real dispersive media's poles carry energy (a PML's stretch poles do not:
        // crate::backend::cpu::aux_energy), so only they need the state read back
        let media = self.dga.disp.as_ref().is_some_and(|d| d.n_media > 0);
        if let Some(ops) = self.host.as_ref().filter(|_| media) {
            let (s, _) = self.cl.disp_state()?;
            w += aux_energy(&self.dga, ops, &u, &s);
        }
        Ok(w)
    }

    fn local_state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        self.cl.device().finish()?;
        self.cl.state()
    }
}

/// The halo and sums of the distributed power iteration.
struct Hooks<'a, T: Real, C: Comm> {
    halo: &'a mut DevHalo<T>,
    comm: &'a C,
}

impl<T: Real, C: Comm> PowerHalo<T> for Hooks<'_, T, C> {
    fn exchange(&mut self, s: &ClStepper<T>, b: &Buffer<T>, field: Field) -> Result<()> {
        self.halo.exchange(s, self.comm, b, field)?;
        // the next kernels read the ghosts on the main queue, in order after the scatter
        Ok(())
    }
    fn sum(&mut self, x: [f64; 3]) -> Result<[f64; 3]> {
        let s = self.comm.sum(&x)?;
        Ok([s[0], s[1], s[2]])
    }
}

impl<T: Real, C: Comm> DeviceSampling<T> for ClPartStepper<T, C> {
    fn device(&self) -> &ClDevice {
        self.cl.device()
    }
    fn n_probes(&self) -> usize {
        self.probes.local.len()
    }
    fn sample_buffer(&self) -> &Buffer<T> {
        DeviceSampling::sample_buffer(&self.cl)
    }
    fn step_and_sample(&mut self, k: usize, j: usize) -> Result<()> {
        self.step(k)?;
        let wait = self.events.side_wait();
        if let Some(e) = self.cl.sample_probes(j, &wait)? {
            self.events.main(e);
        }
        Ok(())
    }
}

impl<T: Real, C: Comm> Stepper for ClPartStepper<T, C> {
    fn name(&self) -> String {
        let d = &self.cl.device().info;
        let lay = match self.cl.u_layout() {
            ULayout::SlotMajor => " (slot-major U)",
            ULayout::HalfEdge => "",
        };
        format!(
            "opencl {} / {} x {} ranks{lay}",
            d.platform,
            d.name,
            self.comm.size()
        )
    }
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        let mut local = Vec::with_capacity(n * 3 * self.probes.local.len());
        advance_sampled(self, first, n, &mut local)?;
        self.probes.merge(&self.comm, &local, n, samples)
    }
    fn energy(&mut self) -> Result<f64> {
        let lean = self.dga.n_tets > 0 && !self.dga.has_masses();
        if self.comm.any(lean)? {
            return Err(Error::config(
                "energy",
                "lean",
                "the operators were assembled without mass matrices",
            ));
        }
        let w = self.local_energy()?;
        Ok(self.comm.sum(&[w])?[0])
    }
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let (u, f) = self.local_state()?;
        let owned = owned_values(&self.part, &self.dga, &u, &f);
        gather_state(&self.comm, &self.part, owned, None)?.ok_or_else(|| Error::Comm {
            what: "gathering the state".into(),
            msg: "nothing gathered".into(),
        })
    }
    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        let (lu, lf) = local_of_global(&self.part, u, f)?;
        self.set_local_state(&lu, &lf)
    }
    fn agree(&self, flags: &[bool]) -> Result<Vec<bool>> {
        agree(&self.comm, flags)
    }
    fn gathered_state(&self) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
        let (u, f) = self.local_state()?;
        let owned = owned_values(&self.part, &self.dga, &u, &f);
        gather_state(&self.comm, &self.part, owned, Some(0))
    }
    /// Collective ([`ClPartStepper::gathered_aux`]).
    fn aux_state(&self) -> Result<Vec<f64>> {
        self.gathered_aux()
    }
    /// Collective ([`ClPartStepper::scatter_aux_state`]).
    fn set_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        self.scatter_aux_state(aux)
    }
}
