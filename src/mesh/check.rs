//! Checks of a mesh's geometry and topology beyond what reading validates, with a decision
//! per defect (documented in `results/reliability.md`):
//!
//! - **Folded tets** (refused): across an interior face the two tets must lie on opposite
//!   sides of the face's plane; when both opposite vertices are on the same side the tets
//!   overlap (the volume counts twice, the enclosed boundary volume no longer matches).
//! - **Non-manifold edges and vertices** (refused): the tets around an edge must form one
//!   fan or ring connected through faces containing the edge, and the tets around a vertex
//!   one cluster connected through faces containing it. Two blocks touching along only an
//!   edge or at only a vertex are a meshing defect, and the dual cells there are not cells.
//! - **Unmerged coincident nodes** (accepted with a warning): distinct nodes at the same
//!   position make a crack; its faces are boundary faces, so it acts as an infinitely thin
//!   PEC sheet (or whatever the boundary condition of its surface group says).
//! - **Disconnected parts** (accepted with a warning): a part without the source is not
//!   excited, so its modes are not seen.

use super::Mesh;
use super::topology::{LOCAL_EDGES, NONE, Topology};
use crate::util::{det3, sub};
use crate::{Error, Result};

/// Union-find over `n` items (path halving; union by index for determinism).
struct Dsu(Vec<u32>);

impl Dsu {
    fn new(n: usize) -> Self {
        Dsu((0..n as u32).collect())
    }
    fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let p = self.0[self.0[x as usize] as usize];
            self.0[x as usize] = p;
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            let (lo, hi) = (a.min(b), a.max(b));
            self.0[hi as usize] = lo;
        }
    }
}

/// Local index (0..4) of vertex `v` in tet `n`.
fn local(mesh: &Mesh, n: usize, v: u32) -> usize {
    mesh.tets[n].iter().position(|&x| x == v).unwrap_or(0)
}

/// Runs every check; errors name the elements (file ids), warnings say what will happen.
pub fn check(mesh: &Mesh, topo: &Topology) -> Result<Vec<String>> {
    let invalid = |msg: String| Error::MeshInvalid {
        path: mesh.source.clone(),
        msg,
    };
    folded(mesh, topo).map_err(invalid)?;
    manifold(mesh, topo).map_err(invalid)?;
    let mut warnings = vec![];
    warnings.extend(coincident_nodes(mesh));
    warnings.extend(components(mesh, topo));
    Ok(warnings)
}

fn folded(mesh: &Mesh, topo: &Topology) -> std::result::Result<(), String> {
    for (f, ft) in topo.faces.iter().zip(&topo.face_tets) {
        if ft[1] == NONE {
            continue;
        }
        let x = |v: u32| mesh.nodes[v as usize];
        let side = |n: u32| {
            let opp = mesh.tets[n as usize]
                .iter()
                .copied()
                .find(|v| !f.contains(v))
                .unwrap_or(f[0]);
            det3(
                sub(x(f[1]), x(f[0])),
                sub(x(f[2]), x(f[0])),
                sub(x(opp), x(f[0])),
            )
        };
        let (a, b) = (side(ft[0]), side(ft[1]));
        if a * b >= 0.0 {
            return Err(format!(
                "tetrahedra {} and {} are folded over each other: both lie on the same side of their common face (nodes {:?}); the mesh overlaps itself there",
                mesh.tet_ids[ft[0] as usize], mesh.tet_ids[ft[1] as usize], f
            ));
        }
    }
    Ok(())
}

