//! The global state of a partitioned run from its ranks' shares and back: the owned values
//! with their global positions, gathered on every rank or on rank 0 ([`gather_state`]), and
//! rank 0's global state sent back to the ranks ([`scatter_state`]); the same for the
//! dispersive poles' states ([`gather_aux`], [`scatter_aux`]), in the single-process layout.

use super::{Comm, Part};
use crate::dga::Dga;
use crate::dga::operators::{DispOps, Operators};
use crate::error::{Error, Result};
use crate::real::Real;

/// The owned values of local vectors (host layouts) with their global positions:
/// `(F: (global slot 4n + k, value), U: (global slot 2e + s, value))`.
pub fn owned_values<T: Real>(part: &Part, dga: &Dga, u: &[T], f: &[T]) -> (Indexed, Indexed) {
    let mut fs = Vec::new();
    for (n, &o) in part.own_tet.iter().enumerate() {
        if o {
            let g = part.tet_global[n] as usize;
            fs.extend((0..4).map(|k| (4 * g + k, f[4 * n + k].f64())));
        }
    }
    let us = dga
        .meps
        .h
        .iter()
        .map(|&h| {
            let g = 2 * part.edge_global[(h >> 1) as usize] as usize + (h & 1) as usize;
            (g, u[h as usize].f64())
        })
        .collect();
    (fs, us)
}

/// The global state `(U, F)` from every rank's owned values: on every rank (`root` None,
/// all-gather) or on `root` only (the others get None). Collective.
pub fn gather_state<C: Comm>(
    comm: &C,
    part: &Part,
    owned: (Indexed, Indexed),
    root: Option<usize>,
) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
    let (fs, us) = owned;
    let g = part.global;
    let mut out = (vec![0.0; 2 * g.n_edges], vec![0.0; 4 * g.n_tets]);
    let mut have = false;
    for (dst, mine) in [(&mut out.1, fs), (&mut out.0, us)] {
        let all = match root {
            None => Some(comm.all_gather(&flatten(&mine))?),
            Some(r) => comm.gather_to(r, &flatten(&mine))?,
        };
        if let Some(all) = all {
            have = true;
            for v in all {
                for p in v.chunks(2) {
                    dst[p[0] as usize] = p[1];
                }
            }
        }
    }
    Ok(have.then_some(out))
}

/// This rank's local `(U, F)` (ghosts included) from the global state held by rank 0 alone
/// (`global` on rank 0, None elsewhere): every rank sends rank 0 its local-to-global maps and
/// gets its values back. Collective.
pub fn scatter_state<C: Comm>(
    comm: &C,
    part: &Part,
    global: Option<(&[f64], &[f64])>,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let pick = |tets: &[u32], edges: &[u32], u: &[f64], f: &[f64]| -> Result<Vec<u64>> {
        let mut w = Vec::with_capacity(4 * tets.len() + 2 * edges.len());
        for &e in edges {
            for b in 0..2 {
                let x = u.get(2 * e as usize + b).ok_or_else(|| Error::Comm {
                    what: "scattering the state".into(),
                    msg: format!("edge {e} is beyond the global state"),
                })?;
                w.push(x.to_bits());
            }
        }
        for &n in tets {
            for k in 0..4 {
                let x = f.get(4 * n as usize + k).ok_or_else(|| Error::Comm {
                    what: "scattering the state".into(),
                    msg: format!("tet {n} is beyond the global state"),
                })?;
                w.push(x.to_bits());
            }
        }
        Ok(w)
    };
    let words = if comm.rank() == 0 {
        let Some((u, f)) = global else {
            return Err(Error::Comm {
                what: "scattering the state".into(),
                msg: "rank 0 holds no state".into(),
            });
        };
        for r in 1..comm.size() {
            let maps = comm.recv_words(r)?;
            let ne = maps.first().copied().unwrap_or(0) as usize;
            if maps.len() < 1 + ne {
                return Err(Error::Comm {
                    what: format!("maps of rank {r}"),
                    msg: "malformed message".into(),
                });
            }
            let edges: Vec<u32> = maps[1..1 + ne].iter().map(|&x| x as u32).collect();
            let tets: Vec<u32> = maps[1 + ne..].iter().map(|&x| x as u32).collect();
            comm.send_words(r, &pick(&tets, &edges, u, f)?)?;
        }
        pick(&part.tet_global, &part.edge_global, u, f)?
    } else {
        let mut maps = vec![part.edge_global.len() as u64];
        maps.extend(part.edge_global.iter().map(|&x| x as u64));
        maps.extend(part.tet_global.iter().map(|&x| x as u64));
        comm.send_words(0, &maps)?;
        comm.recv_words(0)?
    };
    let nu = 2 * part.edge_global.len();
    if words.len() != nu + 4 * part.tet_global.len() {
        return Err(Error::Comm {
            what: "scattering the state".into(),
            msg: format!("rank {} got {} values", comm.rank(), words.len()),
        });
    }
    let v: Vec<f64> = words.into_iter().map(f64::from_bits).collect();
    Ok((v[..nu].to_vec(), v[nu..].to_vec()))
}

