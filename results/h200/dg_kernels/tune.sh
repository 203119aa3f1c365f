#!/bin/bash
# DG update tuning on the H200: for each argument KB, the bench at 1M tets (f64, DG orders 3 and 4)
# with DGATD_DG_TETS_PER_GROUP=KB (99: the default, capped); carries target/dgatd_h200.
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
for kb in "$@"; do
  export DGATD_DG_TETS_PER_GROUP=$kb
  target/dgatd_h200 bench --devices NVIDIA --no-cpu --precision f64 --sizes 1e6 --reps 10 --warmup 3 --csr-max-tets 1 --dg-orders 3,4 --stream-elems 1.34e8 --out $OUT/kb$kb > $OUT/kb$kb.log 2>&1
  echo "kb=$kb rc=$?"
  grep -E ",(dg_update|dg_flux|dg_step|fma)," $OUT/kb$kb/bench.csv | cut -d, -f7-10,13,18,22
done
