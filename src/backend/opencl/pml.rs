//! The magnetic side of perfectly matched layers on the device ([`crate::dga::stretch`]):
//! per layer tet the correction `F_n −= Σ_j G_j g_j` before the primal update (whose
//! blocks there are `Δt Ã_n⁻¹ C_n`, installed by [`super::Primal::install`]), and per term
//! the pole step after it, which filters the new `F_n` through the term's pole (transposed
//! direct form II, coefficients `b₀ b₁ b₂ a₁ a₂` of the bilinear map) and keeps the change
//! of `s₁` in `g` — the kernels `pml_mag_correct` and `pml_mag_poles` of `cl/dga/pml.cl`,
//! the device form of [`crate::backend::cpu::mag_correct`] and
//! [`crate::backend::cpu::mag_poles`]. The electric side runs in the dispersive kernels
//! ([`super::disp`]): its stretch poles are dispersive pseudo-materials.
//!
//! [`MagPml`] owns its buffers and kernels; the stepper hands it `F`.

use super::kernels::Kernels;
use crate::dga::stretch::MagOps;
use crate::error::{Error, Result};
use crate::ocl::{Arg, ClDevice, LOCAL, kernels, launch};
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

/// The layer's operators and pole states on the device (layout of [`MagOps`]).
struct DevicePml<T> {
    tets: usize,
    terms: usize,
    tet: Buffer<u32>,
    ptr: Buffer<u32>,
    term_tet: Buffer<u32>,
    pole: Buffer<u32>,
    gm: Buffer<T>,
    coef: Buffer<T>,
    /// States: 8 per term (`s₁` of the four faces, then `s₂`).
    s: Buffer<T>,
    /// Changes of `s₁`: 4 per term.
    g: Buffer<T>,
}

/// The magnetic PML of a stepper: none until [`MagPml::install`] is given the operators
/// of a Δt.
pub(super) struct MagPml<T> {
    on: Option<DevicePml<T>>,
    k_correct: Kernel,
    k_poles: Kernel,
}

impl<T: Real> MagPml<T> {
    /// No layer, with the kernels of the DGA program `k`.
    pub(super) fn new(k: &Kernels) -> Result<Self> {
        let [k_correct, k_poles] = kernels(k.program(), ["pml_mag_correct", "pml_mag_poles"])?;
        Ok(MagPml {
            on: None,
            k_correct,
            k_poles,
        })
    }

    /// Installs the layer's operators `mp` (None: no layer) with zero pole states.
    pub(super) fn install(&mut self, dev: &ClDevice, mp: Option<&MagOps<T>>) -> Result<()> {
        self.on = None;
        let Some(mp) = mp else { return Ok(()) };
        let terms = mp.pole.len();
        if terms > u32::MAX as usize / 16 {
            return Err(Error::DeviceMemory(format!(
                "the layer has {terms} magnetic terms, above the 32-bit index of pml_mag_correct"
            )));
        }
        let ptr: Vec<u32> = mp.ptr.iter().map(|&p| p as u32).collect();
        let pole: Vec<u32> = mp.pole.iter().map(|&p| p as u32).collect();
        let gm: Vec<T> = mp.g.iter().flatten().copied().collect();
        self.on = Some(DevicePml {
            tets: mp.tets.len(),
            terms,
            tet: dev.upload(&mp.tets, "PML tets")?,
            ptr: dev.upload(&ptr, "PML term offsets")?,
            term_tet: dev.upload(&mp.term_tet, "PML term tets")?,
            pole: dev.upload(&pole, "PML term poles")?,
            gm: dev.upload(&gm, "PML magnetic corrections")?,
            coef: dev.upload(&mp.coef, "PML pole coefficients")?,
            s: dev.upload(&vec![T::zero(); mp.n_state().max(1)], "PML pole states")?,
            g: dev.upload(&vec![T::zero(); mp.n_g().max(1)], "PML pole changes")?,
        });
        Ok(())
    }

