//! Timelines: panels (lines or stacked areas) stacked on one shared time
//! axis, the phases shaded across all of them: the system beside a cell.

use super::axes::{close, esc, extent, fwd, header, log_ticks, ticks, Scale};
use super::layout::{band_label_rows, draw_legend, legend_rows, text_w, Item, B_PX, K_PX};
use super::xy::{Band, Series};
use std::fmt::Write;

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

const TW: f64 = 720.0;
const PH: f64 = 70.0; // plot height of one panel
const GAP: f64 = 26.0; // title row above each panel
const TOP: f64 = 30.0;
const BOTTOM: f64 = 40.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
/// A panel title's baseline above its plot.
const GAP_TITLE: f64 = 6.0;
/// Between rows of a panel's legend.
const LEGEND_ROW: f64 = 13.0;

/// The shared x axis: seconds from `x0` to `x1` over the plot's width.
struct XAxis {
    x0: f64,
    x1: f64,
}

impl XAxis {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * (TW - LEFT - RIGHT)
    }
}

/// A panel's y axis: `y0` to `y1` on `scale`, the plot's bottom at `yb`.
struct YAxis {
    scale: Scale,
    y0: f64,
    y1: f64,
    fy0: f64,
    fy1: f64,
    yb: f64,
}

impl YAxis {
    fn py(&self, y: f64) -> f64 {
        self.yb - (fwd(self.scale, y.max(self.y0).min(self.y1)) - self.fy0) / (self.fy1 - self.fy0) * PH
    }
}

impl Timeline {
    pub fn render(&self) -> String {
        let top = TOP + if self.alert.is_some() { 16.0 } else { 0.0 };
        // each panel's legend in rows after its title; its block taller by the rows beyond the first
        let legends: Vec<Vec<(usize, f64, Item)>> = self.panels.iter().map(panel_legend).collect();
        let gaps: Vec<f64> = legends
            .iter()
            .map(|l| GAP + l.iter().map(|p| p.0).max().unwrap_or(0) as f64 * LEGEND_ROW)
            .collect();
        let h = top + gaps.iter().map(|g| g + PH).sum::<f64>() + BOTTOM;
        let (x0, x1) = extent(
            Scale::Linear,
            self.panels
                .iter()
                .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0)))
                .chain(self.bands.iter().flat_map(|b| [b.from, b.to])),
        );
        let x1 = x1.max(x0 + 1e-9);
        let xa = XAxis { x0, x1 };
        let mut s = String::new();
        let dy = header(&mut s, &self.title, TW, h);
        if let Some(a) = &self.alert {
            let _ = write!(
                s,
                r##"<text x="{}" y="36" text-anchor="middle" class="n" style="fill:#D00">{}</text>"##,
                TW / 2.0,
                esc(a)
            );
        }
        let mut yb = top;
        for (k, p) in self.panels.iter().enumerate() {
            let yt = yb + gaps[k]; // top of the plot area
            self.panel(&mut s, &xa, (k, p), yt, yt - gaps[k] + GAP - GAP_TITLE);
            draw_legend(&mut s, &legends[k], yt - gaps[k] + GAP - GAP_TITLE, LEGEND_ROW, "b");
            yb = yt + PH;
        }
        // the shared x axis, under the last panel
        for t in ticks(Scale::Linear, x0, x1) {
            let x = xa.px(t);
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
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="k">seconds</text>"#,
            (LEFT + TW - RIGHT) / 2.0,
            yb + 32.0
        );
        close(&mut s, dy);
        s
    }

    /// Panel `k`: its title (at `title_y`), the bands, its y axis and series.
    fn panel(&self, s: &mut String, xa: &XAxis, (k, p): (usize, &Panel), yt: f64, title_y: f64) {
        let yb = yt + PH;
        let _ = write!(
            s,
            r#"<text x="{LEFT}" y="{:.1}" class="n">{}</text>"#,
            title_y,
            esc(&p.title)
        );
        let drawn = drawn_points(p);
        let (mut y0, mut y1) = extent(p.y_scale, drawn.iter().flatten().map(|q| q.1));
        if let Some(m) = p.y_max {
            y1 = m;
            if p.y_scale == Scale::Linear {
                y0 = 0.0;
            }
        }
        let (fy0, fy1) = (fwd(p.y_scale, y0), fwd(p.y_scale, y1).max(fwd(p.y_scale, y0) + 1e-9));
        let ya = YAxis {
            scale: p.y_scale,
            y0,
            y1,
            fy0,
            fy1,
            yb,
        };
        self.bands_of(s, xa, k, yt);
        y_ticks(s, p, &ya);
        let _ = write!(
            s,
            r##"<path d="M{LEFT} {yt:.1}V{yb:.1}H{xr}" fill="none" stroke="#333"/>"##,
            xr = TW - RIGHT
        );
        series_paths(s, p, &drawn, xa, &ya);
    }

    /// The bands across panel `k` (labelled in the first panel only, in
    /// two rows where neighbours' labels would overlap).
    fn bands_of(&self, s: &mut String, xa: &XAxis, k: usize, yt: f64) {
        let mut spans = Vec::new();
        for b in &self.bands {
            let (a, c) = (xa.px(b.from), xa.px(b.to));
            let _ = write!(
                s,
                r#"<rect x="{a:.1}" y="{yt:.1}" width="{:.1}" height="{PH}" fill="{}" fill-opacity="{}"><title>{}</title></rect>"#,
                (c - a).max(1.0),
                b.color,
                b.opacity,
                esc(&b.label)
            );
            spans.push((a, c, if c - a > 30.0 { b.label.as_str() } else { "" }));
        }
        if k > 0 {
            return;
        }
        for (i, x, row) in band_label_rows(&spans, LEFT, TW - RIGHT, 2) {
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle" class="b">{}</text>"#,
                yt + 11.0 + row as f64 * 11.0,
                esc(spans[i].2)
            );
        }
    }
}

