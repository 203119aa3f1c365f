//! Reference-tetrahedron machinery of nodal DG (Hesthaven & Warburton, *Nodal Discontinuous
//! Galerkin Methods*, 2008, §6 and §10), computed here from the formulas:
//!
//! - normalised Jacobi polynomials `P_n^(α,β)` and their derivatives, Gauss–Lobatto points;
//! - Warburton's warp-and-blend nodes on the equilateral tetrahedron (optimised α for
//!   N ≤ 15), mapped to the reference tetrahedron with vertices (-1,-1,-1), (1,-1,-1),
//!   (-1,1,-1), (-1,-1,1);
//! - the orthonormal Dubiner basis `ψ_ijk` (collapsed coordinates a, b, c) and its
//!   gradient, the Vandermonde matrix `V_ij = ψ_j(r_i)`, the differentiation matrices
//!   `D_r = V_r V⁻¹` (and s, t), the mass matrix `M = (V Vᵀ)⁻¹`;
//! - the four faces (1: t = -1, 2: s = -1, 3: r + s + t = -1, 4: r = -1), their node lists
//!   and the lift matrix `LIFT = V Vᵀ E`, `E` holding each face's mass matrix from the 2D
//!   Vandermonde of the face nodes.

use nalgebra::{DMatrix, DVector};

/// Normalised Jacobi polynomial `P_n^(α,β)(x)` (orthonormal on [-1, 1] with weight
/// `(1-x)^α (1+x)^β`), by the three-term recurrence.
pub fn jacobi_p(x: f64, alpha: f64, beta: f64, n: usize) -> f64 {
    let g = |z: f64| gamma(z);
    let p0 =
        (2f64.powf(-alpha - beta - 1.0) * g(alpha + beta + 2.0) / g(alpha + 1.0) / g(beta + 1.0))
            .sqrt();
    if n == 0 {
        return p0;
    }
    let gamma0 =
        2f64.powf(alpha + beta + 1.0) / (alpha + beta + 1.0) * g(alpha + 1.0) * g(beta + 1.0)
            / g(alpha + beta + 1.0);
    let gamma1 = (alpha + 1.0) * (beta + 1.0) / (alpha + beta + 3.0) * gamma0;
    let p1 = ((alpha + beta + 2.0) * x / 2.0 + (alpha - beta) / 2.0) / gamma1.sqrt();
    let (mut pm, mut pc) = (p0, p1);
    let mut aold =
        2.0 / (2.0 + alpha + beta) * ((alpha + 1.0) * (beta + 1.0) / (alpha + beta + 3.0)).sqrt();
    for i in 1..n {
        let i = i as f64;
        let h1 = 2.0 * i + alpha + beta;
        let anew = 2.0 / (h1 + 2.0)
            * ((i + 1.0) * (i + 1.0 + alpha + beta) * (i + 1.0 + alpha) * (i + 1.0 + beta)
                / (h1 + 1.0)
                / (h1 + 3.0))
                .sqrt();
        let bnew = -(alpha * alpha - beta * beta) / h1 / (h1 + 2.0);
        let pn = (-aold * pm + (x - bnew) * pc) / anew;
        pm = pc;
        pc = pn;
        aold = anew;
    }
    pc
}

/// Derivative of [`jacobi_p`].
pub fn grad_jacobi_p(x: f64, alpha: f64, beta: f64, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        (n as f64 * (n as f64 + alpha + beta + 1.0)).sqrt()
            * jacobi_p(x, alpha + 1.0, beta + 1.0, n - 1)
    }
}

/// Γ(z) for the arguments used here (positive integers and half-integers up to ~30).
fn gamma(z: f64) -> f64 {
    if z < 0.5 {
        return f64::NAN;
    }
    let mut x = z;
    let mut acc = 1.0;
    while x > 1.5 {
        x -= 1.0;
        acc *= x;
    }
    // x is 1 or 0.5 (or 1.5 reduced to 0.5 above)
    if (x - 1.0).abs() < 1e-12 {
        acc
    } else if (x - 0.5).abs() < 1e-12 {
        acc * std::f64::consts::PI.sqrt()
    } else {
        f64::NAN
    }
}

