#!/usr/bin/python3
"""MEEP FDTD reference run: the lowest TE (magnetic dipole, "TE11") and TM (electric dipole,
"TM11") resonances of a dielectric sphere in free space, for the side-by-side benchmark against
`dgatd` (`studies/mie_sphere.rs`, README.md beside this file).

Units: the sphere radius is the MEEP length unit, a = 1. Frequencies are reported scaled to a
sphere of radius 0.1 m (as `mie_sphere`'s default): f_Hz = f_meep * c / 0.1, c = 299792458 m/s.

`--res` is MEEP's `resolution`: pixels per unit length, i.e. pixels per sphere RADIUS
(res 8 = 16 pixels across the sphere's diameter).

The cell is a cube centred on the sphere: sphere (radius 1), free space out to `--pml-dist`
free-space wavelengths of TE11 beyond the sphere's surface (on the cube's axes), then a PML of
`--pml-thick` wavelengths on all six faces. `mie_sphere --boundary pml` uses a spherical shell
with the same meaning (`--air` = radius + 1 wavelength).

Sources and mirror symmetries (MEEP's `Mirror(direction, phase)`, where the phase is that of
the E field, taken as a vector; MEEP applies the extra sign of H, a pseudovector, itself):

  mode te   Hz point source (magnetic current) at the centre: a magnetic dipole m_z, i.e. TE11
            with m along z.  m is a pseudovector: a mirror x -> -x maps m_z to -m_z, so the mode
            is odd in x and in y (phase -1) and even in z (+1):
            Mirror(X,-1), Mirror(Y,-1), Mirror(Z,+1) -> 1/8 of the cell is stepped.
            Harminv on Hz at an off-centre point inside the sphere.
  mode tm   Ez point source (electric current) at the centre: an electric dipole p_z, TM11.
            p is a vector: even in x and y, odd in z:
            Mirror(X,+1), Mirror(Y,+1), Mirror(Z,-1) -> 1/8.  Harminv on Ez.
  mode both Ex and Hy point sources at the centre: p_x (odd in x, even in y, even in z) and m_y
            (odd in x, even in y, odd in z). The classes they share are the two-mirror ones
            Mirror(X,-1), Mirror(Y,+1) -> 1/4 (the same quarter as `mie_sphere --symmetry
            x=pec,y=pmc`: a PEC plane x=0 is E odd in x, a PMC plane y=0 is E even in y).
            Harminv on Ex at an off-centre point (p_x's Ex is large there, and m_y's E, which is
            along m x r, has an Ex component off the y axis).

What each class holds (a scalar potential psi, E = L psi for TE, E = curl L psi for TM, L = r x
grad; L is a pseudovector, so a TE mode's E has the mirror phase -s where s is psi's parity, a
TM mode's +s): the TE eighth needs psi odd in z, even in x and y: TE_l with l odd (TE11, TE31,
...) and TM modes with psi ~ xy (l = 2); the TM eighth: TM_l with l odd and the TE mode with
psi ~ xy. TE21 (651.8 MHz, Q 32 at eps 10, next to TM11) is thus in the TM eighth only through
its psi ~ xy member, whose field vanishes at the centre (L(xy) = 0 at r = 0) and which is odd
under x <-> y where the source is even, so the centred Ez does not drive it. Checked at res 4,
eps 10 (README.md): each eighth shows one Harminv line, the target; `--symmetries off` gives
the same lines to all printed digits at 3.3x (quarter) and 7.1-7.6x (eighths) the time
(checks/symmetry.csv); and with
the phases of the other eighth the target line is gone.

Output: one CSV row per target line (TE11 and/or TM11) appended to `--csv`: the nearest Harminv
line within `--window` (relative) of the Mie frequency, else NaN. All Harminv lines are printed.
wall_s is the whole run (from the script's start, before `import meep`, to the end of Harminv),
measured with time.perf_counter. This MEEP build (Debian python3-meep) is serial: threads = 1.
"""
import time

T_START = time.perf_counter()

import argparse
import csv
import math
import os
import sys

C0 = 299792458.0
RADIUS_M = 0.1
# Mie references at radius 0.1 m (Hz, Q), as given for the benchmark (mie_sphere computes the same).
MIE = {
    10.0: {"TE11": (448.4036e6, 9.1497), "TM11": (647.5455e6, 4.2153)},
    36.0: {"TE11": (244.3118e6, 43.1686), "TM11": (344.3918e6, 38.0277)},
}

