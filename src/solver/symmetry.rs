//! Symmetry planes of a run (key `symmetry`, flag `--symmetry`): a resonator mirror-
//! symmetric about the planes `x = x0`, `y = y0`, `z = z0` is stepped on the part of its
//! mesh on one side of each given plane, with a PEC or PMC wall on the plane, and gives the
//! modes of that symmetry class ([`crate::mesh::symmetry`]: tangential E zero on a `pec`
//! plane, tangential H zero on a `pmc` plane). One plane halves the run, two quarter it.
//!
//! Forms, as the other small languages of a configuration ([`super::spec`]):
//! - the string the flag takes, `symmetry = "x=pmc,y=pec"`, planes through the origin, or
//!   `"x=pmc,y=pec:X0,Y0,Z0"` through the point `(X0, Y0, Z0)` (m);
//! - a table, `[symmetry]` with `x = "pmc"`, `y = "pec"`, `z = …` and
//!   `origin = [X0, Y0, Z0]` (default `[0, 0, 0]`).
//!
//! The faces on each plane form the surface group `symmetry_x` (`_y`, `_z`), which gets
//! the plane's condition like any `[boundaries.NAME]` entry; a configuration may not name a
//! boundary so. The mesh must have faces on each plane (a Gmsh mesh of the whole resonator
//! made with the planes as surfaces, the generated box and ball through their centres, or
//! a mesh of the half already cut); a tet across a plane is refused, naming it. A given
//! source or probe on the cut-away side is refused; one on a plane is warned of (on a `pec`
//! plane its tangential field is zero).

use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::mesh::symmetry::{Plane, cut};
use crate::problem::{Boundary, BoundaryKind};
use crate::util::V3;
use std::fmt;
use std::str::FromStr;

const AXES: [&str; 3] = ["x", "y", "z"];

/// The symmetry planes of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SymmetrySpec {
    /// The wall on the plane normal to x, y, z (None: no plane on that axis).
    pub walls: [Option<BoundaryKind>; 3],
    /// A point of every plane (m).
    pub origin: V3,
}

impl SymmetrySpec {
    /// Checks a spec; `value` is how it was given, for errors.
    pub fn new(walls: [Option<BoundaryKind>; 3], origin: V3, value: &str) -> Result<Self> {
        let bad = |why: &str| Error::config("symmetry", value, why);
        if walls.iter().all(Option::is_none) {
            return Err(bad(
                "names no plane: give x=, y= or z= with pec or pmc (e.g. x=pmc,y=pec)",
            ));
        }
        if walls
            .iter()
            .flatten()
            .any(|k| !matches!(k, BoundaryKind::Pec | BoundaryKind::Pmc))
        {
            return Err(bad(
                "a symmetry plane is a pec or a pmc wall (the mirror image of the field)",
            ));
        }
        if origin.iter().any(|c| !c.is_finite()) {
            return Err(bad("the origin must be three finite numbers (m)"));
        }
        Ok(SymmetrySpec { walls, origin })
    }

    /// The planes with their walls, in axis order.
    pub fn planes(&self) -> impl Iterator<Item = (Plane, BoundaryKind)> + '_ {
        (0..3).filter_map(|a| {
            self.walls[a].map(|k| {
                (
                    Plane {
                        axis: a,
                        at: self.origin[a],
                    },
                    k,
                )
            })
        })
    }

    /// The surface group of the plane normal to `axis`.
    pub fn group(axis: usize) -> String {
        format!("symmetry_{}", AXES[axis])
    }

    /// The boundary entries of the planes (`symmetry_x` → its wall).
    pub fn boundaries(&self) -> Vec<(String, Boundary)> {
        self.planes()
            .map(|(p, k)| (Self::group(p.axis), Boundary::of(k)))
            .collect()
    }

    /// Whether some plane is a PMC wall (the analytic catalogues assume PEC walls).
    pub fn has_pmc(&self) -> bool {
        self.walls.contains(&Some(BoundaryKind::Pmc))
    }

    /// The part of `mesh` the run steps: cut at each plane in turn.
    pub fn cut_mesh(&self, mesh: Mesh) -> Result<Mesh> {
        let mut m = mesh;
        for (plane, _) in self.planes() {
            m = cut(&m, plane, &Self::group(plane.axis))?.0;
        }
        Ok(m)
    }

    /// The largest extent (m) of the whole resonator, of which `mesh` (the cut mesh) is
    /// the part on one side of each plane: its box mirrored about each plane. The run's
    /// defaults (pulse, band, record length: [`super::defaults::Scales`]) are the whole
    /// model's, so that each class's run sees the same band.
    pub fn whole_extent(&self, mesh: &Mesh) -> f64 {
        let (mut lo, mut hi) = mesh.bbox();
        for (plane, _) in self.planes() {
            let (a, c) = (plane.axis, plane.at);
            (lo[a], hi[a]) = (lo[a].min(2.0 * c - hi[a]), hi[a].max(2.0 * c - lo[a]));
        }
        (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max)
    }

    /// A given point (`what`: "source", "probe") on the cut-away side of a plane is an
    /// error; one within `1e-6` of the extent of a plane gets a warning. `mesh` is the cut
    /// mesh: the side it lies on is the side kept.
    pub fn check_point(&self, what: &str, p: V3, mesh: &Mesh) -> Result<Option<String>> {
        let (lo, hi) = mesh.bbox();
        let extent = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
        let tol = 1e-6 * extent;
        for (plane, kind) in self.planes() {
            let a = plane.axis;
            // the kept side: the cut mesh lies on it
            let side = if lo[a] >= plane.at - 1e-9 * extent {
                1.0
            } else {
                -1.0
            };
            let s = side * (p[a] - plane.at);
            if s < -tol {
                return Err(Error::config(
                    what,
                    format!("{:?}", p),
                    format!(
                        "lies on the side of the symmetry plane {} that the run cuts away (it steps the side {} {} {}); give the mirror point",
                        plane.describe(),
                        AXES[a],
                        if side > 0.0 { ">" } else { "<" },
                        plane.at
                    ),
                ));
            }
            if s <= tol {
                return Ok(Some(format!(
                    "warning: the {what} {p:?} lies on the symmetry plane {} ({}){}",
                    plane.describe(),
                    kind.name(),
                    if kind == BoundaryKind::Pec {
                        ": the tangential field is zero there"
                    } else {
                        ": the normal field is zero there"
                    }
                )));
            }
        }
        Ok(None)
    }
}

