//! The smallest use of the library: a resonator run on a bundled mesh, on the CPU backend.
//!
//! The bundled coarse cylinder (r = 1 m, h = 0.5 m, 2.6k tets) is a PEC cavity; `dgatd::run`
//! meshes nothing, reads it, finds the time step, excites it with a pulse, records the probes,
//! extracts the resonances and matches them to the cavity's analytic modes. A few seconds:
//!
//! ```sh
//! cargo run --release --example resonator
//! ```

use dgatd::Config;
use dgatd::solver::BackendKind;

fn main() -> dgatd::Result<()> {
    // Every field has a default (the `dgatd resonator` flags of the same names); the record
    // length and the backend are set here so the run is short and needs no OpenCL device.
    let cfg = Config {
        mesh: Some("bundled:coarse".into()),
        time: Some(3e-7),
        backend: BackendKind::Cpu,
        ..Default::default()
    };
    // The callback reports progress (step, steps): a command line would draw a bar with it.
    let r = dgatd::run(&cfg, &mut |_, _| {})?;
    println!(
        "{} tets, {} steps of {:.3e} s on the {} backend",
        r.mesh.n_tets(),
        r.record.steps,
        r.dt_s,
        r.backend
    );
    // `matched`: each analytic mode of the cavity up to the band's top, with the line the
    // extraction assigned to it (frequency corrected for the leapfrog's time error).
    for m in &r.analysis.matched {
        match &m.peak {
            Some((_, f)) => println!(
                "{:>6}  analytic {:>8.3} MHz  computed {:>8.3} MHz  ({:+.2}%)",
                m.mode.name,
                m.mode.f_hz / 1e6,
                f / 1e6,
                100.0 * (f - m.mode.f_hz) / m.mode.f_hz
            ),
            None => println!(
                "{:>6}  analytic {:>8.3} MHz  not seen by the probes",
                m.mode.name,
                m.mode.f_hz / 1e6
            ),
        }
    }
    Ok(())
}
