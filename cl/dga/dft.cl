// Running Fourier transforms of the state (mode shapes).

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
