//! One rank's part of the mesh: its tets and the ghost tets around its vertices, in a local
//! numbering that keeps the global order (so orientations and summation orders are those of
//! the single-process assembly), with the maps back to global ids and the halo lists.

use super::words::{Reader, Words};
use super::{HaloLists, Partition};
use crate::dga::Dga;
use crate::dga::surface::SurfaceEntry;
use crate::error::Result;
use crate::mesh::{Mesh, Topology};
use crate::problem::Media;
use crate::problem::dispersion::Pole;

/// What rank `rank` exchanges with one neighbour `peer` each step. Lists are in ascending
/// global order on both sides, so the `k`-th value sent by one rank is the `k`-th received by
/// the other.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Halo {
    pub peer: usize,
    /// Local ids of owned tets whose 4 F values `peer` needs.
    pub send_tets: Vec<u32>,
    /// Local ids of `peer`'s tets whose F this rank receives (its ghost tets).
    pub recv_tets: Vec<u32>,
    /// Local slots of owned free half-edges whose U `peer` needs.
    pub send_halves: Vec<u32>,
    /// Local slots of `peer`'s half-edges whose U this rank receives.
    pub recv_halves: Vec<u32>,
}

/// Global sizes, for gathering states and checks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GlobalCounts {
    pub n_tets: usize,
    pub n_vertices: usize,
    pub n_edges: usize,
    /// Free half-edges (U unknowns under PEC).
    pub n_free_half: usize,
}

/// A rank's local submesh and everything it needs to step its share of the global problem.
#[derive(Clone, Debug)]
pub struct Part {
    pub rank: usize,
    pub n_parts: usize,
    pub global: GlobalCounts,
    /// Owned and ghost tets, ascending global id; vertices ascending global id.
    pub mesh: Mesh,
    /// Topology of the local mesh (rebuilt, not sent).
    pub topo: Topology,
    /// The media of the local tets (ε, μ, σ, σ*, dispersive material; the poles of every
    /// dispersive material of the global problem, in its numbering; the PML terms of the
    /// local tets with every stretch pole of the global problem).
    pub materials: Media,
    /// ε∞ of each dispersive material as the global assembly takes it (its first tet's ε),
    /// which a part without that material's first tet could not know.
    pub eps_inf: Vec<f64>,
    /// The surface conductances (absorbing boundaries, [`crate::dga::surface`]) at the owned
    /// vertices, in local numbering and in the global order of the entries, so that
    /// `Msig_v` sums them as the single-process assembly does.
    pub surface: Vec<SurfaceEntry>,
    pub tet_global: Vec<u32>,
    pub vertex_global: Vec<u32>,
    pub edge_global: Vec<u32>,
    pub own_tet: Vec<bool>,
    pub own_vertex: Vec<bool>,
    /// The global free flags of the local edges (not fixed by a PEC wall; an edge on the
    /// part's cut is not a wall).
    pub free_edge: Vec<bool>,
    /// Per owned vertex, the position of its first free half in the global order of free
    /// halves (vertex ascending, then edge ascending: the order of `Dga::meps.h`); u64::MAX
    /// for the others. Lets the power iteration start from the single-process vector.
    pub free_offset: Vec<u64>,
    pub halos: Vec<Halo>,
}

impl Part {
    pub fn n_owned_tets(&self) -> usize {
        self.own_tet.iter().filter(|&&o| o).count()
    }
    pub fn n_owned_vertices(&self) -> usize {
        self.own_vertex.iter().filter(|&&o| o).count()
    }
    /// Local id of a global tet, if this part holds it.
    pub fn local_tet(&self, global: usize) -> Option<usize> {
        self.tet_global.binary_search(&(global as u32)).ok()
    }
    /// Local id of a global vertex, if this part holds it.
    pub fn local_vertex(&self, global: usize) -> Option<usize> {
        self.vertex_global.binary_search(&(global as u32)).ok()
    }
    /// Local slot of a global half-edge slot `2e + bit`, if this part holds edge `e`
    /// (a linear search over the local edges: for set-up paths such as probes).
    pub fn local_half(&self, global_slot: usize) -> Option<usize> {
        let e = (global_slot >> 1) as u32;
        let l = self.edge_global.iter().position(|&g| g == e)?;
        Some(2 * l + (global_slot & 1))
    }

