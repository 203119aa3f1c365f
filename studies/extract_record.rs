//! Re-analyse a saved probe record (`probe.csv` of a resonator run: `t_s`, then one column
//! per probe component) with the library's harmonic inversion ([`dgatd::spectrum::extract`],
//! the resonator pipeline's default), over a window `[--from, --to)` of its samples.
//!
//! An open problem's record holds the free-space response only until the first reflection
//! from the absorber returns to the probes. Scanning the window's end (`--to` takes a list)
//! shows where that happens: a pole that stays put while the end moves is a property of the
//! resonator; one that moves or vanishes once the end passes the echo is not resolved
//! (`results/open/README.md`, "The layer's echo and the record length").
//!
//! `cargo run --release --example extract_record -- RECORD.csv --from 3.7e-9 --to 9.5e-9,14e-9
//! --fmin 2.7e7 --fmax 1.3e9`
//!
//! Output: CSV on stdout, `to_s,kind,f_hz,q,amplitude,f_hi_hz,poles`: one `line` row per
//! reported line (`f_hi_hz`, `poles` empty), one `unresolved` row per part of the band the
//! window did not resolve (`f_hz` is its lower end). A DGA record samples every leapfrog
//! step, so `f_hz` is corrected for the leapfrog's shift with the record's interval as Δt
//! (`spectrum::leapfrog_correction`), as the pipeline's `f_corrected_hz` is.

use clap::Parser;

use std::path::PathBuf;

#[derive(Parser)]
struct Args {
    /// The probe record (CSV with a header; gunzip the `.csv.gz` files first).
    record: PathBuf,
    /// First time analysed (s): after the source pulse has ended.
    #[arg(long)]
    from: f64,
    /// End(s) of the window (s); one analysis per value. Default: the whole record.
    #[arg(long, value_delimiter = ',')]
    to: Vec<f64>,
    /// Band (Hz).
    #[arg(long)]
    fmin: f64,
    #[arg(long)]
    fmax: f64,
    /// Lines with a lower Q are dropped (the pipeline's default for open problems is 1).
    #[arg(long, default_value_t = 1.0)]
    min_q: f64,
    /// Also print one `rejected:REASON` row per pole in the band that was not reported
    /// (`amplitude` relative to the record's largest sample, as for lines; `poles` is the
    /// disagreement of the two fits over the decay rate, `|Δs| / α`).
    #[arg(long)]
    rejected: bool,
    /// The loose consistency bound for broad lines, as a fraction of their decay rate
    /// (`ExtractSettings::loose_decay_error`; 0 turns the loose tier off).
    #[arg(long, default_value_t = 0.1)]
    loose_decay_error: f64,
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let a = Args::parse();
    let name = a.record.display().to_string();
    let mut rd = csv::Reader::from_path(&a.record).map_err(|e| format!("{name}: {e}"))?;
    let mut t = Vec::new();
    let mut cols: Vec<Vec<f64>> = Vec::new();
    for (i, row) in rd.records().enumerate() {
        let row = row.map_err(|e| format!("{name}: {e}"))?;
        let v: Vec<f64> = row
            .iter()
            .map(|x| x.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{name}, data row {}: {e}", i + 1))?;
        if v.len() < 2 {
            return Err(format!(
                "{name}, data row {}: expected t_s and a probe column",
                i + 1
            )
            .into());
        }
        if cols.is_empty() {
            cols = vec![Vec::new(); v.len() - 1];
        } else if v.len() != cols.len() + 1 {
            return Err(format!(
                "{name}, data row {}: {} columns, expected {}",
                i + 1,
                v.len(),
                cols.len() + 1
            )
            .into());
        }
        t.push(v[0]);
        for (c, x) in cols.iter_mut().zip(&v[1..]) {
            c.push(*x);
        }
    }
    if t.len() < 2 {
        return Err(format!("{name}: fewer than two samples").into());
    }
    let dt = t[1] - t[0];
    let ends = if a.to.is_empty() {
        vec![t[t.len() - 1] + dt]
    } else {
        a.to.clone()
    };
    let mut s = dgatd::spectrum::ExtractSettings::band(a.fmin, a.fmax);
    s.min_q = a.min_q;
    s.loose_decay_error = a.loose_decay_error;
    println!("to_s,kind,f_hz,q,amplitude,f_hi_hz,poles");
    for &to in &ends {
        let i0 = t.partition_point(|&x| x < a.from);
        let i1 = t.partition_point(|&x| x < to);
        if i1 <= i0 {
            return Err(format!("--to {to:e} is not after --from {:e}", a.from).into());
        }
        let sig: Vec<Vec<f64>> = cols.iter().map(|c| c[i0..i1].to_vec()).collect();
        let e = dgatd::spectrum::extract(&sig, dt, &s)?;
        for p in &e.peaks {
            println!(
                "{to:e},line,{:.6e},{:.4},{:.4e},,",
                dgatd::spectrum::leapfrog_correction(p.f_hz, dt),
                p.q.unwrap_or(f64::NAN),
                p.amplitude
            );
        }
        if a.rejected {
            for (p, why) in &e.rejected {
                let d = p.decay_per_s.unwrap_or(f64::NAN);
                let ds = p.error.unwrap_or(f64::NAN) * 2.0 * std::f64::consts::PI * p.f_hz;
                println!(
                    "{to:e},rejected:{why:?},{:.6e},{:.4},{:.4e},,{:.3e}",
                    dgatd::spectrum::leapfrog_correction(p.f_hz, dt),
                    p.q.unwrap_or(f64::NAN),
                    p.amplitude,
                    ds / d
                );
            }
        }
        for u in &e.unresolved {
            println!(
                "{to:e},unresolved,{:.6e},,{:.4e},{:.6e},{}",
                u.f_lo_hz,
                u.amplitude,
                u.f_hi_hz,
                u.poles + u.cancelling
            );
        }
    }
    Ok(())
}
