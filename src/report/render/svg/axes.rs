//! What every chart shares: the palette, the scales and their ticks, the
//! plot frame of an x/y chart, the SVG header, the legend row, escaping.

pub use super::layout::esc;
use super::layout::{wrap, TITLE_LINE};
use std::fmt::Write;

/// Colours for series, one per filesystem (colour-blind friendly: Okabe-Ito).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
];

/// The colour of the `i`-th series: the palette, then hues spaced by the
/// golden angle (darker, then lighter), so no two series of a chart share a
/// colour however many there are.
pub fn nth_color(i: usize) -> String {
    if i < PALETTE.len() {
        return PALETTE[i].to_string();
    }
    let k = i - PALETTE.len();
    let hue = (k as f64 * 137.508 + 20.0) % 360.0;
    let light = [38.0, 58.0, 48.0][k / 8 % 3];
    format!("hsl({hue:.0},65%,{light:.0}%)")
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    /// log10; values <= 0 are clamped to the axis minimum.
    Log,
    /// Percentiles: position = -log10(1 - p/100), so 90, 99, 99.9 are evenly spaced.
    Nines,
}

pub(super) const W: f64 = 560.0;

pub(super) const H: f64 = 300.0;

pub(super) const ML: f64 = 70.0;

pub(super) const MR: f64 = 30.0;

pub(super) const MT: f64 = 30.0;

pub(super) const MB: f64 = 60.0;

pub(super) fn fwd(scale: Scale, v: f64) -> f64 {
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
pub(super) fn ticks(scale: Scale, lo: f64, hi: f64) -> Vec<f64> {
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
pub(super) fn extent(scale: Scale, vals: impl Iterator<Item = f64>) -> (f64, f64) {
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
pub(super) struct Frame {
    pub(super) x_scale: Scale,
    pub(super) y_scale: Scale,
    pub(super) fx0: f64,
    pub(super) fx1: f64,
    pub(super) fy0: f64,
    pub(super) fy1: f64,
    pub(super) y0: f64,
}

impl Frame {
    pub(super) fn px(&self, x: f64) -> f64 {
        ML + (fwd(self.x_scale, x) - self.fx0) / (self.fx1 - self.fx0) * (W - ML - MR)
    }

    pub(super) fn py(&self, y: f64) -> f64 {
        H - MB - (fwd(self.y_scale, y.max(self.y0)) - self.fy0) / (self.fy1 - self.fy0) * (H - MT - MB)
    }
}

/// Opens a chart of `w` by `h` pixels under its title, the title wrapped
/// to the width (each line beyond the first adds `TITLE_LINE` to the
/// height, and the chart below moves down by it). Returns that shift;
/// `close` ends the chart.
pub(super) fn header(s: &mut String, title: &str, w: f64, h: f64) -> f64 {
    let lines = wrap(title, w - 16.0);
    let dy = (lines.len() - 1) as f64 * TITLE_LINE;
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {hh}" width="{w}" height="{hh}" role="img" aria-label="{t}"><title>{t}</title><rect width="{w}" height="{hh}" fill="#fff"/>"##,
        t = esc(title),
        hh = h + dy
    );
    for (i, l) in lines.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{x}" y="{y}" text-anchor="middle" class="t">{}</text>"#,
            esc(l),
            x = w / 2.0,
            y = 18.0 + i as f64 * TITLE_LINE
        );
    }
    if dy > 0.0 {
        let _ = write!(s, r#"<g transform="translate(0 {dy})">"#);
    }
    dy
}

/// Ends a chart `header` opened (shifted down by `dy`).
pub(super) fn close(s: &mut String, dy: f64) {
    if dy > 0.0 {
        s.push_str("</g>");
    }
    s.push_str("</svg>");
}
