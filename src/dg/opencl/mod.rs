//! The DG time loop on an OpenCL device: `cl/dg/*.cl` (flux, update with volume + lift +
//! LSERK stage, probes), built with `-D REAL`, `-D NP`, `-D NFP`. Uses the safe wrappers of
//! [`crate::ocl`] (buffers, builds, launches), so it holds no `unsafe` itself.

use super::cpu::{DgProbe, DgSource};
use super::{DgOperator, RK4A, RK4B, RK4C};
use crate::backend::Stepper;
use crate::backend::opencl::{
    Arg, ClDevice, DeviceSampling, LOCAL, SAMPLE_CHUNK, advance_sampled, launch,
};
use crate::{Error, Real, Result};
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use std::sync::Arc;

pub const SOURCE: &str = concat!(
    include_str!("../../cl/dg/common.cl"),
    include_str!("../../cl/dg/node.cl"),
    include_str!("../../cl/dg/blocked.cl"),
    include_str!("../../cl/dg/two_nodes.cl"),
    include_str!("../../cl/dg/lines.cl"),
);
/// The name of the DG program in build logs and messages.
pub const PROGRAM: &str = "cl/dg/*.cl";

/// The form of the DG update kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
const DG_STAGE_BYTES: usize = 32 << 10;

/// Nodes per work-item of `dg_update_nb`.
const DG_NODES_PER_ITEM: usize = 2;

/// [`DG_NODES_PER_ITEM`], or `DGATD_DG_NODES_PER_ITEM` (for tuning).
fn nodes_per_item() -> usize {
    env_usize("DGATD_DG_NODES_PER_ITEM", DG_NODES_PER_ITEM).max(1)
}

/// [`DG_STAGE_BYTES`], or `DGATD_DG_STAGE_BYTES` (for tuning).
fn stage_bytes() -> usize {
    env_usize("DGATD_DG_STAGE_BYTES", DG_STAGE_BYTES)
}
/// Work-items per tet of `dg_update_nc` (`DGATD_DG_NC_LANES` for tuning): 16 values of f64
/// fill one 128-byte line.
const DG_NC_LANES: usize = 16;
/// Tets per work-group of `dg_update_nc` (`DGATD_DG_NC_TETS` for tuning), where they fit:
/// 6 x 16 work-items, three whole warps, beside a warp for the nodes left over
/// (results/h200/dg_kernels/tuning/11_pipelined).
const DG_NC_TETS: usize = 6;
/// The width of the work-item blocks `dg_update_nc` keeps apart: a warp on NVIDIA (OpenCL
/// has no portable query for it before a kernel is built; on a wider SIMD device the
/// phases share a wavefront, which is correct, only slower).
const DG_NC_WARP: usize = 32;
/// Unroll factor of `dg_update_nc`'s volume sums (5 or 7; 0 none; `DGATD_DG_NC_UNROLL`).
const DG_NC_UNROLL: usize = 5;

/// A tuning override from the environment variable `name`, else `default`.
fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(default)
}

/// Work-items per work-group `dg_update_blk` aims at.
const DG_GROUP: usize = 256;

/// The default update kernel at order `n`: the fastest measured on the H200 at 1M tets
/// (`results/h200/dg_kernels/tuning/9_paired`, `11_pipelined`): at N = 4 the whole-line
/// operator loads; two nodes per work-item at N = 3 and from N = 5 on (not measured there),
/// and at N = 2 in f64; the paired loads at N = 1, and at N = 2 in f32; the blocked kernel
/// where those do not fit (`pair` / `nb` / `nc`: whether their work-groups fit), else the
/// node kernel.
fn default_update(n: usize, f64: bool, pair: bool, nb: bool, nc: bool) -> DgUpdate {
    let two_nodes = n >= 3 || (n == 2 && f64);
    match (two_nodes, pair, nb) {
        _ if n == 4 && nc => DgUpdate::Lines,
        (true, _, true) => DgUpdate::TwoNodes,
        (_, true, _) if n <= 2 => DgUpdate::Paired,
        (_, true, _) => DgUpdate::Blocked,
        _ => DgUpdate::Node,
    }
}

