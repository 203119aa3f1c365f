//! Fractioned degrees of freedom, local mass matrices and discrete curls (design note §4–7).
//!
//! DoFs:
//! - `U` (electric, 2E): circulation of e over each half primal edge; slot `2e` is the half
//!   at the start vertex of `e`, `2e + 1` the half at its end, both measured along `t_e`.
//!   Half-edges of boundary edges are fixed to 0 (PEC).
//! - `F` (magnetic, 4T): circulation of h over each half dual edge `b_n -> g_f`; slot
//!   `4n + k` for the face opposite local vertex `k`, oriented outward from `n`.
//!
//! Mass matrices: per hexahedron `M_eps = eps |Omega| (AᵀA)⁻¹`, `M_mu = mu |Omega| (ÃᵀÃ)⁻¹`
//! (`A`, `Ã` have the half-edge vectors as columns; this equals `|Omega| w^i·w^l` with the
//! dual bases `w`). Assembled into `Mmu_n` (4x4 per tet) and `Meps_v` (d x d per vertex,
//! free half-edges only under PEC).
//!
//! Losses (design note §12): `Msig_v` is assembled exactly as `Meps_v` with the tet's
//! conductivity `σ_n η₀` (1/m, [`crate::problem::Media::sigma`]) in place of `ε_n`; it is
//! kept only when some tet conducts ([`Dga::msig`]).
//!
//! Curls: `C` (4T x 2E) per tet acts on the 6 full-edge sums `U_(e,a) + U_(e,b)` with
//! ±1 (circulation around the outward-oriented face); `C̃` (2E x 4T) row `(e, v)` is the
//! circulation of F around the whole dual face of `e`. `C̃ = Cᵀ` exactly.

mod dispersive;
pub(crate) mod excitation;
mod fused;
mod layout;
pub(crate) mod operators;
pub(crate) mod sparse;
pub mod stretch;
pub(crate) mod surface;

pub use dispersive::Dispersion;
pub use excitation::{Probe, Source};
pub use operators::{DualForm, Operators, build_csr};
pub use sparse::{
    curl as curl_matrix, dual_curl as dual_curl_matrix, dual_matrix, stiffness as stiffness_matrix,
};
pub use surface::surface_conductance;

use crate::complex::TetGeom;
use crate::error::{Error, Result};
use crate::mesh::topology::FACE_CYCLE;
use crate::mesh::{Mesh, Topology};
use crate::problem::Media;
use nalgebra::{DMatrix, Matrix3, Matrix4};
use rayon::prelude::*;

pub use fused::FusedDisp;
pub(crate) use layout::dual_circulations;
pub use layout::{block_layout, vertex_tets};
pub use operators::DispOps;
pub use surface::SurfaceEntry;

/// Faraday incidence of a tet: `C_n[k][l]` for face `k` (outward) and local edge `l`
/// (global orientation). Entries are ±1 where edge `l` bounds face `k`, else 0.
pub fn curl_block(v: [u32; 4]) -> [[f64; 6]; 4] {
    let mut c = [[0.0; 6]; 4];
    for (k, cyc) in FACE_CYCLE.iter().enumerate() {
        for s in 0..3 {
            let (p, q) = (cyc[s], cyc[(s + 1) % 3]);
            let l = crate::mesh::topology::local_edge(p, q);
            c[k][l] = if v[p] < v[q] { 1.0 } else { -1.0 };
        }
    }
    c
}

/// Position of entry `(r, c)`, `r <= c`, of a symmetric 4x4 matrix in its 10-value upper
/// triangle stored row by row: `SYM4[r][c]` (and `SYM4[c][r]`, the same value).
pub const SYM4: [[usize; 4]; 4] = [[0, 1, 2, 3], [1, 4, 5, 6], [2, 5, 7, 8], [3, 6, 8, 9]];

/// The entry `(r, c)`, `r <= c`, stored at each of the 10 positions of [`SYM4`] (its inverse).
pub const SYM4_RC: [(usize, usize); 10] = [
    (0, 0),
    (0, 1),
    (0, 2),
    (0, 3),
    (1, 1),
    (1, 2),
    (1, 3),
    (2, 2),
    (2, 3),
    (3, 3),
];

