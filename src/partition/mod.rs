//! Domain decomposition for several ranks (design note §14): METIS partition of the tets,
//! ownership, per-rank local parts, halo lists, and a stepper whose ranks exchange halos.
//!
//! **Ownership.** A partitioner ([`Scheme`]) splits the tets, weighted by a per-tet cost
//! ([`tet_costs`]): METIS k-way on the tets' dual graph (one graph vertex per tet, one graph
//! edge per interior face), or recursive coordinate bisection of their centroids ([`rcb`];
//! the default from [`RCB_FROM_TETS`] tets), or x slabs. Rank `r` owns the tets
//! of part `r`; a mesh vertex belongs to the rank of its lowest-numbered tet; a half-edge
//! `(e, v)` (a `U` slot) belongs to the rank of its vertex `v`; a half dual edge (an `F` slot)
//! to the rank of its tet.
//!
//! **Ghosts.** The primal update of a tet needs the full-edge sums `U_(e,a) + U_(e,b)` of its
//! 6 edges, so rank `r` receives the (free) halves of its tets' edges that sit at vertices of
//! other ranks. The dual update of a vertex needs `F` of every tet around it (the dual-face
//! circulation of an edge at `v` runs through tets that all contain `v`), so `r` receives the
//! `F` of the foreign tets around its vertices. Its local submesh is its tets plus those ghost
//! tets ([`part::Part`]).
//!
//! **One step** (leapfrog, design note §8), per rank:
//! `F -= P U` on owned tets (interface tets first) → exchange `F` (packed, one buffer per
//! neighbour, while the interior tets are updated) → circulations `c_e = (C̃ F)_e` of the free
//! edges at owned vertices and `U += Δt Meps_v⁻¹ c − w g` on owned halves (interface vertices
//! first) → exchange `U` (while the interior vertices are updated).
//!
//! **Exactness.** Local numbering keeps the global order (tets, vertices ascending by global
//! id; local edges are numbered by first appearance, which keeps the global order among the
//! edges at an owned vertex). Hence edge orientations, the summation order inside every mass
//! block, every circulation and every block row are those of the single-process assembly: in
//! f64 the partitioned time loop reproduces the single-process CPU run **bit for bit** (tested);
//! only the global sums (energy, power-iteration dot products) are added in another order.
//! The same holds with losses and dispersion: a part carries its tets' σ, σ* and dispersive
//! materials and the absorbing surfaces' conductances at its owned vertices (in the global
//! order), so `Msig_v`, the magnetic decay, the loss blocks `B̂_v`, the dispersive couplings
//! and the poles of its rows are the global ones ([`Part::assemble`]), and the CPU stepper
//! runs the loss step, the dispersive correction and the pole step on its owned vertices
//! ([`stepper`]'s module doc). Perfectly matched layers likewise: a part carries the
//! stretch terms of its tets with every stretch pole, so its electric pseudo-materials and
//! its owned layer tets' magnetic masses are the global ones, and the CPU stepper runs the
//! magnetic correction and pole step on its owned layer tets ([`pml`]). The OpenCL parts
//! ([`ClPartStepper`]) step them too, without the halo overlap (its module docs).
//!
//! **How ranks get their part.** Rank 0 reads the mesh, builds the topology, partitions it
//! and builds and sends each rank its part, one at a time ([`distribute_with`]); the other
//! ranks never hold the global mesh. The figures below are METIS's; RCB needs no dual graph
//! (20 bytes per tet of work space). At 500M tets that costs rank 0 about 15 GB for the mesh, about 40 GB for the
//! topology, about 11 GB for the METIS graph (32-bit indices: `4T` adjacency entries must stay
//! below 2^31, which 500M tets just meet; beyond that ParMETIS or 64-bit METIS is needed) and
//! METIS's own work space (several times the graph); see `results/scaling/README.md` for
//! measured times and the extrapolation.

