#!/usr/bin/env bash
# The broad-line ladder of issue 45 on one GPU: the eps_r = 10 sphere (radius 0.1 m, the
# generated ball, the PML from one free-space wavelength of TE11), each symmetry class
# stepped alone (TE11: x=pec,y=pec,z=pmc; TM11: x=pmc,y=pmc,z=pec with the centred ball of
# current), 3 to 8 shells, with and without the sphere refined (--refine-region sphere),
# by the binary before the loose bound (4ed4c16, BIN_OLD) and after it (BIN_NEW), each run
# one row of rows_TAG.csv. Where a row's f_hz is NaN, the run's table did not hold that line.
#   OUT=results/broad/h200_run1 BIN_NEW=devbin/mie_sphere BIN_OLD=devbin/mie_sphere_old \
#     WHICH="new old" bash results/broad/run.sh
# On the 2-core development machine (no GPU lent): BACKEND=cpu CLASSES=tm NS="3 4 5 6".
set -uo pipefail
OUT=${OUT:-results/broad/run}
WHICH=${WHICH:-new old}
NS=${NS:-3 4 5 6 7 8}
CLASSES=${CLASSES:-te tm}
BACKEND=${BACKEND:-opencl}
mkdir -p "$OUT"
{ date -u; nproc; git rev-parse --short HEAD 2>/dev/null; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null; } > "$OUT/env_$(echo $WHICH | tr ' ' _).txt"
E10="--eps 10 --step 2 --air 0.77 --outer 1.3 --boundary pml --backend $BACKEND"
for which in $WHICH; do
  if [ "$which" = new ]; then BIN=${BIN_NEW:-devbin/mie_sphere}; else BIN=${BIN_OLD:-devbin/mie_sphere_old}; fi
  for n in $NS; do
    for region in none sphere; do
      R=""; [ "$region" = sphere ] && R="--refine-region sphere"
      for cls in $CLASSES; do
        if [ "$cls" = te ]; then C="--symmetry x=pec,y=pec,z=pmc"; else C="--excite tm-ball --symmetry x=pmc,y=pmc,z=pec"; fi
        t0=$(date +%s.%N)
        timeout 120 "$BIN" $E10 $R --n "$n" $C --csv "$OUT/rows_$which.csv" > "$OUT/${which}_${cls}_n${n}_${region}.log" 2>&1
        rc=$?
        echo "$which $cls n=$n region=$region rc=$rc wall_s=$(awk -v a="$(date +%s.%N)" -v b="$t0" "BEGIN{print a-b}")" >> "$OUT/jobs.log"
      done
    done
  done
done
