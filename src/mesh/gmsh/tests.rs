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
    // Cheap in-module smoke test; tests/mesh/mesh_errors.rs and tests/fuzz_mesh have the
    // thorough cases.
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

/// Two tets sharing a face in MSH 4.1: volume entity 1 (the first tet) is in the physical
/// groups 2 "glass" and 7 "solid", entity 2 in group 2 only; the surface entity 1 (a
/// wall triangle of the first tet) in groups 11 "xmin" and 12 "wall".
fn m41_groups(entities: bool, tet_block_entity: i32) -> String {
    let ent = if entities {
        "$Entities\n0 0 1 2\n1 0 0 0 1 1 0 2 11 12 0\n1 0 0 0 1 1 1 2 2 7 0\n2 0 0 0 1 1 1 1 2 0\n$EndEntities\n"
    } else {
        ""
    };
    format!(
        "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n4\n3 2 \"glass\"\n3 7 \"solid\"\n2 11 \"xmin\"\n2 12 \"wall\"\n$EndPhysicalNames\n{ent}$Nodes\n1 5 1 5\n3 1 0 5\n1\n2\n3\n4\n5\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n$EndNodes\n$Elements\n3 3 1 3\n2 1 2 1\n1 1 2 3\n3 1 4 1\n2 1 2 3 4\n3 {tet_block_entity} 4 1\n3 2 3 4 5\n$EndElements\n"
    )
}

/// An MSH 4.1 entity in several physical groups keeps all of them (round four S5,
/// mesh-044: only the first was kept, so "solid" held nothing), for volumes and surfaces.
#[test]
fn an_entity_in_several_physical_groups_keeps_all() {
    let m = parse(m41_groups(true, 2).as_bytes(), "m.msh").unwrap();
    assert_eq!(m.tet_phys, vec![2, 2]);
    assert_eq!(m.tet_groups, vec![(0, 7)]);
    assert_eq!(m.volume_mask(7), vec![true, false]);
    assert_eq!(m.volume_mask(2), vec![true, true]);
    assert!(m.in_volume_group(0, 7) && !m.in_volume_group(1, 7));
    assert_eq!(m.volume_group("solid"), Some(7));
    assert_eq!(m.volume_group("7"), Some(7));
    assert_eq!(m.volume_tags(), vec![2, 7]);
    let tags: Vec<i32> = m.surfaces.iter().map(|s| s.1).collect();
    assert_eq!(tags, vec![11, 12], "{:?}", m.surfaces);
    assert_eq!(m.surface_group("wall"), Some(12));
    // renumbering carries the further groups with their tets
    let r = m.renumbered(&[1, 0], &[0, 1, 2, 3, 4]).unwrap();
    assert_eq!(r.tet_groups, vec![(1, 7)]);
}

/// A block naming an entity that `$Entities` lacks, and a 4.1 file with physical groups
/// but no `$Entities`, are refused naming the entity or the section (mesh-046, mesh-048:
/// their elements lost their groups without a word).
#[test]
fn unknown_entities_and_a_missing_entities_section_are_refused() {
    let e = parse(m41_groups(true, 9).as_bytes(), "m.msh")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("entity 9") && e.contains("$Entities") && e.contains("line 37"),
        "{e}"
    );
    let e = parse(m41_groups(false, 2).as_bytes(), "m.msh")
        .unwrap_err()
        .to_string();
    assert!(e.contains("without an $Entities section"), "{e}");
}

