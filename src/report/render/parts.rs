//! The pieces of a text report (runs of lines and tables) and what every
//! layout reads from a table: `Doc` makes the pieces, `plain` and
//! `markdown` lay them out; this file sits below all three.

use comfy_table::Table;

/// One piece of a report, in order.
pub enum Part {
    /// Lines of text, each ending in a newline (the last one may not).
    Text(String),
    /// A table; a newline follows it in every layout.
    Table(Box<Table>),
    /// Aligned columns without borders inside a block of lines (iostat's
    /// device rows, a phase table): laid out as lines at the report's width.
    Grid(Grid),
}

/// Borderless aligned columns, each line after `indent`.
pub struct Grid {
    pub indent: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A table's header and rows as strings, every row as long as the widest.
pub fn cells(t: &Table) -> (Vec<String>, Vec<Vec<String>>) {
    let row = |r: &comfy_table::Row| r.cell_iter().map(|c| c.content()).collect::<Vec<String>>();
    let mut head = t.header().map(row).unwrap_or_default();
    let mut rows: Vec<Vec<String>> = t.row_iter().map(row).collect();
    let n = rows.iter().map(Vec::len).chain([head.len()]).max().unwrap_or(0);
    head.resize(n, String::new());
    for r in &mut rows {
        r.resize(n, String::new());
    }
    (head, rows)
}

/// Whether column `i` is right-aligned: every column but the first that
/// holds figures (a cell starting with a digit).
pub fn right_aligned(rows: &[Vec<String>], i: usize) -> bool {
    i > 0
        && rows.iter().any(|r| {
            r.get(i)
                .is_some_and(|c| c.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        })
}

/// How many leading columns name a row (text, not figures: a summary's
/// cell and operation): a table split into blocks of columns repeats them
/// all in every block, so that no row loses its name. At least one, and
/// fewer than all when there are figures.
pub fn key_columns(head: &[String], rows: &[Vec<String>]) -> usize {
    let n = head.len();
    let keys = (0..n).take_while(|&i| i == 0 || !right_aligned(rows, i)).count();
    keys.clamp(1, n.saturating_sub(1).max(1))
}
