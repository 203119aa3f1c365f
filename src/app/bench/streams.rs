//! Bench rows of the bandwidth and peak probes (copy, triad, fma) on a device and on the CPU.

use super::*;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

/// Elements of a device's copy/triad arrays without `--stream-elems` (fewer where the
/// device's memory is smaller).
pub(super) const DEVICE_STREAM_ELEMS: usize = 134_000_000;

/// Elements of the CPU backend's copy arrays without `--stream-elems` (64Mi).
pub(super) const CPU_STREAM_ELEMS: usize = 64 << 20;

/// The CPU backend's copy probe of `n` elements (`--stream-elems` = `given`), two arrays of
/// the widest precision of `precisions`, against the memory this process may allocate:
/// refused naming the flag where they do not fit (it was capped at 64Mi without a word).
pub(super) fn check_cpu_stream(n: usize, given: &str, precisions: &[String]) -> Result<()> {
    let s = if precisions.iter().any(|p| p == "f64") {
        8
    } else {
        4
    };
    let need = 2.0 * n as f64 * s as f64;
    if let Some(avail) = dgatd::cost::available_memory()
        && need > 0.9 * avail as f64
    {
        return Err(Error::config(
            "stream-elems",
            given.trim(),
            format!(
                "the CPU backend's copy probe needs two arrays of {n} {} elements, {} of host memory, but {} is available; give fewer, or --no-cpu",
                if s == 8 { "f64" } else { "f32" },
                indicatif::HumanBytes(need.min(u64::MAX as f64) as u64),
                indicatif::HumanBytes(avail)
            ),
        ));
    }
    Ok(())
}

