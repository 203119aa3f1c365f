#!/usr/bin/env bash
# Checks of meep_sphere.py made while preparing the benchmark (README.md, "Checks"); ~8 min on
# the 2-core machine, every job under a minute. Writes into $OUT (default results/meep/checks):
#   symmetry.csv   eps 10, res 4: each mode with its mirrors, without (--symmetries off), and
#                  with the other eighth's phases (te source, tm phases and the reverse)
#   subpixel36.csv eps 36, subpixel averaging on/off, te res 3-8 and tm res 4 6 8, in a small
#                  cell (PML 0.3 wavelengths out, 0.3 thick; --decays 0.5), which gives the
#                  same lines as the default 1-wavelength cell where both were run (te res 4,
#                  5, 6 and tm res 4 with averaging; ../quick/meep_rows.csv has res 4)
#   decays36.csv   eps 36, res 4, no averaging, small cell: --decays 0.5 1 2 4
#   ladder10.csv   eps 10, default cell, the eighths te and tm at res 3 4 6 (averaging on)
#   bigcell36.csv  eps 36, default 1-wavelength cell, te res 5 and 6 with averaging,
#                  --decays 0.5 --window 0.2 (BIG=1 only: ~3 min)
# PARTS (default "symmetry subpixel36 decays36 ladder10") picks some.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-$HERE/checks}
PY=${PY:-/usr/bin/python3}
M="$PY $HERE/meep_sphere.py --quiet"
PARTS=${PARTS:-symmetry subpixel36 decays36 ladder10}
mkdir -p "$OUT"
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
S=$OUT/symmetry.csv
if has symmetry; then
for m in te tm both; do
  $M --eps 10 --res 4 --mode $m --csv "$S" > /dev/null
  $M --eps 10 --res 4 --mode $m --symmetries off --csv "$S" > /dev/null
done
$M --eps 10 --res 4 --mode te --phases=1,1,-1 --csv "$S" > /dev/null
$M --eps 10 --res 4 --mode tm --phases=-1,-1,1 --csv "$S" > /dev/null
fi
P=$OUT/subpixel36.csv
if has subpixel36; then
small="--pml-dist 0.3 --pml-thick 0.3 --decays 0.5 --window 0.2"
for r in 3 4 5 6 7 8; do for s in on off; do
  $M --eps 36 --res $r --mode te --subpixel $s $small --csv "$P" > /dev/null
done; done
for r in 4 6 8; do for s in on off; do
  $M --eps 36 --res $r --mode tm --subpixel $s $small --csv "$P" > /dev/null
done; done
fi
D=$OUT/decays36.csv
if has decays36; then
for d in 0.5 1 2 4; do for m in te tm; do
  $M --eps 36 --res 4 --mode $m --decays $d --pml-dist 0.3 --pml-thick 0.3 --subpixel off --csv "$D" > /dev/null
done; done
fi
if has ladder10; then
  for r in 3 4 6; do for m in te tm; do
    $M --eps 10 --res $r --mode $m --csv "$OUT/ladder10.csv" > /dev/null
  done; done
fi
if [ "${BIG:-0}" = 1 ]; then
  for r in 5 6; do
    $M --eps 36 --res $r --mode te --decays 0.5 --window 0.2 --csv "$OUT/bigcell36.csv" > /dev/null
  done
fi
echo "done: $OUT"
