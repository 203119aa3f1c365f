//! The house has no import circles: no module of the library imports (through `crate::`
//! or `super::` paths) a module that imports it back, directly or through others. Files
//! are the nodes; `crate::a::b::Item` is an edge to the longest module path that is a file
//! (`src/a/b.rs` or `src/a/b/mod.rs`). Unit-test modules (`#[cfg(test)]`, at the end of a
//! file) are not part of the house. The application (`src/app`, `src/main.rs`) is above the
//! library and is checked the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module path of a file relative to the crate root of `root_file`'s crate.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    // the binary crate's modules live under src/app; its root is main.rs
    parts
}

/// Paths like `crate::a::b::C` or `super::x::Y` in a file's code (comments stripped),
/// including grouped `use crate::{a::B, c}`.
fn references(text: &str) -> Vec<(String, Vec<String>)> {
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = vec![];
    for head in ["crate::", "super::"] {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(head) {
            let before = rest[..i].chars().last();
            rest = &rest[i + head.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                // crate::{a::B, c::d}
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let segs: Vec<String> = item
                        .trim()
                        .split("::")
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                    if !segs.is_empty() {
                        out.push((head.to_string(), segs));
                    }
                }
                continue;
            }
            let segs: Vec<String> = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            out.push((head.to_string(), segs));
        }
    }
    out
}

fn graph(src: &Path, files: &[PathBuf], strip: usize) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| {
            let m = module_of(src, f);
            (m[strip.min(m.len())..].to_vec(), f.display().to_string())
        })
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let name = f.display().to_string();
        let mut here = module_of(src, f);
        here.drain(..strip.min(here.len()));
        let is_mod = f
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs");
        let text = std::fs::read_to_string(f).unwrap();
        // unit-test modules (at the end of a file) may use anything
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        for (head, segs) in references(text) {
            let mut path = if head == "crate::" {
                vec![]
            } else {
                // super:: of a mod.rs is the parent of its folder; of a file, its folder
                let mut p = here.clone();
                if !is_mod || !p.is_empty() {
                    p.pop();
                }
                p
            };
            path.extend(segs);
            // the longest prefix that is a module file
            while !path.is_empty() && !modules.contains_key(&path) {
                path.pop();
            }
            if let Some(target) = modules.get(&path)
                && *target != name
            {
                g.entry(name.clone()).or_default().insert(target.clone());
            }
        }
        g.entry(name).or_default();
    }
    g
}

/// A cycle of the graph, if any (depth-first search).
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let i = stack.iter().position(|x| x == m).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n).copied().unwrap_or(0) == 0
            && let Some(c) = visit(n, g, &mut state, &mut vec![])
        {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_import_circles_in_the_library_or_the_application() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = vec![];
    rust_files(&src, &mut all);
    let (app, lib): (Vec<PathBuf>, Vec<PathBuf>) = all
        .into_iter()
        .partition(|f| f.starts_with(src.join("app")) || f.ends_with("main.rs"));
    let g = graph(&src, &lib, 0);
    assert!(g.len() > 30, "only {} library files found", g.len());
    let edges: usize = g.values().map(|s| s.len()).sum();
    assert!(
        edges > 60,
        "only {edges} imports found: the parser is broken"
    );
    if let Some(c) = cycle(&g) {
        panic!("import circle in the library: {}", c.join(" -> "));
    }
    // in the binary crate, crate:: means the app's root (src/main.rs, modules under src/app)
    let ga = graph(&src, &app, 0);
    if let Some(c) = cycle(&ga) {
        panic!("import circle in the application: {}", c.join(" -> "));
    }
    // the library never names the application
    for f in &lib {
        let t = std::fs::read_to_string(f).unwrap();
        assert!(!t.contains("crate::app"), "{} imports the app", f.display());
    }
}

#[test]
fn the_checker_finds_a_planted_circle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    g.entry("d".into()).or_default().insert("a".into());
    assert_eq!(cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert!(cycle(&g).is_none());
    let refs =
        references("use crate::{dga::Dga, mesh::Mesh};\nfn f() { super::x::y(); } // crate::z");
    assert_eq!(refs.len(), 3, "{refs:?}");
}

