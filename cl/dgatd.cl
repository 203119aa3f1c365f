// DGATD leapfrog kernels (design note §8). Built with -D REAL=double|float and, for double,
// -D REAL_IS_DOUBLE=1; -D CSR_LANES=<lanes per row> for the vector CSR kernel; optionally
// -D OPREAL=float with REAL=double (mixed storage: the operators of primal_sym and the
// packed vertex-block kernels in float, the fields and every sum in double; without it the
// operators are REAL).
//
// Device layouts (E edges; T the tet stride, the tet count rounded up to a multiple of 64 so
// that every column starts on a 256-byte boundary: the tets past the count are padding, with
// zero operators, edge 0 or the zero slot in their tables, and F zero; kernels run over them
// unchanged, backend::opencl::tet_stride):
//   U[2e + s]        electric half-edge DoFs (s = 0 at the start vertex of e, 1 at the end)
//   F[k*T + n]       magnetic half dual-edge DoFs (face k of tet n), structure of arrays
//   P[(r*6 + c)*T + n], PE[c*T + n]   primal blocks dt*Mmu^-1*C and their edge ids, column-major
//                                    (bit 31 of PE: the edge's orientation in the tet)
//   M[k*T + n]       the symmetric layout: dt*Mmu^-1's upper triangle (primal_sym)
//   circ[circ_ptr[e] .. circ_ptr[e+1]]  (F index << 1) | negative, dual-face circulation of e
//                                    (CircVariant::Lists)
//   circ[circ_ptr[e]/2 .. circ_ptr[e+1]/2]  (n << 4) | (fp << 2) | fm: +F(n, fp) - F(n, fm)
//                                    for each tet n around e (CircVariant::Paired, default)
//   block[hrow[h] .. + d]             row of dt*Meps_v^-1 for free half-edge h at vertex hvert[h]
//   vh[vptr[v] .. vptr[v+1]]         free half-edges of vertex v (their edge is vh >> 1)
//   US[g], ES[2e + s]                slot-major U and the slot of each half-edge
//                                    (primal_sym_sm, vertex_block_s_sm: the stepper's U
//                                    where it applies, ClStepper::set_u_layout)

#ifdef REAL_IS_DOUBLE
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#else
#error "REAL=double needs cl_khr_fp64, which this device does not report"
#endif
#endif
typedef REAL real;
#ifndef OPREAL
#define OPREAL REAL
#endif
typedef OPREAL opreal;
#define EDGE_MASK 0x7fffffffu

// Entry (i, j) of a symmetric block packed as its upper triangle column by column
// (VertexBlocks::pack), ci = i (i + 1) / 2 the start of column i.
uint packed_at(const uint ci, const uint i, const uint j) {
    return (j <= i) ? ci + j : j * (j + 1) / 2 + i;
}

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

// The seed's mapping: one work-item per output row (4T work-items, row r = gid / T).
__kernel void primal_row(const uint T, __global const real* restrict P, __global const uint* restrict PE,
                         __global const real* restrict U, __global real* restrict F) {
    const size_t gid = get_global_id(0);
    if (gid >= (size_t)4 * T) return;
    const size_t r = gid / T;
    const size_t n = gid - r * T;
    real acc = 0;
    for (int c = 0; c < 6; c++) {
        const size_t e = PE[(size_t)c * T + n] & EDGE_MASK;
        acc += P[(r * 6 + c) * T + n] * (U[2 * e] + U[2 * e + 1]);
    }
    F[r * T + n] -= acc;
}

// c_e = sum of signed F over the dual face of e.
void circulation_one(const size_t e, __global const uint* restrict ptr, __global const uint* restrict circ,
                     __global const real* restrict F, __global real* restrict C) {
    real acc = 0;
    for (uint k = ptr[e]; k < ptr[e + 1]; k++) {
        const uint x = circ[k];
        const real v = F[x >> 1];
        acc += (x & 1u) ? -v : v;
    }
    C[e] = acc;
}

// One work-item per edge.
__kernel void circulation(const uint E, __global const uint* restrict ptr, __global const uint* restrict circ,
                          __global const real* restrict F, __global real* restrict C) {
    const size_t e = get_global_id(0);
    if (e >= E) return;
    circulation_one(e, ptr, circ, F, C);
}

// The same with the lists in sliced ELL form (a bench variant): edge e = 32 c + l finds its
// k-th entry at SC[SO[c] + 32 k + l], so the 32 work-items of a chunk read consecutive words
// (their lists interleaved, each chunk padded to its longest list); the same sums in the same
// order as `circulation`.
__kernel void circulation_sell(const uint E, __global const uint* restrict ptr,
                               __global const ulong* restrict SO, __global const uint* restrict SC,
                               __global const real* restrict F, __global real* restrict C) {
    const size_t e = get_global_id(0);
    if (e >= E) return;
    const uint n = ptr[e + 1] - ptr[e];
    __global const uint* s = SC + SO[e >> 5] + (e & 31);
    real acc = 0;
    for (uint k = 0; k < n; k++) {
        const uint x = s[32 * (size_t)k];
        const real v = F[x >> 1];
        acc += (x & 1u) ? -v : v;
    }
    C[e] = acc;
}

