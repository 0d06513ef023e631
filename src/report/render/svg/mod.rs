//! Plain SVG charts for the HTML report: bars with confidence whiskers, lines
//! on linear, logarithmic or "nines" (percentile) axes, shaded bands and
//! markers. Hand-written rather than a plotting crate: the charts are few and
//! simple, the output must be self-contained and deterministic (snapshot
//! tests), and the browser renders the text, so no font files are needed.

use std::fmt::Write;

/// Colours for series, one per filesystem (colour-blind friendly: Okabe-Ito).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
];

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    /// log10; values <= 0 are clamped to the axis minimum.
    Log,
    /// Percentiles: position = -log10(1 - p/100), so 90, 99, 99.9 are evenly spaced.
    Nines,
}

/// A drawn series.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub color: String,
    pub points: Vec<(f64, f64)>,
    /// Points only (a scatter), no line.
    pub dots: bool,
    pub dashed: bool,
    /// Shown on hover over a line (`<title>`); empty for none.
    pub tip: String,
}

/// A shaded x range (a probe phase) or a marked one (a stall).
#[derive(Debug, Clone)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
    pub color: String,
    pub opacity: f64,
}

/// A line or scatter chart.
#[derive(Debug, Clone)]
pub struct XyChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    /// Format of tick values (latency in ns -> "1 ms").
    pub y_fmt: fn(f64) -> String,
    pub x_fmt: fn(f64) -> String,
}

const W: f64 = 560.0;
const H: f64 = 300.0;
const ML: f64 = 70.0;
const MR: f64 = 30.0;
const MT: f64 = 30.0;
const MB: f64 = 60.0;

/// Escapes text for SVG and HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn fwd(scale: Scale, v: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log => v.max(1e-300).log10(),
        Scale::Nines => -(1.0 - (v / 100.0).min(0.999_999_9)).log10(),
    }
}

/// Mantissas of log-axis ticks, densest first.
const LOG_MANTISSAS: [&[f64]; 4] = [&[1.0, 2.0, 3.0, 5.0, 7.0], &[1.0, 2.0, 5.0], &[1.0, 3.0], &[1.0]];

/// Smallest gap, in decades, between neighbouring ticks of each mantissa
/// set: log10(7/5), log10(2), log10(3), one decade.
const LOG_GAPS: [f64; 4] = [0.146_128, std::f64::consts::LOG10_2, 0.477_121, 1.0];

/// Fewest pixels between two labelled ticks (11px text and some air).
const MIN_TICK_PX: f64 = 16.0;

/// One tick of an axis: where it is, and whether it gets a label (a log
/// axis over many decades keeps its 2 and 5 × 10^k as unlabelled grid lines).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub labelled: bool,
}

/// Ticks of a log axis from `lo` to `hi` drawn over `px` pixels: labels
/// between decades (1, 2, 5 × 10^k; 1, 2, 3, 5, 7 × 10^k on a short range;
/// 1, 3 × 10^k on a longer one) as long as neighbouring labels stay
/// `MIN_TICK_PX` apart; over more decades than that, the decades are
/// labelled (every k-th if even they are too close). With 1, 3 or decades
/// only, 2 and 5 × 10^k are drawn as unlabelled grid lines.
pub fn log_ticks(lo: f64, hi: f64, px: f64) -> Vec<Tick> {
    let (lo, hi) = (lo.max(1e-300), hi.max(lo.max(1e-300)));
    let decades = (hi / lo).log10().max(1e-9);
    let px_per_decade = px / decades;
    let within = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let at = |set: &[f64]| -> Vec<f64> {
        (a..=b)
            .flat_map(|e| set.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|&v| within(v))
            .collect()
    };
    if let Some(k) = (0..LOG_MANTISSAS.len()).find(|&k| LOG_GAPS[k] * px_per_decade >= MIN_TICK_PX) {
        let labelled = at(LOG_MANTISSAS[k]);
        // the sparser sets keep 2 and 5 as grid lines
        let minor = if k >= 2 { at(&[2.0, 5.0]) } else { Vec::new() };
        let mut t: Vec<Tick> = labelled
            .into_iter()
            .map(|value| Tick { value, labelled: true })
            .chain(minor.into_iter().map(|value| Tick { value, labelled: false }))
            .collect();
        t.sort_by(|x, y| x.value.total_cmp(&y.value));
        return t;
    }
    // every `step`-th decade labelled, the others as lines
    let step = (MIN_TICK_PX / px_per_decade).ceil().max(1.0) as i32;
    (a..=b)
        .map(|e| Tick {
            value: 10f64.powi(e),
            labelled: e.rem_euclid(step) == 0,
        })
        .filter(|t| within(t.value))
        .collect()
}