/// `C_n[k][l]` of a tet all of whose edges run from the lower to the higher local vertex
/// (the kernel `primal_sym` spells the same table out; checked against [`curl_block`]).
pub const FACE_SIGN: [[i8; 6]; 4] = [
    [0, 0, 0, 1, -1, 1],
    [0, -1, 1, 0, 0, -1],
    [1, 0, -1, 0, 1, 0],
    [-1, 1, 0, -1, 0, 0],
];

/// The orientation bits of a tet with global vertex ids `v` ([`Dga::tet_orient`]).
pub fn tet_orient(v: [u32; 4]) -> u8 {
    let mut bits = 0u8;
    for (l, [a, b]) in crate::mesh::topology::LOCAL_EDGES.iter().enumerate() {
        if v[*a] < v[*b] {
            bits |= 1 << l;
        }
    }
    bits
}

/// `C_n` rebuilt from the orientation bits: equal to [`curl_block`] of the tet.
pub fn curl_from_orient(bits: u8) -> [[f64; 6]; 4] {
    std::array::from_fn(|k| {
        std::array::from_fn(|l| {
            let s = FACE_SIGN[k][l] as f64;
            if bits >> l & 1 == 1 { s } else { -s }
        })
    })
}

/// Symmetric blocks per vertex over its half-edges (row-major, full storage).
#[derive(Clone, Debug, Default)]
pub struct VertexBlocks {
    /// `h[ptr[v]..ptr[v+1]]`: the half-edge slots of vertex v, ascending edge id.
    pub ptr: Vec<usize>,
    pub h: Vec<u32>,
    /// `data[off[v]..off[v+1]]`: the d x d block of v.
    pub off: Vec<usize>,
    pub data: Vec<f64>,
}

impl VertexBlocks {
    pub fn n_vertices(&self) -> usize {
        self.ptr.len() - 1
    }
    pub fn dim(&self, v: usize) -> usize {
        self.ptr[v + 1] - self.ptr[v]
    }
    pub fn halves(&self, v: usize) -> &[u32] {
        &self.h[self.ptr[v]..self.ptr[v + 1]]
    }
    pub fn block(&self, v: usize) -> &[f64] {
        &self.data[self.off[v]..self.off[v + 1]]
    }
    /// y = B x over full-length half-edge vectors (adds into y).
    pub fn apply_add(&self, x: &[f64], y: &mut [f64]) {
        for v in 0..self.n_vertices() {
            let hs = self.halves(v);
            let b = self.block(v);
            let d = hs.len();
            for i in 0..d {
                y[hs[i] as usize] += (0..d)
                    .map(|j| b[i * d + j] * x[hs[j] as usize])
                    .sum::<f64>();
            }
        }
    }

    /// Offsets of a per-vertex layout of `len(d)` values for a block of dimension `d`:
    /// vertex v's values start at `off[v]`; `off[n_vertices]` is the total.
    fn layout_offsets(&self, len: impl Fn(u64) -> u64) -> Vec<u64> {
        let mut off = Vec::with_capacity(self.ptr.len());
        off.push(0);
        let mut o = 0u64;
        for v in 0..self.n_vertices() {
            o += len(self.dim(v) as u64);
            off.push(o);
        }
        off
    }

    /// Each vertex's full `d x d` block in this layout, passed to `emit` with `d` to append
    /// its values in another layout (each value through `f`); `n` values in all.
    fn repack<U: Copy, T>(
        &self,
        full: &[U],
        n: u64,
        f: impl Fn(U) -> T,
        emit: impl Fn(&[U], usize, &mut dyn FnMut(U)),
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(n as usize);
        for v in 0..self.n_vertices() {
            let d = self.dim(v);
            emit(&full[self.off[v]..self.off[v] + d * d], d, &mut |x| {
                out.push(f(x))
            });
        }
        out
    }

    /// Offsets of the packed layout ([`VertexBlocks::pack`]): `d(d+1)/2` values per vertex.
    pub fn packed_offsets(&self) -> Vec<u64> {
        self.layout_offsets(|d| d * (d + 1) / 2)
    }

    /// `full` (values in this layout, e.g. the blocks scaled or converted) packed to each
    /// block's upper triangle column by column: entry `(j, i)`, `j <= i`, of vertex v at
    /// `poff[v] + i(i+1)/2 + j` (the kernel `vertex_block_s` reads this layout).
    /// Each value passes through `f` (a scaling or a conversion) on the way.
    pub fn pack<U: Copy, T>(&self, full: &[U], poff: &[u64], f: impl Fn(U) -> T) -> Vec<T> {
        self.repack(full, *poff.last().unwrap_or(&0), f, |b, d, put| {
            for i in 0..d {
                (0..=i).for_each(|j| put(b[j * d + i]));
            }
        })
    }

