"""Compares the Drude-filled run's lines with the discrete relation (README.md of results/dispersive).
Run from this folder after `dgatd resonator --config vacuum.toml --out vacuum` and the same for drude."""
import csv, math

v = [float(r['f_corrected_hz']) for r in csv.DictReader(open('vacuum/modes.csv'))]
d = [float(r['f_corrected_hz']) for r in csv.DictReader(open('drude/modes.csv'))]
dt = float(next(csv.DictReader(open('drude/modes.csv')))['dt_s'])
fp = 2e8
wp = 2 * math.pi * fp
den = 1 + (wp * dt) ** 2 / 4
print(f"dt = {dt:.6e} s, f_p = {fp:.3e} Hz, 1 + (w_p dt)^2/4 = {den:.9f}")
print("drude line (MHz)   predicted (MHz)    from                  rel. difference")
pl = fp / math.sqrt(den)
for f in d:
    cands = [(pl, 'plasma (gradients)')] + [(math.sqrt((x * x + fp * fp) / den), f'vacuum {x/1e6:.6f} MHz') for x in v]
    p, src = min(cands, key=lambda c: abs(c[0] - f))
    print(f"{f/1e6:16.9f}  {p/1e6:16.9f}   {src:22s} {(f-p)/p:+.2e}")
