//! Mesh generators: a structured box split into tetrahedra and concentric balls (an
//! equiangular cubed sphere, for open problems around a sphere), so users and benchmarks
//! can make meshes of any size without files (refinement: [`super::refine`]).

use super::{Mesh, PhysicalName};
use crate::util::{V3, det3, norm, sub};
use rayon::prelude::*;

/// A mesh of these nodes and tets (each turned to positive orientation, counted in
/// `reoriented`), with sorted surface triangles and fresh tet ids.
pub(super) fn fresh(
    source: String,
    nodes: Vec<V3>,
    mut tets: Vec<[u32; 4]>,
    phys: Vec<i32>,
    names: Vec<PhysicalName>,
    mut surfaces: Vec<([u32; 3], i32)>,
) -> Mesh {
    for s in surfaces.iter_mut() {
        s.0.sort_unstable();
    }
    surfaces.sort_unstable();
    let reoriented = tets
        .par_iter_mut()
        .map(|t| {
            let x = t.map(|v| nodes[v as usize]);
            let flip = det3(sub(x[1], x[0]), sub(x[2], x[0]), sub(x[3], x[0])) < 0.0;
            if flip {
                t.swap(2, 3);
            }
            flip as usize
        })
        .sum();
    let n = tets.len();
    Mesh {
        source,
        nodes,
        tets,
        tet_phys: phys,
        tet_ids: (1..=n as u64).into_par_iter().collect(),
        tet_groups: Vec::new(),
        physical_names: names,
        surfaces,
        reoriented,
        dropped_triangles: Vec::new(),
        ignored: Vec::new(),
    }
}

/// The six orders in which a Kuhn simplex steps along the three axes (one tet each).
const PERMS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// Names of the box's six wall groups (surface tags 1..=6, in this order).
pub const BOX_WALLS: [&str; 6] = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"];

/// A box `[0, lx] x [0, ly] x [0, lz]` of `nx * ny * nz` cubes, each split into 6
/// tetrahedra along its main diagonal (Kuhn split; conforming across cubes). 6 n^3 tets.
/// All tets get physical tag 1 ("vacuum"); the six walls are surface groups
/// [`BOX_WALLS`] (tags 1..=6), so boundary conditions can be set per wall.
pub fn box_mesh(n: [usize; 3], l: [f64; 3]) -> Mesh {
    let [nx, ny, nz] = n;
    let id = |i: usize, j: usize, k: usize| (i + (nx + 1) * (j + (ny + 1) * k)) as u32;
    let mut nodes = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                nodes.push([
                    l[0] * i as f64 / nx as f64,
                    l[1] * j as f64 / ny as f64,
                    l[2] * k as f64 / nz as f64,
                ]);
            }
        }
    }
    let tets: Vec<[u32; 4]> = (0..nx * ny * nz)
        .into_par_iter()
        .flat_map_iter(|c| {
            let (i, j, k) = (c % nx, (c / nx) % ny, c / (nx * ny));
            PERMS.iter().map(move |p| {
                let mut o = [0usize; 3];
                let mut t = [id(i, j, k); 4];
                for s in 0..3 {
                    o[p[s]] = 1;
                    t[s + 1] = id(i + o[0], j + o[1], k + o[2]);
                }
                t
            })
        })
        .collect();
    let nt = tets.len();
    // Wall triangles: each boundary square of the cube grid is split along the diagonal
    // the Kuhn split uses on that face (the one through the cube's corner with the smaller
    // index sum), which is the diagonal of the two tets' faces there.
    let mut surfaces = Vec::new();
    for axis in 0..3 {
        let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
        for side in 0..2 {
            let tag = (2 * axis + side + 1) as i32;
            let fixed = side * n[axis];
            for i in 0..n[a] {
                for j in 0..n[b] {
                    let at = |di: usize, dj: usize| {
                        let mut c = [0usize; 3];
                        c[axis] = fixed;
                        c[a] = i + di;
                        c[b] = j + dj;
                        id(c[0], c[1], c[2])
                    };
                    surfaces.push(([at(0, 0), at(1, 0), at(1, 1)], tag));
                    surfaces.push(([at(0, 0), at(0, 1), at(1, 1)], tag));
                }
            }
        }
    }
    let mut names = vec![PhysicalName {
        dim: 3,
        tag: 1,
        name: "vacuum".into(),
    }];
    for (k, w) in BOX_WALLS.iter().enumerate() {
        names.push(PhysicalName {
            dim: 2,
            tag: k as i32 + 1,
            name: w.to_string(),
        });
    }
    fresh(
        format!("box {nx}x{ny}x{nz} of {}x{}x{} m", l[0], l[1], l[2]),
        nodes,
        tets,
        vec![1; nt],
        names,
        surfaces,
    )
}

