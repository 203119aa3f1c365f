//! Property test of the mesh readers over mutated valid files: on any bytes,
//! `dgatd::mesh::parse_gmsh` returns `Ok` or a typed error, never panics, finishes within a
//! time bound and never allocates more than a bound proportional to the input.
//!
//! Seeds: the tiny mesh in all three encodings (MSH 4.1 ASCII and binary, MSH 2.2 ASCII) and
//! the coarse cylinder. Mutations (proptest, fixed seed through `PROPTEST_RNG_SEED`-free
//! deterministic config): byte flips, truncation, splices of bytes from elsewhere in the file,
//! insertion of huge or negative counts at number boundaries, deletion of ranges, duplicated
//! ranges. Memory: a counting global allocator records the peak live bytes during each parse.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                let now = LIVE.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The parses are measured one at a time (the allocator's counters are process-wide).
fn lock() -> std::sync::MutexGuard<'static, ()> {
    static L: OnceLock<Mutex<()>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn seed(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/meshes/{name}", env!("CARGO_MANIFEST_DIR"))).expect("seed mesh")
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip {
        at: usize,
        byte: u8,
    },
    Truncate {
        at: usize,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Duplicate {
        at: usize,
        len: usize,
    },
    Splice {
        from: usize,
        to: usize,
        len: usize,
    },
    /// Replaces the number starting at the `k`-th digit run with a hostile one.
    Number {
        k: usize,
        which: usize,
    },
}

const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999",
    "1e308",
    "nan",
    "-inf",
    "2147483648",
    "3",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), 1usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 1usize..256).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), any::<usize>(), 1usize..64).prop_map(|(from, to, len)| Mutation::Splice {
            from,
            to,
            len
        }),
        (any::<usize>(), 0..HOSTILE.len()).prop_map(|(k, which)| Mutation::Number { k, which }),
    ]
}

fn apply(b: &mut Vec<u8>, m: &Mutation) {
    let n = b.len().max(1);
    match *m {
        Mutation::Flip { at, byte } => {
            if !b.is_empty() {
                let i = at % n;
                b[i] ^= byte | 1;
            }
        }
        Mutation::Truncate { at } => b.truncate(at % n),
        Mutation::Delete { at, len } => {
            let i = at % n;
            let j = (i + len).min(b.len());
            b.drain(i.min(b.len())..j);
        }
        Mutation::Duplicate { at, len } => {
            let i = (at % n).min(b.len());
            let j = (i + len).min(b.len());
            let piece = b[i..j].to_vec();
            b.splice(j..j, piece);
        }
        Mutation::Splice { from, to, len } => {
            let i = (from % n).min(b.len());
            let j = (i + len).min(b.len());
            let piece = b[i..j].to_vec();
            let t = (to % n).min(b.len());
            let e = (t + piece.len()).min(b.len());
            b.splice(t..e, piece);
        }
        Mutation::Number { k, which } => {
            let runs: Vec<(usize, usize)> = {
                let mut v = vec![];
                let mut i = 0;
                while i < b.len() {
                    if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
                        let s = i;
                        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                            i += 1;
                        }
                        v.push((s, i));
                    }
                    i += 1;
                }
                v
            };
            if !runs.is_empty() {
                let (s, e) = runs[k % runs.len()];
                b.splice(s..e, HOSTILE[which].bytes());
            }
        }
    }
}

/// Parses under the allocator's watch; returns the peak bytes allocated and the time.
fn parse_measured(bytes: &[u8]) -> (usize, Duration, bool) {
    let _g = lock();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = Instant::now();
    let ok = std::panic::catch_unwind(|| {
        let r = dgatd::mesh::parse_gmsh(bytes, "fuzz.msh");
        if let Err(e) = &r {
            // every error must render to a non-empty message naming the file
            let msg = e.to_string();
            assert!(
                msg.contains("fuzz.msh"),
                "error without the file name: {msg}"
            );
        }
    })
    .is_ok();
    let el = t.elapsed();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    (peak, el, ok)
}

/// `DGATD_FUZZ_SCALE=K` multiplies the number of cases (a longer campaign than CI's).
fn check_seed(name: &str, cases: u32) {
    let scale: u32 = std::env::var("DGATD_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let cases = cases * scale.max(1);
    let base = seed(name);
    let (clean_peak, _, ok) = parse_measured(&base);
    assert!(ok);
    // Bound: a valid parse of this file, plus 256 bytes per input byte (the parsers keep at
    // most a few arrays of 8..32-byte records, one per item the remaining input can hold).
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7u8; 32]),
    );
    let strat = proptest::collection::vec(mutation(), 1..6);
    let worst = std::cell::Cell::new((0usize, Duration::ZERO));
    runner
        .run(&strat, |muts| {
            let mut b = base.clone();
            for m in &muts {
                apply(&mut b, m);
            }
            let (peak, el, ok) = parse_measured(&b);
            prop_assert!(ok, "the reader panicked on {muts:?}");
            let bound = 4 * clean_peak + 256 * b.len() + (1 << 20);
            prop_assert!(
                peak <= bound,
                "{peak} bytes allocated for a {}-byte input (bound {bound}), mutations {muts:?}",
                b.len()
            );
            prop_assert!(
                el < Duration::from_secs(5),
                "{el:?} to parse a {}-byte input, mutations {muts:?}",
                b.len()
            );
            let w = worst.get();
            worst.set((w.0.max(peak), w.1.max(el)));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let w = worst.get();
    eprintln!(
        "{name}: {cases} mutated inputs, no panic; clean parse {clean_peak} B, worst peak {} B, worst time {:?}",
        w.0, w.1
    );
}

#[test]
fn msh41_ascii_survives_mutation() {
    check_seed("tiny_v41.msh", 3000);
}

#[test]
fn msh41_binary_survives_mutation() {
    check_seed("tiny_v41_bin.msh", 3000);
}

#[test]
fn msh22_ascii_survives_mutation() {
    check_seed("tiny_v22.msh", 3000);
}

#[test]
fn cylinder_survives_mutation() {
    check_seed("cylinder_coarse.msh", 150);
}

/// Hand-picked hostile headers: counts far beyond the file's size must be refused before any
/// allocation of that size.
#[test]
fn huge_counts_are_refused_without_allocating() {
    let cases: &[&[u8]] = &[
        b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 18446744073709551615 1 18446744073709551615\n",
        b"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n99999999999999\n1 0 0 0\n",
        b"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 0 0\n$EndNodes\n$Elements\n4000000000\n",
        b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n1000000000000\n",
        b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n1000000000 1000000000 1000000000 1000000000\n",
    ];
    for c in cases {
        let (peak, _, ok) = parse_measured(c);
        assert!(ok, "panic on {:?}", String::from_utf8_lossy(c));
        assert!(
            peak < 1 << 20,
            "{peak} bytes for {:?}",
            String::from_utf8_lossy(c)
        );
        let e = dgatd::mesh::parse_gmsh(c, "h.msh").expect_err("must be refused");
        eprintln!("{:?} -> {e}", String::from_utf8_lossy(c));
    }
}
