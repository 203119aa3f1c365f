//! Refinement of any tetrahedral mesh: uniform 1:8 ([`refine`], [`refine_onto`]) and by
//! region ([`refine_region`]: the marked tets 1:8, their neighbours closed conformingly).
//!
//! A refined edge gets a node at its midpoint; the midpoint of an edge on a detected
//! cylinder or sphere wall, or on a fitted curved interface ([`super::interfaces`]), is
//! moved onto that surface, so that the levels converge to the true geometry. A move that
//! would turn a child tet over, or leave it flatter than [`MIN_PROJECTED_VOLUME`] of its
//! volume with plain midpoints, is made only in part (halved until no child is left so) or
//! not at all; the refined mesh's `source` counts such nodes.
//!
//! Children of a tet with vertices `v0..v3` and edge midpoints `mij`:
//! - red (all six edges split): the corner tets `(v_k, m_k·)` and the four tets of the inner
//!   octahedron around its shortest diagonal;
//! - one split edge `(a, b)`: `(a, m, c, d)`, `(m, b, c, d)` (bisection);
//! - the three edges of the face opposite `d` split: `(d, a, m_ab, m_ac)`, `(d, b, m_bc,
//!   m_ab)`, `(d, c, m_ac, m_bc)`, `(d, m_ab, m_bc, m_ac)`.
//!
//! Any other set of split edges makes the tet red; repeated until no tet has one, this
//! closure leaves every face split alike from both sides (a face has 0, 1 or 3 split
//! edges, and each count has one subdivision), so the mesh stays conforming.

use super::generate::fresh;
use super::interfaces::{CurvedWall, SurfaceFit};
use super::topology::{LOCAL_EDGES, local_edge};
use super::{Mesh, Topology};
use crate::util::{V3, det3, norm, sub};
use rayon::prelude::*;

/// The smallest volume, as a fraction of the child's volume with plain midpoints, that
/// moving midpoints onto a curved surface may leave a child tet.
pub const MIN_PROJECTED_VOLUME: f64 = 0.2;

/// Edges of the boundary faces that may lie on `wall` (by their normal).
fn wall_edges(mesh: &Mesh, topo: &Topology, wall: &CurvedWall) -> Vec<bool> {
    let mut on = vec![false; topo.n_edges()];
    for &(f, _) in &topo.boundary_faces {
        let x = topo.faces[f as usize].map(|v| mesh.nodes[v as usize]);
        let c = crate::util::cross(sub(x[1], x[0]), sub(x[2], x[0]));
        let cn = norm(c);
        if !(cn > 0.0) || !wall.may_hold(crate::util::scale(c, 1.0 / cn)) {
            continue;
        }
        let v = topo.faces[f as usize];
        for (a, b) in [(v[0], v[1]), (v[1], v[2]), (v[2], v[0])] {
            if let Some(e) = topo.edge_between(a, b) {
                on[e as usize] = true;
            }
        }
    }
    on
}

/// Edges of the faces of each fitted surface that may lie on it (by the face's key and
/// normal): `(edge, fit)`.
fn fitted_edges(mesh: &Mesh, topo: &Topology, fits: &[SurfaceFit]) -> Vec<Option<usize>> {
    let mut on = vec![None; topo.n_edges()];
    if fits.is_empty() {
        return on;
    }
    for (f, key) in super::interfaces::surface_faces(mesh, topo) {
        let v = topo.faces[f as usize];
        let x = v.map(|i| mesh.nodes[i as usize]);
        let c = crate::util::cross(sub(x[1], x[0]), sub(x[2], x[0]));
        let cn = norm(c);
        if !(cn > 0.0) {
            continue;
        }
        let n = crate::util::scale(c, 1.0 / cn);
        let ctr = crate::util::scale(
            crate::util::add(crate::util::add(x[0], x[1]), x[2]),
            1.0 / 3.0,
        );
        for (a, b) in [(v[0], v[1]), (v[1], v[2]), (v[2], v[0])] {
            let Some(e) = topo.edge_between(a, b) else {
                continue;
            };
            if on[e as usize].is_some() {
                continue;
            }
            let (pa, pb) = (mesh.nodes[a as usize], mesh.nodes[b as usize]);
            on[e as usize] = fits.iter().position(|s| {
                s.key == key
                    && s.wall.holds_face(n, ctr)
                    && s.wall.on_surface(pa)
                    && s.wall.on_surface(pb)
            });
        }
    }
    on
}

