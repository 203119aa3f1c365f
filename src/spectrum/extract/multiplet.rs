//! Multiplets that a record does not separate, reported as one line (part of
//! [`super::extract`]).
//!
//! A mesh splits a degenerate mode (TE1 ×3 of a sphere, TM110 ×2 of a cylinder) into members
//! a few 1e-4 apart. When the members lie closer than the lines are wide — the decay rate
//! `α` of a radiating resonator (Q ≈ 40: `α / ω ≈ 1.2%`) — no record fits them apart
//! (undamped members closer than a Fourier bin are left to the cancelling test: a longer
//! record separates them). The matrix pencil then returns poles near the
//! multiplet whose amplitudes cancel: each is many times larger than the signal, their sum
//! is the signal. Those poles are not the members, so they are not lines; but the cluster
//! as a whole models the multiplet's signal well, and that signal is, over the record,
//! one damped exponential to within the members' spread.
//!
//! So a cluster — the poles joined by `|s_i − s_j| <= min(α_i, α_j)` to a pole
//! whose amplitudes cancel, each of them fitted alike by both pencils (`|Δs|` within its
//! width: a noise pole's wide, moving `s` would join unrelated lines) — becomes one pole
//! at the mean `s̄` of its members' `s`. The members' amplitudes are the very numbers the
//! record cannot fix (that is what their cancelling says), so they cannot weight the mean;
//! the unweighted mean lies within the spread of the amplitude-weighted one, and the spread
//! `max_k |s_k − s̄|` is reported in the line's error. The amplitudes are then refitted
//! with `s̄` in place of the cluster, and the merged line is judged like any other (both
//! fits merged alike, so the consistency test compares merged with merged). Its member
//! count is the cluster's size: the poles the pencil needed there, a lower bound on the
//! physical members.

use rustfft::num_complex::Complex;

type C64 = Complex<f64>;

/// One fit's poles after merging (`s`, 1/s), with their member counts and spreads
/// `max |s_k − s̄|` (1/s); the unmerged poles first, in their order.
pub(super) struct Merged {
    pub s: Vec<C64>,
    pub members: Vec<usize>,
    pub spread_s: Vec<f64>,
}

/// The clusters of `s` (poles as `s = ln z / Δt_d`, 1/s) that contain a pole flagged in
/// `cancelling`: connected components of `|s_i − s_j| <= min(α_i, α_j)`
/// (`α = max(−Re s, 0)`) among the poles flagged in `eligible`, by
/// ascending smallest index. Poles in no such cluster, and one-pole clusters, are left out.
pub(super) fn clusters(s: &[C64], cancelling: &[bool], eligible: &[bool]) -> Vec<Vec<usize>> {
    let n = s.len();
    // union-find over at most a few hundred poles per window
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let width = |x: C64| (-x.re).max(0.0);
    for i in (0..n).filter(|&i| eligible[i]) {
        for j in (i + 1..n).filter(|&j| eligible[j]) {
            let r = width(s[i]).min(width(s[j]));
            if (s[i] - s[j]).norm() <= r {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        let r = root(&mut parent, i);
        groups[r].push(i);
    }
    groups
        .into_iter()
        .filter(|g| g.len() > 1 && g.iter().any(|&i| cancelling[i]))
        .collect()
}

/// Merges the clusters of `s` (one fit's poles, 1/s) that contain a pole in `cancelling`,
/// among the poles in `eligible` (module docs).
pub(super) fn merge(s: &[C64], cancelling: &[bool], eligible: &[bool]) -> Merged {
    let groups = clusters(s, cancelling, eligible);
    let mut in_group = vec![false; s.len()];
    groups.iter().flatten().for_each(|&k| in_group[k] = true);
    let mut out = Merged {
        s: Vec::with_capacity(s.len()),
        members: Vec::with_capacity(s.len()),
        spread_s: Vec::with_capacity(s.len()),
    };
    for (k, &sk) in s.iter().enumerate() {
        if !in_group[k] {
            out.s.push(sk);
            out.members.push(1);
            out.spread_s.push(0.0);
        }
    }
    for g in &groups {
        let mean = g.iter().map(|&k| s[k]).sum::<C64>() / g.len() as f64;
        let spread = g.iter().map(|&k| (s[k] - mean).norm()).fold(0.0, f64::max);
        out.s.push(mean);
        out.members.push(g.len());
        out.spread_s.push(spread);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_join_consistent_poles_within_a_line_width_of_a_cancelling_one() {
        // two broad poles 0.5 α apart (one cancelling), two undamped ones 10/s apart, a
        // noise pole so broad that it would reach all of them
        let s = [
            C64::new(-1e6, 1e8),
            C64::new(-1e6, 1e8 + 5e5),
            C64::new(0.0, 2e8),
            C64::new(-1.0, 2e8 + 10.0),
            C64::new(-5e8, 1.5e8),
        ];
        let all = [true; 5];
        let g = clusters(&s, &[false, true, false, false, false], &all);
        assert_eq!(g, vec![vec![0, 1]]);
        // undamped poles are never joined: a longer record separates them (they stay
        // cancelling lines, flagged as before)
        let g = clusters(&s, &[false, false, true, false, false], &all);
        assert!(g.is_empty());
        // an ineligible pole joins nothing
        let some = [false, true, true, true, true];
        let g = clusters(&s, &[false, true, false, false, false], &some);
        assert!(g.is_empty());
    }

    #[test]
    fn merged_poles_are_the_mean_with_the_spread_and_come_last() {
        let s = [
            C64::new(-2e6, 1.5e8),
            C64::new(-1e6, 1e8),
            C64::new(-1.2e6, 1e8 + 3e5),
            C64::new(-1.1e6, 1e8 + 6e5),
        ];
        let m = merge(&s, &[false, false, true, false], &[true; 4]);
        assert_eq!(m.members, vec![1, 3]);
        assert_eq!(m.s[0], s[0]);
        let mean = C64::new(-1.1e6, 1e8 + 3e5);
        assert!((m.s[1] - mean).norm() < 1e-6, "{}", m.s[1]);
        let spread = (s[1] - mean).norm().max((s[3] - mean).norm());
        assert!((m.spread_s[1] - spread).abs() < 1e-6);
        // nothing cancels: nothing merged, the order kept
        let m = merge(&s, &[false; 4], &[true; 4]);
        assert_eq!(m.s, s.to_vec());
        assert_eq!(m.members, vec![1; 4]);
    }
}
