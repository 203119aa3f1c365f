//! The small languages of a run's configuration as typed data: the generated box
//! ([`BoxSpec`], key `box`, flag `--box`), the generated concentric balls ([`BallSpec`],
//! key `ball`, flag `--ball`) and the analytic cavity to compare with ([`CavitySpec`], key
//! `cavity`, flag `--cavity`).
//!
//! Each reads two forms in a configuration file:
//!
//! - today's string, the same as the flag takes:
//!   `box = "10,8,6:1,0.8,0.6"`, `ball = "2:sphere=1,near=2@1,air=6@2"`,
//!   `cavity = "cylinder:0.1,0.2"`;
//! - a table:
//!   `[box]` with `cells = [10, 8, 6]` and `size = [1, 0.8, 0.6]` (m, default `[1, 1, 1]`);
//!   `[ball]` with `shells = 2` and `regions = [{ name = "sphere", radius = 1 },
//!   { name = "air", radius = 6, step = 2 }]` (`step` default 1);
//!   `[cavity]` with `kind = "cylinder"`, `radius`, `height`; `kind = "box"`, `a`, `b`, `d`;
//!   `kind = "sphere"`, `radius`.
//!
//! Both forms are checked by the same rules, and an error names the key and what is wrong
//! (`invalid ball = 2:core=0.3,air=0.2: radii must increase`). Each is written back
//! ([`std::fmt::Display`], and so in `run.toml`) as the canonical string, which reads
//! back to the same value; flags parse through [`std::str::FromStr`].

use crate::error::{Error, Result};
use crate::mesh::generate::{BALL_OUTER, Shell};
use crate::spectrum::analytic::Cavity;
use crate::util::V3;
use std::fmt;
use std::str::FromStr;

/// The largest ratio of a `--box` cell's longest to shortest side: beyond it the tets are
/// slivers whose hexahedral mass matrices lose all accuracy in f64.
pub const MAX_BOX_ASPECT: f64 = 1e6;

/// A generated box ([`crate::mesh::generate::box_mesh`]): cells per axis and side lengths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxSpec {
    /// Cells along x, y, z (each at least 1).
    pub cells: [usize; 3],
    /// Side lengths (m), each between 1e-12 and 1e12.
    pub size: V3,
}

impl BoxSpec {
    /// Checks the counts, the sides and the cells' aspect ratio; `value` is shown in the
    /// error (the string as given).
    pub fn new(cells: [usize; 3], size: V3, value: &str) -> Result<BoxSpec> {
        let bad = |why: &str| Error::config("box", value, why.to_string());
        if cells.contains(&0) || size.iter().any(|&x| !(x > 0.0)) {
            return Err(bad("cells must be >= 1 and sides positive"));
        }
        if size.iter().any(|&x| !(1e-12..=1e12).contains(&x)) {
            return Err(bad("sides must be between 1e-12 m and 1e12 m"));
        }
        let h: Vec<f64> = (0..3).map(|c| size[c] / cells[c] as f64).collect();
        let aspect =
            h.iter().cloned().fold(0.0, f64::max) / h.iter().cloned().fold(f64::MAX, f64::min);
        if aspect > MAX_BOX_ASPECT {
            return Err(bad(&format!(
                "its cells have an aspect ratio of {aspect:.3e}; at most {MAX_BOX_ASPECT:e} is accepted (more cells along the long sides, or less elongated sides)"
            )));
        }
        Ok(BoxSpec { cells, size })
    }
}

impl FromStr for BoxSpec {
    type Err = Error;

    /// `NX,NY,NZ[:LX,LY,LZ]` (sides default 1 m).
    fn from_str(b: &str) -> Result<BoxSpec> {
        let bad = |why: &str| Error::config("box", b, why.to_string());
        let (n, l) = b.split_once(':').unwrap_or((b, "1,1,1"));
        let n: Vec<usize> = n
            .split(',')
            .map(|x| x.trim().parse())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad("expected NX,NY,NZ[:LX,LY,LZ]"))?;
        let l = parse_point("box", l)?;
        if n.len() != 3 {
            return Err(bad("expected three cell counts"));
        }
        BoxSpec::new([n[0], n[1], n[2]], l, b)
    }
}

