// The operators assembled on the device (cl/assembly/assemble.cl, f64) converted into the
// stepper's resident layouts (cl/dga/*.cl) in precision REAL, so that they never leave the device
// (issue 19: backend::device_assembly::resident). Built with -D REAL=double|float; needs
// cl_khr_fp64 for the f64 input, as the assembly itself.
//
// Layouts:
//   mmu_inv[10n + k]                 Mmu_n⁻¹'s upper triangle row by row (assemble_mmu)
//   M[k*TP + n]                      the same, column-major across tets (primal_sym; TP the stepper's tet stride)
//   full[off[v] .. off[v] + d*d]     Meps_v⁻¹ row-major d x d, d = ptr[v+1] - ptr[v]
//                                    (assemble_meps)
//   packed[poff[v] + i(i+1)/2 + j]   entry (j, i), j <= i, of the same block: its upper
//                                    triangle column by column (vertex_block_s,
//                                    VertexBlocks::pack)
// The conversion (REAL)x rounds to nearest, as the host's `as f32`, so the packed values
// equal the host's packing of the same f64 operators bit for bit.

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#else
#error "packing the assembled operators needs cl_khr_fp64, which this device does not report"
#endif
typedef REAL real;

// One work-item per column entry (TP >= T, the stepper's tet stride): zero at the padding
// tets n >= T.
__kernel void pack_primal_sym(const uint T, const uint TP, __global const double* restrict mmu_inv,
                              __global real* restrict M) {
    const size_t n = get_global_id(0);
    if (n >= TP) return;
    for (int k = 0; k < 10; k++) M[(size_t)k * TP + n] = n < T ? (real)mmu_inv[10 * n + k] : (real)0;
}

// The masses themselves (for the power iteration and the energy on the device, where the
// host keeps no operators): Mmu_n (mmu[16n + 4r + c], row-major, assemble_mmu with full != 0)
// as its upper triangle row by row in columns of TP (the energy's sym4_apply layout, the order
// of dga::SYM4_RC), zero at the padding tets.
__kernel void pack_sym16(const uint T, const uint TP, __global const double* restrict mmu,
                         __global real* restrict M) {
    const size_t n = get_global_id(0);
    if (n >= TP) return;
    const uchar rc[10] = {0, 1, 2, 3, 5, 6, 7, 10, 11, 15};
    for (int k = 0; k < 10; k++) M[(size_t)k * TP + n] = n < T ? (real)mmu[16 * n + rc[k]] : (real)0;
}

// x converted to REAL element by element (the full Meps blocks of the power iteration).
__kernel void pack_real(const ulong N, __global const double* restrict x, __global real* restrict y) {
    const size_t i = get_global_id(0);
    if (i < N) y[i] = (real)x[i];
}

// One work-item per vertex.
__kernel void pack_blocks_tri(const uint NV, __global const ulong* restrict ptr,
                              __global const ulong* restrict off, __global const ulong* restrict poff,
                              __global const double* restrict full, __global real* restrict packed) {
    const size_t v = get_global_id(0);
    if (v >= NV) return;
    const uint d = (uint)(ptr[v + 1] - ptr[v]);
    __global const double* b = full + off[v];
    __global real* p = packed + poff[v];
    for (uint i = 0; i < d; i++) {
        const uint ci = i * (i + 1) / 2;
        for (uint j = 0; j <= i; j++) p[ci + j] = (real)b[(size_t)j * d + i];
    }
}

