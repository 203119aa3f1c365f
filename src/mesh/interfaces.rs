//! Curved material interfaces and boundary surfaces, fitted so that refinement follows
//! them ([`super::refine::refine_onto`]): without it, a refined mesh keeps the coarse
//! polyhedron of a dielectric sphere, and a ladder of levels converges to that polyhedron
//! instead of the sphere.
//!
//! The surfaces are the faces between tets of two volume groups (`a < b`, by physical tag)
//! and the boundary faces of each surface group. Per connected patch (faces of one key
//! sharing an edge), with `h` the patch's mean edge length and `P` its vertices:
//!
//! 1. plane: the least-squares plane through the centroid `c` (normal `n` the eigenvector
//!    of the smallest eigenvalue of `Σ (p − c)(p − c)ᵀ`); planar when every
//!    `|(p − c)·n| ≤ ε h`, `ε` = [`FIT_TOLERANCE`]: nothing to project;
//! 2. sphere: the algebraic fit `|p|² + D·p + F = 0` ([`super::shape::fit_round`]), kept
//!    when every vertex lies within `ε h` of it;
//! 3. cylinder: the axis `a` the eigenvector of the smallest eigenvalue of the face normals'
//!    `Σ A_f n_f n_fᵀ` (a cylinder's normals are all normal to its axis), the circle fitted
//!    to the vertices projected along `a`; kept when every vertex lies within `ε h`.
//!
//! A patch that is none of these is split at its sharp edges (normals more than
//! [`FEATURE_ANGLE_DEG`] apart, a cylinder's rim) and each part is tried again; a part that
//! is still curved and fits nothing is [`Unfitted`]: refinement leaves it as it is, and
//! levels of a ladder do not converge to a smooth surface there.
//!
//! The fits are made once, on the mesh as given, and used at every level, so that every
//! level's new nodes lie on the same surface.

use super::Mesh;
use super::topology::{NONE, Topology};
use crate::util::{V3, add, cross, dot, norm, scale, sub};
use std::collections::HashMap;

/// The largest distance of a patch's vertices from a fitted surface, relative to the
/// patch's mean edge length.
pub const FIT_TOLERANCE: f64 = 1e-3;
/// Patches that fit nothing are split where adjacent faces' normals differ by more.
pub const FEATURE_ANGLE_DEG: f64 = 60.0;

/// Which surface a face belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SurfaceKey {
    /// Between the volume groups of these physical tags (ascending).
    Interface(i32, i32),
    /// A boundary face of this surface group (0: none).
    Boundary(i32),
}

/// A fitted curved surface: new nodes on its edges are projected onto `wall`.
#[derive(Clone, Copy, Debug)]
pub struct SurfaceFit {
    pub key: SurfaceKey,
    pub wall: CurvedWall,
    /// Faces of the patch it was fitted to.
    pub faces: usize,
}

/// A curved patch that fits no sphere or cylinder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unfitted {
    pub key: SurfaceKey,
    pub faces: usize,
    /// The best fit's largest vertex distance over the mean edge length.
    pub residual: f64,
}

/// The fitted surfaces of a mesh and the curved patches that fit nothing.
#[derive(Clone, Debug, Default)]
pub struct Surfaces {
    pub fits: Vec<SurfaceFit>,
    pub unfitted: Vec<Unfitted>,
    /// Planar patches (left as they are).
    pub planar: usize,
}

/// A curved wall onto which refined boundary nodes are projected: the lateral surface of a
/// circular cylinder (axis through `origin` along unit `axis`) or a sphere, with the
/// relative tolerance `tol` within which a node counts as lying on it (the mesh's own node
/// accuracy, [`super::shape::Shape::node_tolerance`]).
#[derive(Clone, Copy, Debug)]
pub enum CurvedWall {
    Cylinder {
        origin: V3,
        axis: V3,
        radius: f64,
        tol: f64,
    },
    Sphere {
        center: V3,
        radius: f64,
        tol: f64,
    },
}

impl CurvedWall {
    /// The wall of a detected shape (None for a box).
    pub fn of(shape: &super::shape::Shape, mesh: &Mesh) -> Option<CurvedWall> {
        let tol = shape.node_tolerance(mesh);
        match *shape {
            super::shape::Shape::Cylinder { origin, radius, .. } => Some(CurvedWall::Cylinder {
                origin,
                axis: [0.0, 0.0, 1.0],
                radius,
                tol,
            }),
            super::shape::Shape::Sphere { center, radius } => Some(CurvedWall::Sphere {
                center,
                radius,
                tol,
            }),
            super::shape::Shape::Box { .. } => None,
        }
    }