/// The midpoint of each edge (`plain`) and where it goes (`placed`): onto `wall` for an
/// edge of a boundary face on the wall whose two ends lie on it (a chord across a
/// cylinder's end cap is not moved), else onto the fitted surface of an edge of one of its
/// faces whose two ends lie on it, else the plain midpoint.
fn midpoints(
    mesh: &Mesh,
    topo: &Topology,
    wall: Option<CurvedWall>,
    fits: &[SurfaceFit],
) -> (Vec<V3>, Vec<V3>) {
    let on_wall = match &wall {
        Some(w) => wall_edges(mesh, topo, w),
        None => Vec::new(),
    };
    let on_fit = fitted_edges(mesh, topo, fits);
    topo.edges
        .iter()
        .enumerate()
        .map(|(e, &[a, b])| {
            let (pa, pb) = (mesh.nodes[a as usize], mesh.nodes[b as usize]);
            let m = crate::util::scale(crate::util::add(pa, pb), 0.5);
            let placed = match &wall {
                Some(w) if on_wall[e] && w.on_surface(pa) && w.on_surface(pb) => w.project(m),
                _ => match on_fit[e] {
                    Some(k) => fits[k].wall.project(m),
                    None => m,
                },
            };
            (m, placed)
        })
        .unzip()
}

/// The 8 children of a tet `v` whose edge `l` has the node `mid[l]` (`LOCAL_EDGES`
/// order): 4 corner tets and the inner octahedron split along its shortest diagonal.
fn red_children(v: [u32; 4], mid: [u32; 6], nodes: &[V3]) -> [[u32; 4]; 8] {
    let m = |i: usize, j: usize| mid[local_edge(i, j)];
    let (m01, m02, m03, m12, m13, m23) = (m(0, 1), m(0, 2), m(0, 3), m(1, 2), m(1, 3), m(2, 3));
    let len = |a: u32, b: u32| norm(sub(nodes[a as usize], nodes[b as usize]));
    // Octahedron diagonals: (m01,m23), (m02,m13), (m03,m12).
    let d = [len(m01, m23), len(m02, m13), len(m03, m12)];
    let k = (0..3).min_by(|&a, &b| d[a].total_cmp(&d[b])).unwrap_or(0);
    let (p, q, ring) = match k {
        0 => (m01, m23, [m02, m03, m13, m12]),
        1 => (m02, m13, [m01, m03, m23, m12]),
        _ => (m03, m12, [m01, m02, m23, m13]),
    };
    let r = |s: usize| [p, q, ring[s], ring[(s + 1) % 4]];
    [
        [v[0], m01, m02, m03],
        [m01, v[1], m12, m13],
        [m02, m12, v[2], m23],
        [m03, m13, m23, v[3]],
        r(0),
        r(1),
        r(2),
        r(3),
    ]
}

/// The local edges of the face opposite each local vertex, as a 6-bit mask.
const FACE_EDGES: [u8; 4] = [0b111000, 0b100110, 0b010101, 0b001011];

/// Whether a tet with these split local edges (bit mask) can be closed without becoming
/// red: none or one; two, on one face or opposite; the three of one face.
fn closable(mask: u8) -> bool {
    mask.count_ones() <= 1 || mask.count_ones() == 2 || FACE_EDGES.contains(&mask)
}

/// For a face `(a, b, c)` (global ids) whose edges `ab` and `ac` are split and `bc` is not:
/// whether the diagonal of its quadrilateral `(m_ab, b, c, m_ac)` runs from `m_ab` to `c`
/// (else from `m_ac` to `b`). From the midpoint of the longer split edge, ties by the ids,
/// so that the two tets on the face split it alike.
fn diagonal_from_ab(a: u32, b: u32, c: u32, nodes: &[V3]) -> bool {
    let len = |p: u32, q: u32| norm(sub(nodes[p as usize], nodes[q as usize]));
    let (lb, lc) = (len(a, b), len(a, c));
    if lb != lc { lb > lc } else { b < c }
}

