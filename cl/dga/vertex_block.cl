// Second half of the factored dual update: U += B c with the per-vertex blocks
// B_v = dt Meps_v^-1, vertex-major over packed (default) or full blocks (the fused
// dispersion's layout), and their index subsets.

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
