//! Reader for Gmsh meshes: MSH 4.1 (ASCII and binary) and MSH 2.2 (ASCII).
//!
//! Reads nodes, linear tetrahedra (type 4), triangles (type 2: kept with their physical
//! tag when they have one, for boundary conditions keyed by surface groups) and physical
//! groups. Other element types of dimension < 3 are skipped; volume elements
//! other than linear tetrahedra are refused. Errors carry the file and the line (ASCII)
//! or byte offset (binary). Counts from the file never size an allocation beyond what
//! the remaining bytes can hold, so a corrupt header cannot exhaust memory.

use super::{Mesh, PhysicalName, RawTet, RawTri};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::Path;

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
fn check_format(bytes: &[u8], name: &str) -> Result<()> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    Parser::new(bytes, name).format()
}

/// Parses mesh bytes; `name` is used in messages.
pub fn parse(bytes: &[u8], name: &str) -> Result<Mesh> {
    // a UTF-8 byte-order mark (some editors add one) is not part of the format
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let raw = Parser::new(bytes, name).run()?;
    Mesh::from_raw(name, raw.nodes, raw.tets, raw.tris, raw.names)
}

struct Raw {
    nodes: Vec<[f64; 3]>,
    tets: Vec<RawTet>,
    tris: Vec<RawTri>,
    names: Vec<PhysicalName>,
}

