//! The CPU reference backend: the leapfrog kernels in parallel with rayon, in f32 or f64.
//!
//! One step: `F^(n+1/2) = F^(n-1/2) - P U^n`, then
//! `U^(n+1) = U^n + D F^(n+1/2) - w(t_(n+1/2)) Δt g`, with `P`, `D` from
//! [`crate::dga::operators`] and the source pattern `g = Meps⁻¹ J`. With conducting tets
//! the dual update is preceded by the loss step `U_v ← B̂_v U_v` at the lossy vertices
//! ([`loss_step`]; Crank–Nicolson in σ, see [`crate::dga::operators`]).
//!
//! The kernels here are the reference, in the operators' own layouts: every device path and
//! the lean layouts of [`lean`] are tested against them. [`CpuStepper`] steps with the lean
//! layouts by default ([`CpuKernels`]), the same step to round-off and 3 times faster on 2
//! cores (`results/cpu/lean/`).

use super::Stepper;
use crate::dga::Dga;
use crate::dga::excitation::{Probe, Source};
use crate::dga::operators::{DualForm, Operators};
use crate::error::{Error, Result};
use crate::problem::Waveform;
use crate::real::Real;
use crate::util::C64;
use rayon::prelude::*;
use std::sync::Arc;

mod dg;
pub(crate) mod lean;
mod pml;
pub use dg::DgCpuStepper;
pub use lean::{
    Lean, circulations as lean_circulations, primal as lean_primal,
    vertex_blocks as lean_vertex_blocks,
};
pub use pml::{mag_correct, mag_poles};

const MIN_LEN: usize = 2048;

/// `f -= P u` (primal block update).
pub fn primal<T: Real>(ops: &Operators<T>, u: &[T], f: &mut [T]) {
    primal_where(ops, u, f, |_| true);
}

/// [`primal`] on the tets `n` with `keep(n)` (the others untouched); the partitioned stepper
/// updates its interface and interior tets separately with it.
pub fn primal_where<T: Real>(
    ops: &Operators<T>,
    u: &[T],
    f: &mut [T],
    keep: impl Fn(usize) -> bool + Sync,
) {
    let t = ops.n_tets;
    let (p, ed) = (&ops.primal, &ops.primal_edges);
    f.par_chunks_mut(4)
        .with_min_len(MIN_LEN / 4)
        .enumerate()
        .for_each(|(n, fr)| {
            if !keep(n) {
                return;
            }
            if let Some(&a) = ops.mag.get(n) {
                // magnetic loss (design note §12): the old F decays first
                for x in fr.iter_mut() {
                    *x *= a;
                }
            }
            let mut s = [T::zero(); 6];
            for c in 0..6 {
                let e = ed[c * t + n] as usize;
                s[c] = u[2 * e] + u[2 * e + 1];
            }
            for r in 0..4 {
                let mut acc = T::zero();
                for c in 0..6 {
                    acc += p[(r * 6 + c) * t + n] * s[c];
                }
                fr[r] -= acc;
            }
        });
}

/// Dual-face circulations `c_e = (C̃ F)_e` for every edge.
pub fn circulations<T: Real>(ops: &Operators<T>, f: &[T], c: &mut [T]) {
    c.par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(e, ce)| {
            let mut acc = T::zero();
            for &x in &ops.circ[ops.circ_ptr[e] as usize..ops.circ_ptr[e + 1] as usize] {
                // the sign by selection, not a branch: the signs around an edge follow no
                // pattern a branch predictor learns (subtracting v and adding -v round the
                // same, so the result is the same bit for bit)
                let v = f[(x >> 1) as usize];
                acc += if x & 1 == 1 { -v } else { v };
            }
            *ce = acc;
        });
}

/// `u += B c` with the per-vertex blocks (second half of the factored dual update).
pub fn vertex_blocks<T: Real>(ops: &Operators<T>, c: &[T], u: &mut [T]) {
    u.par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(h, uh)| {
            if ops.hrow[h] != u64::MAX {
                *uh += vertex_block_row(ops, h, c);
            }
        });
}