/// The children of a tet `v` with split edges `mask` (not all six; [`closable`]) whose
/// split edge `l` has the node `mid[l]` (module doc; `nodes` for the diagonal of a face
/// with two split edges).
fn green_children(v: [u32; 4], mask: u8, mid: [u32; 6], nodes: &[V3]) -> Vec<[u32; 4]> {
    let others = |a: usize, b: usize| -> [usize; 2] {
        let mut o = (0..4).filter(|&k| k != a && k != b);
        [o.next().unwrap_or(0), o.next().unwrap_or(0)]
    };
    let bits: Vec<usize> = (0..6).filter(|&l| mask >> l & 1 == 1).collect();
    match bits.as_slice() {
        [] => vec![v],
        &[l] => {
            let [a, b] = LOCAL_EDGES[l];
            let [c, d] = others(a, b);
            let m = mid[l];
            vec![[v[a], m, v[c], v[d]], [m, v[b], v[c], v[d]]]
        }
        &[l1, l2] => {
            let ([a1, b1], [a2, b2]) = (LOCAL_EDGES[l1], LOCAL_EDGES[l2]);
            let (m1, m2) = (mid[l1], mid[l2]);
            if a1 != a2 && a1 != b2 && b1 != a2 && b1 != b2 {
                // opposite edges: bisect by the first, then each half by the second
                vec![
                    [v[a1], m1, v[a2], m2],
                    [v[a1], m1, m2, v[b2]],
                    [m1, v[b1], v[a2], m2],
                    [m1, v[b1], m2, v[b2]],
                ]
            } else {
                // two edges of one face (a, b, c), meeting at a; d off the face
                let a = if a1 == a2 || a1 == b2 { a1 } else { b1 };
                let b = if a1 == a { b1 } else { a1 };
                let c = if a2 == a { b2 } else { a2 };
                let d = (0..4).find(|&k| k != a && k != b && k != c).unwrap_or(0);
                let (mab, mac) = (m1, m2);
                let quad = if diagonal_from_ab(v[a], v[b], v[c], nodes) {
                    [[mab, v[b], v[c]], [mab, v[c], mac]]
                } else {
                    [[mac, mab, v[b]], [mac, v[b], v[c]]]
                };
                vec![
                    [v[d], v[a], mab, mac],
                    [v[d], quad[0][0], quad[0][1], quad[0][2]],
                    [v[d], quad[1][0], quad[1][1], quad[1][2]],
                ]
            }
        }
        _ => {
            let k = FACE_EDGES.iter().position(|&f| f == mask).unwrap_or(0);
            let mut f = (0..4).filter(|&i| i != k);
            let (a, b, c) = (
                f.next().unwrap_or(0),
                f.next().unwrap_or(0),
                f.next().unwrap_or(0),
            );
            let (mab, mac, mbc) = (
                mid[local_edge(a, b)],
                mid[local_edge(a, c)],
                mid[local_edge(b, c)],
            );
            let d = v[k];
            vec![
                [d, v[a], mab, mac],
                [d, v[b], mbc, mab],
                [d, v[c], mac, mbc],
                [d, mab, mbc, mac],
            ]
        }
    }
}

