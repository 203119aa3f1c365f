#!/usr/bin/python3
"""Markdown table of one run.sh output folder: `python3 results/meep/summary.py DIR > DIR/summary.md`.

One line per job of DIR/jobs.csv, in run order: the code, the job, its threads, the job's wall
time as run.sh measured it (`wall s`; the process from start to exit), the size stepped
(MEEP: pixels in the part stepped; dgatd: tets), and the TE11 and TM11 errors against Mie
(f %, Q %; dgatd --converge jobs also give the extrapolated values, `conv`). MEEP rows are
matched to their job by the `tag` column, dgatd rows by order (mie_sphere appends two rows,
TE11 and TM11, per job). Blank: the job's class does not hold the mode; `none`: no line found.
"""
import csv
import math
import os
import sys


def read(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def num(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def err(f, q):
    f, q = num(f), num(q)
    if math.isnan(f) or math.isnan(q):
        return "none"
    return "%+.3f%%, %+.2f%%" % (f, q)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    jobs = read(os.path.join(d, "jobs.csv"))
    meep = read(os.path.join(d, "meep_rows.csv"))
    dg = read(os.path.join(d, "dgatd_rows.csv"))
    by_tag = {}
    for r in meep:
        by_tag.setdefault(r.get("tag", ""), []).append(r)
    dg_jobs = [j for j in jobs if j["part"].startswith("dgatd")]
    dg_by_job = {}
    for i, j in enumerate(dg_jobs):
        dg_by_job[j["name"]] = dg[2 * i: 2 * i + 2]
    if len(dg) != 2 * len(dg_jobs):
        print("> warning: %d dgatd rows for %d dgatd jobs; rows are matched by order\n"
              % (len(dg), len(dg_jobs)))

    print("| code | job | threads | rc | wall s | stepped | TE11 f, Q error | TM11 f, Q error | TE11 conv | TM11 conv |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- | --- |")
    for j in jobs:
        name, rc, wall, th = j["name"], j["rc"], j["wall_s"], j["threads"]
        te = tm = tec = tmc = ""
        size = ""
        if j["part"].startswith("meep"):
            code = "MEEP"
            rows = by_tag.get(name, [])
            for r in rows:
                size = "{:,} px".format(int(r["pixels_stepped"]))
                e = err(r["f_err_pct"], r["q_err_pct"])
                if r["line"] == "TE11":
                    te = e
                else:
                    tm = e
        else:
            code = "dgatd"
            rows = dg_by_job.get(name, [])
            conv = "--converge" in j["command"]
            excite_tm = "tm-ball" in j["command"] or "--excite tm" in j["command"]
            for r in rows:
                size = "{:,} tets".format(int(r["tets"]))
                e = err(r["f_err_pct"], r["q_err_pct"])
                c = err(r["f_conv_err_pct"], r["q_conv_err_pct"]) if conv else ""
                if r["mode"] == "TE11":
                    if not excite_tm:
                        te, tec = e, c
                else:
                    tm, tmc = e, c
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"
              % (code, name, th, rc, wall, size, te, tm, tec, tmc))


if __name__ == "__main__":
    main()