pub(crate) mod comm;
pub(crate) mod device;
#[cfg(feature = "mpi")]
pub(crate) mod mpi;
pub(crate) mod part;
pub(crate) mod pml;
pub(crate) mod rcb;
pub(crate) mod scheme;
pub(crate) mod state;
pub(crate) mod stepper;
pub(crate) mod words;

pub use comm::{Comm, LocalComm};
pub use device::{ClPartStepper, HaloTiming};
#[cfg(feature = "mpi")]
pub use mpi::MpiComm;
pub use part::GlobalCounts;
pub use part::PartBuilder;
pub use part::{Halo, Part};
pub use scheme::{RCB_FROM_TETS, Scheme};
pub use stepper::PartStepper;
pub use stepper::{spectral_radius, time_step};

use crate::error::{Error, Result};
use crate::mesh::{Mesh, Topology};

/// A k-way partition of the tets and the vertex ownership that follows from it.
#[derive(Clone, Debug)]
pub struct Partition {
    pub n_parts: usize,
    /// Part (rank) of each tet.
    pub tet_part: Vec<u32>,
    /// Rank of each vertex: the part of its lowest-numbered tet.
    pub vertex_owner: Vec<u32>,
    /// Weight (cost) of each tet used by the partitioner.
    pub weights: Vec<u32>,
    /// Interior faces whose two tets lie in different parts (the dual graph's edge cut).
    pub cut_faces: u64,
}

/// Per-tet cost for the partitioner: the bytes one f64 step (factored dual form) moves for
/// the tet, after the byte model of design note §11. Primal: 24 coefficients, 6 edge ids,
/// 4 F read and written, 12 U gathered (376 B). Dual, per vertex `v` with `d` free halves
/// and `t_v` tets: the `d x d` block (8 d² B), `d` circulations read and `d` U read and
/// written (24 d B), and per free edge at `v` half of its circulation (2 signed gathers of
/// 12 B per tet around the edge, 8 B written), shared evenly among the `t_v` tets.
pub fn tet_costs(mesh: &Mesh, topo: &Topology) -> Vec<u32> {
    let nv = mesh.n_vertices();
    let ne = topo.n_edges();
    let mut tets_at_edge = vec![0u32; ne];
    for te in &topo.tet_edges {
        for &e in te {
            tets_at_edge[e as usize] += 1;
        }
    }
    let mut tets_at_vertex = vec![0u32; nv];
    for t in &mesh.tets {
        for &v in t {
            tets_at_vertex[v as usize] += 1;
        }
    }
    let vertex_cost: Vec<f64> = (0..nv)
        .map(|v| {
            let mut d = 0.0;
            let mut circ = 0.0;
            for &e in topo.edges_at(v) {
                if !topo.boundary_edge[e as usize] {
                    d += 1.0;
                    circ += 0.5 * (24.0 * tets_at_edge[e as usize] as f64 + 8.0);
                }
            }
            (8.0 * d * d + 24.0 * d + circ) / tets_at_vertex[v].max(1) as f64
        })
        .collect();
    mesh.tets
        .iter()
        .map(|t| {
            let c = 376.0 + t.iter().map(|&v| vertex_cost[v as usize]).sum::<f64>();
            c.round() as u32
        })
        .collect()
}

/// Weights rescaled for METIS, whose sums are 32-bit: mean `m = clamp(2^30 / T, 1, 64)`, each
/// at least 1 (relative resolution about `1/m`: 1.6% up to 16M tets, 10% at 100M, none at
/// 1G, where the partition is by tet count).
pub fn metis_weights(weights: &[u32]) -> Vec<metis::Idx> {
    let t = weights.len().max(1);
    let mean = weights.iter().map(|&w| w as f64).sum::<f64>() / t as f64;
    let m = ((1u64 << 30) as f64 / t as f64).clamp(1.0, 64.0);
    weights
        .iter()
        .map(|&w| {
            if mean > 0.0 {
                ((w as f64 / mean * m).round() as metis::Idx).max(1)
            } else {
                1
            }
        })
        .collect()
}

