#!/usr/bin/env bash
# MEEP against dgatd on a dielectric sphere (radius 0.1 m) in free space: TE11 and TM11 against
# Mie theory, one sitting, one job at a time (README.md beside this file).
#
#   bash results/meep/run.sh                  # the full ladder into results/meep/run1
#   QUICK=1 OUT=/tmp/q bash results/meep/run.sh   # the smallest job of each kind (~3 min)
#   PARTS="meep10 dgatd10" bash results/meep/run.sh   # some parts only
#
# Writes into $OUT: meep_rows.csv (meep_sphere.py), dgatd_rows.csv (mie_sphere --csv),
# jobs.csv (name, part, threads, rc, wall_s, command: wall time of every job as seen from here),
# summary.md (summary.py: one table line per job),
# logs/<job>.log (each job's output; mie_sphere prints nothing), dgatd_out/<job>/ (mie_sphere
# --out: modes.csv, spectrum.csv, probe.csv, run.toml, summary.md, convergence.csv with
# --converge; ~160 kB a job), env.txt (date, nproc, uname, CPU, package versions, load
# average before and after).
#
# Threads: this MEEP (Debian python3-meep, no OpenMP, no MPI) is serial, 1 core. dgatd's CPU
# backend uses rayon: every dgatd job runs once per entry of DGATD_THREADS (default "1 2", as
# RAYON_NUM_THREADS), so the 1-thread rows are like-for-like with MEEP and the 2-thread rows use
# the whole 2-core machine.
#
# Total runtime estimate, quiet 2-core development machine (AMD EPYC VM). Measured there at the
# small end while preparing (MEEP 3.5-3.9e7 pixel-steps/s on 1 core; dgatd quarter n 3 at
# eps 10: 13.4 s on 2 threads, ~1.8x that on 1) and scaled as res^4 (MEEP) and n^4 (dgatd,
# --converge 1 = the base job plus one at 8x the tets and 2x the steps). The large jobs are
# extrapolations, good to perhaps a factor 1.5:
#   meep10   eps 10 eighths te, tm at res 4 6 8 10 12 (largest: te res 12, ~250 s), quarter
#            both at res 4 6 8, eighths without subpixel averaging at res 4 6 8 ........ ~ 15 min
#   meep36   eps 36 eighths te, tm at res 6 8 (te res 8 ~800 s), without subpixel
#            averaging at res 4 6; all --decays 2 ...................................... ~ 38 min
#   dgatd10  eps 10 quarter n 3 4 5 6, n 3 and 4 --converge 1 (n 4 c1 ~640 s on 2 threads);
#            eighth tm-ball n 4 6, n 4 --converge 1; on 2 threads (~23 min) and 1 (~42) .. ~ 65 min
#   dgatd36  eps 36 quarter n 3 4 (n 4 ~850 s on 2 threads); 2 threads (~19 min), 1 (~34) ~ 53 min
#   total ........................................................................ ~ 2 h 50 min
#   QUICK=1 (smallest job of each kind; eps 36 with short records that test the path only) ~ 3 min
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-$HERE/run1}
QUICK=${QUICK:-0}
BIN=${BIN:-target/release/examples/mie_sphere}   # cargo build --release --example mie_sphere
PY=${PY:-/usr/bin/python3}
MEEP=${MEEP:-$HERE/meep_sphere.py}
PARTS=${PARTS:-meep10 meep36 dgatd10 dgatd36}
DGATD_THREADS=${DGATD_THREADS:-1 2}
if [ "$QUICK" = 1 ]; then
  MEEP10_EIGHTH_RES=${MEEP10_EIGHTH_RES:-4}; MEEP10_QUARTER_RES=${MEEP10_QUARTER_RES:-4}
  MEEP10_NOSUB_RES=${MEEP10_NOSUB_RES:-4}
  MEEP36_EIGHTH_RES=${MEEP36_EIGHTH_RES:-4}; MEEP36_DECAYS=${MEEP36_DECAYS:-0.5}   # tests the path only
  MEEP36_NOSUB_RES=${MEEP36_NOSUB_RES:-}
  D10_QUARTER_N=${D10_QUARTER_N:-3}; D10_QUARTER_CONV_N=${D10_QUARTER_CONV_N:-}
  D10_EIGHTH_N=${D10_EIGHTH_N:-4};   D10_EIGHTH_CONV_N=${D10_EIGHTH_CONV_N:-}   # n 3: no TM line
  D36_QUARTER_N=${D36_QUARTER_N:-3}; D36_TIME=${D36_TIME:-1e-8}   # a 10 ns record: tests the path only
