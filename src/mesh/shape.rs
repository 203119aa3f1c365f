//! Recognising simple shapes from a mesh: an axis-aligned box, a z-axis circular cylinder
//! or a sphere (for analytic reference modes and for projecting refined wall nodes).
//! A shape is accepted when the mesh volume matches it: the box exactly (1e-9), the
//! cylinder and sphere within 3% (the inscribed polyhedron of a curved wall is smaller).

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
        return Some(Shape::Sphere {
            center: ctr,
            radius: rs,
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
        return Some(Shape::Cylinder {
            origin: c,
            radius: r,
            height: ext[2],
        });
    }
    None
}
