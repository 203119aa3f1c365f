//! How local a mesh's numbering is, in the file's order, along a Z-order curve
//! (`Mesh::morton_ordered`) and at random (`Mesh::shuffled`): the median span of a tet's six
//! edge ids (edges are numbered by first appearance in the tet list, so this is how far
//! apart a tet's gathers of edge-indexed arrays lie), and the fraction of consecutive tets
//! that share a vertex. For the bundled meshes, the medium one refined twice (as `--refine 2`
//! without the wall projection) and a generated box.
//!
//!     cargo run --release --example mesh_locality

use dgatd::Mesh;
use dgatd::mesh::Topology;

fn metric(m: &Mesh) -> (f64, f64) {
    let t = Topology::build(m).expect("valid mesh");
    let mut spans: Vec<u32> = t
        .tet_edges
        .iter()
        .map(|e| e.iter().max().unwrap_or(&0) - e.iter().min().unwrap_or(&0))
        .collect();
    spans.sort_unstable();
    let share = m
        .tets
        .windows(2)
        .filter(|w| w[0].iter().any(|v| w[1].contains(v)))
        .count() as f64
        / (m.tets.len().max(2) - 1) as f64;
    (spans[spans.len() / 2] as f64, share)
}

fn main() {
    println!(
        "| mesh | tets | median edge-id span: file | morton | shuffled | consecutive tets sharing a vertex: file | morton | shuffled |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut meshes: Vec<(String, Mesh)> = ["coarse", "medium", "fine"]
        .iter()
        .map(|n| {
            let bytes = dgatd::mesh::bundled(n).expect("bundled mesh");
            let m = dgatd::mesh::parse_gmsh(bytes, n).expect("bundled mesh parses");
            (format!("bundled:{n}"), m)
        })
        .collect();
    let medium = meshes[1].1.clone();
    let twice = dgatd::mesh::refine(&dgatd::mesh::refine(&medium, None), None);
    meshes.push(("bundled:medium refined twice".into(), twice));
    meshes.push((
        "box 50x50x50 (generator)".into(),
        dgatd::mesh::box_mesh([50, 50, 50], [1.0; 3]),
    ));
    for (name, m) in meshes {
        let (a, b) = metric(&m);
        let (c, d) = metric(&m.morton_ordered());
        let (e, f) = metric(&m.shuffled(1));
        println!(
            "| {name} | {} | {a:.0} | {c:.0} | {e:.0} | {b:.2} | {d:.2} | {f:.2} |",
            m.n_tets()
        );
    }
}
