//! Unit tests of the assembly (`dga`): masses, incidence, blocks and layouts.

use super::*;

/// The symmetric primal layout's curl table is the tet's incidence for every ordering
/// of its global vertex ids (all 24 permutations of four ids).
#[test]
fn the_orientation_bits_rebuild_the_curl_block() {
    let ids = [7u32, 19, 3, 42];
    let mut seen = std::collections::HashSet::new();
    for p in 0..24usize {
        let mut rest: Vec<u32> = ids.to_vec();
        let mut v = [0u32; 4];
        let mut k = p;
        for (i, slot) in v.iter_mut().enumerate() {
            let r = k % (4 - i);
            k /= 4 - i;
            *slot = rest.remove(r);
        }
        seen.insert(v);
        let bits = tet_orient(v);
        assert_eq!(curl_from_orient(bits), curl_block(v), "vertices {v:?}");
    }
    assert_eq!(seen.len(), 24);
}

/// A mesh with moved vertices, so no two tets share their geometry (fixed seed).
fn jittered() -> (Mesh, Dga) {
    let mut m = crate::mesh::generate::box_mesh([3, 2, 2], [1.3, 0.8, 0.9]);
    let mut r = crate::util::Rng::new(0x5a17);
    for p in m.nodes.iter_mut() {
        for x in p.iter_mut() {
            *x += 0.04 * r.sym();
        }
    }
    let topo = crate::mesh::Topology::build(&m).unwrap();
    let d = Dga::assemble(&m, &topo, &Media::vacuum(m.n_tets())).unwrap();
    (m, d)
}

/// The 4x6 primal block rebuilt from the 10 stored values and the orientation bits is
/// `Mmu⁻¹ C`: `Mmu · P = C` (the incidence of the tet's global vertex ids) to round-off.
#[test]
fn the_symmetric_primal_layout_gives_mmu_inverse_times_the_curl() {
    let (m, d) = jittered();
    for n in 0..d.n_tets {
        let p = d.primal_block(n);
        let c = curl_block(m.tets[n]);
        let scale = d.mmu[n].iter().fold(0.0f64, |a, x| a.max(x.abs()))
            * p.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        for r in 0..4 {
            for l in 0..6 {
                let mp: f64 = (0..4).map(|k| d.mmu[n][r * 4 + k] * p[k * 6 + l]).sum();
                assert!(
                    (mp - c[r][l]).abs() <= 1e-13 * scale.max(1.0),
                    "tet {n} ({r}, {l}): {mp} vs {}",
                    c[r][l]
                );
            }
        }
    }
}

/// The packed vertex blocks, read with the kernel's addressing (`vertex_block_s`:
/// `j <= i` at `i(i+1)/2 + j`, else `j(j+1)/2 + i`), give every entry of the full block.
#[test]
fn the_packed_blocks_hold_every_entry_at_the_kernel_address() {
    let (_, d) = jittered();
    let b = &d.meps_inv;
    let poff = b.packed_offsets();
    let packed = b.pack(&b.data, &poff, |x| x);
    assert_eq!(packed.len() as u64, *poff.last().unwrap());
    assert_eq!(packed.len(), d.counts().packed);
    let mut asym = 0.0f64;
    for v in 0..b.n_vertices() {
        let dim = b.dim(v);
        let full = b.block(v);
        for i in 0..dim {
            for j in 0..dim {
                let k = if j <= i {
                    i * (i + 1) / 2 + j
                } else {
                    j * (j + 1) / 2 + i
                };
                let got = packed[poff[v] as usize + k];
                // the upper triangle exactly; the lower one by the block's symmetry
                if j <= i {
                    assert_eq!(got, full[j * dim + i]);
                }
                asym = asym.max((got - full[i * dim + j]).abs() / full[i * dim + i].abs());
            }
        }
    }
    assert!(asym < 1e-12, "blocks symmetric to round-off: {asym:e}");
}

/// The diagonal layout, read with the kernel's addressing (`vertex_block_d`), gives
/// every entry of the full block, for odd and even dimensions alike.
#[test]
fn the_diagonal_blocks_hold_every_entry_at_the_kernel_address() {
    let (_, d) = jittered();
    let b = &d.meps_inv;
    let off = b.diag_offsets();
    let packed = b.pack_diag(&b.data, &off, |x| x);
    assert_eq!(packed.len() as u64, *off.last().unwrap());
    let mut dims = std::collections::BTreeSet::new();
    let mut asym = 0.0f64;
    for v in 0..b.n_vertices() {
        let dim = b.dim(v);
        dims.insert(dim % 2);
        let full = b.block(v);
        for i in 0..dim {
            for k in 0..dim {
                let m = (i + k) % dim;
                let idx = if k <= dim / 2 {
                    k * dim + i
                } else {
                    (dim - k) * dim + m
                };
                let got = packed[off[v] as usize + idx];
                let want = full[i * dim + m];
                if k <= dim / 2 {
                    assert_eq!(got, want);
                }
                asym = asym.max((got - want).abs() / full[i * dim + i].abs());
            }
        }
    }
    assert_eq!(dims.len(), 2, "both parities of d occur");
    assert!(asym < 1e-12, "blocks symmetric to round-off: {asym:e}");
}

/// The incidence of [`vertex_tets`]: per vertex, every (tet, local vertex) once, tets
/// ascending (the summation order of the blocks on the host and on the device).
#[test]
fn vertex_tets_lists_each_vertex_s_tets_ascending() {
    let (m, _) = jittered();
    let (ptr, vt) = vertex_tets(&m);
    let mut want: Vec<Vec<(u32, u8)>> = vec![Vec::new(); m.n_vertices()];
    for (n, tv) in m.tets.iter().enumerate() {
        for (i, &v) in tv.iter().enumerate() {
            want[v as usize].push((n as u32, i as u8));
        }
    }
    assert_eq!(ptr.len(), m.n_vertices() + 1);
    for (v, w) in want.iter().enumerate() {
        assert_eq!(&vt[ptr[v]..ptr[v + 1]], &w[..], "vertex {v}");
    }
}

/// `SYM4` addresses each of the 10 upper-triangle values once and is symmetric, and
/// `SYM4_RC` is its inverse.
#[test]
fn the_packed_4x4_index_is_a_symmetric_bijection() {
    for (k, &(r, c)) in SYM4_RC.iter().enumerate() {
        assert!(r <= c);
        assert_eq!(SYM4[r][c], k);
    }
    let mut hit = [0; 10];
    for r in 0..4 {
        for c in 0..4 {
            assert_eq!(SYM4[r][c], SYM4[c][r]);
            if r <= c {
                hit[SYM4[r][c]] += 1;
            }
        }
    }
    assert_eq!(hit, [1; 10]);
}
