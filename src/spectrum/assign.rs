//! Assignment of measured resonances to the modes of an analytic catalogue
//! ([`super::analytic::Cavity::catalogue`]): one-to-one, in frequency order, using
//! multiplicity, with a confidence value; where it is ambiguous, no label and the reason.
//!
//! Measured lines `f_i` (leapfrog-corrected, Hz) and catalogue modes `g_j` (each of
//! degeneracy `d_j`) are compared on a log scale, `x = ln f`, after removing the shift of
//! the discretisation, which grows as the square of the frequency (dispersion, `(k h)²`):
//! `δ(f) = a (f / f_top)²`, `f_top` the highest line. `a` is the point of an 801-point grid
//! over `[-3 tol, tol]` that minimises `Σ_i min(r_i², h²)` (`r_i = x_i - δ(f_i) -
//! y_nearest`, `h = 0.3%`, so that unknown lines do not pull it), refined once as the median
//! of `r / (f/f_top)²` over the matched lines. The spread of the mesh error `σ` is
//! `1.4826 MAD` of the residuals (at least [`Settings::min_sigma`], at most `tol/3`).
//!
//! 1. Catalogue modes closer than `3σ` (log) form a block (their order is not resolved by
//!    the mesh); modes of equal frequency (1e-9) are one entry named `A+B` (their sum of
//!    fields is all a measurement can tell apart).
//! 2. Lines and blocks are aligned in order by dynamic programming (O(lines · blocks ·
//!    max degeneracy)): a run of `k <= D` consecutive lines takes a block of total degeneracy
//!    `D` at cost `Σ r²/σ² + (D - k)/2` (`r`: residual to the nearest mode of the block,
//!    each `|r| <= tolerance`); a line left over costs `(tolerance/σ)²` (as much as a line at
//!    the tolerance), a block left over 1 (probes may not see a mode).
//! 3. Inside a block of several modes, the lines are split into consecutive groups, one per
//!    mode in some order, of at most its degeneracy. A candidate is *structural* when its
//!    largest gap inside a group is below 0.3 times its smallest gap between groups (the
//!    members of a mesh-split multiplet lie closer to each other than to other modes); the
//!    structural candidates (all candidates if none is) are ranked by `Σ r²/σ²`.
//!
//! Confidence, in [0, 1]: a line in a one-mode block has `(d - |r|)/(d + |r|)`, `d` the
//! distance (log) from the line's shifted frequency to the nearest mode outside the block;
//! in a block of several modes `1 - exp(-Δ/2)`, `Δ` the cost margin to the second-best
//! candidate (1 when only one candidate is structural). Below [`Settings::min_confidence`]
//! the label is left empty and the reason names the competing modes.

use super::analytic::Mode;

/// Assignment parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Largest relative distance of a line from its mode after the common shift.
    pub tolerance: f64,
    /// Smallest mesh-error spread used (relative).
    pub min_sigma: f64,
    /// Labels with a lower confidence are left empty.
    pub min_confidence: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tolerance: 0.03,
            min_sigma: 1e-4,
            min_confidence: 0.3,
        }
    }
}

/// The label of one measured line.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Label {
    /// Catalogue mode name (`A+B` for exactly degenerate modes), or none.
    pub mode: Option<String>,
    /// Its analytic frequency, Hz.
    pub analytic_hz: Option<f64>,
    /// Confidence in [0, 1] (0 without a label).
    pub confidence: f64,
    /// Why there is no label, or a note on it (empty when clear).
    pub reason: String,
}

/// The result of [`assign`].
#[derive(Clone, Debug, Default)]
pub struct Assignment {
    /// One label per input line, in input order.
    pub labels: Vec<Label>,
    /// The discretisation shift removed, relative, at `shift_at_hz`: a line at `f` is
    /// compared with `f_analytic (1 + shift (f / shift_at_hz)²)`.
    pub shift: f64,
    pub shift_at_hz: f64,
    /// The mesh-error spread used (relative).
    pub sigma: f64,
}

#[derive(Clone, Debug)]
struct Entry {
    name: String,
    f: f64,
    y: f64,
    deg: usize,
}

