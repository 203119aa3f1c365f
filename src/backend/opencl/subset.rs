//! Index-subset launches for a partitioned rank (`crate::partition`).

use super::*;

/// A subset of a stepper's tets, edges or free half-edge slots (or, for halo packing, of
/// the slots of a field) for index-subset launches: the ids on the device, or all of them
/// (no index list: the plain kernel runs).
pub struct Subset {
    pub(super) idx: Option<Buffer<u32>>,
    pub(super) n: usize,
}

impl Subset {
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// Index-subset launches for a partitioned rank (`crate::partition`): the same kernels on a
/// selection of entities, on either queue, after given events. A subset launch does the
/// same arithmetic as the whole launch for each entity it covers; the primal update uses the
/// per-tet mapping and the dual update the factored form with the vertex-major blocks.
impl<T: Real> ClStepper<T> {
    /// A subset of `total` entities: `ids` uploaded, or no list when `ids` is `0..total`.
    pub fn subset(&self, ids: &[u32], total: usize, what: &str) -> Result<Subset> {
        if ids.len() == total && ids.iter().enumerate().all(|(i, &x)| x as usize == i) {
            return Ok(Subset {
                idx: None,
                n: total,
            });
        }
        self.indices(ids, what)
    }

    /// An explicit index list (for packing halos).
    pub fn indices(&self, ids: &[u32], what: &str) -> Result<Subset> {
        Ok(Subset {
            idx: Some(self.dev.upload(ids, what)?),
            n: ids.len(),
        })
    }

    /// Tets, edges and free half-edge slots of the local mesh.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.t, self.ne, self.nfree)
    }

    /// The column length of F and the per-tet operators on the device ([`tet_stride`]):
    /// F value `k` of tet `n` is at `k * tet_stride + n` in [`Self::state_buffers`]' F.
    pub fn tet_stride(&self) -> usize {
        self.tp
    }

    /// The device buffers of `U` (in the stepper's [`ULayout`]: `US` while slot-major) and `F`.
    pub fn state_buffers(&self) -> (&Buffer<T>, &Buffer<T>) {
        (self.slots.as_ref().map_or(&self.u, |st| &st.sm.us), &self.f)
    }

    /// `F -= P U` on the tets of `s`.
    pub fn primal_on(&self, s: &Subset, lane: Lane, wait: &[&Event]) -> Result<Event> {
        let idx = s.idx.as_ref().map(|i| (i, s.n));
        match &self.slots {
            Some(st) => (self.primal).launch_sm(&self.dev, &st.sm, &self.f, idx, lane, wait),
            None => (self.primal).launch(&self.dev, &self.u, &self.f, idx, lane, wait),
        }
    }

    /// Circulations of the edges of `s`.
    pub fn circulation_on(&self, s: &Subset, lane: Lane, wait: &[&Event]) -> Result<Event> {
        let idx = s.idx.as_ref().map(|i| (i, s.n));
        self.dual.circulation(&self.dev, &self.f, idx, lane, wait)
    }

    /// `U += B c` on the free half-edge slots of `s` (positions in `vh`, vertex-major).
    pub fn vertex_blocks_on(&self, s: &Subset, lane: Lane, wait: &[&Event]) -> Result<Event> {
        let idx = s.idx.as_ref().map(|i| (i, s.n));
        match &self.slots {
            Some(st) => self
                .dual
                .vertex_blocks_sm(&self.dev, &st.sm, idx, lane, wait),
            None => self.dual.vertex_blocks(&self.dev, &self.u, idx, lane, wait),
        }
    }

    /// `dst[i] = src[s[i]]` (packing the values a neighbour needs).
    pub fn gather(
        &self,
        src: &Buffer<T>,
        s: &Subset,
        dst: &Buffer<T>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        self.pack(&self.k.gather, src, s, dst, lane, wait)
    }

    /// `dst[s[i]] = src[i]` (putting received ghost values in place).
    pub fn scatter(
        &self,
        src: &Buffer<T>,
        s: &Subset,
        dst: &Buffer<T>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        self.pack(&self.k.scatter, src, s, dst, lane, wait)
    }

    pub(super) fn pack(
        &self,
        kernel: &Kernel,
        src: &Buffer<T>,
        s: &Subset,
        dst: &Buffer<T>,
        lane: Lane,
        wait: &[&Event],
    ) -> Result<Event> {
        let Some(i) = &s.idx else {
            return Err(Error::config(
                "halo list",
                s.n,
                "packing needs an explicit index list (ClStepper::indices)",
            ));
        };
        launch_on(
            &self.dev,
            lane,
            kernel,
            s.n,
            LOCAL,
            &[
                Arg::U32(s.n as u32),
                Arg::BufU32(i),
                Arg::Buf(src),
                Arg::Buf(dst),
            ],
            wait,
        )
    }
}
