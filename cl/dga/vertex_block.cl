// Second half of the factored dual update: U += B c with the per-vertex blocks
// B_v = dt Meps_v^-1, by half-edge, vertex-major over full, packed (default) or diagonal
// blocks, with local staging forms, and their index subsets.

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