// ---------------------------------------------------------------------------------------
// The CSR form's matrix Δt Meps⁻¹ C̃ built on the device in the stepper's layout: the
// structure (row lengths, their scan into row pointers, the columns) and the values, from
// the block layout and the full inverse blocks left by assemble_meps, with no host pass.
//
// Row h (a free half-edge of vertex v, row i of v's block B_v, d = ptr[v+1] - ptr[v]) has
// one entry per dual DoF F(n, k) that the dual circulations of v's edges touch. An edge
// (v, w) lies only in tets containing v, and inside tet n (v at local vertex a) the dual
// face of local edge (a, m) runs between the dual half-edges of the two faces that contain
// the edge, the faces opposite the other two local vertices. So the columns of v's rows are
// F(n, k) for the tets n of v and the faces k != a that contain a free edge (a, m) of v's
// block (m != a, k); the tets of v are listed ascending (dga::vertex_tets), so the columns
// 4n + k come out ascending as on the host. Entry F(n, k) of row i sums ±B_v[i][j] over the
// (at most two) block columns j of those edges, ascending j: the host's grouping of the COO
// terms, so the sum is the host's (dga::operators::csr_layout) term for term.
//
// The sign is the dual-face circulation's (complex::TetGeom::dual_face_faces): edge (a, b)
// with a, b ordered by global vertex id, c < d the other two local vertices; the circulation
// is F(n, c) - F(n, d) when det(x_b - x_a, x_c - x_a, x_d - x_a) > 0, else F(n, d) - F(n, c).
// Every tet is stored positively oriented (mesh::Mesh), so that determinant has the sign of
// the permutation (a, b, c, d): even gives +F(n, c). No coordinate is read.
//
// The matrix is the stepper's, at unit Δt: columns written as its F slots, k * TP + n (TP the
// stepper's tet stride; cl/dga/csr.cl), values as (REAL)sum, as the host's `T::of` of
// build_csr's f64 values.

// local edge joining local vertices a != b (complex::LOCAL_EDGES order)
inline uint local_edge(const uint a, const uint b) {
    const uint lo = min(a, b), hi = max(a, b);
    return lo == 0 ? hi - 1 : lo + hi;
}

// block column of edge e in the d half-edges of a block starting at h, or -1 (a PEC edge)
inline int block_column(__global const uint* restrict h, const uint d, const uint e) {
    for (uint j = 0; j < d; j++)
        if ((h[j] >> 1) == e) return (int)j;
    return -1;
}

// +1 if the circulation of local edge (a, m) of tet `tv` enters F(n, k) positively, else -1
// (k is one of the two local vertices off the edge).
inline int face_sign(__global const uint* restrict tv, const uint a, const uint m, const uint k) {
    uint p[4];
    p[0] = tv[a] < tv[m] ? a : m;
    p[1] = tv[a] < tv[m] ? m : a;
    uint q = 2;
    for (uint x = 0; x < 4; x++)
        if (x != a && x != m) p[q++] = x;
    uint inv = 0;
    for (uint x = 0; x < 4; x++)
        for (uint y = x + 1; y < 4; y++) inv += p[x] > p[y];
    const uint plus = (inv & 1u) ? p[3] : p[2];
    return k == plus ? 1 : -1;
}

// One work-item per vertex: the row length of each of its block's half-edges (len[h], the
// columns of v), and the vertex of each block slot (slot_vertex[p]). len must be zero
// beforehand on the half-edges of no block.
__kernel void csr_row_lengths(const uint NV, __global const ulong* restrict vt_ptr,
                              __global const uint* restrict vt,
                              __global const uint* restrict tet_edges,
                              __global const ulong* restrict ptr, __global const uint* restrict h,
                              __global uint* restrict len, __global uint* restrict slot_vertex) {
    const size_t v = get_global_id(0);
    if (v >= NV) return;
    const ulong p0 = ptr[v];
    const uint d = (uint)(ptr[v + 1] - p0);
    if (d == 0) return;
    uint cols = 0;
    for (ulong q = vt_ptr[v]; q < vt_ptr[v + 1]; q++) {
        const uint n = vt[q] >> 2, a = vt[q] & 3u;
        uint free_m = 0;
        for (uint m = 0; m < 4; m++)
            if (m != a && block_column(h + p0, d, tet_edges[6 * (size_t)n + local_edge(a, m)]) >= 0)
                free_m |= 1u << m;
        for (uint k = 0; k < 4; k++)
            if (k != a && (free_m & ~(1u << k))) cols++;
    }
    for (uint j = 0; j < d; j++) {
        len[h[p0 + j]] = cols;
        slot_vertex[p0 + j] = (uint)v;
    }
}

