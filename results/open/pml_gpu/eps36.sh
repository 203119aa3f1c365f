#!/usr/bin/env bash
# ε_r = 36 with the PML one free-space wavelength of TE11 (1.23 m) beyond the sphere, as
# two-level ladders (2 and 3 shells, each refined once), and the 3-shell sphere's energy
# checks on the device. Run there: OUT=$OUT bash results/open/pml_gpu/eps36.sh (carry devbin).
set -uo pipefail
OUT=${OUT:-/tmp/pml_eps36}
mkdir -p "$OUT"
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES-libnvidia-opencl.so.1}
D=results/open/pml_gpu
devbin/dgatd resonator --config $D/sphere_pml_n3.toml --out "$OUT/w" 2>&1 \
  | grep -E "note: setup|^dgatd" > "$OUT/eps36.log"
rm -rf "$OUT/w"
W=$OUT/work; mkdir -p "$W"
for n in 2 3; do
  t0=$SECONDS
  timeout 200 devbin/mie_sphere --eps 36 --n $n --step 2 --air 1.33 --outer 2.0 --boundary pml \
    --backend opencl --converge 1 --csv "$OUT/rows.csv" --out "$W/eps36_n$n" > "$W/eps36_n$n.log" 2>&1
  echo "eps36_n$n rc=$? wall_s=$((SECONDS - t0))" >> "$OUT/eps36.log"
done
tar czf "$OUT/outputs.tgz" -C "$W" . && rm -rf "$W"
cat "$OUT/eps36.log" "$OUT/rows.csv"
