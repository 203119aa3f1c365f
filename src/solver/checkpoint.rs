//! Checkpoints of a running leapfrog: the state `(U^n, F^(n-1/2))`, the probe samples and
//! energy checks so far, and what is needed to continue bit for bit.
//!
//! File format (`checkpoint.bin`, little-endian): the magic `DGATDCK1`, then
//! `fingerprint: u64` (of the run configuration and mesh), `done: u64` (steps completed),
//! `dt_bits: u64` (the time step in metres of light travel, as f64 bits), `reference: f64`
//! (the energy the blow-up guard compares against; NaN for none), the length-prefixed
//! (`u64` count) arrays `config` (the run's configuration as UTF-8 TOML, the layout of
//! `run.toml`, which `--resume` reads back), `out` (UTF-8: the absolute output folder it
//! was written for), `u`, `f`, `samples` (f64) and `energy`
//! (pairs of `u64` step and `f64` energy), then, only when the run has dispersive media,
//! the length-prefixed `aux` (f64: the poles' states, [`crate::backend::Stepper::aux_state`];
//! a file without it is read as having none), and last
//! the FNV-1a 64 checksum of every byte before it. The file is written to
//! `checkpoint.bin.tmp`, synced, and renamed over the old one, so a crash while writing
//! leaves the previous checkpoint intact.

use crate::error::{Error, Result};
use crate::util::fnv1a64;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"DGATDCK2";

/// Name of the checkpoint file inside an output directory.
pub const FILE: &str = "checkpoint.bin";

/// A saved run state.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub fingerprint: u64,
    pub done: usize,
    pub dt_bits: u64,
    pub reference: Option<f64>,
    /// The run's configuration (TOML).
    pub config: String,
    /// The output folder the run was writing to (absolute), so that a checkpoint copied
    /// into another folder is not continued there by mistake.
    pub out: String,
    pub u: Vec<f64>,
    pub f: Vec<f64>,
    pub samples: Vec<f64>,
    pub energy: Vec<(usize, f64)>,
    /// The auxiliary (dispersive) state; empty without dispersion.
    pub aux: Vec<f64>,
}

/// Streams bytes to a writer and into an FNV-1a hash.
struct Hashing<W: Write> {
    w: W,
    h: u64,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        for &x in b {
            self.h ^= x as u64;
            self.h = self.h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        self.w.write_all(b)
    }
    fn u64(&mut self, x: u64) -> std::io::Result<()> {
        self.put(&x.to_le_bytes())
    }
    fn f64s(&mut self, v: &[f64]) -> std::io::Result<()> {
        self.u64(v.len() as u64)?;
        let mut buf = Vec::with_capacity(8 * 4096);
        for c in v.chunks(4096) {
            buf.clear();
            for x in c {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            self.put(&buf)?;
        }
        Ok(())
    }
}

/// The name of an output folder as stored in [`Checkpoint::out`]: canonical where it exists,
/// as given otherwise; empty without a folder.
pub(crate) fn out_name(dir: Option<&std::path::Path>) -> String {
    dir.map(|d| {
        std::fs::canonicalize(d)
            .unwrap_or_else(|_| d.to_path_buf())
            .display()
            .to_string()
    })
    .unwrap_or_default()
}

/// The fingerprint and the step count of the checkpoint file at `path`, from its header
/// alone (the checksum is not verified), if it is a checkpoint of this format.
pub fn header(path: &Path) -> Option<(u64, usize)> {
    // a FIFO or a device at the checkpoint's name is not opened (a FIFO would block)
    if !std::fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    let mut head = [0u8; 24];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    let word = |k: usize| u64::from_le_bytes(head[k..k + 8].try_into().unwrap_or_default());
    (&head[..8] == MAGIC).then(|| (word(8), usize::try_from(word(16)).unwrap_or(usize::MAX)))
}

impl Checkpoint {
    /// Writes atomically to `dir/checkpoint.bin`; returns the path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(FILE);
        let tmp = dir.join(format!("{FILE}.tmp"));
        let io = |e| Error::io(&tmp, e);
        let file = crate::util::create_fresh(&tmp).map_err(io)?;
        let cleanup = |e: Error| {
            let _ = std::fs::remove_file(&tmp);
            e
        };
        crate::util::injected_write_fault(&path)
            .map_err(|e| Error::io(&tmp, e))
            .map_err(cleanup)?;
        let mut w = Hashing {
            w: BufWriter::with_capacity(1 << 20, file),
            h: 0xcbf2_9ce4_8422_2325,
        };
        (|| -> std::io::Result<()> {
            w.put(MAGIC)?;
            w.u64(self.fingerprint)?;
            w.u64(self.done as u64)?;
            w.u64(self.dt_bits)?;
            w.u64(self.reference.unwrap_or(f64::NAN).to_bits())?;
            for text in [&self.config, &self.out] {
                w.u64(text.len() as u64)?;
                w.put(text.as_bytes())?;
            }
            w.f64s(&self.u)?;
            w.f64s(&self.f)?;
            w.f64s(&self.samples)?;
            w.u64(self.energy.len() as u64)?;
            for &(s, e) in &self.energy {
                w.u64(s as u64)?;
                w.put(&e.to_le_bytes())?;
            }
            if !self.aux.is_empty() {
                w.f64s(&self.aux)?;
            }
            let h = w.h;
            w.w.write_all(&h.to_le_bytes())?;
            let file = w.w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()
        })()
        .map_err(io)
        .map_err(cleanup)?;
        std::fs::rename(&tmp, &path)
            .map_err(|e| Error::io(&path, e))
            .map_err(cleanup)?;
        Ok(path)
    }

