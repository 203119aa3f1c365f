//! `dgatd report`: plots and tables from `dgatd bench` CSV files.
//!
//! - `step_time.{png,svg}`: time per step versus DoFs, one line per device, precision and
//!   step variant (log-log, like Fig. 5 of the seed paper);
//! - `bandwidth_<device>_<precision>.{png,svg}`: fraction of the measured copy bandwidth
//!   per kernel variant versus mesh size;
//! - `report.md`: the speedup table (like the seed's Table I: CPU backend, CSR-SpMV
//!   formulation, custom kernels) and the largest-mesh bandwidth fractions.
//!
//! Text is drawn with the DejaVu Sans font embedded in the binary (no system font
//! libraries needed).

use super::bench::COLUMNS;
use dgatd::{Error, Result};
use plotters::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// One parsed bench row.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub file: String,
    pub host: String,
    pub platform: String,
    pub device: String,
    pub precision: String,
    pub kernel: String,
    pub variant: String,
    pub tets: f64,
    pub dofs: f64,
    pub median_s: f64,
    pub gbs: f64,
    pub frac_copy_bw: f64,
}

/// Columns of [`COLUMNS`] appended after the first released layout (absent in older CSVs).
const OPTIONAL: [&str; 1] = ["frac_roof"];

/// Reads bench CSVs, checking every column of [`COLUMNS`] is present (but the
/// [`OPTIONAL`] ones) and numbers parse.
pub fn read_rows(paths: &[PathBuf]) -> Result<Vec<BenchRow>> {
    let mut out = Vec::new();
    // each file once: the same file named twice (or by another path) counted its rows twice
    let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
    for p in paths {
        let name = p.display().to_string();
        dgatd::internal::regular_file(p).map_err(|e| Error::io(p, e))?;
        let canon = std::fs::canonicalize(p).map_err(|e| Error::io(p, e))?;
        if let Some((_, first)) = seen.iter().find(|(c, _)| *c == canon) {
            return Err(Error::Output {
                path: p.clone(),
                msg: format!(
                    "the same file as {} given before it: its rows would count twice; give each file once",
                    first.display()
                ),
            });
        }
        seen.push((canon, p));
        let file = std::fs::File::open(p).map_err(|e| Error::io(p, e))?;
        // a line (and so a field) of any length is refused, not buffered whole
        let mut r = csv::Reader::from_reader(LineBounded::new(file));
        let headers = r
            .headers()
            .map_err(|e| Error::Output {
                path: p.clone(),
                msg: e.to_string(),
            })?
            .clone();
        check_header(p, &headers)?;
        let col = |c: &str| headers.iter().position(|h| h == c);
        let idx = |c: &str| col(c).unwrap_or(0);
        for (i, rec) in r.records().enumerate() {
            let rec = rec.map_err(|e| Error::Output {
                path: p.clone(),
                msg: e.to_string(),
            })?;
            // the file line the record starts on: a quoted field may span several lines
            // (the record's number was reported as its line)
            let line = rec.position().map_or(i as u64 + 2, |pos| pos.line());
            out.push(bench_row(p, &name, line, &rec, &idx)?);
        }
    }
    if out.is_empty() {
        // (issue 47 round five: the message named no file)
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::config(
            "report",
            names.join(", "),
            "no rows: each file holds its header only (a bench that measured nothing?)",
        ));
    }
    Ok(out)
}

