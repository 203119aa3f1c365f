#!/usr/bin/env bash
# Spatial convergence of the cylinder resonances on the three bundled meshes (CPU backend,
# f64, 2 us of simulated time each). Writes <mesh>/{modes.csv,run.toml} and convergence.md.
set -euo pipefail
cd "$(dirname "$0")"
B=${B:-../../target/release/dgatd}
for m in coarse medium fine; do
  $B resonator --mesh bundled:$m --backend cpu --time 2e-6 --quiet --out $m > $m.txt
  rm -f $m/probe.csv $m/spectrum.csv
done
{
  echo "| mesh | tets | mode | analytic MHz | corrected MHz | error MHz | error % |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for m in coarse medium fine; do
    tets=$(grep -m1 '^tets' $m/run.toml | awk '{print $3}')
    awk -F, -v m=$m -v t=$tets 'NR>1 && ($7=="TM010"||$7=="TM110"||$7=="TM210"||$7=="TM020") && !seen[$7]++ {
      printf "| %s | %s | %s | %.4f | %.4f | %+.4f | %+.4f |\n", m, t, $7, $8/1e6, $3/1e6, ($3-$8)/1e6, 100*$9 }' $m/modes.csv
  done
} > convergence.md
cat convergence.md
