//! Recognising simple shapes from a mesh: an axis-aligned box, a z-axis circular cylinder
//! or a sphere (for analytic reference modes and for projecting refined wall nodes).
//! A shape is accepted when the mesh volume matches it: the box exactly (1e-9), the
//! cylinder and sphere within 3% (the inscribed polyhedron of a curved wall is smaller).
//!
//! Curved walls are fitted, not read off one node: the radius (and the axis position or
//! centre) is the least-squares fit over the wall nodes (algebraic circle or sphere fit,
//! then refitted over the nodes within 5 median residuals until that set is stable), and the largest
//! residual of those nodes is the mesh's own node accuracy ([`Shape::node_tolerance`]). A
//! mesh written with 6 significant digits thus gets a tolerance of a few 1e-6, and the
//! refined meshes, whose new wall nodes are projected onto the fitted surface, give the
//! same fitted shape at every level: the analytic reference does not move with refinement.

use super::Mesh;
use crate::util::{V3, norm, sub};

/// A recognised shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// `[lo, lo + ext]`.
    Box {
        lo: V3,
        ext: V3,
    },
    /// Axis along z through `(origin[0], origin[1])`, bottom at `origin[2]`.
    Cylinder {
        origin: V3,
        radius: f64,
        height: f64,
    },
    Sphere {
        center: V3,
        radius: f64,
    },
}

/// A least-squares fit of wall nodes: the fitted centre (2 or 3 coordinates used), radius
/// and the largest residual among the nodes kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    pub center: V3,
    pub radius: f64,
    pub max_residual: f64,
}

/// Fits a circle (`dims = 2`, the x-y plane) or a sphere (`dims = 3`) through `pts` by the
/// algebraic least-squares method (minimises `Σ (|p|² + D·p + F)²`, a linear problem), then
/// refits over the points within 5 median residuals until that set is stable (robust to
/// interior nodes that happen to lie near the wall); the largest residual is taken over the
/// points within 20 median residuals. None when the points do not determine a fit.
pub fn fit_round(pts: &[V3], dims: usize) -> Option<Fit> {
    let solve = |set: &[V3]| -> Option<(V3, f64)> {
        let k = dims + 1;
        let mut a = nalgebra::DMatrix::<f64>::zeros(k, k);
        let mut b = nalgebra::DVector::<f64>::zeros(k);
        for p in set {
            let mut row = vec![1.0; k];
            row[..dims].copy_from_slice(&p[..dims]);
            let rhs = -(0..dims).map(|c| p[c] * p[c]).sum::<f64>();
            for i in 0..k {
                b[i] += row[i] * rhs;
                for j in 0..k {
                    a[(i, j)] += row[i] * row[j];
                }
            }
        }
        let x = a.lu().solve(&b)?;
        let mut c = [0.0; 3];
        for d in 0..dims {
            c[d] = -0.5 * x[d];
        }
        let r2 = (0..dims).map(|d| c[d] * c[d]).sum::<f64>() - x[dims];
        (r2 > 0.0).then(|| (c, r2.sqrt()))
    };
    let dist = |p: &V3, c: &V3| (0..dims).map(|d| (p[d] - c[d]).powi(2)).sum::<f64>().sqrt();
    if pts.len() < dims + 2 {
        return None;
    }
    // trimmed refits: keep the points within 5 median residuals, until the set is stable
    let (mut c, mut r) = solve(pts)?;
    let mut n_kept = pts.len();
    let mut med = 0.0;
    for _ in 0..8 {
        let res: Vec<f64> = pts.iter().map(|p| (dist(p, &c) - r).abs()).collect();
        let mut sorted = res.clone();
        sorted.sort_by(f64::total_cmp);
        med = sorted[sorted.len() / 2];
        let cut = (5.0 * med).max(1e-12 * r);
        let kept: Vec<V3> = pts
            .iter()
            .zip(&res)
            .filter(|(_, e)| **e <= cut)
            .map(|(p, _)| *p)
            .collect();
        if kept.len() < dims + 2 {
            return None;
        }
        let done = kept.len() == n_kept;
        n_kept = kept.len();
        (c, r) = solve(&kept)?;
        if done {
            break;
        }
    }
    // the node accuracy: the largest residual among the points within 20 median residuals
    let max_residual = pts
        .iter()
        .map(|p| (dist(p, &c) - r).abs())
        .filter(|&e| e <= (20.0 * med).max(1e-12 * r))
        .fold(0.0, f64::max);
    Some(Fit {
        center: c,
        radius: r,
        max_residual,
    })
}

