// The bench's bandwidth and peak probes (dgatd bench): not used by a run.

// a = b + s*c (the bench's triad probe).
__kernel void triad(const ulong N, __global real* restrict a, __global const real* restrict b,
                    __global const real* restrict c, const real s) {
    const size_t i = get_global_id(0);
    if (i < N) a[i] = b[i] + s * c[i];
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
