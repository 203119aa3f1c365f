//! The stable time step (design note §9): `Δt = CFL · 2 / sqrt(ρ(K))`,
//! `K = Meps⁻¹ C̃ Mmu⁻¹ C`, with ρ estimated by power iteration (generalised Rayleigh
//! quotient in the `Meps` inner product) and enlarged by a 2% margin.

use crate::backend::cpu;
use crate::dga::Dga;
use crate::dga::operators::Operators;
use crate::util::Rng;
use crate::{Error, Result};

/// Power-iteration estimate of ρ(K) (no margin). Uses the CPU kernels on unit operators.
pub fn spectral_radius(dga: &Dga, iters: usize, seed: u64) -> f64 {
    // σ does not change the stability limit (design note §12): the lossless K.
    let ops = Operators::<f64>::lossless(dga, 1.0, false);
    let mut rng = Rng::new(seed);
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
        cpu::primal(&ops, &x, &mut f); // f = -P x
        cpu::circulations(&ops, &f, &mut c);
        cpu::vertex_blocks(&ops, &c, &mut kx); // kx = -K x
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

/// Margin applied to the power-iteration estimate of ρ(K).
pub const RHO_MARGIN: f64 = 1.02;

/// The stable time step (in metres of light travel) for a CFL number in (0, 1].
pub fn time_step(dga: &Dga, cfl: f64) -> Result<(f64, f64)> {
    if !(cfl > 0.0 && cfl <= 1.0) {
        return Err(Error::config("cfl", cfl, "must be in (0, 1]"));
    }
    // the power iteration's Rayleigh quotient is in the Meps inner product
    dga.require_masses("the stable time step")?;
    let rho = spectral_radius(dga, 60, 0x5eed) * RHO_MARGIN;
    Ok((cfl * 2.0 / rho.sqrt(), rho))
}