/// Tets per work-group a blocked update aims at when its tets take `threads` work-items
/// each: [`DG_GROUP`] work-items, or `DGATD_DG_TETS_PER_GROUP` (for tuning).
fn group_want(threads: usize) -> usize {
    env_usize("DGATD_DG_TETS_PER_GROUP", (DG_GROUP / threads).max(1))
}

/// Tets per work-group of a blocked update on `dev` whose tets take `threads` work-items
/// and `per_tet` bytes of local memory each, beside `fixed` bytes per work-group: as many as
/// [`group_want`] asks within `cap` bytes of local memory and the device's limits; 0 when not
/// even one tet fits (then [`DgUpdate::Node`]).
fn tets_per_group(
    dev: &ClDevice,
    threads: usize,
    per_tet: usize,
    fixed: usize,
    cap: usize,
) -> usize {
    let local = (dev.info.local_mem as usize).min(cap).saturating_sub(fixed);
    let fit = (local / per_tet).min(dev.info.max_work_group / threads);
    group_want(threads).min(fit)
}

/// The DG stepper on an OpenCL device.
pub struct DgClStepper<T: Real> {
    dev: Arc<ClDevice>,
    pub op: Arc<DgOperator>,
    dt: f64,
    source: Option<DgSource>,
    n_probes: usize,
    q: [Buffer<T>; 2],
    cur: usize,
    res: Buffer<T>,
    flux: Buffer<T>,
    vmap_p: Buffer<u32>,
    fmask: Buffer<u32>,
    normal: Buffer<T>,
    fscale: Buffer<T>,
    z: Buffer<T>,
    geo: Buffer<T>,
    d: [Buffer<T>; 3],
    lift: Buffer<T>,
    inv_eps: Buffer<T>,
    inv_mu: Buffer<T>,
    probe_tet: Buffer<u32>,
    probe_w: Buffer<T>,
    samples: Buffer<T>,
    k_flux: Kernel,
    k_update: Kernel,
    /// `dg_update_blk` and its tets per work-group (None where it does not fit).
    k_blk: Option<(Kernel, usize)>,
    /// `dg_update_pair` (the same tets per work-group as `k_blk`).
    k_pair: Option<Kernel>,
    /// `dg_update_nb` and its tets per work-group; its nodes per work-item.
    k_nb: Option<(Kernel, usize)>,
    nbm: usize,
    /// `dg_update_nc` and its tets per work-group; its work-items per tet; `Dr`, `Ds`, `Dt`
    /// and `LIFT` transposed with rows padded to a multiple of them.
    k_nc: Option<(Kernel, usize)>,
    nc_lanes: usize,
    /// Work-items of `dg_update_nc` of its phase B only (0: its first work-items do it
    /// after their phase A); whether its residuals are read from global memory, not staged.
    nc_b: usize,
    nc_nores: bool,
    d_tp: Buffer<T>,
    lift_tp: Buffer<T>,
    /// `Dr`, `Ds`, `Dt` and `LIFT` transposed in pairs of columns, for `dg_update_pair`.
    d_t2: Buffer<T>,
    lift_t2: Buffer<T>,
    /// `Dr`, `Ds`, `Dt` transposed, one after the other, and `LIFT` transposed.
    d_t: Buffer<T>,
    lift_t: Buffer<T>,
    update: DgUpdate,
    k_probe: Kernel,
    _program: Program,
}

