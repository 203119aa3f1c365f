#!/bin/bash
# CPU backend bench on the device machine's host cores: $1 = out subdir
sub=$1; mkdir -p $OUT/$sub
nproc; lscpu | grep -E "Model name|^CPU\(s\)|L3"
/usr/bin/time -v target/dgatd_h200 bench --devices none --precision f64,f32 --sizes 1e6 --reps 20 --warmup 3 --dg-orders "" --out $OUT/$sub > $OUT/$sub/log.txt 2>&1
echo rc=$?
grep -E "Elapsed" $OUT/$sub/log.txt
cut -d, -f7-10,13,17,18 $OUT/$sub/bench.csv