/// Tick values for a range on a scale (a log scale: as `log_ticks` over a
/// chart's plot height, labelled ticks only).
fn ticks(scale: Scale, lo: f64, hi: f64) -> Vec<f64> {
    match scale {
        Scale::Nines => [50.0, 90.0, 99.0, 99.9, 99.99, 99.999]
            .into_iter()
            .filter(|&p| p >= lo - 1e-9 && p <= hi + 1e-9)
            .collect(),
        Scale::Log => log_ticks(lo, hi, H - MT - MB)
            .into_iter()
            .filter(|t| t.labelled)
            .map(|t| t.value)
            .collect(),
        Scale::Linear => {
            let span = (hi - lo).max(1e-12);
            let raw = span / 5.0;
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .into_iter()
                .map(|m| m * mag)
                .find(|s| span / s <= 6.0)
                .unwrap_or(10.0 * mag);
            let mut t = (lo / step).ceil() * step;
            let mut v = Vec::new();
            while t <= hi + step * 1e-9 {
                v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
                t += step;
            }
            v
        }
    }
}

/// The nearest 1, 2 or 5 × 10^k at or below `v` (`down`) or at or above it.
fn round_125(v: f64, down: bool) -> f64 {
    let e = v.log10().floor();
    let base = 10f64.powf(e);
    let steps = [1.0, 2.0, 5.0, 10.0];
    let m = v / base;
    let pick = if down {
        steps
            .iter()
            .rev()
            .find(|&&s| s <= m * (1.0 + 1e-9))
            .copied()
            .unwrap_or(1.0)
    } else {
        steps.iter().find(|&&s| s >= m * (1.0 - 1e-9)).copied().unwrap_or(10.0)
    };
    pick * base
}

/// The extent of values; on a log scale widened to the 1, 2 or 5 × 10^k
/// around them.
fn extent(scale: Scale, vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals {
        if scale == Scale::Log && v <= 0.0 {
            continue;
        }
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if scale == Scale::Log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    match scale {
        // to the 1-2-5 steps around the data (labelled, as log_ticks labels them)
        Scale::Log => {
            let (a, b) = (round_125(lo, true), round_125(hi, false));
            (a, if b > a { b } else { round_125(a * 1.5, false) })
        }
        Scale::Linear => {
            let lo = lo.min(0.0);
            (lo, if hi <= lo { lo + 1.0 } else { hi * 1.05 })
        }
        Scale::Nines => (lo.min(50.0), hi),
    }
}

/// Where a chart's data goes on the page: the scaled extent of each axis.
struct Frame {
    x_scale: Scale,
    y_scale: Scale,
    fx0: f64,
    fx1: f64,
    fy0: f64,
    fy1: f64,
    y0: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        ML + (fwd(self.x_scale, x) - self.fx0) / (self.fx1 - self.fx0) * (W - ML - MR)
    }

    fn py(&self, y: f64) -> f64 {
        H - MB - (fwd(self.y_scale, y.max(self.y0)) - self.fy0) / (self.fy1 - self.fy0) * (H - MT - MB)
    }
}

fn header(s: &mut String, title: &str, w: f64, h: f64) {
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}"><title>{t}</title><rect width="{w}" height="{h}" fill="#fff"/><text x="{x}" y="18" text-anchor="middle" class="t">{t}</text>"##,
        t = esc(title),
        x = w / 2.0
    );
}