/// Row `h` of `B c` (free half-edge `h`: its row of its vertex's block times the
/// circulations of the vertex's edges), in the order every CPU path adds it.
pub(crate) fn vertex_block_row<T: Real>(ops: &Operators<T>, h: usize, c: &[T]) -> T {
    let row = ops.hrow[h] as usize;
    let v = ops.hvert[h] as usize;
    let (a, b) = (ops.vptr[v] as usize, ops.vptr[v + 1] as usize);
    let mut acc = T::zero();
    for (j, &bij) in ops.block[row..row + (b - a)].iter().enumerate() {
        acc += bij * c[(ops.vh[a + j] >> 1) as usize];
    }
    acc
}

/// The loss step `U_v ← B̂_v U_v` at every lossy vertex: first every lossy row's new value
/// into `tmp` (reading the old `u` only), then written back. Nothing when lossless.
pub fn loss_step<T: Real>(ops: &Operators<T>, u: &mut [T], tmp: &mut [T]) {
    if ops.loss_h.is_empty() {
        return;
    }
    {
        let u: &[T] = u;
        tmp.par_iter_mut()
            .with_min_len(MIN_LEN)
            .enumerate()
            .for_each(|(k, t)| {
                let v = ops.loss_vert[k] as usize;
                let (a, b) = (ops.vptr[v] as usize, ops.vptr[v + 1] as usize);
                let r = ops.loss_row[k] as usize;
                let row = &ops.loss_block[r..r + (b - a)];
                let mut acc = T::zero();
                for (j, &bij) in row.iter().enumerate() {
                    acc += bij * u[ops.vh[a + j] as usize];
                }
                *t = acc;
            });
    }
    for (&h, &t) in ops.loss_h.iter().zip(tmp.iter()) {
        u[h as usize] = t;
    }
}

/// The dispersive correction `U_v −= Σ_m G_m g_m` before the dual update (nothing without
/// dispersion; [`crate::dga::operators::DispOps`]).
pub fn disp_correct<T: Real>(ops: &Operators<T>, g: &[T], u: &mut [T]) {
    let Some(d) = &ops.disp else { return };
    let corr: Vec<T> = (0..d.h.len())
        .into_par_iter()
        .with_min_len(MIN_LEN)
        .map(|r| {
            let (o, l, go) = (d.row[r] as usize, d.len[r] as usize, d.goff[r] as usize);
            if l == 0 {
                d.block[o] * g[go]
            } else {
                let mut acc = T::zero();
                for j in 0..l {
                    acc += d.block[o + j] * g[go + j];
                }
                acc
            }
        })
        .collect();
    for (&h, c) in d.h.iter().zip(corr) {
        u[h as usize] -= c;
    }
}

/// The pole step after the dual update: every dispersive filter takes the new `U`, and
/// `g` gets the change of each entry's summed `s₁` (nothing without dispersion).
pub fn disp_poles<T: Real>(ops: &Operators<T>, u: &[T], s: &mut [T], g: &mut [T]) {
    let Some(d) = &ops.disp else { return };
    for m in 0..d.ptr.len() - 1 {
        let (e0, n) = (d.ptr[m], d.ptr[m + 1] - d.ptr[m]);
        let poles = &d.coef[5 * d.cptr[m]..5 * d.cptr[m + 1]];
        let st = &mut s[d.sptr[m]..d.sptr[m + 1]];
        let out: Vec<T> = {
            // states are pole-major (2p + q) * n + i: update entry i across the columns
            let cols: Vec<&mut [T]> = st.chunks_mut(n.max(1)).collect();
            let mut cols = cols;
            (0..n)
                .map(|i| {
                    let x = u[d.ent_h[e0 + i] as usize];
                    let mut acc = T::zero();
                    for (p, c) in poles.chunks(5).enumerate() {
                        let (s1, s2) = (cols[2 * p][i], cols[2 * p + 1][i]);
                        let y = c[0] * x + s1;
                        let s1n = c[1] * x - c[3] * y + s2;
                        cols[2 * p + 1][i] = c[2] * x - c[4] * y;
                        cols[2 * p][i] = s1n;
                        acc += s1n - s1;
                    }
                    acc
                })
                .collect()
        };
        for (i, x) in out.into_iter().enumerate() {
            g[d.ent_g[e0 + i] as usize] = x;
        }
    }
}

