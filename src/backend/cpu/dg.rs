//! The nodal DG method on the CPU: the LSERK4 stepper (five stages of
//! `res = a·res + Δt·L(q)`, `q += b·res`, [`crate::dg`]'s coefficients) over the reference
//! right-hand side [`crate::dg::rhs`], with the source added at each stage's time.

use crate::backend::Stepper;
use crate::dg::rhs::{DgProbe, DgSource, energy, rhs};
use crate::dg::{DgOperator, RK4A, RK4B, RK4C};
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// The CPU DG stepper.
pub struct DgCpuStepper {
    pub op: Arc<DgOperator>,
    pub q: Vec<f64>,
    res: Vec<f64>,
    k: Vec<f64>,
    pub dt: f64,
    pub source: Option<DgSource>,
    pub probes: Vec<DgProbe>,
}

impl DgCpuStepper {
    pub fn new(
        op: Arc<DgOperator>,
        dt: f64,
        source: Option<DgSource>,
        probes: Vec<DgProbe>,
    ) -> Self {
        let n = op.n_dofs();
        DgCpuStepper {
            op,
            q: vec![0.0; n],
            res: vec![0.0; n],
            k: vec![0.0; n],
            dt,
            source,
            probes,
        }
    }

    /// One LSERK4 step from time `t`.
    pub fn step(&mut self, t: f64) {
        let np = self.op.re.np;
        for s in 0..5 {
            rhs(&self.op, &self.q, &mut self.k);
            if let Some(src) = &self.source {
                let w = src.wave.at(t + RK4C[s] * self.dt) / self.op.eps[src.tet];
                for c in 0..3 {
                    for i in 0..np {
                        self.k[(src.tet * 6 + c) * np + i] -= w * src.dir[c];
                    }
                }
            }
            let (a, b, dt) = (RK4A[s], RK4B[s], self.dt);
            self.res
                .par_iter_mut()
                .zip(self.q.par_iter_mut())
                .zip(self.k.par_iter())
                .for_each(|((r, q), k)| {
                    *r = a * *r + dt * k;
                    *q += b * *r;
                });
        }
    }
}

impl Stepper for DgCpuStepper {
    fn name(&self) -> String {
        format!(
            "cpu (rayon, {} threads, DG N={})",
            rayon::current_num_threads(),
            self.op.re.n
        )
    }
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        let np = self.op.re.np;
        for s in first..first + n {
            self.step(s as f64 * self.dt);
            for p in &self.probes {
                samples.extend(p.sample(&self.q, np));
            }
        }
        Ok(())
    }
    fn energy(&mut self) -> Result<f64> {
        Ok(energy(&self.op, &self.q))
    }
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        Ok((self.q.clone(), vec![]))
    }
    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        if u.len() != self.q.len() || !f.is_empty() {
            return Err(Error::config(
                "state",
                format!("{}+{}", u.len(), f.len()),
                "length does not match the DG discretisation",
            ));
        }
        self.q.copy_from_slice(u);
        self.res.iter_mut().for_each(|r| *r = 0.0);
        Ok(())
    }
}
