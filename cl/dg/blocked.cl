// The blocked updates: tets per work-group staged in local memory (dg_update_blk) and the
// same with every operand read two values at a time (dg_update_pair).

// The update of `dg_update` with KB tets per work-group (KB * NP work-items, one per node
// of each tet; built with -D KB), in the style of the DG-on-GPU kernels of the literature:
// the work-group's fields (6 NP values per tet) and fluxes (6 NF per tet) are contiguous in
// `q` and `flux`, so they are staged in local memory by coalesced loads and then read from
// there by every node of their tet; the operators are transposed (dT[(r NP + j) NP + i],
// liftT[m NP + i]) so that the work-items of one tet read consecutive addresses. The sums
// run in the order of `dg_update` (j, then m), so the two kernels agree to round-off (bit
// for bit where the compiler contracts alike). The fields (for an even NP) and the fluxes are
// read from local memory two values at a time (pairs of nodes j and of face points m; the
// rows of 6 NP and 6 NF values start at even offsets of buffers aligned to at least 16 bytes).
// The residuals and each tet's scalars are staged too (see STAGE_LOADS), so the work-group
// reads global memory once, at its start. The local buffer is an argument, sized by the host:
// KB * (6 * (2 NP + NF) + 11) values (fields, fluxes, residuals, scalars).
#ifdef KB
#define WG (KB * NP)
// The staging: everything the work-group reads from global memory but the operators, loaded
// at once and then stored into local memory. Work-item lid loads the values lid + r WG of
// each contiguous run (WG = KB NP work-items): 6 of the fields and 6 of the residuals (6 NP
// values per tet each), FPER of the fluxes (6 NF per tet), and GPER of the tets' 11 scalars
// (9 geometric factors, 1/eps, 1/mu; staged as nk * 9 + nk + nk values). All loads come
// before any store: written as loops of load-then-store, each store waited for its load, and
// a work-item made one round trip to memory after another (6 + FPER of them for the fields
// and fluxes) while its work-group sat at the barrier; the residuals and scalars, read after
// the sums, cost further round trips there. The loops have constant trip counts and are
// unrolled, so the values stay in registers (the ptxas report shows no stack).
#define FPER ((6 * NF + NP - 1) / NP)
#define GPER ((11 + NP - 1) / NP)
#define STAGE_LOADS(vq, vr, vf, vg, nk, lid, k0)                                          \
    do {                                                                                  \
        __global const REAL* qg_ = q + (size_t)(k0) * 6 * NP;                             \
        __global const REAL* rg_ = res + (size_t)(k0) * 6 * NP;                           \
        __global const REAL* fg_ = flux + (size_t)(k0) * 6 * NF;                          \
        for (int r = 0; r < 6; r++) {                                                     \
            const uint t = (lid) + r * WG;                                                \
            vq[r] = t < (nk) * 6 * NP ? qg_[t] : 0;                                       \
            vr[r] = t < (nk) * 6 * NP ? rg_[t] : 0;                                       \
        }                                                                                 \
        for (int r = 0; r < FPER; r++) {                                                  \
            const uint t = (lid) + r * WG;                                                \
            vf[r] = t < (nk) * 6 * NF ? fg_[t] : 0;                                       \
        }                                                                                 \
        for (int r = 0; r < GPER; r++) {                                                  \
            const uint t = (lid) + r * WG;                                                \
            vg[r] = t < 9 * (nk) ? geo[9 * (size_t)(k0) + t]                              \
                  : t < 10 * (nk) ? inv_eps[(k0) + t - 9 * (nk)]                          \
                  : t < 11 * (nk) ? inv_mu[(k0) + t - 10 * (nk)] : 0;                     \
        }                                                                                 \
    } while (0)
