//! Latency anatomy (`--anatomy`, `--explain-slow`): per cell the layers'
//! table, the LBA map of each device (where the data, metadata and journal
//! blocks landed over time, iowatcher-like) and the slow operations'
//! explanations.

use super::common::{cell_heading, figure};
use crate::model::anatomy::{LbaMap, LBA_CLASSES};
use crate::model::{Cell, Report};
use crate::report::render::svg::esc;
use crate::stats::anatomy::Figure;
use crate::units::{Bytes, Nanos};
use std::fmt::Write;

/// The classes' colours (Okabe-Ito): data, metadata, journal/log, read.
const COLORS: [&str; 4] = ["#0072B2", "#E69F00", "#D55E00", "#009E73"];
const W: f64 = 760.0;
const H: f64 = 300.0;
const ML: f64 = 64.0;
const MR: f64 = 12.0;
const MT: f64 = 28.0;
const MB: f64 = 58.0;

pub(super) fn section(s: &mut String, n: &mut usize, sources: &[(String, &Report)]) {
    let cells: Vec<(&String, &Report, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, *r, c)))
        .filter(|(_, _, c)| c.anatomy.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"anatomy\">Latency anatomy</h2>\n<p class=\"note\">Measured in the kernel (BPF on tracepoints): each operation kind's time by layer (on CPU is end to end less the time off the CPU), where each device's blocks landed, and why the slow operations stalled.</p>\n");
    for (label, r, c) in cells {
        let a = c.anatomy.as_ref().expect("filtered");
        let _ = writeln!(s, "<h3>{}</h3>", esc(&cell_heading(label, r, c)));
        if !a.kinds.is_empty() {
            layers(s, a);
        }
        if !a.lba.is_empty() {
            s.push_str("<div class=\"grid\">\n");
            for m in &a.lba {
                let caption = lba_caption(m);
                figure(s, n, "lba", &lba_svg(m), &caption);
            }
            s.push_str("</div>\n");
        }
        if !a.slow.is_empty() {
            s.push_str("<ul class=\"slow\">\n");
            for o in &a.slow {
                let _ = writeln!(s, "<li>{}</li>", esc(&crate::report::anatomy::paragraph(o)));
            }
            s.push_str("</ul>\n");
        }
        if let Some(line) = crate::report::anatomy::cost_line(a) {
            let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(&line));
        }
        for u in &a.unobserved {
            let _ = writeln!(s, "<p class=\"note\">not observed: {}</p>", esc(u));
        }
    }
}

fn mean(f: &Figure, n: u64) -> String {
    if f.sum_ns == 0 {
        return "—".into();
    }
    Nanos(f.sum_ns.checked_div(n).unwrap_or(0)).to_string()
}

fn layers(s: &mut String, a: &crate::model::anatomy::Anatomy) {
    s.push_str("<table class=\"anatomy\"><tr><th>kind</th><th>ops</th><th>end to end</th>");
    for l in &a.layer_names {
        let _ = write!(s, "<th>{}</th>", esc(l.name()));
    }
    s.push_str("<th>p99</th></tr>\n");
    for e in &a.kinds {
        let k = &e.anatomy;
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            esc(e.kind.name()),
            k.ops,
            mean(&k.total, k.ops)
        );
        for f in &k.layers {
            let pct = f.sum_ns as f64 * 100.0 / k.total.sum_ns.max(1) as f64;
            let _ = write!(s, "<td>{} <span class=\"note\">{:.0}%</span></td>", mean(f, k.ops), pct);
        }
        let _ = writeln!(s, "<td>{}</td></tr>", Nanos(k.total.hist.quantile(0.99, 0, u64::MAX)));
    }
    s.push_str("</table>\n");
}

fn lba_caption(m: &LbaMap) -> String {
    let name = if m.name.is_empty() {
        m.dev.clone()
    } else {
        format!("{} ({})", m.name, m.dev)
    };
    let parts: Vec<String> = LBA_CLASSES
        .iter()
        .zip(&m.bytes)
        .filter(|(_, &b)| b > 0)
        .map(|(c, &b)| format!("{c} {}", Bytes(b)))
        .collect();
    format!(
        "{name}: where the blocks landed ({}; a mark is {} × {})",
        parts.join(", "),
        Nanos(m.time_step_ns),
        Bytes(m.offset_step_bytes)
    )
}

/// Time across, device offset down the side (0 at the top, as a disk map
/// reads); each mark's opacity grows with the bytes it holds.
fn lba_svg(m: &LbaMap) -> String {
    let t_max = m.points.iter().map(|p| p[0] + 1).max().unwrap_or(1) as f64;
    let o_max = (m.extent_bytes / m.offset_step_bytes.max(1)).max(1) as f64;
    let b_max = m.points.iter().map(|p| p[3]).max().unwrap_or(1).max(1) as f64;
    let (pw, ph) = (W - ML - MR, H - MT - MB);
    let (cw, ch) = ((pw / t_max).max(1.0), (ph / o_max).max(2.0));
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><text class="t" x="{ML}" y="18">{}: LBA map</text><rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#ccc"/>"##,
        esc(if m.name.is_empty() { &m.dev } else { &m.name })
    );
    for p in &m.points {
        let x = ML + p[0] as f64 * pw / t_max;
        let y = MT + p[1] as f64 * ph / o_max;
        let op = 0.25 + 0.75 * ((p[3] as f64).ln_1p() / b_max.ln_1p());
        let _ = write!(
            s,
            r##"<rect x="{x:.1}" y="{y:.1}" width="{cw:.1}" height="{ch:.1}" fill="{}" fill-opacity="{op:.2}"/>"##,
            COLORS[(p[2] as usize).min(3)]
        );
    }
    let secs = t_max * m.time_step_ns as f64 / 1e9;
    let _ = write!(
        s,
        r##"<text x="{ML}" y="{:.0}">0 s</text><text x="{:.0}" y="{:.0}" text-anchor="end">{secs:.1} s</text><text x="{:.0}" y="{:.0}" text-anchor="end">0</text><text x="{:.0}" y="{:.0}" text-anchor="end">{}</text>"##,
        MT + ph + 14.0,
        ML + pw,
        MT + ph + 14.0,
        ML - 4.0,
        MT + 10.0,
        ML - 4.0,
        MT + ph,
        esc(&Bytes(m.extent_bytes).to_string())
    );
    let mut x = ML;
    for (c, col) in LBA_CLASSES.iter().zip(COLORS) {
        let _ = write!(
            s,
            r##"<rect x="{x:.0}" y="{:.0}" width="10" height="10" fill="{col}"/><text class="b" x="{:.0}" y="{:.0}">{c}</text>"##,
            H - 22.0,
            x + 14.0,
            H - 13.0
        );
        x += 110.0;
    }
    s.push_str("</svg>");
    s
}