/// The tets' dual graph in METIS's CSR form: neighbours of tet `n` through interior faces are
/// `adjncy[xadj[n]..xadj[n+1]]`, ascending.
pub fn dual_graph(mesh: &Mesh, topo: &Topology) -> Result<(Vec<metis::Idx>, Vec<metis::Idx>)> {
    let t = mesh.n_tets();
    let interior = topo.n_faces() - topo.n_boundary_faces;
    if 2 * interior >= metis::Idx::MAX as usize || t >= metis::Idx::MAX as usize {
        return Err(Error::config(
            "partition",
            format!("{t} tets"),
            "the dual graph exceeds METIS's 32-bit indices (2^31 adjacency entries)",
        ));
    }
    let mut xadj = vec![0 as metis::Idx; t + 1];
    for ft in &topo.face_tets {
        if ft[1] != crate::mesh::topology::NONE {
            xadj[ft[0] as usize + 1] += 1;
            xadj[ft[1] as usize + 1] += 1;
        }
    }
    for n in 0..t {
        xadj[n + 1] += xadj[n];
    }
    let mut fill: Vec<metis::Idx> = xadj[..t].to_vec();
    let mut adjncy = vec![0 as metis::Idx; xadj[t] as usize];
    for ft in &topo.face_tets {
        if ft[1] != crate::mesh::topology::NONE {
            let (a, b) = (ft[0] as usize, ft[1] as usize);
            adjncy[fill[a] as usize] = b as metis::Idx;
            fill[a] += 1;
            adjncy[fill[b] as usize] = a as metis::Idx;
            fill[b] += 1;
        }
    }
    for n in 0..t {
        adjncy[xadj[n] as usize..xadj[n + 1] as usize].sort_unstable();
    }
    Ok((xadj, adjncy))
}

impl Partition {
    /// METIS k-way partition of the tets into `n_parts` parts, weighted by `weights` (one per
    /// tet; [`tet_costs`] when None). Deterministic (METIS's fixed seed).
    pub fn metis(
        mesh: &Mesh,
        topo: &Topology,
        weights: Option<Vec<u32>>,
        n_parts: usize,
    ) -> Result<Partition> {
        let t = mesh.n_tets();
        if n_parts == 0 || n_parts > t {
            return Err(Error::config(
                "ranks",
                n_parts,
                format!("must be between 1 and the number of tetrahedra ({t})"),
            ));
        }
        let weights = weights.unwrap_or_else(|| tet_costs(mesh, topo));
        if weights.len() != t {
            return Err(Error::config(
                "partition weights",
                weights.len(),
                format!("expected one per tetrahedron ({t})"),
            ));
        }
        let (xadj, adjncy) = dual_graph(mesh, topo)?;
        let vwgt = metis_weights(&weights);
        let mut part = vec![0 as metis::Idx; t];
        if n_parts > 1 {
            // METIS's random generator is process-global (GKlib): two partitions computed at
            // once (threads of one process, e.g. in-process ranks or parallel tests) would
            // interleave it and give different parts for the same mesh. One call at a time,
            // each with the same seed: the same mesh always gives the same partition.
            static METIS: std::sync::Mutex<()> = std::sync::Mutex::new(());
            let _one = METIS.lock().unwrap_or_else(|e| e.into_inner());
            metis::Graph::new(1, n_parts as metis::Idx, &xadj, &adjncy)
                .map_err(|e| Error::config("partition", n_parts, format!("METIS input: {e}")))?
                .set_vwgt(&vwgt)
                .set_option(metis::option::Seed(4321))
                .part_kway(&mut part)
                .map_err(|e| Error::config("partition", n_parts, format!("METIS: {e}")))?;
        }
        let tet_part: Vec<u32> = part.iter().map(|&p| p as u32).collect();
        Ok(Self::from_tet_parts(mesh, topo, tet_part, weights, n_parts))
    }

