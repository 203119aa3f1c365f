//! Opening a mesh file: only a regular file is read, its `$MeshFormat` header is checked
//! from the first bytes before the body is read (a large file of something else, a
//! `/dev/zero`, is refused at once, naming the file), and a file larger than the memory
//! available is refused by its size.

use crate::error::{Error, Result};
use std::io::Read;
use std::path::Path;

/// Bytes of a file's head that hold its `$MeshFormat` section (about 30 bytes; blank
/// lines before it are allowed).
const HEAD: u64 = 64 << 10;

/// The body is read in pieces of this size, each checked before the next is read.
const CHUNK: usize = 8 << 20;

/// The longest line an ASCII mesh may hold (a node, an element or a physical name is a
/// few hundred bytes at most): a longer one is not a mesh, and is refused before the rest
/// of the file is read.
pub const MAX_LINE: usize = 1 << 20;

/// The bytes of a mesh file, refusing non-regular files, files whose head `check` refuses
/// (for Gmsh files: not a `$MeshFormat` section, `gmsh::read_file`), and files larger than
/// the memory available. `check` returns whether the body is text (an ASCII mesh): then
/// each piece read is checked for NUL bytes and lines longer than [`MAX_LINE`], so a file
/// of gigabytes that is not a mesh (a sparse file, a binary file with a mesh header) is
/// refused after its first piece, naming the line, not after reading it whole.
pub fn read_file(path: &Path, check: impl Fn(&[u8], &str) -> Result<bool>) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let name = path.display().to_string();
    let invalid = |msg: String| Error::MeshInvalid {
        path: name.clone(),
        msg,
    };
    if !meta.is_file() {
        return Err(invalid(
            "not a regular file (a directory, device or pipe); give a Gmsh .msh file".into(),
        ));
    }
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = Vec::new();
    (&mut f)
        .take(HEAD)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    let text = check(&head, &name)?;
    if let Some(avail) = crate::cost::available_memory()
        && meta.len() > avail
    {
        return Err(invalid(format!(
            "the file has {} bytes, more than the {} of memory available",
            meta.len(),
            avail
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    let mut scan = TextScan::default();
    if text {
        scan.feed(&head).map_err(&invalid)?;
    }
    bytes.extend_from_slice(&head);
    loop {
        let start = bytes.len();
        let n = (&mut f)
            .take(CHUNK as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        if text {
            scan.feed(&bytes[start..]).map_err(&invalid)?;
        }
    }
    Ok(bytes)
}

/// The running check of an ASCII file's pieces: its line number and the length of its
/// current line.
#[derive(Default)]
struct TextScan {
    line: usize,
    run: usize,
    offset: usize,
}

impl TextScan {
    fn feed(&mut self, piece: &[u8]) -> std::result::Result<(), String> {
        for (k, &c) in piece.iter().enumerate() {
            match c {
                b'\n' => {
                    self.line += 1;
                    self.run = 0;
                }
                0 => {
                    return Err(format!(
                        "line {} (byte {}): a NUL byte in an ASCII mesh file (a binary, corrupt or sparse file, not a mesh)",
                        self.line + 1,
                        self.offset + k
                    ));
                }
                _ => {
                    self.run += 1;
                    if self.run > MAX_LINE {
                        return Err(format!(
                            "line {} is longer than {} bytes: an ASCII mesh's lines are short (a corrupt file, not a mesh)",
                            self.line + 1,
                            MAX_LINE
                        ));
                    }
                }
            }
        }
        self.offset += piece.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::gmsh::read_file;

    /// An empty folder of this test process for files named `tag`.
    fn scratch(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("dgatd-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A large file of garbage is refused from its head: the error names the file and
    /// line 1, and comes before the body would be read (a sparse 8 GiB file, more than
    /// this test would read in its time).
    #[test]
    fn garbage_is_refused_from_its_head() {
        let d = scratch("head");
        let p = d.join("big.msh");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(8 << 30).unwrap();
        drop(f);
        let t0 = std::time::Instant::now();
        let e = read_file(&p).unwrap_err().to_string();
        assert!(
            e.contains("big.msh") && e.contains("line 1") && e.contains("not a Gmsh mesh file"),
            "{e}"
        );
        assert!(t0.elapsed() < std::time::Duration::from_secs(5));
        std::fs::write(&p, "hello\nworld\n").unwrap();
        let e = read_file(&p).unwrap_err().to_string();
        assert!(e.contains("not a Gmsh mesh file"), "{e}");
        std::fs::remove_dir_all(&d).ok();
    }

    /// A mesh header followed by gigabytes of NUL bytes (round four U1/A2, mesh-079: read
    /// whole, 3 GB, before the error on line 7) is refused from its first piece, naming the
    /// line; so is an ASCII line longer than `MAX_LINE`.
    #[test]
    fn a_body_that_is_not_text_is_refused_before_it_is_read() {
        let d = scratch("body");
        let p = d.join("big.msh");
        std::fs::write(
            &p,
            "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n",
        )
        .unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .set_len(3 << 30)
            .unwrap();
        let t0 = std::time::Instant::now();
        let e = read_file(&p).unwrap_err().to_string();
        assert!(
            e.contains("big.msh") && e.contains("line 7") && e.contains("NUL byte"),
            "{e}"
        );
        assert!(t0.elapsed() < std::time::Duration::from_secs(20));
        let mut long = b"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Comments\n".to_vec();
        long.resize(long.len() + super::MAX_LINE + 10, b'x');
        std::fs::write(&p, &long).unwrap();
        let e = read_file(&p).unwrap_err().to_string();
        assert!(e.contains("line 5 is longer than"), "{e}");
        std::fs::remove_dir_all(&d).ok();
    }
}
