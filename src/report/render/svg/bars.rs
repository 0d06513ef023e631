//! Grouped bar charts with 95% confidence whiskers and a note (the ratio
//! to the baseline) under each bar: the comparison's charts.

use super::axes::{esc, extent, header, legend, ticks, Scale};
use std::fmt::Write;

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

/// The chart's height.
const BH: f64 = 250.0;
/// Between groups.
const GAP: f64 = 18.0;
/// The margin under the plot: bar labels, notes, group labels, legend.
const BOTTOM: f64 = 74.0;

/// Grouped bars with error whiskers: per group one bar per filesystem, its
/// label and note (the ratio) under it, the group's label under those; the
/// legend names the colours. The width grows with the bars and labels.
pub fn grouped_bars(
    title: &str,
    groups: &[BarGroup],
    fmt: fn(f64) -> String,
    legend_items: &[(String, String)],
) -> String {
    let (l, r, t, b) = (58.0, 10.0, 28.0, BOTTOM);
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
            draw_bar(&mut s, g, bar, x, slot, &py, fmt);
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

/// One bar of group `g` at `x` in its `slot`: its rectangle (the value on
/// hover), whisker, label and note.
fn draw_bar(
    s: &mut String,
    g: &BarGroup,
    bar: &Bar,
    x: f64,
    slot: f64,
    py: &dyn Fn(f64) -> f64,
    fmt: fn(f64) -> String,
) {
    let (w, b) = (slot * 0.7, BOTTOM);
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