else
  MEEP10_EIGHTH_RES=${MEEP10_EIGHTH_RES:-4 6 8 10 12}; MEEP10_QUARTER_RES=${MEEP10_QUARTER_RES:-4 6 8}
  MEEP10_NOSUB_RES=${MEEP10_NOSUB_RES:-4 6 8}
  MEEP36_EIGHTH_RES=${MEEP36_EIGHTH_RES:-6 8};         MEEP36_DECAYS=${MEEP36_DECAYS:-2}
  MEEP36_NOSUB_RES=${MEEP36_NOSUB_RES:-4 6}
  D10_QUARTER_N=${D10_QUARTER_N:-3 4 5 6}; D10_QUARTER_CONV_N=${D10_QUARTER_CONV_N:-3 4}
  D10_EIGHTH_N=${D10_EIGHTH_N:-4 6};       D10_EIGHTH_CONV_N=${D10_EIGHTH_CONV_N:-4}
  D36_QUARTER_N=${D36_QUARTER_N:-3 4};     D36_TIME=${D36_TIME:-}
fi
MEEP10_DECAYS=${MEEP10_DECAYS:-4}

mkdir -p "$OUT/logs"
JOBS=$OUT/jobs.csv
[ -s "$JOBS" ] || echo "name,part,threads,rc,wall_s,command" > "$JOBS"

{
  echo "date: $(date -Is)"
  echo "quick: $QUICK"
  echo "parts: $PARTS"
  echo "nproc: $(nproc)"
  echo "uname: $(uname -a)"
  grep -m1 'model name' /proc/cpuinfo
  echo "loadavg before: $(cat /proc/loadavg)"
  for p in python3-meep libmeep30 libharminv3 python3-numpy; do
    echo "$p $(dpkg -s "$p" 2>/dev/null | grep '^Version' || echo 'not installed')"
  done
  echo "python: $($PY --version 2>&1)"
  echo "meep: $($PY -c 'import meep; print(meep.__version__)' 2>/dev/null | head -1)"
  echo "mie_sphere: $BIN $(stat -c '%s bytes, modified %y' "$BIN" 2>/dev/null)"
  echo "mie_sphere sha256: $(sha256sum "$BIN" 2>/dev/null | cut -d' ' -f1)"
  echo "DGATD_THREADS: $DGATD_THREADS"
  echo "MEEP10_EIGHTH_RES: $MEEP10_EIGHTH_RES; MEEP10_QUARTER_RES: $MEEP10_QUARTER_RES; MEEP10_NOSUB_RES: $MEEP10_NOSUB_RES; MEEP10_DECAYS: $MEEP10_DECAYS"
  echo "MEEP36_EIGHTH_RES: $MEEP36_EIGHTH_RES; MEEP36_NOSUB_RES: $MEEP36_NOSUB_RES; MEEP36_DECAYS: $MEEP36_DECAYS"
  echo "D10_QUARTER_N: $D10_QUARTER_N; D10_QUARTER_CONV_N: $D10_QUARTER_CONV_N; D10_EIGHTH_N: $D10_EIGHTH_N; D10_EIGHTH_CONV_N: $D10_EIGHTH_CONV_N"
  echo "D36_QUARTER_N: $D36_QUARTER_N; D36_TIME: ${D36_TIME:-default}"
} >> "$OUT/env.txt"

# job NAME PART THREADS CMD...: runs CMD with RAYON_NUM_THREADS=THREADS, logs its wall time
job() {
  local name=$1 part=$2 threads=$3; shift 3
  local t0 t1 rc
  echo "[$(date +%T)] $name ($threads thread(s)): $*"
  t0=$(date +%s.%N)
  RAYON_NUM_THREADS=$threads OMP_NUM_THREADS=$threads "$@" > "$OUT/logs/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local wall; wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  echo "$name,$part,$threads,$rc,$wall,\"$*\"" >> "$JOBS"
  echo "    rc=$rc wall_s=$wall"
}

