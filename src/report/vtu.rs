//! A minimal VTK XML unstructured-grid writer (ASCII), enough for ParaView to open the
//! mesh with per-cell and per-point data. Cell type 10 = VTK_TETRA.

use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::solver::modeshape::ModeShape;
use std::fmt::Write as _;
use std::path::Path;

fn vec_array(out: &mut String, name: &str, v: impl Iterator<Item = [f64; 3]>) {
    let _ = writeln!(
        out,
        "        <DataArray type=\"Float64\" Name=\"{name}\" NumberOfComponents=\"3\" format=\"ascii\">"
    );
    for x in v {
        let _ = writeln!(out, "          {:.9e} {:.9e} {:.9e}", x[0], x[1], x[2]);
    }
    out.push_str("        </DataArray>\n");
}

fn scalar_array(out: &mut String, name: &str, v: impl Iterator<Item = f64>) {
    let _ = writeln!(
        out,
        "        <DataArray type=\"Float64\" Name=\"{name}\" format=\"ascii\">"
    );
    for x in v {
        let _ = writeln!(out, "          {x:.9e}");
    }
    out.push_str("        </DataArray>\n");
}

/// Writes the mesh and, per mode, cell data `E_re_<label>`, `E_im_<label>` (vectors) and
/// `E_abs_<label>` (scalar), and the same as point data (averages over the tets around each
/// node), plus the cell scalar `physical_group`.
pub fn write_modes(path: &Path, mesh: &Mesh, modes: &[ModeShape]) -> Result<()> {
    let nv = mesh.n_vertices();
    let nt = mesh.n_tets();
    let mut s = String::new();
    s.push_str("<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <UnstructuredGrid>\n");
    let _ = writeln!(
        s,
        "    <Piece NumberOfPoints=\"{nv}\" NumberOfCells=\"{nt}\">"
    );
    s.push_str("      <Points>\n");
    vec_array(&mut s, "points", mesh.nodes.iter().copied());
    s.push_str("      </Points>\n      <Cells>\n        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n");
    for t in &mesh.tets {
        let _ = writeln!(s, "          {} {} {} {}", t[0], t[1], t[2], t[3]);
    }
    s.push_str("        </DataArray>\n        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n");
    for n in 0..nt {
        let _ = writeln!(s, "          {}", 4 * (n + 1));
    }
    s.push_str("        </DataArray>\n        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n");
    for _ in 0..nt {
        s.push_str("          10\n");
    }
    s.push_str("        </DataArray>\n      </Cells>\n      <CellData>\n");
    scalar_array(
        &mut s,
        "physical_group",
        mesh.tet_phys.iter().map(|&p| p as f64),
    );
    let abs = |e: &[rustfft::num_complex::Complex<f64>; 3]| {
        (e[0].norm_sqr() + e[1].norm_sqr() + e[2].norm_sqr()).sqrt()
    };
    for m in modes {
        vec_array(
            &mut s,
            &format!("E_re_{}", m.label),
            m.cell.iter().map(|e| [e[0].re, e[1].re, e[2].re]),
        );
        vec_array(
            &mut s,
            &format!("E_im_{}", m.label),
            m.cell.iter().map(|e| [e[0].im, e[1].im, e[2].im]),
        );
        scalar_array(
            &mut s,
            &format!("E_abs_{}", m.label),
            m.cell.iter().map(abs),
        );
    }
    s.push_str("      </CellData>\n      <PointData>\n");
    let mut count = vec![0.0; nv];
    for t in &mesh.tets {
        for &v in t {
            count[v as usize] += 1.0;
        }
    }
    for m in modes {
        let mut re = vec![[0.0; 3]; nv];
        let mut im = vec![[0.0; 3]; nv];
        for (n, t) in mesh.tets.iter().enumerate() {
            for &v in t {
                for c in 0..3 {
                    re[v as usize][c] += m.cell[n][c].re / count[v as usize];
                    im[v as usize][c] += m.cell[n][c].im / count[v as usize];
                }
            }
        }
        vec_array(&mut s, &format!("E_re_{}", m.label), re.iter().copied());
        vec_array(&mut s, &format!("E_im_{}", m.label), im.iter().copied());
        scalar_array(
            &mut s,
            &format!("E_abs_{}", m.label),
            re.iter()
                .zip(&im)
                .map(|(r, i)| (r.iter().chain(i.iter()).map(|x| x * x).sum::<f64>()).sqrt()),
        );
    }
    s.push_str("      </PointData>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n");
    super::write_atomic(path, s.as_bytes()).map_err(|e| match e {
        Error::Io { .. } => e,
        other => other,
    })
}
