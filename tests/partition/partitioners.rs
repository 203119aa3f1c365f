//! The partitioners (feature `partition`): recursive coordinate bisection against METIS
//! (balance, coverage, connected parts for 2–4 parts on a box, halo on an unstructured Gmsh mesh, determinism, odd
//! part counts), the `partitioner` key of a run, and a partitioned run with RCB against the
//! one-process run.
//!
//! Run: `cargo test --release --features partition --test partition partitioners::`. The unstructured
//! mesh comes from Gmsh's Python module (`/usr/bin/python3 -c 'import gmsh'`); without it
//! that test says so and passes, unless `DGATD_REQUIRE_GMSH=1`.
#![cfg(feature = "partition")]

use dgatd::mesh::{Mesh, Topology, box_mesh};
use dgatd::partition::{HaloLists, LocalComm, Partition, Scheme, Stats};
use std::collections::VecDeque;

/// Every tet in exactly one of `np` parts, every part non-empty.
fn assert_covers(p: &Partition, n_tets: usize, np: usize) {
    assert_eq!(p.tet_part.len(), n_tets);
    let mut count = vec![0usize; np];
    for &r in &p.tet_part {
        assert!((r as usize) < np, "part {r} of {np}");
        count[r as usize] += 1;
    }
    assert!(count.iter().all(|&c| c > 0), "an empty part: {count:?}");
}

/// max / mean of the parts' summed weights.
fn imbalance(p: &Partition) -> f64 {
    let mut w = vec![0u64; p.n_parts];
    for (n, &r) in p.tet_part.iter().enumerate() {
        w[r as usize] += p.weights[n] as u64;
    }
    let mean = w.iter().sum::<u64>() as f64 / p.n_parts as f64;
    *w.iter().max().unwrap() as f64 / mean
}

/// Number of face-connected components of each part.
fn components(topo: &Topology, p: &Partition) -> Vec<usize> {
    let t = p.tet_part.len();
    let mut nbr = vec![Vec::new(); t];
    for ft in &topo.face_tets {
        if ft[1] != dgatd::mesh::NONE {
            nbr[ft[0] as usize].push(ft[1]);
            nbr[ft[1] as usize].push(ft[0]);
        }
    }
    let mut seen = vec![false; t];
    let mut comps = vec![0; p.n_parts];
    for s in 0..t {
        if seen[s] {
            continue;
        }
        let r = p.tet_part[s];
        comps[r as usize] += 1;
        seen[s] = true;
        let mut q = VecDeque::from([s]);
        while let Some(n) = q.pop_front() {
            for &m in &nbr[n] {
                let m = m as usize;
                if !seen[m] && p.tet_part[m] == r {
                    seen[m] = true;
                    q.push_back(m);
                }
            }
        }
    }
    comps
}

#[test]
fn rcb_balances_the_weights_and_covers_every_tet_for_any_part_count() {
    let m = box_mesh([24, 18, 14], [1.2, 0.9, 0.7]);
    let t = Topology::build(&m).unwrap();
    for np in [1, 2, 3, 4, 5, 6, 7, 8, 13, 16] {
        let p = Partition::rcb(&m, &t, None, np).unwrap();
        assert_covers(&p, m.n_tets(), np);
        let imb = imbalance(&p);
        // 36288 tets: ≥ 2268 per part, so one tet's weight is below 1/2000 of a part's
        assert!(imb <= 1.01, "{np} parts: imbalance {imb}");
        eprintln!(
            "rcb box {} tets, {np} parts: imbalance {imb:.5}, {} cut faces",
            m.n_tets(),
            p.cut_faces
        );
        let comps = components(&t, &p);
        eprintln!("  face-connected components per part: {comps:?}");
        // Known limit: cuts that fall inside a layer of cells can leave small fragments
        // (5 parts on this box: one part in 5 pieces); connected for 2, 3 and 4 parts.
        if np <= 4 {
            assert_eq!(comps, vec![1; np], "{np} parts: a part is not connected");
        }
    }
    // more parts than tets is an error, as for METIS
    let small = box_mesh([1, 1, 1], [1.0; 3]);
    let st = Topology::build(&small).unwrap();
    assert!(Partition::rcb(&small, &st, None, 7).is_err());
    assert_covers(&Partition::rcb(&small, &st, None, 6).unwrap(), 6, 6);
}