/// A rank's local `(U, F)` (host layouts, ghosts included) taken from global vectors.
pub fn local_of_global(part: &Part, u: &[f64], f: &[f64]) -> Result<(Vec<f64>, Vec<f64>)> {
    let g = part.global;
    if u.len() != 2 * g.n_edges || f.len() != 4 * g.n_tets {
        return Err(Error::config(
            "state",
            format!("{}+{}", u.len(), f.len()),
            "length does not match the global mesh",
        ));
    }
    let mut lu = vec![0.0; 2 * part.edge_global.len()];
    let mut lf = vec![0.0; 4 * part.tet_global.len()];
    for (n, &tg) in part.tet_global.iter().enumerate() {
        lf[4 * n..4 * n + 4].copy_from_slice(&f[4 * tg as usize..4 * tg as usize + 4]);
    }
    for (e, &eg) in part.edge_global.iter().enumerate() {
        lu[2 * e..2 * e + 2].copy_from_slice(&u[2 * eg as usize..2 * eg as usize + 2]);
    }
    Ok((lu, lf))
}

/// Values with their global positions.
pub type Indexed = Vec<(usize, f64)>;

fn flatten(v: &[(usize, f64)]) -> Vec<f64> {
    v.iter().flat_map(|&(i, x)| [i as f64, x]).collect()
}

/// The key of each of this rank's dispersive pole entries ([`crate::dga::DispOps`], in its
/// order): `(material, global vertex, global half-edge slot)`, with the material in the
/// global numbering: the real dispersive materials, then one per stretch pole of a PML. A
/// part none of whose tets is dispersive numbers its stretch poles from 0, one process
/// from the number of real materials (whose entries are absent there: the layout is the
/// same).
fn aux_keys<T: Real>(part: &Part, ops: &Operators<T>) -> Vec<[u64; 3]> {
    let Some(d) = &ops.disp else {
        return Vec::new();
    };
    let real = part.materials.poles.len();
    let local_real = if part.materials.is_dispersive() {
        real
    } else {
        0
    };
    let mut keys = Vec::with_capacity(d.ent_h.len());
    for m in 0..d.ptr.len() - 1 {
        let mg = if m < local_real {
            m
        } else {
            m - local_real + real
        };
        for &h in &d.ent_h[d.ptr[m]..d.ptr[m + 1]] {
            let h = h as usize;
            let v = ops.hvert[h] as usize;
            let slot = 2 * part.edge_global[h >> 1] as u64 + (h & 1) as u64;
            keys.push([mg as u64, part.vertex_global[v] as u64, slot]);
        }
    }
    keys
}

/// Where every rank's pole entries sit in the single-process layout of the dispersive
/// state (`s` then `g`, [`crate::backend::cpu::disp_poles`]). Within a material the
/// entries run by vertex, then half-edge (global ids); `g` runs by vertex, then material,
/// then half-edge (the order of [`crate::dga::operators`]'s `disp_ops`; local numbering keeps
/// the global order, so the keys order the entries as one process does).
struct AuxLayout {
    /// Per rank, per entry: `(g index, material, index within the material)`.
    at: Vec<Vec<(usize, usize, usize)>>,
    /// Entries per material, and the state offset of each material.
    n: Vec<usize>,
    sptr: Vec<usize>,
    n_g: usize,
}

