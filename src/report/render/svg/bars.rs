//! Grouped bar charts with 95% confidence whiskers and a note (the ratio
//! to the baseline) under each bar: the comparison's charts.

use super::axes::{close, esc, extent, header, log_ticks, ticks, Scale};
use super::layout::{draw_legend, legend_rows, text_w, Item, K_PX};
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

/// The y axis of a bar chart: linear from 0, or logarithmic (bars from the
/// axis' bottom) where the bars' values span more than a decade, so the
/// small ones stay visible beside the large.
struct YAxis {
    log: bool,
    lo: f64,
    hi: f64,
    top: f64,
}

impl YAxis {
    fn new(groups: &[BarGroup], top: f64) -> YAxis {
        let bars = || groups.iter().flat_map(|g| &g.bars);
        let hi_v = bars().map(|x| x.value + x.ci.unwrap_or(0.0)).fold(0.0f64, f64::max);
        let lo_v = bars()
            .map(|x| x.value)
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        if lo_v.is_finite() && hi_v > 10.0 * lo_v {
            // the axis starts below the smallest bar, so that one shows too
            let (lo, hi) = extent(Scale::Log, [lo_v / 3.0, hi_v].into_iter());
            return YAxis { log: true, lo, hi, top };
        }
        let (_, hi) = extent(Scale::Linear, [0.0, hi_v].into_iter());
        YAxis {
            log: false,
            lo: 0.0,
            hi,
            top,
        }
    }

    /// The y of value `v` (below the axis: at its bottom).
    fn py(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            v.max(0.0) / self.hi
        };
        BH - BOTTOM - f.min(1.0) * (BH - self.top - BOTTOM)
    }

    /// (value, labelled) of each grid line.
    fn ticks(&self) -> Vec<(f64, bool)> {
        if self.log {
            log_ticks(self.lo, self.hi, BH - self.top - BOTTOM)
                .into_iter()
                .map(|t| (t.value, t.labelled))
                .collect()
        } else {
            ticks(Scale::Linear, 0.0, self.hi)
                .into_iter()
                .map(|t| (t, true))
                .collect()
        }
    }
}

/// Grouped bars with error whiskers: per group one bar per filesystem, its
/// label and note (the ratio) under it, the group's label under those; the
/// legend names the colours. The width grows with the bars and labels; the
/// y axis is logarithmic where the values span more than a decade.
pub fn grouped_bars(
    title: &str,
    groups: &[BarGroup],
    fmt: fn(f64) -> String,
    legend_items: &[(String, String)],
) -> String {
    let (r, t, b) = (10.0, 28.0, BOTTOM);
    let k = |s: &str| text_w(s, K_PX, false);
    let y = YAxis::new(groups, t);
    // the left margin fits the widest tick label
    let l = y
        .ticks()
        .iter()
        .filter(|t| t.1)
        .map(|t| k(&fmt(t.0)) + 10.0)
        .fold(50.0f64, f64::max)
        .ceil();
    // every bar's slot fits its label and note
    let slot = groups
        .iter()
        .flat_map(|g| &g.bars)
        .map(|x| k(&x.label).max(text_w(&x.note, K_PX, true)) + 10.0)
        .fold(34.0f64, f64::max);
    let widths: Vec<f64> = groups
        .iter()
        .map(|g| (slot * g.bars.len() as f64).max(k(&g.label) + 8.0))
        .collect();
    let plot_w = widths.iter().sum::<f64>() + GAP * (groups.len().max(1) as f64);
    let bw = (l + plot_w + r).max(240.0).ceil();
    let placed = legend_rows(
        legend_items.iter().map(|(n, c)| Item {
            label: n,
            color: c,
            dashed: false,
        }),
        8.0,
        bw - 8.0,
        K_PX,
    );
    let rows = placed.iter().map(|p| p.0 + 1).max().unwrap_or(1);
    let title = if y.log {
        format!("{title} (log scale)")
    } else {
        title.to_string()
    };
    let mut s = String::new();
    let dy = header(&mut s, &title, bw, BH + (rows - 1) as f64 * 15.0);
    for (tk, labelled) in y.ticks() {
        let yy = y.py(tk);
        let _ = write!(
            s,
            r##"<line x1="{l}" x2="{x2}" y1="{yy:.1}" y2="{yy:.1}" stroke="{}"/>"##,
            if labelled { "#ddd" } else { "#f0f0f0" },
            x2 = bw - r
        );
        if labelled {
            let _ = write!(
                s,
                r#"<text x="{tx}" y="{ty:.1}" text-anchor="end" class="k">{}</text>"#,
                esc(&fmt(tk)),
                tx = l - 4.0,
                ty = yy + 4.0
            );
        }
    }
    let mut gx = l + GAP / 2.0;
    for (g, gw) in groups.iter().zip(&widths) {
        let x0 = gx + (gw - slot * g.bars.len() as f64) / 2.0;
        for (i, bar) in g.bars.iter().enumerate() {
            let x = x0 + slot * i as f64 + slot * 0.15;
            draw_bar(&mut s, g, bar, x, slot, &|v| y.py(v), fmt);
        }
        let _ = write!(
            s,
            r##"<path d="M{:.1} {yl}H{:.1}" stroke="#999"/><text x="{:.1}" y="{}" text-anchor="middle" class="k g">{}</text>"##,
            gx + 2.0,
            gx + gw - 2.0,
            gx + gw / 2.0,
            BH - b + 46.0,
            esc(&g.label),
            yl = BH - b + 33.0
        );
        gx += gw + GAP;
    }
    let _ = write!(
        s,
        r##"<path d="M{l} {t}V{yb}H{xr}" fill="none" stroke="#333"/>"##,
        yb = BH - b,
        xr = bw - r
    );
    draw_legend(&mut s, &placed, BH - 8.0, 15.0, "k");
    close(&mut s, dy);
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
