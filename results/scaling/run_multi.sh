#!/usr/bin/env bash
# Strong and weak scaling of `mpirun -np P dgatd resonator` and of `dgatd resonator --gpus P`
# (one process, one thread per GPU, halos through host memory) on one several-GPU host (the
# nvidia-h100-x4 / -x2 / -x8 machines), every row of one lease with one binary, the 1-GPU
# baseline first. Issue 43 (and 44 with LADDER=x8). LADDER=x4t / x2t: the --gpus ladder with
# MPI rows beside it.
#
# Build HERE (nothing is built on the GPU machine), stripped to fit the 64 MiB carry:
#   cargo build --release --features mpi && strip -o target/dgatd-mpi target/release/dgatd
# Run there (carry: target/dgatd-mpi), one command for the whole ladder:
#   bash results/scaling/run_multi.sh            # LADDER=x4 (default), x2 or x8
# Check here on PoCL with tiny sizes first:
#   bash results/scaling/run_multi.sh --tiny
#
# Rows (one per run, whatever happens) go to $OUT/scaling.csv with the columns of
# results/scaling/scaling.csv:
#   name, device (the GPU's name as OpenCL reports it), ranks, tets, steps, precision,
#   partitioner, setup_s, run_s, step_ms (run_s / steps), comm_ms (host time of the halo
#   exchange per step, largest over the ranks), d2h_ms, mpi_ms, h2d_ms (its parts),
#   interface_ms, interior_ms (device time of the two kernel parts per step, from profiling
#   events of every 64th step), halo_values (per step, all ranks), commit, status, lease
#   (empty here: filled in when the rows are committed), transport (mpi: mpirun ranks;
#   threads: --gpus; a +half-edge suffix: the ranks' U kept by half-edge,
#   DGATD_PART_U=half-edge, instead of slot-major).
# Logs: $OUT/logs/NAME.log (progress lines kept: a run cut by its timeout shows its phase).
#
# GPUs under mpirun: the image sets OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 and
# mpirun cuts the value at the colon (../shared/device/README.md), so the ranks get NVIDIA's
# library alone, exported explicitly; PoCL is then not loaded by any rank.
# Energy checks off (--energy-checks 0): each check reads the whole state back to the host.
set -u
TINY=0
[ "${1:-}" = "--tiny" ] && TINY=1
LADDER=${LADDER:-x4}
OUT=${OUT:-/tmp/dgatd-multi}
mkdir -p "$OUT/logs"
BIN=${BIN:-target/dgatd-mpi}
[ -x "$BIN" ] || BIN=target/release/dgatd
CSV=$OUT/scaling.csv
echo "name,device,ranks,tets,steps,precision,partitioner,setup_s,run_s,step_ms,comm_ms,d2h_ms,mpi_ms,h2d_ms,interface_ms,interior_ms,halo_values,commit,status,lease,transport" > "$CSV"
START=$(date +%s)
BUDGET=${BUDGET:-560} # seconds for the whole ladder (the device call's limit is 600)

if [ "$TINY" = 0 ]; then
  export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
fi
MPI=(mpirun --bind-to none)
[ "$(id -u)" = 0 ] && MPI+=(--allow-run-as-root)
[ "$TINY" = 1 ] && MPI+=(--oversubscribe)
[ -n "${OCL_ICD_FILENAMES:-}" ] && MPI+=(-x OCL_ICD_FILENAMES)
[ -n "${POCL_CACHE_DIR:-}" ] && MPI+=(-x POCL_CACHE_DIR)
MPI+=(-x RAYON_NUM_THREADS)
# PoCL ranks (--tiny) are a CPU device asked for by name: --backend opencl alone refuses
# ranks without a GPU
DEVFLAG=()
[ "$TINY" = 1 ] && DEVFLAG=(--device 0)
CORES=$(nproc)
COMMIT=""
echo "binary $BIN ($("$BIN" --version 2>/dev/null)), out $OUT, ladder $LADDER, tiny $TINY, $CORES cores"
"$BIN" devices 2>&1 | tee "$OUT/devices.txt"
"${MPI[@]}" -np 2 "$BIN" devices > "$OUT/devices_under_mpirun.txt" 2>&1
# the device column of the first GPU row (else the first row), by the header's offsets
pick_device() {
  awk -v want="$1" 'NR==1{a=index($0,"device"); b=index($0,"vendor"); next}
    $2==want && !done {s=substr($0,a,b-a); gsub(/^ +| +$/,"",s); gsub(/,/," ",s); print s; done=1}' "$OUT/devices.txt"
}
DEVICE=$(pick_device GPU)
[ -n "$DEVICE" ] || DEVICE=$(pick_device CPU)