/// `unsafe` lives in the OpenCL runtime layer only (`src/ocl/`): every other file of the
/// library and the application is safe Rust. Comments and strings that name the word are
/// not code; a line is code here when `unsafe` stands outside a `//` comment.
#[test]
fn unsafe_code_only_in_the_runtime_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "found only {} files under src",
        files.len()
    );
    let ocl = src.join("ocl");
    let mut found_in_ocl = false;
    let mut outside = vec![];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let uses = text.lines().any(|l| {
            let code = l.find("//").map_or(l, |i| &l[..i]);
            code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == "unsafe")
        });
        if uses {
            if f.starts_with(&ocl) {
                found_in_ocl = true;
            } else {
                outside.push(f.strip_prefix(&src).unwrap().display().to_string());
            }
        }
    }
    assert!(outside.is_empty(), "unsafe outside src/ocl: {outside:?}");
    // the check itself sees the runtime layer's blocks (it would pass vacuously otherwise)
    assert!(
        found_in_ocl,
        "no unsafe found in src/ocl: the scan is broken"
    );
}

/// The floors of the library, from the ground up: a module may import modules of lower
/// floors and its own submodules, never one of its own floor or above. `lib.rs` (the public
/// face, which re-exports the API) and the hidden `internal` module stand on top, so the
/// library imports `crate::error::Result`, not the root's re-export `crate::Result`.
const FLOORS: &[&[&str]] = &[
    &["error"],
    &["util", "real", "cost"],
    &["mesh", "ocl"],
    &["problem", "complex"],
    &["dga", "dg", "spectrum"],
    &["backend"],
    &["partition"],
    &["solver"],
    &["report"],
    &["lib", "internal"],
];

/// The top-level module of a library file (`src/mesh/gmsh/mod.rs` -> `mesh`, `src/lib.rs`
/// -> `lib`).
fn top_module(src: &Path, file: &str) -> String {
    let rel = Path::new(file).strip_prefix(src).unwrap();
    let first = rel.iter().next().unwrap().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn floor_of(module: &str) -> usize {
    FLOORS
        .iter()
        .position(|f| f.contains(&module))
        .unwrap_or_else(|| panic!("module {module} is on no floor of tests/layering.rs"))
}

/// The imports between top-level modules that do not go down a floor.
fn upward(src: &Path, g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = vec![];
    for (from, tos) in g {
        let a = top_module(src, from);
        for to in tos {
            let b = top_module(src, to);
            if a != b && floor_of(&b) >= floor_of(&a) {
                out.push(format!(
                    "{from} -> {to} ({a} on floor {}, {b} on floor {})",
                    floor_of(&a),
                    floor_of(&b)
                ));
            }
        }
    }
    out
}

#[test]
fn no_library_module_imports_its_own_floor_or_above() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = vec![];
    rust_files(&src, &mut all);
    // the library's files, without unit-test files (`tests.rs`, a #[cfg(test)] module)
    let lib: Vec<PathBuf> = all
        .into_iter()
        .filter(|f| !(f.starts_with(src.join("app")) || f.ends_with("main.rs")))
        .filter(|f| !f.ends_with("tests.rs"))
        .collect();
    let g = graph(&src, &lib, 0);
    // every top-level module stands on a floor (a new one must be placed)
    for f in g.keys() {
        floor_of(&top_module(&src, f));
    }
    let up = upward(&src, &g);
    assert!(
        up.is_empty(),
        "imports that do not go down a floor:\n{}",
        up.join("\n")
    );
    // the check sees the floors' imports (it would pass vacuously otherwise): the backend
    // imports the ground, and a planted import from mesh to solver is found
    let mut planted = g.clone();
    let mesh = src.join("mesh").join("mod.rs").display().to_string();
    let solver = src.join("solver").join("mod.rs").display().to_string();
    assert!(g.contains_key(&mesh) && g.contains_key(&solver));
    planted.get_mut(&mesh).unwrap().insert(solver);
    assert_eq!(upward(&src, &planted).len(), 1);
}
