//! The partitioned CPU stepper: each rank steps its owned tets and vertices and exchanges
//! halos with its neighbours through a [`Comm`] (design note §14).
//!
//! Per step, with `P`, `D` the local operators of [`crate::dga::operators`]:
//! 0. The magnetic PML correction `F_n −= Σ_j G_j g_j` on the owned layer tets (they read
//!    and write owned values only; [`super::pml`]).
//! 1. `F -= P U` on the interface tets (those whose F a neighbour needs); pack their F, one
//!    buffer per neighbour; post the exchange; `F -= P U` on the interior tets while the
//!    messages fly; complete; unpack the ghost F. Then the magnetic PML pole step on the
//!    owned layer tets' new F (nothing more travels).
//! 2. The loss step `U_v ← B̂_v U_v` and the dispersive correction `U_v −= Σ G_m g_m` at the
//!    owned lossy and dispersive vertices (they read and write owned values only, so they
//!    run before any of the step's dual update, and the U sent in 3 carries them).
//! 3. Circulations `c_e` and `U += Δt Meps_v⁻¹ c − w(t) g` at the interface vertices (those
//!    with a half a neighbour needs); pack; post; the same at the interior vertices; complete;
//!    unpack the ghost U, which now holds the step's final values.
//! 4. The pole step at the owned dispersive entries, the PML's electric pseudo-materials
//!    among them (it reads the new owned U and changes no U, so nothing more travels).
//!
//! Magnetic loss (σ*) is the per-tet decay inside the primal update of 1 (as in one
//! process); conduction, the absorbing boundaries' surface conductance and the poles are
//! in the part's operators, assembled for its rows as one process assembles them
//! ([`Part::assemble`]).
//!
//! The kernels are those of [`crate::backend::cpu`], restricted to a selection (interface,
//! interior) by a per-entity phase mask, with the same arithmetic in the same order: in f64
//! the partitioned run equals the single-process CPU run bit for bit (see the module doc of
//! [`crate::partition`]), losses, dispersion and perfectly matched layers included. Global quantities (energy with the
//! poles' energy, the power iteration's dot products) are summed per rank, then over ranks in
//! rank order ([`Comm::sum`]).
//!
//! Halo values travel as f64 (exact for f32 runs; an f32 run sends twice the bytes it needs).

use super::{Comm, Part};
use crate::backend::Stepper;
use crate::backend::cpu::{
    RHO_MARGIN, aux_energy, disp_correct, disp_poles, loss_step, mag_correct, mag_poles,
};
use crate::complex::TetGeom;
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::Operators;
use crate::error::{Error, Result};
use crate::problem::Waveform;
use crate::real::Real;
use crate::util::{Rng, dot};
use rayon::prelude::*;
use std::sync::Arc;

pub use super::pml::{gather_mag, mag_len, scatter_mag};
pub use super::state::{
    Indexed, gather_aux, gather_state, local_of_global, owned_values, scatter_aux, scatter_state,
};

const MIN_LEN: usize = 2048;
/// Phase of an entity: not updated here, interface, interior.
pub const NOT_OWNED: u8 = 0;
pub const INTERFACE: u8 = 1;
pub const INTERIOR: u8 = 2;
/// Selects both phases.
pub const ANY: u8 = 255;

#[inline(always)]
fn picked(ph: u8, want: u8) -> bool {
    ph != NOT_OWNED && (want == ANY || ph == want)
}

/// `f -= P u` on the selected tets (as [`crate::backend::cpu::primal`]).
pub fn primal_sel<T: Real>(ops: &Operators<T>, ph: &[u8], want: u8, u: &[T], f: &mut [T]) {
    crate::backend::cpu::primal_where(ops, u, f, |n| picked(ph[n], want));
}

/// Dual-face circulations of the selected edges (as [`crate::backend::cpu::circulations`]).
pub fn circulations_sel<T: Real>(ops: &Operators<T>, ph: &[u8], want: u8, f: &[T], c: &mut [T]) {
    c.par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(e, ce)| {
            if !picked(ph[e], want) {
                return;
            }
            let mut acc = T::zero();
            for &x in &ops.circ[ops.circ_ptr[e] as usize..ops.circ_ptr[e + 1] as usize] {
                let v = f[(x >> 1) as usize];
                if x & 1 == 1 { acc -= v } else { acc += v }
            }
            *ce = acc;
        });
}