/// The elements the reader keeps.
#[derive(Default)]
struct Elements {
    tets: Vec<RawTet>,
    /// Triangles with a physical tag (surface groups).
    tris: Vec<RawTri>,
}

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
        let ftype: i32 = f[1]
            .parse()
            .map_err(|_| self.err(format!("bad file type {:?}", f[1])))?;
        self.binary = ftype == 1;
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
        let mut entity_phys: HashMap<(i32, i32), i32> = HashMap::new();
        let mut nodes: Vec<[f64; 3]> = Vec::new();
        let mut tagmap: Option<TagMap> = None;
        let mut elements = Elements::default();
        let mut saw_elements = false;
        while let Some(l) = self.line() {
            let t = l.trim();
            if t.is_empty() {
                continue;
            }
            match t {
                "$PhysicalNames" => names = self.physical_names()?,
                "$Entities" if self.version == 41 => entity_phys = self.entities()?,
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
                        self.elements41(map, &entity_phys)?
                    } else {
                        self.elements22(map)?
                    };
                    self.expect("$EndElements")?;
                    saw_elements = true;
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
            names,
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

    fn physical_names(&mut self) -> Result<Vec<PhysicalName>> {
        let n = self.nums::<u64>("the number of physical names", 1)?[0];
        let n = self.count(n, 6, "physical name")?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let l = self.need_line("a physical name")?;
            let mut it = l.splitn(3, char::is_whitespace);
            let dim = it.next().and_then(|s| s.parse().ok());
            let tag = it.next().and_then(|s| s.parse().ok());
            let name = it.next().map(|s| s.trim().trim_matches('"').to_string());
            match (dim, tag, name) {
                (Some(dim), Some(tag), Some(name)) => out.push(PhysicalName { dim, tag, name }),
                _ => return Err(self.err(format!("bad physical name line {:?}", clip(l)))),
            }
        }
        self.expect("$EndPhysicalNames")?;
        Ok(out)
    }

    /// $Entities of MSH 4.1: the physical tag (first one) of each entity.
    fn entities(&mut self) -> Result<HashMap<(i32, i32), i32>> {
        let mut map = HashMap::new();
        if self.binary {
            let mut counts = [0usize; 4];
            for c in counts.iter_mut() {
                let v = self.bin_u64("entity counts")?;
                *c = self.count(v, 4, "entity")?;
            }
            for (dim, &cnt) in counts.iter().enumerate() {
                for _ in 0..cnt {
                    let tag = self.bin_i32("entity tag")?;
                    let ncoord = if dim == 0 { 3 } else { 6 };
                    for _ in 0..ncoord {
                        self.bin_f64("entity bounding box")?;
                    }
                    let np = self.bin_u64("physical tag count")?;
                    let np = self.count(np, 4, "physical tag")?;
                    for k in 0..np {
                        let p = self.bin_i32("physical tag")?;
                        if k == 0 {
                            map.insert((dim as i32, tag), p);
                        }
                    }
                    if dim > 0 {
                        let nb = self.bin_u64("bounding entity count")?;
                        let nb = self.count(nb, 4, "bounding entity")?;
                        self.take(4 * nb, "bounding entities")?;
                    }
                }
            }
            self.line();
        } else {
            let c = self.nums::<u64>("entity counts", 4)?;
            for dim in 0..4 {
                let cnt = self.count(c[dim], 2, "entity")?;
                for _ in 0..cnt {
                    let v = self.nums::<f64>("an entity", if dim == 0 { 5 } else { 8 })?;
                    let (tag, np_at) = (
                        self.tag32(v[0] as i64, "entity tag")?,
                        if dim == 0 { 4 } else { 7 },
                    );
                    let np = v[np_at];
                    if !(np >= 0.0 && np.fract() == 0.0 && np < v.len() as f64) {
                        return Err(
                            self.err(format!("entity line has a bad physical tag count {np}"))
                        );
                    }
                    let np = np as usize;
                    if v.len() < np_at + 1 + np {
                        return Err(self.err("entity line lists fewer physical tags than it says"));
                    }
                    if np > 0 {
                        let p = self.tag32(v[np_at + 1] as i64, "physical tag")?;
                        map.insert((dim as i32, tag), p);
                    }
                }
            }
        }
        self.expect("$EndEntities")?;
        Ok(map)
    }

    fn nodes41(&mut self) -> Result<(Vec<[f64; 3]>, Vec<u64>)> {
        let (nblocks, nnodes) = if self.binary {
            let h: Vec<u64> = (0..4)
                .map(|_| self.bin_u64("the $Nodes header"))
                .collect::<Result<_>>()?;
            (h[0], h[1])
        } else {
            let h = self.nums::<u64>("the $Nodes header", 4)?;
            (h[0], h[1])
        };
        let min_node = if self.binary { 32 } else { 8 };
        let nnodes = self.count(nnodes, min_node, "node")?;
        let nblocks = self.count(nblocks, 4, "node block")?;
        let mut xyz = Vec::with_capacity(nnodes);
        let mut tags = Vec::with_capacity(nnodes);
        for _ in 0..nblocks {
            let (param, n) = if self.binary {
                let _dim = self.bin_i32("node block")?;
                let _tag = self.bin_i32("node block")?;
                let p = self.bin_i32("node block")?;
                let n = self.bin_u64("node block")?;
                (p, self.count(n, 32, "node")?)
            } else {
                let h = self.nums::<i64>("a node block header", 4)?;
                (h[2] as i32, self.count(h[3].max(0) as u64, 8, "node")?)
            };
            if param != 0 {
                return Err(self.err(
                    "parametric node coordinates are not supported (save without -parametric)",
                ));
            }
            if tags.len() + n > nnodes {
                return Err(self.err(format!(
                    "node blocks hold more nodes than the header's {nnodes}"
                )));
            }
            if self.binary {
                for _ in 0..n {
                    tags.push(self.bin_u64("node tags")?);
                }
                for _ in 0..n {
                    let p = [
                        self.bin_f64("node coordinates")?,
                        self.bin_f64("node coordinates")?,
                        self.bin_f64("node coordinates")?,
                    ];
                    xyz.push(p);
                }
            } else {
                for _ in 0..n {
                    tags.push(self.nums::<u64>("a node tag", 1)?[0]);
                }
                for _ in 0..n {
                    let v = self.nums::<f64>("node coordinates", 3)?;
                    xyz.push([v[0], v[1], v[2]]);
                }
            }
        }
        if tags.len() != nnodes {
            return Err(self.err(format!(
                "the $Nodes header announces {nnodes} nodes, the blocks hold {}",
                tags.len()
            )));
        }
        if self.binary {
            self.line();
        }
        Ok((xyz, tags))
    }

    fn nodes22(&mut self) -> Result<(Vec<[f64; 3]>, Vec<u64>)> {
        let n = self.nums::<u64>("the number of nodes", 1)?[0];
        let n = self.count(n, 8, "node")?;
        let mut xyz = Vec::with_capacity(n);
        let mut tags = Vec::with_capacity(n);
        for _ in 0..n {
            let l = self.need_line("a node")?;
            let f: Vec<&str> = l.split_whitespace().collect();
            let ok = f.len() >= 4;
            let tag = f.first().and_then(|s| s.parse::<u64>().ok());
            let c: Option<Vec<f64>> = f.iter().skip(1).take(3).map(|s| s.parse().ok()).collect();
            match (ok, tag, c) {
                (true, Some(t), Some(c)) => {
                    tags.push(t);
                    xyz.push([c[0], c[1], c[2]]);
                }
                _ => return Err(self.err(format!("bad node line {:?}", clip(l)))),
            }
        }
        Ok((xyz, tags))
    }

    fn elements41(&mut self, map: &TagMap, ent: &HashMap<(i32, i32), i32>) -> Result<Elements> {
        let (nblocks, nel) = if self.binary {
            let h: Vec<u64> = (0..4)
                .map(|_| self.bin_u64("the $Elements header"))
                .collect::<Result<_>>()?;
            (h[0], h[1])
        } else {
            let h = self.nums::<u64>("the $Elements header", 4)?;
            (h[0], h[1])
        };
        let nblocks = self.count(nblocks, 4, "element block")?;
        let nel = self.count(nel, 4, "element")?;
        let mut out = Elements::default();
        let mut seen = 0usize;
        for _ in 0..nblocks {
            let (dim, etag, ty, n) = if self.binary {
                let d = self.bin_i32("element block")?;
                let t = self.bin_i32("element block")?;
                let ty = self.bin_i32("element block")?;
                let n = self.bin_u64("element block")?;
                (d, t, ty, n)
            } else {
                let h = self.nums::<i64>("an element block header", 4)?;
                (
                    self.tag32(h[0], "element block dimension")?,
                    self.tag32(h[1], "element block entity tag")?,
                    self.tag32(h[2], "element type")?,
                    h[3].max(0) as u64,
                )
            };
            let nn = nodes_per_element(ty)
                .ok_or_else(|| self.err(format!("unknown element type {ty}")))?;
            let n = self.count(
                n,
                if self.binary {
                    8 * (nn + 1)
                } else {
                    2 * (nn + 1)
                },
                "element",
            )?;
            seen += n;
            if seen > nel {
                return Err(self.err(format!(
                    "element blocks hold more elements than the header's {nel}"
                )));
            }
            if element_dim(ty) == Some(3) && ty != 4 {
                return Err(self.err(format!(
                    "volume element type {ty} is not supported: only linear tetrahedra (type 4); mesh with -order 1"
                )));
            }
            // a block's elements are of its dimension: a volume element in a block declared
            // 2-D would otherwise be skipped (a hole in the mesh)
            if element_dim(ty).is_some_and(|d| d != dim) {
                return Err(self.err(format!(
                    "an element block declared of dimension {dim} holds elements of type {ty}, which are {}-D",
                    element_dim(ty).unwrap_or(dim)
                )));
            }
            let phys = ent.get(&(dim, etag)).copied().unwrap_or(0);
            for _ in 0..n {
                let v: Vec<u64> = if self.binary {
                    (0..nn + 1)
                        .map(|_| self.bin_u64("element"))
                        .collect::<Result<_>>()?
                } else {
                    let v = self.nums::<i64>("an element", nn + 1)?;
                    if v.len() != nn + 1 {
                        return Err(self.err(format!(
                            "element {} lists {} nodes, type {ty} has {nn}",
                            v[0],
                            v.len() - 1
                        )));
                    }
                    self.unsigned(v[0], &v)?
                };
                if ty == 4 {
                    out.tets.push(self.resolve(map, v[0], &v[1..5], phys)?);
                } else if is_triangle(ty) && phys != 0 {
                    out.tris.push(self.triangle(map, v[0], &v[1..4], phys)?);
                }
            }
        }
        if seen != nel {
            return Err(self.err(format!(
                "the $Elements header announces {nel} elements, the blocks hold {seen}"
            )));
        }
        if self.binary {
            self.line();
        }
        Ok(out)
    }

    fn elements22(&mut self, map: &TagMap) -> Result<Elements> {
        let n = self.nums::<u64>("the number of elements", 1)?[0];
        let n = self.count(n, 8, "element")?;
        let mut out = Elements::default();
        for _ in 0..n {
            let v = self.nums::<i64>("an element", 3)?;
            let (id, ty, ntags) = (
                v[0].max(0) as u64,
                self.tag32(v[1], "element type")?,
                v[2].max(0) as usize,
            );
            let nn = nodes_per_element(ty)
                .ok_or_else(|| self.err(format!("element {id}: unknown element type {ty}")))?;
            if v.len() != 3 + ntags + nn {
                return Err(self.err(format!(
                    "element {id}: expected {} fields for type {ty} with {ntags} tags, found {}",
                    3 + ntags + nn,
                    v.len()
                )));
            }
            if matches!(ty, 5 | 6 | 7 | 11 | 12 | 13 | 14 | 17 | 18 | 19 | 29) {
                return Err(self.err(format!(
                    "element {id}: volume element type {ty} is not supported: only linear tetrahedra (type 4)"
                )));
            }
            let phys = if ntags > 0 {
                self.tag32(v[3], "physical tag")?
            } else {
                0
            };
            let nodes = self.unsigned(v[0], &v[3 + ntags..])?;
            if ty == 4 {
                out.tets.push(self.resolve(map, id, &nodes, phys)?);
            } else if is_triangle(ty) && phys != 0 {
                out.tris.push(self.triangle(map, id, &nodes[..3], phys)?);
            }
        }
        Ok(out)
    }

    fn triangle(&self, map: &TagMap, id: u64, nodes: &[u64], phys: i32) -> Result<RawTri> {
        let mut out = [0u32; 3];
        for (k, &t) in nodes.iter().enumerate().take(3) {
            out[k] = map
                .get(t)
                .ok_or_else(|| self.err(format!("triangle {id} refers to missing node {t}")))?;
        }
        Ok(RawTri {
            id,
            nodes: out,
            phys,
        })
    }

    /// Tags of an element's line, refusing negative ones (element `id`).
    fn unsigned(&self, id: i64, v: &[i64]) -> Result<Vec<u64>> {
        match v.iter().find(|&&x| x < 0) {
            Some(t) => Err(self.err(format!(
                "element {id} refers to node {t}: node tags are positive numbers"
            ))),
            None => Ok(v.iter().map(|&x| x as u64).collect()),
        }
    }

    fn resolve(&self, map: &TagMap, id: u64, nodes: &[u64], phys: i32) -> Result<RawTet> {
        let mut out = [0u32; 4];
        for (k, &t) in nodes.iter().enumerate().take(4) {
            out[k] = map
                .get(t)
                .ok_or_else(|| self.err(format!("tetrahedron {id} refers to missing node {t}")))?;
        }
        Ok(RawTet {
            id,
            nodes: out,
            phys,
        })
    }
}