    /// The local operators: `Mmu_n`, `Mmu_n⁻¹ C_n` for owned tets only, `Meps_v` for owned
    /// vertices only, over the free half-edges of the global PEC flags. No rank holds the
    /// whole operator: each row of the global operator is assembled on exactly one rank.
    /// Conduction (`Msig_v`, with the absorbing surfaces' conductances added as one process
    /// adds them), magnetic loss and dispersion are assembled for the same rows, and so
    /// are the perfectly matched layers: the electric pseudo-materials at the owned
    /// vertices, the magnetic masses of the owned layer tets ([`super::pml`]).
    pub fn assemble(&self) -> Result<Dga> {
        let mut d = Dga::assemble_rows(
            &self.mesh,
            &self.topo,
            &self.materials,
            false,
            self.free_edge.clone(),
            Some(&self.own_tet),
            Some(&self.own_vertex),
        )?;
        d.add_surface(&self.surface);
        if let Some(ds) = d.disp.as_mut() {
            // the real materials only (the stretch poles' pseudo-materials follow them)
            let real = ds.n_media;
            for (x, &e) in ds.eps_inf.iter_mut().take(real).zip(&self.eps_inf) {
                *x = e;
            }
        }
        Ok(d)
    }

    /// Flat encoding for sending a part to its rank (one u64 word per value; f64 by bits).
    /// The local topology is not sent: [`Part::from_words`] rebuilds it (deterministically,
    /// the same numbering) and checks it against the edge count.
    pub fn to_words(&self) -> Vec<u64> {
        let mut w = Words::default();
        w.put(MAGIC);
        w.put(self.rank as u64);
        w.put(self.n_parts as u64);
        w.put(self.global.n_tets as u64);
        w.put(self.global.n_vertices as u64);
        w.put(self.global.n_edges as u64);
        w.put(self.global.n_free_half as u64);
        w.put_str(&self.mesh.source);
        w.put_iter(self.mesh.nodes.iter().flatten().map(|x| x.to_bits()));
        w.put_iter(self.mesh.tets.iter().flatten().map(|&x| x as u64));
        w.put_iter(self.mesh.tet_phys.iter().map(|&x| x as i64 as u64));
        w.put_iter(self.mesh.tet_ids.iter().copied());
        w.put_iter(self.materials.eps.iter().map(|x| x.to_bits()));
        w.put_iter(self.materials.mu.iter().map(|x| x.to_bits()));
        w.put_iter(self.tet_global.iter().map(|&x| x as u64));
        w.put_iter(self.vertex_global.iter().map(|&x| x as u64));
        w.put_iter(self.edge_global.iter().map(|&x| x as u64));
        w.put_iter(self.own_tet.iter().map(|&x| x as u64));
        w.put_iter(self.own_vertex.iter().map(|&x| x as u64));
        w.put_iter(self.free_edge.iter().map(|&x| x as u64));
        w.put_iter(self.free_offset.iter().copied());
        put_losses(&mut w, &self.materials, &self.eps_inf, &self.surface);
        super::pml::put(&mut w, self.materials.pml.as_ref());
        w.put(self.halos.len() as u64);
        for h in &self.halos {
            w.put(h.peer as u64);
            for l in [&h.send_tets, &h.recv_tets, &h.send_halves, &h.recv_halves] {
                w.put_iter(l.iter().map(|&x| x as u64));
            }
        }
        w.put(MAGIC);
        w.into_inner()
    }

