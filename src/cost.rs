//! One cost model for the whole program: bytes moved and flops per kernel and per step,
//! device memory and host memory of a run. The bench, the run summary, `mesh-info`, the
//! device pre-check and the host-memory check all read these formulas, from counts of the
//! discretisation (so `mesh-info` needs no assembly).
//!
//! Byte model (design note §11: the minimum traffic of a kernel; s bytes per real,
//! 4-byte indices; every gathered vector counted once, as if caches were perfect):
//! - primal: `T (24 s + 6·4 + 2·4 s) + 2E s` (blocks, edge table, F read+write, U once);
//!   the symmetric layout stores 10 values per tet instead of 24: `T (10 s + 24 + 8 s) + 2E s`;
//! - circulation: `4 (E + 1) + 2 n_circ + 4T s + E s` (pointers, one word per tet around
//!   the edge for its two entries, F once, c: the paired lists, the device default);
//!   the lists of one signed index per entry (`circulation_list`): `4 n_circ` in place of
//!   `2 n_circ`;
//! - vertex_block: `s Σd² + 12·2E + 4 (V + 1) + 4 n_free + E s + 2·2E s`; packed blocks
//!   store `Σ d(d+1)/2` values in place of `Σd²`;
//! - vertex_block_lean (the CPU's vertex-major pass and its scatter,
//!   [`crate::backend::cpu::lean`]): `s (V + 1) / 4 + s Σ d(d+1)/2 + 4 n_free + E s +
//!   n_free s` (one degree word per batch of `16 / s` vertices, blocks, circulation
//!   indices, c once, y written), then `4·2E + n_free s + 2·2E s` (slot table, y read, U
//!   read and written);
//! - CSR: `4 (2E + 1) + nnz (4 + s) + 4T s + 2·2E s`;
//! - losses ([`loss_bytes`]): per loss-step row `20 + s` and `4 + 2s`, per entry of its
//!   `B̂` row `4 + 2s`; per σ* tet `4 + 9s` (device kernel `mag_loss`);
//! - step = primal + dual (the default symmetric layouts in [`dga_step`] and the device
//!   memory); copy: `2 N s`; triad: `3 N s`.
//!
//! DG (per right-hand-side evaluation, five per LSERK4 step): flux: per face point the two
//! gathered 6-vectors, the connectivity and mask indices and the 6 flux values written,
//! plus the normal and Fscale per face; update: q and res read, res and q_out written, the
//! fluxes read, geometric factors and materials per tet.

/// Counts of a DGA discretisation that the models need.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DgaCounts {
    pub tets: usize,
    pub edges: usize,
    pub vertices: usize,
    /// Free half-edges (unknowns of U).
    pub free_half: usize,
    /// Entries of the dual-face circulation table (12 per tet).
    pub circ: usize,
    /// Entries of the per-vertex blocks, `Σ d_v²`.
    pub block: usize,
    /// Entries of the packed blocks, `Σ d_v(d_v + 1)/2`.
    pub packed: usize,
}

impl DgaCounts {
    /// DoFs of the time loop: 4 per tet and the free half-edges.
    pub fn dofs(&self) -> usize {
        4 * self.tets + self.free_half
    }
}

/// Bytes each DGA kernel moves at least, per call.
#[derive(Clone, Copy, Debug)]
pub struct KernelBytes {
    pub primal: f64,
    /// The symmetric primal layout (`primal_sym`).
    pub primal_sym: f64,
    /// The paired circulation lists (the device default).
    pub circulation: f64,
    /// The circulation lists of one signed index per entry.
    pub circulation_list: f64,
    pub vertex_block: f64,
    /// The packed vertex blocks (`vertex_block_s`).
    pub vertex_block_sym: f64,
    /// The CPU's lean dual blocks: vertex-major pass into `y`, then `U += y` by slot.
    pub vertex_block_lean: f64,
    pub csr: f64,
}

