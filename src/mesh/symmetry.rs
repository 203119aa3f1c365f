//! Cutting a mesh at a mirror plane `x_a = c` (a symmetry plane of the resonator), so that
//! one half is stepped with an electric or magnetic wall on the plane.
//!
//! A resonator mirror-symmetric about a plane has modes of two classes: those whose
//! tangential E vanishes on the plane (the plane can be a PEC wall) and those whose
//! tangential H vanishes on it (a PMC wall, the scheme's natural condition). One half with
//! the chosen wall has exactly the modes of that class, at half the cost. On a mesh that is
//! itself mirror-symmetric, the half's discrete operators are those of the whole mesh on
//! the class's subspace, so the whole mesh's response to a source at `p` is the mean of
//! the two halves' responses to the same source (`tests/solver/symmetry.rs` checks this to
//! round-off).
//!
//! The mesh must have faces on the plane: no tetrahedron may have vertices on both sides
//! of it (a tet that crosses the plane cannot be cut without remeshing; mesh with the plane
//! as a surface, e.g. a Gmsh `fragment` with it). A mesh with tets on both sides keeps the
//! side `x_a > c`; a mesh on one side only (a half already cut, in Gmsh or here) keeps
//! that side. The faces on the plane become a surface group, to which the caller gives the
//! wall's condition. Nodes within `1e-9` of the mesh's extent of the plane count as on it
//! and are moved onto it exactly.

use super::{Mesh, PhysicalName};
use crate::error::{Error, Result};

/// A plane `x[axis] = at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    /// 0, 1 or 2 for x, y, z.
    pub axis: usize,
    /// The coordinate of the plane (m).
    pub at: f64,
}

impl Plane {
    /// `x = 0.25` and the like.
    pub fn describe(&self) -> String {
        format!("{} = {}", ["x", "y", "z"][self.axis], self.at)
    }
}

/// What a cut kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cut {
    pub plane: Plane,
    /// Tets kept and dropped.
    pub kept: usize,
    pub dropped: usize,
    /// Faces of the kept tets that lie on the plane (the new surface group).
    pub faces: usize,
    /// The side kept: +1 (`x_a > at`) or −1.
    pub side: i8,
}

/// The local faces of a tet (vertex positions).
const FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]];