/// Refuses a header that names a column twice (which copy is meant is not known) or lacks a
/// required column.
fn check_header(p: &Path, headers: &csv::StringRecord) -> Result<()> {
    let col = |c: &str| headers.iter().position(|h| h == c);
    // a column given twice: which copy is meant is not known (the first was read)
    for c in COLUMNS {
        let at: Vec<usize> = (headers.iter().enumerate())
            .filter(|(_, h)| *h == c)
            .map(|(i, _)| i + 1)
            .collect();
        if at.len() > 1 {
            return Err(Error::Output {
                path: p.to_path_buf(),
                msg: format!(
                    "line 1: column {c:?} appears {} times in the header (fields {}): not a dgatd bench CSV",
                    at.len(),
                    at.iter()
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    }
    // columns appended later are optional, so older CSVs still read
    for c in COLUMNS.iter().filter(|c| !OPTIONAL.contains(c)) {
        if col(c).is_none() {
            return Err(Error::Output {
                path: p.to_path_buf(),
                msg: format!("missing column {c:?}: not a dgatd bench CSV"),
            });
        }
    }
    Ok(())
}

/// One bench CSV record (starting on file `line` of `p`) as a row: its numbers finite and
/// within what a bench can measure.
fn bench_row(
    p: &Path,
    name: &str,
    line: u64,
    rec: &csv::StringRecord,
    idx: &dyn Fn(&str) -> usize,
) -> Result<BenchRow> {
    // finite and within what a bench can measure (an inf or 1e308 would make the
    // plots' axes endless)
    let num = |c: &str| -> Result<f64> {
        let s = rec.get(idx(c)).unwrap_or("");
        let bad = |why: &str| Error::Output {
            path: p.to_path_buf(),
            msg: format!("line {line}: column {c} = {s:?} {why}"),
        };
        let v = s.parse::<f64>().map_err(|_| bad("is not a number"))?;
        let top = match c {
            "tets" => 1e12,
            "dofs" => 1e14,
            "median_s" => 1e6,
            _ => 1e9,
        };
        // a denormal such as 5e-324 on a log axis made the plot hang: values below
        // 1e-30 (but 0) are no measurement either
        if !(v.is_finite() && (v == 0.0 || v >= 1e-30) && v <= top) {
            return Err(bad(&format!(
                "is not a measured value (finite, 0 or 1e-30 to {top:e})"
            )));
        }
        Ok(v)
    };
    let txt = |c: &str| rec.get(idx(c)).unwrap_or("").to_string();
    Ok(BenchRow {
        file: name.to_string(),
        host: txt("host"),
        platform: txt("platform"),
        device: txt("device"),
        precision: txt("precision"),
        kernel: txt("kernel"),
        variant: txt("variant"),
        tets: num("tets")?,
        dofs: num("dofs")?,
        median_s: num("median_s")?,
        gbs: num("gbs")?,
        frac_copy_bw: num("frac_copy_bw")?,
    })
}

/// The longest line a bench CSV may have (its rows are a few hundred bytes).
const MAX_LINE: usize = 1 << 16;

/// A reader that fails once a line runs past [`MAX_LINE`] bytes, saying which line: a
/// CSV whose field runs on for gigabytes is refused, not buffered whole.
struct LineBounded<R> {
    inner: R,
    line: usize,
    len: usize,
}

impl<R> LineBounded<R> {
    fn new(inner: R) -> Self {
        LineBounded {
            inner,
            line: 1,
            len: 0,
        }
    }
}

impl<R: std::io::Read> std::io::Read for LineBounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.line += 1;
                self.len = 0;
            } else {
                self.len += 1;
                if self.len > MAX_LINE {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "line {} is longer than {MAX_LINE} bytes: not a dgatd bench CSV",
                            self.line
                        ),
                    ));
                }
            }
        }
        Ok(n)
    }
}

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Registers the embedded DejaVu Sans as "sans-serif" for plotters.
pub fn register_font() -> Result<()> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).map_err(|_| {
        Error::config(
            "font",
            "DejaVuSans.ttf",
            "embedded font could not be loaded",
        )
    })
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        .split('_')
        .filter(|x| !x.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

fn short(dev: &str) -> String {
    dev.chars().take(24).collect()
}

/// A row's device as a key: (CPU backend?, full name). Series are keyed on it, never on the
/// shortened label (two devices equal in their first 24 characters were one series).
type DevKey<'a> = (bool, &'a str);