impl AuxLayout {
    fn new(keys: &[Vec<[u64; 3]>], n_poles: &[usize]) -> Result<AuxLayout> {
        let nm = n_poles.len();
        let mut all: Vec<([u64; 3], usize, usize)> = Vec::new();
        for (r, ks) in keys.iter().enumerate() {
            for (k, key) in ks.iter().enumerate() {
                if key[0] as usize >= nm {
                    return Err(Error::Comm {
                        what: format!("dispersive entries of rank {r}"),
                        msg: format!("material {} of {nm}", key[0]),
                    });
                }
                all.push((*key, r, k));
            }
        }
        let mut at: Vec<Vec<(usize, usize, usize)>> =
            keys.iter().map(|k| vec![(0, 0, 0); k.len()]).collect();
        let mut n = vec![0usize; nm];
        all.sort_unstable_by_key(|x| x.0);
        for (key, r, k) in &all {
            let m = key[0] as usize;
            at[*r][*k].1 = m;
            at[*r][*k].2 = n[m];
            n[m] += 1;
        }
        all.sort_unstable_by_key(|x| (x.0[1], x.0[0], x.0[2]));
        for (g, (_, r, k)) in all.iter().enumerate() {
            at[*r][*k].0 = g;
        }
        let mut sptr = vec![0usize];
        for m in 0..nm {
            sptr.push(sptr[m] + 2 * n_poles[m] * n[m]);
        }
        Ok(AuxLayout {
            at,
            n,
            sptr,
            n_g: all.len(),
        })
    }
    fn len(&self) -> usize {
        self.sptr.last().copied().unwrap_or(0) + self.n_g
    }
}

/// The number of poles of each dispersive material of the global problem, then of each
/// stretch pole's pseudo-material (one pole each).
fn n_poles(part: &Part) -> Vec<usize> {
    let stretch = part.materials.pml.as_ref().map_or(0, |st| st.poles.len());
    part.materials
        .poles
        .iter()
        .map(|(_, p)| p.len())
        .chain(std::iter::repeat_n(1, stretch))
        .collect()
}

/// This rank's values of local entry `k` of material `m` (index `i` within it): its `g`,
/// then its `2 × poles` states.
fn entry_values<T: Real>(
    d: &DispOps<T>,
    m: usize,
    i: usize,
    k: usize,
    s: &[T],
    g: &[T],
) -> Vec<f64> {
    let n = d.ptr[m + 1] - d.ptr[m];
    let np = d.cptr[m + 1] - d.cptr[m];
    let mut v = vec![g[d.ent_g[k] as usize].f64()];
    v.extend((0..2 * np).map(|pq| s[d.sptr[m] + pq * n + i].f64()));
    v
}

/// The dispersive state `(s, g)` of every rank, gathered on rank 0 in the single-process
/// layout (`s` then `g`, as [`crate::backend::Stepper::aux_state`] of one process); the
/// other ranks get an empty vector. Collective.
pub fn gather_aux<T: Real, C: Comm>(
    comm: &C,
    part: &Part,
    ops: &Operators<T>,
    s: &[T],
    g: &[T],
) -> Result<Vec<f64>> {
    let keys = aux_keys(part, ops);
    let mut mine = Vec::new();
    if let Some(d) = &ops.disp {
        for m in 0..d.ptr.len() - 1 {
            for (i, k) in (d.ptr[m]..d.ptr[m + 1]).enumerate() {
                mine.extend(keys[k].iter().map(|&x| x as f64));
                mine.extend(entry_values(d, m, i, k, s, g));
            }
        }
    }
    let Some(all) = comm.gather_to(0, &mine)? else {
        return Ok(Vec::new());
    };
    let np = n_poles(part);
    let bad = |r: usize| Error::Comm {
        what: format!("dispersive state of rank {r}"),
        msg: "malformed message".into(),
    };
    // (keys, values) per rank
    let mut keys = Vec::with_capacity(all.len());
    let mut vals = Vec::with_capacity(all.len());
    for (r, v) in all.iter().enumerate() {
        let (mut ks, mut vs) = (Vec::new(), Vec::new());
        let mut at = 0;
        while at < v.len() {
            let m = *v.get(at).ok_or_else(|| bad(r))? as usize;
            let len = 4 + 2 * np.get(m).ok_or_else(|| bad(r))?;
            let rec = v.get(at..at + len).ok_or_else(|| bad(r))?;
            ks.push([rec[0] as u64, rec[1] as u64, rec[2] as u64]);
            vs.push(rec[3..].to_vec());
            at += len;
        }
        keys.push(ks);
        vals.push(vs);
    }
    let lay = AuxLayout::new(&keys, &np)?;
    let ns = lay.sptr[np.len()];
    let mut out = vec![0.0; lay.len()];
    for (at, vs) in lay.at.iter().zip(&vals) {
        for (&(gi, m, i), v) in at.iter().zip(vs) {
            out[ns + gi] = v[0];
            for pq in 0..2 * np[m] {
                out[lay.sptr[m] + pq * lay.n[m] + i] = v[1 + pq];
            }
        }
    }
    Ok(out)
}

