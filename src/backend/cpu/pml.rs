//! The magnetic side of perfectly matched layers on the CPU ([`crate::dga::stretch`]):
//! per layer tet, the correction `F_n −= Σ_j G_j g_j` before the primal update (whose
//! blocks there are `Δt Ã_n⁻¹ C_n`) and the pole step after it, which filters the new `F_n`
//! through each term's pole (transposed direct form II, as the electric poles of
//! [`super::disp_poles`]) and keeps the change of `s₁` in `g`.

use crate::dga::operators::Operators;
use crate::real::Real;
use rayon::prelude::*;

/// `F_n −= Σ_j G_j g_j` on every layer tet (nothing without a PML).
pub fn mag_correct<T: Real>(ops: &Operators<T>, g: &[T], f: &mut [T]) {
    let Some(mp) = &ops.mpml else { return };
    let corr: Vec<[T; 4]> = (0..mp.tets.len())
        .into_par_iter()
        .with_min_len(256)
        .map(|i| {
            let mut acc = [T::zero(); 4];
            for j in mp.ptr[i]..mp.ptr[i + 1] {
                let gm = &mp.g[j];
                for (r, a) in acc.iter_mut().enumerate() {
                    for c in 0..4 {
                        *a += gm[4 * r + c] * g[4 * j + c];
                    }
                }
            }
            acc
        })
        .collect();
    for (&n, c) in mp.tets.iter().zip(corr) {
        for (r, x) in c.into_iter().enumerate() {
            f[4 * n as usize + r] -= x;
        }
    }
}

/// The pole step on every layer tet's new `F_n`: states `s` (8 per term), changes `g`
/// (4 per term).
pub fn mag_poles<T: Real>(ops: &Operators<T>, f: &[T], s: &mut [T], g: &mut [T]) {
    let Some(mp) = &ops.mpml else { return };
    s.par_chunks_mut(8)
        .zip(g.par_chunks_mut(4))
        .enumerate()
        .with_min_len(256)
        .for_each(|(j, (st, gj))| {
            let n = mp.term_tet[j] as usize;
            let c = &mp.coef[5 * mp.pole[j] as usize..5 * mp.pole[j] as usize + 5];
            for k in 0..4 {
                let x = f[4 * n + k];
                let (s1, s2) = (st[k], st[4 + k]);
                let y = c[0] * x + s1;
                let s1n = c[1] * x - c[3] * y + s2;
                st[4 + k] = c[2] * x - c[4] * y;
                st[k] = s1n;
                gj[k] = s1n - s1;
            }
        });
}