    /// Decodes [`Part::to_words`]; a truncated or inconsistent message is an error.
    pub fn from_words(words: &[u64]) -> Result<Part> {
        let mut r = Reader::new(words);
        if r.get()? != MAGIC {
            return Err(r.bad("not a part message"));
        }
        let rank = r.get()? as usize;
        let n_parts = r.get()? as usize;
        let global = GlobalCounts {
            n_tets: r.get()? as usize,
            n_vertices: r.get()? as usize,
            n_edges: r.get()? as usize,
            n_free_half: r.get()? as usize,
        };
        let source = r.get_str()?;
        let xs = r.get_vec()?;
        if xs.len() % 3 != 0 {
            return Err(r.bad("node coordinates are not triples"));
        }
        let nodes: Vec<[f64; 3]> = xs
            .chunks(3)
            .map(|c| [0, 1, 2].map(|k| f64::from_bits(c[k])))
            .collect();
        let tv = r.get_vec()?;
        if tv.len() % 4 != 0 || tv.iter().any(|&v| v as usize >= nodes.len()) {
            return Err(r.bad("tetrahedra do not refer to the part's nodes"));
        }
        let tets: Vec<[u32; 4]> = tv
            .chunks(4)
            .map(|c| [0, 1, 2, 3].map(|k| c[k] as u32))
            .collect();
        let nt = tets.len();
        let tet_phys: Vec<i32> = r.get_vec()?.iter().map(|&x| x as i64 as i32).collect();
        let tet_ids = r.get_vec()?.to_vec();
        let eps: Vec<f64> = r.get_vec()?.iter().map(|&x| f64::from_bits(x)).collect();
        let mu: Vec<f64> = r.get_vec()?.iter().map(|&x| f64::from_bits(x)).collect();
        let u32s = |v: &[u64]| v.iter().map(|&x| x as u32).collect::<Vec<u32>>();
        let bools = |v: &[u64]| v.iter().map(|&x| x != 0).collect::<Vec<bool>>();
        let tet_global = u32s(r.get_vec()?);
        let vertex_global = u32s(r.get_vec()?);
        let edge_global = u32s(r.get_vec()?);
        let own_tet = bools(r.get_vec()?);
        let own_vertex = bools(r.get_vec()?);
        let free_edge = bools(r.get_vec()?);
        let free_offset = r.get_vec()?.to_vec();
        let (sigma, sigma_m, disp, poles, eps_inf, surface) = get_losses(&mut r)?;
        let pml = super::pml::get(&mut r, nt)?;
        let nh = r.get()? as usize;
        let mut halos = Vec::with_capacity(nh.min(words.len()));
        for _ in 0..nh {
            let peer = r.get()? as usize;
            halos.push(Halo {
                peer,
                send_tets: u32s(r.get_vec()?),
                recv_tets: u32s(r.get_vec()?),
                send_halves: u32s(r.get_vec()?),
                recv_halves: u32s(r.get_vec()?),
            });
        }
        if r.get()? != MAGIC {
            return Err(r.bad("trailing marker missing"));
        }
        let per_tet = [tet_phys.len(), tet_ids.len(), eps.len(), mu.len()];
        let optional = [sigma.len(), sigma_m.len(), disp.len()];
        if per_tet.iter().any(|&l| l != nt)
            || optional.iter().any(|&l| l != 0 && l != nt)
            || disp.iter().any(|&k| k as usize > poles.len())
            || eps_inf.len() != poles.len()
            || tet_global.len() != nt
            || own_tet.len() != nt
            || vertex_global.len() != nodes.len()
            || own_vertex.len() != nodes.len()
            || free_offset.len() != nodes.len()
        {
            return Err(r.bad("array lengths disagree"));
        }
        let mesh = Mesh {
            source,
            nodes,
            tets,
            tet_phys,
            tet_ids,
            // materials arrive resolved (eps, mu), as do boundary conditions
            tet_groups: Vec::new(),
            physical_names: Vec::new(),
            surfaces: Vec::new(),
            dropped_triangles: Vec::new(),
            ignored: Vec::new(),
            reoriented: 0,
        };
        let topo = Topology::build(&mesh)?;
        if topo.n_edges() != edge_global.len() || free_edge.len() != edge_global.len() {
            return Err(r.bad("the rebuilt local topology does not match the sender's"));
        }
        let n_local_half = 2 * edge_global.len();
        let nl = mesh.n_tets();
        if surface.iter().any(|e| {
            e.vertex as usize >= mesh.n_vertices()
                || e.i as usize >= n_local_half
                || e.j as usize >= n_local_half
        }) {
            return Err(r.bad("surface entry out of range"));
        }
        for h in &halos {
            if h.send_tets
                .iter()
                .chain(&h.recv_tets)
                .any(|&n| n as usize >= nl)
                || h.send_halves
                    .iter()
                    .chain(&h.recv_halves)
                    .any(|&s| s as usize >= n_local_half)
                || h.peer >= n_parts
            {
                return Err(r.bad("halo list out of range"));
            }
        }
        Ok(Part {
            rank,
            n_parts,
            global,
            mesh,
            topo,
            materials: Media {
                sigma,
                sigma_m,
                disp,
                poles,
                pml,
                ..Media::lossless(eps, mu)
            },
            eps_inf,
            surface,
            tet_global,
            vertex_global,
            edge_global,
            own_tet,
            own_vertex,
            free_edge,
            free_offset,
            halos,
        })
    }
}

