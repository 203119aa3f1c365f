//! Mode shapes by a running discrete Fourier transform in a second pass.
//!
//! The run is repeated on the CPU backend (f64) with the same source, time step and number
//! of steps; after the pulse, `X_m[h] += U^k[h] exp(-2πi f_m t_k)` accumulates for each
//! chosen frequency `f_m` (the measured, time-discrete one). The complex electric field of
//! mode m in tet n is the average over its 4 hexahedra of the uniform field
//! `Σ_s X_m[h_s] w^s` (the dual basis of the hexahedron's half-edge vectors, as the probes
//! use). Each mode is normalised so that its largest cell field is real and of modulus 1.

use crate::Result;
use crate::backend::cpu::CpuStepper;
use crate::complex::TetGeom;
use crate::dga::Dga;
use crate::dga::excitation::Source;
use crate::dga::operators::{DualForm, Operators};
use crate::mesh::{Mesh, Topology};
use crate::problem::Waveform;
use crate::util::{C64, V3};
use nalgebra::Matrix3;
use std::sync::Arc;

/// A mode shape: per-tet complex electric field.
#[derive(Clone, Debug)]
pub struct ModeShape {
    /// Label used in field names, e.g. `TM010_114.4991MHz`.
    pub label: String,
    pub f_hz: f64,
    pub cell: Vec<[C64; 3]>,
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
                let a = Matrix3::from_fn(|r, c| h.a[c][r]);
                let inv = a.try_inverse().unwrap_or_else(Matrix3::zeros);
                let w = std::array::from_fn(|r| [inv[(r, 0)], inv[(r, 1)], inv[(r, 2)]]);
                let slots = std::array::from_fn(|s| {
                    topo.half_edge(topo.tet_edges[n][h.edges[s]] as usize, g.v[i]) as u32
                });
                (slots, w)
            })
        })
        .collect()
}

/// Runs the second pass and returns one shape per `(label, f_hz)`.
#[allow(clippy::too_many_arguments)]
pub fn mode_shapes(
    mesh: &Mesh,
    topo: &Topology,
    dga: &Arc<Dga>,
    dt: f64,
    source: &Source,
    wave: Waveform,
    steps: usize,
    start: usize,
    modes: &[(String, f64)],
) -> Result<Vec<ModeShape>> {
    let ops = Arc::new(Operators::<f64>::new(dga, dt, false));
    let mut s = CpuStepper::new(
        dga.clone(),
        ops,
        DualForm::Factored,
        Some((source, wave)),
        vec![],
    )?;
    let nh = dga.n_half();
    let mut acc: Vec<Vec<C64>> = vec![vec![C64::new(0.0, 0.0); nh]; modes.len()];
    let dt_s = dt / crate::C0;
    for k in 0..steps {
        let amp = wave.at((k as f64 + 0.5) * dt);
        s.step(amp);
        if k >= start {
            let t = (k + 1) as f64 * dt_s;
            for (m, (_, f)) in modes.iter().enumerate() {
                let ph = C64::from_polar(1.0, -2.0 * std::f64::consts::PI * f * t);
                for (x, &u) in acc[m].iter_mut().zip(s.u()) {
                    *x += ph * u;
                }
            }
        }
    }
    let bases = hex_bases(mesh, topo);
    Ok(modes
        .iter()
        .zip(acc)
        .map(|((label, f), x)| {
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
            // Normalise: largest cell field real, modulus 1.
            let norm = |e: &[C64; 3]| (e[0].norm_sqr() + e[1].norm_sqr() + e[2].norm_sqr()).sqrt();
            if let Some(big) = cell
                .iter()
                .max_by(|a, b| norm(a).total_cmp(&norm(b)))
                .copied()
            {
                let comp = big
                    .iter()
                    .max_by(|a, b| a.norm().total_cmp(&b.norm()))
                    .copied()
                    .unwrap_or(C64::new(1.0, 0.0));
                let scale = if comp.norm() > 0.0 {
                    comp.conj() / (comp.norm() * norm(&big))
                } else {
                    C64::new(1.0, 0.0)
                };
                for e in cell.iter_mut() {
                    for v in e.iter_mut() {
                        *v *= scale;
                    }
                }
            }
            ModeShape {
                label: label.clone(),
                f_hz: *f,
                cell,
            }
        })
        .collect())
}