/// Gauss quadrature points of `P_(n+1)^(α,β)` (Golub–Welsch).
fn jacobi_gq_points(alpha: f64, beta: f64, n: usize) -> Vec<f64> {
    if n == 0 {
        return vec![-(alpha - beta) / (alpha + beta + 2.0)];
    }
    let m = n + 1;
    let mut j = DMatrix::<f64>::zeros(m, m);
    for i in 0..m {
        let h1 = 2.0 * i as f64 + alpha + beta;
        let d = if h1 + 2.0 > 0.0 && (alpha + beta).abs() > 1e-14 || i > 0 {
            -(alpha * alpha - beta * beta) / (h1 + 2.0) / h1.max(1e-300)
        } else {
            0.0
        };
        j[(i, i)] = if (alpha * alpha - beta * beta).abs() < 1e-14 {
            0.0
        } else {
            d
        };
        if i + 1 < m {
            let ip = (i + 1) as f64;
            let v = 2.0 / (h1 + 2.0)
                * (ip * (ip + alpha + beta) * (ip + alpha) * (ip + beta) / (h1 + 1.0) / (h1 + 3.0))
                    .sqrt();
            j[(i, i + 1)] = v;
            j[(i + 1, i)] = v;
        }
    }
    let mut x: Vec<f64> = j.symmetric_eigen().eigenvalues.iter().copied().collect();
    x.sort_by(f64::total_cmp);
    x
}

/// Gauss–Lobatto points of order `n` (ascending, including ±1).
pub fn jacobi_gl(alpha: f64, beta: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![-1.0, 1.0];
    }
    let mut x = vec![-1.0];
    x.extend(jacobi_gq_points(alpha + 1.0, beta + 1.0, n - 2));
    x.push(1.0);
    x
}

/// Warburton's optimised blending parameters for N = 1..15.
const ALPHA_OPT: [f64; 15] = [
    0.0, 0.0, 0.0, 0.1002, 1.1332, 1.5608, 1.3413, 1.2577, 1.1603, 1.10153, 0.6080, 0.4523, 0.8856,
    0.8717, 0.9655,
];

/// The 1D warp function divided by the blend (`evalwarp` of the book).
fn eval_warp(p: usize, xnodes: &[f64], xout: f64) -> f64 {
    let pf = p as f64;
    let xeq: Vec<f64> = (0..=p).map(|i| -1.0 + 2.0 * (pf - i as f64) / pf).collect();
    let mut warp = 0.0;
    for i in 0..=p {
        let mut d = xnodes[i] - xeq[i];
        for j in 1..p {
            if i != j {
                d *= (xout - xeq[j]) / (xeq[i] - xeq[j]);
            }
        }
        if i != 0 {
            d = -d / (xeq[i] - xeq[0]);
        }
        if i != p {
            d /= xeq[i] - xeq[p];
        }
        warp += d;
    }
    warp
}

/// Warp of a face point with barycentric coordinates `(l1, l2, l3)` (`evalshift`).
fn eval_shift(p: usize, pval: f64, gauss_x: &[f64], l1: f64, l2: f64, l3: f64) -> (f64, f64) {
    let b1 = l2 * l3;
    let b2 = l1 * l3;
    let b3 = l1 * l2;
    let w1 = 4.0 * eval_warp(p, gauss_x, l3 - l2);
    let w2 = 4.0 * eval_warp(p, gauss_x, l1 - l3);
    let w3 = 4.0 * eval_warp(p, gauss_x, l2 - l1);
    let w1 = b1 * w1 * (1.0 + (pval * l1).powi(2));
    let w2 = b2 * w2 * (1.0 + (pval * l2).powi(2));
    let w3 = b3 * w3 * (1.0 + (pval * l3).powi(2));
    let (c2, s2) = (
        (2.0 * std::f64::consts::PI / 3.0).cos(),
        (2.0 * std::f64::consts::PI / 3.0).sin(),
    );
    let (c4, s4) = (
        (4.0 * std::f64::consts::PI / 3.0).cos(),
        (4.0 * std::f64::consts::PI / 3.0).sin(),
    );
    (w1 + c2 * w2 + c4 * w3, s2 * w2 + s4 * w3)
}

/// Number of nodes of order N: (N+1)(N+2)(N+3)/6.
pub fn n_nodes(n: usize) -> usize {
    (n + 1) * (n + 2) * (n + 3) / 6
}

