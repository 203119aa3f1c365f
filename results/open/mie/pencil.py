"""Joint matrix pencil (Hua & Sarkar) of some columns of a probe record, for reading the
records of this folder by hand (README, "TM11 at eps_r = 10 with a centred ball source").

    python3 pencil.py RECORD.csv T0_S T1_S DECIMATION TOL [COLUMNS]

RECORD: a probe.csv (t_s, then ex, ey, ez per probe; gunzip the files in records/); the
window [T0_S, T1_S) is decimated by DECIMATION; singular values above TOL of the largest
set the order; COLUMNS: 1-based, comma-separated (default 1..12). Channels below 1e-4 of
the largest are dropped, the rest divided by their largest magnitude. Printed twice, for
a pencil parameter L of 0.6 and 0.5 of the window: lines that move between the two are
not resolved by the record.
"""
import numpy as np, sys
def pencil(Y, dt, m=None, L=None, tol=1e-6):
    # Y: (C, N) real channels
    C,N = Y.shape
    L = L or int(N*0.6)
    H = np.vstack([np.array([y[i:i+L+1] for i in range(N-L)]) for y in Y])
    U,s,Vh = np.linalg.svd(H, full_matrices=False)
    if m is None: m = int((s > tol*s[0]).sum())
    V = Vh[:m].conj().T
    V1, V2 = V[:-1], V[1:]
    z = np.linalg.eigvals(np.linalg.pinv(V1) @ V2)
    sp = np.log(z)/dt
    f = sp.imag/(2*np.pi); a = -sp.real
    # amplitudes
    Z = np.vander(z, N, increasing=True).T
    A, *_ = np.linalg.lstsq(Z, Y.T.astype(complex), rcond=None)
    amp = np.abs(A).max(axis=1)
    return f, a, amp, s
def show(f,a,amp, fmin=1e8,fmax=1.6e9):
    idx = np.argsort(f)
    for i in idx:
        if fmin<=f[i]<fmax:
            q = np.pi*f[i]/a[i] if a[i]!=0 else np.inf
            print("  %8.2f MHz  Q %7.2f  amp %.2e"%(f[i]/1e6, q, amp[i]))
if __name__=="__main__":
    fn=sys.argv[1]; t0=float(sys.argv[2]); t1=float(sys.argv[3]); dec=int(sys.argv[4]); tol=float(sys.argv[5])
    chans = [int(c) for c in sys.argv[6].split(',')] if len(sys.argv)>6 else list(range(1,13))
    d=np.loadtxt(fn,delimiter=',',skiprows=1)
    t=d[:,0]; dt=t[1]-t[0]
    i0,i1=np.searchsorted(t,t0),np.searchsorted(t,t1)
    Y=d[i0:i1:dec][:,chans].T
    mx=np.abs(Y).max(axis=1); keep=mx>1e-4*mx.max()
    print('channels kept', [c for c,k in zip(chans,keep) if k], 'rel max', np.round(mx/mx.max(),4))
    Y=Y[keep]/mx[keep][:,None]
    for L in [None, int(Y.shape[1]*0.5)]:
        f,a,amp,s=pencil(Y,dt*dec,L=L,tol=tol)
        print("L",L,"m",(s>tol*s[0]).sum(), "of", len(s))
        show(f,a,amp)
