//! Perfectly matched layers: complex-frequency-shifted (CFS) coordinate stretching written as
//! a uniaxial anisotropic, dispersive medium (design note §12).
//!
//! Stretching a coordinate `ξ` by `s_ξ(s) = 1 + σ_ξ/(s + α)` (Laplace variable `s`, library
//! units: rates in 1/m of light travel, so `σ η₀`-like; `α ≥ 0` the complex frequency
//! shift) keeps Maxwell's equations in the form `s ε Λ E = ∇×H`, `−s μ Λ H = ∇×E` with the
//! same relative tensor `Λ(s)` on both sides, so the layer is matched to the medium it
//! continues (ε, μ of the layer tets) at every angle and frequency. Two shapes:
//!
//! - **Box** (the layer's inner surface is an axis-aligned box, or one or two of its faces,
//!   e.g. a slab across a guide): `σ_x(x), σ_y(y), σ_z(z)`
//!   grow with the depth beyond each face, and `Λ = diag(s_y s_z/s_x, s_z s_x/s_y,
//!   s_x s_y/s_z)` (edges and corners, where two or three overlap, included).
//! - **Sphere** (the inner surface is a sphere of radius `R` about `c`): only `r` is
//!   stretched, `r̃ = r + Σ(r)/(s + α)` with `Σ = ∫_R^r σ`, and in the local frame
//!   `Λ = (s_t²/s_r) r̂r̂ + s_r (I − r̂r̂)`, `s_t = r̃/r = 1 + q/(s + α)`, `q = Σ/r`.
//!
//! Each diagonal entry is a ratio of quadratics in `s + α`; by partial fractions it is
//! `1 + Σ_k R_k/(s + p_k)` (poles `p = α` and `p = α + σ`), or, where `σ_ξ = 0` on an
//! entry whose two other stretchings are not (box edges), `1 + (σ_a + σ_b)/(s + α) +
//! σ_a σ_b/(s + α)²`. So per tet `Λ(s) = I + Σ_t W_t χ_t(s)` with constant symmetric
//! tensors `W_t` and normalised scalar poles `χ_t` shared by many tets: Debye
//! `p/(s + p)` (weight `R/p`) and the critically damped `α²/(s + α)²` (weight `R/α²`). The
//! electric side is `ε_n Λ`, the magnetic side `μ_n Λ`: both are dispersive media of the
//! scheme's own kind (design note §13), with tensor weights in their mass matrices.
//!
//! **Grading.** `σ(d) = σ_max (d/L)^m` with the depth `d` of a tet's centroid beyond the
//! inner surface and the layer's thickness `L` (per face of a box); `σ_max = −(m + 1)
//! ln R / (2 n L)`, `n = sqrt(ε_r μ_r)`, for a target round-trip reflection `R` of the
//! continuous layer backed by its outer wall. The profile is quantised to [`LEVELS`] values
//! over the depth (so a layer has few distinct poles); the sphere's `Σ` integrates the
//! quantised profile exactly. `α` defaults to `σ_max / 1000` ([`ALPHA_FRACTION`]): far below the rates of the
//! waves a layer a fraction of a wavelength thick absorbs, and it keeps every pole inside
//! the left half plane (no pure integrator, so no late-time drift of static fields).

use super::Material;
use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::util::V3;
use nalgebra::{Matrix3, Matrix4, Vector3, Vector4};
use std::collections::BTreeMap;

/// Quantisation levels of the grading profile.
pub const LEVELS: usize = 16;

/// The default shift `α = σ_max ×` this (the reflection measured in tests/dga/pml.rs does
/// not change from 1e-2 to 1e-3; the smaller value keeps the shift's frequency far below
/// the modes of a resonator whose layer is thin).
pub const ALPHA_FRACTION: f64 = 1e-3;

/// A normalised pole of a stretched medium, library units (1/m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StretchPole {
    /// `p/(s + p)`.
    Debye(f64),
    /// `α²/(s + α)²`.
    Double(f64),
}

