#!/usr/bin/env bash
# Issue 45, "dispersive fills: the default time step and the correction". The bundled
# coarse PEC cylinder (r = 1 m, 2609 tets) filled with one pole, default settings
# (--cfl, fmax; 12000 steps), on the CPU, with two binaries: BEFORE (the previous commit)
# and AFTER (this one). For every line, its distance to the exact continuum image of the
# vacuum line of the same mesh (the spatial error removed: the reference is the same discrete
# operator) and to the analytic image of the cylinder's modes (spatial error included).
# Usage, from the repository root: BEFORE=path AFTER=target/release/dgatd bash results/dispersive/correction/run.sh
set -euo pipefail
# On a GPU: LABELS=after AFTER=devbin/dgatd BACKEND=opencl PRECISION=f32 OUT=... (the
# rows of one binary, on the device, in f32 or f64).
OUT="${OUT:-results/dispersive/correction}"; mkdir -p "$OUT"
LABELS="${LABELS:-before after}"; BACKEND="${BACKEND:-cpu}"; PRECISION="${PRECISION:-f64}"
AFTER="${AFTER:-target/release/dgatd}"
W=$(mktemp -d)
cfg() { # name, material table lines
  printf 'mesh = "bundled:coarse"\nsteps = 12000\nfmax = 4.0e8\nbackend = "%s"\nprecision = "%s"\n\n[materials.vacuum]\neps_r = 1.0\n%s\n' "$BACKEND" "$PRECISION" "$2" > "$W/$1.toml"
}
cfg vacuum ""
cfg lorentz 'lorentz = [{ delta_eps = 1.0, f_0 = 2.0e8 }]'
cfg drude 'drude = [{ f_p = 1.0e8 }]'
for b in $LABELS; do
  BIN=$AFTER; [ $b = before ] && BIN="${BEFORE:?the previous binary}"
  for c in vacuum lorentz drude; do
    $BIN resonator --quiet --config "$W/$c.toml" --out "$W/$b-$c" > "$W/$b-$c.log" 2>&1
    cp "$W/$b-$c/modes.csv" "$OUT/${b}_$c.modes.csv"
    grep "^note: the time step\|dt = " "$W/$b-$c.log" > "$OUT/${b}_$c.notes.txt" || true
  done
done
python3 - "$OUT" $LABELS <<'PY' | tee "$OUT/table.md"
import csv, math, sys
out = sys.argv[1]
def rows(name):
    return list(csv.DictReader(open(f"{out}/{name}.modes.csv")))
TAU = 2 * math.pi
def images(fill, f):
    l = (TAU * f) ** 2
    if fill == "lorentz":
        w0, de = TAU * 2e8, 1.0
        bq = -(w0 * w0 * (1 + de) + l); cq = l * w0 * w0
        d = math.sqrt(bq * bq - 4 * cq)
        return [("lower", math.sqrt((-bq - d) / 2) / TAU), ("upper", math.sqrt((-bq + d) / 2) / TAU)]
    wp = TAU * 1e8
    return [("", math.sqrt(l + wp * wp) / TAU)]
print("| binary | fill | line | dt s | f_hz MHz | f_corrected_hz MHz | exact image MHz | raw error | corrected error | analytic image MHz | corrected vs analytic |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for b in sys.argv[2:]:
    vac = [(float(r["f_corrected_hz"]), r["analytic_mode"], float(r["analytic_hz"] or "nan"))
           for r in rows(f"{b}_vacuum") if r["q"] not in ("", "nan") and float(r["q"]) > 1e3][:4]
    for fill in ["lorentz", "drude"]:
        rs = rows(f"{b}_{fill}")
        for k, (fv, mode, fa) in enumerate(vac):
            for (branch, img), (_, ana) in zip(images(fill, fv), images(fill, fa)):
                best = min(rs, key=lambda r: abs(float(r["f_corrected_hz"]) - img))
                f, fc, dt = float(best["f_hz"]), float(best["f_corrected_hz"]), float(best["dt_s"])
                if abs(fc - img) / img > 0.05:
                    continue
                print(f"| {b} | {fill} | {mode or k + 1} {branch} | {dt:.4e} | {f/1e6:.4f} | {fc/1e6:.4f} | {img/1e6:.4f} | {100*(f-img)/img:+.3f}% | {100*(fc-img)/img:+.5f}% | {ana/1e6:.4f} | {100*(fc-ana)/ana:+.3f}% |")
PY
rm -rf "$W"
