#!/usr/bin/env bash
# Strong and weak scaling of `mpirun -np P dgatd resonator` on the nvidia-h200-x2 machine
# (issue 17), and a host<->device (PCIe) bandwidth probe for the on-paper model.
#
# Build HERE (nothing is built on the GPU machine), stripped so that both fit the 64 MiB carry:
#   cargo build --release --features mpi && cargo build --release --example pcie_probe
#   strip -o target/dgatd-mpi target/release/dgatd
#   strip -o target/pcie_probe target/release/examples/pcie_probe
# Run there (carry: target/dgatd-mpi, target/pcie_probe), one phase per command (each fits
# the 10-minute limit with its timeouts; all phases together about 13 minutes):
#   bash results/scaling/run_h200x2.sh probe+strong   # PCIe probe, 20M tets on 1 and 2 GPUs
#   bash results/scaling/run_h200x2.sh weak           # 50M tets per GPU on 1 and 2 GPUs
#   bash results/scaling/run_h200x2.sh big            # 200M tets, f64, 2 GPUs, 300 steps
# Check here on PoCL with tiny sizes: bash results/scaling/run_h200x2.sh all --tiny
#
# Energy checks: off (--energy-checks 0, ENERGY_CHECKS overrides): with the default 50, one
# 20M-tet f64 run of 1000 steps on one H200 took 135 s in its time loop, ~4 s of it in the
# step kernels; each check reads the whole state back to the host, which would hide the step.
# Progress lines (not --quiet) go to each run's log, so that a run cut by its timeout shows
# the phase it was in.
# Every run: a hard `timeout`, its own log ($OUT/NAME.log), one CSV row in $OUT/scaling.csv
# (name, ranks, tets, dofs, steps, setup_s, run_s, ns_per_dof_step, halo_values_per_step,
# exit status) whatever happens; all logs in $OUT/runs.log, PCIe rows in $OUT/pcie.csv; the table is printed last. The 1-rank runs take the ordinary
# one-process path (mpirun -np 1); the 2-rank runs pick the GPU by node rank. Partitioner:
# METIS for the 20M-tet strong-scaling pair; x slabs (DGATD_PARTITION=slab) for the weak and
# 200M runs, where METIS on rank 0 would take 2-8 minutes by itself (results/scaling/README.md).
# Host memory: each rank keeps its local operators on the host (~1800 B per tet, the model of
# cost::dga_host_bytes; HOST_B_PER_TET overrides it); a run whose whole mesh needs more than
# MemAvailable by that model is skipped (row with status "skipped-memory"). On the 2xH200 host
# (256 GiB) that skips the 200M-tet run (~360 GB by the model): see the report.
set -u
PHASES=${1:-all}
TINY=0
[ "${2:-}" = "--tiny" ] && TINY=1
OUT=${OUT:-/tmp/dgatd-scaling}
mkdir -p "$OUT"
BIN=${BIN:-target/dgatd-mpi}
[ -x "$BIN" ] || BIN=target/release/dgatd
PROBE=${PROBE:-target/pcie_probe}
[ -x "$PROBE" ] || PROBE=target/release/examples/pcie_probe
CSV=$OUT/scaling.csv
[ -f "$CSV" ] || echo "name,ranks,tets,dofs,steps,setup_s,run_s,ns_per_dof_step,halo_values_per_step,status" > "$CSV"

