//! The DG right-hand side `dq/dt = L q` evaluated on the CPU (rayon over tets): the reference
//! every device form is tested against, the energy, the power iteration for ρ(L) and the
//! stable LSERK4 time step. The CPU stepper that integrates it is
//! [`crate::backend::cpu::DgCpuStepper`].

use super::DgOperator;
use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::problem::Waveform;
use crate::util::{V3, cross};
use rayon::prelude::*;

/// A point source `J = w(t) d̂` spread uniformly over one tet.
#[derive(Clone, Debug)]
pub struct DgSource {
    pub tet: usize,
    pub dir: V3,
    pub wave: Waveform,
}

/// A point probe of E: interpolation weights over the nodes of one tet.
#[derive(Clone, Debug)]
pub struct DgProbe {
    pub tet: usize,
    pub w: Vec<f64>,
}

impl DgProbe {
    pub fn new(mesh: &Mesh, op: &DgOperator, p: V3) -> Result<DgProbe> {
        let tet = mesh.locate(p).ok_or_else(|| {
            Error::config(
                "probe point",
                format!("{p:?}"),
                format!("outside the mesh {}", mesh.source),
            )
        })?;
        let lam = mesh.barycentric(tet, p);
        // (r, s, t) from barycentric coordinates of vertices 1..3
        let rst = [2.0 * lam[1] - 1.0, 2.0 * lam[2] - 1.0, 2.0 * lam[3] - 1.0];
        Ok(DgProbe {
            tet,
            w: op.re.interpolation_row(rst),
        })
    }
    pub fn sample(&self, q: &[f64], np: usize) -> [f64; 3] {
        std::array::from_fn(|c| {
            let base = (self.tet * 6 + c) * np;
            (0..np).map(|i| self.w[i] * q[base + i]).sum()
        })
    }
}

/// `rhs = L(q)` (without the source), the semi-discrete DG operator.
pub fn rhs(op: &DgOperator, q: &[f64], out: &mut [f64]) {
    let np = op.re.np;
    let nfp = op.re.nfp;
    let dr = op.re.dr.transpose(); // column-major storage of the transpose = row-major D
    let ds = op.re.ds.transpose();
    let dt = op.re.dt.transpose();
    let (drs, dss, dts) = (dr.as_slice(), ds.as_slice(), dt.as_slice());
    let lift = op.re.lift.transpose();
    let ls = lift.as_slice(); // row i of LIFT: ls[i*4nfp ..]
    out.par_chunks_mut(6 * np).enumerate().for_each(|(k, o)| {
        let ql = &q[k * 6 * np..(k + 1) * 6 * np];
        let g = op.geo[k];
        // derivatives of the 6 components
        let mut d = vec![0.0; 3 * 6 * np]; // [dir][c][i]
        for c in 0..6 {
            let u = &ql[c * np..(c + 1) * np];
            for i in 0..np {
                let (mut a, mut b, mut e) = (0.0, 0.0, 0.0);
                let row = i * np;
                for j in 0..np {
                    a += drs[row + j] * u[j];
                    b += dss[row + j] * u[j];
                    e += dts[row + j] * u[j];
                }
                d[c * np + i] = a;
                d[6 * np + c * np + i] = b;
                d[12 * np + c * np + i] = e;
            }
        }
        // physical derivative ∂_x (x = 0..2) of component c at node i
        let pd = |x: usize, c: usize, i: usize| {
            g[3 * x] * d[c * np + i]
                + g[3 * x + 1] * d[6 * np + c * np + i]
                + g[3 * x + 2] * d[12 * np + c * np + i]
        };
        // fluxes at the face points, scaled by Fscale
        let mut fl = vec![0.0; 6 * 4 * nfp]; // [c][m]
        let zm = (op.mu[k] / op.eps[k]).sqrt();
        for f in 0..4 {
            let n = op.normal[k * 4 + f];
            let fs = op.fscale[k * 4 + f];
            for m in 0..nfp {
                let idm = k * np + op.re.fmask[f][m];
                let idp = op.vmap_p[(k * 4 + f) * nfp + m] as usize;
                let (kp, ip) = (idp / np, idp % np);
                let e_m: V3 = std::array::from_fn(|c| q[(k * 6 + c) * np + idm % np]);
                let h_m: V3 = std::array::from_fn(|c| q[(k * 6 + 3 + c) * np + idm % np]);
                let (de, dh, zp) = if idp == idm {
                    (e_m.map(|x| -2.0 * x), [0.0; 3], zm)
                } else {
                    let e_p: V3 = std::array::from_fn(|c| q[(kp * 6 + c) * np + ip]);
                    let h_p: V3 = std::array::from_fn(|c| q[(kp * 6 + 3 + c) * np + ip]);
                    (
                        std::array::from_fn(|c| e_p[c] - e_m[c]),
                        std::array::from_fn(|c| h_p[c] - h_m[c]),
                        (op.mu[kp] / op.eps[kp]).sqrt(),
                    )
                };
                let (fe, fh) = face_flux(n, de, dh, zm, zp, op.alpha);
                for c in 0..3 {
                    fl[c * 4 * nfp + f * nfp + m] = fs * fe[c];
                    fl[(3 + c) * 4 * nfp + f * nfp + m] = fs * fh[c];
                }
            }
        }
        let (ie, im) = (1.0 / op.eps[k], 1.0 / op.mu[k]);
        for i in 0..np {
            let curl_h = [
                pd(1, 5, i) - pd(2, 4, i),
                pd(2, 3, i) - pd(0, 5, i),
                pd(0, 4, i) - pd(1, 3, i),
            ];
            let curl_e = [
                pd(1, 2, i) - pd(2, 1, i),
                pd(2, 0, i) - pd(0, 2, i),
                pd(0, 1, i) - pd(1, 0, i),
            ];
            let row = &ls[i * 4 * nfp..(i + 1) * 4 * nfp];
            for c in 0..3 {
                let le: f64 = (0..4 * nfp).map(|m| row[m] * fl[c * 4 * nfp + m]).sum();
                let lh: f64 = (0..4 * nfp)
                    .map(|m| row[m] * fl[(3 + c) * 4 * nfp + m])
                    .sum();
                o[c * np + i] = ie * (curl_h[c] + le);
                o[(3 + c) * np + i] = im * (-curl_e[c] - lh);
            }
        }
    });
}

