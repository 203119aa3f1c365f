// The primal update F -= P U (design note §8): the symmetric form primal_sym (default),
// the stored 4x6 blocks primal_tet, and their index subsets.
// Part of the DGA program (backend::opencl::kernels), after common.cl.

// F -= P (U_a + U_b) for tet n (the body of primal_tet and primal_tet_idx). Bit 31 of an
// edge id in PE is the edge's orientation bit (primal_sym_one), masked off here.
void primal_one(const size_t n, const uint T, __global const real* restrict P,
                __global const uint* restrict PE, __global const real* restrict U,
                __global real* restrict F) {
    real s[6];
    for (int c = 0; c < 6; c++) {
        const size_t e = PE[(size_t)c * T + n] & EDGE_MASK;
        s[c] = U[2 * e] + U[2 * e + 1];
    }
    for (int r = 0; r < 4; r++) {
        real acc = 0;
        for (int c = 0; c < 6; c++) acc += P[(size_t)(r * 6 + c) * T + n] * s[c];
        F[(size_t)r * T + n] -= acc;
    }
}

// The symmetric layout: F -= M (C (U_a + U_b)) with M = dt Mmu^-1 stored as its upper
// triangle row by row, M[k*T + n] for k in 0..10 (0:(0,0) 1:(0,1) 2:(0,2) 3:(0,3) 4:(1,1)
// 5:(1,2) 6:(1,3) 7:(2,2) 8:(2,3) 9:(3,3)), and C rebuilt from the orientation bits
// (bit 31 of PE: the edge runs from the lower to the higher local vertex). With s' the
// oriented edge sums, the outward face circulations are (Dga FACE_SIGN, checked there
// against the incidence): c0 = s'3 - s'4 + s'5, c1 = s'2 - s'1 - s'5, c2 = s'0 - s'2 + s'4,
// c3 = s'1 - s'0 - s'3. 10 values per tet instead of 24.
// F -= M (C s) for tet n, given its oriented edge sums s (the shared tail of primal_sym_one
// and primal_sym_sm_one).
void primal_sym_apply(const size_t n, const uint T, __global const opreal* restrict M, const real* s,
                      __global real* restrict F) {
    const real c0 = s[3] - s[4] + s[5];
    const real c1 = s[2] - s[1] - s[5];
    const real c2 = s[0] - s[2] + s[4];
    const real c3 = s[1] - s[0] - s[3];
    real m[10];  // converted exactly from opreal
    for (int k = 0; k < 10; k++) m[k] = M[(size_t)k * T + n];
    F[n] -= m[0] * c0 + m[1] * c1 + m[2] * c2 + m[3] * c3;
    F[(size_t)T + n] -= m[1] * c0 + m[4] * c1 + m[5] * c2 + m[6] * c3;
    F[(size_t)2 * T + n] -= m[2] * c0 + m[5] * c1 + m[7] * c2 + m[8] * c3;
    F[(size_t)3 * T + n] -= m[3] * c0 + m[6] * c1 + m[8] * c2 + m[9] * c3;
}

void primal_sym_one(const size_t n, const uint T, __global const opreal* restrict M,
                    __global const uint* restrict PE, __global const real* restrict U,
                    __global real* restrict F) {
    real s[6];
    for (int c = 0; c < 6; c++) {
        const uint x = PE[(size_t)c * T + n];
        const size_t e = x & EDGE_MASK;
        const real v = U[2 * e] + U[2 * e + 1];
        s[c] = (x & ~EDGE_MASK) ? v : -v;
    }
    primal_sym_apply(n, T, M, s, F);
}

__kernel void primal_sym(const uint T, __global const opreal* restrict M, __global const uint* restrict PE,
                         __global const real* restrict U, __global real* restrict F) {
    const size_t n = get_global_id(0);
    if (n >= T) return;
    primal_sym_one(n, T, M, PE, U, F);
}

__kernel void primal_sym_idx(const uint T, const uint NI, __global const uint* restrict idx,
                             __global const opreal* restrict M, __global const uint* restrict PE,
                             __global const real* restrict U, __global real* restrict F) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    primal_sym_one(idx[i], T, M, PE, U, F);
}

// F -= P (U_a + U_b): one work-item per tet.
__kernel void primal_tet(const uint T, __global const real* restrict P, __global const uint* restrict PE,
                         __global const real* restrict U, __global real* restrict F) {
    const size_t n = get_global_id(0);
    if (n >= T) return;
    primal_one(n, T, P, PE, U, F);
}

// The same on the NI tets idx[0..NI) (a partitioned rank's interface or interior tets).
__kernel void primal_tet_idx(const uint T, const uint NI, __global const uint* restrict idx,
                             __global const real* restrict P, __global const uint* restrict PE,
                             __global const real* restrict U, __global real* restrict F) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    primal_one(idx[i], T, P, PE, U, F);
}
