// Buffer fill, built once per device with no -D options (see ClDevice::fill_zero).
//
// x[i] = v for i < N, N counted in 32-bit words: a buffer of any element type is zeroed with
// v = 0, since the all-zero bit pattern is +0.0 in IEEE 754 float and double and 0 in every
// integer type. One work-item per word, so each word is written exactly once.
__kernel void fill_u32(const ulong N, __global uint* restrict x, const uint v) {
    const size_t i = get_global_id(0);
    if (i < N) x[i] = v;
}