#[test]
fn rcb_is_deterministic_and_independent_of_the_thread_count() {
    let m = box_mesh([40, 30, 20], [1.0, 0.8, 0.5]);
    let t = Topology::build(&m).unwrap();
    for np in [3, 4, 7] {
        let a = Partition::rcb(&m, &t, None, np).unwrap().tet_part;
        let b = Partition::rcb(&m, &t, None, np).unwrap().tet_part;
        assert_eq!(a, b, "two calls differ ({np} parts)");
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let c = pool.install(|| Partition::rcb(&m, &t, None, np).unwrap().tet_part);
            assert_eq!(a, c, "{threads} threads differ ({np} parts)");
        }
    }
}

/// An unstructured mesh of a box with a spherical hole, from Gmsh with a random seed and a
/// random size; None (and a loud message) when Gmsh's Python module is missing.
fn gmsh_mesh(seed: u64, h: f64) -> Option<Mesh> {
    const SCRIPT: &str = r#"
import gmsh, sys
seed, h, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("b")
b = gmsh.model.occ.addBox(0, 0, 0, 1.0, 0.7, 0.5)
s = gmsh.model.occ.addSphere(0.45, 0.35, 0.25, 0.15)
gmsh.model.occ.cut([(3, b)], [(3, s)])
gmsh.model.occ.synchronize()
g = gmsh.model.addPhysicalGroup(3, [t for _, t in gmsh.model.getEntities(3)])
gmsh.model.setPhysicalName(3, g, "vacuum")
g = gmsh.model.addPhysicalGroup(2, [t for _, t in gmsh.model.getEntities(2)])
gmsh.model.setPhysicalName(2, g, "walls")
gmsh.option.setNumber("Mesh.CharacteristicLengthMax", h)
gmsh.option.setNumber("Mesh.RandomSeed", seed)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.model.mesh.generate(3)
gmsh.write(out)
gmsh.finalize()
"#;
    let out = std::env::temp_dir().join(format!("dgatd_rcb_{}_{seed}.msh", std::process::id()));
    let run = std::process::Command::new("/usr/bin/python3")
        .args(["-c", SCRIPT, &seed.to_string(), &h.to_string()])
        .arg(&out)
        .output();
    let ok = matches!(&run, Ok(o) if o.status.success());
    if !ok {
        let why = match run {
            Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
            Err(e) => e.to_string(),
        };
        if std::env::var("DGATD_REQUIRE_GMSH").as_deref() == Ok("1") {
            panic!("DGATD_REQUIRE_GMSH=1 but Gmsh failed: {why}");
        }
        eprintln!("SKIPPED: no Gmsh Python module (/usr/bin/python3 -c 'import gmsh'): {why}");
        return None;
    }
    let m = dgatd::mesh::read_gmsh(&out).expect("Gmsh's mesh reads");
    let _ = std::fs::remove_file(&out);
    Some(m)
}

/// On an unstructured mesh RCB's cut and halo stay within a stated factor of METIS's:
/// cut faces and halo values at most 1.6 times METIS's, balance within 1% (METIS's own
/// tolerance is 3%).
#[test]
fn rcb_halo_on_an_unstructured_mesh_is_within_a_factor_of_metis() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64 % 10_000)
        .unwrap_or(1);
    let h = 0.035 + 0.01 * (seed % 7) as f64 / 7.0;
    let Some(m) = gmsh_mesh(seed, h) else {
        return;
    };
    let t = Topology::build(&m).unwrap();
    let fixed = t.boundary_edge.clone();
    for np in [2, 4, 5, 8] {
        let stats = |s: Scheme| {
            let p = Partition::with(s, &m, &t, np).unwrap();
            assert_covers(&p, m.n_tets(), np);
            let h = HaloLists::build(&m, &t, &fixed, &p);
            (imbalance(&p), Stats::compute(&m, &t, &fixed, &p, &h))
        };
        let (ir, r) = stats(Scheme::Rcb);
        let (_, me) = stats(Scheme::Metis);
        let cut = r.cut_faces as f64 / me.cut_faces as f64;
        let halo = r.halo_values as f64 / me.halo_values as f64;
        eprintln!(
            "gmsh seed {seed} h {h:.4}: {} tets, {np} parts: rcb/metis cut faces {cut:.3}, halo values {halo:.3}, rcb imbalance {ir:.4}",
            m.n_tets()
        );
        assert!(ir <= 1.01, "seed {seed}, {np} parts: imbalance {ir}");
        assert!(
            cut <= 1.6 && halo <= 1.6,
            "seed {seed}, {np} parts: cut {cut}, halo {halo}"
        );
    }
}

