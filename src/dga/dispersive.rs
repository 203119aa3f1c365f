//! The dispersive materials of a [`super::Dga`] and their vacuum masses (design note §13),
//! the electric side of perfectly matched layers among them ([`super::stretch`]).

use super::{VertexBlocks, assemble_eps, stretch};
use crate::error::Result;
use crate::mesh::{Mesh, Topology};
use crate::problem::Media;

/// The dispersive materials of a [`super::Dga`] (design note §13, [`crate::problem::dispersion`]).
///
/// Material `k` (0-based) has susceptibility poles `poles[k]` (rates in 1/m, the library's
/// time unit), instantaneous permittivity `eps_inf[k]` (the `Meps_v` of its tets uses it),
/// and the vacuum mass `m0[k]`: `Meps_v` assembled with coefficient 1 on the tets of
/// material `k` and 0 elsewhere (layout of `meps`). Its polarisation in the fractioned
/// coordinates of a hexahedron is `P = χ(z) U` restricted to the 3 half-edges of the
/// hexahedron, and since χ is a scalar filter per material, the hexahedral states of all the
/// tets of one material around a vertex are the same filter applied to the same `U` values:
/// they are kept once per (half-edge, material) and enter the vertex block through `m0[k]`.
/// `pure[v] = k + 1` when every tet around `v` belongs to material `k` and none conducts
/// (then `m0[k]_v = Meps_v / ε∞` and the coupling is a scalar), 0 otherwise.
#[derive(Clone, Debug)]
///
/// Perfectly matched layers ([`stretch`]) add one material per stretch pole after the
/// `n_media` real ones: its `m0` carries the tensor weights, its `eps_inf` is unused (1) and
/// no vertex is pure in it; its auxiliary "energy" is not an energy (the weights can be
/// negative), so [`crate::backend::cpu::aux_energy`] leaves it out.
pub struct Dispersion {
    /// The real dispersive materials (the first `n_media` entries).
    pub n_media: usize,
    pub poles: Vec<Vec<crate::problem::dispersion::Pole>>,
    pub eps_inf: Vec<f64>,
    pub m0: Vec<VertexBlocks>,
    pub pure: Vec<u16>,
}

impl Dispersion {
    pub(super) fn assemble(
        mesh: &Mesh,
        topo: &Topology,
        mat: &Media,
        free_edge: &[bool],
        rows: Option<&[bool]>,
    ) -> Result<Option<Dispersion>> {
        if !mat.is_dispersive() && !mat.has_pml() {
            return Ok(None);
        }
        let nm = if mat.is_dispersive() {
            mat.poles.len()
        } else {
            0
        };
        let mut m0 = Vec::with_capacity(nm);
        let mut eps_inf = vec![1.0; nm];
        for k in 0..nm {
            let tag = (k + 1) as u16;
            if let Some(n) = mat.disp.iter().position(|&d| d == tag) {
                eps_inf[k] = mat.eps[n];
            }
            m0.push(assemble_eps(
                mesh,
                topo,
                &|n| if mat.disp[n] == tag { 1.0 } else { 0.0 },
                free_edge,
                rows,
            )?);
        }
        // per vertex: -1 unseen, k the one material of its tets so far, -2 mixed
        let mut state = vec![-1i32; mesh.n_vertices()];
        for (n, tv) in mesh.tets.iter().enumerate() {
            let k = if mat.sigma_of(n) != 0.0 {
                -2
            } else {
                mat.disp.get(n).map_or(0, |&k| k as i32)
            };
            for &v in tv {
                let s = &mut state[v as usize];
                *s = match *s {
                    -1 => k,
                    x if x == k => x,
                    _ => -2,
                };
            }
        }
        let pure = state.iter().map(|&s| s.max(0) as u16).collect();
        let mut poles: Vec<Vec<crate::problem::dispersion::Pole>> = mat
            .poles
            .iter()
            .take(nm)
            .map(|(_, p)| p.iter().map(|q| q.in_metres()).collect())
            .collect();
        if let Some(st) = mat.pml.as_ref().filter(|_| mat.has_pml()) {
            m0.extend(stretch::electric_m0(mesh, topo, mat, st, free_edge, rows)?);
            for p in &st.poles {
                poles.push(vec![p.pole()]);
                eps_inf.push(1.0);
            }
        }
        Ok(Some(Dispersion {
            n_media: nm,
            poles,
            eps_inf,
            m0,
            pure,
        }))
    }
}