/// Name of the outer spherical surface of [`ball_mesh`] (surface tag 1).
pub const BALL_OUTER: &str = "outer";

/// One group of [`ball_mesh`].
#[derive(Clone, Debug, PartialEq)]
pub struct Shell {
    pub name: String,
    /// Outer radius (m).
    pub radius: f64,
    /// Radial step in units of the inner ball's (1 for the inner ball itself).
    pub step: f64,
}

impl Shell {
    pub fn new(name: &str, radius: f64) -> Shell {
        Shell {
            name: name.to_string(),
            radius,
            step: 1.0,
        }
    }
}

/// The number of shells of each group, checked (radii increasing and finite, steps in
/// 1..=100), without building anything: a count from the file's ratios can be huge
/// (`1:a=1,b=1e9` asks for 1e9 shells), and is saturated, not wrapped.
fn shell_counts(n_first: usize, shells: &[Shell]) -> std::result::Result<Vec<usize>, String> {
    if n_first == 0 || shells.is_empty() {
        return Err("at least one shell and one cell across the first radius".into());
    }
    let h = shells[0].radius / n_first as f64;
    let mut prev = 0.0;
    let mut counts = Vec::with_capacity(shells.len());
    for (
        k,
        Shell {
            name,
            radius: r,
            step,
        },
    ) in shells.iter().enumerate()
    {
        if !(r.is_finite() && *r > prev) {
            return Err(format!(
                "the radius of {name:?} ({r}) must be finite and above the previous one ({prev})"
            ));
        }
        if !(step.is_finite() && *step >= 1.0 && *step <= 100.0) {
            return Err(format!(
                "the radial step of {name:?} ({step}) must be between 1 and 100"
            ));
        }
        counts.push(if k == 0 {
            n_first
        } else {
            // (a float-to-int cast saturates)
            ((r - prev) / (h * step)).round().max(1.0) as usize
        });
        prev = *r;
    }
    Ok(counts)
}

/// The radii of the shells' outer spheres (index 0: the centre) and the last shell of each
/// group.
fn shell_radii(
    n_first: usize,
    shells: &[Shell],
) -> std::result::Result<(Vec<f64>, Vec<usize>), String> {
    let counts = shell_counts(n_first, shells)?;
    let mut radii = vec![0.0f64];
    let mut group_end = Vec::new();
    let mut prev = 0.0;
    for (shell, &n) in shells.iter().zip(&counts) {
        let r = shell.radius;
        for i in 1..=n {
            radii.push(prev + (r - prev) * i as f64 / n as f64);
        }
        group_end.push(radii.len() - 1);
        prev = r;
    }
    Ok((radii, group_end))
}

/// The node and cell numbering of the `2S x 2S x 2S` cube grid behind [`ball_mesh`].
#[derive(Clone, Copy)]
struct CubeGrid {
    /// Total shells `S`.
    s_tot: usize,
}

impl CubeGrid {
    /// Nodes per axis.
    fn n1(self) -> usize {
        2 * self.s_tot + 1
    }
    fn id(self, c: [usize; 3]) -> u32 {
        let n1 = self.n1();
        (c[0] + n1 * (c[1] + n1 * c[2])) as u32
    }
    fn coords(self, v: usize) -> [usize; 3] {
        let n1 = self.n1();
        [v % n1, (v / n1) % n1, v / (n1 * n1)]
    }
    /// The max-norm distance of a node from the centre: its shell.
    fn shell_of(self, c: [usize; 3]) -> usize {
        c.iter().map(|&i| i.abs_diff(self.s_tot)).max().unwrap_or(0)
    }
}

/// Every grid node on its shell's sphere, at the equiangular direction.
fn cubed_sphere_nodes(g: CubeGrid, radii: &[f64]) -> Vec<V3> {
    let n1 = g.n1();
    let s_tot = g.s_tot;
    let quarter = std::f64::consts::FRAC_PI_4;
    (0..n1 * n1 * n1)
        .into_par_iter()
        .map(|v| {
            let q = [v % n1, (v / n1) % n1, v / (n1 * n1)].map(|i| i as f64 - s_tot as f64);
            let s = q.iter().fold(0.0f64, |a, b| a.max(b.abs()));
            if s == 0.0 {
                return [0.0; 3];
            }
            let d = q.map(|c| (quarter * c / s).tan());
            let r = radii[s.round() as usize] / norm(d);
            d.map(|c| c * r)
        })
        .collect()
}

