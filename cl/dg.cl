// Nodal DG for Maxwell (see src/dg/mod.rs for the equations and the storage layout).
// Built with -D REAL=double|float, -D NP=<nodes per tet>, -D NFP=<nodes per face>.
// q[(k*6 + c)*NP + i]: c = Ex, Ey, Ez, Hx, Hy, Hz; flux[(k*6 + c)*4*NFP + f*NFP + m].
#ifdef REAL_IS_DOUBLE
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#else
#error "REAL=double needs cl_khr_fp64, which this device does not report"
#endif
#endif

#define NF (4 * NFP)
// NP rounded up to even: the row length of the staged fields read in pairs
#define NPP (NP + (NP & 1))
#define VCAT_(t, n) t##n
#define VCAT(t, n) VCAT_(t, n)
#define REAL2 VCAT(REAL, 2)

// Quotient and remainder are written q = a / b, r = a - q * b (not a % b): clang turns an
// a / b, a % b pair into that form itself but wraps a and b in LLVM's `freeze`, which
// Oclgrind 21.10's uninitialised-value checker cannot interpret (it aborts the work-item).

// One work-item per face point: the scaled flux differences n x (H* - H-) (c = 0..2) and
// n x (E* - E-) (c = 3..5).
__kernel void dg_flux(const uint K, __global const REAL* q, __global const uint* vmap_p,
                      __global const uint* fmask, __global const REAL* normal,
                      __global const REAL* fscale, __global const REAL* z, const REAL alpha,
                      __global REAL* flux) {
    const uint g = get_global_id(0);
    if (g >= K * NF) return;
    const uint k = g / NF, fm = g - k * NF, f = fm / NFP;
    const uint im = fmask[fm];
    const uint idm = k * NP + im;
    const uint idp = vmap_p[g];
    const uint kp = idp / NP, ip = idp - kp * NP;
    REAL em[3], hm[3], de[3], dh[3];
    for (int c = 0; c < 3; c++) {
        em[c] = q[(k * 6 + c) * NP + im];
        hm[c] = q[(k * 6 + 3 + c) * NP + im];
    }
    const REAL zm = z[k];
    REAL zp;
    if (idp == idm) {
        for (int c = 0; c < 3; c++) { de[c] = -2 * em[c]; dh[c] = 0; }
        zp = zm;
    } else {
        for (int c = 0; c < 3; c++) {
            de[c] = q[(kp * 6 + c) * NP + ip] - em[c];
            dh[c] = q[(kp * 6 + 3 + c) * NP + ip] - hm[c];
        }
        zp = z[kp];
    }
    const REAL nx = normal[3 * (k * 4 + f)], ny = normal[3 * (k * 4 + f) + 1],
               nz = normal[3 * (k * 4 + f) + 2];
    // n x de, n x dh, n x (n x de), n x (n x dh)
    const REAL a0 = ny * de[2] - nz * de[1], a1 = nz * de[0] - nx * de[2], a2 = nx * de[1] - ny * de[0];
    const REAL b0 = ny * dh[2] - nz * dh[1], b1 = nz * dh[0] - nx * dh[2], b2 = nx * dh[1] - ny * dh[0];
    const REAL aa0 = ny * a2 - nz * a1, aa1 = nz * a0 - nx * a2, aa2 = nx * a1 - ny * a0;
    const REAL bb0 = ny * b2 - nz * b1, bb1 = nz * b0 - nx * b2, bb2 = nx * b1 - ny * b0;
    const REAL s = fscale[k * 4 + f] / (zm + zp);
    __global REAL* o = flux + (size_t)k * 6 * NF + fm;
    o[0 * NF] = s * (zp * b0 - alpha * aa0);
    o[1 * NF] = s * (zp * b1 - alpha * aa1);
    o[2 * NF] = s * (zp * b2 - alpha * aa2);
    o[3 * NF] = s * (zm * a0 + alpha * zp * zm * bb0);
    o[4 * NF] = s * (zm * a1 + alpha * zp * zm * bb1);
    o[5 * NF] = s * (zm * a2 + alpha * zp * zm * bb2);
}