// The same from paired entries (CircVariant::Paired, the default): a tet's two entries in an edge's list are
// always +F(n, fp) then -F(n, fm) (dga::dual_circulations), so one word
// (n << 4) | (fp << 2) | fm holds both, half the index bytes; the pairs of edge e are
// [ptr[e] / 2, ptr[e + 1] / 2) (two entries per tet, so ptr is even). F(n, k) is at
// k * T + n. The same sums in the same order as `circulation` (a - x equals a + (-x)).
// acc + F(n, fp) - F(n, fm) for the pair word y = (n << 4) | (fp << 2) | fm.
inline real pair_add(real acc, const uint y, const uint T, __global const real* restrict F) {
    const size_t n = y >> 4;
    acc += F[((y >> 2) & 3u) * (size_t)T + n];
    return acc - F[(y & 3u) * (size_t)T + n];
}

void circulation_pair_one(const size_t e, const uint T, __global const uint* restrict ptr,
                          __global const uint* restrict pairs, __global const real* restrict F,
                          __global real* restrict C) {
    real acc = 0;
    for (uint k = ptr[e] >> 1; k < ptr[e + 1] >> 1; k++) acc = pair_add(acc, pairs[k], T, F);
    C[e] = acc;
}

// One work-item per edge (the stepper's default circulation, CircVariant::Paired).
__kernel void circulation_pair(const uint E, const uint T, __global const uint* restrict ptr,
                               __global const uint* restrict pairs,
                               __global const real* restrict F, __global real* restrict C) {
    const size_t e = get_global_id(0);
    if (e >= E) return;
    circulation_pair_one(e, T, ptr, pairs, F, C);
}

// The same on the NI edges idx[0..NI).
__kernel void circulation_pair_idx(const uint NI, const uint T, __global const uint* restrict idx,
                                   __global const uint* restrict ptr,
                                   __global const uint* restrict pairs,
                                   __global const real* restrict F, __global real* restrict C) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    circulation_pair_one(idx[i], T, ptr, pairs, F, C);
}

// The paired entries in sliced ELL form: edge e = 32 c + l finds its k-th pair at
// SP[SO[c] + 32 k + l] (as `circulation_sell`).
__kernel void circulation_pair_sell(const uint E, const uint T, __global const uint* restrict ptr,
                                    __global const ulong* restrict SO,
                                    __global const uint* restrict SP,
                                    __global const real* restrict F, __global real* restrict C) {
    const size_t e = get_global_id(0);
    if (e >= E) return;
    const uint n = (ptr[e + 1] - ptr[e]) >> 1;
    __global const uint* s = SP + SO[e >> 5] + (e & 31);
    real acc = 0;
    for (uint k = 0; k < n; k++) acc = pair_add(acc, s[32 * (size_t)k], T, F);
    C[e] = acc;
}

// The same on the NI edges idx[0..NI).
__kernel void circulation_idx(const uint NI, __global const uint* restrict idx, __global const uint* restrict ptr,
                              __global const uint* restrict circ, __global const real* restrict F,
                              __global real* restrict C) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    circulation_one(idx[i], ptr, circ, F, C);
}

// U_h += sum_j B_v[i][j] c_(e_j): one work-item per half-edge (boundary ones skip).
__kernel void vertex_block(const uint NH, __global const ulong* restrict hrow, __global const uint* restrict hvert,
                           __global const uint* restrict vptr, __global const uint* restrict vh,
                           __global const real* restrict B, __global const real* restrict C,
                           __global real* restrict U) {
    const size_t h = get_global_id(0);
    if (h >= NH) return;
    const ulong row = hrow[h];
    if (row == (ulong)(-1)) return;
    const uint v = hvert[h];
    const uint a = vptr[v], b = vptr[v + 1];
    __global const real* br = B + row;
    real acc = 0;
    for (uint j = a; j < b; j++) acc += br[j - a] * C[vh[j] >> 1];
    U[h] += acc;
}

// U += D F with D in CSR: one work-item per row.
__kernel void csr_scalar(const uint NR, __global const uint* restrict rowptr, __global const uint* restrict col,
                         __global const real* restrict val, __global const real* restrict F,
                         __global real* restrict U) {
    const size_t r = get_global_id(0);
    if (r >= NR) return;
    real acc = 0;
    for (uint k = rowptr[r]; k < rowptr[r + 1]; k++) acc += val[k] * F[col[k]];
    U[r] += acc;
}