    /// Offsets of the diagonal layout ([`VertexBlocks::pack_diag`]): `d (⌊d/2⌋ + 1)` values
    /// per vertex.
    pub fn diag_offsets(&self) -> Vec<u64> {
        self.layout_offsets(|d| d * (d / 2 + 1))
    }

    /// `full` stored by wrapped diagonals: diagonal `k` (`0 <= k <= ⌊d/2⌋`) of vertex v holds
    /// `B[i][(i + k) mod d]` for `i < d` at `doff[v] + k d + i`. The diagonals past `d/2`
    /// are these transposed (`B[i][(i + k) mod d] = diag[d − k][(i + k) mod d]`), so thread
    /// i of the kernel `vertex_block_d` reads consecutive addresses with its neighbours at
    /// every step. `f` as in [`VertexBlocks::pack`].
    pub fn pack_diag<U: Copy, T>(&self, full: &[U], doff: &[u64], f: impl Fn(U) -> T) -> Vec<T> {
        self.repack(full, *doff.last().unwrap_or(&0), f, |b, d, put| {
            for k in 0..=d / 2 {
                (0..d).for_each(|i| put(b[i * d + (i + k) % d]));
            }
        })
    }

    /// xᵀ B x. Per-vertex terms in parallel, summed in a fixed order: bit-reproducible.
    pub fn quad(&self, x: &[f64]) -> f64 {
        let terms: Vec<f64> = (0..self.n_vertices())
            .into_par_iter()
            .map(|v| {
                let hs = self.halves(v);
                let b = self.block(v);
                let d = hs.len();
                let mut s = 0.0;
                for i in 0..d {
                    let xi = x[hs[i] as usize];
                    for j in 0..d {
                        s += xi * b[i * d + j] * x[hs[j] as usize];
                    }
                }
                s
            })
            .collect();
        terms.iter().sum()
    }
}

/// The assembled, Δt-independent discrete operators in f64.
#[derive(Clone, Debug)]
pub struct Dga {
    pub n_tets: usize,
    pub n_edges: usize,
    pub n_vertices: usize,
    pub tet_edges: Vec<[u32; 6]>,
    pub free_edge: Vec<bool>,
    /// `Mmu_n`, row-major 4x4.
    pub mmu: Vec<[f64; 16]>,
    /// `Mmu_n⁻¹`, its upper triangle row by row ([`SYM4`]). The primal block
    /// `Mmu_n⁻¹ C_n` is [`Dga::primal_block`]; the symmetric device layout stores these 10
    /// values and rebuilds `C_n` from [`Dga::tet_orient`] in the kernel.
    pub mmu_inv: Vec<[f64; 10]>,
    /// Per tet, bit `l` set when local edge `l` (`LOCAL_EDGES[l] = [a, b]`) runs from
    /// local vertex `a` to `b` in its global orientation (`v_a < v_b`): then
    /// `C_n[k][l] = FACE_SIGN[k][l]`, else its negative ([`curl_from_orient`]).
    pub tet_orient: Vec<u8>,
    /// `Meps_v` over free half-edges, and its inverse (same layout).
    pub meps: VertexBlocks,
    pub meps_inv: VertexBlocks,
    /// `Msig_v` (same layout as `meps`; zero blocks at vertices with no conducting tet),
    /// None when no tet conducts.
    pub msig: Option<VertexBlocks>,
    /// Magnetic loss rate `s_n = σ*_n / μ_n` (1/m) per tet, None when no tet has σ*. A
    /// tet's medium is uniform, so its `Msig*_n = s_n Mmu_n` and the Crank–Nicolson
    /// primal update is the scalar `F⁺ = (1 − b)/(1 + b) F − Δt/(1 + b) Mmu⁻¹ C U`,
    /// `b = s_n Δt / 2` (design note §12).
    pub mag: Option<Vec<f64>>,
    /// Dispersive media (design note §13, and the electric side of perfectly matched
    /// layers), None when no tet is dispersive.
    pub disp: Option<Dispersion>,
    /// The magnetic side of perfectly matched layers ([`stretch`]), None without a PML.
    pub mpml: Option<stretch::MagStretch>,
    /// Dual-face circulations `(C̃ F)_e = Σ ±F`: entries `circ[circ_ptr[e]..circ_ptr[e+1]]`
    /// encode `(f_slot << 1) | negative`.
    pub circ_ptr: Vec<u32>,
    pub circ: Vec<u32>,
}