/// Surface triangles split through their split edges' nodes (`mid(a, b)`, None when that
/// edge is not split) as the tets beside them split their faces: 0 split edges keep the
/// triangle, 1 halves it, 2 make 3 ([`diagonal_from_ab`]), 3 make 4.
fn split_surfaces(
    surfaces: &[([u32; 3], i32)],
    mid: impl Fn(u32, u32) -> Option<u32>,
    nodes: &[V3],
) -> Vec<([u32; 3], i32)> {
    let mut out = Vec::with_capacity(surfaces.len());
    for &([a, b, c], tag) in surfaces {
        // the triangle turned so that its split edges come first from its first vertex
        let turns = [[a, b, c], [b, c, a], [c, a, b]];
        let split = |[p, q, _]: [u32; 3]| mid(p, q);
        match (mid(a, b), mid(b, c), mid(c, a)) {
            (Some(ab), Some(bc), Some(ca)) => out.extend([
                ([a, ab, ca], tag),
                ([ab, b, bc], tag),
                ([ca, bc, c], tag),
                ([ab, bc, ca], tag),
            ]),
            (None, None, None) => out.push(([a, b, c], tag)),
            _ => {
                let n = [mid(a, b), mid(b, c), mid(c, a)]
                    .iter()
                    .filter(|m| m.is_some())
                    .count();
                if n == 1 {
                    let [p, q, r] = *turns
                        .iter()
                        .find(|t| split(**t).is_some())
                        .unwrap_or(&turns[0]);
                    let m = mid(p, q).unwrap_or(p);
                    out.extend([([p, m, r], tag), ([m, q, r], tag)]);
                } else {
                    // two split edges p-q and p-r meet at p (q-r is not split)
                    let [p, q, r] = *turns
                        .iter()
                        .find(|&&[p, q, r]| mid(p, q).is_some() && mid(r, p).is_some())
                        .unwrap_or(&turns[0]);
                    let (mpq, mpr) = (mid(p, q).unwrap_or(p), mid(r, p).unwrap_or(p));
                    out.push(([p, mpq, mpr], tag));
                    if diagonal_from_ab(p, q, r, nodes) {
                        out.extend([([mpq, q, r], tag), ([mpq, r, mpr], tag)]);
                    } else {
                        out.extend([([mpr, mpq, q], tag), ([mpr, q, r], tag)]);
                    }
                }
            }
        }
    }
    out
}

/// Uniform 1:8 refinement: each tet becomes 4 corner tets and 4 tets of its inner
/// octahedron (split along its shortest diagonal). With `wall`, the midpoint of an edge of
/// a boundary face on the wall whose two ends lie on the wall (within its tolerance) is
/// projected onto it, so that curved walls converge to the true surface (a chord across a
/// cylinder's end cap is not moved).
pub fn refine(mesh: &Mesh, wall: Option<CurvedWall>) -> Mesh {
    refine_onto(mesh, wall, &[])
}

/// [`refine`] that also follows fitted surfaces ([`super::interfaces::fit`], made once on
/// the mesh as given): the midpoint of an edge of a face of a fitted surface whose two ends
/// lie on the fit is projected onto it (after `wall`, which keeps its own rule).
pub fn refine_onto(mesh: &Mesh, wall: Option<CurvedWall>, fits: &[SurfaceFit]) -> Mesh {
    let all = vec![true; mesh.n_tets()];
    refine_marked(mesh, &all, wall, fits, "refined 1:8")
}

/// Refinement of the marked tets (`marked[n]`) 1:8, with the fewest other tets refined
/// 1:8 too and the rest of their neighbours split into 2 or 4 so that the mesh stays
/// conforming (module doc); midpoints placed as by [`refine_onto`]. The tets far from the
/// marked ones are kept as they are. Errors when `marked` is not one flag per tet.
pub fn refine_region(
    mesh: &Mesh,
    marked: &[bool],
    wall: Option<CurvedWall>,
    fits: &[SurfaceFit],
) -> Result<Mesh, String> {
    if marked.len() != mesh.n_tets() {
        return Err(format!(
            "{} region flags for {} tets",
            marked.len(),
            mesh.n_tets()
        ));
    }
    Ok(refine_marked(mesh, marked, wall, fits, "refined by region"))
}