// The stores of the staging common to both kernels: residuals to sr, scalars to sg.
#define STAGE_STORE_RG(vr, vg, nk, lid)                                                   \
    do {                                                                                  \
        for (int r = 0; r < 6; r++)                                                       \
            if ((lid) + r * WG < (nk) * 6 * NP) sr[(lid) + r * WG] = vr[r];               \
        for (int r = 0; r < GPER; r++)                                                    \
            if ((lid) + r * WG < 11 * (nk)) sg[(lid) + r * WG] = vg[r];                   \
    } while (0)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void dg_update_blk(
    const uint K, __global const REAL* restrict q, __global const REAL* restrict flux,
    __global const REAL* restrict geo, __global const REAL* restrict dT,
    __global const REAL* restrict liftT, __global const REAL* restrict inv_eps,
    __global const REAL* restrict inv_mu, const uint src_tet, const REAL sx, const REAL sy,
    const REAL sz, const REAL a, const REAL b, const REAL dt, __global REAL* restrict res,
    __global REAL* restrict q_out, __local REAL* sq) {
    const uint lid = get_local_id(0);
    const uint k0 = get_group_id(0) * KB;
    const uint nk = min((uint)KB, K - k0);
    __local REAL* sf = sq + KB * 6 * NP;
    __local REAL* sr = sf + KB * 6 * NF;
    __local REAL* sg = sr + KB * 6 * NP;
    {
        REAL vq[6], vr[6], vf[FPER], vg[GPER];
        STAGE_LOADS(vq, vr, vf, vg, nk, lid, k0);
        #pragma unroll
        for (int r = 0; r < 6; r++)
            if (lid + r * WG < nk * 6 * NP) sq[lid + r * WG] = vq[r];
        #pragma unroll
        for (int r = 0; r < FPER; r++)
            if (lid + r * WG < nk * 6 * NF) sf[lid + r * WG] = vf[r];
        STAGE_STORE_RG(vr, vg, nk, lid);
    }
    // a global fence too: the staging read residuals that other work-items of the group
    // write after the barrier
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const uint e = lid / NP, i = lid - e * NP;
    if (e >= nk) return;
    const uint k = k0 + e;
    __local const REAL* qk = sq + e * 6 * NP;
    REAL d[3][6];
    #pragma unroll
    for (int c = 0; c < 6; c++) { d[0][c] = 0; d[1][c] = 0; d[2][c] = 0; }
#if NP % 2 == 0
    // pairs of nodes j: one two-wide local load per component feeds six multiply-adds
    for (int j = 0; j < NP; j += 2) {
        const REAL wr0 = dT[j * NP + i], ws0 = dT[(NP + j) * NP + i],
                   wt0 = dT[(2 * NP + j) * NP + i];
        const REAL wr1 = dT[(j + 1) * NP + i], ws1 = dT[(NP + j + 1) * NP + i],
                   wt1 = dT[(2 * NP + j + 1) * NP + i];
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const REAL2 u = vload2(0, qk + c * NP + j);
            d[0][c] += wr0 * u.x;
            d[1][c] += ws0 * u.x;
            d[2][c] += wt0 * u.x;
            d[0][c] += wr1 * u.y;
            d[1][c] += ws1 * u.y;
            d[2][c] += wt1 * u.y;
        }
    }
#else
    for (int j = 0; j < NP; j++) {
        const REAL wr = dT[j * NP + i], ws = dT[(NP + j) * NP + i],
                   wt = dT[(2 * NP + j) * NP + i];
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const REAL u = qk[c * NP + j];
            d[0][c] += wr * u;
            d[1][c] += ws * u;
            d[2][c] += wt * u;
        }
    }
#endif
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
    __local const REAL* fk = sf + e * 6 * NF;
    // pairs of face points m (NF is even): two-wide local loads of the fluxes
    for (int m = 0; m < NF; m += 2) {
        const REAL w0 = liftT[m * NP + i], w1 = liftT[(m + 1) * NP + i];
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const REAL2 f = vload2(0, fk + c * NF + m);
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
    __local const REAL* rk = sr + e * 6 * NP;
    #pragma unroll
    for (int c = 0; c < 6; c++) {
        const size_t o = ((size_t)k * 6 + c) * NP + i;
        const REAL rs = a * rk[c * NP + i] + dt * r[c];
        res[o] = rs;
        q_out[o] = qk[c * NP + i] + b * rs;
    }
}
#endif

