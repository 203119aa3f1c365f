//! The kernels of the DGA program ([`SOURCE`]: `cl/common.cl`, `cl/dga/*.cl`) and their build
//! options.

use super::*;

/// The name of the DGA program in build logs and messages.
pub const PROGRAM: &str = "cl/dga/*.cl";

/// The DGA program's source, embedded in the binary: `cl/common.cl` (`REAL`, the fp64
/// pragma), one file per operator under `cl/dga/`, and the bench's probes.
pub const SOURCE: &str = concat!(
    include_str!("../../../cl/common.cl"),
    include_str!("../../../cl/dga/primal.cl"),
    include_str!("../../../cl/dga/circulation.cl"),
    include_str!("../../../cl/dga/sell.cl"),
    include_str!("../../../cl/dga/vertex_block.cl"),
    include_str!("../../../cl/dga/slot_major.cl"),
    include_str!("../../../cl/dga/csr.cl"),
    include_str!("../../../cl/dga/excite.cl"),
    include_str!("../../../cl/dga/vector.cl"),
    include_str!("../../../cl/dga/energy.cl"),
    include_str!("../../../cl/dga/loss.cl"),
    include_str!("../../../cl/dga/halo.cl"),
    include_str!("../../../cl/dga/disp.cl"),
    include_str!("../../../cl/dga/pml.cl"),
    include_str!("../../../cl/dga/dft.cl"),
);

/// The bench's bandwidth and peak probes (`copy` of `cl/dga/vector.cl`, `triad`, `copy4`,
/// `triad4`, `fma_peak` of `cl/bench/stream.cl`): a program of their own, built with
/// [`real_options`], so the DGA program carries no kernel that no run launches.
pub const PROBE_SOURCE: &str = concat!(
    include_str!("../../../cl/common.cl"),
    include_str!("../../../cl/dga/vector.cl"),
    include_str!("../../../cl/bench/stream.cl"),
);

/// The name of the probe program in build logs and messages.
pub const PROBE_PROGRAM: &str = "cl/bench/stream.cl";

/// The options that define `REAL` (and `REAL_IS_DOUBLE`) for precision `T`.
pub fn real_options<T: Real>() -> &'static str {
    if T::NAME == "f64" {
        "-D REAL=double -D REAL_IS_DOUBLE=1"
    } else {
        "-D REAL=float"
    }
}

/// Work-items per row of the vector CSR kernel.
pub const CSR_LANES: usize = 8;

/// The stepper's shared vector kernels of one precision (scale, dot, axpy, copy, gather
/// and scatter, the energy's products) and the DGA program the operator components
/// ([`super::Primal`], [`super::Dual`], losses, dispersion, ...) create theirs from.
pub struct Kernels {
    pub(crate) vertex_block_h: Kernel,
    pub(crate) scale: Kernel,
    pub(crate) dot_partial: Kernel,
    pub(crate) axpy0: Kernel,
    pub(crate) copy: Kernel,
    pub(crate) gather: Kernel,
    pub(crate) meps_slots: Kernel,
    pub(crate) sym4_apply: Kernel,
    pub(crate) scatter: Kernel,
    /// the DGA program (`cl/dga/*.cl`) built for the stepper's precision ([`dgatd_options`] without f32
    /// operators), for the kernels created later ([`ClStepper::dgatd_kernels`]).
    pub(super) program: Program,
}

impl Kernels {
    /// The DGA program these kernels came from (the operator components create theirs
    /// from it).
    pub(super) fn program(&self) -> &Program {
        &self.program
    }

    /// Builds the DGA program (`cl/dga/*.cl`) for precision `T`.
    pub fn build<T: Real>(dev: &ClDevice) -> Result<Kernels> {
        if T::NAME == "f64" && !dev.info.fp64 {
            return Err(Error::config(
                "precision",
                "f64",
                format!(
                    "device {} has no cl_khr_fp64 (double precision); use --precision f32",
                    dev.info.name
                ),
            ));
        }
        let program = dev.build_source(SOURCE, PROGRAM, &dgatd_options::<T>(false))?;
        let k = |name: &str| Kernel::create(&program, name).map_err(cl_err(name));
        Ok(Kernels {
            vertex_block_h: k("vertex_block_h")?,
            scale: k("scale")?,
            dot_partial: k("dot_partial")?,
            axpy0: k("axpy0")?,
            copy: k("copy")?,
            gather: k("gather")?,
            meps_slots: k("meps_slots")?,
            sym4_apply: k("sym4_apply")?,
            scatter: k("scatter")?,
            program,
        })
    }
}

/// The build options of the DGA program (`cl/dga/*.cl`) for precision `T`; `f32_operators`: the operators of
/// `primal_sym` and the packed block kernels stored in float (mixed storage, `-D OPREAL=float`).
pub(super) fn dgatd_options<T: Real>(f32_operators: bool) -> String {
    let real = real_options::<T>();
    let op = if f32_operators {
        " -D OPREAL=float"
    } else {
        ""
    };
    format!("{real}{op} -D CSR_LANES={CSR_LANES}")
}

impl<T: Real> ClStepper<T> {
    /// Kernels of the DGA program (`cl/dga/*.cl`) for this stepper's precision: from the stepper's own program,
    /// or, with `f32_operators` (mixed storage), from a program built for them.
    pub(super) fn dgatd_kernels<const N: usize>(
        &self,
        f32_operators: bool,
        names: [&str; N],
    ) -> Result<[Kernel; N]> {
        let built;
        let program = if f32_operators {
            let opts = dgatd_options::<T>(true);
            built = self.dev.build_source(SOURCE, PROGRAM, &opts)?;
            &built
        } else {
            &self.k.program
        };
        crate::ocl::kernels(program, names)
    }
}
