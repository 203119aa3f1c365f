#!/bin/bash
# The main job on the bundled medium cylinder refined 3 times (3.9M tets), 8000 steps, on the
# H200, f64 and f32, with the default 50 energy checks and with 1: $1 = a label for the
# outputs. Prints each run's summary line (setup and run times, ns/DoF/step) and the
# energies' first and last records.
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
label=${1:-run}
for p in f64 f32; do
  for c in 50 1; do
    o=$OUT/${label}_${p}_checks$c
    target/dgatd_h200 resonator --mesh bundled:medium --refine 3 --steps 8000 --energy-checks $c \
      --backend opencl --device NVIDIA --precision $p --quiet --out $o > $o.txt 2>&1
    echo "$p checks=$c rc=$? $(grep -h 'ns/DoF/step' $o.txt | cut -d'|' -f2,6-)"
    rm -f $o/spectrum.png $o/spectrum.svg $o/probe.csv
  done
done