# run NAME RANKS BOX STEPS LIMIT_S PRECISION PARTITIONER [TRANSPORT]
# TRANSPORT: mpi (default; one rank: no mpirun), threads (--gpus RANKS), or either with
# +half-edge (DGATD_PART_U=half-edge)
run() {
  local name=$1 np=$2 box=$3 steps=$4 limit=$5 prec=$6 part=$7 tr=${8:-mpi}
  local log=$OUT/logs/$name.log
  local left=$(( BUDGET - ($(date +%s) - START) ))
  if [ "$left" -lt 30 ]; then
    echo "== $name: skipped (ladder budget spent)"
    echo "$name,$DEVICE,$np,,$steps,$prec,$part,,,,,,,,,,,$COMMIT,skipped-budget,,$tr" >> "$CSV"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name: $np rank(s), box $box, $steps steps, $prec, $part, $tr, limit ${limit}s"
  export RAYON_NUM_THREADS=$(( CORES / np > 0 ? CORES / np : 1 ))
  local launch=("${MPI[@]}" -np "$np" "$BIN") gpus=()
  case "$tr" in
  threads*) launch=("$BIN"); gpus=(--gpus "$np"); RAYON_NUM_THREADS=$CORES ;;
  esac
  [ "$np" = 1 ] && launch=("$BIN") && gpus=()
  [ "$TINY" = 1 ] && RAYON_NUM_THREADS=1
  case "$tr" in
  *half-edge) export DGATD_PART_U=half-edge ;;
  *) unset DGATD_PART_U ;;
  esac
  rm -rf "$OUT/runs/$name"
  timeout -k 15 "$limit" "${launch[@]}" resonator "${gpus[@]}" \
    --box "$box" --steps "$steps" --precision "$prec" --backend opencl --cavity none \
    --partitioner "$part" --energy-checks 0 "${DEVFLAG[@]}" --out "$OUT/runs/$name" > "$log" 2>&1
  local rc=$?
  # dgatd 0.1.0 (...) | BACKEND | T tets, D DoFs | ... | setup S s, run R s (N ns/DoF/step)
  local line tets setup runs halo timing
  line=$(grep -m1 '^dgatd .* tets, .* DoFs' "$log")
  COMMIT=$(sed -n 's/^dgatd [^ ]* (\([^)]*\)).*/\1/p' <<< "$line")
  tets=$(sed -n 's/.*| \([0-9]*\) tets, \([0-9]*\) DoFs.*/\1/p' <<< "$line")
  setup=$(sed -n 's/.*setup \([0-9.e+-]*\) s, run.*/\1/p' <<< "$line")
  runs=$(sed -n 's/.*, run \([0-9.e+-]*\) s (.*/\1/p' <<< "$line")
  halo=$(sed -n 's/^note: halo exchange: \([0-9]*\) values.*/\1/p' "$log" | head -1)
  timing=$(grep -m1 '^note: halo timing' "$log")
  local num='\([0-9.e+-]*\)'
  local comm d2h mpi h2d ifc inr
  comm=$(sed -n "s/.*exchange $num on the host.*/\1/p" <<< "$timing")
  d2h=$(sed -n "s/.*device to host $num,.*/\1/p" <<< "$timing")
  mpi=$(sed -n "s/.*transport $num,.*/\1/p" <<< "$timing")
  h2d=$(sed -n "s/.*host to device $num).*/\1/p" <<< "$timing")
  ifc=$(sed -n "s/.*device $num interface.*/\1/p" <<< "$timing")
  inr=$(sed -n "s/.*+ $num interior.*/\1/p" <<< "$timing")
  local step_ms=""
  [ -n "$runs" ] && step_ms=$(awk -v r="$runs" -v s="$steps" 'BEGIN{printf "%.4f", 1000*r/s}')
  local status=$rc
  { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && status=timeout
  echo "$name,$DEVICE,$np,${tets:-},$steps,$prec,$part,${setup:-},${runs:-},$step_ms,${comm:-0},${d2h:-0},${mpi:-0},${h2d:-0},${ifc:-},${inr:-},${halo:-0},$COMMIT,$status,,$tr" >> "$CSV"
  grep -E '^(note: (setup|partition|halo)|error|dgatd )' "$log" | cut -c1-400
  rm -rf "$OUT/runs/$name" # keep the logs and the CSV
}