/// `u += B c` on the selected half-edges (as [`crate::backend::cpu::vertex_blocks`]).
pub fn vertex_blocks_sel<T: Real>(ops: &Operators<T>, ph: &[u8], want: u8, c: &[T], u: &mut [T]) {
    u.par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(h, uh)| {
            if picked(ph[h], want) {
                *uh += crate::backend::cpu::vertex_block_row(ops, h, c);
            }
        });
}

/// Phase masks of a rank's tets, edges and half-edges, and its halo buffers.
#[derive(Clone, Debug)]
pub struct Layout {
    pub tet: Vec<u8>,
    pub edge: Vec<u8>,
    pub half: Vec<u8>,
    bufs: Bufs,
}

/// One packed send and one receive buffer per neighbour.
#[derive(Clone, Debug)]
struct Bufs {
    peers: Vec<usize>,
    send: Vec<Vec<f64>>,
    recv: Vec<Vec<f64>>,
}

impl Layout {
    pub fn new(part: &Part, dga: &Dga) -> Layout {
        let nt = part.mesh.n_tets();
        let mut tet: Vec<u8> = part
            .own_tet
            .iter()
            .map(|&o| if o { INTERIOR } else { NOT_OWNED })
            .collect();
        let mut iface_vertex = vec![false; part.mesh.n_vertices()];
        let (hvert, _) = dga.half_edge_rows();
        for h in &part.halos {
            for &n in &h.send_tets {
                tet[n as usize] = INTERFACE;
            }
            for &s in &h.send_halves {
                iface_vertex[hvert[s as usize] as usize] = true;
            }
        }
        debug_assert_eq!(tet.len(), nt);
        let mut half = vec![NOT_OWNED; dga.n_half()];
        for v in 0..dga.meps.n_vertices() {
            let p = if iface_vertex[v] { INTERFACE } else { INTERIOR };
            for &h in dga.meps.halves(v) {
                half[h as usize] = p;
            }
        }
        let edge = part
            .topo
            .edges
            .iter()
            .zip(&part.free_edge)
            .map(|(ends, &free)| {
                let own = |v: u32| part.own_vertex[v as usize];
                if !free || !ends.iter().any(|&v| own(v)) {
                    NOT_OWNED
                } else if ends.iter().any(|&v| own(v) && iface_vertex[v as usize]) {
                    INTERFACE
                } else {
                    INTERIOR
                }
            })
            .collect();
        let np = part.halos.len();
        Layout {
            tet,
            edge,
            half,
            bufs: Bufs {
                peers: part.halos.iter().map(|h| h.peer).collect(),
                send: vec![Vec::new(); np],
                recv: vec![Vec::new(); np],
            },
        }
    }

    /// Exchanges the F halo of `f` (blocking: nothing to overlap).
    pub fn exchange_f<T: Real, C: Comm>(
        &mut self,
        comm: &C,
        part: &Part,
        f: &mut [T],
    ) -> Result<()> {
        let b = &mut self.bufs;
        b.pack_f(part, f);
        comm.exchange(&b.peers, &b.send, &mut b.recv, &mut || {})?;
        b.unpack_f(part, f);
        Ok(())
    }
    /// Exchanges the U halo of `u` (blocking).
    pub fn exchange_u<T: Real, C: Comm>(
        &mut self,
        comm: &C,
        part: &Part,
        u: &mut [T],
    ) -> Result<()> {
        let b = &mut self.bufs;
        b.pack_u(part, u);
        comm.exchange(&b.peers, &b.send, &mut b.recv, &mut || {})?;
        b.unpack_u(part, u);
        Ok(())
    }
}

impl Bufs {
    fn pack_f<T: Real>(&mut self, part: &Part, f: &[T]) {
        for ((h, s), r) in part.halos.iter().zip(&mut self.send).zip(&mut self.recv) {
            s.clear();
            for &n in &h.send_tets {
                s.extend((0..4).map(|k| f[4 * n as usize + k].f64()));
            }
            r.resize(4 * h.recv_tets.len(), 0.0);
        }
    }
    fn unpack_f<T: Real>(&self, part: &Part, f: &mut [T]) {
        for (h, r) in part.halos.iter().zip(&self.recv) {
            for (i, &n) in h.recv_tets.iter().enumerate() {
                for k in 0..4 {
                    f[4 * n as usize + k] = T::of(r[4 * i + k]);
                }
            }
        }
    }
    fn pack_u<T: Real>(&mut self, part: &Part, u: &[T]) {
        for ((h, s), r) in part.halos.iter().zip(&mut self.send).zip(&mut self.recv) {
            s.clear();
            s.extend(h.send_halves.iter().map(|&x| u[x as usize].f64()));
            r.resize(h.recv_halves.len(), 0.0);
        }
    }
    fn unpack_u<T: Real>(&self, part: &Part, u: &mut [T]) {
        for (h, r) in part.halos.iter().zip(&self.recv) {
            for (&x, &v) in h.recv_halves.iter().zip(r) {
                u[x as usize] = T::of(v);
            }
        }
    }
}