    /// The radial vector of `p` (from the axis or centre), its length and the radius.
    fn rho(&self, p: V3) -> (V3, f64, f64) {
        let (r, radius) = match *self {
            CurvedWall::Cylinder {
                origin,
                axis,
                radius,
                ..
            } => {
                let d = sub(p, origin);
                let a = crate::util::dot(d, axis);
                (sub(d, crate::util::scale(axis, a)), radius)
            }
            CurvedWall::Sphere { center, radius, .. } => (sub(p, center), radius),
        };
        (r, norm(r), radius)
    }

    fn tol(&self) -> f64 {
        match *self {
            CurvedWall::Cylinder { tol, .. } | CurvedWall::Sphere { tol, .. } => tol,
        }
    }

    /// The distance of `p` from the axis (cylinder) or the centre (sphere).
    pub fn distance(&self, p: V3) -> f64 {
        self.rho(p).1
    }

    /// Whether a face with unit normal `n` and centroid `c` may lie on the wall: its
    /// normal within 60° of the wall's radial direction there.
    pub(crate) fn holds_face(&self, n: V3, c: V3) -> bool {
        let (r, rn, _) = self.rho(c);
        rn > 0.0 && crate::util::dot(n, r).abs() >= 0.5 * rn
    }

    /// Whether `p` lies on the wall within the tolerance.
    pub fn on_surface(&self, p: V3) -> bool {
        let (_, rn, radius) = self.rho(p);
        (rn - radius).abs() <= self.tol() * radius
    }

    /// Radial projection of `p` onto the wall.
    pub fn project(&self, p: V3) -> V3 {
        let (r, rn, radius) = self.rho(p);
        if rn == 0.0 {
            return p;
        }
        crate::util::add(p, crate::util::scale(r, radius / rn - 1.0))
    }

    /// Whether a boundary face with unit normal `n` can lie on the wall (a cylinder's end
    /// caps cannot: their normal is along the axis).
    pub(crate) fn may_hold(&self, n: V3) -> bool {
        match *self {
            CurvedWall::Cylinder { axis, .. } => crate::util::dot(n, axis).abs() < 0.5,
            CurvedWall::Sphere { .. } => true,
        }
    }
}

/// The surface faces of a mesh: (face index in `topo`, key).
pub fn surface_faces(mesh: &Mesh, topo: &Topology) -> Vec<(u32, SurfaceKey)> {
    let mut out = vec![];
    let mut bnd: HashMap<u32, i32> = HashMap::new();
    for &(f, tag) in &topo.boundary_faces {
        bnd.insert(f, tag);
    }
    for (f, t) in topo.face_tets.iter().enumerate() {
        if t[1] == NONE {
            out.push((
                f as u32,
                SurfaceKey::Boundary(bnd.get(&(f as u32)).copied().unwrap_or(0)),
            ));
        } else {
            let (a, b) = (mesh.tet_phys[t[0] as usize], mesh.tet_phys[t[1] as usize]);
            if a != b {
                out.push((f as u32, SurfaceKey::Interface(a.min(b), a.max(b))));
            }
        }
    }
    out
}

/// Unit normal and area of a face.
fn normal(mesh: &Mesh, f: [u32; 3]) -> (V3, f64) {
    let x = f.map(|v| mesh.nodes[v as usize]);
    let c = cross(sub(x[1], x[0]), sub(x[2], x[0]));
    let n = norm(c);
    if n > 0.0 {
        (scale(c, 1.0 / n), 0.5 * n)
    } else {
        ([0.0; 3], 0.0)
    }
}

fn find(p: &mut [usize], mut i: usize) -> usize {
    while p[i] != i {
        p[i] = p[p[i]];
        i = p[i];
    }
    i
}