impl<T: Real> DgClStepper<T> {
    pub fn new(
        dev: Arc<ClDevice>,
        op: Arc<DgOperator>,
        dt: f64,
        source: Option<DgSource>,
        probes: Vec<DgProbe>,
    ) -> Result<Self> {
        if T::NAME == "f64" && !dev.info.fp64 {
            return Err(Error::config(
                "precision",
                "f64",
                format!(
                    "device {} has no cl_khr_fp64; use --precision f32",
                    dev.info.name
                ),
            ));
        }
        let (k, np, nfp) = (op.k, op.re.np, op.re.nfp);
        let real = std::mem::size_of::<T>();
        let need = (k * 6 * np * 4 + k * 6 * 4 * nfp + 3 * np * np + 4 * np * nfp + 20 * k) * real
            + k * 4 * nfp * 4;
        if need as f64 > 0.92 * dev.info.global_mem as f64 {
            return Err(Error::DeviceMemory(format!(
                "DG order {} needs about {} on the device ({k} tets), but {} has {}",
                op.re.n,
                indicatif::HumanBytes(need as u64),
                dev.info.name,
                indicatif::HumanBytes(dev.info.global_mem)
            )));
        }
        // `dg_update_blk` and `dg_update_pair`: a work-item per node, fields, fluxes,
        // residuals and the 11 scalars of each tet staged (the pair kernel's field rows padded
        // to an even length)
        let per_tet = (6 * (2 * np + np % 2 + 4 * nfp) + 11) * real;
        let kb = tets_per_group(&dev, np, per_tet, 0, stage_bytes().max(per_tet));
        // `dg_update_nb`: the same staging, ceil(np / nbm) work-items per tet
        let nbm = nodes_per_item();
        let kbn = tets_per_group(
            &dev,
            np.div_ceil(nbm),
            per_tet,
            0,
            stage_bytes().max(per_tet),
        );
        // `dg_update_nc`: the staging of `dg_update_nb`, nl work-items per tet
        // and, where nodes are left over, whole warps of work-items of their own for those
        // (tuning: DGATD_DG_NC_BWARP=0 has phase A's work-items sum them afterwards;
        // DGATD_DG_NC_NORES=1 reads the residuals from global memory)
        let nl = env_usize("DGATD_DG_NC_LANES", DG_NC_LANES).max(1);
        let nc_nores = env_usize("DGATD_DG_NC_NORES", 0) > 0;
        let nc_bwarp = env_usize("DGATD_DG_NC_BWARP", 1) > 0;
        let nc_unroll = env_usize("DGATD_DG_NC_UNROLL", DG_NC_UNROLL);
        let nr = np % nl;
        let per_nc = (6 * (np * if nc_nores { 1 } else { 2 } + 4 * nfp) + 11) * real;
        let nc_b = |kb: usize| {
            if nc_bwarp && nr > 0 {
                (kb * nr).div_ceil(DG_NC_WARP) * DG_NC_WARP
            } else {
                0
            }
        };
        let kbc = {
            let local = dev.info.local_mem as usize;
            let want = env_usize("DGATD_DG_NC_TETS", DG_NC_TETS);
            (1..=want)
                .rev()
                .find(|&kb| kb * per_nc <= local && kb * nl + nc_b(kb) <= dev.info.max_work_group)
                .unwrap_or(0)
        };
        let ncb = nc_b(kbc);
        let npr = np.div_ceil(nl) * nl;
        let opts = format!(
            "-D REAL={} {} -D NP={np} -D NFP={nfp} -D KB={} -D KBN={} -D NBM={nbm} \
             -D KBC={} -D NL={nl} -D NCB={ncb}{} -D NC_UNROLL_J={nc_unroll}",
            if T::NAME == "f64" { "double" } else { "float" },
            if T::NAME == "f64" {
                "-D REAL_IS_DOUBLE=1"
            } else {
                ""
            },
            kb.max(1),
            kbn.max(1),
            kbc.max(1),
            if nc_nores { " -D NC_NORES=1" } else { "" },
        );
        let program = dev.build_source(SOURCE, PROGRAM, &opts)?;
        let kernel = |name: &str| {
            Kernel::create(&program, name).map_err(|e| Error::OpenCl {
                what: format!("kernel {name}"),
                msg: e.to_string(),
            })
        };
        let n = 6 * k * np;
        let mut q0 = dev.alloc::<T>(n, "DG field")?;
        dev.fill_zero(&mut q0, n)?;
        let mut q1 = dev.alloc::<T>(n, "DG field")?;
        dev.fill_zero(&mut q1, n)?;
        let mut res = dev.alloc::<T>(n, "DG residual")?;
        dev.fill_zero(&mut res, n)?;
        let flux = dev.alloc::<T>(6 * k * 4 * nfp, "DG fluxes")?;
        let row_major = |m: &nalgebra::DMatrix<f64>| -> Vec<T> {
            (0..m.nrows())
                .flat_map(|i| (0..m.ncols()).map(move |j| (i, j)))
                .map(|(i, j)| T::of(m[(i, j)]))
                .collect()
        };
        let col_major = |m: &nalgebra::DMatrix<f64>| -> Vec<T> {
            m.as_slice().iter().map(|&x| T::of(x)).collect()
        };
        let d_t: Vec<T> = [&op.re.dr, &op.re.ds, &op.re.dt]
            .into_iter()
            .flat_map(col_major)
            .collect();
        // pairs of columns: [(jh * rows + r) * nrows + i] = (M_r[i][2 jh], M_r[i][2 jh + 1]),
        // zero past the last column
        let paired = |ms: &[&nalgebra::DMatrix<f64>]| -> Vec<T> {
            let (nr, nc) = (ms[0].nrows(), ms[0].ncols());
            let at = |m: &nalgebra::DMatrix<f64>, i: usize, j: usize| {
                T::of(if j < nc { m[(i, j)] } else { 0.0 })
            };
            (0..nc.div_ceil(2))
                .flat_map(|jh| ms.iter().map(move |m| (jh, m)))
                .flat_map(|(jh, m)| {
                    (0..nr).flat_map(move |i| [at(m, i, 2 * jh), at(m, i, 2 * jh + 1)])
                })
                .collect()
        };
        let d_t2 = paired(&[&op.re.dr, &op.re.ds, &op.re.dt]);
        // transposed, rows padded to npr values: [row * npr + i] = M[i][row], zero past np
        let padded = |ms: &[&nalgebra::DMatrix<f64>]| -> Vec<T> {
            ms.iter()
                .flat_map(|m| {
                    (0..m.ncols()).flat_map(move |j| {
                        (0..npr).map(move |i| T::of(if i < m.nrows() { m[(i, j)] } else { 0.0 }))
                    })
                })
                .collect()
        };
        let d_tp = padded(&[&op.re.dr, &op.re.ds, &op.re.dt]);
        let lift_tp = padded(&[&op.re.lift]);
        let lift_t2 = paired(&[&op.re.lift]);
        let fmask: Vec<u32> = op.re.fmask.iter().flatten().map(|&i| i as u32).collect();
        let geo: Vec<T> = op.geo.iter().flatten().map(|&x| T::of(x)).collect();
        let normal: Vec<T> = op.normal.iter().flatten().map(|&x| T::of(x)).collect();
        let fscale: Vec<T> = op.fscale.iter().map(|&x| T::of(x)).collect();
        let z: Vec<T> = (0..k)
            .map(|t| T::of((op.mu[t] / op.eps[t]).sqrt()))
            .collect();
        let ie: Vec<T> = op.eps.iter().map(|&x| T::of(1.0 / x)).collect();
        let im: Vec<T> = op.mu.iter().map(|&x| T::of(1.0 / x)).collect();
        let ptet: Vec<u32> = probes.iter().map(|p| p.tet as u32).collect();
        let pw: Vec<T> = probes
            .iter()
            .flat_map(|p| p.w.iter().map(|&x| T::of(x)))
            .collect();
        Ok(DgClStepper {
            q: [q0, q1],
            cur: 0,
            res,
            flux,
            vmap_p: dev.upload(&op.vmap_p, "DG connectivity")?,
            fmask: dev.upload(&fmask, "DG face masks")?,
            normal: dev.upload(&normal, "DG normals")?,
            fscale: dev.upload(&fscale, "DG face scales")?,
            z: dev.upload(&z, "DG impedances")?,
            geo: dev.upload(&geo, "DG geometric factors")?,
            d: [
                dev.upload(&row_major(&op.re.dr), "Dr")?,
                dev.upload(&row_major(&op.re.ds), "Ds")?,
                dev.upload(&row_major(&op.re.dt), "Dt")?,
            ],
            lift: dev.upload(&row_major(&op.re.lift), "LIFT")?,
            inv_eps: dev.upload(&ie, "1/eps")?,
            inv_mu: dev.upload(&im, "1/mu")?,
            probe_tet: dev.upload(&ptet, "probe tets")?,
            probe_w: dev.upload(&pw, "probe weights")?,
            samples: dev.alloc::<T>(SAMPLE_CHUNK * probes.len().max(1) * 3, "probe samples")?,
            n_probes: probes.len(),
            k_flux: kernel("dg_flux")?,
            k_update: kernel("dg_update")?,
            k_blk: if kb > 0 {
                Some((kernel("dg_update_blk")?, kb))
            } else {
                None
            },
            k_pair: if kb > 0 {
                Some(kernel("dg_update_pair")?)
            } else {
                None
            },
            nbm,
            k_nb: if kbn > 0 {
                Some((kernel("dg_update_nb")?, kbn))
            } else {
                None
            },
            k_nc: if kbc > 0 {
                Some((kernel("dg_update_nc")?, kbc))
            } else {
                None
            },
            nc_lanes: nl,
            nc_b: ncb,
            nc_nores,
            d_tp: dev.upload(&d_tp, "Dr, Ds, Dt transposed, padded rows")?,
            lift_tp: dev.upload(&lift_tp, "LIFT transposed, padded rows")?,
            d_t2: dev.upload(&d_t2, "Dr, Ds, Dt in pairs of columns")?,
            lift_t2: dev.upload(&lift_t2, "LIFT in pairs of columns")?,
            d_t: dev.upload(&d_t, "Dr, Ds, Dt transposed")?,
            lift_t: dev.upload(&col_major(&op.re.lift), "LIFT transposed")?,
            update: default_update(op.re.n, T::NAME == "f64", kb > 0, kbn > 0, kbc > 0),
            k_probe: kernel("dg_probe")?,
            _program: program,
            dev,
            op,
            dt,
            source,
        })
    }