fn refine_marked(
    mesh: &Mesh,
    marked: &[bool],
    wall: Option<CurvedWall>,
    fits: &[SurfaceFit],
    how: &str,
) -> Mesh {
    let topo = Topology::build(mesh).expect("a valid mesh has a valid topology");
    // the closure: red tets split all their edges; a tet whose split edges cannot be closed
    // turns red, until none is left
    let mut red = marked.to_vec();
    let mut split = vec![false; topo.n_edges()];
    let mut todo: Vec<usize> = (0..mesh.n_tets()).filter(|&n| red[n]).collect();
    let mut edge_tets: Vec<Vec<u32>> = Vec::new();
    if todo.len() < mesh.n_tets() {
        edge_tets = vec![Vec::new(); topo.n_edges()];
        for (n, te) in topo.tet_edges.iter().enumerate() {
            te.iter()
                .for_each(|&e| edge_tets[e as usize].push(n as u32));
        }
    }
    let mask = |n: usize, split: &[bool]| {
        topo.tet_edges[n]
            .iter()
            .enumerate()
            .fold(0u8, |m, (l, &e)| m | ((split[e as usize] as u8) << l))
    };
    while let Some(n) = todo.pop() {
        for &e in &topo.tet_edges[n] {
            if std::mem::replace(&mut split[e as usize], true) || edge_tets.is_empty() {
                continue;
            }
            for &t in &edge_tets[e as usize] {
                let t = t as usize;
                if !red[t] && !closable(mask(t, &split)) {
                    red[t] = true;
                    todo.push(t);
                }
            }
        }
    }
    let (plain_mid, placed_mid) = midpoints(mesh, &topo, wall, fits);
    let mut node_of = vec![u32::MAX; topo.n_edges()];
    let mut nodes = mesh.nodes.clone();
    let mut plain = mesh.nodes.clone();
    for e in (0..topo.n_edges()).filter(|&e| split[e]) {
        node_of[e] = nodes.len() as u32;
        nodes.push(placed_mid[e]);
        plain.push(plain_mid[e]);
    }
    let children: Vec<Vec<[u32; 4]>> = (0..mesh.n_tets())
        .into_par_iter()
        .map(|n| {
            let mid = topo.tet_edges[n].map(|e| node_of[e as usize]);
            if red[n] {
                red_children(mesh.tets[n], mid, &nodes).to_vec()
            } else {
                green_children(mesh.tets[n], mask(n, &split), mid, &mesh.nodes)
            }
        })
        .collect();
    let phys: Vec<i32> = children
        .iter()
        .zip(&mesh.tet_phys)
        .flat_map(|(c, &p)| std::iter::repeat_n(p, c.len()))
        .collect();
    // a tet's further volume groups pass to its children (sorted, as the mesh keeps them)
    let mut first = Vec::with_capacity(children.len() + 1);
    first.push(0u32);
    for c in &children {
        first.push(first.last().copied().unwrap_or(0) + c.len() as u32);
    }
    let groups: Vec<(u32, i32)> = mesh
        .tet_groups
        .iter()
        .flat_map(|&(n, tag)| (first[n as usize]..first[n as usize + 1]).map(move |c| (c, tag)))
        .collect();
    let tets: Vec<[u32; 4]> = children.into_iter().flatten().collect();
    let kept = keep_unfolded(&tets, &mut nodes, &plain);
    let surfaces = split_surfaces(
        &mesh.surfaces,
        |a, b| {
            topo.edge_between(a, b)
                .map(|e| node_of[e as usize])
                .filter(|&m| m != u32::MAX)
        },
        &mesh.nodes,
    );
    let source = match kept {
        0 => format!("{} {how}", mesh.source),
        k => format!(
            "{} {how} ({k} midpoints moved only part of the way onto their curved surface, \
             or not at all, where the whole move would fold or flatten a tet)",
            mesh.source
        ),
    };
    let mut out = fresh(
        source,
        nodes,
        tets,
        phys,
        mesh.physical_names.clone(),
        surfaces,
    );
    out.tet_groups = groups;
    out.tet_groups.sort_unstable();
    out
}

/// Nodes moved onto a curved surface (`nodes[v]` against its plain position `plain[v]`)
/// are moved back toward it wherever the move turns a child tet over or flattens it below
/// [`MIN_PROJECTED_VOLUME`] of its plain volume: on a coarse mesh, a surface that bends
/// through a large angle across one cell (a sphere meeting a symmetry plane, a Gmsh mesh's
/// corner) would otherwise fold the refined mesh, or leave a sliver that sets the time
/// step. Each pass halves the move of every node of such a child, and after
/// [`MAX_HALVINGS`] puts the node back on its chord; it repeats until no child is left so
/// (the moves only shrink: it ends). Returns the number of nodes not on their surface.
fn keep_unfolded(tets: &[[u32; 4]], nodes: &mut [V3], plain: &[V3]) -> usize {
    let det = |x: [V3; 4]| det3(sub(x[1], x[0]), sub(x[2], x[0]), sub(x[3], x[0]));
    let mut halved: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    loop {
        let now: &[V3] = nodes;
        let mut bad: Vec<u32> = tets
            .par_iter()
            .filter(|t| t.iter().any(|&v| now[v as usize] != plain[v as usize]))
            .filter(|t| {
                let before = det(t.map(|v| plain[v as usize]));
                let after = det(t.map(|v| now[v as usize]));
                after * before.signum() < MIN_PROJECTED_VOLUME * before.abs()
            })
            .flat_map_iter(|t| t.iter().copied())
            .filter(|&v| now[v as usize] != plain[v as usize])
            .collect();
        if bad.is_empty() {
            return halved.len();
        }
        bad.sort_unstable();
        bad.dedup();
        for v in bad {
            let k = halved.entry(v).or_insert(0);
            *k += 1;
            let (p, x) = (plain[v as usize], nodes[v as usize]);
            nodes[v as usize] = if *k >= MAX_HALVINGS {
                p
            } else {
                crate::util::add(p, crate::util::scale(sub(x, p), 0.5))
            };
        }
    }
}

