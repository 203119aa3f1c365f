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
//! - **Slivers** (accepted with a warning): the stable time step scales with the smallest
//!   cell, so one tet whose inradius (`3V / Σ face areas`) is far below the median's
//!   makes every step of the run pay for it; the warning names the tet, where it is and
//!   how much smaller it is.

use super::Mesh;
use super::topology::{NONE, Topology};
use crate::error::{Error, Result};
use crate::util::{det3, sub};
use rayon::prelude::*;

/// Union-find over `n` items (path halving; union by index for determinism).
struct Dsu(Vec<u32>);

impl Dsu {
    fn new(n: usize) -> Self {
        Dsu((0..n as u32).collect())
    }
    /// Resets to `n` singletons, keeping the allocation.
    fn reset(&mut self, n: usize) {
        self.0.clear();
        self.0.extend(0..n as u32);
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
    warnings.extend(slivers(mesh));
    warnings.extend(stray_triangles(mesh, topo));
    warnings.extend(mesh.ignored.iter().map(|w| format!("{}: {w}", mesh.source)));
    Ok(warnings)
}

/// Whether the three vertices `tri` are a face of a tet (one of the tets at its first
/// vertex holds the other two).
pub(crate) fn is_face(mesh: &Mesh, topo: &Topology, tri: &[u32; 3]) -> bool {
    topo.tets_at(tri[0] as usize).iter().any(|&(n, _)| {
        let t = mesh.tets[n as usize];
        t.contains(&tri[1]) && t.contains(&tri[2])
    })
}

/// The surface-group triangles that are not faces of the mesh: those dropped on input
/// (on nodes no tet uses) and those whose three nodes are in the mesh but are no face of
/// a tet (a diagonal through a cell); a boundary condition on them sets nothing.
fn stray_triangles(mesh: &Mesh, topo: &Topology) -> Vec<String> {
    let mut out = Vec::new();
    let ids = |v: &[u64]| {
        let shown: Vec<String> = v.iter().take(5).map(u64::to_string).collect();
        format!(
            "{}{}",
            shown.join(", "),
            if v.len() > 5 { ", ..." } else { "" }
        )
    };
    if !mesh.dropped_triangles.is_empty() {
        out.push(format!(
            "{} triangle{} of surface groups (element {}) use{} nodes that no tetrahedron uses: {} no tetrahedron and {} left out of {} group",
            mesh.dropped_triangles.len(),
            if mesh.dropped_triangles.len() == 1 { "" } else { "s" },
            ids(&mesh.dropped_triangles),
            if mesh.dropped_triangles.len() == 1 { "s" } else { "" },
            if mesh.dropped_triangles.len() == 1 { "it bounds" } else { "they bound" },
            if mesh.dropped_triangles.len() == 1 { "is" } else { "are" },
            if mesh.dropped_triangles.len() == 1 { "its" } else { "their" },
        ));
    }
    let mut per_tag: std::collections::BTreeMap<i32, usize> = Default::default();
    for (tri, tag) in &mesh.surfaces {
        if !is_face(mesh, topo, tri) {
            *per_tag.entry(*tag).or_default() += 1;
        }
    }
    for (tag, n) in per_tag {
        let name = mesh
            .physical_names
            .iter()
            .find(|p| p.dim == 2 && p.tag == tag)
            .map(|p| format!("{:?} ", p.name))
            .unwrap_or_default();
        out.push(format!(
            "the surface group {name}(tag {tag}) holds {n} triangle{} whose nodes are no face of any tetrahedron (a triangle across a cell): {} nothing, and a boundary condition ignores {}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it bounds" } else { "they bound" },
            if n == 1 { "it" } else { "them" },
        ));
    }
    out
}

/// A tet smaller than the median by this factor (in inradius) is worth a warning: the
/// time step, and so the run's length in steps, follows it.
const SLIVER_RATIO: f64 = 20.0;

