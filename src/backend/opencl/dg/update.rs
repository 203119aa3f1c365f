//! The DG update `res = a res + Δt (L q − J/ε)`, `q_out = q + b res` of one LSERK stage
//! (volume terms `Dr, Ds, Dt` with the geometric factors, the lift of the face fluxes, the
//! material's `1/ε`, `1/μ`): one of five kernel forms ([`DgUpdate`], `cl/dg/{node, blocked,
//! two_nodes, lines}.cl`).
//!
//! [`Update`] owns the operators in the layout of every form that fits the device, the
//! geometric and material factors, the kernels and the chosen form. Its work-group shapes
//! enter the program's `-D` options ([`Shapes::options`]), so they are fixed before the
//! program is built.

use crate::dg::DgOperator;
use crate::error::{Error, Result};
use crate::ocl::{Arg, ClDevice, LOCAL, launch};
use crate::real::Real;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;

/// The form of the DG update kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DgUpdate {
    /// `dg_update`: one work-item per node, each reading its tet's fields, fluxes and the
    /// operator rows from global memory (the first kernel; a bench variant).
    Node,
    /// `dg_update_blk`: several tets per work-group, their fields and fluxes staged in local
    /// memory by coalesced loads, the operators transposed.
    Blocked,
    /// `dg_update_pair`: [`DgUpdate::Blocked`] with every operand read two values at a
    /// time (operators stored in pairs of columns, staged rows padded to an even length).
    Paired,
    /// `dg_update_nb`: [`DgUpdate::Blocked`] with two nodes per work-item (each staged value
    /// loaded feeds both).
    TwoNodes,
    /// `dg_update_nc`: [`DgUpdate::TwoNodes`] with 16 work-items per tet, each owning the
    /// nodes t, t + 16, ... over operator rows padded to a multiple of 16 values (so that a
    /// warp's operator load reads one aligned 128-byte line in f64), the nodes left over
    /// summed one per work-item after those.
    Lines,
}

impl DgUpdate {
    /// Every form, in the order the bench rows and tests take them.
    pub const ALL: [DgUpdate; 5] = [
        DgUpdate::Node,
        DgUpdate::Blocked,
        DgUpdate::Paired,
        DgUpdate::TwoNodes,
        DgUpdate::Lines,
    ];

    /// The suffix of the bench variant (`N=3` for the default, `N=3+node` for the other).
    pub fn name(self) -> &'static str {
        match self {
            DgUpdate::Node => "node",
            DgUpdate::Blocked => "blocked",
            DgUpdate::Paired => "paired",
            DgUpdate::TwoNodes => "two_nodes",
            DgUpdate::Lines => "lines",
        }
    }
}

/// Local memory `dg_update_blk` may use per work-group, bytes.
const STAGE_BYTES: usize = 32 << 10;
/// Nodes per work-item of `dg_update_nb`.
const NODES_PER_ITEM: usize = 2;
/// Work-items per tet of `dg_update_nc`: 16 values of f64 fill one 128-byte line.
const NC_LANES: usize = 16;
/// Tets per work-group of `dg_update_nc`, where they fit: 6 x 16 work-items, three whole
/// warps, beside a warp for the nodes left over (results/h200/dg_kernels/tuning/11_pipelined).
const NC_TETS: usize = 6;
/// The width of the work-item blocks `dg_update_nc` keeps apart: a warp on NVIDIA (OpenCL
/// has no portable query for it before a kernel is built; on a wider SIMD device the
/// phases share a wavefront, which is correct, only slower).
const NC_WARP: usize = 32;
/// Unroll factor of `dg_update_nc`'s volume sums.
const NC_UNROLL: usize = 5;
/// Work-items per work-group `dg_update_blk` aims at.
const GROUP: usize = 256;