const MAGIC: u64 = 0x6467_6174_6450_4152; // "dgatdPAR"

/// The losses and dispersion of a part's message: σ, σ*, the dispersive material of each
/// tet, the poles (name, then per pole a kind and three values), ε∞, the surface entries.
fn put_losses(w: &mut Words, m: &Media, eps_inf: &[f64], surface: &[SurfaceEntry]) {
    w.put_iter(m.sigma.iter().map(|x| x.to_bits()));
    w.put_iter(m.sigma_m.iter().map(|x| x.to_bits()));
    w.put_iter(m.disp.iter().map(|&k| k as u64));
    w.put(m.poles.len() as u64);
    for (name, poles) in &m.poles {
        w.put_str(name);
        w.put_iter(poles.iter().flat_map(|p| {
            let (kind, v) = match *p {
                Pole::Debye { delta_eps, tau } => (0, [delta_eps, tau, 0.0]),
                Pole::Drude { f_p, gamma } => (1, [f_p, gamma, 0.0]),
                Pole::Lorentz {
                    delta_eps,
                    f_0,
                    delta,
                } => (2, [delta_eps, f_0, delta]),
            };
            std::iter::once(kind).chain(v.map(f64::to_bits))
        }));
    }
    w.put_iter(eps_inf.iter().map(|x| x.to_bits()));
    w.put_iter(
        surface
            .iter()
            .flat_map(|e| [e.vertex as u64, e.i as u64, e.j as u64, e.value.to_bits()]),
    );
}

/// What [`get_losses`] reads.
type Losses = (
    Vec<f64>,
    Vec<f64>,
    Vec<u16>,
    Vec<(String, Vec<Pole>)>,
    Vec<f64>,
    Vec<SurfaceEntry>,
);

/// Decodes [`put_losses`].
fn get_losses(r: &mut Reader) -> Result<Losses> {
    let f64s = |v: &[u64]| v.iter().map(|&x| f64::from_bits(x)).collect::<Vec<f64>>();
    let sigma = f64s(r.get_vec()?);
    let sigma_m = f64s(r.get_vec()?);
    let disp = r.get_vec()?;
    if disp.iter().any(|&k| k > u16::MAX as u64) {
        return Err(r.bad("dispersive material out of range"));
    }
    let disp = disp.iter().map(|&k| k as u16).collect();
    let nm = r.get()? as usize;
    let mut poles = Vec::with_capacity(nm.min(r.words()));
    for _ in 0..nm {
        let name = r.get_str()?;
        let v = r.get_vec()?;
        if v.len() % 4 != 0 {
            return Err(r.bad("poles are not kind and three values"));
        }
        let mut ps = Vec::with_capacity(v.len() / 4);
        for c in v.chunks(4) {
            let [a, b, d] = [c[1], c[2], c[3]].map(f64::from_bits);
            ps.push(match c[0] {
                0 => Pole::Debye {
                    delta_eps: a,
                    tau: b,
                },
                1 => Pole::Drude { f_p: a, gamma: b },
                2 => Pole::Lorentz {
                    delta_eps: a,
                    f_0: b,
                    delta: d,
                },
                _ => return Err(r.bad("unknown pole kind")),
            });
        }
        poles.push((name, ps));
    }
    let eps_inf = f64s(r.get_vec()?);
    let s = r.get_vec()?;
    if s.len() % 4 != 0 {
        return Err(r.bad("surface entries are not quadruples"));
    }
    let surface = s
        .chunks(4)
        .map(|c| SurfaceEntry {
            vertex: c[0] as u32,
            i: c[1] as u32,
            j: c[2] as u32,
            value: f64::from_bits(c[3]),
        })
        .collect();
    Ok((sigma, sigma_m, disp, poles, eps_inf, surface))
}