    /// Slabs: `n_parts` parts of (as nearly as possible) equal tet counts, cut across the x
    /// axis at tet centroids (ties broken by tet index). No graph partitioner: for boxes and
    /// other elongated meshes too large for METIS's time or memory on rank 0 (a box cut in
    /// P slabs has the smallest possible interface for P ≤ the cells along x; on other
    /// shapes METIS's cut is smaller). Unit weights.
    pub fn slabs(mesh: &Mesh, topo: &Topology, n_parts: usize) -> Result<Partition> {
        use rayon::prelude::*;
        if n_parts == 0 || n_parts > mesh.n_tets().max(1) {
            return Err(Error::config(
                "partition",
                n_parts,
                format!("cannot cut {} tets into that many slabs", mesh.n_tets()),
            ));
        }
        let mut order: Vec<(f64, u32)> = (0..mesh.n_tets())
            .into_par_iter()
            .map(|n| {
                (
                    mesh.tets[n]
                        .iter()
                        .map(|&v| mesh.nodes[v as usize][0])
                        .sum(),
                    n as u32,
                )
            })
            .collect();
        order.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let t = order.len();
        let mut tet_part = vec![0u32; t];
        for (i, &(_, n)) in order.iter().enumerate() {
            tet_part[n as usize] = (i * n_parts / t) as u32;
        }
        Ok(Self::from_tet_parts(
            mesh,
            topo,
            tet_part,
            vec![1; t],
            n_parts,
        ))
    }

    /// A partition from given tet parts (for tests and other partitioners).
    pub fn from_tet_parts(
        mesh: &Mesh,
        topo: &Topology,
        tet_part: Vec<u32>,
        weights: Vec<u32>,
        n_parts: usize,
    ) -> Partition {
        let mut vertex_owner = vec![u32::MAX; mesh.n_vertices()];
        for (n, t) in mesh.tets.iter().enumerate() {
            for &v in t {
                if vertex_owner[v as usize] == u32::MAX {
                    vertex_owner[v as usize] = tet_part[n];
                }
            }
        }
        let cut_faces = topo
            .face_tets
            .iter()
            .filter(|ft| {
                ft[1] != crate::mesh::topology::NONE
                    && tet_part[ft[0] as usize] != tet_part[ft[1] as usize]
            })
            .count() as u64;
        Partition {
            n_parts,
            tet_part,
            vertex_owner,
            weights,
            cut_faces,
        }
    }
}

/// What crosses the cut, as global ids: `f` lists `(from, to, tet)` (the 4 F of `tet`, owned
/// by `from`, are a ghost of `to`); `u` lists `(from, to, half-edge slot)` (a free half owned
/// by `from` that an edge of a tet of `to` needs). Both sorted.
#[derive(Clone, Debug, Default)]
pub struct HaloLists {
    pub f: Vec<(u32, u32, u32)>,
    pub u: Vec<(u32, u32, u32)>,
}

impl HaloLists {
    /// `fixed[e]`: edge `e`'s half-edges are not unknowns (PEC; `Walls::fixed_edges`), so
    /// they never travel.
    pub fn build(mesh: &Mesh, topo: &Topology, fixed: &[bool], p: &Partition) -> HaloLists {
        let mut f = Vec::new();
        let mut u = Vec::new();
        for (n, t) in mesh.tets.iter().enumerate() {
            let s = p.tet_part[n];
            let mut seen = [u32::MAX; 4];
            for (i, &v) in t.iter().enumerate() {
                let r = p.vertex_owner[v as usize];
                if r != s && !seen.contains(&r) {
                    f.push((s, r, n as u32));
                }
                seen[i] = r;
            }
            for &e in &topo.tet_edges[n] {
                if fixed[e as usize] {
                    continue;
                }
                for (bit, &v) in topo.edges[e as usize].iter().enumerate() {
                    let r = p.vertex_owner[v as usize];
                    if r != s {
                        u.push((r, s, 2 * e + bit as u32));
                    }
                }
            }
        }
        f.sort_unstable();
        u.sort_unstable();
        u.dedup();
        HaloLists { f, u }
    }
}

