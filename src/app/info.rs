//! `dgatd mesh-info` and `dgatd devices`.

use super::outln;
use dgatd::Result;
use dgatd::mesh::{Mesh, Topology};

#[derive(clap::Args, Debug)]
pub struct MeshInfoArgs {
    /// Gmsh mesh file, or bundled:coarse|medium|fine.
    pub path: String,
}

/// `dgatd mesh-info`.
pub fn mesh_info(args: &MeshInfoArgs) -> Result<()> {
    if args.path.trim().is_empty() {
        return Err(dgatd::Error::config(
            "mesh-info",
            format!("{:?}", args.path),
            "an empty path: give a Gmsh .msh file or bundled:coarse|medium|fine",
        ));
    }
    let mesh = match args.path.strip_prefix("bundled:") {
        Some(n) => dgatd::mesh::parse_gmsh(dgatd::mesh::bundled(n)?, &args.path)?,
        None => dgatd::mesh::read_gmsh(std::path::Path::new(&args.path))?,
    };
    // a mesh in the wrong unit is described, but a run refuses it: say so
    if let Err(e) = dgatd::solver::check_mesh_scale(&mesh) {
        eprintln!("warning: {e}");
    }
    let t = Topology::build(&mesh)?;
    for w in dgatd::mesh::check(&mesh, &t)? {
        eprintln!("warning: {w}");
    }
    print_counts(&mesh, &t);
    print_geometry(&mesh);
    // each group with what it holds: a material or boundary on a group of no elements
    // (or a boundary on interior faces only) would set nothing, and is refused by a run
    let groups = dgatd::problem::group_summary(&mesh, &t);
    outln!(
        "groups          {}",
        if groups.is_empty() {
            "none".into()
        } else {
            groups.join(", ")
        }
    );
    print_memory(&dga_counts(&mesh, &t));
    Ok(())
}

/// The mesh's source and its vertices, edges, faces (each with those on the boundary),
/// tetrahedra and DoFs.
fn print_counts(mesh: &Mesh, t: &Topology) {
    let nb_e = t.boundary_edge.iter().filter(|&&b| b).count();
    let nb_v = t.boundary_vertex.iter().filter(|&&b| b).count();
    let free_half = 2 * t.n_free_edges();
    let nt = mesh.n_tets();
    outln!("mesh            {}", mesh.source);
    outln!(
        "vertices        {} ({} on the boundary)",
        mesh.n_vertices(),
        nb_v
    );
    outln!("edges           {} ({} on the boundary)", t.n_edges(), nb_e);
    outln!(
        "faces           {} ({} on the boundary)",
        t.n_faces(),
        t.n_boundary_faces
    );
    outln!(
        "tetrahedra      {} ({} reoriented on input)",
        nt,
        mesh.reoriented
    );
    outln!(
        "DoFs            {} = 4T ({}) + free half-edges ({})  [{:.2} per tet]",
        4 * nt + free_half,
        4 * nt,
        free_half,
        (4 * nt + free_half) as f64 / nt as f64
    );
}

/// The mesh's bounding box, volume, edge lengths and shape quality.
fn print_geometry(mesh: &Mesh) {
    let q = mesh.quality();
    let (lo, hi) = mesh.bbox();
    outln!(
        "bounding box    [{:.4}, {:.4}] x [{:.4}, {:.4}] x [{:.4}, {:.4}] m",
        lo[0],
        hi[0],
        lo[1],
        hi[1],
        lo[2],
        hi[2]
    );
    outln!("volume          {:.6} m^3", q.volume);
    outln!(
        "edge length     min {:.4e} m, max {:.4e} m",
        q.min_edge,
        q.max_edge
    );
    outln!(
        "shape 6√2V/l³   min {:.4}, mean {:.4} (1 = regular tet)",
        q.min_shape,
        q.mean_shape
    );
}

/// The sizes the DGA operators of `mesh` take: the element counts and Σ d_v² (and the
/// packed Σ d_v (d_v + 1) / 2) over the free half-edges at each vertex, for the block
/// storage.
fn dga_counts(mesh: &Mesh, t: &Topology) -> dgatd::cost::DgaCounts {
    let (mut d2, mut packed) = (0usize, 0usize);
    for v in 0..mesh.n_vertices() {
        let d = t
            .edges_at(v)
            .iter()
            .filter(|&&e| !t.boundary_edge[e as usize])
            .count();
        d2 += d * d;
        packed += d * (d + 1) / 2;
    }
    let nt = mesh.n_tets();
    dgatd::cost::DgaCounts {
        tets: nt,
        edges: t.n_edges(),
        vertices: mesh.n_vertices(),
        free_half: 2 * t.n_free_edges(),
        circ: 12 * nt,
        block: d2,
        packed,
    }
}

/// The device memory of the operators in f64 and f32 (factored, and with the CSR matrix)
/// and the host memory of a resonator run.
fn print_memory(counts: &dgatd::cost::DgaCounts) {
    let free_half = counts.free_half;
    for (name, s) in [("f64", 8usize), ("f32", 4)] {
        let (factored, _) = dgatd::cost::dga_device_bytes(counts, s, None);
        // the CSR matrix has about 70 nonzeros per free half-edge on Delaunay meshes
        let (csr, _) = dgatd::cost::dga_device_bytes(counts, s, Some(70 * free_half as u64));
        outln!(
            "device ({name})    factored {}, with CSR (~70 nnz/row) {}",
            indicatif::HumanBytes(factored),
            indicatif::HumanBytes(csr)
        );
    }
    outln!(
        "host memory     about {} for a resonator run",
        indicatif::HumanBytes(dgatd::cost::dga_host_bytes(counts.tets as f64) as u64)
    );
}

/// `dgatd devices`: every OpenCL device with the properties that matter here.
pub fn devices() -> Result<()> {
    let all = dgatd::backend::opencl::list_devices()?;
    outln!(
        "{:>3}  {:<5} {:<28} {:<30} {:<20} {:>4} {:>9} {:>9} {:>5}  {:<18} driver",
        "idx",
        "type",
        "platform",
        "device",
        "vendor",
        "CUs",
        "mem GiB",
        "alloc GiB",
        "fp64",
        "OpenCL C"
    );
    for d in &all {
        outln!(
            "{:>3}  {:<5} {:<28} {:<30} {:<20} {:>4} {:>9.2} {:>9.2} {:>5}  {:<18} {}",
            d.index,
            d.kind,
            d.platform.chars().take(28).collect::<String>(),
            d.name.chars().take(30).collect::<String>(),
            d.vendor.chars().take(20).collect::<String>(),
            d.compute_units,
            d.global_mem as f64 / 1073741824.0,
            d.max_alloc as f64 / 1073741824.0,
            if d.fp64 { "yes" } else { "no" },
            d.opencl_c,
            d.driver
        );
    }
    let def = dgatd::backend::opencl::select_device(None)?;
    outln!("default: {} ({} / {})", def.index, def.platform, def.name);
    // no GPU listed, but the machine seems to have one: say what points at it and the fix
    let hidden = dgatd::backend::hidden_gpus(&all);
    if !hidden.is_empty() {
        eprintln!(
            "warning: no GPU listed, but this machine seems to have one that OpenCL does not show: {} ({}). To show it: {}",
            dgatd::backend::evidence_line(&hidden),
            dgatd::backend::loader_env_line(),
            dgatd::backend::recipe(dgatd::backend::recipe_library(&hidden))
        );
    }
    Ok(())
}