impl Dga {
    /// 2E half-edge slots (U length).
    pub fn n_half(&self) -> usize {
        2 * self.n_edges
    }
    /// 4T dual half-edge slots (F length).
    pub fn n_dual(&self) -> usize {
        4 * self.n_tets
    }
    /// Free half-edges (DoFs of U under PEC).
    pub fn n_free_half(&self) -> usize {
        self.meps.h.len()
    }

    /// The counts the cost models read ([`crate::cost`]).
    /// The primal block `Mmu_n⁻¹ C_n` of tet `n`, row-major 4x6 (zero for a tet a part
    /// does not own).
    pub fn primal_block(&self, n: usize) -> [f64; 24] {
        std::array::from_fn(|rl| self.primal_entry(n, rl / 6, rl % 6))
    }

    /// Entry `(r, l)` of [`Dga::primal_block`]: the two faces of the tet that edge `l`
    /// bounds, summed in face order.
    pub fn primal_entry(&self, n: usize, r: usize, l: usize) -> f64 {
        let m = &self.mmu_inv[n];
        let o = if self.tet_orient[n] >> l & 1 == 1 {
            1.0
        } else {
            -1.0
        };
        let mut acc = 0.0;
        for (k, row) in FACE_SIGN.iter().enumerate() {
            if row[l] != 0 {
                acc += m[SYM4[r][k]] * (o * row[l] as f64);
            }
        }
        acc
    }

    pub fn counts(&self) -> crate::cost::DgaCounts {
        crate::cost::DgaCounts {
            tets: self.n_tets,
            edges: self.n_edges,
            vertices: self.n_vertices,
            free_half: self.n_free_half(),
            circ: self.circ.len(),
            // from the layout: a Dga over device-resident operators has no values
            block: *self.meps_inv.off.last().unwrap_or(&0),
            packed: *self.meps.packed_offsets().last().unwrap_or(&0) as usize,
        }
    }

    /// Assembles everything with PEC on the whole boundary. Fails if a local mass matrix
    /// is not SPD.
    pub fn assemble(mesh: &Mesh, topo: &Topology, mat: &Media) -> Result<Dga> {
        Self::assemble_with(mesh, topo, mat, &topo.boundary_edge, false)
    }

    /// Whether the mass matrices themselves (not only their inverses) are kept; they are
    /// needed for the energy and the power iteration's Rayleigh quotient.
    pub fn has_masses(&self) -> bool {
        // a rank's empty part has no masses to keep
        self.n_tets == 0
            || (!self.mmu.is_empty() && self.meps.data.len() == self.meps_inv.data.len())
    }

    /// Fails with a clear error when the masses were not kept (lean assembly); `what` names
    /// the operation that needs them.
    pub fn require_masses(&self, what: &str) -> Result<()> {
        if self.has_masses() {
            Ok(())
        } else {
            Err(Error::config(
                what,
                "lean",
                "the operators were assembled without mass matrices",
            ))
        }
    }

    /// Assembles with the half-edges of the `fixed` edges removed from the unknowns (PEC
    /// edges, [`crate::problem::Walls::fixed_edges`]); every other edge, on the boundary or
    /// not, carries two unknowns.
    ///
    /// With `lean`, only what the time loop needs is kept (`Mmu` is dropped and `Meps` is
    /// inverted in place), lowering peak memory by about 40% for benchmarks of very large
    /// meshes. A lean `Dga` cannot evaluate the energy or run the power iteration.
    pub fn assemble_with(
        mesh: &Mesh,
        topo: &Topology,
        mat: &Media,
        fixed: &[bool],
        lean: bool,
    ) -> Result<Dga> {
        let free_edge: Vec<bool> = fixed.iter().map(|&b| !b).collect();
        Self::assemble_rows(mesh, topo, mat, lean, free_edge, None, None)
    }

