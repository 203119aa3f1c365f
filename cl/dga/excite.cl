// The source term and the probes.

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