# sizes: boxes of 6 n^3 tets (119: 10.1M, 150: 20.25M, 189: 40.5M, 238: 80.9M)
if [ "$TINY" = 1 ]; then
  S10=10,10,10; S20=12,12,12; S40=15,15,15; S80=18,18,18; ST=200
else
  S10=119,119,119; S20=150,150,150; S40=189,189,189; S80=238,238,238; ST=2000
fi
P=${PARTITIONER:-auto}
run strong10M_1 1 "$S10" "$ST" 150 f64 "$P"
run strong10M_2 2 "$S10" "$ST" 150 f64 "$P"
case "$LADDER" in
x2)
  run weak10M_2 2 "$S20" "$ST" 200 f64 "$P"
  ;;
x4)
  run strong10M_4 4 "$S10" "$ST" 150 f64 "$P"
  run weak10M_2 2 "$S20" "$ST" 200 f64 "$P"
  run weak10M_4 4 "$S40" "$ST" 200 f64 "$P"
  run strong40M_1 1 "$S40" "$ST" 200 f64 "$P"
  run f32_40M_4 4 "$S40" "$ST" 150 f32 "$P"
  ;;
x2t)
  run gpus10M_2 2 "$S10" "$ST" 150 f64 "$P" threads
  run gpus10M_2_half 2 "$S10" "$ST" 150 f64 "$P" threads+half-edge
  run weak10M_gpus2 2 "$S20" "$ST" 200 f64 "$P" threads
  ;;
x4t)
  run gpus10M_2 2 "$S10" "$ST" 150 f64 "$P" threads
  run gpus10M_4 4 "$S10" "$ST" 150 f64 "$P" threads
  run gpus10M_2_half 2 "$S10" "$ST" 150 f64 "$P" threads+half-edge
  run strong10M_4 4 "$S10" "$ST" 150 f64 "$P" mpi
  run weak10M_gpus4 4 "$S40" "$ST" 240 f64 "$P" threads
  run strong40M_1 1 "$S40" "$ST" 200 f64 "$P"
  run weak10M_gpus2 2 "$S20" "$ST" 200 f64 "$P" threads
  ;;
x8)
  run strong10M_4 4 "$S10" "$ST" 150 f64 "$P"
  run strong10M_8 8 "$S10" "$ST" 150 f64 "$P"
  run weak10M_2 2 "$S20" "$ST" 200 f64 "$P"
  run weak10M_4 4 "$S40" "$ST" 200 f64 "$P"
  run weak10M_8 8 "$S80" "$ST" 250 f64 "$P"
  ;;
esac
echo
if command -v column >/dev/null; then column -s, -t < "$CSV" | cut -c1-250; else cat "$CSV"; fi
