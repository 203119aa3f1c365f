#!/bin/bash
# bench on the H200 (device assembly rows, issue 19): $1 = sizes, $2 = reps, $3 = out subdir, rest = extra flags
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
sizes=$1; reps=$2; sub=$3; shift 3
mkdir -p $OUT/$sub
/usr/bin/time -v target/dgatd_h200 bench --devices NVIDIA --no-cpu --precision f64,f32 --sizes "$sizes" --reps $reps --warmup 5 --csr-max-tets ${CSR_MAX:-3.1e6} --out $OUT/$sub "$@" > $OUT/$sub/log.txt 2>&1
echo rc=$?
tail -5 $OUT/$sub/log.txt; grep -E "Maximum resident|Elapsed" $OUT/$sub/log.txt
grep -E ",(step|primal|dual_factored|fma|preprocess)," $OUT/$sub/bench.csv | cut -d, -f7-10,13,18,22 
