#!/usr/bin/env bash
# Installs Intel's OpenCL runtime for CPUs from the Python package index (wheels, no root, no
# change under /etc) and runs the OpenCL test file on it with ONLY Intel's ICD visible, so every
# OpenCL test runs on Intel's implementation (DGATD_REQUIRE_OPENCL=1: a missing device fails).
# Runs on any x86-64 CPU (checked on an AMD EPYC). About 700 MB unpacked.
#
#   .ci/intel-opencl.sh            # install (cached in $INTEL_OCL_DIR) and run the tests
#   .ci/intel-opencl.sh --env      # install, then print the exports that select it
#                                  # (eval "$(.ci/intel-opencl.sh --env)"; dgatd devices)
#
# INTEL_OCL_DIR (default ~/.cache/dgatd-intel-opencl) keeps the unpacked runtime between runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# Versions known to work (intel-opencl-rt 2026.2.0 reports OpenCL C 3.x with cl_khr_fp64).
INTEL_OPENCL_RT="${INTEL_OPENCL_RT:-2026.2.0}"
TBB="${TBB:-2023.*}"
DIR="${INTEL_OCL_DIR:-$HOME/.cache/dgatd-intel-opencl}"
ENV_ONLY=0
[ "${1:-}" = "--env" ] && ENV_ONLY=1

say() { if [ "$ENV_ONLY" = 1 ]; then echo "# $*" >&2; else echo "$*"; fi; }

if [ ! -f "$DIR/ready-$INTEL_OPENCL_RT" ]; then
  start=$(date +%s)
  rm -rf "$DIR" && mkdir -p "$DIR/wheels" "$DIR/x" "$DIR/icd"
  python3 -m pip download -q --no-deps -d "$DIR/wheels" "intel-opencl-rt==$INTEL_OPENCL_RT" \
    "tbb==$TBB" "intel-cmplr-lib-rt==$INTEL_OPENCL_RT" >&2
  t_dl=$(($(date +%s) - start))
  for w in "$DIR"/wheels/*.whl; do unzip -q -o "$w" -d "$DIR/x"; done
  rm -rf "$DIR/wheels"
  say "Intel OpenCL runtime $INTEL_OPENCL_RT: download ${t_dl} s, unpack $(($(date +%s) - start - t_dl)) s, $(du -sh "$DIR/x" | cut -f1) unpacked"
  touch "$DIR/ready-$INTEL_OPENCL_RT"
fi

libdir() { dirname "$(find "$DIR/x" -name "$1" | head -1)"; }
L="$(libdir 'libintelocl.so.*')"
# Keep the system's ICD loader (libOpenCL.so.1 from ocl-icd): the wheel ships its own.
rm -f "$L"/libOpenCL.so*
echo "$(ls "$L"/libintelocl.so.* | head -1)" >"$DIR/icd/intel.icd"
LD="$L:$(libdir 'libtbb.so.12'):$(libdir 'libimf.so')"

if [ "$ENV_ONLY" = 1 ]; then
  echo "export OCL_ICD_VENDORS='$DIR/icd' LD_LIBRARY_PATH='$LD'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
  exit 0
fi

export OCL_ICD_VENDORS="$DIR/icd" LD_LIBRARY_PATH="$LD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DGATD_REQUIRE_OPENCL=1
# Builds the two test binaries and, with them, target/release/dgatd (the same build as the
# tests use, so no separate `cargo build --release`).
cargo test --release --test opencl --test kernel_smoke --no-run
"${CARGO_TARGET_DIR:-target}/release/dgatd" devices
"${CARGO_TARGET_DIR:-target}/release/dgatd" devices | grep -q 'Intel(R) OpenCL' || {
  echo "FAIL: Intel's OpenCL device is not listed"
  exit 1
}
start=$(date +%s)
log="$(mktemp)"
status=0
# The opencl module of tests/opencl (the former tests/opencl.rs).
cargo test --release --test opencl opencl:: -- --nocapture >"$log" 2>&1 || status=$?
echo "OpenCL tests on Intel's runtime: $(($(date +%s) - start)) s, exit status $status; figures:"
grep -E 'relative error|differ by|power iteration|DG rho|DG N=|SKIPPED|test result|panicked' "$log" || true
if [ "$status" != 0 ]; then
  tail -100 "$log"
  exit "$status"
fi
# The kernel smoke run (every kernel of cl/*.cl against the CPU) on Intel's runtime too, both
# precisions (the test target tests/kernel_smoke).
cargo test --release --test kernel_smoke