/// Face-connectivity of the tets around each edge and each vertex.
fn manifold(mesh: &Mesh, topo: &Topology) -> std::result::Result<(), String> {
    let t = mesh.n_tets();
    // incidences (tet, local edge) and (tet, local vertex), joined across interior faces
    let mut de = Dsu::new(6 * t);
    let mut dv = Dsu::new(4 * t);
    for (f, ft) in topo.faces.iter().zip(&topo.face_tets) {
        if ft[1] == NONE {
            continue;
        }
        let (a, b) = (ft[0] as usize, ft[1] as usize);
        for &v in f {
            dv.union(
                (4 * a + local(mesh, a, v)) as u32,
                (4 * b + local(mesh, b, v)) as u32,
            );
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            let le = |n: usize| {
                let (i, j) = (local(mesh, n, f[p]), local(mesh, n, f[q]));
                LOCAL_EDGES
                    .iter()
                    .position(|e| *e == [i.min(j), i.max(j)])
                    .unwrap_or(0)
            };
            de.union((6 * a + le(a)) as u32, (6 * b + le(b)) as u32);
        }
    }
    let mut first = vec![u32::MAX; topo.n_edges()];
    for n in 0..t {
        for l in 0..6 {
            let e = topo.tet_edges[n][l] as usize;
            let r = de.find((6 * n + l) as u32);
            if first[e] == u32::MAX {
                first[e] = r;
            } else if first[e] != r {
                let [a, b] = topo.edges[e];
                return Err(format!(
                    "non-manifold edge between nodes at {:?} and {:?}: the tetrahedra around it (e.g. {} and {}) form separate blocks that touch only along the edge",
                    mesh.nodes[a as usize],
                    mesh.nodes[b as usize],
                    mesh.tet_ids[first[e] as usize / 6],
                    mesh.tet_ids[n]
                ));
            }
        }
    }
    let mut first = vec![u32::MAX; mesh.n_vertices()];
    for n in 0..t {
        for (i, &v) in mesh.tets[n].iter().enumerate() {
            let r = dv.find((4 * n + i) as u32);
            if first[v as usize] == u32::MAX {
                first[v as usize] = r;
            } else if first[v as usize] != r {
                return Err(format!(
                    "non-manifold vertex at {:?}: the tetrahedra around it (e.g. {} and {}) form separate blocks that touch only at this point",
                    mesh.nodes[v as usize],
                    mesh.tet_ids[first[v as usize] as usize / 4],
                    mesh.tet_ids[n]
                ));
            }
        }
    }
    Ok(())
}

fn coincident_nodes(mesh: &Mesh) -> Option<String> {
    let mut idx: Vec<u32> = (0..mesh.n_vertices() as u32).collect();
    let key = |i: u32| mesh.nodes[i as usize].map(f64::to_bits);
    idx.sort_unstable_by_key(|&i| key(i));
    let pairs: Vec<(u32, u32)> = idx
        .windows(2)
        .filter(|w| key(w[0]) == key(w[1]))
        .map(|w| (w[0], w[1]))
        .collect();
    let &(a, _) = pairs.first()?;
    Some(format!(
        "{} pairs of distinct nodes share a position (first at {:?}): the mesh is cut there, and the cut's faces are boundary faces (PEC unless their surface group says otherwise), an infinitely thin conducting sheet; merge the nodes (gmsh: Coherence) if that is not intended",
        pairs.len(),
        mesh.nodes[a as usize]
    ))
}

fn components(mesh: &Mesh, topo: &Topology) -> Option<String> {
    let mut d = Dsu::new(mesh.n_tets());
    for ft in &topo.face_tets {
        if ft[1] != NONE {
            d.union(ft[0], ft[1]);
        }
    }
    let mut sizes = std::collections::BTreeMap::new();
    for n in 0..mesh.n_tets() as u32 {
        *sizes.entry(d.find(n)).or_insert(0usize) += 1;
    }
    if sizes.len() < 2 {
        return None;
    }
    let mut s: Vec<usize> = sizes.into_values().collect();
    s.sort_unstable_by(|a, b| b.cmp(a));
    let list: Vec<String> = s.iter().take(5).map(|x| x.to_string()).collect();
    Some(format!(
        "the mesh has {} disconnected parts ({}{} tets): a part without the source is not excited, and its modes are not seen",
        s.len(),
        list.join(", "),
        if s.len() > 5 { ", ..." } else { "" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;

    #[test]
    fn a_box_passes_and_a_fold_is_found() {
        let m = box_mesh([2, 2, 2], [1.0, 1.0, 1.0]);
        let t = Topology::build(&m).unwrap();
        assert!(check(&m, &t).unwrap().is_empty());
        // push the centre node through a face of its tets: tets fold over their neighbours
        let mut f = m.clone();
        let c = f.nodes.iter().position(|p| *p == [0.5, 0.5, 0.5]).unwrap();
        f.nodes[c] = [0.5, 0.5, 1.4];
        let t = Topology::build(&f).unwrap();
        let e = check(&f, &t).unwrap_err().to_string();
        assert!(e.contains("folded"), "{e}");
    }
}