// U += D F with D in CSR: CSR_LANES work-items per row, reduced in local memory.
__kernel void csr_vector(const uint NR, __global const uint* restrict rowptr, __global const uint* restrict col,
                         __global const real* restrict val, __global const real* restrict F,
                         __global real* restrict U, __local real* partial) {
    const size_t gid = get_global_id(0);
    const uint lid = get_local_id(0);
    const uint lane = lid % CSR_LANES;
    const size_t r = gid / CSR_LANES;
    real acc = 0;
    if (r < NR) {
        for (uint k = rowptr[r] + lane; k < rowptr[r + 1]; k += CSR_LANES) acc += val[k] * F[col[k]];
    }
    partial[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CSR_LANES / 2; s > 0; s >>= 1) {
        if (lane < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && r < NR) U[r] += partial[lid];
}

// U -= w(t) g on the source half-edges; w is the Gaussian derivative of solver::Waveform.
__kernel void source(const uint NS, __global const uint* restrict idx, __global const real* restrict g,
                     __global real* restrict U, const real t, const real t0, const real tau) {
    const size_t i = get_global_id(0);
    if (i >= NS) return;
    const real x = (t - t0) / tau;
    const real w = -x * exp((real)0.5 - (real)0.5 * x * x);
    U[idx[i]] -= w * g[i];
}

// E of each probe after step k of the chunk: out[(k*NP + p)*3 + c].
__kernel void probe(const uint NP, const uint k, __global const uint* restrict slots,
                    __global const real* restrict w, __global const real* restrict U, __global real* restrict out) {
    const size_t p = get_global_id(0);
    if (p >= NP) return;
    real e0 = 0, e1 = 0, e2 = 0;
    for (int s = 0; s < 3; s++) {
        const real us = U[slots[3 * p + s]];
        e0 += us * w[9 * p + 3 * s + 0];
        e1 += us * w[9 * p + 3 * s + 1];
        e2 += us * w[9 * p + 3 * s + 2];
    }
    const size_t o = ((size_t)k * NP + p) * 3;
    out[o] = e0;
    out[o + 1] = e1;
    out[o + 2] = e2;
}

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

// x *= a
__kernel void scale(const ulong N, __global real* x, const real a) {
    const size_t i = get_global_id(0);
    if (i < N) x[i] *= a;
}

// Per work-group partial sums of x.y (local size must be a power of two).
__kernel void dot_partial(const ulong N, __global const real* restrict x, __global const real* restrict y,
                          __global real* restrict partial, __local real* tmp) {
    const size_t gid = get_global_id(0);
    const uint lid = get_local_id(0);
    real acc = 0;
    for (size_t i = gid; i < N; i += get_global_size(0)) acc += x[i] * y[i];
    tmp[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) tmp[lid] += tmp[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = tmp[0];
}

// y = a*x (power iteration normalisation)
__kernel void axpy0(const ulong N, const real a, __global const real* restrict x, __global real* restrict y) {
    const size_t i = get_global_id(0);
    if (i < N) y[i] = a * x[i];
}

// Bandwidth probes: b = a (copy), a = b + s*c (triad).
__kernel void copy(const ulong N, __global const real* restrict a, __global real* restrict b) {
    const size_t i = get_global_id(0);
    if (i < N) b[i] = a[i];
}

__kernel void triad(const ulong N, __global real* restrict a, __global const real* restrict b,
                    __global const real* restrict c, const real s) {
    const size_t i = get_global_id(0);
    if (i < N) a[i] = b[i] + s * c[i];
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

// U_h += sum_j B_v[i][j] c_(e_j), vertex-major: work-item g is the i-th free half-edge slot
// of vertex v = slot_vertex[g] (slots of one vertex are consecutive). B_v is symmetric, so
// thread i reads column i, B[j*d + i]: the threads of one vertex read consecutive addresses
// for each j (coalesced), and vh[a + j] and C[...] are the same for all of them.
void vertex_block_v_one(const size_t g, __global const uint* restrict slot_vertex,
                        __global const uint* restrict vptr, __global const ulong* restrict boff,
                        __global const uint* restrict vh, __global const real* restrict B,
                        __global const real* restrict C, __global real* restrict U) {
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    const uint i = (uint)g - a;
    __global const real* bv = B + boff[v] + i;
    real acc = 0;
    for (uint j = 0; j < d; j++) acc += bv[(size_t)j * d] * C[vh[a + j] >> 1];
    U[vh[g]] += acc;
}

// Row i of a packed block bv (vertex_block_s's addressing) times the vertex's circulations,
// gathered through vh: the global-memory loop the packed kernels share.
real packed_row(__global const opreal* bv, const uint i, const uint d, const uint a,
                __global const uint* restrict vh, __global const real* restrict C) {
    const uint ci = i * (i + 1) / 2;
    real acc = 0;
    for (uint j = 0; j < d; j++) {
        const uint k = packed_at(ci, i, j);
        acc += bv[k] * C[vh[a + j] >> 1];
    }
    return acc;
}

// The same with each block packed: its upper triangle column by column, entry (j, i),
// j <= i, of vertex v at B[poff[v] + i(i+1)/2 + j] (d(d+1)/2 values instead of d^2). Thread
// i reads column i up to the diagonal (j <= i) and row i past it (j > i, the same values by
// symmetry, at j(j+1)/2 + i: consecutive across the vertex's threads). One loop with a
// selected address, so the threads of a vertex do not diverge.
void vertex_block_s_one(const size_t g, __global const uint* restrict slot_vertex,
                        __global const uint* restrict vptr, __global const ulong* restrict poff,
                        __global const uint* restrict vh, __global const opreal* restrict B,
                        __global const real* restrict C, __global real* restrict U) {
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    const uint i = (uint)g - a;
    U[vh[g]] += packed_row(B + poff[v], i, d, a, vh, C);
}

__kernel void vertex_block_s(const uint NF, __global const uint* restrict slot_vertex, __global const uint* restrict vptr,
                             __global const ulong* restrict poff, __global const uint* restrict vh,
                             __global const opreal* restrict B, __global const real* restrict C,
                             __global real* restrict U) {
    const size_t g = get_global_id(0);
    if (g >= NF) return;
    vertex_block_s_one(g, slot_vertex, vptr, poff, vh, B, C, U);
}

__kernel void vertex_block_s_idx(const uint NI, __global const uint* restrict idx,
                                 __global const uint* restrict slot_vertex, __global const uint* restrict vptr,
                                 __global const ulong* restrict poff, __global const uint* restrict vh,
                                 __global const opreal* restrict B, __global const real* restrict C,
                                 __global real* restrict U) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    vertex_block_s_one(idx[i], slot_vertex, vptr, poff, vh, B, C, U);
}

// Slot-major U (issue 19; the main job's layout where it applies): the free half-edges' DoFs stored in the factored
// dual's slot order, US[g] = U[vh[g]] for slot g < NF, and US[NF] = 0 standing for every
// half-edge that is not free (a PEC wall's, zero in a physical state). ES[2e + s] is the
// slot of half-edge 2e + s, NF when it is not free. The primal gathers the two halves of
// an edge through ES; the vertex-block update then reads and writes US[g] with consecutive
// g (coalesced) instead of U[vh[g]] scattered by edge. Same products in the same order as
// primal_sym and vertex_block_s.
void primal_sym_sm_one(const size_t n, const uint T, __global const opreal* restrict M,
                       __global const uint* restrict PE, __global const uint* restrict ES,
                       __global const real* restrict US, __global real* restrict F) {
    real s[6];
    for (int c = 0; c < 6; c++) {
        const uint x = PE[(size_t)c * T + n];
        const uint2 es = vload2(x & EDGE_MASK, ES);
        const real v = US[es.x] + US[es.y];
        s[c] = (x & ~EDGE_MASK) ? v : -v;
    }
    primal_sym_apply(n, T, M, s, F);
}

__kernel void primal_sym_sm(const uint T, __global const opreal* restrict M, __global const uint* restrict PE,
                            __global const uint* restrict ES, __global const real* restrict US,
                            __global real* restrict F) {
    const size_t n = get_global_id(0);
    if (n >= T) return;
    primal_sym_sm_one(n, T, M, PE, ES, US, F);
}

// The same with a per-tet slot table instead of the edge ids and ES: TS[2 (c T + n) + s]
// is the slot of half s of tet n's local edge c, bit 31 of its first word the edge's
// orientation (as in PE). One coalesced 8-byte load per edge replaces the edge id and the
// ES gather (a bench variant: 48 bytes per tet instead of 24 plus the ES gathers).
__kernel void primal_sym_st(const uint T, __global const opreal* restrict M,
                            __global const uint* restrict TS, __global const real* restrict US,
                            __global real* restrict F) {
    const size_t n = get_global_id(0);
    if (n >= T) return;
    real s[6];
    for (int c = 0; c < 6; c++) {
        const uint2 ts = vload2((size_t)c * T + n, TS);
        const real v = US[ts.x & EDGE_MASK] + US[ts.y];
        s[c] = (ts.x & ~EDGE_MASK) ? v : -v;
    }
    primal_sym_apply(n, T, M, s, F);
}

__kernel void vertex_block_s_sm(const uint NF, __global const uint* restrict slot_vertex,
                                __global const uint* restrict vptr, __global const ulong* restrict poff,
                                __global const uint* restrict vh, __global const opreal* restrict B,
                                __global const real* restrict C, __global real* restrict US) {
    const size_t g = get_global_id(0);
    if (g >= NF) return;
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    US[g] += packed_row(B + poff[v], (uint)g - a, d, a, vh, C);
}

// The same two on the NI tets or free slots idx[0..NI) (a partitioned rank's interface or
// interior part, whose U is slot-major too): each entity's products as in the whole launch.
__kernel void primal_sym_sm_idx(const uint T, const uint NI, __global const uint* restrict idx,
                                __global const opreal* restrict M, __global const uint* restrict PE,
                                __global const uint* restrict ES, __global const real* restrict US,
                                __global real* restrict F) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    primal_sym_sm_one(idx[i], T, M, PE, ES, US, F);
}

__kernel void vertex_block_s_sm_idx(const uint NI, __global const uint* restrict idx,
                                    __global const uint* restrict slot_vertex,
                                    __global const uint* restrict vptr, __global const ulong* restrict poff,
                                    __global const uint* restrict vh, __global const opreal* restrict B,
                                    __global const real* restrict C, __global real* restrict US) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    const uint g = idx[i];
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    US[g] += packed_row(B + poff[v], g - a, d, a, vh, C);
}

