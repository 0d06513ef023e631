//! A text report as it is built: runs of lines and tables, laid out at the
//! end in one table format (boxed, plain or markdown). The text reporter and
//! the comparison write into a `Doc` as into a `String` (it dereferences to
//! the text being written), and hand it their tables with `table`.

use crate::plan::TableFormat;
use comfy_table::Table;
use std::ops::{Deref, DerefMut};

/// One piece of a report, in order.
pub enum Part {
    /// Lines of text, each ending in a newline (the last one may not).
    Text(String),
    /// A table; a newline follows it in every layout.
    Table(Box<Table>),
}

/// A report being written: text goes to the current run of lines (through
/// `Deref<Target = String>`), tables between them.
#[derive(Default)]
pub struct Doc {
    parts: Vec<Part>,
    cur: String,
}

impl Deref for Doc {
    type Target = String;
    fn deref(&self) -> &String {
        &self.cur
    }
}

impl DerefMut for Doc {
    fn deref_mut(&mut self) -> &mut String {
        &mut self.cur
    }
}

impl Doc {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a table after the text written so far.
    pub fn table(&mut self, t: Table) {
        self.flush();
        self.parts.push(Part::Table(Box::new(t)));
    }

    fn flush(&mut self) {
        if !self.cur.is_empty() {
            self.parts.push(Part::Text(std::mem::take(&mut self.cur)));
        }
    }

    /// The pieces in order.
    pub fn into_parts(mut self) -> Vec<Part> {
        self.flush();
        self.parts
    }

    /// Lays the report out as `f`. CSV is not a layout of lines and tables
    /// (the reporters make their own, see `compare_csv`): it gets the boxed one.
    pub fn render(self, f: TableFormat) -> String {
        let parts = self.into_parts();
        match f {
            TableFormat::Plain => super::plain::render(&parts),
            TableFormat::Markdown => super::markdown::render(&parts),
            TableFormat::Text | TableFormat::Csv => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        Part::Text(t) => s.push_str(&t),
                        Part::Table(t) => {
                            s.push_str(&t.to_string());
                            s.push('\n');
                        }
                    }
                }
                s
            }
        }
    }
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
        && rows
            .iter()
            .any(|r| r[i].trim_start().starts_with(|c: char| c.is_ascii_digit()))
}