/// The default update kernel at order `n`: the fastest measured on the H200 at 1M tets
/// (`results/h200/dg_kernels/tuning/9_paired`, `11_pipelined`): at N = 4 the whole-line
/// operator loads; two nodes per work-item at N = 3 and from N = 5 on (not measured there),
/// and at N = 2 in f64; the paired loads at N = 1, and at N = 2 in f32; the blocked kernel
/// where those do not fit (`pair` / `nb` / `nc`: whether their work-groups fit), else the
/// node kernel.
pub(super) fn default_update(n: usize, f64: bool, pair: bool, nb: bool, nc: bool) -> DgUpdate {
    let two_nodes = n >= 3 || (n == 2 && f64);
    match (two_nodes, pair, nb) {
        _ if n == 4 && nc => DgUpdate::Lines,
        (true, _, true) => DgUpdate::TwoNodes,
        (_, true, _) if n <= 2 => DgUpdate::Paired,
        (_, true, _) => DgUpdate::Blocked,
        _ => DgUpdate::Node,
    }
}

/// Tets per work-group of a blocked update on `dev` whose tets take `threads` work-items
/// and `per_tet` bytes of local memory each: as many as [`GROUP`] work-items ask within
/// `cap` bytes of local memory and the device's limits; 0 when not even one tet fits
/// (then [`DgUpdate::Node`]).
fn tets_per_group(dev: &ClDevice, threads: usize, per_tet: usize, cap: usize) -> usize {
    let local = (dev.info.local_mem as usize).min(cap);
    let fit = (local / per_tet).min(dev.info.max_work_group / threads);
    (GROUP / threads).max(1).min(fit)
}

/// The work-group shapes of the blocked forms on one device (0 tets: the form does not
/// fit).
#[derive(Clone, Copy, Debug)]
pub(super) struct Shapes {
    np: usize,
    nfp: usize,
    /// Tets per work-group of `dg_update_blk` / `dg_update_pair`, `dg_update_nb`,
    /// `dg_update_nc`.
    kb: usize,
    kbn: usize,
    kbc: usize,
    /// Work-items of `dg_update_nc` of its phase B only (the nodes left over).
    ncb: usize,
}

impl Shapes {
    pub(super) fn for_device<T: Real>(dev: &ClDevice, op: &DgOperator) -> Shapes {
        let (np, nfp) = (op.re.np, op.re.nfp);
        let real = std::mem::size_of::<T>();
        // `dg_update_blk` and `dg_update_pair`: a work-item per node, fields, fluxes,
        // residuals and the 11 scalars of each tet staged (the pair kernel's field rows
        // padded to an even length); `dg_update_nb`: the same, ceil(np / 2) work-items
        let per_tet = (6 * (2 * np + np % 2 + 4 * nfp) + 11) * real;
        let cap = STAGE_BYTES.max(per_tet);
        let kb = tets_per_group(dev, np, per_tet, cap);
        let kbn = tets_per_group(dev, np.div_ceil(NODES_PER_ITEM), per_tet, cap);
        // `dg_update_nc`: NC_LANES work-items per tet and, where nodes are left over, whole
        // warps of work-items of their own for those
        let nr = np % NC_LANES;
        let per_nc = (6 * (2 * np + 4 * nfp) + 11) * real;
        let nc_b = |kb: usize| match nr {
            0 => 0,
            _ => (kb * nr).div_ceil(NC_WARP) * NC_WARP,
        };
        let local = dev.info.local_mem as usize;
        let kbc = (1..=NC_TETS)
            .rev()
            .find(|&kb| kb * per_nc <= local && kb * NC_LANES + nc_b(kb) <= dev.info.max_work_group)
            .unwrap_or(0);
        Shapes {
            np,
            nfp,
            kb,
            kbn,
            kbc,
            ncb: nc_b(kbc),
        }
    }

