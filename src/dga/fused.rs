//! The layout of the fused dual update of dispersive vertices ([`DispOps::fused`]): the
//! pole step of every "pure" vertex inside the vertex-major dual update (the OpenCL
//! `vertex_block_vf` kernel), split from [`super::operators`].

use super::operators::DispOps;
use crate::real::Real;

impl<T: Real> DispOps<T> {
    /// The layout of the fused dual update (`vertex_block_vf` in the DGA program (`cl/dga/*.cl`)): the
    /// dispersion of every "pure" vertex (one material around it, no σ; its correction is
    /// the scalar `1/(ε∞ + b₀)`) runs inside the vertex-major dual update, so its `U`, pole
    /// states and `g` are read and written once per step. `vptr`/`vh`: the free half-edges
    /// of each vertex ([`super::Operators::vptr`], [`super::Operators::vh`]); `skip`: half-edges that
    /// must stay in the split kernels (the source's, which is added between the dual
    /// update and the poles). A vertex is fused only when its slots' correction rows,
    /// entries and `g` values are consecutive in slot order, which [`disp_ops`] builds;
    /// the check keeps any other vertex in the split kernels.
    pub fn fused(&self, vptr: &[u32], vh: &[u32], skip: &[u32]) -> FusedDisp {
        let nm = self.ptr.len() - 1;
        let nh = vh
            .iter()
            .chain(&self.h)
            .chain(skip)
            .map(|&h| h as usize + 1)
            .max()
            .unwrap_or(0);
        let mut pure_row = vec![u32::MAX; nh];
        for (r, &h) in self.h.iter().enumerate() {
            if self.len[r] == 0 {
                pure_row[h as usize] = r as u32;
            }
        }
        let mut skipped = vec![false; nh];
        for &h in skip {
            skipped[h as usize] = true;
        }
        let mut kof = vec![u32::MAX; self.n_g];
        for (k, &g) in self.ent_g.iter().enumerate() {
            kof[g as usize] = k as u32;
        }
        let nv = vptr.len().saturating_sub(1);
        let (mut fm, mut fe, mut fg) = (vec![u32::MAX; nv], vec![0u32; nv], vec![0u32; nv]);
        let mut row_fused = vec![false; self.h.len()];
        let mut ent_fused = vec![false; self.ent_h.len()];
        let mut slots = 0;
        for v in 0..nv {
            let hs = &vh[vptr[v] as usize..vptr[v + 1] as usize];
            let Some(&h0) = hs.first() else { continue };
            let r0 = pure_row[h0 as usize];
            if r0 == u32::MAX {
                continue;
            }
            let (m, g0) = (
                self.row[r0 as usize] as usize,
                self.goff[r0 as usize] as usize,
            );
            let k0 = kof[g0] as usize;
            let ok = m < nm
                && hs.iter().enumerate().all(|(i, &h)| {
                    let r = pure_row[h as usize];
                    let (g, k) = (g0 + i, k0 + i);
                    !skipped[h as usize]
                        && r != u32::MAX
                        && self.row[r as usize] as usize == m
                        && self.goff[r as usize] as usize == g
                        && g < self.n_g
                        && kof[g] as usize == k
                        && (self.ptr[m]..self.ptr[m + 1]).contains(&k)
                        && self.ent_h[k] == h
                });
            if !ok {
                continue;
            }
            fm[v] = m as u32;
            fe[v] = (k0 - self.ptr[m]) as u32;
            fg[v] = g0 as u32;
            for (i, &h) in hs.iter().enumerate() {
                row_fused[pure_row[h as usize] as usize] = true;
                ent_fused[k0 + i] = true;
            }
            slots += hs.len();
        }
        let mt = (0..nm)
            .flat_map(|m| {
                [
                    self.sptr[m] as u64,
                    (self.ptr[m + 1] - self.ptr[m]) as u64,
                    (self.cptr[m + 1] - self.cptr[m]) as u64 | (u64::from(self.orders(m)) << 32),
                    (5 * self.cptr[m]) as u64,
                ]
            })
            .collect();
        let rest = (0..nm)
            .map(|m| {
                (self.ptr[m]..self.ptr[m + 1])
                    .filter(|&k| !ent_fused[k])
                    .map(|k| (k - self.ptr[m]) as u32)
                    .collect()
            })
            .collect();
        let states = (0..nm)
            .map(|m| {
                let n = (self.ptr[m]..self.ptr[m + 1])
                    .filter(|&k| ent_fused[k])
                    .count();
                n * self.touched(m)
            })
            .sum();
        FusedDisp {
            vertices: fm.iter().filter(|&&m| m != u32::MAX).count(),
            fm,
            fe,
            fg,
            mt,
            rows: (0..self.h.len()).filter(|&r| !row_fused[r]).collect(),
            rest,
            slots,
            states,
        }
    }
}

/// The fused dual update's layout ([`DispOps::fused`]).
///
/// - Per vertex: `fm` its material (`u32::MAX`: not fused), `fe` the pole entry (index
///   within the material) of its first slot, `fg` the `g` index of its first slot; slot `i`
///   of the vertex has entry `fe + i` and `g` index `fg + i`.
/// - Per material `m`: `mt[4m..4m + 4]` = state offset, entry count, pole count (low 32
///   bits; [`DispOps::orders`] in the high 32) and coefficient offset (as in [`DispOps`]).
/// - What the split kernels still do: the correction rows `rows`, and per material the
///   entries `rest[m]` (indices within the material).
#[derive(Clone, Debug)]
pub struct FusedDisp {
    pub fm: Vec<u32>,
    pub fe: Vec<u32>,
    pub fg: Vec<u32>,
    pub mt: Vec<u64>,
    pub rows: Vec<usize>,
    pub rest: Vec<Vec<u32>>,
    /// Fused vertices, slots, and states read and written in the fused kernel.
    pub vertices: usize,
    pub slots: usize,
    pub states: usize,
}

impl FusedDisp {
    /// The counts of the byte model ([`crate::cost::disp_bytes_fused`]): the split
    /// kernels' remaining part of `d`, and the fused part.
    pub fn counts<T: Real>(
        &self,
        d: &DispOps<T>,
    ) -> (crate::cost::DispCounts, crate::cost::FusedCounts) {
        let rest = crate::cost::DispCounts {
            rows: self.rows.len(),
            full_rows: self.rows.iter().filter(|&&r| d.len[r] > 0).count(),
            full_len: self.rows.iter().map(|&r| d.len[r] as usize).sum(),
            entries: self.rest.iter().map(Vec::len).sum(),
            states: self
                .rest
                .iter()
                .enumerate()
                .map(|(m, r)| r.len() * d.touched(m))
                .sum(),
        };
        let fused = crate::cost::FusedCounts {
            vertices: self.vertices,
            slots: self.slots,
            states: self.states,
        };
        (rest, fused)
    }
}
