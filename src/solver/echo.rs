//! The earliest echo of an open boundary at the probes.
//!
//! An absorbing boundary (`abc` faces, or the inner surface of an absorbing layer) reflects a
//! little. Until the first reflection can be back at a probe, the record is that of the
//! resonator in an unbounded medium, whatever lies beyond; after it, the record holds the
//! boundary's echo as well, and a line broad enough to have decayed by then can mix with it
//! (`results/open/README.md`, "The layer's echo and the record length", and the test
//! `a_record_that_ends_before_the_echo_does_not_see_the_boundary`).
//!
//! Estimate: the pulse's peak `t₀`, plus the shortest way from the source point to the
//! surface and from the surface to a probe, `d_s + d_p`, at the fastest wave speed in the
//! mesh, `c / min sqrt(ε_r μ_r)`:
//!
//! `t_echo = t₀ + (d_s + d_p) min sqrt(ε_r μ_r) / c`.
//!
//! `d_s` and `d_p` are distances to the surface's nearest vertex, which exceed the distance
//! to the surface by less than its longest edge. `d_s + d_p` bounds any path source →
//! surface → probe from below (up to that edge), so no echo of the pulse's peak arrives
//! sooner. A graded layer reflects most from deeper in, so its echo grows later and weaker
//! than this estimate.

use crate::mesh::{Mesh, Topology};
use crate::problem::{Media, Problem, Walls, Waveform};
use crate::util::C0;
use crate::util::{V3, norm, sub};

/// The earliest echo of the run's absorbing surfaces at its probes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Echo {
    /// Time the echo of the pulse's peak can first be back at a probe (s).
    pub t_s: f64,
    /// `d_s + d_p` (m).
    pub path_m: f64,
    /// The fastest wave speed in the mesh (m/s).
    pub speed_m_per_s: f64,
}

/// The vertices of the absorbing surfaces: every vertex of an `abc` face, and every vertex
/// an absorbing layer's tets share with other tets. Empty for a closed problem.
pub fn absorbing_vertices(
    mesh: &Mesh,
    topo: &Topology,
    walls: &Walls,
    problem: &Problem,
) -> Vec<usize> {
    let mut on = vec![false; mesh.n_vertices()];
    for f in walls.abc_faces(topo) {
        for &v in &topo.faces[f as usize] {
            on[v as usize] = true;
        }
    }
    let tags: Vec<i32> = problem
        .materials
        .iter()
        .filter(|(_, m)| m.absorbing || m.pml)
        .filter_map(|(key, _)| mesh.volume_group(key))
        .collect();
    if !tags.is_empty() {
        // all layers together: where two layer groups meet is no inner surface
        let in_layer: Vec<bool> = (0..mesh.n_tets())
            .map(|n| tags.iter().any(|&t| mesh.in_volume_group(n, t)))
            .collect();
        for v in crate::problem::layer::inner_surface(mesh, &in_layer) {
            on[v] = true;
        }
    }
    (0..mesh.n_vertices()).filter(|&v| on[v]).collect()
}

/// The earliest echo ([module docs](self)); None without absorbing surfaces or probes.
pub fn earliest(
    mesh: &Mesh,
    surface: &[usize],
    media: &Media,
    source: V3,
    probes: &[V3],
    wave: &Waveform,
) -> Option<Echo> {
    let nearest = |p: V3| {
        surface
            .iter()
            .map(|&v| norm(sub(mesh.nodes[v], p)))
            .fold(f64::INFINITY, f64::min)
    };
    if surface.is_empty() || probes.is_empty() {
        return None;
    }
    let d_p = probes
        .iter()
        .map(|&p| nearest(p))
        .fold(f64::INFINITY, f64::min);
    let path_m = nearest(source) + d_p;
    let n_min = media
        .eps
        .iter()
        .zip(&media.mu)
        .map(|(e, m)| (e * m).sqrt())
        .fold(f64::INFINITY, f64::min);
    let n_min = if n_min.is_finite() { n_min } else { 1.0 };
    Some(Echo {
        t_s: (wave.t0 + path_m * n_min) / C0,
        path_m,
        speed_m_per_s: C0 / n_min,
    })
}