impl fmt::Display for BoxSpec {
    /// `NX,NY,NZ` when the sides are 1 m, else `NX,NY,NZ:LX,LY,LZ`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.cells;
        write!(f, "{x},{y},{z}")?;
        if self.size != [1.0; 3] {
            let [a, b, c] = self.size;
            write!(f, ":{a},{b},{c}")?;
        }
        Ok(())
    }
}

/// The table form of `box`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxTable {
    cells: [usize; 3],
    #[serde(default = "unit_sides")]
    size: V3,
}

fn unit_sides() -> V3 {
    [1.0; 3]
}

impl TryFrom<BoxTable> for BoxSpec {
    type Error = Error;
    fn try_from(t: BoxTable) -> Result<BoxSpec> {
        let shown = BoxSpec {
            cells: t.cells,
            size: t.size,
        }
        .to_string();
        BoxSpec::new(t.cells, t.size, &shown)
    }
}

/// Generated concentric balls ([`crate::mesh::generate::ball_mesh`]): shells across the
/// first radius, then each group's name, outer radius and radial step.
#[derive(Clone, Debug, PartialEq)]
pub struct BallSpec {
    /// Shells across the first group's radius (1 to 512).
    pub shells: usize,
    /// The volume groups from the centre out: radii (m) increasing, steps in units of the
    /// first group's (1 for the first, 1 to 100 for the others).
    pub regions: Vec<Shell>,
}

/// The `ball` format, for messages.
const BALL_EXPECTED: &str = "expected N:NAME=R[@F],NAME=R[@F],.. (shells across the first radius, then each group's name and outer radius in m, increasing, with an optional radial step F >= 1 times the first group's)";

impl BallSpec {
    /// Checks the shell count and the regions; `value` is shown in the error.
    pub fn new(shells: usize, regions: Vec<Shell>, value: &str) -> Result<BallSpec> {
        let bad = |why: &str| Error::config("ball", value, why.to_string());
        if !(1..=512).contains(&shells) {
            return Err(bad("N must be between 1 and 512"));
        }
        if regions.is_empty() {
            return Err(bad(BALL_EXPECTED));
        }
        for (i, s) in regions.iter().enumerate() {
            let (name, r, step) = (s.name.as_str(), s.radius, s.step);
            if !(1.0..=100.0).contains(&step) || (i == 0 && step != 1.0) {
                return Err(bad(
                    "a radial step F must be between 1 and 100, and the first group has none",
                ));
            }
            if name.is_empty() || name == BALL_OUTER {
                return Err(bad(
                    "group names must be non-empty and not \"outer\" (the outer surface)",
                ));
            }
            if regions[..i].iter().any(|p| p.name == name) {
                return Err(bad(&format!("the group {name:?} is named twice")));
            }
            if !(1e-12..=1e12).contains(&r) {
                return Err(bad("radii must be between 1e-12 m and 1e12 m"));
            }
            if i > 0 && r <= regions[i - 1].radius {
                return Err(bad("radii must increase"));
            }
        }
        Ok(BallSpec { shells, regions })
    }
}

impl FromStr for BallSpec {
    type Err = Error;

    /// `N:NAME=R[@F],NAME=R[@F],..`.
    fn from_str(b: &str) -> Result<BallSpec> {
        let bad = || Error::config("ball", b, BALL_EXPECTED);
        let (n, list) = b.split_once(':').ok_or_else(bad)?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        // the count is checked before the list, as the message about it is the plainer
        if !(1..=512).contains(&n) {
            return Err(Error::config("ball", b, "N must be between 1 and 512"));
        }
        let mut regions = Vec::new();
        for item in list.split(',') {
            let (name, r) = item.split_once('=').ok_or_else(bad)?;
            let (r, step) = r.split_once('@').unwrap_or((r, "1"));
            regions.push(Shell {
                name: name.trim().to_string(),
                radius: r.trim().parse().map_err(|_| bad())?,
                step: step.trim().parse().map_err(|_| bad())?,
            });
            // each region is checked as it is read, so that the first fault is the one named
            BallSpec::new(n, regions.clone(), b)?;
        }
        BallSpec::new(n, regions, b)
    }
}

