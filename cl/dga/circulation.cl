// First half of the factored dual update: the circulations c = C~ F of every edge's dual
// face (lists, paired entries, index subsets; the sliced ELL forms are in sell.cl).

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

// The same on the NI edges idx[0..NI).
__kernel void circulation_idx(const uint NI, __global const uint* restrict idx, __global const uint* restrict ptr,
                              __global const uint* restrict circ, __global const real* restrict F,
                              __global real* restrict C) {
    const size_t i = get_global_id(0);
    if (i >= NI) return;
    circulation_one(idx[i], ptr, circ, F, C);
}