fn dev_key(r: &BenchRow) -> DevKey<'_> {
    (r.platform == "cpu-backend", r.device.as_str())
}

/// The label of each device of the rows in plots: its name cut to 24 characters (the CPU
/// backend named as such), and where two devices' labels would be equal, ` #2`, ` #3`, ...
/// after the later ones (in the order of their full names), so that no two are alike.
struct DeviceLabels<'a> {
    of: BTreeMap<DevKey<'a>, String>,
}

impl<'a> DeviceLabels<'a> {
    fn new(rows: &'a [BenchRow]) -> Self {
        let keys: std::collections::BTreeSet<DevKey> = rows.iter().map(dev_key).collect();
        let mut used = std::collections::HashSet::new();
        let mut of = BTreeMap::new();
        for k in keys {
            let base = if k.0 {
                format!("CPU backend ({})", short(k.1))
            } else {
                short(k.1)
            };
            let mut label = base.clone();
            let mut n = 2;
            while !used.insert(label.clone()) {
                label = format!("{base} #{n}");
                n += 1;
            }
            of.insert(k, label);
        }
        DeviceLabels { of }
    }

    /// Series label of a row's device.
    fn who(&self, r: &'a BenchRow) -> &str {
        self.of.get(&dev_key(r)).map(String::as_str).unwrap_or("")
    }
}

pub(crate) type Series = BTreeMap<String, Vec<(f64, f64)>>;

fn draw_series<'a, DB: DrawingBackend + 'a, Y: plotters::coord::ranged1d::Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<plotters::coord::combinators::LogCoord<f64>, Y>>,
    series: &Series,
    title: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let perr = |e: &dyn std::fmt::Display| Error::config("plot", title, e.to_string());
    // 20 distinguishable colours (Tableau 20).
    const C: [(u8, u8, u8); 20] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
        (174, 199, 232),
        (255, 187, 120),
        (152, 223, 138),
        (255, 152, 150),
        (197, 176, 213),
        (196, 156, 148),
        (247, 182, 210),
        (0, 0, 0),
        (219, 219, 141),
        (158, 218, 229),
    ];
    let colors: Vec<RGBColor> = C.iter().map(|&(r, g, b)| RGBColor(r, g, b)).collect();
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = colors[i % colors.len()];
        let mut p = pts.clone();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(p.clone(), c.stroke_width(2)))
            .map_err(|e| perr(&e))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        chart
            .draw_series(p.iter().map(|&(x, y)| Circle::new((x, y), 3, c.filled())))
            .map_err(|e| perr(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| perr(&e))?;
    Ok(())
}

fn plot_lines<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &Series,
    logy: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let perr = |e: &dyn std::fmt::Display| Error::config("plot", title, e.to_string());
    root.fill(&WHITE).map_err(|e| perr(&e))?;
    let pts = series.values().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, 0.0f64, f64::INFINITY, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !(x1 > 0.0 && y1 > 0.0) {
        return Err(Error::config("plot", title, "no positive data"));
    }
    let xr = (x0 * 0.8)..(x1 * 1.25);
    if logy {
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(xr.log_scale(), ((y0 * 0.7)..(y1 * 1.5)).log_scale())
            .map_err(|e| perr(&e))?;
        chart
            .configure_mesh()
            .x_desc(xlabel)
            .y_desc(ylabel)
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .draw()
            .map_err(|e| perr(&e))?;
        draw_series(&mut chart, series, title)?;
    } else {
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(xr.log_scale(), 0.0..(y1 * 1.15).max(1.1))
            .map_err(|e| perr(&e))?;
        chart
            .configure_mesh()
            .x_desc(xlabel)
            .y_desc(ylabel)
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .draw()
            .map_err(|e| perr(&e))?;
        draw_series(&mut chart, series, title)?;
    }
    root.present().map_err(|e| perr(&e))?;
    Ok(())
}

/// Title and axis labels of a plot.
pub(crate) struct Labels<'a> {
    pub title: &'a str,
    pub x: &'a str,
    pub y: &'a str,
}

