#!/bin/bash
# The main job on the bundled medium cylinder refined 3 times (3.9M tets), in the file's
# order and renumbered along a Z-order curve (--mesh-order morton), f64 and f32, on the
# H200: $1 = steps. Prints each run's summary line (setup and run times, ns/DoF/step).
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
steps=${1:-8000}
for p in f64 f32; do
  for o in file morton; do
    target/dgatd_h200 resonator --mesh bundled:medium --refine 3 --mesh-order $o --steps $steps \
      --backend opencl --device NVIDIA --precision $p --quiet --out $OUT/res_${p}_$o > $OUT/res_${p}_$o.txt 2>&1
    echo "$p $o rc=$? $(grep -h 'ns/DoF/step' $OUT/res_${p}_$o.txt $OUT/res_${p}_$o/summary.md 2>/dev/null | head -1)"
  done
done
