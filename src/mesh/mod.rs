//! Tetrahedral meshes: reading (Gmsh MSH 4.1 ASCII/binary, MSH 2.2 ASCII), validation,
//! topology and generators.
//!
//! Conventions (design note §2): every tetrahedron is stored positively oriented,
//! `det[x1-x0, x2-x0, x3-x0] > 0` (two vertices are swapped on input otherwise). Vertices
//! are numbered 0..V in the order of first use by a tetrahedron; nodes no tetrahedron
//! uses are dropped.

pub(crate) mod check;
pub(crate) mod generate;
pub(crate) mod gmsh;
mod head;
pub(crate) mod incidence;
pub(crate) mod interfaces;
pub(crate) mod order;
pub(crate) mod refine;
pub(crate) mod shape;
pub(crate) mod symmetry;
pub(crate) mod topology;

pub use check::check;
pub use generate::{BOX_WALLS, CurvedWall, box_mesh};
pub use gmsh::{parse as parse_gmsh, read as read_gmsh};
pub use interfaces::{SurfaceFit, SurfaceKey, Surfaces, Unfitted, fit as fit_surfaces};
pub use order::{MeshOrder, centroids, morton, shuffled};
pub use refine::{MIN_PROJECTED_VOLUME, refine, refine_onto, refine_region};
pub use shape::{Shape, detect as detect_shape, fit_round};
pub use topology::{LOCAL_EDGES, NONE};

use crate::error::{Error, Result};
use crate::util::{V3, det3, norm, sub};
pub use generate::Shell;
pub use shape::Fit as ShapeFit;
pub use topology::Topology;

/// A physical group as named in the mesh file.
#[derive(Clone, Debug, PartialEq)]
pub struct PhysicalName {
    pub dim: i32,
    pub tag: i32,
    pub name: String,
}

/// Relative volume below which a tetrahedron counts as degenerate: `6 |V| / l_max^3`
/// (1 for... a right-angled corner tet, 0.707 for the regular tet) must exceed this.
pub const DEGENERATE_SHAPE: f64 = 1e-8;

/// Longest edge accepted (m): the mass matrices hold volumes (l³) and inverse lengths, which
/// must stay finite in f64.
pub const MAX_LENGTH: f64 = 1e90;

/// A validated, positively oriented tetrahedral mesh.
#[derive(Clone, Debug)]
pub struct Mesh {
    /// Where the mesh came from (a path, or a generator description), used in messages.
    pub source: String,
    pub nodes: Vec<V3>,
    pub tets: Vec<[u32; 4]>,
    /// Physical tag of each tetrahedron (0 when the file gave none).
    pub tet_phys: Vec<i32>,
    /// Element tag of each tetrahedron in the file (for messages).
    pub tet_ids: Vec<u64>,
    /// Further volume groups of tetrahedra whose MSH 4.1 entity lies in several physical
    /// groups, beyond the first (which is in `tet_phys`): `(tet, tag)`, sorted; empty for
    /// most meshes. [`Mesh::in_volume_group`] reads both.
    pub tet_groups: Vec<(u32, i32)>,
    pub physical_names: Vec<PhysicalName>,
    /// Triangles of the file's physical surface groups: sorted vertex triple and physical
    /// tag (boundary conditions are keyed by these groups; a boundary face with no group
    /// has tag 0).
    pub surfaces: Vec<([u32; 3], i32)>,
    /// How many tetrahedra were reoriented on input.
    pub reoriented: usize,
    /// File ids of the surface-group triangles dropped on input because they use a node
    /// no tetrahedron uses (they bound no tetrahedron); [`check`] warns of them.
    pub dropped_triangles: Vec<u64>,
    /// What the file says that the solver does not apply (a `$Periodic` section: its walls
    /// are walls), each a sentence; [`check`] warns of them.
    pub ignored: Vec<String>,
}

