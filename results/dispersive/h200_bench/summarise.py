#!/usr/bin/env python3
"""Table of the dispersive step rows of a `dgatd bench --dispersion` CSV (kernel
step_dispersive): per precision and mesh, each case's median time, its ratio to the `none`
row (no dispersive tet) of the same run, the modelled bytes the dispersion adds, the whole
step's fraction of the measured copy bandwidth, and the bandwidth on the extra bytes
(extra bytes / extra time). Usage: summarise.py bench.csv > summary.md"""
import csv
import sys

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kernel"] == "step_dispersive"]
base = {(r["precision"], r["tets"]): r for r in rows if r["variant"] == "none"}
print(f"commit {rows[0]['commit']}, {rows[0]['device']}, driver {rows[0]['driver']}, "
      f"{rows[0]['reps']} timed steps per row\n")
print("| precision | tets | case | form | ms/step | ratio to none | extra bytes (model) "
      "| step frac. of copy | GB/s on the extra |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    b = base[(r["precision"], r["tets"])]
    ms, ms0 = 1e3 * float(r["median_s"]), 1e3 * float(b["median_s"])
    extra = float(r["bytes_model"]) - float(b["bytes_model"])
    case, _, form = r["variant"].partition("+")
    gbs = f"{extra / ((ms - ms0) * 1e-3) / 1e9:.0f}" if ms > ms0 and extra > 0 else "-"
    print(f"| {r['precision']} | {r['tets']} | {case} | {form or '-'} | {ms:.4f} | "
          f"{ms / ms0:.3f} | {extra:.3e} | {float(r['frac_copy_bw']):.3f} | {gbs} |")