    /// Assembly of a part of a mesh (domain decomposition, `crate::partition`): the free
    /// flags of the edges are given (the global ones, not those of the part's own surface),
    /// `Mmu_n` and `Mmu_n⁻¹ C_n` are computed only for the tets with `tet_rows[n]` (zero
    /// elsewhere), and `Meps_v` only for the vertices with `vertex_rows[v]` (the other
    /// vertices get empty blocks). `None` selects every tet or vertex.
    pub fn assemble_rows(
        mesh: &Mesh,
        topo: &Topology,
        mat: &Media,
        lean: bool,
        free_edge: Vec<bool>,
        tet_rows: Option<&[bool]>,
        vertex_rows: Option<&[bool]>,
    ) -> Result<Dga> {
        check_free_edges(topo, &free_edge)?;
        let masses = host_masses(mesh, topo, mat, lean, &free_edge, tet_rows, vertex_rows)?;
        Self::from_masses_rows(mesh, topo, mat, free_edge, (tet_rows, vertex_rows), masses)
    }

    /// Completes the assembly from the mass operators of every tet and vertex, computed by
    /// the host ([`Dga::assemble_rows`]) or by a device (`backend::device_assembly`): the
    /// conduction blocks, the dispersive masses, the dual circulations and the orientation
    /// bits are assembled here, on the host, for the vertices with `vertex_rows[v]` (None:
    /// all) and every tet.
    pub fn from_masses(
        mesh: &Mesh,
        topo: &Topology,
        mat: &Media,
        free_edge: Vec<bool>,
        vertex_rows: Option<&[bool]>,
        masses: Masses,
    ) -> Result<Dga> {
        Self::from_masses_rows(mesh, topo, mat, free_edge, (None, vertex_rows), masses)
    }

    /// [`Dga::from_masses`] for the tets and vertices `rows = (tet_rows, vertex_rows)` as in
    /// [`Dga::assemble_rows`] (the tets: the magnetic PML masses; the vertices: conduction
    /// and dispersion).
    pub fn from_masses_rows(
        mesh: &Mesh,
        topo: &Topology,
        mat: &Media,
        free_edge: Vec<bool>,
        rows: (Option<&[bool]>, Option<&[bool]>),
        masses: Masses,
    ) -> Result<Dga> {
        let (tet_rows, vertex_rows) = rows;
        let t = mesh.n_tets();
        let Masses {
            mmu,
            mmu_inv,
            meps,
            meps_inv,
        } = masses;
        let msig = if mat.is_lossy() {
            Some(assemble_eps(
                mesh,
                topo,
                &|n| mat.sigma_of(n),
                &free_edge,
                vertex_rows,
            )?)
        } else {
            None
        };
        let disp = Dispersion::assemble(mesh, topo, mat, &free_edge, vertex_rows)?;
        let mpml = match mat.pml.as_ref().filter(|_| mat.has_pml()) {
            Some(st) => Some(stretch::magnetic(mesh, mat, st, tet_rows)?),
            None => None,
        };
        let (circ_ptr, circ) = dual_circulations(mesh, topo);
        Ok(Dga {
            n_tets: t,
            n_edges: topo.n_edges(),
            n_vertices: mesh.n_vertices(),
            tet_edges: topo.tet_edges.clone(),
            free_edge,
            mmu,
            mmu_inv,
            tet_orient: mesh.tets.par_iter().map(|&v| tet_orient(v)).collect(),
            meps,
            meps_inv,
            msig,
            mag: mat
                .is_magnetically_lossy()
                .then(|| (0..t).map(|n| mat.sigma_m_of(n) / mat.mu[n]).collect()),
            disp,
            mpml,
            circ_ptr,
            circ,
        })
    }

    /// `Meps_v` over all half-edges (no PEC restriction), for the consistency identity.
    pub fn meps_unrestricted(mesh: &Mesh, topo: &Topology, mat: &Media) -> VertexBlocks {
        assemble_eps(
            mesh,
            topo,
            &|n| mat.eps[n],
            &vec![true; topo.n_edges()],
            None,
        )
        .expect("valid mesh")
    }