/// Power-iteration estimate of ρ(K) over all ranks (no margin), the distributed form of
/// [`crate::backend::cpu::spectral_radius`]: the same start vector (the seeded generator jumped to
/// each free half's global position), the same local kernels, and global dot products.
/// Collective: every rank calls it.
pub fn spectral_radius<C: Comm>(
    comm: &C,
    part: &Part,
    dga: &Dga,
    iters: usize,
    seed: u64,
) -> Result<f64> {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15; // SplitMix64's increment (util::Rng)
    // σ does not change the stability limit (design note §12): the lossless K, as one process
    let ops = Operators::<f64>::lossless(dga, 1.0, false);
    let mut lay = Layout::new(part, dga);
    let mut x = vec![0.0; dga.n_half()];
    for v in 0..dga.meps.n_vertices() {
        let off = part.free_offset[v];
        for (i, &h) in dga.meps.halves(v).iter().enumerate() {
            let k = off + i as u64;
            x[h as usize] = Rng::new(seed.wrapping_add(k.wrapping_mul(GAMMA))).sym();
        }
    }
    lay.exchange_u(comm, part, &mut x)?;
    let mut f = vec![0.0; dga.n_dual()];
    let mut c = vec![0.0; dga.n_edges];
    let mut kx = vec![0.0; dga.n_half()];
    let mut lambda = 0.0;
    for _ in 0..iters {
        f.iter_mut().for_each(|v| *v = 0.0);
        kx.iter_mut().for_each(|v| *v = 0.0);
        primal_sel(&ops, &lay.tet, ANY, &x, &mut f);
        lay.exchange_f(comm, part, &mut f)?;
        circulations_sel(&ops, &lay.edge, ANY, &f, &mut c);
        vertex_blocks_sel(&ops, &lay.half, ANY, &c, &mut kx);
        kx.iter_mut().for_each(|v| *v = -*v);
        let mut mkx = vec![0.0; x.len()];
        dga.meps.apply_add(&kx, &mut mkx);
        let num: f64 = x.iter().zip(&mkx).map(|(a, b)| a * b).sum();
        let den = dga.meps.quad(&x);
        let nrm2 = kx.iter().map(|v| v * v).sum::<f64>();
        let g = comm.sum(&[num, den, nrm2])?;
        lambda = g[0] / g[1];
        let nrm = g[2].sqrt();
        if nrm == 0.0 {
            break;
        }
        lay.exchange_u(comm, part, &mut kx)?;
        x.iter_mut().zip(&kx).for_each(|(a, b)| *a = b / nrm);
    }
    Ok(lambda)
}

/// The stable time step over all ranks, as `solver::timestep::time_step`: `(Δt, ρ·margin)`.
pub fn time_step<C: Comm>(comm: &C, part: &Part, dga: &Dga, cfl: f64) -> Result<(f64, f64)> {
    if !(cfl > 0.0 && cfl <= 1.0) {
        return Err(Error::config("cfl", cfl, "must be in (0, 1]"));
    }
    let rho = spectral_radius(comm, part, dga, 60, 0x5eed)? * RHO_MARGIN;
    Ok((cfl * 2.0 / rho.sqrt(), rho))
}