impl XyChart {
    pub fn render(&self) -> String {
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let (x0, x1) = extent(
            self.x_scale,
            pts().map(|p| p.0).chain(self.bands.iter().flat_map(|b| [b.from, b.to])),
        );
        let (y0, y1) = extent(self.y_scale, pts().map(|p| p.1));
        let f = Frame {
            x_scale: self.x_scale,
            y_scale: self.y_scale,
            fx0: fwd(self.x_scale, x0),
            fx1: fwd(self.x_scale, x1).max(fwd(self.x_scale, x0) + 1e-9),
            fy0: fwd(self.y_scale, y0),
            fy1: fwd(self.y_scale, y1).max(fwd(self.y_scale, y0) + 1e-9),
            y0,
        };
        let mut s = String::new();
        header(&mut s, &self.title, W, H);
        self.draw_bands(&mut s, &f);
        self.draw_axes(&mut s, &f, (x0, x1), (y0, y1));
        self.draw_series(&mut s, &f);
        legend(
            &mut s,
            self.series.iter().map(|x| (x.label.as_str(), x.color.as_str())),
            H - 12.0,
        );
        s.push_str("</svg>");
        s
    }

    fn draw_bands(&self, s: &mut String, f: &Frame) {
        for b in &self.bands {
            let (a, c) = (f.px(b.from), f.px(b.to));
            let _ = write!(
                s,
                r#"<rect x="{a:.1}" y="{MT}" width="{:.1}" height="{:.1}" fill="{}" fill-opacity="{}"><title>{}</title></rect>"#,
                (c - a).max(1.0),
                H - MT - MB,
                b.color,
                b.opacity,
                esc(&b.label)
            );
            if !b.label.is_empty() && c - a > 30.0 {
                let _ = write!(
                    s,
                    r#"<text x="{:.1}" y="{}" text-anchor="middle" class="b">{}</text>"#,
                    (a + c) / 2.0,
                    MT + 12.0,
                    esc(&b.label)
                );
            }
        }
    }

    /// Axes, grid, ticks and the axis labels.
    fn draw_axes(&self, s: &mut String, f: &Frame, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) {
        let _ = write!(
            s,
            r##"<path d="M{ML} {MT}V{yb}H{xr}" fill="none" stroke="#333"/>"##,
            yb = H - MB,
            xr = W - MR
        );
        let y_ticks = match self.y_scale {
            Scale::Log => log_ticks(y0, y1, H - MT - MB),
            _ => ticks(self.y_scale, y0, y1)
                .into_iter()
                .map(|value| Tick { value, labelled: true })
                .collect(),
        };
        for t in y_ticks {
            let y = f.py(t.value);
            if !t.labelled {
                let _ = write!(
                    s,
                    r##"<line x1="{ML}" x2="{xr}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/>"##,
                    xr = W - MR
                );
                continue;
            }
            let _ = write!(
                s,
                r##"<line x1="{ML}" x2="{xr}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{tx}" y="{ty:.1}" text-anchor="end" class="k yt">{}</text>"##,
                esc(&(self.y_fmt)(t.value)),
                xr = W - MR,
                tx = ML - 4.0,
                ty = y + 4.0
            );
        }
        for t in ticks(self.x_scale, x0, x1) {
            let x = f.px(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{yb}" y2="{yt}" stroke="#333"/><text x="{x:.1}" y="{ty}" text-anchor="middle" class="k">{}</text>"##,
                esc(&(self.x_fmt)(t)),
                yb = H - MB,
                yt = H - MB + 4.0,
                ty = H - MB + 16.0
            );
        }
        let _ = write!(
            s,
            r#"<text x="{x}" y="{y}" text-anchor="middle" class="k">{}</text><text transform="translate(14 {ym}) rotate(-90)" text-anchor="middle" class="k">{}</text>"#,
            esc(&self.x_label),
            esc(&self.y_label),
            x = (ML + W - MR) / 2.0,
            y = H - MB + 32.0,
            ym = (MT + H - MB) / 2.0
        );
    }

