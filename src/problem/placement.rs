//! Default placement of the source and probes: seeded points inside the mesh, off its
//! symmetry planes (a probe on a symmetry plane misses the modes odd about it).

use crate::mesh::Mesh;
use crate::util::{Rng, V3};

/// A point inside the mesh: `frac` of the bounding box if inside, otherwise the
/// barycentre of a seeded random tetrahedron.
pub fn default_point(mesh: &Mesh, frac: V3, rng: &mut Rng) -> V3 {
    default_points(mesh, &[frac], rng)[0]
}

/// [`default_point`] of every fraction of `fracs` in turn (the generator draws for them in
/// that order), with one search of the mesh for all of them.
pub fn default_points(mesh: &Mesh, fracs: &[V3], rng: &mut Rng) -> Vec<V3> {
    default_points_drawn(mesh, fracs, rng).0
}

/// [`default_points`], with how many of them the generator drew (those whose fraction of
/// the bounding box lies outside the mesh).
pub(crate) fn default_points_drawn(mesh: &Mesh, fracs: &[V3], rng: &mut Rng) -> (Vec<V3>, usize) {
    let (lo, hi) = mesh.bbox();
    let ps: Vec<V3> = fracs
        .iter()
        .map(|f| std::array::from_fn(|c| lo[c] + f[c] * (hi[c] - lo[c])))
        .collect();
    let found = mesh.locate_all(&ps);
    let mut drawn = 0;
    let points = ps
        .into_iter()
        .zip(found)
        .map(|(p, t)| match t {
            Some(_) => p,
            None => {
                drawn += 1;
                fallback(mesh, rng)
            }
        })
        .collect();
    (points, drawn)
}

/// The centroid of a tet drawn by `rng`.
fn fallback(mesh: &Mesh, rng: &mut Rng) -> V3 {
    let n = (rng.next_u64() % mesh.n_tets() as u64) as usize;
    let x = mesh.tet_x(n);
    std::array::from_fn(|c| 0.25 * (x[0][c] + x[1][c] + x[2][c] + x[3][c]))
}

/// `count` seeded random points inside the mesh, off its symmetry planes and axis: each
/// coordinate at least 8% of the extent from the bounding-box mid-planes, at least 10% of
/// the extent from the other points, and inside a tet (rejection sampling).
pub fn random_probes(mesh: &Mesh, count: usize, seed: u64) -> Vec<V3> {
    let (lo, hi) = mesh.bbox();
    let ext: V3 = std::array::from_fn(|c| hi[c] - lo[c]);
    let emax = ext.iter().cloned().fold(0.0, f64::max);
    let mid: V3 = std::array::from_fn(|c| 0.5 * (lo[c] + hi[c]));
    let mut rng = Rng::new(seed ^ 0x9e37_79b9);
    let mut out: Vec<V3> = Vec::new();
    for _ in 0..20000 {
        if out.len() == count {
            break;
        }
        let p: V3 = std::array::from_fn(|c| lo[c] + ext[c] * (0.1 + 0.8 * rng.uniform()));
        let off_planes = (0..3).all(|c| (p[c] - mid[c]).abs() > 0.08 * ext[c]);
        let spread = out
            .iter()
            .all(|q| crate::util::norm(crate::util::sub(p, *q)) > 0.1 * emax);
        if off_planes && spread && mesh.locate(p).is_some() {
            out.push(p);
        }
    }
    let mut fb = Rng::new(seed);
    while out.len() < count {
        out.push(default_point(mesh, [0.38, 0.77, 0.55], &mut fb));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn random_probes_are_seeded_inside_and_off_symmetry() {
        let m =
            crate::mesh::gmsh::parse(crate::mesh::bundled("coarse").unwrap(), "coarse").unwrap();
        let a = random_probes(&m, 3, 1);
        assert_eq!(a, random_probes(&m, 3, 1));
        assert_ne!(a, random_probes(&m, 3, 2));
        for p in &a {
            assert!(m.locate(*p).is_some());
            assert!(
                p[0].abs() > 0.08 * 2.0 * 0.99
                    && p[1].abs() > 0.08 * 2.0 * 0.99
                    && (p[2] - 0.25).abs() > 0.08 * 0.5 * 0.99
            );
        }
    }
}