/// Partition statistics: balance, interface and halo volume.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Stats {
    /// The partitioner that ran (None: a partition given from outside).
    pub partitioner: Option<Scheme>,
    /// Its wall time on rank 0 (s), tet costs included.
    pub partition_s: f64,
    pub n_parts: usize,
    pub n_tets: usize,
    /// max / mean of the parts' summed tet weights.
    pub imbalance: f64,
    /// Interior faces cut by the partition.
    pub cut_faces: u64,
    /// Values sent per step over all ranks: 4 per ghost tet (F) plus 1 per ghost half (U).
    pub halo_values: u64,
    /// Most values one rank receives per step.
    pub max_recv_values: u64,
    /// Most values one rank sends per step.
    pub max_send_values: u64,
    /// Most neighbours of one rank.
    pub max_neighbours: usize,
    /// Halo bytes per step over all ranks at 8 B per value (f64).
    pub halo_bytes_f64: u64,
    /// max over ranks of (values received per step) / (values owned: 4 per tet plus the free
    /// halves at its vertices).
    pub max_halo_ratio: f64,
    /// mean over ranks of the same ratio.
    pub mean_halo_ratio: f64,
    /// max over ranks of (owned tets whose F is sent) / (owned tets): the part of the primal
    /// update that cannot overlap the exchange.
    pub max_interface_fraction: f64,
}

impl Stats {
    pub fn compute(
        mesh: &Mesh,
        topo: &Topology,
        fixed: &[bool],
        p: &Partition,
        h: &HaloLists,
    ) -> Stats {
        let np = p.n_parts;
        let mut weight = vec![0u64; np];
        let mut owned_values = vec![0u64; np];
        for (n, &r) in p.tet_part.iter().enumerate() {
            weight[r as usize] += p.weights[n] as u64;
            owned_values[r as usize] += 4;
        }
        for (e, ends) in topo.edges.iter().enumerate() {
            if !fixed[e] {
                for &v in ends {
                    owned_values[p.vertex_owner[v as usize] as usize] += 1;
                }
            }
        }
        let mut send = vec![0u64; np];
        let mut recv = vec![0u64; np];
        let mut peers: Vec<Vec<u32>> = vec![Vec::new(); np];
        let mut iface = vec![0u64; np];
        for &(a, b, _) in &h.f {
            send[a as usize] += 4;
            recv[b as usize] += 4;
            peers[a as usize].push(b);
            peers[b as usize].push(a);
        }
        // interface tets: distinct (from, tet)
        let mut sent_tets: Vec<(u32, u32)> = h.f.iter().map(|&(a, _, n)| (a, n)).collect();
        sent_tets.sort_unstable();
        sent_tets.dedup();
        for &(a, _) in &sent_tets {
            iface[a as usize] += 1;
        }
        let mut owned_tets = vec![0u64; np];
        for &r in &p.tet_part {
            owned_tets[r as usize] += 1;
        }
        for &(a, b, _) in &h.u {
            send[a as usize] += 1;
            recv[b as usize] += 1;
            peers[a as usize].push(b);
            peers[b as usize].push(a);
        }
        for q in peers.iter_mut() {
            q.sort_unstable();
            q.dedup();
        }
        let mean_w = weight.iter().sum::<u64>() as f64 / np as f64;
        let ratios: Vec<f64> = (0..np)
            .map(|r| recv[r] as f64 / owned_values[r].max(1) as f64)
            .collect();
        let halo_values = send.iter().sum::<u64>();
        Stats {
            partitioner: None,
            partition_s: 0.0,
            n_parts: np,
            n_tets: mesh.n_tets(),
            imbalance: *weight.iter().max().unwrap_or(&0) as f64 / mean_w,
            cut_faces: p.cut_faces,
            halo_values,
            max_recv_values: *recv.iter().max().unwrap_or(&0),
            max_send_values: *send.iter().max().unwrap_or(&0),
            max_neighbours: peers.iter().map(|q| q.len()).max().unwrap_or(0),
            halo_bytes_f64: 8 * halo_values,
            max_halo_ratio: ratios.iter().cloned().fold(0.0, f64::max),
            mean_halo_ratio: ratios.iter().sum::<f64>() / np as f64,
            max_interface_fraction: (0..np)
                .map(|r| iface[r] as f64 / owned_tets[r].max(1) as f64)
                .fold(0.0, f64::max),
        }
    }
}

