// The update with two nodes per work-item (dg_update_nb).

// The update of `dg_update_blk` with NBM nodes per work-item (`dg_update_nb`, built with
// -D KBN tets per work-group and -D NBM, 2 by default): work-item t of a tet owns its nodes
// t + s TPT, s < NBM (TPT = ceil(NP / NBM) work-items per tet; the last ones may own fewer).
// Each operator value loaded serves one node as before, but each staged field and flux value
// loaded feeds NBM nodes, and a warp's operator loads name TPT distinct nodes instead of up
// to 32: fewer loads from local memory and the cache per multiply-add, and these loads, not
// the multiply-adds, bound the blocked kernel's sums (results/h200/dg_kernels). The staging
// is that of `dg_update_blk` (fields, fluxes, residuals and scalars, all loads before the
// stores); the fields (pairs of nodes j, for an even NP) and the fluxes (pairs of face points
// m) are read two values at a time through the REAL2 argument. (LIFT read in pairs of
// columns, as in `dg_update_pair`, made it 1.07x slower at N = 3 on the H200.) The sums run per node in the
// order of `dg_update_blk`. Local buffer: KBN * (6 * (2 NP + NF) + 11) values.
#ifdef KBN
#ifndef NBM
#define NBM 2
#endif
#define TPT ((NP + NBM - 1) / NBM)
#define WGN (KBN * TPT)
#define QPERN ((6 * NP + TPT - 1) / TPT)
#define FPERN ((6 * NF + TPT - 1) / TPT)
#define GPERN ((11 + TPT - 1) / TPT)
__kernel __attribute__((reqd_work_group_size(WGN, 1, 1))) void dg_update_nb(
    const uint K, __global const REAL* restrict q, __global const REAL* restrict flux,
    __global const REAL* restrict geo, __global const REAL* restrict dT,
    __global const REAL* restrict liftT, __global const REAL* restrict inv_eps,
    __global const REAL* restrict inv_mu, const uint src_tet, const REAL sx, const REAL sy,
    const REAL sz, const REAL a, const REAL b, const REAL dt, __global REAL* restrict res,
    __global REAL* restrict q_out, __local REAL2* s2) {
    const uint lid = get_local_id(0);
    const uint k0 = get_group_id(0) * KBN;
    const uint nk = min((uint)KBN, K - k0);
    __local REAL* sq = (__local REAL*)s2;
    __local REAL* sf = sq + KBN * 6 * NP;
    __local REAL* sr = sf + KBN * 6 * NF;
    __local REAL* sg = sr + KBN * 6 * NP;
    // the staging written out, not through STAGE_LOADS: a shared form (the same loads and
    // stores, in another order and without the unroll pragmas) made this kernel 1.23x slower
    // at N = 3 in f64 on the H200 (results/h200/dg_kernels/tuning/9_paired/run10_shared_staging)
    {
        __global const REAL* qg = q + (size_t)k0 * 6 * NP;
        __global const REAL* rg = res + (size_t)k0 * 6 * NP;
        __global const REAL* fg = flux + (size_t)k0 * 6 * NF;
        REAL vq[QPERN], vr[QPERN], vf[FPERN], vg[GPERN];
        #pragma unroll
        for (int r = 0; r < QPERN; r++) {
            const uint t = lid + r * WGN;
#ifdef NB_DIAG_NOLOAD
            // tuning diagnostic: no global reads in the staging (the sums alone)
            vq[r] = (REAL)t; vr[r] = (REAL)lid;
#else
            vq[r] = t < nk * 6 * NP ? qg[t] : 0;
            vr[r] = t < nk * 6 * NP ? rg[t] : 0;
#endif
        }
        #pragma unroll
        for (int r = 0; r < FPERN; r++) {
            const uint t = lid + r * WGN;
#ifdef NB_DIAG_NOLOAD
            vf[r] = (REAL)t;
#else
            vf[r] = t < nk * 6 * NF ? fg[t] : 0;
#endif
        }
        #pragma unroll
        for (int r = 0; r < GPERN; r++) {
            const uint t = lid + r * WGN;
            vg[r] = t < 9 * nk ? geo[9 * (size_t)k0 + t]
                  : t < 10 * nk ? inv_eps[k0 + t - 9 * nk]
                  : t < 11 * nk ? inv_mu[k0 + t - 10 * nk] : 0;
        }
        #pragma unroll
        for (int r = 0; r < QPERN; r++) {
            const uint t = lid + r * WGN;
            if (t < nk * 6 * NP) { sq[t] = vq[r]; sr[t] = vr[r]; }
        }
        #pragma unroll
        for (int r = 0; r < FPERN; r++)
            if (lid + r * WGN < nk * 6 * NF) sf[lid + r * WGN] = vf[r];
        #pragma unroll
        for (int r = 0; r < GPERN; r++)
            if (lid + r * WGN < 11 * nk) sg[lid + r * WGN] = vg[r];
    }
    // a global fence too: the staging read residuals that other work-items of the group
    // write after the barrier
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const uint e = lid / TPT, t0 = lid - e * TPT;
    if (e >= nk) return;
    // the nodes' operator columns, clamped for the last work-items (whose values past NP are
    // then unused)
    uint ic[NBM];
    #pragma unroll
    for (int s = 0; s < NBM; s++) ic[s] = min(t0 + s * TPT, (uint)(NP - 1));
    const uint k = k0 + e;
    __local const REAL* qk = sq + e * 6 * NP;
    REAL d[NBM][3][6];
    #pragma unroll
    for (int s = 0; s < NBM; s++)
        #pragma unroll
        for (int c = 0; c < 6; c++) { d[s][0][c] = 0; d[s][1][c] = 0; d[s][2][c] = 0; }
#if NP % 2 == 0
    // pairs of nodes j: one two-wide local load per component
    __local const REAL2* qk2 = s2 + e * 3 * NP;
    for (int j = 0; j < NP; j += 2) {
        REAL w[NBM][3][2];
        #pragma unroll
        for (int s = 0; s < NBM; s++)
            #pragma unroll
            for (int h = 0; h < 2; h++) {
                w[s][0][h] = dT[(j + h) * NP + ic[s]];
                w[s][1][h] = dT[(NP + j + h) * NP + ic[s]];
                w[s][2][h] = dT[(2 * NP + j + h) * NP + ic[s]];
            }
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const REAL2 u = qk2[c * (NP / 2) + j / 2];
            #pragma unroll
            for (int s = 0; s < NBM; s++) {
                d[s][0][c] += w[s][0][0] * u.x;
                d[s][1][c] += w[s][1][0] * u.x;
                d[s][2][c] += w[s][2][0] * u.x;
                d[s][0][c] += w[s][0][1] * u.y;
                d[s][1][c] += w[s][1][1] * u.y;
                d[s][2][c] += w[s][2][1] * u.y;
            }
        }
    }
