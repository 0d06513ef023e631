//! `--format plain`: the text report for a mail to a kernel list. ASCII only
//! (µs is "us", ± is "+/-", × is "x", ↑/↓ are "^"/"v"), no box drawing, no
//! line longer than the width (80 columns unless `--width`): a table too
//! wide is split into blocks of columns, each repeating the first column; a
//! table whose first column and any one other do not fit is printed as
//! "row / header: value" lines; long lines are wrapped at spaces.

use super::parts::{cells, key_columns, right_aligned, Grid, Part};
use comfy_table::Table;

/// Between two columns.
const GAP: &str = "  ";

/// The report's pieces, laid out.
pub fn render(parts: &[Part], width: usize) -> String {
    let mut s = String::new();
    for p in parts {
        match p {
            Part::Text(t) => {
                for line in t.lines() {
                    for l in wrap(&ascii(line), width) {
                        s.push_str(&l);
                        s.push('\n');
                    }
                }
            }
            // its last row ends the line, as a boxed table's bottom border does
            Part::Table(t) => s.push_str(&table(t, width)),
            Part::Grid(g) => s.push_str(&grid(g, width, true)),
        }
    }
    s
}

/// `s` with every character outside ASCII replaced by an ASCII spelling.
pub fn ascii(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        if ch.is_ascii() {
            o.push(ch);
            continue;
        }
        o.push_str(match ch {
            'µ' | 'μ' => "u",
            '±' => "+/-",
            '×' => "x",
            '↑' => "^",
            '↓' => "v",
            '≤' => "<=",
            '≥' => ">=",
            '≈' => "~",
            '≠' => "!=",
            '†' => "#",
            // a comparison's verdicts: regressed, improved
            '▼' => "[-]",
            '▲' => "[+]",
            '→' => "->",
            '←' => "<-",
            '–' | '—' | '−' | '─' | '━' => "-",
            '…' => "...",
            // a table's parts ("nbench · xfs"): not `*`, which marks significance
            '·' => "/",
            '•' => "*",
            '‘' | '’' => "'",
            '“' | '”' => "\"",
            '│' | '┃' => "|",
            '═' => "=",
            '┌' | '┐' | '└' | '┘' | '├' | '┤' | '┬' | '┴' | '┼' | '╞' | '╡' | '╪' => "+",
            // the sparkline's eight heights
            '▁' => ".",
            '▂' => ":",
            '▃' => "-",
            '▄' => "=",
            '▅' => "+",
            '▆' => "*",
            '▇' => "#",
            '█' => "@",
            '\u{a0}' => " ",
            _ => "?",
        });
    }
    o
}

/// `line` broken at spaces into lines of at most `width` characters;
/// continuation lines are indented two more than the line. A word longer
/// than a line is cut.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    let line = line.trim_end();
    if line.chars().count() <= width {
        return vec![line.to_string()];
    }
    // an indent of more than half a line is not kept
    let indent = (line.len() - line.trim_start().len()).min(width / 2);
    let cont = " ".repeat((indent + 2).min(width / 2));
    let mut out = Vec::new();
    let mut cur = line[..indent].to_string();
    let mut fresh = true;
    for word in line[indent..].split(' ').filter(|w| !w.is_empty()) {
        let wl = word.chars().count();
        let cl = cur.chars().count();
        if !fresh && cl + 1 + wl > width {
            out.push(std::mem::replace(&mut cur, cont.clone()));
            fresh = true;
        }
        if !fresh {
            cur.push(' ');
        }
        let w: Vec<char> = word.chars().collect();
        // a word wider than what is left of a fresh line is cut, piece by
        // piece from an index (draining the front of `w` each time made a
        // long word quadratic)
        let mut at = 0;
        let mut cl = cur.chars().count();
        while cl + (w.len() - at) > width {
            let room = width - cl;
            cur.extend(&w[at..at + room]);
            at += room;
            out.push(std::mem::replace(&mut cur, cont.clone()));
            cl = cont.len();
        }
        cur.extend(&w[at..]);
        fresh = false;
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// A table as aligned ASCII columns under a dashed rule, split into column
/// blocks of at most `width` characters.
pub fn table(t: &Table, width: usize) -> String {
    let (head, rows) = cells(t);
    let head: Vec<String> = head.iter().map(|h| ascii(h)).collect();
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(|c| ascii(c)).collect()).collect();
    aligned(&head, &rows, width, "", true)
}

/// Borderless aligned columns at `width`, in ASCII for plain output
/// (where "±" is three characters: converted before aligning, so that no
/// line needs wrapping afterwards).
pub fn grid(g: &Grid, width: usize, to_ascii: bool) -> String {
    let cell = |c: &String| if to_ascii { ascii(c) } else { c.clone() };
    let head: Vec<String> = g.head.iter().map(cell).collect();
    let rows: Vec<Vec<String>> = g.rows.iter().map(|r| r.iter().map(cell).collect()).collect();
    let indent = if to_ascii { ascii(&g.indent) } else { g.indent.clone() };
    aligned(&head, &rows, width, &indent, false)
}