/// Node tag -> index; a tag defined twice is refused (`Err(tag)`).
fn build_tagmap(tags: &[u64]) -> std::result::Result<TagMap, u64> {
    let max = tags.iter().copied().max().unwrap_or(0);
    if (max as usize) < 4 * tags.len() + 1024 {
        let mut v = vec![u32::MAX; max as usize + 1];
        for (i, &t) in tags.iter().enumerate() {
            if v[t as usize] != u32::MAX {
                return Err(t);
            }
            v[t as usize] = i as u32;
        }
        Ok(TagMap::Dense(v))
    } else {
        let mut m = HashMap::with_capacity(tags.len());
        for (i, &t) in tags.iter().enumerate() {
            if m.insert(t, i as u32).is_some() {
                return Err(t);
            }
        }
        Ok(TagMap::Sparse(m))
    }
}

/// Nodes per element for the Gmsh element types a mesh may contain.
fn nodes_per_element(ty: i32) -> Option<usize> {
    Some(match ty {
        1 => 2,
        2 => 3,
        3 => 4,
        4 => 4,
        5 => 8,
        6 => 6,
        7 => 5,
        8 => 3,
        9 => 6,
        10 => 9,
        11 => 10,
        12 => 27,
        13 => 18,
        14 => 14,
        15 => 1,
        16 => 8,
        17 => 20,
        18 => 15,
        19 => 13,
        20 => 9,
        21 => 10,
        26 => 4,
        27 => 5,
        28 => 6,
        29 => 20,
        _ => return None,
    })
}