/// Rank 0 (which alone passes the global mesh, topology, media and the fixed (PEC) edge
/// flags, `Walls::fixed_edges`) partitions the mesh
/// into `comm.size()` parts with METIS and sends each rank its part; every rank returns its
/// own part. The other ranks pass None and never see the global mesh. Also returns, on
/// rank 0, the partition statistics.
pub fn distribute<C: Comm>(
    comm: &C,
    global: Option<(&Mesh, &Topology, &crate::problem::Media, &[bool])>,
) -> Result<(Part, Option<Stats>)> {
    distribute_with(comm, global, Some(Scheme::Metis))
}

/// Parts rank 0 builds at once in [`distribute_with`] (in parallel; each is sent once
/// built): rank 0 holds at most this many other ranks' parts (their meshes and halo lists,
/// not operators) besides the global mesh.
pub const BUILD_AT_ONCE: usize = 4;

/// [`distribute`] with the partitioner `scheme` (None: [`Scheme::auto`] of the mesh's size;
/// rank 0's choice counts). Rank 0 builds [`BUILD_AT_ONCE`] parts at a time, in parallel,
/// and sends them in rank order.
pub fn distribute_with<C: Comm>(
    comm: &C,
    global: Option<(&Mesh, &Topology, &crate::problem::Media, &[bool])>,
    scheme: Option<Scheme>,
) -> Result<(Part, Option<Stats>)> {
    distribute_with_surface(
        comm,
        global.map(|(m, t, mat, fixed)| (m, t, mat, fixed, &[][..])),
        scheme,
    )
}

/// What rank 0 passes to [`distribute_with_surface`]: the global mesh, topology, media,
/// fixed (PEC) edge flags and surface conductances.
pub type GlobalProblem<'a> = (
    &'a Mesh,
    &'a Topology,
    &'a crate::problem::Media,
    &'a [bool],
    &'a [crate::dga::SurfaceEntry],
);