/// How many times [`keep_unfolded`] halves a node's move before it puts the node back.
const MAX_HALVINGS: u32 = 6;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;

    #[test]
    fn refinement_preserves_volume_and_topology() {
        let m = box_mesh([2, 2, 2], [1.0, 1.0, 1.0]);
        let r = refine(&m, None);
        assert_eq!(r.n_tets(), 8 * m.n_tets());
        let v: f64 = (0..r.n_tets()).map(|n| r.tet_volume(n)).sum();
        assert!((v - 1.0).abs() < 1e-12);
        assert!((0..r.n_tets()).all(|n| r.tet_volume(n) > 0.0));
        let t = Topology::build(&r).unwrap();
        let chi =
            r.n_vertices() as i64 - t.n_edges() as i64 + t.n_faces() as i64 - r.n_tets() as i64;
        assert_eq!(chi, 1);
    }

    /// A box of random size with jittered nodes (no symmetric structure), a random region.
    fn jittered_box(seed: u64) -> (Mesh, Vec<bool>) {
        let mut rng = crate::util::Rng::new(seed);
        let n = [
            3 + (rng.uniform() * 3.0) as usize,
            4,
            3 + (rng.uniform() * 2.0) as usize,
        ];
        let l = [
            0.5 + rng.uniform(),
            0.7 + rng.uniform(),
            0.4 + rng.uniform(),
        ];
        let mut m = box_mesh(n, l);
        let h = l[0] / n[0] as f64;
        for p in m.nodes.iter_mut() {
            // interior nodes only (the walls stay flat)
            if (0..3).all(|a| p[a] > 1e-9 && p[a] < l[a] - 1e-9) {
                (0..3).for_each(|a| p[a] += 0.15 * h * rng.sym());
            }
        }
        // a compact region: the tets whose centroid lies in a ball of random centre and
        // radius (a volume group's shape), and a few scattered tets
        let c = [0, 1, 2].map(|a| l[a] * (0.3 + 0.4 * rng.uniform()));
        let rad = (0.2 + 0.15 * rng.uniform()) * l.iter().cloned().fold(f64::INFINITY, f64::min);
        let marked = (0..m.n_tets())
            .map(|n| {
                let x = m.tets[n].map(|v| m.nodes[v as usize]);
                let g = [0, 1, 2].map(|a| x.iter().map(|p| p[a]).sum::<f64>() / 4.0);
                norm(sub(g, c)) < rad || rng.uniform() < 0.003
            })
            .collect();
        (m, marked)
    }

    /// Random regions of jittered boxes: the refined mesh passes every check (no crack, no
    /// fold: conforming), keeps the volume to 1e-12 and the Euler characteristic 1, refines
    /// every marked tet (each of its 6 edges has a node at its midpoint), adds a node only
    /// on a split edge, and keeps every tet with no split edge as it was; the boundary
    /// triangles still cover the boundary (as many as the topology's boundary faces).
    #[test]
    fn region_refinement_is_conforming_and_local() {
        for seed in [3, 17, 40] {
            let (m, marked) = jittered_box(seed);
            let r = refine_region(&m, &marked, None, &[]).unwrap();
            let t = Topology::build(&r).unwrap();
            crate::mesh::check(&r, &t).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let vol = |m: &Mesh| (0..m.n_tets()).map(|n| m.tet_volume(n)).sum::<f64>();
            assert!((vol(&r) / vol(&m) - 1.0).abs() < 1e-12, "seed {seed}");
            let chi =
                r.n_vertices() as i64 - t.n_edges() as i64 + t.n_faces() as i64 - r.n_tets() as i64;
            assert_eq!(chi, 1, "seed {seed}");
            assert_eq!(r.surfaces.len(), t.n_boundary_faces, "seed {seed}");
            let key = |p: V3| p.map(|x| (x * 1e9).round() as i64);
            let at: std::collections::HashSet<[i64; 3]> = r.nodes.iter().map(|&p| key(p)).collect();
            let t0 = Topology::build(&m).unwrap();
            let mid = |e: usize| {
                let [a, b] = t0.edges[e];
                crate::util::scale(
                    crate::util::add(m.nodes[a as usize], m.nodes[b as usize]),
                    0.5,
                )
            };
            let mut split = vec![false; t0.n_edges()];
            for n in (0..m.n_tets()).filter(|&n| marked[n]) {
                for &e in &t0.tet_edges[n] {
                    assert!(
                        at.contains(&key(mid(e as usize))),
                        "seed {seed}: tet {n} not refined"
                    );
                }
            }
            for e in 0..t0.n_edges() {
                split[e] = at.contains(&key(mid(e)));
            }
            let n_split = split.iter().filter(|&&s| s).count();
            assert_eq!(r.n_vertices(), m.n_vertices() + n_split, "seed {seed}");
            let tet_key = |m: &Mesh, n: usize| {
                let mut k = m.tets[n].map(|v| key(m.nodes[v as usize]));
                k.sort_unstable();
                k
            };
            let after: std::collections::HashSet<_> =
                (0..r.n_tets()).map(|n| tet_key(&r, n)).collect();
            let untouched: Vec<usize> = (0..m.n_tets())
                .filter(|&n| t0.tet_edges[n].iter().all(|&e| !split[e as usize]))
                .collect();
            assert!(
                untouched.iter().all(|&n| after.contains(&tet_key(&m, n))),
                "seed {seed}"
            );
            let red = marked.iter().filter(|&&x| x).count();
            eprintln!(
                "seed {seed}: {} tets, {red} marked, {} untouched, {} after",
                m.n_tets(),
                untouched.len(),
                r.n_tets()
            );
            assert!(
                red > 0 && !untouched.is_empty(),
                "seed {seed}: a trivial case"
            );
            // fewer tets than a uniform refinement, more than the marked ones' children
            assert!(r.n_tets() < 8 * m.n_tets() && r.n_tets() >= m.n_tets() + 7 * red);
        }
    }

    /// Every mask of split edges is either closable or turns the tet red; the closable
    /// ones' children tile the parent (volumes sum to it, all positive).
    #[test]
    fn every_closable_pattern_tiles_its_tet() {
        let v: [V3; 4] = [
            [0.1, 0.0, 0.0],
            [1.0, 0.2, 0.1],
            [0.3, 1.1, 0.0],
            [0.2, 0.3, 0.9],
        ];
        let mut nodes = v.to_vec();
        let mid: [u32; 6] = std::array::from_fn(|l| {
            let [a, b] = LOCAL_EDGES[l];
            nodes.push(crate::util::scale(crate::util::add(v[a], v[b]), 0.5));
            (4 + l) as u32
        });
        let vol = |t: [u32; 4]| {
            let x = t.map(|i| nodes[i as usize]);
            det3(sub(x[1], x[0]), sub(x[2], x[0]), sub(x[3], x[0])).abs() / 6.0
        };
        let whole = vol([0, 1, 2, 3]);
        let mut closable_masks = 0;
        for mask in 0u8..64 {
            if !closable(mask) {
                continue;
            }
            closable_masks += 1;
            let c = green_children([0, 1, 2, 3], mask, mid, &nodes);
            let s: f64 = c.iter().map(|&t| vol(t)).sum();
            assert!((s / whole - 1.0).abs() < 1e-12, "mask {mask:06b}");
            assert!(c.iter().all(|&t| vol(t) > 1e-3 * whole), "mask {mask:06b}");
        }
        assert_eq!(closable_masks, 1 + 6 + 15 + 4);
        let s: f64 = red_children([0, 1, 2, 3], mid, &nodes)
            .iter()
            .map(|&t| vol(t))
            .sum();
        assert!((s / whole - 1.0).abs() < 1e-12);
    }
}
