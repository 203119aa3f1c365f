//! Every material and boundary key resolves to elements of the mesh, or says why not: a
//! key that would set nothing (a group with no tetrahedra, a surface group whose faces
//! are all interior), a name the mesh gives to two groups, two conditions on the same
//! wall face, and an absorbing layer that touches no outer wall are refused with the key
//! and the reason; what each key covers is counted for the run's log and `mesh-info`.
//!
//! Wall faces are matched to surface groups by membership, not by one tag per face: a
//! face in two groups (Gmsh allows overlapping physical groups, e.g. `walls` and `top`)
//! takes the condition named for either group; two different conditions on one face are
//! an error.

use super::{Boundary, BoundaryKind, Material, Metal, Walls};
use crate::error::{Error, Result};
use crate::mesh::{Mesh, Topology};
use std::collections::{BTreeMap, HashMap};

/// What each key of a problem covers: `(key, count)` of tets per material and of outer
/// wall faces per boundary, and warnings (interior faces of a boundary group, ignored).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Coverage {
    pub materials: Vec<(String, usize)>,
    pub boundaries: Vec<(String, usize)>,
    pub warnings: Vec<String>,
}

impl Coverage {
    /// One line for the run's log: `materials: glass 120 tets; boundaries: top 40 faces`.
    pub fn line(&self) -> Option<String> {
        let part = |what: &str, v: &[(String, usize)], unit: &str| {
            (!v.is_empty()).then(|| {
                format!(
                    "{what}: {}",
                    v.iter()
                        .map(|(k, n)| format!("{k} {n} {unit}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
        };
        let parts: Vec<String> = [
            part("materials", &self.materials, "tets"),
            part("boundaries", &self.boundaries, "wall faces"),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// The tags of the groups of dimension `dim` named `key` in the mesh; more than one is an
/// ambiguous key.
fn named(mesh: &Mesh, dim: i32, key: &str) -> Vec<i32> {
    let mut t: Vec<i32> = mesh
        .physical_names
        .iter()
        .filter(|p| p.dim == dim && p.name == key)
        .map(|p| p.tag)
        .collect();
    t.sort_unstable();
    t.dedup();
    t
}

fn ambiguous(what: &str, key: &str, dim: &str, tags: &[i32], mesh: &Mesh) -> Error {
    Error::config(
        what,
        key,
        format!(
            "{} names {} {dim} groups {key:?} (tags {}): the name does not say which; give the group by its tag",
            mesh.source,
            tags.len(),
            tags.iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

/// A key that is the name of one group and the tag of another (a group named "2" beside
/// the group of tag 2: round four S6, the key went to the named one without a word) is
/// refused, naming both. `by_tag` says whether a group of that tag exists.
fn name_and_tag(
    what: &str,
    key: &str,
    dim: i32,
    mesh: &Mesh,
    by_tag: impl Fn(i32) -> bool,
) -> Result<()> {
    let (Some(&named_tag), Ok(t)) = (named(mesh, dim, key).first(), key.trim().parse::<i32>())
    else {
        return Ok(());
    };
    if t == named_tag || !by_tag(t) {
        return Ok(());
    }
    let other = mesh
        .physical_names
        .iter()
        .find(|p| p.dim == dim && p.tag == t)
        .map(|p| format!("the group {:?} (tag {t})", p.name))
        .unwrap_or_else(|| format!("the unnamed group of tag {t}"));
    Err(Error::config(
        what,
        key,
        format!(
            "in {} this is both the name of the group {key:?} (tag {named_tag}) and the tag of {other}: the key does not say which; rename one of the groups in the mesh",
            mesh.source
        ),
    ))
}

/// The tag of a volume group key, refusing a name given to two groups.
fn volume_tag(mesh: &Mesh, key: &str) -> Result<i32> {
    let tags = named(mesh, 3, key);
    if tags.len() > 1 {
        return Err(ambiguous("material", key, "volume", &tags, mesh));
    }
    name_and_tag("material", key, 3, mesh, |t| mesh.has_volume_tag(t))?;
    mesh.volume_group(key).ok_or_else(|| Error::UnknownGroup {
        what: "material",
        key: key.to_string(),
        mesh: mesh.source.clone(),
        known: mesh.group_list(3),
    })
}

/// The tets each material covers (`(key, count)` in key order); a material on a group
/// with no tets, or on a name two volume groups share, is refused; an absorbing layer
/// that touches no outer wall face is refused (it absorbs what leaves the domain, so it
/// must lie against the outer wall; a lossy body inside is given `sigma` instead).
pub fn materials(
    mesh: &Mesh,
    topo: &Topology,
    materials: &BTreeMap<String, Material>,
) -> Result<Vec<(String, usize)>> {
    let mut out = Vec::with_capacity(materials.len());
    // the key that set each group: two keys for one group (its name and its tag) are
    // refused (round four S6: both were kept, and which applied was not said)
    let mut set_by: HashMap<i32, &str> = HashMap::new();
    // the material of each tet, where tets can be in several volume groups (MSH 4.1
    // entities in several physical groups): two materials on one tet are refused
    let mut owner: Vec<Option<&str>> = if mesh.tet_groups.is_empty() {
        Vec::new()
    } else {
        vec![None; mesh.n_tets()]
    };
    for (key, mat) in materials {
        let tag = volume_tag(mesh, key)?;
        if let Some(other) = set_by.insert(tag, key) {
            return Err(Error::config(
                "material",
                key,
                format!(
                    "names the same volume group (tag {tag}) of {} as the material {other:?}: give each group one material, by its name or by its tag",
                    mesh.source
                ),
            ));
        }
        let mask = mesh.volume_mask(tag);
        let n = mask.iter().filter(|&&b| b).count();
        if n == 0 {
            return Err(Error::config(
                "material",
                key,
                format!(
                    "the volume group {key:?} (tag {tag}) of {} holds no tetrahedra, so the material would set nothing (volume groups with tetrahedra: {})",
                    mesh.source,
                    mesh.group_list(3)
                ),
            ));
        }
        if !owner.is_empty() {
            for (k, _) in mask.iter().enumerate().filter(|m| *m.1) {
                if let Some(other) = owner[k].replace(key) {
                    return Err(Error::config(
                        "material",
                        key,
                        format!(
                            "tetrahedron {} of {} is in the volume groups {other:?} and {key:?}, and both are given a material: give a material to one of the groups that hold it",
                            mesh.tet_ids[k], mesh.source
                        ),
                    ));
                }
            }
        }
        if mat.absorbing {
            let touches = topo
                .boundary_faces
                .iter()
                .any(|&(f, _)| mask[topo.face_tets[f as usize][0] as usize]);
            if !touches {
                return Err(Error::config(
                    "absorbing",
                    key,
                    format!(
                        "the absorbing layer {key:?} touches no outer wall of {}: a layer absorbs the waves leaving the domain and must lie against its outer boundary (for a lossy body inside the domain, give sigma instead of absorbing = true)",
                        mesh.source
                    ),
                ));
            }
        }
        out.push((key.clone(), n));
    }
    Ok(out)
}

/// The walls of a mesh ([`Walls::resolve`]) with what each boundary key covers: every
/// outer face in a named surface group gets its condition, the rest PEC. Refused: a
/// boundary on a group with no faces, or only interior faces (between two tets, where a
/// wall condition does nothing), on a name two surface groups share, and a face in two
/// groups given different conditions. A group with some interior faces is accepted with a
/// warning (a group drawn across the domain as well as on its wall).
pub fn walls(
    mesh: &Mesh,
    topo: &Topology,
    boundaries: &BTreeMap<String, Boundary>,
) -> Result<(Walls, Coverage)> {
    let mut w = Walls::pec(topo);
    let mut cov = Coverage::default();
    if boundaries.is_empty() {
        return Ok((w, cov));
    }
    // outer face (sorted vertex triple) -> its index in boundary_faces
    let outer: HashMap<[u32; 3], usize> = topo
        .boundary_faces
        .iter()
        .enumerate()
        .map(|(k, &(f, _))| (topo.faces[f as usize], k))
        .collect();
    // the key that set each face, to name both in a conflict
    let mut set_by: Vec<Option<&str>> = vec![None; topo.boundary_faces.len()];
    for (key, b) in boundaries {
        b.validate(key)?;
        let tags = named(mesh, 2, key);
        if tags.len() > 1 {
            return Err(ambiguous("boundary", key, "surface", &tags, mesh));
        }
        name_and_tag("boundary", key, 2, mesh, |t| {
            mesh.surfaces.iter().any(|s| s.1 == t)
        })?;
        let tag = mesh.surface_group(key).ok_or_else(|| Error::UnknownGroup {
            what: "boundary",
            key: key.clone(),
            mesh: mesh.source.clone(),
            known: mesh.group_list(2),
        })?;
        let metal = (b.kind == BoundaryKind::Conductor).then(|| Metal {
            sigma: b.sigma.unwrap_or(f64::NAN),
            mu_r: b.mu_r.unwrap_or(1.0),
        });
        let (mut on_wall, mut inner, mut stray) = (0usize, 0usize, 0usize);
        for (tri, _) in mesh.surfaces.iter().filter(|s| s.1 == tag) {
            let Some(&k) = outer.get(tri) else {
                if crate::mesh::check::is_face(mesh, topo, tri) {
                    inner += 1;
                } else {
                    stray += 1;
                }
                continue;
            };
            on_wall += 1;
            if let Some(other) = set_by[k]
                && (w.kind[k] != b.kind || w.metal[k] != metal)
            {
                return Err(Error::config(
                    "boundary",
                    key,
                    format!(
                        "wall faces of {} are in both surface groups {other:?} and {key:?}, which are given different conditions ({} and {}); give one condition to the faces they share",
                        mesh.source,
                        w.kind[k].name(),
                        b.kind.name()
                    ),
                ));
            }
            set_by[k] = Some(key);
            w.kind[k] = b.kind;
            w.metal[k] = metal;
        }
        if on_wall == 0 {
            return Err(Error::config(
                "boundary",
                key,
                if inner + stray == 0 {
                    format!(
                        "the surface group {key:?} (tag {tag}) of {} has no faces, so the condition would set nothing",
                        mesh.source
                    )
                } else {
                    format!(
                        "none of the {} triangles of the surface group {key:?} (tag {tag}) of {} is on the outer boundary ({}): a wall condition acts on the outer boundary only, so it would set nothing",
                        inner + stray,
                        mesh.source,
                        stray_words(inner, stray)
                    )
                },
            ));
        }
        if inner + stray > 0 {
            cov.warnings.push(format!(
                "boundary {key}: {} of the {} triangles of its surface group are ignored ({}); the {} condition applies on its {on_wall} wall faces",
                inner + stray,
                inner + stray + on_wall,
                stray_words(inner, stray),
                b.kind.name()
            ));
        }
        cov.boundaries.push((key.clone(), on_wall));
    }
    Ok((w, cov))
}

/// "3 interior faces (between two tetrahedra), 1 triangle that is no face of any
/// tetrahedron", for messages.
fn stray_words(inner: usize, stray: usize) -> String {
    let mut w = Vec::new();
    if inner > 0 {
        w.push(format!(
            "{inner} interior face{} (between two tetrahedra)",
            if inner == 1 { "" } else { "s" }
        ));
    }
    if stray > 0 {
        w.push(format!(
            "{stray} triangle{} that {} no face of any tetrahedron",
            if stray == 1 { "" } else { "s" },
            if stray == 1 { "is" } else { "are" }
        ));
    }
    w.join(", ")
}

/// Each physical group of the mesh with what it holds, for `mesh-info`:
/// `3:1 "vacuum" (2609 tets)`, `2:2 "wall" (812 wall faces, 4 interior)`; groups without
/// a name are listed by tag.
pub fn group_summary(mesh: &Mesh, topo: &Topology) -> Vec<String> {
    let outer: std::collections::HashSet<[u32; 3]> = topo
        .boundary_faces
        .iter()
        .map(|&(f, _)| topo.faces[f as usize])
        .collect();
    let mut vol: BTreeMap<i32, usize> = BTreeMap::new();
    for &t in mesh
        .tet_phys
        .iter()
        .chain(mesh.tet_groups.iter().map(|g| &g.1))
    {
        *vol.entry(t).or_default() += 1;
    }
    let mut surf: BTreeMap<i32, (usize, usize, usize)> = BTreeMap::new();
    for (tri, t) in &mesh.surfaces {
        let e = surf.entry(*t).or_default();
        if outer.contains(tri) {
            e.0 += 1;
        } else if crate::mesh::check::is_face(mesh, topo, tri) {
            e.1 += 1;
        } else {
            e.2 += 1;
        }
    }
    let mut lines = Vec::new();
    let name = |dim: i32, tag: i32| {
        mesh.physical_names
            .iter()
            .filter(|p| p.dim == dim && p.tag == tag)
            .map(|p| format!(" {:?}", p.name))
            .collect::<String>()
    };
    for (&tag, &n) in &vol {
        lines.push(format!("3:{tag}{} ({n} tets)", name(3, tag)));
    }
    for (&tag, &(o, i, x)) in &surf {
        lines.push(format!(
            "2:{tag}{} ({o} wall faces{}{})",
            name(2, tag),
            if i > 0 {
                format!(", {i} interior")
            } else {
                String::new()
            },
            if x > 0 {
                format!(", {x} not faces of the mesh")
            } else {
                String::new()
            }
        ));
    }
    for p in &mesh.physical_names {
        let empty = match p.dim {
            3 => !vol.contains_key(&p.tag),
            2 => !surf.contains_key(&p.tag),
            _ => true,
        };
        if empty {
            lines.push(format!("{}:{} {:?} (no elements)", p.dim, p.tag, p.name));
        }
    }
    lines
}
