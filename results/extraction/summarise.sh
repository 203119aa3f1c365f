#!/usr/bin/env bash
# Totals of a sweep CSV (default sweep_quick.csv) per method and record length, as a
# markdown table: rows, expected lines (dense K, above the 1e-4 floor), found, missed,
# spurious, rows whose 1- and 2-thread results differ, rows changed by a 1e-14 perturbation.
set -euo pipefail
f=${1:-$(dirname "$0")/sweep_quick.csv}
echo "| method | steps | rows | expected | found | missed | spurious | thread-dependent rows | perturbation-dependent rows |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
awk -F, 'NR==1 { for (i=1;i<=NF;i++) c[$i]=i; next }
  { k=$c["method"]" "$c["steps"]; rows[k]++; e[k]+=$c["expected"]; fo[k]+=$c["found"]; m[k]+=$c["missed"]; s[k]+=$c["spurious"];
    t=$c["threads_identical"]; p=$c["perturbed_same"]; if (t=="false") th[k]++; if (p=="false") pe[k]++;
    if (t=="") th[k]="-"; if (p=="") pe[k]="-" }
  END { for (k in rows) { split(k, a, " "); printf "| %s | %d | %d | %d | %d | %d | %d | %s | %s |\n", a[1], a[2], rows[k], e[k], fo[k], m[k], s[k], (k in th)?th[k]:0, (k in pe)?pe[k]:0 } }' "$f" | sort -t'|' -k2,2 -k3n