    /// Adds surface conductances (absorbing boundaries, [`surface::surface_conductance`]) into
    /// `Msig_v`, creating it (zero blocks in the layout of `Meps_v`) when no tet conducts.
    /// Entries on half-edges that are not unknowns (an edge also on a PEC face) are dropped.
    pub fn add_surface(&mut self, entries: &[surface::SurfaceEntry]) {
        if entries.is_empty() {
            return;
        }
        let layout = &self.meps_inv;
        let msig = self.msig.get_or_insert_with(|| VertexBlocks {
            ptr: layout.ptr.clone(),
            h: layout.h.clone(),
            off: layout.off.clone(),
            data: vec![0.0; *layout.off.last().unwrap_or(&0)],
        });
        for e in entries {
            let v = e.vertex as usize;
            let hs = msig.halves(v);
            let (Some(i), Some(j)) = (
                hs.iter().position(|&h| h == e.i),
                hs.iter().position(|&h| h == e.j),
            ) else {
                continue;
            };
            let d = hs.len();
            msig.data[msig.off[v] + i * d + j] += e.value;
        }
    }

    /// Per half-edge slot: its vertex and the offset of its row in the vertex block
    /// (`u64::MAX` for boundary half-edges).
    pub fn half_edge_rows(&self) -> (Vec<u32>, Vec<u64>) {
        use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
        // every half-edge is in at most one block: parallel stores, no two to one entry
        let hvert: Vec<AtomicU32> = (0..self.n_half())
            .into_par_iter()
            .map(|_| AtomicU32::new(u32::MAX))
            .collect();
        let hrow: Vec<AtomicU64> = (0..self.n_half())
            .into_par_iter()
            .map(|_| AtomicU64::new(u64::MAX))
            .collect();
        (0..self.meps.n_vertices()).into_par_iter().for_each(|v| {
            let d = self.meps.dim(v);
            for (i, &h) in self.meps.halves(v).iter().enumerate() {
                hvert[h as usize].store(v as u32, Relaxed);
                hrow[h as usize].store((self.meps.off[v] + i * d) as u64, Relaxed);
            }
        });
        (
            hvert.into_par_iter().map(AtomicU32::into_inner).collect(),
            hrow.into_par_iter().map(AtomicU64::into_inner).collect(),
        )
    }
}

/// `Mmu_n` and `Mmu_n⁻¹` per tet, `Meps_v` and `Meps_v⁻¹` per vertex.
///
/// With a lean assembly `mmu` and `meps.data` are empty (the time loop needs only the
/// inverses).
#[derive(Clone, Debug)]
pub struct Masses {
    pub mmu: Vec<[f64; 16]>,
    pub mmu_inv: Vec<[f64; 10]>,
    pub meps: VertexBlocks,
    pub meps_inv: VertexBlocks,
}

/// The host's [`Masses`] (rayon over tets and vertices); see [`Dga::assemble_rows`] for
/// the row selections.
pub fn host_masses(
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    lean: bool,
    free_edge: &[bool],
    tet_rows: Option<&[bool]>,
    vertex_rows: Option<&[bool]>,
) -> Result<Masses> {
    let t = mesh.n_tets();
    // Per tet: Mmu and Mmu⁻¹C (a NaN in slot 0 marks a failure, reported below).
    let (mmu, mmu_inv): (Vec<[f64; 16]>, Vec<[f64; 10]>) = (0..t)
        .into_par_iter()
        .map(|n| {
            if tet_rows.is_some_and(|r| !r[n]) {
                return ([0.0; 16], [0.0; 10]);
            }
            let g = TetGeom::new(mesh, n);
            let mut mmu = Matrix4::<f64>::zeros();
            for i in 0..4 {
                let h = g.hexahedron(i);
                let Some(mm) = local_gram_inverse(&h.at, mat.mu[n] * h.volume) else {
                    return ([f64::NAN; 16], [0.0; 10]);
                };
                for r in 0..3 {
                    for c in 0..3 {
                        mmu[(h.faces[r], h.faces[c])] += mm[(r, c)];
                    }
                }
            }
            let Some(chol) = mmu.cholesky() else {
                return ([f64::NAN; 16], [0.0; 10]);
            };
            let inv = chol.inverse();
            let mut sym = [0.0; 10];
            for r in 0..4 {
                for c in r..4 {
                    sym[SYM4[r][c]] = inv[(r, c)];
                }
            }
            (std::array::from_fn(|k| mmu[(k / 4, k % 4)]), sym)
        })
        .unzip();
    if let Some(n) = mmu.par_iter().position_first(|m| m[0].is_nan()) {
        return Err(not_spd(
            "Mmu of tet",
            mesh.tet_ids[n] as usize,
            "the hexahedral mu matrices are degenerate or their sum is not positive definite",
        ));
    }
    let mmu = if lean { Vec::new() } else { mmu };
    let mut meps = assemble_eps(mesh, topo, &|n| mat.eps[n], free_edge, vertex_rows)?;
    let meps_inv = if lean {
        let data = std::mem::take(&mut meps.data);
        let mut m = VertexBlocks {
            data,
            ..meps.clone()
        };
        invert_in_place(&mut m, mesh)?;
        m
    } else {
        let mut m = meps.clone();
        invert_in_place(&mut m, mesh)?;
        m
    };
    Ok(Masses {
        mmu,
        mmu_inv,
        meps,
        meps_inv,
    })
}