    /// One LSERK stage: flux, then update into the other field buffer.
    pub fn stage(&mut self, s: usize, t: f64) -> Result<opencl3::event::Event> {
        Ok(self.stage_events(s, t)?.1)
    }

    /// [`Self::stage`] returning the events of both kernels (flux, update).
    pub fn stage_events(
        &mut self,
        s: usize,
        t: f64,
    ) -> Result<(opencl3::event::Event, opencl3::event::Event)> {
        let src = match &self.source {
            Some(src) => {
                let w = src.wave.at(t + RK4C[s] * self.dt) / self.op.eps[src.tet];
                (
                    src.tet as u32,
                    [w * src.dir[0], w * src.dir[1], w * src.dir[2]],
                )
            }
            None => (u32::MAX, [0.0; 3]),
        };
        self.launch_stage(RK4A[s], RK4B[s], self.dt, src)
    }

    /// Flux and update kernels with stage coefficients `a`, `b`, step `dt` and the source
    /// term `(tet, J/ε)`: `res = a res + dt (L q − J/ε)`, `q_out = q + b res`.
    fn launch_stage(
        &mut self,
        a: f64,
        b: f64,
        dt: f64,
        (src_tet, sv): (u32, [f64; 3]),
    ) -> Result<(opencl3::event::Event, opencl3::event::Event)> {
        let (k, np, nfp) = (self.op.k, self.op.re.np, self.op.re.nfp);
        let (qa, qb) = if self.cur == 0 {
            let (a, b) = self.q.split_at_mut(1);
            (&a[0], &b[0])
        } else {
            let (a, b) = self.q.split_at_mut(1);
            (&b[0], &a[0])
        };
        let ev_flux = launch(
            &self.dev,
            &self.k_flux,
            k * 4 * nfp,
            LOCAL,
            &[
                Arg::U32(k as u32),
                Arg::Buf(qa),
                Arg::BufU32(&self.vmap_p),
                Arg::BufU32(&self.fmask),
                Arg::Buf(&self.normal),
                Arg::Buf(&self.fscale),
                Arg::Buf(&self.z),
                Arg::Real(T::of(self.op.alpha)),
                Arg::Buf(&self.flux),
            ],
        )?;
        let real = std::mem::size_of::<T>();
        let nf = 4 * nfp;
        // the kernel, its work-items and work-group size, its operator buffers and the
        // bytes of its local buffers (see cl/dg/*.cl); set_update admits only a kernel built
        let pair = self.k_pair.as_ref();
        let (kern, global, group, ops, scratch) = match (self.update, &self.k_blk) {
            (DgUpdate::TwoNodes, _) if self.k_nb.is_some() => {
                let (kern, kb) = self.k_nb.as_ref().unwrap();
                let tpt = np.div_ceil(self.nbm);
                (
                    kern,
                    k.div_ceil(*kb) * kb * tpt,
                    kb * tpt,
                    vec![&self.d_t, &self.lift_t],
                    vec![kb * (6 * (2 * np + nf) + 11) * real],
                )
            }
            (DgUpdate::Lines, _) if self.k_nc.is_some() => {
                let (kern, kb) = self.k_nc.as_ref().unwrap();
                let group = kb * self.nc_lanes + self.nc_b;
                let rows = if self.nc_nores { np } else { 2 * np };
                (
                    kern,
                    k.div_ceil(*kb) * group,
                    group,
                    vec![&self.d_tp, &self.lift_tp],
                    vec![kb * (6 * (rows + nf) + 11) * real],
                )
            }
            (DgUpdate::Paired, Some((_, kb))) if pair.is_some() => (
                pair.unwrap(),
                k.div_ceil(*kb) * kb * np,
                kb * np,
                vec![&self.d_t2, &self.lift_t2],
                vec![kb * (6 * (2 * np + np % 2 + nf) + 11) * real],
            ),
            (DgUpdate::Blocked, Some((kern, kb))) => (
                kern,
                k.div_ceil(*kb) * kb * np,
                kb * np,
                vec![&self.d_t, &self.lift_t],
                vec![kb * (6 * (2 * np + nf) + 11) * real],
            ),
            _ => (
                &self.k_update,
                k * np,
                LOCAL,
                vec![&self.d[0], &self.d[1], &self.d[2], &self.lift],
                vec![],
            ),
        };
        let args: Vec<Arg<'_, T>> = [
            Arg::U32(k as u32),
            Arg::Buf(qa),
            Arg::Buf(&self.flux),
            Arg::Buf(&self.geo),
        ]
        .into_iter()
        .chain(ops.into_iter().map(Arg::Buf))
        .chain([
            Arg::Buf(&self.inv_eps),
            Arg::Buf(&self.inv_mu),
            Arg::U32(src_tet),
            Arg::Real(T::of(sv[0])),
            Arg::Real(T::of(sv[1])),
            Arg::Real(T::of(sv[2])),
            Arg::Real(T::of(a)),
            Arg::Real(T::of(b)),
            Arg::Real(T::of(dt)),
            Arg::Buf(&self.res),
            Arg::Buf(qb),
        ])
        .chain(scratch.into_iter().map(Arg::Local))
        .collect();
        let ev = launch(&self.dev, kern, global, group, &args)?;
        self.cur ^= 1;
        Ok((ev_flux, ev))
    }

    /// The update kernel launched.
    pub fn update(&self) -> DgUpdate {
        self.update
    }

    /// Chooses the update kernel; a blocked one is refused where it does not fit the device
    /// ([`Self::tets_per_group`] is 0).
    pub fn set_update(&mut self, u: DgUpdate) -> Result<()> {
        let fits = match u {
            DgUpdate::Node => true,
            DgUpdate::Blocked => self.k_blk.is_some(),
            DgUpdate::Paired => self.k_pair.is_some(),
            DgUpdate::TwoNodes => self.k_nb.is_some(),
            DgUpdate::Lines => self.k_nc.is_some(),
        };
        if !fits {
            return Err(Error::config(
                "dg update",
                u.name(),
                format!(
                    "one tet of order {} does not fit a work-group of {}",
                    self.op.re.n, self.dev.info.name
                ),
            ));
        }
        self.update = u;
        Ok(())
    }

    /// Tets per work-group of an update kernel (0 where it does not fit, and for
    /// [`DgUpdate::Node`], which does not group tets).
    pub fn tets_per_group(&self, u: DgUpdate) -> usize {
        match u {
            DgUpdate::Node => 0,
            DgUpdate::Blocked => self.k_blk.as_ref().map(|b| b.1).unwrap_or(0),
            DgUpdate::TwoNodes => self.k_nb.as_ref().map(|b| b.1).unwrap_or(0),
            DgUpdate::Lines => self.k_nc.as_ref().map(|b| b.1).unwrap_or(0),
            DgUpdate::Paired => match self.k_pair {
                Some(_) => self.k_blk.as_ref().map(|b| b.1).unwrap_or(0),
                None => 0,
            },
        }
    }

    /// Sets the time step (after [`Self::spectral_radius`]).
    pub fn set_time_step(&mut self, dt: f64) {
        self.dt = dt;
    }

    /// `L x` on the device: a stage with `a = 0`, `b = 0`, `Δt = 1` leaves `L x` in the
    /// residual buffer and the field unchanged.
    fn apply(&mut self, x: &[f64]) -> Result<Vec<f64>> {
        let xt: Vec<T> = x.iter().map(|&v| T::of(v)).collect();
        let cur = self.cur;
        self.dev.write(&mut self.q[cur], &xt, "DG field")?;
        self.launch_stage(0.0, 0.0, 1.0, (u32::MAX, [0.0; 3]))?;
        let y = self.dev.read(&self.res, x.len(), "DG residual")?;
        Ok(y.iter().map(|v| v.f64()).collect())
    }

    /// Spectral radius of the DG operator on the device: the power iteration on `L²` of
    /// [`super::cpu::spectral_radius`] (same seed and iterations), each product of `L` by the
    /// device kernels, the normalisation on the host. Leaves the field and residual zero.
    pub fn spectral_radius(&mut self, iters: usize, seed: u64) -> Result<f64> {
        let n = self.op.n_dofs();
        let mut rng = crate::util::Rng::new(seed);
        let mut x: Vec<f64> = (0..n).map(|_| rng.sym()).collect();
        let mut est = 0.0;
        for _ in 0..iters {
            let nx = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            x.iter_mut().for_each(|v| *v /= nx);
            let y = self.apply(&x)?;
            x = self.apply(&y)?;
            est = x.iter().map(|v| v * v).sum::<f64>().sqrt().sqrt();
        }
        self.set_state(&vec![0.0; n], &[])?;
        Ok(est)
    }

    /// One whole step from time `t`.
    pub fn step(&mut self, t: f64) -> Result<()> {
        for s in 0..5 {
            self.stage(s, t)?;
        }
        Ok(())
    }

    pub fn device(&self) -> &Arc<ClDevice> {
        &self.dev
    }
}