/// One rank of a partitioned run. Implements [`Stepper`] with global semantics: `advance`
/// appends every probe's samples (gathered from their owners) on every rank, `energy` is the
/// global energy, `state`/`set_state` take the global vectors. All methods are collective.
pub struct PartStepper<T: Real, C: Comm> {
    comm: C,
    pub part: Arc<Part>,
    pub dga: Arc<Dga>,
    pub ops: Operators<T>,
    pub u: Vec<T>,
    pub f: Vec<T>,
    c: Vec<T>,
    /// Scratch of the loss step (one per owned lossy row).
    lt: Vec<T>,
    /// Dispersion: the owned entries' pole states and last changes ([`disp_poles`]).
    ds: Vec<T>,
    dg: Vec<T>,
    /// The magnetic PML: the owned layer tets' pole states and changes ([`mag_poles`]).
    ms: Vec<T>,
    mg: Vec<T>,
    lay: Layout,
    /// `(local half, g, phase)`: this rank's share of the source pattern.
    source: Vec<(u32, T, u8)>,
    wave: Option<Waveform>,
    probes: ProbeShare,
}

impl<T: Real, C: Comm> PartStepper<T, C> {
    /// A stepper from a zero state. `source` gives the global source (its `tet`, a global
    /// tet index, and `dir` are used; this rank computes its share of the pattern
    /// `Δt Meps⁻¹ j` from its own blocks); `probes` are the global probes (built on the
    /// global mesh). Collective.
    pub fn new(
        comm: C,
        part: Arc<Part>,
        dga: Arc<Dga>,
        dt: f64,
        source: Option<(&Source, Waveform)>,
        probes: &[Probe],
    ) -> Result<Self> {
        let ops = Operators::<T>::new(&dga, dt, false);
        let lay = Layout::new(&part, &dga);
        let pattern = scaled_pattern(&comm, &part, &dga, &ops, source.map(|s| s.0))?
            .into_iter()
            .map(|(h, x)| (h, x, lay.half[h as usize]))
            .collect();
        let probes = ProbeShare::new(&comm, &part, probes)?;
        Ok(PartStepper {
            u: vec![T::zero(); ops.n_half()],
            f: vec![T::zero(); ops.n_dual()],
            c: vec![T::zero(); ops.n_edges],
            lt: vec![T::zero(); ops.loss_h.len()],
            ds: vec![T::zero(); ops.disp.as_ref().map_or(0, |d| d.n_state)],
            dg: vec![T::zero(); ops.disp.as_ref().map_or(0, |d| d.n_g)],
            ms: vec![T::zero(); ops.mpml.as_ref().map_or(0, |m| m.n_state())],
            mg: vec![T::zero(); ops.mpml.as_ref().map_or(0, |m| m.n_g())],
            comm,
            part,
            dga,
            ops,
            lay,
            source: pattern,
            wave: source.map(|(_, w)| w),
            probes,
        })
    }

    /// The transport.
    pub fn comm(&self) -> &C {
        &self.comm
    }
    /// Global indices of the probes this rank records.
    pub fn owned_probes(&self) -> Vec<usize> {
        self.probes.owned(self.comm.rank())
    }
    /// Whether this rank holds part of the source pattern.
    pub fn has_source(&self) -> bool {
        !self.source.is_empty()
    }

    /// One leapfrog step with source amplitude `amp`, overlapping each halo exchange with the
    /// interior part of its half step. Collective.
    pub fn step(&mut self, amp: f64) -> Result<()> {
        let PartStepper {
            comm,
            part,
            ops,
            u,
            f,
            c,
            lt,
            ds,
            dg,
            ms,
            mg,
            lay,
            source,
            ..
        } = self;
        mag_correct(ops, mg, f);
        primal_sel(ops, &lay.tet, INTERFACE, u, f);
        let b = &mut lay.bufs;
        b.pack_f(part, f);
        comm.exchange(&b.peers, &b.send, &mut b.recv, &mut || {
            primal_sel(ops, &lay.tet, INTERIOR, u, f)
        })?;
        b.unpack_f(part, f);
        mag_poles(ops, f, ms, mg);
        // owned values only, before any dual update of this step (module doc, 2)
        loss_step(ops, u, lt);
        disp_correct(ops, dg, u);
        let a = T::of(amp);
        let dual = |phase: u8, u: &mut [T], c: &mut [T]| {
            circulations_sel(ops, &lay.edge, phase, f, c);
            vertex_blocks_sel(ops, &lay.half, phase, c, u);
            if amp != 0.0 {
                for &(h, g, p) in source.iter() {
                    if p == phase {
                        u[h as usize] -= a * g;
                    }
                }
            }
        };
        dual(INTERFACE, u, c);
        b.pack_u(part, u);
        comm.exchange(&b.peers, &b.send, &mut b.recv, &mut || dual(INTERIOR, u, c))?;
        b.unpack_u(part, u);
        disp_poles(ops, u, ds, dg);
        Ok(())
    }