if [ "$TINY" = 0 ]; then
  # the ICD recipe of /work/shared/device/README.md
  # NVIDIA's ICD only: on this machine PoCL 5.0 aborted rank 1 of the first 2-rank runs
  # (assertion in pocl_release_dlhandle_cache), and no rank needs it
  mkdir -p /tmp/icd-nv && rm -f /tmp/icd-nv/*.icd
  echo libnvidia-opencl.so.1 > /tmp/icd-nv/nvidia.icd && export OCL_ICD_VENDORS=/tmp/icd-nv
fi
MPI=(mpirun --bind-to none)
[ "$(id -u)" = 0 ] && MPI+=(--allow-run-as-root)
[ "$TINY" = 1 ] && MPI+=(--oversubscribe)
[ -n "${OCL_ICD_VENDORS:-}" ] && MPI+=(-x OCL_ICD_VENDORS)
MPI+=(-x DGATD_PARTITION -x RAYON_NUM_THREADS)
export DGATD_PARTITION=${DGATD_PARTITION:-}
export RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-$(( $(nproc) / 2 ))}
HOST_B_PER_TET=${HOST_B_PER_TET:-1800}
[ "$TINY" = 1 ] && RAYON_NUM_THREADS=1
echo "binary $BIN ($("$BIN" --version 2>/dev/null)), out $OUT, tiny $TINY, rayon threads per rank $RAYON_NUM_THREADS"
"$BIN" devices 2>&1 | tee "$OUT/devices.txt"

# run NAME RANKS BOX STEPS TIMEOUT_S PRECISION PARTITIONER
run() {
  local name=$1 np=$2 box=$3 steps=$4 limit=$5 prec=$6 part=$7
  local log=$OUT/logs/$name.log
  mkdir -p "$OUT/logs"
  echo "== $name: $np rank(s), box $box, $steps steps, $prec, limit ${limit}s"
  local tets=$(( 6 * $(tr , '*' <<< "${box%%:*}") ))
  local need=$(( HOST_B_PER_TET * tets ))
  local avail=$(( $(awk '/MemAvailable/{print $2}' /proc/meminfo) * 1024 ))
  if [ "$avail" -lt "$need" ]; then
    echo "   skipped: needs ~$((need >> 30)) GiB of host memory ($HOST_B_PER_TET B/tet), $((avail >> 30)) GiB available"
    echo "$name,$np,$tets,,$steps,,,,,skipped-memory" >> "$CSV"
    return
  fi
  rm -rf "$OUT/runs/$name"
  DGATD_PARTITION=$part timeout -k 20 "$limit" "${MPI[@]}" -np "$np" "$BIN" resonator \
    --box "$box" --steps "$steps" --precision "$prec" --backend opencl --cavity none \
    --energy-checks "${ENERGY_CHECKS:-0}" --out "$OUT/runs/$name" > "$log" 2>&1
  local rc=$?
  # dgatd 0.1.0 (...) | BACKEND | T tets, D DoFs | ... | setup S s, run R s (N ns/DoF/step)
  local line dofs setup runs ns halo
  line=$(grep -m1 '^dgatd .* tets, .* DoFs' "$log")
  tets=$(sed -n 's/.*| \([0-9]*\) tets, \([0-9]*\) DoFs.*/\1/p' <<< "$line")
  dofs=$(sed -n 's/.*| \([0-9]*\) tets, \([0-9]*\) DoFs.*/\2/p' <<< "$line")
  setup=$(sed -n 's/.*setup \([0-9.e+-]*\) s, run.*/\1/p' <<< "$line")
  runs=$(sed -n 's/.*, run \([0-9.e+-]*\) s (.*/\1/p' <<< "$line")
  ns=$(sed -n 's/.*s (\([0-9.e+-]*\) ns\/DoF\/step).*/\1/p' <<< "$line")
  halo=$(sed -n 's/^note: halo exchange: \([0-9]*\) values.*/\1/p' "$log" | head -1)
  local status=$rc
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && status=timeout
  echo "$name,$np,${tets:-},${dofs:-},$steps,${setup:-},${runs:-},${ns:-},${halo:-0},$status" >> "$CSV"
  tail -n 3 "$log"
  rm -rf "$OUT/runs/$name"   # keep the logs and the CSV only (8 files come back)
}

# sizes: boxes of 6 n_x n_y n_z tets
if [ "$TINY" = 1 ]; then
  S20=10,10,9; W1=12,12,10; W2=15,15,13; B200=18,18,16; SS=200; SW=100; SB=100; PMIB=16
else
  S20=150,150,148; W1=204,204,200; W2=256,256,254; B200=324,324,318; SS=3000; SW=1000; SB=300; PMIB=512
fi

case "$PHASES" in *probe*|all)
  echo "== PCIe probe (pageable host memory, blocking copies)"
  devs=$("$BIN" devices 2>/dev/null | awk '$2=="GPU"{print $1}')
  [ "$TINY" = 1 ] && devs=0
  for d in $devs; do
    timeout 60 "$PROBE" --device "$d" --mib "$PMIB" 2>> "$OUT/pcie.log" | sed "s/^/$d,/" >> "$OUT/pcie.csv"
  done
  cat "$OUT/pcie.csv" 2>/dev/null
  echo "feed the model: cargo run --release --features partition --example partition_scaling -- --pcie-gbs GBS (the large-size rows' gb_s)"
esac
case "$PHASES" in *strong*|all)
  run strong20M_1 1 "$S20" "$SS" 200 f64 ""
  run strong20M_2 2 "$S20" "$SS" 280 f64 ""
esac
case "$PHASES" in *weak*|all)
  run weak50M_1 1 "$W1" "$SW" 240 f64 slab
  run weak50M_2 2 "$W2" "$SW" 330 f64 slab
esac
case "$PHASES" in *big*|all)
  run big200M_2 2 "$B200" "$SB" 560 f64 slab
esac
# one log file and one PCIe file come back (at most 8 files)
cat "$OUT"/logs/*.log > "$OUT/runs.log" 2>/dev/null && rm -rf "$OUT/logs"; rmdir "$OUT/runs" 2>/dev/null

echo
echo "== scaling table ($CSV)"
column -s, -t < "$CSV" 2>/dev/null || cat "$CSV"
awk -F, '
  $1=="strong20M_1"{s1=$7} $1=="strong20M_2"{s2=$7}
  $1=="weak50M_1"{w1=$7; t1=$3} $1=="weak50M_2"{w2=$7; t2=$3}
  END{
    if (s1>0 && s2>0) printf "strong scaling 20M tets, 1 -> 2 GPUs: speedup %.3f (target >= 1.8)\n", s1/s2;
    if (w1>0 && w2>0) printf "weak scaling 50M tets/GPU, 1 -> 2 GPUs: efficiency %.3f (target >= 0.95; step time per tet per GPU)\n", (w1/t1)/(w2/(t2/2));
  }' "$CSV"