impl<T: Real> DeviceSampling<T> for DgClStepper<T> {
    fn device(&self) -> &ClDevice {
        &self.dev
    }
    fn n_probes(&self) -> usize {
        self.n_probes
    }
    fn sample_buffer(&self) -> &Buffer<T> {
        &self.samples
    }
    fn step_and_sample(&mut self, k: usize, j: usize) -> Result<()> {
        self.step(k as f64 * self.dt)?;
        if self.n_probes > 0 {
            launch(
                &self.dev,
                &self.k_probe,
                3 * self.n_probes,
                64,
                &[
                    Arg::U32(self.n_probes as u32),
                    Arg::U32(j as u32),
                    Arg::BufU32(&self.probe_tet),
                    Arg::Buf(&self.probe_w),
                    Arg::Buf(&self.q[self.cur]),
                    Arg::Buf(&self.samples),
                ],
            )?;
        }
        Ok(())
    }
}

impl<T: Real> Stepper for DgClStepper<T> {
    fn name(&self) -> String {
        format!(
            "opencl {} ({}, DG N={})",
            self.dev.info.name,
            T::NAME,
            self.op.re.n
        )
    }
    fn advance(&mut self, first: usize, n: usize, samples: &mut Vec<f64>) -> Result<()> {
        advance_sampled(self, first, n, samples)
    }
    fn energy(&mut self) -> Result<f64> {
        let (q, _) = self.state()?;
        Ok(super::cpu::energy(&self.op, &q))
    }
    fn state(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let q = self
            .dev
            .read(&self.q[self.cur], self.op.n_dofs(), "DG field")?;
        Ok((q.iter().map(|x| x.f64()).collect(), vec![]))
    }
    fn set_state(&mut self, u: &[f64], f: &[f64]) -> Result<()> {
        if u.len() != self.op.n_dofs() || !f.is_empty() {
            return Err(Error::config(
                "state",
                format!("{}+{}", u.len(), f.len()),
                "length does not match the DG discretisation",
            ));
        }
        let qt: Vec<T> = u.iter().map(|&x| T::of(x)).collect();
        let cur = self.cur;
        self.dev.write(&mut self.q[cur], &qt, "DG field")?;
        let n = self.op.n_dofs();
        self.dev.fill_zero(&mut self.res, n)?;
        Ok(())
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
