//! Host ↔ device copy bandwidth of an OpenCL device (the halo path of a partitioned run:
//! `clEnqueueReadBuffer`/`clEnqueueWriteBuffer` from pageable host memory, blocking), for
//! the scaling model's `--pcie-gbs` (`studies/partition_scaling.rs`).
//!
//! ```sh
//! cargo run --release --example pcie_probe -- [--device SPEC] [--mib 256] [--reps 20]
//! ```
//!
//! Prints one CSV line per direction and size: `direction,bytes,median_s,gb_s` (GB = 1e9 B),
//! medians of `reps` copies after 3 warm-up copies, wall clock around each blocking copy;
//! sizes: the halo sizes of interest (64 KiB, 1 MiB, 16 MiB) and `--mib`. The data are
//! seeded random values (not zeros).

use dgatd::backend::opencl::{ClDevice, select_device};
use dgatd::internal::Rng;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let mib: usize = arg("--mib").unwrap_or_else(|| "256".into()).parse()?;
    let reps: usize = arg("--reps").unwrap_or_else(|| "20".into()).parse()?;
    let info = select_device(arg("--device").as_deref())?;
    eprintln!("device {} ({} / {})", info.index, info.platform, info.name);
    let dev = ClDevice::open(info)?;
    println!("direction,bytes,median_s,gb_s");
    for bytes in [64 << 10, 1 << 20, 16 << 20, mib << 20] {
        let n = bytes / 8;
        let mut r = Rng::new(7);
        let host: Vec<f64> = (0..n).map(|_| r.sym()).collect();
        let mut back = vec![0.0f64; n];
        let mut buf = dev.alloc::<f64>(n, "probe buffer")?;
        let time = |f: &mut dyn FnMut() -> dgatd::Result<()>| -> dgatd::Result<f64> {
            let mut t = Vec::with_capacity(reps);
            for i in 0..reps + 3 {
                let s = Instant::now();
                f()?;
                if i >= 3 {
                    t.push(s.elapsed().as_secs_f64());
                }
            }
            t.sort_by(f64::total_cmp);
            Ok(t[t.len() / 2])
        };
        let h2d = time(&mut || dev.write(&mut buf, &host, "host to device"))?;
        let d2h = time(&mut || dev.read_into(&buf, &mut back, "device to host"))?;
        if back != host {
            return Err("the copy back differs from the data sent".into());
        }
        for (d, s) in [("host_to_device", h2d), ("device_to_host", d2h)] {
            println!("{d},{},{s:.6e},{:.3}", n * 8, (n * 8) as f64 / s / 1e9);
        }
    }
    Ok(())
}