/// `head` and `rows` as aligned columns (figures right-aligned), each line
/// after `indent`, under a dashed rule when `rule`; split into blocks of
/// columns, each repeating the key columns (`key_columns`), so that no line
/// is wider than `width`; as records when the keys and one other do not fit.
pub fn aligned(head: &[String], rows: &[Vec<String>], width: usize, indent: &str, rule: bool) -> String {
    let n = head.len();
    if n == 0 {
        return String::new();
    }
    let col_width = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
            .chain([head[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..n).map(col_width).collect();
    let right: Vec<bool> = (0..n).map(|i| right_aligned(rows, i)).collect();
    // column blocks: the key columns, then as many others as fit
    let room = width.saturating_sub(indent.chars().count());
    let keys = key_columns(head, rows);
    let key_width = widths[..keys].iter().sum::<usize>() + GAP.len() * (keys - 1);
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = (0..keys).collect();
    let mut used = key_width;
    for (i, col) in widths.iter().enumerate().skip(keys) {
        let w = GAP.len() + col;
        if used + w > room && cur.len() > keys {
            blocks.push(std::mem::replace(&mut cur, (0..keys).collect()));
            used = key_width;
        }
        if used + w > room {
            return records(head, rows, width);
        }
        cur.push(i);
        used += w;
    }
    blocks.push(cur);
    let mut s = String::new();
    for (b, cols) in blocks.iter().enumerate() {
        if b > 0 && rule {
            s.push('\n');
        }
        let line = |cells: &dyn Fn(usize) -> String| {
            let mut l = indent.to_string();
            for (k, &i) in cols.iter().enumerate() {
                if k > 0 {
                    l.push_str(GAP);
                }
                let c = cells(i);
                let pad = " ".repeat(widths[i] - c.chars().count());
                if right[i] {
                    l.push_str(&pad);
                    l.push_str(&c);
                } else {
                    l.push_str(&c);
                    l.push_str(&pad);
                }
            }
            format!("{}\n", l.trim_end())
        };
        s.push_str(&line(&|i| head[i].clone()));
        if rule {
            s.push_str(&line(&|i| "-".repeat(widths[i])));
        }
        for r in rows {
            s.push_str(&line(&|i| r.get(i).cloned().unwrap_or_default()));
        }
    }
    s
}

/// A table too wide for columns: the first column's header, then each
/// row's first cell on a line and "header: value" under it, wrapped.
pub(super) fn records(head: &[String], rows: &[Vec<String>], width: usize) -> String {
    let mut s = String::new();
    // the first column's header names the table (a comparison's workload)
    if let Some(h) = head.first().filter(|h| !h.trim().is_empty()) {
        for l in wrap(h.trim(), width) {
            s.push_str(&l);
            s.push('\n');
        }
    }
    for r in rows {
        for l in wrap(&r[0], width) {
            s.push_str(&l);
            s.push('\n');
        }
        for (h, c) in head.iter().zip(r).skip(1) {
            if c.trim().is_empty() {
                continue;
            }
            for l in wrap(&format!("  {}: {}", h.trim(), c.trim()), width) {
                s.push_str(&l);
                s.push('\n');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyphs_become_ascii() {
        assert_eq!(
            ascii("8.89 µs ± 8.13 µs  2.81×* ↑ ≤2 ms –"),
            "8.89 us +/- 8.13 us  2.81x* ^ <=2 ms -"
        );
        assert!(ascii("ключ").chars().all(|c| c == '?'));
    }

    #[test]
    fn long_lines_wrap_at_spaces_and_long_words_are_cut() {
        let line = format!("  {}", "word ".repeat(40));
        let w = wrap(&line, 30);
        assert!(w.len() > 1);
        assert!(w.iter().all(|l| l.chars().count() <= 30), "{w:?}");
        assert!(w[1].starts_with("    word"), "{w:?}");
        let w = wrap(&"x".repeat(100), 40);
        assert_eq!(w.iter().map(|l| l.trim().len()).sum::<usize>(), 100);
        assert!(w.iter().all(|l| l.chars().count() <= 40), "{w:?}");
        // a word of 4 million characters: cut from an index, each character
        // copied once (it was drained from the front, quadratic)
        let n = 4 << 20;
        let w = wrap(&format!("a: {}", "y".repeat(n)), 80);
        assert_eq!(w.iter().map(|l| l.trim().len()).sum::<usize>(), n + 2);
        assert!(w.iter().all(|l| l.chars().count() <= 80));
        assert!(w.len() >= n / 80 && w.len() <= n / 70, "{}", w.len());
    }

    #[test]
    fn wide_tables_are_split_into_blocks_repeating_the_first_column() {
        let mut t = Table::new();
        let head: Vec<String> = std::iter::once("metric".to_string())
            .chain((0..6).map(|i| format!("filesystem{i}")))
            .collect();
        t.set_header(head);
        t.add_row(
            std::iter::once("read IOPS ↑".to_string()).chain((0..6).map(|i| format!("{i}2.15M ± 277.8k  0.98×"))),
        );
        let s = table(&t, 80);
        assert!(s.lines().all(|l| l.len() <= 80 && l.is_ascii()), "{s}");
        assert_eq!(s.matches("read IOPS ^").count(), s.matches("metric").count());
        assert!(s.matches("metric").count() >= 2, "{s}");
        for i in 0..6 {
            assert_eq!(s.matches(&format!("filesystem{i}")).count(), 1, "{s}");
        }
    }
}