/// Warp-and-blend nodes of order `n` on the reference tetrahedron, as (r, s, t).
pub fn nodes(n: usize) -> Vec<[f64; 3]> {
    let np = n_nodes(n);
    let alpha = if n <= 15 { ALPHA_OPT[n - 1] } else { 1.0 };
    let tol = 1e-10;
    let nf = n as f64;
    let mut lam = Vec::with_capacity(np);
    for i in 0..=n {
        for j in 0..=(n - i) {
            for k in 0..=(n - i - j) {
                let r = -1.0 + 2.0 * k as f64 / nf;
                let s = -1.0 + 2.0 * j as f64 / nf;
                let t = -1.0 + 2.0 * i as f64 / nf;
                lam.push([
                    (1.0 + t) / 2.0,
                    (1.0 + s) / 2.0,
                    -(1.0 + r + s + t) / 2.0,
                    (1.0 + r) / 2.0,
                ]);
            }
        }
    }
    let s3 = 3f64.sqrt();
    let s6 = 6f64.sqrt();
    let v1 = [-1.0, -1.0 / s3, -1.0 / s6];
    let v2 = [1.0, -1.0 / s3, -1.0 / s6];
    let v3 = [0.0, 2.0 / s3, -1.0 / s6];
    let v4 = [0.0, 0.0, 3.0 / s6];
    use crate::util::{norm, scale, sub};
    let mid = |a: [f64; 3], b: [f64; 3]| scale([a[0] + b[0], a[1] + b[1], a[2] + b[2]], 0.5);
    let t1 = [sub(v2, v1), sub(v2, v1), sub(v3, v2), sub(v3, v1)].map(|v| scale(v, 1.0 / norm(v)));
    let t2 = [
        sub(v3, mid(v1, v2)),
        sub(v4, mid(v1, v2)),
        sub(v4, mid(v2, v3)),
        sub(v4, mid(v1, v3)),
    ]
    .map(|v| scale(v, 1.0 / norm(v)));
    let gauss_x: Vec<f64> = jacobi_gl(0.0, 0.0, n).iter().map(|x| -x).collect();
    let mut out = Vec::with_capacity(np);
    for l in &lam {
        let [l1, l2, l3, l4] = *l;
        let mut xyz = [0.0; 3];
        for c in 0..3 {
            xyz[c] = l3 * v1[c] + l4 * v2[c] + l2 * v3[c] + l1 * v4[c];
        }
        let mut shift = [0.0; 3];
        let mut face_fix: Option<[f64; 3]> = None;
        for face in 0..4 {
            let (la, lb, lc, ld) = match face {
                0 => (l1, l2, l3, l4),
                1 => (l2, l1, l3, l4),
                2 => (l3, l1, l4, l2),
                _ => (l4, l1, l3, l2),
            };
            let (w1, w2) = eval_shift(n, alpha, &gauss_x, lb, lc, ld);
            let mut blend = lb * lc * ld;
            let denom = (lb + 0.5 * la) * (lc + 0.5 * la) * (ld + 0.5 * la);
            if denom > tol {
                blend = (1.0 + (alpha * la).powi(2)) * blend / denom;
            }
            for c in 0..3 {
                shift[c] += blend * w1 * t1[face][c] + blend * w2 * t2[face][c];
            }
            let on_face = la < tol && ((lb > tol) as u8 + (lc > tol) as u8 + (ld > tol) as u8) < 3;
            if on_face {
                face_fix = Some(std::array::from_fn(|c| w1 * t1[face][c] + w2 * t2[face][c]));
            }
        }
        if let Some(f) = face_fix {
            shift = f;
        }
        for c in 0..3 {
            xyz[c] += shift[c];
        }
        // equilateral -> reference (r, s, t)
        let rhs: [f64; 3] = std::array::from_fn(|c| xyz[c] - 0.5 * (v2[c] + v3[c] + v4[c] - v1[c]));
        let a = nalgebra::Matrix3::from_fn(|rr, cc| {
            0.5 * [sub(v2, v1), sub(v3, v1), sub(v4, v1)][cc][rr]
        });
        let rst = a
            .lu()
            .solve(&nalgebra::Vector3::new(rhs[0], rhs[1], rhs[2]))
            .unwrap_or_default();
        out.push([rst[0], rst[1], rst[2]]);
    }
    out
}