    /// This rank's share of the energy: its vertices' `½ UᵀMeps U` and its tets'
    /// `½ F_oldᵀ Mmu F_new`, plus the energy of its dispersive entries' poles
    /// ([`crate::backend::cpu::aux_energy`], as one process adds it).
    pub fn local_energy(&self) -> f64 {
        let mut fnew = self.f.clone();
        primal_sel(&self.ops, &self.lay.tet, ANY, &self.u, &mut fnew);
        owned_energy(&self.part, &self.dga, &self.u, &self.f, &fnew)
            + aux_energy(&self.dga, &self.ops, &self.u, &self.ds)
    }

    /// This rank's dispersive state `(s, g)` in its own layout (empty without dispersion).
    pub fn local_disp_state(&self) -> (&[T], &[T]) {
        (&self.ds, &self.dg)
    }

    /// Owned values with their global positions: `(F: (global slot, value), U: ...)`.
    pub fn owned_state(&self) -> (Indexed, Indexed) {
        owned_values(&self.part, &self.dga, &self.u, &self.f)
    }

    /// Replaces the state by local vectors (this rank's slots, ghosts included).
    pub fn set_local_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        if u.len() != self.u.len() || f.len() != self.f.len() {
            return Err(Error::config(
                "state",
                format!("{}+{}", u.len(), f.len()),
                "length does not match the local mesh",
            ));
        }
        self.u.iter_mut().zip(u).for_each(|(a, &b)| *a = T::of(b));
        self.f.iter_mut().zip(f).for_each(|(a, &b)| *a = T::of(b));
        Ok(())
    }
}

/// This rank's share of the energy `W = ½ UᵀMeps U + ½ F_oldᵀ Mmu F_new` (design note §9):
/// its vertices' `½ UᵀMeps_v U` and its tets' `½ F_oldᵀ Mmu_n F_new`, from local vectors in
/// host layouts (`F[4n + k]`).
pub fn owned_energy<T: Real>(part: &Part, dga: &Dga, u: &[T], f: &[T], fnew: &[T]) -> f64 {
    crate::backend::cpu::energy_of_tets(dga, u, f, fnew, Some(&part.own_tet))
}

/// This rank's share of the source pattern at unit Δt, `Meps⁻¹ j` on its owned free
/// half-edges (local slots, non-zero entries): the global source's `tet` (a global tet
/// index) and `dir` are used, and the rank computes the pattern from its own blocks. Fails
/// (on every rank) when the source tet has no free edge. Collective.
pub fn source_pattern<C: Comm>(
    comm: &C,
    part: &Part,
    dga: &Dga,
    source: Option<&Source>,
) -> Result<Vec<(u32, f64)>> {
    Ok(source_parts(comm, part, dga, source)?.0)
}

/// Non-zero entries `(local half-edge slot, value)`.
type Sparse = Vec<(u32, f64)>;

/// [`source_pattern`] and this rank's local current `j` (local slots, non-zero entries: the
/// halves of the source tet's free edges, wherever their vertex is owned). Collective.
fn source_parts<C: Comm>(
    comm: &C,
    part: &Part,
    dga: &Dga,
    source: Option<&Source>,
) -> Result<(Sparse, Sparse)> {
    let mut pattern = Vec::new();
    let mut current = Vec::new();
    let mut has_edge = false;
    if let Some(s) = source
        && let Some(lt) = part.local_tet(s.tet)
    {
        let g = TetGeom::new(&part.mesh, lt);
        let mut j = vec![0.0; dga.n_half()];
        for l in 0..6 {
            let e = part.topo.tet_edges[lt][l] as usize;
            if !part.free_edge[e] {
                continue;
            }
            has_edge = true;
            let je = dot(s.dir, g.dual_face_area(l));
            j[2 * e] = je;
            j[2 * e + 1] = je;
        }
        let mut gv = vec![0.0; dga.n_half()];
        dga.meps_inv.apply_add(&j, &mut gv);
        let nonzero = |v: &[f64]| -> Vec<(u32, f64)> {
            v.iter()
                .enumerate()
                .filter(|(_, x)| **x != 0.0)
                .map(|(h, &x)| (h as u32, x))
                .collect()
        };
        pattern = nonzero(&gv);
        current = nonzero(&j);
    }
    if let Some(s) = source
        && !comm.any(has_edge)?
    {
        return Err(Error::config(
            "source point",
            format!("{:?}", s.point),
            "its tetrahedron has no interior edge: move the source away from the wall",
        ));
    }
    Ok((pattern, current))
}