    /// Reads and verifies `path` (a checkpoint file or a directory holding one).
    pub fn read(path: &Path) -> Result<Checkpoint> {
        let path = if path.is_dir() {
            path.join(FILE)
        } else {
            path.to_path_buf()
        };
        let mut bytes = Vec::new();
        let mut f = crate::util::regular_file(&path)
            .and_then(|()| std::fs::File::open(&path))
            .map_err(|e| Error::io(&path, e))?;
        // the magic first: a large file of something else is refused before it is read
        (&mut f)
            .take(8)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(&path, e))?;
        if bytes.as_slice() != MAGIC && bytes.as_slice() != b"DGATDCK1" {
            return Err(Error::Checkpoint {
                path,
                why: "not a dgatd checkpoint (bad magic)".into(),
            });
        }
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if let Some(avail) = crate::cost::available_memory()
            && len > avail
        {
            return Err(Error::Checkpoint {
                path,
                why: format!(
                    "{len} bytes, more than the {avail} bytes of memory available to read it"
                ),
            });
        }
        f.read_to_end(&mut bytes).map_err(|e| Error::io(&path, e))?;
        Self::parse(&bytes).map_err(|why| Error::Checkpoint {
            path: path.clone(),
            why,
        })
    }

    /// Parses checkpoint bytes; the error says what is wrong.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Checkpoint, String> {
        if bytes.len() >= 8 && &bytes[..8] == b"DGATDCK1" {
            return Err(
                "written by an older dgatd (format 1, arguments instead of a configuration): rerun the job".into(),
            );
        }
        if bytes.len() < MAGIC.len() + 8 || &bytes[..8] != MAGIC {
            return Err("not a dgatd checkpoint (bad magic)".into());
        }
        let (body, tail) = bytes.split_at(bytes.len() - 8);
        let want = u64::from_le_bytes(tail.try_into().map_err(|_| "truncated")?);
        let got = fnv1a64(body);
        if want != got {
            return Err(format!(
                "checksum mismatch (stored {want:016x}, computed {got:016x}): the file is corrupt or truncated"
            ));
        }
        let mut r = Reader { b: body, pos: 8 };
        let fingerprint = r.u64()?;
        let done = r.u64()? as usize;
        let dt_bits = r.u64()?;
        let reference = f64::from_bits(r.u64()?);
        let n = r.len(1)?;
        let config =
            String::from_utf8(r.take(n)?.to_vec()).map_err(|_| "configuration not UTF-8")?;
        let n = r.len(1)?;
        let out = String::from_utf8(r.take(n)?.to_vec()).map_err(|_| "folder name not UTF-8")?;
        let u = r.f64s()?;
        let f = r.f64s()?;
        let samples = r.f64s()?;
        let n = r.len(16)?;
        let mut energy = Vec::with_capacity(n);
        for _ in 0..n {
            energy.push((r.u64()? as usize, f64::from_bits(r.u64()?)));
        }
        let aux = if r.pos < body.len() {
            r.f64s()?
        } else {
            Vec::new()
        };
        if r.pos != body.len() {
            return Err(format!(
                "{} unexpected bytes at the end",
                body.len() - r.pos
            ));
        }
        Ok(Checkpoint {
            fingerprint,
            done,
            dt_bits,
            reference: (!reference.is_nan()).then_some(reference),
            config,
            out,
            u,
            f,
            samples,
            energy,
            aux,
        })
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> std::result::Result<&[u8], String> {
        if n > self.b.len() - self.pos {
            return Err(format!("truncated at byte {}", self.pos));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u64(&mut self) -> std::result::Result<u64, String> {
        let s = self.take(8)?;
        Ok(u64::from_le_bytes(s.try_into().map_err(|_| "truncated")?))
    }
    /// A count of items of `size` bytes, checked against the bytes left.
    fn len(&mut self, size: usize) -> std::result::Result<usize, String> {
        let at = self.pos;
        let n = self.u64()?;
        if n > ((self.b.len() - self.pos) / size) as u64 {
            return Err(format!("count {n} at byte {at} exceeds the file"));
        }
        Ok(n as usize)
    }
    fn f64s(&mut self) -> std::result::Result<Vec<f64>, String> {
        let n = self.len(8)?;
        let s = self.take(8 * n)?;
        Ok(s.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }
}

/// The fingerprint of a run on `ranks` ranks: the single-process fingerprint for one rank,
/// else that fingerprint hashed with P (a checkpoint is resumed by the same P only).
pub fn ranks_fingerprint(fp: u64, ranks: usize) -> u64 {
    if ranks <= 1 {
        fp
    } else {
        crate::util::fnv1a64(format!("{fp:016x}|ranks {ranks}").as_bytes())
    }
}

/// The rank count a checkpoint fingerprint was written for, given the run's one-process
/// fingerprint (searched up to 4096 ranks), or None if it belongs to another run.
pub fn checkpoint_ranks(ck_fingerprint: u64, fp: u64) -> Option<usize> {
    (1..=4096).find(|&p| ranks_fingerprint(fp, p) == ck_fingerprint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        Checkpoint {
            fingerprint: 0x1234_5678_9abc_def0,
            done: 300,
            dt_bits: 0.0123f64.to_bits(),
            reference: Some(2.5),
            config: "steps = 600\n".into(),
            out: "/tmp/run".into(),
            u: vec![1.0, -2.0, 3.5e-300],
            f: vec![f64::MIN_POSITIVE, 7.0],
            samples: (0..30).map(|i| (i as f64).sin()).collect(),
            energy: vec![(100, 1.0), (200, 1.0 + 1e-15)],
            aux: vec![],
        }
    }

    #[test]
    fn round_trip_and_corruption() {
        let dir = std::env::temp_dir().join(format!("dgatd-ck-{}", std::process::id()));
        let c = sample();
        let p = c.write(&dir).unwrap();
        assert_eq!(Checkpoint::read(&dir).unwrap(), c);
        // with a dispersive state too (appended; a file without it reads as none)
        let cd = Checkpoint {
            aux: vec![0.5, -1e-9, 3.0],
            ..c.clone()
        };
        cd.write(&dir).unwrap();
        assert_eq!(Checkpoint::read(&dir).unwrap(), cd);
        c.write(&dir).unwrap();
        let mut b = std::fs::read(&p).unwrap();
        // every single-byte corruption is caught by the checksum (or the magic)
        for i in [0, 9, 40, b.len() / 2, b.len() - 1] {
            b[i] ^= 0x10;
            assert!(Checkpoint::parse(&b).is_err(), "byte {i}");
            b[i] ^= 0x10;
        }
        assert!(Checkpoint::parse(&b[..b.len() - 3]).is_err());
        let e = Checkpoint::read(&dir.join("missing.bin")).unwrap_err();
        assert!(e.to_string().contains("missing.bin"));
        std::fs::write(&p, b"DGATDCK2garbage!").unwrap();
        let e = Checkpoint::read(&p).unwrap_err().to_string();
        assert!(
            e.contains("checksum mismatch") && e.contains("checkpoint.bin"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
