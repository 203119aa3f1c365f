#!/usr/bin/env bash
# The H200 DGA-vs-DG comparison behind results/compare/. Run from the repository root on the
# device machine with a release binary at devbin/dgatd. PART=compare|bench. Output in $OUT.
set -uo pipefail
OUT="${OUT:-h200-out}"; mkdir -p "$OUT"
# NVIDIA's OpenCL ICD is not registered on that machine (shared/device/README.md).
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd POCL_CACHE_DIR=/tmp/pocl; mkdir -p "$POCL_CACHE_DIR"
B=devbin/dgatd
case "${PART:-compare}" in
compare)
  { $B devices; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > "$OUT/devices.txt" 2>&1
  $B compare --mesh "${MESHES:-bundled:coarse,bundled:medium,bundled:fine}" --orders "${ORDERS:-1,2,3,4}" \
    --fluxes upwind,central --time "${TIME:-3e-7}" --backend opencl --device NVIDIA --precision f64 \
    --out "$OUT/compare" > "$OUT/compare.txt" 2>&1
  ;;
bench)
  $B bench --devices NVIDIA --no-cpu --precision f64,f32 --sizes "${SIZES:-1e4,1e5,1e6}" --dg-orders 1,2,3,4 \
    --reps 20 --warmup 3 --out "$OUT/bench" > "$OUT/bench.txt" 2>&1
  ;;
esac
ls -la "$OUT" "$OUT"/*
