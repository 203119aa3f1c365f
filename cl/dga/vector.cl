// Vector operations of the power iteration and the energy.

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

// b = a (saving and restoring F; also the bench's copy probe).
__kernel void copy(const ulong N, __global const real* restrict a, __global real* restrict b) {
    const size_t i = get_global_id(0);
    if (i < N) b[i] = a[i];
}