/// Connected patches of `faces` (indices into `list`) joined across shared edges, where
/// `join(a, b)` allows it.
fn patches(
    topo: &Topology,
    list: &[(u32, SurfaceKey)],
    faces: &[usize],
    join: &dyn Fn(usize, usize) -> bool,
) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..faces.len()).collect();
    let mut by_edge: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for (k, &i) in faces.iter().enumerate() {
        let v = topo.faces[list[i].0 as usize];
        for (a, b) in [(v[0], v[1]), (v[1], v[2]), (v[0], v[2])] {
            by_edge.entry((a.min(b), a.max(b))).or_default().push(k);
        }
    }
    let mut edges: Vec<_> = by_edge.into_values().collect();
    edges.sort();
    for fs in edges {
        for w in fs.windows(2) {
            if join(faces[w[0]], faces[w[1]]) {
                let (a, b) = (find(&mut parent, w[0]), find(&mut parent, w[1]));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for k in 0..faces.len() {
        let r = find(&mut parent, k);
        groups.entry(r).or_default().push(faces[k]);
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().collect();
    out.sort();
    out
}

/// Symmetric 3×3 eigenvectors, ascending eigenvalues.
fn eigen(m: [[f64; 3]; 3]) -> ([f64; 3], [V3; 3]) {
    let a = nalgebra::Matrix3::from_fn(|i, j| m[i][j]);
    let e = a.symmetric_eigen();
    let mut idx = [0, 1, 2];
    idx.sort_by(|&i, &j| e.eigenvalues[i].total_cmp(&e.eigenvalues[j]));
    let vals = idx.map(|i| e.eigenvalues[i]);
    let vecs = idx.map(|i| {
        let c = e.eigenvectors.column(i);
        [c[0], c[1], c[2]]
    });
    (vals, vecs)
}

/// What a patch is.
enum Kind {
    Planar,
    Curved(CurvedWall),
    /// Fits nothing: the best residual over `h`.
    Unfitted(f64),
}

/// Fits one patch (faces: indices into `list`).
fn fit_patch(mesh: &Mesh, topo: &Topology, list: &[(u32, SurfaceKey)], faces: &[usize]) -> Kind {
    let mut verts: Vec<u32> = faces
        .iter()
        .flat_map(|&i| topo.faces[list[i].0 as usize])
        .collect();
    verts.sort_unstable();
    verts.dedup();
    let pts: Vec<V3> = verts.iter().map(|&v| mesh.nodes[v as usize]).collect();
    let (mut hsum, mut hn) = (0.0, 0usize);
    for &i in faces {
        let v = topo.faces[list[i].0 as usize];
        for (a, b) in [(v[0], v[1]), (v[1], v[2]), (v[0], v[2])] {
            hsum += norm(sub(mesh.nodes[a as usize], mesh.nodes[b as usize]));
            hn += 1;
        }
    }
    let h = hsum / hn.max(1) as f64;
    let tol = FIT_TOLERANCE * h;
    // plane
    let c = scale(
        pts.iter().fold([0.0; 3], |s, p| add(s, *p)),
        1.0 / pts.len() as f64,
    );
    let mut cov = [[0.0; 3]; 3];
    for p in &pts {
        let d = sub(*p, c);
        for i in 0..3 {
            for j in 0..3 {
                cov[i][j] += d[i] * d[j];
            }
        }
    }
    let (_, v) = eigen(cov);
    let plane = pts
        .iter()
        .map(|p| dot(sub(*p, c), v[0]).abs())
        .fold(0.0, f64::max);
    if plane <= tol {
        return Kind::Planar;
    }
    let mut best = plane;
    // sphere
    if pts.len() >= 5
        && let Some(f) = super::shape::fit_round(&pts, 3)
    {
        let res = pts
            .iter()
            .map(|p| (norm(sub(*p, f.center)) - f.radius).abs())
            .fold(0.0, f64::max);
        if res <= tol {
            return Kind::Curved(CurvedWall::Sphere {
                center: f.center,
                radius: f.radius,
                tol: ((4.0 * res).max(1e-9 * h) / f.radius).max(1e-12),
            });
        }
        best = best.min(res);
    }
    // cylinder: the axis from the face normals
    let mut nn = [[0.0; 3]; 3];
    for &i in faces {
        let (n, a) = normal(mesh, topo.faces[list[i].0 as usize]);
        for r in 0..3 {
            for s in 0..3 {
                nn[r][s] += a * n[r] * n[s];
            }
        }
    }
    let (_, e) = eigen(nn);
    if pts.len() >= 5
        && let Some((wall, res)) = fit_cylinder(&pts, e)
    {
        if res <= tol
            && let CurvedWall::Cylinder {
                origin,
                axis,
                radius,
                ..
            } = wall
        {
            return Kind::Curved(CurvedWall::Cylinder {
                origin,
                axis,
                radius,
                tol: ((4.0 * res).max(1e-9 * h) / radius).max(1e-12),
            });
        }
        best = best.min(res);
    }
    Kind::Unfitted(best / h)
}

/// The cylinder through `pts` with its axis near `frame[0]` (`frame` orthonormal) and its
/// largest vertex distance: the circle fitted to the points projected along the axis, the
/// axis then adjusted (a pattern search over two tilt angles, from 0.05 rad down to 1e-12)
/// to the smallest sum of squared distances. The normals' axis is close but not exact: a
/// chord triangle's plane is not parallel to the axis.
fn fit_cylinder(pts: &[V3], frame: [V3; 3]) -> Option<(CurvedWall, f64)> {
    let at = |t: [f64; 2]| -> Option<(CurvedWall, f64, f64)> {
        let axis = add(frame[0], add(scale(frame[1], t[0]), scale(frame[2], t[1])));
        let axis = scale(axis, 1.0 / norm(axis));
        let u = {
            let x = sub(frame[1], scale(axis, dot(frame[1], axis)));
            scale(x, 1.0 / norm(x))
        };
        let w = cross(axis, u);
        let local: Vec<V3> = pts.iter().map(|p| [dot(*p, u), dot(*p, w), 0.0]).collect();
        let f = super::shape::fit_round(&local, 2)?;
        let wall = CurvedWall::Cylinder {
            origin: add(scale(u, f.center[0]), scale(w, f.center[1])),
            axis,
            radius: f.radius,
            tol: 0.0,
        };
        let (mut ss, mut worst) = (0.0, 0.0f64);
        for p in pts {
            let d = (wall.distance(*p) - f.radius).abs();
            ss += d * d;
            worst = worst.max(d);
        }
        Some((wall, ss, worst))
    };
    let mut t = [0.0, 0.0];
    let mut cur = at(t)?;
    let mut step = 0.05;
    while step > 1e-12 {
        let mut moved = false;
        for d in [[step, 0.0], [-step, 0.0], [0.0, step], [0.0, -step]] {
            let c = [t[0] + d[0], t[1] + d[1]];
            if let Some(x) = at(c)
                && x.1 < cur.1
            {
                (t, cur, moved) = (c, x, true);
            }
        }
        if !moved {
            step *= 0.5;
        }
    }
    Some((cur.0, cur.2))
}

/// Fits every surface patch of `mesh` (see the module documentation). With `boundary`
/// false, only the interfaces between volume groups are fitted (the boundary is then
/// the detected wall's, [`CurvedWall::of`]).
pub fn fit(mesh: &Mesh, boundary: bool) -> Surfaces {
    let Ok(topo) = Topology::build(mesh) else {
        return Surfaces::default();
    };
    let list: Vec<(u32, SurfaceKey)> = surface_faces(mesh, &topo)
        .into_iter()
        .filter(|(_, k)| boundary || matches!(k, SurfaceKey::Interface(..)))
        .collect();
    let normals: Vec<V3> = list
        .iter()
        .map(|&(f, _)| normal(mesh, topo.faces[f as usize]).0)
        .collect();
    let all: Vec<usize> = (0..list.len()).collect();
    let same_key = |a: usize, b: usize| list[a].1 == list[b].1;
    let cos = FEATURE_ANGLE_DEG.to_radians().cos();
    let smooth =
        |a: usize, b: usize| list[a].1 == list[b].1 && dot(normals[a], normals[b]).abs() >= cos;
    let mut out = Surfaces::default();
    for patch in patches(&topo, &list, &all, &same_key) {
        let key = list[patch[0]].1;
        match fit_patch(mesh, &topo, &list, &patch) {
            Kind::Planar => out.planar += 1,
            Kind::Curved(wall) => out.fits.push(SurfaceFit {
                key,
                wall,
                faces: patch.len(),
            }),
            Kind::Unfitted(_) => {
                for part in patches(&topo, &list, &patch, &smooth) {
                    match fit_patch(mesh, &topo, &list, &part) {
                        Kind::Planar => out.planar += 1,
                        Kind::Curved(wall) => out.fits.push(SurfaceFit {
                            key,
                            wall,
                            faces: part.len(),
                        }),
                        Kind::Unfitted(residual) => out.unfitted.push(Unfitted {
                            key,
                            faces: part.len(),
                            residual,
                        }),
                    }
                }
            }
        }
    }
    out
}

impl Surfaces {
    /// One warning per curved patch that fits nothing, naming its groups (`names(dim,
    /// tag)` gives a group's name).
    pub fn warnings(&self, mesh: &Mesh) -> Vec<String> {
        let name = |dim: i32, tag: i32| {
            mesh.physical_names
                .iter()
                .find(|p| p.dim == dim && p.tag == tag)
                .map(|p| format!("{} ({tag})", p.name))
                .unwrap_or_else(|| tag.to_string())
        };
        self.unfitted
            .iter()
            .map(|u| {
                let what = match u.key {
                    SurfaceKey::Interface(a, b) => format!(
                        "the interface between volume groups {} and {}",
                        name(3, a),
                        name(3, b)
                    ),
                    SurfaceKey::Boundary(t) => format!("the boundary surface {}", name(2, t)),
                };
                format!(
                    "{what} is curved ({} faces) but fits no sphere or cylinder (vertices up to {:.2} mean edge lengths off the best fit): refinement leaves it as the coarse polyhedron, so the levels will not converge to a smooth surface there",
                    u.faces, u.residual
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
