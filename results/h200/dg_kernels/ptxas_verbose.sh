#!/bin/bash
# NVIDIA ptxas report (registers, spills, shared memory) of every kernel of cl/dg.cl at N = 3, 4 (f64)
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
export DGATD_CL_OPTIONS=-cl-nv-verbose DGATD_CL_BUILD_LOG=1
target/dgatd_h200 bench --devices NVIDIA --no-cpu --precision f64 --sizes 1e3 --reps 2 --warmup 1 --dg-orders 3,4 --stream-elems 1e6 --out $OUT/v > $OUT/v.log 2>&1
grep -A80 "build log of cl/dg.cl" $OUT/v.log | grep -E "build log|Function properties|Used|spill|Compiling entry" | head -60
