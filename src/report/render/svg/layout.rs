//! Where text goes in a chart: how wide a label is drawn, a title wrapped
//! to its chart's width, legends wrapped into rows, and labels of shaded
//! ranges put in rows so they never overlap. The browser renders the text,
//! so widths are estimates: per-character advances of DejaVu Sans (the
//! widest common sans face, the one headless Chromium uses on Debian),
//! rounded up, so a label fits with any narrower face too.

use std::fmt::Write;

/// Escapes text for SVG and HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The advance of `c` in ems (DejaVu Sans, rounded up).
fn advance(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' => 0.34,
        'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '/' | '\\' | '-' | 'I' | 'J' => 0.46,
        'm' | 'w' | 'M' | 'W' | '%' | '@' | '—' => 1.0,
        '0'..='9' | '#' | '$' | '_' | '†' | 'µ' | '?' => 0.66,
        'A'..='Z' => 0.78,
        c if c.is_ascii() => 0.64,
        // arrows, ×, ±, ≤, ≥, other symbols
        _ => 0.86,
    }
}

/// The drawn width of `s` at `px` pixels (bold: 10% wider).
pub fn text_w(s: &str, px: f64, bold: bool) -> f64 {
    let w: f64 = s.chars().map(advance).sum::<f64>() * px;
    if bold {
        w * 1.1
    } else {
        w
    }
}

/// Font sizes of the chart classes (the report's CSS): axis text, a
/// title, a note under a bar, a band or panel legend label.
pub const K_PX: f64 = 11.0;
pub const T_PX: f64 = 13.0;
pub const B_PX: f64 = 10.0;

/// A title cut into lines that each fit `w` pixels (13px bold), broken
/// after spaces, slashes or colons; a word longer than a line is cut.
pub fn wrap(title: &str, w: f64) -> Vec<String> {
    let fits = |s: &str| text_w(s, T_PX, true) <= w;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    // pieces that end in a break point
    let mut piece = String::new();
    let mut pieces = Vec::new();
    for c in title.chars() {
        piece.push(c);
        if matches!(c, ' ' | '/' | ':' | ',') {
            pieces.push(std::mem::take(&mut piece));
        }
    }
    pieces.push(piece);
    for p in pieces {
        let joined = format!("{line}{p}");
        if fits(joined.trim_end()) || line.is_empty() {
            line = joined;
        } else {
            lines.push(line.trim_end().to_string());
            line = p;
        }
        // a piece wider than a whole line: cut it
        while !fits(line.trim_end()) && line.chars().count() > 1 {
            let mut head = String::new();
            for c in line.chars() {
                if !fits(&format!("{head}{c}")) {
                    break;
                }
                head.push(c);
            }
            let head = if head.is_empty() {
                line.chars().take(1).collect()
            } else {
                head
            };
            line = line[head.len()..].to_string();
            lines.push(head);
        }
    }
    if !line.trim().is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// The height of a title's lines beyond the first.
pub const TITLE_LINE: f64 = 16.0;

/// One legend entry: its label, colour, and whether its series is dashed
/// (then its swatch is a dashed line, so a solid and a dashed series of one
/// colour never share a swatch).
pub struct Item<'a> {
    pub label: &'a str,
    pub color: &'a str,
    pub dashed: bool,
}