/// The tet of smallest inradius when it is [`SLIVER_RATIO`] below the median (module
/// docs); the count of such tets with it.
fn slivers(mesh: &Mesh) -> Option<String> {
    use crate::util::{cross, norm};
    if mesh.n_tets() < 8 {
        return None;
    }
    let r: Vec<f64> = (0..mesh.n_tets())
        .into_par_iter()
        .map(|n| {
            let x = mesh.tet_x(n);
            let area =
                |a: usize, b: usize, c: usize| 0.5 * norm(cross(sub(x[b], x[a]), sub(x[c], x[a])));
            let faces = area(1, 2, 3) + area(0, 2, 3) + area(0, 1, 3) + area(0, 1, 2);
            3.0 * mesh.tet_volume(n).abs() / faces
        })
        .collect();
    let (worst, &rmin) = r.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1))?;
    let mut sorted = r.clone();
    let mid = sorted.len() / 2;
    let (_, &mut median, _) = sorted.select_nth_unstable_by(mid, f64::total_cmp);
    if !(rmin * SLIVER_RATIO < median) {
        return None;
    }
    let count = r.iter().filter(|&&x| x * SLIVER_RATIO < median).count();
    let x = mesh.tet_x(worst);
    let c: Vec<f64> = (0..3)
        .map(|k| x.iter().map(|p| p[k]).sum::<f64>() / 4.0)
        .collect();
    Some(format!(
        "tet {worst} (centre {:.4e}, {:.4e}, {:.4e} m) is a sliver: its inradius {rmin:.3e} m is 1/{:.0} of the median tet's ({median:.3e} m), and the time step shrinks with it (about {:.0}x more steps than the median cell needs){}; remesh there to run faster",
        c[0],
        c[1],
        c[2],
        median / rmin,
        median / rmin,
        if count > 1 {
            format!("; {count} tets are 1/{SLIVER_RATIO:.0} of the median or less")
        } else {
            String::new()
        }
    ))
}

fn folded(mesh: &Mesh, topo: &Topology) -> std::result::Result<(), String> {
    let bad = topo
        .faces
        .par_iter()
        .zip(&topo.face_tets)
        .position_first(|(f, ft)| {
            if ft[1] == NONE {
                return false;
            }
            let x = |v: u32| mesh.nodes[v as usize];
            let side = |n: u32| {
                let opp = mesh.tets[n as usize]
                    .iter()
                    .copied()
                    .find(|v| !f.contains(v))
                    .unwrap_or(f[0]);
                let (a, b, c) = (
                    sub(x(f[1]), x(f[0])),
                    sub(x(f[2]), x(f[0])),
                    sub(x(opp), x(f[0])),
                );
                // in units of the longest of the three: the sign of a mesh of any scale
                // (unscaled, a mesh in units of 1e-80 underflows to 0 and reads "folded")
                let l = crate::util::norm(a)
                    .max(crate::util::norm(b))
                    .max(crate::util::norm(c));
                let u = |v| crate::util::scale(v, 1.0 / l);
                det3(u(a), u(b), u(c))
            };
            let (a, b) = (side(ft[0]), side(ft[1]));
            a * b >= 0.0
        });
    match bad {
        Some(i) => {
            let (f, ft) = (topo.faces[i], topo.face_tets[i]);
            Err(format!(
                "tetrahedra {} and {} are folded over each other: both lie on the same side of their common face (nodes {:?}); the mesh overlaps itself there",
                mesh.tet_ids[ft[0] as usize], mesh.tet_ids[ft[1] as usize], f
            ))
        }
        None => Ok(()),
    }
}

/// Face-connectivity of the tets around each edge and each vertex, vertex by vertex in
/// parallel over the vertex → tet incidence ([`Topology::tets_at`]): at vertex `v`, a small
/// union-find over its tets joins two tets across a face containing `v` (the vertex's
/// cluster) and, for each edge `(v, w)` with `w > v`, two tets containing the edge across a
/// face containing both (the edge's fan). The error names the first defective edge in
/// vertex order, else the first defective vertex.
fn manifold(mesh: &Mesh, topo: &Topology) -> std::result::Result<(), String> {
    let around = |v: usize| topo.tets_at(v);
    let edge = (0..mesh.n_vertices())
        .into_par_iter()
        .map_init(Scratch::default, |s, v| {
            edge_fans(mesh, topo, v as u32, around(v), s)
        })
        .find_first(Option::is_some)
        .flatten();
    if let Some(((a, b), n, m)) = edge {
        return Err(format!(
            "non-manifold edge between nodes at {:?} and {:?}: the tetrahedra around it (e.g. {} and {}) form separate blocks that touch only along the edge",
            mesh.nodes[a as usize], mesh.nodes[b as usize], mesh.tet_ids[n], mesh.tet_ids[m]
        ));
    }
    let vertex = (0..mesh.n_vertices())
        .into_par_iter()
        .map_init(Scratch::default, |s, v| {
            vertex_cluster(topo, around(v), &mut s.dsu).map(|(n, m)| (v, n, m))
        })
        .find_first(Option::is_some)
        .flatten();
    if let Some((v, n, m)) = vertex {
        return Err(format!(
            "non-manifold vertex at {:?}: the tetrahedra around it (e.g. {} and {}) form separate blocks that touch only at this point",
            mesh.nodes[v], mesh.tet_ids[n], mesh.tet_ids[m]
        ));
    }
    Ok(())
}

/// Buffers one thread reuses from vertex to vertex.
struct Scratch {
    fan: Vec<(u32, u32)>,
    dsu: Dsu,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            fan: Vec::new(),
            dsu: Dsu::new(0),
        }
    }
}