#else
    // an odd NP (N = 4): one node j at a time. Pairs of nodes over rows padded to an even
    // length made the kernel 1.3x slower at N = 4 on the H200 (143 registers instead of 128;
    // results/h200/dg_kernels/tuning/9_paired/run6_nb_pairs).
#ifdef NB_DIAG_NOSUM
    // tuning diagnostic: no sums (the memory traffic alone)
    for (int j = 0; j < 0; j++) {
#elif NB_UNROLL_J == 5
    #pragma unroll 5
    for (int j = 0; j < NP; j++) {
#elif NB_UNROLL_J == 7
    #pragma unroll 7
    for (int j = 0; j < NP; j++) {
#else
    for (int j = 0; j < NP; j++) {
#endif
        REAL w[NBM][3];
        #pragma unroll
        for (int s = 0; s < NBM; s++) {
            w[s][0] = dT[j * NP + ic[s]];
            w[s][1] = dT[(NP + j) * NP + ic[s]];
            w[s][2] = dT[(2 * NP + j) * NP + ic[s]];
        }
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const REAL u = qk[c * NP + j];
            #pragma unroll
            for (int s = 0; s < NBM; s++) {
                d[s][0][c] += w[s][0] * u;
                d[s][1][c] += w[s][1] * u;
                d[s][2][c] += w[s][2] * u;
            }
        }
    }
#endif
    // the curls of each node (E rows: curl H; H rows: -curl E), in blk's order of operations
    __local const REAL* G = sg + 9 * e;
    REAL cu[NBM][6];
    #pragma unroll
    for (int s = 0; s < NBM; s++) {
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
    REAL l[NBM][6];
    #pragma unroll
    for (int s = 0; s < NBM; s++)
        #pragma unroll
        for (int c = 0; c < 6; c++) l[s][c] = 0;
    __local const REAL2* fk2 = (__local const REAL2*)(sf + e * 6 * NF);
    // pairs of face points m (NF is even), as in dg_update_blk
#ifdef NB_DIAG_NOSUM
    for (int m = 0; m < 0; m += 2) {
#else
    for (int m = 0; m < NF; m += 2) {
#endif
        REAL w0[NBM], w1[NBM];
        #pragma unroll
        for (int s = 0; s < NBM; s++) {
            w0[s] = liftT[m * NP + ic[s]];
            w1[s] = liftT[(m + 1) * NP + ic[s]];
        }
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const REAL2 f = fk2[(c * NF + m) / 2];
            #pragma unroll
            for (int s = 0; s < NBM; s++) {
                l[s][c] += w0[s] * f.x;
                l[s][c] += w1[s] * f.y;
            }
        }
    }
    const REAL ie = sg[9 * nk + e], im = sg[10 * nk + e];
    __local const REAL* rk = sr + e * 6 * NP;
    #pragma unroll
    for (int s = 0; s < NBM; s++) {
        const uint i = t0 + s * TPT;
        if (i >= NP) break;
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
            const REAL rs = a * rk[c * NP + i] + dt * r[c];
            res[o] = rs;
            q_out[o] = qk[c * NP + i] + b * rs;
        }
    }
}
#endif
