// Nodal DG for Maxwell (see src/dg/mod.rs for the equations and the storage layout).
// Built with -D REAL=double|float, -D NP=<nodes per tet>, -D NFP=<nodes per face>.
// q[(k*6 + c)*NP + i]: c = Ex, Ey, Ez, Hx, Hy, Hz; flux[(k*6 + c)*4*NFP + f*NFP + m].
#ifdef REAL_IS_DOUBLE
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#else
#error "REAL=double needs cl_khr_fp64, which this device does not report"
#endif
#endif

#define NF (4 * NFP)
// NP rounded up to even: the row length of the staged fields read in pairs
#define NPP (NP + (NP & 1))
#define VCAT_(t, n) t##n
#define VCAT(t, n) VCAT_(t, n)
#define REAL2 VCAT(REAL, 2)

// Quotient and remainder are written q = a / b, r = a - q * b (not a % b): clang turns an
// a / b, a % b pair into that form itself but wraps a and b in LLVM's `freeze`, which
// Oclgrind 21.10's uninitialised-value checker cannot interpret (it aborts the work-item).
