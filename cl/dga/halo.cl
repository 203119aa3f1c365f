// Halo packing and ghost moves of a partitioned rank.

// Halo packing (partitioned runs): dst[i] = src[idx[i]] (the values a neighbour needs,
// packed into one contiguous buffer) and dst[idx[i]] = src[i] (received ghost values
// put in place).
__kernel void gather(const uint N, __global const uint* restrict idx, __global const real* restrict src,
                     __global real* restrict dst) {
    const size_t i = get_global_id(0);
    if (i < N) dst[i] = src[idx[i]];
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