// One work-item per node: volume derivatives, curls, lift of the fluxes, source, and the
// LSERK stage update res = a res + dt rhs, q_out = q + b res.
// The update kernels below repeat the same sums and end (physical derivatives, curls, source,
// stage) on purpose: written once as a shared function, with the same arithmetic, it made the
// blocked kernel 1.2x and the resident one 1.7x slower on the H200 (NVIDIA's compiler used
// more registers and scheduled it differently; results/h200/dg_kernels/README.md). The later
// forms (dg_update_pair, _nb, _nc, _pipe) repeat them for the same reason.
__kernel void dg_update(const uint K, __global const REAL* q, __global const REAL* flux,
                        __global const REAL* geo, __global const REAL* dr,
                        __global const REAL* ds, __global const REAL* dt_,
                        __global const REAL* lift, __global const REAL* inv_eps,
                        __global const REAL* inv_mu, const uint src_tet, const REAL sx,
                        const REAL sy, const REAL sz, const REAL a, const REAL b, const REAL dt,
                        __global REAL* res, __global REAL* q_out) {
    const uint g = get_global_id(0);
    if (g >= K * NP) return;
    const uint k = g / NP, i = g - k * NP;
    __global const REAL* qk = q + (size_t)k * 6 * NP;
    REAL d[3][6];
    for (int c = 0; c < 6; c++) { d[0][c] = 0; d[1][c] = 0; d[2][c] = 0; }
    for (int j = 0; j < NP; j++) {
        const REAL wr = dr[i * NP + j], ws = ds[i * NP + j], wt = dt_[i * NP + j];
        for (int c = 0; c < 6; c++) {
            const REAL u = qk[c * NP + j];
            d[0][c] += wr * u;
            d[1][c] += ws * u;
            d[2][c] += wt * u;
        }
    }
    __global const REAL* G = geo + 9 * k;
    REAL p[3][6];  // physical derivative x of component c
    for (int x = 0; x < 3; x++)
        for (int c = 0; c < 6; c++)
            p[x][c] = G[3 * x] * d[0][c] + G[3 * x + 1] * d[1][c] + G[3 * x + 2] * d[2][c];
    REAL l[6];
    for (int c = 0; c < 6; c++) l[c] = 0;
    __global const REAL* fk = flux + (size_t)k * 6 * NF;
    for (int m = 0; m < NF; m++) {
        const REAL w = lift[i * NF + m];
        for (int c = 0; c < 6; c++) l[c] += w * fk[c * NF + m];
    }
    const REAL ie = inv_eps[k], im = inv_mu[k];
    REAL r[6];
    r[0] = ie * (p[1][5] - p[2][4] + l[0]);
    r[1] = ie * (p[2][3] - p[0][5] + l[1]);
    r[2] = ie * (p[0][4] - p[1][3] + l[2]);
    r[3] = im * (-(p[1][2] - p[2][1]) - l[3]);
    r[4] = im * (-(p[2][0] - p[0][2]) - l[4]);
    r[5] = im * (-(p[0][1] - p[1][0]) - l[5]);
    if (k == src_tet) { r[0] -= sx; r[1] -= sy; r[2] -= sz; }
    for (int c = 0; c < 6; c++) {
        const size_t o = ((size_t)k * 6 + c) * NP + i;
        const REAL rs = a * res[o] + dt * r[c];
        res[o] = rs;
        q_out[o] = qk[c * NP + i] + b * rs;
    }
}

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

