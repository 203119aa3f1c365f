#!/bin/bash
# DG update tuning on the H200, second round: the bench at 1M tets (f64, DG orders 3 and 4)
# for each configuration "name|tets per group (99: default)|extra OpenCL build options"
# (DGATD_CL_OPTIONS: -D DG_SPLIT=1, -D DG_PREFETCH=1 select the tuning forms of
# dg_update_blk in cl/dg.cl; -cl-nv-maxrregcount caps the registers). Carries
# target/dgatd_h200. Writes $OUT/<name>/bench.csv and $OUT/<name>.log.
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
# registers per kernel of each form (ptxas report at a small size)
for o in "" "-D DG_SPLIT=1"; do
  DGATD_CL_OPTIONS="-cl-nv-verbose $o" DGATD_CL_BUILD_LOG=1 target/dgatd_h200 bench --devices NVIDIA --no-cpu --precision f64 --sizes 1e3 --reps 2 --warmup 1 --csr-max-tets 1 --dg-orders 3,4 --stream-elems 1e6 --out $OUT/ptxas > $OUT/ptxas.log 2>&1
  echo "== ptxas ($o)"
  grep -A80 "build log of cl/dg.cl" $OUT/ptxas.log | grep -E "Compiling entry|Used" | grep -A1 "dg_update_blk" | head -8
done
for cfg in "$@"; do
  IFS='|' read -r name kb opts <<< "$cfg"
  export DGATD_DG_TETS_PER_GROUP=$kb DGATD_CL_OPTIONS="$opts"
  timeout 120 target/dgatd_h200 bench --devices NVIDIA --no-cpu --precision f64 --sizes 1e6 --reps 10 --warmup 3 --csr-max-tets 1 --dg-orders 3,4 --stream-elems 1.34e8 --out $OUT/$name > $OUT/$name.log 2>&1
  echo "== $name (kb $kb, options '$opts') rc=$?"
  grep -E ",(dg_update|fma)," $OUT/$name/bench.csv | cut -d, -f7-10,13,18,22
done