    /// The `-D` options of the DG program for these shapes in precision `T`.
    pub(super) fn options<T: Real>(&self) -> String {
        let (np, nfp) = (self.np, self.nfp);
        format!(
            "{} -D NP={np} -D NFP={nfp} -D KB={} -D KBN={} -D NBM={NODES_PER_ITEM} \
             -D KBC={} -D NL={NC_LANES} -D NCB={} -D NC_UNROLL_J={NC_UNROLL}",
            crate::backend::opencl::real_options::<T>(),
            self.kb.max(1),
            self.kbn.max(1),
            self.kbc.max(1),
            self.ncb,
        )
    }
}

/// The operators of every form, the factors and the kernels of the DG update.
pub(super) struct Update<T> {
    shapes: Shapes,
    form: DgUpdate,
    geo: Buffer<T>,
    inv_eps: Buffer<T>,
    inv_mu: Buffer<T>,
    /// `Dr`, `Ds`, `Dt` and `LIFT` row-major (`dg_update`).
    d: [Buffer<T>; 3],
    lift: Buffer<T>,
    /// Transposed, one after the other (`dg_update_blk`, `dg_update_nb`).
    d_t: Buffer<T>,
    lift_t: Buffer<T>,
    /// Transposed in pairs of columns (`dg_update_pair`).
    d_t2: Buffer<T>,
    lift_t2: Buffer<T>,
    /// Transposed with rows padded to a multiple of [`NC_LANES`] (`dg_update_nc`).
    d_tp: Buffer<T>,
    lift_tp: Buffer<T>,
    k_node: Kernel,
    k_blk: Option<Kernel>,
    k_pair: Option<Kernel>,
    k_nb: Option<Kernel>,
    k_nc: Option<Kernel>,
}

/// The stage's operands the stepper owns: coefficients `a`, `b`, step `dt`, the source
/// term `(tet, J/ε)` (tet `u32::MAX`: none), and the buffers.
pub(super) struct Stage<'a, T> {
    pub(super) a: f64,
    pub(super) b: f64,
    pub(super) dt: f64,
    pub(super) src: (u32, [f64; 3]),
    pub(super) q: &'a Buffer<T>,
    pub(super) flux: &'a Buffer<T>,
    pub(super) res: &'a Buffer<T>,
    pub(super) q_out: &'a Buffer<T>,
}