/// A tetrahedron as read from a file, before validation.
#[derive(Clone, Debug)]
pub struct RawTet {
    pub id: u64,
    pub nodes: [u32; 4],
    pub phys: i32,
}

/// A triangle of a physical surface group as read from a file.
#[derive(Clone, Debug)]
pub struct RawTri {
    pub id: u64,
    pub nodes: [u32; 3],
    pub phys: i32,
}

impl Mesh {
    /// Validates raw input: at least one tet, every tet non-degenerate (reoriented if
    /// needed), no duplicated tets. Unused nodes are dropped (and triangles that use them:
    /// they bound no tetrahedron). Non-manifold faces are detected by [`Topology::build`].
    pub fn from_raw(
        source: &str,
        nodes: Vec<V3>,
        raw: Vec<RawTet>,
        tris: Vec<RawTri>,
        physical_names: Vec<PhysicalName>,
    ) -> Result<Mesh> {
        let invalid = |msg: String| Error::MeshInvalid {
            path: source.to_string(),
            msg,
        };
        if raw.is_empty() {
            return Err(invalid(
                "the mesh has no tetrahedra (mesh the volume: gmsh -3)".into(),
            ));
        }
        for t in &raw {
            for &v in &t.nodes {
                if v as usize >= nodes.len() {
                    return Err(invalid(format!(
                        "tetrahedron {} refers to a missing node (index {v})",
                        t.id
                    )));
                }
            }
            if let Some(x) = t
                .nodes
                .iter()
                .map(|&v| nodes[v as usize])
                .find(|p| p.iter().any(|c| !c.is_finite()))
            {
                return Err(invalid(format!(
                    "tetrahedron {} has a node with a non-finite coordinate {:?}",
                    t.id, x
                )));
            }
        }
        // Compact the node numbering to used nodes, in order of first use.
        let mut map = vec![u32::MAX; nodes.len()];
        let mut new_nodes = Vec::new();
        let mut tets = Vec::with_capacity(raw.len());
        let mut tet_phys = Vec::with_capacity(raw.len());
        let mut tet_ids = Vec::with_capacity(raw.len());
        let mut reoriented = 0;
        for t in &raw {
            let mut tv = [0u32; 4];
            for (k, &v) in t.nodes.iter().enumerate() {
                if map[v as usize] == u32::MAX {
                    map[v as usize] = new_nodes.len() as u32;
                    new_nodes.push(nodes[v as usize]);
                }
                tv[k] = map[v as usize];
            }
            let x: Vec<V3> = tv.iter().map(|&v| new_nodes[v as usize]).collect();
            let lmax = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
                .iter()
                .map(|&(i, j)| norm(sub(x[i], x[j])))
                .fold(0.0, f64::max);
            if !(lmax.is_finite() && lmax < MAX_LENGTH) {
                return Err(invalid(format!(
                    "tetrahedron {} has coordinates out of range (an edge of {lmax:.3e} m; edges up to {MAX_LENGTH:.0e} m keep volumes and mass matrices finite)",
                    t.id
                )));
            }
            let d = det3(sub(x[1], x[0]), sub(x[2], x[0]), sub(x[3], x[0]));
            // relative volume from the edge vectors scaled by the longest edge (no overflow)
            let sc = |v: V3| crate::util::scale(v, 1.0 / lmax);
            // the orientation from the scaled determinant too: `d` underflows to 0 for a
            // mesh in units of 1e-110
            let signed = det3(
                sc(sub(x[1], x[0])),
                sc(sub(x[2], x[0])),
                sc(sub(x[3], x[0])),
            );
            let shape = signed.abs();
            if !(shape > DEGENERATE_SHAPE) {
                return Err(invalid(format!(
                    "tetrahedron {} is degenerate: volume {:.3e} m^3 with longest edge {:.3e} m \
                     (relative volume {:.1e} < {:.0e})",
                    t.id,
                    d.abs() / 6.0,
                    lmax,
                    shape,
                    DEGENERATE_SHAPE
                )));
            }
            if signed < 0.0 {
                tv.swap(2, 3);
                reoriented += 1;
            }
            tets.push(tv);
            tet_phys.push(t.phys);
            tet_ids.push(t.id);
        }
        check_duplicates(&tets, &tet_ids).map_err(invalid)?;
        let mut dropped_triangles = Vec::new();
        let mut surfaces: Vec<([u32; 3], i32)> = tris
            .iter()
            .filter_map(|t| {
                let mut k = [0u32; 3];
                for (s, &v) in t.nodes.iter().enumerate() {
                    match map.get(v as usize).filter(|&&x| x != u32::MAX) {
                        Some(&x) => k[s] = x,
                        None => {
                            dropped_triangles.push(t.id);
                            return None;
                        }
                    }
                }
                k.sort_unstable();
                Some((k, t.phys))
            })
            .collect();
        surfaces.sort_unstable();
        surfaces.dedup();
        dropped_triangles.sort_unstable();
        dropped_triangles.dedup();
        Ok(Mesh {
            source: source.to_string(),
            nodes: new_nodes,
            tets,
            tet_phys,
            tet_ids,
            tet_groups: Vec::new(),
            physical_names,
            surfaces,
            reoriented,
            dropped_triangles,
            ignored: Vec::new(),
        })
    }