/// This rank's dispersive state `(s, g)` (its [`crate::dga::DispOps`] layout) from the
/// single-process layout held by rank 0 alone (`global` on rank 0, None elsewhere; empty
/// for a run without dispersion). Collective.
pub fn scatter_aux<T: Real, C: Comm>(
    comm: &C,
    part: &Part,
    ops: &Operators<T>,
    global: Option<&[f64]>,
) -> Result<(Vec<T>, Vec<T>)> {
    let keys = aux_keys(part, ops);
    let flat: Vec<f64> = keys.iter().flatten().map(|&x| x as f64).collect();
    let gathered = comm.gather_to(0, &flat)?;
    let words = if let Some(all) = gathered {
        let keys: Vec<Vec<[u64; 3]>> = all
            .iter()
            .map(|v| {
                v.chunks_exact(3)
                    .map(|c| [c[0] as u64, c[1] as u64, c[2] as u64])
                    .collect()
            })
            .collect();
        let np = n_poles(part);
        let lay = match all.iter().position(|v| v.len() % 3 != 0) {
            Some(r) => Err(Error::Comm {
                what: format!("dispersive entries of rank {r}"),
                msg: "malformed message".into(),
            }),
            None => AuxLayout::new(&keys, &np),
        };
        let global = global.unwrap_or(&[]);
        let lay = match lay {
            Ok(l) if l.len() == global.len() => Ok(l),
            Ok(l) => Err(Error::config(
                "state",
                global.len(),
                format!("this run has {} dispersive state values", l.len()),
            )),
            Err(e) => Err(e),
        };
        let lay = match lay {
            Ok(l) => l,
            Err(e) => {
                for r in 1..comm.size() {
                    comm.send_words(r, &[0])?;
                }
                return Err(e);
            }
        };
        let ns = lay.sptr[np.len()];
        let values = |r: usize| -> Vec<u64> {
            let mut w = vec![1u64];
            for &(gi, m, i) in &lay.at[r] {
                w.push(global[ns + gi].to_bits());
                w.extend(
                    (0..2 * np[m]).map(|pq| global[lay.sptr[m] + pq * lay.n[m] + i].to_bits()),
                );
            }
            w
        };
        for r in 1..comm.size() {
            comm.send_words(r, &values(r))?;
        }
        values(0)
    } else {
        comm.recv_words(0)?
    };
    if words.first() != Some(&1) {
        return Err(Error::RankZeroFailed {
            what: "checking the dispersive state".into(),
        });
    }
    let Some(d) = &ops.disp else {
        return Ok((Vec::new(), Vec::new()));
    };
    let (mut s, mut g) = (vec![T::zero(); d.n_state], vec![T::zero(); d.n_g]);
    let mut it = words[1..].iter().map(|&x| f64::from_bits(x));
    let short = || Error::Comm {
        what: "receiving the dispersive state".into(),
        msg: "too few values".into(),
    };
    for m in 0..d.ptr.len() - 1 {
        let n = d.ptr[m + 1] - d.ptr[m];
        let np = d.cptr[m + 1] - d.cptr[m];
        for (i, k) in (d.ptr[m]..d.ptr[m + 1]).enumerate() {
            g[d.ent_g[k] as usize] = T::of(it.next().ok_or_else(short)?);
            for pq in 0..2 * np {
                s[d.sptr[m] + pq * n + i] = T::of(it.next().ok_or_else(short)?);
            }
        }
    }
    Ok((s, g))
}