/// Assigns lines (Hz, any order) to catalogue `modes` (any order).
pub fn assign(lines_hz: &[f64], modes: &[Mode], s: &Settings) -> Assignment {
    let n = lines_hz.len();
    let mut out = Assignment {
        labels: vec![Label::default(); n],
        ..Default::default()
    };
    let mut order: Vec<usize> = (0..n)
        .filter(|&i| lines_hz[i] > 0.0 && lines_hz[i].is_finite())
        .collect();
    order.sort_by(|&a, &b| lines_hz[a].total_cmp(&lines_hz[b]));
    let entries = merge_equal(modes);
    if entries.is_empty() || order.is_empty() {
        for (i, l) in out.labels.iter_mut().enumerate() {
            l.reason = if !(lines_hz[i] > 0.0 && lines_hz[i].is_finite()) {
                "not a positive finite frequency".into()
            } else {
                "no analytic mode to compare with".into()
            };
        }
        return out;
    }
    let x: Vec<f64> = order.iter().map(|&i| lines_hz[i].ln()).collect();
    let tol = s.tolerance.ln_1p();
    // The discretisation shift, relative, grows as f² (dispersion): δ(f) = a (f/f_top)²,
    // f_top the highest line. `a` on a grid over [-3 tol, tol] minimising Σ min(r², h²)
    // (r: residual to the nearest mode, h = 0.3%: robust to unknown lines); the spread from
    // the residuals under h; both refined once from the matches (a = median of r / w).
    let ys: Vec<f64> = entries.iter().map(|e| e.y).collect();
    let nearest = |v: f64| {
        let k = ys.partition_point(|&y| y < v);
        let mut best = f64::INFINITY;
        for j in [k.saturating_sub(1), k.min(ys.len() - 1)] {
            if (v - ys[j]).abs() < best.abs() {
                best = v - ys[j];
            }
        }
        best
    };
    let xtop = x[x.len() - 1];
    let w: Vec<f64> = x.iter().map(|&v| (2.0 * (v - xtop)).exp()).collect();
    let shifted = |a: f64| -> Vec<f64> { x.iter().zip(&w).map(|(&v, &w)| v - a * w).collect() };
    let h = 3e-3f64.min(tol);
    let robust = |a: f64| -> f64 {
        shifted(a)
            .iter()
            .map(|&v| nearest(v).powi(2).min(h * h))
            .sum()
    };
    let grid = 800;
    let mut a = (0..=grid)
        .map(|k| -3.0 * tol + 4.0 * tol * k as f64 / grid as f64)
        .min_by(|p, q| {
            robust(*p)
                .total_cmp(&robust(*q))
                .then(p.abs().total_cmp(&q.abs()))
        })
        .unwrap_or(0.0);
    let spread = |res: &[f64]| {
        let mad = median(res.iter().map(|r| r.abs()).collect());
        (1.4826 * mad).max(s.min_sigma).min(tol / 3.0)
    };
    let res0: Vec<f64> = shifted(a)
        .iter()
        .map(|&v| nearest(v))
        .filter(|r| r.abs() < h)
        .collect();
    let mut sigma = spread(&res0);
    let mut xs = shifted(a);
    let mut result = Vec::new();
    for pass in 0..2 {
        let blocks = blocks(&entries, 3.0 * sigma);
        result = align(&xs, &entries, &blocks, 0.0, sigma, tol);
        // (line, residual of the unshifted line to its nearest mode of the block)
        let res: Vec<(usize, f64)> = result
            .iter()
            .flat_map(|(lines, b)| {
                lines.iter().map(|&l| {
                    let r = blocks[*b]
                        .iter()
                        .map(|&j| xs[l] - entries[j].y)
                        .min_by(|p, q| p.abs().total_cmp(&q.abs()))
                        .unwrap();
                    (l, r + a * w[l])
                })
            })
            .collect();
        if pass == 0 && !res.is_empty() {
            a = median(res.iter().map(|&(l, r)| r / w[l]).collect());
            xs = shifted(a);
            sigma = spread(&res.iter().map(|&(l, r)| r - a * w[l]).collect::<Vec<f64>>());
        }
    }
    out.shift = a.exp_m1();
    out.shift_at_hz = xtop.exp();
    out.sigma = sigma;
    label_lines(&mut out, &order, &xs, &result, &entries, sigma, s);
    for &i in (0..n)
        .filter(|i| !order.contains(i))
        .collect::<Vec<_>>()
        .iter()
    {
        out.labels[i].reason = "not a positive finite frequency".into();
    }
    out
}