    /// Whether tetrahedron `n` is in the volume group of tag `tag` (its first group,
    /// `tet_phys`, or a further one, `tet_groups`).
    pub fn in_volume_group(&self, n: usize, tag: i32) -> bool {
        self.tet_phys[n] == tag
            || (!self.tet_groups.is_empty()
                && self.tet_groups.binary_search(&(n as u32, tag)).is_ok())
    }

    /// Which tetrahedra are in the volume group of tag `tag`.
    pub fn volume_mask(&self, tag: i32) -> Vec<bool> {
        let mut m: Vec<bool> = self.tet_phys.iter().map(|&t| t == tag).collect();
        for &(n, t) in &self.tet_groups {
            if t == tag {
                m[n as usize] = true;
            }
        }
        m
    }

    /// Whether a tetrahedron is in the volume group of tag `tag`.
    pub fn has_volume_tag(&self, tag: i32) -> bool {
        self.tet_phys.contains(&tag) || self.tet_groups.iter().any(|g| g.1 == tag)
    }

    /// The tags of the volume groups that hold tetrahedra (sorted, each once).
    pub fn volume_tags(&self) -> Vec<i32> {
        let mut tags: Vec<i32> = self.tet_phys.clone();
        tags.extend(self.tet_groups.iter().map(|g| g.1));
        tags.sort_unstable();
        tags.dedup();
        tags
    }

    pub fn n_tets(&self) -> usize {
        self.tets.len()
    }
    pub fn n_vertices(&self) -> usize {
        self.nodes.len()
    }

    /// Corner coordinates of tetrahedron `n`.
    #[inline]
    pub fn tet_x(&self, n: usize) -> [V3; 4] {
        let t = self.tets[n];
        [
            self.nodes[t[0] as usize],
            self.nodes[t[1] as usize],
            self.nodes[t[2] as usize],
            self.nodes[t[3] as usize],
        ]
    }

    /// Volume of tetrahedron `n` (positive).
    pub fn tet_volume(&self, n: usize) -> f64 {
        let x = self.tet_x(n);
        det3(sub(x[1], x[0]), sub(x[2], x[0]), sub(x[3], x[0])) / 6.0
    }