// vertex_block_s with the circulations staged in local memory: work-item g first loads its
// own slot's circulation C[vh[g] >> 1] into LC, so a vertex whose slots all lie in the
// work-group reads its d circulations from LC instead of d loads of vh and d gathers of C
// per work-item (the loop then issues one global load per block entry instead of three).
// A vertex cut by the work-group's ends reads them from global memory as vertex_block_s.
// Same products in the same order: the result equals vertex_block_s's up to the compiler's
// choice of FMA contraction (bit for bit on PoCL; 8.8e-18 apart in f64 on Intel's OpenCL CPU
// runtime; tested to round-off).
__kernel void vertex_block_sc(const uint NF, __global const uint* restrict slot_vertex,
                              __global const uint* restrict vptr, __global const ulong* restrict poff,
                              __global const uint* restrict vh, __global const opreal* restrict B,
                              __global const real* restrict C, __global real* restrict U,
                              __local real* LC) {
    const size_t g = get_global_id(0);
    const size_t g0 = get_group_id(0) * get_local_size(0);
    const uint hg = (g < NF) ? vh[g] : 0;
    if (g < NF) LC[get_local_id(0)] = C[hg >> 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g >= NF) return;
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    const uint i = (uint)g - a;
    __global const opreal* bv = B + poff[v];
    const uint ci = i * (i + 1) / 2;
    real acc = 0;
    if (a >= g0 && a + d <= g0 + get_local_size(0)) {
        __local const real* cv = LC + (a - g0);
        for (uint j = 0; j < d; j++) {
            const uint k = packed_at(ci, i, j);
            acc += bv[k] * cv[j];
        }
    } else {
        acc = packed_row(bv, i, d, a, vh, C);
    }
    U[hg] += acc;
}

