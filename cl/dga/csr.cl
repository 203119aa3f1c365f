// The dual update in CSR form, U += D F (CSR_LANES work-items per row).

// U += D F with D in CSR: CSR_LANES work-items per row, reduced in local memory.
__kernel void csr_vector(const uint NR, __global const uint* restrict rowptr, __global const uint* restrict col,
                         __global const real* restrict val, __global const real* restrict F,
                         __global real* restrict U, __local real* partial) {
    const size_t gid = get_global_id(0);
    const uint lid = get_local_id(0);
    const uint lane = lid % CSR_LANES;
    const size_t r = gid / CSR_LANES;
    real acc = 0;
    if (r < NR) {
        for (uint k = rowptr[r] + lane; k < rowptr[r + 1]; k += CSR_LANES) acc += val[k] * F[col[k]];
    }
    partial[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CSR_LANES / 2; s > 0; s >>= 1) {
        if (lane < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && r < NR) U[r] += partial[lid];
}
