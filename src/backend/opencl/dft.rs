//! Running discrete Fourier transforms of the state on the device (mode shapes,
//! [`crate::solver::modeshape`]): per frequency `m`, `X_m += U^n p_u[m]` and
//! `Y_m += F^(n-1/2) p_f[m]`, real and imaginary planes stored apart (`dft_acc` of
//! `cl/dga/dft.cl`), so the state never leaves the device inside the time loop.
//!
//! [`Dft`] owns its accumulators and kernel; the stepper hands it `U` (in its layout) and `F`.

use super::kernels::Kernels;
use crate::error::{Error, Result};
use crate::ocl::{Arg, ClDevice, LOCAL, kernels, launch};
use crate::real::Real;
use crate::util::C64;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

/// The accumulators: `m` frequencies, `2 m nu` values for `U` and `2 m nf` for `F`, and this
/// step's phase factors (`2 m` values each).
struct Accumulators<T> {
    m: usize,
    /// Whether `acc_u` accumulates slot-major `US` (the layout of `U` at [`Dft::start`]).
    slots: bool,
    nu: usize,
    nf: usize,
    acc_u: Buffer<T>,
    acc_f: Buffer<T>,
    pu: Buffer<T>,
    pf: Buffer<T>,
}

/// The running transforms of a stepper (none until [`Dft::start`]).
pub(super) struct Dft<T> {
    acc: Option<Accumulators<T>>,
    kernel: Kernel,
}

impl<T: Real> Dft<T> {
    pub(super) fn new(k: &Kernels) -> Result<Self> {
        let [kernel] = kernels(k.program(), ["dft_acc"])?;
        Ok(Dft { acc: None, kernel })
    }

    /// Starts `m` zeroed transforms of a `U` of `nu` values (slot-major when `slots`) and an
    /// `F` of `nf`.
    pub(super) fn start(
        &mut self,
        dev: &ClDevice,
        m: usize,
        nu: usize,
        nf: usize,
        slots: bool,
    ) -> Result<()> {
        self.acc = None; // release the old accumulators first
        let what = |x: &str| format!("mode-shape transforms of {x} ({m} frequencies)");
        self.acc = Some(Accumulators {
            m,
            slots,
            nu,
            nf,
            acc_u: dev.alloc(2 * m * nu, &what("U"))?,
            acc_f: dev.alloc(2 * m * nf, &what("F"))?,
            pu: dev.alloc(2 * m, "phase factors")?,
            pf: dev.alloc(2 * m, "phase factors")?,
        });
        Ok(())
    }

    /// Adds the state times the phase factors; `u`: the buffer, its length and whether it is
    /// slot-major (it must be the layout of [`Self::start`]).
    pub(super) fn add(
        &mut self,
        dev: &ClDevice,
        pu: &[C64],
        pf: &[C64],
        u: (&Buffer<T>, usize, bool),
        f: &Buffer<T>,
    ) -> Result<()> {
        let Some(d) = self.acc.as_mut() else {
            return Err(Error::config(
                "mode shapes",
                "dft_add",
                "dft_start was not called",
            ));
        };
        if pu.len() != d.m || pf.len() != d.m {
            return Err(Error::config(
                "mode shapes",
                pu.len(),
                "phase factors do not match the started transforms",
            ));
        }
        if u.2 != d.slots || u.1 != d.nu {
            return Err(Error::config(
                "mode shapes",
                "dft_add",
                "the layout of U changed since dft_start (start the transforms again)",
            ));
        }
        let pairs =
            |p: &[C64]| -> Vec<T> { p.iter().flat_map(|z| [T::of(z.re), T::of(z.im)]).collect() };
        dev.write(&mut d.pu, &pairs(pu), "phase factors")?;
        dev.write(&mut d.pf, &pairs(pf), "phase factors")?;
        for (n, p, x, acc) in [(d.nu, &d.pu, u.0, &d.acc_u), (d.nf, &d.pf, f, &d.acc_f)] {
            launch(
                dev,
                &self.kernel,
                n,
                LOCAL,
                &[
                    Arg::U32(n as u32),
                    Arg::U32(d.m as u32),
                    Arg::Buf(p),
                    Arg::Buf(x),
                    Arg::Buf(acc),
                ],
            )?;
        }
        Ok(())
    }

    /// Transform `m` as read back: whether `U` was slot-major, and the planes
    /// `[Re X, Im X, Re Y, Im Y]` in the device layouts.
    pub(super) fn take(&self, dev: &ClDevice, m: usize) -> Result<(bool, [Vec<f64>; 4])> {
        let Some(d) = self.acc.as_ref().filter(|d| m < d.m) else {
            return Err(Error::config("mode shapes", m, "no such running transform"));
        };
        let plane = |b: &Buffer<T>, n: usize, k: usize| -> Result<Vec<f64>> {
            let p = dev.read_range(b, (2 * m + k) * n, n, "mode-shape transform")?;
            Ok(p.iter().map(|x| x.f64()).collect())
        };
        Ok((
            d.slots,
            [
                plane(&d.acc_u, d.nu, 0)?,
                plane(&d.acc_u, d.nu, 1)?,
                plane(&d.acc_f, d.nf, 0)?,
                plane(&d.acc_f, d.nf, 1)?,
            ],
        ))
    }
}
