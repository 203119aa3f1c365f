//! The MPI transport (feature `mpi`, the `mpi` crate): non-blocking point-to-point halo
//! exchange (one packed buffer per neighbour, `MPI_Irecv`/`MPI_Isend`, the interior update
//! running before `MPI_Wait`), `MPI_Allgather(v)` for the global sums and probe samples.
//!
//! OpenCL devices have no device-aware MPI, so a device rank's halo path is
//! device → host (read the packed interface values) → MPI → host → device (write the ghost
//! values); see `results/scaling/README.md` for the design and its cost model.

use super::comm::{Comm, TAG_HALO, TAG_WORDS};
use crate::error::Result;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// Largest message, in words, sent at once (MPI counts are 32-bit).
const CHUNK: usize = 1 << 27;

/// A [`Comm`] over an MPI communicator.
pub struct MpiComm {
    world: SimpleCommunicator,
}

impl MpiComm {
    /// Wraps a communicator (usually `universe.world()`).
    pub fn new(world: SimpleCommunicator) -> Self {
        MpiComm { world }
    }
    /// The rank among the ranks of this node (for picking the node's i-th GPU).
    pub fn node_rank(&self) -> usize {
        self.world.split_shared(self.world.rank()).rank() as usize
    }
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn exchange(
        &self,
        peers: &[usize],
        send: &[Vec<f64>],
        recv: &mut [Vec<f64>],
        overlap: &mut dyn FnMut(),
    ) -> Result<()> {
        let world = &self.world;
        mpi::request::scope(|sc| {
            let recvs: Vec<_> = peers
                .iter()
                .zip(recv.iter_mut())
                .map(|(&p, r)| {
                    world
                        .process_at_rank(p as i32)
                        .immediate_receive_into_with_tag(sc, &mut r[..], TAG_HALO as i32)
                })
                .collect();
            let sends: Vec<_> = peers
                .iter()
                .zip(send)
                .map(|(&p, s)| {
                    world.process_at_rank(p as i32).immediate_send_with_tag(
                        sc,
                        &s[..],
                        TAG_HALO as i32,
                    )
                })
                .collect();
            overlap();
            for r in recvs {
                r.wait();
            }
            for s in sends {
                s.wait();
            }
        });
        Ok(())
    }
    fn all_gather(&self, mine: &[f64]) -> Result<Vec<Vec<f64>>> {
        let n = mine.len() as mpi::Count;
        let mut counts = vec![0 as mpi::Count; self.size()];
        self.world.all_gather_into(&n, &mut counts[..]);
        let displs: Vec<mpi::Count> = counts
            .iter()
            .scan(0, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut buf = vec![0.0f64; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut part);
        }
        Ok(counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| buf[d as usize..(d + c) as usize].to_vec())
            .collect())
    }
    fn send_words(&self, to: usize, words: &[u64]) -> Result<()> {
        let p = self.world.process_at_rank(to as i32);
        p.send_with_tag(&(words.len() as u64), TAG_WORDS as i32);
        for c in words.chunks(CHUNK) {
            p.send_with_tag(c, TAG_WORDS as i32);
        }
        Ok(())
    }
    fn recv_words(&self, from: usize) -> Result<Vec<u64>> {
        let p = self.world.process_at_rank(from as i32);
        let (n, _) = p.receive_with_tag::<u64>(TAG_WORDS as i32);
        let mut out = vec![0u64; n as usize];
        for c in out.chunks_mut(CHUNK) {
            p.receive_into_with_tag(c, TAG_WORDS as i32);
        }
        Ok(out)
    }
}
