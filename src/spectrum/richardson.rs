//! Richardson extrapolation of a frequency measured at mesh sizes `h, h/2, h/4, …`: the
//! arithmetic of refinement ladders ([`crate::solver::converge`], which documents the rule).

/// A Richardson-extrapolated frequency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extrapolated {
    pub f_hz: f64,
    /// Error estimate (Hz, ≥ 0).
    pub error_hz: f64,
    /// Observed order of convergence (None where `p = 2` was assumed).
    pub order: Option<f64>,
    /// Number of levels the mode was found at (consecutive, ending at the finest).
    pub levels: usize,
}

/// Richardson extrapolation of `f` at mesh sizes `h, h/2, h/4, …` (ascending refinement).
pub fn richardson(f: &[f64]) -> Option<Extrapolated> {
    let n = f.len();
    if n < 2 || f.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (f1, f2) = (f[n - 2], f[n - 1]);
    let d2 = f2 - f1;
    let assumed = f2 + d2 / 3.0;
    if n >= 3 {
        let d1 = f1 - f[n - 3];
        if d1 * d2 > 0.0 && d2.abs() < d1.abs() {
            let p = (d1 / d2).log2();
            let fx = f2 + d2 / (2f64.powf(p) - 1.0);
            return Some(Extrapolated {
                f_hz: fx,
                error_hz: (fx - f2).abs().max((fx - assumed).abs()),
                order: Some(p),
                levels: n,
            });
        }
    }
    Some(Extrapolated {
        f_hz: assumed,
        error_hz: if n == 2 { d2.abs() / 3.0 } else { d2.abs() },
        order: None,
        levels: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn richardson_recovers_a_second_and_a_first_order_limit() {
        // f_h = 100 + 3 h² (h = 1, 1/2, 1/4): exact limit, order 2
        let f: Vec<f64> = [1.0, 0.5, 0.25]
            .iter()
            .map(|h| 100.0 + 3.0 * h * h)
            .collect();
        let e = richardson(&f).unwrap();
        assert!((e.f_hz - 100.0).abs() < 1e-12, "{e:?}");
        assert!((e.order.unwrap() - 2.0).abs() < 1e-12);
        // first order: limit and order 1 recovered; the estimate covers the p = 2 guess
        let f: Vec<f64> = [1.0, 0.5, 0.25, 0.125]
            .iter()
            .map(|h| 7.0 - 0.4 * h)
            .collect();
        let e = richardson(&f).unwrap();
        assert!((e.f_hz - 7.0).abs() < 1e-12 && (e.order.unwrap() - 1.0).abs() < 1e-12);
        assert!(e.error_hz >= (7.0 - (f[3] + (f[3] - f[2]) / 3.0)).abs() - 1e-15);
        assert_eq!(e.levels, 4);
        // two levels: p = 2 assumed, estimate the size of the correction
        let e = richardson(&[10.0, 10.3]).unwrap();
        assert!((e.f_hz - 10.4).abs() < 1e-12 && e.order.is_none());
        assert!((e.error_hz - 0.1).abs() < 1e-12);
        // oscillating differences: no order claimed, the last difference as the estimate
        let e = richardson(&[1.0, 1.1, 1.05]).unwrap();
        assert!(e.order.is_none() && (e.error_hz - 0.05).abs() < 1e-12);
        assert!(richardson(&[1.0]).is_none());
    }
}
