#!/usr/bin/env bash
# The compact side-by-side (ε_r = 10 only; the full ladders are run.sh, ~2 h 50 min): MEEP
# (one core, its eighths with mirror symmetries, subpixel averaging on) against dgatd on the
# CPU (2 threads, its eighths with symmetry planes: TE11's m_z in x=pec,y=pec,z=pmc, TM11's
# p_z in x=pmc,y=pmc,z=pec driven by the centred ball of current), each ladder up the
# resolution, one job at a time, on a quiet machine. ~15 min.
#   OUT=results/meep/compact1 bash results/meep/compact.sh
set -uo pipefail
OUT=${OUT:-results/meep/compact1}
BIN=${BIN:-target/release/examples/mie_sphere}   # cargo build --release --example mie_sphere
PY=${PY:-/usr/bin/python3}
MEEP_RES=${MEEP_RES:-4 6 8}
DG_N=${DG_N:-4 5 6}
mkdir -p "$OUT"
{
  date -u; nproc; uname -a; grep -m1 "model name" /proc/cpuinfo
  dpkg -s python3-meep 2>/dev/null | grep Version; git rev-parse --short HEAD 2>/dev/null
  echo "load before: $(cat /proc/loadavg)"
} > "$OUT/env.txt"
LOG=$OUT/jobs.log
job() { # name, then the command
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall_s=$(echo "$(date +%s.%N) - $t0" | bc) cmd: $*" >> "$LOG"
}
for res in $MEEP_RES; do
  for mode in te tm; do
    job meep_${mode}_res$res $PY results/meep/meep_sphere.py --eps 10 --res "$res" --mode $mode \
      --quiet --csv "$OUT/meep_rows.csv" --tag meep_${mode}_res$res
  done
done
E10="--eps 10 --step 2 --air 0.77 --outer 1.3 --boundary pml --backend cpu --refine-region sphere"
export RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-2}
for n in $DG_N; do
  job dgatd_te_n$n "$BIN" $E10 --n "$n" --symmetry x=pec,y=pec,z=pmc --csv "$OUT/dgatd_rows.csv"
  job dgatd_tm_n$n "$BIN" $E10 --n "$n" --excite tm-ball --symmetry x=pmc,y=pmc,z=pec --csv "$OUT/dgatd_rows.csv"
done
echo "load after: $(cat /proc/loadavg)" >> "$OUT/env.txt"
cat "$LOG"
