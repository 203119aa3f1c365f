// The default kernels on slot-major U (backend::opencl::slot_major).

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
