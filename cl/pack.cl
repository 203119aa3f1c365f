// The operators assembled on the device (cl/assemble.cl, f64) converted into the stepper's
// resident layouts (cl/dgatd.cl) in precision REAL, so that they never leave the device
// (issue 19: backend::device_assembly::resident). Built with -D REAL=double|float; needs
// cl_khr_fp64 for the f64 input, as the assembly itself.
//
// Layouts:
//   mmu_inv[10n + k]                 Mmu_n⁻¹'s upper triangle row by row (assemble_mmu)
//   M[k*T + n]                       the same, column-major across tets (primal_sym)
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

// One work-item per tet.
__kernel void pack_primal_sym(const uint T, __global const double* restrict mmu_inv,
                              __global real* restrict M) {
    const size_t n = get_global_id(0);
    if (n >= T) return;
    for (int k = 0; k < 10; k++) M[(size_t)k * T + n] = (real)mmu_inv[10 * n + k];
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