impl StretchPole {
    /// The pole as a [`super::dispersion::Pole`] in library units (rates in 1/m).
    pub fn pole(self) -> super::dispersion::Pole {
        match self {
            StretchPole::Debye(p) => super::dispersion::Pole::Debye {
                delta_eps: 1.0,
                tau: 1.0 / p,
            },
            StretchPole::Double(a) => super::dispersion::Pole::Lorentz {
                delta_eps: 1.0,
                f_0: a / std::f64::consts::TAU,
                delta: a,
            },
        }
    }
}

/// The terms of one layer tet: `(pole index, W)`, `W` symmetric row-major 3x3.
pub type TetTerms = Vec<(u16, [f64; 9])>;

/// The stretched media of a mesh: the shared poles and, per layer tet, its terms
/// `(pole index, W)` with `W` symmetric (row-major 3x3). `Λ_n(s) = I + Σ W χ(s)`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Stretch {
    pub poles: Vec<StretchPole>,
    /// Per layer tet (ascending): `(tet, terms)`.
    pub tets: Vec<(u32, TetTerms)>,
    /// The layers, for reports: name, shape, thickness (m), σ_max and α (1/m).
    pub layers: Vec<LayerInfo>,
}

/// One layer's geometry and grading, for the run's notices.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerInfo {
    pub name: String,
    pub shape: String,
    pub thickness: f64,
    pub sigma_max: f64,
    pub alpha: f64,
}

impl Stretch {
    /// The terms of tet `n` (empty outside every layer).
    pub fn terms(&self, n: usize) -> &[(u16, [f64; 9])] {
        match self.tets.binary_search_by_key(&(n as u32), |t| t.0) {
            Ok(i) => &self.tets[i].1,
            Err(_) => &[],
        }
    }

    /// `Λ_n(s)` (for tests and the reflection model).
    pub fn lambda(&self, n: usize, s: crate::util::C64) -> [[crate::util::C64; 3]; 3] {
        let mut l = [[crate::util::C64::new(0.0, 0.0); 3]; 3];
        for (i, row) in l.iter_mut().enumerate() {
            row[i] = crate::util::C64::new(1.0, 0.0);
        }
        for (k, w) in self.terms(n) {
            let chi = match self.poles[*k as usize] {
                StretchPole::Debye(p) => crate::util::C64::new(p, 0.0) / (s + p),
                StretchPole::Double(a) => {
                    let d = s + a;
                    crate::util::C64::new(a * a, 0.0) / (d * d)
                }
            };
            for r in 0..3 {
                for c in 0..3 {
                    l[r][c] += chi * w[3 * r + c];
                }
            }
        }
        l
    }

