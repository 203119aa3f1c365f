// Operator assembly on the device (issue 19, seed 003): the hexahedral mass matrices of the
// barycentric dual complex and their local inverses, in double precision, in the host's
// layouts (src/dga/mod.rs), so that the two paths can be compared entry by entry. Built with
// no -D options; needs cl_khr_fp64.
//
// Geometry (src/complex.rs, design note §3): tet n has vertices x[0..4] (positively
// oriented), barycentre b, face barycentres g[k] (face opposite local vertex k), edge
// midpoints m[l] (LOCAL_EDGES[l]). The hexahedron of local vertex i has
//   primal half-edge vectors a_s = ±(m[l_s] - x[i]), l_s = local_edge(i, o_s), o = the other
//     three local vertices ascending, + when v[i] < v[o_s] (the edge starts at i);
//   dual half-edge vectors   ã_s = g[o_s] - b (the faces containing i are those opposite o_s);
//   volume |tet| / 4.
// Its local mass is  s (GᵀG)⁻¹  for the 3 column vectors G of a (Meps, s = ε |tet|/4) or of
// ã (Mmu, s = μ |tet|/4). The 3x3 inverse is the adjugate over the determinant (exactly
// symmetric); the host uses a Cholesky inverse, so the two agree to round-off, not bit for
// bit.
//
// Layouts:
//   nodes[3v + c], tets[4n + j], tet_edges[6n + l], eps[n], mu[n]    (host arrays as they are)
//   mmu[16n + 4r + c]               Mmu_n, row-major (Dga::mmu; written when full != 0)
//   mmu_inv[10n + SYM4[r][c]]       Mmu_n⁻¹'s upper triangle row by row (Dga::mmu_inv)
//   vt[vt_ptr[v] .. vt_ptr[v+1]]    (n << 2) | i for every tet n with v as local vertex i,
//                                   ascending n (the host's summation order)
//   h[ptr[v] .. ptr[v+1]]            free half-edges of v (2e + (v is e's end)), ascending e
//   blk[off[v] .. off[v] + d*d]      Meps_v⁻¹ (Dga::meps_inv), or Meps_v when invert == 0
//                                   (Dga::meps), row-major d x d
//   bad[0]                          the least failing tet (mmu) or vertex (meps), else 0xffffffff

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#else
#error "operator assembly needs cl_khr_fp64, which this device does not report"
#endif

// LOCAL_EDGES of src/mesh/topology.rs: [[0,1],[0,2],[0,3],[1,2],[1,3],[2,3]].
int local_edge(const int i, const int j) {
    const int a = min(i, j), b = max(i, j);
    return a == 0 ? b - 1 : (a == 1 ? b + 1 : 5);
}

// The three local vertices other than i, ascending.
int other(const int i, const int s) { return s < i ? s : s + 1; }

void load_tet(__global const double* restrict nodes, __global const uint* restrict tets,
              const size_t n, double x[4][3], uint v[4]) {
    for (int j = 0; j < 4; j++) {
        v[j] = tets[4 * n + j];
        for (int c = 0; c < 3; c++) x[j][c] = nodes[3 * (size_t)v[j] + c];
    }
}

double tet_volume(const double x[4][3]) {
    double p[3], q[3], r[3];
    for (int c = 0; c < 3; c++) {
        p[c] = x[1][c] - x[0][c];
        q[c] = x[2][c] - x[0][c];
        r[c] = x[3][c] - x[0][c];
    }
    // det3(p, q, r) = p · (q × r) (src/util.rs)
    return (p[0] * (q[1] * r[2] - q[2] * r[1]) - p[1] * (q[0] * r[2] - q[2] * r[0]) +
            p[2] * (q[0] * r[1] - q[1] * r[0])) /
           6.0;
}

// s (GᵀG)⁻¹ for the columns a[0..3]; returns 0 when GᵀG is singular (or not finite).
int gram_inverse(const double a[3][3], const double s, double m[3][3]) {
    double g[3][3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) g[r][c] = a[r][0] * a[c][0] + a[r][1] * a[c][1] + a[r][2] * a[c][2];
    const double c00 = g[1][1] * g[2][2] - g[1][2] * g[2][1];
    const double c01 = g[1][2] * g[2][0] - g[1][0] * g[2][2];
    const double c02 = g[1][0] * g[2][1] - g[1][1] * g[2][0];
    const double det = g[0][0] * c00 + g[0][1] * c01 + g[0][2] * c02;
    if (!(det > 0.0) || !isfinite(det)) return 0;
    const double k = s / det;
    m[0][0] = c00 * k;
    m[0][1] = m[1][0] = c01 * k;
    m[0][2] = m[2][0] = c02 * k;
    m[1][1] = (g[0][0] * g[2][2] - g[0][2] * g[2][0]) * k;
    m[1][2] = m[2][1] = (g[0][2] * g[1][0] - g[0][0] * g[1][2]) * k;
    m[2][2] = (g[0][0] * g[1][1] - g[0][1] * g[1][0]) * k;
    return 1;
}

