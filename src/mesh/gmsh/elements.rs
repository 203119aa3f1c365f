//! The `$Elements` readers of the Gmsh parser, MSH 4.1 (ASCII and binary) and MSH 2.2
//! (ASCII), and the resolution of an element's node tags to node indices.

use super::{Elements, EntityGroups, Parser, TagMap};
use crate::error::Result;
use crate::mesh::{RawTet, RawTri};

impl Parser<'_> {
    pub(super) fn elements41(
        &mut self,
        map: &TagMap,
        ent: Option<&EntityGroups>,
    ) -> Result<Elements> {
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
            let groups: &[i32] = match ent {
                Some(ent) => ent.get(&(dim, etag)).ok_or_else(|| {
                    self.err(format!(
                        "an element block of entity {etag} (dimension {dim}), which $Entities does not define: its elements' physical groups are unknown"
                    ))
                })?,
                None => &[],
            };
            let phys = groups.first().copied().unwrap_or(0);
            for _ in 0..n {
                let v: Vec<u64> = if self.binary {
                    let v = (0..nn + 1)
                        .map(|_| self.bin_u64("element"))
                        .collect::<Result<Vec<u64>>>()?;
                    if v[0] == 0 {
                        self.element_id(0)?;
                    }
                    v
                } else {
                    let v = self.nums::<i64>("an element", nn + 1)?;
                    if v.len() != nn + 1 {
                        return Err(self.err(format!(
                            "element {} lists {} nodes, type {ty} has {nn}",
                            v[0],
                            v.len() - 1
                        )));
                    }
                    self.element_id(v[0])?;
                    self.unsigned(v[0], &v)?
                };
                if ty == 4 {
                    let k = out.tets.len() as u32;
                    out.tets.push(self.resolve(map, v[0], &v[1..5], phys)?);
                    out.tet_groups
                        .extend(groups.iter().skip(1).map(|&g| (k, g)));
                } else if is_triangle(ty) {
                    for &g in groups {
                        out.tris.push(self.triangle(map, v[0], &v[1..4], g)?);
                    }
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

    pub(super) fn elements22(&mut self, map: &TagMap) -> Result<Elements> {
        let n = self.nums::<u64>("the number of elements", 1)?[0];
        let n = self.count(n, 8, "element")?;
        let mut out = Elements::default();
        for _ in 0..n {
            let v = self.nums::<i64>("an element", 3)?;
            self.element_id(v[0])?;
            let (id, ty, ntags) = (
                v[0] as u64,
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

    /// Refuses an element tag below 1 (Gmsh numbers elements from 1).
    fn element_id(&self, id: i64) -> Result<()> {
        if id < 1 {
            return Err(self.err(format!(
                "element tag {id}: Gmsh's element tags are positive (from 1)"
            )));
        }
        Ok(())
    }

    fn triangle(&self, map: &TagMap, id: u64, nodes: &[u64], phys: i32) -> Result<RawTri> {
        let mut out = [0u32; 3];
        for (k, &t) in nodes.iter().enumerate().take(3) {
            out[k] = map
                .get(t)
                .ok_or_else(|| self.err(format!("triangle {id} refers to missing node {t}")))?;
        }
        // (issue 47 round five: one was counted as an interior face of its group)
        if out[0] == out[1] || out[1] == out[2] || out[0] == out[2] {
            return Err(self.err(format!(
                "triangle {id} lists a node twice ({:?}): a degenerate triangle is no face of a tetrahedron",
                &nodes[..3]
            )));
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
