//! Reliability, round three (issue 47), the library's checks: every material and boundary
//! key covers elements or is refused naming it, and meshes of any scale are judged by
//! their shape, not by the size of their numbers.

use dgatd::mesh::box_mesh;
use dgatd::mesh::{Mesh, PhysicalName, Topology};
use dgatd::problem::{Boundary, BoundaryKind, Material};
use dgatd::problem::{group_summary, material_coverage as materials, wall_coverage as walls};
use std::collections::BTreeMap;

fn boundary(key: &str, kind: BoundaryKind) -> BTreeMap<String, Boundary> {
    BTreeMap::from([(key.to_string(), Boundary::of(kind))])
}

fn material(key: &str, m: Material) -> BTreeMap<String, Material> {
    BTreeMap::from([(key.to_string(), m)])
}

fn name(m: &mut Mesh, dim: i32, tag: i32, name: &str) {
    m.physical_names.push(PhysicalName {
        dim,
        tag,
        name: name.into(),
    });
}

/// The 2x2x2 box with a named volume group that holds no tets, a name two surface groups
/// share, a surface group `mid` of interior faces only, a group `half` with some wall
/// faces and some interior ones, and a group `wall2` overlapping `xmin`.
fn groups_box() -> (Mesh, Topology) {
    let mut m = box_mesh([2, 2, 2], [1.0, 1.0, 1.0]);
    let t = Topology::build(&m).unwrap();
    name(&mut m, 3, 9, "ghost");
    name(&mut m, 2, 1, "twin");
    name(&mut m, 2, 2, "twin");
    // interior faces: faces with two tets
    let interior: Vec<[u32; 3]> = t
        .faces
        .iter()
        .zip(&t.face_tets)
        .filter(|(_, ft)| ft[1] != u32::MAX)
        .map(|(f, _)| *f)
        .take(5)
        .collect();
    for f in &interior {
        m.surfaces.push((*f, 10));
    }
    name(&mut m, 2, 10, "mid");
    // `half`: two of xmax's (tag 2) wall faces and one interior face
    let xmax: Vec<[u32; 3]> = m
        .surfaces
        .iter()
        .filter(|s| s.1 == 2)
        .map(|s| s.0)
        .take(2)
        .collect();
    for f in xmax {
        m.surfaces.push((f, 11));
    }
    m.surfaces.push((interior[0], 11));
    name(&mut m, 2, 11, "half");
    // `wall2`: every xmin (tag 1) face again
    let xmin: Vec<[u32; 3]> = m
        .surfaces
        .iter()
        .filter(|s| s.1 == 1)
        .map(|s| s.0)
        .collect();
    for f in xmin {
        m.surfaces.push((f, 12));
    }
    name(&mut m, 2, 12, "wall2");
    m.surfaces.sort_unstable();
    let t = Topology::build(&m).unwrap();
    (m, t)
}

#[test]
fn keys_that_would_set_nothing_are_refused_naming_them() {
    let (m, t) = groups_box();
    // a material on a named volume group without tets
    let e = materials(&m, &t, &material("ghost", Material::new(2.0, 1.0)))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("material = ghost") && e.contains("holds no tetrahedra"),
        "{e}"
    );
    // the material of every tet is counted
    let n = materials(&m, &t, &material("vacuum", Material::new(2.0, 1.0))).unwrap();
    assert_eq!(n, vec![("vacuum".to_string(), m.n_tets())]);
    // a boundary on interior faces only
    let e = walls(&m, &t, &boundary("mid", BoundaryKind::Pmc))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("boundary = mid")
            && e.contains("none of the 5 triangles")
            && e.contains("5 interior faces"),
        "{e}"
    );
    // a name two groups share
    let e = walls(&m, &t, &boundary("twin", BoundaryKind::Pmc))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("twin") && e.contains("tags 1, 2") && e.contains("by its tag"),
        "{e}"
    );
    // a named surface group with no faces at all
    let mut m2 = m.clone();
    name(&mut m2, 2, 40, "empty");
    let e = walls(&m2, &t, &boundary("empty", BoundaryKind::Pmc))
        .unwrap_err()
        .to_string();
    assert!(e.contains("has no faces"), "{e}");
}

