#!/usr/bin/env bash
# The Gmsh meshes of results/symmetry/run.sh PART=c (seeded: the same files each time with
# the same Gmsh), gzipped into devbin/meshes/ to carry to the GPU machine.
set -euo pipefail
D=${D:-devbin/meshes}; mkdir -p "$D"
G=results/symmetry/gmsh_sphere.py
for spec in "11 36 quarter" "12 10 quarter" "12 10 eighth"; do
  set -- $spec
  /usr/bin/python3 $G --seed "$1" --eps "$2" --cut "$3" --out "$D/s$2_$3.msh"
  gzip -f -9 "$D/s$2_$3.msh"
done
