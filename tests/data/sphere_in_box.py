"""A dielectric sphere in a box, for the refinement tests of src/mesh/interfaces.rs.

The radius is drawn with a fixed seed (random.Random(48)); volume group 1 `sphere`, 2 `air`,
surface group 3 `walls`. Run: /usr/bin/python3 tests/data/sphere_in_box.py (writes
sphere_in_box.msh next to this file, MSH 4.1 ASCII, 16 significant digits)."""
import os, random, gmsh

r = random.Random(48).uniform(0.3, 0.45)
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("sphere_in_box")
box = gmsh.model.occ.addBox(-1, -1, -1, 2, 2, 2)
ball = gmsh.model.occ.addSphere(0.03, -0.02, 0.01, r)
out, _ = gmsh.model.occ.fragment([(3, box)], [(3, ball)])
gmsh.model.occ.synchronize()
vols = [t for d, t in gmsh.model.getEntities(3)]
# the sphere is the volume of the smaller mass
vols.sort(key=lambda t: gmsh.model.occ.getMass(3, t))
s, a = vols[0], vols[1]
gmsh.model.addPhysicalGroup(3, [s], 1)
gmsh.model.setPhysicalName(3, 1, "sphere")
gmsh.model.addPhysicalGroup(3, [a], 2)
gmsh.model.setPhysicalName(3, 2, "air")
walls = [t for d, t in gmsh.model.getBoundary([(3, a)], oriented=False) if t not in
         [u for _, u in gmsh.model.getBoundary([(3, s)], oriented=False)]]
gmsh.model.addPhysicalGroup(2, walls, 3)
gmsh.model.setPhysicalName(2, 3, "walls")
gmsh.option.setNumber("Mesh.MeshSizeMax", 0.4)
gmsh.option.setNumber("Mesh.MeshSizeMin", 0.1)
# the sphere finer than the box (r / 3.5): with chords of 0.4 rad or less, moving new
# interface nodes onto the sphere folds no tet (at the old 0.2-0.45 it folded six)
gmsh.model.mesh.setSize(gmsh.model.getBoundary([(3, s)], recursive=True), r / 3.5)
gmsh.model.mesh.generate(3)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sphere_in_box.msh"))
print("radius", repr(r))
gmsh.finalize()