impl<T: Real> Update<T> {
    pub(super) fn new(
        dev: &ClDevice,
        program: &Program,
        op: &DgOperator,
        shapes: Shapes,
    ) -> Result<Self> {
        type M = nalgebra::DMatrix<f64>;
        let k = op.k;
        let npr = op.re.np.div_ceil(NC_LANES) * NC_LANES;
        let row_major = |m: &M| -> Vec<T> {
            (0..m.nrows())
                .flat_map(|i| (0..m.ncols()).map(move |j| T::of(m[(i, j)])))
                .collect()
        };
        let col_major = |m: &M| -> Vec<T> { m.as_slice().iter().map(|&x| T::of(x)).collect() };
        // pairs of columns: [(jh * rows + r) * nrows + i] = (M_r[i][2 jh], M_r[i][2 jh + 1]),
        // zero past the last column
        let paired = |ms: &[&M]| -> Vec<T> {
            let (nr, nc) = (ms[0].nrows(), ms[0].ncols());
            let at = |m: &M, i: usize, j: usize| T::of(if j < nc { m[(i, j)] } else { 0.0 });
            (0..nc.div_ceil(2))
                .flat_map(|jh| ms.iter().map(move |m| (jh, m)))
                .flat_map(|(jh, m)| {
                    (0..nr).flat_map(move |i| [at(m, i, 2 * jh), at(m, i, 2 * jh + 1)])
                })
                .collect()
        };
        // transposed, rows padded to npr values: [row * npr + i] = M[i][row], zero past np
        let padded = |ms: &[&M]| -> Vec<T> {
            ms.iter()
                .flat_map(|m| {
                    (0..m.ncols()).flat_map(move |j| {
                        (0..npr).map(move |i| T::of(if i < m.nrows() { m[(i, j)] } else { 0.0 }))
                    })
                })
                .collect()
        };
        let re = &op.re;
        let drst = [&re.dr, &re.ds, &re.dt];
        let d_t: Vec<T> = drst.into_iter().flat_map(col_major).collect();
        let geo: Vec<T> = op.geo.iter().flatten().map(|&x| T::of(x)).collect();
        let ie: Vec<T> = op.eps.iter().map(|&x| T::of(1.0 / x)).collect();
        let im: Vec<T> = op.mu.iter().map(|&x| T::of(1.0 / x)).collect();
        debug_assert_eq!(ie.len(), k);
        let kernel = |name: &str, fits: bool| -> Result<Option<Kernel>> {
            fits.then(|| crate::ocl::kernels(program, [name]).map(|[k]| k))
                .transpose()
        };
        let (kb, kbn, kbc) = (shapes.kb > 0, shapes.kbn > 0, shapes.kbc > 0);
        let [k_node] = crate::ocl::kernels(program, ["dg_update"])?;
        Ok(Update {
            form: default_update(re.n, T::NAME == "f64", kb, kbn, kbc),
            shapes,
            geo: dev.upload(&geo, "DG geometric factors")?,
            inv_eps: dev.upload(&ie, "1/eps")?,
            inv_mu: dev.upload(&im, "1/mu")?,
            d: [
                dev.upload(&row_major(&re.dr), "Dr")?,
                dev.upload(&row_major(&re.ds), "Ds")?,
                dev.upload(&row_major(&re.dt), "Dt")?,
            ],
            lift: dev.upload(&row_major(&re.lift), "LIFT")?,
            d_t: dev.upload(&d_t, "Dr, Ds, Dt transposed")?,
            lift_t: dev.upload(&col_major(&re.lift), "LIFT transposed")?,
            d_t2: dev.upload(&paired(&drst), "Dr, Ds, Dt in pairs of columns")?,
            lift_t2: dev.upload(&paired(&[&re.lift]), "LIFT in pairs of columns")?,
            d_tp: dev.upload(&padded(&drst), "Dr, Ds, Dt transposed, padded rows")?,
            lift_tp: dev.upload(&padded(&[&re.lift]), "LIFT transposed, padded rows")?,
            k_node,
            k_blk: kernel("dg_update_blk", kb)?,
            k_pair: kernel("dg_update_pair", kb)?,
            k_nb: kernel("dg_update_nb", kbn)?,
            k_nc: kernel("dg_update_nc", kbc)?,
        })
    }

    /// The form launched.
    pub(super) fn form(&self) -> DgUpdate {
        self.form
    }

    /// Tets per work-group of a form (0 where it does not fit, and for
    /// [`DgUpdate::Node`], which does not group tets).
    pub(super) fn tets_per_group(&self, u: DgUpdate) -> usize {
        let s = &self.shapes;
        match u {
            DgUpdate::Node => 0,
            DgUpdate::Blocked | DgUpdate::Paired => s.kb,
            DgUpdate::TwoNodes => s.kbn,
            DgUpdate::Lines => s.kbc,
        }
    }

    /// Chooses the form; a blocked one is refused where it does not fit (`why`: the
    /// message).
    pub(super) fn set_form(&mut self, u: DgUpdate, why: impl FnOnce() -> String) -> Result<()> {
        if u != DgUpdate::Node && self.tets_per_group(u) == 0 {
            return Err(Error::config("dg update", u.name(), why()));
        }
        self.form = u;
        Ok(())
    }

