//! Hostile configuration values (issue 47): every numeric key of a resonator
//! configuration given -1, 0, NaN, ±inf, ±1e300, 1e-300 or i64::MAX, one to three keys at a
//! time (proptest, fixed ChaCha seed), on a small generated box. The library must return
//! a clean error or run; it must never panic, and every case must end within a liveness
//! limit (a hang is a failure too).

use dgatd::solver::{Config, Origin};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, RngAlgorithm, TestRng, TestRunner};
use std::time::Duration;

/// Every numeric key, written as TOML (`{}` is the value; keys in tables as table lines).
const KEYS: &[&str] = &[
    "refine = {}",
    "steps = {}",
    "time = {}",
    "cfl = {}",
    "dt = {}",
    "source = [{}, 0.3, 0.3]",
    "source_dir = [{}, 0, 1]",
    "source_radius = {}",
    "probe = [[0.3, {}, 0.3]]",
    "f_peak = {}",
    "fmax = {}",
    "min_prominence = {}",
    "min_q = {}",
    "mode_shapes = {}",
    "seed = {}",
    "order = {}",
    "checkpoint_steps = {}",
    "checkpoint_minutes = {}",
    "energy_checks = {}",
    "gpus = {}",
    "[materials.vacuum]\neps_r = {}",
    "[materials.vacuum]\nmu_r = {}",
    "[materials.vacuum]\nsigma = {}",
    "[materials.vacuum]\nsigma_m = {}",
    "[materials.vacuum]\ntan_delta = {}\nf_tan_delta = 1e9",
    "[materials.vacuum]\ntan_delta = 0.01\nf_tan_delta = {}",
    "[materials.vacuum]\ndebye = [{ delta_eps = {}, tau = 1e-10 }]",
    "[materials.vacuum]\ndebye = [{ delta_eps = 2, tau = {} }]",
    "[materials.vacuum]\ndrude = [{ f_p = {}, gamma = 1e7 }]",
    "[materials.vacuum]\ndrude = [{ f_p = 1e8, gamma = {} }]",
    "[materials.vacuum]\nlorentz = [{ delta_eps = {}, f_0 = 1e8, delta = 1e6 }]",
    "[materials.vacuum]\nlorentz = [{ delta_eps = 1, f_0 = {}, delta = 1e6 }]",
    "[materials.vacuum]\nlorentz = [{ delta_eps = 1, f_0 = 1e8, delta = {} }]",
    "[materials.vacuum]\nabsorbing = true\nlayer_order = {}",
    "[materials.vacuum]\nabsorbing = true\nlayer_reflection = {}",
    "[boundaries.xmin]\nkind = \"conductor\"\nsigma = {}",
    "[boundaries.xmin]\nkind = \"conductor\"\nsigma = 1e7\nmu_r = {}",
];

const VALUES: &[&str] = &[
    "-1",
    "0",
    "nan",
    "inf",
    "-inf",
    "1e300",
    "-1e300",
    "1e-300",
    "9223372036854775807",
];

/// The configuration text of a case: a 2x2x2 box of 1 m on the CPU, 40 steps, with each
/// (key, value) of the case; table keys after the top-level ones.
fn text(case: &[(usize, usize)]) -> String {
    let mut top = String::from("box = \"2,2,2\"\nbackend = \"cpu\"\n");
    let mut tables: Vec<String> = vec![];
    let mut given_steps = false;
    for &(k, v) in case {
        let line = KEYS[k].replacen("{}", VALUES[v], 1);
        given_steps |= KEYS[k].starts_with("steps") || KEYS[k].starts_with("time");
        if line.starts_with('[') {
            tables.push(line);
        } else {
            top.push_str(&line);
            top.push('\n');
        }
    }
    if !given_steps {
        top.push_str("steps = 40\n");
    }
    top + "\n" + &tables.join("\n")
}

/// Runs one case in a thread: `Ok(true)` ran, `Ok(false)` a clean error, `Err` a panic
/// (with its message); `None` when it did not end within `limit`.
fn run_case(text: String, limit: Duration) -> Option<Result<bool, String>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| {
            let origin = Origin {
                path: "hostile.toml".into(),
                text,
            };
            match Config::parse(&origin) {
                Err(_) => false,
                Ok(cfg) => dgatd::run(&cfg, &mut |_, _| {}).is_ok(),
            }
        })
        .map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        });
        let _ = tx.send(r);
    });
    rx.recv_timeout(limit).ok()
}

#[test]
fn hostile_values_of_every_key_give_an_error_or_a_run_never_a_panic() {
    let cases: u32 = std::env::var("DGATD_HOSTILE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(250);
    let mut runner = TestRunner::new_with_rng(
        RunnerConfig {
            cases,
            failure_persistence: None,
            ..RunnerConfig::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[47u8; 32]),
    );
    let strat = proptest::collection::vec((0..KEYS.len(), 0..VALUES.len()), 1..4);
    let counts = std::cell::Cell::new((0usize, 0usize));
    runner
        .run(&strat, |case| {
            let t = text(&case);
            match run_case(t.clone(), Duration::from_secs(120)) {
                None => prop_assert!(false, "no end within 120 s:\n{t}"),
                Some(Err(msg)) => prop_assert!(false, "panicked ({msg}):\n{t}"),
                Some(Ok(ran)) => {
                    let (r, e) = counts.get();
                    counts.set(if ran { (r + 1, e) } else { (r, e + 1) });
                }
            }
            Ok(())
        })
        .unwrap();
    let (ran, refused) = counts.get();
    eprintln!("{ran} cases ran, {refused} were refused with an error");
    // each single hostile value of each key, too (the exhaustive pairs above are sampled)
    for k in 0..KEYS.len() {
        for v in 0..VALUES.len() {
            let t = text(&[(k, v)]);
            match run_case(t.clone(), Duration::from_secs(120)) {
                None => panic!("no end within 120 s:\n{t}"),
                Some(Err(msg)) => panic!("panicked ({msg}):\n{t}"),
                Some(Ok(_)) => {}
            }
        }
    }
}