/// Collapsed coordinates of (r, s, t).
fn rst_to_abc(r: f64, s: f64, t: f64) -> (f64, f64, f64) {
    let a = if (s + t).abs() > 1e-12 {
        2.0 * (1.0 + r) / (-s - t) - 1.0
    } else {
        -1.0
    };
    let b = if (t - 1.0).abs() > 1e-12 {
        2.0 * (1.0 + s) / (1.0 - t) - 1.0
    } else {
        -1.0
    };
    (a, b, t)
}

/// Mode indices (i, j, k), i + j + k ≤ N, in the book's order.
pub fn modes(n: usize) -> Vec<(usize, usize, usize)> {
    let mut v = vec![];
    for i in 0..=n {
        for j in 0..=(n - i) {
            for k in 0..=(n - i - j) {
                v.push((i, j, k));
            }
        }
    }
    v
}

/// Orthonormal basis function ψ_ijk at (r, s, t).
pub fn simplex3d(r: f64, s: f64, t: f64, (i, j, k): (usize, usize, usize)) -> f64 {
    let (a, b, c) = rst_to_abc(r, s, t);
    let h1 = jacobi_p(a, 0.0, 0.0, i);
    let h2 = jacobi_p(b, (2 * i + 1) as f64, 0.0, j);
    let h3 = jacobi_p(c, (2 * (i + j) + 2) as f64, 0.0, k);
    2.0 * 2f64.sqrt() * h1 * h2 * (1.0 - b).powi(i as i32) * h3 * (1.0 - c).powi((i + j) as i32)
}

/// Gradient (∂r, ∂s, ∂t) of ψ_ijk at (r, s, t).
pub fn grad_simplex3d(r: f64, s: f64, t: f64, (id, jd, kd): (usize, usize, usize)) -> [f64; 3] {
    let (a, b, c) = rst_to_abc(r, s, t);
    let fa = jacobi_p(a, 0.0, 0.0, id);
    let dfa = grad_jacobi_p(a, 0.0, 0.0, id);
    let gb = jacobi_p(b, (2 * id + 1) as f64, 0.0, jd);
    let dgb = grad_jacobi_p(b, (2 * id + 1) as f64, 0.0, jd);
    let hc = jacobi_p(c, (2 * (id + jd) + 2) as f64, 0.0, kd);
    let dhc = grad_jacobi_p(c, (2 * (id + jd) + 2) as f64, 0.0, kd);
    let hb = 0.5 * (1.0 - b);
    let hcc = 0.5 * (1.0 - c);
    let mut vr = dfa * gb * hc;
    if id > 0 {
        vr *= hb.powi(id as i32 - 1);
    }
    if id + jd > 0 {
        vr *= hcc.powi((id + jd) as i32 - 1);
    }
    let mut vs = 0.5 * (1.0 + a) * vr;
    let mut tmp = dgb * hb.powi(id as i32);
    if id > 0 {
        tmp += -0.5 * id as f64 * gb * hb.powi(id as i32 - 1);
    }
    if id + jd > 0 {
        tmp *= hcc.powi((id + jd) as i32 - 1);
    }
    tmp = fa * tmp * hc;
    vs += tmp;
    let mut vt = 0.5 * (1.0 + a) * vr + 0.5 * (1.0 + b) * tmp;
    let mut tmp = dhc * hcc.powi((id + jd) as i32);
    if id + jd > 0 {
        tmp -= 0.5 * (id + jd) as f64 * hc * hcc.powi((id + jd) as i32 - 1);
    }
    tmp *= fa * gb;
    tmp *= hb.powi(id as i32);
    vt += tmp;
    let sc = 2f64.powf(2.0 * id as f64 + jd as f64 + 1.5);
    [vr * sc, vs * sc, vt * sc]
}

/// Orthonormal basis on the reference triangle (-1,-1), (1,-1), (-1,1).
fn simplex2d(r: f64, s: f64, i: usize, j: usize) -> f64 {
    let a = if (1.0 - s).abs() > 1e-12 {
        2.0 * (1.0 + r) / (1.0 - s) - 1.0
    } else {
        -1.0
    };
    let b = s;
    2f64.sqrt()
        * jacobi_p(a, 0.0, 0.0, i)
        * jacobi_p(b, (2 * i + 1) as f64, 0.0, j)
        * (1.0 - b).powi(i as i32)
}