/// The points as drawn: a stacked panel's cumulative (its dashed series
/// as they are), another's as they are.
fn drawn_points(p: &Panel) -> Vec<Vec<(f64, f64)>> {
    if p.stacked {
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
    }
}

/// A panel's y ticks and grid lines.
fn y_ticks(s: &mut String, p: &Panel, ya: &YAxis) {
    let (y0, y1) = (ya.y0, ya.y1);
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
        let y = ya.py(*t);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" x2="{xr}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{tx}" y="{ty:.1}" text-anchor="end" class="k">{}</text>"##,
            esc(&(p.y_fmt)(*t)),
            xr = TW - RIGHT,
            tx = LEFT - 4.0,
            ty = y + 4.0
        );
    }
}

/// A panel's series: lines, or areas closed down to the series below.
fn series_paths(s: &mut String, p: &Panel, drawn: &[Vec<(f64, f64)>], xa: &XAxis, ya: &YAxis) {
    for (i, (sr, pts)) in p.series.iter().zip(drawn).enumerate() {
        let visible: Vec<&(f64, f64)> = pts.iter().filter(|q| p.y_scale != Scale::Log || q.1 > 0.0).collect();
        let Some(first) = visible.first() else { continue };
        let mut d = format!("M{:.1} {:.1}", xa.px(first.0), ya.py(first.1));
        for q in &visible[1..] {
            let _ = write!(d, "L{:.1} {:.1}", xa.px(q.0), ya.py(q.1));
        }
        if p.stacked && !sr.dashed {
            // close down to the stacked series below (or the axis)
            let below: Vec<(f64, f64)> = match (0..i).rev().find(|&j| !p.series[j].dashed) {
                Some(j) => drawn[j].clone(),
                None => pts.iter().map(|q| (q.0, ya.y0)).collect(),
            };
            for q in below.iter().rev() {
                let _ = write!(d, "L{:.1} {:.1}", xa.px(q.0), ya.py(q.1));
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
}

/// The panel's legend placed on its title row after the title, wrapped
/// into more rows where it is longer than the row.
fn panel_legend(p: &Panel) -> Vec<(usize, f64, Item<'_>)> {
    let x0 = LEFT + text_w(&p.title, K_PX, true) + 16.0;
    let x1 = TW - RIGHT;
    legend_rows(
        p.series.iter().map(|sr| Item {
            label: &sr.label,
            color: &sr.color,
            dashed: sr.dashed,
        }),
        x0,
        x1,
        B_PX,
    )
}