/// Malformed fields are refused, naming the line (mesh-008/009, 032/033, 070, 071): a
/// file-type field other than 0 and 1, a field more on node lines, an element tag below 1
/// and node tag 0.
#[test]
fn malformed_fields_are_refused_naming_the_line() {
    let good = msh22(NODES, "2\n1 4 2 7 1 1 3 2 4\n2 4 2 7 1 2 3 4 5\n");
    assert!(parse(good.as_bytes(), "m.msh").is_ok());
    let err = |s: String| parse(s.as_bytes(), "m.msh").unwrap_err().to_string();
    for t in ["2", "-1"] {
        let e = err(good.replace("2.2 0 8", &format!("2.2 {t} 8")));
        assert!(
            e.contains("bad file type") && e.contains(t) && e.contains("line 2"),
            "{e}"
        );
    }
    let e = err(good.replace("\n3 0 1 0\n", "\n3 0 1 0 7.5\n"));
    assert!(
        e.contains("line 8") && e.contains("5 fields where a node has 4"),
        "{e}"
    );
    let e = err(good.replace("\n2 4 2 7 1 2 3 4 5\n", "\n-5 4 2 7 1 2 3 4 5\n"));
    assert!(e.contains("element tag -5") && e.contains("line 15"), "{e}");
    let e = err(good.replace("\n2 4 2 7 1 2 3 4 5\n", "\n0 4 2 7 1 2 3 4 5\n"));
    assert!(e.contains("element tag 0"), "{e}");
    let e = err(good.replace("\n1 0 0 0\n", "\n0 0 0 0\n"));
    assert!(e.contains("node tag 0") && e.contains("line 6"), "{e}");
    // MSH 4.1: a fourth number on a coordinate line, a second on a tag line, tag 0
    let m41 = m41_groups(true, 2);
    assert!(parse(m41.as_bytes(), "m.msh").is_ok());
    let e = err(m41.replace("\n1 1 1\n", "\n1 1 1 9\n"));
    assert!(
        e.contains("4 fields where a node coordinate line has 3"),
        "{e}"
    );
    let e = err(m41.replace("3 1 0 5\n1\n", "3 1 0 5\n1 8\n"));
    assert!(e.contains("where a node tag line has 1"), "{e}");
    let e = err(m41
        .replace("3 1 0 5\n1\n", "3 1 0 5\n0\n")
        .replace("\n1 1 2 3\n", "\n1 0 2 3\n"));
    assert!(e.contains("node tag 0"), "{e}");
    let e = err(m41.replace("\n3 2 3 4 5\n", "\n-5 2 3 4 5\n"));
    assert!(e.contains("element tag -5"), "{e}");
}

/// Surface-group triangles that bound no tet are named in a warning (mesh-052: dropped
/// without a word; mesh-050: a diagonal counted as an interior face).
#[test]
fn stray_triangles_are_warned_of() {
    use crate::mesh::{Topology, check};
    let nodes = "8\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n6 5 5 5\n7 6 5 5\n8 5 6 5\n";
    let els = "4\n1 4 2 7 1 1 3 2 4\n2 4 2 7 1 2 3 4 5\n3 2 2 11 1 6 7 8\n4 2 2 11 1 1 2 3\n";
    let m = parse(msh22(nodes, els).as_bytes(), "m.msh").unwrap();
    assert_eq!(m.dropped_triangles, vec![3]);
    assert_eq!(m.surfaces.len(), 1);
    let t = Topology::build(&m).unwrap();
    let w = check(&m, &t).unwrap().join("\n");
    assert!(
        w.contains("1 triangle of surface groups (element 3)") && w.contains("no tetrahedron uses"),
        "{w}"
    );
    // nodes 1, 4, 5: in the mesh, but no face of either tet
    let els = "3\n1 4 2 7 1 1 3 2 4\n2 4 2 7 1 2 3 4 5\n3 2 2 11 1 1 4 5\n";
    let m = parse(msh22(NODES, els).as_bytes(), "m.msh").unwrap();
    let t = Topology::build(&m).unwrap();
    let w = check(&m, &t).unwrap().join("\n");
    assert!(
        w.contains("(tag 11) holds 1 triangle whose nodes are no face of any tetrahedron"),
        "{w}"
    );
    let g = crate::problem::group_summary(&m, &t).join("\n");
    assert!(
        g.contains("1 not faces of the mesh") && !g.contains("interior"),
        "{g}"
    );
}

/// A material on the second group of an entity acts on its tets (mesh-run-045: "solid"
/// held no tetrahedra); two materials on one tet through two groups are refused, naming
/// the tet and both groups.
#[test]
fn materials_act_through_every_group_of_an_entity() {
    use crate::mesh::Topology;
    use crate::problem::{Material, Media, material_coverage};
    let m = parse(m41_groups(true, 2).as_bytes(), "m.msh").unwrap();
    let t = Topology::build(&m).unwrap();
    let mat = |eps_r: f64| Material {
        eps_r,
        ..Material::default()
    };
    let one: std::collections::BTreeMap<String, Material> =
        [("solid".to_string(), mat(4.0))].into();
    assert_eq!(
        material_coverage(&m, &t, &one).unwrap(),
        vec![("solid".to_string(), 1)]
    );
    let media = Media::resolve(&m, &one).unwrap();
    assert_eq!(media.eps, vec![4.0, 1.0]);
    let two: std::collections::BTreeMap<String, Material> = [
        ("solid".to_string(), mat(4.0)),
        ("glass".to_string(), mat(2.0)),
    ]
    .into();
    let e = material_coverage(&m, &t, &two).unwrap_err().to_string();
    assert!(
        e.contains("tetrahedron 2") && e.contains("\"glass\"") && e.contains("\"solid\""),
        "{e}"
    );
}