    /// Axis-aligned bounding box (min, max).
    pub fn bbox(&self) -> (V3, V3) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in &self.nodes {
            for c in 0..3 {
                lo[c] = lo[c].min(p[c]);
                hi[c] = hi[c].max(p[c]);
            }
        }
        (lo, hi)
    }

    /// Barycentric coordinates of `p` in tet `n`.
    pub fn barycentric(&self, n: usize, p: V3) -> [f64; 4] {
        let x = self.tet_x(n);
        let d = det3(sub(x[1], x[0]), sub(x[2], x[0]), sub(x[3], x[0]));
        let l1 = det3(sub(p, x[0]), sub(x[2], x[0]), sub(x[3], x[0])) / d;
        let l2 = det3(sub(x[1], x[0]), sub(p, x[0]), sub(x[3], x[0])) / d;
        let l3 = det3(sub(x[1], x[0]), sub(x[2], x[0]), sub(p, x[0])) / d;
        [1.0 - l1 - l2 - l3, l1, l2, l3]
    }

    /// The tetrahedron containing `p` (the one with the largest minimum barycentric
    /// coordinate, which must be >= -1e-9, the lowest index among equals), searched in
    /// parallel ([`Self::locate_all`]).
    pub fn locate(&self, p: V3) -> Option<usize> {
        self.locate_all(&[p])[0]
    }

    /// [`Self::locate`] of every point of `ps`, in one pass over the tets. Only tets whose
    /// bounding box, widened by 1e-7 of its largest side, holds a point are solved for it: a
    /// point with every barycentric coordinate >= -1e-9 lies within 4e-9 of that side of
    /// the box, so the answer is that of solving every tet.
    pub fn locate_all(&self, ps: &[V3]) -> Vec<Option<usize>> {
        use rayon::prelude::*;
        let none = || vec![(f64::NEG_INFINITY, usize::MAX); ps.len()];
        let better = |a: (f64, usize), b: (f64, usize)| b.0 > a.0 || (b.0 == a.0 && b.1 < a.1);
        let best = (0..self.n_tets())
            .into_par_iter()
            .fold(none, |mut acc, n| {
                let x = self.tet_x(n);
                let lo: V3 =
                    std::array::from_fn(|c| x.iter().map(|v| v[c]).fold(f64::INFINITY, f64::min));
                let hi: V3 = std::array::from_fn(|c| {
                    x.iter().map(|v| v[c]).fold(f64::NEG_INFINITY, f64::max)
                });
                let m = 1e-7 * (0..3).map(|c| hi[c] - lo[c]).fold(0.0, f64::max);
                for (k, p) in ps.iter().enumerate() {
                    if (0..3).all(|c| p[c] >= lo[c] - m && p[c] <= hi[c] + m) {
                        let l = self.barycentric(n, *p);
                        let cand = (l.iter().cloned().fold(f64::INFINITY, f64::min), n);
                        if better(acc[k], cand) {
                            acc[k] = cand;
                        }
                    }
                }
                acc
            })
            .reduce(none, |a, b| {
                a.into_iter()
                    .zip(b)
                    .map(|(a, b)| if better(a, b) { b } else { a })
                    .collect()
            });
        best.into_iter()
            .map(|b| (b.0 >= -1e-9).then_some(b.1))
            .collect()
    }

    /// Physical tag of a volume group given by name or by number.
    pub fn volume_group(&self, key: &str) -> Option<i32> {
        self.group(3, key)
            .or_else(|| key.parse().ok().filter(|&t| self.has_volume_tag(t)))
    }

    /// Physical tag of a surface group given by name or by number.
    pub fn surface_group(&self, key: &str) -> Option<i32> {
        self.group(2, key).or_else(|| {
            key.parse()
                .ok()
                .filter(|t| self.surfaces.iter().any(|s| s.1 == *t))
        })
    }

    fn group(&self, dim: i32, name: &str) -> Option<i32> {
        self.physical_names
            .iter()
            .find(|p| p.dim == dim && p.name == name)
            .map(|p| p.tag)
    }

    /// "name (tag), ..." of the groups of dimension `dim`, for messages.
    pub fn group_list(&self, dim: i32) -> String {
        let mut known: Vec<String> = self
            .physical_names
            .iter()
            .filter(|p| p.dim == dim)
            .map(|p| format!("{} ({})", p.name, p.tag))
            .collect();
        let mut tags: Vec<i32> = if dim == 3 {
            self.volume_tags()
        } else {
            self.surfaces.iter().map(|s| s.1).collect()
        };
        tags.sort_unstable();
        tags.dedup();
        for t in tags {
            if t != 0
                && !self
                    .physical_names
                    .iter()
                    .any(|p| p.dim == dim && p.tag == t)
            {
                known.push(t.to_string());
            }
        }
        if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        }
    }

    /// Quality figures: min/max edge length and the minimum and mean of the normalised
    /// radius ratio `3 r_in / r_circ`-like shape measure `6 sqrt(2) V / l_rms^3` (1 for the
    /// regular tet).
    pub fn quality(&self) -> Quality {
        use rayon::prelude::*;
        let per: Vec<(f64, f64, f64)> = (0..self.n_tets())
            .into_par_iter()
            .map(|n| {
                let x = self.tet_x(n);
                let mut lmin = f64::INFINITY;
                let mut lmax: f64 = 0.0;
                let mut l2 = 0.0;
                for (i, j) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
                    let l = norm(sub(x[i], x[j]));
                    lmin = lmin.min(l);
                    lmax = lmax.max(l);
                    l2 += l * l;
                }
                let lrms = (l2 / 6.0).sqrt();
                let q = 6.0 * 2f64.sqrt() * self.tet_volume(n) / (lrms * lrms * lrms);
                (lmin, lmax, q)
            })
            .collect();
        let mut q = Quality {
            min_edge: f64::INFINITY,
            max_edge: 0.0,
            min_shape: f64::INFINITY,
            mean_shape: 0.0,
            volume: 0.0,
        };
        for (n, &(a, b, s)) in per.iter().enumerate() {
            q.min_edge = q.min_edge.min(a);
            q.max_edge = q.max_edge.max(b);
            q.min_shape = q.min_shape.min(s);
            q.mean_shape += s;
            q.volume += self.tet_volume(n);
        }
        q.mean_shape /= per.len() as f64;
        q
    }
}