/// Legend entries placed in rows from `x0` to `x1`: (row, x, item); labels
/// repeated (one per repeat) once, and only the first of the same label,
/// colour and dash.
pub fn legend_rows<'a>(
    items: impl Iterator<Item = Item<'a>>,
    x0: f64,
    x1: f64,
    px: f64,
) -> Vec<(usize, f64, Item<'a>)> {
    let mut out: Vec<(usize, f64, Item<'a>)> = Vec::new();
    let (mut row, mut x) = (0, x0);
    for it in items {
        if it.label.is_empty() || out.iter().any(|o| o.2.label == it.label) {
            continue;
        }
        let w = 16.0 + text_w(it.label, px, false);
        if x + w > x1 && x > x0 {
            row += 1;
            x = x0;
        }
        out.push((row, x, it));
        x += w + 10.0;
    }
    out
}

/// Draws placed legend entries, row 0's text baseline at `y`, rows
/// `dy` apart, as one `<g class="legend">`.
pub fn draw_legend(s: &mut String, placed: &[(usize, f64, Item)], y: f64, dy: f64, class: &str) {
    if placed.is_empty() {
        return;
    }
    s.push_str(r#"<g class="legend">"#);
    for (row, x, it) in placed {
        let y = y + *row as f64 * dy;
        if it.dashed {
            let _ = write!(
                s,
                r#"<path class="sw" d="M{x:.0} {:.1}h12" stroke="{}" stroke-width="2.5" stroke-dasharray="4 2" fill="none"/>"#,
                y - 4.0,
                it.color
            );
        } else {
            let _ = write!(
                s,
                r#"<rect class="sw" x="{x:.0}" y="{:.0}" width="10" height="10" fill="{}"/>"#,
                y - 9.0,
                it.color
            );
        }
        let _ = write!(
            s,
            r#"<text x="{:.0}" y="{y:.1}" class="{class}">{}</text>"#,
            x + 15.0,
            esc(it.label)
        );
    }
    s.push_str("</g>");
}

/// The rows of labels over shaded ranges: each label centred on its range
/// in the first row where it overlaps no other label (and stays within
/// `x0..x1`); a label that finds no row in `rows` is left out (its range
/// keeps it as a tooltip). Returns (label index, x, row).
pub fn band_label_rows(labels: &[(f64, f64, &str)], x0: f64, x1: f64, rows: usize) -> Vec<(usize, f64, usize)> {
    let mut taken: Vec<Vec<(f64, f64)>> = vec![Vec::new(); rows];
    let mut out = Vec::new();
    for (i, (a, c, label)) in labels.iter().enumerate() {
        if label.is_empty() {
            continue;
        }
        let w = text_w(label, B_PX, false) + 4.0;
        let mid = ((a + c) / 2.0).clamp(x0 + w / 2.0, x1 - w / 2.0);
        let (l, r) = (mid - w / 2.0, mid + w / 2.0);
        if w > x1 - x0 {
            continue;
        }
        if let Some(row) = (0..rows).find(|&k| taken[k].iter().all(|&(tl, tr)| r <= tl || l >= tr)) {
            taken[row].push((l, r));
            out.push((i, mid, row));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_wrap_to_fit() {
        let t = "ext4-noatime-nobarrier/append-fdatasync #1: append-fsync latency over time";
        let lines = wrap(t, 540.0);
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(lines.iter().all(|l| text_w(l, T_PX, true) <= 540.0), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), t.replace(' ', ""));
        assert_eq!(wrap("short", 540.0), ["short"]);
        // one word wider than the line is cut, never lost
        let long = "x".repeat(200);
        assert_eq!(wrap(&long, 100.0).concat(), long);
    }

    #[test]
    fn legends_wrap_and_band_labels_do_not_overlap() {
        let items = (0..10).map(|_| ());
        let names: Vec<String> = items.enumerate().map(|(i, _)| format!("QUERY_PATH_{i}")).collect();
        let placed = legend_rows(
            names.iter().map(|n| Item {
                label: n,
                color: "#000",
                dashed: false,
            }),
            70.0,
            530.0,
            K_PX,
        );
        assert!(placed.iter().any(|p| p.0 > 0), "wrapped");
        for p in &placed {
            assert!(p.1 + 15.0 + text_w(p.2.label, K_PX, false) <= 530.0 + 1e-9);
        }
        let rows = band_label_rows(
            &[(0.0, 10.0, "random-stat"), (10.0, 20.0, "random-delete")],
            0.0,
            500.0,
            2,
        );
        assert_eq!(rows.iter().map(|r| r.2).collect::<Vec<_>>(), [0, 1]);
        let none = band_label_rows(&[(0.0, 10.0, "a-label"), (10.0, 20.0, "b-label")], 0.0, 500.0, 1);
        assert_eq!(none.len(), 1, "no room in one row for the second");
    }
}