/// This rank's share of the source pattern for the operators `ops` (their Δt folded in), as
/// [`crate::backend::cpu::CpuStepper`] takes it: where the source touches a lossy or
/// dispersive vertex anywhere (decided over all ranks), `Δt B j` with the operators' blocks
/// at every source vertex ([`Operators::source_pattern`]'s arithmetic); otherwise the unit
/// pattern `Meps⁻¹ j` times Δt. Collective.
pub fn scaled_pattern<T: Real, C: Comm>(
    comm: &C,
    part: &Part,
    dga: &Dga,
    ops: &Operators<T>,
    source: Option<&Source>,
) -> Result<Vec<(u32, T)>> {
    let (pattern, current) = source_parts(comm, part, dga, source)?;
    let free = |h: u32| ops.hrow[h as usize] != u64::MAX;
    let touches = current
        .iter()
        .any(|&(h, _)| free(h) && ops.special.binary_search(&ops.hvert[h as usize]).is_ok());
    if !comm.any(touches)? {
        return Ok(pattern
            .into_iter()
            .map(|(h, x)| (h, T::of(x * ops.dt)))
            .collect());
    }
    let j: std::collections::BTreeMap<u32, f64> = current.iter().copied().collect();
    let mut verts: Vec<u32> = current
        .iter()
        .filter(|&&(h, _)| free(h))
        .map(|&(h, _)| ops.hvert[h as usize])
        .collect();
    verts.sort_unstable();
    verts.dedup();
    let mut out = Vec::new();
    for v in verts {
        let (a, b) = (
            ops.vptr[v as usize] as usize,
            ops.vptr[v as usize + 1] as usize,
        );
        for i in a..b {
            let h = ops.vh[i];
            let row = ops.hrow[h as usize] as usize;
            let mut acc = 0.0;
            for (jj, k) in (a..b).enumerate() {
                if let Some(x) = j.get(&ops.vh[k]) {
                    acc += ops.block[row + jj].f64() * x;
                }
            }
            if acc != 0.0 {
                out.push((h, T::of(acc)));
            }
        }
    }
    Ok(out)
}

/// Which rank records which probe: each probe is recorded by the rank owning its tet, and
/// the samples are gathered so that every rank sees every probe.
#[derive(Clone, Debug)]
pub struct ProbeShare {
    /// Probes whose tet this rank owns, with local slots and tets.
    pub local: Vec<Probe>,
    /// Per global probe: (owning rank, index among that rank's probes).
    owner: Vec<(usize, usize)>,
    per_rank: Vec<usize>,
}

impl ProbeShare {
    /// From the global probes (built on the global mesh). Collective.
    pub fn new<C: Comm>(comm: &C, part: &Part, probes: &[Probe]) -> Result<Self> {
        let mut mine = Vec::new();
        let mut local = Vec::new();
        for (i, p) in probes.iter().enumerate() {
            if let Some(lt) = part.local_tet(p.tet)
                && part.own_tet[lt]
            {
                let mut q = p.clone();
                for s in q.slots.iter_mut() {
                    *s = part.local_half(*s as usize).ok_or_else(|| Error::Comm {
                        what: format!("probe {i} on rank {}", part.rank),
                        msg: "a half-edge of the probe's tet is not local".into(),
                    })? as u32;
                }
                q.tet = lt;
                mine.push(i as f64);
                local.push(q);
            }
        }
        let all = comm.all_gather(&mine)?;
        let mut owner = vec![(usize::MAX, 0); probes.len()];
        for (r, list) in all.iter().enumerate() {
            for (q, &i) in list.iter().enumerate() {
                owner[i as usize] = (r, q);
            }
        }
        if let Some(i) = owner.iter().position(|o| o.0 == usize::MAX) {
            return Err(Error::Comm {
                what: format!("probe {i}"),
                msg: "no rank owns its tetrahedron".into(),
            });
        }
        Ok(ProbeShare {
            local,
            owner,
            per_rank: all.iter().map(|l| l.len()).collect(),
        })
    }

