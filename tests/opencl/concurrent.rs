//! One kernel in flight with many grid sizes at once, on both queues of one device and from
//! three contexts of one process (a partitioned rank's interface and interior, and
//! `--gpus N` ranks on one device): every launch runs exactly once over exactly its range.
//! On PoCL the launches are serialized (`ocl::ClDevice::serial_launches`: PoCL 3.1 aborted
//! `--gpus 3` in `pocl_release_dlhandle_cache`, which `partition::gpus_cli` reproduces about
//! one run in six with `DGATD_POCL_SERIAL=0`; this simpler pattern did not reproduce it in 6
//! runs here, so it checks the counts, not the abort).

use crate::common::*;
use dgatd::backend::opencl::{Arg, ClDevice, Lane, kernels, launch_on};

const SOURCE: &str = "__kernel void bump(__global uint *x, const uint n) {
    const size_t i = get_global_id(0);
    if (i < n) x[i] += 1u;
}";

/// Launches `bump` `rounds` times on each queue of its own context, over sizes that change
/// from launch to launch, and returns per queue the counts read back and the counts
/// expected.
fn hammer(dev: &ClDevice, seed: u64, rounds: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
    let program = dev.build_source(SOURCE, "concurrent bump", "").unwrap();
    let [k] = kernels(&program, ["bump"]).unwrap();
    let len = 1 << 18;
    let (a, b) = (
        dev.upload(&vec![0u32; len], "a").unwrap(),
        dev.upload(&vec![0u32; len], "b").unwrap(),
    );
    let mut rng = dgatd::internal::Rng::new(seed);
    let (mut ea, mut eb) = (vec![0u32; len], vec![0u32; len]);
    for _ in 0..rounds {
        for (buf, expect, lane) in [(&a, &mut ea, Lane::Main), (&b, &mut eb, Lane::Side)] {
            let n = 1 + (rng.uniform() * (len - 1) as f64) as usize;
            let args = [Arg::<f32>::BufU32(buf), Arg::U32(n as u32)];
            launch_on(dev, lane, &k, n, 64, &args, &[]).unwrap();
            expect[..n].iter_mut().for_each(|x| *x += 1);
        }
        dev.flush_side().unwrap();
    }
    dev.finish().unwrap();
    let ra = dev.read(&a, len, "a").unwrap();
    let rb = dev.read(&b, len, "b").unwrap();
    (ra, ea, rb, eb)
}

#[test]
fn one_kernel_with_many_grid_sizes_on_both_queues_of_three_contexts() {
    let Some(d) = cl_device() else { return };
    let info = d.info.clone();
    eprintln!(
        "{}: kernel launches serialized: {}",
        info.platform,
        d.serial_launches()
    );
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..3u64)
            .map(|r| {
                let info = info.clone();
                s.spawn(move || {
                    let dev = ClDevice::open(info).unwrap();
                    hammer(&dev, 700 + r, 150)
                })
            })
            .collect();
        for (r, h) in hs.into_iter().enumerate() {
            let (ra, ea, rb, eb) = h.join().expect("a rank thread panicked");
            assert!(ea.iter().any(|&x| x > 0), "all-zero expectation");
            assert_eq!(ra, ea, "context {r}, main queue: counts differ");
            assert_eq!(rb, eb, "context {r}, side queue: counts differ");
        }
    });
}