    /// Each series as dots or a line.
    fn draw_series(&self, s: &mut String, f: &Frame) {
        for sr in &self.series {
            let mut visible = sr.points.iter().filter(|p| self.y_scale != Scale::Log || p.1 > 0.0);
            if sr.dots {
                for p in visible {
                    let _ = write!(
                        s,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="2" fill="{}"/>"#,
                        f.px(p.0),
                        f.py(p.1),
                        sr.color
                    );
                }
            } else if let Some(first) = visible.next() {
                let mut d = format!("M{:.1} {:.1}", f.px(first.0), f.py(first.1));
                for p in visible {
                    let _ = write!(d, "L{:.1} {:.1}", f.px(p.0), f.py(p.1));
                }
                let dash = if sr.dashed { r#" stroke-dasharray="4 3""# } else { "" };
                if sr.tip.is_empty() {
                    let _ = write!(
                        s,
                        r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.5"{dash}/>"#,
                        sr.color
                    );
                } else {
                    let _ = write!(
                        s,
                        r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.5"{dash}><title>{}</title></path>"#,
                        sr.color,
                        esc(&sr.tip)
                    );
                }
            }
        }
    }
}

/// A legend row along the bottom; repeated labels (one per repeat) once.
fn legend<'a>(s: &mut String, items: impl Iterator<Item = (&'a str, &'a str)>, y: f64) {
    let mut seen: Vec<&str> = Vec::new();
    let mut x = ML;
    for (label, color) in items {
        if seen.contains(&label) || label.is_empty() {
            continue;
        }
        seen.push(label);
        let _ = write!(
            s,
            r#"<rect x="{x:.0}" y="{:.0}" width="10" height="10" fill="{color}"/><text x="{:.0}" y="{y:.0}" class="k">{}</text>"#,
            y - 9.0,
            x + 14.0,
            esc(label)
        );
        x += 24.0 + 6.5 * label.chars().count() as f64;
    }
}

/// One bar: a filesystem's mean with its 95% CI, and the ratio to the baseline.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub ci: Option<f64>,
    /// "0.63×*"
    pub note: String,
    pub color: String,
}

/// Bars side by side under one label (a workload's filesystems).
#[derive(Debug, Clone)]
pub struct BarGroup {
    pub label: String,
    pub bars: Vec<Bar>,
}

