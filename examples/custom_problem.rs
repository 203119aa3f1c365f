//! A problem of one's own through the public API: a generated box, a dielectric fill, two
//! magnetic (PMC) walls and a lossy dielectric, then every line the extraction found with
//! its Q. The same problem as the configuration file `examples/configs/pmc_box.toml`, built
//! in code (`Config` is also what `dgatd resonator --config FILE` reads). A few seconds:
//!
//! ```sh
//! cargo run --release --example custom_problem
//! ```

use dgatd::Config;
use dgatd::problem::{Boundary, BoundaryKind, Material};
use dgatd::solver::BackendKind;

fn main() -> dgatd::Result<()> {
    let mut cfg = Config {
        // 10 x 8 x 6 cells of 6 tets over 1 m x 0.8 m x 0.6 m. The box mesher names its
        // volume `vacuum` and its walls xmin, xmax, ymin, ymax, zmin, zmax.
        box_mesh: Some("10,8,6:1,0.8,0.6".parse()?),
        time: Some(2e-7),
        backend: BackendKind::Cpu,
        ..Default::default()
    };
    // Materials are keyed by the mesh's volume group names: here ε_r = 2.25 with a loss
    // tangent of 1e-3 at 200 MHz (a conductivity σ = 2π f ε₀ ε_r tanδ).
    cfg.materials.insert(
        "vacuum".into(),
        Material {
            eps_r: 2.25,
            tan_delta: Some(1e-3),
            f_tan_delta: Some(2e8),
            ..Default::default()
        },
    );
    // Boundaries by surface group name; the walls not named stay PEC.
    for wall in ["xmin", "xmax"] {
        let pmc = Boundary {
            kind: BoundaryKind::Pmc,
            sigma: None,
            mu_r: None,
        };
        cfg.boundaries.insert(wall.into(), pmc);
    }
    let r = dgatd::run(&cfg, &mut |_, _| {})?;
    println!(
        "{} tets, Δt = {:.3e} s, {} lines:",
        r.mesh.n_tets(),
        r.dt_s,
        r.analysis.peaks.len()
    );
    // Each line with its label (the analytic mode of the box it was matched to, if any). A
    // fixed σ gives Q = ω ε / σ = (f / 200 MHz) / tanδ: about 1000 at 200 MHz.
    for (p, label) in r.analysis.peaks.iter().zip(&r.analysis.labels) {
        let q = p.q.map_or("-".to_string(), |q| format!("{q:.0}"));
        let mode = label.mode.as_deref().unwrap_or("(no label)");
        println!("{:>9.3} MHz  Q {q:>6}  {mode}", p.f_hz / 1e6);
    }
    Ok(())
}