/// `u += D f` with the global CSR matrix.
pub fn dual_csr<T: Real>(ops: &Operators<T>, f: &[T], u: &mut [T]) {
    let m = ops
        .csr
        .as_ref()
        .expect("operators built with the CSR matrix");
    let (ip, ix, dv) = (m.indptr(), m.indices(), m.data());
    let ip = ip.raw_storage();
    u.par_iter_mut()
        .with_min_len(MIN_LEN)
        .enumerate()
        .for_each(|(h, uh)| {
            let mut acc = T::zero();
            for k in ip[h]..ip[h + 1] {
                acc += dv[k] * f[ix[k]];
            }
            *uh += acc;
        });
}

/// Which kernels a [`CpuStepper`] steps with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuKernels {
    /// The reference kernels of this module, in the operators' own layouts.
    Reference,
    /// The lean layouts of [`lean`] (the default): the same step to round-off, 3–4 times
    /// faster on a CPU.
    #[default]
    Lean,
}

/// The lean layouts of `ops` for the dual form `dual`, and the dual pass's scratch: the
/// packed blocks and one scratch value per free half-edge with the factored dual, neither
/// with the CSR dual (which reads its matrix).
fn lean_of<T: Real>(dga: &Dga, ops: &Operators<T>, dual: DualForm) -> Result<(Lean<T>, Vec<T>)> {
    let lean = Lean::new(dga, ops, dual == DualForm::Factored)?;
    let y = lean.scratch();
    Ok((lean, y))
}

/// The CPU stepper.
pub struct CpuStepper<T: Real> {
    ops: Arc<Operators<T>>,
    /// The lean layouts ([`CpuKernels::Lean`]; None with the reference kernels) and the
    /// factored dual pass's vertex-major scratch (empty with the CSR dual).
    lean: Option<(Lean<T>, Vec<T>)>,
    dga: Arc<Dga>,
    dual: DualForm,
    u: Vec<T>,
    f: Vec<T>,
    c: Vec<T>,
    /// Scratch of the loss step (one per lossy row).
    lt: Vec<T>,
    /// Dispersion: the pole states and the last changes `g` ([`disp_poles`]).
    ds: Vec<T>,
    dg: Vec<T>,
    /// The magnetic PML's pole states and changes ([`mag_poles`]; empty without a PML).
    ms: Vec<T>,
    mg: Vec<T>,
    source: Vec<(u32, T)>,
    wave: Option<Waveform>,
    probes: Vec<Probe>,
    /// Running Fourier transforms of `U` and `F` ([`Stepper::dft_start`]).
    dft: Vec<(Vec<C64>, Vec<C64>)>,
}

impl<T: Real> CpuStepper<T> {
    /// A stepper from a zero state. The source (if any, with its unit-Δt pattern) is
    /// driven by `wave`.
    pub fn new(
        dga: Arc<Dga>,
        ops: Arc<Operators<T>>,
        dual: DualForm,
        source: Option<(&Source, Waveform)>,
        probes: Vec<Probe>,
    ) -> Result<Self> {
        if dual == DualForm::Csr && ops.csr.is_none() {
            return Err(Error::config(
                "dual",
                "csr",
                "operators were built without the CSR matrix",
            ));
        }
        Ok(CpuStepper {
            lean: Some(lean_of(&dga, &ops, dual)?),
            u: vec![T::zero(); ops.n_half()],
            f: vec![T::zero(); ops.n_dual()],
            c: vec![T::zero(); ops.n_edges],
            lt: vec![T::zero(); ops.loss_h.len()],
            ds: vec![T::zero(); ops.disp.as_ref().map_or(0, |d| d.n_state)],
            dg: vec![T::zero(); ops.disp.as_ref().map_or(0, |d| d.n_g)],
            ms: vec![T::zero(); ops.mpml.as_ref().map_or(0, |m| m.n_state())],
            mg: vec![T::zero(); ops.mpml.as_ref().map_or(0, |m| m.n_g())],
            source: source
                .map(|(s, _)| {
                    ops.source_pattern(s).unwrap_or_else(|| {
                        s.pattern
                            .iter()
                            .map(|&(h, g)| (h, T::of(g * ops.dt)))
                            .collect()
                    })
                })
                .unwrap_or_default(),
            wave: source.map(|(_, w)| w),
            ops,
            dga,
            dual,
            probes,
            dft: Vec::new(),
        })
    }