pub(crate) fn both_formats(
    dir: &Path,
    stem: &str,
    l: &Labels,
    s: &Series,
    logy: bool,
    out: &mut Vec<PathBuf>,
) -> Result<()> {
    // each plot is drawn into a file made afresh beside its name (create_fresh: no link
    // followed) and renamed over it, so a link at the name is replaced, not written through
    let png = dir.join(format!("{stem}.png"));
    fresh_plot(&png, |p| {
        plot_lines(
            BitMapBackend::new(p, (1100, 750)).into_drawing_area(),
            l.title,
            l.x,
            l.y,
            s,
            logy,
        )
    })?;
    let svg = dir.join(format!("{stem}.svg"));
    fresh_plot(&svg, |p| {
        plot_lines(
            SVGBackend::new(p, (1100, 750)).into_drawing_area(),
            l.title,
            l.x,
            l.y,
            s,
            logy,
        )
    })?;
    out.push(png);
    out.push(svg);
    Ok(())
}

/// Draws a plot with `draw` into `.tmp-NAME` beside `path` (the extension kept: the PNG
/// encoder goes by it), made anew ([`dgatd::internal::create_fresh`]),
/// then renames it to `path`: an entry at `path` (a link to a file elsewhere) is replaced,
/// never written through.
fn fresh_plot(path: &Path, draw: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".tmp-{name}"));
    dgatd::internal::create_fresh(&tmp).map_err(|e| Error::io(&tmp, e))?;
    if let Err(e) = draw(&tmp) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

fn fmt_ms(s: f64) -> String {
    format!("{:.4}", s * 1e3)
}

