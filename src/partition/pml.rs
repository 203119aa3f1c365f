//! Perfectly matched layers in partitioned runs ([`crate::problem::pml`],
//! [`crate::dga::stretch`]): a part's share of the stretch, its message, and the magnetic
//! poles' states gathered and scattered in the single-process layout.
//!
//! A part carries the stretch terms of all its tets (owned and ghost, local numbering) and
//! the global list of poles, so that its local [`crate::dga::Dga`] has the same electric
//! pseudo-materials as one process (one per stretch pole, after the real dispersive ones)
//! with the global vertex rows of their masses `M0_t` (a vertex's row sums over every tet
//! around it, ghosts included), and the magnetic masses of its **owned** layer tets only
//! ([`crate::dga::Dga::from_masses`]'s tet rows). Per owned layer tet `n` the step is then
//! that of one process:
//!
//! `F_n −= Σ_j G_j g_j`, `F_n −= Δt Ã_n⁻¹ C_n U`, then the pole step
//! `(s₁, s₂, g)_j ← filter_j(F_n)` ([`crate::backend::cpu::mag_correct`],
//! [`crate::backend::cpu::mag_poles`]),
//!
//! with `Ã_n = Mmu_n + Σ_j b₀,j M0_j` assembled from the tet's own masses, so every value
//! is the single-process value bit for bit; nothing of it travels in the halo (the sent F
//! of an interface tet carries its correction).
//!
//! The magnetic states of one process are term-major in ascending tet order: `ms` (8 per
//! term: `s₁` of the 4 faces, then `s₂`), then `mg` (4 per term). The owned layer tets of the
//! ranks partition the layer tets, so each rank's terms are a contiguous run of each tet's
//! terms at a global offset ([`gather_mag`], [`scatter_mag`]).

use super::words::{Reader, Words};
use super::{Comm, Part};
use crate::dga::operators::Operators;
use crate::error::{Error, Result};
use crate::problem::pml::{Stretch, StretchPole, TetTerms};
use crate::real::Real;

/// Values of one term in `ms` and `mg`.
const MS: usize = 8;
const MG: usize = 4;

/// The stretch of the tets `local` (global ids, ascending) in their local numbering, with
/// every pole of the global stretch (ids unchanged); the layers' reports stay on rank 0.
pub(super) fn restrict(st: &Stretch, local: &[u32]) -> Stretch {
    Stretch {
        poles: st.poles.clone(),
        tets: st
            .tets
            .iter()
            .filter_map(|(n, t)| local.binary_search(n).ok().map(|l| (l as u32, t.clone())))
            .collect(),
        layers: Vec::new(),
    }
}

/// Appends the stretch (None: no PML) to a part's message: a flag, the poles (kind, rate),
/// the layer tets, their term counts, and per term its pole and `W` (9 values).
pub(super) fn put(w: &mut Words, st: Option<&Stretch>) {
    let Some(st) = st else {
        w.put(0);
        return;
    };
    w.put(1);
    w.put_iter(st.poles.iter().flat_map(|p| match *p {
        StretchPole::Debye(x) => [0, x.to_bits()],
        StretchPole::Double(x) => [1, x.to_bits()],
    }));
    w.put_iter(st.tets.iter().map(|t| t.0 as u64));
    w.put_iter(st.tets.iter().map(|t| t.1.len() as u64));
    w.put_iter(st.tets.iter().flat_map(|t| {
        t.1.iter()
            .flat_map(|(k, m)| std::iter::once(*k as u64).chain(m.map(f64::to_bits)))
    }));
}

/// Decodes [`put`] for a part of `n_tets` tets.
pub(super) fn get(r: &mut Reader, n_tets: usize) -> Result<Option<Stretch>> {
    if r.get()? == 0 {
        return Ok(None);
    }
    let pv = r.get_vec()?;
    if pv.len() % 2 != 0 {
        return Err(r.bad("stretch poles are not kind and rate"));
    }
    let mut poles = Vec::with_capacity(pv.len() / 2);
    for c in pv.chunks(2) {
        poles.push(match c[0] {
            0 => StretchPole::Debye(f64::from_bits(c[1])),
            1 => StretchPole::Double(f64::from_bits(c[1])),
            _ => return Err(r.bad("unknown stretch pole kind")),
        });
    }
    let tets = r.get_vec()?;
    let counts = r.get_vec()?;
    let terms = r.get_vec()?;
    let total: u64 = counts.iter().sum();
    if counts.len() != tets.len()
        || terms.len() as u64 != 10 * total
        || tets.windows(2).any(|x| x[0] >= x[1])
        || tets.iter().any(|&n| n as usize >= n_tets)
    {
        return Err(r.bad("stretch terms disagree with the part"));
    }
    let mut out = Vec::with_capacity(tets.len());
    let mut it = terms.chunks(10);
    for (&n, &c) in tets.iter().zip(counts) {
        let mut t: TetTerms = Vec::with_capacity(c as usize);
        for x in it.by_ref().take(c as usize) {
            if x[0] as usize >= poles.len() {
                return Err(r.bad("stretch term of an unknown pole"));
            }
            t.push((
                x[0] as u16,
                std::array::from_fn(|k| f64::from_bits(x[1 + k])),
            ));
        }
        out.push((n as u32, t));
    }
    Ok(Some(Stretch {
        poles,
        tets: out,
        layers: Vec::new(),
    }))
}

/// Per owned layer tet of this rank (its [`crate::dga::stretch::MagOps`] order): its
/// global id and its number of terms.
fn keys<T: Real>(part: &Part, ops: &Operators<T>) -> Vec<f64> {
    let Some(mp) = &ops.mpml else {
        return Vec::new();
    };
    (0..mp.tets.len())
        .flat_map(|i| {
            let g = part.tet_global[mp.tets[i] as usize];
            [g as f64, (mp.ptr[i + 1] - mp.ptr[i]) as f64]
        })
        .collect()
}

