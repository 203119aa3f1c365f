//! Curved walls under refinement (issue 12): the cylinder and sphere are fitted by least
//! squares with a tolerance from the mesh's own node accuracy, every new wall node is
//! projected onto the fitted surface, nothing else moves, and the fitted shape (hence the
//! analytic reference) is the same at every refinement level.

use dgatd::mesh::{CurvedWall, refine};
use dgatd::mesh::{Mesh, Topology};
use dgatd::mesh::{Shape, detect_shape as detect};

fn load(name: &str) -> Mesh {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("meshes")
        .join(name);
    dgatd::mesh::parse_gmsh(&std::fs::read(&p).unwrap(), name).unwrap()
}

fn radius(s: &Shape) -> f64 {
    match *s {
        Shape::Cylinder { radius, .. } | Shape::Sphere { radius, .. } => radius,
        Shape::Box { .. } => panic!("not curved"),
    }
}

/// Distance of `p` from the fitted axis (cylinder) or centre (sphere).
fn rho(s: &Shape, p: [f64; 3]) -> f64 {
    match *s {
        Shape::Cylinder { origin, .. } => {
            ((p[0] - origin[0]).powi(2) + (p[1] - origin[1]).powi(2)).sqrt()
        }
        Shape::Sphere { center, .. } => {
            ((p[0] - center[0]).powi(2) + (p[1] - center[1]).powi(2) + (p[2] - center[2]).powi(2))
                .sqrt()
        }
        Shape::Box { .. } => unreachable!(),
    }
}

/// On every bundled curved mesh: the tolerance is the mesh's node accuracy (a few 1e-6 for
/// the 6-digit files, far below the 1e-3 of a chord's midpoint); after one refinement every
/// new node on a wall face lies on the fitted surface to 1e-12 (before this fix: 340 of the
/// medium mesh's stayed on the chords at radius 0.99–0.999); interior and end-cap nodes are
/// plain midpoints; the shape fitted on the refined mesh has the same radius to 1e-6.
#[test]
fn refinement_projects_every_wall_node_onto_the_fitted_surface() {
    for name in [
        "cylinder_coarse.msh",
        "cylinder_medium.msh",
        "cylinder_fine.msh",
        "sphere.msh",
    ] {
        let m0 = load(name);
        let s0 = detect(&m0).unwrap_or_else(|| panic!("{name}: no shape"));
        let tol = s0.node_tolerance(&m0);
        assert!(tol > 0.0 && tol < 1e-4, "{name}: node tolerance {tol}");
        let wall = CurvedWall::of(&s0, &m0).unwrap();
        let m1 = refine(&m0, Some(wall));
        let topo = Topology::build(&m1).unwrap();
        let r0 = radius(&s0);
        // new boundary nodes (index >= old count) on the wall: on the fitted surface
        let nv0 = m0.n_vertices();
        let mut on_wall = 0;
        let mut off = 0;
        for v in nv0..m1.n_vertices() {
            if !topo.boundary_vertex[v] {
                continue;
            }
            let p = m1.nodes[v];
            let d = (rho(&s0, p) - r0).abs() / r0;
            let is_cap = matches!(s0, Shape::Cylinder { origin, height, .. }
                if (p[2] - origin[2]).abs() < 1e-9 || (p[2] - origin[2] - height).abs() < 1e-9);
            if d <= 1e-12 {
                on_wall += 1;
            } else if !is_cap {
                off += 1;
            }
        }
        assert!(on_wall > 0, "{name}: no node projected");
        assert_eq!(
            off, 0,
            "{name}: {off} new wall nodes are off the fitted surface"
        );
        let s1 = detect(&m1).unwrap();
        let r1 = radius(&s1);
        assert!(
            (r1 - r0).abs() <= 1e-6 * r0,
            "{name}: fitted radius moved from {r0} to {r1}"
        );
        // the volume now converges to the true one: closer than before
        let vol = |m: &Mesh| (0..m.n_tets()).map(|n| m.tet_volume(n)).sum::<f64>();
        let exact = match s0 {
            Shape::Cylinder { radius, height, .. } => {
                std::f64::consts::PI * radius * radius * height
            }
            Shape::Sphere { radius, .. } => 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3),
            Shape::Box { .. } => unreachable!(),
        };
        let (e0, e1) = ((vol(&m0) - exact).abs(), (vol(&m1) - exact).abs());
        assert!(e1 < 0.4 * e0, "{name}: volume error {e0} -> {e1}");
    }
}

/// Twice refined, the end caps hold many nodes within 2% of the rim (the first fit's band):
/// the fit must still find the wall alone. Before the band was shrunk, the fine mesh
/// refined twice was fitted at radius 0.99384 (its analytic TM010 0.6% high).
#[test]
fn twice_refined_cylinders_keep_their_fitted_radius() {
    for name in [
        "cylinder_coarse.msh",
        "cylinder_medium.msh",
        "cylinder_fine.msh",
    ] {
        let m0 = load(name);
        let s0 = detect(&m0).unwrap();
        let wall = CurvedWall::of(&s0, &m0).unwrap();
        let m1 = refine(&m0, Some(wall));
        let m2 = refine(&m1, Some(wall));
        let (r0, r2) = (radius(&s0), radius(&detect(&m2).unwrap()));
        assert!(
            (r2 - r0).abs() <= 1e-6 * r0,
            "{name}: fitted radius {r0} became {r2} after two refinements"
        );
    }
}

/// A cylinder of random radius, height and position, meshed as a box mapped onto it: the
/// fit recovers the axis and the radius to the node accuracy.
#[test]
fn fits_recover_random_cylinders() {
    let mut rng = dgatd::internal::Rng::new(0xc71);
    for _ in 0..5 {
        let (r, h) = (0.2 + rng.uniform(), 0.1 + rng.uniform());
        let c = [rng.sym() * 3.0, rng.sym() * 3.0, rng.sym()];
        // points on the wall with 1e-7 relative noise, and interior points near it
        let mut pts = Vec::new();
        for i in 0..200 {
            let t = i as f64 / 200.0 * std::f64::consts::TAU;
            let rr = r * (1.0 + 1e-7 * rng.sym());
            pts.push([
                c[0] + rr * t.cos(),
                c[1] + rr * t.sin(),
                c[2] + h * rng.uniform(),
            ]);
        }
        for _ in 0..15 {
            let t = rng.uniform() * std::f64::consts::TAU;
            let rr = r * (0.985 + 0.01 * rng.uniform());
            pts.push([c[0] + rr * t.cos(), c[1] + rr * t.sin(), c[2]]);
        }
        let f = dgatd::mesh::fit_round(&pts, 2).unwrap();
        assert!((f.radius - r).abs() < 1e-6 * r, "{} vs {r}", f.radius);
        assert!((f.center[0] - c[0]).abs() < 1e-6 && (f.center[1] - c[1]).abs() < 1e-6);
        assert!(
            f.max_residual < 2e-7 * r,
            "interior points kept: {}",
            f.max_residual
        );
    }
}
