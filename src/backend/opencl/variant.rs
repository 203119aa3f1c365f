//! The kernel forms a [`ClStepper`] can launch, and the stepper's storage of `U`.

use super::*;

/// Which primal kernel to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PrimalVariant {
    /// One work-item per tet, the 4x6 block `Δt Mmu⁻¹ C` stored (24 values per tet).
    Tet,
    /// One work-item per tet, `Δt Mmu⁻¹` stored as its 10-value upper triangle and the
    /// incidence `C` rebuilt from orientation bits in the kernel (default: 112 fewer bytes
    /// per tet in f64, see results/h200/).
    Sym,
}

impl PrimalVariant {
    pub fn name(self) -> &'static str {
        match self {
            PrimalVariant::Tet => "tet",
            PrimalVariant::Sym => "tet_sym",
        }
    }

    /// Reals stored per tet.
    pub fn per_tet(self) -> usize {
        match self {
            PrimalVariant::Sym => 10,
            _ => 24,
        }
    }
}

/// Mapping of the per-vertex block kernel. (The forms no run selected, by half-edge, with
/// local staging of blocks or circulations, and by wrapped diagonals, were retired in issue
/// 46; their figures stay in `results/h200/`, their code in the history before that commit.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockVariant {
    /// Vertex-major: the slots of a vertex are consecutive work-items reading columns of
    /// the symmetric block (coalesced). Default with dispersion (the fused dispersive
    /// kernel reads this layout).
    Vertex,
    /// Vertex-major over packed blocks: each block's upper triangle, `d(d+1)/2` values
    /// instead of `d²`. Default without dispersion.
    Packed,
}

/// How the vertex blocks are stored on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BlockLayout {
    Full,
    Tri,
}

impl BlockVariant {
    pub fn name(self) -> &'static str {
        match self {
            BlockVariant::Vertex => "vertex_block",
            BlockVariant::Packed => "vertex_block_sym",
        }
    }

    pub(super) fn layout(self) -> BlockLayout {
        match self {
            BlockVariant::Packed => BlockLayout::Tri,
            BlockVariant::Vertex => BlockLayout::Full,
        }
    }
}

/// CSR variant of the dual update: `CSR_LANES` work-items per row, reduced in local memory
/// (the one-row-per-work-item form no run selected was retired in issue 46).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CsrVariant {
    Vector,
}

/// How the dispersion's correction and pole step run with the factored, vertex-major dual
/// update (design note §13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DispVariant {
    /// Two kernels of their own around the dual update (`disp_correct`, `disp_poles`).
    Split,
    /// The vertices inside one material with no σ and no source inside the dual update
    /// (`vertex_block_vf`), the rest split. Default: fewer bytes (`results/dispersive/`).
    Fused,
}

impl DispVariant {
    pub fn name(self) -> &'static str {
        match self {
            DispVariant::Split => "split",
            DispVariant::Fused => "fused",
        }
    }
}

/// The kernel variants a [`ClStepper`] launches (the bench times each one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variants {
    pub primal: PrimalVariant,
    pub block: BlockVariant,
    pub csr: CsrVariant,
    pub disp: DispVariant,
    pub circ: CircVariant,
}

impl Default for Variants {
    /// The fastest variants measured (`results/h200/`, `results/dispersive/`).
    fn default() -> Self {
        Variants {
            primal: PrimalVariant::Sym,
            block: BlockVariant::Packed,
            csr: CsrVariant::Vector,
            disp: DispVariant::Fused,
            circ: CircVariant::Paired,
        }
    }
}

impl Variants {
    /// The default variants for `dga`: with dispersion, the full vertex blocks that the
    /// fused dispersive kernel reads; above [`CircVariant::PAIRED_MAX_TETS`] tets, the
    /// circulation lists.
    pub fn for_dga(dga: &Dga) -> Self {
        let mut v = Variants::default();
        if dga.disp.is_some() {
            v.block = BlockVariant::Vertex;
        }
        if dga.n_tets >= CircVariant::PAIRED_MAX_TETS {
            v.circ = CircVariant::Lists;
        }
        v
    }
}

/// How the dual-face circulation lists `c = C̃ F` are stored on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CircVariant {
    /// One word per entry, `(F slot << 1) | negative` (`circulation`).
    Lists,
    /// One word per tet around the edge, `(n << 4) | (fp << 2) | fm` for its two entries
    /// `+F(n, fp)`, `-F(n, fm)` (`circulation_pair`): half the index bytes, the same sums in
    /// the same order. Default below [`Self::PAIRED_MAX_TETS`] tets.
    Paired,
}

impl CircVariant {
    /// Meshes of this many tets or more keep the lists (28-bit tet indices in a pair).
    pub const PAIRED_MAX_TETS: usize = 1 << 28;

    pub fn name(self) -> &'static str {
        match self {
            CircVariant::Lists => "circulation",
            CircVariant::Paired => "circulation_pair",
        }
    }
}

/// The stepper's storage of `U` on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ULayout {
    /// `U[2e + s]`, by half-edge: every kernel and variant, losses, dispersion, partitions.
    HalfEdge,
    /// Slot-major ([`SlotMajor`]): the free half-edges' DoFs in the factored dual's slot
    /// order, so the vertex-block update reads and writes them coalesced. For the default
    /// kernels (`primal_sym_sm`, `vertex_block_s_sm`) of a lossless, non-dispersive mesh
    /// with the factored dual, a source on free half-edges and every non-free half-edge
    /// zero; the same products in the same order as the half-edge layout (bit for bit on
    /// PoCL). The main job's default where it applies ([`ClStepper::slot_major_refusal`]).
    SlotMajor,
}

impl ULayout {
    pub fn name(self) -> &'static str {
        match self {
            ULayout::HalfEdge => "half-edge",
            ULayout::SlotMajor => "slot-major",
        }
    }
}