/// Flux differences `(n×(H*−H⁻), n×(E*−E⁻))` from the jumps (module docs).
#[inline]
pub fn face_flux(n: V3, de: V3, dh: V3, zm: f64, zp: f64, alpha: f64) -> (V3, V3) {
    let nde = cross(n, de);
    let ndh = cross(n, dh);
    let nnde = cross(n, nde);
    let nndh = cross(n, ndh);
    let s = 1.0 / (zm + zp);
    (
        std::array::from_fn(|c| s * (zp * ndh[c] - alpha * nnde[c])),
        std::array::from_fn(|c| s * (zm * nde[c] + alpha * zp * zm * nndh[c])),
    )
}

/// Discrete energy `½ Σ_k J_k Σ_ij M_ij (ε E_i·E_j + μ H_i·H_j)`.
pub fn energy(op: &DgOperator, q: &[f64]) -> f64 {
    let np = op.re.np;
    let m = &op.re.mass;
    let per: Vec<f64> = (0..op.k)
        .into_par_iter()
        .map(|k| {
            let mut s = 0.0;
            for c in 0..6 {
                let w = if c < 3 { op.eps[k] } else { op.mu[k] };
                let u = &q[(k * 6 + c) * np..(k * 6 + c + 1) * np];
                let mut acc = 0.0;
                for i in 0..np {
                    let mut r = 0.0;
                    for j in 0..np {
                        r += m[(i, j)] * u[j];
                    }
                    acc += u[i] * r;
                }
                s += w * acc;
            }
            0.5 * op.jac[k] * s
        })
        .collect();
    per.iter().sum()
}

/// Wall-clock seconds of one application of the operator on this machine (seeded data),
/// for the setup's time estimate.
pub fn seconds_per_application(op: &DgOperator) -> f64 {
    let n = op.n_dofs();
    let mut rng = crate::util::Rng::new(RHO_SEED);
    let x: Vec<f64> = (0..n).map(|_| rng.sym()).collect();
    let mut y = vec![0.0; n];
    let t0 = std::time::Instant::now();
    rhs(op, &x, &mut y);
    t0.elapsed().as_secs_f64()
}

/// Spectral radius of the semi-discrete operator by power iteration on `L²` (seeded).
pub fn spectral_radius(op: &DgOperator, iters: usize, seed: u64) -> f64 {
    let n = op.n_dofs();
    let mut rng = crate::util::Rng::new(seed);
    let mut x: Vec<f64> = (0..n).map(|_| rng.sym()).collect();
    let mut y = vec![0.0; n];
    let mut z = vec![0.0; n];
    let mut est = 0.0;
    for _ in 0..iters {
        let nx = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        x.iter_mut().for_each(|v| *v /= nx);
        rhs(op, &x, &mut y);
        rhs(op, &y, &mut z);
        est = z.iter().map(|v| v * v).sum::<f64>().sqrt().sqrt();
        std::mem::swap(&mut x, &mut z);
    }
    est
}

/// Power iterations and seed of the spectral-radius estimate (CPU and device alike).
pub const RHO_ITERS: usize = 40;
pub const RHO_SEED: u64 = 0x5eed;

/// Stable LSERK4 time step from an estimate `rho_est` of ρ: `CFL · r / (1.05 ρ)`; returns
/// `(Δt, 1.05 ρ)`.
pub fn time_step_for(rho_est: f64, cfl: f64) -> (f64, f64) {
    let rho = rho_est * 1.05;
    (cfl * super::lserk_safe_radius() / rho, rho)
}

/// Stable LSERK4 time step with ρ from the CPU power iteration.
pub fn time_step(op: &DgOperator, cfl: f64) -> (f64, f64) {
    time_step_for(spectral_radius(op, RHO_ITERS, RHO_SEED), cfl)
}