/// The byte models of the DGA kernels; `s` bytes per real, `csr_nnz` nonzeros of the CSR
/// dual (0 when not built).
pub fn kernel_bytes(c: &DgaCounts, s: usize, csr_nnz: u64) -> KernelBytes {
    let (t, e, v) = (c.tets as f64, c.edges as f64, c.vertices as f64);
    let s = s as f64;
    let nfree = c.free_half as f64;
    let block_rest = 24.0 * e + 4.0 * (v + 1.0) + 4.0 * nfree + e * s + 4.0 * e * s;
    KernelBytes {
        primal: t * (24.0 * s + 24.0 + 8.0 * s) + 2.0 * e * s,
        primal_sym: t * (10.0 * s + 24.0 + 8.0 * s) + 2.0 * e * s,
        circulation: 4.0 * (e + 1.0) + 2.0 * c.circ as f64 + 4.0 * t * s + e * s,
        circulation_list: 4.0 * (e + 1.0) + 4.0 * c.circ as f64 + 4.0 * t * s + e * s,
        vertex_block: s * c.block as f64 + block_rest,
        vertex_block_sym: s * c.packed as f64 + block_rest,
        vertex_block_lean: s * (v + 1.0) / 4.0
            + s * c.packed as f64
            + 4.0 * nfree
            + e * s
            + nfree * s
            + 8.0 * e
            + nfree * s
            + 4.0 * e * s,
        csr: 4.0 * (2.0 * e + 1.0) + csr_nnz as f64 * (4.0 + s) + 4.0 * t * s + 4.0 * e * s,
    }
}

/// Counts of the dispersive part of a step ([`crate::dga::operators::DispOps`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DispCounts {
    /// Correction rows, and those of them with a full coupling row (interface vertices).
    pub rows: usize,
    pub full_rows: usize,
    /// Entries of the full coupling rows, `Σ len`.
    pub full_len: usize,
    /// Pole entries (one per half-edge and dispersive material around its vertex).
    pub entries: usize,
    /// Filter states read and written per step (two per second-order pole and entry, one
    /// per first-order pole and entry: a Debye pole's `s₂` stays 0 and is skipped).
    pub states: usize,
}

/// Counts of the dispersion fused into the vertex-major dual update
/// ([`crate::dga::FusedDisp`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FusedCounts {
    pub vertices: usize,
    pub slots: usize,
    /// States read and written by the fused kernel.
    pub states: usize,
}

/// Bytes the dispersion adds to a step in the fused form: the split kernels on what is
/// left (`rest`, [`disp_bytes`]), and in the fused kernel per fused vertex its three index
/// words (12 bytes), per fused slot its `g` read and written, and every touched state read
/// and written (`U` and the block are already in the vertex-block model).
pub fn disp_bytes_fused(rest: &DispCounts, fused: &FusedCounts, s: usize) -> f64 {
    let rest_bytes = if rest.rows + rest.entries == 0 {
        0.0
    } else {
        disp_bytes(rest, s)
    };
    let s = s as f64;
    rest_bytes
        + 12.0 * fused.vertices as f64
        + 2.0 * s * fused.slots as f64
        + 2.0 * s * fused.states as f64
}

/// Bytes the two dispersive kernels move per step (same conventions as [`kernel_bytes`]):
/// correction: per row its index words (20 bytes: half-edge, 64-bit row offset, length,
/// state offset), U read and written, one `g` (pure rows; the per-material scalar cached),
/// and for full rows their coupling entries and `g` values; poles: per entry its two
/// indices, U read, `g` written, every state read and written.
pub fn disp_bytes(c: &DispCounts, s: usize) -> f64 {
    let s = s as f64;
    let pure = (c.rows - c.full_rows) as f64;
    let correct = c.rows as f64 * (20.0 + 2.0 * s) + pure * s + 2.0 * c.full_len as f64 * s;
    let poles = c.entries as f64 * (8.0 + 2.0 * s) + 2.0 * c.states as f64 * s;
    correct + poles
}

/// Counts of the losses of a step ([`crate::dga::operators::Operators`]: `loss_h`,
/// `loss_block`, `mag`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossCounts {
    /// Free half-edge rows of the conducting vertices (the loss step `U_v ← B̂_v U_v`).
    pub rows: usize,
    /// Entries of their `B̂_v` rows, `Σ d_v` over the rows.
    pub entries: usize,
    /// Tets with magnetic conductivity σ* > 0.
    pub mag_tets: usize,
}