/// Writes the labels of the aligned lines (`result`: the lines of each block of modes, with
/// the lines `xs` shifted and sorted as `order`), and the reason of every line left out.
fn label_lines(
    out: &mut Assignment,
    order: &[usize],
    xs: &[f64],
    result: &[(Vec<usize>, usize)],
    entries: &[Entry],
    sigma: f64,
    s: &Settings,
) {
    let blocks = blocks(entries, 3.0 * sigma);
    let tol = s.tolerance.ln_1p();
    let mut labelled = vec![false; xs.len()];
    for (lines, b) in result {
        let block = &blocks[*b];
        let assigned = label_block(xs, lines, block, entries, 0.0, sigma);
        for (l, (j, conf, note)) in lines.iter().zip(assigned) {
            labelled[*l] = true;
            let lab = &mut out.labels[order[*l]];
            let mut conf = conf;
            if block.len() == 1 {
                let r = (xs[*l] - entries[j].y).abs();
                let d = entries
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !block.contains(k))
                    .map(|(_, e)| (xs[*l] - e.y).abs())
                    .fold(f64::INFINITY, f64::min);
                conf = if d.is_finite() {
                    ((d - r) / (d + r)).max(0.0)
                } else {
                    1.0
                };
            }
            if conf >= s.min_confidence {
                lab.mode = Some(entries[j].name.clone());
                lab.analytic_hz = Some(entries[j].f);
                lab.confidence = conf;
                lab.reason = note;
            } else {
                let names: Vec<&str> = neighbours(entries, xs[*l], 2)
                    .into_iter()
                    .map(|k| entries[k].name.as_str())
                    .collect();
                lab.reason = format!(
                    "ambiguous: {} are within the mesh error (confidence {conf:.2})",
                    names.join(" and ")
                );
            }
        }
    }
    for (l, &i) in order.iter().enumerate() {
        if !labelled[l] {
            let r = (xs[l] - entries[neighbours(entries, xs[l], 1)[0]].y).abs();
            out.labels[i].reason = if r > tol {
                format!(
                    "no analytic mode within {:.1}% (after the common shift)",
                    100.0 * s.tolerance
                )
            } else {
                "more lines near these modes than their degeneracies hold".into()
            };
        }
    }
}

/// Modes sorted, equal frequencies (1e-9) merged into one entry `A+B`.
fn merge_equal(modes: &[Mode]) -> Vec<Entry> {
    let mut m: Vec<&Mode> = modes
        .iter()
        .filter(|m| m.f_hz > 0.0 && m.f_hz.is_finite())
        .collect();
    m.sort_by(|a, b| a.f_hz.total_cmp(&b.f_hz).then(a.name.cmp(&b.name)));
    let mut out: Vec<Entry> = Vec::new();
    for mode in m {
        match out.last_mut() {
            Some(e) if (mode.f_hz - e.f).abs() <= 1e-9 * e.f => {
                e.name = format!("{}+{}", e.name, mode.name);
                e.deg += mode.degeneracy.max(1);
            }
            _ => out.push(Entry {
                name: mode.name.clone(),
                f: mode.f_hz,
                y: mode.f_hz.ln(),
                deg: mode.degeneracy.max(1),
            }),
        }
    }
    out
}

/// Consecutive entries closer than `gap` (log) grouped.
fn blocks(e: &[Entry], gap: f64) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for j in 0..e.len() {
        match out.last_mut() {
            Some(b) if e[j].y - e[*b.last().unwrap()].y < gap => b.push(j),
            _ => out.push(vec![j]),
        }
    }
    out
}