/// `partitioner = "rcb"` reaches the partitioned run, which names it in its statistics and
/// reports its set-up phases; with the time step given, its record is the one-process
/// run's to round-off (and `partitioner` round-trips through `run.toml`'s configuration).
#[test]
fn a_partitioned_run_with_rcb_equals_the_one_process_run() {
    use dgatd::solver::Partitioner;
    use dgatd::solver::RunOptions;
    use dgatd::solver::run_partitioned;
    let base = dgatd::Config {
        box_mesh: Some("6,5,4:1,0.8,0.6".parse().unwrap()),
        steps: Some(300),
        backend: dgatd::solver::BackendKind::Cpu,
        source: Some([0.37, 0.41, 0.29]),
        probe: vec![[0.71, 0.23, 0.44], [0.18, 0.66, 0.27]],
        ..dgatd::Config::default()
    };
    let one = dgatd::run(&base, &mut |_, _| {}).unwrap();
    let cfg = dgatd::Config {
        partitioner: Partitioner::Rcb,
        dt: Some(one.dt_s),
        ..base.clone()
    };
    let text = cfg.to_toml().unwrap().to_string();
    assert!(text.contains("partitioner = \"rcb\""), "{text}");
    assert!(!base.to_toml().unwrap().to_string().contains("partitioner"));
    let back: dgatd::Config = toml::from_str(&text).unwrap();
    assert_eq!(back, cfg);
    let plan = dgatd::Plan::new(&cfg, None).unwrap();
    let out = LocalComm::run(3, |c| {
        run_partitioned(&c, 0, &plan, &mut RunOptions::default(), &mut |_, _| {}).unwrap()
    });
    let r0 = out.into_iter().next().unwrap();
    let stats = r0.stats.expect("rank 0 has the statistics");
    assert_eq!(stats.partitioner, Some(Scheme::Rcb));
    let res = r0.result.expect("rank 0 has the result");
    let times = res
        .setup_times
        .expect("a partitioned run reports its set-up phases");
    assert!(times.partition_s > 0.0 && times.total_s() <= res.setup_s * 1.001 + 1e-3);
    assert!(
        res.notices
            .iter()
            .any(|n| n.starts_with("partition: rcb in")),
        "{:?}",
        res.notices
    );
    assert!(
        res.notices.iter().any(|n| n.starts_with("setup ")),
        "{:?}",
        res.notices
    );
    let (a, b) = (&res.record.samples, &one.record.samples);
    assert_eq!(a.len(), b.len());
    let peak = b.iter().fold(0.0f64, |x, y| x.max(y.abs()));
    assert!(peak > 0.0);
    let diff = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "rcb 3 ranks vs one process: max |diff| / peak = {:.2e}",
        diff / peak
    );
    assert!(diff <= 1e-10 * peak, "max diff {diff} against peak {peak}");
}

/// `auto` takes METIS below `RCB_FROM_TETS` tets and RCB from there.
#[test]
fn auto_takes_metis_for_small_meshes_and_rcb_for_large_ones() {
    use dgatd::partition::RCB_FROM_TETS;
    assert_eq!(Scheme::auto(RCB_FROM_TETS - 1), Scheme::Metis);
    assert_eq!(Scheme::auto(RCB_FROM_TETS), Scheme::Rcb);
}
