// The nodal DG operators of the node form: the face fluxes (one work-item per face point),
// the update (one work-item per node) and the probes.

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