/// Builds the parts of a partition from the global mesh (on rank 0).
pub struct PartBuilder<'a> {
    mesh: &'a Mesh,
    topo: &'a Topology,
    mat: &'a Media,
    fixed: &'a [bool],
    p: &'a Partition,
    /// vertex -> tets (ascending), CSR.
    vt_ptr: Vec<usize>,
    vt: Vec<u32>,
    /// Per rank: owned tets and owned vertices (ascending).
    owned_tets: Vec<Vec<u32>>,
    owned_vertices: Vec<Vec<u32>>,
    /// Per rank: (peer, id) sent and received, F (tets) and U (global half slots).
    f_send: Vec<Vec<(u32, u32)>>,
    f_recv: Vec<Vec<(u32, u32)>>,
    u_send: Vec<Vec<(u32, u32)>>,
    u_recv: Vec<Vec<(u32, u32)>>,
    /// Per global vertex: offset of its first free half in the global free-half order.
    free_offset: Vec<u64>,
    n_free_half: usize,
    /// Per rank: the global surface entries at its owned vertices, in global order.
    surface: Vec<Vec<SurfaceEntry>>,
    /// ε∞ of each dispersive material (its first tet's ε, as [`Dga`]'s assembly takes it).
    eps_inf: Vec<f64>,
}

impl<'a> PartBuilder<'a> {
    pub fn new(
        mesh: &'a Mesh,
        topo: &'a Topology,
        mat: &'a Media,
        fixed: &'a [bool],
        p: &'a Partition,
        halos: &HaloLists,
    ) -> Self {
        let nv = mesh.n_vertices();
        let np = p.n_parts;
        let mut vt_ptr = vec![0usize; nv + 1];
        for t in &mesh.tets {
            for &v in t {
                vt_ptr[v as usize + 1] += 1;
            }
        }
        for v in 0..nv {
            vt_ptr[v + 1] += vt_ptr[v];
        }
        let mut fill = vt_ptr.clone();
        let mut vt = vec![0u32; vt_ptr[nv]];
        for (n, t) in mesh.tets.iter().enumerate() {
            for &v in t {
                vt[fill[v as usize]] = n as u32;
                fill[v as usize] += 1;
            }
        }
        let mut owned_tets = vec![Vec::new(); np];
        for (n, &r) in p.tet_part.iter().enumerate() {
            owned_tets[r as usize].push(n as u32);
        }
        let mut owned_vertices = vec![Vec::new(); np];
        for (v, &r) in p.vertex_owner.iter().enumerate() {
            owned_vertices[r as usize].push(v as u32);
        }
        let mut f_send = vec![Vec::new(); np];
        let mut f_recv = vec![Vec::new(); np];
        for &(a, b, n) in &halos.f {
            f_send[a as usize].push((b, n));
            f_recv[b as usize].push((a, n));
        }
        let mut u_send = vec![Vec::new(); np];
        let mut u_recv = vec![Vec::new(); np];
        for &(a, b, s) in &halos.u {
            u_send[a as usize].push((b, s));
            u_recv[b as usize].push((a, s));
        }
        for l in f_recv.iter_mut().chain(u_recv.iter_mut()) {
            l.sort_unstable();
        }
        let mut free_offset = vec![0u64; nv + 1];
        for v in 0..nv {
            let d = topo
                .edges_at(v)
                .iter()
                .filter(|&&e| !fixed[e as usize])
                .count();
            free_offset[v + 1] = free_offset[v] + d as u64;
        }
        let n_free_half = free_offset[nv] as usize;
        let eps_inf = (1..=mat.poles.len())
            .map(|k| {
                mat.disp
                    .iter()
                    .position(|&d| d as usize == k)
                    .map_or(1.0, |n| mat.eps[n])
            })
            .collect();
        PartBuilder {
            mesh,
            topo,
            mat,
            fixed,
            p,
            vt_ptr,
            vt,
            owned_tets,
            owned_vertices,
            f_send,
            f_recv,
            u_send,
            u_recv,
            free_offset,
            n_free_half,
            surface: vec![Vec::new(); np],
            eps_inf,
        }
    }

