#!/bin/sh
# Writes window_scan.csv: the library's extraction (studies/extract_record.rs) of three saved
# ε_r = 10, `--excite tm-ball`, 8-shell records over windows from the pulse's end (3.64 ns,
# the runs' analysis start) to a moving end; README "The layer's echo and the record length".
# Run from the repository root: sh results/open/mie/window_scan.sh
set -e
cargo build --release --example extract_record
d=results/open/mie; tmp=$(mktemp -d)
echo "record,to_s,kind,f_hz,q,amplitude,f_hi_hz,poles" > $d/window_scan.csv
for r in layer_1.0-1.5m_n8_step2_eps10_tmball layer_1.0-1.5m_n8_step2_eps10_tmball_gated abc_1.2m_n8_step2_eps10_tmball; do
  gunzip -c $d/records/${r}_probe.csv.gz > $tmp/p.csv
  target/release/examples/extract_record $tmp/p.csv --from 3.64e-9 \
    --to 6e-9,7e-9,8e-9,9e-9,10e-9,11e-9,12e-9,13e-9,14e-9,16e-9,18e-9,20e-9,25e-9,32e-9 \
    --fmin 2.74e7 --fmax 1.295e9 | tail -n +2 | sed "s/^/$r,/" >> $d/window_scan.csv
done
rm -r $tmp
