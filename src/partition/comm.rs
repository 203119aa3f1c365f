//! Communication between ranks: the operations the partitioned stepper needs, behind a
//! trait with two implementations: [`LocalComm`] (ranks as threads of one process, messages
//! through memory: the tests, and `dgatd resonator --gpus N`, where one process drives N
//! GPUs, one thread each) and, with the `mpi` feature, `MpiComm` (the `mpi` crate).
//!
//! Global sums are formed by gathering every rank's contribution and adding them in rank
//! order, so every rank gets the same bits and a run is reproducible for a given P.

use crate::error::{Error, Result};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Message tags.
pub const TAG_HALO: u16 = 1;
pub const TAG_WORDS: u16 = 2;
pub const TAG_COLL: u16 = 3;

/// What the partitioned stepper needs from a transport.
pub trait Comm {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Sends `send[i]` to `peers[i]` and receives `recv[i]` (whose length is known) from
    /// `peers[i]`, non-blocking: the messages are posted, `overlap` runs while they are in
    /// flight, then all are completed.
    fn exchange(
        &self,
        peers: &[usize],
        send: &[Vec<f64>],
        recv: &mut [Vec<f64>],
        overlap: &mut dyn FnMut(),
    ) -> Result<()>;
    /// [`Self::exchange`] of raw bytes straight between the callers' buffers, where the
    /// transport can do it with fewer copies than through words ([`LocalComm`]: one copy
    /// into a recycled message and one out of it); None where it cannot (then the caller
    /// uses [`Self::exchange`]). `recv[i]`'s length is the length expected from `peers[i]`.
    fn exchange_bytes(
        &self,
        _peers: &[usize],
        _send: &[&[u8]],
        _recv: &mut [&mut [u8]],
    ) -> Option<Result<()>> {
        None
    }
    /// Every rank's `mine`, indexed by rank (lengths may differ).
    fn all_gather(&self, mine: &[f64]) -> Result<Vec<Vec<f64>>>;
    /// Point-to-point words (set-up messages such as parts).
    fn send_words(&self, to: usize, words: &[u64]) -> Result<()>;
    fn recv_words(&self, from: usize) -> Result<Vec<u64>>;

