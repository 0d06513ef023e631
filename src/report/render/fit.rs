//! Boxed tables and lines that fit a width (`--width`, the terminal's):
//! a table wider than the width is split into blocks of columns, each a
//! boxed table repeating the columns that name a row (the same blocks
//! `--format plain` makes); a table whose naming columns and any one other
//! do not fit becomes "row / header: value" lines. Cells are never cut or wrapped
//! inside: a figure broken over two lines is misread.

use super::parts::{cells, key_columns};
use super::plain::{records, wrap};
use comfy_table::{ColumnConstraint, Table};

/// The widest line of `s`, in characters (box drawing, µ and ± are one
/// column each).
fn widest(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// `t` with only the columns `keep` shown.
fn only(t: &Table, keep: &[usize]) -> Table {
    let mut b = t.clone();
    let n = cells(t).0.len();
    for i in (0..n).filter(|i| !keep.contains(i)) {
        if let Some(c) = b.column_mut(i) {
            c.set_constraint(ColumnConstraint::Hidden);
        }
    }
    b
}

/// `t` laid out in at most `width` columns.
pub fn boxed(t: &Table, width: usize) -> String {
    let whole = t.to_string();
    if widest(&whole) <= width {
        return whole + "\n";
    }
    let (head, rows) = cells(t);
    let n = head.len();
    let keys = key_columns(&head, &rows);
    let mut blocks: Vec<String> = Vec::new();
    let mut cur: Vec<usize> = (0..keys).collect();
    let mut shown = only(t, &cur).to_string();
    if widest(&shown) > width {
        return as_records(t, width);
    }
    for i in keys..n {
        let mut next = cur.clone();
        next.push(i);
        let s = only(t, &next).to_string();
        if widest(&s) <= width {
            (cur, shown) = (next, s);
            continue;
        }
        if cur.len() == keys {
            return as_records(t, width);
        }
        blocks.push(std::mem::take(&mut shown));
        cur = (0..keys).chain([i]).collect();
        shown = only(t, &cur).to_string();
        if widest(&shown) > width {
            return as_records(t, width);
        }
    }
    blocks.push(shown);
    blocks.join("\n\n") + "\n"
}

/// `t` as records: each row's first cell, then "header: value" lines.
fn as_records(t: &Table, width: usize) -> String {
    let (head, rows) = cells(t);
    records(&head, &rows, width)
}

/// `text`'s lines, each longer than `width` wrapped between words.
pub fn lines(text: &str, width: usize) -> String {
    let mut s = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width {
            s.push_str(line);
            continue;
        }
        let wrapped = wrap(body, width);
        s.push_str(&wrapped.join("\n"));
        s.push_str(nl);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use comfy_table::presets::UTF8_BORDERS_ONLY;

    fn wide_table() -> Table {
        let mut t = Table::new();
        t.load_style(UTF8_BORDERS_ONLY);
        t.set_header(std::iter::once("metric".to_string()).chain((0..6).map(|i| format!("filesystem{i}"))));
        t.add_row(
            std::iter::once("read IOPS ↑".to_string()).chain((0..6).map(|i| format!("{i}2.15M ± 277.8k  0.98×"))),
        );
        t.add_row(std::iter::once("p99 µs ↓".to_string()).chain((0..6).map(|i| format!("{i}1.5 ± 0.2"))));
        t
    }

    #[test]
    fn a_wide_boxed_table_is_split_into_blocks_that_fit() {
        for width in [60, 80, 100] {
            let s = boxed(&wide_table(), width);
            assert!(widest(&s) <= width, "{width}: {s}");
            let blocks = s.matches("metric").count();
            assert!(blocks >= 2, "{s}");
            assert_eq!(s.matches("read IOPS ↑").count(), blocks, "{s}");
            for i in 0..6 {
                assert_eq!(s.matches(&format!("filesystem{i}")).count(), 1, "{s}");
                // every figure whole, on one line
                assert_eq!(s.matches(&format!("{i}2.15M ± 277.8k  0.98×")).count(), 1, "{s}");
            }
        }
        let s = boxed(&wide_table(), 400);
        assert_eq!(s.matches("metric").count(), 1, "fits: one table\n{s}");
    }

    #[test]
    fn a_table_too_wide_for_two_columns_becomes_records() {
        let s = boxed(&wide_table(), 30);
        assert!(widest(&s) <= 30, "{s}");
        assert!(s.contains("read IOPS ↑") && s.contains("filesystem5: 52.15M"), "{s}");
    }

    #[test]
    fn only_long_lines_are_wrapped() {
        let text = format!("short\n{}\nlast", "word ".repeat(30).trim_end());
        let s = lines(&text, 40);
        assert!(s.starts_with("short\nword"), "{s}");
        assert!(s.ends_with("\nlast"), "{s}");
        assert!(s.lines().all(|l| l.chars().count() <= 40), "{s}");
        assert_eq!(s.split_whitespace().filter(|w| *w == "word").count(), 30);
    }
}
