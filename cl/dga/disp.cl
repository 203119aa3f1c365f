// Dispersion (design note §13): the correction, the pole step, and the dual update with
// the pure vertices' dispersion fused in.

// Dispersion (design note §13), before the dual update: U[DH[r]] -= sum_j DB[DR[r] + j] G[DO[r] + j]
// over DL[r] values, or DB[DR[r]] G[DO[r]] when DL[r] = 0 (a vertex inside one material,
// whose coupling is the scalar 1/(eps_inf + b0)). Each row writes its own U only.
__kernel void disp_correct(const uint N, __global const uint* restrict DH, __global const ulong* restrict DR,
                           __global const uint* restrict DL, __global const uint* restrict DO,
                           __global const real* restrict DB, __global const real* restrict G,
                           __global real* restrict U) {
    const size_t r = get_global_id(0);
    if (r >= N) return;
    const ulong o = DR[r];
    const uint l = DL[r], go = DO[r];
    real acc;
    if (l == 0) {
        acc = DB[o] * G[go];
    } else {
        acc = 0;
        for (uint j = 0; j < l; j++) acc += DB[o + j] * G[go + j];
    }
    U[DH[r]] -= acc;
}

// One pole of one entry in transposed direct form II (coefficients c = b0 b1 b2 a1 a2) on
// input x from the states s1, s2 (s2 = 0 when the pole is first-order): stores the new s1
// at s1p and, for a second-order pole, the new s2 at s2p; returns the change of s1. A
// first-order pole (b2 = a2 = 0, Debye) keeps s2 = 0 for ever, so its s2 is neither read
// nor written (adding 0 is exact).
real disp_pole_step(const real x, __global const real* restrict c, const real s1, const real s2,
                    const int second, __global real* s1p, __global real* s2p) {
    const real y = c[0] * x + s1;
    const real s1n = c[1] * x - c[3] * y + s2;
    if (second) *s2p = c[2] * x - c[4] * y;
    *s1p = s1n;
    return s1n - s1;
}

// Whether pole p is second-order: bit p of the host's ORD (poles from 32 on always are).
// ORD comes from the host, not from the coefficients, so that every state load can issue
// at once (a load of the coefficients in front of them made the Lorentz kernels 2.5x slower).
int disp_second(const uint ORD, const uint p) { return p >= 32 || ((ORD >> p) & 1u); }

// The poles p0 <= p < NP of entry i of a material (coefficients at co + 5p), states at
// S[s0 + (2p + q) n + i] (n entries of the material), loaded here: adds the changes of s1
// to acc.
real disp_poles_from(const uint p0, const real x, const uint NP, const uint ORD,
                     __global const real* restrict co, __global real* restrict S, const size_t s0,
                     const size_t n, const size_t i, real acc) {
    for (uint p = p0; p < NP; p++) {
        __global real* s1p = S + s0 + (size_t)(2 * p) * n + i;
        __global real* s2p = s1p + n;
        const int second = disp_second(ORD, p);
        const real s1 = *s1p;
        const real s2 = second ? *s2p : (real)0;
        acc += disp_pole_step(x, co + 5 * p, s1, s2, second, s1p, s2p);
    }
    return acc;
}

// Every pole of entry i: the change of sum s1.
real disp_pole_one(const real x, const uint NP, const uint ORD, __global const real* restrict co,
                   __global real* restrict S, const size_t s0, const size_t n, const size_t i) {
    return disp_poles_from(0, x, NP, ORD, co, S, s0, n, i, 0);
}

// Dispersion, after the dual update and the source: the N entries of one material (from
// E0 in EH/EG) run its NP poles (coefficients b0 b1 b2 a1 a2 at CF + 5p) in transposed
// direct form II on x = U[EH], states at S[S0 + (2p + q) N + i]; G[EG] = change of sum s1.
__kernel void disp_poles(const uint N, const uint NP, const uint ORD, const uint E0, const uint CF,
                         const ulong S0, __global const uint* restrict EH, __global const uint* restrict EG,
                         __global const real* restrict CO, __global real* restrict S,
                         __global const real* restrict U, __global real* restrict G) {
    const size_t i = get_global_id(0);
    if (i >= N) return;
    G[EG[E0 + i]] = disp_pole_one(U[EH[E0 + i]], NP, ORD, CO + CF, S, S0, N, i);
}

