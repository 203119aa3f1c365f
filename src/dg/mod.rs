//! Nodal discontinuous Galerkin for Maxwell's equations on the same tetrahedral meshes
//! (Hesthaven & Warburton 2002, 2008), the comparison path of the DGA solver.
//!
//! Equations (c = 1: time in metres of light travel; ε, μ relative, per tet):
//! `ε ∂t E = ∇×H − J`, `μ ∂t H = −∇×E`, with E, H nodal polynomials of order N on each tet.
//! Strong form with numerical fluxes `E*`, `H*` on each face (n the outward normal of the
//! element "−", `[u] = u⁺ − u⁻`, `Z = sqrt(μ/ε)`, `α = 1` upwind, `α = 0` central):
//!
//! `ε ∂t E = ∇×H + LIFT·Fscale·n×(H* − H⁻)`, `n×(H* − H⁻) = (Z⁺ n×[H] − α n×(n×[E])) / (Z⁻ + Z⁺)`,
//! `μ ∂t H = −∇×E − LIFT·Fscale·n×(E* − E⁻)`, `n×(E* − E⁻) = (Z⁻ n×[E] + α Z⁺Z⁻ n×(n×[H])) / (Z⁻ + Z⁺)`,
//!
//! the exact solution of the 1D Riemann problem normal to the face for α = 1. PEC walls by
//! the mirror principle: `E⁺ = −E⁻`, `H⁺ = H⁻`, `Z⁺ = Z⁻`. Time stepping: the five-stage,
//! fourth-order low-storage Runge–Kutta scheme of Carpenter and Kennedy (1994). Time step:
//! `Δt = CFL · r / ρ`, ρ the spectral radius of the semi-discrete operator (power iteration,
//! 5% margin) and r the radius of the largest left half-disc inside the scheme's stability
//! region (computed from its stability polynomial).
//!
//! Storage: `q[(k·6 + c)·Np + i]`, component c = Ex, Ey, Ez, Hx, Hy, Hz at node i of tet k.

pub(crate) mod basis;
pub(crate) mod rhs;

pub use basis::RefElement;
pub use rhs::{DgProbe, DgSource, RHO_ITERS, RHO_SEED, energy, spectral_radius, time_step};

use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::util::{C64, V3, cross, norm};

use std::collections::HashMap;

/// Numerical flux.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Flux {
    #[default]
    Upwind,
    Central,
}

impl Flux {
    pub fn alpha(self) -> f64 {
        match self {
            Flux::Upwind => 1.0,
            Flux::Central => 0.0,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Flux::Upwind => "upwind",
            Flux::Central => "central",
        }
    }
}

/// Carpenter–Kennedy LSERK(5,4) coefficients: `a`, `b`, `c`.
pub const RK4A: [f64; 5] = [
    0.0,
    -567301805773.0 / 1357537059087.0,
    -2404267990393.0 / 2016746695238.0,
    -3550918686646.0 / 2091501179385.0,
    -1275806237668.0 / 842570457699.0,
];
pub const RK4B: [f64; 5] = [
    1432997174477.0 / 9575080441755.0,
    5161836677717.0 / 13612068292357.0,
    1720146321549.0 / 2090206949498.0,
    3134564353537.0 / 4481467310338.0,
    2277821191437.0 / 14882151754819.0,
];
pub const RK4C: [f64; 5] = [
    0.0,
    1432997174477.0 / 9575080441755.0,
    2526269341429.0 / 6820363183890.0,
    2006345519317.0 / 3224310063776.0,
    2802321613138.0 / 2924317926251.0,
];

/// Amplification factor of one LSERK step for `y' = z y`.
pub fn lserk_amplification(z: C64) -> C64 {
    let mut y = C64::new(1.0, 0.0);
    let mut res = C64::new(0.0, 0.0);
    for s in 0..5 {
        res = res * RK4A[s] + z * y;
        y += res * RK4B[s];
    }
    y
}

