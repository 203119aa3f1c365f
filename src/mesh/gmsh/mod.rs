//! Reader for Gmsh meshes: MSH 4.1 (ASCII and binary) and MSH 2.2 (ASCII).
//!
//! Reads nodes, linear tetrahedra (type 4), triangles (type 2: kept with their physical
//! tag when they have one, for boundary conditions keyed by surface groups) and physical
//! groups. Other element types of dimension < 3 are skipped; volume elements
//! other than linear tetrahedra are refused. Errors carry the file and the line (ASCII)
//! or byte offset (binary). Counts from the file never size an allocation beyond what
//! the remaining bytes can hold, so a corrupt header cannot exhaust memory.
//!
//! This file holds the entry points, the line and byte reader and the section loop;
//! `sections.rs` reads the sections themselves.

use super::{Mesh, PhysicalName, RawTet, RawTri};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::Path;

mod elements;
mod sections;
#[cfg(test)]
mod tests;

use sections::build_tagmap;

/// Reads and validates a mesh file. Only regular files are read (a FIFO or a device such
/// as `/dev/zero` is refused before opening it), and a file larger than the memory the
/// system has available is refused by its size.
pub fn read(path: &Path) -> Result<Mesh> {
    let bytes = read_file(path)?;
    parse(&bytes, &path.display().to_string())
}

/// The bytes of a Gmsh file, its `$MeshFormat` header checked before the body is read
/// ([`super::head::read_file`]).
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    super::head::read_file(path, check_format)
}

/// Checks the `$MeshFormat` section at the start of `bytes` (the head of a file) and
/// nothing more: a file that is not a mesh is refused before its body is read.
/// Returns whether the file is ASCII (its body is text).
fn check_format(bytes: &[u8], name: &str) -> Result<bool> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let mut p = Parser::new(bytes, name);
    p.format()?;
    Ok(!p.binary)
}

/// Parses mesh bytes; `name` is used in messages.
pub fn parse(bytes: &[u8], name: &str) -> Result<Mesh> {
    // a UTF-8 byte-order mark (some editors add one) is not part of the format
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let raw = Parser::new(bytes, name).run()?;
    let mut mesh = Mesh::from_raw(name, raw.nodes, raw.tets, raw.tris, raw.names)?;
    // `from_raw` keeps the tets in file order, so the indices stay valid
    mesh.tet_groups = raw.tet_groups;
    mesh.tet_groups.sort_unstable();
    mesh.tet_groups.dedup();
    if let Some(line) = raw.periodic {
        mesh.ignored.push(format!(
            "line {line}: the $Periodic section is not applied (dgatd has no periodic boundaries): its surfaces are walls, PEC unless --boundary or [boundaries] says otherwise"
        ));
    }
    Ok(mesh)
}

struct Raw {
    nodes: Vec<[f64; 3]>,
    tets: Vec<RawTet>,
    tris: Vec<RawTri>,
    tet_groups: Vec<(u32, i32)>,
    names: Vec<PhysicalName>,
    /// The line of a `$Periodic` section that lists constraints, which the solver ignores.
    periodic: Option<usize>,
}

/// The elements the reader keeps.
#[derive(Default)]
struct Elements {
    tets: Vec<RawTet>,
    /// Triangles with a physical tag (surface groups), once per group of their entity.
    tris: Vec<RawTri>,
    /// `(index in tets, tag)` of the further physical groups of a tet's entity.
    tet_groups: Vec<(u32, i32)>,
}

/// The physical tags of each MSH 4.1 entity `(dim, tag)`, in file order (empty for an
/// entity in no physical group).
type EntityGroups = HashMap<(i32, i32), Vec<i32>>;

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
    line: usize,
    name: &'a str,
    binary: bool,
    swap: bool,
    version: u32, // 41 or 22
}