    /// Adds the layer of tets `in_layer` (named `name`), of grading order `order`, target
    /// reflection `reflection` and shift `alpha` (1/m; None: `σ_max` × [`ALPHA_FRACTION`]), in a medium of
    /// relative `eps`, `mu` per tet.
    #[allow(clippy::too_many_arguments)]
    pub fn add_layer(
        &mut self,
        mesh: &Mesh,
        in_layer: &[bool],
        eps: &[f64],
        mu: &[f64],
        order: f64,
        reflection: f64,
        alpha: Option<f64>,
        name: &str,
    ) -> Result<()> {
        let inner: Vec<V3> = super::layer::inner_surface(mesh, in_layer)
            .into_iter()
            .map(|v| mesh.nodes[v])
            .collect();
        if inner.len() < 4 {
            return Err(Error::config(
                "pml",
                name,
                "the layer touches no other tet: it needs an inner surface to grow from",
            ));
        }
        let layer_tets: Vec<usize> = (0..mesh.n_tets()).filter(|&n| in_layer[n]).collect();
        let index = layer_tets
            .iter()
            .map(|&n| (eps[n] * mu[n]).sqrt())
            .fold(f64::INFINITY, f64::min);
        let centroid = |n: usize| -> V3 {
            let x = mesh.tet_x(n);
            std::array::from_fn(|c| 0.25 * (x[0][c] + x[1][c] + x[2][c] + x[3][c]))
        };
        let key = |p: StretchPole| match p {
            StretchPole::Debye(x) => x.to_bits() << 1,
            StretchPole::Double(x) => (x.to_bits() << 1) | 1,
        };
        // the poles already there keep their ids
        let mut keyed: BTreeMap<u64, u16> = self
            .poles
            .iter()
            .enumerate()
            .map(|(i, &p)| (key(p), i as u16))
            .collect();
        let mut pole_id = |p: StretchPole, poles: &mut Vec<StretchPole>| -> u16 {
            *keyed.entry(key(p)).or_insert_with(|| {
                poles.push(p);
                (poles.len() - 1) as u16
            })
        };
        let mut poles = std::mem::take(&mut self.poles);
        let mut out: Vec<(u32, TetTerms)> = Vec::new();
        let (shape, thickness, smax_report, alpha_report);
        if let Some((lo, hi)) = box_fit(&inner) {
            let lnodes = layer_nodes(mesh, in_layer);
            // the thickness beyond each of the 6 faces (0: no layer on that side)
            let mut thick = [[0.0f64; 2]; 3];
            for &v in &lnodes {
                let p = mesh.nodes[v];
                for k in 0..3 {
                    thick[k][0] = thick[k][0].max(lo[k] - p[k]);
                    thick[k][1] = thick[k][1].max(p[k] - hi[k]);
                }
            }
            let tmax = thick.iter().flatten().copied().fold(0.0, f64::max);
            if tmax <= 0.0 {
                return Err(Error::config("pml", name, "the layer has no thickness"));
            }
            let grade: Vec<[Option<Grading>; 2]> = thick
                .iter()
                .map(|t| {
                    t.map(|l| (l > 1e-9 * tmax).then(|| Grading::new(order, reflection, index, l)))
                })
                .collect();
            let smax = grade
                .iter()
                .flatten()
                .flatten()
                .map(|g| g.smax)
                .fold(0.0, f64::max);
            let a = alpha.unwrap_or(smax * ALPHA_FRACTION);
            (shape, thickness, smax_report, alpha_report) = ("box", tmax, smax, a);
            for &n in &layer_tets {
                let x = centroid(n);
                let sig: [f64; 3] = std::array::from_fn(|k| {
                    let (dl, dh) = (lo[k] - x[k], x[k] - hi[k]);
                    match (&grade[k][0], &grade[k][1]) {
                        (Some(g), _) if dl > 0.0 => g.at(dl).0,
                        (_, Some(g)) if dh > 0.0 => g.at(dh).0,
                        _ => 0.0,
                    }
                });
                let mut terms = Vec::new();
                for k in 0..3 {
                    let (sx, sy, sz) = (sig[k], sig[(k + 1) % 3], sig[(k + 2) % 3]);
                    let mut e = Matrix3::zeros();
                    e[(k, k)] = 1.0;
                    let mut push = |p: StretchPole, r: f64| {
                        if r != 0.0 {
                            let w = match p {
                                StretchPole::Debye(p) => e * (r / p),
                                StretchPole::Double(a) => e * (r / (a * a)),
                            };
                            terms.push((pole_id(p, &mut poles), flat(&w)));
                        }
                    };
                    if sx > 0.0 {
                        // (s+α+σy)(s+α+σz) / ((s+α)(s+α+σx))
                        push(StretchPole::Debye(a), sy * sz / sx);
                        push(StretchPole::Debye(a + sx), -(sy - sx) * (sz - sx) / sx);
                    } else {
                        push(StretchPole::Debye(a), sy + sz);
                        push(StretchPole::Double(a), sy * sz);
                    }
                }
                // one entry per pole: merge the axes' tensors
                let mut merged: Vec<(u16, [f64; 9])> = Vec::new();
                for (k, w) in terms {
                    match merged.iter_mut().find(|t| t.0 == k) {
                        Some(t) => t.1.iter_mut().zip(w).for_each(|(a, b)| *a += b),
                        None => merged.push((k, w)),
                    }
                }
                out.push((n as u32, merged));
            }
        } else if let Some((c, r_in)) = sphere_fit(&inner) {
            let lnodes = layer_nodes(mesh, in_layer);
            let thick = lnodes
                .iter()
                .map(|&v| crate::util::norm(crate::util::sub(mesh.nodes[v], c)) - r_in)
                .fold(0.0, f64::max);
            if thick <= 1e-9 * r_in {
                return Err(Error::config("pml", name, "the layer has no thickness"));
            }
            let g = Grading::new(order, reflection, index, thick);
            let a = alpha.unwrap_or(g.smax * ALPHA_FRACTION);
            (shape, thickness, smax_report, alpha_report) = ("sphere", thick, g.smax, a);
            for &n in &layer_tets {
                let x = crate::util::sub(centroid(n), c);
                let r = crate::util::norm(x);
                let d = (r - r_in).max(0.0);
                let (sig, big) = g.at(d);
                let q = big / r;
                let rh = Vector3::new(x[0] / r, x[1] / r, x[2] / r);
                let pr = rh * rh.transpose();
                let pt = Matrix3::identity() - pr;
                let mut terms = Vec::new();
                // Λ_rr = 1 + (q²/σ)/(s+α) − ((σ−q)²/σ)/(s+α+σ);  Λ_tt = 1 + σ/(s+α)
                let w_a = (pr * (q * q / sig) + pt * sig) / a;
                terms.push((pole_id(StretchPole::Debye(a), &mut poles), flat(&w_a)));
                let p2 = a + sig;
                let w_2 = pr * (-(sig - q) * (sig - q) / sig / p2);
                terms.push((pole_id(StretchPole::Debye(p2), &mut poles), flat(&w_2)));
                out.push((n as u32, terms));
            }
        } else {
            return Err(Error::config(
                "pml",
                name,
                "the layer's inner surface is neither a sphere nor an axis-aligned box; a perfectly matched layer needs one of them (an absorbing = true layer takes any shape)",
            ));
        }
        if alpha_report <= 0.0 || !alpha_report.is_finite() {
            return Err(Error::config(
                "pml_alpha",
                name,
                "the frequency shift must be positive",
            ));
        }
        if poles.len() > u16::MAX as usize / 2 {
            return Err(Error::config("pml", name, "too many distinct layer poles"));
        }
        self.poles = poles;
        self.tets.extend(out);
        self.tets.sort_by_key(|t| t.0);
        self.layers.push(LayerInfo {
            name: name.into(),
            shape: shape.into(),
            thickness,
            sigma_max: smax_report,
            alpha: alpha_report,
        });
        Ok(())
    }
}

