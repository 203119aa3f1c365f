#!/bin/bash
# DG update tuning on the H200, third round: the paired update (dg_update_pair) against the
# blocked one. 1) the PTX of cl/dg.cl (DGATD_CL_DUMP_BINARY) at N = 3 and 4, f64, and the
# loads, stores and FMAs per update kernel counted in it; 2) the bench at 1M tets (DG orders
# 3 and 4) for each "name|precision|tets per group (99: default)|local bytes per work-group
# (DGATD_DG_STAGE_BYTES, default 32768)|DG orders (default 3,4)|extra OpenCL build options|extra environment (A=1 B=2)". Carries target/dgatd_h200.
# Writes $OUT/ptx/, $OUT/<name>/bench.csv and $OUT/<name>.log.
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
DGATD_CL_DUMP_BINARY=/tmp/ptx DGATD_CL_OPTIONS="-cl-nv-verbose" DGATD_CL_BUILD_LOG=1 \
  target/dgatd_h200 bench --devices NVIDIA --no-cpu --precision f64 --sizes 1e3 --reps 2 --warmup 1 \
  --csr-max-tets 1 --dg-orders 3,4 --stream-elems 1e6 --out $OUT/ptx_bench > $OUT/ptx.log 2>&1
echo "== ptxas registers"
grep -E "Compiling entry|Used" $OUT/ptx.log | grep -A1 "dg_update" | grep -v "^--"
mkdir -p $OUT/ptx
for f in $(grep -l "dg_update_pair" /tmp/ptx/*.bin); do
  cp $f ${f%.bin}.opts $OUT/ptx/
  echo "== $f ($(cat ${f%.bin}.opts))"
  awk '/^\.visible \.entry/ {name=$3} /\.entry/ && !/visible/ {name=$2}
       name ~ /dg_update/ { for (i = 1; i <= NF; i++) if ($i ~ /^(ld|st|fma|mul|add)\./) c[name" "$i]++ }
       END { for (k in c) print k, c[k] }' "$f" | sort
done
for cfg in "$@"; do
  IFS='|' read -r name prec kb sb orders opts envs <<< "$cfg"
  export DGATD_DG_TETS_PER_GROUP=$kb DGATD_DG_STAGE_BYTES=${sb:-32768} DGATD_CL_OPTIONS="$opts"
  timeout 150 env $envs target/dgatd_h200 bench --devices NVIDIA --no-cpu --precision $prec --sizes 1e6 --reps 10 --warmup 3 --csr-max-tets 1 --dg-orders ${orders:-3,4} --stream-elems 1.34e8 --out $OUT/$name > $OUT/$name.log 2>&1
  echo "== $name ($prec, kb $kb, stage bytes ${sb:-32768}, orders ${orders:-3,4}, options '$opts', env '$envs') rc=$?"
  grep -E ",(dg_update|fma)," $OUT/$name/bench.csv | cut -d, -f7-10,13,18,22
done
# one archive of everything (the device returns a limited number of files)
tar czf /tmp/tune3.tgz -C $OUT . && rm -rf $OUT/* && mv /tmp/tune3.tgz $OUT/