// vertex_block_s with the work-group's packed blocks staged in local memory first: the
// slots g0..g0+L-1 of a work-group belong to the vertices slot_vertex[g0]..
// slot_vertex[last], whose packed blocks are one contiguous range of B. The work-group
// copies that range into SB with consecutive work-items reading consecutive values (every
// read coalesced), then each work-item reads its row from SB, as vertex_block_s does from
// global memory. A range longer than LCAP reals (vertices of high degree) is read from
// global memory as in vertex_block_s; the choice is uniform over the work-group, so the
// barrier is reached by all its work-items.
__kernel void vertex_block_sl(const uint NF, __global const uint* restrict slot_vertex,
                              __global const uint* restrict vptr, __global const ulong* restrict poff,
                              __global const uint* restrict vh, __global const opreal* restrict B,
                              __global const real* restrict C, __global real* restrict U,
                              const uint LCAP, __local real* SB) {
    const size_t g = get_global_id(0);
    const size_t g0 = get_group_id(0) * get_local_size(0);
    const size_t gl = min(g0 + get_local_size(0), (size_t)NF) - 1;
    const uint v0 = slot_vertex[g0];
    const ulong b0 = poff[v0];
    const ulong n = poff[slot_vertex[gl] + 1] - b0;
    const int staged = n <= LCAP;
    if (staged) {
        for (size_t k = get_local_id(0); k < n; k += get_local_size(0)) SB[k] = B[b0 + k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g >= NF) return;
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    const uint i = (uint)g - a;
    const uint ci = i * (i + 1) / 2;
    real acc = 0;
    if (staged) {
        __local const real* bv = SB + (poff[v] - b0);
        for (uint j = 0; j < d; j++) {
            const uint k = packed_at(ci, i, j);
            acc += bv[k] * C[vh[a + j] >> 1];
        }
    } else {
        acc = packed_row(B + poff[v], i, d, a, vh, C);
    }
    U[vh[g]] += acc;
}

// The same over blocks stored by wrapped diagonals (VertexBlocks::pack_diag): diagonal k
// (k <= d/2) of vertex v holds B[i][(i+k) mod d] at B[doff[v] + k d + i]; past d/2 the
// transposed diagonal d - k is read at (i+k) mod d. At every step the threads of a vertex
// read consecutive addresses (a rotation at most), and each its own c.
void vertex_block_d_one(const size_t g, __global const uint* restrict slot_vertex,
                        __global const uint* restrict vptr, __global const ulong* restrict doff,
                        __global const uint* restrict vh, __global const real* restrict B,
                        __global const real* restrict C, __global real* restrict U) {
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    const uint i = (uint)g - a;
    __global const real* bv = B + doff[v];
    const uint h = d / 2;
    real acc = 0;
    uint m = i; // (i + k) mod d
    for (uint k = 0; k < d; k++) {
        const uint idx = (k <= h) ? k * d + i : (d - k) * d + m;
        acc += bv[idx] * C[vh[a + m] >> 1];
        m = (m + 1 == d) ? 0 : m + 1;
    }
    U[vh[g]] += acc;
}

__kernel void vertex_block_d(const uint NF, __global const uint* restrict slot_vertex, __global const uint* restrict vptr,
                             __global const ulong* restrict doff, __global const uint* restrict vh,
                             __global const real* restrict B, __global const real* restrict C,
                             __global real* restrict U) {
    const size_t g = get_global_id(0);
    if (g >= NF) return;
    vertex_block_d_one(g, slot_vertex, vptr, doff, vh, B, C, U);
}

__kernel void vertex_block_d_idx(const uint NI, __global const uint* restrict idx,
                                 __global const uint* restrict slot_vertex, __global const uint* restrict vptr,
                                 __global const ulong* restrict doff, __global const uint* restrict vh,
                                 __global const real* restrict B, __global const real* restrict C,
                                 __global real* restrict U) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    vertex_block_d_one(idx[i], slot_vertex, vptr, doff, vh, B, C, U);
}