/// `Meps_v⁻¹` of the vertices `v` with `rows[v]` only (every other block empty), in the
/// host's layout and arithmetic, so equal bit for bit to those blocks of [`host_masses`]:
/// what a source pattern needs where the operators were assembled on a device and only
/// their layout is on the host ([`excitation::Source::region_on`]).
pub fn meps_inverse_rows(
    mesh: &Mesh,
    topo: &Topology,
    mat: &Media,
    free_edge: &[bool],
    rows: &[bool],
) -> Result<VertexBlocks> {
    let mut m = assemble_eps(mesh, topo, &|n| mat.eps[n], free_edge, Some(rows))?;
    invert_in_place(&mut m, mesh)?;
    Ok(m)
}

/// One free flag per edge of `topo`, or a configuration error.
pub(crate) fn check_free_edges(topo: &Topology, free_edge: &[bool]) -> Result<()> {
    if free_edge.len() != topo.n_edges() {
        return Err(Error::config(
            "free edge flags",
            free_edge.len(),
            format!("expected one per edge ({})", topo.n_edges()),
        ));
    }
    Ok(())
}

fn not_spd(what: &'static str, index: usize, detail: &str) -> Error {
    Error::NotSpd {
        what,
        index,
        detail: detail.into(),
    }
}

/// `s (GᵀG)⁻¹` for the 3 column vectors of G; None if singular.
fn local_gram_inverse(cols: &[[f64; 3]; 3], s: f64) -> Option<Matrix3<f64>> {
    let g = Matrix3::from_fn(|r, c| cols[c][r]);
    let gram = g.transpose() * g;
    gram.cholesky().map(|c| c.inverse() * s)
}

/// Splits `data` into consecutive mutable chunks at the offsets `off` (len = chunks + 1).
fn split_blocks<'a>(mut data: &'a mut [f64], off: &[usize]) -> Vec<&'a mut [f64]> {
    let mut out = Vec::with_capacity(off.len().saturating_sub(1));
    for w in off.windows(2) {
        let (a, b) = std::mem::take(&mut data).split_at_mut(w[1] - w[0]);
        out.push(a);
        data = b;
    }
    out
}

/// `Meps_v` per vertex over the half-edges of kept edges, with the tet coefficient
/// `coef(n)` (ε_n for `Meps`, σ_n η₀ for `Msig`; a zero coefficient adds nothing). The hexahedral matrices are
/// recomputed from the geometry inside the vertex loop (4 times per tet) rather than
/// stored, and the blocks are written in place: memory is the result plus O(V).
/// Vertices outside `rows` (when given) get empty blocks.
fn assemble_eps(
    mesh: &Mesh,
    topo: &Topology,
    coef: &(dyn Fn(usize) -> f64 + Sync),
    keep: &[bool],
    rows: Option<&[bool]>,
) -> Result<VertexBlocks> {
    assemble_blocks(mesh, topo, &|n| Coef::Scalar(coef(n)), keep, rows)
}

/// The coefficient of a tet in a vertex-block assembly: a scalar (`k |Ω| wⁱ·wˡ`), or a
/// symmetric tensor `W` (`|Ω| wⁱ·W wˡ`, row-major), e.g. a stretched medium's weight.
pub(crate) enum Coef {
    Scalar(f64),
    Tensor([f64; 9]),
}