/// Bytes the losses add to a step on a device (same conventions as [`kernel_bytes`]).
/// Loss step (design note §12), two kernels: `loss_rows` reads per row its vertex, 64-bit
/// row offset and the vertex's two pointers (20 bytes) and writes one scratch value, and
/// per entry reads the `B̂` value, the slot's half-edge and the gathered `U`;
/// `loss_scatter` reads per row its half-edge and scratch value and writes `U`. Magnetic
/// loss (`mag_loss`): per σ* tet its index and factor, and its 4 F values read and written.
/// The lossy dual blocks `Δt Ã_v⁻¹` and primal rows `Δt/(1 + b) P` replace the lossless
/// ones in place: no bytes are added for them.
pub fn loss_bytes(c: &LossCounts, s: usize) -> f64 {
    let s = s as f64;
    let rows = c.rows as f64 * (20.0 + s) + c.entries as f64 * (s + 4.0 + s);
    let scatter = c.rows as f64 * (4.0 + 2.0 * s);
    let mag = c.mag_tets as f64 * (4.0 + s + 8.0 * s);
    rows + scatter + mag
}

/// Bytes the losses add to a step of the CPU backend: the loss step as on the device
/// ([`loss_bytes`] without σ*), and with σ* one factor per tet read inside the primal
/// update, which already reads and writes F (`factors`: the tets carrying one, every tet
/// when some tet has σ*).
pub fn loss_bytes_cpu(c: &LossCounts, factors: usize, s: usize) -> f64 {
    let step = LossCounts { mag_tets: 0, ..*c };
    loss_bytes(&step, s) + (factors * s) as f64
}

/// Bytes and flops of one DGA leapfrog step with the factored dual in the device's default
/// (symmetric, paired) layouts: primal + circulation + vertex-block byte models (the CPU
/// backend reads `2 n_circ` bytes more, its circulation lists); flops: per tet the
/// 6 edge sums, 12 signed adds of the curl, 16 mult-adds and the 4-value update, one add per
/// circulation entry, the vertex-block products (`Σd²` mult-adds) and updates.
pub fn dga_step(c: &DgaCounts, s: usize) -> (f64, f64) {
    let b = kernel_bytes(c, s, 0);
    let t = c.tets as f64;
    let flops = (6.0 + 12.0 + 2.0 * 16.0 + 4.0) * t
        + c.circ as f64
        + 2.0 * c.block as f64
        + 2.0 * c.free_half as f64;
    (b.primal_sym + b.circulation + b.vertex_block_sym, flops)
}

/// Device memory of a DGA run (operators, state, index tables, probe buffers; the CSR
/// matrix when `csr_nnz` is given): `(total, largest single buffer)` in bytes.
pub fn dga_device_bytes(c: &DgaCounts, s: usize, csr_nnz: Option<u64>) -> (u64, u64) {
    let t = c.tets as u64;
    let e = c.edges as u64;
    let nh = 2 * e;
    let r = s as u64;
    let nv = c.vertices as u64;
    let nf = c.free_half as u64;
    let mut parts = vec![
        10 * t * r,          // primal blocks (symmetric layout)
        6 * t * 4,           // primal edge table
        nh * r,              // U
        4 * t * r,           // F
        e * r,               // circulations
        (e + 1) * 4,         // circulation pointers
        c.circ as u64 * 2,   // circulation entries (paired: one word per two)
        (nv + 1) * 4,        // vertex pointers
        nf * 4,              // vertex half-edges
        nh * 4,              // half-edge vertices
        nh * 8,              // half-edge rows
        nf * 4,              // slot vertices
        (nv + 1) * 8,        // block offsets
        (nv + 1) * 8,        // packed block offsets
        c.packed as u64 * r, // vertex blocks (packed)
    ];
    if let Some(nnz) = csr_nnz {
        parts.extend([(nh + 1) * 4, nnz * 4, nnz * r]);
    }
    (parts.iter().sum(), parts.iter().copied().max().unwrap_or(0))
}

/// Peak host memory of a DGA resonator run with `tets` tetrahedra, in bytes: the mesh and
/// topology, the operators assembled in f64 with their masses, the operators of the time
/// loop, the stepper's state and the probe record. 1800 B per tet is the measured peak
/// (843 MB for 493k tets, f64) rounded up. No test checks the bound (this comment used to
/// cite a cost test with a counting allocator; no such test is in the history).
pub fn dga_host_bytes(tets: f64) -> f64 {
    1800.0 * tets
}

/// Largest mesh the 32-bit edge and half-edge indices allow (half-edges ≈ 2.35 per tet).
pub const MAX_TETS: f64 = 1.5e9;

/// Counts of a DG discretisation that the models need.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DgCounts {
    pub tets: usize,
    /// Nodes per tet and per face.
    pub np: usize,
    pub nfp: usize,
    /// Flops of one right-hand-side evaluation (volume and surface terms).
    pub flops_per_rhs: f64,
    pub dofs: usize,
}

