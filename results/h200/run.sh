#!/usr/bin/env bash
# The H200 run behind results/h200/. Run from the repository root on the device machine with
# a release binary at devbin/dgatd (cargo build --release; cp target/release/dgatd devbin/).
# Writes everything into $OUT (default ./h200-out).
set -uo pipefail
OUT="${OUT:-h200-out}"; mkdir -p "$OUT"
# NVIDIA's OpenCL ICD is not registered on that machine (shared/device/README.md).
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd POCL_CACHE_DIR=/tmp/pocl; mkdir -p "$POCL_CACHE_DIR"
B=devbin/dgatd
{ $B devices; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$OUT/devices.txt" 2>&1
for p in f64 f32; do
  $B resonator --backend opencl --device NVIDIA --precision $p --quiet --out "$OUT/res_$p" > "$OUT/res_$p.txt" 2>&1
done
$B resonator --backend opencl --device NVIDIA --dual csr --quiet --out "$OUT/res_csr" > "$OUT/res_csr.txt" 2>&1
$B resonator --backend cpu --quiet --out "$OUT/res_cpu" > "$OUT/res_cpu.txt" 2>&1
tar cf "$OUT/resonator.tar" -C "$OUT" res_f64 res_f32 res_csr res_cpu res_f64.txt res_f32.txt res_csr.txt res_cpu.txt && rm -rf "$OUT"/res_*
# GPU ladder, f64 and f32.
$B bench --devices NVIDIA --no-cpu --precision f64,f32 --sizes "${GPU_SIZES:-1e3,1e4,1e5,1e6,3e6,1e7,2e7}" \
  --reps 50 --warmup 10 --csr-max-tets 6e6 --out "$OUT/gpu" > "$OUT/gpu.txt" 2>&1
# The largest meshes: ~100M tets (box 256³ x 6), f64 and f32, factored dual only.
$B bench --devices NVIDIA --no-cpu --precision f64,f32 --sizes "${LARGE_SIZES:-1.01e8}" --reps 20 --warmup 3 \
  --csr-max-tets 6e6 --out "$OUT/large" > "$OUT/large.txt" 2>&1
# The same machine's PoCL (16 cores) and CPU backend, for the speedup.
$B bench --devices Portable --precision f64,f32 --sizes "${HOST_SIZES:-1e5,1e6}" --reps 10 --warmup 2 \
  --stream-elems 6.7e7 --out "$OUT/host" > "$OUT/host.txt" 2>&1
ls -la "$OUT" "$OUT"/*
