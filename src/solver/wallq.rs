//! Wall-loss Q of a mode by the perturbation method (design note §12).
//!
//! For walls of a good conductor (skin depth `δ = sqrt(2/(ω μ₀ μ_c σ))` small against the
//! cavity), the mode of the perfectly conducting cavity loses, per cycle, the power
//! `P = ½ R_s ∮ |H_t|² dS` with the surface resistance `R_s = sqrt(ω μ₀ μ_c / (2σ))`, while
//! it stores `W = ½ μ₀ ∫ μ_r |H|² dV` (peak phasors, time average of the total energy).
//! Hence `Q_wall = ω W / P = ω μ₀ ∫ μ_r |H|² dV / ∮ R_s |H_t|² dS`, with `R_s` per wall face
//! (walls of different metals add their losses).
//!
//! Discretely, `H` is uniform in each hexahedron `(n, v)` ([`ModeShape::h`]), so
//! `∫ μ_r |H|² dV = Σ μ_n |H_(n,v)|² |n|/4` — the scheme's own magnetic energy form
//! `F̄ᵀ Mmu F`. A boundary face of tet `n` is cut by the barycentric dual into three
//! quadrilaterals of a third of its area each, one in the hexahedron of each of its
//! vertices, so `∮ |H_t|² dS = Σ_faces Σ_(v in face) |H_(n,v) − (H·n̂) n̂|² |f| / 3`. The
//! scale of `H` cancels in the ratio.

use super::modeshape::ModeShape;
use crate::mesh::topology::FACE_CYCLE;
use crate::mesh::{Mesh, Topology};
use crate::problem::{MU0, Walls};
use crate::util::{C64, cross, norm, sub};

/// `Q_wall` of `shape` for the `conductor` faces of `walls` (None without any, or for a
/// field with no tangential H on them). `mu_r` per tet.
pub fn wall_q(
    mesh: &Mesh,
    topo: &Topology,
    walls: &Walls,
    mu_r: &[f64],
    shape: &ModeShape,
) -> Option<f64> {
    let omega = 2.0 * std::f64::consts::PI * shape.f_hz;
    let sq = |v: &[C64; 3]| v.iter().map(|z| z.norm_sqr()).sum::<f64>();
    let stored: f64 = shape
        .h
        .iter()
        .enumerate()
        .map(|(n, hx)| mu_r[n] * mesh.tet_volume(n).abs() / 4.0 * hx.iter().map(sq).sum::<f64>())
        .sum();
    let mut lost = 0.0;
    let mut any = false;
    for (&(f, _), metal) in topo.boundary_faces.iter().zip(&walls.metal) {
        let Some(metal) = metal else { continue };
        any = true;
        let n = topo.face_tets[f as usize][0] as usize;
        let k = topo.tet_faces[n]
            .iter()
            .position(|&x| x == f)
            .expect("a face of its tet");
        let x = mesh.tet_x(n);
        let [a, b, c] = FACE_CYCLE[k].map(|i| x[i]);
        let nv = cross(sub(b, a), sub(c, a));
        let twice_area = norm(nv);
        if twice_area == 0.0 {
            continue;
        }
        let unit = nv.map(|q| q / twice_area);
        let mut tangential = 0.0;
        for &i in &FACE_CYCLE[k] {
            let h = &shape.h[n][i];
            let normal: C64 = (0..3).map(|d| h[d] * unit[d]).sum();
            tangential += sq(h) - normal.norm_sqr();
        }
        lost += metal.surface_resistance(omega) * tangential.max(0.0) * (0.5 * twice_area) / 3.0;
    }
    (any && lost > 0.0 && stored > 0.0).then(|| omega * MU0 * stored / lost)
}

/// `1/q_total = 1/q + 1/q_wall`, with a missing or non-positive term left out (None when
/// both are).
pub fn combine(q: Option<f64>, q_wall: Option<f64>) -> Option<f64> {
    let inv = |x: Option<f64>| x.filter(|&v| v > 0.0 && v.is_finite()).map(|v| 1.0 / v);
    match (inv(q), inv(q_wall)) {
        (None, None) => None,
        (a, b) => Some(1.0 / (a.unwrap_or(0.0) + b.unwrap_or(0.0))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_add_as_inverse_q() {
        assert_eq!(combine(Some(100.0), Some(100.0)), Some(50.0));
        assert_eq!(combine(None, Some(300.0)), Some(300.0));
        assert_eq!(combine(Some(-3.0), Some(300.0)), Some(300.0));
        assert_eq!(combine(None, None), None);
    }
}