impl FromStr for SymmetrySpec {
    type Err = Error;
    /// `x=pmc,y=pec[:X0,Y0,Z0]`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: String| Error::config("symmetry", s, why);
        let (planes, origin) = match s.split_once(':') {
            Some((p, o)) => (p, super::spec::parse_point("symmetry", o)?),
            None => (s, [0.0; 3]),
        };
        let mut walls = [None; 3];
        for part in planes.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((ax, kind)) = part.split_once('=') else {
                return Err(bad(format!("{part:?} is not AXIS=KIND (e.g. x=pmc,y=pec)")));
            };
            let a = AXES
                .iter()
                .position(|&x| x == ax.trim())
                .ok_or_else(|| bad(format!("unknown axis {:?}: x, y or z", ax.trim())))?;
            if walls[a].is_some() {
                return Err(bad(format!("the axis {} is given twice", AXES[a])));
            }
            walls[a] = Some(kind.trim().parse::<BoundaryKind>().map_err(|_| {
                bad(format!(
                    "unknown wall {:?} for {}: pec or pmc",
                    kind.trim(),
                    AXES[a]
                ))
            })?);
        }
        SymmetrySpec::new(walls, origin, s)
    }
}

impl fmt::Display for SymmetrySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = (0..3)
            .filter_map(|a| self.walls[a].map(|k| format!("{}={}", AXES[a], k.name())))
            .collect();
        f.write_str(&parts.join(","))?;
        if self.origin != [0.0; 3] {
            let [x, y, z] = self.origin;
            write!(f, ":{x},{y},{z}")?;
        }
        Ok(())
    }
}

/// The table form of [`SymmetrySpec`].
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SymmetryTable {
    #[serde(default)]
    x: Option<BoundaryKind>,
    #[serde(default)]
    y: Option<BoundaryKind>,
    #[serde(default)]
    z: Option<BoundaryKind>,
    #[serde(default)]
    origin: Option<V3>,
}

impl TryFrom<SymmetryTable> for SymmetrySpec {
    type Error = Error;
    fn try_from(t: SymmetryTable) -> Result<SymmetrySpec> {
        let walls = [t.x, t.y, t.z];
        let origin = t.origin.unwrap_or([0.0; 3]);
        let shown = SymmetrySpec { walls, origin }.to_string();
        SymmetrySpec::new(walls, origin, &shown)
    }
}

super::spec::string_or_table!(
    SymmetrySpec,
    SymmetryTable,
    "symmetry planes \"x=pmc,y=pec[:X0,Y0,Z0]\" or a table with x, y, z = \"pec\" | \"pmc\" and origin = [X0, Y0, Z0]"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_tables_read_to_the_same_planes() {
        for (given, canonical) in [
            ("x=pmc", "x=pmc"),
            (" y = pec , x=pmc ", "x=pmc,y=pec"),
            ("z=pec:0.5,0,-1", "z=pec:0.5,0,-1"),
            ("x=pec,y=pec,z=pmc:0,0,0", "x=pec,y=pec,z=pmc"),
        ] {
            let s: SymmetrySpec = given.parse().unwrap();
            assert_eq!(s.to_string(), canonical);
            assert_eq!(canonical.parse::<SymmetrySpec>().unwrap(), s);
        }
        #[derive(serde::Deserialize)]
        struct W {
            symmetry: SymmetrySpec,
        }
        let t: W = toml::from_str("[symmetry]\nx = \"pmc\"\nz = \"pec\"\norigin = [0.5, 0, -1]\n")
            .unwrap();
        assert_eq!(t.symmetry, "x=pmc,z=pec:0.5,0,-1".parse().unwrap());
        let s: W = toml::from_str("symmetry = \"y=pmc\"\n").unwrap();
        assert_eq!(s.symmetry.walls, [None, Some(BoundaryKind::Pmc), None]);
        assert_eq!(
            s.symmetry.boundaries(),
            vec![("symmetry_y".to_string(), Boundary::of(BoundaryKind::Pmc))]
        );
    }

    #[test]
    fn bad_planes_name_the_key_and_the_fault() {
        for (given, says) in [
            ("", "names no plane"),
            ("x", "is not AXIS=KIND"),
            ("w=pec", "unknown axis"),
            ("x=pec,x=pmc", "given twice"),
            ("x=abc", "a symmetry plane is a pec or a pmc wall"),
            ("x=metal", "unknown wall"),
            ("x=pec:1,2", "three"),
        ] {
            let e = given.parse::<SymmetrySpec>().unwrap_err().to_string();
            assert!(e.contains("symmetry") && e.contains(says), "{given}: {e}");
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct W {
            symmetry: SymmetrySpec,
        }
        let e = toml::from_str::<W>("[symmetry]\nx = \"pmc\"\nw = \"pec\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field"), "{e}");
    }
}
