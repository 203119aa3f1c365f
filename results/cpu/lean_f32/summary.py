"""Prints the lean step's rows of each bench.csv given: copy, step, fraction of copy."""
import csv
import sys

for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    out = []
    for p in ["f32", "f64"]:
        cp = [x for x in rows if x["precision"] == p and x["kernel"] == "copy"][0]
        st = [x for x in rows if x["precision"] == p and x["kernel"] == "step"
              and x["variant"] == "tet_lean+factored_lean"][0]
        pr = [x for x in rows if x["precision"] == p and x["variant"] == "tet_lean"][0]
        du = [x for x in rows if x["precision"] == p and x["kernel"] == "dual_factored"
              and x["variant"] == "lean"][0]
        out.append(f"| {p} | {float(cp['gbs']):.1f} | {float(st['median_s'])*1e3:.2f} | "
                   f"{float(st['gbs']):.1f} | {float(st['frac_copy_bw']):.3f} | "
                   f"{float(pr['median_s'])*1e3:.2f} | {float(du['median_s'])*1e3:.2f} |")
    for o in out:
        print(f"| {path.split('/')[-1].removesuffix('.csv')} {o}")