// Exclusive scan, first pass: work-group g scans its tile of 4 * get_local_size(0) values of
// x (zero past N) into y, tile-local, and writes the tile's total to tile_sum[g]. The local
// scan is Hillis-Steele over one partial sum per work-item (s: get_local_size(0) uints).
__kernel void scan_tiles(const ulong N, __global const uint* restrict x, __global uint* restrict y,
                         __global uint* restrict tile_sum, __local uint* s) {
    const size_t lid = get_local_id(0), wg = get_local_size(0);
    const size_t base = 4 * get_global_id(0);
    uint a[4];
    uint t = 0;
    for (uint k = 0; k < 4; k++) {
        a[k] = base + k < N ? x[base + k] : 0u;
        t += a[k];
    }
    s[lid] = t;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t off = 1; off < wg; off <<= 1) {
        const uint w = lid >= off ? s[lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[lid] += w;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint e = s[lid] - t;
    for (uint k = 0; k < 4; k++) {
        if (base + k < N) y[base + k] = e;
        e += a[k];
    }
    if (lid == wg - 1) tile_sum[get_group_id(0)] = s[lid];
}

// Exclusive scan, second pass: y[i] += the exclusive sum of the tiles before i's (tile_off,
// scanned on the host), tiles of `tile` values.
__kernel void scan_add(const ulong N, __global uint* restrict y,
                       __global const uint* restrict tile_off, const uint tile) {
    const size_t i = get_global_id(0);
    if (i < N) y[i] += tile_off[i / tile];
}

// One work-item per block slot p (row h[p]): its columns and values (unit Δt) at indptr[h[p]].
__kernel void csr_fill(const uint R, __global const uint* restrict slot_vertex,
                       __global const ulong* restrict ptr, __global const uint* restrict h,
                       __global const ulong* restrict off, __global const double* restrict inv,
                       __global const ulong* restrict vt_ptr, __global const uint* restrict vt,
                       __global const uint* restrict tets, __global const uint* restrict tet_edges,
                       __global const uint* restrict indptr, const uint TP,
                       __global uint* restrict indices, __global real* restrict data) {
    const size_t p = get_global_id(0);
    if (p >= R) return;
    const uint v = slot_vertex[p];
    const ulong p0 = ptr[v];
    const uint d = (uint)(ptr[v + 1] - p0);
    __global const double* b = inv + off[v] + (p - p0) * d;
    uint out = indptr[h[p]];
    for (ulong q = vt_ptr[v]; q < vt_ptr[v + 1]; q++) {
        const uint n = vt[q] >> 2, a = vt[q] & 3u;
        __global const uint* tv = tets + 4 * (size_t)n;
        int jm[4];
        for (uint m = 0; m < 4; m++)
            jm[m] = m == a ? -1
                           : block_column(h + p0, d, tet_edges[6 * (size_t)n + local_edge(a, m)]);
        for (uint k = 0; k < 4; k++) {
            if (k == a) continue;
            // the two edges (a, m) on face k, m off {a, k}, in ascending block column
            uint m1 = 4, m2 = 4;
            for (uint m = 0; m < 4; m++)
                if (m != a && m != k) {
                    if (m1 == 4) m1 = m; else m2 = m;
                }
            if (jm[m1] < 0 && jm[m2] < 0) continue;
            if (jm[m2] >= 0 && (jm[m1] < 0 || jm[m2] < jm[m1])) {
                const uint x = m1;
                m1 = m2;
                m2 = x;
            }
            double sum = 0.0;
            sum += face_sign(tv, a, m1, k) * b[jm[m1]];
            if (jm[m2] >= 0) sum += face_sign(tv, a, m2, k) * b[jm[m2]];
            indices[out] = k * TP + n;
            data[out] = (real)sum;
            out++;
        }
    }
}
