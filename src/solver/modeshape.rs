//! Mode shapes by a running discrete Fourier transform in a second pass.
//!
//! After the run, the run's own stepper (CPU or device) is reset to the zero state and run
//! again with the same source, time step and number of steps; after the pulse,
//! `X_m[h] += U^k[h] exp(-2πi f_m t_k)` and `Y_m[s] += F^(k-1/2)[s] exp(-2πi f_m t_(k-1/2))`
//! accumulate where the state lives ([`Stepper::dft_add`]) for each chosen frequency `f_m`
//! (the measured, time-discrete one). The complex electric field of mode m in hexahedron
//! `(n, v)` is `Σ_s X_m[h_s] w^s` (the dual basis of its half-edge vectors, as the probes
//! use), the magnetic field `Σ_j Y_m[4n + f_j] w̃^j` over the 3 faces of `n` at `v` (design
//! note §5); the per-tet E is the average of its 4 hexahedra. Each mode is normalised so
//! that its largest cell E is real and of modulus 1 (H scaled by the same factor).

use crate::backend::Stepper;
use crate::complex::TetGeom;
use crate::error::Result;
use crate::mesh::{Mesh, Topology};
use crate::util::{C64, V3};
use nalgebra::Matrix3;

/// A mode shape: per-tet complex electric field and per-hexahedron magnetic field.
#[derive(Clone, Debug)]
pub struct ModeShape {
    /// Label used in field names, e.g. `TM010_114.4991MHz`.
    pub label: String,
    pub f_hz: f64,
    pub cell: Vec<[C64; 3]>,
    /// `H` (library units, `η₀ H`) in hexahedron `(n, i)`, `i` the local vertex of tet `n`.
    pub h: Vec<[[C64; 3]; 4]>,
}

/// The dual basis `w̃` of the hexahedron's 3 dual half-edge vectors, with the local faces
/// they belong to, per tet and local vertex.
fn dual_bases(mesh: &Mesh) -> Vec<[([usize; 3], [V3; 3]); 4]> {
    use rayon::prelude::*;
    (0..mesh.n_tets())
        .into_par_iter()
        .map(|n| {
            let g = TetGeom::new(mesh, n);
            std::array::from_fn(|i| {
                let h = g.hexahedron(i);
                (h.faces, dual_basis(&h.at))
            })
        })
        .collect()
}

/// Rows `w^r` with `w^r · a_c = δ_rc` (zeros for a degenerate set).
fn dual_basis(a: &[V3; 3]) -> [V3; 3] {
    let m = Matrix3::from_fn(|r, c| a[c][r]);
    let inv = m.try_inverse().unwrap_or_else(Matrix3::zeros);
    std::array::from_fn(|r| [inv[(r, 0)], inv[(r, 1)], inv[(r, 2)]])
}

/// Per tet, per local vertex: the 3 half-edge slots and dual basis rows of the hexahedron.
fn hex_bases(mesh: &Mesh, topo: &Topology) -> Vec<[([u32; 3], [V3; 3]); 4]> {
    use rayon::prelude::*;
    (0..mesh.n_tets())
        .into_par_iter()
        .map(|n| {
            let g = TetGeom::new(mesh, n);
            std::array::from_fn(|i| {
                let h = g.hexahedron(i);
                let w = dual_basis(&h.a);
                let slots = std::array::from_fn(|s| {
                    topo.half_edge(topo.tet_edges[n][h.edges[s]] as usize, g.v[i]) as u32
                });
                (slots, w)
            })
        })
        .collect()
}