// The update of `dg_update_nb` (two nodes per work-item, the same sums in the same order)
// with the staging of one chunk of tets overlapped with the sums of the previous one
// (`dg_update_pipe`, built with -D KBP tets per chunk, -D PWI producer work-items, -D PB
// values each of them loads before it stores). In `dg_update_nb` a work-group first reads
// all it needs from global memory and then sums, so the multiply-adds and the memory
// traffic each take about as long and add up (results/h200/dg_kernels/tuning/9_paired,
// "not reached"). Here the work-groups are persistent: group g walks over the chunks
// g, g + G, ... (G groups); its first PWI work-items (the producers, a whole warp or
// wavefront where PWI is a multiple of its width) stage the fields, fluxes and scalars of the
// next chunk into one of two local buffers while the other KBP ceil(NP / 2) work-items sum
// the current chunk from the other buffer; one barrier per chunk hands the buffers over.
// The residuals are read from global memory by the work-item that updates them (double
// buffers of them too would not fit the 48 KiB of local memory NVIDIA's OpenCL grants a
// work-group). Local buffer: 2 SBUF values, SBUF = KBP (6 NP + 6 NF + 11) rounded up to even.
#ifdef KBP
#ifndef PWI
#define PWI 32
#endif
#ifndef PB
#define PB 32
#endif
#define TPP ((NP + 1) / 2)
#define WGP (PWI + KBP * TPP)
#define SBUF0 (KBP * (6 * NP + 6 * NF + 11))
#define SBUF (SBUF0 + (SBUF0 & 1))
// The producers' staging of chunk cc into the buffer sb: PB values per work-item at a time,
// all loads of a batch before its stores. A buffer holds the fields (KBP 6 NP values), the
// fluxes (KBP 6 NF), then the scalars of the chunk's nk tets (9 nk geometric factors, nk
// 1/eps, nk 1/mu), as in dg_update_nb.
void pipe_stage(const uint cc, const uint K, const uint lid, __global const REAL* restrict q,
                __global const REAL* restrict flux, __global const REAL* restrict geo,
                __global const REAL* restrict inv_eps, __global const REAL* restrict inv_mu,
                __local REAL* sb) {
    const uint k0 = cc * KBP, nk = min((uint)KBP, K - k0);
    const uint nq = nk * 6 * NP, nf = nq + nk * 6 * NF, ngeo = nf + 9 * nk;
    const uint ne = ngeo + nk, na = ne + nk;
    for (uint base = 0; base < na; base += PWI * PB) {
        REAL v[PB];
        #pragma unroll
        for (int r = 0; r < PB; r++) {
            const uint t = base + r * PWI + lid;
            v[r] = t < nq ? q[(size_t)k0 * 6 * NP + t]
                 : t < nf ? flux[(size_t)k0 * 6 * NF + t - nq]
                 : t < ngeo ? geo[9 * (size_t)k0 + t - nf]
                 : t < ne ? inv_eps[k0 + t - ngeo]
                 : t < na ? inv_mu[k0 + t - ne] : 0;
        }
        #pragma unroll
        for (int r = 0; r < PB; r++) {
            const uint t = base + r * PWI + lid;
            const uint d = t < nq ? t
                         : t < nf ? KBP * 6 * NP + t - nq
                         : KBP * 6 * (NP + NF) + t - nf;
            if (t < na) sb[d] = v[r];
        }
    }
}
__kernel __attribute__((reqd_work_group_size(WGP, 1, 1))) void dg_update_pipe(
    const uint K, __global const REAL* restrict q, __global const REAL* restrict flux,
    __global const REAL* restrict geo, __global const REAL* restrict dT,
    __global const REAL* restrict liftT, __global const REAL* restrict inv_eps,
    __global const REAL* restrict inv_mu, const uint src_tet, const REAL sx, const REAL sy,
    const REAL sz, const REAL a, const REAL b, const REAL dt, __global REAL* restrict res,
    __global REAL* restrict q_out, __local REAL2* s2) {
    const uint lid = get_local_id(0);
    const uint ng = get_num_groups(0);
    const uint nch = (K + KBP - 1) / KBP;
    uint ch = get_group_id(0);
#ifndef PIPE_DIAG_NOLOAD
    if (lid < PWI && ch < nch) pipe_stage(ch, K, lid, q, flux, geo, inv_eps, inv_mu, (__local REAL*)s2);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint n = 0; ch < nch; n++, ch += ng) {
        __local REAL* sq = (__local REAL*)s2 + (n & 1) * SBUF;
        if (lid < PWI) {
#ifndef PIPE_DIAG_NOLOAD
            if (ch + ng < nch) pipe_stage(ch + ng, K, lid, q, flux, geo, inv_eps, inv_mu,
                           (__local REAL*)s2 + ((n + 1) & 1) * SBUF);
#endif
        } else {
            const uint k0 = ch * KBP, nk = min((uint)KBP, K - k0);
            const uint cl = lid - PWI, e = cl / TPP, t0 = cl - e * TPP;
            if (e < nk) {
                __local REAL* sf = sq + KBP * 6 * NP;
                __local REAL* sg = sf + KBP * 6 * NF;
                const uint ic[2] = {t0, min(t0 + TPP, (uint)(NP - 1))};
                const uint k = k0 + e;
                __local const REAL* qk = sq + e * 6 * NP;
                REAL d[2][3][6];
                #pragma unroll
                for (int s = 0; s < 2; s++)
                    #pragma unroll
                    for (int c = 0; c < 6; c++) { d[s][0][c] = 0; d[s][1][c] = 0; d[s][2][c] = 0; }
#if NP % 2 == 0
                __local const REAL2* qk2 = (__local const REAL2*)qk;
                for (int j = 0; j < NP; j += 2) {
                    REAL w[2][3][2];
                    #pragma unroll
                    for (int s = 0; s < 2; s++)
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
                        for (int s = 0; s < 2; s++) {
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
                for (int j = 0; j < NP; j++) {
                    REAL w[2][3];
                    #pragma unroll
                    for (int s = 0; s < 2; s++) {
                        w[s][0] = dT[j * NP + ic[s]];
                        w[s][1] = dT[(NP + j) * NP + ic[s]];
                        w[s][2] = dT[(2 * NP + j) * NP + ic[s]];
                    }
                    #pragma unroll
                    for (int c = 0; c < 6; c++) {
                        const REAL u = qk[c * NP + j];
                        #pragma unroll
                        for (int s = 0; s < 2; s++) {
                            d[s][0][c] += w[s][0] * u;
                            d[s][1][c] += w[s][1] * u;
                            d[s][2][c] += w[s][2] * u;
                        }
                    }
                }
#endif
                __local const REAL* G = sg + 9 * e;
                REAL cu[2][6];
                #pragma unroll
                for (int s = 0; s < 2; s++) {
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
                REAL l[2][6];
                #pragma unroll
                for (int s = 0; s < 2; s++)
                    #pragma unroll
                    for (int c = 0; c < 6; c++) l[s][c] = 0;
                __local const REAL2* fk2 = (__local const REAL2*)(sf + e * 6 * NF);
                for (int m = 0; m < NF; m += 2) {
                    REAL w0[2], w1[2];
                    #pragma unroll
                    for (int s = 0; s < 2; s++) {
                        w0[s] = liftT[m * NP + ic[s]];
                        w1[s] = liftT[(m + 1) * NP + ic[s]];
                    }
                    #pragma unroll
                    for (int c = 0; c < 6; c++) {
                        const REAL2 f = fk2[(c * NF + m) / 2];
                        #pragma unroll
                        for (int s = 0; s < 2; s++) {
                            l[s][c] += w0[s] * f.x;
                            l[s][c] += w1[s] * f.y;
                        }
                    }
                }
                const REAL ie = sg[9 * nk + e], im = sg[10 * nk + e];
                #pragma unroll
                for (int s = 0; s < 2; s++) {
                    const uint i = t0 + s * TPP;
                    if (i < NP) {
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
                            const REAL rs = a * res[o] + dt * r[c];
                            res[o] = rs;
                            q_out[o] = qk[c * NP + i] + b * rs;
                        }
                    }
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif

// The update with the operators resident in local memory (`dg_update_lm`, built with -D KB3
// tets per chunk and -D LIFT_LOCAL where LIFT fits too): each work-group copies the
// transposed Dr, Ds, Dt (and LIFT) into local memory once, then walks over chunks of KB3
// tets (chunk g, g + G, ... for G work-groups), staging each chunk's fields by coalesced
// loads; a work-item per node of the chunk's tets, as in `dg_update_blk`, whose sums it
// repeats in the same order. The fluxes are read from global memory (every node of a tet
// reads the same values). The operators are read by every node of every tet, 5-16 KB per tet
// at N = 3-4: from local memory they no longer compete with the fields for the cache. The
// local buffers are arguments, sized by the host: sD 3 NP NP values, sL NF NP (with
// LIFT_LOCAL; else one value, unused), sq KB3 * 6 * NP.
#ifdef KB3
#define WG3 (KB3 * NP)
__kernel __attribute__((reqd_work_group_size(WG3, 1, 1))) void dg_update_lm(
    const uint K, __global const REAL* q, __global const REAL* flux, __global const REAL* geo,
    __global const REAL* dT, __global const REAL* liftT, __global const REAL* inv_eps,
    __global const REAL* inv_mu, const uint src_tet, const REAL sx, const REAL sy,
    const REAL sz, const REAL a, const REAL b, const REAL dt, __global REAL* res,
    __global REAL* q_out, __local REAL* sD, __local REAL* sL, __local REAL* sq) {
    const uint lid = get_local_id(0);
    for (uint t = lid; t < 3 * NP * NP; t += WG3) sD[t] = dT[t];
#ifdef LIFT_LOCAL
    for (uint t = lid; t < NF * NP; t += WG3) sL[t] = liftT[t];
#define LIFT sL
#else
#define LIFT liftT
#endif
    const uint e = lid / NP, i = lid - e * NP;
    const uint chunks = (K + KB3 - 1) / KB3;
    for (uint ch = get_group_id(0); ch < chunks; ch += get_num_groups(0)) {
        const uint k0 = ch * KB3;
        const uint nk = min((uint)KB3, K - k0);
        barrier(CLK_LOCAL_MEM_FENCE);
        __global const REAL* qg = q + (size_t)k0 * 6 * NP;
        for (uint t = lid; t < nk * 6 * NP; t += WG3) sq[t] = qg[t];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (e >= nk) continue;
        const uint k = k0 + e;
        __local const REAL* qk = sq + e * 6 * NP;
        REAL d[3][6];
        #pragma unroll
        for (int c = 0; c < 6; c++) { d[0][c] = 0; d[1][c] = 0; d[2][c] = 0; }
        for (int j = 0; j < NP; j++) {
            const REAL wr = sD[j * NP + i], ws = sD[(NP + j) * NP + i],
                       wt = sD[(2 * NP + j) * NP + i];
            #pragma unroll
            for (int c = 0; c < 6; c++) {
                const REAL u = qk[c * NP + j];
                d[0][c] += wr * u;
                d[1][c] += ws * u;
                d[2][c] += wt * u;
            }
        }
        __global const REAL* G = geo + 9 * k;
        REAL p[3][6];
        #pragma unroll
        for (int x = 0; x < 3; x++)
            #pragma unroll
            for (int c = 0; c < 6; c++)
                p[x][c] = G[3 * x] * d[0][c] + G[3 * x + 1] * d[1][c] + G[3 * x + 2] * d[2][c];
        REAL l[6];
        #pragma unroll
        for (int c = 0; c < 6; c++) l[c] = 0;
        __global const REAL* fk = flux + (size_t)k * 6 * NF;
        for (int m = 0; m < NF; m++) {
            const REAL w = LIFT[m * NP + i];
            #pragma unroll
            for (int c = 0; c < 6; c++) l[c] += w * fk[c * NF + m];
        }
        const REAL ie = inv_eps[k], im = inv_mu[k];
        REAL r[6];
        r[0] = ie * (p[1][5] - p[2][4] + l[0]);
        r[1] = ie * (p[2][3] - p[0][5] + l[1]);
        r[2] = ie * (p[0][4] - p[1][3] + l[2]);
        r[3] = im * (-(p[1][2] - p[2][1]) - l[3]);
        r[4] = im * (-(p[2][0] - p[0][2]) - l[4]);
        r[5] = im * (-(p[0][1] - p[1][0]) - l[5]);
        if (k == src_tet) { r[0] -= sx; r[1] -= sy; r[2] -= sz; }
        #pragma unroll
        for (int c = 0; c < 6; c++) {
            const size_t o = ((size_t)k * 6 + c) * NP + i;
            const REAL rs = a * res[o] + dt * r[c];
            res[o] = rs;
            q_out[o] = qk[c * NP + i] + b * rs;
        }
    }
#undef LIFT
}
#endif

// E at the probes: samples[(j * nprobe + p) * 3 + c] = sum_i w[p][i] E_c(tet_p, i).
__kernel void dg_probe(const uint nprobe, const uint j, __global const uint* tet,
                       __global const REAL* w, __global const REAL* q,
                       __global REAL* samples) {
    const uint g = get_global_id(0);
    if (g >= 3 * nprobe) return;
    const uint p = g / 3, c = g - p * 3;
    __global const REAL* u = q + ((size_t)tet[p] * 6 + c) * NP;
    REAL s = 0;
    for (int i = 0; i < NP; i++) s += w[p * NP + i] * u[i];
    samples[(j * nprobe + p) * 3 + c] = s;
}
