//! An open, lossy, dispersive problem as files, for runs through the library's plan and
//! the command line (`tests/partition/open_lossy_cli.rs`, `tests/mpi/mpi_cli.rs`): a
//! jittered box (seeded) written as a Gmsh MSH 2.2 file with named volume groups (a Lorentz
//! block, a conducting Drude block, a Debye block, a conducting block, a graded absorbing
//! layer beyond x = 0.8 m, vacuum) and the box's wall groups, and a `--config` file with
//! absorbing walls at x = 0 and y = 0 and a magnetic wall at z = 0.6 m.
#![cfg(feature = "partition")]
#![allow(dead_code)]

use crate::common::jittered_box;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Volume groups (tag, name) of the written mesh.
const GROUPS: [&str; 6] = ["vacuum", "lorentz", "drude", "debye", "lossy", "layer"];

/// The group (index into [`GROUPS`]) of a tet with centroid `c`.
fn group(c: [f64; 3]) -> usize {
    let inside = |lo: [f64; 3], hi: [f64; 3]| (0..3).all(|k| c[k] >= lo[k] && c[k] < hi[k]);
    if c[0] > 0.8 {
        5
    } else if inside([0.15, 0.1, 0.1], [0.45, 0.4, 0.35]) {
        1
    } else if inside([0.45, 0.4, 0.2], [0.7, 0.75, 0.5]) {
        2
    } else if inside([0.2, 0.45, 0.3], [0.45, 0.75, 0.6]) {
        3
    } else if inside([0.5, 0.05, 0.05], [0.75, 0.35, 0.3]) {
        4
    } else {
        0
    }
}

/// Writes the mesh (`dir/open.msh`) and the config (`dir/open.toml`, `steps` steps) and
/// returns the config's path.
pub fn write_open_problem(dir: &Path, seed: u64, steps: usize) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let n = [8, 6, 5];
    // a jitter of 0.3 cell can fold a tet over its neighbour (the mesh check refuses it)
    let m = jittered_box(n, seed, 0.2);
    let b = dgatd::mesh::box_mesh(n, [1.0, 0.8, 0.6]);
    let mut s = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n");
    writeln!(s, "{}", GROUPS.len() + 6).unwrap();
    for (k, g) in GROUPS.iter().enumerate() {
        writeln!(s, "3 {} \"{g}\"", k + 1).unwrap();
    }
    for (k, w) in dgatd::mesh::BOX_WALLS.iter().enumerate() {
        writeln!(s, "2 {} \"{w}\"", k + 1).unwrap();
    }
    writeln!(s, "$EndPhysicalNames\n$Nodes\n{}", m.nodes.len()).unwrap();
    for (i, p) in m.nodes.iter().enumerate() {
        writeln!(s, "{} {:e} {:e} {:e}", i + 1, p[0], p[1], p[2]).unwrap();
    }
    writeln!(s, "$EndNodes\n$Elements\n{}", b.surfaces.len() + m.n_tets()).unwrap();
    let mut id = 0;
    for (t, tag) in &b.surfaces {
        id += 1;
        writeln!(
            s,
            "{id} 2 2 {tag} {tag} {} {} {}",
            t[0] + 1,
            t[1] + 1,
            t[2] + 1
        )
        .unwrap();
    }
    for (k, t) in m.tets.iter().enumerate() {
        let x = m.tet_x(k);
        let c: [f64; 3] = std::array::from_fn(|d| x.iter().map(|p| p[d]).sum::<f64>() / 4.0);
        let g = group(c) + 1;
        id += 1;
        writeln!(
            s,
            "{id} 4 2 {g} {g} {} {} {} {}",
            t[0] + 1,
            t[1] + 1,
            t[2] + 1,
            t[3] + 1
        )
        .unwrap();
    }
    s.push_str("$EndElements\n");
    let mesh = dir.join("open.msh");
    std::fs::write(&mesh, s).unwrap();
    let config = format!(
        r#"mesh = "{}"
steps = {steps}
cavity = "none"
fmax = 8e8
f_peak = 3e8
backend = "cpu"
energy_checks = 10
source = [0.3, 0.2, 0.13]
source_dir = [0.3, 0.2, 1.0]
probe = [[0.6, 0.44, 0.21], [0.85, 0.24, 0.3], [0.3, 0.48, 0.27], [0.62, 0.16, 0.09]]

[materials.vacuum]
eps_r = 1.3

[materials.lorentz]
eps_r = 2.0
lorentz = [{{ delta_eps = 1.5, f_0 = 2.5e8, delta = 3e7 }}]

[materials.drude]
sigma = 0.002
drude = [{{ f_p = 3e8, gamma = 1e8 }}]

[materials.debye]
eps_r = 1.5
debye = [{{ delta_eps = 2.0, tau = 1e-9 }}]
lorentz = [{{ delta_eps = 0.5, f_0 = 4e8, delta = 1e7 }}]

[materials.lossy]
eps_r = 3.0
mu_r = 1.2
sigma = 0.004

[materials.layer]
eps_r = 1.3
absorbing = true
layer_reflection = 1e-4

[boundaries.xmin]
kind = "abc"

[boundaries.ymin]
kind = "abc"

[boundaries.zmax]
kind = "pmc"
"#,
        mesh.display()
    );
    let path = dir.join("open.toml");
    std::fs::write(&path, config).unwrap();
    path
}