    /// Element-wise global sums, added in rank order (the same bits on every rank).
    fn sum(&self, xs: &[f64]) -> Result<Vec<f64>> {
        let all = self.all_gather(xs)?;
        let mut out = vec![0.0; xs.len()];
        for v in &all {
            if v.len() != xs.len() {
                return Err(Error::Comm {
                    what: "global sum".into(),
                    msg: format!("ranks contributed {} and {} values", v.len(), xs.len()),
                });
            }
            for (o, x) in out.iter_mut().zip(v) {
                *o += x;
            }
        }
        Ok(out)
    }
    /// Whether any rank passed true.
    fn any(&self, flag: bool) -> Result<bool> {
        Ok(self.sum(&[flag as u8 as f64])?[0] > 0.0)
    }
    /// Every rank's `mine` on rank `root` (indexed by rank; None on the other ranks).
    fn gather_to(&self, root: usize, mine: &[f64]) -> Result<Option<Vec<Vec<f64>>>> {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        if self.rank() != root {
            self.send_words(root, &bits(mine))?;
            return Ok(None);
        }
        (0..self.size())
            .map(|r| {
                if r == root {
                    Ok(mine.to_vec())
                } else {
                    Ok(self
                        .recv_words(r)?
                        .into_iter()
                        .map(f64::from_bits)
                        .collect())
                }
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
    /// Rank `root`'s words on every rank.
    fn broadcast_words(&self, root: usize, words: Vec<u64>) -> Result<Vec<u64>> {
        if self.rank() == root {
            for r in (0..self.size()).filter(|&r| r != root) {
                self.send_words(r, &words)?;
            }
            Ok(words)
        } else {
            self.recv_words(root)
        }
    }
}

/// A borrowed transport is a transport (the driver lends one to a stepper it builds);
/// every method, provided ones included, is the borrowed one's.
impl<C: Comm + ?Sized> Comm for &C {
    fn rank(&self) -> usize {
        (**self).rank()
    }
    fn size(&self) -> usize {
        (**self).size()
    }
    fn exchange(
        &self,
        peers: &[usize],
        send: &[Vec<f64>],
        recv: &mut [Vec<f64>],
        overlap: &mut dyn FnMut(),
    ) -> Result<()> {
        (**self).exchange(peers, send, recv, overlap)
    }
    fn all_gather(&self, mine: &[f64]) -> Result<Vec<Vec<f64>>> {
        (**self).all_gather(mine)
    }
    fn send_words(&self, to: usize, words: &[u64]) -> Result<()> {
        (**self).send_words(to, words)
    }
    fn recv_words(&self, from: usize) -> Result<Vec<u64>> {
        (**self).recv_words(from)
    }
    fn exchange_bytes(
        &self,
        peers: &[usize],
        send: &[&[u8]],
        recv: &mut [&mut [u8]],
    ) -> Option<Result<()>> {
        (**self).exchange_bytes(peers, send, recv)
    }
    fn sum(&self, xs: &[f64]) -> Result<Vec<f64>> {
        (**self).sum(xs)
    }
    fn any(&self, flag: bool) -> Result<bool> {
        (**self).any(flag)
    }
    fn gather_to(&self, root: usize, mine: &[f64]) -> Result<Option<Vec<Vec<f64>>>> {
        (**self).gather_to(root, mine)
    }
    fn broadcast_words(&self, root: usize, words: Vec<u64>) -> Result<Vec<u64>> {
        (**self).broadcast_words(root, words)
    }
}

type Key = (usize, usize, u16);

#[derive(Default)]
struct Hub {
    boxes: Mutex<HashMap<Key, VecDeque<Vec<u64>>>>,
    cv: Condvar,
    /// The rank that gave up ([`LocalComm::abort`]) plus one; 0 while none has.
    aborted: std::sync::atomic::AtomicUsize,
    /// Byte messages ([`Comm::exchange_bytes`]) per (sender, receiver): the queue, and the
    /// spent buffers the receiver hands back for the sender's next message (no allocation
    /// once the first exchanges have run).
    links: Mutex<HashMap<(usize, usize), Link>>,
    links_cv: Condvar,
}

#[derive(Default)]
struct Link {
    queue: VecDeque<Vec<u8>>,
    spare: Vec<Vec<u8>>,
}

/// Ranks as threads of one process; messages are copied through a shared mailbox (FIFO per
/// sender, receiver and tag, like MPI's non-overtaking rule). A receive that waits longer
/// than the timeout (a peer failed) is an error instead of a hang.
#[derive(Clone)]
pub struct LocalComm {
    rank: usize,
    size: usize,
    hub: Arc<Hub>,
    timeout: Duration,
}

impl LocalComm {
    /// `n` connected ranks; a receive waits at most 120 s.
    pub fn world(n: usize) -> Vec<LocalComm> {
        Self::world_with_timeout(n, Duration::from_secs(120))
    }

    /// `n` connected ranks whose receives wait at most `timeout` (a long run's set-up on
    /// rank 0 can keep the others waiting for minutes; a failed rank ends their waits at
    /// once through [`Self::abort`]).
    pub fn world_with_timeout(n: usize, timeout: Duration) -> Vec<LocalComm> {
        let hub = Arc::new(Hub::default());
        (0..n)
            .map(|rank| LocalComm {
                rank,
                size: n,
                hub: hub.clone(),
                timeout,
            })
            .collect()
    }

    /// This rank gives up (it failed): every receive of every rank, waiting or later,
    /// returns an error naming it instead of waiting for a message that will not come.
    pub fn abort(&self) {
        let _ = self.hub.aborted.compare_exchange(
            0,
            self.rank + 1,
            std::sync::atomic::Ordering::SeqCst,
            std::sync::atomic::Ordering::SeqCst,
        );
        {
            let _guard = self.hub.boxes.lock().unwrap_or_else(|e| e.into_inner());
            self.hub.cv.notify_all();
        }
        let _guard = self.hub.links.lock().unwrap_or_else(|e| e.into_inner());
        self.hub.links_cv.notify_all();
    }

    /// Runs `f` on `n` ranks, one thread each, and returns their results in rank order.
    pub fn run<R: Send>(n: usize, f: impl Fn(LocalComm) -> R + Sync) -> Vec<R> {
        let f = &f;
        std::thread::scope(|s| {
            let hs: Vec<_> = Self::world(n)
                .into_iter()
                .map(|c| s.spawn(move || f(c)))
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }

    fn post(&self, to: usize, tag: u16, data: Vec<u64>) -> Result<()> {
        if to >= self.size {
            return Err(Error::Comm {
                what: format!("send from rank {} to rank {to}", self.rank),
                msg: format!("no such rank (size {})", self.size),
            });
        }
        let mut b = self.hub.boxes.lock().unwrap_or_else(|e| e.into_inner());
        b.entry((self.rank, to, tag)).or_default().push_back(data);
        self.hub.cv.notify_all();
        Ok(())
    }

    fn take(&self, from: usize, tag: u16) -> Result<Vec<u64>> {
        let key = (from, self.rank, tag);
        let deadline = std::time::Instant::now() + self.timeout;
        let mut b = self.hub.boxes.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(m) = b.get_mut(&key).and_then(|q| q.pop_front()) {
                return Ok(m);
            }
            let gone = self.hub.aborted.load(std::sync::atomic::Ordering::SeqCst);
            if gone > 0 {
                return Err(Error::Comm {
                    what: format!("rank {} receiving from rank {from} (tag {tag})", self.rank),
                    msg: format!("rank {} failed", gone - 1),
                });
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Err(Error::Comm {
                    what: format!("rank {} receiving from rank {from} (tag {tag})", self.rank),
                    msg: format!("nothing arrived in {:?}", self.timeout),
                });
            }
            b = self
                .hub
                .cv
                .wait_timeout(b, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

fn to_bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

impl LocalComm {
    fn post_bytes(&self, to: usize, data: &[u8]) -> Result<()> {
        if to >= self.size {
            return Err(Error::Comm {
                what: format!("send from rank {} to rank {to}", self.rank),
                msg: format!("no such rank (size {})", self.size),
            });
        }
        let key = (self.rank, to);
        let lock = || self.hub.links.lock().unwrap_or_else(|e| e.into_inner());
        let mut m = lock()
            .entry(key)
            .or_default()
            .spare
            .pop()
            .unwrap_or_default();
        // the copy runs outside the lock, so that the ranks copy at the same time
        m.clear();
        m.extend_from_slice(data);
        lock().entry(key).or_default().queue.push_back(m);
        self.hub.links_cv.notify_all();
        Ok(())
    }

    fn take_bytes(&self, from: usize, out: &mut [u8]) -> Result<()> {
        let key = (from, self.rank);
        let what = || format!("rank {} receiving a halo from rank {from}", self.rank);
        let deadline = std::time::Instant::now() + self.timeout;
        let mut l = self.hub.links.lock().unwrap_or_else(|e| e.into_inner());
        let m = loop {
            if let Some(m) = l.get_mut(&key).and_then(|k| k.queue.pop_front()) {
                break m;
            }
            let gone = self.hub.aborted.load(std::sync::atomic::Ordering::SeqCst);
            if gone > 0 {
                return Err(Error::Comm {
                    what: what(),
                    msg: format!("rank {} failed", gone - 1),
                });
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Err(Error::Comm {
                    what: what(),
                    msg: format!("nothing arrived in {:?}", self.timeout),
                });
            }
            l = self
                .hub
                .links_cv
                .wait_timeout(l, (deadline - now).min(Duration::from_millis(100)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(l);
        let ok = m.len() == out.len();
        if ok {
            out.copy_from_slice(&m);
        }
        let n = m.len();
        self.hub
            .links
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .spare
            .push(m);
        if !ok {
            return Err(Error::Comm {
                what: what(),
                msg: format!("expected {} bytes, got {n}", out.len()),
            });
        }
        Ok(())
    }
}

impl Comm for LocalComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn exchange(
        &self,
        peers: &[usize],
        send: &[Vec<f64>],
        recv: &mut [Vec<f64>],
        overlap: &mut dyn FnMut(),
    ) -> Result<()> {
        for (&p, s) in peers.iter().zip(send) {
            self.post(p, TAG_HALO, to_bits(s))?;
        }
        overlap();
        for (&p, r) in peers.iter().zip(recv.iter_mut()) {
            let m = self.take(p, TAG_HALO)?;
            if m.len() != r.len() {
                return Err(Error::Comm {
                    what: format!("halo from rank {p} to rank {}", self.rank),
                    msg: format!("expected {} values, got {}", r.len(), m.len()),
                });
            }
            for (x, b) in r.iter_mut().zip(m) {
                *x = f64::from_bits(b);
            }
        }
        Ok(())
    }
    fn exchange_bytes(
        &self,
        peers: &[usize],
        send: &[&[u8]],
        recv: &mut [&mut [u8]],
    ) -> Option<Result<()>> {
        let mut run = || -> Result<()> {
            for (&p, s) in peers.iter().zip(send) {
                self.post_bytes(p, s)?;
            }
            for (&p, r) in peers.iter().zip(recv.iter_mut()) {
                self.take_bytes(p, r)?;
            }
            Ok(())
        };
        Some(run())
    }
    fn all_gather(&self, mine: &[f64]) -> Result<Vec<Vec<f64>>> {
        for r in (0..self.size).filter(|&r| r != self.rank) {
            self.post(r, TAG_COLL, to_bits(mine))?;
        }
        (0..self.size)
            .map(|r| {
                if r == self.rank {
                    Ok(mine.to_vec())
                } else {
                    Ok(self
                        .take(r, TAG_COLL)?
                        .into_iter()
                        .map(f64::from_bits)
                        .collect())
                }
            })
            .collect()
    }
    fn send_words(&self, to: usize, words: &[u64]) -> Result<()> {
        self.post(to, TAG_WORDS, words.to_vec())
    }
    fn recv_words(&self, from: usize) -> Result<Vec<u64>> {
        self.take(from, TAG_WORDS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte exchanges between threads: every rank sends each other rank seeded bytes of
    /// its own length, over several rounds (the recycled buffers change length), and gets
    /// exactly what was sent; a length other than the receiver expects is an error.
    #[test]
    fn byte_exchange_delivers_every_message_in_order() {
        let n = 3;
        let msg = |from: usize, to: usize, round: usize| -> Vec<u8> {
            let len = 1 + (7 * from + 3 * to + 11 * round) % 23;
            (0..len)
                .map(|i| (i * 31 + from * 7 + to * 5 + round) as u8)
                .collect()
        };
        let out = LocalComm::run(n, |c| {
            let me = c.rank();
            let peers: Vec<usize> = (0..n).filter(|&p| p != me).collect();
            for round in 0..5 {
                let send: Vec<Vec<u8>> = peers.iter().map(|&p| msg(me, p, round)).collect();
                let send_refs: Vec<&[u8]> = send.iter().map(|v| v.as_slice()).collect();
                let mut recv: Vec<Vec<u8>> = peers
                    .iter()
                    .map(|&p| vec![0; msg(p, me, round).len()])
                    .collect();
                let mut recv_refs: Vec<&mut [u8]> =
                    recv.iter_mut().map(|v| v.as_mut_slice()).collect();
                c.exchange_bytes(&peers, &send_refs, &mut recv_refs)
                    .expect("LocalComm moves bytes")
                    .unwrap();
                for (&p, r) in peers.iter().zip(&recv) {
                    assert_eq!(r, &msg(p, me, round), "round {round}, {p} -> {me}");
                }
            }
            // a wrong expected length
            let peer = [1 - me.min(1)];
            if me < 2 {
                let s = [7u8; 4];
                let mut r = [0u8; 5];
                let e = c
                    .exchange_bytes(&peer, &[&s[..]], &mut [&mut r[..]])
                    .unwrap()
                    .expect_err("5 bytes expected, 4 sent");
                assert!(e.to_string().contains("expected 5 bytes, got 4"), "{e}");
            }
        });
        assert_eq!(out.len(), n);
    }

    /// A rank that aborts ends the other ranks' waits at once, however long their timeout
    /// (`dgatd resonator --gpus N` waits up to hours for a rank 0 reading a large mesh).
    #[test]
    fn abort_ends_the_waits_of_the_other_ranks() {
        let mut w = LocalComm::world_with_timeout(3, Duration::from_secs(3600)).into_iter();
        let (a, b, c) = (w.next().unwrap(), w.next().unwrap(), w.next().unwrap());
        let t0 = std::time::Instant::now();
        let r = std::thread::scope(|s| {
            let h0 = s.spawn(|| a.recv_words(1));
            let h2 = s.spawn(|| c.recv_words(0));
            std::thread::sleep(Duration::from_millis(50));
            b.abort();
            (h0.join().unwrap(), h2.join().unwrap())
        });
        assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
        for e in [r.0, r.1] {
            let msg = e.expect_err("a receive after the abort fails").to_string();
            assert!(msg.contains("rank 1 failed"), "{msg}");
        }
        // messages posted before the abort are still delivered
        let mut w = LocalComm::world(2).into_iter();
        let (a, b) = (w.next().unwrap(), w.next().unwrap());
        a.send_words(1, &[7, 8]).unwrap();
        a.abort();
        assert_eq!(b.recv_words(0).unwrap(), vec![7, 8]);
        assert!(b.recv_words(0).is_err());
    }
}
