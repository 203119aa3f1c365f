#!/usr/bin/env bash
# Before/after figure of the device-code restructuring (issue 46): the same runs with the
# binary of the commit before it (devbin/dgatd-base) and of the restructured code
# (devbin/dgatd-new), interleaved A B A B in one lease, on the first OpenCL GPU.
# Run from the repository root on the GPU machine; writes runs.csv, bench CSVs and logs
# into $OUT (default ./restructure-out).
#   strip -o devbin/dgatd-base <build of the previous commit>/release/dgatd
#   strip -o devbin/dgatd-new target/release/dgatd
set -uo pipefail
OUT="${OUT:-restructure-out}"; mkdir -p "$OUT/logs"
export OCL_ICD_FILENAMES="${OCL_ICD_FILENAMES:-libnvidia-opencl.so.1}"
BOX="${BOX:-119,119,119}"; STEPS="${STEPS:-2000}"; REPS="${REPS:-3}"
BENCH_SIZES="${BENCH_SIZES:-1e6,1e7}"
devbin/dgatd-new devices > "$OUT/devices.txt" 2>&1
echo "case,binary,commit,device,tets,steps,precision,setup_s,run_s,ns_per_dof_step,ms_per_step,probe_md5" > "$OUT/runs.csv"
row() { # case, binary tag, then the resonator flags
  local name=$1 tag=$2; shift 2
  local log="$OUT/logs/${name}_${tag}.log" dir="$OUT/run_${name}_${tag}"
  rm -rf "$dir"
  "devbin/dgatd-$tag" resonator --backend opencl --quiet --out "$dir" "$@" > "$log" 2>&1
  local md5; md5=$(md5sum "$dir/probe.csv" 2>/dev/null | cut -c1-12)
  python3 - "$name" "$tag" "$log" "$md5" "$@" >> "$OUT/runs.csv" <<'PY'
import re, sys
name, tag, log, md5, args = sys.argv[1], sys.argv[2], open(sys.argv[3]).read(), sys.argv[4], sys.argv[5:]
prec = args[args.index("--precision") + 1] if "--precision" in args else "f64"
m = re.search(r"dgatd \S+ \(([\w-]+)\) \| opencl [^/]+/ ([^|]+?)(?: \(slot-major U\))? \| (\d+) tets.*?(\d+) steps.*?setup ([0-9.]+) s, run ([0-9.]+) s \(([0-9.]+) ns/DoF/step\)", log, re.S)
if not m:
    tail = log.strip().splitlines()[-1] if log.strip() else "no output"
    print(f"{name},{tag},,,,,{prec},,,,,failed: {tail}")
    sys.exit()
commit, dev, tets, steps, setup, run, ns = m.groups()
print(",".join([name, tag, commit, dev.strip(), tets, steps, prec, setup, run, ns,
                f"{1e3 * float(run) / int(steps):.4f}", md5]))
PY
  rm -rf "$dir"
}
# the main job (bundled cylinder, defaults) and a 10.1M-tet box, f64 and f32, A B A B ...
for i in $(seq 1 "$REPS"); do
  for tag in base new; do
    row main_job "$tag"
    row "box_f64" "$tag" --box "$BOX" --steps "$STEPS" --energy-checks 0
    row "box_f32" "$tag" --box "$BOX" --steps "$STEPS" --energy-checks 0 --precision f32
  done
done
# the bench's rows (every variant each binary has, and the whole step), GPU only
for tag in base new; do
  "devbin/dgatd-$tag" bench --devices "${BENCH_DEVICE:-NVIDIA}" --no-cpu --sizes "$BENCH_SIZES" --dg-orders 3 \
    --reps 20 --out "$OUT/bench_$tag" > "$OUT/logs/bench_$tag.log" 2>&1
  cp "$OUT/bench_$tag/bench.csv" "$OUT/bench_$tag.csv" 2>/dev/null
  rm -rf "$OUT/bench_$tag"
done
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$OUT/logs"
cat "$OUT/runs.csv"
