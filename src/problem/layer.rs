//! Absorbing layers: a volume group made a graded, matched conductor.
//!
//! In a medium with `σ*/μ = σ/ε` the impedance `sqrt((jωμ + σ*)/(jωε + σ))` equals the
//! medium's own `η = sqrt(μ/ε)` at every frequency, so a plane wave meets the layer's inner
//! surface at normal incidence without reflection and decays inside it as
//! `exp(−η ∫σ dx)`. Grading `σ(ρ) = σ_max ρ^m` from `ρ = 0` at the inner surface to `ρ = 1`
//! at the far side keeps the discrete reflection of each step in σ small; the round trip
//! through a layer of thickness `L` backed by a wall gives the target reflection
//! `R = exp(−2 η σ_max L / (m + 1))`, so `σ_max = −(m + 1) ln R / (2 η L)`. In library
//! units (`σ η₀`, `σ*/η₀`, 1/m): `σ_lib = −(m + 1) ln R sqrt(ε_r/μ_r) / (2L) ρ^m` and
//! `σ*_lib = σ_lib μ_r / ε_r`.
//!
//! The layer is not a perfectly matched layer: at oblique incidence the isotropic matched
//! conductor reflects (at grazing incidence totally); its reflection versus angle must be
//! measured, not assumed. The distance `d` of each layer tet (its centroid) from the inner
//! surface (the nodes the layer shares with the other tets) is computed from the mesh, and
//! `ρ = d / max d` over the layer: a layer of uniform thickness of any shape. The nearest-node
//! search is brute force over the inner surface's nodes (`O(layer tets × surface nodes)`,
//! in parallel).

use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::util::{V3, norm, sub};
use rayon::prelude::*;

/// The inner surface of the tets `in_layer`: the vertices they share with the other tets,
/// ascending.
pub fn inner_surface(mesh: &Mesh, in_layer: &[bool]) -> Vec<usize> {
    let mut inside = vec![false; mesh.n_vertices()];
    let mut outside = vec![false; mesh.n_vertices()];
    for (n, tv) in mesh.tets.iter().enumerate() {
        let side = if in_layer[n] {
            &mut inside
        } else {
            &mut outside
        };
        for &v in tv {
            side[v as usize] = true;
        }
    }
    (0..mesh.n_vertices())
        .filter(|&v| inside[v] && outside[v])
        .collect()
}

/// The graded conductivity of the layer tets (`in_layer`), library units `σ η₀` (1/m),
/// with `eps`, `mu` relative per tet; 0 outside the layer. `group` names the layer in
/// errors.
pub fn graded_sigma(
    mesh: &Mesh,
    in_layer: &[bool],
    eps: &[f64],
    mu: &[f64],
    order: f64,
    reflection: f64,
    group: &str,
) -> Result<Vec<f64>> {
    let surface: Vec<V3> = inner_surface(mesh, in_layer)
        .into_iter()
        .map(|v| mesh.nodes[v])
        .collect();
    if surface.is_empty() {
        return Err(Error::config(
            "absorbing",
            group,
            "the absorbing layer touches no other tet: it needs an inner surface to grade from",
        ));
    }
    let centroid = |n: usize| {
        let x = mesh.tet_x(n);
        std::array::from_fn(|c| 0.25 * (x[0][c] + x[1][c] + x[2][c] + x[3][c]))
    };
    let d: Vec<f64> = (0..mesh.n_tets())
        .into_par_iter()
        .map(|n| {
            if !in_layer[n] {
                return 0.0;
            }
            let c: V3 = centroid(n);
            surface
                .iter()
                .map(|p| norm(sub(c, *p)))
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let thickness = d.iter().copied().fold(0.0, f64::max);
    if thickness <= 0.0 {
        return Err(Error::config(
            "absorbing",
            group,
            "the absorbing layer has no thickness",
        ));
    }
    Ok((0..mesh.n_tets())
        .map(|n| {
            if !in_layer[n] {
                return 0.0;
            }
            let smax =
                -(order + 1.0) * reflection.ln() * (eps[n] / mu[n]).sqrt() / (2.0 * thickness);
            smax * (d[n] / thickness).powf(order)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;

    #[test]
    fn a_slab_layer_is_graded_by_depth_and_matched() {
        let m = box_mesh([10, 2, 2], [1.0, 0.2, 0.2]);
        let x = |n: usize| m.tet_x(n).iter().map(|p| p[0]).sum::<f64>() / 4.0;
        let layer: Vec<bool> = (0..m.n_tets()).map(|n| x(n) > 0.6).collect();
        let eps = vec![4.0; m.n_tets()];
        let mu = vec![1.0; m.n_tets()];
        let s = graded_sigma(&m, &layer, &eps, &mu, 2.0, 1e-4, "pml").unwrap();
        for n in 0..m.n_tets() {
            assert_eq!(s[n] > 0.0, layer[n], "tet {n}");
        }
        // deeper is more conductive (cell averages rise with x); the deepest near σ_max of
        // the 0.4 m layer (the measured thickness is that of the centroids, a little less)
        let cell_mean = |i: usize| {
            let v: Vec<f64> = (0..m.n_tets())
                .filter(|&n| layer[n] && (x(n) / 0.1).floor() as usize == i)
                .map(|n| s[n])
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        for i in 6..9 {
            assert!(cell_mean(i + 1) > cell_mean(i), "cell {i}");
        }
        let deep = (0..m.n_tets())
            .filter(|&n| layer[n])
            .max_by(|&a, &b| x(a).total_cmp(&x(b)));
        let smax = 3.0 * (1e4f64).ln() * 2.0 / (2.0 * 0.4);
        let got = s[deep.unwrap()];
        assert!(got > 0.6 * smax && got < 1.2 * smax, "{got} vs {smax}");
        // a layer that touches nothing else is refused
        let all = vec![true; m.n_tets()];
        assert!(graded_sigma(&m, &all, &eps, &mu, 2.0, 1e-4, "pml").is_err());
    }
}
