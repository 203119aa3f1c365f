// The magnetic side of perfectly matched layers (src/dga/stretch.rs, design note §13's
// poles on the faces): per layer tet the correction before the primal update, per term the
// pole step after it. F is column-major across tets (F[k T + n], T the tet stride).

// F_n -= sum_j G_j g_j on the N layer tets TETS[i], terms PTR[i] <= j < PTR[i + 1]: G_j the
// row-major 4x4 GM[16 j ..], g_j the four changes GC[4 j ..] of the term's last pole step.
__kernel void pml_mag_correct(const uint N, const uint T, __global const uint* restrict TETS,
                              __global const uint* restrict PTR, __global const real* restrict GM,
                              __global const real* restrict GC, __global real* restrict F) {
    const size_t i = get_global_id(0);
    if (i >= N) return;
    real acc[4] = {0, 0, 0, 0};
    for (uint j = PTR[i]; j < PTR[i + 1]; j++) {
        __global const real* gm = GM + 16 * (size_t)j;
        __global const real* g = GC + 4 * (size_t)j;
        const real g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3];
#pragma unroll
        for (uint r = 0; r < 4; r++) {
            acc[r] += gm[4 * r] * g0;
            acc[r] += gm[4 * r + 1] * g1;
            acc[r] += gm[4 * r + 2] * g2;
            acc[r] += gm[4 * r + 3] * g3;
        }
    }
    const size_t n = TETS[i];
#pragma unroll
    for (uint r = 0; r < 4; r++) F[(size_t)r * T + n] -= acc[r];
}

// The pole step of the NT terms on the new F: term j of tet TT[j] filters each face value
// through its pole (coefficients b0 b1 b2 a1 a2 at CO + 5 POLE[j], transposed direct form
// II as disp_pole_step), states s1 at S[8 j + k], s2 at S[8 j + 4 + k]; GC[4 j + k] = the
// change of s1.
__kernel void pml_mag_poles(const uint NT, const uint T, __global const uint* restrict TT,
                            __global const uint* restrict POLE, __global const real* restrict CO,
                            __global const real* restrict F, __global real* restrict S,
                            __global real* restrict GC) {
    const size_t j = get_global_id(0);
    if (j >= NT) return;
    const size_t n = TT[j];
    __global const real* c = CO + 5 * (size_t)POLE[j];
    const real b0 = c[0], b1 = c[1], b2 = c[2], a1 = c[3], a2 = c[4];
    __global real* s = S + 8 * j;
#pragma unroll
    for (uint k = 0; k < 4; k++) {
        const real x = F[(size_t)k * T + n];
        const real s1 = s[k], s2 = s[4 + k];
        const real y = b0 * x + s1;
        const real s1n = b1 * x - a1 * y + s2;
        s[4 + k] = b2 * x - a2 * y;
        s[k] = s1n;
        GC[4 * j + k] = s1n - s1;
    }
}