impl fmt::Display for BallSpec {
    /// `N:NAME=R,NAME=R@F,..` (`@F` only where the step is not 1).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.shells)?;
        for (i, s) in self.regions.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}={}", s.name, s.radius)?;
            if s.step != 1.0 {
                write!(f, "@{}", s.step)?;
            }
        }
        Ok(())
    }
}

/// The table form of `ball`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BallTable {
    shells: usize,
    regions: Vec<RegionTable>,
}

/// One region of the table form of `ball`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RegionTable {
    name: String,
    radius: f64,
    #[serde(default = "unit_step")]
    step: f64,
}

fn unit_step() -> f64 {
    1.0
}

impl TryFrom<BallTable> for BallSpec {
    type Error = Error;
    fn try_from(t: BallTable) -> Result<BallSpec> {
        let shown = BallSpec {
            shells: t.shells,
            regions: t
                .regions
                .into_iter()
                .map(|r| Shell {
                    name: r.name,
                    radius: r.radius,
                    step: r.step,
                })
                .collect(),
        };
        BallSpec::new(shown.shells, shown.regions.clone(), &shown.to_string())
    }
}

/// Which analytic resonances to compare with.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum CavitySpec {
    /// Recognise a box, a z-axis cylinder or a sphere from the mesh.
    #[default]
    Auto,
    None,
    /// A z-axis cylinder, a box or a sphere given by its dimensions.
    Given(Cavity),
}

impl CavitySpec {
    /// Checks that a given cavity is one of the three shapes with positive finite
    /// dimensions; `value` is shown in the error.
    fn check(self, value: &str) -> Result<CavitySpec> {
        let bad = |why: &str| Error::config("cavity", value, why.to_string());
        let d: Vec<f64> = match self {
            CavitySpec::Auto | CavitySpec::None => return Ok(self),
            CavitySpec::Given(Cavity::Cylinder { radius, height }) => vec![radius, height],
            CavitySpec::Given(Cavity::Box { a, b, d }) => vec![a, b, d],
            CavitySpec::Given(Cavity::Sphere { radius }) => vec![radius],
            CavitySpec::Given(_) => {
                return Err(bad("expected cylinder:R,H, box:A,B,D or sphere:R"));
            }
        };
        if d.iter().any(|x| !(*x > 0.0 && x.is_finite())) {
            return Err(bad("dimensions must be positive"));
        }
        Ok(self)
    }
}

impl FromStr for CavitySpec {
    type Err = Error;

    /// `auto`, `none`, `cylinder:R,H`, `box:A,B,D` or `sphere:R`.
    fn from_str(c: &str) -> Result<CavitySpec> {
        let bad = |why: &str| Error::config("cavity", c, why.to_string());
        match c {
            "auto" => return Ok(CavitySpec::Auto),
            "none" => return Ok(CavitySpec::None),
            _ => {}
        }
        let (kind, dims) = c
            .split_once(':')
            .ok_or_else(|| bad("expected auto, none, cylinder:R,H, box:A,B,D or sphere:R"))?;
        let d: Vec<f64> = dims
            .split(',')
            .map(|x| x.trim().parse())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad("dimensions must be numbers"))?;
        if d.iter().any(|x| !(*x > 0.0 && x.is_finite())) {
            return Err(bad("dimensions must be positive"));
        }
        Ok(CavitySpec::Given(match (kind, d.as_slice()) {
            ("cylinder", [r, h]) => Cavity::Cylinder {
                radius: *r,
                height: *h,
            },
            ("box", [a, b, dd]) => Cavity::Box {
                a: *a,
                b: *b,
                d: *dd,
            },
            ("sphere", [r]) => Cavity::Sphere { radius: *r },
            _ => return Err(bad("expected cylinder:R,H, box:A,B,D or sphere:R")),
        }))
    }
}