/// Refuses two tetrahedra with the same four nodes (naming them by their file ids).
fn check_duplicates(tets: &[[u32; 4]], tet_ids: &[u64]) -> std::result::Result<(), String> {
    let mut keys: Vec<([u32; 4], usize)> = tets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut k = *t;
            k.sort_unstable();
            (k, i)
        })
        .collect();
    keys.sort_unstable();
    for w in keys.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(format!(
                "tetrahedra {} and {} are duplicates (same four nodes)",
                tet_ids[w[0].1], tet_ids[w[1].1]
            ));
        }
    }
    Ok(())
}

/// The cylinder meshes of `meshes/` (`coarse`, `medium`, `fine`), compiled into the binary
/// so the main job runs from anywhere (and on machines the repository is not copied to).
pub fn bundled(name: &str) -> Result<&'static [u8]> {
    Ok(match name {
        "coarse" => include_bytes!("../../meshes/cylinder_coarse.msh"),
        "medium" => include_bytes!("../../meshes/cylinder_medium.msh"),
        "fine" => include_bytes!("../../meshes/cylinder_fine.msh"),
        _ => {
            return Err(Error::config(
                "mesh",
                format!("bundled:{name}"),
                "bundled meshes are coarse, medium and fine",
            ));
        }
    })
}

/// Mesh quality summary printed by `dgatd mesh-info`.
#[derive(Clone, Debug)]
pub struct Quality {
    pub min_edge: f64,
    pub max_edge: f64,
    /// `6 sqrt(2) V / l_rms^3`: 1 for a regular tetrahedron, 0 for a flat one.
    pub min_shape: f64,
    pub mean_shape: f64,
    pub volume: f64,
}
