//! Small helpers: a seeded RNG for reproducible tests and default probe placement, a
//! file hash for `run.toml`, atomic file writes, and 3-vector arithmetic.

/// Speed of light in vacuum, m/s (exact, SI).
pub const C0: f64 = 299_792_458.0;

/// SplitMix64: a tiny, well-mixed, seeded generator (Steele, Lea, Flood 2014).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [-1, 1).
    pub fn sym(&mut self) -> f64 {
        2.0 * self.uniform() - 1.0
    }
}

/// FNV-1a, 64 bit: identifies the mesh file a run used (not a cryptographic hash).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// Checks that `path` is a regular file before it is read whole: a FIFO would block and a
/// device such as `/dev/zero` would be read forever. The error says what the path is.
pub fn regular_file(path: &std::path::Path) -> std::io::Result<()> {
    let m = std::fs::metadata(path)?;
    if m.is_file() {
        return Ok(());
    }
    let kind = if m.is_dir() {
        "a directory"
    } else {
        "a device, pipe or socket"
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("not a regular file ({kind}); dgatd reads its inputs from files"),
    ))
}

/// A new, empty file at `path` for writing, never through a link: whatever entry is there
/// (a file left by an interrupted write, a symbolic link to a file elsewhere) is removed
/// first, not followed, and the file is created exclusively (`O_EXCL`), so a link that
/// appears in between makes the call fail instead of writing through it.
pub fn create_fresh(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Writes `bytes` to `path` through a temporary file in the same directory, a sync and a
/// rename, so an interrupted write never leaves a truncated file behind. The temporary
/// file is removed when the write fails.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> crate::error::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    let r = (|| {
        use std::io::Write;
        let mut f = create_fresh(&tmp)?;
        injected_write_fault(path)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(crate::error::Error::io(&tmp, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::error::Error::io(path, e)
    })
}

/// [`write_atomic`] of what `fill` writes, streamed through a buffer into the temporary
/// file (a record of millions of rows is never held whole in memory).
pub fn write_atomic_with(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> crate::error::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    let r = (|| {
        use std::io::Write;
        let f = create_fresh(&tmp)?;
        injected_write_fault(path)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        fill(&mut w)?;
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    })();
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(crate::error::Error::io(&tmp, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::error::Error::io(path, e)
    })
}

/// A writer that compares what is written with `expect`, byte for byte, and counts the
/// bytes: whether a file already holds what would be written, without holding either. The
/// first difference fails the write (and clears `same`).
pub struct SameAs<R: std::io::Read> {
    pub expect: R,
    pub same: bool,
    pub len: u64,
}

impl<R: std::io::Read> std::io::Write for SameAs<R> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut got = vec![0u8; buf.len()];
        if self.expect.read_exact(&mut got).is_err() || got != buf {
            // the first difference ends the comparison
            self.same = false;
            return Err(std::io::Error::other("differs"));
        }
        self.len += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The complex numbers of the whole crate (`num_complex::Complex<f64>`, as nalgebra and
/// rustfft both use it): one path for every complex value.
pub type C64 = nalgebra::Complex<f64>;

/// For testing the failure paths: with `DGATD_FAULT_WRITE=NAME` in the environment, writing
/// a file of that name fails like a full disk (ENOSPC).
pub fn injected_write_fault(path: &std::path::Path) -> std::io::Result<()> {
    match std::env::var_os("DGATD_FAULT_WRITE") {
        Some(name) if path.file_name() == Some(name.as_os_str()) => Err(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "No space left on device (injected)",
        )),
        _ => Ok(()),
    }
}

/// Refuses to start writing `need` bytes into `dir` when its file system has less
/// available (`what` says what the bytes are for).
pub fn check_space(dir: &std::path::Path, need: u64, what: &str) -> crate::error::Result<()> {
    let avail = fs4::available_space(dir).map_err(|e| crate::error::Error::io(dir, e))?;
    if need > avail {
        return Err(crate::error::Error::Output {
            path: dir.to_path_buf(),
            msg: format!(
                "{what} need about {}, but only {} is free there; free space or choose another --out",
                indicatif::HumanBytes(need),
                indicatif::HumanBytes(avail)
            ),
        });
    }
    Ok(())
}

pub type V3 = [f64; 3];

#[inline(always)]
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline(always)]
pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
#[inline(always)]
pub fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
#[inline(always)]
pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
#[inline(always)]
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
#[inline(always)]
pub fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}
/// det[a, b, c] = a . (b x c).
#[inline(always)]
pub fn det3(a: V3, b: V3, c: V3) -> f64 {
    dot(a, cross(b, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rng_is_seeded_and_uniform() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<f64> = (0..10000).map(|_| a.uniform()).collect();
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        assert_eq!(xs[17], {
            for _ in 0..17 {
                b.uniform();
            }
            b.uniform()
        });
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    }
    #[test]
    fn fnv_known_value() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (reference value of the FNV authors).
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