    /// The update of stage `s` over the `k` tets.
    pub(super) fn launch(&self, dev: &ClDevice, k: usize, s: Stage<'_, T>) -> Result<Event> {
        let (np, nf) = (self.shapes.np, 4 * self.shapes.nfp);
        let real = std::mem::size_of::<T>();
        let staged = |kb: usize, rows: usize| vec![kb * (6 * (rows + nf) + 11) * real];
        let sh = &self.shapes;
        // the kernel, its work-items and work-group size, its operator buffers and the
        // bytes of its local buffers (see cl/dg/*.cl); set_form admits only a kernel built
        let (kern, global, group, ops, scratch) = match self.form {
            DgUpdate::TwoNodes => {
                let (kb, tpt) = (sh.kbn, np.div_ceil(NODES_PER_ITEM));
                let kern = self.k_nb.as_ref().expect("fits");
                let ops = vec![&self.d_t, &self.lift_t];
                (
                    kern,
                    k.div_ceil(kb) * kb * tpt,
                    kb * tpt,
                    ops,
                    staged(kb, 2 * np),
                )
            }
            DgUpdate::Lines => {
                let (kb, kern) = (sh.kbc, self.k_nc.as_ref().expect("fits"));
                let group = kb * NC_LANES + sh.ncb;
                let ops = vec![&self.d_tp, &self.lift_tp];
                (kern, k.div_ceil(kb) * group, group, ops, staged(kb, 2 * np))
            }
            DgUpdate::Paired => {
                let (kb, kern) = (sh.kb, self.k_pair.as_ref().expect("fits"));
                let ops = vec![&self.d_t2, &self.lift_t2];
                let rows = 2 * np + np % 2;
                (
                    kern,
                    k.div_ceil(kb) * kb * np,
                    kb * np,
                    ops,
                    staged(kb, rows),
                )
            }
            DgUpdate::Blocked => {
                let (kb, kern) = (sh.kb, self.k_blk.as_ref().expect("fits"));
                let ops = vec![&self.d_t, &self.lift_t];
                (
                    kern,
                    k.div_ceil(kb) * kb * np,
                    kb * np,
                    ops,
                    staged(kb, 2 * np),
                )
            }
            DgUpdate::Node => {
                let ops = vec![&self.d[0], &self.d[1], &self.d[2], &self.lift];
                (&self.k_node, k * np, LOCAL, ops, vec![])
            }
        };
        let sv = s.src.1;
        let args: Vec<Arg<'_, T>> = [
            Arg::U32(k as u32),
            Arg::Buf(s.q),
            Arg::Buf(s.flux),
            Arg::Buf(&self.geo),
        ]
        .into_iter()
        .chain(ops.into_iter().map(Arg::Buf))
        .chain([
            Arg::Buf(&self.inv_eps),
            Arg::Buf(&self.inv_mu),
            Arg::U32(s.src.0),
            Arg::Real(T::of(sv[0])),
            Arg::Real(T::of(sv[1])),
            Arg::Real(T::of(sv[2])),
            Arg::Real(T::of(s.a)),
            Arg::Real(T::of(s.b)),
            Arg::Real(T::of(s.dt)),
            Arg::Buf(s.res),
            Arg::Buf(s.q_out),
        ])
        .chain(scratch.into_iter().map(Arg::Local))
        .collect();
        launch(dev, kern, global, group, &args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default update kernel per order and precision, and its fallbacks where a kernel's
    /// work-group does not fit.
    #[test]
    fn default_update_by_order_and_fit() {
        use DgUpdate::*;
        let by = |f64| {
            (1..=5)
                .map(|n| default_update(n, f64, true, true, true))
                .collect::<Vec<_>>()
        };
        assert_eq!(by(true), [Paired, TwoNodes, TwoNodes, Lines, TwoNodes]);
        assert_eq!(by(false), [Paired, Paired, TwoNodes, Lines, TwoNodes]);
        assert_eq!(default_update(4, true, true, true, false), TwoNodes);
        assert_eq!(default_update(4, true, true, false, false), Blocked);
        // N = 1 prefers the paired kernel; without it, the node kernel (not two nodes)
        assert_eq!(default_update(1, true, false, true, true), Node);
        assert_eq!(default_update(4, true, false, false, false), Node);
    }
}
