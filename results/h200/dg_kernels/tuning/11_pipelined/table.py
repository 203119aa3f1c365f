#!/usr/bin/env python3
"""Prints the dg_update rows of every configuration run here (calls 2-5: their bench.csv;
call 1: the device's printed rows in call1/stdout.txt, whose CSVs did not come back), as
Markdown tables: median ms and fraction of the binding roof (no numbers typed in)."""
import csv, glob, os, re
here = os.path.dirname(os.path.abspath(__file__))

def cell(r):
    return f"{float(r['median_s']) * 1e3:.3f} ms, {float(r['frac_roof']):.3f}"

def show(title, configs):
    forms = []
    for _, rows in configs:
        for r in rows:
            if r["variant"] not in forms:
                forms.append(r["variant"])
    print(f"\n### {title}\n")
    print("| configuration | " + " | ".join(f"`{f}`" for f in forms) + " |")
    print("| --- |" + " ---: |" * len(forms))
    for name, rows in configs:
        by = {r["variant"]: r for r in rows}
        print(f"| {name} | " + " | ".join(cell(by[f]) if f in by else "" for f in forms) + " |")

# call 1: the printed rows (cut -d, -f7-10,13,18,22: precision, kernel, variant, tets, median, frac copy, frac roof)
configs, name = [], None
for line in open(os.path.join(here, "call1", "stdout.txt")):
    m = re.match(r"== (\S+) \(", line)
    if m:
        name = m.group(1)
        configs.append((name, []))
        continue
    f = line.strip().split(",")
    if name and len(f) == 7 and f[1] == "dg_update":
        configs[-1][1].append({"precision": f[0], "variant": f[2], "median_s": f[4], "frac_roof": f[6]})
for p, n in [("f64", 4), ("f64", 3), ("f32", 3), ("f32", 4)]:
    sel = [(c, [r for r in rows if r["precision"] == p and r["variant"].startswith(f"N={n}")]) for c, rows in configs]
    sel = [(c, rows) for c, rows in sel if rows]
    if sel:
        show(f"call 1, {p}, N = {n}", sel)
for call in ["call2", "call3", "call4", "call5"]:
    logs = sorted(glob.glob(os.path.join(here, call, "*.log")), key=os.path.getmtime)
    names = [os.path.basename(l)[:-4] for l in logs if os.path.basename(l) != "ptx.log"]
    for p, n in [("f64", 4), ("f64", 3), ("f32", 3), ("f32", 4)]:
        sel = []
        for c in names:
            f = os.path.join(here, call, c, "bench.csv")
            if not os.path.exists(f):
                continue
            rows = [r for r in csv.DictReader(open(f)) if r["kernel"] == "dg_update" and r["precision"] == p
                    and r["variant"].split("+")[0] == f"N={n}"]
            if rows:
                sel.append((c, rows))
        if sel:
            show(f"{call}, {p}, N = {n}", sel)
