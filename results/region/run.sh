#!/usr/bin/env bash
# Region refinement on one GPU (issue 48, "resolution where the field needs it"): the
# dielectric sphere ε_r = 10 with the PML one free-space wavelength out, as the quarter
# x=pec,y=pmc (TE11 and TM11), `studies/mie_sphere.rs --refine-region sphere` against the
# same mesh unrefined and uniformly refined (--converge 1), same binary, same lease:
#   generated ball (4 shells, radial step 2 outside the sphere): base, sphere refined,
#   --converge 1, sphere refined + --converge 1;
#   the Gmsh quarter of results/symmetry (seed 12, r = 0.098983 m): sphere refined +
#   --converge 1 (its uniform --converge 1 and 2 are results/symmetry/h200_run2, run3).
# Run there: OUT=$OUT bash results/region/run.sh (carry devbin: mie_sphere and meshes/ from
# results/symmetry/meshes.sh; BIN=devbin).
set -uo pipefail
OUT=${OUT:-/tmp/region}
BIN=${BIN:-devbin}
BACKEND=${BACKEND:-opencl}
T=${T:-240}
mkdir -p "$OUT"
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES-libnvidia-opencl.so.1}
W=$OUT/work; mkdir -p "$W"
LOG=$OUT/run.log
job() { # name, then mie_sphere's arguments
  local name=$1; shift
  local t0=$SECONDS
  timeout "$T" "$BIN/mie_sphere" "$@" --backend "$BACKEND" --csv "$OUT/rows.csv" \
    --out "$W/$name" > "$W/$name.log" 2>&1
  echo "$name rc=$? wall_s=$((SECONDS - t0)) args: $*" >> "$LOG"
}
E10="--eps 10 --n 4 --step 2 --air 0.77 --outer 1.3 --boundary pml --symmetry x=pec,y=pmc"
job ball_base $E10
job ball_region $E10 --refine-region sphere
job ball_converge1 $E10 --converge 1
job ball_region_converge1 $E10 --refine-region sphere --converge 1
M=$OUT/meshes; mkdir -p "$M"
gunzip -c "$BIN/meshes/s10_quarter.msh.gz" > "$M/s10_quarter.msh"
G10="--eps 10 --n 0 --radius 0.098983 --air 0.760791 --outer 1.091695 --boundary pml"
job gmsh10_quarter_region_converge1 $G10 --mesh "$M/s10_quarter.msh" --symmetry x=pec,y=pmc --refine-region sphere --converge 1
rm -rf "$M"
tar czf "$OUT/outputs.tgz" -C "$W" . && rm -rf "$W"
cat "$LOG"; cut -d, -f1,2,7,8,9,10,13-16,19-27 "$OUT/rows.csv"
