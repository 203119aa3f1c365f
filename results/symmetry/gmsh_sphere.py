#!/usr/bin/python3
"""A dielectric sphere in air inside a spherical PML, meshed by Gmsh (unstructured), whole or
cut to the quarter x >= 0, y >= 0 or the eighth x, y, z >= 0 (the symmetry planes of
`--symmetry x=..,y=..[,z=..]`).

    /usr/bin/python3 results/symmetry/gmsh_sphere.py --seed S --eps E --out FILE.msh \
        [--cut whole|quarter|eighth] [--h-factor F]

The radius is seeded random, r = 0.1 (0.8 + 0.4 u) m; the air reaches one free-space
wavelength of the sphere's TE11 mode beyond it (Mie: k0 r = x_TE11(eps), printed), the PML
half a wavelength more. Volume groups `sphere`, `air`, `pml`. Element sizes: r / 4 in the
sphere (the generated ball's 4 shells), then growing with the distance from the centre to
lam0 / 12 in air and the PML. Gmsh's mesh seed is `--seed`. Prints the radius, the air and
PML radii and the tet count, in one line of `key=value` pairs.
"""
import argparse
import math
import random

import gmsh

# k0 r of TE11 of a dielectric sphere (Mie), from dgatd's spectrum::mie at these eps (the
# study looks them up itself; here only to place the layers)
X_TE11 = {10.0: 0.93974, 36.0: 0.51169}

p = argparse.ArgumentParser()
p.add_argument("--seed", type=int, required=True)
p.add_argument("--eps", type=float, required=True)
p.add_argument("--out", required=True)
p.add_argument("--cut", choices=["whole", "quarter", "eighth"], default="whole")
p.add_argument("--h-factor", type=float, default=1.0, help="scales every element size")
a = p.parse_args()

rng = random.Random(a.seed)
r = 0.1 * (0.8 + 0.4 * rng.random())
lam0 = 2 * math.pi * r / X_TE11[a.eps]
r_air = r + lam0
r_pml = r_air + 0.5 * lam0
h_in = a.h_factor * r / 4
h_out = a.h_factor * lam0 / 24

gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.option.setNumber("Mesh.RandomSeed", a.seed)
gmsh.model.add("sphere")
occ = gmsh.model.occ
balls = [occ.addSphere(0, 0, 0, x) for x in (r, r_air, r_pml)]
if a.cut != "whole":
    # The box reaches past the PML sphere: a box face at x = r_pml would touch the sphere
    # at one point, and the fragments' tangency leaves a cluster of flat tets there that set
    # the time step once the mesh is refined (8x smaller at level 1, results/symmetry/README).
    big = 1.25 * r_pml
    z0 = 0 if a.cut == "eighth" else -big
    box = occ.addBox(0, 0, z0, big, big, big - z0)
    occ.fragment([(3, b) for b in balls], [(3, box)])
else:
    occ.fragment([(3, balls[2])], [(3, balls[0]), (3, balls[1])])
occ.synchronize()
kept = {"sphere": [], "air": [], "pml": []}
for dim, tag in gmsh.model.getEntities(3):
    cx, cy, cz = occ.getCenterOfMass(3, tag)
    x0, y0, z0, x1, y1, z1 = gmsh.model.getBoundingBox(3, tag)
    if a.cut != "whole" and (cx < 0 or cy < 0 or (a.cut == "eighth" and cz < 0)):
        occ.remove([(3, tag)], recursive=True)
        continue
    ext = max(abs(v) for v in (x0, y0, z0, x1, y1, z1))
    if ext <= r * (1 + 1e-3):
        kept["sphere"].append(tag)
    elif ext <= r_air * (1 + 1e-3):
        kept["air"].append(tag)
    elif ext <= r_pml * (1 + 1e-3):
        kept["pml"].append(tag)
    else:  # the box beyond the PML
        occ.remove([(3, tag)], recursive=True)
occ.synchronize()
for k, (name, tags) in enumerate(kept.items()):
    assert tags, f"no {name} volume"
    gmsh.model.addPhysicalGroup(3, tags, k + 1)
    gmsh.model.setPhysicalName(3, k + 1, name)


def size(dim, tag, x, y, z, *lc):
    rho = math.sqrt(x * x + y * y + z * z)
    return h_in if rho <= r * 1.001 else min(h_out, h_in * (rho / r))


gmsh.model.mesh.setSizeCallback(size)
gmsh.option.setNumber("Mesh.MeshSizeExtendFromBoundary", 0)
gmsh.option.setNumber("Mesh.MeshSizeFromPoints", 0)
gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 0)
gmsh.option.setNumber("Mesh.OptimizeThreshold", 0.5)
gmsh.model.mesh.generate(3)
gmsh.model.mesh.optimize("Relocate3D")
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.option.setNumber("Mesh.Binary", 1)
gmsh.write(a.out)
tets = sum(len(t) for t in gmsh.model.mesh.getElementsByType(4)[0:1])
gmsh.finalize()
print(f"seed={a.seed} eps={a.eps} r={r:.6f} r_air={r_air:.6f} r_pml={r_pml:.6f} tets={tets}")