/// Writes the plots and `report.md` into `dir`; returns the files written.
pub fn write_report(rows: &[BenchRow], dir: &Path) -> Result<Vec<PathBuf>> {
    register_font()?;
    // a file or a dangling link at --out is named as such (not "File exists")
    dgatd::report::OutputDir::check_path(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut out = Vec::new();
    step_time_plot(rows, dir, &mut out)?;
    bandwidth_plots(rows, dir, &mut out)?;
    let md = report_md(rows, &out);
    let p = dir.join("report.md");
    dgatd::internal::write_atomic(&p, md.as_bytes())?;
    out.push(p);
    Ok(out)
}

/// 1. `step_time.{png,svg}`: the time per step versus DoFs, one line per device,
///    precision and step variant (none without step rows).
fn step_time_plot(rows: &[BenchRow], dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let names = DeviceLabels::new(rows);
    let mut s: Series = BTreeMap::new();
    for r in rows.iter().filter(|r| r.kernel == "step" && r.dofs > 0.0) {
        s.entry(format!("{} {} {}", names.who(r), r.precision, r.variant))
            .or_default()
            .push((r.dofs, r.median_s));
    }
    if !s.is_empty() {
        let l = Labels {
            title: "Time per leapfrog step",
            x: "DoFs",
            y: "seconds per step",
        };
        both_formats(dir, "step_time", &l, &s, true, out)?;
    }
    Ok(())
}

/// 2. `bandwidth_<device>_<precision>.{png,svg}`: the fraction of the copy bandwidth per
///    kernel, one chart per device (by its full name) and precision. Where two charts'
///    names would be equal (`GPU-A` and `GPU A`), the later one (in the order of the full
///    names) gets `_2`, `_3`, ...: no chart replaces another.
fn bandwidth_plots(rows: &[BenchRow], dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let names = DeviceLabels::new(rows);
    let mut groups: BTreeMap<(DevKey, &str), Series> = BTreeMap::new();
    for r in rows
        .iter()
        // kernels only (not the host's preprocessing time, which moves no modelled bytes)
        .filter(|r| {
            r.tets > 0.0 && r.kernel != "step" && r.frac_copy_bw.is_finite() && r.frac_copy_bw > 0.0
        })
    {
        groups
            .entry((dev_key(r), r.precision.as_str()))
            .or_default()
            .entry(format!("{} {}", r.kernel, r.variant))
            .or_default()
            .push((r.tets, r.frac_copy_bw));
    }
    let mut stems = std::collections::HashSet::new();
    for ((dev, p), s) in &groups {
        let label = names.of.get(dev).map(String::as_str).unwrap_or("");
        let title = format!("{label} {p}: fraction of measured copy bandwidth");
        let l = Labels {
            title: &title,
            x: "tetrahedra",
            y: "achieved / copy bandwidth",
        };
        let who = if dev.0 {
            format!("CPU backend ({})", short(dev.1))
        } else {
            short(dev.1)
        };
        let base = format!("bandwidth_{}_{}", slug(&who), slug(p));
        let mut stem = base.clone();
        let mut n = 2;
        while !stems.insert(stem.clone()) {
            stem = format!("{base}_{n}");
            n += 1;
        }
        both_formats(dir, &stem, &l, s, false, out)?;
    }
    Ok(())
}

/// `s` as one cell of a Markdown table: `|` escaped (`\\|`), and newlines and other
/// control characters made spaces (a device name holding either broke the table's rows).
fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// 3. `report.md`: the source files, the speedup table, the bandwidth table at the
///    largest meshes and the PNG plots among `plots`.
fn report_md(rows: &[BenchRow], plots: &[PathBuf]) -> String {
    let mut md =
        String::from("# dgatd performance report\n\nGenerated by `dgatd report` from:\n\n");
    let mut files: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
    files.dedup();
    for f in files {
        md.push_str(&format!("- `{}`\n", cell(f)));
    }
    md.push_str("\n## Speedup of one time step (like Table I of the seed paper)\n\n");
    md.push_str("CPU = the CPU backend (`step tet+factored`, same host when available); CSR-SpMV = primal block kernel + the seed's CSR dual update (`tet+csr_vector`); custom = primal block kernel + factored dual update (`tet+factored`).\n\n");
    md.push_str("| device | precision | tets | CPU ms | CSR-SpMV ms | speedup | custom ms | speedup |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    speedup_table(rows, &mut md);
    md.push_str("\n`*`: CPU backend timing from another host.\n\n## Fraction of copy bandwidth at the largest mesh of each device\n\n| device | precision | tets | kernel | variant | GB/s | fraction |\n| --- | --- | ---: | --- | --- | ---: | ---: |\n");
    largest_mesh_table(rows, &mut md);
    md.push_str("\n## Plots\n\n");
    for f in plots
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "png"))
    {
        if let Some(n) = f.file_name() {
            md.push_str(&format!("![{0}]({0})\n\n", n.to_string_lossy()));
        }
    }
    md
}

/// The key of a step row in [`StepRows`]: (variant, precision, tets, CPU backend?,
/// device; "" for the CPU backend).
type StepKey<'a> = (&'a str, &'a str, u64, bool, &'a str);

/// The step rows by [`StepKey`], with and without the host: the first row of each key in
/// file order, found in O(1) (a scan per table row made the report quadratic in the rows).
struct StepRows<'a> {
    by_host: HashMap<(StepKey<'a>, &'a str), &'a BenchRow>,
    any_host: HashMap<StepKey<'a>, &'a BenchRow>,
}

impl<'a> StepRows<'a> {
    /// Indexes the step rows of `rows`.
    fn new(rows: &'a [BenchRow]) -> Self {
        let mut by_host: HashMap<(StepKey, &str), &BenchRow> = Default::default();
        let mut any_host: HashMap<StepKey, &BenchRow> = Default::default();
        for r in rows.iter().filter(|r| r.kernel == "step") {
            let cpu = r.platform == "cpu-backend";
            let dev = if cpu { "" } else { r.device.as_str() };
            let k = (
                r.variant.as_str(),
                r.precision.as_str(),
                r.tets.to_bits(),
                cpu,
                dev,
            );
            by_host.entry((k, r.host.as_str())).or_insert(r);
            any_host.entry(k).or_insert(r);
        }
        StepRows { by_host, any_host }
    }

