// DGATD leapfrog kernels (design note §8). Built with -D REAL=double|float and, for double,
// -D REAL_IS_DOUBLE=1; -D CSR_LANES=<lanes per row> for the vector CSR kernel; optionally
// -D OPREAL=float with REAL=double (mixed storage: the operators of primal_sym and the
// packed vertex-block kernels in float, the fields and every sum in double; without it the
// operators are REAL).
//
// Device layouts (E edges; T the tet stride, the tet count rounded up to a multiple of 64 so
// that every column starts on a 256-byte boundary: the tets past the count are padding, with
// zero operators, edge 0 or the zero slot in their tables, and F zero; kernels run over them
// unchanged, backend::opencl::tet_stride):
//   U[2e + s]        electric half-edge DoFs (s = 0 at the start vertex of e, 1 at the end)
//   F[k*T + n]       magnetic half dual-edge DoFs (face k of tet n), structure of arrays
//   P[(r*6 + c)*T + n], PE[c*T + n]   primal blocks dt*Mmu^-1*C and their edge ids, column-major
//                                    (bit 31 of PE: the edge's orientation in the tet)
//   M[k*T + n]       the symmetric layout: dt*Mmu^-1's upper triangle (primal_sym)
//   circ[circ_ptr[e] .. circ_ptr[e+1]]  (F index << 1) | negative, dual-face circulation of e
//                                    (CircVariant::Lists)
//   circ[circ_ptr[e]/2 .. circ_ptr[e+1]/2]  (n << 4) | (fp << 2) | fm: +F(n, fp) - F(n, fm)
//                                    for each tet n around e (CircVariant::Paired, default)
//   block[hrow[h] .. + d]             row of dt*Meps_v^-1 for free half-edge h at vertex hvert[h]
//   vh[vptr[v] .. vptr[v+1]]         free half-edges of vertex v (their edge is vh >> 1)
//   US[g], ES[2e + s]                slot-major U and the slot of each half-edge
//                                    (primal_sym_sm, vertex_block_s_sm: the stepper's U
//                                    where it applies, ClStepper::set_u_layout)

#ifdef REAL_IS_DOUBLE
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#else
#error "REAL=double needs cl_khr_fp64, which this device does not report"
#endif
#endif
typedef REAL real;
#ifndef OPREAL
#define OPREAL REAL
#endif
typedef OPREAL opreal;
#define EDGE_MASK 0x7fffffffu

// Entry (i, j) of a symmetric block packed as its upper triangle column by column
// (VertexBlocks::pack), ci = i (i + 1) / 2 the start of column i.
uint packed_at(const uint ci, const uint i, const uint j) {
    return (j <= i) ? ci + j : j * (j + 1) / 2 + i;
}
