#!/usr/bin/env python3
"""Writes the hand-made broken meshes of the second reliability round (issue 13).
Run from this folder: python3 make_reliability_cases.py"""
import struct


def msh22(nodes, tets, name):
    s = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d\n" % len(nodes)
    for tag, (x, y, z) in nodes:
        s += "%d %r %r %r\n" % (tag, x, y, z)
    s += "$EndNodes\n$Elements\n%d\n" % len(tets)
    for i, t in enumerate(tets):
        s += "%d 4 2 1 1 %s\n" % (i + 1, " ".join(str(v) for v in t))
    s += "$EndElements\n"
    open(name, "w").write(s)


base = [(1, (0.0, 0.0, 0.0)), (2, (1.0, 0.0, 0.0)), (3, (0.0, 1.0, 0.0)), (4, (0.0, 0.0, 1.0))]
# two tets on the same side of their common face 1-2-3
msh22(base + [(5, (0.2, 0.2, 0.5))], [(1, 2, 3, 4), (1, 3, 2, 5)], "folded.msh")
# node tag 2 defined twice
msh22(base + [(2, (0.5, 0.5, 0.5))], [(1, 2, 3, 4)], "duplicate_node_tag.msh")
# a tet below the first through unmerged copies of nodes 1, 2, 3: a crack
msh22(base + [(5, (0.0, 0.0, 0.0)), (6, (1.0, 0.0, 0.0)), (7, (0.0, 1.0, 0.0)), (8, (0.0, 0.0, -1.0))],
      [(1, 2, 3, 4), (5, 7, 6, 8)], "crack.msh")
# two tets far apart
msh22(base + [(5, (5.0, 0.0, 0.0)), (6, (6.0, 0.0, 0.0)), (7, (5.0, 1.0, 0.0)), (8, (5.0, 0.0, 1.0))],
      [(1, 2, 3, 4), (5, 6, 7, 8)], "disconnected.msh")
# two tets sharing only the edge 1-2
msh22(base + [(5, (0.0, -1.0, 0.0)), (6, (0.0, 0.0, -1.0))], [(1, 2, 3, 4), (1, 2, 5, 6)],
      "nonmanifold_edge.msh")
# two tets sharing only node 1
msh22(base + [(5, (-1.0, 0.0, 0.0)), (6, (0.0, -1.0, 0.0)), (7, (0.0, 0.0, -1.0))],
      [(1, 2, 3, 4), (1, 5, 6, 7)], "nonmanifold_vertex.msh")
# coordinates that overflow when differenced
msh22([(1, (-1e308, 0.0, 0.0)), (2, (1e308, 0.0, 0.0)), (3, (0.0, 1e308, 0.0)), (4, (0.0, 0.0, 1e308))],
      [(1, 2, 3, 4)], "overflow.msh")
# a tet referring to node -1
s = open("../one_tet.msh").read().replace("1 4 2 1 1 1 2 3 4", "1 4 2 1 1 1 2 3 -1")
open("negative_node.msh", "w").write(s)
# binary MSH 4.1 whose endianness marker is the other byte order than its data
b = bytearray(open("../../../meshes/tiny_v41_bin.msh", "rb").read())
i = b.index(b"4.1 1 8\n") + len(b"4.1 1 8\n")
assert b[i:i + 4] == struct.pack("<i", 1)
b[i:i + 4] = struct.pack(">i", 1)
open("byteswapped_binary.msh", "wb").write(bytes(b))
# a valid file with a UTF-8 byte-order mark (must be accepted)
open("../bom.msh", "wb").write(b"\xef\xbb\xbf" + open("../one_tet.msh", "rb").read())
