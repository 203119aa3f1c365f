//! Where the set-up of a run goes: rank 0's wall time of each phase before the first time
//! step, printed as a notice and written to `run.toml` (`[run.setup]`).

/// Rank 0's wall time (s) of each set-up phase of a partitioned run. The collective phases
/// (assembly on the ranks, device upload, power iteration) include rank 0's waits for the
/// slowest rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct SetupTimes {
    /// Reading or generating the mesh (refinement and renumbering included).
    pub mesh_s: f64,
    /// Topology, mesh checks, materials, walls, source and probe placement.
    pub topology_s: f64,
    /// The partitioner (tet costs included).
    pub partition_s: f64,
    /// Halo lists, partition statistics, building and sending every rank its part, the
    /// source, probes and waveform.
    pub distribute_s: f64,
    /// Assembly of the local operators.
    pub assembly_s: f64,
    /// Choosing and opening the devices, uploading the operators, building the steppers.
    pub stepper_s: f64,
    /// The distributed power iteration for Δt.
    pub power_s: f64,
    /// Whether the operators were assembled on the device (one process, `assembly`).
    pub assembled_on_device: bool,
}

impl SetupTimes {
    /// The phases as (name, seconds), in order.
    pub fn phases(&self) -> [(&'static str, f64); 7] {
        [
            ("mesh", self.mesh_s),
            ("topology", self.topology_s),
            ("partition", self.partition_s),
            ("distribute", self.distribute_s),
            ("assembly", self.assembly_s),
            ("stepper", self.stepper_s),
            ("power iteration", self.power_s),
        ]
    }

    pub fn total_s(&self) -> f64 {
        self.phases().iter().map(|p| p.1).sum()
    }

    /// One line for the user: `setup 12.3 s: mesh 1.0 s, topology 2.0 s, …`.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .phases()
            .iter()
            .map(|(n, s)| match (*n, self.assembled_on_device) {
                ("assembly", true) => format!("{n} {s:.2} s on the device"),
                _ => format!("{n} {s:.2} s"),
            })
            .collect();
        format!("setup {:.2} s: {}", self.total_s(), parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_every_phase_and_the_total() {
        let t = SetupTimes {
            mesh_s: 1.0,
            partition_s: 0.5,
            power_s: 0.25,
            ..SetupTimes::default()
        };
        let l = t.line();
        assert!(l.starts_with("setup 1.75 s: mesh 1.00 s"), "{l}");
        assert!(l.contains("partition 0.50 s") && l.ends_with("power iteration 0.25 s"));
    }
}
