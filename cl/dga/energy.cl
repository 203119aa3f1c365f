// The energy's mass products and the power iteration's Rayleigh quotient.

// The discrete energy on the device (ClStepper's Stepper::energy, the host's energy_of):
// W = 1/2 U^T Meps U + 1/2 F^T Mmu F_next, as two dot products of these products with U and F.
// Y[g] = (Meps_v X)_g for slot g of vertex v, X in slot order (X[a + j] the j-th free
// half-edge of v), Meps_v packed as the vertex blocks of vertex_block_s (upper triangle
// column by column at poff[v]).
__kernel void meps_slots(const uint NF, __global const uint* restrict slot_vertex,
                         __global const uint* restrict vptr, __global const ulong* restrict poff,
                         __global const real* restrict B, __global const real* restrict X,
                         __global real* restrict Y) {
    const size_t g = get_global_id(0);
    if (g >= NF) return;
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    const uint i = (uint)g - a;
    __global const real* bv = B + poff[v];
    const uint ci = i * (i + 1) / 2;
    real acc = 0;
    for (uint j = 0; j < d; j++) {
        const uint k = packed_at(ci, i, j);
        acc += bv[k] * X[a + j];
    }
    Y[g] = acc;
}

// Y = Mmu X tet by tet, Mmu in primal_sym's symmetric layout (M[k*T + n], the upper triangle
// row by row), X and Y in F's layout.
__kernel void sym4_apply(const uint T, __global const real* restrict M,
                         __global const real* restrict X, __global real* restrict Y) {
    const size_t n = get_global_id(0);
    if (n >= T) return;
    real m[10];
    for (int k = 0; k < 10; k++) m[k] = M[(size_t)k * T + n];
    const real x0 = X[n], x1 = X[(size_t)T + n], x2 = X[(size_t)2 * T + n], x3 = X[(size_t)3 * T + n];
    Y[n] = m[0] * x0 + m[1] * x1 + m[2] * x2 + m[3] * x3;
    Y[(size_t)T + n] = m[1] * x0 + m[4] * x1 + m[5] * x2 + m[6] * x3;
    Y[(size_t)2 * T + n] = m[2] * x0 + m[5] * x1 + m[7] * x2 + m[8] * x3;
    Y[(size_t)3 * T + n] = m[3] * x0 + m[6] * x1 + m[8] * x2 + m[9] * x3;
}

// Y_h = sum_j M_v[i][j] X_(h_j) (a per-vertex block applied to a half-edge vector; used
// with Meps for the power iteration's Rayleigh quotient). Boundary rows are set to 0.
__kernel void vertex_block_h(const uint NH, __global const ulong* restrict hrow, __global const uint* restrict hvert,
                             __global const uint* restrict vptr, __global const uint* restrict vh,
                             __global const real* restrict M, __global const real* restrict X,
                             __global real* restrict Y) {
    const size_t h = get_global_id(0);
    if (h >= NH) return;
    const ulong row = hrow[h];
    if (row == (ulong)(-1)) { Y[h] = 0; return; }
    const uint v = hvert[h];
    const uint a = vptr[v], b = vptr[v + 1];
    __global const real* mr = M + row;
    real acc = 0;
    for (uint j = a; j < b; j++) acc += mr[j - a] * X[vh[j]];
    Y[h] = acc;
}