/// The PML keys: in range, and only with `pml = true` on a lossless, non-dispersive
/// material.
pub(crate) fn validate(mat: &Material, group: &str) -> Result<()> {
    if !mat.pml {
        for (given, key) in [
            (mat.pml_order.is_some(), "pml_order"),
            (mat.pml_reflection.is_some(), "pml_reflection"),
            (mat.pml_alpha.is_some(), "pml_alpha"),
        ] {
            if given {
                return Err(Error::config(
                    key,
                    group,
                    "pml_order, pml_reflection and pml_alpha need pml = true",
                ));
            }
        }
        return Ok(());
    }
    if mat.absorbing
        || mat.sigma != 0.0
        || mat.sigma_m != 0.0
        || mat.tan_delta.is_some()
        || mat.is_dispersive()
    {
        return Err(Error::config(
            "pml",
            group,
            "a perfectly matched layer sets its own stretching: leave absorbing, sigma, sigma_m, tan_delta and the poles out (give it the eps_r and mu_r of the medium it continues)",
        ));
    }
    let m = mat.pml_order.unwrap_or(3.0);
    if !(m.is_finite() && (0.0..=10.0).contains(&m)) {
        return Err(Error::config(
            "pml_order",
            m,
            format!("must be in [0, 10] (material {group})"),
        ));
    }
    let r = mat.pml_reflection.unwrap_or(1e-6);
    if !(r > 0.0 && r < 1.0) {
        return Err(Error::config(
            "pml_reflection",
            r,
            format!("must be in (0, 1) (material {group})"),
        ));
    }
    if let Some(a) = mat.pml_alpha
        && !(a.is_finite() && a > 0.0)
    {
        return Err(Error::config(
            "pml_alpha",
            a,
            format!("must be a finite positive frequency in Hz (material {group})"),
        ));
    }
    Ok(())
}