/// Radius of the largest half-disc `{|z| ≤ r, Re z ≤ 0}` inside the LSERK stability region.
pub fn lserk_safe_radius() -> f64 {
    let mut r_min = f64::INFINITY;
    for a in 0..=90 {
        let th = std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * a as f64 / 90.0;
        let dir = C64::from_polar(1.0, th);
        // first radius where |R| exceeds 1, by stepping then bisection
        let mut lo = 0.0;
        let mut hi = 0.05;
        while lserk_amplification(dir * hi).norm() <= 1.0 + 1e-12 && hi < 10.0 {
            lo = hi;
            hi += 0.05;
        }
        for _ in 0..50 {
            let m = 0.5 * (lo + hi);
            if lserk_amplification(dir * m).norm() <= 1.0 + 1e-12 {
                lo = m;
            } else {
                hi = m;
            }
        }
        r_min = r_min.min(lo);
    }
    r_min
}

/// The DG discretisation of a mesh at order N: reference element, geometric factors,
/// face connectivity and materials.
pub struct DgOperator {
    pub re: RefElement,
    pub k: usize,
    /// `[rx, sx, tx, ry, sy, ty, rz, sz, tz]` per tet.
    pub geo: Vec<[f64; 9]>,
    /// Volume Jacobian (|tet| / (4/3)) per tet.
    pub jac: Vec<f64>,
    /// Outward unit normal and `Fscale = sJ / J` per (tet, face).
    pub normal: Vec<V3>,
    pub fscale: Vec<f64>,
    /// Global node index of the "+" side of each face point `(k·4 + f)·Nfp + m`;
    /// equal to the "−" node on PEC walls.
    pub vmap_p: Vec<u32>,
    pub eps: Vec<f64>,
    pub mu: Vec<f64>,
    /// Physical coordinates of every node, `k·Np + i`.
    pub x: Vec<V3>,
    pub alpha: f64,
    pub flux: Flux,
}

/// Local vertices of the four faces (1: t=-1, 2: s=-1, 3: r+s+t=-1, 4: r=-1).
pub const FACE_VERTS: [[usize; 3]; 4] = [[0, 1, 2], [0, 1, 3], [1, 2, 3], [0, 2, 3]];

impl DgOperator {
    /// Builds the operator of order `n` (1..=10) with per-tet `eps`, `mu`.
    pub fn new(mesh: &Mesh, n: usize, flux: Flux, eps: &[f64], mu: &[f64]) -> Result<DgOperator> {
        if !(1..=10).contains(&n) {
            return Err(Error::config("order", n, "must be in 1..=10"));
        }
        let re = RefElement::new(n);
        let k = mesh.n_tets();
        let np = re.np;
        let mut geo = Vec::with_capacity(k);
        let mut jac = Vec::with_capacity(k);
        let mut normal = Vec::with_capacity(4 * k);
        let mut fscale = Vec::with_capacity(4 * k);
        let mut x = Vec::with_capacity(k * np);
        for t in 0..k {
            let v = mesh.tet_x(t);
            let d = |a: usize| std::array::from_fn::<f64, 3, _>(|c| 0.5 * (v[a][c] - v[0][c]));
            let (xr, xs, xt) = (d(1), d(2), d(3));
            let jm = nalgebra::Matrix3::from_fn(|r, c| [xr, xs, xt][c][r]);
            let j = jm.determinant();
            if !(j > 0.0) {
                return Err(Error::MeshInvalid {
                    path: mesh.source.clone(),
                    msg: format!(
                        "tetrahedron {} has a non-positive Jacobian {j:e}",
                        mesh.tet_ids[t]
                    ),
                });
            }
            let inv = jm.try_inverse().ok_or_else(|| Error::MeshInvalid {
                path: mesh.source.clone(),
                msg: format!("tetrahedron {} is degenerate", mesh.tet_ids[t]),
            })?;
            // inv rows: grad r, grad s, grad t
            let g = [
                inv[(0, 0)],
                inv[(1, 0)],
                inv[(2, 0)],
                inv[(0, 1)],
                inv[(1, 1)],
                inv[(2, 1)],
                inv[(0, 2)],
                inv[(1, 2)],
                inv[(2, 2)],
            ];
            geo.push(g);
            jac.push(j);
            let gr = [g[0], g[3], g[6]];
            let gs = [g[1], g[4], g[7]];
            let gt = [g[2], g[5], g[8]];
            for f in 0..4 {
                let nn: V3 = match f {
                    0 => [-gt[0], -gt[1], -gt[2]],
                    1 => [-gs[0], -gs[1], -gs[2]],
                    2 => std::array::from_fn(|c| gr[c] + gs[c] + gt[c]),
                    _ => [-gr[0], -gr[1], -gr[2]],
                };
                let s = norm(nn);
                normal.push([nn[0] / s, nn[1] / s, nn[2] / s]);
                fscale.push(s);
            }
            for p in &re.rst {
                let [r, s, tt] = *p;
                let w = [
                    -(r + s + tt + 1.0) / 2.0,
                    (1.0 + r) / 2.0,
                    (1.0 + s) / 2.0,
                    (1.0 + tt) / 2.0,
                ];
                x.push(std::array::from_fn(|c| {
                    (0..4).map(|a| w[a] * v[a][c]).sum()
                }));
            }
        }
        let vmap_p = face_map(mesh, &re, &x)?;
        let _ = cross;
        Ok(DgOperator {
            re,
            k,
            geo,
            jac,
            normal,
            fscale,
            vmap_p,
            eps: eps.to_vec(),
            mu: mu.to_vec(),
            x,
            alpha: flux.alpha(),
            flux,
        })
    }