/// Grouped bars with error whiskers: per group one bar per filesystem, its
/// label and note (the ratio) under it, the group's label under those; the
/// legend names the colours. The width grows with the bars and labels.
pub fn grouped_bars(
    title: &str,
    groups: &[BarGroup],
    fmt: fn(f64) -> String,
    legend_items: &[(String, String)],
) -> String {
    const BH: f64 = 250.0;
    const GAP: f64 = 18.0; // between groups
    let (l, r, t, b) = (58.0, 10.0, 28.0, 74.0);
    let text_w = |s: &str| 6.2 * s.chars().count() as f64;
    // every bar's slot fits its label and note
    let slot = groups
        .iter()
        .flat_map(|g| &g.bars)
        .map(|x| text_w(&x.label).max(text_w(&x.note)) + 8.0)
        .fold(34.0f64, f64::max);
    let widths: Vec<f64> = groups
        .iter()
        .map(|g| (slot * g.bars.len() as f64).max(text_w(&g.label) + 6.0))
        .collect();
    let plot_w = widths.iter().sum::<f64>() + GAP * (groups.len().max(1) as f64);
    let legend_w: f64 = legend_items.iter().map(|(n, _)| 24.0 + text_w(n)).sum();
    let bw = (l + plot_w + r)
        .max(text_w(title) * 1.1 + 20.0)
        .max(legend_w + l)
        .max(240.0)
        .ceil();
    let top = groups
        .iter()
        .flat_map(|g| &g.bars)
        .map(|x| x.value + x.ci.unwrap_or(0.0))
        .fold(0.0f64, f64::max);
    let (_, hi) = extent(Scale::Linear, [0.0, top].into_iter());
    let py = |v: f64| BH - b - v.max(0.0) / hi * (BH - t - b);
    let mut s = String::new();
    header(&mut s, title, bw, BH);
    for tk in ticks(Scale::Linear, 0.0, hi) {
        let y = py(tk);
        let _ = write!(
            s,
            r##"<line x1="{l}" x2="{x2}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{tx}" y="{ty:.1}" text-anchor="end" class="k">{}</text>"##,
            esc(&fmt(tk)),
            x2 = bw - r,
            tx = l - 4.0,
            ty = y + 4.0
        );
    }
    let mut gx = l + GAP / 2.0;
    for (g, gw) in groups.iter().zip(&widths) {
        let x0 = gx + (gw - slot * g.bars.len() as f64) / 2.0;
        for (i, bar) in g.bars.iter().enumerate() {
            let x = x0 + slot * i as f64 + slot * 0.15;
            let w = slot * 0.7;
            let y = py(bar.value);
            let _ = write!(
                s,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{:.1}" fill="{}"><title>{} {}: {}{}</title></rect>"#,
                (BH - b - y).max(0.0),
                bar.color,
                esc(&g.label),
                esc(&bar.label),
                esc(&fmt(bar.value)),
                bar.ci.map(|c| format!(" ± {}", fmt(c))).unwrap_or_default()
            );
            if let Some(ci) = bar.ci {
                let (cx, y1, y2) = (x + w / 2.0, py(bar.value - ci), py(bar.value + ci));
                let _ = write!(
                    s,
                    r##"<path d="M{cx:.1} {y1:.1}V{y2:.1}M{a:.1} {y1:.1}H{c:.1}M{a:.1} {y2:.1}H{c:.1}" stroke="#222" fill="none" class="whisker"/>"##,
                    a = cx - 5.0,
                    c = cx + 5.0
                );
            }
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{}" text-anchor="middle" class="k">{}</text>"#,
                x + w / 2.0,
                BH - b + 13.0,
                esc(&bar.label)
            );
            if !bar.note.is_empty() {
                let _ = write!(
                    s,
                    r#"<text x="{:.1}" y="{}" text-anchor="middle" class="n">{}</text>"#,
                    x + w / 2.0,
                    BH - b + 26.0,
                    esc(&bar.note)
                );
            }
        }
        let _ = write!(
            s,
            r##"<path d="M{:.1} {y}H{:.1}" stroke="#999"/><text x="{:.1}" y="{}" text-anchor="middle" class="k g">{}</text>"##,
            gx + 2.0,
            gx + gw - 2.0,
            gx + gw / 2.0,
            BH - b + 46.0,
            esc(&g.label),
            y = BH - b + 33.0
        );
        gx += gw + GAP;
    }
    let _ = write!(
        s,
        r##"<path d="M{l} {t}V{yb}H{xr}" fill="none" stroke="#333"/>"##,
        yb = BH - b,
        xr = bw - r
    );
    legend(
        &mut s,
        legend_items.iter().map(|(n, c)| (n.as_str(), c.as_str())),
        BH - 8.0,
    );
    s.push_str("</svg>");
    s
}

/// One panel of a timeline: lines, or stacked areas (each series on top of
/// the ones before it; they must share their x values). In a stacked panel
/// a dashed series is not stacked: it is drawn over the areas as a line.
#[derive(Debug, Clone)]
pub struct Panel {
    pub title: String,
    pub y_scale: Scale,
    pub y_fmt: fn(f64) -> String,
    pub series: Vec<Series>,
    pub stacked: bool,
    /// A fixed top of the y axis (100 for percentages).
    pub y_max: Option<f64>,
}

/// Panels stacked on one shared x axis (seconds), the bands (phases) drawn
/// across all of them; `alert` writes a red line under the title (a
/// disturbed cell).
#[derive(Debug, Clone)]
pub struct Timeline {
    pub title: String,
    pub panels: Vec<Panel>,
    pub bands: Vec<Band>,
    pub alert: Option<String>,
    pub x_fmt: fn(f64) -> String,
}