// Loss step (design note §12, Crank-Nicolson in sigma), first half: for every free half-edge
// row k of a lossy vertex v = LV[k], T[k] = sum_j Bhat_v[i][j] U[vh[a + j]] (its row of
// Bhat_v at LB + LR[k]). Reads U only; loss_scatter then writes T back, so no work-item
// reads a value another one has already replaced.
__kernel void loss_rows(const uint NL, __global const uint* restrict LV, __global const ulong* restrict LR,
                        __global const uint* restrict vptr, __global const uint* restrict vh,
                        __global const real* restrict LB, __global const real* restrict U,
                        __global real* restrict T) {
    const size_t k = get_global_id(0);
    if (k >= NL) return;
    const uint v = LV[k];
    const uint a = vptr[v], b = vptr[v + 1];
    __global const real* br = LB + LR[k];
    real acc = 0;
    for (uint j = a; j < b; j++) acc += br[j - a] * U[vh[j]];
    T[k] = acc;
}

// Loss step, second half: U[LH[k]] = T[k].
__kernel void loss_scatter(const uint NL, __global const uint* restrict LH, __global const real* restrict T,
                           __global real* restrict U) {
    const size_t k = get_global_id(0);
    if (k >= NL) return;
    U[LH[k]] = T[k];
}

__kernel void vertex_block_v(const uint NF, __global const uint* restrict slot_vertex, __global const uint* restrict vptr,
                             __global const ulong* restrict boff, __global const uint* restrict vh,
                             __global const real* restrict B, __global const real* restrict C,
                             __global real* restrict U) {
    const size_t g = get_global_id(0);
    if (g >= NF) return;
    vertex_block_v_one(g, slot_vertex, vptr, boff, vh, B, C, U);
}

// The same on the NI slots idx[0..NI) (the slots of a partitioned rank's interface or
// interior vertices).
__kernel void vertex_block_v_idx(const uint NI, __global const uint* restrict idx,
                                 __global const uint* restrict slot_vertex, __global const uint* restrict vptr,
                                 __global const ulong* restrict boff, __global const uint* restrict vh,
                                 __global const real* restrict B, __global const real* restrict C,
                                 __global real* restrict U) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    vertex_block_v_one(idx[i], slot_vertex, vptr, boff, vh, B, C, U);
}

// Halo packing (partitioned runs): dst[i] = src[idx[i]] (the values a neighbour needs,
// packed into one contiguous buffer) and dst[idx[i]] = src[i] (received ghost values
// put in place).
__kernel void gather(const uint N, __global const uint* restrict idx, __global const real* restrict src,
                     __global real* restrict dst) {
    const size_t i = get_global_id(0);
    if (i < N) dst[i] = src[idx[i]];
}

// Magnetic loss (σ*, design note §12): F_n ← a_n F_n on the N lossy tets idx[i] (factor
// a[i] = (1 − b)/(1 + b)), before the primal update, whose P rows carry 1/(1 + b).
__kernel void mag_loss(const uint N, const uint T, __global const uint* restrict idx,
                       __global const real* restrict a, __global real* restrict F) {
    const size_t i = get_global_id(0);
    if (i >= N) return;
    const size_t n = idx[i];
    const real s = a[i];
    for (uint k = 0; k < 4; ++k) F[(size_t)k * T + n] *= s;
}

// Dispersion (design note §13), before the dual update: U[DH[r]] -= sum_j DB[DR[r] + j] G[DO[r] + j]
// over DL[r] values, or DB[DR[r]] G[DO[r]] when DL[r] = 0 (a vertex inside one material,
// whose coupling is the scalar 1/(eps_inf + b0)). Each row writes its own U only.
__kernel void disp_correct(const uint N, __global const uint* restrict DH, __global const ulong* restrict DR,
                           __global const uint* restrict DL, __global const uint* restrict DO,
                           __global const real* restrict DB, __global const real* restrict G,
                           __global real* restrict U) {
    const size_t r = get_global_id(0);
    if (r >= N) return;
    const ulong o = DR[r];
    const uint l = DL[r], go = DO[r];
    real acc;
    if (l == 0) {
        acc = DB[o] * G[go];
    } else {
        acc = 0;
        for (uint j = 0; j < l; j++) acc += DB[o + j] * G[go + j];
    }
    U[DH[r]] -= acc;
}

// One pole of one entry in transposed direct form II (coefficients c = b0 b1 b2 a1 a2) on
// input x from the states s1, s2 (s2 = 0 when the pole is first-order): stores the new s1
// at s1p and, for a second-order pole, the new s2 at s2p; returns the change of s1. A
// first-order pole (b2 = a2 = 0, Debye) keeps s2 = 0 for ever, so its s2 is neither read
// nor written (adding 0 is exact).
real disp_pole_step(const real x, __global const real* restrict c, const real s1, const real s2,
                    const int second, __global real* s1p, __global real* s2p) {
    const real y = c[0] * x + s1;
    const real s1n = c[1] * x - c[3] * y + s2;
    if (second) *s2p = c[2] * x - c[4] * y;
    *s1p = s1n;
    return s1n - s1;
}