    /// Steps with `k` from now on (the state is kept; building the lean layouts can fail
    /// only on a mesh past 2³¹ edges).
    pub fn set_kernels(&mut self, k: CpuKernels) -> Result<()> {
        match k {
            CpuKernels::Reference => self.lean = None,
            CpuKernels::Lean if self.lean.is_none() => {
                self.lean = Some(lean_of(&self.dga, &self.ops, self.dual)?)
            }
            CpuKernels::Lean => {}
        }
        Ok(())
    }

    /// The kernels this stepper steps with.
    pub fn kernels(&self) -> CpuKernels {
        if self.lean.is_some() {
            CpuKernels::Lean
        } else {
            CpuKernels::Reference
        }
    }

    /// The electric DoFs `U^n` (half-edge slots).
    pub fn u(&self) -> &[T] {
        &self.u
    }

    /// One leapfrog step with source amplitude `amp`.
    pub fn step(&mut self, amp: f64) {
        mag_correct(&self.ops, &self.mg, &mut self.f);
        match &self.lean {
            Some((l, _)) => lean::primal(&self.ops, l, &self.u, &mut self.f),
            None => primal(&self.ops, &self.u, &mut self.f),
        }
        mag_poles(&self.ops, &self.f, &mut self.ms, &mut self.mg);
        loss_step(&self.ops, &mut self.u, &mut self.lt);
        disp_correct(&self.ops, &self.dg, &mut self.u);
        match self.dual {
            DualForm::Factored => match &mut self.lean {
                Some((l, y)) => {
                    lean::circulations(&self.ops, l, &self.f, &mut self.c);
                    lean::vertex_blocks(l, &self.c, y, &mut self.u)
                }
                None => {
                    circulations(&self.ops, &self.f, &mut self.c);
                    vertex_blocks(&self.ops, &self.c, &mut self.u)
                }
            },
            DualForm::Csr => dual_csr(&self.ops, &self.f, &mut self.u),
        }
        if amp != 0.0 {
            let a = T::of(amp);
            for &(h, g) in &self.source {
                self.u[h as usize] -= a * g;
            }
        }
        disp_poles(&self.ops, &self.u, &mut self.ds, &mut self.dg);
    }

    /// The dispersive states `(s, g)` ([`disp_poles`]; empty without dispersion).
    pub fn disp_state(&self) -> (&[T], &[T]) {
        (&self.ds, &self.dg)
    }
}

/// The energy stored in the dispersive poles ([`crate::problem::dispersion::AuxEnergy`]):
/// `Σ_m Σ_p (w_J J·M0^m·J + w_P P·M0^m·P)`, with `P`, `J` per half-edge read from the
/// states `s` (layout of [`crate::dga::operators::DispOps`]) and `U`; 0 without dispersion.
pub fn aux_energy<T: Real>(dga: &Dga, ops: &Operators<T>, u: &[T], s: &[T]) -> f64 {
    match &ops.disp {
        Some(d) => aux_energy_of(dga, d, ops.dt, u, s),
        None => 0.0,
    }
}

/// [`aux_energy`] for a dispersive layout `d` and time step `dt`.
pub fn aux_energy_of<T: Real, S: Real>(
    dga: &Dga,
    d: &crate::dga::operators::DispOps<S>,
    dt: f64,
    u: &[T],
    s: &[T],
) -> f64 {
    let Some(ds) = &dga.disp else {
        return 0.0;
    };
    let nh = dga.n_half();
    let mut w = 0.0;
    // the real media only: a PML's stretch poles have weights of either sign
    for (m, poles) in ds.poles.iter().enumerate().take(ds.n_media) {
        let (e0, n) = (d.ptr[m], d.ptr[m + 1] - d.ptr[m]);
        for (p, pole) in poles.iter().enumerate() {
            let ae = pole.aux_energy(dt);
            let (mut pv, mut jv) = (vec![0.0; nh], vec![0.0; nh]);
            for i in 0..n {
                let h = d.ent_h[e0 + i] as usize;
                let at = |q: usize| s[d.sptr[m] + (2 * p + q) * n + i].f64();
                let (pp, jj) = ae.pj(u[h].f64(), at(0), at(1));
                pv[h] = pp;
                jv[h] = jj;
            }
            w += ae.wp * ds.m0[m].quad(&pv) + ae.wj * ds.m0[m].quad(&jv);
        }
    }
    w
}