// Mmu_n = Σ_i (hexahedron i's μ mass on its 3 faces) and its inverse by Cholesky, one
// work-item per tet.
__kernel void assemble_mmu(const uint T, __global const double* restrict nodes,
                           __global const uint* restrict tets, __global const double* restrict mu,
                           const uint full, __global double* restrict mmu,
                           __global double* restrict mmu_inv, __global uint* restrict bad) {
    const size_t n = get_global_id(0);
    if (n >= T) return;
    double x[4][3];
    uint v[4];
    load_tet(nodes, tets, n, x, v);
    const double s = mu[n] * tet_volume(x) / 4.0;
    double b[3], g[4][3];
    for (int c = 0; c < 3; c++) b[c] = ((x[0][c] + x[1][c]) + (x[2][c] + x[3][c])) * 0.25;
    // FACE_CYCLE[k] holds the three vertices other than k; their sum is order-free, but the
    // host adds them in the cycle's order, kept here: [[1,2,3],[0,3,2],[0,1,3],[0,2,1]].
    const int cyc[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 3; c++)
            g[k][c] = (x[cyc[k][0]][c] + x[cyc[k][1]][c] + x[cyc[k][2]][c]) * (1.0 / 3.0);
    double M[4][4];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) M[r][c] = 0.0;
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        double at[3][3], m[3][3];
        int f[3];
        for (int q = 0; q < 3; q++) {
            f[q] = other(i, q);
            for (int c = 0; c < 3; c++) at[q][c] = g[f[q]][c] - b[c];
        }
        ok &= gram_inverse(at, s, m);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) M[f[r]][f[c]] += m[r][c];
    }
    if (full)
        for (int k = 0; k < 16; k++) mmu[16 * n + k] = M[k / 4][k % 4];
    // Cholesky M = L Lᵀ (L in the lower triangle), then M⁻¹ = L⁻ᵀ L⁻¹.
    for (int j = 0; j < 4 && ok; j++) {
        double d = M[j][j];
        for (int k = 0; k < j; k++) d -= M[j][k] * M[j][k];
        if (!(d > 0.0)) {
            ok = 0;
            break;
        }
        M[j][j] = sqrt(d);
        for (int r = j + 1; r < 4; r++) {
            double t = M[r][j];
            for (int k = 0; k < j; k++) t -= M[r][k] * M[j][k];
            M[r][j] = t / M[j][j];
        }
    }
    if (!ok) {
        atomic_min(bad, (uint)n);
        for (int k = 0; k < 10; k++) mmu_inv[10 * n + k] = 0.0;
        return;
    }
    double Li[4][4];  // L⁻¹, lower
    for (int j = 0; j < 4; j++) {
        for (int r = 0; r < 4; r++) Li[r][j] = 0.0;
        Li[j][j] = 1.0 / M[j][j];
        for (int r = j + 1; r < 4; r++) {
            double t = 0.0;
            for (int k = j; k < r; k++) t += M[r][k] * Li[k][j];
            Li[r][j] = -t / M[r][r];
        }
    }
    int w = 0;
    for (int r = 0; r < 4; r++)
        for (int c = r; c < 4; c++) {
            double t = 0.0;
            for (int k = c; k < 4; k++) t += Li[k][r] * Li[k][c];
            mmu_inv[10 * n + w++] = t;
        }
}