/// Node tag -> index.
enum TagMap {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

impl TagMap {
    fn get(&self, tag: u64) -> Option<u32> {
        match self {
            TagMap::Dense(v) => v.get(tag as usize).copied().filter(|&i| i != u32::MAX),
            TagMap::Sparse(m) => m.get(&tag).copied(),
        }
    }
}

impl<'a> Parser<'a> {
    fn new(b: &'a [u8], name: &'a str) -> Self {
        Parser {
            b,
            pos: 0,
            line: 0,
            name,
            binary: false,
            swap: false,
            version: 0,
        }
    }

    fn err(&self, msg: impl Into<String>) -> Error {
        let location = if self.binary && self.version == 41 {
            format!("line {} (byte {})", self.line, self.pos)
        } else {
            format!("line {}", self.line)
        };
        Error::MeshParse {
            path: self.name.to_string(),
            location,
            msg: msg.into(),
        }
    }

    fn eof(&self, what: &str) -> Error {
        self.err(format!("file ends early (truncated?) while reading {what}"))
    }

    /// Next line (without the line break, trailing '\r' and spaces), or None at the end.
    fn line(&mut self) -> Option<&'a str> {
        if self.pos >= self.b.len() {
            return None;
        }
        let start = self.pos;
        let end = self.b[start..]
            .iter()
            .position(|&c| c == b'\n')
            .map(|p| start + p)
            .unwrap_or(self.b.len());
        self.pos = (end + 1).min(self.b.len());
        self.line += 1;
        let s = &self.b[start..end];
        // Non-UTF-8 lines become an empty-looking marker that fails to parse below.
        Some(std::str::from_utf8(s).unwrap_or("\u{fffd}").trim_end())
    }

