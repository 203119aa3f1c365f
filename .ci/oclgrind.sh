#!/usr/bin/env bash
# Runs the kernel smoke run (tests/kernel_smoke: every kernel of cl/*.cl on a tiny case,
# checked against the CPU) on Oclgrind, the OpenCL device simulator, with its uninitialised-value,
# data-race and API checks on; out-of-bounds accesses and barrier divergence are always checked.
# Fails on ANY Oclgrind report (anything on stderr), printing the count per kernel.
#
# Oclgrind is the only OpenCL platform visible here (a private ICD folder), so nothing under
# /etc changes. Installs the Debian package when it is missing. Takes about a minute.
#
# With DGATD_OCLGRIND_RESONATOR=1 it also runs the issue's acceptance commands
# (`dgatd resonator --box 2,2,2 --steps 10 --dt 5e-10 ... --device Oclgrind`, DGA and DG
# order 2), about 5 minutes more (DGA ~4 s; DG order 2 ~25 s a step on a busy 2-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
ICD_LIB="${OCLGRIND_ICD:-/usr/lib/oclgrind/liboclgrind-rt-icd.so}"
if [ ! -e "$ICD_LIB" ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq oclgrind ocl-icd-libopencl1 >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/icd"
echo "$ICD_LIB" >"$work/icd/oclgrind.icd"

# The kernel_smoke test target (harness = false) is the smoke run's program; cargo names its
# executable (target/release/deps/kernel_smoke-HASH).
smoke="$(cargo test --release --test kernel_smoke --no-run 2>&1 | tee /dev/stderr |
  sed -n 's/^ *Executable .*(\(.*\))$/\1/p' | tail -1)"
[ -x "$smoke" ] || { echo "FAIL: no kernel_smoke executable from cargo test --no-run"; exit 1; }
export OCL_ICD_VENDORS="$work/icd" OCLGRIND_UNINITIALIZED=1 OCLGRIND_DATA_RACES=1 OCLGRIND_CHECK_API=1
unset DGATD_CL_BUILD_LOG

# Prints Oclgrind's reports in $1 counted per kernel; fails when there is any.
# dgatd's own "note: ..." lines (e.g. that a given --dt is not checked against the DG bound on
# a device) are not reports and are left out; everything else on stderr counts.
check_stderr() {
  local err="$1" what="$2"
  grep -v '^note: ' "$err" >"$err.rest" || true
  if [ -s "$err.rest" ]; then
    echo "FAIL: $what: Oclgrind (or the run) wrote to stderr; reports per kernel:"
    grep -E '^\s*Kernel: ' "$err.rest" | sed -E 's/^\s*Kernel: //' | sort | uniq -c || true
    echo "--- first 200 lines of stderr ---"
    head -200 "$err.rest"
    return 1
  fi
  echo "ok: $what: no Oclgrind report"
}

start=$(date +%s)
status=0
"$smoke" --device Oclgrind >"$work/smoke.out" 2>"$work/smoke.err" || status=$?
cat "$work/smoke.out"
echo "kernel smoke run under Oclgrind: $(($(date +%s) - start)) s, exit status $status"
check_stderr "$work/smoke.err" "kernel smoke run"
[ "$status" = 0 ] || { echo "FAIL: kernel smoke run exited with $status"; exit 1; }
grep -q '^device: Oclgrind' "$work/smoke.out" || { echo "FAIL: did not run on Oclgrind"; exit 1; }

if [ "${DGATD_OCLGRIND_RESONATOR:-0}" = 1 ]; then
  cargo build --release
  # The issue's commands, with a given time step (no power iteration on the simulator).
  dt="--dt 5e-10"
  for extra in "" "--method dg --order 2"; do
    start=$(date +%s)
    # shellcheck disable=SC2086
    ./target/release/dgatd resonator --box 2,2,2 --steps 10 $dt --backend opencl \
      --device Oclgrind --quiet --out "$work/res" $extra >"$work/res.out" 2>"$work/res.err" ||
      echo "FAIL: resonator $extra exited with $?" >>"$work/res.err"
    echo "resonator --box 2,2,2 --steps 10 $dt $extra under Oclgrind: $(($(date +%s) - start)) s"
    check_stderr "$work/res.err" "dgatd resonator --box 2,2,2 --steps 10 $dt $extra"
  done
fi
