#!/bin/bash
# DG update tuning, fifth round: dg_update_pipe (persistent work-groups, producers staging the
# next chunk while the others sum) against dg_update_nb, and diagnostics of dg_update_nb
# (its sums alone, its memory traffic alone), on one H200 in one device call. Carries
# target/dgatd_h200 (the stripped release binary of the commit named in the CSVs).
# Each configuration "name|precision|orders|build options|environment" runs
#   dgatd bench --devices NVIDIA --no-cpu --precision P --sizes 1e6 --reps 10 --warmup 3
#     --csr-max-tets 1 --stream-elems 1.34e8 --dg-orders ORDERS
# with DGATD_CL_OPTIONS set to the build options. Writes $OUT/<name>/bench.csv,
# $OUT/<name>.log, the ptxas report in $OUT/ptx.log; prints the dg_update rows; then packs
# everything into one archive $OUT/run.tgz (the device returns a limited number of files).
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
B=target/dgatd_h200
DGATD_CL_OPTIONS="-cl-nv-verbose" DGATD_CL_BUILD_LOG=1 timeout 60 $B bench --devices NVIDIA \
  --no-cpu --precision f64 --sizes 1e3 --reps 2 --warmup 1 --csr-max-tets 1 --dg-orders 3,4 \
  --stream-elems 1e6 --out $OUT/ptx_bench > $OUT/ptx.log 2>&1
echo "== ptxas registers (f64, N = 3 then 4)"
grep -E "Compiling entry|Used|stack frame" $OUT/ptx.log | grep -A2 "dg_update" | grep -v "^--"
for cfg in "$@"; do
  IFS='|' read -r name prec orders opts envs <<< "$cfg"
  SECONDS=0
  DGATD_CL_OPTIONS="$opts" timeout 120 env $envs $B bench --devices NVIDIA --no-cpu \
    --precision $prec --sizes 1e6 --reps 10 --warmup 3 --csr-max-tets 1 --stream-elems 1.34e8 \
    --dg-orders $orders --out $OUT/$name > $OUT/$name.log 2>&1
  echo "== $name ($prec, orders $orders, options '$opts', env '$envs') rc=$? ${SECONDS}s"
  grep -E ",(dg_update|fma)," $OUT/$name/bench.csv | cut -d, -f7-10,13,18,22
done
tar czf /tmp/run.tgz -C $OUT . && rm -rf $OUT/* && mv /tmp/run.tgz $OUT/