/// The dimension of a known element type (0 points, 1 lines, 2 surface, 3 volume).
fn element_dim(ty: i32) -> Option<i32> {
    Some(match ty {
        15 => 0,
        1 | 8 | 26 | 27 | 28 => 1,
        2 | 3 | 9 | 10 | 16 | 20 | 21 => 2,
        4..=7 | 11..=14 | 17..=19 | 29 => 3,
        _ => return None,
    })
}

/// Whether a type is a triangle whose first three nodes are its corners: the linear
/// triangle (2) and the 6-node second-order one (9), whose corners carry a surface group
/// just the same (its mid-edge nodes are not used).
fn is_triangle(ty: i32) -> bool {
    ty == 2 || ty == 9
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msh22(body_nodes: &str, body_el: &str) -> String {
        format!(
            "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{body_nodes}$EndNodes\n$Elements\n{body_el}$EndElements\n"
        )
    }
    const NODES: &str = "5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n";

    #[test]
    fn reads_minimal_v22_and_reorients() {
        // Second tet is given with negative orientation.
        let s = msh22(NODES, "2\n1 4 2 7 1 1 3 2 4\n2 4 2 7 1 2 3 4 5\n");
        let m = parse(s.as_bytes(), "mem").unwrap();
        assert_eq!(m.n_tets(), 2);
        assert_eq!(m.tet_phys, vec![7, 7]);
        assert!((0..2).all(|n| m.tet_volume(n) > 0.0));
        assert_eq!(m.reoriented, 1);
    }

    /// A second `$Nodes` or `$Elements` section used to replace the first (its tets lost
    /// without a word); it is refused, naming the line.
    #[test]
    fn a_second_nodes_or_elements_section_is_refused() {
        let els = "$Elements\n1\n1 4 2 7 1 1 2 3 4\n$EndElements\n";
        let twice = msh22(NODES, "1\n1 4 2 7 1 2 3 4 5\n") + els;
        let e = parse(twice.as_bytes(), "m.msh").unwrap_err().to_string();
        assert!(
            e.contains("second $Elements") && e.contains("line 16"),
            "{e}"
        );
        let nodes = format!("$Nodes\n{NODES}$EndNodes\n");
        let twice = format!("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n{nodes}{nodes}{els}");
        let e = parse(twice.as_bytes(), "m.msh").unwrap_err().to_string();
        assert!(e.contains("second $Nodes"), "{e}");
        // one of each still reads
        assert!(parse(msh22(NODES, "1\n1 4 2 7 1 1 2 3 4\n").as_bytes(), "m.msh").is_ok());
    }

    /// MSH 4.1: a tet or a hexahedron in a block declared 2-D is refused (it was skipped,
    /// leaving a hole).
    #[test]
    fn volume_elements_in_a_2d_block_are_refused() {
        let m41 = |blocks: &str, n: usize| {
            format!(
                "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 5 1 5\n3 1 0 5\n1\n2\n3\n4\n5\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n$EndNodes\n$Elements\n2 {n} 1 {n}\n3 1 4 1\n1 1 2 3 4\n{blocks}$EndElements\n"
            )
        };
        assert!(parse(m41("3 1 4 1\n2 2 3 4 5\n", 2).as_bytes(), "m.msh").is_ok());
        let e = parse(m41("2 1 4 1\n2 2 3 4 5\n", 2).as_bytes(), "m.msh")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("declared of dimension 2") && e.contains("type 4"),
            "{e}"
        );
        let e = parse(m41("2 1 5 1\n2 1 2 3 4 5 1 2 3\n", 2).as_bytes(), "m.msh")
            .unwrap_err()
            .to_string();
        assert!(e.contains("type 5"), "{e}");
    }

    /// Types and tags beyond Gmsh's 32-bit `int` are refused (a cast wrapped them onto
    /// other values); a surface group on 6-node triangles (type 9) is kept by its corners
    /// (it was dropped).
    #[test]
    fn wide_tags_are_refused_and_second_order_triangles_kept() {
        let e = parse(
            msh22(NODES, "1\n1 4294967300 2 7 1 1 2 3 4\n").as_bytes(),
            "m.msh",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("element type 4294967300") && e.contains("32-bit"),
            "{e}"
        );
        let e = parse(
            msh22(NODES, "1\n1 4 2 2147483648 1 1 2 3 4\n").as_bytes(),
            "m.msh",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("physical tag 2147483648"), "{e}");
        let m = parse(
            msh22(NODES, "2\n1 4 2 7 1 1 2 3 4\n2 9 2 11 1 1 2 3 1 2 3\n").as_bytes(),
            "m.msh",
        )
        .unwrap();
        assert_eq!(m.surfaces.len(), 1, "the type-9 triangle's group is kept");
        assert_eq!(m.surfaces[0].1, 11);
    }

    #[test]
    fn errors_name_line_and_element() {
        let e = parse(msh22(NODES, "1\n1 4 2 7 1 1 2 3 9\n").as_bytes(), "m.msh")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("m.msh") && e.contains("missing node 9") && e.contains("line 14"),
            "{e}"
        );
        let e = parse(b"$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", "m.msh")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unsupported MSH version 3.0") && e.contains("line 2"),
            "{e}"
        );
        let s = msh22(NODES, "1\n1 4 2 7 1 1 2 3 4\n");
        let e = parse(&s.as_bytes()[..s.len() - 30], "m.msh")
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated") || e.contains("no $Elements"), "{e}");
    }

    #[test]
    fn never_panics_on_mutations() {
        // Cheap in-module smoke test; tests/mesh_errors.rs has the thorough cases.
        let s = msh22(NODES, "1\n1 4 2 7 1 1 2 3 4\n").into_bytes();
        let mut rng = crate::util::Rng::new(3);
        for _ in 0..2000 {
            let mut b = s.clone();
            for _ in 0..3 {
                let i = (rng.next_u64() as usize) % b.len();
                b[i] = (rng.next_u64() & 0xff) as u8;
            }
            let _ = parse(&b, "fuzz");
        }
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;
    #[test]
    fn three_encodings_of_the_tiny_mesh_agree() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes");
        let a = read(&dir.join("tiny_v41.msh")).unwrap();
        let b = read(&dir.join("tiny_v41_bin.msh")).unwrap();
        let c = read(&dir.join("tiny_v22.msh")).unwrap();
        assert!(a.n_tets() > 50);
        // ASCII files print 16 significant digits, so binary coordinates may differ by an ulp.
        for m in [&b, &c] {
            assert_eq!(m.tets, a.tets);
            assert_eq!(m.tet_phys, a.tet_phys);
            for (p, q) in m.nodes.iter().zip(&a.nodes) {
                assert!(
                    (0..3).all(|k| (p[k] - q[k]).abs() <= 4.0 * f64::EPSILON),
                    "{p:?} {q:?}"
                );
            }
        }
        assert_eq!(c.nodes, a.nodes);
        assert!(a.tet_phys.iter().all(|&p| p == 1));
        assert_eq!(a.volume_group("vacuum"), Some(1));
        let v: f64 = (0..a.n_tets()).map(|n| a.tet_volume(n)).sum();
        // inscribed polyhedral cylinder: a bit below pi * 0.5
        assert!(
            v < std::f64::consts::PI * 0.5 && v > 0.9 * std::f64::consts::PI * 0.5,
            "{v}"
        );
    }
}