    /// The surface conductances of the global problem (absorbing boundaries:
    /// [`crate::dga::surface_conductance`] of the global mesh, in its order), each given to
    /// the rank owning its vertex.
    pub fn with_surface(mut self, entries: &[SurfaceEntry]) -> Self {
        for e in entries {
            let r = self.p.vertex_owner[e.vertex as usize] as usize;
            self.surface[r].push(*e);
        }
        self
    }

    /// The part of rank `r`.
    pub fn build(&self, r: usize) -> Result<Part> {
        let (mesh, topo, p) = (self.mesh, self.topo, self.p);
        let mut local: Vec<u32> = self.owned_tets[r].clone();
        for &v in &self.owned_vertices[r] {
            let v = v as usize;
            local.extend_from_slice(&self.vt[self.vt_ptr[v]..self.vt_ptr[v + 1]]);
        }
        local.sort_unstable();
        local.dedup();
        let mut verts: Vec<u32> = local.iter().flat_map(|&n| mesh.tets[n as usize]).collect();
        verts.sort_unstable();
        verts.dedup();
        let lv = |g: u32| verts.binary_search(&g).expect("vertex of a local tet") as u32;
        let lmesh = Mesh {
            source: format!("{} (part {r} of {})", mesh.source, p.n_parts),
            nodes: verts.iter().map(|&v| mesh.nodes[v as usize]).collect(),
            tets: local
                .iter()
                .map(|&n| mesh.tets[n as usize].map(lv))
                .collect(),
            tet_phys: local.iter().map(|&n| mesh.tet_phys[n as usize]).collect(),
            tet_ids: local.iter().map(|&n| mesh.tet_ids[n as usize]).collect(),
            // materials arrive resolved (`Part::materials`)
            tet_groups: Vec::new(),
            physical_names: mesh.physical_names.clone(),
            // boundary conditions arrive resolved, as the global free-edge flags
            surfaces: Vec::new(),
            reoriented: 0,
            dropped_triangles: Vec::new(),
            ignored: Vec::new(),
        };
        let ltopo = Topology::build(&lmesh)?;
        let edge_global: Vec<u32> = ltopo
            .edges
            .iter()
            .map(|&[a, b]| {
                let (ga, gb) = (verts[a as usize], verts[b as usize]);
                *topo
                    .edges_at(ga as usize)
                    .iter()
                    .find(|&&e| topo.edges[e as usize] == [ga, gb])
                    .expect("a local edge is a global edge")
            })
            .collect();
        let halos = self.halos(r, &local, &edge_global);
        let surface = self.local_surface(r, &verts, &edge_global);
        let own_vertex: Vec<bool> = verts
            .iter()
            .map(|&v| p.vertex_owner[v as usize] as usize == r)
            .collect();
        Ok(Part {
            rank: r,
            n_parts: p.n_parts,
            global: GlobalCounts {
                n_tets: mesh.n_tets(),
                n_vertices: mesh.n_vertices(),
                n_edges: topo.n_edges(),
                n_free_half: self.n_free_half,
            },
            materials: self.local_media(&local),
            eps_inf: self.eps_inf.clone(),
            surface,
            own_tet: local
                .iter()
                .map(|&n| p.tet_part[n as usize] as usize == r)
                .collect(),
            free_offset: verts
                .iter()
                .zip(&own_vertex)
                .map(|(&v, &o)| {
                    if o {
                        self.free_offset[v as usize]
                    } else {
                        u64::MAX
                    }
                })
                .collect(),
            own_vertex,
            free_edge: edge_global
                .iter()
                .map(|&e| !self.fixed[e as usize])
                .collect(),
            edge_global,
            tet_global: local,
            vertex_global: verts,
            mesh: lmesh,
            topo: ltopo,
            halos,
        })
    }