// Whether pole p is second-order: bit p of the host's ORD (poles from 32 on always are).
// ORD comes from the host, not from the coefficients, so that every state load can issue
// at once (a load of the coefficients in front of them made the Lorentz kernels 2.5x slower).
int disp_second(const uint ORD, const uint p) { return p >= 32 || ((ORD >> p) & 1u); }

// The poles p0 <= p < NP of entry i of a material (coefficients at co + 5p), states at
// S[s0 + (2p + q) n + i] (n entries of the material), loaded here: adds the changes of s1
// to acc.
real disp_poles_from(const uint p0, const real x, const uint NP, const uint ORD,
                     __global const real* restrict co, __global real* restrict S, const size_t s0,
                     const size_t n, const size_t i, real acc) {
    for (uint p = p0; p < NP; p++) {
        __global real* s1p = S + s0 + (size_t)(2 * p) * n + i;
        __global real* s2p = s1p + n;
        const int second = disp_second(ORD, p);
        const real s1 = *s1p;
        const real s2 = second ? *s2p : (real)0;
        acc += disp_pole_step(x, co + 5 * p, s1, s2, second, s1p, s2p);
    }
    return acc;
}

// Every pole of entry i: the change of sum s1.
real disp_pole_one(const real x, const uint NP, const uint ORD, __global const real* restrict co,
                   __global real* restrict S, const size_t s0, const size_t n, const size_t i) {
    return disp_poles_from(0, x, NP, ORD, co, S, s0, n, i, 0);
}

// Dispersion, after the dual update and the source: the N entries of one material (from
// E0 in EH/EG) run its NP poles (coefficients b0 b1 b2 a1 a2 at CF + 5p) in transposed
// direct form II on x = U[EH], states at S[S0 + (2p + q) N + i]; G[EG] = change of sum s1.
__kernel void disp_poles(const uint N, const uint NP, const uint ORD, const uint E0, const uint CF,
                         const ulong S0, __global const uint* restrict EH, __global const uint* restrict EG,
                         __global const real* restrict CO, __global real* restrict S,
                         __global const real* restrict U, __global real* restrict G) {
    const size_t i = get_global_id(0);
    if (i >= N) return;
    G[EG[E0 + i]] = disp_pole_one(U[EH[E0 + i]], NP, ORD, CO + CF, S, S0, N, i);
}

// The same on the NL entries L[0..NL) of the material (their index within it), the others
// being updated by vertex_block_vf.
__kernel void disp_poles_idx(const uint NL, const uint N, const uint NP, const uint ORD, const uint E0,
                             const uint CF,
                             const ulong S0, __global const uint* restrict L,
                             __global const uint* restrict EH, __global const uint* restrict EG,
                             __global const real* restrict CO, __global real* restrict S,
                             __global const real* restrict U, __global real* restrict G) {
    const size_t j = get_global_id(0);
    if (j >= NL) return;
    const size_t i = L[j];
    G[EG[E0 + i]] = disp_pole_one(U[EH[E0 + i]], NP, ORD, CO + CF, S, S0, N, i);
}

// The dual update with the dispersion of the "pure" vertices fused in (design note §13):
// every tet around such a vertex is of one dispersive material m, none conducts and no
// source drives it, so its correction is the scalar DB[m] = 1/(eps_inf + b0). Per slot
// g < NF: x = U - DB[m] g (disp_correct), x += sum_j B_v[i][j] c_(e_j) (vertex_block_v), then
// the material's poles on x (disp_poles), with U, the states and g each read and written
// once. The slot tables (slot_vertex, vptr, boff, vh) are those of vertex_block_v with the
// fused vertices renumbered first, so every slot here is fused (vertex_block_v_from takes
// the others). FM[v]: the vertex's material; FE[v], FG[v]: the pole entry (within the
// material) and g index of its first slot (its slots' are consecutive). MT[4m..4m+4): the
// material's state offset, entry count, pole count (low 32 bits; the pole orders' bits ORD,
// as in disp_pole_one, above) and coefficient offset. The states of the first
// DISP_PREFETCH poles, U and g are loaded before the gather loop, so that those loads are
// in flight while it runs.
#define DISP_PREFETCH 4
__kernel void vertex_block_vf(const uint NF, __global const uint* restrict slot_vertex,
                              __global const uint* restrict vptr, __global const ulong* restrict boff,
                              __global const uint* restrict vh, __global const real* restrict B,
                              __global const real* restrict C, __global real* restrict U,
                              __global const uint* restrict FM, __global const uint* restrict FE,
                              __global const uint* restrict FG, __global const ulong* restrict MT,
                              __global const real* restrict CO, __global const real* restrict DB,
                              __global real* restrict S, __global real* restrict G) {
    const size_t g = get_global_id(0);
    if (g >= NF) return;
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    const uint i = (uint)g - a;
    const uint h = vh[g];
    const uint m = FM[v];
    __global const ulong* mt = MT + 4 * (size_t)m;
    const ulong w = mt[2];
    const uint np = (uint)w, ord = (uint)(w >> 32);
    const size_t s0 = mt[0], n = mt[1];
    const size_t e = (size_t)FE[v] + i, gi = (size_t)FG[v] + i;
    real x = U[h];
    const real gold = G[gi];
    real s1v[DISP_PREFETCH], s2v[DISP_PREFETCH];
#pragma unroll
    for (uint p = 0; p < DISP_PREFETCH; p++) {
        if (p < np) {
            s1v[p] = S[s0 + (size_t)(2 * p) * n + e];
            s2v[p] = disp_second(ord, p) ? S[s0 + (size_t)(2 * p + 1) * n + e] : (real)0;
        }
    }
    __global const real* bv = B + boff[v] + i;
    real acc = 0;
    for (uint j = 0; j < d; j++) acc += bv[(size_t)j * d] * C[vh[a + j] >> 1];
    x -= DB[m] * gold;
    x += acc;
    U[h] = x;
    __global const real* co = CO + mt[3];
    real sum = 0;
#pragma unroll
    for (uint p = 0; p < DISP_PREFETCH; p++) {
        if (p < np) {
            __global real* s1p = S + s0 + (size_t)(2 * p) * n + e;
            sum += disp_pole_step(x, co + 5 * p, s1v[p], s2v[p], disp_second(ord, p), s1p, s1p + n);
        }
    }
    // poles past the prefetched ones (a material with more than DISP_PREFETCH poles)
    sum = disp_poles_from(DISP_PREFETCH, x, np, ord, co, S, s0, n, e, sum);
    G[gi] = sum;
}