impl Shape {
    /// The relative accuracy of the wall nodes (curved shapes: 4 times the fit's largest
    /// residual over the radius, at least 1e-12); 0 for a box.
    pub fn node_tolerance(&self, mesh: &Mesh) -> f64 {
        match *self {
            Shape::Box { .. } => 0.0,
            Shape::Cylinder { .. } | Shape::Sphere { .. } => wall_fit(mesh, self)
                .map(|f| (4.0 * f.max_residual / f.radius).max(1e-12))
                .unwrap_or(1e-6),
        }
    }
}

/// The least-squares fit of the curved wall of a detected cylinder or sphere: the nodes
/// within 2% of the largest distance from the axis (or centre) are the candidates.
fn wall_fit(mesh: &Mesh, s: &Shape) -> Option<Fit> {
    let (lo, hi) = mesh.bbox();
    let ctr = [
        0.5 * (lo[0] + hi[0]),
        0.5 * (lo[1] + hi[1]),
        0.5 * (lo[2] + hi[2]),
    ];
    let dims = match s {
        Shape::Cylinder { .. } => 2,
        Shape::Sphere { .. } => 3,
        Shape::Box { .. } => return None,
    };
    let d = |p: &V3| {
        (0..dims)
            .map(|c| (p[c] - ctr[c]).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let rmax = mesh.nodes.iter().map(d).fold(0.0, f64::max);
    let cand: Vec<V3> = mesh
        .nodes
        .iter()
        .filter(|p| d(p) >= 0.98 * rmax)
        .copied()
        .collect();
    let mut fit = fit_round(&cand, dims)?;
    // The 2% band also catches flat-wall nodes near the rim (a cylinder's end caps, many
    // once the mesh is refined), which pull the radius inwards (0.6% on the fine cylinder
    // refined twice). The wall's nodes are the farthest from the fitted centre: shrink the
    // band about the largest distance from it and refit, down to 1e-4.
    let mut band = 0.01;
    while band >= 1e-4 {
        let dist = |p: &V3| {
            (0..dims)
                .map(|c| (p[c] - fit.center[c]).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        let far = cand.iter().map(dist).fold(0.0, f64::max);
        let on: Vec<V3> = cand
            .iter()
            .filter(|p| dist(p) >= (1.0 - band) * far)
            .copied()
            .collect();
        match (on.len() >= 8).then(|| fit_round(&on, dims)).flatten() {
            Some(f) => fit = f,
            None => break,
        }
        band /= 4.0;
    }
    Some(fit)
}

/// The shape of a mesh, if it is one of [`Shape`].
pub fn detect(mesh: &Mesh) -> Option<Shape> {
    let (lo, hi) = mesh.bbox();
    let ext = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    let vol: f64 = (0..mesh.n_tets()).map(|n| mesh.tet_volume(n)).sum();
    let boxv = ext[0] * ext[1] * ext[2];
    if (vol - boxv).abs() < 1e-9 * boxv {
        return Some(Shape::Box { lo, ext });
    }
    // Sphere about the bbox centre: equal extents, volume within 3% of 4/3 π r³.
    let ctr = [
        0.5 * (lo[0] + hi[0]),
        0.5 * (lo[1] + hi[1]),
        0.5 * (lo[2] + hi[2]),
    ];
    let rs = mesh
        .nodes
        .iter()
        .map(|p| norm(sub(*p, ctr)))
        .fold(0.0, f64::max);
    let sphv = 4.0 / 3.0 * std::f64::consts::PI * rs * rs * rs;
    if (0..3).all(|c| (ext[c] - 2.0 * rs).abs() < 0.02 * rs) && (vol - sphv).abs() < 0.03 * sphv {
        let rough = Shape::Sphere {
            center: ctr,
            radius: rs,
        };
        return Some(match wall_fit(mesh, &rough) {
            Some(f) => Shape::Sphere {
                center: f.center,
                radius: f.radius,
            },
            None => rough,
        });
    }
    // Cylinder about the z axis through the bbox centre: radius = largest node distance
    // from the axis; x and y extents equal to mesh resolution; volume of the inscribed
    // polyhedron within 3% of π r² h.
    let c = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), lo[2]];
    let r = mesh
        .nodes
        .iter()
        .map(|p| ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2)).sqrt())
        .fold(0.0, f64::max);
    let cylv = std::f64::consts::PI * r * r * ext[2];
    if (ext[0] - ext[1]).abs() < 0.02 * r
        && (ext[0] - 2.0 * r).abs() < 0.02 * r
        && (vol - cylv).abs() < 0.03 * cylv
    {
        let rough = Shape::Cylinder {
            origin: c,
            radius: r,
            height: ext[2],
        };
        return Some(match wall_fit(mesh, &rough) {
            Some(f) => Shape::Cylinder {
                origin: [f.center[0], f.center[1], lo[2]],
                radius: f.radius,
                height: ext[2],
            },
            None => rough,
        });
    }
    None
}
