#!/usr/bin/env bash
# Spatial convergence of the cylinder resonances on the three bundled meshes (CPU backend,
# f64, 2 us of simulated time each). Writes <mesh>/{modes.csv,run.toml} and convergence.md.
# SUMMARY_ONLY=1 rebuilds convergence.md from existing modes.csv files.
set -euo pipefail
cd "$(dirname "$0")"
B=${B:-../../target/release/dgatd}
if [ "${SUMMARY_ONLY:-0}" != 1 ]; then
  for m in coarse medium fine; do
    $B resonator --mesh bundled:$m --backend cpu --time 2e-6 --quiet --out $m > $m.txt
    rm -f $m/probe.csv $m/spectrum.csv $m/spectrum.png $m/spectrum.svg
  done
fi
{
  echo "| mesh | tets | mode | analytic MHz | corrected MHz | error MHz | error % |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for m in coarse medium fine; do
    tets=$(grep -m1 '^tets' $m/run.toml | awk '{print $3}')
    # Columns by name (modes.csv's header is the contract); strongest row per mode.
    awk -F, -v m=$m -v t=$tets 'NR==1 { for (i=1;i<=NF;i++) c[$i]=i; next }
      { n=$c["nearest_analytic_mode"]; if (n=="TM010"||n=="TM110"||n=="TM210"||n=="TM020") {
          if (!(n in amp) || $c["amplitude"]+0 > amp[n]) { amp[n]=$c["amplitude"]+0; fa[n]=$c["analytic_hz"]; fc[n]=$c["f_corrected_hz"]; re[n]=$c["rel_error"] } } }
      END { split("TM010 TM110 TM210 TM020", o, " "); for (k=1;k<=4;k++) { n=o[k]; if (n in amp)
          printf "| %s | %s | %s | %.4f | %.4f | %+.4f | %+.4f |\n", m, t, n, fa[n]/1e6, fc[n]/1e6, (fc[n]-fa[n])/1e6, 100*re[n] } }' $m/modes.csv
  done
} > convergence.md
cat convergence.md