/// The part of `mesh` on one side of `plane` (module doc), its faces on the plane added as
/// the surface group `group` (a new tag).
pub fn cut(mesh: &Mesh, plane: Plane, group: &str) -> Result<(Mesh, Cut)> {
    let a = plane.axis;
    let err = |msg: String| Error::MeshInvalid {
        path: mesh.source.clone(),
        msg: format!("symmetry plane {}: {msg}", plane.describe()),
    };
    if mesh
        .physical_names
        .iter()
        .any(|p| p.dim == 2 && p.name == group)
    {
        return Err(err(format!(
            "the mesh already has a surface group named {group:?}, the name the plane's faces get; rename that group"
        )));
    }
    let (lo, hi) = mesh.bbox();
    let extent = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
    let tol = 1e-9 * extent;
    // -1, 0 (on the plane), +1 per node
    let side: Vec<i8> = mesh
        .nodes
        .iter()
        .map(|p| {
            let s = p[a] - plane.at;
            if s > tol {
                1
            } else if s < -tol {
                -1
            } else {
                0
            }
        })
        .collect();
    let mut counts = [0usize; 2]; // tets on the negative, positive side
    let mut tet_side = Vec::with_capacity(mesh.n_tets());
    for (n, t) in mesh.tets.iter().enumerate() {
        let (neg, pos) = t.iter().fold((false, false), |(ng, ps), &v| {
            (ng || side[v as usize] < 0, ps || side[v as usize] > 0)
        });
        if neg && pos {
            let [c0, c1] = t.iter().fold([f64::MAX, f64::MIN], |[l, h], &v| {
                let x = mesh.nodes[v as usize][a];
                [l.min(x), h.max(x)]
            });
            return Err(err(format!(
                "tetrahedron {} crosses the plane (its {} runs from {c0} to {c1}): a symmetry plane must be a surface of the mesh (mesh the plane as a surface, e.g. Gmsh's fragment with it, or mesh one half)",
                mesh.tet_ids[n],
                ["x", "y", "z"][a]
            )));
        }
        let s: i8 = if pos { 1 } else { -1 };
        counts[(s > 0) as usize] += 1;
        tet_side.push(s);
    }
    let keep: i8 = if counts[1] > 0 { 1 } else { -1 };
    // the kept tets, nodes renumbered in order of first use (the mesh convention)
    let mut map = vec![u32::MAX; mesh.nodes.len()];
    let mut nodes = Vec::new();
    let mut old_of = Vec::with_capacity(counts[(keep > 0) as usize]);
    let mut tets = Vec::with_capacity(old_of.capacity());
    let mut plane_faces = Vec::new();
    for (n, t) in mesh.tets.iter().enumerate() {
        if tet_side[n] != keep {
            continue;
        }
        let mut tv = [0u32; 4];
        for (k, &v) in t.iter().enumerate() {
            if map[v as usize] == u32::MAX {
                map[v as usize] = nodes.len() as u32;
                let mut p = mesh.nodes[v as usize];
                if side[v as usize] == 0 {
                    p[a] = plane.at;
                }
                nodes.push(p);
            }
            tv[k] = map[v as usize];
        }
        for f in FACES {
            if f.iter().all(|&k| side[t[k] as usize] == 0) {
                let mut tri = [tv[f[0]], tv[f[1]], tv[f[2]]];
                tri.sort_unstable();
                plane_faces.push(tri);
            }
        }
        old_of.push(n as u32);
        tets.push(tv);
    }
    if plane_faces.is_empty() {
        let (l, h) = (lo[a], hi[a]);
        return Err(err(format!(
            "no face of the mesh lies on the plane (the mesh spans {} from {l} to {h}): a symmetry plane must be a surface of the mesh; give its position with the origin",
            ["x", "y", "z"][a]
        )));
    }
    let mut new_index = vec![u32::MAX; mesh.n_tets()];
    for (k, &n) in old_of.iter().enumerate() {
        new_index[n as usize] = k as u32;
    }
    let tag = mesh
        .surfaces
        .iter()
        .map(|s| s.1)
        .chain(
            mesh.physical_names
                .iter()
                .filter(|p| p.dim == 2)
                .map(|p| p.tag),
        )
        .fold(0, i32::max)
        + 1;
    let mut surfaces: Vec<([u32; 3], i32)> = mesh
        .surfaces
        .iter()
        .filter_map(|(tri, t)| {
            let mut k = [0u32; 3];
            for (s, &v) in tri.iter().enumerate() {
                k[s] = *map.get(v as usize).filter(|&&x| x != u32::MAX)?;
            }
            k.sort_unstable();
            Some((k, *t))
        })
        .chain(plane_faces.iter().map(|&f| (f, tag)))
        .collect();
    surfaces.sort_unstable();
    surfaces.dedup();
    let mut physical_names = mesh.physical_names.clone();
    physical_names.push(PhysicalName {
        dim: 2,
        tag,
        name: group.to_string(),
    });
    let out = Mesh {
        source: mesh.source.clone(),
        nodes,
        tets,
        tet_phys: old_of.iter().map(|&n| mesh.tet_phys[n as usize]).collect(),
        tet_ids: old_of.iter().map(|&n| mesh.tet_ids[n as usize]).collect(),
        tet_groups: mesh
            .tet_groups
            .iter()
            .filter(|(n, _)| new_index[*n as usize] != u32::MAX)
            .map(|&(n, t)| (new_index[n as usize], t))
            .collect(),
        physical_names,
        surfaces,
        reoriented: mesh.reoriented,
        dropped_triangles: mesh.dropped_triangles.clone(),
        ignored: mesh.ignored.clone(),
    };
    let cut = Cut {
        plane,
        kept: out.n_tets(),
        dropped: mesh.n_tets() - out.n_tets(),
        faces: plane_faces.len(),
        side: keep,
    };
    Ok((out, cut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;
    use crate::util::Rng;

    /// A box of seeded random cell counts and sides, shifted so that a random grid plane
    /// lies at x_a = 0.
    fn shifted_box(rng: &mut Rng, a: usize) -> (Mesh, usize, usize) {
        let n = [
            2 + (rng.uniform() * 4.0) as usize,
            2 + (rng.uniform() * 4.0) as usize,
            2 + (rng.uniform() * 4.0) as usize,
        ];
        let l = [
            0.5 + rng.uniform(),
            0.5 + rng.uniform(),
            0.5 + rng.uniform(),
        ];
        let mut m = box_mesh(n, l);
        let k = 1 + (rng.uniform() * (n[a] - 1) as f64) as usize;
        let shift = l[a] * k as f64 / n[a] as f64;
        for p in &mut m.nodes {
            p[a] -= shift;
        }
        (m, k, n[a])
    }

    #[test]
    fn a_cut_keeps_the_tets_on_the_positive_side_and_names_the_plane_faces() {
        let mut rng = Rng::new(4801);
        for a in 0..3 {
            let (m, k, n) = shifted_box(&mut rng, a);
            let plane = Plane { axis: a, at: 0.0 };
            let (h, c) = cut(&m, plane, "symmetry").unwrap();
            let vol = |m: &Mesh| (0..m.n_tets()).map(|t| m.tet_volume(t)).sum::<f64>();
            let share = (n - k) as f64 / n as f64;
            assert!((vol(&h) / vol(&m) - share).abs() < 1e-12, "axis {a}");
            assert_eq!(c.kept + c.dropped, m.n_tets());
            assert_eq!(c.side, 1);
            assert!(h.nodes.iter().all(|p| p[a] >= 0.0));
            // two triangles per grid cell of the plane, each in the new group
            let tag = h
                .physical_names
                .iter()
                .find(|p| p.name == "symmetry")
                .unwrap()
                .tag;
            let on: Vec<_> = h.surfaces.iter().filter(|s| s.1 == tag).collect();
            assert_eq!(on.len(), c.faces);
            assert!(c.faces >= 2, "{c:?}");
            assert!(
                on.iter()
                    .all(|(tri, _)| tri.iter().all(|&v| h.nodes[v as usize][a] == 0.0))
            );
            // the kept mesh's topology is valid and the plane faces are on its boundary
            let topo = crate::mesh::Topology::build(&h).unwrap();
            let outer: std::collections::HashSet<[u32; 3]> = topo
                .boundary_faces
                .iter()
                .map(|&(f, _)| topo.faces[f as usize])
                .collect();
            assert!(on.iter().all(|(tri, _)| outer.contains(tri)));
            // a half already cut is kept whole, on whichever side it lies
            for p in [Plane { axis: a, at: 0.0 }] {
                let mut neg = h.clone();
                for q in &mut neg.nodes {
                    q[a] = -q[a];
                }
                let (again, c2) = cut(&neg, p, "other").unwrap();
                assert_eq!((c2.kept, c2.dropped, c2.side), (h.n_tets(), 0, -1));
                assert_eq!(c2.faces, c.faces);
                assert_eq!(again.n_tets(), h.n_tets());
            }
        }
    }

    #[test]
    fn a_tet_across_the_plane_and_a_plane_off_the_mesh_are_refused() {
        let m = box_mesh([3, 2, 2], [1.0, 1.0, 1.0]);
        // x = 0.5 runs through the middle cells
        let e = cut(&m, Plane { axis: 0, at: 0.5 }, "s")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("crosses the plane") && e.contains("x = 0.5"),
            "{e}"
        );
        let e = cut(&m, Plane { axis: 1, at: -2.0 }, "s")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no face of the mesh lies on the plane"), "{e}");
        let mut named = m.clone();
        named.physical_names.push(PhysicalName {
            dim: 2,
            tag: 77,
            name: "s".into(),
        });
        let e = cut(&named, Plane { axis: 0, at: 0.0 }, "s")
            .unwrap_err()
            .to_string();
        assert!(e.contains("already has a surface group"), "{e}");
    }
}
