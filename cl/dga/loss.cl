// Losses (design note §12): the loss step of the conducting vertices and the magnetic
// loss of the sigma* tets.

// Loss step (design note §12, Crank-Nicolson in sigma), first half: for every free half-edge
// row k of a lossy vertex v = LV[k], T[k] = sum_j Bhat_v[i][j] U[vh[a + j]] (its row of
// Bhat_v at LB + LR[k]). Reads U only; loss_scatter then writes T back, so no work-item
// reads a value another one has already replaced.
__kernel void loss_rows(const uint NL, __global const uint* restrict LV, __global const ulong* restrict LR,
                        __global const uint* restrict vptr, __global const uint* restrict vh,
                        __global const real* restrict LB, __global const real* restrict U,
                        __global real* restrict T) {
    const size_t k = get_global_id(0);
    if (k >= NL) return;
    const uint v = LV[k];
    const uint a = vptr[v], b = vptr[v + 1];
    __global const real* br = LB + LR[k];
    real acc = 0;
    for (uint j = a; j < b; j++) acc += br[j - a] * U[vh[j]];
    T[k] = acc;
}

// Loss step, second half: U[LH[k]] = T[k].
__kernel void loss_scatter(const uint NL, __global const uint* restrict LH, __global const real* restrict T,
                           __global real* restrict U) {
    const size_t k = get_global_id(0);
    if (k >= NL) return;
    U[LH[k]] = T[k];
}

// Magnetic loss (σ*, design note §12): F_n ← a_n F_n on the N lossy tets idx[i] (factor
// a[i] = (1 − b)/(1 + b)), before the primal update, whose P rows carry 1/(1 + b).
__kernel void mag_loss(const uint N, const uint T, __global const uint* restrict idx,
                       __global const real* restrict a, __global real* restrict F) {
    const size_t i = get_global_id(0);
    if (i >= N) return;
    const size_t n = idx[i];
    const real s = a[i];
    for (uint k = 0; k < 4; ++k) F[(size_t)k * T + n] *= s;
}
