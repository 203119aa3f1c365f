//! METIS against recursive coordinate bisection (and x slabs) on box meshes (feature
//! `partition`): the partitioner's wall time on rank 0 (tet costs included), the balance,
//! the cut and the halo per step, and what the rest of rank 0's distribution costs (halo
//! lists and statistics; building and encoding every rank's part).
//!
//! ```sh
//! cargo run --release --features partition --example partitioners -- \
//!     --sizes 55,119 --parts 4,16 --out results/scaling/partitioners.csv
//! ```
//! Box `n`: the unit cube in n³ cells of 6 tets (55: 1.0M tets, 119: 10.1M tets).

use dgatd::mesh::{Topology, box_mesh};
use dgatd::partition::PartBuilder;
use dgatd::partition::{HaloLists, Partition, Scheme, Stats};
use std::io::Write;
use std::time::Instant;

fn peak_rss_gib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0 / 1024.0)
        .unwrap_or(f64::NAN)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str, d: &str| -> String {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1).cloned())
            .unwrap_or_else(|| d.to_string())
    };
    let list = |k: &str, d: &str| -> Result<Vec<usize>, std::num::ParseIntError> {
        arg(k, d).split(',').map(|x| x.parse()).collect()
    };
    let sizes = list("--sizes", "55")?;
    let parts = list("--parts", "4,16")?;
    let schemes: Vec<Scheme> = arg("--schemes", "rcb,metis,slab")
        .split(',')
        .map(|s| match s {
            "metis" => Ok(Scheme::Metis),
            "rcb" => Ok(Scheme::Rcb),
            "slab" => Ok(Scheme::Slab),
            o => Err(format!("unknown partitioner {o}")),
        })
        .collect::<Result<_, _>>()?;
    let out = std::path::PathBuf::from(arg("--out", "results/scaling/partitioners.csv"));
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d)?;
    }
    let mut csv = std::fs::File::create(&out)?;
    writeln!(
        csv,
        "tets,parts,partitioner,threads,mesh_topology_s,partition_s,halo_stats_s,parts_s,imbalance,cut_faces,halo_values,max_recv_values,max_neighbours,max_interface_fraction,peak_rss_gib"
    )?;
    let threads = rayon::current_num_threads();
    for &n in &sizes {
        let t0 = Instant::now();
        let mesh = box_mesh([n, n, n], [1.0, 1.0, 1.0]);
        let topo = Topology::build(&mesh)?;
        let mt_s = t0.elapsed().as_secs_f64();
        eprintln!(
            "box {n}^3: {} tets, mesh + topology {mt_s:.1} s",
            mesh.n_tets()
        );
        let fixed = &topo.boundary_edge;
        let mat = dgatd::problem::Media::vacuum(mesh.n_tets());
        for &np in &parts {
            for &s in &schemes {
                let t = Instant::now();
                let p = Partition::with(s, &mesh, &topo, np)?;
                let part_s = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let h = HaloLists::build(&mesh, &topo, fixed, &p);
                let st = Stats::compute(&mesh, &topo, fixed, &p, &h);
                let halo_s = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let b = PartBuilder::new(&mesh, &topo, &mat, fixed, &p, &h);
                let mut words = 0usize;
                for r in 0..np {
                    words += b.build(r)?.to_words().len();
                }
                drop(b);
                let parts_s = t.elapsed().as_secs_f64();
                writeln!(
                    csv,
                    "{},{np},{},{threads},{mt_s:.2},{part_s:.3},{halo_s:.3},{parts_s:.3},{:.5},{},{},{},{},{:.4},{:.2}",
                    mesh.n_tets(),
                    s.name(),
                    st.imbalance,
                    st.cut_faces,
                    st.halo_values,
                    st.max_recv_values,
                    st.max_neighbours,
                    st.max_interface_fraction,
                    peak_rss_gib()
                )?;
                csv.flush()?;
                eprintln!(
                    "  P={np:3} {:5}: {part_s:7.2} s, imbalance {:.4}, cut {:9}, halo {:9} values, max recv {:8}, halo+stats {halo_s:.2} s, parts {parts_s:.2} s ({:.0} MB sent), peak RSS {:.2} GiB",
                    s.name(),
                    st.imbalance,
                    st.cut_faces,
                    st.halo_values,
                    st.max_recv_values,
                    8.0 * words as f64 / 1e6,
                    peak_rss_gib()
                );
            }
        }
    }
    Ok(())
}