/// Entries nearest to `y`, at most `k`, by frequency.
fn neighbours(e: &[Entry], y: f64, k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..e.len()).collect();
    idx.sort_by(|&a, &b| (e[a].y - y).abs().total_cmp(&(e[b].y - y).abs()));
    idx.truncate(k);
    idx.sort();
    idx
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Monotone alignment of lines (sorted log frequencies `x`) with blocks; returns the
/// matched runs of line indices with their block.
fn align(
    x: &[f64],
    e: &[Entry],
    blocks: &[Vec<usize>],
    delta: f64,
    sigma: f64,
    tol: f64,
) -> Vec<(Vec<usize>, usize)> {
    let (n, m) = (x.len(), blocks.len());
    let skip_line = (tol / sigma).powi(2);
    let inf = f64::INFINITY;
    // cost[i][b]: first i lines and first b blocks processed; back[i][b]: (k lines taken).
    let mut cost = vec![vec![inf; m + 1]; n + 1];
    let mut back = vec![vec![(0usize, 0usize); m + 1]; n + 1];
    cost[0][0] = 0.0;
    let resid = |l: usize, b: usize| {
        blocks[b]
            .iter()
            .map(|&j| x[l] - delta - e[j].y)
            .min_by(|a, b| a.abs().total_cmp(&b.abs()))
            .unwrap()
    };
    for i in 0..=n {
        for b in 0..=m {
            let c = cost[i][b];
            if !c.is_finite() {
                continue;
            }
            if i < n && c + skip_line < cost[i + 1][b] {
                cost[i + 1][b] = c + skip_line;
                back[i + 1][b] = (i, b);
            }
            if b < m {
                if c + 1.0 < cost[i][b + 1] {
                    cost[i][b + 1] = c + 1.0;
                    back[i][b + 1] = (i, b);
                }
                let d: usize = blocks[b].iter().map(|&j| e[j].deg).sum();
                let mut acc = 0.0;
                for k in 1..=d.min(n - i) {
                    let r = resid(i + k - 1, b);
                    if r.abs() > tol {
                        break;
                    }
                    acc += (r / sigma).powi(2);
                    let t = c + acc + 0.5 * (d - k) as f64;
                    if t < cost[i + k][b + 1] {
                        cost[i + k][b + 1] = t;
                        back[i + k][b + 1] = (i, b);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    let (mut i, mut b) = (n, m);
    while i > 0 || b > 0 {
        let (pi, pb) = back[i][b];
        if pb + 1 == b && pi < i {
            out.push(((pi..i).collect(), pb));
        }
        (i, b) = (pi, pb);
    }
    out.reverse();
    out
}

/// Labels the lines of one block: (entry, confidence, note) per line.
fn label_block(
    x: &[f64],
    lines: &[usize],
    block: &[usize],
    e: &[Entry],
    delta: f64,
    sigma: f64,
) -> Vec<(usize, f64, String)> {
    if block.len() == 1 {
        return lines
            .iter()
            .map(|_| (block[0], 1.0, String::new()))
            .collect();
    }
    // Candidates: an order of the block's modes (at most 6: 720 orders; larger blocks keep
    // frequency order only) and consecutive group sizes 0..=deg summing to the line count.
    let perms = if block.len() <= 6 {
        permutations(block)
    } else {
        vec![block.to_vec()]
    };
    struct Cand {
        of_line: Vec<usize>,
        structure: f64,
        cost: f64,
    }
    let mut cands: Vec<Cand> = Vec::new();
    for p in &perms {
        let mut sizes = vec![0usize; p.len()];
        split(lines.len(), p, e, 0, &mut sizes, &mut |sizes| {
            let mut of_line = Vec::with_capacity(lines.len());
            for (q, &s) in p.iter().zip(sizes) {
                of_line.extend(std::iter::repeat_n(*q, s));
            }
            let (mut within, mut between) = (0.0f64, f64::INFINITY);
            for w in 1..lines.len() {
                let g = x[lines[w]] - x[lines[w - 1]];
                if of_line[w] == of_line[w - 1] {
                    within = within.max(g);
                } else {
                    between = between.min(g);
                }
            }
            let structure = if within == 0.0 { 0.0 } else { within / between };
            let cost = lines
                .iter()
                .zip(&of_line)
                .map(|(&l, &j)| ((x[l] - delta - e[j].y) / sigma).powi(2))
                .sum();
            cands.push(Cand {
                of_line,
                structure,
                cost,
            });
        });
    }
    // Candidates giving the same labels (orders of unused modes) are one.
    cands.sort_by(|a, b| a.cost.total_cmp(&b.cost));
    cands.dedup_by(|a, b| a.of_line == b.of_line);
    let structural: Vec<&Cand> = cands.iter().filter(|c| c.structure <= 0.3).collect();
    let pool: Vec<&Cand> = if structural.is_empty() {
        cands.iter().collect()
    } else {
        structural
    };
    let best = pool[0];
    let (conf, note) = if pool.len() == 1 {
        (
            1.0,
            if cands.len() > 1 {
                "multiplicity decides within a block of close modes".to_string()
            } else {
                String::new()
            },
        )
    } else {
        (
            1.0 - (-(pool[1].cost - best.cost) / 2.0).exp(),
            "frequency order decides within a block of close modes".to_string(),
        )
    };
    best.of_line
        .iter()
        .map(|&j| (j, conf, note.clone()))
        .collect()
}

fn permutations(v: &[usize]) -> Vec<Vec<usize>> {
    if v.len() <= 1 {
        return vec![v.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..v.len() {
        let mut rest = v.to_vec();
        let h = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, h);
            out.push(p);
        }
    }
    out
}

/// Every way to write `left` as `sizes[k] + ...` with `sizes[k] <= deg(p[k])`.
fn split(
    left: usize,
    p: &[usize],
    e: &[Entry],
    k: usize,
    sizes: &mut Vec<usize>,
    f: &mut dyn FnMut(&[usize]),
) {
    if k == p.len() {
        if left == 0 {
            f(sizes);
        }
        return;
    }
    for s in 0..=e[p[k]].deg.min(left) {
        sizes[k] = s;
        split(left - s, p, e, k + 1, sizes, f);
    }
    sizes[k] = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spectrum::analytic::Cavity;
    use crate::util::Rng;

    fn cyl() -> Vec<Mode> {
        Cavity::Cylinder {
            radius: 1.0,
            height: 0.5,
        }
        .modes(500e6)
    }

    /// Lines of `modes` (each degenerate one split in `deg` lines 1e-4 apart) shifted by
    /// `shift (f / f_last)²` (dispersion) with noise `noise` (relative).
    fn lines_of(modes: &[Mode], shift: f64, noise: f64, seed: u64) -> (Vec<f64>, Vec<String>) {
        let mut r = Rng::new(seed);
        let mut f = Vec::new();
        let mut names = Vec::new();
        let top = modes.last().unwrap().f_hz;
        for m in modes {
            let base = m.f_hz * (1.0 + shift * (m.f_hz / top).powi(2) + noise * r.sym());
            for k in 0..m.degeneracy {
                f.push(base * (1.0 + 1e-4 * k as f64));
                names.push(m.name.clone());
            }
        }
        (f, names)
    }

    #[test]
    fn a_dispersive_shift_with_noise_labels_every_line_and_each_doublet_twice() {
        let modes = cyl();
        assert!(modes.len() > 15);
        let (f, names) = lines_of(&modes, -0.015, 0.001, 1);
        let a = assign(&f, &modes, &Settings::default());
        assert!((a.shift + 0.015).abs() < 1.5e-3, "shift {}", a.shift);
        let mut wrong = 0;
        for (l, want) in a.labels.iter().zip(&names) {
            match &l.mode {
                Some(m) if m.split('+').any(|x| x == want) => {}
                Some(_) => wrong += 1,
                None => assert!(!l.reason.is_empty()),
            }
        }
        assert_eq!(wrong, 0);
        let unlabelled = a.labels.iter().filter(|l| l.mode.is_none()).count();
        assert!(
            unlabelled * 10 <= f.len(),
            "{unlabelled} of {} unlabelled",
            f.len()
        );
        // TM110 (doublet) takes both members.
        let n = a
            .labels
            .iter()
            .filter(|l| l.mode.as_deref() == Some("TM110"))
            .count();
        assert_eq!(n, 2);
    }

    #[test]
    fn a_missing_mode_and_an_extra_line_shift_nothing() {
        let modes = cyl();
        let (mut f, mut names) = lines_of(&modes, -0.01, 0.0005, 2);
        // Drop TM210 (both members); add an unknown line far from every mode.
        let keep: Vec<bool> = names.iter().map(|n| n != "TM210").collect();
        f = f.iter().zip(&keep).filter(|x| *x.1).map(|x| *x.0).collect();
        names = names
            .iter()
            .zip(&keep)
            .filter(|x| *x.1)
            .map(|x| x.0.clone())
            .collect();
        let tm010 = modes[0].f_hz;
        let tm110 = modes[1].f_hz;
        f.push(0.99 * 0.5 * (tm010 + tm110));
        names.push(String::new());
        let a = assign(&f, &modes, &Settings::default());
        for (l, want) in a.labels.iter().zip(&names) {
            if want.is_empty() {
                assert_eq!(l.mode, None, "{l:?}");
                assert!(l.reason.contains("no analytic mode"), "{}", l.reason);
            } else if let Some(m) = &l.mode {
                assert!(m.split('+').any(|x| x == want), "{m} vs {want}");
            }
        }
        assert!(a.labels.iter().all(|l| l.mode.as_deref() != Some("TM210")));
    }

    fn mode(name: &str, f: f64, d: usize) -> Mode {
        Mode {
            name: name.into(),
            f_hz: f,
            degeneracy: d,
            e_axes: [true; 3],
        }
    }

    #[test]
    fn multiplicity_resolves_a_singlet_and_a_doublet_swapped_by_the_mesh() {
        // TM011 (singlet) just below TE211 (doublet); the mesh puts the split doublet below
        // the singlet. Plus well separated modes that set the shift and spread.
        let mut modes = vec![mode("TM011", 300e6, 1), mode("TE211", 301e6, 2)];
        for (k, f) in [100e6, 150e6, 200e6, 250e6, 350e6, 400e6]
            .iter()
            .enumerate()
        {
            modes.push(mode(&format!("M{k}"), *f, 1));
        }
        // Dispersion: -1.5% (f / 400 MHz)².
        let q = |f: f64| f * (1.0 - 0.015 * (f / 400e6).powi(2));
        let mut f: Vec<f64> = [100e6, 150e6, 200e6, 250e6, 350e6, 400e6]
            .iter()
            .enumerate()
            .map(|(k, &f)| q(f) * (1.0 + 0.002 * (k as f64 - 2.5)))
            .collect();
        f.extend([
            q(300e6) * 0.9985,
            q(300e6) * 0.9986, // the TE211 pair
            q(300e6) * 1.003,  // TM011
        ]);
        let a = assign(&f, &modes, &Settings::default());
        let got: Vec<Option<&str>> = a.labels[6..].iter().map(|l| l.mode.as_deref()).collect();
        assert_eq!(got, [Some("TE211"), Some("TE211"), Some("TM011")], "{a:?}");
        assert!(a.labels[6].reason.contains("multiplicity"));
    }

    #[test]
    fn two_singlets_closer_than_the_mesh_error_are_left_unlabelled() {
        let mut modes = vec![mode("TM011", 300e6, 1), mode("TE011", 300.1e6, 1)];
        let others = [100e6, 150e6, 200e6, 250e6, 350e6, 400e6];
        for (k, f) in others.iter().enumerate() {
            modes.push(mode(&format!("M{k}"), *f, 1));
        }
        let q = |f: f64| f * (1.0 - 0.01 * (f / 400e6).powi(2));
        let mut f: Vec<f64> = others
            .iter()
            .enumerate()
            .map(|(k, &f)| q(f) * (1.0 + 0.003 * (k as f64 - 2.5)))
            .collect();
        f.extend([q(300.05e6) * 0.999, q(300.05e6) * 1.001]);
        let a = assign(&f, &modes, &Settings::default());
        for l in &a.labels[6..] {
            assert_eq!(l.mode, None, "{l:?}");
            assert!(
                l.reason.contains("TM011") && l.reason.contains("TE011"),
                "{l:?}"
            );
        }
        // The well separated ones are labelled with high confidence.
        for (k, l) in a.labels[..6].iter().enumerate() {
            assert_eq!(l.mode.as_deref(), Some(format!("M{k}").as_str()));
            assert!(l.confidence > 0.5, "{l:?}");
        }
    }

    #[test]
    fn degenerate_inputs_give_empty_labels() {
        let a = assign(&[], &cyl(), &Settings::default());
        assert!(a.labels.is_empty());
        let a = assign(&[1e8, f64::NAN], &[], &Settings::default());
        assert!(
            a.labels
                .iter()
                .all(|l| l.mode.is_none() && !l.reason.is_empty())
        );
        let a = assign(&[f64::NAN, -1.0], &cyl(), &Settings::default());
        assert!(a.labels.iter().all(|l| l.mode.is_none()));
    }
}
