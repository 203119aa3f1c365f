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
