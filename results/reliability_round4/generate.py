#!/usr/bin/env python3
"""Hostile pass of issue 47 (round four): generates a corpus of malformed meshes, configs,
command lines, faults, output folders, bench and report inputs, runs each case against the
release binary with a timeout and an address-space limit, and writes cases.csv.

Usage:  python3 generate.py [--only PREFIX [--merge]] [--csv NAME] [--bin PATH] [--list]
        (--only runs the cases whose id starts with PREFIX or whose class is PREFIX and writes
        cases-PREFIX.csv; with --merge their rows replace the same ids in cases.csv)
Environment: DGATD (binary, default /work/h47/dgatd).

Everything is deterministic (fixed seeds; no randomness outside random.Random(47)).
Scratch space: /work/h47/run (recreated).  Results: cases.csv next to this script.
"""
import csv, os, re, shutil, signal, struct, subprocess, sys, threading, time, resource, shlex
import random

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("DGATD", "/work/h47/dgatd")
ROOT = "/work/h47/run"
BINDIR = "/work/h47/bin"
MESHES = "/work/main/meshes"
MEM_LIMIT = 4 << 30          # RLIMIT_AS per case
DEFAULT_TIMEOUT = 90
UNBOUNDED_MB = 1500          # peak RSS above this for a case that should be small
RNG = random.Random(47)

ENV = dict(os.environ)
ENV["PATH"] = BINDIR + ":" + ENV["PATH"]
ENV["POCL_CACHE_DIR"] = "/work/h47/pocl-cache"
ENV.pop("RUST_BACKTRACE", None)
ENV["RUST_BACKTRACE"] = "0"

# a quick, valid resonator run: 384 tets on the CPU backend, 2000 steps, 17 modes found (0.3 s)
QUICK = "--box 4,4,4 --backend cpu --steps 2000 --fmax 4e8 --quiet"

# ----------------------------------------------------------------------------- meshes

def kuhn_box(n=2, L=1.0, origin=(0.0, 0.0, 0.0), split=False):
    """Nodes and tets of an n^3-cell box, 6 Kuhn tets per cell (conforming); the walls'
    triangles by name.  split: tets with centroid x < L/2 get volume tag 2."""
    ox, oy, oz = origin
    h = L / n
    idx = {}
    nodes = []
    for k in range(n + 1):
        for j in range(n + 1):
            for i in range(n + 1):
                idx[(i, j, k)] = len(nodes) + 1
                nodes.append((ox + i * h, oy + j * h, oz + k * h))
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    tets = []
    for k in range(n):
        for j in range(n):
            for i in range(n):
                for p in perms:
                    c = [i, j, k]
                    path = [tuple(c)]
                    for ax in p:
                        c[ax] += 1
                        path.append(tuple(c))
                    t = [idx[q] for q in path]
                    cx = sum(nodes[v - 1][0] for v in t) / 4
                    tag = 2 if (split and cx < ox + L / 2) else 1
                    tets.append((t, tag))
    # boundary faces: faces of tets on the box walls
    from collections import Counter
    cnt = Counter()
    faces = {}
    for t, _ in tets:
        for f in ((t[0], t[1], t[2]), (t[0], t[1], t[3]), (t[0], t[2], t[3]), (t[1], t[2], t[3])):
            key = tuple(sorted(f))
            cnt[key] += 1
            faces[key] = f
    walls = {w: [] for w in ("xmin", "xmax", "ymin", "ymax", "zmin", "zmax")}
    for key, c in cnt.items():
        if c != 1:
            continue
        pts = [nodes[v - 1] for v in key]
        for ax, (lo, hi) in enumerate(((ox, ox + L), (oy, oy + L), (oz, oz + L))):
            if all(abs(p[ax] - lo) < 1e-12 for p in pts):
                walls["xyz"[ax] + "min"].append(list(key))
            if all(abs(p[ax] - hi) < 1e-12 for p in pts):
                walls["xyz"[ax] + "max"].append(list(key))
    return nodes, tets, walls


class M:
    """A small mesh description that can be written in MSH 2.2 / 4.1 ASCII / 4.1 binary."""

    def __init__(self, n=2, split=False, walls=True):
        self.nodes, self.tets, w = kuhn_box(n, split=split)
        # physical surface groups: tag 10+i, names = wall names
        self.tris = []  # (nodes, phys)
        self.names = []  # (dim, tag, name)
        if walls:
            for i, (name, fs) in enumerate(w.items()):
                for f in fs:
                    self.tris.append((f, 11 + i))
                self.names.append((2, 11 + i, name))
        self.names.append((3, 1, "air"))
        if split:
            self.names.append((3, 2, "glass"))

    def v22(self, nl="\n", fmt_line="2.2 0 8", node_fmt=None, elem_extra=None,
            names=None, drop=()):
        L = []
        L += ["$MeshFormat", fmt_line, "$EndMeshFormat"]
        names = self.names if names is None else names
        if names and "names" not in drop:
            L += ["$PhysicalNames", str(len(names))]
            L += [f'{d} {t} "{s}"' for d, t, s in names]
            L += ["$EndPhysicalNames"]
        if "nodes" not in drop:
            L += ["$Nodes", str(len(self.nodes))]
            for i, p in enumerate(self.nodes):
                L.append(node_fmt(i + 1, p) if node_fmt else f"{i+1} {p[0]!r} {p[1]!r} {p[2]!r}")
            L += ["$EndNodes"]
        if "elements" not in drop:
            els = []
            for f, ph in self.tris:
                els.append(f"2 2 {ph} {ph} {f[0]} {f[1]} {f[2]}")
            for t, ph in self.tets:
                els.append(f"4 2 {ph} {ph} {t[0]} {t[1]} {t[2]} {t[3]}")
            if elem_extra:
                els += elem_extra
            L += ["$Elements", str(len(els))]
            L += [f"{i+1} {e}" for i, e in enumerate(els)]
            L += ["$EndElements"]
        return (nl.join(L) + nl).encode()

    def _entities(self):
        surf = sorted({ph for _, ph in self.tris})
        vol = sorted({ph for _, ph in self.tets})
        return surf, vol

    def v41(self, nl="\n", ent_phys=None, block_entity=None, node_line=None, no_entities=False):
        """ent_phys: dict (dim, tag) -> list of physical tags (default: one, = tag)."""
        surf, vol = self._entities()
        ent_phys = ent_phys or {}
        L = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat"]
        L += ["$PhysicalNames", str(len(self.names))]
        L += [f'{d} {t} "{s}"' for d, t, s in self.names]
        L += ["$EndPhysicalNames"]
        if not no_entities:
            L += ["$Entities", f"0 0 {len(surf)} {len(vol)}"]
            for s in surf:
                ph = ent_phys.get((2, s), [s])
                L.append(f"{s} 0 0 0 1 1 1 {len(ph)} {' '.join(map(str, ph))} 0".replace("  ", " "))
            for v in vol:
                ph = ent_phys.get((3, v), [v])
                L.append(f"{v} 0 0 0 1 1 1 {len(ph)} {' '.join(map(str, ph))} 0".replace("  ", " "))
            L += ["$EndEntities"]
        n = len(self.nodes)
        L += ["$Nodes", f"1 {n} 1 {n}", f"3 1 0 {n}"]
        L += [str(i + 1) for i in range(n)]
        for i, p in enumerate(self.nodes):
            L.append(node_line(i + 1, p) if node_line else f"{p[0]!r} {p[1]!r} {p[2]!r}")
        L += ["$EndNodes"]
        blocks = []
        eid = 1
        for s in surf:
            fs = [f for f, ph in self.tris if ph == s]
            blocks.append((2, s, 2, fs))
        for v in vol:
            ts = [t for t, ph in self.tets if ph == v]
            blocks.append((3, v, 4, ts))
        if block_entity:
            blocks = [(d, block_entity.get((d, t), t), ty, es) for d, t, ty, es in blocks]
        total = sum(len(b[3]) for b in blocks)
        L += ["$Elements", f"{len(blocks)} {total} 1 {total}"]
        for d, t, ty, es in blocks:
            L.append(f"{d} {t} {ty} {len(es)}")
            for e in es:
                L.append(f"{eid} " + " ".join(map(str, e)))
                eid += 1
        L += ["$EndElements"]
        return (nl.join(L) + nl).encode()

    def v41bin(self, coord=None, marker=1, swap_nodes_count=False, cut=None):
        surf, vol = self._entities()
        b = bytearray()
        b += b"$MeshFormat\n4.1 1 8\n" + struct.pack("<i", marker) + b"\n$EndMeshFormat\n"
        b += b"$PhysicalNames\n" + str(len(self.names)).encode() + b"\n"
        for d, t, s in self.names:
            b += f'{d} {t} "{s}"\n'.encode()
        b += b"$EndPhysicalNames\n"
        b += b"$Entities\n" + struct.pack("<4Q", 0, 0, len(surf), len(vol))
        for s in surf:
            b += struct.pack("<i6dQiQ", s, 0, 0, 0, 1, 1, 1, 1, s, 0)
        for v in vol:
            b += struct.pack("<i6dQiQ", v, 0, 0, 0, 1, 1, 1, 1, v, 0)
        b += b"\n$EndEntities\n"
        n = len(self.nodes)
        cnt = struct.unpack("<Q", struct.pack(">Q", n))[0] if swap_nodes_count else n
        b += b"$Nodes\n" + struct.pack("<4Q", 1, cnt, 1, n)
        b += struct.pack("<iiiQ", 3, 1, 0, n)
        b += struct.pack(f"<{n}Q", *range(1, n + 1))
        for i, p in enumerate(self.nodes):
            q = coord(i + 1, p) if coord else p
            b += struct.pack("<3d", *q)
        b += b"\n$EndNodes\n"
        blocks = []
        for s in surf:
            blocks.append((2, s, 2, [f for f, ph in self.tris if ph == s]))
        for v in vol:
            blocks.append((3, v, 4, [t for t, ph in self.tets if ph == v]))
        total = sum(len(x[3]) for x in blocks)
        b += b"$Elements\n" + struct.pack("<4Q", len(blocks), total, 1, total)
        eid = 1
        for d, t, ty, es in blocks:
            b += struct.pack("<iiiQ", d, t, ty, len(es))
            for e in es:
                b += struct.pack(f"<{len(e)+1}Q", eid, *e)
                eid += 1
        b += b"\n$EndElements\n"
        b = bytes(b)
        if cut is not None:
            b = b[:cut]
        return b


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def mesh_corpus(d):
    """The malformed (and a few valid-but-odd) meshes. Returns a list of
    (name, file, expected, needles, note, run_args): expected 'error' or 'ok' (for
    mesh-info), needles: words the error should hold, run_args: extra resonator args
    to also run the mesh with (None: mesh-info only)."""
    out = []
    m = M(2)
    ms = M(2, split=True)

    def add(name, data, expected, needles=(), note="", run=None):
        p = write(os.path.join(d, name), data)
        out.append((name, p, expected, needles, note, run))

    add("crlf_v22.msh", m.v22(nl="\r\n"), "ok", note="CRLF line ends, 2.2", run="")
    add("crlf_v41.msh", m.v41(nl="\r\n"), "ok", note="CRLF line ends, 4.1", run="")
    add("cr_only_v22.msh", m.v22(nl="\r"), "error", ("line",), "old-Mac CR-only line ends")
    add("bom_crlf_v41.msh", b"\xef\xbb\xbf" + m.v41(nl="\r\n"), "ok", note="BOM + CRLF")
    add("tabs_v22.msh", m.v22().replace(b" ", b"\t"), "ok", note="tab separators")
    add("ftype2_v22.msh", m.v22(fmt_line="2.2 2 8"), "error", ("file type", "2"),
        "file-type field 2 (neither ASCII 0 nor binary 1)")
    add("ftype_neg_v41.msh", m.v41().replace(b"4.1 0 8", b"4.1 -1 8"), "error", ("file type",),
        "file-type field -1")
    add("version_4_0.msh", m.v41().replace(b"4.1 0 8", b"4.0 0 8"), "error", ("4.0",), "MSH 4.0")
    add("version_2_20.msh", m.v22(fmt_line="2.20 0 8"), "error", ("2.20",), "version spelled 2.20")
    add("bin_v22.msh", b"$MeshFormat\n2.2 1 8\n\x01\x00\x00\x00\n$EndMeshFormat\n" + b"\0" * 64,
        "error", ("binary",), "binary MSH 2.2")
    add("bin_marker2.msh", m.v41bin(marker=2), "error", ("endian",), "endianness marker 2")
    add("bin_cut_entities.msh", m.v41bin(cut=200), "error", ("truncated", "ends early"),
        "binary 4.1 cut inside $Entities")
    add("bin_cut_header.msh", m.v41bin(cut=25), "error", ("ends early", "truncated", "endianness"),
        "binary 4.1 cut inside the endianness marker")
    add("bin_swapped_count.msh", m.v41bin(swap_nodes_count=True), "error", ("byte",),
        "binary node count byte-swapped")
    add("bin_nan_coord.msh", m.v41bin(coord=lambda i, p: (float("nan"), p[1], p[2]) if i == 5 else p),
        "error", ("non-finite", "coordinate"), "binary: NaN coordinate of a used node")
    add("bin_huge_coord.msh", m.v41bin(coord=lambda i, p: (p[0] * 1e200, p[1], p[2])),
        "error", ("range", "spans", "rescale"), "binary: x scaled by 1e200")
    # counts
    t = m.v22().replace(b"$Nodes\n27\n", b"$Nodes\n4000000000\n")
    add("v22_nodes_4e9.msh", t, "error", ("count", "node"), "2.2: 4e9 nodes declared, 27 given")
    t = m.v22().replace(b"$Nodes\n27\n", b"$Nodes\n26\n")
    add("v22_nodes_one_less.msh", t, "error", ("line",), "2.2: node count one less than the body")
    t = m.v22().replace(b"$Nodes\n27\n", b"$Nodes\n28\n")
    add("v22_nodes_one_more.msh", t, "error", ("line",), "2.2: node count one more than the body")
    t = re.sub(rb"\$Elements\n\d+\n", b"$Elements\n18446744073709551615\n", m.v22())
    add("v22_elems_u64max.msh", t, "error", ("count", "element"), "2.2: u64::MAX elements declared")
    t = re.sub(rb"\$Elements\n(\d+) (\d+) 1 (\d+)\n", b"$Elements\n\\1 99999999999 1 \\3\n", m.v41())
    add("v41_elems_1e11.msh", t, "error", ("element",), "4.1: 1e11 elements declared")
    t = re.sub(rb"\$PhysicalNames\n\d+\n", b"$PhysicalNames\n123456789012\n", m.v41())
    add("v41_names_1e11.msh", t, "error", ("physical name",), "4.1: 1.2e11 physical names declared")
    t = m.v41().replace(b"$Entities\n0 0 6 1\n", b"$Entities\n0 0 6 2\n")
    add("v41_entities_one_more.msh", t, "error", ("line",), "4.1: one more volume entity declared")
    # numbers
    add("v22_nan_used.msh", m.v22(node_fmt=lambda i, p: f"{i} NaN {p[1]} {p[2]}" if i == 14 else f"{i} {p[0]} {p[1]} {p[2]}"),
        "error", ("non-finite", "coordinate"), "2.2: NaN coordinate of the centre node")
    add("v22_inf_used.msh", m.v22(node_fmt=lambda i, p: f"{i} {p[0]} -inf {p[2]}" if i == 1 else f"{i} {p[0]} {p[1]} {p[2]}"),
        "error", ("non-finite", "coordinate"), "2.2: -inf coordinate")
    add("v22_1e400.msh", m.v22(node_fmt=lambda i, p: f"{i} {p[0]} {p[1]} 1e400" if i == 27 else f"{i} {p[0]} {p[1]} {p[2]}"),
        "error", ("non-finite", "coordinate", "1e400"), "2.2: a coordinate 1e400 (overflows to inf)")
    add("v22_infinity_word.msh", m.v22(node_fmt=lambda i, p: f"{i} infinity {p[1]} {p[2]}" if i == 3 else f"{i} {p[0]} {p[1]} {p[2]}"),
        "error", ("non-finite", "coordinate"), "2.2: the word 'infinity'")
    nu = M(2)
    nu.nodes.append((float("nan"), 0.0, 0.0))
    add("v22_nan_unused.msh", nu.v22(), "either", ("non-finite", "coordinate"),
        "2.2: a NaN node that no tet uses")
    add("v22_hex_float.msh", m.v22(node_fmt=lambda i, p: f"{i} 0x1p-1 {p[1]} {p[2]}" if i == 2 else f"{i} {p[0]} {p[1]} {p[2]}"),
        "error", ("line",), "2.2: a C99 hex float 0x1p-1")
    add("v22_extra_field.msh", m.v22(node_fmt=lambda i, p: f"{i} {p[0]} {p[1]} {p[2]} 7.5"),
        "error", ("line", "node"), "2.2: every node line has a 5th field")
    add("v41_extra_coord.msh", m.v41(node_line=lambda i, p: f"{p[0]} {p[1]} {p[2]} 9"),
        "error", ("line", "node"), "4.1: every coordinate line has a 4th number")
    add("v22_comma_decimal.msh", m.v22(node_fmt=lambda i, p: f"{i} {str(p[0]).replace('.', ',')} {p[1]} {p[2]}"),
        "error", ("line",), "2.2: decimal commas (a German locale)")
    # geometry
    dn = M(2)
    # duplicate node: node 28 at the position of node 14 (the centre), used by the tets of
    # one cell -> a crack through the middle
    dn.nodes.append(dn.nodes[13])
    dn.tets = [([28 if (v == 14 and k < 6) else v for v in t], ph) for k, (t, ph) in enumerate(dn.tets)]
    add("v22_duplicate_node_crack.msh", dn.v22(), "error", ("crack", "duplicate", "coincid", "same"),
        "two node tags at one point: the tets of one cell use the copy (a crack)", run=QUICK_MESH)
    inv = M(2)
    inv.tets = [([t[0], t[2], t[1], t[3]], ph) for t, ph in inv.tets]
    add("v22_all_inverted.msh", inv.v22(), "ok", note="every tet negatively oriented", run="")
    sl = M(2)
    sl.nodes[13] = (0.5, 0.5, 0.5 + 1e-9)
    add("v22_near_degenerate.msh", sl.v22(), "ok", note="(control) centre node moved 1e-9")
    fl = M(2)
    fl.nodes[13] = (0.5, 0.5, 1.2)
    add("v22_folded_centre.msh", fl.v22(), "error", ("folded", "inverted", "overlap", "orientation", "degenerate"),
        "centre node pushed outside the box: folded tets")
    two = M(2)
    off = len(two.nodes)
    n2, t2, w2 = kuhn_box(2, origin=(3.0, 0, 0))
    two.nodes += n2
    two.tets += [([v + off for v in t], 1) for t, _ in t2]
    add("v22_two_pieces.msh", two.v22(), "error", ("disconnected", "parts", "pieces", "connected"),
        "two separate boxes in one file", run="")
    touch = M(2)
    off = len(touch.nodes)
    n3, t3, _ = kuhn_box(2, origin=(1.0, 1.0, 1.0))
    touch.nodes += n3
    touch.tets += [([v + off if v != 1 else 27 for v in t], 1) for t, _ in t3]
    add("v22_touch_at_vertex.msh", touch.v22(), "error", ("vertex", "manifold", "node"),
        "two boxes sharing one vertex")
    # groups
    ent2 = M(2, split=True)
    ent2.names.append((3, 7, "solid"))
    add("v41_entity_two_phys.msh", ent2.v41(ent_phys={(3, 2): [2, 7]}), "ok",
        note="entity in two physical volumes (glass, solid): --material solid=4 must act", run="--material solid=4")
    be = M(2)
    add("v41_block_unknown_entity.msh", be.v41(block_entity={(3, 1): 99}), "error", ("entity", "99"),
        "tet block refers to entity 99, absent from $Entities (its physical group air is lost)",
        run="--material air=4")
    add("v41_no_entities.msh", M(2).v41(no_entities=True), "error", ("entities", "entity"),
        "4.1 without $Entities: every element loses its group", run="--boundary xmin=pmc")
    nf = M(2)
    nf.tris.append(([1, 14, 27], 11))  # a diagonal, not a face
    add("v22_tri_not_a_face.msh", nf.v22(), "error", ("face", "triangle"),
        "a triangle of group xmin that is no face of any tet", run="--boundary xmin=pmc")
    fl2 = M(2)
    fl2.nodes += [(5, 5, 5), (6, 5, 5), (5, 6, 5)]
    fl2.tris.append(([28, 29, 30], 11))
    add("v22_floating_tri.msh", fl2.v22(), "error", ("triangle", "node", "face"),
        "a triangle of group xmin on nodes no tet uses", run="--boundary xmin=pmc")
    num = M(2, split=True)
    num.names = [(d, t, ("2" if (d, t) == (3, 1) else s)) for d, t, s in num.names]
    add("v22_name_is_other_tag.msh", num.v22(), "ok",
        note="volume group tag 1 is NAMED \"2\" while group tag 2 is glass: --material 2=4 is ambiguous",
        run="--material 2=4")
    uni = M(2)
    uni.names = [(d, t, ("κοιλότητα" if d == 3 else s)) for d, t, s in uni.names]
    add("v22_unicode_name.msh", uni.v22(), "ok", note="a Greek volume group name", run="--material κοιλότητα=2")
    sp = M(2)
    sp.names = [(d, t, ("left wall" if s == "xmin" else s)) for d, t, s in sp.names]
    add("v22_space_name.msh", sp.v22(), "ok", note="a surface group named 'left wall'", run="--boundary 'left wall=pmc'")
    em = M(2)
    em.names = [(d, t, ("" if s == "xmin" else s)) for d, t, s in em.names]
    add("v22_empty_name.msh", em.v22(), "ok", note="a surface group named \"\"")
    eq = M(2)
    eq.names = [(d, t, ("a=b" if s == "xmin" else s)) for d, t, s in eq.names]
    add("v22_name_with_equals.msh", eq.v22(), "ok", note="a surface group named 'a=b'", run="--boundary a=b=pmc")
    l1 = M(2)
    l1_bytes = l1.v22().replace(b'"air"', b'"caf\xe9"')
    add("v22_latin1_name.msh", l1_bytes, "error", ("line",), "a Latin-1 byte in a physical name")
    # structure
    add("v22_no_endnodes.msh", m.v22().replace(b"$EndNodes\n", b""), "error", ("EndNodes",), "2.2 without $EndNodes")
    add("v41_no_endelements.msh", m.v41().replace(b"$EndElements\n", b""), "error", ("EndElements", "ends early"),
        "4.1 without $EndElements")
    add("v22_no_meshformat.msh", m.v22().replace(b"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", b""),
        "error", ("MeshFormat",), "no $MeshFormat")
    add("v22_trailing_garbage.msh", m.v22() + b"hello world\n", "error", ("line",), "text after the last section")
    add("v22_unknown_section_open.msh", m.v22() + b"$Foo\n1 2 3\n", "error", ("Foo",), "an unknown section left open")
    add("v22_nodedata.msh", m.v22() + b'$NodeData\n1\n"x"\n1\n0.0\n3\n0\n1\n27\n' + b"".join(b"%d 1.0\n" % i for i in range(1, 28)) + b"$EndNodeData\n",
        "ok", note="a $NodeData section (post-processing data) after the mesh")
    add("v22_neg_elem_id.msh", m.v22().replace(b"\n1 2 2 ", b"\n-5 2 2 ", 1), "error", ("-5", "element"),
        "2.2: element id -5")
    add("v22_zero_node_tag.msh", m.v22().replace(b"\n1 0.0 0.0 0.0\n", b"\n0 0.0 0.0 0.0\n").replace(b" 1 ", b" 0 "),
        "error", ("tag 0", "node 0", "0"), "2.2: node tag 0 (Gmsh tags start at 1)")
    add("v22_tet_two_phys.msh", m.v22(elem_extra=[f"4 2 5 5 {' '.join(map(str, m.tets[0][0]))}"]),
        "error", ("tetrahedron", "duplicate", "twice"), "2.2: one tet listed again in volume group 5")
    add("v22_quads_on_wall.msh", M(2).v22(elem_extra=["3 2 11 11 1 2 5 4"]), "ok",
        note="a quadrangle in surface group xmin (skipped)")
    add("v22_point_elements.msh", M(2).v22(elem_extra=["15 2 30 30 1"]), "ok", note="a point element with a physical tag")
    add("v22_prism.msh", M(2).v22(elem_extra=["6 2 1 1 1 2 3 4 5 6"]), "error", ("type 6", "6"), "a prism among the tets")
    tiny = M(2)
    tiny.nodes = [(x * 1e-6, y * 1e-6, z * 1e-6) for x, y, z in tiny.nodes]
    add("v22_micrometre.msh", tiny.v22(), "ok", note="a 1 um box (valid scale)", run="")
    aniso = M(2)
    aniso.nodes = [(x * 1e5, y, z) for x, y, z in aniso.nodes]
    add("v22_aspect_1e5.msh", aniso.v22(), "either", ("degenerate", "aspect"), note="a 100 km x 1 m x 1 m box (aspect 1e5)")
    return out


