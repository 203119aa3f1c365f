//! The resonator's spectrum plot (`spectrum.png`, `spectrum.svg`).

use dgatd::solver::ResonatorResult;
use dgatd::spectrum::Spectrum;
use dgatd::{Error, Result};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// `spectrum.png` / `spectrum.svg`: the combined probe spectrum (log magnitude) over the
/// analysed band, analytic resonances as grey vertical lines, found resonances as red marks.
pub fn spectrum_plot(dir: &Path, r: &ResonatorResult) -> Result<Vec<PathBuf>> {
    super::perf::register_font()?;
    let Some(plot) = SpectrumPlot::new(r) else {
        return Ok(vec![]);
    };
    let png = through_tmp(dir, "spectrum", "png", &|p| {
        draw(
            BitMapBackend::new(p, (1100, 650)).into_drawing_area(),
            r,
            &plot,
        )
    })?;
    let svg = through_tmp(dir, "spectrum", "svg", &|p| {
        draw(
            SVGBackend::new(p, (1100, 650)).into_drawing_area(),
            r,
            &plot,
        )
    })?;
    Ok(vec![png, svg])
}

/// What the plot shows of a run's spectrum: its points (MHz, magnitude) up to the analysed
/// band's top bin `kmax`, and the magnitude axis from `lo` to `top` (the largest).
struct SpectrumPlot<'a> {
    spec: &'a Spectrum,
    kmax: usize,
    pts: Vec<(f64, f64)>,
    lo: f64,
    top: f64,
}

impl<'a> SpectrumPlot<'a> {
    /// The plot of `r`'s combined spectrum; None when it is all zero (nothing to plot).
    fn new(r: &'a ResonatorResult) -> Option<Self> {
        let spec = &r.analysis.spectrum;
        let kmax = ((r.fmax_hz / spec.df_hz).ceil() as usize).min(spec.mag.len() - 1);
        let pts: Vec<(f64, f64)> = (1..=kmax)
            .map(|k| (spec.freq(k) / 1e6, spec.mag[k].max(1e-300)))
            .collect();
        let top = pts.iter().map(|p| p.1).fold(0.0, f64::max);
        if !(top > 0.0) {
            return None;
        }
        let bottom = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let lo = (top * 1e-7).max(0.5 * bottom);
        Some(SpectrumPlot {
            spec,
            kmax,
            pts,
            lo,
            top,
        })
    }

    /// The plotted magnitude at `f_mhz` (its nearest bin in the band, at least `lo`).
    fn at(&self, f_mhz: f64) -> f64 {
        let k = ((f_mhz * 1e6 / self.spec.df_hz).round() as usize).clamp(1, self.kmax);
        self.spec.mag[k].max(self.lo)
    }
}

/// A plotting error, as the configuration error of the spectrum plot.
fn plot_error(x: &dyn std::fmt::Display) -> Error {
    Error::config("plot", "spectrum", x.to_string())
}

/// Draws the plot onto `root`: the axes, the analytic resonances (grey lines, named), the
/// spectrum (blue), the extracted resonances (red marks) and the legend.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    r: &ResonatorResult,
    plot: &SpectrumPlot,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let e = plot_error;
    let (lo, top) = (plot.lo, plot.top);
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let xmax = r.fmax_hz / 1e6;
    let mut ch = ChartBuilder::on(&root)
        .caption(
            format!(
                "Probe spectrum ({} steps, dt = {:.4e} s)",
                r.record.steps, r.dt_s
            ),
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax, (lo..top * 3.0).log_scale())
        .map_err(|x| e(&x))?;
    ch.configure_mesh()
        .x_desc("frequency (MHz, as measured)")
        .y_desc("|FFT| (arbitrary)")
        .label_style(("sans-serif", 14))
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()
        .map_err(|x| e(&x))?;
    for m in &r.analysis.matched {
        let f = m.mode.f_hz / 1e6;
        ch.draw_series(std::iter::once(PathElement::new(
            vec![(f, lo), (f, top * 3.0)],
            RGBColor(150, 150, 150).stroke_width(1),
        )))
        .map_err(|x| e(&x))?;
        ch.draw_series(std::iter::once(Text::new(
            m.mode.name.clone(),
            (f, top * 1.6),
            ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90)),
        )))
        .map_err(|x| e(&x))?;
    }
    ch.draw_series(LineSeries::new(
        plot.pts.iter().cloned(),
        BLUE.stroke_width(1),
    ))
    .map_err(|x| e(&x))?
    .label("combined probe spectrum")
    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE.stroke_width(2)));
    ch.draw_series(
        r.peaks()
            .iter()
            .map(|p| TriangleMarker::new((p.f_hz / 1e6, plot.at(p.f_hz / 1e6)), 6, RED.filled())),
    )
    .map_err(|x| e(&x))?
    .label("extracted resonances")
    .legend(|(x, y)| TriangleMarker::new((x + 9, y), 6, RED.filled()));
    ch.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// `dir/{stem}.{ext}` drawn by `f` into a temporary file made anew (a link there is
/// removed, not followed; named `{stem}.tmp.{ext}`: plotters picks the format by the
/// extension) and renamed over its name: never written through a link, never left half
/// drawn. Returns the path.
fn through_tmp(
    dir: &Path,
    stem: &str,
    ext: &str,
    f: &dyn Fn(&Path) -> Result<()>,
) -> Result<PathBuf> {
    let (path, tmp) = (
        dir.join(format!("{stem}.{ext}")),
        dir.join(format!("{stem}.tmp.{ext}")),
    );
    drop(dgatd::internal::create_fresh(&tmp).map_err(|x| Error::io(&tmp, x))?);
    let r = f(&tmp).and_then(|()| std::fs::rename(&tmp, &path).map_err(|x| Error::io(&path, x)));
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(path)
}
