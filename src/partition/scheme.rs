//! Which partitioner a partitioned run uses: METIS, recursive coordinate bisection or x
//! slabs, and the size from which `auto` prefers the geometric partition.

use super::Partition;
use crate::error::Result;
use crate::mesh::{Mesh, Topology};

/// How the tets are partitioned (the resolved `partitioner` of a run; `auto` is resolved by
/// [`Scheme::auto`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// METIS k-way on the dual graph ([`Partition::metis`]).
    Metis,
    /// Recursive coordinate bisection of the centroids ([`Partition::rcb`]).
    Rcb,
    /// Slabs across x of equal tet count ([`Partition::slabs`]).
    Slab,
}

/// The tet count from which `auto` takes RCB instead of METIS.
///
/// METIS costs 1–2.5 s per million tets on one core of rank 0 (`results/scaling/README.md`),
/// RCB a small fraction of that (`results/scaling/partitioners.csv`). What METIS buys is a
/// smaller cut, hence fewer halo bytes per step; with parts of a million tets or more the
/// interior update hides the exchange (the efficiency model of the same README) and the
/// saving is nil; with smaller parts it is a few microseconds per step, which repays
/// METIS's seconds only over runs of hundreds of thousands of steps. Below a million tets
/// METIS costs at most a few seconds and gives the smaller halo on unstructured meshes.
pub const RCB_FROM_TETS: usize = 1_000_000;

impl Scheme {
    /// `auto`: METIS below [`RCB_FROM_TETS`] tets, RCB from there.
    pub fn auto(n_tets: usize) -> Scheme {
        if n_tets >= RCB_FROM_TETS {
            Scheme::Rcb
        } else {
            Scheme::Metis
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scheme::Metis => "metis",
            Scheme::Rcb => "rcb",
            Scheme::Slab => "slab",
        }
    }
}

impl Partition {
    /// The partition of `scheme` (METIS and RCB weighted by [`super::tet_costs`]).
    pub fn with(scheme: Scheme, mesh: &Mesh, topo: &Topology, n_parts: usize) -> Result<Partition> {
        match scheme {
            Scheme::Metis => Self::metis(mesh, topo, None, n_parts),
            Scheme::Rcb => Self::rcb(mesh, topo, None, n_parts),
            Scheme::Slab => Self::slabs(mesh, topo, n_parts),
        }
    }
}