QUICK_MESH = "--backend cpu --steps 300 --quiet"

# ----------------------------------------------------------------------------- cases

class Case:
    def __init__(self, cls, cmd, expected, needles=(), timeout=DEFAULT_TIMEOUT, setup=None,
                 runner=None, judge=None, note="", mem=MEM_LIMIT, rss_mb=UNBOUNDED_MB, ok_rc0=None):
        self.cls, self.cmd, self.expected, self.needles = cls, cmd, expected, needles
        self.timeout, self.setup, self.runner, self.judge = timeout, setup, runner, judge
        self.note, self.mem, self.rss_mb = note, mem, rss_mb
        self.id = None


CASES = []


def case(*a, **k):
    c = Case(*a, **k)
    CASES.append(c)
    return c


# ----------------------------------------------------------------------------- runner

def limits(mem):
    def f():
        os.setsid()
        os.nice(10)
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return f


class Res:
    pass


def spawn(cmd, cwd, mem=MEM_LIMIT, stdin=None):
    so = open(os.path.join(cwd, ".stdout"), "wb")
    se = open(os.path.join(cwd, ".stderr"), "wb")
    p = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=ENV, stdout=so, stderr=se,
                         stdin=stdin if stdin is not None else subprocess.DEVNULL,
                         preexec_fn=limits(mem))
    p._so, p._se = so, se
    return p


def reap(p, timeout, t0):
    """Waits for p with a timeout; returns (rc, rss_mb, seconds, timed_out)."""
    timed_out = False
    deadline = t0 + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.time() > deadline and not timed_out:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    p.returncode = 0
    secs = time.time() - t0
    if os.WIFSIGNALED(status):
        rc = -os.WTERMSIG(status)
    else:
        rc = os.WEXITSTATUS(status)
    # any stragglers of the group (a background child) are killed
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    p._so.close()
    p._se.close()
    return rc, ru.ru_maxrss / 1024.0, secs, timed_out


def run_cmd(cmd, cwd, timeout=DEFAULT_TIMEOUT, mem=MEM_LIMIT, during=None, stdin=None):
    t0 = time.time()
    p = spawn(cmd, cwd, mem, stdin)
    extra = None
    if during:
        extra = during(p, cwd)
    rc, rss, secs, to = reap(p, timeout, t0)
    r = Res()
    r.rc, r.rss, r.secs, r.timed_out, r.extra = rc, rss, secs, to, extra
    r.out = open(os.path.join(cwd, ".stdout"), "rb").read().decode("utf-8", "replace")
    r.err = open(os.path.join(cwd, ".stderr"), "rb").read().decode("utf-8", "replace")
    r.cwd = cwd
    return r