/// The note for a record of `record_s` seconds that runs past `echo` (None when it ends
/// before it). The analysis starts when the source pulse has ended (`pulse_end_s`): an echo
/// back before then reaches every analysed sample, and the note says so instead of
/// proposing a record too short to analyse.
pub fn notice(echo: &Echo, record_s: f64, pulse_end_s: f64) -> Option<String> {
    if record_s <= echo.t_s {
        return None;
    }
    let what = format!(
        "the earliest echo of the absorbing boundary, about {:.4} ns (the pulse's peak at {:.4} ns plus {:.4} m, source to boundary to the nearest probe, at {:.4e} m/s)",
        echo.t_s * 1e9,
        (echo.t_s - echo.path_m / echo.speed_m_per_s) * 1e9,
        echo.path_m,
        echo.speed_m_per_s,
    );
    Some(if echo.t_s <= pulse_end_s {
        format!(
            "{what} returns before the source pulse ends ({:.4} ns), where the analysis starts: every analysed sample holds the boundary's reflection as well as the resonator; for a broad (low-Q) line, move the boundary farther out (each {:.3} m adds 1 ns of clean record) or shorten the pulse (a higher `f_peak`)",
            pulse_end_s * 1e9,
            0.5e-9 * echo.speed_m_per_s,
        )
    } else {
        format!(
            "the record ({:.4} ns) runs past {what}; after it the record holds the boundary's reflection too, and a line that has decayed by then (low Q) is fitted best from a record that ends before it (`time = {:.4e}`)",
            record_s * 1e9,
            echo.t_s,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;
    use crate::problem::{BoundaryKind, Material};

    /// A box whose x = 0 wall is `abc`, or whose first x-cells form an absorbing layer: the
    /// echo path is the distance of source and probe from that plane (node planes are exact).
    #[test]
    fn the_echo_path_is_the_distance_to_the_absorbing_surface() {
        let mut mesh = box_mesh([10, 4, 4], [1.0, 0.4, 0.4]);
        let topo = Topology::build(&mesh).unwrap();
        let (src, probe) = ([0.63, 0.2, 0.2], [0.41, 0.1, 0.3]);
        let wave = Waveform::gaussian_derivative(3e8);
        // the wall x = 0 absorbing, the others PEC
        let mut walls = Walls::pec(&topo);
        for (i, &(f, _)) in topo.boundary_faces.iter().enumerate() {
            if topo.faces[f as usize]
                .iter()
                .all(|&v| mesh.nodes[v as usize][0] == 0.0)
            {
                walls.kind[i] = BoundaryKind::Abc;
            }
        }
        let problem = Problem::default();
        let eps = vec![4.0; mesh.n_tets()];
        let media = Media::lossless(eps, vec![1.0; mesh.n_tets()]);
        let s = absorbing_vertices(&mesh, &topo, &walls, &problem);
        assert_eq!(s.len(), 25, "the 5 x 5 nodes of the wall");
        let e = earliest(&mesh, &s, &media, src, &[probe, [0.9, 0.2, 0.2]], &wave).unwrap();
        // nearest vertices: (0, 0.2, 0.2) for the source, (0, 0.1, 0.3) for the probe
        assert!((e.path_m - (0.63 + 0.41)).abs() < 1e-12, "{e:?}");
        assert!((e.speed_m_per_s - C0 / 2.0).abs() < 1e-6);
        assert!((e.t_s - (wave.t0 + 2.0 * 1.04) / C0).abs() < 1e-20);
        // a closed box has no echo
        let none = absorbing_vertices(&mesh, &topo, &Walls::pec(&topo), &problem);
        assert!(earliest(&mesh, &none, &media, src, &[probe], &wave).is_none());
        // the first three x-cells an absorbing layer: its inner surface is the plane x = 0.3
        for (tv, tag) in mesh.tets.iter().zip(mesh.tet_phys.iter_mut()) {
            *tag = if tv.iter().all(|&v| mesh.nodes[v as usize][0] <= 0.3 + 1e-12) {
                7
            } else {
                1
            };
        }
        mesh.physical_names.push(crate::mesh::PhysicalName {
            dim: 3,
            tag: 7,
            name: "pml".into(),
        });
        let mut problem = Problem::default();
        problem.materials.insert(
            "pml".into(),
            Material {
                absorbing: true,
                ..Material::default()
            },
        );
        let s = absorbing_vertices(&mesh, &topo, &Walls::pec(&topo), &problem);
        assert_eq!(s.len(), 25);
        let e = earliest(&mesh, &s, &media, src, &[probe], &wave).unwrap();
        assert!((e.path_m - (0.33 + 0.11)).abs() < 1e-12, "{e:?}");
        // the note appears only for a record that runs past the echo, and proposes a shorter
        // record only when the echo comes after the pulse
        let pulse_end = 0.5 * e.t_s;
        assert!(notice(&e, 0.99 * e.t_s, pulse_end).is_none());
        let n = notice(&e, 1.01 * e.t_s, pulse_end).unwrap();
        assert!(n.contains("earliest echo") && n.contains("time = "), "{n}");
        let n = notice(&e, 1.01 * e.t_s, 1.001 * e.t_s).unwrap();
        assert!(
            n.contains("before the source pulse ends") && !n.contains("time = "),
            "{n}"
        );
    }
}
