#!/usr/bin/env bash
# Symmetry planes on one GPU (issue 48): the dielectric sphere (radius 0.1 m) with the PML
# one free-space wavelength of its lowest mode out (ε_r = 36: air to 1.33 m, PML to 2.0 m;
# ε_r = 10: 0.77 and 1.3 m; radial step 2 outside the sphere), `studies/mie_sphere.rs`.
#   1. ε_r = 36, 3 shells, one level: the whole ball against its quarter x=pec,y=pmc (the
#      class of TE11's m_y and TM11's p_x), same binary, same lease: times and lines.
#   2. ε_r = 10, the eighth x=pmc,y=pmc,z=pec (TM11's p_z alone) driven by the centred
#      ball of current (--excite tm-ball), 4 shells, --converge 2.
#   3. ε_r = 10, the quarter x=pec,y=pmc, 4 shells, --converge 1 (TE11 and TM11).
#   4. ε_r = 36, the quarter, 4 shells, --converge 1 (part B: PART=b).
#   5. Unstructured Gmsh meshes of seeded random radius (part C: PART=c; made here by
#      results/symmetry/meshes.sh into devbin/meshes/*.msh.gz): ε_r = 36 and 10 quarters
#      x=pec,y=pmc (--converge 1), and the ε_r = 10 eighth x=pmc,y=pmc,z=pec driven by a
#      z-directed dipole 2 mm from the centre (--excite tm, --converge 2). C1 = the eighth
#      alone, C2 = the quarters alone, C3 = the ε_r = 10 quarter with --converge 2 (one device
#      command each; C=12 by default).
# Run there: OUT=$OUT PART=a|b|c [C=1|2|12] bash results/symmetry/run.sh (carry devbin; BIN=devbin).
set -uo pipefail
OUT=${OUT:-/tmp/symmetry}
PART=${PART:-a}
BIN=${BIN:-devbin}
BACKEND=${BACKEND:-opencl}
N36=${N36:-3}; N10=${N10:-4}; T=${T:-280}
mkdir -p "$OUT"
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES-libnvidia-opencl.so.1}
W=$OUT/work_$PART; mkdir -p "$W"
LOG=$OUT/run_$PART.log
job() { # name, then mie_sphere's arguments
  local name=$1; shift
  local t0=$SECONDS
  timeout "$T" "$BIN/mie_sphere" "$@" --backend "$BACKEND" --csv "$OUT/rows.csv" \
    --out "$W/$name" > "$W/$name.log" 2>&1
  echo "$name rc=$? wall_s=$((SECONDS - t0)) args: $*" >> "$LOG"
}
E36="--eps 36 --step 2 --air 1.33 --outer 2.0 --boundary pml"
E10="--eps 10 --step 2 --air 0.77 --outer 1.3 --boundary pml"
if [ "$PART" = a ]; then
  job eps36_whole_n$N36 $E36 --n $N36
  job eps36_quarter_n$N36 $E36 --n $N36 --symmetry x=pec,y=pmc
  job eps10_eighth_tm_n$N10 $E10 --n $N10 --excite tm-ball --symmetry x=pmc,y=pmc,z=pec --converge 2
  job eps10_quarter_n$N10 $E10 --n $N10 --symmetry x=pec,y=pmc --converge 1
elif [ "$PART" = c ]; then
  M=$OUT/meshes; mkdir -p "$M"
  for f in "$BIN"/meshes/*.msh.gz; do gunzip -c "$f" > "$M/$(basename "$f" .gz)"; done
  # radii as results/symmetry/meshes.sh printed them
  G36="--eps 36 --n 0 --radius 0.098095 --air 1.302633 --outer 1.904903 --boundary pml"
  G10="--eps 10 --n 0 --radius 0.098983 --air 0.760791 --outer 1.091695 --boundary pml"
  C=${C:-12}
  case $C in *2*)
    job gmsh36_quarter $G36 --mesh "$M/s36_quarter.msh" --symmetry x=pec,y=pmc --converge 1
    job gmsh10_quarter $G10 --mesh "$M/s10_quarter.msh" --symmetry x=pec,y=pmc --converge 1 ;;
  esac
  case $C in *3*)
    job gmsh10_quarter_c2 $G10 --mesh "$M/s10_quarter.msh" --symmetry x=pec,y=pmc --converge 2 ;;
  esac
  case $C in *1*)
    job gmsh10_eighth_tm $G10 --mesh "$M/s10_eighth.msh" --excite tm --symmetry x=pmc,y=pmc,z=pec --converge 2 ;;
  esac
  rm -rf "$M"
else
  job eps36_quarter_n$((N36 + 1)) $E36 --n $((N36 + 1)) --symmetry x=pec,y=pmc --converge 1
fi
tar czf "$OUT/outputs_$PART.tgz" -C "$W" . && rm -rf "$W"
cat "$LOG"; cut -d, -f1,2,7,9,10,13-16,19-23,26 "$OUT/rows.csv"