/// The grading of one layer side.
#[derive(Clone, Copy, Debug)]
struct Grading {
    smax: f64,
    order: f64,
    thick: f64,
}

impl Grading {
    fn new(order: f64, reflection: f64, index: f64, thick: f64) -> Self {
        Grading {
            smax: -(order + 1.0) * reflection.ln() / (2.0 * index * thick),
            order,
            thick,
        }
    }

    /// The quantised `σ` at depth `d` and `Σ(d) = ∫_0^d σ` of the quantised profile.
    fn at(&self, d: f64) -> (f64, f64) {
        let h = self.thick / LEVELS as f64;
        let level = |l: usize| self.smax * ((l as f64 + 0.5) / LEVELS as f64).powf(self.order);
        let l = ((d / h) as usize).min(LEVELS - 1);
        let below: f64 = (0..l).map(|j| level(j) * h).sum();
        (level(l), below + level(l) * (d - l as f64 * h))
    }
}

fn flat(m: &Matrix3<f64>) -> [f64; 9] {
    std::array::from_fn(|k| m[(k / 3, k % 3)])
}

/// The vertices of the tets `in_layer`.
fn layer_nodes(mesh: &Mesh, in_layer: &[bool]) -> Vec<usize> {
    let mut seen = vec![false; mesh.n_vertices()];
    for (n, tv) in mesh.tets.iter().enumerate() {
        if in_layer[n] {
            for &v in tv {
                seen[v as usize] = true;
            }
        }
    }
    (0..seen.len()).filter(|&v| seen[v]).collect()
}

/// The sphere through `pts` (algebraic least squares), when every point lies on it within
/// 1e-3 of its radius.
fn sphere_fit(pts: &[V3]) -> Option<(V3, f64)> {
    // |p|² = 2 c·p + k,  k = R² − |c|²
    let mut a = Matrix4::<f64>::zeros();
    let mut b = Vector4::<f64>::zeros();
    for p in pts {
        let row = Vector4::new(2.0 * p[0], 2.0 * p[1], 2.0 * p[2], 1.0);
        a += row * row.transpose();
        b += row * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    }
    let x = a.lu().solve(&b)?;
    let c = [x[0], x[1], x[2]];
    let r2 = x[3] + c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    if !(r2 > 0.0) {
        return None;
    }
    let r = r2.sqrt();
    pts.iter()
        .all(|p| (crate::util::norm(crate::util::sub(*p, c)) - r).abs() <= 1e-3 * r)
        .then_some((c, r))
}