/// Runs the second pass on `stepper` (reset to the zero state: its state after the run
/// is lost) and returns one shape per `(label, f_hz)`. `dt` in metres of light travel;
/// accumulation from step `start` on; `progress(done, steps)` after each step.
#[allow(clippy::too_many_arguments)]
pub fn mode_shapes(
    stepper: &mut dyn Stepper,
    mesh: &Mesh,
    topo: &Topology,
    dt: f64,
    steps: usize,
    start: usize,
    modes: &[(String, f64)],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<ModeShape>> {
    if modes.is_empty() {
        return Ok(vec![]);
    }
    let (u0, f0) = stepper.state()?;
    stepper.set_state(&vec![0.0; u0.len()], &vec![0.0; f0.len()])?;
    stepper.dft_start(modes.len())?;
    let dt_s = dt / crate::util::C0;
    let phases = |t: f64| -> Vec<C64> {
        modes
            .iter()
            .map(|(_, f)| C64::from_polar(1.0, -2.0 * std::f64::consts::PI * f * t))
            .collect()
    };
    let mut sink = Vec::new();
    for k in 0..steps {
        stepper.advance(k, 1, &mut sink)?;
        sink.clear();
        if k >= start {
            // after step k: U at (k+1) Δt, F at (k+1/2) Δt
            let pu = phases((k + 1) as f64 * dt_s);
            let pf = phases((k as f64 + 0.5) * dt_s);
            stepper.dft_add(&pu, &pf)?;
        }
        progress(k + 1, steps);
    }
    let bases = hex_bases(mesh, topo);
    let duals = dual_bases(mesh);
    let mut out = Vec::with_capacity(modes.len());
    for (m, (label, f)) in modes.iter().enumerate() {
        let (x, y) = stepper.dft_take(m)?;
        out.push(shape_of(label, *f, &x, &y, &bases, &duals));
    }
    Ok(out)
}

/// The fields of one mode from its transforms `x` (U) and `y` (F).
fn shape_of(
    label: &str,
    f_hz: f64,
    x: &[C64],
    y: &[C64],
    bases: &[[([u32; 3], [V3; 3]); 4]],
    duals: &[[([usize; 3], [V3; 3]); 4]],
) -> ModeShape {
    let mut cell: Vec<[C64; 3]> = bases
        .iter()
        .map(|hexes| {
            let mut e = [C64::new(0.0, 0.0); 3];
            for (slots, w) in hexes {
                for sidx in 0..3 {
                    let xs = x[slots[sidx] as usize];
                    for c in 0..3 {
                        e[c] += xs * (0.25 * w[sidx][c]);
                    }
                }
            }
            e
        })
        .collect();
    let mut h: Vec<[[C64; 3]; 4]> = duals
        .iter()
        .enumerate()
        .map(|(n, hexes)| {
            std::array::from_fn(|i| {
                let (faces, w) = &hexes[i];
                let mut v = [C64::new(0.0, 0.0); 3];
                for j in 0..3 {
                    let ys = y[4 * n + faces[j]];
                    for c in 0..3 {
                        v[c] += ys * w[j][c];
                    }
                }
                v
            })
        })
        .collect();
    let scale = normaliser(&cell);
    for e in cell.iter_mut() {
        for v in e.iter_mut() {
            *v *= scale;
        }
    }
    for hx in h.iter_mut() {
        for v in hx.iter_mut().flatten() {
            *v *= scale;
        }
    }
    ModeShape {
        label: label.to_string(),
        f_hz,
        cell,
        h,
    }
}

/// The factor making the largest cell field real and of modulus 1 (1 for a zero field).
fn normaliser(cell: &[[C64; 3]]) -> C64 {
    let norm = |e: &[C64; 3]| (e[0].norm_sqr() + e[1].norm_sqr() + e[2].norm_sqr()).sqrt();
    let Some(big) = cell.iter().max_by(|a, b| norm(a).total_cmp(&norm(b))) else {
        return C64::new(1.0, 0.0);
    };
    let comp = big
        .iter()
        .max_by(|a, b| a.norm().total_cmp(&b.norm()))
        .copied()
        .unwrap_or(C64::new(1.0, 0.0));
    if comp.norm() > 0.0 {
        comp.conj() / (comp.norm() * norm(big))
    } else {
        C64::new(1.0, 0.0)
    }
}