/// [`distribute_with`] for a problem with surface conductances (absorbing boundaries):
/// rank 0 also passes the global entries ([`crate::dga::surface_conductance`] of the
/// global mesh), and each part gets those of its owned vertices ([`Part::surface`]).
pub fn distribute_with_surface<C: Comm>(
    comm: &C,
    global: Option<GlobalProblem<'_>>,
    scheme: Option<Scheme>,
) -> Result<(Part, Option<Stats>)> {
    let np = comm.size();
    if comm.rank() == 0 {
        let Some((mesh, topo, mat, fixed, surface)) = global else {
            return Err(Error::config(
                "distribute",
                "rank 0",
                "rank 0 must pass the global mesh",
            ));
        };
        let scheme = scheme.unwrap_or_else(|| Scheme::auto(mesh.n_tets()));
        let t0 = std::time::Instant::now();
        let p = Partition::with(scheme, mesh, topo, np);
        let partition_s = t0.elapsed().as_secs_f64();
        // Tell the other ranks whether a part follows (an error on rank 0 must not hang them).
        let p = match p {
            Ok(p) => p,
            Err(e) => {
                for r in 1..np {
                    comm.send_words(r, &[])?;
                }
                return Err(e);
            }
        };
        let halos = HaloLists::build(mesh, topo, fixed, &p);
        let stats = Stats {
            partitioner: Some(scheme),
            partition_s,
            ..Stats::compute(mesh, topo, fixed, &p, &halos)
        };
        let builder =
            part::PartBuilder::new(mesh, topo, mat, fixed, &p, &halos).with_surface(surface);
        // up to BUILD_AT_ONCE parts are built at a time, in parallel, then sent in rank order
        let mut r = 1;
        while r < np {
            let hi = (r + BUILD_AT_ONCE).min(np);
            use rayon::prelude::*;
            let words: Vec<Result<Vec<u64>>> = (r..hi)
                .into_par_iter()
                .map(|q| Ok(builder.build(q)?.to_words()))
                .collect();
            for (q, w) in (r..hi).zip(words) {
                comm.send_words(q, &w?)?;
            }
            r = hi;
        }
        Ok((builder.build(0)?, Some(stats)))
    } else {
        let words = comm.recv_words(0)?;
        if words.is_empty() {
            return Err(Error::RankZeroFailed {
                what: "partitioning the mesh".into(),
            });
        }
        Ok((Part::from_words(&words)?, None))
    }
}

/// Rank 0's source (located on the global mesh: its `point`, `dir` and global `tet`) and
/// probes (built on the global mesh), sent to every rank. Other ranks pass None. Collective.
pub fn broadcast_setup<C: Comm>(
    comm: &C,
    setup: Option<(
        Option<&crate::dga::excitation::Source>,
        &[crate::dga::excitation::Probe],
    )>,
) -> Result<(
    Option<crate::dga::excitation::Source>,
    Vec<crate::dga::excitation::Probe>,
)> {
    let mut w: Vec<u64> = Vec::new();
    if let Some((src, probes)) = setup {
        match src {
            Some(s) => {
                w.push(1);
                w.extend(s.point.iter().chain(&s.dir).map(|x| x.to_bits()));
                w.push(s.tet as u64);
            }
            None => w.push(0),
        }
        w.push(probes.len() as u64);
        for p in probes {
            w.extend(p.point.iter().map(|x| x.to_bits()));
            w.push(p.tet as u64);
            w.extend(p.slots.iter().map(|&s| s as u64));
            w.extend(p.w.iter().flatten().map(|x| x.to_bits()));
        }
    }
    let w = comm.broadcast_words(0, w)?;
    let bad = || Error::Comm {
        what: "receiving the source and probes".into(),
        msg: "malformed message".into(),
    };
    let mut it = w.into_iter();
    let mut next = || it.next().ok_or_else(bad);
    let f = |x: u64| f64::from_bits(x);
    let src = if next()? == 1 {
        let v: Vec<f64> = (0..6).map(|_| next().map(f)).collect::<Result<_>>()?;
        Some(crate::dga::excitation::Source {
            point: [v[0], v[1], v[2]],
            dir: [v[3], v[4], v[5]],
            tet: next()? as usize,
            edges: Vec::new(),
            pattern: Vec::new(),
            current: Vec::new(),
        })
    } else {
        None
    };
    let np = next()? as usize;
    let mut probes = Vec::new();
    for _ in 0..np {
        let point = [f(next()?), f(next()?), f(next()?)];
        let tet = next()? as usize;
        let slots = [next()? as u32, next()? as u32, next()? as u32];
        let mut w = [[0.0; 3]; 3];
        for r in w.iter_mut() {
            for x in r.iter_mut() {
                *x = f(next()?);
            }
        }
        probes.push(crate::dga::excitation::Probe {
            point,
            tet,
            slots,
            w,
        });
    }
    Ok((src, probes))
}