/// The energy dissipated by conduction in the step `U^n → U^(n+1)`:
/// `Δt Ūᵀ Msig Ū`, `Ū = (U^n + U^(n+1))/2` (0 without `Msig`). With the Crank–Nicolson
/// loss step, `W^(n+1) − W^n = −Δt Ūᵀ Msig Ū − Δt ŪᵀJ` exactly (design note §12).
pub fn dissipation<T: Real>(dga: &Dga, dt: f64, u0: &[T], u1: &[T]) -> f64 {
    let Some(m) = &dga.msig else { return 0.0 };
    let ub: Vec<f64> = u0
        .iter()
        .zip(u1)
        .map(|(a, b)| 0.5 * (a.f64() + b.f64()))
        .collect();
    dt * m.quad(&ub)
}

/// The discrete energy `½ UᵀMeps U + ½ F_oldᵀ Mmu F_new` with `F_new = F_old - P U`,
/// evaluated in f64.
pub fn energy<T: Real>(dga: &Dga, ops: &Operators<T>, u: &[T], f: &[T]) -> f64 {
    let mut fnew = f.to_vec();
    primal(ops, u, &mut fnew);
    energy_of(dga, u, f, &fnew)
}

/// `½ UᵀMeps U + ½ F_oldᵀ Mmu F_new` for given states (F in the host layout `4n + k`).
pub fn energy_of<T: Real>(dga: &Dga, u: &[T], f: &[T], fnew: &[T]) -> f64 {
    energy_of_tets(dga, u, f, fnew, None)
}

/// [`energy_of`] with the magnetic part over the tets `n` with `tets[n]` only (None: all;
/// a partition's owned tets). Per-tet terms in parallel, summed in a fixed order:
/// bit-reproducible, and the same bits with `None` as with every tet selected.
pub fn energy_of_tets<T: Real>(
    dga: &Dga,
    u: &[T],
    f: &[T],
    fnew: &[T],
    tets: Option<&[bool]>,
) -> f64 {
    let u64v: Vec<f64> = u.iter().map(|x| x.f64()).collect();
    let we = 0.5 * dga.meps.quad(&u64v);
    let wm: Vec<f64> = (0..dga.n_tets)
        .into_par_iter()
        .map(|n| {
            if tets.is_some_and(|t| !t[n]) {
                return 0.0;
            }
            let m = &dga.mmu[n];
            let mut s = 0.0;
            for r in 0..4 {
                for c in 0..4 {
                    s += f[4 * n + r].f64() * m[r * 4 + c] * fnew[4 * n + c].f64();
                }
            }
            s
        })
        .collect();
    we + 0.5 * wm.iter().sum::<f64>()
}