/// Everything of the reference element of order N.
#[derive(Clone, Debug)]
pub struct RefElement {
    pub n: usize,
    pub np: usize,
    /// Nodes per face, (N+1)(N+2)/2.
    pub nfp: usize,
    pub rst: Vec<[f64; 3]>,
    pub v: DMatrix<f64>,
    pub vinv: DMatrix<f64>,
    /// Differentiation matrices, row-major `Np × Np`.
    pub dr: DMatrix<f64>,
    pub ds: DMatrix<f64>,
    pub dt: DMatrix<f64>,
    /// Mass matrix of the reference element, `(V Vᵀ)⁻¹`.
    pub mass: DMatrix<f64>,
    /// Node indices of each face (face f, point m) in a canonical order.
    pub fmask: [Vec<usize>; 4],
    /// `Np × 4·Nfp`.
    pub lift: DMatrix<f64>,
}

impl RefElement {
    pub fn new(n: usize) -> RefElement {
        assert!(n >= 1, "order must be at least 1");
        let rst = nodes(n);
        let np = rst.len();
        let md = modes(n);
        let v = DMatrix::from_fn(np, np, |i, j| {
            simplex3d(rst[i][0], rst[i][1], rst[i][2], md[j])
        });
        let vinv = v
            .clone()
            .try_inverse()
            .expect("Vandermonde of the Warburton nodes is invertible");
        let grad = |c: usize| {
            DMatrix::from_fn(np, np, |i, j| {
                grad_simplex3d(rst[i][0], rst[i][1], rst[i][2], md[j])[c]
            })
        };
        let dr = grad(0) * &vinv;
        let ds = grad(1) * &vinv;
        let dt = grad(2) * &vinv;
        let mass = (&v * v.transpose())
            .try_inverse()
            .expect("mass matrix invertible");
        let tol = 1e-10;
        let on = |f: usize, p: &[f64; 3]| match f {
            0 => (p[2] + 1.0).abs() < tol,
            1 => (p[1] + 1.0).abs() < tol,
            2 => (p[0] + p[1] + p[2] + 1.0).abs() < tol,
            _ => (p[0] + 1.0).abs() < tol,
        };
        let fmask: [Vec<usize>; 4] =
            std::array::from_fn(|f| (0..np).filter(|&i| on(f, &rst[i])).collect());
        let nfp = (n + 1) * (n + 2) / 2;
        for f in &fmask {
            assert_eq!(f.len(), nfp, "face node count");
        }
        // Face mass matrices from the 2D Vandermonde in the face's own coordinates.
        let mut e = DMatrix::<f64>::zeros(np, 4 * nfp);
        for f in 0..4 {
            let (u, w): (Vec<f64>, Vec<f64>) = fmask[f]
                .iter()
                .map(|&i| {
                    let [r, s, t] = rst[i];
                    match f {
                        0 => (r, s),
                        1 => (r, t),
                        _ => (s, t),
                    }
                })
                .unzip();
            let mut m2 = vec![];
            for i in 0..=n {
                for j in 0..=(n - i) {
                    m2.push((i, j));
                }
            }
            let vf = DMatrix::from_fn(nfp, nfp, |a, b| simplex2d(u[a], w[a], m2[b].0, m2[b].1));
            let mf = (&vf * vf.transpose())
                .try_inverse()
                .expect("face mass invertible");
            for a in 0..nfp {
                for b in 0..nfp {
                    e[(fmask[f][a], f * nfp + b)] += mf[(a, b)];
                }
            }
        }
        let lift = &v * (v.transpose() * e);
        RefElement {
            n,
            np,
            nfp,
            rst,
            v,
            vinv,
            dr,
            ds,
            dt,
            mass,
            fmask,
            lift,
        }
    }