// Meps_v over the free half-edges of v and its inverse, one work-item per vertex: the block
// is summed in place in blk (in the host's order: tets ascending, then rows and columns of
// each hexahedral matrix), factored by Cholesky in its lower triangle, L⁻¹ formed in place,
// and L⁻ᵀ L⁻¹ written to the upper triangle and mirrored, so the result is exactly
// symmetric (a kernel may read row i as column i).
__kernel void assemble_meps(const uint V, __global const double* restrict nodes,
                            __global const uint* restrict tets,
                            __global const uint* restrict tet_edges,
                            __global const double* restrict eps,
                            __global const ulong* restrict vt_ptr, __global const uint* restrict vt,
                            __global const ulong* restrict ptr, __global const uint* restrict h,
                            __global const ulong* restrict off, const uint invert,
                            __global double* restrict blk, __global uint* restrict bad) {
    const size_t v = get_global_id(0);
    if (v >= V) return;
    const size_t p0 = ptr[v];
    const int d = (int)(ptr[v + 1] - p0);
    if (d == 0) return;
    __global double* B = blk + off[v];
    __global const uint* hs = h + p0;
    for (int k = 0; k < d * d; k++) B[k] = 0.0;
    for (size_t q = vt_ptr[v]; q < vt_ptr[v + 1]; q++) {
        const size_t n = vt[q] >> 2;
        const int i = (int)(vt[q] & 3u);
        const double k = eps[n];
        if (k == 0.0) continue;
        double x[4][3];
        uint tv[4];
        load_tet(nodes, tets, n, x, tv);
        double a[3][3], m[3][3];
        int loc[3];
        for (int s = 0; s < 3; s++) {
            const int o = other(i, s);
            const int l = local_edge(i, o);
            const double sg = tv[i] < tv[o] ? 1.0 : -1.0;
            for (int c = 0; c < 3; c++) a[s][c] = sg * (0.5 * (x[min(i, o)][c] + x[max(i, o)][c]) - x[i][c]);
            // the half-edge of this edge at v: 2e when v is its start (lower id), 2e + 1 else
            const uint slot = 2u * tet_edges[6 * n + l] + (tv[i] < tv[o] ? 0u : 1u);
            loc[s] = -1;
            for (int r = 0; r < d; r++)
                if (hs[r] == slot) loc[s] = r;
        }
        if (!gram_inverse(a, k * tet_volume(x) / 4.0, m)) {
            atomic_min(bad, (uint)v);
            return;
        }
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                if (loc[r] >= 0 && loc[c] >= 0) B[loc[r] * d + loc[c]] += m[r][c];
    }
    if (!invert) return;
    // Cholesky in the lower triangle.
    for (int j = 0; j < d; j++) {
        double t = B[j * d + j];
        for (int k = 0; k < j; k++) t -= B[j * d + k] * B[j * d + k];
        if (!(t > 0.0)) {
            atomic_min(bad, (uint)v);
            return;
        }
        const double ljj = sqrt(t);
        B[j * d + j] = ljj;
        for (int r = j + 1; r < d; r++) {
            double u = B[r * d + j];
            for (int k = 0; k < j; k++) u -= B[r * d + k] * B[j * d + k];
            B[r * d + j] = u / ljj;
        }
    }
    // L⁻¹ in place, column by column ascending: Li_rj = -(Σ_{j≤k<r} L_rk Li_kj) / L_rr reads
    // L_rj (still in place), L's columns > j (not yet replaced), the rows of column j already
    // computed and Li_jj = 1 / L_jj, stored on the diagonal first.
    for (int j = 0; j < d; j++) {
        const double ljj = B[j * d + j];
        B[j * d + j] = 1.0 / ljj;
        for (int r = j + 1; r < d; r++) {
            double t = 0.0;
            for (int k = j; k < r; k++) t += B[r * d + k] * B[k * d + j];
            B[r * d + j] = -t / B[r * d + r];
        }
    }
    // (L⁻ᵀ L⁻¹)_{rc} = Σ_{k ≥ c} Li_{kr} Li_{kc} for r ≤ c, written over the upper triangle
    // (which L⁻¹ does not use) row by row ascending, then mirrored. The diagonal (r, r) is
    // overwritten last among the entries that read Li_rr: (r', r) for r' < r in earlier rows
    // and (r, r) itself, read before it is written.
    for (int r = 0; r < d; r++)
        for (int c = r; c < d; c++) {
            double t = 0.0;
            for (int k = c; k < d; k++) t += B[k * d + r] * B[k * d + c];
            B[r * d + c] = t;
        }
    for (int r = 0; r < d; r++)
        for (int c = 0; c < r; c++) B[r * d + c] = B[c * d + r];
}

// The values of the CSR matrix  Δt Meps⁻¹ C̃  (src/dga/operators.rs, CsrLayout): the COO
// terms ±Meps⁻¹_v[i][j] of each row grouped by column, each group summed (the duplicate
// summation). One work-item per block row p (half-edge h[p], local index i of vertex
// row_vertex[p]); its k-th entry sums the terms ent[seg[s]..seg[s+1]], s = seg_base[v] + k,
// each (j << 1) | negative, in the host's order. Each term is an entry or its negation
// (exact), so the sums equal the host's for the same blocks.
__kernel void csr_values(const uint R, __global const uint* restrict row_vertex,
                         __global const ulong* restrict ptr, __global const uint* restrict h,
                         __global const ulong* restrict off, __global const double* restrict inv,
                         __global const ulong* restrict seg_base,
                         __global const ulong* restrict seg, __global const uint* restrict ent,
                         __global const ulong* restrict indptr, const double dt,
                         __global double* restrict data) {
    const uint p = get_global_id(0);
    if (p >= R) return;
    const uint v = row_vertex[p];
    const ulong p0 = ptr[v];
    const ulong d = ptr[v + 1] - p0;
    __global const double* b = inv + off[v] + (p - p0) * d;
    ulong out = indptr[h[p]];
    for (ulong s = seg_base[v]; s < seg_base[v + 1]; ++s, ++out) {
        double sum = 0.0;
        for (ulong e = seg[s]; e < seg[s + 1]; ++e) {
            const uint x = ent[e];
            const double bij = b[x >> 1];
            sum += (x & 1u) ? -bij : bij;
        }
        data[out] = dt * sum;
    }
}