impl<T: Real> Stepper for CpuStepper<T> {
    fn name(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        for k in first..first + n {
            let a = self
                .wave
                .map(|w| w.at((k as f64 + 0.5) * self.ops.dt))
                .unwrap_or(0.0);
            self.step(a);
            for p in &self.probes {
                let e = p.sample(&self.u);
                samples.extend_from_slice(&e);
            }
        }
        Ok(())
    }
    fn energy(&mut self) -> Result<f64> {
        self.dga.require_masses("energy")?;
        Ok(energy(&self.dga, &self.ops, &self.u, &self.f)
            + aux_energy(&self.dga, &self.ops, &self.u, &self.ds))
    }
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        Ok((
            self.u.iter().map(|x| x.f64()).collect(),
            self.f.iter().map(|x| x.f64()).collect(),
        ))
    }
    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        if u.len() != self.u.len() || f.len() != self.f.len() {
            return Err(Error::config(
                "state",
                format!("{}+{}", u.len(), f.len()),
                "length does not match the mesh",
            ));
        }
        self.u = u.iter().map(|&x| T::of(x)).collect();
        self.f = f.iter().map(|&x| T::of(x)).collect();
        Ok(())
    }
    fn aux_state(&self) -> Result<Vec<f64>> {
        Ok(self
            .ds
            .iter()
            .chain(&self.dg)
            .chain(&self.ms)
            .chain(&self.mg)
            .map(|x| x.f64())
            .collect())
    }
    fn set_aux_state(&mut self, aux: &[f64]) -> Result<()> {
        let lens = [self.ds.len(), self.dg.len(), self.ms.len(), self.mg.len()];
        let total: usize = lens.iter().sum();
        if aux.len() != total {
            return Err(Error::config(
                "state",
                aux.len(),
                format!("this run has {total} dispersive and PML state values"),
            ));
        }
        let mut rest = aux;
        for (v, n) in [&mut self.ds, &mut self.dg, &mut self.ms, &mut self.mg]
            .into_iter()
            .zip(lens)
        {
            let (a, b) = rest.split_at(n);
            *v = a.iter().map(|&x| T::of(x)).collect();
            rest = b;
        }
        Ok(())
    }
    fn dft_start(&mut self, n: usize) -> Result<()> {
        let zero = C64::new(0.0, 0.0);
        self.dft = (0..n)
            .map(|_| (vec![zero; self.u.len()], vec![zero; self.f.len()]))
            .collect();
        Ok(())
    }
    fn dft_add(&mut self, pu: &[C64], pf: &[C64]) -> Result<()> {
        if pu.len() != self.dft.len() || pf.len() != self.dft.len() {
            return Err(Error::config(
                "mode shapes",
                pu.len(),
                "phase factors do not match the started transforms",
            ));
        }
        let (u, f) = (&self.u, &self.f);
        self.dft
            .par_iter_mut()
            .zip(pu.par_iter().zip(pf))
            .for_each(|((x, y), (&a, &b))| {
                for (x, &v) in x.iter_mut().zip(u) {
                    *x += a * v.f64();
                }
                for (y, &v) in y.iter_mut().zip(f) {
                    *y += b * v.f64();
                }
            });
        Ok(())
    }
    fn dft_take(&self, m: usize) -> Result<(Vec<C64>, Vec<C64>)> {
        self.dft
            .get(m)
            .cloned()
            .ok_or_else(|| Error::config("mode shapes", m, "no such running transform"))
    }
}

/// Margin applied to the power-iteration estimate of ρ(K) before the time step is taken
/// from it (the estimate approaches ρ from below).
pub const RHO_MARGIN: f64 = 1.02;

/// Power-iteration estimate of ρ(K) (no margin, [`RHO_MARGIN`]). Uses the CPU kernels on unit operators.
pub fn spectral_radius(dga: &Dga, iters: usize, seed: u64) -> f64 {
    // σ does not change the stability limit (design note §12): the lossless K.
    let ops = Operators::<f64>::lossless(dga, 1.0, false);
    let mut rng = crate::util::Rng::new(seed);
    let mut x = vec![0.0; dga.n_half()];
    for &h in &dga.meps.h {
        x[h as usize] = rng.sym();
    }
    let mut f = vec![0.0; dga.n_dual()];
    let mut c = vec![0.0; dga.n_edges];
    let mut kx = vec![0.0; dga.n_half()];
    let mut lambda = 0.0;
    for _ in 0..iters {
        f.iter_mut().for_each(|v| *v = 0.0);
        kx.iter_mut().for_each(|v| *v = 0.0);
        primal(&ops, &x, &mut f); // f = -P x
        circulations(&ops, &f, &mut c);
        vertex_blocks(&ops, &c, &mut kx); // kx = -K x
        kx.iter_mut().for_each(|v| *v = -*v);
        let mut mkx = vec![0.0; x.len()];
        dga.meps.apply_add(&kx, &mut mkx);
        let num: f64 = x.iter().zip(&mkx).map(|(a, b)| a * b).sum();
        let den = dga.meps.quad(&x);
        lambda = num / den;
        let nrm = kx.iter().map(|v| v * v).sum::<f64>().sqrt();
        if nrm == 0.0 {
            break;
        }
        x.iter_mut().zip(&kx).for_each(|(a, b)| *a = b / nrm);
    }
    lambda
}
