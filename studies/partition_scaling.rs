//! Partition statistics ladder and predicted parallel efficiency (feature `partition`).
//!
//! For box meshes (6 n³ tets) and part counts 8..1024, runs METIS k-way (the same call as a
//! partitioned run, weighted by `partition::tet_costs`) and records the imbalance, the cut,
//! the halo volume per step and the interface fraction; fits the per-rank halo to
//! `c · (T/P)^(2/3)` and extrapolates to 100M tets; then predicts the parallel efficiency of
//! one H200 per rank from a per-tet step time and the halo path's bandwidths.
//!
//! ```sh
//! cargo run --release --features partition --example partition_scaling -- \
//!     --sizes 26,55,119 --out results/scaling [--pcie-gbs 25] [--net-gbs 25] [--latency-us 20] \
//!     [--step-ns-per-tet 0.234]
//! ```

use dgatd::mesh::{Topology, box_mesh};
use dgatd::partition::{HaloLists, Partition, Stats};
use std::io::Write;
use std::time::Instant;

/// (tets per part, max values sent by a rank, max received, max interface fraction)
type Row = (f64, f64, f64, f64);

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

/// Predicted step time of the slowest rank and the efficiency against perfect scaling.
/// Per half step: the interface part of the kernel, then the exchange (device → host over
/// PCIe, the network, host → device over PCIe, plus a fixed latency) overlapped with the
/// interior part. Half the step's compute and half the halo bytes fall in each half step.
struct Model {
    pcie: f64,
    net: f64,
    lat: f64,
    s_per_tet: f64,
}

