// The circulations c = C~ F through sliced ELL lists, bench variants of the first half of
// the factored dual update (backend::opencl::sell, `dgatd bench` rows `circulation_sell`,
// `circulation_pair_sell`): chunks of 32 edges, each chunk's lists interleaved word by word
// and padded to its longest. Uses `pair_add` of circulation.cl.

// The circulations with the lists in sliced ELL form: edge e = 32 c + l finds its
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