    fn need_line(&mut self, what: &str) -> Result<&'a str> {
        self.line().ok_or_else(|| self.eof(what))
    }

    fn expect(&mut self, tag: &str) -> Result<()> {
        let l = self.need_line(tag)?;
        if l.trim() != tag {
            return Err(self.err(format!("expected {tag}, found {:?}", clip(l))));
        }
        Ok(())
    }

    /// The next line's numbers, exactly `n` of them (`what` names them in the error): a
    /// line with more fields than the format has is refused, not read in part.
    fn nums_exact<T: std::str::FromStr>(&mut self, what: &str, n: usize) -> Result<Vec<T>> {
        let v = self.nums::<T>(what, n)?;
        if v.len() != n {
            return Err(self.err(format!(
                "{} fields where {what} has {n}: the line has fields the format does not (a mesh of another program or version?)",
                v.len()
            )));
        }
        Ok(v)
    }

    /// Whitespace-separated fields of the next line, parsed as numbers.
    fn nums<T: std::str::FromStr>(&mut self, what: &str, min: usize) -> Result<Vec<T>> {
        let l = self.need_line(what)?;
        let v: Option<Vec<T>> = l.split_whitespace().map(|s| s.parse().ok()).collect();
        match v {
            Some(v) if v.len() >= min => Ok(v),
            _ => Err(self.err(format!(
                "cannot read {what} from {:?} (expected {} number{})",
                clip(l),
                if min == 1 {
                    "a".to_string()
                } else {
                    format!("at least {min}")
                },
                if min == 1 { "" } else { "s" }
            ))),
        }
    }

    /// `v` as a 32-bit tag or type (Gmsh's are `int`): refused, naming `what`, beyond
    /// that range, where a cast would wrap it onto another tag.
    fn tag32(&self, v: i64, what: &str) -> Result<i32> {
        i32::try_from(v).map_err(|_| {
            self.err(format!(
                "{what} {v} does not fit a 32-bit integer (Gmsh's tags and types are at most {})",
                i32::MAX
            ))
        })
    }

    fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.eof(what));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn bin_i32(&mut self, what: &str) -> Result<i32> {
        let s: [u8; 4] = self.take(4, what)?.try_into().unwrap_or([0; 4]);
        Ok(if self.swap {
            i32::from_be_bytes(s)
        } else {
            i32::from_le_bytes(s)
        })
    }
    fn bin_u64(&mut self, what: &str) -> Result<u64> {
        let s: [u8; 8] = self.take(8, what)?.try_into().unwrap_or([0; 8]);
        Ok(if self.swap {
            u64::from_be_bytes(s)
        } else {
            u64::from_le_bytes(s)
        })
    }
    fn bin_f64(&mut self, what: &str) -> Result<f64> {
        Ok(f64::from_bits(self.bin_u64(what)?))
    }
    /// A count from the file, refused when the rest of the file could not hold
    /// `count * min_bytes` bytes.
    fn count(&self, c: u64, min_bytes: usize, what: &str) -> Result<usize> {
        let fits = (c as u128) * (min_bytes.max(1) as u128) <= self.remaining() as u128;
        if !fits {
            let swapped = c.swap_bytes();
            let hint = if self.binary
                && (swapped as u128) * (min_bytes.max(1) as u128) <= self.remaining() as u128
            {
                format!(
                    "; read with the other byte order it is {swapped}: the file looks byte-swapped (written on a machine of the other endianness, or its endianness marker is wrong)"
                )
            } else {
                " (truncated or corrupt)".to_string()
            };
            return Err(self.err(format!(
                "{what} count {c} is larger than the rest of the file can hold{hint}"
            )));
        }
        Ok(c as usize)
    }

    fn run(mut self) -> Result<Raw> {
        self.format()?;
        self.body()
    }

    /// The `$MeshFormat` section: version, file type, byte order.
    fn format(&mut self) -> Result<()> {
        loop {
            let l = self
                .line()
                .ok_or_else(|| self.err("no $MeshFormat section: not a Gmsh mesh file"))?;
            if l.trim().is_empty() {
                continue;
            }
            if l.trim() != "$MeshFormat" {
                return Err(self.err(format!(
                    "expected $MeshFormat, found {:?}: not a Gmsh mesh file",
                    clip(l)
                )));
            }
            break;
        }
        let l = self.need_line("the format line")?;
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 3 {
            return Err(self.err(format!("bad format line {:?}", clip(l))));
        }
        self.binary = match f[1] {
            "0" => false,
            "1" => true,
            t => {
                return Err(self.err(format!(
                    "bad file type {t:?} in the format line (0 for ASCII, 1 for binary)"
                )));
            }
        };
        self.version = match f[0] {
            "4.1" => 41,
            "2.2" => 22,
            v => {
                return Err(self.err(format!(
                    "unsupported MSH version {v} (supported: 4.1 ASCII and binary, 2.2 ASCII; \
                     re-export with gmsh -format msh41)"
                )));
            }
        };
        if self.binary {
            if self.version != 41 {
                return Err(
                    self.err("binary MSH 2.2 is not supported (use ASCII, or MSH 4.1 binary)")
                );
            }
            if f[2] != "8" {
                return Err(self.err(format!("unsupported data size {} (expected 8)", f[2])));
            }
            let one = self.take(4, "the endianness marker")?;
            if one == 1i32.to_le_bytes() {
                self.swap = false;
            } else if one == 1i32.to_be_bytes() {
                self.swap = true;
            } else {
                return Err(self.err("bad endianness marker in binary header"));
            }
            // The marker is followed by a newline.
            self.line();
        }
        self.expect("$EndMeshFormat")
    }

    fn body(mut self) -> Result<Raw> {
        let mut names = Vec::new();
        let mut entity_phys: Option<EntityGroups> = None;
        let mut nodes: Vec<[f64; 3]> = Vec::new();
        let mut tagmap: Option<TagMap> = None;
        let mut elements = Elements::default();
        let mut saw_elements = false;
        let mut periodic = None;
        while let Some(l) = self.line() {
            let t = l.trim();
            if t.is_empty() {
                continue;
            }
            match t {
                "$PhysicalNames" => names = self.physical_names()?,
                "$Entities" if self.version == 41 && entity_phys.is_some() => {
                    return Err(self.err(
                        "a second $Entities section (the file has one; merge them into one section)",
                    ));
                }
                "$Entities" if self.version == 41 => entity_phys = Some(self.entities()?),
                // a second section would silently replace the first (its nodes or elements
                // lost): Gmsh writes one of each
                "$Nodes" if tagmap.is_some() => {
                    return Err(self.err(
                        "a second $Nodes section (the file has one; merge them into one section)",
                    ));
                }
                "$Elements" if saw_elements => {
                    return Err(self.err(
                        "a second $Elements section (the file has one; merge them into one section)",
                    ));
                }
                "$Nodes" => {
                    let (n, tags) = if self.version == 41 {
                        self.nodes41()?
                    } else {
                        self.nodes22()?
                    };
                    nodes = n;
                    tagmap = Some(build_tagmap(&tags).map_err(|t| {
                        self.err(format!(
                            "node tag {t} is defined twice in $Nodes (each node needs its own tag)"
                        ))
                    })?);
                    self.expect("$EndNodes")?;
                }
                "$Elements" => {
                    let map = tagmap
                        .as_ref()
                        .ok_or_else(|| self.err("$Elements before $Nodes"))?;
                    elements = if self.version == 41 {
                        // MSH 4.1 gives an element's physical groups through its entity
                        // only: without $Entities every group would be lost
                        if entity_phys.is_none() && !names.is_empty() {
                            return Err(self.err(
                                "$Elements without an $Entities section before it: MSH 4.1 gives each element its physical group through its entity, so the file's physical groups would hold nothing (re-export the mesh with Gmsh)",
                            ));
                        }
                        self.elements41(map, entity_phys.as_ref())?
                    } else {
                        self.elements22(map)?
                    };
                    self.expect("$EndElements")?;
                    saw_elements = true;
                }
                // (issue 47 round five: each of these was skipped as an unknown section) a
                // second format line is another file pasted after this one
                "$MeshFormat" => {
                    return Err(self.err(
                        "a second $MeshFormat section: the file holds two meshes (concatenated files?)",
                    ));
                }
                // a partitioned mesh's elements lie in partition entities this reader
                // does not map onto the model's, so their physical groups would be wrong
                "$PartitionedEntities" => {
                    return Err(self.err(
                        "a partitioned mesh ($PartitionedEntities) is not supported: save the mesh again without partitions (in Gmsh: mesh without -part N)",
                    ));
                }
                // periodic walls would run as plain walls: said in a warning, unless the
                // section lists no constraint
                "$Periodic" => {
                    let line = self.line;
                    let start = self.pos;
                    self.skip_section("Periodic")?;
                    let body = String::from_utf8_lossy(&self.b[start..self.pos]);
                    let count = body.split_whitespace().next();
                    if self.binary || count.is_some_and(|c| c != "0") {
                        periodic = Some(line);
                    }
                }
                s if s.starts_with('$') && !s.starts_with("$End") => self.skip_section(&s[1..])?,
                s => {
                    return Err(self.err(format!("unexpected line {:?} between sections", clip(s))));
                }
            }
        }
        if tagmap.is_none() {
            return Err(self.err("no $Nodes section"));
        }
        if !saw_elements {
            return Err(self.err("no $Elements section"));
        }
        Ok(Raw {
            nodes,
            tets: elements.tets,
            tris: elements.tris,
            tet_groups: elements.tet_groups,
            names,
            periodic,
        })
    }

    fn skip_section(&mut self, name: &str) -> Result<()> {
        let end = format!("\n$End{name}");
        let hay = &self.b[self.pos.saturating_sub(1)..];
        match find(hay, end.as_bytes()) {
            Some(p) => {
                let stop = self.pos.saturating_sub(1) + p + 1;
                self.line += self.b[self.pos..stop]
                    .iter()
                    .filter(|&&c| c == b'\n')
                    .count();
                self.pos = stop;
                self.line();
                Ok(())
            }
            None => Err(self.err(format!("section ${name} has no $End{name}"))),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}