    /// Interpolation weights of the nodal values at reference point (r, s, t):
    /// `u(r,s,t) = Σ_i w_i u_i`, `w = V⁻ᵀ ψ(r,s,t)`.
    pub fn interpolation_row(&self, p: [f64; 3]) -> Vec<f64> {
        let md = modes(self.n);
        let psi = DVector::from_fn(self.np, |j, _| simplex3d(p[0], p[1], p[2], md[j]));
        (self.vinv.transpose() * psi).iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_is_orthonormal() {
        // Gauss-Legendre-like check by a fine midpoint rule
        let m = 20000;
        for (a, b) in [(0.0, 0.0), (3.0, 0.0)] {
            for p in 0..5 {
                for q in 0..5 {
                    let s: f64 = (0..m)
                        .map(|i| {
                            let x = -1.0 + (i as f64 + 0.5) * 2.0 / m as f64;
                            (1.0 - x).powf(a)
                                * (1.0 + x).powf(b)
                                * jacobi_p(x, a, b, p)
                                * jacobi_p(x, a, b, q)
                        })
                        .sum::<f64>()
                        * 2.0
                        / m as f64;
                    let want = if p == q { 1.0 } else { 0.0 };
                    assert!((s - want).abs() < 1e-5, "({a},{b}) {p} {q}: {s}");
                }
            }
        }
    }

    #[test]
    fn gauss_lobatto_points() {
        let x = jacobi_gl(0.0, 0.0, 4);
        let want = [-1.0, -(3f64 / 7.0).sqrt(), 0.0, (3f64 / 7.0).sqrt(), 1.0];
        for (a, b) in x.iter().zip(want) {
            assert!((a - b).abs() < 1e-13, "{x:?}");
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let p = [-0.31, -0.42, -0.17];
        let h = 1e-6;
        for m in modes(4) {
            let g = grad_simplex3d(p[0], p[1], p[2], m);
            for c in 0..3 {
                let mut a = p;
                let mut b = p;
                a[c] += h;
                b[c] -= h;
                let fd =
                    (simplex3d(a[0], a[1], a[2], m) - simplex3d(b[0], b[1], b[2], m)) / (2.0 * h);
                assert!(
                    (fd - g[c]).abs() < 1e-6 * (1.0 + g[c].abs()),
                    "{m:?} {c}: {fd} vs {}",
                    g[c]
                );
            }
        }
    }

    #[test]
    fn reference_element_properties() {
        for n in 1..=6 {
            let e = RefElement::new(n);
            // nodes inside the reference tet, vertices among them
            for p in &e.rst {
                assert!(
                    p.iter().all(|&x| x >= -1.0 - 1e-12) && p.iter().sum::<f64>() <= -1.0 + 1e-12
                );
            }
            // volume of the reference tet (4/3) = 1ᵀ M 1
            let one = DVector::from_element(e.np, 1.0);
            let vol = (one.transpose() * &e.mass * &one)[(0, 0)];
            assert!((vol - 4.0 / 3.0).abs() < 1e-11, "N={n}: volume {vol}");
            // D_r differentiates polynomials of degree N exactly: u = r^a s^b t^c
            let u = DVector::from_fn(e.np, |i, _| {
                let [r, s, t] = e.rst[i];
                r.powi(n as i32) + s * t.powi(n as i32 - 1) + if n >= 2 { 0.3 * r * s } else { 0.0 }
            });
            let du = &e.dr * &u;
            for i in 0..e.np {
                let [r, s, t] = e.rst[i];
                let want = n as f64 * r.powi(n as i32 - 1) + if n >= 2 { 0.3 * s } else { 0.0 };
                assert!(
                    (du[i] - want).abs() < 1e-9,
                    "N={n} node {i}: {} vs {want}",
                    du[i]
                );
                let _ = t;
            }
            // LIFT applied to face values of 1 integrates: Mass * LIFT * 1_face = face areas
            let ones = DVector::from_element(4 * e.nfp, 1.0);
            let l = &e.mass * (&e.lift * ones);
            let total: f64 = l.iter().sum();
            // faces: three of area 2, one (r+s+t=-1) of area 2√3
            let want = 3.0 * 2.0 + 2.0 * 3f64.sqrt();
            // LIFT maps face values to the reference face measure of each face (the slanted face
            // uses the (s,t) projection, area 2, and Fscale carries the true ratio)
            assert!(
                (total - 8.0).abs() < 1e-10 || (total - want).abs() < 1e-10,
                "N={n}: {total}"
            );
            let cond = e.v.clone().svd(false, false).singular_values;
            let c = cond.max() / cond.min();
            assert!(c < 1e3, "N={n}: Vandermonde condition {c}");
        }
    }
}