/// The tets (with their group tags, 1-based) of every cell, split along its radial diagonal.
fn radial_kuhn(g: CubeGrid, group_end: &[usize]) -> (Vec<[u32; 4]>, Vec<i32>) {
    let (s_tot, n2) = (g.s_tot, 2 * g.s_tot);
    // Kuhn split of each cell along its radial diagonal (from the corner nearest the centre
    // to the farthest): a fixed diagonal would give, at six of the eight cube corners, tets
    // with all four nodes on one sphere (slivers). Mirroring the split by octant keeps it
    // conforming: the face diagonals on a mirror plane agree from both sides.
    (0..n2 * n2 * n2)
        .into_par_iter()
        .flat_map_iter(|c| {
            let lo = [c % n2, (c / n2) % n2, c / (n2 * n2)];
            // the corner nearest the centre and the step towards the farthest, per axis
            let (start, dir): ([usize; 3], [isize; 3]) = {
                let mut st = lo;
                let mut d = [1isize; 3];
                for a in 0..3 {
                    if lo[a] < s_tot {
                        st[a] = lo[a] + 1;
                        d[a] = -1;
                    }
                }
                (st, d)
            };
            let outer = g.shell_of(lo.map(|i| i + 1)).max(g.shell_of(lo));
            let tag = group_end.iter().position(|&e| outer <= e).unwrap_or(0) as i32 + 1;
            PERMS.iter().map(move |p| {
                let mut cur = start;
                let mut t = [g.id(cur); 4];
                let mut step = [[0.0f64; 3]; 3];
                for k in 0..3 {
                    cur[p[k]] = (cur[p[k]] as isize + dir[p[k]]) as usize;
                    t[k + 1] = g.id(cur);
                    step[k][p[k]] = dir[p[k]] as f64;
                }
                // positive in index space (the map then keeps it positive)
                let e = |k: usize| [0, 1, 2].map(|a| step[..=k].iter().map(|s| s[a]).sum::<f64>());
                if det3(e(0), e(1), e(2)) < 0.0 {
                    t.swap(2, 3);
                }
                (t, tag)
            })
        })
        .unzip()
}

/// The outer surface: faces with all three nodes on the last shell, seen by one tet.
fn outer_faces(g: CubeGrid, tets: &[[u32; 4]]) -> Vec<([u32; 3], i32)> {
    let on_outer = |v: u32| g.shell_of(g.coords(v as usize)) == g.s_tot;
    let mut seen: std::collections::HashMap<[u32; 3], u32> = std::collections::HashMap::new();
    for t in tets {
        for skip in 0..4 {
            let mut f = [0u32; 3];
            let mut k = 0;
            for (i, &v) in t.iter().enumerate() {
                if i != skip {
                    f[k] = v;
                    k += 1;
                }
            }
            if f.iter().all(|&v| on_outer(v)) {
                f.sort_unstable();
                *seen.entry(f).or_insert(0) += 1;
            }
        }
    }
    seen.into_iter()
        .filter(|&(_, c)| c == 1)
        .map(|(f, _)| (f, 1))
        .collect()
}

/// Concentric balls: the equiangular "cubed sphere". A cube of `2S x 2S x 2S` cells
/// (Kuhn-split as [`box_mesh`]) is mapped so that the nodes with max-norm index `s` lie on
/// the sphere of radius `r_s`, at the direction `(tan(π u_x/4), tan(π u_y/4), tan(π u_z/4))`
/// normalised, `u` the node's position on the unit cube's surface: equal angles along every
/// cube-face line, so cells keep nearly equal size over the sphere (the plain projection
/// shrinks them fivefold in area towards the cube's corners).
///
/// `shells` lists the groups in increasing radius: the first is the inner ball of `n_first`
/// shells (radial step `h = r_1 / n_first`), each further group the spherical shell out to
/// its radius with `max(1, round(Δr / (step h)))` equal shells (`step` > 1 coarsens the
/// outer groups: their cells grow tangentially too, as `r_s / s` does). Every interface is the
/// inscribed polyhedron of its sphere (nodes exactly on it). Volume groups get tags 1.. in
/// this order; the outer surface is the group [`BALL_OUTER`]. `48 S³` tets, `S` the total
/// number of shells. Tangential cell size ≈ `π r_s / (4 s)`, radial `h`: near `0.8 h` and `h`
/// in the inner ball.
pub fn ball_mesh(n_first: usize, shells: &[Shell]) -> std::result::Result<Mesh, String> {
    let (radii, group_end) = shell_radii(n_first, shells)?;
    let s_tot = radii.len() - 1;
    if 48 * (s_tot as u128).pow(3) > u32::MAX as u128 {
        return Err(format!("{s_tot} shells make more than 2^32 tets"));
    }
    let g = CubeGrid { s_tot };
    let nodes = cubed_sphere_nodes(g, &radii);
    let (tets, phys) = radial_kuhn(g, &group_end);
    let surfaces = outer_faces(g, &tets);
    let mut names: Vec<PhysicalName> = shells
        .iter()
        .enumerate()
        .map(|(k, sh)| PhysicalName {
            dim: 3,
            tag: k as i32 + 1,
            name: sh.name.clone(),
        })
        .collect();
    names.push(PhysicalName {
        dim: 2,
        tag: 1,
        name: BALL_OUTER.into(),
    });
    let listing: Vec<String> = shells
        .iter()
        .map(|s| match s.step {
            1.0 => format!("{}={}", s.name, s.radius),
            f => format!("{}={}@{f}", s.name, s.radius),
        })
        .collect();
    let m = fresh(
        format!("ball {n_first}:{}", listing.join(",")),
        nodes,
        tets,
        phys,
        names,
        surfaces,
    );
    // the map keeps every Kuhn tet's orientation; a flip would be a distorted tet
    if m.reoriented > 0 {
        return Err(format!("{} tets inverted by the map", m.reoriented));
    }
    Ok(m)
}