/// Byte and flop models of the DG kernels, per call (`[(flux bytes, flux flops), (update
/// bytes, update flops)]`); five calls of each make an LSERK4 step. Update flops: the
/// right-hand side's minus the flux's, plus 4 per DoF for the stage update.
pub fn dg_kernels(c: &DgCounts, s: usize) -> [(f64, f64); 2] {
    let (k, np, nf) = (c.tets as f64, c.np as f64, 4.0 * c.nfp as f64);
    let s = s as f64;
    let flux_bytes = k * (nf * (12.0 * s + 8.0 + 6.0 * s) + 4.0 * 4.0 * s + 2.0 * s);
    let update_bytes = k * (6.0 * np * 4.0 * s + 6.0 * nf * s + 11.0 * s);
    let flux_flops = k * 60.0 * nf;
    let update_flops = c.flops_per_rhs - flux_flops + 4.0 * c.dofs as f64;
    [(flux_bytes, flux_flops), (update_bytes, update_flops)]
}

/// Bytes and flops of one DG LSERK4 step.
pub fn dg_step(c: &DgCounts, s: usize) -> (f64, f64) {
    let [(fb, ff), (ub, uf)] = dg_kernels(c, s);
    (5.0 * (fb + ub), 5.0 * (ff + uf))
}

/// Memory this process may still allocate, if known (Linux): the least of what the OS
/// reports as available (`/proc/meminfo`), the room left under the address-space limit
/// (`RLIMIT_AS`, from `/proc/self/limits`, less the current `VmSize`) and the room left in
/// the cgroup (`memory.max` less `memory.current`, cgroup v2). Round four (A1, A2) ran
/// into the address-space limit while `MemAvailable` said 21 GB.
pub fn available_memory() -> Option<u64> {
    let mut least: Option<u64> = None;
    let mut take = |v: Option<u64>| {
        if let Some(v) = v {
            least = Some(least.map_or(v, |l| l.min(v)));
        }
    };
    take(meminfo_available());
    take(address_space_room());
    take(cgroup_room());
    least
}

fn meminfo_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let l = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `RLIMIT_AS`'s soft limit less the process's current virtual size; None when unlimited.
fn address_space_room() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let l = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = l
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?; // "unlimited" does not parse: no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let vm_kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(soft.saturating_sub(vm_kb * 1024))
}

/// The cgroup v2 memory limit of this process's cgroup less its current use; None when
/// there is none ("max") or no cgroup v2.
fn cgroup_room() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cg.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
    let max: u64 = std::fs::read_to_string(dir.join("memory.max"))
        .ok()?
        .trim()
        .parse()
        .ok()?; // "max": no limit
    let cur: u64 = std::fs::read_to_string(dir.join("memory.current"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(max.saturating_sub(cur))
}

/// Disk space the outputs of a run need, in bytes: `probe.csv` (20 characters per value,
/// a time and 3 components per probe per step), `spectrum.csv`, `modes.csv`, the plots and
/// `run.toml` (a few MB at most), and, when checkpoints are written, twice a checkpoint
/// (the new one is written beside the old before the rename): the state (`state_len` f64)
/// and the samples so far.
pub fn output_bytes(steps: usize, n_probes: usize, state_len: usize, checkpoints: bool) -> u64 {
    let values = steps as u64 * (1 + 3 * n_probes as u64);
    let probe_csv = 20 * values;
    let others = 8 << 20;
    let ck = if checkpoints {
        2 * (8 * (state_len as u64 + 3 * n_probes as u64 * steps as u64) + (1 << 16))
    } else {
        0
    };
    probe_csv + others + ck
}

/// Host memory of a run's probe record (f64 samples, kept for the analysis).
pub fn record_bytes(steps: usize, n_probes: usize) -> u64 {
    8 * 3 * n_probes as u64 * steps as u64
}

/// Peak host memory of the analysis of a record of `steps` steps and `n_probes` probes: the
/// record, the copy of its signals the extraction takes, and the spectrum of one signal at
/// a time, zero-padded 8x to a power of two (up to 16 `steps` complex values, 256 B per
/// step) with as much FFT scratch. Measured (round four U3): 3M steps of 3 probes peaked
/// at 2.1 GB; this gives 2.0 GB.
pub fn analysis_bytes(steps: usize, n_probes: usize) -> u64 {
    2 * record_bytes(steps, n_probes) + 512 * steps as u64
}