    pub fn np(&self) -> usize {
        self.re.np
    }
    pub fn n_dofs(&self) -> usize {
        6 * self.k * self.re.np
    }
    /// Floating-point operations of one right-hand-side evaluation (the model the bench
    /// reports): volume derivatives `18·2·Np²`, curls and scaling `~30·Np`, fluxes `~60` per
    /// face point, lift `6·2·Np·4Nfp`, per tet.
    /// The counts the cost models read ([`crate::cost`]).
    pub fn counts(&self) -> crate::cost::DgCounts {
        crate::cost::DgCounts {
            tets: self.k,
            np: self.re.np,
            nfp: self.re.nfp,
            flops_per_rhs: self.flops_per_rhs(),
            dofs: self.n_dofs(),
        }
    }

    pub fn flops_per_rhs(&self) -> f64 {
        let (np, nfp) = (self.re.np as f64, self.re.nfp as f64);
        self.k as f64 * (36.0 * np * np + 30.0 * np + 60.0 * 4.0 * nfp + 48.0 * np * nfp)
    }
}

/// The "+" node of every face point: face connectivity by sorted vertex triples, then node
/// matching by coordinates (a boundary face point is its own "+" node: the PEC mirror).
fn face_map(mesh: &Mesh, re: &RefElement, x: &[V3]) -> Result<Vec<u32>> {
    let (k, np, nfp) = (mesh.n_tets(), re.np, re.nfp);
    let mut faces: HashMap<[u32; 3], Vec<(usize, usize)>> = HashMap::with_capacity(2 * k);
    for t in 0..k {
        for (f, fv) in FACE_VERTS.iter().enumerate() {
            let mut key = fv.map(|a| mesh.tets[t][a]);
            key.sort_unstable();
            faces.entry(key).or_default().push((t, f));
        }
    }
    let mut vmap_p = vec![0u32; k * 4 * nfp];
    for t in 0..k {
        for f in 0..4 {
            for m in 0..nfp {
                vmap_p[(t * 4 + f) * nfp + m] = (t * np + re.fmask[f][m]) as u32;
            }
        }
    }
    for list in faces.values() {
        if let [(k1, f1), (k2, f2)] = list[..] {
            let h = mesh.tet_volume(k1).cbrt();
            for (ka, fa, kb, fb) in [(k1, f1, k2, f2), (k2, f2, k1, f1)] {
                for m in 0..nfp {
                    let xa = x[ka * np + re.fmask[fa][m]];
                    let found = (0..nfp).find(|&m2| {
                        let xb = x[kb * np + re.fmask[fb][m2]];
                        norm(crate::util::sub(xa, xb)) < 1e-8 * h
                    });
                    let m2 = found.ok_or_else(|| Error::MeshInvalid {
                        path: mesh.source.clone(),
                        msg: format!(
                            "DG face nodes of tetrahedra {} and {} do not match",
                            mesh.tet_ids[ka], mesh.tet_ids[kb]
                        ),
                    })?;
                    vmap_p[(ka * 4 + fa) * nfp + m] = (kb * np + re.fmask[fb][m2]) as u32;
                }
            }
        }
    }
    Ok(vmap_p)
}