    /// Global indices of the probes rank `rank` records.
    pub fn owned(&self, rank: usize) -> Vec<usize> {
        (0..self.owner.len())
            .filter(|&i| self.owner[i].0 == rank)
            .collect()
    }

    /// Appends to `samples` the `n` steps of every probe, in global order, from every
    /// rank's `local` samples (`n` steps of its own probes). Collective.
    pub fn merge<C: Comm>(
        &self,
        comm: &C,
        local: &[f64],
        n: usize,
        samples: &mut Vec<f64>,
    ) -> Result<()> {
        let all = comm.all_gather(local)?;
        for (r, v) in all.iter().enumerate() {
            if v.len() != n * 3 * self.per_rank[r] {
                return Err(Error::Comm {
                    what: format!("probe samples of rank {r}"),
                    msg: format!("{} values for {n} steps", v.len()),
                });
            }
        }
        for k in 0..n {
            for &(r, q) in &self.owner {
                let m = self.per_rank[r];
                let at = (k * m + q) * 3;
                samples.extend_from_slice(&all[r][at..at + 3]);
            }
        }
        Ok(())
    }
}

impl<T: Real, C: Comm> Stepper for PartStepper<T, C> {
    fn name(&self) -> String {
        format!(
            "cpu ({} threads) x {} ranks",
            rayon::current_num_threads(),
            self.comm.size()
        )
    }
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        let mut local = Vec::with_capacity(n * 3 * self.probes.local.len());
        for k in first..first + n {
            let a = self
                .wave
                .map(|w| w.at((k as f64 + 0.5) * self.ops.dt))
                .unwrap_or(0.0);
            self.step(a)?;
            for p in &self.probes.local {
                local.extend_from_slice(&p.sample(&self.u));
            }
        }
        self.probes.merge(&self.comm, &local, n, samples)
    }
    fn energy(&mut self) -> Result<f64> {
        // Decided together: a rank with no tets has no masses and must not stop alone.
        let lean = self.dga.n_tets > 0 && !self.dga.has_masses();
        if self.comm.any(lean)? {
            return Err(Error::config(
                "energy",
                "lean",
                "the operators were assembled without mass matrices",
            ));
        }
        Ok(self.comm.sum(&[self.local_energy()])?[0])
    }
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        gather_state(&self.comm, &self.part, self.owned_state(), None)?.ok_or_else(|| Error::Comm {
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
        gather_state(&self.comm, &self.part, self.owned_state(), Some(0))
    }
    /// Collective: the dispersive state of every rank in the single-process layout, on rank
    /// 0 ([`gather_aux`]), followed by the magnetic PML states ([`gather_mag`]); the other
    /// ranks get an empty vector.
    fn aux_state(&self) -> Result<Vec<f64>> {
        let mut aux = gather_aux(&self.comm, &self.part, &self.ops, &self.ds, &self.dg)?;
        if self.part.materials.pml.is_some() {
            aux.extend(gather_mag(
                &self.comm, &self.part, &self.ops, &self.ms, &self.mg,
            )?);
        }
        Ok(aux)
    }
    /// Collective: rank 0 passes the global dispersive and PML state (single-process
    /// layout), the others an empty one; every rank takes its entries ([`scatter_aux`],
    /// [`scatter_mag`]).
    fn set_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        let root = self.comm.rank() == 0;
        // the same on every rank: the global problem has a PML or not
        let pml = self.part.materials.pml.is_some();
        let n_mag = if pml {
            mag_len(&self.comm, &self.part, &self.ops)?
        } else {
            0
        };
        let (disp, mag) = aux.split_at(aux.len().saturating_sub(n_mag));
        let (s, g) = scatter_aux(&self.comm, &self.part, &self.ops, root.then_some(disp))?;
        if pml {
            let (s, g) = scatter_mag(&self.comm, &self.part, &self.ops, root.then_some(mag))?;
            self.ms = s;
            self.mg = g;
        }
        self.ds = s;
        self.dg = g;
        Ok(())
    }
}

/// Per flag, whether any rank passed true (the same answer on every rank). Collective.
pub fn agree<C: Comm>(comm: &C, flags: &[bool]) -> Result<Vec<bool>> {
    let x: Vec<f64> = flags.iter().map(|&b| b as u8 as f64).collect();
    Ok(comm.sum(&x)?.iter().map(|&s| s > 0.0).collect())
}