// The update of `dg_update_blk` with every operand read two values at a time as REAL2
// (`dg_update_pair`, same -D KB, same work-items): the operators are stored in pairs of
// columns, dT2[(jh * 3 + r) NP + i] = (D_r[i][2 jh], D_r[i][2 jh + 1]) and liftT2[mh NP + i]
// = (LIFT[i][2 mh], LIFT[i][2 mh + 1]), so that one 16-byte (f64) load feeds a node two
// columns; the staged fields and fluxes are one local buffer of REAL2 (an argument typed
// REAL2, so its alignment is the runtime's to honour), whose rows are padded to an even NPP
// values (zero pad, zero operator column), so that every pair is aligned also for an odd NP
// (N = 2, 4). The sums run in the order of `dg_update_blk` (j, then m; the pad adds 0 * 0).
// Local buffer: KB * (6 * (NPP + NF + NP) + 11) values: the fields of the KB tets, their
// fluxes, residuals and scalars (as in `dg_update_blk`).
#ifdef KB
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void dg_update_pair(
    const uint K, __global const REAL* restrict q, __global const REAL* restrict flux,
    __global const REAL* restrict geo, __global const REAL2* restrict dT2,
    __global const REAL2* restrict liftT2, __global const REAL* restrict inv_eps,
    __global const REAL* restrict inv_mu, const uint src_tet, const REAL sx, const REAL sy,
    const REAL sz, const REAL a, const REAL b, const REAL dt, __global REAL* restrict res,
    __global REAL* restrict q_out, __local REAL2* s2) {
    const uint lid = get_local_id(0);
    const uint k0 = get_group_id(0) * KB;
    const uint nk = min((uint)KB, K - k0);
    __local REAL* sq = (__local REAL*)s2;
    __local REAL* sf = sq + KB * 6 * NPP;
    __local REAL* sr = sf + KB * 6 * NF;
    __local REAL* sg = sr + KB * 6 * NP;
    {
        REAL vq[6], vr[6], vf[FPER], vg[GPER];
        STAGE_LOADS(vq, vr, vf, vg, nk, lid, k0);
        #pragma unroll
        for (int r = 0; r < 6; r++) {
            const uint t = lid + r * WG, row = t / NP, col = t - row * NP;
            if (t < nk * 6 * NP) sq[row * NPP + col] = vq[r];
        }
#if NP % 2 == 1
        if (lid < nk * 6) sq[lid * NPP + NP] = 0;
#endif
        #pragma unroll
        for (int r = 0; r < FPER; r++)
            if (lid + r * WG < nk * 6 * NF) sf[lid + r * WG] = vf[r];
        STAGE_STORE_RG(vr, vg, nk, lid);
    }
    // a global fence too: the staging read residuals that other work-items of the group
    // write after the barrier
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const uint e = lid / NP, i = lid - e * NP;
    if (e >= nk) return;
    const uint k = k0 + e;
    __local const REAL2* qk = s2 + e * 3 * NPP;
    REAL d[3][6];
    #pragma unroll
    for (int c = 0; c < 6; c++) { d[0][c] = 0; d[1][c] = 0; d[2][c] = 0; }
    for (int jh = 0; jh < NPP / 2; jh++) {
        const REAL2 wr = dT2[(jh * 3) * NP + i], ws = dT2[(jh * 3 + 1) * NP + i],
                    wt = dT2[(jh * 3 + 2) * NP + i];
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const REAL2 u = qk[c * (NPP / 2) + jh];
            d[0][c] += wr.x * u.x;
            d[1][c] += ws.x * u.x;
            d[2][c] += wt.x * u.x;
            d[0][c] += wr.y * u.y;
            d[1][c] += ws.y * u.y;
            d[2][c] += wt.y * u.y;
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
    __local const REAL2* fk = s2 + KB * 3 * NPP + e * 3 * NF;
    for (int mh = 0; mh < NF / 2; mh++) {
        const REAL2 w = liftT2[mh * NP + i];
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const REAL2 f = fk[c * (NF / 2) + mh];
            l[c] += w.x * f.x;
            l[c] += w.y * f.y;
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
    __local const REAL* qs = sq + e * 6 * NPP;
    __local const REAL* rk = sr + e * 6 * NP;
    #pragma unroll
    for (int c = 0; c < 6; c++) {
        const size_t o = ((size_t)k * 6 + c) * NP + i;
        const REAL rs = a * rk[c * NP + i] + dt * r[c];
        res[o] = rs;
        q_out[o] = qs[c * NPP + i] + b * rs;
    }
}
#endif