/// `s G⁻¹ W G⁻ᵀ` for the 3 column vectors of G (the tensor form of [`local_gram_inverse`],
/// `(GᵀG)⁻¹ = G⁻¹G⁻ᵀ`); None if singular.
pub(crate) fn local_tensor(cols: &[[f64; 3]; 3], w: &[f64; 9], s: f64) -> Option<Matrix3<f64>> {
    let g = Matrix3::from_fn(|r, c| cols[c][r]);
    let gi = g.try_inverse()?;
    let w = Matrix3::from_fn(|r, c| w[3 * r + c]);
    Some(gi * w * gi.transpose() * s)
}

/// [`assemble_eps`] with a scalar or tensor coefficient per tet.
pub(crate) fn assemble_blocks(
    mesh: &Mesh,
    topo: &Topology,
    coef: &(dyn Fn(usize) -> Coef + Sync),
    keep: &[bool],
    rows: Option<&[bool]>,
) -> Result<VertexBlocks> {
    let sub = rows.map(|r| crate::mesh::incidence::vertex_tets_of(mesh, r));
    let (vt_ptr, vt): (&[usize], &[(u32, u8)]) = match &sub {
        Some((p, v)) => (p, v),
        None => (&topo.vert_tet_ptr, &topo.vert_tets),
    };
    let VertexBlocks { ptr, h, off, .. } = block_layout(mesh, topo, keep, rows);
    let nv = mesh.n_vertices();
    let mut data = vec![0.0; off[nv]];
    let bad = std::sync::atomic::AtomicUsize::new(usize::MAX);
    split_blocks(&mut data, &off)
        .into_par_iter()
        .enumerate()
        .for_each(|(v, b)| {
            if rows.is_some_and(|r| !r[v]) {
                return;
            }
            let hs = &h[ptr[v]..ptr[v + 1]];
            let d = hs.len();
            for &(n, i) in &vt[vt_ptr[v]..vt_ptr[v + 1]] {
                let (n, i) = (n as usize, i as usize);
                let k = coef(n);
                if matches!(k, Coef::Scalar(x) if x == 0.0) {
                    continue;
                }
                let g = TetGeom::new(mesh, n);
                let hex = g.hexahedron(i);
                let local = match &k {
                    Coef::Scalar(k) => local_gram_inverse(&hex.a, k * hex.volume),
                    Coef::Tensor(w) => local_tensor(&hex.a, w, hex.volume),
                };
                let Some(m) = local else {
                    bad.fetch_min(n, std::sync::atomic::Ordering::Relaxed);
                    return;
                };
                let loc: [Option<usize>; 3] = std::array::from_fn(|r| {
                    let e = topo.tet_edges[n][hex.edges[r]];
                    let slot = topo.half_edge(e as usize, g.v[i]) as u32;
                    hs.iter().position(|&x| x == slot)
                });
                for r in 0..3 {
                    for c in 0..3 {
                        if let (Some(a), Some(bb)) = (loc[r], loc[c]) {
                            b[a * d + bb] += m[(r, c)];
                        }
                    }
                }
            }
        });
    let bad = bad.into_inner();
    if bad != usize::MAX {
        return Err(not_spd(
            "hexahedral eps matrix of tet",
            mesh.tet_ids[bad] as usize,
            "degenerate half-edge vectors",
        ));
    }
    Ok(VertexBlocks { ptr, h, off, data })
}

/// Replaces every block by its (exactly symmetrised) inverse.
fn invert_in_place(m: &mut VertexBlocks, mesh: &Mesh) -> Result<()> {
    let bad = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let off = m.off.clone();
    split_blocks(&mut m.data, &off)
        .into_par_iter()
        .enumerate()
        .for_each(|(v, blk)| {
            let d = (blk.len() as f64).sqrt().round() as usize;
            if d == 0 {
                return;
            }
            let a = DMatrix::from_row_slice(d, d, blk);
            let Some(c) = a.cholesky() else {
                bad.fetch_min(v, std::sync::atomic::Ordering::Relaxed);
                return;
            };
            let i = c.inverse();
            // Exactly symmetric, so a kernel may read row i as column i.
            for k in 0..d * d {
                blk[k] = 0.5 * (i[(k / d, k % d)] + i[(k % d, k / d)]);
            }
        });
    let v = bad.into_inner();
    if v != usize::MAX {
        return Err(Error::NotSpd {
            what: "Meps of vertex",
            index: v,
            detail: format!(
                "{d}x{d} block at {:?}, Cholesky failed",
                mesh.nodes[v],
                d = m.dim(v)
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
