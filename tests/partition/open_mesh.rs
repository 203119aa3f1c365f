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
    let mesh = write_msh(&dir.join("open.msh"), &m, &b, &GROUPS, group);
    write_config(dir, "open.toml", &mesh, steps, OPEN_CONFIG)
}

/// Writes `m` (tets grouped by `group` of their centroid into `groups`) with the wall
/// triangles of the box mesh `b` of the same cells as a Gmsh MSH 2.2 file at `path`.
pub fn write_msh(
    path: &Path,
    m: &dgatd::mesh::Mesh,
    b: &dgatd::mesh::Mesh,
    groups: &[&str],
    group: impl Fn([f64; 3]) -> usize,
) -> PathBuf {
    let mut s = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n");
    writeln!(s, "{}", groups.len() + 6).unwrap();
    for (k, g) in groups.iter().enumerate() {
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
    std::fs::write(path, s).unwrap();
    path.to_path_buf()
}

/// Writes `dir/name`: `mesh = ` the mesh, `steps = steps`, then `rest`.
pub fn write_config(dir: &Path, name: &str, mesh: &Path, steps: usize, rest: &str) -> PathBuf {
    let config = format!("mesh = \"{}\"\nsteps = {steps}\n{rest}", mesh.display());
    let path = dir.join(name);
    std::fs::write(&path, config).unwrap();
    path
}

/// The open problem's keys after `mesh` and `steps`.
const OPEN_CONFIG: &str = r#"cavity = "none"
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
lorentz = [{ delta_eps = 1.5, f_0 = 2.5e8, delta = 3e7 }]

[materials.drude]
sigma = 0.002
drude = [{ f_p = 3e8, gamma = 1e8 }]

[materials.debye]
eps_r = 1.5
debye = [{ delta_eps = 2.0, tau = 1e-9 }]
lorentz = [{ delta_eps = 0.5, f_0 = 4e8, delta = 1e7 }]

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
"#;

/// Volume groups of the PML problem ([`write_pml_problem`]).
const PML_GROUPS: [&str; 4] = ["core", "lorentz", "lossy", "pml"];

/// The inner box of the PML problem's layer: two cells of 0.1 m inside every wall of the
/// box `[0,1]x[0,0.8]x[0,0.8]`.
pub const PML_INNER: ([f64; 3], [f64; 3]) = ([0.2, 0.2, 0.2], [0.8, 0.6, 0.6]);

/// The group (index into [`PML_GROUPS`]) of a tet of the PML problem with centroid `c`.
pub fn pml_group(c: [f64; 3]) -> usize {
    let inside = |lo: [f64; 3], hi: [f64; 3]| (0..3).all(|k| c[k] >= lo[k] && c[k] < hi[k]);
    if !inside(PML_INNER.0, PML_INNER.1) {
        3
    } else if inside([0.25, 0.25, 0.25], [0.45, 0.45, 0.5]) {
        1
    } else if inside([0.55, 0.3, 0.3], [0.75, 0.55, 0.55]) {
        2
    } else {
        0
    }
}

/// The box `[0,1]x[0,0.8]x[0,0.8]` of 10x8x8 cells, its nodes strictly inside the PML's
/// inner box jittered by 0.2 cell (seed `seed`; the layer's inner surface stays a box).
pub fn pml_box(seed: u64) -> dgatd::mesh::Mesh {
    let mut m = dgatd::mesh::box_mesh([10, 8, 8], [1.0, 0.8, 0.8]);
    let mut r = dgatd::internal::Rng::new(seed);
    let (lo, hi) = PML_INNER;
    for p in m.nodes.iter_mut() {
        if (0..3).all(|k| p[k] > lo[k] + 1e-9 && p[k] < hi[k] - 1e-9) {
            for x in p.iter_mut() {
                *x += 0.02 * r.sym();
            }
        }
    }
    m
}

/// Writes the PML problem (`dir/pml.msh`, `dir/pml.toml`, `steps` steps): [`pml_box`]
/// with a Lorentz block and a conducting block in a core of ε 1.3, a box PML two cells
/// thick on every side (matched to the core) and PEC walls behind it; returns the config's
/// path.
pub fn write_pml_problem(dir: &Path, seed: u64, steps: usize) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let m = pml_box(seed);
    let b = dgatd::mesh::box_mesh([10, 8, 8], [1.0, 0.8, 0.8]);
    let mesh = write_msh(&dir.join("pml.msh"), &m, &b, &PML_GROUPS, pml_group);
    write_config(dir, "pml.toml", &mesh, steps, PML_CONFIG)
}

/// The PML problem's keys after `mesh` and `steps`.
const PML_CONFIG: &str = r#"cavity = "none"
fmax = 8e8
f_peak = 3e8
backend = "cpu"
energy_checks = 10
source = [0.43, 0.37, 0.41]
source_dir = [0.3, 0.2, 1.0]
probe = [[0.62, 0.44, 0.33], [0.31, 0.27, 0.52], [0.9, 0.35, 0.45]]

[materials.core]
eps_r = 1.3

[materials.lorentz]
eps_r = 2.0
lorentz = [{ delta_eps = 1.5, f_0 = 2.5e8, delta = 3e7 }]

[materials.lossy]
eps_r = 1.3
sigma = 0.004

[materials.pml]
eps_r = 1.3
pml = true
pml_reflection = 1e-5
"#;