    /// The number of state values and of changes (0, 0 without a layer).
    pub(super) fn counts(&self) -> (usize, usize) {
        self.on
            .as_ref()
            .map_or((0, 0), |d| (8 * d.terms, 4 * d.terms))
    }

    /// `F_n −= Σ_j G_j g_j` on the layer tets of `f` (tet stride `tp`), before the primal
    /// update (None without a layer).
    pub(super) fn correct(
        &self,
        dev: &ClDevice,
        tp: usize,
        f: &Buffer<T>,
    ) -> Result<Option<Event>> {
        let Some(d) = self.on.as_ref().filter(|d| d.tets > 0) else {
            return Ok(None);
        };
        let args = [
            Arg::U32(d.tets as u32),
            Arg::U32(tp as u32),
            Arg::BufU32(&d.tet),
            Arg::BufU32(&d.ptr),
            Arg::Buf(&d.gm),
            Arg::Buf(&d.g),
            Arg::Buf(f),
        ];
        launch(dev, &self.k_correct, d.tets, LOCAL, &args).map(Some)
    }

    /// The pole step on the new `f`, after the primal update (None without a layer).
    pub(super) fn poles(&self, dev: &ClDevice, tp: usize, f: &Buffer<T>) -> Result<Option<Event>> {
        let Some(d) = self.on.as_ref().filter(|d| d.terms > 0) else {
            return Ok(None);
        };
        let args = [
            Arg::U32(d.terms as u32),
            Arg::U32(tp as u32),
            Arg::BufU32(&d.term_tet),
            Arg::BufU32(&d.pole),
            Arg::Buf(&d.coef),
            Arg::Buf(f),
            Arg::Buf(&d.s),
            Arg::Buf(&d.g),
        ];
        launch(dev, &self.k_poles, d.terms, LOCAL, &args).map(Some)
    }

    /// The pole states and changes read back (empty without a layer).
    pub(super) fn state(&self, dev: &ClDevice) -> Result<(Vec<T>, Vec<T>)> {
        let Some(d) = &self.on else {
            return Ok((vec![], vec![]));
        };
        if d.terms == 0 {
            return Ok((vec![], vec![]));
        }
        Ok((
            dev.read(&d.s, 8 * d.terms, "PML pole states")?,
            dev.read(&d.g, 4 * d.terms, "PML pole changes")?,
        ))
    }

    /// Replaces the pole states `s` and changes `g` (lengths of [`Self::counts`]).
    pub(super) fn set_state(&mut self, dev: &ClDevice, s: &[f64], g: &[f64]) -> Result<()> {
        let (ns, ng) = self.counts();
        if s.len() != ns || g.len() != ng {
            return Err(Error::config(
                "state",
                s.len() + g.len(),
                format!("this run has {} PML state values", ns + ng),
            ));
        }
        if let Some(d) = self.on.as_mut().filter(|d| d.terms > 0) {
            let to = |v: &[f64]| v.iter().map(|&x| T::of(x)).collect::<Vec<T>>();
            dev.write(&mut d.s, &to(s), "PML pole states")?;
            dev.write(&mut d.g, &to(g), "PML pole changes")?;
        }
        Ok(())
    }

    /// The bytes the layer adds to a step: per tet its index, offsets and 4 reads and
    /// writes of `F` in the correction, per term its 16 corrections and 4 changes there,
    /// and in the pole step its tet and pole, 4 reads of `F`, 8 states read and written,
    /// 4 changes written (coefficients are cached; 0 without a layer).
    pub(super) fn bytes(&self) -> f64 {
        let Some(d) = &self.on else { return 0.0 };
        let s = std::mem::size_of::<T>() as f64;
        let (t, j) = (d.tets as f64, d.terms as f64);
        t * (8.0 + 8.0 * s) + j * (20.0 * s) + j * (8.0 + 4.0 * s + 16.0 * s + 4.0 * s)
    }
}