    /// The media of the tets `local` (global ids), with every dispersive material's poles
    /// and the stretch of the PML tets among them (with every stretch pole, [`super::pml`]).
    fn local_media(&self, local: &[u32]) -> Media {
        let pick = |v: &[f64]| -> Vec<f64> {
            if v.is_empty() {
                Vec::new()
            } else {
                local.iter().map(|&n| v[n as usize]).collect()
            }
        };
        let m = self.mat;
        Media {
            eps: pick(&m.eps),
            mu: pick(&m.mu),
            sigma: pick(&m.sigma),
            sigma_m: pick(&m.sigma_m),
            disp: if m.disp.is_empty() {
                Vec::new()
            } else {
                local.iter().map(|&n| m.disp[n as usize]).collect()
            },
            poles: m.poles.clone(),
            pml: m.pml.as_ref().map(|st| super::pml::restrict(st, local)),
        }
    }

    /// Rank `r`'s surface entries in its local numbering (`verts`: its vertices, global
    /// ids, ascending; `edge_global`: the global id of each local edge).
    fn local_surface(&self, r: usize, verts: &[u32], edge_global: &[u32]) -> Vec<SurfaceEntry> {
        let mut edge_map: Vec<(u32, u32)> = edge_global
            .iter()
            .enumerate()
            .map(|(l, &g)| (g, l as u32))
            .collect();
        edge_map.sort_unstable();
        let slot = |g: u32| -> u32 {
            let i = edge_map
                .binary_search_by_key(&(g >> 1), |x| x.0)
                .expect("the edges at an owned vertex are local");
            2 * edge_map[i].1 + (g & 1)
        };
        self.surface[r]
            .iter()
            .map(|e| SurfaceEntry {
                vertex: verts
                    .binary_search(&e.vertex)
                    .expect("an owned vertex is local") as u32,
                i: slot(e.i),
                j: slot(e.j),
                value: e.value,
            })
            .collect()
    }

    /// The halo lists of part `r` in its local numbering (`local`: its tets, global ids;
    /// `edge_global`: the global id of each local edge).
    fn halos(&self, r: usize, local: &[u32], edge_global: &[u32]) -> Vec<Halo> {
        let mut edge_map: Vec<(u32, u32)> = edge_global
            .iter()
            .enumerate()
            .map(|(l, &g)| (g, l as u32))
            .collect();
        edge_map.sort_unstable();
        let local_slot = |g: u32| -> u32 {
            let i = edge_map
                .binary_search_by_key(&(g >> 1), |x| x.0)
                .expect("halo half-edge is local");
            2 * edge_map[i].1 + (g & 1)
        };
        let local_tet = |g: u32| local.binary_search(&g).expect("halo tet is local") as u32;
        let mut peers: Vec<u32> = self.f_send[r]
            .iter()
            .chain(&self.f_recv[r])
            .chain(&self.u_send[r])
            .chain(&self.u_recv[r])
            .map(|x| x.0)
            .collect();
        peers.sort_unstable();
        peers.dedup();
        let pick = |l: &[(u32, u32)], q: u32| -> Vec<u32> {
            let a = l.partition_point(|x| x.0 < q);
            let b = l.partition_point(|x| x.0 <= q);
            l[a..b].iter().map(|x| x.1).collect()
        };
        peers
            .iter()
            .map(|&q| Halo {
                peer: q as usize,
                send_tets: pick(&self.f_send[r], q)
                    .into_iter()
                    .map(local_tet)
                    .collect(),
                recv_tets: pick(&self.f_recv[r], q)
                    .into_iter()
                    .map(local_tet)
                    .collect(),
                send_halves: pick(&self.u_send[r], q)
                    .into_iter()
                    .map(local_slot)
                    .collect(),
                recv_halves: pick(&self.u_recv[r], q)
                    .into_iter()
                    .map(local_slot)
                    .collect(),
            })
            .collect()
    }
}