// The same on the NL entries L[0..NL) of the material (their index within it), the others
// being updated by vertex_block_vf.
__kernel void disp_poles_idx(const uint NL, const uint N, const uint NP, const uint ORD, const uint E0,
                             const uint CF,
                             const ulong S0, __global const uint* restrict L,
                             __global const uint* restrict EH, __global const uint* restrict EG,
                             __global const real* restrict CO, __global real* restrict S,
                             __global const real* restrict U, __global real* restrict G) {
    const size_t j = get_global_id(0);
    if (j >= NL) return;
    const size_t i = L[j];
    G[EG[E0 + i]] = disp_pole_one(U[EH[E0 + i]], NP, ORD, CO + CF, S, S0, N, i);
}

// The dual update with the dispersion of the "pure" vertices fused in (design note §13):
// every tet around such a vertex is of one dispersive material m, none conducts and no
// source drives it, so its correction is the scalar DB[m] = 1/(eps_inf + b0). Per slot
// g < NF: x = U - DB[m] g (disp_correct), x += sum_j B_v[i][j] c_(e_j) (vertex_block_v), then
// the material's poles on x (disp_poles), with U, the states and g each read and written
// once. The slot tables (slot_vertex, vptr, boff, vh) are those of vertex_block_v with the
// fused vertices renumbered first, so every slot here is fused (vertex_block_v_from takes
// the others). FM[v]: the vertex's material; FE[v], FG[v]: the pole entry (within the
// material) and g index of its first slot (its slots' are consecutive). MT[4m..4m+4): the
// material's state offset, entry count, pole count (low 32 bits; the pole orders' bits ORD,
// as in disp_pole_one, above) and coefficient offset. The states of the first
// DISP_PREFETCH poles, U and g are loaded before the gather loop, so that those loads are
// in flight while it runs.
#define DISP_PREFETCH 4
__kernel void vertex_block_vf(const uint NF, __global const uint* restrict slot_vertex,
                              __global const uint* restrict vptr, __global const ulong* restrict boff,
                              __global const uint* restrict vh, __global const real* restrict B,
                              __global const real* restrict C, __global real* restrict U,
                              __global const uint* restrict FM, __global const uint* restrict FE,
                              __global const uint* restrict FG, __global const ulong* restrict MT,
                              __global const real* restrict CO, __global const real* restrict DB,
                              __global real* restrict S, __global real* restrict G) {
    const size_t g = get_global_id(0);
    if (g >= NF) return;
    const uint v = slot_vertex[g];
    const uint a = vptr[v];
    const uint d = vptr[v + 1] - a;
    const uint i = (uint)g - a;
    const uint h = vh[g];
    const uint m = FM[v];
    __global const ulong* mt = MT + 4 * (size_t)m;
    const ulong w = mt[2];
    const uint np = (uint)w, ord = (uint)(w >> 32);
    const size_t s0 = mt[0], n = mt[1];
    const size_t e = (size_t)FE[v] + i, gi = (size_t)FG[v] + i;
    real x = U[h];
    const real gold = G[gi];
    real s1v[DISP_PREFETCH], s2v[DISP_PREFETCH];
#pragma unroll
    for (uint p = 0; p < DISP_PREFETCH; p++) {
        if (p < np) {
            s1v[p] = S[s0 + (size_t)(2 * p) * n + e];
            s2v[p] = disp_second(ord, p) ? S[s0 + (size_t)(2 * p + 1) * n + e] : (real)0;
        }
    }
    __global const real* bv = B + boff[v] + i;
    real acc = 0;
    for (uint j = 0; j < d; j++) acc += bv[(size_t)j * d] * C[vh[a + j] >> 1];
    x -= DB[m] * gold;
    x += acc;
    U[h] = x;
    __global const real* co = CO + mt[3];
    real sum = 0;
#pragma unroll
    for (uint p = 0; p < DISP_PREFETCH; p++) {
        if (p < np) {
            __global real* s1p = S + s0 + (size_t)(2 * p) * n + e;
            sum += disp_pole_step(x, co + 5 * p, s1v[p], s2v[p], disp_second(ord, p), s1p, s1p + n);
        }
    }
    // poles past the prefetched ones (a material with more than DISP_PREFETCH poles)
    sum = disp_poles_from(DISP_PREFETCH, x, np, ord, co, S, s0, n, e, sum);
    G[gi] = sum;
}

// vertex_block_v on the slots G0 <= g < NF (the slots vertex_block_vf does not take, in its
// renumbered tables).
__kernel void vertex_block_v_from(const uint G0, const uint NF, __global const uint* restrict slot_vertex,
                                  __global const uint* restrict vptr, __global const ulong* restrict boff,
                                  __global const uint* restrict vh, __global const real* restrict B,
                                  __global const real* restrict C, __global real* restrict U) {
    const size_t g = G0 + get_global_id(0);
    if (g >= NF) return;
    vertex_block_v_one(g, slot_vertex, vptr, boff, vh, B, C, U);
}