meep() { # PART NAME ARGS...
  local part=$1 name=$2; shift 2
  job "$name" "$part" 1 "$PY" "$MEEP" --quiet --csv "$OUT/meep_rows.csv" --tag "$name" "$@"
}
dgatd() { # PART NAME ARGS...: once per thread count
  local part=$1 name=$2 t; shift 2
  for t in $DGATD_THREADS; do
    job "${name}_t$t" "$part" "$t" "$BIN" --backend cpu --csv "$OUT/dgatd_rows.csv" \
      --out "$OUT/dgatd_out/${name}_t$t" "$@"
  done
}

E10="--eps 10 --step 2 --air 0.77 --outer 1.3 --boundary pml"
E36="--eps 36 --step 2 --air 1.33 --outer 2.0 --boundary pml"
Q="--symmetry x=pec,y=pmc"
E8="--excite tm-ball --symmetry x=pmc,y=pmc,z=pec"

for part in $PARTS; do
  case $part in
    meep10)
      for r in $MEEP10_EIGHTH_RES; do
        meep $part meep_eps10_te_r$r --eps 10 --res "$r" --mode te --decays "$MEEP10_DECAYS"
        meep $part meep_eps10_tm_r$r --eps 10 --res "$r" --mode tm --decays "$MEEP10_DECAYS"
      done
      for r in $MEEP10_QUARTER_RES; do
        meep $part meep_eps10_both_r$r --eps 10 --res "$r" --mode both --decays "$MEEP10_DECAYS"
      done
      for r in $MEEP10_NOSUB_RES; do   # the same eighths without subpixel averaging (staircase)
        meep $part meep_eps10_te_r${r}_nosub --eps 10 --res "$r" --mode te --decays "$MEEP10_DECAYS" --subpixel off
        meep $part meep_eps10_tm_r${r}_nosub --eps 10 --res "$r" --mode tm --decays "$MEEP10_DECAYS" --subpixel off
      done ;;
    meep36)
      for r in $MEEP36_EIGHTH_RES; do
        meep $part meep_eps36_te_r$r --eps 36 --res "$r" --mode te --decays "$MEEP36_DECAYS"
        meep $part meep_eps36_tm_r$r --eps 36 --res "$r" --mode tm --decays "$MEEP36_DECAYS"
      done
      for r in $MEEP36_NOSUB_RES; do
        meep $part meep_eps36_te_r${r}_nosub --eps 36 --res "$r" --mode te --decays "$MEEP36_DECAYS" --subpixel off
        meep $part meep_eps36_tm_r${r}_nosub --eps 36 --res "$r" --mode tm --decays "$MEEP36_DECAYS" --subpixel off
      done ;;
    dgatd10)
      for n in $D10_QUARTER_N; do dgatd $part dgatd_eps10_quarter_n$n $E10 $Q --n "$n"; done
      for n in $D10_QUARTER_CONV_N; do dgatd $part dgatd_eps10_quarter_n${n}_c1 $E10 $Q --n "$n" --converge 1; done
      for n in $D10_EIGHTH_N; do dgatd $part dgatd_eps10_eighth_tm_n$n $E10 $E8 --n "$n"; done
      for n in $D10_EIGHTH_CONV_N; do dgatd $part dgatd_eps10_eighth_tm_n${n}_c1 $E10 $E8 --n "$n" --converge 1; done ;;
    dgatd36)
      for n in $D36_QUARTER_N; do
        if [ -n "$D36_TIME" ]; then
          dgatd $part dgatd_eps36_quarter_n${n}_time$D36_TIME $E36 $Q --n "$n" --time "$D36_TIME"
        else
          dgatd $part dgatd_eps36_quarter_n$n $E36 $Q --n "$n"
        fi
      done ;;
    *) echo "unknown part $part (meep10 meep36 dgatd10 dgatd36)"; exit 2 ;;
  esac
done

echo "loadavg after: $(cat /proc/loadavg)" >> "$OUT/env.txt"
"$PY" "$HERE/summary.py" "$OUT" > "$OUT/summary.md" || echo "summary.py failed"
echo "date end: $(date -Is)" >> "$OUT/env.txt"
echo "done: $OUT (meep_rows.csv, dgatd_rows.csv, jobs.csv, env.txt, logs/)"