#[test]
fn wall_faces_follow_group_membership_and_conflicts_are_refused() {
    let (m, t) = groups_box();
    // some interior faces: accepted with a warning, the condition on the two wall faces
    let (w, cov) = walls(&m, &t, &boundary("half", BoundaryKind::Pmc)).unwrap();
    assert_eq!(cov.boundaries, vec![("half".to_string(), 2)]);
    assert_eq!(
        w.kind.iter().filter(|&&k| k == BoundaryKind::Pmc).count(),
        2
    );
    assert!(
        cov.warnings.len() == 1
            && cov.warnings[0].contains("1 of the 3 triangles")
            && cov.warnings[0].contains("1 interior face"),
        "{:?}",
        cov.warnings
    );
    // a face in two groups gets the condition named for either (before: only for the one
    // group the face happened to be filed under)
    let xmin_faces = m.surfaces.iter().filter(|s| s.1 == 1).count();
    let (w, _) = walls(&m, &t, &boundary("wall2", BoundaryKind::Pmc)).unwrap();
    assert_eq!(
        w.kind.iter().filter(|&&k| k == BoundaryKind::Pmc).count(),
        xmin_faces
    );
    // the same condition on both groups: fine; different ones: refused, naming both
    let mut b = boundary("wall2", BoundaryKind::Pmc);
    b.insert("xmin".into(), Boundary::of(BoundaryKind::Pmc));
    walls(&m, &t, &b).unwrap();
    b.insert("xmin".into(), Boundary::of(BoundaryKind::Abc));
    let e = walls(&m, &t, &b).unwrap_err().to_string();
    assert!(
        e.contains("wall2") && e.contains("xmin") && e.contains("different conditions"),
        "{e}"
    );
    // mesh-info's summary says what each group holds
    let s = group_summary(&m, &t).join(", ");
    assert!(
        s.contains("3:1 \"vacuum\" (48 tets)")
            && s.contains("\"mid\" (0 wall faces, 5 interior)")
            && s.contains("3:9 \"ghost\" (no elements)"),
        "{s}"
    );
}

/// An absorbing layer inside the domain (touching no outer wall) is refused; against the
/// wall it is accepted.
#[test]
fn an_absorbing_layer_must_touch_the_outer_wall() {
    let mut m = box_mesh([4, 4, 4], [1.0, 1.0, 1.0]);
    let mut inner = 0;
    for n in 0..m.n_tets() {
        let x = m.tet_x(n);
        if x.iter().all(|p| p.iter().all(|&c| c > 0.2 && c < 0.8)) {
            m.tet_phys[n] = 5;
            inner += 1;
        }
    }
    assert!(inner > 0);
    let t = Topology::build(&m).unwrap();
    let layer = Material {
        absorbing: true,
        ..Material::new(1.0, 1.0)
    };
    let e = materials(&m, &t, &material("5", layer.clone()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("absorbing") && e.contains("touches no outer wall") && e.contains("sigma"),
        "{e}"
    );
    // the tets at x > 0.75 touch the xmax wall
    let mut m = box_mesh([4, 4, 4], [1.0, 1.0, 1.0]);
    for n in 0..m.n_tets() {
        if m.tet_x(n).iter().all(|p| p[0] >= 0.75) {
            m.tet_phys[n] = 5;
        }
    }
    let t = Topology::build(&m).unwrap();
    materials(&m, &t, &material("5", layer)).unwrap();
}

/// A valid mesh in units of 1e-80 or 1e-110 is not "folded" or "degenerate": the checks
/// judge its shape in units of its own edges (before, the orientation products underflowed
/// to 0). A run refuses it for its scale, naming the extent.
#[test]
fn a_tiny_mesh_is_not_called_folded() {
    for s in [1e-80, 1e-110, 1e70] {
        let m = box_mesh([3, 2, 2], [1.0, 1.0, 1.0]);
        // through the reader's validation, with every tet given in the other orientation
        let nodes: Vec<[f64; 3]> = m.nodes.iter().map(|p| p.map(|c| c * s)).collect();
        let raw: Vec<dgatd::mesh::RawTet> = m
            .tets
            .iter()
            .enumerate()
            .map(|(i, t)| dgatd::mesh::RawTet {
                id: i as u64 + 1,
                nodes: [t[0], t[1], t[3], t[2]],
                phys: 1,
            })
            .collect();
        let tiny = Mesh::from_raw("tiny.msh", nodes, raw, vec![], vec![]).unwrap();
        assert_eq!(tiny.reoriented, tiny.n_tets(), "scale {s}");
        let t = Topology::build(&tiny).unwrap();
        dgatd::mesh::check(&tiny, &t).unwrap_or_else(|e| panic!("scale {s}: {e}"));
        let e = dgatd::solver::check_mesh_scale(&tiny)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tiny.msh") && e.contains("the mesh spans"),
            "{e}"
        );
    }
}
