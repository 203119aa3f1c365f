#!/usr/bin/env bash
# Regenerates the committed meshes from cylinder.geo with Debian's gmsh
# (apt-get install -y gmsh). Deterministic for a given gmsh version: Mesh.RandomSeed is fixed.
# The version that made the committed files is written to meshes/GMSH_VERSION.
set -euo pipefail
cd "$(dirname "$0")"
command -v gmsh >/dev/null || { echo "gmsh not found: apt-get install -y gmsh" >&2; exit 1; }
g() { gmsh -3 -v 2 "$@" cylinder.geo; }
g -setnumber lc 0.15 -format msh41 -o cylinder_coarse.msh   # ~2.7k tets
g -setnumber lc 0.10 -format msh41 -o cylinder_medium.msh   # ~7.9k tets
g -setnumber lc 0.07 -format msh41 -o cylinder_fine.msh     # ~22k tets
# A tiny mesh in the three supported encodings, for the reader tests.
g -setnumber lc 0.5 -format msh41 -o tiny_v41.msh
g -setnumber lc 0.5 -format msh41 -bin -o tiny_v41_bin.msh
g -setnumber lc 0.5 -format msh22 -o tiny_v22.msh
gmsh -3 -v 2 -format msh41 -o sphere.msh sphere.geo   # ~4k tets
echo "gmsh $(gmsh --version 2>&1)" > GMSH_VERSION
ls -l ./*.msh