impl fmt::Display for CavitySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CavitySpec::Auto => f.write_str("auto"),
            CavitySpec::None => f.write_str("none"),
            CavitySpec::Given(Cavity::Cylinder { radius, height }) => {
                write!(f, "cylinder:{radius},{height}")
            }
            CavitySpec::Given(Cavity::Box { a, b, d }) => write!(f, "box:{a},{b},{d}"),
            CavitySpec::Given(Cavity::Sphere { radius }) => write!(f, "sphere:{radius}"),
            // not made by parsing; written in the Debug form, which does not read back
            CavitySpec::Given(c) => write!(f, "{c:?}"),
        }
    }
}

/// The kinds of the table form of `cavity`.
#[derive(serde::Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum CavityKind {
    Cylinder,
    Box,
    Sphere,
}

/// The table form of `cavity`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CavityTable {
    kind: CavityKind,
    radius: Option<f64>,
    height: Option<f64>,
    a: Option<f64>,
    b: Option<f64>,
    d: Option<f64>,
}

impl TryFrom<CavityTable> for CavitySpec {
    type Error = Error;
    fn try_from(t: CavityTable) -> Result<CavitySpec> {
        let dims = [
            ("radius", t.radius),
            ("height", t.height),
            ("a", t.a),
            ("b", t.b),
            ("d", t.d),
        ];
        let (name, keys): (&str, &[&str]) = match t.kind {
            CavityKind::Cylinder => ("cylinder", &["radius", "height"]),
            CavityKind::Box => ("box", &["a", "b", "d"]),
            CavityKind::Sphere => ("sphere", &["radius"]),
        };
        let mut v = Vec::new();
        for (k, x) in dims {
            match (keys.contains(&k), x) {
                (true, Some(x)) => v.push(x),
                (true, None) => {
                    return Err(Error::config(
                        "cavity",
                        format!("kind = {name:?}"),
                        format!("needs {}", keys.join(", ")),
                    ));
                }
                (false, Some(_)) => {
                    return Err(Error::config(
                        "cavity",
                        format!("kind = {name:?}"),
                        format!("has no {k} (it takes {})", keys.join(", ")),
                    ));
                }
                (false, None) => {}
            }
        }
        let c = match t.kind {
            CavityKind::Cylinder => Cavity::Cylinder {
                radius: v[0],
                height: v[1],
            },
            CavityKind::Box => Cavity::Box {
                a: v[0],
                b: v[1],
                d: v[2],
            },
            CavityKind::Sphere => Cavity::Sphere { radius: v[0] },
        };
        let spec = CavitySpec::Given(c);
        spec.check(&spec.to_string())
    }
}