FIELDS = [
    "eps", "res", "mode", "f_hz", "q", "f_err_pct", "q_err_pct", "wall_s", "threads",
    "line", "f_mie_hz", "q_mie", "symmetries", "subpixel", "pml_dist_wl", "pml_thick_wl",
    "decays", "cell", "pixels_full", "pixels_stepped", "dt", "steps", "sim_time", "init_s", "run_s",
    "harminv_err", "harminv_amp", "n_lines", "meep_version", "tag",
]


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--eps", type=float, default=10.0, help="sphere permittivity (10 or 36 have Mie references)")
    p.add_argument("--res", type=float, default=4, help="MEEP resolution: pixels per sphere radius")
    p.add_argument("--pml-dist", type=float, default=1.0,
                   help="free space between the sphere's surface and the PML, in free-space wavelengths of TE11")
    p.add_argument("--pml-thick", type=float, default=0.5, help="PML thickness, in wavelengths of TE11")
    p.add_argument("--mode", choices=["te", "tm", "both"], default="both")
    p.add_argument("--symmetries", choices=["on", "off"], default="on")
    p.add_argument("--subpixel", choices=["on", "off"], default="on", help="MEEP eps_averaging")
    p.add_argument("--phases", default=None,
                   help="override the mode's mirrors, for checks: PX,PY,PZ, each +1, -1 or 0 (no mirror), "
                        "e.g. -1,-1,1 is the te eighth")
    p.add_argument("--decays", type=float, default=4.0,
                   help="record length after the source, in amplitude decay times (Q/(pi f)) of the slowest "
                        "target Mie mode (mie_sphere's --decays has the same meaning)")
    p.add_argument("--courant", type=float, default=0.5)
    p.add_argument("--window", type=float, default=0.10,
                   help="a Harminv line is taken as the target's when within this relative distance of the Mie f")
    p.add_argument("--csv", default=None, help="CSV output (appended, header when new)")
    p.add_argument("--quiet", action="store_true", help="MEEP verbosity 0")
    p.add_argument("--tag", default="", help="a label for the CSV's last column (run.sh: the job name)")
    return p.parse_args()