impl Model {
    fn efficiency(&self, tets: f64, p: f64, send_b: f64, recv_b: f64, iface: f64) -> (f64, f64) {
        let t_c = tets / p * self.s_per_tet;
        let half = 0.5 * t_c;
        let comm = self.lat
            + 0.5 * send_b / self.pcie
            + 0.5 * send_b.max(recv_b) / self.net
            + 0.5 * recv_b / self.pcie;
        let t_half = iface * half + ((1.0 - iface) * half).max(comm);
        let t_step = 2.0 * t_half;
        (t_step, t_c / t_step)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str, d: &str| -> String {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1).cloned())
            .unwrap_or_else(|| d.to_string())
    };
    let sizes: Vec<usize> = arg("--sizes", "26,55")
        .split(',')
        .map(|x| x.parse())
        .collect::<Result<_, _>>()?;
    let parts: Vec<usize> = arg("--parts", "8,16,32,64,128,256,512,1024")
        .split(',')
        .map(|x| x.parse())
        .collect::<Result<_, _>>()?;
    let out = std::path::PathBuf::from(arg("--out", "results/scaling"));
    let model = Model {
        pcie: arg("--pcie-gbs", "25").parse::<f64>()? * 1e9,
        net: arg("--net-gbs", "25").parse::<f64>()? * 1e9,
        lat: arg("--latency-us", "20").parse::<f64>()? * 1e-6,
        s_per_tet: arg("--step-ns-per-tet", "0.234").parse::<f64>()? * 1e-9,
    };
    std::fs::create_dir_all(&out)?;
    let mut csv = std::fs::File::create(out.join("partition_stats.csv"))?;
    writeln!(
        csv,
        "tets,parts,tets_per_part,metis_s,peak_rss_gib,imbalance,cut_faces,halo_values,max_send_values,max_recv_values,max_neighbours,max_halo_ratio,mean_halo_ratio,max_interface_fraction"
    )?;
    // (tets per part, max values sent by a rank, max received, max interface fraction)
    let mut fit: Vec<Row> = Vec::new();
    for &n in &sizes {
        let t0 = Instant::now();
        let mesh = box_mesh([n, n, n], [1.0, 1.0, 1.0]);
        let topo = Topology::build(&mesh)?;
        eprintln!(
            "box {n}^3: {} tets, mesh + topology {:.1} s",
            mesh.n_tets(),
            t0.elapsed().as_secs_f64()
        );
        for &p in &parts {
            if p * 50 > mesh.n_tets() {
                continue;
            }
            let t = Instant::now();
            let part = Partition::metis(&mesh, &topo, None, p)?;
            let metis_s = t.elapsed().as_secs_f64();
            let fixed = &topo.boundary_edge;
            let h = HaloLists::build(&mesh, &topo, fixed, &part);
            let s = Stats::compute(&mesh, &topo, fixed, &part, &h);
            let tpp = mesh.n_tets() as f64 / p as f64;
            writeln!(
                csv,
                "{},{p},{tpp:.0},{metis_s:.3},{:.2},{:.4},{},{},{},{},{},{:.4},{:.4},{:.4}",
                mesh.n_tets(),
                peak_rss_gib(),
                s.imbalance,
                s.cut_faces,
                s.halo_values,
                s.max_send_values,
                s.max_recv_values,
                s.max_neighbours,
                s.max_halo_ratio,
                s.mean_halo_ratio,
                s.max_interface_fraction
            )?;
            csv.flush()?;
            eprintln!(
                "  P={p:5}: METIS {metis_s:7.2} s, imbalance {:.3}, max halo ratio {:.4}, max recv {} values, interface {:.3}",
                s.imbalance, s.max_halo_ratio, s.max_recv_values, s.max_interface_fraction
            );
            fit.push((
                tpp,
                s.max_send_values as f64,
                s.max_recv_values as f64,
                s.max_interface_fraction,
            ));
        }
    }
    // Surface law: values = c (T/P)^(2/3); c from a least-squares fit of log values on the
    // largest meshes' rows (those with >= 10k tets per part).
    let big: Vec<_> = fit.iter().filter(|r| r.0 >= 1e4).collect();
    let big = if big.is_empty() {
        fit.iter().collect()
    } else {
        big
    };
    let c_of = |sel: &dyn Fn(&Row) -> f64| -> f64 {
        let m = big
            .iter()
            .map(|r| (sel(r) / r.0.powf(2.0 / 3.0)).ln())
            .sum::<f64>()
            / big.len() as f64;
        m.exp()
    };
    let (cs, cr, ci) = (
        c_of(&|r| r.1),
        c_of(&|r| r.2),
        c_of(&|r| r.3 * r.0), // interface tets also scale like a surface
    );
    let mut eff = std::fs::File::create(out.join("efficiency_100M.csv"))?;
    writeln!(
        eff,
        "tets,parts,tets_per_part,halo_send_bytes,halo_recv_bytes,interface_fraction,step_ms,efficiency,pcie_gbs,net_gbs,latency_us,step_ns_per_tet"
    )?;
    let tets = 1e8;
    for &p in &parts {
        let tpp = tets / p as f64;
        let send = 8.0 * cs * tpp.powf(2.0 / 3.0);
        let recv = 8.0 * cr * tpp.powf(2.0 / 3.0);
        let iface = (ci * tpp.powf(2.0 / 3.0) / tpp).min(1.0);
        let (t, e) = model.efficiency(tets, p as f64, send, recv, iface);
        writeln!(
            eff,
            "{tets:.0},{p},{tpp:.0},{send:.0},{recv:.0},{iface:.4},{:.4},{e:.4},{},{},{},{}",
            t * 1e3,
            model.pcie / 1e9,
            model.net / 1e9,
            model.lat * 1e6,
            model.s_per_tet * 1e9
        )?;
        eprintln!(
            "100M tets, P={p:5}: halo {:.2} MB sent per step by the busiest rank, interface {:.3}, step {:.3} ms, efficiency {e:.3}",
            send / 1e6,
            iface,
            t * 1e3
        );
    }
    eprintln!(
        "fit: send {cs:.3} (T/P)^(2/3), recv {cr:.3} (T/P)^(2/3), interface tets {ci:.3} (T/P)^(2/3)"
    );
    Ok(())
}