/// Where each rank's terms sit among the global terms (rank 0's view).
struct Layout {
    /// Per rank, per owned layer tet: (first global term, terms).
    at: Vec<Vec<(usize, usize)>>,
    n_terms: usize,
}

/// The global term layout from every rank's [`keys`], on rank 0 (None elsewhere).
/// Collective.
fn layout<T: Real, C: Comm>(comm: &C, part: &Part, ops: &Operators<T>) -> Result<Option<Layout>> {
    let Some(all) = comm.gather_to(0, &keys(part, ops))? else {
        return Ok(None);
    };
    let mut tets: Vec<(u64, usize, usize, usize)> = Vec::new();
    for (r, v) in all.iter().enumerate() {
        if v.len() % 2 != 0 {
            return Err(Error::Comm {
                what: format!("PML terms of rank {r}"),
                msg: "malformed message".into(),
            });
        }
        for (i, c) in v.chunks(2).enumerate() {
            tets.push((c[0] as u64, c[1] as usize, r, i));
        }
    }
    tets.sort_unstable();
    let mut at: Vec<Vec<(usize, usize)>> = all.iter().map(|v| vec![(0, 0); v.len() / 2]).collect();
    let mut n_terms = 0;
    for &(_, k, r, i) in &tets {
        at[r][i] = (n_terms, k);
        n_terms += k;
    }
    Ok(Some(Layout { at, n_terms }))
}

/// The magnetic PML states `(ms, mg)` of every rank on rank 0, in the single-process
/// layout (`ms` then `mg`); the other ranks get an empty vector. Collective.
pub fn gather_mag<T: Real, C: Comm>(
    comm: &C,
    part: &Part,
    ops: &Operators<T>,
    ms: &[T],
    mg: &[T],
) -> Result<Vec<f64>> {
    let lay = layout(comm, part, ops)?;
    let mine: Vec<f64> = ms.iter().chain(mg).map(|x| x.f64()).collect();
    let (Some(all), Some(lay)) = (comm.gather_to(0, &mine)?, lay) else {
        return Ok(Vec::new());
    };
    let nt = lay.n_terms;
    let mut out = vec![0.0; (MS + MG) * nt];
    for (r, (v, at)) in all.iter().zip(&lay.at).enumerate() {
        let terms: usize = at.iter().map(|a| a.1).sum();
        if v.len() != (MS + MG) * terms {
            return Err(Error::Comm {
                what: format!("PML state of rank {r}"),
                msg: format!("{} values for {terms} terms", v.len()),
            });
        }
        let (vs, vg) = v.split_at(MS * terms);
        let mut j = 0;
        for &(g0, k) in at {
            out[MS * g0..MS * (g0 + k)].copy_from_slice(&vs[MS * j..MS * (j + k)]);
            let og = MS * nt + MG * g0;
            out[og..og + MG * k].copy_from_slice(&vg[MG * j..MG * (j + k)]);
            j += k;
        }
    }
    Ok(out)
}

/// The number of magnetic PML state values of the whole run (the tail of the
/// single-process auxiliary state), on rank 0 (0 elsewhere). Collective.
pub fn mag_len<T: Real, C: Comm>(comm: &C, part: &Part, ops: &Operators<T>) -> Result<usize> {
    Ok(layout(comm, part, ops)?.map_or(0, |l| (MS + MG) * l.n_terms))
}

/// This rank's magnetic PML states `(ms, mg)` from the single-process layout held by rank 0
/// alone (`global` on rank 0, None elsewhere). Collective.
pub fn scatter_mag<T: Real, C: Comm>(
    comm: &C,
    part: &Part,
    ops: &Operators<T>,
    global: Option<&[f64]>,
) -> Result<(Vec<T>, Vec<T>)> {
    let words = match layout(comm, part, ops)? {
        Some(lay) => {
            let nt = lay.n_terms;
            let global = global.unwrap_or(&[]);
            if global.len() != (MS + MG) * nt {
                for r in 1..comm.size() {
                    comm.send_words(r, &[0])?;
                }
                return Err(Error::config(
                    "state",
                    global.len(),
                    format!(
                        "this run has {} PML state values ({nt} magnetic terms)",
                        (MS + MG) * nt
                    ),
                ));
            }
            let values = |r: usize| -> Vec<u64> {
                let mut w = vec![1u64];
                for &(g0, k) in &lay.at[r] {
                    w.extend(global[MS * g0..MS * (g0 + k)].iter().map(|x| x.to_bits()));
                }
                for &(g0, k) in &lay.at[r] {
                    let og = MS * nt + MG * g0;
                    w.extend(global[og..og + MG * k].iter().map(|x| x.to_bits()));
                }
                w
            };
            for r in 1..comm.size() {
                comm.send_words(r, &values(r))?;
            }
            values(0)
        }
        None => comm.recv_words(0)?,
    };
    if words.first() != Some(&1) {
        return Err(Error::RankZeroFailed {
            what: "checking the PML state".into(),
        });
    }
    let n = ops.mpml.as_ref().map_or(0, |m| m.pole.len());
    if words.len() != 1 + (MS + MG) * n {
        return Err(Error::Comm {
            what: "receiving the PML state".into(),
            msg: format!("{} values for {n} terms", words.len() - 1),
        });
    }
    let v: Vec<T> = words[1..]
        .iter()
        .map(|&x| T::of(f64::from_bits(x)))
        .collect();
    let (s, g) = v.split_at(MS * n);
    Ok((s.to_vec(), g.to_vec()))
}