def wait_for(path, pattern, timeout, p=None):
    """Waits until file `path` contains regex `pattern` (or the process ends)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            s = open(path, "rb").read().decode("utf-8", "replace")
            if re.search(pattern, s):
                return True
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    return False


def running(p):
    """Whether p is still running, without reaping it (reap() needs its rusage)."""
    try:
        r = os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return r is None


def the_pid(p):
    """The dgatd process: bash -c execs the last simple command, so it is p.pid."""
    return p.pid


# ----------------------------------------------------------------------------- judging

def generic(r, c):
    """Outcomes that do not depend on the expectation."""
    e = r.err + r.out
    if "panicked at" in e or r.rc == 101:
        return "PANIC", first_line(e, "panicked")
    if r.timed_out:
        return "HANG", f"killed after {c.timeout} s"
    if "memory allocation of" in e and "failed" in e:
        return "ABORT", first_line(e, "memory allocation")
    if r.rc < 0 and r.rc not in (-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP):
        return "ABORT", f"killed by signal {-r.rc} ({signal.Signals(-r.rc).name})"
    if r.rc in (134, 139, 132, 135, 136):
        return "ABORT", f"exit {r.rc}"
    if r.rss > c.rss_mb:
        return "UNBOUNDED", f"peak RSS {r.rss:.0f} MB"
    return None


def first_line(s, needle=None):
    for l in s.splitlines():
        if needle is None or needle in l:
            return l.strip()[:300]
    return s.strip().splitlines()[0][:300] if s.strip() else ""


def err_line(r):
    """The error message (the line starting 'error' or the last non-empty stderr line)."""
    lines = [l for l in r.err.splitlines() if l.strip()]
    for l in lines:
        if l.lower().startswith("error"):
            return l.strip()[:400]
    return (lines[-1].strip()[:400]) if lines else ""


def has(text, needles):
    """needles: groups; a tuple group needs any of its words, a str group needs itself."""
    t = text.lower()
    for n in needles:
        alts = n if isinstance(n, tuple) else (n,)
        if not any(a.lower() in t for a in alts):
            return False
    return True


def run_facts(r):
    """What a finished run printed: its dt, steps and the number of modes in its table."""
    m = re.search(r"dt = ([0-9.eE+-]+) s, (\d+) steps", r.out)
    modes = None
    p = os.path.join(r.cwd, "o", "modes.csv")
    if os.path.exists(p):
        modes = max(0, sum(1 for _ in open(p)) - 1)
    return (float(m.group(1)) if m else None, int(m.group(2)) if m else None, modes)


def judge(r, c):
    g = generic(r, c)
    if g:
        return g
    if r.rc == 0 and c.cls in ("config", "cli"):
        dt, steps, modes = run_facts(r)
        if dt is not None and dt == 0.0:
            return "SILENT", f"ran with dt = 0 ({steps} steps of zero length), {modes} modes, exit 0"
        if modes is not None:
            c._facts = f"dt {dt}, {steps} steps, {modes} modes"
        if modes and "conductor" in c.cmd:
            rows = list(csv.DictReader(open(os.path.join(r.cwd, "o", "modes.csv"))))
            bad = [x["q_wall"] for x in rows if x.get("q_wall", "") in ("", "0.000000000000e0", "NaN", "inf")]
            if bad:
                return "SILENT", f"ran; conductor wall Q of {len(bad)} of {len(rows)} modes is {bad[0]!r} (blank or 0), q_total blank, no warning"
    if c.judge:
        return c.judge(r, c)
    exp = c.expected
    msg = err_line(r)
    if exp == "error":
        if r.rc == 0:
            warned = [l for l in r.err.splitlines() if l.startswith(("warning", "note"))
                      and not l.startswith("note: fmax =")
                      and not any(g in l for g in ("note: setup", "lines may be missing", "held the outputs of an earlier run"))]
            if c.needles and isinstance(c.needles[0], tuple) and any(has(l, c.needles[:1]) for l in warned):
                return "OK", "accepted with a warning: " + [l for l in warned if has(l, c.needles[:1])][0][:300]
            return "SILENT", "accepted (exit 0): " + (first_line(r.err, "warning") or "no warning")
        if has(r.err, c.needles):
            return "OK", msg
        return "VAGUE", msg
    if exp == "ok":
        if r.rc == 0:
            return "OK", first_line(r.err, "warning") or "ran"
        return "VAGUE", "refused a valid input: " + msg
    if exp == "either":
        if r.rc == 0:
            return "OK", "ran" + (f" ({c._facts})" if getattr(c, "_facts", None) else "") + ("; " + first_line(r.err, "warning") if "warning" in r.err else "")
        if has(r.err, c.needles):
            return "OK", msg
        return "VAGUE", msg
    return "OK", msg


# ----------------------------------------------------------------------------- corpus

def build(only=None):
    d_mesh = os.path.join(ROOT, "_meshes")
    os.makedirs(d_mesh, exist_ok=True)
    # ---------------------------------------------------------------- meshes
    for name, path, exp, needles, note, run in mesh_corpus(d_mesh):
        q = shlex.quote(path)
        groups = ((tuple(needles),) if needles else ()) + (os.path.basename(path),)
        case("mesh", f"dgatd mesh-info {q}", exp, groups, note=note)
        if run is not None:
            ra = run if run.startswith("--backend") else (QUICK_MESH + " " + run)
            # an ambiguous key may run (saying which group it took) or be refused by name
            run_exp = exp if exp == "error" else ("either" if "ambiguous" in note else "ok")
            case("mesh-run", f"dgatd resonator --mesh {q} {ra} --out o", run_exp,
                 groups, note=note + " (resonator)")
    mesh_special(d_mesh)
    config_cases()
    cli_cases()
    fault_cases()
    outdir_cases()
    bench_cases()
    report_cases()
    meshinfo_cases(d_mesh)
    compare_cases()
    late_cases()
    for i, c in enumerate(CASES):
        c.id = f"{c.cls}-{i+1:03d}"


def mesh_special(d):
    hdr = b"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n"

    def sparse(cwd):
        p = os.path.join(cwd, "big.msh")
        with open(p, "wb") as f:
            f.write(hdr + b"3\n1 0 0 0\n")
            f.truncate(3 << 30)

    case("mesh", "dgatd mesh-info big.msh   # 3 GiB sparse: a valid header, then NUL bytes", "error",
         ("big.msh",), setup=sparse, note="valid $MeshFormat then 3 GiB of zeros (sparse file)", timeout=120)

    def sparse2(cwd):
        p = os.path.join(cwd, "huge.msh")
        with open(p, "wb") as f:
            f.write(hdr)
            f.truncate(6 << 30)

    case("mesh", "dgatd mesh-info huge.msh   # 6 GiB sparse, valid header (above the 4 GiB limit of the case)",
         "error", ("huge.msh",), setup=sparse2, note="6 GiB file with a valid header under a 4 GiB address-space limit", timeout=120)

    def unicode_path(cwd):
        shutil.copy(os.path.join(MESHES, "tiny_v41.msh"), os.path.join(cwd, "κύλινδρος ü.msh"))

    case("mesh-run", f"dgatd resonator --mesh 'κύλινδρος ü.msh' {QUICK_MESH} --out o", "ok", setup=unicode_path,
         note="unicode and a space in the mesh path")

    def nl_path(cwd):
        shutil.copy(os.path.join(MESHES, "tiny_v22.msh"), os.path.join(cwd, "a\nb.msh"))

    case("mesh", "dgatd mesh-info $'a\\nb.msh'", "ok", setup=nl_path, note="a newline in the mesh file name")

    def gz(cwd):
        import gzip
        write(os.path.join(cwd, "m.msh.gz"), gzip.compress(open(os.path.join(MESHES, "tiny_v22.msh"), "rb").read()))

    case("mesh", "dgatd mesh-info m.msh.gz", "error", ("m.msh.gz",), setup=gz, note="a gzip-compressed mesh")


# ---- configs

FLOAT_VALUES = ["-0.0", "5e-324", "1.7976931348623157e308", "1e20", "\"0.5\""]
INT_VALUES = ["0.5", "4294967296", "18446744073709551615", "-9223372036854775808", "\"7\""]

BASE_CFG = 'box = "4,4,4"\nbackend = "cpu"\nsteps = 2000\nfmax = 4e8\n'


def cfg_case(name, text, expected, needles, note="", extra="", timeout=DEFAULT_TIMEOUT, judge=None, setup2=None):
    def setup(cwd, text=text):
        write(os.path.join(cwd, "c.toml"), text)
        if setup2:
            setup2(cwd)
    case("config", f"dgatd resonator --config c.toml --quiet --out o {extra}".strip() + f"   # c.toml: {text!r}",
         expected, needles, setup=setup, note=note or name, timeout=timeout, judge=judge)


def positive_keys():
    return {"time", "cfl", "dt", "f_peak", "fmax", "min_q", "min_prominence", "eps_r", "mu_r", "tau",
            "f_p", "f_0", "f_tan_delta", "size", "radius", "a"}


def config_cases():
    pos = positive_keys()
    top = {
        "time": "", "cfl": "", "dt": "", "source_radius": "", "f_peak": "", "fmax": "",
        "min_prominence": 'extract = "fft"\n', "min_q": "", "checkpoint_minutes": "",
    }
    for key, pre in top.items():
        for v in FLOAT_VALUES:
            base = BASE_CFG
            if key == "time":
                base = 'box = "4,4,4"\nbackend = "cpu"\nfmax = 4e8\n'
            if key == "fmax":
                base = 'box = "4,4,4"\nbackend = "cpu"\nsteps = 2000\n'
            text = base + pre + f"{key} = {v}\n"
            exp = "error" if (v.startswith('"') or v.startswith("[") or (v == "-0.0" and key in pos)) else "either"
            cfg_case(key, text, exp, ((key, key.replace("_", "-")),), note=f"{key} = {v}")
    mat = ["eps_r", "mu_r", "sigma", "tan_delta", "f_tan_delta", "sigma_m", "layer_order", "layer_reflection"]
    for key in mat:
        for v in FLOAT_VALUES:
            extra = ""
            if key == "f_tan_delta":
                extra = "tan_delta = 0.01\n"
            if key.startswith("layer"):
                text = 'ball = "2:core=0.5,layer=1"\nbackend = "cpu"\nsteps = 2000\n' + f"[materials.layer]\nabsorbing = true\n{key} = {v}\n"
            else:
                text = BASE_CFG + f"[materials.vacuum]\n{extra}{key} = {v}\n"
            exp = "error" if (v.startswith('"') or v.startswith("[") or (v == "-0.0" and key in pos)) else "either"
            cfg_case(key, text, exp, ((key, key.replace("_", "-")),), note=f"materials.vacuum.{key} = {v}")
    poles = [("debye", "delta_eps", "{ delta_eps = %s, tau = 1e-9 }"), ("debye", "tau", "{ delta_eps = 1, tau = %s }"),
             ("drude", "f_p", "{ f_p = %s, gamma = 1e8 }"), ("drude", "gamma", "{ f_p = 1e8, gamma = %s }"),
             ("lorentz", "delta_eps", "{ delta_eps = %s, f_0 = 2e8, delta = 1e6 }"),
             ("lorentz", "f_0", "{ delta_eps = 1, f_0 = %s, delta = 1e6 }"),
             ("lorentz", "delta", "{ delta_eps = 1, f_0 = 2e8, delta = %s }")]
    for kind, key, tmpl in poles:
        for v in FLOAT_VALUES:
            text = BASE_CFG + f"[materials.vacuum]\n{kind} = [" + (tmpl % v) + "]\n"
            exp = "error" if (v.startswith('"') or v.startswith("[") or (v == "-0.0" and key in pos)) else "either"
            cfg_case(key, text, exp, ((key, kind),), note=f"{kind} pole {key} = {v}")
    for key, tmpl in [("sigma", "[boundaries.xmin]\nkind = \"conductor\"\nsigma = %s\n"),
                      ("mu_r", "[boundaries.xmin]\nkind = \"conductor\"\nsigma = 5.8e7\nmu_r = %s\n")]:
        for v in FLOAT_VALUES:
            text = BASE_CFG + tmpl % v
            exp = "error" if (v.startswith('"') or v.startswith("[") or (v == "-0.0")) else "either"
            cfg_case(key, text, exp, ((key, "xmin", "boundar"),), note=f"boundaries.xmin (conductor) {key} = {v}")
    # tables: [box] size, [cavity] box a, [ball] radius
    for v in FLOAT_VALUES:
        text = 'backend = "cpu"\nsteps = 300\n[box]\ncells = [3, 3, 3]\nsize = [%s, 1, 1]\n' % v
        exp = "error" if v != "1e20" else "error"
        cfg_case("box.size", text, exp, (("size", "box"),), note=f"[box] size = [{v}, 1, 1]")
        text = BASE_CFG + '[cavity]\nkind = "box"\na = %s\nb = 1\nd = 1\n' % v
        cfg_case("cavity.a", text, "error" if v != "5e-324" else "error", (("cavity", "a"),), note=f"[cavity] box a = {v}")
        text = 'backend = "cpu"\nsteps = 300\n[ball]\nshells = 2\nregions = [{ name = "core", radius = %s }]\n' % v
        cfg_case("ball.radius", text, "error", (("ball", "radius", "regions"),), note=f"[ball] radius = {v}")
    # points
    for key, tmpl in [("source", "source = [%s, 0.4, 0.3]\n"), ("probe", "probe = [[0.3, %s, 0.6]]\n"),
                      ("source_dir", "source_dir = [%s, 0, 0]\n")]:
        for v in FLOAT_VALUES:
            text = BASE_CFG + tmpl % v
            exp = "error" if (v.startswith('"') or v.startswith("[") or v in ("1e20", "1.7976931348623157e308")) else "either"
            if key == "source_dir":
                exp = "error" if v in ('-0.0', '"0.5"') else "either"
            cfg_case(key, text, exp, ((key, key.replace("_", "-"), "source direction"),), note=f"{key} component = {v}")
    # integer keys
    ints = {"refine": "", "steps": "", "mode_shapes": "", "seed": "", "order": 'method = "dg"\n',
            "checkpoint_steps": "", "energy_checks": "", "gpus": ""}
    for key, pre in ints.items():
        for v in INT_VALUES:
            base = BASE_CFG if key != "steps" else 'box = "3,3,3"\nbackend = "cpu"\n'
            text = base + pre + f"{key} = {v}\n"
            exp = "error"
            if key in ("seed",) and v == "4294967296":
                exp = "either"
            if key in ("checkpoint_steps", "energy_checks", "mode_shapes") and v == "4294967296":
                exp = "either"
            cfg_case(key, text, exp, ((key, key.replace("_", "-")),), note=f"{key} = {v}",
                     timeout=120)
    for v in INT_VALUES:
        text = 'backend = "cpu"\nsteps = 300\n[box]\ncells = [%s, 3, 3]\n' % v
        cfg_case("box.cells", text, "error", (("cells", "box"),), note=f"[box] cells = [{v}, 3, 3]")
        text = 'backend = "cpu"\nsteps = 300\n[ball]\nshells = %s\nregions = [{ name = "core", radius = 1 }]\n' % v
        cfg_case("ball.shells", text, "error", (("shells", "ball"),), note=f"[ball] shells = {v}")
    # structure of the file
    S = [
        ("typo key", BASE_CFG + "stpes = 100\n", "error", ("stpes",)),
        ("key in the wrong case", BASE_CFG + "CFL = 0.5\n", "error", ("CFL",)),
        ("flag spelling with a dash", BASE_CFG + "f-peak = 1e8\n", "error", ("f-peak",)),
        ("duplicate key", BASE_CFG + "cfl = 0.5\ncfl = 0.6\n", "error", ("cfl",)),
        ("duplicate table", BASE_CFG + "[materials.vacuum]\neps_r = 2\n[materials.vacuum]\nmu_r = 2\n", "error", ("vacuum", "materials")),
        ("empty [materials] table", BASE_CFG + "[materials]\n", "either", ("materials",)),
        ("empty material table", BASE_CFG + "[materials.vacuum]\n", "error", ("vacuum", "eps_r")),
        ("boundary without kind", BASE_CFG + "[boundaries.xmin]\n", "error", ("kind", "xmin")),
        ("boundary kind in upper case", BASE_CFG + '[boundaries.xmin]\nkind = "PMC"\n', "either", ("kind",)),
        ("pmc with a sigma", BASE_CFG + '[boundaries.xmin]\nkind = "pmc"\nsigma = 5\n', "error", ("sigma", "pmc")),
        ("unknown key in a material", BASE_CFG + "[materials.vacuum]\neps_r = 2\nepsr = 3\n", "error", ("epsr",)),
        ("top-level key after a table", 'box = "3,3,3"\nbackend = "cpu"\n[materials.vacuum]\neps_r = 2\nsteps = 300\n', "error", ("steps",)),
        ("box string and [box] table", BASE_CFG + "[box]\ncells = [3, 3, 3]\n", "error", ("box",)),
        ("mesh and box", BASE_CFG + 'mesh = "bundled:coarse"\n', "error", ("mesh", "box")),
        ("ball and box", BASE_CFG + 'ball = "2:a=1"\n', "error", ("ball", "box")),
        ("[run] table with garbage (ignored by design)", BASE_CFG + "[run]\nanything = [1, {x = 2}]\n", "ok", ()),
        ("inline-table materials", BASE_CFG + "materials = { vacuum = { eps_r = 2 } }\n", "ok", ()),
        ("dotted keys", BASE_CFG + "materials.vacuum.eps_r = 2\n", "ok", ()),
        ("material keyed by tag", BASE_CFG + '[materials."1"]\neps_r = 2\n', "ok", ()),
        ("material on a missing tag", BASE_CFG + '[materials."2"]\neps_r = 2\n', "error", ("2",)),
        ("probe with two coordinates", BASE_CFG + "probe = [[0.1, 0.2]]\n", "error", ("probe",)),
        ("empty probe list", BASE_CFG + "probe = []\n", "ok", ()),
        ("probe on the wall", BASE_CFG + "probe = [[0.0, 0.5, 0.5]]\n", "either", ("probe",)),
        ("probe = one point, not a list", BASE_CFG + "probe = [0.1, 0.2, 0.3]\n", "error", ("probe",)),
        ("string for a table key", BASE_CFG + 'materials = "glass"\n', "error", ("materials",)),
        ("unterminated string", BASE_CFG + 'device = "abc\n', "error", ("device", "line 4")),
        ("NUL byte in the file", BASE_CFG + "cfl = 0.5\0\n", "error", ("line",)),
        ("order without method dg", BASE_CFG + "order = 5\n", "error", ("order",)),
        ("flux without method dg", BASE_CFG + 'flux = "central"\n', "error", ("flux",)),
        ("min_prominence with harminv", BASE_CFG + "min_prominence = 0.5\n", "error", ("min_prominence", "min-prominence")),
        ("min_q with extract fft", BASE_CFG + 'extract = "fft"\nmin_q = 1e9\n', "error", ("min_q", "min-q")),
        ("f_tan_delta without tan_delta", BASE_CFG + "[materials.vacuum]\nf_tan_delta = 1e9\n", "error", ("f_tan_delta",)),
        ("layer_order without absorbing", BASE_CFG + "[materials.vacuum]\nlayer_order = 3\n", "error", ("layer_order",)),
        ("dual = csr with method dg", BASE_CFG + 'method = "dg"\ndual = "csr"\n', "error", ("dual",)),
        ("partitioner with one gpu", BASE_CFG + 'partitioner = "slab"\n', "either", ("partitioner",)),
        ("assembly = device with backend cpu", BASE_CFG + 'assembly = "device"\n', "error", ("assembly",)),
        ("dt and cfl both given", BASE_CFG + "dt = 1e-12\ncfl = 0.5\n", "error", ("cfl", "dt")),
        ("steps and time both given (documented: steps overrides time)", BASE_CFG + "time = 1e-6\n", "either", ("time", "steps")),
    ]
    for name, text, exp, needles in S:
        cfg_case(name, text, exp, (needles,) if needles else (), note=name)

    def cfg_file_case(name, setup, cmd, exp, needles, note):
        case("config", cmd, exp, needles, setup=setup, note=note)

    cfg_file_case("bom crlf", lambda cwd: write(os.path.join(cwd, "c.toml"), b"\xef\xbb\xbf" + BASE_CFG.replace("\n", "\r\n").encode()),
                  "dgatd resonator --config c.toml --quiet --out o   # BOM + CRLF", "ok", (), "BOM and CRLF line ends")
    cfg_file_case("latin1", lambda cwd: write(os.path.join(cwd, "c.toml"), BASE_CFG.encode() + b'device = "caf\xe9"\n'),
                  "dgatd resonator --config c.toml --quiet --out o   # a Latin-1 byte", "error", (("c.toml", "utf"),), "a Latin-1 byte in a string")
    cfg_file_case("empty", lambda cwd: write(os.path.join(cwd, "c.toml"), b""),
                  "dgatd resonator --config c.toml --quiet --out o --box 3,3,3 --backend cpu --steps 300   # empty file", "ok", (), "an empty configuration file")

    def big(cwd):
        with open(os.path.join(cwd, "c.toml"), "wb") as f:
            f.write(BASE_CFG.encode())
            f.write(b"# " + b"x" * (17 << 20) + b"\n")
    cfg_file_case("17MB", big, "dgatd resonator --config c.toml --quiet --out o   # 17 MiB comment", "error", (("large", "c.toml"),), "a 17 MiB file (comment)")

    def deep(cwd):
        write(os.path.join(cwd, "c.toml"), BASE_CFG + "[run]\nx = " + "[" * 100000 + "]" * 100000 + "\n")
    cfg_file_case("deep", deep, "dgatd resonator --config c.toml --quiet --out o   # [run] x = [[[[...100000 deep", "either", (("c.toml", "recursion", "nest"),),
                  "100 000 nested arrays inside the ignored [run] table")

    def many_mats(cwd):
        write(os.path.join(cwd, "c.toml"), BASE_CFG + "".join(f"[materials.g{i}]\neps_r = 2\n" for i in range(20000)))
    cfg_file_case("20k materials", many_mats, "dgatd resonator --config c.toml --quiet --out o   # 20 000 [materials.gN] tables", "error", (("g0", "no volume group", "materials"),),
                  "20 000 materials on groups the mesh lacks")
    cfg_file_case("pipe", None, "echo 'steps = 300' | dgatd resonator --config /dev/stdin --box 3,3,3 --backend cpu --quiet --out o",
                  "error", (("regular", "stdin"),), "--config /dev/stdin (a pipe)")
    cfg_file_case("run.toml", lambda cwd: None,
                  f"dgatd resonator {QUICK} --out a && dgatd resonator --config a/run.toml --quiet --out b && cmp a/modes.csv b/modes.csv",
                  "ok", (), "a finished run's run.toml as --config reproduces modes.csv")


# ---- command-line values

def cli(cmd, exp, needles, note="", timeout=DEFAULT_TIMEOUT, setup=None, judge=None, rss_mb=UNBOUNDED_MB):
    case("cli", cmd, exp, needles, note=note, timeout=timeout, setup=setup, judge=judge, rss_mb=rss_mb)


def cli_cases():
    R = "dgatd resonator --backend cpu --quiet --out o"
    B = "--box 4,4,4 --fmax 4e8"
    S = "--steps 2000"
    items = [
        (f"{R} --mesh '' {S}", "error", ("mesh",)),
        (f"{R} --mesh bundled:huge {S}", "error", ("huge", "bundled")),
        (f"{R} --mesh bundled: {S}", "error", ("bundled",)),
        (f"{R} --mesh BUNDLED:coarse {S}", "error", ("BUNDLED",)),
        (f"{R} --box 0,3,3 {S}", "error", ("box",)),
        (f"{R} --box 3,3 {S}", "error", ("box",)),
        (f"{R} --box 3,3,3,3 {S}", "error", ("box",)),
        (f"{R} --box 1.5,3,3 {S}", "error", ("box",)),
        (f"{R} --box -3,3,3 {S}", "error", ("box",)),
        (f"{R} --box 3,3,3:1,1 {S}", "error", ("box",)),
        (f"{R} --box 3,3,3:0,1,1 {S}", "error", ("box",)),
        (f"{R} --box 3,3,3:nan,1,1 {S}", "error", ("box",)),
        (f"{R} --box ' 3, 3, 3' {S}", "either", ("box",)),
        (f"{R} --box 3,3,3: {S}", "error", ("box",)),
        (f"{R} --box 4294967297,1,1 {S}", "error", ("box",)),
        (f"{R} --ball 0:a=1 {S}", "error", ("ball",)),
        (f"{R} --ball 2:=1 {S}", "error", ("ball",)),
        (f"{R} --ball 2:a=nan {S}", "error", ("ball",)),
        (f"{R} --ball 2:a=1,b=2@0.5 {S}", "error", ("ball",)),
        (f"{R} --ball 2:a=1,b=2@inf {S}", "error", ("ball",)),
        (f"{R} --ball 2 {S}", "error", ("ball",)),
        (f"{R} --ball 2:a=1e-300 {S}", "error", ("ball",)),
        (f"{R} {B} --refine -1 {S}", "error", ("refine",)),
        (f"{R} {B} --refine 4294967296 {S}", "error", ("refine",)),
        (f"{R} --box 20,20,20 --refine 4 {S}", "error", ("refine", "memory", "tets")),
        (f"{R} {B} --mesh-order zorder {S}", "error", ("mesh-order",)),
        (f"{R} {B} --converge 0", "error", ("converge",)),
        (f"{R} {B} --converge 5", "error", ("converge",)),
        (f"{R} {B} --converge 1 {S}", "error", ("steps",)),
        (f"{R} {B} --steps 1e3", "error", ("steps",)),
        (f"{R} {B} --steps 0x10", "error", ("steps",)),
        (f"{R} {B} --steps 18446744073709551616", "error", ("steps",)),
        (f"{R} {B} --steps 18446744073709551615", "error", ("steps",)),
        (f"{R} {B} --time 1e300", "error", ("time",)),
        (f"{R} {B} --time inf", "error", ("time",)),
        (f"{R} {B} --time 1e-300", "error", ("time",)),
        (f"{R} {B} --time 5e-324", "error", ("time",)),
        (f"{R} {B} --time 1e-12", "error", ("time",)),
        (f"{R} {B} --cfl 1.0000000001 {S}", "error", ("cfl",)),
        (f"{R} {B} --cfl -0 {S}", "error", ("cfl",)),
        (f"{R} {B} --cfl 1e-300", "error", ("cfl",)),
        (f"{R} {B} --cfl 0.5,0.6 {S}", "error", ("cfl",)),
        (f"{R} {B} --dt 0 {S}", "error", ("dt",)),
        (f"{R} {B} --dt -1e-12 {S}", "error", ("dt",)),
        (f"{R} {B} --dt nan {S}", "error", ("dt",)),
        (f"{R} {B} --dt 1 {S}", "error", ("dt",)),
        (f"{R} {B} --dt 5e-324 {S}", "error", ("dt",)),
        (f"{R} {B} --dt 1e-30 --time 1e-9", "error", ("dt", "steps", "memory")),
        (f"{R} {B} --precision F64 {S}", "error", ("precision",)),
        (f"{R} {B} --precision f16 {S}", "error", ("precision",)),
        (f"{R} {B} --dual coo {S}", "error", ("dual",)),
        (f"dgatd resonator --quiet --out o {B} {S} --backend opencl --device 99", "error", ("device", "99")),
        (f"dgatd resonator --quiet --out o {B} {S} --backend opencl --device ''", "error", ("device",)),
        (f"dgatd resonator --quiet --out o {B} {S} --backend opencl --device -1", "error", ("device",)),
        (f"dgatd resonator --quiet --out o {B} {S} --backend cpu --device 0", "error", ("device",)),
        (f"{R} {B} {S} --source 0.5,0.5,0.5,0.5", "error", ("source",)),
        (f"{R} {B} {S} --source '0.4, 0.45, 0.3'", "either", ("source",)),
        (f"{R} {B} {S} --source 1e400,0,0", "error", ("source",)),
        (f"{R} {B} {S} --source 0.4;0.45;0.3", "error", ("source",)),
        (f"{R} {B} {S} --source ''", "error", ("source",)),
        (f"{R} {B} {S} --source-dir 1e-320,0,0", "either", ("source-dir", "source direction")),
        (f"{R} {B} {S} --source-dir inf,0,0", "error", ("source-dir", "source direction")),
        (f"{R} {B} {S} --source-dir 1e308,1e308,1e308", "either", ("source-dir", "source direction")),
        (f"{R} {B} {S} --source-radius -1", "error", ("source-radius", "source_radius")),
        (f"{R} {B} {S} --source-radius nan", "error", ("source-radius", "source_radius")),
        (f"{R} {B} {S} --source-radius 1e300", "either", ("source-radius", "source_radius")),
        (f"{R} {B} {S} --source-radius 1e-3", "either", ("source-radius", "source_radius")),
        (f"{R} {B} {S} --probe 0,0.5,0.5", "either", ("probe",)),
        (f"{R} {B} {S} --probe ''", "error", ("probe",)),
        (f"{R} {B} {S} --probe 0.3,0.3,0.3 --probe 0.3,0.3,0.3", "either", ("probe",)),
        (f"{R} {B} {S} --probe 0.3,0.3,nan", "error", ("probe",)),
        (f"{R} {B} {S} --f-peak 0", "error", ("f-peak",)),
        (f"{R} {B} {S} --f-peak nan", "error", ("f-peak",)),
        (f"{R} {B} {S} --f-peak 1e-300", "error", ("f-peak",)),
        (f"{R} {B} {S} --f-peak 1", "error", ("f-peak",)),
        (f"{R} {B} {S} --fmax 0", "error", ("fmax",)),
        (f"{R} {B} {S} --fmax 1", "error", ("fmax",)),
        (f"{R} {B} {S} --fmax inf", "error", ("fmax",)),
        (f"{R} {B} {S} --extract fft --min-prominence 1", "error", ("min-prominence",)),
        (f"{R} {B} {S} --extract fft --min-prominence nan", "error", ("min-prominence",)),
        (f"{R} {B} {S} --min-q nan", "error", ("min-q",)),
        (f"{R} {B} {S} --min-q inf", "error", ("min-q",)),
        (f"{R} {B} {S} --material vacuum=1,1,-1", "error", ("material", "sigma")),
        (f"{R} {B} {S} --material vacuum=1,1,0,-1", "error", ("material", "sigma")),
        (f"{R} {B} {S} --material vacuum=1,1,1,1,1", "error", ("material",)),
        (f"{R} {B} {S} --material vacuum=", "error", ("material",)),
        (f"{R} {B} {S} --material =2", "error", ("material",)),
        (f"{R} {B} {S} --material vacuum=nan", "error", ("material", "eps")),
        (f"{R} {B} {S} --material vacuum=2,inf", "error", ("material", "mu")),
        (f"{R} {B} {S} --material vacuum=0x2", "error", ("material",)),
        (f"{R} {B} {S} --material Vacuum=2", "error", ("Vacuum",)),
        (f"{R} {B} {S} --material vacuum=2 --material 1=3", "error", ("vacuum", "1")),
        (f"{R} {B} {S} --boundary xmin=foo", "error", ("boundary",)),
        (f"{R} {B} {S} --boundary xmin=conductor:-1", "error", ("boundary", "sigma", "conduct")),
        (f"{R} {B} {S} --boundary xmin=conductor:nan", "error", ("boundary", "sigma", "conduct")),
        (f"{R} {B} {S} --boundary xmin=conductor:0", "error", ("boundary", "sigma", "conduct")),
        (f"{R} {B} {S} --boundary xmin=conductor:1e300", "error", ("boundary", "sigma", "conduct")),
        (f"{R} {B} {S} --boundary xmin=conductor:5.8e7,nan", "error", ("boundary", "mu")),
        (f"{R} {B} {S} --boundary xmin=pec:1", "error", ("boundary",)),
        (f"{R} {B} {S} --boundary xmin=PMC", "either", ("boundary",)),
        (f"{R} {B} {S} --boundary xmin=pmc --boundary 1=pec", "error", ("xmin", "1")),
        (f"{R} {B} {S} --boundary xmin=pmc --boundary xmin=pmc", "error", ("xmin",)),
        (f"{R} {B} {S} --boundary vacuum=pmc", "error", ("vacuum",)),
        (f"{R} {B} {S} --material xmin=2", "error", ("xmin",)),
        (f"{R} {B} {S} --cavity box:0,1,1", "error", ("cavity",)),
        (f"{R} {B} {S} --cavity cylinder:1", "error", ("cavity",)),
        (f"{R} {B} {S} --cavity sphere:nan", "error", ("cavity",)),
        (f"{R} {B} {S} --cavity box:1,1,1,1", "error", ("cavity",)),
        (f"{R} {B} {S} --cavity sphere:0.5", "error", ("cavity",)),
        (f"{R} {B} {S} --cavity Box:1,1,1", "either", ("cavity",)),
        (f"{R} {B} {S} --extract HARMINV", "error", ("extract",)),
        (f"{R} {B} {S} --mode-shapes -1", "error", ("mode-shapes",)),
        (f"{R} {B} {S} --mode-shapes 100000", "either", ("mode-shapes",)),
        (f"{R} {B} {S} --seed -1", "error", ("seed",)),
        (f"{R} {B} {S} --seed 1.5", "error", ("seed",)),
        (f"{R} {B} {S} --checkpoint-steps -1", "error", ("checkpoint-steps",)),
        (f"{R} {B} --steps 3000 --checkpoint-steps 1", "either", ("checkpoint-steps",)),
        (f"{R} {B} {S} --checkpoint-minutes nan", "error", ("checkpoint-minutes",)),
        (f"{R} {B} {S} --checkpoint-minutes inf", "either", ("checkpoint-minutes",)),
        (f"{R} {B} {S} --checkpoint-minutes 1e-300", "either", ("checkpoint-minutes",)),
        (f"{R} {B} {S} --checkpoint-minutes -0", "either", ("checkpoint-minutes",)),
        (f"{R} {B} --steps 20000 --energy-checks 18446744073709551615", "either", ("energy-checks",)),
        (f"{R} {B} {S} --energy-checks -1", "error", ("energy-checks",)),
        (f"{R} {B} {S} --method DG", "error", ("method",)),
        (f"{R} {B} {S} --method dg --order 11", "error", ("order",)),
        (f"{R} {B} {S} --flux none", "error", ("flux",)),
        (f"{R} {B} {S} --partitioner x", "error", ("partitioner",)),
        (f"{R} {B} {S} --assembly device", "error", ("assembly",)),
        (f"{R} {B} {S} --gpus 0", "error", ("gpus",)),
        (f"{R} {B} {S} --gpus 65", "error", ("gpus",)),
        (f"{R} {B} {S} --gpus 2", "error", ("gpus", "gpu")),
        # repeated and conflicting flags
        (f"{R} {B} --steps 300 --steps 2000", "ok", ()),
        (f"{R} {B} {S} --quiet --quiet", "ok", ()),
        (f"{R} {B} {S} --out o2", "ok", ()),
        (f"{R} {B} --mesh bundled:coarse {S}", "error", ("mesh", "box")),
        (f"{R} {B} --ball 2:a=1 {S}", "error", ("ball", "box")),
        (f"{R} {B} --steps 300 --time 1e-6", "either", ("steps", "time")),
        (f"{R} {B} {S} --dt 1e-12 --cfl 0.5", "error", ("dt", "cfl")),
        (f"{R} {B} {S} --method dg --dual csr", "error", ("dual",)),
        (f"{R} {B} {S} --extract fft --min-q 1e9", "error", ("min-q",)),
        (f"{R} {B} {S} --min-prominence 0.5", "error", ("min-prominence",)),
        (f"{R} {B} {S} --method dg --mode-shapes 1", "error", ("mode-shapes",)),
        (f"{R} {B} {S} --force", "error", ("force", "resume")),
        (f"{R} {B} {S} --bogus-flag 1", "error", ("bogus",)),
        (f"{R} {B} {S} --STEPS 5", "error", ("STEPS",)),
        (f"{R} {B} {S} -s 5", "error", ("-s",)),
        (f"dgatd resonator {B} {S} --backend cpu --quiet --out", "error", ("out",)),
        (f"dgatd {B} {S}", "error", ("box",)),
        (f"dgatd resonator {B} {S} --backend cpu --quiet --out o extra-positional", "error", ("extra-positional",)),
    ]
    for cmd, exp, needles in items:
        note = cmd.replace(R, "").replace("dgatd resonator", "").strip()
        timeout = 120
        cli(cmd, exp, (needles,) if needles else (), note=note, timeout=timeout)


# ---- faults

def sig_during(phase_pat, sigs, gap=0.0, wait_first=60, to_group=False, delay=0.0):
    """Sends `sigs` (list of (signal, delay_after_previous)) once stderr matches phase_pat."""
    def during(p, cwd):
        se = os.path.join(cwd, ".stderr")
        t0 = time.time()
        seen = False
        while time.time() - t0 < wait_first:
            try:
                s = open(se, "rb").read().decode("utf-8", "replace")
            except FileNotFoundError:
                s = ""
            if re.search(phase_pat, s):
                seen = True
                break
            if not running(p):
                break
            time.sleep(0.005)
        if delay:
            time.sleep(delay)
        sent = []
        for sg, dly in sigs:
            if dly:
                time.sleep(dly)
            try:
                if to_group:
                    os.killpg(p.pid, sg)
                else:
                    os.kill(p.pid, sg)
                sent.append((signal.Signals(sg).name, round(time.time() - t0, 3)))
            except ProcessLookupError:
                sent.append((signal.Signals(sg).name, "gone"))
        return {"seen": seen, "sent": sent}
    return during


class PopenPoll:
    pass


def fault_run(cmd, during, cwd, timeout):
    return run_cmd(cmd, cwd, timeout=timeout, during=during)


def files(d):
    try:
        return sorted(os.listdir(d))
    except FileNotFoundError:
        return []


def probe_rows(d):
    p = os.path.join(d, "probe.csv")
    try:
        with open(p, "rb") as f:
            return sum(1 for _ in f) - 1
    except FileNotFoundError:
        return -1


def fault(cmd, note, runner_cmd=None, during=None, setup=None, judge=None, timeout=120, rss_mb=UNBOUNDED_MB, cls="fault"):
    case(cls, cmd, "custom", (), note=note, timeout=timeout, setup=setup,
         runner=(runner_cmd, during), judge=judge, rss_mb=rss_mb)


def judge_saved(r, c):
    """An interrupt in the time loop must leave checkpoint.bin and probe.csv, exit 130."""
    d = os.path.join(r.cwd, "o")
    fs = files(d)
    rows = probe_rows(d)
    info = f"exit {r.rc}; files {fs}; probe rows {rows}; signals {r.extra}"
    if r.rc == 0:
        return "OK", "finished before the signal took effect; " + info
    if "checkpoint.bin" in fs and rows > 0 and r.rc == 130:
        return "OK", info
    if "checkpoint.bin" in fs and r.rc == 130:
        return "OK", info + " (probe.csv not written, but the checkpoint holds the run: resumable)"
    return "LOSS", info + "; stderr: " + " | ".join(r.err.strip().splitlines()[-3:])


def judge_setup_exit(r, c):
    d = os.path.join(r.cwd, "o")
    fs = files(d)
    if r.rc in (130, 0) and ".dgatd.lock" not in fs:
        return "OK", f"exit {r.rc}; files {fs}; signals {r.extra}"
    if r.rc == 130:
        return "OK", f"exit 130; files {fs}"
    return "VAGUE", f"exit {r.rc}; files {fs}; {err_line(r)}"


def fault_cases():
    run_long = "dgatd resonator --box 6,6,6 --backend cpu --steps 400000 --out o"
    # signals during setup (power iteration on a 1.3M-tet box takes seconds)
    setup_cmd = "dgatd resonator --box 60,60,60 --backend cpu --steps 100 --out o"
    for name, sigs in [("SIGTERM x3 in 10 ms", [(signal.SIGTERM, 0), (signal.SIGTERM, 0.005), (signal.SIGTERM, 0.005)]),
                       ("SIGINT+SIGHUP at once", [(signal.SIGINT, 0), (signal.SIGHUP, 0)]),
                       ("SIGHUP alone", [(signal.SIGHUP, 0)])]:
        fault(f"{setup_cmd}   # {name} during setup", f"{name} during setup (topology/assembly)",
              during=sig_during(r"topology|assembl|power", sigs), judge=judge_setup_exit)
    # stepping
    for name, sigs, grp in [
        ("SIGTERM to the group twice at once (timeout)", [(signal.SIGTERM, 0), (signal.SIGTERM, 0)], True),
        ("SIGINT, SIGTERM, SIGHUP within 50 ms", [(signal.SIGINT, 0), (signal.SIGTERM, 0.025), (signal.SIGHUP, 0.025)], False),
        ("SIGTERM x5 within 0.9 s", [(signal.SIGTERM, 0)] + [(signal.SIGTERM, 0.2)] * 4, False),
        ("SIGHUP to the group (terminal closed)", [(signal.SIGHUP, 0)], True),
        ("SIGINT then SIGINT 1.2 s later", [(signal.SIGINT, 0), (signal.SIGINT, 1.2)], False),
    ]:
        fault(f"{run_long}   # {name} while stepping", f"{name} while stepping (box 6^3, 400k steps)",
              during=sig_during(r"step \d+ of", sigs, to_group=grp), judge=judge_saved)
    # a large mesh: the interrupt is looked at every 256 steps (1.7 s here), so a second
    # signal can come while the first one's save is still pending
    big = "dgatd resonator --box 24,24,24 --backend cpu --steps 20000 --energy-checks 0 --out o"
    fault(f"{big}   # SIGTERM at 'step 2000 of 20000', a second SIGTERM 1.2 s later",
          "second SIGTERM 1.2 s after the first, before the pending save (83k tets, 256-step look)",
          during=sig_during(r"step 2000 of 20000", [(signal.SIGTERM, 0), (signal.SIGTERM, 1.2)], wait_first=100), judge=judge_saved, timeout=200)
    fault(f"{big}   # SIGINT at 'step 2000 of 20000', Ctrl-C again 1.05 s later",
          "Ctrl-C, then Ctrl-C again 1.05 s later while the save is pending",
          during=sig_during(r"step 2000 of 20000", [(signal.SIGINT, 0), (signal.SIGINT, 1.05)], wait_first=100), judge=judge_saved, timeout=200)
    fault(f"{big}   # SIGTERM to the group at 'step 2000 of 20000', SIGTERM to the group again 1.5 s later (a scheduler)",
          "a scheduler's SIGTERM to the job's group, repeated 1.5 s later",
          during=sig_during(r"step 2000 of 20000", [(signal.SIGTERM, 0), (signal.SIGTERM, 1.5)], wait_first=100, to_group=True), judge=judge_saved, timeout=200)
    # a long record: probe.csv takes seconds to write
    rec = "dgatd resonator --box 2,2,2 --backend cpu --steps 3000000 --energy-checks 0 --out o"
    fault(f"{rec}   # SIGTERM at 'step 900000 of 3000000', SIGTERM again 1.5 s later (during the save of 0.9M rows)",
          "second SIGTERM 1.5 s after the first, while 0.9M probe rows are being saved",
          during=sig_during(r"step 900000 of 3000000", [(signal.SIGTERM, 0), (signal.SIGTERM, 1.5)], wait_first=100), judge=judge_saved, timeout=200,
          rss_mb=4000)

    # a signal just after the last step, while probe.csv is written (phase 'analysis')
    def judge_end(r, c):
        d = os.path.join(r.cwd, "o")
        fs = files(d)
        rows = probe_rows(d)
        info = f"exit {r.rc}; files {fs}; probe rows {rows}; signals {r.extra}"
        if r.rc == 0:
            return "OK", "finished; " + info
        if rows > 0 or "checkpoint.bin" in fs:
            return "OK", info
        return "LOSS", info + "; stderr: " + " | ".join(r.err.strip().splitlines()[-2:])
    end_cmd = "dgatd resonator --box 2,2,2 --backend cpu --steps 1000000 --energy-checks 0 --out o"
    fault(f"{end_cmd}   # SIGTERM as soon as 'step 1000000 of 1000000' is logged",
          "SIGTERM right after the last step, while the 1M-row probe.csv is being written",
          during=sig_during(r"step 1000000 of 1000000", [(signal.SIGTERM, 0)], wait_first=150), judge=judge_end, timeout=240,
          rss_mb=4000)
    fault(f"{end_cmd}   # SIGINT 0.5 s after 'step 1000000 of 1000000' is logged",
          "Ctrl-C 0.5 s after the last step (probe.csv being written)",
          during=sig_during(r"step 1000000 of 1000000", [(signal.SIGINT, 0.5)], wait_first=150), judge=judge_end, timeout=240,
          rss_mb=4000)
    fault(f"{end_cmd} --checkpoint-minutes 0.01   # SIGTERM after the last step, a run 'long' enough for a final checkpoint",
          "SIGTERM right after the last step of a run long enough for a final checkpoint",
          during=sig_during(r"step 1000000 of 1000000", [(signal.SIGTERM, 0)], wait_first=150), judge=judge_end, timeout=240,
          rss_mb=4000)
    # extraction time of a long record on a small mesh
    def judge_analysis(r, c):
        m = re.search(r"run ([0-9.]+) s", r.out)
        run_s = float(m.group(1)) if m else None
        # the fix asked for: an estimate before the run (its memory is counted by the
        # --steps check, fault-505)
        est = next((l for l in r.err.splitlines() if "a long record" in l), None)
        if r.rc == 0 and est:
            return "OK", f"run {run_s} s of {r.secs:.0f} s, announced: {est[:200]}"
        if r.rc == 0 and run_s and r.secs > 60 and r.secs > 8 * run_s:
            return "UNBOUNDED", f"time stepping {run_s:.1f} s, whole command {r.secs:.0f} s (writing probe.csv and the extraction, no estimate or bound), peak RSS {r.rss:.0f} MB for a record of {3e6*9*8/1e6:.0f} MB"
        return ("OK", f"run {run_s} s of {r.secs:.0f} s") if r.rc == 0 else ("VAGUE", err_line(r))
    case("fault", "dgatd resonator --box 2,2,2 --backend cpu --steps 3000000 --energy-checks 0 --quiet --out o", "custom", (),
         note="3M steps on 48 tets: the stepping takes about 8 s; how long does the analysis take?", timeout=240, rss_mb=100000,
         judge=judge_analysis)

    # under the case's 4 GiB address-space limit: a run, or a refusal before it naming
    # --steps and the memory (the analysis needs about 7.8 GB here)
    case("fault", "dgatd resonator --box 2,2,2 --backend cpu --steps 12000000 --energy-checks 0 --quiet --out o", "either", (("steps",), ("memory",)),
         note="12M steps on 48 tets (record 0.86 GB): accepted by the memory check; probe.csv is built in memory", timeout=300, rss_mb=4000)

    # resume hostile checkpoints
    def make_ck(cwd, name="o", extra=""):
        subprocess.run(f"dgatd resonator --box 4,4,4 --backend cpu --steps 200000 --checkpoint-steps 256 --out {name} --quiet {extra} & pid=$!; "
                       f"for i in $(seq 1 400); do [ -f {name}/checkpoint.bin ] && break; sleep 0.01; done; kill -INT $pid; wait $pid",
                       shell=True, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       preexec_fn=limits(MEM_LIMIT))

    def ck_mut(fn):
        def s(cwd):
            make_ck(cwd)
            p = os.path.join(cwd, "o", "checkpoint.bin")
            if os.path.exists(p):
                b = bytearray(open(p, "rb").read())
                b = fn(b, cwd)
                if b is not None:
                    open(p, "wb").write(bytes(b))
        return s

    def judge_resume_refused(*needles):
        def j(r, c):
            if r.rc == 0:
                return "SILENT", "accepted: " + first_line(r.err, "resum")
            if has(r.err, needles):
                return "OK", err_line(r)
            return "VAGUE", err_line(r)
        return j

    rc = "dgatd resonator --resume o --quiet"
    fault(f"{rc}   # checkpoint with one byte flipped in the middle", "checkpoint: one byte flipped",
          setup=ck_mut(lambda b, cwd: (b.__setitem__(len(b) // 2, b[len(b) // 2] ^ 0x40), b)[1]),
          judge=judge_resume_refused(("checksum", "corrupt")))
    fault(f"{rc}   # checkpoint truncated to 20 bytes", "checkpoint truncated to 20 bytes",
          setup=ck_mut(lambda b, cwd: b[:20]), judge=judge_resume_refused(("truncated", "corrupt", "checksum")))
    fault(f"{rc}   # checkpoint of 0 bytes", "checkpoint emptied",
          setup=ck_mut(lambda b, cwd: b[:0]), judge=judge_resume_refused(("magic", "empty", "checkpoint")))
    fault(f"{rc}   # checkpoint with 1 MiB of zeros appended", "checkpoint with zeros appended",
          setup=ck_mut(lambda b, cwd: b + b"\0" * (1 << 20)), judge=judge_resume_refused(("checksum", "corrupt")))

    def forged(b, cwd):
        # keep the magic, forge a body whose config-length field is huge, fix the checksum
        body = bytearray(b[:-8])
        body[40:48] = struct.pack("<Q", (1 << 62))
        return bytes(body) + struct.pack("<Q", fnv1a64(bytes(body)))
    fault(f"{rc}   # checkpoint with a forged length 2^62 and a valid checksum", "forged count 2^62 (checksum fixed)",
          setup=ck_mut(forged), judge=judge_resume_refused(("count", "exceeds", "truncated")))

    def forged_cfg(b, cwd):
        # replace the stored configuration text with one that names a different box
        i = bytes(b).find(b'box = "4,4,4"')
        if i < 0:
            return None
        b[i:i + 13] = b'box = "5,4,4"'
        body = bytes(b[:-8])
        return body + struct.pack("<Q", fnv1a64(body))
    fault(f"{rc}   # stored configuration edited (box 5,4,4), checksum fixed", "stored configuration edited, checksum fixed",
          setup=ck_mut(forged_cfg), judge=judge_resume_refused(("fingerprint", "different", "configuration")))

    def other_run(cwd):
        make_ck(cwd, "o")
        make_ck(cwd, "p", "--seed 7")
        shutil.copy(os.path.join(cwd, "p", "checkpoint.bin"), os.path.join(cwd, "o", "checkpoint.bin"))
    fault(f"{rc}   # checkpoint copied from another run (--seed 7) into o", "another run's checkpoint copied in",
          setup=other_run, judge=judge_resume_refused(("written by", "not this folder", "force", "different")))

    def moved_mesh(cwd):
        shutil.copy(os.path.join(MESHES, "tiny_v41.msh"), os.path.join(cwd, "m.msh"))
        subprocess.run("dgatd resonator --mesh m.msh --backend cpu --steps 200000 --checkpoint-steps 256 --out o --quiet & pid=$!; "
                       "for i in $(seq 1 400); do [ -f o/checkpoint.bin ] && break; sleep 0.01; done; kill -INT $pid; wait $pid",
                       shell=True, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(cwd, "m.msh"), "ab") as f:
            f.write(b"$Comments\nedited\n$EndComments\n")
    fault(f"{rc}   # the mesh file was edited (a comment section appended) after the checkpoint", "mesh edited after the checkpoint",
          setup=moved_mesh, judge=lambda r, c: ("OK", err_line(r) or "resumed") if (r.rc != 0 and has(r.err, [("mesh", "fingerprint", "different")])) or r.rc == 0 else ("VAGUE", err_line(r)))

    def ck_dir(cwd):
        os.makedirs(os.path.join(cwd, "o", "checkpoint.bin"))
    fault(f"{rc}   # o/checkpoint.bin is a directory", "checkpoint.bin is a directory", setup=ck_dir,
          judge=judge_resume_refused(("regular", "directory", "checkpoint")))

    def resume_into_finished(cwd):
        subprocess.run(f"dgatd resonator {QUICK} --seed 3 --out b", shell=True, cwd=cwd, env=ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.copy(os.path.join(cwd, "b", "modes.csv"), os.path.join(cwd, "b_modes_before.csv"))
        make_ck(cwd, "o")

    def judge_resume_into(r, c):
        b = os.path.join(r.cwd, "b")
        before = open(os.path.join(r.cwd, "b_modes_before.csv"), "rb").read()
        now = open(os.path.join(b, "modes.csv"), "rb").read() if os.path.exists(os.path.join(b, "modes.csv")) else b""
        prev = os.path.exists(os.path.join(b, "previous", "modes.csv"))
        if r.rc != 0:
            return "OK", "refused: " + err_line(r)
        if now != before and not prev:
            return "LOSS", f"exit 0; b/modes.csv of the finished --seed 3 run replaced by the resumed run's, no b/previous/ (files {files(b)})"
        return "OK", f"exit 0; previous kept: {prev}"
    fault("dgatd resonator --resume o --out b --quiet   # b holds a finished run's outputs", "--resume into an --out holding another finished run",
          setup=resume_into_finished, judge=judge_resume_into)

    def resume_into_ck(cwd):
        make_ck(cwd, "o")
        make_ck(cwd, "b", "--seed 5")
        shutil.copy(os.path.join(cwd, "b", "checkpoint.bin"), os.path.join(cwd, "b_ck_before"))

    def judge_resume_into_ck(r, c):
        b = os.path.join(r.cwd, "b")
        before = open(os.path.join(r.cwd, "b_ck_before"), "rb").read()
        p = os.path.join(b, "checkpoint.bin")
        now = open(p, "rb").read() if os.path.exists(p) else None
        if r.rc != 0 and now == before:
            return "OK", "refused: " + err_line(r)
        if now != before:
            return "LOSS", f"exit {r.rc}; b/checkpoint.bin of the interrupted --seed 5 run is gone or replaced (files now {files(b)})"
        return "OK", f"exit {r.rc}"
    fault("dgatd resonator --resume o --out b --quiet   # b holds another run's unfinished checkpoint", "--resume into an --out holding another run's checkpoint",
          setup=resume_into_ck, judge=judge_resume_into_ck)

    # two runs on one folder
    def two_runs(delay):
        def during(p, cwd):
            time.sleep(delay)
            q = subprocess.run(f"dgatd resonator {QUICK} --seed 9 --out o", shell=True, cwd=cwd, env=ENV,
                               capture_output=True, preexec_fn=limits(MEM_LIMIT))
            return {"rc2": q.returncode, "err2": q.stderr.decode(errors="replace").strip().splitlines()[-1:] if q.stderr else ""}
        return during

    def judge_two(r, c):
        rc2 = r.extra["rc2"]
        e2 = " ".join(r.extra["err2"])
        if r.rc == 0 and rc2 != 0 and "another dgatd run" in e2:
            return "OK", f"first exit 0, second refused: {e2}"
        if r.rc == 0 and rc2 == 0:
            return "OK", "both finished (the second after the first?)"
        return "LOSS", f"first exit {r.rc}, second exit {rc2}: {e2}"
    fault("dgatd resonator --box 8,8,8 --backend cpu --steps 30000 --quiet --out o & sleep 1; dgatd resonator " + QUICK + " --seed 9 --out o",
          "a second run on the folder 1 s after the first", runner_cmd="dgatd resonator --box 8,8,8 --backend cpu --steps 30000 --quiet --out o",
          during=two_runs(1.0), judge=judge_two)

    def resume_while_running(p, cwd):
        wait_for(os.path.join(cwd, "o", "checkpoint.bin"), "", 60)
        time.sleep(0.2)
        q = subprocess.run("dgatd resonator --resume o --quiet", shell=True, cwd=cwd, env=ENV, capture_output=True)
        return {"rc2": q.returncode, "err2": q.stderr.decode(errors="replace").strip().splitlines()[-1:]}
    fault("dgatd resonator --box 8,8,8 --backend cpu --steps 20000 --checkpoint-steps 256 --quiet --out o & (wait for o/checkpoint.bin); dgatd resonator --resume o",
          "--resume of a folder whose run is still going", runner_cmd="dgatd resonator --box 8,8,8 --backend cpu --steps 20000 --checkpoint-steps 256 --quiet --out o",
          during=resume_while_running, judge=judge_two)

    # re-runs in a used folder
    def rerun_twice(cwd):
        subprocess.run(f"dgatd resonator {QUICK} --seed 1 --steps 2100 --out o && cp o/modes.csv first_modes.csv && "
                       f"DGATD_FAULT_AT_STEP=100 dgatd resonator {QUICK} --seed 2 --out o; true", shell=True, cwd=cwd, env=ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def judge_rerun(r, c):
        first = open(os.path.join(r.cwd, "first_modes.csv"), "rb").read()
        found = []
        for root, ds, fs in os.walk(os.path.join(r.cwd, "o")):
            for f in fs:
                if f == "modes.csv" and open(os.path.join(root, f), "rb").read() == first:
                    found.append(os.path.relpath(os.path.join(root, f), r.cwd))
        if found:
            return "OK", f"exit {r.rc}; the first run's modes.csv survives at {found}"
        return "LOSS", f"exit {r.rc}; the first (complete) run's modes.csv is nowhere under o/ after a second run that failed mid-run and a third run (files: {files(os.path.join(r.cwd, 'o'))}, previous/: {files(os.path.join(r.cwd, 'o', 'previous'))})"
    fault(f"dgatd resonator {QUICK} --seed 1 --steps 2100 --out o; DGATD_FAULT_AT_STEP=100 dgatd resonator {QUICK} --seed 2 --out o; dgatd resonator {QUICK} --seed 3 --out o",
          "a finished run, then a run that fails mid-run (injected device failure, no checkpoint yet), then a third run in the same folder",
          runner_cmd=f"dgatd resonator {QUICK} --seed 3 --out o", setup=rerun_twice, judge=judge_rerun)

    def prev_file(cwd):
        subprocess.run(f"dgatd resonator {QUICK} --out o", shell=True, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        write(os.path.join(cwd, "o", "previous", "my_notes.txt"), "notes the user keeps beside the run\n")

    def judge_prev(r, c):
        # the fix (L4): an older previous/ is renamed to previous.N, with what it holds
        import glob
        kept = glob.glob(os.path.join(r.cwd, "o", "previous*", "my_notes.txt"))
        if kept:
            return "OK", f"exit {r.rc}; the user's file kept at {os.path.relpath(kept[0], r.cwd)}"
        return "LOSS", f"exit {r.rc}; o/previous/my_notes.txt (not a dgatd output) deleted with the old previous/: {first_line(r.err, 'previous')}"
    fault(f"dgatd resonator {QUICK} --out o   # o/previous/ holds a file the user put there", "a non-dgatd file inside OUT/previous/",
          setup=prev_file, judge=judge_prev, runner_cmd=f"dgatd resonator {QUICK} --out o")

    # read-only and full output folders
    def ro_mount(cwd):
        os.makedirs(os.path.join(cwd, "ro"), exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", os.path.join(cwd, "ro")])
    fault(f"dgatd resonator {QUICK} --out ro/o   # ro is a read-only tmpfs", "read-only filesystem as --out's parent",
          setup=ro_mount, judge=lambda r, c: unmount(r, ("read-only", "ro/o")))

    def ro_mount2(cwd):
        os.makedirs(os.path.join(cwd, "ro"), exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", os.path.join(cwd, "ro")])
        os.makedirs(os.path.join(cwd, "ro", "o"))
        subprocess.run(["mount", "-o", "remount,ro", os.path.join(cwd, "ro")])
    fault(f"dgatd resonator {QUICK} --out ro/o   # ro/o exists, filesystem remounted read-only", "existing --out on a read-only filesystem",
          setup=ro_mount2, judge=lambda r, c: unmount(r, ("read-only", "writable", "ro/o")))

    def full(size, fill):
        def s(cwd):
            os.makedirs(os.path.join(cwd, "full"), exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", os.path.join(cwd, "full")])
            if fill:
                subprocess.run(f"dd if=/dev/zero of=full/filler bs=1k count={fill} 2>/dev/null", shell=True, cwd=cwd)
        return s
    fault(f"dgatd resonator {QUICK} --out full/o   # a 64 KiB tmpfs, 63 KiB filled", "full filesystem (1 KiB free)",
          setup=full("64k", 60), judge=lambda r, c: unmount(r, ("space", "full/o")))
    fault(f"dgatd resonator --box 3,3,3 --backend cpu --steps 60000 --quiet --out full/o   # 1 MiB tmpfs: the probe record does not fit",
          "a record larger than the free space", setup=full("1m", 0), judge=lambda r, c: unmount(r, ("space", "full/o")))

    def bench_full_judge(r, c):
        return unmount(r, ("space", "no space", "full"), allow_ok=True)
    fault("dgatd bench --devices none --sizes 1e3 --reps 1 --warmup 0 --dg-orders '' --precision f64 --out full/b   # 16 KiB tmpfs",
          "bench into a nearly full filesystem", setup=full("16k", 12), judge=bench_full_judge)

    # symlinks in --out
    def link_out(cwd):
        os.makedirs(os.path.join(cwd, "real"))
        os.symlink("real", os.path.join(cwd, "o"))
    fault(f"dgatd resonator {QUICK} --out o   # o -> real (a link to a folder)", "--out is a symbolic link to a folder",
          setup=link_out, judge=lambda r, c: ("OK", "ran into the link's target") if r.rc == 0 and "modes.csv" in files(os.path.join(r.cwd, "real")) else ("VAGUE", err_line(r)))

    def dangling(cwd):
        os.symlink("nowhere/deeper", os.path.join(cwd, "o"))
    fault(f"dgatd resonator {QUICK} --out o   # o -> nowhere/deeper (dangling)", "--out is a dangling symbolic link",
          setup=dangling, judge=lambda r, c: ("OK", err_line(r) or "ran") if (r.rc == 0 or has(r.err, [("link", "dangling", "nowhere")])) else ("VAGUE", err_line(r)))

    def victim_setup(name):
        def s(cwd):
            os.makedirs(os.path.join(cwd, "o"))
            write(os.path.join(cwd, "victim.txt"), "precious\n")
            os.symlink(os.path.join(cwd, "victim.txt"), os.path.join(cwd, "o", name))
        return s

    def judge_victim(r, c):
        v = open(os.path.join(r.cwd, "victim.txt")).read()
        if v != "precious\n":
            return "LOSS", f"exit {r.rc}; victim.txt overwritten through the link ({len(v)} bytes now)"
        return "OK", f"exit {r.rc}; victim intact" + ("; " + err_line(r) if r.rc else "")
    for name in ("previous", "checkpoint.bin.partial", "probe.csv.tmp", "spectrum.png.tmp", ".spectrum.png.tmp", "run.toml.tmp"):
        fault(f"dgatd resonator {QUICK} --out o   # o/{name} -> ../victim.txt", f"a link at o/{name}",
              setup=victim_setup(name), judge=judge_victim)

    # the lock file
    def big_lock(cwd):
        os.makedirs(os.path.join(cwd, "o"))
        with open(os.path.join(cwd, "o", ".dgatd.lock"), "wb") as f:
            f.write(b"pid 1 on host x, since unix time 1\n")
            f.truncate(3 << 30)
    fault(f"dgatd resonator {QUICK} --out o   # o/.dgatd.lock: a stale lock file of 3 GiB (sparse)",
          "a 3 GiB stale lock file (its owner line is read whole)", setup=big_lock,
          judge=lambda r, c: ("OK", err_line(r) or "ran") if r.rss < UNBOUNDED_MB else ("UNBOUNDED", f"peak RSS {r.rss:.0f} MB reading the lock file"),
          rss_mb=100000)

    def lock_dir(cwd):
        os.makedirs(os.path.join(cwd, "o", ".dgatd.lock"))
    fault(f"dgatd resonator {QUICK} --out o   # o/.dgatd.lock is a directory", ".dgatd.lock is a directory",
          setup=lock_dir, judge=lambda r, c: ("OK", err_line(r)) if r.rc != 0 and has(r.err, [("lock",)]) else ("VAGUE" if r.rc else "SILENT", err_line(r) or "ran"))

    def lock_fifo(cwd):
        os.makedirs(os.path.join(cwd, "o"))
        os.mkfifo(os.path.join(cwd, "o", ".dgatd.lock"))
    fault(f"dgatd resonator {QUICK} --out o   # o/.dgatd.lock is a FIFO", ".dgatd.lock is a FIFO", setup=lock_fifo, timeout=30,
          judge=lambda r, c: ("OK", err_line(r)) if r.rc != 0 and has(r.err, [("lock",)]) else ("VAGUE" if r.rc else "SILENT", err_line(r) or "ran"))

    def ck_fifo(cwd):
        os.makedirs(os.path.join(cwd, "o"))
        os.mkfifo(os.path.join(cwd, "o", "checkpoint.bin"))
    fault("dgatd resonator --resume o --quiet   # o/checkpoint.bin is a FIFO", "--resume with a FIFO checkpoint", setup=ck_fifo, timeout=30,
          judge=judge_resume_refused(("regular", "fifo", "checkpoint")))

    # fault injection and resume
    def judge_inject(r, c):
        d = os.path.join(r.cwd, "o")
        if r.rc == 1 and probe_rows(d) > 0 and "--resume" in r.err:
            return "OK", err_line(r)
        return "LOSS", f"exit {r.rc}; files {files(d)}; {err_line(r)}"
    fault("DGATD_FAULT_AT_STEP=1000 dgatd resonator --box 4,4,4 --backend cpu --steps 3000 --checkpoint-steps 512 --quiet --out o",
          "an injected device failure at step 1000", judge=judge_inject)
    fault("DGATD_FAULT_AT_STEP=abc dgatd resonator " + QUICK + " --out o", "DGATD_FAULT_AT_STEP not a number",
          judge=lambda r, c: ("OK", err_line(r)) if r.rc != 0 and "DGATD_FAULT_AT_STEP" in r.err else ("VAGUE", err_line(r)))
    fault("DGATD_FAULT_AT_STEP=0 dgatd resonator " + QUICK + " --out o", "a failure injected at step 0",
          judge=lambda r, c: ("OK", err_line(r)) if r.rc == 1 else ("VAGUE", f"exit {r.rc} {err_line(r)}"))


def unmount(r, needles, allow_ok=False):
    for sub in ("ro", "full"):
        p = os.path.join(r.cwd, sub)
        if os.path.ismount(p):
            subprocess.run(["umount", "-l", p])
    if r.rc == 0:
        return ("OK", "ran") if allow_ok else ("SILENT", "exit 0 on an unwritable/full folder")
    if has(r.err, [needles]):
        return "OK", err_line(r)
    return "VAGUE", err_line(r)


def fnv1a64(b):
    h = 0xcbf29ce484222325
    for x in b:
        h ^= x
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


# ---- output folder

def outdir_cases():
    def od(cmd, exp, needles, note, setup=None, judge=None):
        case("outdir", cmd, exp, needles, note=note, setup=setup, judge=judge)
    od(f"dgatd resonator {QUICK} --out ''", "error", (("out",),), "--out ''")
    od(f"dgatd resonator {QUICK} --out /sys/kernel/dgatd-test", "error", (("out", "/sys"),), "--out inside sysfs")
    od(f"dgatd resonator {QUICK} --out /proc/self", "error", (("out", "proc"),), "--out /proc/self")
    od(f"dgatd resonator {QUICK} --out /dev/null", "error", (("out", "/dev/null"),), "--out /dev/null")
    od(f"dgatd resonator {QUICK} --out o/", "ok", (), "--out with a trailing slash")
    od(f"dgatd resonator {QUICK} --out ./o/../o/./", "ok", (), "--out with . and ..")
    od(f"dgatd resonator {QUICK} --out {'x' * 300}", "error", (("out", "long"),), "a 300-byte folder name")
    od(f"dgatd resonator {QUICK} --out $'o\\nnew'", "ok", (), "a newline in the folder name")
    od(f"dgatd resonator {QUICK} --out 'ü ω'", "ok", (), "unicode and a space in --out")
    od(f"dgatd resonator {QUICK} --out -o", "either", (("-o", "out"),), "--out -o (a name starting with a dash)")
    od(f"dgatd resonator {QUICK} --out {'/'.join(['d'] * 2000)}", "either", (("out", "long"),), "a path of 2000 nested folders (4 KB)")

    def fifo_out(cwd):
        os.mkfifo(os.path.join(cwd, "o"))
    od(f"dgatd resonator {QUICK} --out o   # o is a FIFO", "error", (("o", "directory"),), "--out is a FIFO", setup=fifo_out)

    def prev_is_file(cwd):
        subprocess.run(f"dgatd resonator {QUICK} --out o", shell=True, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        write(os.path.join(cwd, "o", "previous"), "a file named previous\n")
    od(f"dgatd resonator {QUICK} --out o   # o/previous is a regular file of the user's", "custom", (),
       "OUT/previous is a regular file", setup=prev_is_file,
       # the fix (L4) renames the file to previous.N: the user's content must survive somewhere
       judge=lambda r, c: ("OK", f"exit {r.rc}; {err_line(r)}") if os.path.isfile(os.path.join(r.cwd, "o", "previous")) or r.rc != 0 and os.path.exists(os.path.join(r.cwd, "o", "previous"))
       or any(open(f, errors="replace").read() == "a file named previous\n" for f in __import__("glob").glob(os.path.join(r.cwd, "o", "previous.*")) if os.path.isfile(f))
       else ("LOSS", "exit %d; the user's file o/previous was deleted to make room for previous/: %s" % (r.rc, first_line(r.err, "previous"))))

    def probe_dir(cwd):
        os.makedirs(os.path.join(cwd, "o", "probe.csv"))
        write(os.path.join(cwd, "o", "probe.csv", "inside.txt"), "x")
    od(f"dgatd resonator {QUICK} --out o   # o/probe.csv is a directory with a file in it", "either", (("probe.csv",),),
       "OUT/probe.csv is a directory", setup=probe_dir)

    def out_is_mesh_dir(cwd):
        shutil.copy(os.path.join(MESHES, "tiny_v41.msh"), os.path.join(cwd, "m.msh"))
    od(f"dgatd resonator --mesh m.msh {QUICK_MESH} --out .   # the working folder holds the mesh", "ok", (), "--out . beside the mesh", setup=out_is_mesh_dir)

    def stale_lock(cwd):
        os.makedirs(os.path.join(cwd, "o"))
        write(os.path.join(cwd, "o", ".dgatd.lock"), "\x00\xff garbage \n" * 3)
    od(f"dgatd resonator {QUICK} --out o   # a stale lock of binary garbage", "ok", (), "a stale lock file with garbage", setup=stale_lock)

    def ck_garbage(cwd):
        os.makedirs(os.path.join(cwd, "o"))
        write(os.path.join(cwd, "o", "checkpoint.bin"), "not a checkpoint at all")
    od(f"dgatd resonator {QUICK} --out o   # o/checkpoint.bin holds garbage", "custom", (), "a new run where checkpoint.bin is garbage", setup=ck_garbage,
       judge=lambda r, c: ("VAGUE", "false claim and hint: " + err_line(r)) if r.rc != 0 and "checkpoint of an earlier run" in r.err
       else (("OK", err_line(r)) if r.rc != 0 else ("SILENT", "ran")))

    def two_new(cwd):
        pass
    od(f"for i in 1 2 3 4; do dgatd resonator {QUICK} --seed $i --out same & done; wait",
       "custom", (), "four runs started together on one new folder",
       judge=lambda r, c: judge_four(r))


def judge_four(r):
    d = os.path.join(r.cwd, "same")
    fs = files(d)
    n_refused = r.err.count("another dgatd run")
    if "modes.csv" in fs and n_refused >= 1 and "No such file" not in r.err:
        return "OK", f"{n_refused} refused as in use; files {fs}"
    if "modes.csv" in fs and "No such file" not in r.err and "error" not in r.err.lower():
        return "OK", f"all ran one after another; files {fs}"
    return "VAGUE", f"files {fs}; errors: " + " | ".join(sorted(set(l.strip()[:160] for l in r.err.splitlines() if 'error' in l.lower())))


# ---- bench

def bench_cases():
    BASE = {"devices": "none", "reps": "1", "warmup": "0", "dg-orders": "''", "precision": "f64", "sizes": "1e3"}

    def bq(**over):
        d = dict(BASE)
        for k, v in over.items():
            d[k.replace("_", "-")] = v
        return " ".join(f"--{k} {v}" for k, v in d.items())
    BQ = bq()

    def bc(args, exp, needles, note=None, setup=None, judge=None, timeout=120):
        case("bench", f"dgatd bench {args}", exp, needles, note=note or args, setup=setup, judge=judge, timeout=timeout)
    bc(f"{BQ} --out b", "ok", (), "a minimal valid bench")
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes '' --out b", "error", (("sizes",),))
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes 1e3,,1e3 --out b", "error", (("sizes",),))
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes nan --out b", "error", (("sizes",),))
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes 1e3,1e3 --out b", "either", (("sizes",),), "the same size twice")
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes 0.4 --out b", "error", (("sizes",),))
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes 4e10 --out b", "error", (("sizes",),))
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes 1e11 --cpu-max-tets 1 --out b", "error", (("sizes",),), "a huge size the CPU row would skip")
    bc(bq(reps="-1") + " --out b", "error", (("reps",),), "--reps -1")
    bc(bq(reps="1e3") + " --out b", "error", (("reps",),), "--reps 1e3")
    bc(bq(reps="1", warmup="-1") + " --out b", "error", (("warmup",),), "--warmup -1")
    bc(bq(reps="0") + " --out b", "error", (("reps",),), "--reps 0")
    bc(BQ + " --reps 2 --out b", "either", (("reps",),), "--reps given twice")
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision f64,f64 --sizes 1e3 --out b", "either", (("precision",),), "the same precision twice")
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision '' --sizes 1e3 --out b", "error", (("precision",),))
    bc("--devices none --reps 1 --warmup 0 --dg-orders '' --precision F64 --sizes 1e3 --out b", "error", (("precision",),))
    bc("--devices 99 --no-cpu --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes 1e3 --out b", "error", (("device", "99"),))
    bc("--devices zzz-no-such --no-cpu --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes 1e3 --out b", "error", (("zzz", "device"),))
    bc(bq(devices="none") + " --no-cpu --out b", "error", (("nothing", "no-cpu", "devices"),), "--devices none --no-cpu: nothing to measure")
    bc(bq(dg_orders="0") + " --out b", "error", (("dg-orders",),), "--dg-orders 0")
    bc(bq(dg_orders="11") + " --out b", "error", (("dg-orders",),), "--dg-orders 11")
    bc(bq(dg_orders="1,,2") + " --out b", "either", (("dg-orders",),), "--dg-orders 1,,2")
    bc(f"{BQ} --dispersion 0 --out b", "error", (("dispersion",),))
    bc(f"{BQ} --dispersion 1.5 --out b", "error", (("dispersion",),))
    bc(f"{BQ} --losses nan --out b", "error", (("losses",),))
    bc(f"{BQ} --stream-elems 9e11 --out b", "either", (("stream-elems",),), "stream arrays of 9e11 elements (CPU only)")
    bc("--devices 0 --no-cpu --reps 1 --warmup 0 --dg-orders '' --precision f64 --sizes 1e3 --stream-elems 9e11 --out b", "error", (("stream-elems", "memory", "allocation"),),
       "stream arrays of 9e11 elements on the PoCL device", timeout=120)
    bc(f"{BQ} --csr-max-tets 0 --out b", "error", (("csr-max-tets",),))
    bc(f"{BQ} --cpu-max-tets 1e12 --out b", "error", (("cpu-max-tets",),))
    bc(f"{BQ} --dg-max-tets inf --out b", "error", (("dg-max-tets",),))

    def out_file(cwd):
        write(os.path.join(cwd, "b"), "x")
    bc(f"{BQ} --out b   # b is a file", "error", (("out", "directory"),), "bench --out a regular file", setup=out_file)

    def victim_bench(cwd):
        os.makedirs(os.path.join(cwd, "b"))
        write(os.path.join(cwd, "victim.csv"), "precious\n")
        os.symlink(os.path.join(cwd, "victim.csv"), os.path.join(cwd, "b", "bench.csv"))
    bc(f"{BQ} --out b   # b/bench.csv -> ../victim.csv", "custom", (), "a link at bench.csv", setup=victim_bench,
       judge=lambda r, c: ("OK", f"exit {r.rc}; victim intact") if open(os.path.join(r.cwd, "victim.csv")).read() == "precious\n" else ("LOSS", "victim.csv overwritten through b/bench.csv"))

    def two_bench_judge(r, c):
        p = os.path.join(r.cwd, "b", "bench.csv")
        rows = sum(1 for _ in open(p)) - 1 if os.path.exists(p) else -1
        e = r.err
        errs = [l for l in e.splitlines() if "error" in l.lower()]
        if rows > 0 and not errs:
            return "OK", f"{rows} rows; both ended without an error"
        # the fix (L6): the second is refused by the folder's lock, the first completes
        if rows > 0 and errs and all("another dgatd run is using it" in l for l in errs):
            return "OK", f"{rows} rows from the first; the second refused: {errs[0].strip()[:200]}"
        return "LOSS", f"exit {r.rc}; bench.csv rows {rows}; {' | '.join(l.strip()[:200] for l in e.splitlines() if 'error' in l.lower())}"
    bc("--devices none --reps 3 --warmup 0 --dg-orders 1 --precision f64 --sizes 1e3,3e4 --out b & sleep 0.5; dgatd bench " + BQ + " --out b; wait",
       "custom", (), "two benches on one --out at once", judge=two_bench_judge, timeout=180)

    def bench_sig(p, cwd):
        time.sleep(3)
        os.kill(p.pid, signal.SIGTERM)
        return {}

    def bench_sig_setup(cwd):
        subprocess.run(f"dgatd bench {BQ} --out b", shell=True, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.copy(os.path.join(cwd, "b", "bench.csv"), os.path.join(cwd, "bench_before.csv"))

    def bench_sig_judge(r, c):
        b = os.path.join(r.cwd, "b")
        before = open(os.path.join(r.cwd, "bench_before.csv")).read()
        now = open(os.path.join(b, "bench.csv")).read() if os.path.exists(os.path.join(b, "bench.csv")) else ""
        part = os.path.join(b, "bench.csv.partial")
        prow = sum(1 for _ in open(part)) - 1 if os.path.exists(part) else -1
        if now == before and prow >= 0:
            return "OK", f"exit {r.rc}; earlier bench.csv kept, partial rows {prow}"
        if now != before:
            return "LOSS", f"exit {r.rc}; earlier bench.csv replaced"
        return "OK", f"exit {r.rc}; earlier bench.csv kept; no partial file ({files(b)})"
    case("bench", "dgatd bench --devices none --reps 5 --warmup 1 --precision f64 --sizes 1e3,1e5 --out b   # SIGTERM after 3 s (b holds an earlier bench.csv)",
         "custom", (), note="SIGTERM during a bench whose folder holds an earlier bench.csv", setup=bench_sig_setup,
         runner=("dgatd bench --devices none --reps 5 --warmup 1 --precision f64 --sizes 1e3,1e5 --out b", bench_sig), judge=bench_sig_judge, timeout=120)


# ---- report

BENCH_HEADER = "timestamp,commit,host,platform,device,driver,precision,kernel,variant,tets,dofs,reps,median_s,min_s,max_s,bytes_model,gbs,frac_copy_bw,gdofs_per_s,flops_model,gflops,frac_roof"


def brow(device="PoCL dev", precision="f64", kernel="step", variant="tet+factored", tets=1000, dofs=6000, median=1e-4,
         gbs=10, frac=0.5, platform="Portable Computing Language", host="h"):
    return f"2024-01-01T00:00:00Z,abc,{host},{platform},{device},3.1,{precision},{kernel},{variant},{tets},{dofs},5,{median},{median},{median},1000,{gbs},{frac},1,1,1,0.1"


def report_cases():
    def rc(name, content, exp, needles, note, judge=None, extra_setup=None, args="r.csv", timeout=120, rss_mb=UNBOUNDED_MB):
        def setup(cwd):
            if content is not None:
                data = content() if callable(content) else content
                write(os.path.join(cwd, "r.csv"), data)
            if extra_setup:
                extra_setup(cwd)
        case("report", f"dgatd report --out rep {args}   # r.csv: {note}", exp, needles, note=note, setup=setup, judge=judge,
             timeout=timeout, rss_mb=rss_mb)
    good = BENCH_HEADER + "\n" + "\n".join([brow(tets=t, dofs=6 * t, median=t * 1e-8) for t in (1000, 10000, 100000)] +
                                           [brow(kernel="copy", variant="-", tets=t, dofs=6 * t) for t in (1000, 10000)]) + "\n"
    rc("valid", good, "ok", (), "a valid bench CSV")
    rc("empty", "", "error", (("r.csv",),), "an empty file")
    rc("header only", BENCH_HEADER + "\n", "error", (("rows", "r.csv"),), "the header only")
    rc("bom", "\ufeff" + good, "ok", (), "a UTF-8 BOM (as Excel writes)")
    rc("crlf", good.replace("\n", "\r\n"), "ok", (), "CRLF line ends")
    rc("semicolons", good.replace(",", ";"), "error", (("r.csv", "column"),), "semicolon separators")
    rc("ragged", BENCH_HEADER + "\n" + brow() + "\n" + "a,b,c\n", "error", (("r.csv", "line 3", "record 2"),), "a row of 3 fields")
    rc("tets 0 step", BENCH_HEADER + "\n" + brow(tets=0) + "\n" + brow(tets=1000) + "\n", "either", (("tets",),), "a step row with tets = 0")
    rc("median 0", BENCH_HEADER + "\n" + brow(median=0) + "\n" + brow(tets=2000, dofs=12000) + "\n", "either", (("median",),), "median_s = 0 on a log axis")
    rc("dofs denormal", BENCH_HEADER + "\n" + brow(dofs="5e-324") + "\n" + brow(tets=2000, dofs=12000) + "\n", "either", (("dofs",),), "dofs = 5e-324")
    rc("frac denormal", BENCH_HEADER + "\n" + brow(kernel="copy", frac="5e-324") + "\n" + brow(kernel="copy", tets=2000, frac="1e9") + "\n",
       "either", (("frac",),), "frac_copy_bw from 5e-324 to 1e9")
    rc("median tiny", BENCH_HEADER + "\n" + brow(median="1e-300") + "\n" + brow(tets=2000, dofs=12000, median="1e6") + "\n",
       "either", (("median",),), "median_s from 1e-300 to 1e6 (306 decades)")
    rc("pipe in device", BENCH_HEADER + "\n" + brow(device="GPU | x | y") + "\n", "custom", (), "a '|' in a device name (Markdown table)",
       judge=lambda r, c: judge_md(r))
    rc("newline in device", BENCH_HEADER + "\n" + brow(device='"GPU\nline two"') + "\n", "custom", (), "a quoted newline in a device name",
       judge=lambda r, c: judge_md(r))
    rc("slug collision", BENCH_HEADER + "\n" + brow(device="GPU-A", kernel="copy") + "\n" + brow(device="GPU A", kernel="copy", tets=2000, gbs=99, frac=0.9) + "\n",
       "custom", (), "two devices 'GPU-A' and 'GPU A' (the same file-name slug)", judge=lambda r, c: judge_slug(r))
    long24 = "NVIDIA H200 141GB HBM3e SXM5 #0"
    rc("24 chars", BENCH_HEADER + "\n" + brow(device=long24, kernel="copy") + "\n" + brow(device=long24.replace("#0", "#1"), kernel="copy", tets=2000, frac=0.9) + "\n",
       "custom", (), "two devices equal in their first 24 characters", judge=lambda r, c: judge_merge(r))
    rc("long device", BENCH_HEADER + "\n" + brow(device="D" * 400, kernel="copy") + "\n", "either", (("r.csv", "rep", "long"),), "a 400-character device name (file name too long?)")
    rc("empty precision", BENCH_HEADER + "\n" + brow(precision="", kernel="copy") + "\n", "either", (("precision",),), "an empty precision")
    rc("unicode", BENCH_HEADER + "\n" + brow(device="Γραφικά ü 🚀", kernel="copy") + "\n", "ok", (), "a unicode device name")
    rc("dup column", BENCH_HEADER + ",tets\n" + brow() + ",5\n", "error", (("tets", "column"),), "the column tets twice")
    rc("quoted number", BENCH_HEADER + "\n" + brow(tets='" 1000 "') + "\n", "either", (("tets",),), "tets = ' 1000 ' (spaces, quoted)")
    rc("multiline line number", BENCH_HEADER + "\n" + brow(device='"a\nb\nc"') + "\n" + brow(tets="x") + "\n", "custom", (),
       "the bad row is on line 5 of the file (a quoted 3-line field before it)", judge=lambda r, c: judge_line(r, 5))

    def big(n):
        def f():
            rows = [BENCH_HEADER]
            for i in range(n):
                rows.append(brow(device=f"dev{i % 7}", tets=1000 + i, dofs=6000 + 6 * i, median=1e-6 * (1 + i % 13)))
            return "\n".join(rows) + "\n"
        return f
    rc("400k rows", big(400000), "either", (("rows",),), "400 000 rows (75 MB)", timeout=300, rss_mb=UNBOUNDED_MB)

    def sparse_csv(cwd):
        with open(os.path.join(cwd, "r.csv"), "wb") as f:
            f.write((BENCH_HEADER + "\n" + brow() + "\n").encode())
            f.truncate(2 << 30)
    rc("2GiB zeros", None, "error", (("r.csv",),), "2 GiB: a header, a row, then NUL bytes (sparse)", extra_setup=sparse_csv, timeout=180)
    rc("dir input", None, "error", (("d",),), "a directory as input", extra_setup=lambda cwd: os.makedirs(os.path.join(cwd, "d")), args="d")
    rc("same file twice", good, "custom", (), "the same file given twice (rows doubled?)", args="r.csv r.csv",
       judge=lambda r, c: ("OK", first_line(r.out)) if r.rc != 0 or "5 rows" in r.out else ("SILENT", "accepted twice: " + first_line(r.out)))

    def victim_rep(cwd):
        os.makedirs(os.path.join(cwd, "rep"))
        write(os.path.join(cwd, "victim.png"), "precious\n")
        os.symlink(os.path.join(cwd, "victim.png"), os.path.join(cwd, "rep", "step_time.png"))
    rc("link", good, "custom", (), "rep/step_time.png is a link to ../victim.png", extra_setup=victim_rep,
       judge=lambda r, c: ("OK", f"exit {r.rc}; victim intact") if open(os.path.join(r.cwd, "victim.png"), "rb").read() == b"precious\n" else ("LOSS", f"exit {r.rc}; victim.png overwritten through the link rep/step_time.png"))

    def victim_rep2(cwd):
        os.makedirs(os.path.join(cwd, "rep"))
        write(os.path.join(cwd, "victim.md"), "precious\n")
        os.symlink(os.path.join(cwd, "victim.md"), os.path.join(cwd, "rep", "report.md"))
    rc("link md", good, "custom", (), "rep/report.md is a link to ../victim.md", extra_setup=victim_rep2,
       judge=lambda r, c: ("OK", f"exit {r.rc}; victim intact") if open(os.path.join(r.cwd, "victim.md"), "rb").read() == b"precious\n" else ("LOSS", "victim.md overwritten through rep/report.md"))
    rc("out is file", good, "error", (("out", "directory"),), "--out names a regular file", extra_setup=lambda cwd: write(os.path.join(cwd, "rep"), "x"))

    def prior_rep(cwd):
        os.makedirs(os.path.join(cwd, "rep"))
        write(os.path.join(cwd, "rep", "bandwidth_old_gpu_f64.png"), "old plot")
    rc("stale plots", good, "custom", (), "rep/ holds a plot of an earlier report", extra_setup=prior_rep,
       judge=lambda r, c: ("OK", "stale plot left, listed? " + str("bandwidth_old" in open(os.path.join(r.cwd, "rep", "report.md")).read()) if os.path.exists(os.path.join(r.cwd, "rep", "report.md")) else err_line(r)))


def judge_md(r):
    p = os.path.join(r.cwd, "rep", "report.md")
    if r.rc != 0:
        return "OK", err_line(r)
    md = open(p).read() if os.path.exists(p) else ""
    # a cell's '|' escaped as '\|' (GitHub Markdown) is text, not a column break
    cells = lambda l: l.replace("\\|", "").count("|")
    bad = [l for l in md.splitlines() if l.startswith("|") and cells(l) not in (8, 9)]
    broken = any(("GPU |" in l.replace("\\|", "")) for l in md.splitlines()) or any(l.strip() == "line two" or l.startswith("line two") for l in md.splitlines())
    if bad or broken:
        return "SILENT", "report.md table rows broken by the device name: " + (bad[0][:120] if bad else [l for l in md.splitlines() if "line two" in l or "GPU |" in l][0][:120])
    return "OK", "table intact"


def judge_slug(r):
    if r.rc != 0:
        return "OK", err_line(r)
    pngs = [f for f in files(os.path.join(r.cwd, "rep")) if f.startswith("bandwidth") and f.endswith(".png")]
    if len(pngs) < 2:
        return "SILENT", f"two devices, one plot file {pngs}: the second device's plot overwrote the first's"
    return "OK", str(pngs)


def judge_merge(r):
    if r.rc != 0:
        return "OK", err_line(r)
    pngs = [f for f in files(os.path.join(r.cwd, "rep")) if f.startswith("bandwidth") and f.endswith(".png")]
    if len(pngs) < 2:
        return "SILENT", f"two devices, one plot {pngs}: names cut to 24 characters merge their series"
    return "OK", str(pngs)


def judge_line(r, want):
    if r.rc == 0:
        return "SILENT", "accepted"
    m = re.search(r"line (\d+)", r.err)
    if m and int(m.group(1)) == want:
        return "OK", err_line(r)
    return "VAGUE", f"names line {m.group(1) if m else '?'}, the bad row is on line {want}: " + err_line(r)


# ---- mesh-info

def meshinfo_cases(d):
    def mi(args, exp, needles, note, setup=None, judge=None, timeout=60):
        case("mesh-info", f"dgatd mesh-info {args}", exp, needles, note=note, setup=setup, judge=judge, timeout=timeout)
    mi("bundled:coarse", "ok", (), "a bundled mesh")
    mi("bundled:fine", "ok", (), "the fine bundled mesh")
    mi("bundled:", "error", (("bundled",),), "bundled: with no name")
    mi("bundled:../../etc/passwd", "error", (("bundled",),), "bundled: with a path")
    mi("''", "error", (("mesh", "''", "empty"),), "an empty path")
    mi(".", "error", (("regular", "."),), "a directory")
    mi("/dev/null", "error", (("regular", "/dev/null"),), "/dev/null")
    mi("/proc/self/status", "error", (("status", "MeshFormat"),), "a /proc file (size 0, content non-zero)")
    mi(f"{MESHES}/tiny_v41_bin.msh extra.msh", "error", (("extra",),), "two paths")
    mi("--help", "ok", (), "--help")
    mi(f"{MESHES}/sphere.msh", "ok", (), "the bundled sphere")
    mi(f"{MESHES}/cylinder.geo", "error", (("cylinder.geo", "MeshFormat"),), "a .geo script instead of a mesh")
    mi(f"{MESHES}/tiny_v41.msh | head -c 1", "ok", (), "stdout closed after one byte")

    def link_loop(cwd):
        os.symlink("b.msh", os.path.join(cwd, "a.msh"))
        os.symlink("a.msh", os.path.join(cwd, "b.msh"))
    mi("a.msh   # a.msh -> b.msh -> a.msh", "error", (("a.msh",),), "a symbolic-link loop", setup=link_loop)

    def unreadable(cwd):
        shutil.copy(os.path.join(MESHES, "tiny_v22.msh"), os.path.join(cwd, "m.msh"))
        with open(os.path.join(cwd, "m.msh"), "r+b") as f:
            f.truncate(100)
    mi("m.msh   # cut to 100 bytes", "error", (("m.msh",),), "a mesh cut inside $PhysicalNames", setup=unreadable)


def compare_cases():
    def cp(args, exp, needles, note):
        case("compare", f"dgatd compare {args}", exp, needles, note=note, timeout=120)
    cp("--orders 0 --backend cpu --out c", "error", (("orders",),), "--orders 0")
    cp("--orders 1,11 --backend cpu --out c", "error", (("orders",),), "--orders 11")
    cp("--fluxes none --backend cpu --out c", "error", (("fluxes", "flux"),), "--fluxes none")
    cp("--time -1 --backend cpu --out c", "error", (("time",),), "--time -1")
    cp("--time nan --backend cpu --out c", "error", (("time",),), "--time nan")
    cp("--mesh /nonexistent.msh --backend cpu --out c", "error", (("nonexistent",),), "a missing mesh")
    cp("--mesh '' --backend cpu --out c", "error", (("mesh",),), "an empty mesh list")
    cp("--precision f16 --backend cpu --out c", "error", (("precision",),), "--precision f16")


def late_cases():
    """Cases added after the first full pass (appended, so that earlier ids stay)."""
    def judge_seed(r, c):
        a = os.path.join(r.cwd, "a", "probe.csv")
        b = os.path.join(r.cwd, "b", "probe.csv")
        if r.rc != 0:
            return "VAGUE", err_line(r)
        same = open(a, "rb").read() == open(b, "rb").read()
        pa = re.search(r"probes = (.*)", open(os.path.join(r.cwd, "a", "run.toml")).read())
        pb = re.search(r"probes = (.*)", open(os.path.join(r.cwd, "b", "run.toml")).read())
        warn = next((l for l in r.err.splitlines() if l.startswith("warning") and "seed" in l), None)
        if same and warn:
            return "OK", f"the same record for both seeds, and said: {warn[:250]}"
        if same:
            return "SILENT", f"--seed 1 and --seed 999 give byte-identical probe.csv; run.toml probes {pa.group(1) if pa else '?'} both times (the seed is recorded, but the default points are fixed fractions of the bounding box)"
        return "OK", "different probes: " + (pa.group(1) if pa else "") + " / " + (pb.group(1) if pb else "")
    case("cli", "dgatd resonator --mesh bundled:coarse --backend cpu --steps 500 --quiet --seed 1 --out a && "
         "dgatd resonator --mesh bundled:coarse --backend cpu --steps 500 --quiet --seed 999 --out b && cmp a/probe.csv b/probe.csv",
         "custom", (), note="--seed 1 vs --seed 999 (the seed of the default probe placement)", judge=judge_seed)


# ----------------------------------------------------------------------------- review
# Outcomes decided by reading the output, where the automatic rule cannot tell: the case
# (class, start of its note) -> (outcome, why). Applied only when the run behaves as
# described in `why` (the automatic outcome is `when`).
REVIEW = {
    ("mesh", "entity in two physical volumes"): ("OK", "SILENT",
        "mesh-info lists 3:7 \"solid\" as (no elements) although the file's $Entities puts entity 2 (24 tets) in physical groups 2 and 7: only an entity's first physical tag is read",
        lambda n: '"solid" (no elements)' in n),
    ("mesh-run", "entity in two physical volumes"): ("VAGUE", "VAGUE",
        "false message: 'solid holds no tetrahedra' (the file gives it 24); the second physical tag of the entity was dropped by the reader",
        lambda n: "holds no tetrahedra" in n),
    ("mesh-run", "tet block refers to entity 99"): ("OK", "VAGUE",
        "the refusal says group air holds no tetrahedra, not that the tet block names entity 99, which $Entities lacks (the 'entity' matched in the file name)",
        lambda n: "holds no tetrahedra" in n),
    ("mesh-run", "4.1 without $Entities"): ("OK", "VAGUE",
        "the refusal says xmin has no faces, not that the file has no $Entities section (the word matched in the file name)",
        lambda n: "has no faces" in n),
    ("mesh", "a triangle of group xmin that is no face"): ("SILENT", "VAGUE",
        "mesh-info counts the diagonal triangle (no face of any tet) as '1 interior' face: a false description, no warning",
        lambda n: "1 interior" in n),
    ("mesh-run", "a triangle of group xmin that is no face"): ("*", "VAGUE",
        "false note: '1 of the 9 faces of its surface group are interior (between two tetrahedra)' - the triangle is not a face of any tetrahedron",
        lambda n: "are interior (between two tetrahedra)" in n),
    ("mesh-run", "volume group tag 1 is NAMED"): ("OK", "SILENT",
        "--material 2=4 accepted without a word although '2' is both the name of group tag 1 and the tag of group glass ('materials: 2 24 tets': which one is not said)",
        lambda n: "both the name" not in n),
    ("mesh", "a 100 km x 1 m x 1 m box"): ("OK", "OK", "", lambda n: True),
    ("config", "dt = 5e-324"): ("OK", "SILENT",
        "2000 steps of 4.9e-324 s (a record of 1e-320 s) accepted and analysed as normal: an empty mode table, no warning (as --dt 5e-324)",
        lambda n: "error" not in n and "warning" not in n),
    ("config", "fmax = 5e-324"): ("OK", "SILENT",
        "an analysed band of 5e-324 Hz accepted: an empty mode table, no warning (as --fmax 1)",
        lambda n: "error" not in n and "warning" not in n),
    ("bench", "stream arrays of 9e11 elements (CPU only)"): ("OK", "SILENT",
        "--stream-elems 9e11 accepted and silently capped to 64M elements for the CPU copy/triad probe (src/app/bench/streams.rs: cfg.stream_elems.min(64 << 20)); peak RSS equals the default run's",
        lambda n: "stream-elems" not in n),
}


def review(c, outcome, note):
    """The reviewed outcome of case `c`: an entry applies when the automatic outcome is
    its `when` and the observed output still shows what its `why` describes (its
    predicate on the note), so a fixed build is judged by the automatic rule."""
    for (cls, pre), (when, new, why, still) in REVIEW.items():
        if c.cls == cls and c.note.startswith(pre) and (outcome == when or when == "*") and still(note):
            if why:
                return new, why + " | observed: " + note
            return new, note
    return outcome, note


# ----------------------------------------------------------------------------- main

def main():
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        only = args[args.index("--only") + 1]
    if "--bin" in args:
        global BIN
        BIN = args[args.index("--bin") + 1]
    # scratch, a dgatd on PATH
    for sub in ("ro", "full"):
        pass
    if os.path.exists(ROOT) and only is None and "--list" not in args:
        subprocess.run(f"grep ' {ROOT}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l", shell=True)
        subprocess.run(["rm", "-rf", ROOT])
    os.makedirs(ROOT, exist_ok=True)
    os.makedirs(BINDIR, exist_ok=True)
    link = os.path.join(BINDIR, "dgatd")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(BIN, link)
    build()
    if "--list" in args:
        for c in CASES:
            print(c.id, c.cls, c.cmd[:150])
        print(len(CASES), "cases")
        return
    sel = [c for c in CASES if only is None or c.id.startswith(only) or c.cls == only]
    # --csv NAME: the pass's table (default cases.csv), written by a full pass and the
    # target of --merge
    main_name = args[args.index("--csv") + 1] if "--csv" in args else "cases.csv"
    out_csv = os.path.join(HERE, main_name if only is None else f"cases-{only}.csv")
    fields = ["id", "class", "command", "expected", "exit_code", "seconds", "peak_rss_mb", "outcome", "note"]
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for c in sel:
            cwd = os.path.join(ROOT, c.id)
            subprocess.run(f"grep ' {cwd}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l", shell=True)
            subprocess.run(["rm", "-rf", cwd])
            os.makedirs(cwd)
            try:
                if c.setup:
                    c.setup(cwd)
                if c.runner:
                    rcmd, during = c.runner
                    r = run_cmd(rcmd or c.cmd, cwd, timeout=c.timeout, mem=c.mem, during=during)
                else:
                    r = run_cmd(c.cmd, cwd, timeout=c.timeout, mem=c.mem)
                outcome, note = judge(r, c)
                outcome, note = review(c, outcome, note)
            except Exception as e:  # a bug of this script, never of dgatd
                r = Res()
                r.rc, r.secs, r.rss = "", 0, 0
                outcome, note = "HARNESS-ERROR", repr(e)[:300]
            w.writerow({"id": c.id, "class": c.cls, "command": c.cmd, "expected": c.expected,
                        "exit_code": r.rc, "seconds": f"{r.secs:.2f}", "peak_rss_mb": f"{r.rss:.0f}",
                        "outcome": outcome, "note": (c.note + " | " + note).replace("\n", " ")})
            f.flush()
            print(f"{c.id:16s} {outcome:9s} rc={r.rc!s:4s} {r.secs:6.2f}s {r.rss:6.0f}MB  {c.note[:60]} | {note[:120]}", flush=True)
            # keep the scratch small: drop big files of the case
            subprocess.run(f"grep ' {cwd}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l", shell=True)
            subprocess.run(["find", cwd, "-xdev", "-type", "f", "-size", "+50M", "-delete"], stderr=subprocess.DEVNULL)
    if only is not None and "--merge" in args:
        main_csv = os.path.join(HERE, main_name)
        new = {r["id"]: r for r in csv.DictReader(open(out_csv))}
        rows = list(csv.DictReader(open(main_csv)))
        have = {r["id"] for r in rows}
        rows = [new.get(r["id"], r) for r in rows] + [r for i, r in new.items() if i not in have]
        with open(main_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        print(f"merged {len(new)} rows into {main_csv}")


if __name__ == "__main__":
    main()
