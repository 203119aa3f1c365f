#!/bin/bash
# DG update tuning, fourth round: dg_update_na (two adjacent nodes per work-item, operators
# read two nodes at a time) against dg_update_nb, on one H200, in one device call (this
# session had about 4 minutes of device time). Carries target/dgatd_h200 (the release binary
# of the commit named in the CSVs, stripped).
#   1) `dgatd bench` at 1M tets, f64 and f32, DG orders 3 and 4: every dg_update form;
#   2) and 3) f64 at N = 4 only, with 3 tets per work-group and with 7 (48 KiB of local
#      memory): the same forms.
# Writes $OUT/<name>/bench.csv and $OUT/<name>.log; prints the dg_update rows last.
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
B=target/dgatd_h200
common="--devices NVIDIA --no-cpu --sizes 1e6 --reps 10 --warmup 3 --csr-max-tets 1 --stream-elems 1.34e8"
timeout 75 $B bench $common --precision f64,f32 --dg-orders 3,4 --out $OUT/base > $OUT/base.log 2>&1
echo "base rc=$?"
DGATD_DG_TETS_PER_GROUP=3 timeout 30 $B bench $common --precision f64 --dg-orders 4 --out $OUT/kb3 > $OUT/kb3.log 2>&1
echo "kb3 rc=$?"
DGATD_DG_TETS_PER_GROUP=7 DGATD_DG_STAGE_BYTES=49152 timeout 30 $B bench $common --precision f64 --dg-orders 4 --out $OUT/kb7_48k > $OUT/kb7_48k.log 2>&1
echo "kb7_48k rc=$?"
for n in base kb3 kb7_48k; do
  echo "== $n"
  grep -E ",(copy,stream|fma|dg_update|dg_step)," $OUT/$n/bench.csv | cut -d, -f2,7-10,13,18,22
done
