//! Operators assembled on the device and left there.

use super::*;

/// The CSR matrix on the device: row pointers, columns, values and the number of nonzeros.
pub type DeviceCsr<T> = (Buffer<u32>, Buffer<u32>, Buffer<T>, usize);

/// The time-stepping operators of a lossless, non-dispersive mesh assembled on the device
/// and left there, in the layouts and precision of the default stepper
/// ([`ClStepper::with_resident`], built by `backend::device_assembly::resident`), for unit Δt:
/// - `primal`: `Mmu_n⁻¹`'s upper triangle, `primal[k TP + n]` (kernel `primal_sym`; `TP` the
///   [`tet_stride`], zero at the padding tets);
/// - `blocks`: each `Meps_v⁻¹` packed as its upper triangle column by column at `poff[v]`
///   ([`crate::dga::VertexBlocks::pack`], kernel `vertex_block_s`);
/// - `layout`: the block layout (which half-edges each vertex block holds), with no values.
///
/// Nothing but the layout comes back to the host: the operators are never downloaded.
pub struct ResidentOperators<T> {
    pub n_tets: usize,
    pub primal: Buffer<T>,
    pub blocks: Buffer<T>,
    pub poff: Vec<u64>,
    pub layout: crate::dga::VertexBlocks,
    /// The CSR form's matrix at unit `Δt` in the stepper's layout, where it was built on
    /// the device too (`backend::device_assembly::resident_csr`).
    pub csr: Option<DeviceCsr<T>>,
    /// The masses themselves, where they were packed too
    /// (`backend::device_assembly::resident_with_masses`): a stepper over a host `Dga`
    /// without masses then runs the power iteration and the energy checks on them.
    pub masses: Option<ResidentMasses<T>>,
}

/// The mass matrices left on the device in precision `T` ([`ResidentOperators::masses`]):
/// what [`ClStepper::power_iteration`] and the device energy read where the host's `Dga`
/// holds no masses.
pub struct ResidentMasses<T> {
    /// Every `Meps_v` row-major in the host's block layout (`dga.meps.off`): the power
    /// iteration's Rayleigh quotient (`vertex_block_h`).
    pub meps_full: Buffer<T>,
    /// Every `Meps_v`'s upper triangle packed at `poff` (the energy, `meps_slots`).
    pub meps_packed: Buffer<T>,
    /// `Mmu_n`'s upper triangle row by row in columns of the tet stride (the energy,
    /// `sym4_apply`).
    pub mmu: Buffer<T>,
}

impl<T> ResidentOperators<T> {
    /// The values of packed blocks.
    pub fn block_len(&self) -> usize {
        *self.poff.last().unwrap_or(&0) as usize
    }

    /// The [`crate::dga::Masses`] a [`Dga`] of these operators carries on the host: the block layout,
    /// no values (a stepper built on it reads the operators from the device).
    pub fn layout_only(&self) -> crate::dga::Masses {
        let empty = crate::dga::VertexBlocks {
            data: Vec::new(),
            ..self.layout.clone()
        };
        crate::dga::Masses {
            mmu: Vec::new(),
            mmu_inv: Vec::new(),
            meps: empty.clone(),
            meps_inv: empty,
        }
    }
}