def main():
    a = parse()
    threads = 1
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # in case a threaded build is installed later
    import meep as mp

    mp.verbosity(0 if a.quiet else 1)
    if a.eps not in MIE:
        sys.exit("no Mie reference for eps %g (have %s)" % (a.eps, sorted(MIE)))
    ref = MIE[a.eps]
    to_meep = RADIUS_M / C0  # f_meep = f_Hz * a / c
    f_te = ref["TE11"][0] * to_meep
    f_tm = ref["TM11"][0] * to_meep
    targets = {"te": ["TE11"], "tm": ["TM11"], "both": ["TE11", "TM11"]}[a.mode]

    wl = 1.0 / f_te                       # free-space wavelength of TE11 (units of a)
    dpml = a.pml_thick * wl
    half = 1.0 + a.pml_dist * wl + dpml
    # round the cell to whole pixels, an even number so the centre is a grid point
    npix = 2 * math.ceil(half * a.res)
    side = npix / a.res
    cell = mp.Vector3(side, side, side)

    geometry = [mp.Sphere(radius=1.0, center=mp.Vector3(), material=mp.Medium(epsilon=a.eps))]

    fs = [ref[t][0] * to_meep for t in targets]
    fcen = 0.5 * (min(fs) + max(fs))
    # source and Harminv bands: +-40% around one line, or both lines with 40% of the lower's f to spare
    fwidth = (max(fs) - min(fs)) + 0.8 * min(fs)
    src = mp.GaussianSource(frequency=fcen, fwidth=fwidth)
    o = mp.Vector3()
    if a.mode == "te":
        sources = [mp.Source(src, component=mp.Hz, center=o)]
        sym = [mp.Mirror(mp.X, phase=-1), mp.Mirror(mp.Y, phase=-1), mp.Mirror(mp.Z, phase=+1)]
        probe_c, probe_name = mp.Hz, "Hz"
    elif a.mode == "tm":
        sources = [mp.Source(src, component=mp.Ez, center=o)]
        sym = [mp.Mirror(mp.X, phase=+1), mp.Mirror(mp.Y, phase=+1), mp.Mirror(mp.Z, phase=-1)]
        probe_c, probe_name = mp.Ez, "Ez"
    else:
        sources = [mp.Source(src, component=mp.Ex, center=o),
                   mp.Source(src, component=mp.Hy, center=o)]
        sym = [mp.Mirror(mp.X, phase=-1), mp.Mirror(mp.Y, phase=+1)]
        probe_c, probe_name = mp.Ex, "Ex"
    if a.phases is not None:
        ph = [int(v) for v in a.phases.split(",")]
        sym = [mp.Mirror(d, phase=v) for d, v in zip((mp.X, mp.Y, mp.Z), ph) if v != 0]
    if a.symmetries == "off":
        sym = []
    sym_label = a.symmetries if a.symmetries == "off" else (
        "on" if a.phases is None else "phases " + a.phases.replace(",", ";"))
    # a generic point inside the sphere, on no mirror plane
    probe = mp.Vector3(0.31, 0.23, 0.47)

    sim = mp.Simulation(cell_size=cell, resolution=a.res, geometry=geometry, sources=sources,
                        boundary_layers=[mp.PML(dpml)], symmetries=sym,
                        eps_averaging=(a.subpixel == "on"), Courant=a.courant)
    t_init0 = time.perf_counter()
    sim.init_sim()
    t_init = time.perf_counter() - t_init0

    tau = max(ref[t][1] / (math.pi * ref[t][0] * to_meep) for t in targets)  # amplitude 1/e time
    t_after = a.decays * tau
    h = mp.Harminv(probe_c, probe, fcen, fwidth)
    h.Q_thresh = 1.0        # default 50 would drop TM11 (Q ~ 4 at eps 10)
    t_run0 = time.perf_counter()
    sim.run(mp.after_sources(h), until_after_sources=t_after)
    t_run = time.perf_counter() - t_run0
    wall = time.perf_counter() - T_START

    dt = sim.fields.dt
    sim_time = sim.meep_time()
    steps = int(round(sim_time / dt))
    nsym = 2 ** len(sym)
    pixels_full = npix ** 3
    print("# eps %g res %g mode %s sym %s subpixel %s: cell %.3f^3 (%d^3 px, %d stepped), "
          "pml %.3f, t %.1f (%d steps), init %.2f s, run %.2f s, wall %.2f s"
          % (a.eps, a.res, a.mode, sym_label, a.subpixel, side, npix, pixels_full // nsym, dpml,
             sim_time, steps, t_init, t_run, wall))
    print("# harminv lines on %s at (%.2f, %.2f, %.2f): f_hz, Q, |amp|, err" % (probe_name, probe.x, probe.y, probe.z))
    for m in h.modes:
        print("#   %.6e  %9.4f  %.3e  %.2e" % (m.freq / to_meep, m.Q, abs(m.amp), abs(m.err)))

    rows = []
    for t in targets:
        f_ref, q_ref = ref[t]
        cand = [m for m in h.modes if m.Q > 0 and abs(m.freq / to_meep - f_ref) <= a.window * f_ref]
        m = min(cand, key=lambda m: abs(m.freq / to_meep - f_ref)) if cand else None
        if m is None:
            f = q = ferr = qerr = err = amp = float("nan")
        else:
            f, q = m.freq / to_meep, m.Q
            ferr, qerr = 100 * (f / f_ref - 1), 100 * (q / q_ref - 1)
            err, amp = abs(m.err), abs(m.amp)
        rows.append({
            "eps": "%g" % a.eps, "res": "%g" % a.res, "mode": a.mode, "f_hz": "%.7e" % f,
            "q": "%.5g" % q, "f_err_pct": "%.4f" % ferr, "q_err_pct": "%.3f" % qerr,
            "wall_s": "%.2f" % wall, "threads": threads, "line": t, "f_mie_hz": "%.7e" % f_ref,
            "q_mie": q_ref, "symmetries": sym_label, "subpixel": a.subpixel,
            "pml_dist_wl": a.pml_dist, "pml_thick_wl": a.pml_thick, "decays": a.decays, "cell": "%.4f" % side,
            "pixels_full": pixels_full, "pixels_stepped": pixels_full // nsym, "dt": "%.5g" % dt,
            "steps": steps, "sim_time": "%.2f" % sim_time, "init_s": "%.2f" % t_init,
            "run_s": "%.2f" % t_run, "harminv_err": "%.3g" % err, "harminv_amp": "%.3g" % amp,
            "n_lines": len(h.modes), "meep_version": mp.__version__, "tag": a.tag,
        })
    w = csv.DictWriter(sys.stdout, fieldnames=FIELDS)
    w.writeheader()
    w.writerows(rows)
    if a.csv:
        new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
        with open(a.csv, "a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
