//! Line and scatter charts on linear, logarithmic or "nines" axes, with
//! shaded bands (probe phases) and marked ranges (stalls).

use super::axes::{close, esc, extent, fwd, header, log_ticks, ticks, Frame, Scale, Tick, H, MB, ML, MR, MT, W};
use super::layout::{band_label_rows, draw_legend, legend_rows, Item, K_PX};
use std::fmt::Write;

/// Between rows of a legend.
const LEGEND_ROW: f64 = 15.0;

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
    /// Shown on hover instead of the label when not empty (a stall's
    /// explanation).
    pub tip: String,
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
        // the legend in rows under the plot, the chart taller by the rows beyond the first
        let placed = legend_rows(
            self.series.iter().map(|x| Item {
                label: &x.label,
                color: &x.color,
                dashed: x.dashed,
            }),
            ML,
            W - 8.0,
            K_PX,
        );
        let rows = placed.iter().map(|p| p.0 + 1).max().unwrap_or(1);
        let dy = header(&mut s, &self.title, W, H + (rows - 1) as f64 * LEGEND_ROW);
        self.draw_bands(&mut s, &f);
        self.draw_axes(&mut s, &f, (x0, x1), (y0, y1));
        self.draw_series(&mut s, &f);
        draw_legend(&mut s, &placed, H - 12.0, LEGEND_ROW, "k");
        close(&mut s, dy);
        s
    }

    fn draw_bands(&self, s: &mut String, f: &Frame) {
        let mut spans = Vec::new();
        for b in &self.bands {
            let (a, c) = (f.px(b.from), f.px(b.to));
            spans.push((a, c, if c - a > 30.0 { b.label.as_str() } else { "" }));
            let _ = write!(
                s,
                r#"<rect x="{a:.1}" y="{MT}" width="{:.1}" height="{:.1}" fill="{}" fill-opacity="{}"><title>{}</title></rect>"#,
                (c - a).max(1.0),
                H - MT - MB,
                b.color,
                b.opacity,
                esc(if b.tip.is_empty() { &b.label } else { &b.tip })
            );
        }
        // labels in two rows at the top of the plot, never on each other
        for (i, x, row) in band_label_rows(&spans, ML, W - MR, 2) {
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{}" text-anchor="middle" class="b">{}</text>"#,
                MT + 12.0 + row as f64 * 12.0,
                esc(spans[i].2)
            );
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