// vertex_block_v on the slots G0 <= g < NF (the slots vertex_block_vf does not take, in its
// renumbered tables).
__kernel void vertex_block_v_from(const uint G0, const uint NF, __global const uint* restrict slot_vertex,
                                  __global const uint* restrict vptr, __global const ulong* restrict boff,
                                  __global const uint* restrict vh, __global const real* restrict B,
                                  __global const real* restrict C, __global real* restrict U) {
    const size_t g = G0 + get_global_id(0);
    if (g >= NF) return;
    vertex_block_v_one(g, slot_vertex, vptr, boff, vh, B, C, U);
}

// Running discrete Fourier transform of a state vector X (N values) at M frequencies
// (mode shapes): for each m, ACC[2mN + i] += Re(P_m) X_i and ACC[(2m+1)N + i] += Im(P_m) X_i,
// P holding this step's M phase factors as (re, im) pairs. Real and imaginary planes are
// separate so that neighbouring work-items touch neighbouring words.
__kernel void dft_acc(const uint N, const uint M, __global const real* restrict P,
                      __global const real* restrict X, __global real* restrict ACC) {
    const size_t i = get_global_id(0);
    if (i >= N) return;
    const real x = X[i];
    for (uint m = 0; m < M; ++m) {
        const size_t re = (size_t)(2 * m) * N + i;
        ACC[re] += P[2 * m] * x;
        ACC[re + N] += P[2 * m + 1] * x;
    }
}

// dst[to[i]] = src[from[i]]: a partitioned rank's ghost half-edges in and out of slot-major
// U (ClStepper::set_ghost_halves).
__kernel void copy_idx(const uint N, __global const uint* restrict from, __global const uint* restrict to,
                       __global const real* restrict src, __global real* restrict dst) {
    const size_t i = get_global_id(0);
    if (i < N) dst[to[i]] = src[from[i]];
}

__kernel void scatter(const uint N, __global const uint* restrict idx, __global const real* restrict src,
                      __global real* restrict dst) {
    const size_t i = get_global_id(0);
    if (i < N) dst[idx[i]] = src[i];
}

// Vectorised bandwidth probes: 4 elements per work-item (N a multiple of 4).
__kernel void copy4(const ulong N4, __global const real* restrict a, __global real* restrict b) {
    const size_t i = get_global_id(0);
    if (i < N4) vstore4(vload4(i, a), i, b);
}

__kernel void triad4(const ulong N4, __global real* restrict a, __global const real* restrict b,
                     __global const real* restrict c, const real s) {
    const size_t i = get_global_id(0);
    if (i < N4) vstore4(vload4(i, b) + s * vload4(i, c), i, a);
}

// Floating-point peak probe (the bench's "fma" row): 8 independent multiply-add chains of
// ITERS steps per work-item (16 flops a step), their sum written so that none is dropped.
// a < 1 and b small keep the values bounded.
__kernel void fma_peak(const uint N, const uint ITERS, const real a, const real b,
                       __global real* restrict out) {
    const size_t g = get_global_id(0);
    if (g >= N) return;
    real x0 = (real)(g & 1023) * (real)1e-3, x1 = x0 + (real)0.1, x2 = x0 + (real)0.2,
         x3 = x0 + (real)0.3, x4 = x0 + (real)0.4, x5 = x0 + (real)0.5, x6 = x0 + (real)0.6,
         x7 = x0 + (real)0.7;
    for (uint i = 0; i < ITERS; i++) {
        x0 = fma(x0, a, b);
        x1 = fma(x1, a, b);
        x2 = fma(x2, a, b);
        x3 = fma(x3, a, b);
        x4 = fma(x4, a, b);
        x5 = fma(x5, a, b);
        x6 = fma(x6, a, b);
        x7 = fma(x7, a, b);
    }
    out[g] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
