#!/usr/bin/env python3
"""Totals of an `extraction_sweep --extract-only` CSV per backend and record length, as a
markdown table: rows, expected lines, found, missed, missed outside every unresolved
interval, spurious, intervals, and rows that warn although nothing was missed.
Usage: unresolved_table.py FILE.csv"""
import csv
import sys
from collections import OrderedDict

rows = list(csv.DictReader(open(sys.argv[1])))
agg = OrderedDict()
for r in rows:
    if r["method"] != "extract":
        continue
    a = agg.setdefault((r["backend"], int(r["steps"])), [0] * 8)
    missed, intervals = int(r["missed"]), int(r["unresolved_intervals"])
    for i, v in enumerate([1, int(r["expected"]), int(r["found"]), missed,
                           int(r["missed_unflagged"]), int(r["spurious"]), intervals,
                           int(missed == 0 and intervals > 0)]):
        a[i] += v
print("| backend | steps | rows | expected | found | missed | missed without a warning "
      "| spurious | unresolved intervals | rows warned with nothing missed |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for (b, s), a in sorted(agg.items()):
    print(f"| {b} | {s} | " + " | ".join(str(v) for v in a) + " |")
