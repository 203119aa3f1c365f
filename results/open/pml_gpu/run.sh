#!/usr/bin/env bash
# The PML on one GPU (issue 45): dielectric spheres (radius 0.1 m) with the PML one
# free-space wavelength of TE11 from the sphere, as refinement ladders (--converge 2), and
# the 3-shell sphere of results/open/mie/pml_eps10_n3.csv timed on the GPU in f64 and f32.
#
# Built here:   cargo build --release --example mie_sphere && mkdir -p devbin &&
#               strip -o devbin/mie_sphere target/release/examples/mie_sphere &&
#               strip -o devbin/dgatd target/release/dgatd
# Run there:    OUT=$OUT bash results/open/pml_gpu/run.sh        (carry devbin)
# Check first:  TINY=1 OCL_ICD_FILENAMES= BIN=target/release S=target/release/examples/mie_sphere \
#               OUT=/tmp/x bash results/open/pml_gpu/run.sh   (PoCL, a minute)
set -uo pipefail
OUT=${OUT:-/tmp/pml_gpu}
mkdir -p "$OUT"
BIN=${BIN:-devbin}
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES-libnvidia-opencl.so.1}
$BIN/dgatd devices > "$OUT/devices.txt" 2>&1
git rev-parse --short HEAD > "$OUT/commit.txt" 2>/dev/null || true
S=${S:-$BIN/mie_sphere}
# every run's outputs go into one archive at the end (few files come back from the machine)
W=$OUT/work
mkdir -p "$W"
if [ "${TINY:-0}" = 1 ]; then
  # the same commands on a mesh small enough for PoCL
  $S --eps 10 --n 1 --step 2 --air 0.77 --outer 1.3 --boundary pml --backend opencl \
     --converge 1 --csv "$OUT/tiny.csv" --out "$W/tiny" > "$W/tiny.log" 2>&1
  rc=$?
  tar czf "$OUT/outputs.tgz" -C "$W" . && rm -rf "$W"
  exit $rc
fi
run() { # name, arguments
  local name=$1; shift
  local t0=$SECONDS
  $S "$@" --csv "$OUT/rows.csv" --out "$W/$name" > "$W/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall_s=$((SECONDS - t0)) args: $*" >> "$OUT/ladder.txt"
}
# timing: the 3-shell sphere of results/open/mie/pml_eps10_n3.csv (445k tets), f64 and f32
run time_f64 --eps 10 --n 3 --step 2 --air 0.77 --outer 1.3 --boundary pml --backend opencl
run time_f32 --eps 10 --n 3 --step 2 --air 0.77 --outer 1.3 --boundary pml --backend opencl --precision f32
run time_layer_f64 --eps 10 --n 3 --step 2 --air 0.77 --outer 1.3 --boundary layer --backend opencl
# ladders: 2 shells, refined twice (the finest 8 shells across the sphere's radius)
run eps10_both --eps 10 --n 2 --step 2 --air 0.77 --outer 1.3 --boundary pml --backend opencl --converge 2
run eps10_tm --eps 10 --n 2 --step 2 --air 0.77 --outer 1.3 --boundary pml --backend opencl --converge 2 --excite tm
run eps36_both --eps 36 --n 2 --step 2 --air 1.33 --outer 2.0 --boundary pml --backend opencl --converge 2
tar czf "$OUT/outputs.tgz" -C "$W" . && rm -rf "$W"
cat "$OUT/ladder.txt" "$OUT/rows.csv"
