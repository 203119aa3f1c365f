"""A tilted dielectric cylinder in a box, for the fit tests of src/mesh/interfaces.rs.

Axis (0.3, -0.5, 0.8) through (0.05, 0, -0.02), radius 0.3, length 1.0; volume group 1
`rod`, 2 `air`. Run: /usr/bin/python3 tests/data/cylinder_in_box.py (writes
cylinder_in_box.msh next to this file)."""
import math, os, gmsh

a = (0.3, -0.5, 0.8)
n = math.sqrt(sum(x * x for x in a))
d = [x / n for x in a]
c = (0.05, 0.0, -0.02)
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("cylinder_in_box")
box = gmsh.model.occ.addBox(-1, -1, -1, 2, 2, 2)
rod = gmsh.model.occ.addCylinder(c[0] - 0.5 * d[0], c[1] - 0.5 * d[1], c[2] - 0.5 * d[2],
                                 d[0], d[1], d[2], 0.3)
gmsh.model.occ.fragment([(3, box)], [(3, rod)])
gmsh.model.occ.synchronize()
vols = sorted((t for _, t in gmsh.model.getEntities(3)), key=lambda t: gmsh.model.occ.getMass(3, t))
gmsh.model.addPhysicalGroup(3, [vols[0]], 1)
gmsh.model.setPhysicalName(3, 1, "rod")
gmsh.model.addPhysicalGroup(3, [vols[1]], 2)
gmsh.model.setPhysicalName(3, 2, "air")
gmsh.option.setNumber("Mesh.MeshSizeMax", 0.4)
gmsh.option.setNumber("Mesh.MeshSizeMin", 0.15)
gmsh.model.mesh.generate(3)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cylinder_in_box.msh"))
gmsh.finalize()