impl Timeline {
    pub fn render(&self) -> String {
        const TW: f64 = 720.0;
        const PH: f64 = 70.0; // plot height of one panel
        const GAP: f64 = 26.0; // title row above each panel
        const TOP: f64 = 30.0;
        const BOTTOM: f64 = 40.0;
        const LEFT: f64 = 70.0;
        const RIGHT: f64 = 20.0;
        let top = TOP + if self.alert.is_some() { 16.0 } else { 0.0 };
        let h = top + self.panels.len() as f64 * (PH + GAP) + BOTTOM;
        let (x0, x1) = extent(
            Scale::Linear,
            self.panels
                .iter()
                .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0)))
                .chain(self.bands.iter().flat_map(|b| [b.from, b.to])),
        );
        let x1 = x1.max(x0 + 1e-9);
        let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (TW - LEFT - RIGHT);
        let mut s = String::new();
        header(&mut s, &self.title, TW, h);
        if let Some(a) = &self.alert {
            let _ = write!(
                s,
                r##"<text x="{}" y="36" text-anchor="middle" class="n" style="fill:#D00">{}</text>"##,
                TW / 2.0,
                esc(a)
            );
        }
        for (k, p) in self.panels.iter().enumerate() {
            let yt = top + k as f64 * (PH + GAP) + GAP; // top of the plot area
            let yb = yt + PH;
            let _ = write!(
                s,
                r#"<text x="{LEFT}" y="{:.1}" class="n">{}</text>"#,
                yt - 6.0,
                esc(&p.title)
            );
            // stacked: cumulative values
            let drawn: Vec<Vec<(f64, f64)>> = if p.stacked {
                let mut acc: Vec<(f64, f64)> = Vec::new();
                p.series
                    .iter()
                    .map(|sr| {
                        if sr.dashed {
                            return sr.points.clone();
                        }
                        if acc.len() != sr.points.len() {
                            acc = sr.points.iter().map(|q| (q.0, 0.0)).collect();
                        }
                        for (a, q) in acc.iter_mut().zip(&sr.points) {
                            a.1 += q.1;
                        }
                        acc.clone()
                    })
                    .collect()
            } else {
                p.series.iter().map(|sr| sr.points.clone()).collect()
            };
            let (mut y0, mut y1) = extent(p.y_scale, drawn.iter().flatten().map(|q| q.1));
            if let Some(m) = p.y_max {
                y1 = m;
                if p.y_scale == Scale::Linear {
                    y0 = 0.0;
                }
            }
            let (fy0, fy1) = (fwd(p.y_scale, y0), fwd(p.y_scale, y1).max(fwd(p.y_scale, y0) + 1e-9));
            let py = |y: f64| yb - (fwd(p.y_scale, y.max(y0).min(y1)) - fy0) / (fy1 - fy0) * PH;
            for b in &self.bands {
                let (a, c) = (px(b.from), px(b.to));
                let _ = write!(
                    s,
                    r#"<rect x="{a:.1}" y="{yt:.1}" width="{:.1}" height="{PH}" fill="{}" fill-opacity="{}"><title>{}</title></rect>"#,
                    (c - a).max(1.0),
                    b.color,
                    b.opacity,
                    esc(&b.label)
                );
                if k == 0 && !b.label.is_empty() && c - a > 30.0 {
                    let _ = write!(
                        s,
                        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="b">{}</text>"#,
                        (a + c) / 2.0,
                        yt + 11.0,
                        esc(&b.label)
                    );
                }
            }
            let all_ticks = match p.y_scale {
                // spaced for the panel's height already
                Scale::Log => log_ticks(y0, y1, PH)
                    .into_iter()
                    .filter(|t| t.labelled)
                    .map(|t| t.value)
                    .collect(),
                _ => ticks(p.y_scale, y0, y1),
            };
            // at most 3 labelled ticks on a linear axis: a panel is short
            let step = match p.y_scale {
                Scale::Log => 1,
                _ => all_ticks.len().div_ceil(3).max(1),
            };
            for t in all_ticks.iter().step_by(step) {
                let y = py(*t);
                let _ = write!(
                    s,
                    r##"<line x1="{LEFT}" x2="{xr}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{tx}" y="{ty:.1}" text-anchor="end" class="k">{}</text>"##,
                    esc(&(p.y_fmt)(*t)),
                    xr = TW - RIGHT,
                    tx = LEFT - 4.0,
                    ty = y + 4.0
                );
            }
            let _ = write!(
                s,
                r##"<path d="M{LEFT} {yt:.1}V{yb:.1}H{xr}" fill="none" stroke="#333"/>"##,
                xr = TW - RIGHT
            );
            for (i, (sr, pts)) in p.series.iter().zip(&drawn).enumerate() {
                let visible: Vec<&(f64, f64)> = pts.iter().filter(|q| p.y_scale != Scale::Log || q.1 > 0.0).collect();
                let Some(first) = visible.first() else { continue };
                let mut d = format!("M{:.1} {:.1}", px(first.0), py(first.1));
                for q in &visible[1..] {
                    let _ = write!(d, "L{:.1} {:.1}", px(q.0), py(q.1));
                }
                if p.stacked && !sr.dashed {
                    // close down to the stacked series below (or the axis)
                    let below: Vec<(f64, f64)> = match (0..i).rev().find(|&j| !p.series[j].dashed) {
                        Some(j) => drawn[j].clone(),
                        None => pts.iter().map(|q| (q.0, y0)).collect(),
                    };
                    for q in below.iter().rev() {
                        let _ = write!(d, "L{:.1} {:.1}", px(q.0), py(q.1));
                    }
                    d.push('Z');
                    let _ = write!(
                        s,
                        r#"<path d="{d}" fill="{}" fill-opacity="0.75" stroke="none"><title>{}</title></path>"#,
                        sr.color,
                        esc(&sr.label)
                    );
                } else {
                    let _ = write!(
                        s,
                        r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.5"{}><title>{}</title></path>"#,
                        sr.color,
                        if sr.dashed { r#" stroke-dasharray="4 3""# } else { "" },
                        esc(&sr.label)
                    );
                }
            }
            // the panel's legend, right-aligned on its title row
            let mut x = TW - RIGHT;
            for sr in p.series.iter().rev() {
                let w = 16.0 + 6.0 * sr.label.chars().count() as f64;
                x -= w;
                let _ = write!(
                    s,
                    r#"<rect x="{x:.0}" y="{:.0}" width="9" height="9" fill="{}"/><text x="{:.0}" y="{:.1}" class="b">{}</text>"#,
                    yt - 14.0,
                    sr.color,
                    x + 12.0,
                    yt - 6.0,
                    esc(&sr.label)
                );
            }
        }
        // the shared x axis, under the last panel
        let yb = top + self.panels.len() as f64 * (PH + GAP);
        for t in ticks(Scale::Linear, x0, x1) {
            let x = px(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{yb:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="k">{}</text>"##,
                yb + 4.0,
                yb + 16.0,
                esc(&(self.x_fmt)(t))
            );
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="k">seconds</text></svg>"#,
            (LEFT + TW - RIGHT) / 2.0,
            yb + 32.0
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(Scale::Linear, 0.0, 10.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        // labelled between decades, as 1, 2 and 5 × 10^k
        assert_eq!(ticks(Scale::Log, 1e3, 1e5), [1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5]);
        assert_eq!(ticks(Scale::Nines, 50.0, 99.9), [50.0, 90.0, 99.0, 99.9]);
        assert!((fwd(Scale::Nines, 99.0) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn log_ticks_thin_out_with_the_decades() {
        // a short range: 1, 2, 3, 5, 7 × 10^k
        assert_eq!(ticks(Scale::Log, 20.0, 100.0), [20.0, 30.0, 50.0, 70.0, 100.0]);
        // five decades on 210 px: 1 and 3 labelled, 2 and 5 as grid lines
        let t = log_ticks(1.0, 1e5, 210.0);
        let labelled: Vec<f64> = t.iter().filter(|t| t.labelled).map(|t| t.value).collect();
        assert_eq!(labelled, [1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4, 3e4, 1e5]);
        assert!(t.iter().any(|t| !t.labelled && t.value == 20.0));
        // nine decades on 210 px: decades labelled, 2 and 5 as grid lines
        let t = log_ticks(1.0, 1e9, 210.0);
        let labelled: Vec<f64> = t.iter().filter(|t| t.labelled).map(|t| t.value).collect();
        assert_eq!(labelled, (0..=9).map(|e| 10f64.powi(e)).collect::<Vec<_>>());
        assert!(t.iter().any(|t| !t.labelled && t.value == 2e3));
        // twenty decades: every other decade labelled
        let t = log_ticks(1.0, 1e20, 210.0);
        assert_eq!(t.iter().filter(|t| t.labelled).count(), 11);
        // the extent rounds to 1-2-5 steps around the data
        assert_eq!(extent(Scale::Log, [23.0, 81.0].into_iter()), (20.0, 100.0));
        assert_eq!(extent(Scale::Log, [1000.0].into_iter()), (1000.0, 2000.0));
    }

    #[test]
    fn escapes_text() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        let bar = |label: &str, value: f64| Bar {
            label: label.into(),
            value,
            ci: Some(1.0),
            note: String::new(),
            color: PALETTE[0].into(),
        };
        let svg = grouped_bars(
            "ops/s <x>",
            &[
                BarGroup {
                    label: "w1".into(),
                    bars: vec![bar("ext4", 10.0), bar("xfs", 5.0)],
                },
                BarGroup {
                    label: "w<2>".into(),
                    bars: vec![bar("ext4", 8.0), bar("xfs", 4.0)],
                },
            ],
            |v| format!("{v}"),
            &[("ext4".into(), PALETTE[0].into())],
        );
        assert!(svg.contains("ops/s &lt;x&gt;") && svg.contains("w&lt;2&gt;"));
        assert_eq!(svg.matches("class=\"whisker\"").count(), 4, "one per bar");
    }

    #[test]
    fn timeline_panels_share_the_x_axis() {
        let line = |label: &str, pts: Vec<(f64, f64)>| Series {
            label: label.into(),
            color: PALETTE[0].into(),
            points: pts,
            dots: false,
            dashed: false,
            tip: String::new(),
        };
        let t = Timeline {
            title: "cell".into(),
            panels: vec![
                Panel {
                    title: "MB/s".into(),
                    y_scale: Scale::Linear,
                    y_fmt: |v| format!("{v}"),
                    series: vec![line("read", vec![(1.0, 10.0), (2.0, 20.0)])],
                    stacked: false,
                    y_max: None,
                },
                Panel {
                    title: "CPU".into(),
                    y_scale: Scale::Linear,
                    y_fmt: |v| format!("{v}%"),
                    series: vec![
                        line("usr", vec![(1.0, 10.0), (2.0, 20.0)]),
                        line("sys", vec![(1.0, 5.0), (2.0, 5.0)]),
                    ],
                    stacked: true,
                    y_max: Some(100.0),
                },
            ],
            bands: vec![Band {
                from: 0.0,
                to: 2.0,
                label: "run".into(),
                color: "#888".into(),
                opacity: 0.1,
            }],
            alert: Some("disturbed <x>".into()),
            x_fmt: |v| format!("{v}"),
        };
        let svg = t.render();
        // a point at x=2 is at the same place in both panels
        let x2 = "L670.0 "; // 70 + 2 / 2.1 * 630: x to 2.1 (5% headroom)
        assert_eq!(svg.matches("<svg").count(), 1);
        assert!(svg.matches(x2).count() >= 3, "{svg}");
        assert!(svg.contains("disturbed &lt;x&gt;") && svg.contains("Z\""));
    }
}
