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

/// The bytes of a mesh file, refusing non-regular files, files whose head `check` refuses
/// (for Gmsh files: not a `$MeshFormat` section, `gmsh::read_file`), and files larger than
/// the memory available.
pub fn read_file(path: &Path, check: impl Fn(&[u8], &str) -> Result<()>) -> Result<Vec<u8>> {
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
    check(&head, &name)?;
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
    bytes.extend_from_slice(&head);
    f.read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::super::gmsh::read_file;

    /// A large file of garbage is refused from its head: the error names the file and
    /// line 1, and comes before the body would be read (a sparse 8 GiB file, more than
    /// this test would read in its time).
    #[test]
    fn garbage_is_refused_from_its_head() {
        let d = std::env::temp_dir().join(format!("dgatd-head-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
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
}
