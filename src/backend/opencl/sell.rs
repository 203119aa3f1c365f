//! The circulation lists in sliced ELL form, a bench form of the dual update's first half
//! `c = C̃ F` (`dgatd bench` rows `circulation_sell`, `circulation_pair_sell`; kernels in
//! `cl/dga/sell.cl`): chunks of 32 edges whose lists are interleaved word by word, so the 32
//! work-items of a chunk read consecutive words, each chunk padded to its longest list. The
//! same sums in the same order as `circulation` (tested bit for bit in the kernel smoke run).

use super::*;

/// The circulation lists in sliced ELL form (`circulation_sell`, a bench variant): chunks
/// of 32 edges, each chunk's lists interleaved entry by entry and padded to its longest.
pub struct SellCirculation {
    pub(super) kernel: Kernel,
    pub(super) so: Buffer<u64>,
    pub(super) sc: Buffer<u32>,
    /// Entries stored, padding included (the byte model's).
    pub entries: usize,
}

impl<T: Real> ClStepper<T> {
    /// The device words of circulation form `v` in sliced ELL form: chunks of 32 edges, each
    /// chunk's lists interleaved word by word and padded to its longest; returns the chunk
    /// offsets and the words (edge `e`'s words are `[ptr[e] / w, ptr[e + 1] / w)` of
    /// [`circulation_words`], `w` = 1 for the lists, 2 for the pairs).
    pub(super) fn sliced_ell(&self, v: CircVariant) -> Result<(Vec<u64>, Vec<u32>)> {
        let (ptr, e) = (&self.dga.circ_ptr, self.ne);
        let words = circulation_words(&self.dga, v)?;
        let w = match v {
            CircVariant::Lists => 1,
            CircVariant::Paired => 2,
        };
        let list = |e: usize| ptr[e] as usize / w..ptr[e + 1] as usize / w;
        let chunks = e.div_ceil(32);
        let mut so = Vec::with_capacity(chunks + 1);
        so.push(0u64);
        for c in 0..chunks {
            let longest = (32 * c..(32 * c + 32).min(e))
                .map(|e| list(e).len())
                .max()
                .unwrap_or(0);
            so.push(so[c] + 32 * longest as u64);
        }
        let mut out = vec![0u32; so[chunks] as usize];
        for e in 0..e {
            let base = so[e / 32] as usize + e % 32;
            for (k, &y) in words[list(e)].iter().enumerate() {
                out[base + 32 * k] = y;
            }
        }
        Ok((so, out))
    }

    /// The circulation lists in sliced ELL form ([`SellCirculation`], a bench variant).
    pub fn sell_circulation(&self) -> Result<SellCirculation> {
        let (so, sc) = self.sliced_ell(CircVariant::Lists)?;
        let [kernel] = self.dgatd_kernels(false, ["circulation_sell"])?;
        Ok(SellCirculation {
            kernel,
            entries: sc.len(),
            so: self.dev.upload(&so, "sliced ELL chunk offsets")?,
            sc: self.dev.upload(&sc, "sliced ELL circulation entries")?,
        })
    }

    /// `c = C̃ F` through the sliced ELL lists (`circulation_sell`).
    pub fn circulation_sell(&self, sl: &SellCirculation) -> Result<Event> {
        launch(
            &self.dev,
            &sl.kernel,
            self.ne,
            LOCAL,
            &[
                Arg::U32(self.ne as u32),
                Arg::BufU32(&self.dual.circ_ptr),
                Arg::BufU64(&sl.so),
                Arg::BufU32(&sl.sc),
                Arg::Buf(&self.f),
                Arg::Buf(&self.dual.c),
            ],
        )
    }
}