/// Serde for a type read from its string ([`FromStr`]) or its table (`T`), and written as
/// its string ([`fmt::Display`]).
macro_rules! string_or_table {
    ($ty:ty, $table:ty, $what:literal) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(
                d: D,
            ) -> std::result::Result<$ty, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: serde::de::Error>(
                        self,
                        s: &str,
                    ) -> std::result::Result<$ty, E> {
                        s.parse().map_err(E::custom)
                    }
                    fn visit_map<M: serde::de::MapAccess<'de>>(
                        self,
                        m: M,
                    ) -> std::result::Result<$ty, M::Error> {
                        let t: $table = serde::Deserialize::deserialize(
                            serde::de::value::MapAccessDeserializer::new(m),
                        )?;
                        <$ty>::try_from(t).map_err(serde::de::Error::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

pub(crate) use string_or_table;

string_or_table!(
    BoxSpec,
    BoxTable,
    "a box \"NX,NY,NZ[:LX,LY,LZ]\" or a table with cells = [NX, NY, NZ] and size = [LX, LY, LZ]"
);
string_or_table!(
    BallSpec,
    BallTable,
    "a ball \"N:NAME=R[@F],..\" or a table with shells = N and regions = [{ name, radius, step }, ..]"
);
string_or_table!(
    CavitySpec,
    CavityTable,
    "a cavity \"auto\", \"none\", \"cylinder:R,H\", \"box:A,B,D\", \"sphere:R\" or a table with kind and the dimensions"
);

/// `x,y,z` with finite numbers; `name` names the flag in errors.
pub fn parse_point(name: &str, s: &str) -> Result<V3> {
    let v: Vec<f64> = s
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::config(name, s, "expected three numbers x,y,z"))?;
    if v.len() != 3 || v.iter().any(|x| !x.is_finite()) {
        return Err(Error::config(
            name,
            s,
            "expected three finite numbers x,y,z",
        ));
    }
    Ok([v[0], v[1], v[2]])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of `key` in a TOML document, read through serde.
    fn read<T: serde::de::DeserializeOwned>(text: &str) -> std::result::Result<T, String> {
        #[derive(serde::Deserialize)]
        struct Doc<T> {
            v: T,
        }
        toml::from_str::<Doc<T>>(text)
            .map(|d| d.v)
            .map_err(|e| e.to_string())
    }

    /// The value written as TOML and read back.
    fn through_toml<T>(x: &T) -> T
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        #[derive(serde::Serialize)]
        struct Doc<'a, T> {
            v: &'a T,
        }
        let text = toml::to_string(&Doc { v: x }).unwrap();
        read(&text).unwrap()
    }

    #[test]
    fn box_strings_round_trip() {
        for (given, canonical) in [
            ("2,2,2", "2,2,2"),
            ("119, 119, 119", "119,119,119"),
            ("10,8,6:1,0.8,0.6", "10,8,6:1,0.8,0.6"),
            ("3,4,5:1.0,1.0,1.0", "3,4,5"),
            ("4,2,2:2.5e-3,1e-3,1e-3", "4,2,2:0.0025,0.001,0.001"),
        ] {
            let b: BoxSpec = given.parse().unwrap();
            assert_eq!(b.to_string(), canonical);
            assert_eq!(canonical.parse::<BoxSpec>().unwrap(), b);
            assert_eq!(through_toml(&b), b);
        }
        let b: BoxSpec = "10,8,6:1,0.8,0.6".parse().unwrap();
        assert_eq!(b.cells, [10, 8, 6]);
        assert_eq!(b.size, [1.0, 0.8, 0.6]);
    }

    #[test]
    fn box_table_form() {
        let b: BoxSpec = read("[v]\ncells = [10, 8, 6]\nsize = [1, 0.8, 0.6]\n").unwrap();
        assert_eq!(b, "10,8,6:1,0.8,0.6".parse().unwrap());
        let b: BoxSpec = read("v = { cells = [2, 2, 2] }\n").unwrap();
        assert_eq!(b.size, [1.0; 3]);
        let e = read::<BoxSpec>("[v]\ncells = [2, 2, 2]\nsides = [1, 1, 1]\n").unwrap_err();
        assert!(e.contains("unknown field `sides`"), "{e}");
        let e = read::<BoxSpec>("[v]\ncells = [2, 2]\n").unwrap_err();
        assert!(e.contains("cells"), "{e}");
        let e = read::<BoxSpec>("[v]\ncells = [2, 0, 2]\n").unwrap_err();
        assert!(
            e.contains("invalid box = 2,0,2") && e.contains("cells must be >= 1"),
            "{e}"
        );
    }

    #[test]
    fn bad_boxes_name_the_key_and_the_fault() {
        for (b, shown, want) in [
            ("2,2", "2,2", "expected three cell counts"),
            ("2,x,2", "2,x,2", "expected NX,NY,NZ[:LX,LY,LZ]"),
            // a bad side list is shown alone, as by the point parser of the other flags
            ("2,2,2:1,1", "1,1", "expected three finite numbers x,y,z"),
            ("0,2,2", "0,2,2", "cells must be >= 1 and sides positive"),
            (
                "2,2,2:1,-1,1",
                "2,2,2:1,-1,1",
                "cells must be >= 1 and sides positive",
            ),
            (
                "1,1,1:1,1,1e-300",
                "1,1,1:1,1,1e-300",
                "sides must be between",
            ),
            ("2,2,2:1e8,1,1e-8", "2,2,2:1e8,1,1e-8", "aspect ratio"),
        ] {
            let e = b.parse::<BoxSpec>().unwrap_err().to_string();
            assert!(
                e.contains(&format!("invalid box = {shown}: ")) && e.contains(want),
                "{e}"
            );
        }
        let e = read::<BoxSpec>("v = \"2,2\"\n").unwrap_err();
        assert!(
            e.contains("invalid box = 2,2: expected three cell counts"),
            "{e}"
        );
        let e = read::<BoxSpec>("v = 3\n").unwrap_err();
        assert!(e.contains("a box \"NX,NY,NZ"), "{e}");
    }

    #[test]
    fn ball_strings_round_trip() {
        for (given, canonical) in [
            (
                "2:sphere=1,near=2@1,air=6@2,layer=9@2",
                "2:sphere=1,near=2,air=6@2,layer=9@2",
            ),
            ("3:sphere=0.1,air=0.45", "3:sphere=0.1,air=0.45"),
            ("5: inner = 0.1", "5:inner=0.1"),
            ("2:core=0.3,air=0.5@1.5", "2:core=0.3,air=0.5@1.5"),
        ] {
            let b: BallSpec = given.parse().unwrap();
            assert_eq!(b.to_string(), canonical);
            assert_eq!(canonical.parse::<BallSpec>().unwrap(), b);
            assert_eq!(through_toml(&b), b);
        }
        let b: BallSpec = "2:sphere=1,air=6@2".parse().unwrap();
        assert_eq!(b.shells, 2);
        assert_eq!(
            b.regions,
            vec![
                Shell::new("sphere", 1.0),
                Shell {
                    name: "air".into(),
                    radius: 6.0,
                    step: 2.0
                }
            ]
        );
    }

    #[test]
    fn ball_table_form() {
        let b: BallSpec = read(
            "[v]\nshells = 2\nregions = [{ name = \"sphere\", radius = 1 }, \
             { name = \"air\", radius = 6, step = 2 }]\n",
        )
        .unwrap();
        assert_eq!(b, "2:sphere=1,air=6@2".parse().unwrap());
        let b: BallSpec = read(
            "[v]\nshells = 3\n[[v.regions]]\nname = \"sphere\"\nradius = 0.1\n\
             [[v.regions]]\nname = \"air\"\nradius = 0.45\n",
        )
        .unwrap();
        assert_eq!(b, "3:sphere=0.1,air=0.45".parse().unwrap());
        let e = read::<BallSpec>(
            "[v]\nshells = 2\nregions = [{ name = \"core\", radius = 0.3 }, { name = \"air\", radius = 0.2 }]\n",
        )
        .unwrap_err();
        assert!(
            e.contains("invalid ball = 2:core=0.3,air=0.2: radii must increase"),
            "{e}"
        );
        let e = read::<BallSpec>("[v]\nshells = 2\nregions = []\n").unwrap_err();
        assert!(e.contains("expected N:NAME=R"), "{e}");
        let e = read::<BallSpec>(
            "[v]\nshells = 2\nregions = [{ name = \"core\", radius = 0.3, colour = 1 }]\n",
        )
        .unwrap_err();
        assert!(e.contains("unknown field `colour`"), "{e}");
    }

    #[test]
    fn bad_balls_name_the_key_and_the_fault() {
        for (b, want) in [
            ("2:core=0.3,air=0.2", "radii must increase"),
            ("2:core=0.3@2,air=0.5", "the first group has none"),
            ("2:core=0.3,air=0.5@0.5", "between 1 and 100"),
            ("2:core=0.3,core=0.5", "the group \"core\" is named twice"),
            ("two:core=0.3", "expected N:NAME=R"),
            ("2", "expected N:NAME=R"),
            ("2:core", "expected N:NAME=R"),
            ("2:core=x", "expected N:NAME=R"),
            ("0:core=0.3", "N must be between 1 and 512"),
            ("2:core=0.3,outer=0.5", "not \"outer\" (the outer surface)"),
            ("2:=0.3", "must be non-empty"),
            ("2:core=1e13", "radii must be between"),
        ] {
            let e = b.parse::<BallSpec>().unwrap_err().to_string();
            assert!(
                e.contains(&format!("invalid ball = {b}:")) && e.contains(want),
                "{b}: {e}"
            );
        }
    }

    #[test]
    fn cavity_strings_round_trip() {
        for (given, canonical) in [
            ("auto", "auto"),
            ("none", "none"),
            ("cylinder:0.1, 0.2", "cylinder:0.1,0.2"),
            ("box:1,0.8,0.6", "box:1,0.8,0.6"),
            ("sphere:1.0", "sphere:1"),
        ] {
            let c: CavitySpec = given.parse().unwrap();
            assert_eq!(c.to_string(), canonical);
            assert_eq!(canonical.parse::<CavitySpec>().unwrap(), c);
            assert_eq!(through_toml(&c), c);
        }
        assert_eq!(
            "box:1,0.8,0.6".parse::<CavitySpec>().unwrap(),
            CavitySpec::Given(Cavity::Box {
                a: 1.0,
                b: 0.8,
                d: 0.6
            })
        );
    }

    #[test]
    fn cavity_table_form() {
        let c: CavitySpec = read("[v]\nkind = \"cylinder\"\nradius = 0.1\nheight = 0.2\n").unwrap();
        assert_eq!(c, "cylinder:0.1,0.2".parse().unwrap());
        let c: CavitySpec = read("v = { kind = \"box\", a = 1, b = 0.8, d = 0.6 }\n").unwrap();
        assert_eq!(c, "box:1,0.8,0.6".parse().unwrap());
        let c: CavitySpec = read("v = { kind = \"sphere\", radius = 2 }\n").unwrap();
        assert_eq!(c, "sphere:2".parse().unwrap());
        for (t, want) in [
            (
                "v = { kind = \"cylinder\", radius = 0.1 }",
                "needs radius, height",
            ),
            (
                "v = { kind = \"sphere\", radius = 1, height = 2 }",
                "has no height",
            ),
            (
                "v = { kind = \"sphere\", radius = -1 }",
                "invalid cavity = sphere:-1: dimensions must be positive",
            ),
            (
                "v = { kind = \"cone\", radius = 1 }",
                "unknown variant `cone`",
            ),
            (
                "v = { kind = \"box\", a = 1, b = 1, d = 1, e = 1 }",
                "unknown field `e`",
            ),
        ] {
            let e = read::<CavitySpec>(t).unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        }
    }

    #[test]
    fn bad_cavities_name_the_key_and_the_fault() {
        for (c, want) in [
            ("sphere:-1", "dimensions must be positive"),
            ("sphere:x", "dimensions must be numbers"),
            ("cone:1,2", "expected cylinder:R,H, box:A,B,D or sphere:R"),
            ("box:1,2", "expected cylinder:R,H, box:A,B,D or sphere:R"),
            ("automatic", "expected auto, none, cylinder:R,H"),
        ] {
            let e = c.parse::<CavitySpec>().unwrap_err().to_string();
            assert!(
                e.contains(&format!("invalid cavity = {c}:")) && e.contains(want),
                "{e}"
            );
        }
    }
}
