//! A partitioned leapfrog run under MPI, one rank per part (feature `mpi`): rank 0 reads or
//! makes the mesh, locates the source and probes, partitions with METIS and sends every rank
//! its part; all ranks find Δt by the distributed power iteration and step their parts,
//! exchanging halos; rank 0 writes the probe samples and energies.
//!
//! ```sh
//! cargo build --release --features mpi --example mpi_run
//! mpirun -np 3 target/release/examples/mpi_run --mesh coarse --steps 500 --out /tmp/p3.txt
//! ```
//!
//! `--mesh coarse|medium|fine` (bundled cylinder) or `--mesh box:NX,NY,NZ:SEED` (a
//! 1 x 0.8 x 0.6 m box with interior nodes jittered by ±0.3 cells, seeded). Output: a line
//! `dt RHO_LINE P`, then `energy STEP W` lines, then one sample per line (`{:e}`, which
//! round-trips f64 exactly), in the `Record::samples` order.

use dgatd::backend::Stepper;
use dgatd::dga::Dga;
use dgatd::dga::{Probe, Source};
use dgatd::internal::{Rng, V3};
use dgatd::mesh::{Mesh, Topology, box_mesh};
use dgatd::partition::MpiComm;
use dgatd::partition::{Comm, PartStepper, broadcast_setup, distribute};
use dgatd::problem::{Media, Waveform};
use dgatd::solver;
use std::io::Write;
use std::sync::Arc;

fn make_mesh(spec: &str) -> Result<Mesh, Box<dyn std::error::Error>> {
    if let Some(b) = spec.strip_prefix("box:") {
        let v: Vec<u64> = b
            .split([',', ':'])
            .map(|x| x.parse())
            .collect::<Result<_, _>>()?;
        let (n, seed) = ([v[0] as usize, v[1] as usize, v[2] as usize], v[3]);
        let l = [1.0, 0.8, 0.6];
        let mut m = box_mesh(n, l);
        let mut r = Rng::new(seed);
        for p in m.nodes.iter_mut() {
            if (0..3).all(|c| p[c] > 1e-9 && p[c] < l[c] - 1e-9) {
                for c in 0..3 {
                    p[c] += 0.3 * (l[c] / n[c] as f64) * r.sym();
                }
            }
        }
        Ok(m)
    } else {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("meshes")
            .join(format!("cylinder_{spec}.msh"));
        Ok(dgatd::mesh::read_gmsh(&path)?)
    }
}

/// A point at fractions of the bounding box.
pub fn at(mesh: &Mesh, frac: V3) -> V3 {
    let (lo, hi) = mesh.bbox();
    std::array::from_fn(|c| lo[c] + frac[c] * (hi[c] - lo[c]))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str, d: &str| -> String {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1).cloned())
            .unwrap_or_else(|| d.to_string())
    };
    let steps: usize = arg("--steps", "300").parse()?;
    let out = arg("--out", "mpi_run.txt");
    let universe = mpi::initialize().ok_or("MPI could not be initialised")?;
    let comm = MpiComm::new(universe.world());
    let rank = comm.rank();

    // Rank 0 alone holds the global mesh.
    let global = if rank == 0 {
        let mesh = make_mesh(&arg("--mesh", "coarse"))?;
        let topo = Topology::build(&mesh)?;
        let mat = Media::vacuum(mesh.n_tets());
        let src = Source::located(&mesh, at(&mesh, [0.62, 0.45, 0.5]), [0.2, 0.1, 1.0])?;
        let probes = [[0.31, 0.57, 0.41], [0.55, 0.72, 0.63]]
            .iter()
            .map(|&f| Probe::new(&mesh, &topo, at(&mesh, f)))
            .collect::<Result<Vec<_>, _>>()?;
        Some((mesh, topo, mat, src, probes))
    } else {
        None
    };
    let (src, probes) =
        broadcast_setup(&comm, global.as_ref().map(|g| (Some(&g.3), g.4.as_slice())))?;
    let (part, stats) = distribute(
        &comm,
        global
            .as_ref()
            .map(|g| (&g.0, &g.1, &g.2, g.1.boundary_edge.as_slice())),
    )?;
    drop(global);
    if let Some(s) = stats {
        eprintln!("partition: {s:?}");
    }
    let part = Arc::new(part);
    let dga: Arc<Dga> = Arc::new(part.assemble()?);
    let (dt, rho) = dgatd::partition::time_step(&comm, &part, &dga, 0.95)?;
    let wave = Waveform::gaussian_derivative(300e6);
    let src = src.ok_or("no source")?;
    let n_owned = part.n_owned_tets();
    let mut st = PartStepper::<f64, _>::new(comm, part, dga, dt, Some((&src, wave)), &probes)?;
    println!(
        "rank {rank}: node rank {}, {n_owned} tets, probes {:?}, source {}",
        st.comm().node_rank(),
        st.owned_probes(),
        st.has_source()
    );
    let rec = solver::run(
        &mut st,
        dt,
        steps,
        Some(wave.end()),
        probes.len(),
        10,
        &mut |_| {},
    )?;
    let (u, f) = st.state()?;
    if rank == 0 {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&out)?);
        writeln!(
            w,
            "dt {dt:e} {:e} {}",
            rho / solver::RHO_MARGIN,
            st.comm().size()
        )?;
        for (k, e) in &rec.energy {
            writeln!(w, "energy {k} {e:e}")?;
        }
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        writeln!(w, "state {:e} {:e}", norm(&u), norm(&f))?;
        for x in &rec.samples {
            writeln!(w, "{x:e}")?;
        }
    }
    Ok(())
}