/// A device's copy/triad probe of `--stream-elems` elements, checked before anything is
/// allocated (PoCL aborted in its allocator when asked for 9e11 doubles; a smaller request
/// was cut to fit without a word): in each precision it runs in, one array must fit the
/// device's largest allocation, the three arrays its global memory, and the host array each
/// is uploaded from the host's memory (with them, on a CPU device, whose memory is the
/// host's). Without the flag, the default is fitted to the device as before.
pub(super) fn check_device_streams(cfg: &BenchConfig, devices: &[Arc<ClDevice>]) -> Result<()> {
    let Some(n) = cfg.stream_elems else {
        return Ok(());
    };
    let human = |b: f64| indicatif::HumanBytes(b.min(u64::MAX as f64) as u64).to_string();
    let avail = dgatd::cost::available_memory();
    for d in devices {
        for p in &cfg.precisions {
            if p == "f64" && !d.info.fp64 {
                continue;
            }
            let one = n as f64 * if p == "f64" { 8.0 } else { 4.0 };
            let host = if d.info.is_cpu() { 4.0 * one } else { one };
            let why = if one > d.info.max_alloc as f64 {
                Some(format!(
                    "its largest allocation is {}",
                    human(d.info.max_alloc as f64)
                ))
            } else if 3.0 * one > 0.92 * d.info.global_mem as f64 {
                Some(format!(
                    "its global memory is {}",
                    human(d.info.global_mem as f64)
                ))
            } else if let Some(a) = avail
                && host > 0.9 * a as f64
            {
                Some(format!(
                    "the host has {} available for {}",
                    human(a as f64),
                    human(host)
                ))
            } else {
                None
            };
            if let Some(why) = why {
                return Err(Error::config(
                    "stream-elems",
                    n,
                    format!(
                        "the copy/triad probe asks {} for 3 arrays of {n} {p} elements, {} each ({} in all), but {why}; give fewer (or leave --stream-elems out to fit the device)",
                        d.info.name,
                        human(one),
                        human(3.0 * one)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The bench's probe kernels (`backend::opencl::PROBE_SOURCE`) for precision T.
pub(super) struct Probes {
    copy: Kernel,
    triad: Kernel,
    copy4: Kernel,
    triad4: Kernel,
    fma_peak: Kernel,
}

impl Probes {
    pub(super) fn build<T: Real>(dev: &ClDevice) -> Result<Probes> {
        let opts = opencl::real_options::<T>();
        let program = dev.build_source(opencl::PROBE_SOURCE, opencl::PROBE_PROGRAM, opts)?;
        let [copy, triad, copy4, triad4, fma_peak] = dgatd::backend::opencl::kernels(
            &program,
            ["copy", "triad", "copy4", "triad4", "fma_peak"],
        )?;
        Ok(Probes {
            copy,
            triad,
            copy4,
            triad4,
            fma_peak,
        })
    }
}

/// The most elements of `s` bytes the default probe may use for the host's memory: the
/// array each upload is made from and, on a CPU device (whose buffers are host memory),
/// the three device arrays too, within 80% of what is available (`RLIMIT_AS` included).
/// Issue 47 round five, bench-547: under a 4 GiB address-space limit the default 134M
/// doubles (4.3 GB on PoCL) made PoCL's allocator fail and abort (SIGABRT).
fn host_stream_elems(dev: &ClDevice, s: usize) -> usize {
    let arrays = if dev.info.is_cpu() { 4 } else { 1 };
    dgatd::cost::available_memory().map_or(usize::MAX, |a| {
        ((0.8 * a as f64) as usize / (s * arrays)).max(1024)
    })
}

/// Copy and triad bandwidth of an OpenCL device in precision T, one element and four
/// elements per work-item; returns the rows, the best copy first (the ceiling).
pub(super) fn stream_rows<T: Real>(
    dev: &Arc<ClDevice>,
    cfg: &BenchConfig,
    base: &Row,
) -> Result<Vec<Row>> {
    let k = Probes::build::<T>(dev)?;
    let s = std::mem::size_of::<T>();
    // as --stream-elems asks (checked by check_device_streams), else the default fitted
    // to the device; a multiple of 4 for the vec4 kernels
    let n = match cfg.stream_elems {
        Some(n) => n,
        None => DEVICE_STREAM_ELEMS
            .min((dev.info.max_alloc as usize / s).saturating_sub(1))
            .min((dev.info.global_mem as usize / s / 4).max(1024))
            .min(host_stream_elems(dev, s)),
    } / 4
        * 4;
    let n = n.max(4);
    let a = dev.upload(
        &(0..n)
            .map(|i| T::of((i % 1000) as f64 * 1e-3 + 1.0))
            .collect::<Vec<_>>(),
        "stream array",
    )?;
    let b = dev.upload(&vec![T::of(0.5); n], "stream array")?;
    let c = dev.upload(&vec![T::of(0.25); n], "stream array")?;
    let bufs = [&a, &b, &c];
    let (copy, triad) = time_copy_triad(dev, cfg, [&k.copy, &k.triad], n, bufs)?;
    let (copy4, triad4) = time_copy_triad(dev, cfg, [&k.copy4, &k.triad4], n / 4, bufs)?;
    let mk = |name: &str, v: Vec<f64>, bytes: f64| {
        let (m, lo, hi) = stats(v);
        Row {
            kernel: name.into(),
            variant: "stream".into(),
            tets: 0,
            dofs: 0,
            reps: cfg.reps,
            median_s: m,
            min_s: lo,
            max_s: hi,
            bytes_model: bytes,
            ..base.clone()
        }
    };
    let mut rows = vec![
        mk("copy", copy, 2.0 * (n * s) as f64),
        mk("triad", triad, 3.0 * (n * s) as f64),
        mk("copy", copy4, 2.0 * (n * s) as f64),
        mk("triad", triad4, 3.0 * (n * s) as f64),
    ];
    rows[2].variant = "stream_vec4".into();
    rows[3].variant = "stream_vec4".into();
    let ceiling = rows[0].gbs().max(rows[2].gbs());
    for r in rows.iter_mut() {
        r.frac_copy_bw = r.gbs() / ceiling;
    }
    rows.push(fma_row::<T>(dev, &k, cfg, base, ceiling)?);
    rows.sort_by(|a, b| {
        (b.kernel == "copy")
            .cmp(&(a.kernel == "copy"))
            .then(b.gbs().total_cmp(&a.gbs()))
    });
    Ok(rows)
}

/// The event times of a copy kernel and then a triad kernel (in that order) over `n`
/// work-items on the arrays `[a, b, c]` (copy: `b = a`; triad: `a = b + 1.5 c`;
/// `cl/dga/vector.cl` and `cl/bench/stream.cl`).
fn time_copy_triad<T: Real>(
    dev: &Arc<ClDevice>,
    cfg: &BenchConfig,
    [copy, triad]: [&Kernel; 2],
    n: usize,
    [a, b, c]: [&Buffer<T>; 3],
) -> Result<(Vec<f64>, Vec<f64>)> {
    let copy = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![launch(
            dev,
            copy,
            n,
            LOCAL,
            &[Arg::U64(n as u64), Arg::Buf(a), Arg::Buf(b)],
        )?])
    })?;
    let triad = time_events(dev, cfg.warmup, cfg.reps, || {
        Ok(vec![launch(
            dev,
            triad,
            n,
            LOCAL,
            &[
                Arg::U64(n as u64),
                Arg::Buf(a),
                Arg::Buf(b),
                Arg::Buf(c),
                Arg::Real(T::of(1.5)),
            ],
        )?])
    })?;
    Ok((copy, triad))
}

/// The floating-point peak of a device in precision T (`fma_peak`: 16 flops per work-item
/// and iteration): the iteration count is scaled from a short calibration launch so that
/// one launch takes about 20 ms, on enough work-items to fill any device.
pub(super) fn fma_row<T: Real>(
    dev: &Arc<ClDevice>,
    k: &Probes,
    cfg: &BenchConfig,
    base: &Row,
    copy_gbs: f64,
) -> Result<Row> {
    let n = (dev.info.compute_units.max(1) as usize * 4096).clamp(1 << 16, 1 << 22);
    let out = dev.alloc::<T>(n, "fma probe")?;
    let go = |iters: u32| {
        launch(
            dev,
            &k.fma_peak,
            n,
            LOCAL,
            &[
                Arg::U32(n as u32),
                Arg::U32(iters),
                Arg::Real(T::of(0.999_999)),
                Arg::Real(T::of(1e-7)),
                Arg::Buf(&out),
            ],
        )
    };
    let probe = time_events(dev, 1, 3, || Ok(vec![go(64)?]))?;
    let per_iter = stats(probe).0 / 64.0;
    let iters = ((0.02 / per_iter.max(1e-12)) as u32).clamp(64, 1 << 16);
    let times = time_events(dev, 1, cfg.reps.min(10), || Ok(vec![go(iters)?]))?;
    let bytes = (n * std::mem::size_of::<T>()) as f64;
    let mut r = Row::timed(base, "fma", "peak", (0, 0), times, bytes, copy_gbs);
    r.flops_model = 16.0 * n as f64 * iters as f64;
    Ok(r)
}

pub(super) fn cpu_stream<T: Real>(cfg: &BenchConfig, base: &Row) -> Row {
    use rayon::prelude::*;
    // as --stream-elems asks (checked against the memory by check_cpu_stream)
    let n = cfg.stream_elems.unwrap_or(CPU_STREAM_ELEMS);
    let a: Vec<T> = (0..n).map(|i| T::of(i as f64)).collect();
    let mut b = vec![T::zero(); n];
    let v = time_wall(cfg.warmup.max(1), cfg.reps.min(20), || {
        b.par_chunks_mut(1 << 16)
            .zip(a.par_chunks(1 << 16))
            .for_each(|(x, y)| x.copy_from_slice(y))
    });
    let (m, lo, hi) = stats(v);
    Row {
        kernel: "copy".into(),
        variant: "stream".into(),
        tets: 0,
        dofs: 0,
        reps: cfg.reps.min(20),
        median_s: m,
        min_s: lo,
        max_s: hi,
        bytes_model: 2.0 * (n * std::mem::size_of::<T>()) as f64,
        frac_copy_bw: 1.0,
        ..base.clone()
    }
}