/// The tet across local face `k` of tet `n` (None on the boundary).
fn across(topo: &Topology, n: usize, k: usize) -> Option<usize> {
    let ft = topo.face_tets[topo.tet_faces[n][k] as usize];
    let m = if ft[0] as usize == n { ft[1] } else { ft[0] };
    (m != NONE).then_some(m as usize)
}

/// Two tets of separate blocks around the vertex whose tets (ascending, with the vertex's
/// local index) are `tets`, or None where they form one cluster.
fn vertex_cluster(topo: &Topology, tets: &[(u32, u8)], d: &mut Dsu) -> Option<(usize, usize)> {
    if tets.is_empty() {
        return None;
    }
    d.reset(tets.len());
    let at = |m: usize| tets.binary_search_by_key(&(m as u32), |x| x.0).ok();
    for (a, &(n, i)) in tets.iter().enumerate() {
        for k in (0..4).filter(|&k| k != i as usize) {
            if let Some(b) = across(topo, n as usize, k).and_then(at) {
                d.union(a as u32, b as u32);
            }
        }
    }
    let r0 = d.find(0);
    (1..tets.len() as u32)
        .find(|&a| d.find(a) != r0)
        .map(|a| (tets[0].0 as usize, tets[a as usize].0 as usize))
}

/// The first edge `(v, w)`, `w > v`, whose tets (of `tets`, those around `v`) form separate
/// fans, with a tet of each of two fans.
fn edge_fans(
    mesh: &Mesh,
    topo: &Topology,
    v: u32,
    tets: &[(u32, u8)],
    s: &mut Scratch,
) -> Option<((u32, u32), usize, usize)> {
    // (w, tet) for every edge (v, w) with w > v of every tet around v, by w then tet
    let Scratch { fan, dsu: d } = s;
    fan.clear();
    fan.extend(tets.iter().flat_map(|&(n, _)| {
        mesh.tets[n as usize]
            .iter()
            .filter(move |&&w| w > v)
            .map(move |&w| (w, n))
    }));
    fan.sort_unstable();
    for group in fan.chunk_by(|a, b| a.0 == b.0) {
        let w = group[0].0;
        if group.len() == 1 {
            continue;
        }
        d.reset(group.len());
        let at = |m: usize| group.binary_search_by_key(&(m as u32), |x| x.1).ok();
        for (a, &(_, n)) in group.iter().enumerate() {
            let tv = mesh.tets[n as usize];
            // the two faces of tet n containing v and w: those opposite its other vertices
            for k in (0..4).filter(|&k| tv[k] != v && tv[k] != w) {
                if let Some(b) = across(topo, n as usize, k).and_then(at) {
                    d.union(a as u32, b as u32);
                }
            }
        }
        let r0 = d.find(0);
        if let Some(a) = (1..group.len() as u32).find(|&a| d.find(a) != r0) {
            return Some(((v, w), group[0].1 as usize, group[a as usize].1 as usize));
        }
    }
    None
}

fn coincident_nodes(mesh: &Mesh) -> Option<String> {
    let mut keyed: Vec<([u64; 3], u32)> = (0..mesh.n_vertices() as u32)
        .into_par_iter()
        .map(|i| (mesh.nodes[i as usize].map(f64::to_bits), i))
        .collect();
    keyed.par_sort_unstable();
    let pairs: Vec<(u32, u32)> = keyed
        .par_windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| (w[0].1, w[1].1))
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
    let mut sizes = vec![0usize; mesh.n_tets()];
    for n in 0..mesh.n_tets() as u32 {
        sizes[d.find(n) as usize] += 1;
    }
    let mut s: Vec<usize> = sizes.into_iter().filter(|&c| c > 0).collect();
    if s.len() < 2 {
        return None;
    }
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

    /// The centre node of a 2×2×2-cell box moved to 1e-4 of its star's top face (still
    /// inside the convex star: nothing folds) makes slivers of the tets on that face; the
    /// warning names one of them and the ratio. The same box with the node moved a little
    /// has none.
    #[test]
    fn a_sliver_is_named() {
        let m = box_mesh([2, 2, 2], [1.0, 1.0, 1.0]);
        let c = m.nodes.iter().position(|p| *p == [0.5, 0.5, 0.5]).unwrap();
        let mut f = m.clone();
        f.nodes[c] = [0.5, 0.5, 1.0 - 1e-4];
        let t = Topology::build(&f).unwrap();
        let w = check(&f, &t).unwrap();
        assert!(w.len() == 1 && w[0].contains("sliver"), "{w:?}");
        let worst: usize = w[0]["tet ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(f.tets[worst].contains(&(c as u32)), "{}", w[0]);
        let mut g = m.clone();
        g.nodes[c] = [0.5, 0.5, 0.6];
        let t = Topology::build(&g).unwrap();
        assert!(check(&g, &t).unwrap().is_empty());
    }
}