    /// The first step row of variant `v` in precision `p` at `t` tets on the CPU backend
    /// (`plat_cpu`) or device `dev`, on `host` (any host: None).
    fn find(
        &self,
        host: Option<&str>,
        plat_cpu: bool,
        dev: &str,
        p: &str,
        v: &str,
        t: f64,
    ) -> Option<&'a BenchRow> {
        let k = (v, p, t.to_bits(), plat_cpu, if plat_cpu { "" } else { dev });
        match host {
            Some(h) => self.by_host.get(&(k, h)).copied(),
            None => self.any_host.get(&k).copied(),
        }
    }
}

/// The speedup table's lines: per (device, precision, host, tets) of a device's
/// `tet+factored` step, the CPU backend's step (same host, else another's, marked `*`),
/// the CSR-SpMV step and the custom step, with their speedups over the CPU.
fn speedup_table(rows: &[BenchRow], md: &mut String) {
    let steps = StepRows::new(rows);
    let mut keys: Vec<(String, String, String, u64)> = rows
        .iter()
        .filter(|r| {
            r.platform != "cpu-backend" && r.kernel == "step" && r.variant == "tet+factored"
        })
        .map(|r| {
            (
                r.device.clone(),
                r.precision.clone(),
                r.host.clone(),
                r.tets as u64,
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    let ms = |x: Option<&BenchRow>| x.map(|r| fmt_ms(r.median_s)).unwrap_or_else(|| "-".into());
    for (dev, p, host, t) in keys {
        let t = t as f64;
        let cpu = (steps
            .find(Some(&host), true, "", &p, "tet+factored", t)
            .map(|r| (r, "")))
        .or_else(|| (steps.find(None, true, "", &p, "tet+factored", t)).map(|r| (r, "*")));
        let csr = steps.find(Some(&host), false, &dev, &p, "tet+csr_vector", t);
        let cus = steps.find(Some(&host), false, &dev, &p, "tet+factored", t);
        let sp = |x: Option<&BenchRow>| match (cpu, x) {
            (Some((c, _)), Some(x)) => format!("{:.1}", c.median_s / x.median_s),
            _ => "-".into(),
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            cell(&dev),
            cell(&p),
            t as u64,
            cpu.map(|(c, m)| format!("{}{m}", fmt_ms(c.median_s)))
                .unwrap_or_else(|| "-".into()),
            ms(csr),
            sp(csr),
            ms(cus),
            sp(cus)
        ));
    }
}

/// The bandwidth table's lines: the rows of each (device, precision) at its largest mesh,
/// in file order (preprocessing rows left out).
fn largest_mesh_table(rows: &[BenchRow], md: &mut String) {
    let mut largest: BTreeMap<(&str, &str), (f64, Vec<&BenchRow>)> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.tets > 0.0 && r.kernel != "preprocess")
    {
        let e = largest
            .entry((r.device.as_str(), r.precision.as_str()))
            .or_insert((0.0, vec![]));
        if r.tets > e.0 {
            *e = (r.tets, vec![]);
        }
        if r.tets == e.0 {
            e.1.push(r);
        }
    }
    for ((dev, p), (t, at)) in &largest {
        for r in at {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {:.0} | {:.3} |\n",
                cell(dev),
                cell(p),
                *t as u64,
                cell(&r.kernel),
                cell(&r.variant),
                r.gbs,
                r.frac_copy_bw
            ));
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// bench.csv files written by dgatd bench (rows of several machines may be mixed).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
}

/// `dgatd report`.
pub fn command(a: &ReportArgs) -> Result<()> {
    let rows = read_rows(&a.files)?;
    let files = write_report(&rows, &a.out)?;
    super::outln!(
        "{} rows; wrote {}",
        rows.len(),
        dgatd::report::path_list(&files)
    );
    Ok(())
}
