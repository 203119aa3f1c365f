// The update whose warp-wide operator loads read whole 128-byte lines (dg_update_nc).

// The update of `dg_update_nb` (two nodes per work-item, the same staging) with the nodes
// dealt out so that each warp-wide operator load reads one aligned 128-byte line
// (`dg_update_nc`, built with -D KBC tets per work-group, -D NL work-items per tet, -D NCB
// work-items for phase B, -D NC_UNROLL_J). In `dg_update_nb` at N = 4 a warp's operator load
// names 18 consecutive values of a row (ceil(35 / 2) work-items per tet), two 128-byte lines
// in f64, and those loads bind its sums (results/h200/dg_kernels/tuning/11_pipelined: its
// sums alone take 4.6 of its 5.5 ms). Here NL work-items per tet (16: one line of f64) own
// the nodes t0 + s NL for s < NBA = floor(NP / NL) (phase A), over operators whose rows are
// padded to NPR, a multiple of NL values (dTp[(r NP + j) NPR + i], liftTp[m NPR + i]; the pad
// is never read). The NR = NP - NBA NL nodes left (3 at N = 4) are summed one per work-item
// (phase B): with NCB > 0 by NCB work-items of their own, the first of the work-group (whole
// warps, so no warp holds both phases), at once with phase A; with NCB = 0 by the first
// KBC NR work-items after their phase A (1.14x slower at N = 4 on the H200). Each node's sums
// run in the order of `dg_update_blk`, so the result has the node kernel's bits. Local
// buffer: KBC * (6 * (2 NP + NF) + 11) values (KBC * (6 * (NP + NF) + 11) with NC_NORES,
// where the residuals are read from global memory: 1.3x slower), as in `dg_update_nb`.
#ifdef KBC
#ifndef NL
#define NL 16
#endif
#define NBA (NP / NL)
#define NR (NP - NBA * NL)
#define NPR (((NP + NL - 1) / NL) * NL)
#ifndef NCB
#define NCB 0
#endif
#define WGA (KBC * NL)
#define WGC (WGA + NCB)
#define QPERC ((6 * NP * KBC + WGC - 1) / WGC)
#define FPERC ((6 * NF * KBC + WGC - 1) / WGC)
#define GPERC ((11 * KBC + WGC - 1) / WGC)
__kernel __attribute__((reqd_work_group_size(WGC, 1, 1))) void dg_update_nc(
    const uint K, __global const REAL* restrict q, __global const REAL* restrict flux,
    __global const REAL* restrict geo, __global const REAL* restrict dTp,
    __global const REAL* restrict liftTp, __global const REAL* restrict inv_eps,
    __global const REAL* restrict inv_mu, const uint src_tet, const REAL sx, const REAL sy,
    const REAL sz, const REAL a, const REAL b, const REAL dt, __global REAL* restrict res,
    __global REAL* restrict q_out, __local REAL2* s2) {
    const uint lid = get_local_id(0);
    const uint k0 = get_group_id(0) * KBC;
    const uint nk = min((uint)KBC, K - k0);
    __local REAL* sq = (__local REAL*)s2;
    __local REAL* sf = sq + KBC * 6 * NP;
    __local REAL* sr = sf + KBC * 6 * NF;
#ifdef NC_NORES
    __local REAL* sg = sr;
#else
    __local REAL* sg = sr + KBC * 6 * NP;
#endif
    // the staging of dg_update_nb
    {
        __global const REAL* qg = q + (size_t)k0 * 6 * NP;
        __global const REAL* rg = res + (size_t)k0 * 6 * NP;
        __global const REAL* fg = flux + (size_t)k0 * 6 * NF;
        REAL vq[QPERC], vr[QPERC], vf[FPERC], vg[GPERC];
        #pragma unroll
        for (int r = 0; r < QPERC; r++) {
            const uint t = lid + r * WGC;
            vq[r] = t < nk * 6 * NP ? qg[t] : 0;
#ifndef NC_NORES
            vr[r] = t < nk * 6 * NP ? rg[t] : 0;
#endif
        }
        #pragma unroll
        for (int r = 0; r < FPERC; r++) {
            const uint t = lid + r * WGC;
            vf[r] = t < nk * 6 * NF ? fg[t] : 0;
        }
        #pragma unroll
        for (int r = 0; r < GPERC; r++) {
            const uint t = lid + r * WGC;
            vg[r] = t < 9 * nk ? geo[9 * (size_t)k0 + t]
                  : t < 10 * nk ? inv_eps[k0 + t - 9 * nk]
                  : t < 11 * nk ? inv_mu[k0 + t - 10 * nk] : 0;
        }
        #pragma unroll
        for (int r = 0; r < QPERC; r++) {
            const uint t = lid + r * WGC;
#ifdef NC_NORES
            if (t < nk * 6 * NP) sq[t] = vq[r];
#else
            if (t < nk * 6 * NP) { sq[t] = vq[r]; sr[t] = vr[r]; }
#endif
        }
        #pragma unroll
        for (int r = 0; r < FPERC; r++)
            if (lid + r * WGC < nk * 6 * NF) sf[lid + r * WGC] = vf[r];
        #pragma unroll
        for (int r = 0; r < GPERC; r++)
            if (lid + r * WGC < 11 * nk) sg[lid + r * WGC] = vg[r];
    }
    // a global fence too: the staging read residuals that other work-items of the group
    // write after the barrier
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
#if NBA > 0
    // phase A: NBA nodes per work-item
    {
        // the work-items of phase B, if any of their own, come first
        const uint la = lid - NCB;
        const uint e = la / NL, t0 = la - e * NL;
        if (la < WGA && e < nk) {
            const uint k = k0 + e;
            __local const REAL* qk = sq + e * 6 * NP;
            REAL d[NBA][3][6];
            #pragma unroll
            for (int s = 0; s < NBA; s++)
                #pragma unroll
                for (int c = 0; c < 6; c++) { d[s][0][c] = 0; d[s][1][c] = 0; d[s][2][c] = 0; }
            // unrolled 5 times by default (the host's -D NC_UNROLL_J=5): 1.02-1.03x faster at
            // N = 4 on the H200
#if NC_UNROLL_J == 5
            #pragma unroll 5
#elif NC_UNROLL_J == 7
            #pragma unroll 7
#endif
            for (int j = 0; j < NP; j++) {
                REAL w[NBA][3];
                #pragma unroll
                for (int s = 0; s < NBA; s++) {
                    w[s][0] = dTp[j * NPR + t0 + s * NL];
                    w[s][1] = dTp[(NP + j) * NPR + t0 + s * NL];
                    w[s][2] = dTp[(2 * NP + j) * NPR + t0 + s * NL];
                }
                #pragma unroll
                for (int c = 0; c < 6; c++) {
                    const REAL u = qk[c * NP + j];
                    #pragma unroll
                    for (int s = 0; s < NBA; s++) {
                        d[s][0][c] += w[s][0] * u;
                        d[s][1][c] += w[s][1] * u;
                        d[s][2][c] += w[s][2] * u;
                    }
                }
            }
            __local const REAL* G = sg + 9 * e;
            REAL cu[NBA][6];
            #pragma unroll
            for (int s = 0; s < NBA; s++) {
                REAL p[3][6];
                #pragma unroll
                for (int x = 0; x < 3; x++)
                    #pragma unroll
                    for (int c = 0; c < 6; c++)
                        p[x][c] = G[3 * x] * d[s][0][c] + G[3 * x + 1] * d[s][1][c]
                                + G[3 * x + 2] * d[s][2][c];
                cu[s][0] = p[1][5] - p[2][4];
                cu[s][1] = p[2][3] - p[0][5];
                cu[s][2] = p[0][4] - p[1][3];
                cu[s][3] = -(p[1][2] - p[2][1]);
                cu[s][4] = -(p[2][0] - p[0][2]);
                cu[s][5] = -(p[0][1] - p[1][0]);
            }
            REAL l[NBA][6];
            #pragma unroll
            for (int s = 0; s < NBA; s++)
                #pragma unroll
                for (int c = 0; c < 6; c++) l[s][c] = 0;
            __local const REAL2* fk2 = (__local const REAL2*)(sf + e * 6 * NF);
            for (int m = 0; m < NF; m += 2) {
                REAL w0[NBA], w1[NBA];
                #pragma unroll
                for (int s = 0; s < NBA; s++) {
                    w0[s] = liftTp[m * NPR + t0 + s * NL];
                    w1[s] = liftTp[(m + 1) * NPR + t0 + s * NL];
                }
                #pragma unroll
                for (int c = 0; c < 6; c++) {
                    const REAL2 f = fk2[(c * NF + m) / 2];
                    #pragma unroll
                    for (int s = 0; s < NBA; s++) {
                        l[s][c] += w0[s] * f.x;
                        l[s][c] += w1[s] * f.y;
                    }
                }
            }
            const REAL ie = sg[9 * nk + e], im = sg[10 * nk + e];
#ifndef NC_NORES
            __local const REAL* rk = sr + e * 6 * NP;
#endif
            #pragma unroll
            for (int s = 0; s < NBA; s++) {
                const uint i = t0 + s * NL;
                REAL r[6];
                #pragma unroll
                for (int c = 0; c < 3; c++) {
                    r[c] = ie * (cu[s][c] + l[s][c]);
                    r[3 + c] = im * (cu[s][3 + c] - l[s][3 + c]);
                }
                if (k == src_tet) { r[0] -= sx; r[1] -= sy; r[2] -= sz; }
                #pragma unroll
                for (int c = 0; c < 6; c++) {
                    const size_t o = ((size_t)k * 6 + c) * NP + i;
#ifdef NC_NORES
                    const REAL rs = a * res[o] + dt * r[c];
#else
                    const REAL rs = a * rk[c * NP + i] + dt * r[c];
#endif
                    res[o] = rs;
                    q_out[o] = qk[c * NP + i] + b * rs;
                }
            }
        }
    }
#endif
#if NR > 0 && !defined(NC_DIAG_NOB)
    // phase B: the nodes NBA NL .. NP - 1 of each tet, one per work-item (NR <= NL, so the
    // KBC NR of them fit the work-group): by the first NCB work-items, which have no phase A
    // (NCB a whole number of warps), at once with phase A; with NCB = 0, by the first
    // work-items after their phase A (NC_DIAG_NOB, a tuning diagnostic, leaves them out)
    if ((NCB == 0 || lid < NCB) && lid < nk * NR) {
        const uint e = lid / NR, i = NBA * NL + lid - e * NR;
        const uint k = k0 + e;
        __local const REAL* qk = sq + e * 6 * NP;
        REAL d[3][6];
        #pragma unroll
        for (int c = 0; c < 6; c++) { d[0][c] = 0; d[1][c] = 0; d[2][c] = 0; }
        for (int j = 0; j < NP; j++) {
            const REAL wr = dTp[j * NPR + i], ws = dTp[(NP + j) * NPR + i],
                       wt = dTp[(2 * NP + j) * NPR + i];
            #pragma unroll
            for (int c = 0; c < 6; c++) {
                const REAL u = qk[c * NP + j];
                d[0][c] += wr * u;
                d[1][c] += ws * u;
                d[2][c] += wt * u;
            }
        }
        __local const REAL* G = sg + 9 * e;
        REAL p[3][6];
        #pragma unroll
        for (int x = 0; x < 3; x++)
            #pragma unroll
            for (int c = 0; c < 6; c++)
                p[x][c] = G[3 * x] * d[0][c] + G[3 * x + 1] * d[1][c] + G[3 * x + 2] * d[2][c];
        REAL l[6];
        #pragma unroll
        for (int c = 0; c < 6; c++) l[c] = 0;
        __local const REAL2* fk2 = (__local const REAL2*)(sf + e * 6 * NF);
        for (int m = 0; m < NF; m += 2) {
            const REAL w0 = liftTp[m * NPR + i], w1 = liftTp[(m + 1) * NPR + i];
            #pragma unroll
            for (int c = 0; c < 6; c++) {
                const REAL2 f = fk2[(c * NF + m) / 2];
                l[c] += w0 * f.x;
                l[c] += w1 * f.y;
            }
        }
        const REAL ie = sg[9 * nk + e], im = sg[10 * nk + e];
        REAL r[6];
        r[0] = ie * (p[1][5] - p[2][4] + l[0]);
        r[1] = ie * (p[2][3] - p[0][5] + l[1]);
        r[2] = ie * (p[0][4] - p[1][3] + l[2]);
        r[3] = im * (-(p[1][2] - p[2][1]) - l[3]);
        r[4] = im * (-(p[2][0] - p[0][2]) - l[4]);
        r[5] = im * (-(p[0][1] - p[1][0]) - l[5]);
        if (k == src_tet) { r[0] -= sx; r[1] -= sy; r[2] -= sz; }
#ifndef NC_NORES
        __local const REAL* rk = sr + e * 6 * NP;
#endif
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const size_t o = ((size_t)k * 6 + c) * NP + i;
#ifdef NC_NORES
            const REAL rs = a * res[o] + dt * r[c];
#else
            const REAL rs = a * rk[c * NP + i] + dt * r[c];
#endif
            res[o] = rs;
            q_out[o] = qk[c * NP + i] + b * rs;
        }
    }
#endif
}
#endif