/// The total number of shells `S` that [`ball_mesh`] makes of these groups (it makes
/// `48 S³` tets), without building anything.
pub fn ball_shells(n_first: usize, shells: &[Shell]) -> std::result::Result<usize, String> {
    // counted, not built: building the radii of `1:a=1,b=1e9` took 8 GB before the size
    // check could refuse it (issue 47 round five, an allocation abort)
    Ok(shell_counts(n_first, shells)?
        .iter()
        .fold(0usize, |a, &n| a.saturating_add(n)))
}

pub use super::interfaces::CurvedWall;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn box_volume_and_count() {
        let m = box_mesh([3, 4, 5], [1.0, 2.0, 3.0]);
        assert_eq!(m.n_tets(), 6 * 60);
        let v: f64 = (0..m.n_tets()).map(|n| m.tet_volume(n)).sum();
        assert!((v - 6.0).abs() < 1e-12);
        assert!((0..m.n_tets()).all(|n| m.tet_volume(n) > 0.0));
    }
    #[test]
    fn ball_groups_volumes_and_surface() {
        let shells = vec![
            Shell::new("core", 0.3),
            Shell::new("air", 0.75),
            Shell::new("pml", 1.0),
        ];
        let m = ball_mesh(5, &shells).unwrap();
        // 5 + round(0.45 / 0.06) = 8 + round(0.25/0.06) = 4 shells: S = 17
        assert_eq!(m.n_tets(), 48 * 17usize.pow(3));
        assert!((0..m.n_tets()).all(|n| m.tet_volume(n) > 0.0));
        // inscribed polyhedra: group volumes a little below the spheres', by O(h²)
        let vol = |tag: i32| -> f64 {
            (0..m.n_tets())
                .filter(|&n| m.tet_phys[n] == tag)
                .map(|n| m.tet_volume(n))
                .sum()
        };
        let ball = |r: f64| 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        for (tag, lo, hi) in [(1, 0.0, 0.3), (2, 0.3, 0.75), (3, 0.75, 1.0)] {
            let exact = ball(hi) - ball(lo);
            let rel = vol(tag) / exact - 1.0;
            assert!(rel < 0.0 && rel > -0.04, "group {tag}: {rel}");
        }
        // the outer surface: every node on the unit sphere
        for (f, tag) in &m.surfaces {
            assert_eq!(*tag, 1);
            for &v in f {
                assert!((norm(m.nodes[v as usize]) - 1.0).abs() < 1e-12);
            }
        }
        let t = super::super::Topology::build(&m).unwrap();
        assert_eq!(m.surfaces.len(), t.n_boundary_faces);
        assert!(t.boundary_faces.iter().all(|&(_, tag)| tag == 1));
        assert_eq!(m.volume_group("pml"), Some(3));
        assert!(ball_mesh(4, &[Shell::new("a", 1.0), Shell::new("b", 0.5)]).is_err());
        // a coarser outer group: 0.45 m at twice 0.06 m is 4 shells, not 8
        let mut coarse = shells.clone();
        coarse[1].step = 2.0;
        let c = ball_mesh(5, &coarse).unwrap();
        assert_eq!(c.n_tets(), 48 * 13usize.pow(3));
        assert!((0..c.n_tets()).all(|n| c.tet_volume(n) > 0.0));
    }
}
