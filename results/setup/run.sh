#!/usr/bin/env bash
# The one-GPU set-up ladder behind results/setup/ (issue 43: "a 1-GPU resonator run at 10M
# tets with setup <= 5 s"). Run from the repository root on the GPU machine with a release
# binary at devbin/dgatd (cargo build --release; strip -o devbin/dgatd target/release/dgatd).
# Writes setup.csv and the logs into $OUT (default ./setup-out). Each row is one
# `dgatd resonator` run; its phases come from the run's own `note: setup` line.
set -uo pipefail
OUT="${OUT:-setup-out}"; mkdir -p "$OUT/logs"
export OCL_ICD_FILENAMES="${OCL_ICD_FILENAMES:-libnvidia-opencl.so.1}"
B="${B:-devbin/dgatd}"
{ $B devices; nproc; } > "$OUT/devices.txt" 2>&1
echo "name,device,tets,steps,precision,assembly,setup_s,mesh_s,topology_s,assembly_s,stepper_s,power_s,run_s,commit" > "$OUT/setup.csv"
row() { # name, then the resonator flags
  local name=$1; shift
  $B resonator --backend opencl --quiet --out "$OUT/run" "$@" > "$OUT/logs/$name.log" 2>&1
  python3 - "$name" "$OUT/logs/$name.log" "$@" >> "$OUT/setup.csv" <<'PY'
import re, sys
name, log, args = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3:]
def flag(f, d):
    return args[args.index(f) + 1] if f in args else d
ph = dict(re.findall(r"(mesh|topology|assembly|stepper|power iteration) ([0-9.]+) s", log.split("note: setup", 1)[-1].split("\n", 1)[0]))
m = re.search(r"dgatd \S+ \(([\w-]+)\) \| opencl [^/]+/ ([^|(]+?) (?:\(|\|).*?\| (\d+) tets.*?(\d+) steps.*?setup ([0-9.]+) s, run ([0-9.]+) s", log)
if not m:
    print(f"{name},,,,,,,,,,,,,failed: {log.strip().splitlines()[-1] if log.strip() else 'no output'}")
    sys.exit()
commit, dev, tets, steps, setup, run = m.groups()
print(",".join([name, dev.strip(), tets, steps, flag("--precision", "f64"), flag("--assembly", "auto"), setup,
                ph.get("mesh", ""), ph.get("topology", ""), ph.get("assembly", ""), ph.get("stepper", ""),
                ph.get("power iteration", ""), run, commit]))
PY
  rm -rf "$OUT/run"
}
# 10.1M tets (box 119³), f64: the first run on a fresh machine compiles the kernels (NVIDIA's
# cache then holds them), the next three are what a user sees from then on
for i in 1 2 3 4; do row "box119_f64_$i" --box 119,119,119 --steps 400; done
row box119_f32 --box 119,119,119 --steps 400 --precision f32
row box119_f64_host --box 119,119,119 --steps 400 --assembly host
row box189_f64 --box 189,189,189 --steps 200
cat "$OUT/setup.csv"
