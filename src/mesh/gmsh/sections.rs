//! The section readers of the Gmsh parser: `$PhysicalNames`, `$Entities` (MSH 4.1) and
//! `$Nodes` in MSH 4.1 (ASCII and binary) and MSH 2.2 (ASCII); the elements are read in
//! [`super::elements`].

use super::{EntityGroups, Parser, TagMap, clip};
use crate::error::Result;
use crate::mesh::PhysicalName;
use std::collections::HashMap;

impl Parser<'_> {
    pub(super) fn physical_names(&mut self) -> Result<Vec<PhysicalName>> {
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

    /// $Entities of MSH 4.1: the physical tags of each entity (all of them: Gmsh writes
    /// several for an entity in several physical groups).
    pub(super) fn entities(&mut self) -> Result<EntityGroups> {
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
                    let mut tags = Vec::with_capacity(np);
                    for _ in 0..np {
                        tags.push(self.bin_i32("physical tag")?);
                    }
                    self.add_entity(&mut map, dim as i32, tag, tags)?;
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
                    let tags = v[np_at + 1..np_at + 1 + np]
                        .iter()
                        .map(|&p| self.tag32(p as i64, "physical tag"))
                        .collect::<Result<Vec<i32>>>()?;
                    self.add_entity(&mut map, dim as i32, tag, tags)?;
                }
            }
        }
        self.expect("$EndEntities")?;
        Ok(map)
    }

    /// Records entity `(dim, tag)` with its physical tags (each once, file order),
    /// refusing an entity defined twice.
    fn add_entity(
        &self,
        map: &mut EntityGroups,
        dim: i32,
        tag: i32,
        mut tags: Vec<i32>,
    ) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        tags.retain(|t| seen.insert(*t));
        if map.insert((dim, tag), tags).is_some() {
            return Err(self.err(format!(
                "entity {tag} of dimension {dim} is defined twice in $Entities"
            )));
        }
        Ok(())
    }

    pub(super) fn nodes41(&mut self) -> Result<(Vec<[f64; 3]>, Vec<u64>)> {
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
                    let t = self.bin_u64("node tags")?;
                    self.node_tag(t)?;
                    tags.push(t);
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
                    let t = self.nums_exact::<u64>("a node tag line", 1)?[0];
                    self.node_tag(t)?;
                    tags.push(t);
                }
                for _ in 0..n {
                    let v = self.nums_exact::<f64>("a node coordinate line", 3)?;
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

    pub(super) fn nodes22(&mut self) -> Result<(Vec<[f64; 3]>, Vec<u64>)> {
        let n = self.nums::<u64>("the number of nodes", 1)?[0];
        let n = self.count(n, 8, "node")?;
        let mut xyz = Vec::with_capacity(n);
        let mut tags = Vec::with_capacity(n);
        for _ in 0..n {
            let l = self.need_line("a node")?;
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() > 4 {
                return Err(self.err(format!(
                    "bad node line {:?}: {} fields where a node has 4 (tag x y z)",
                    clip(l),
                    f.len()
                )));
            }
            let ok = f.len() == 4;
            let tag = f.first().and_then(|s| s.parse::<u64>().ok());
            let c: Option<Vec<f64>> = f.iter().skip(1).take(3).map(|s| s.parse().ok()).collect();
            match (ok, tag, c) {
                (true, Some(t), Some(c)) => {
                    self.node_tag(t)?;
                    tags.push(t);
                    xyz.push([c[0], c[1], c[2]]);
                }
                _ => return Err(self.err(format!("bad node line {:?}", clip(l)))),
            }
        }
        Ok((xyz, tags))
    }

    /// Refuses node tag 0 (Gmsh numbers nodes from 1).
    fn node_tag(&self, t: u64) -> Result<()> {
        if t == 0 {
            return Err(self.err("node tag 0: Gmsh's node tags are positive (from 1)"));
        }
        Ok(())
    }
}

/// Node tag -> index; a tag defined twice is refused (`Err(tag)`).
pub(super) fn build_tagmap(tags: &[u64]) -> std::result::Result<TagMap, u64> {
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