/// The axis-aligned box whose surface holds every point of `pts` (within 1e-6 of its
/// size), as `(lo, hi)`; a flat extent (`lo = hi`) is a plane, whose layer lies on one
/// side of it.
fn box_fit(pts: &[V3]) -> Option<(V3, V3)> {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in pts {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    // a flat extent is a plane (a slab layer on one side)
    let size = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
    let tol = 1e-6 * size;
    pts.iter()
        .all(|p| (0..3).any(|k| (p[k] - lo[k]).abs() <= tol || (p[k] - hi[k]).abs() <= tol))
        .then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::box_mesh;
    use crate::util::C64;

    fn shifted_box(n: usize, half: f64) -> Mesh {
        let mut m = box_mesh([n, n, n], [2.0 * half; 3]);
        for p in &mut m.nodes {
            for x in p.iter_mut() {
                *x -= half;
            }
        }
        m
    }

    /// The partial fractions reproduce the stretching products they stand for, at complex
    /// frequencies, in the faces, edges and corners of a box layer.
    #[test]
    fn box_terms_are_the_stretching_products() {
        let m = shifted_box(10, 1.0);
        let inside = |x: f64| x.abs() < 0.6;
        let layer: Vec<bool> = (0..m.n_tets())
            .map(|n| {
                let x = m.tet_x(n);
                let c: V3 = std::array::from_fn(|k| x.iter().map(|p| p[k]).sum::<f64>() / 4.0);
                !(inside(c[0]) && inside(c[1]) && inside(c[2]))
            })
            .collect();
        let one = vec![1.0; m.n_tets()];
        let mut st = Stretch::default();
        st.add_layer(&m, &layer, &one, &one, 2.0, 1e-6, Some(0.3), "pml")
            .unwrap();
        assert_eq!(st.layers[0].shape, "box");
        let g = Grading::new(2.0, 1e-6, 1.0, 0.4);
        let s = C64::new(0.7, 2.3);
        let mut seen = [false; 4];
        for (n, _) in &st.tets {
            let n = *n as usize;
            let x = m.tet_x(n);
            let c: V3 = std::array::from_fn(|k| x.iter().map(|p| p[k]).sum::<f64>() / 4.0);
            // the box's centroids lie on level boundaries (offsets of a quarter cell, 16
            // levels over 2 cells): either neighbouring level is the implementation's,
            // depending on the last bit of the depth
            let options = |k: usize| -> Vec<f64> {
                let d = c[k].abs() - 0.6;
                if d <= 0.0 {
                    return vec![0.0];
                }
                vec![g.at((d - 1e-9).max(0.0)).0, g.at(d + 1e-9).0]
            };
            let (ox, oy, oz) = (options(0), options(1), options(2));
            let l = st.lambda(n, s);
            let matches = |sig: [f64; 3]| {
                let sk: Vec<C64> = sig.iter().map(|&x| 1.0 + x / (s + 0.3)).collect();
                (0..3).all(|k| {
                    let want = sk[(k + 1) % 3] * sk[(k + 2) % 3] / sk[k];
                    (l[k][k] - want).norm() < 1e-12 * want.norm()
                })
            };
            let found = ox
                .iter()
                .any(|&a| oy.iter().any(|&b| oz.iter().any(|&cz| matches([a, b, cz]))));
            assert!(found, "tet {n}: Λ is no stretching product of its levels");
            seen[[&ox, &oy, &oz].iter().filter(|o| o[0] > 0.0).count()] = true;
            for k in 0..3 {
                for j in (0..3).filter(|&j| j != k) {
                    assert!(l[k][j].norm() < 1e-14);
                }
            }
        }
        assert_eq!(
            seen,
            [false, true, true, true],
            "faces, edges and corners all tested"
        );
    }

    /// A spherical layer's terms give `Λ = (s_t²/s_r) r̂r̂ + s_r (I − r̂r̂)`.
    #[test]
    fn sphere_terms_are_the_radial_stretching() {
        use crate::mesh::generate::{Shell, ball_mesh};
        let m = ball_mesh(3, &[Shell::new("core", 1.0), Shell::new("pml", 2.0)]).unwrap();
        let tag = m.volume_group("pml").unwrap();
        let layer = m.volume_mask(tag);
        let one = vec![1.0; m.n_tets()];
        let mut st = Stretch::default();
        st.add_layer(&m, &layer, &one, &one, 3.0, 1e-8, None, "pml")
            .unwrap();
        let info = &st.layers[0];
        assert_eq!(info.shape, "sphere");
        assert!((info.thickness - 1.0).abs() < 1e-9, "{}", info.thickness);
        let g = Grading::new(3.0, 1e-8, 1.0, 1.0);
        assert!((info.sigma_max - g.smax).abs() < 1e-12 * g.smax);
        let a = g.smax * ALPHA_FRACTION;
        let s = C64::new(0.2, 3.1);
        for (n, _) in st.tets.iter().step_by(7) {
            let n = *n as usize;
            let x = m.tet_x(n);
            let c: V3 = std::array::from_fn(|k| x.iter().map(|p| p[k]).sum::<f64>() / 4.0);
            let r = crate::util::norm(c);
            let (sig, big) = g.at(r - 1.0);
            let sr = 1.0 + sig / (s + a);
            let stt = 1.0 + big / r / (s + a);
            let l = st.lambda(n, s);
            for i in 0..3 {
                for j in 0..3 {
                    let rr = c[i] * c[j] / (r * r);
                    let id = if i == j { 1.0 } else { 0.0 };
                    let want = stt * stt / sr * rr + sr * (id - rr);
                    assert!((l[i][j] - want).norm() < 1e-10, "tet {n} ({i},{j})");
                }
            }
        }
    }
}
