#!/usr/bin/env bash
# The PML's step on the GPU against the absorbing layer's (issue 45): the 3-shell sphere
# (445k tets, sphere_*_n3.toml), f64 and f32, with and without energy checks; then the
# ε_r = 36 ladder. Run there: OUT=$OUT bash results/open/pml_gpu/timing.sh (carry devbin).
set -uo pipefail
OUT=${OUT:-/tmp/pml_timing}
mkdir -p "$OUT"
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES-libnvidia-opencl.so.1}
D=results/open/pml_gpu
for b in pml layer; do
  for p in f64 f32; do
    for e in 0 default; do
      extra=""; [ "$e" = 0 ] && extra="--energy-checks 0"
      echo "== $b $p energy-checks $e" >> "$OUT/timing.log"
      devbin/dgatd resonator --config $D/sphere_${b}_n3.toml --precision $p $extra \
        --out "$OUT/w" 2>&1 | grep -E "note: setup|^dgatd|warning: run" >> "$OUT/timing.log"
    done
  done
done
rm -rf "$OUT/w"
W=$OUT/work; mkdir -p "$W"
t0=$SECONDS
timeout 400 devbin/mie_sphere --eps 36 --n 2 --step 2 --air 1.33 --outer 2.0 --boundary pml \
  --backend opencl --converge 2 --csv "$OUT/rows.csv" --out "$W/eps36_both" > "$W/eps36_both.log" 2>&1
echo "eps36_both rc=$? wall_s=$((SECONDS - t0))" >> "$OUT/timing.log"
tar czf "$OUT/outputs.tgz" -C "$W" . && rm -rf "$W"
cat "$OUT/timing.log" "$OUT/rows.csv"
