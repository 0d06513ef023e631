//! A text report as it is built: runs of lines and tables, laid out at the
//! end in one table format (boxed, plain or markdown). The text reporter and
//! the comparison write into a `Doc` as into a `String` (it dereferences to
//! the text being written), and hand it their tables with `table`.

use super::parts::Part;
use super::terminal::safe_row;
use crate::plan::TableFormat;
use comfy_table::Table;
use std::ops::{Deref, DerefMut};

/// A report being written: text goes to the current run of lines (through
/// `Deref<Target = String>`), tables between them.
#[derive(Default)]
pub struct Doc {
    parts: Vec<Part>,
    cur: String,
    /// `--quiet-warnings`: a cell's flags and warnings, and a table's
    /// summary of them, stay in the JSON; the text says how many there are.
    quiet_warnings: bool,
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

    /// A report whose warnings stay in the JSON (`--quiet-warnings`).
    pub fn with_quiet_warnings(quiet: bool) -> Self {
        Self {
            quiet_warnings: quiet,
            ..Self::default()
        }
    }

    pub fn quiet_warnings(&self) -> bool {
        self.quiet_warnings
    }

    /// Adds a table after the text written so far, every cell made safe
    /// for a terminal (`safe_cell`): the one place names from plans, job
    /// files and result files enter a text table.
    pub fn table(&mut self, mut t: Table) {
        self.flush();
        if let Some(h) = t.header().and_then(safe_row) {
            t.set_header(h);
        }
        for r in t.row_iter_mut() {
            if let Some(safe) = safe_row(r) {
                *r = safe;
            }
        }
        self.parts.push(Part::Table(Box::new(t)));
    }

    /// Adds aligned columns after the text written so far, each line after
    /// `indent` (`Part::Grid`): the layout splits them into blocks of
    /// columns that fit its width. Cells are made safe as a table's are.
    pub fn grid(&mut self, indent: &str, head: Vec<String>, rows: Vec<Vec<String>>) {
        self.flush();
        let safe =
            |v: Vec<String>| -> Vec<String> { v.into_iter().map(|c| crate::units::shown(&c).into_owned()).collect() };
        self.parts.push(Part::Grid(super::parts::Grid {
            indent: indent.to_string(),
            head: safe(head),
            rows: rows.into_iter().map(safe).collect(),
        }));
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

    /// Lays the report out as `f` in lines of at most `width` characters
    /// (markdown's tables excepted: a pipe table is one line per row). CSV
    /// is not a layout of lines and tables (the reporters make their own,
    /// see `compare_csv`): it gets the boxed one.
    pub fn render(self, f: TableFormat, width: usize) -> String {
        // the lines between tables: control characters escaped (newlines
        // are the lines' own), so no name can write escape sequences
        let parts: Vec<Part> = self
            .into_parts()
            .into_iter()
            .map(|p| match p {
                Part::Text(t) => match crate::units::shown_keeping(&t, &['\n']) {
                    std::borrow::Cow::Borrowed(_) => Part::Text(t),
                    std::borrow::Cow::Owned(o) => Part::Text(o),
                },
                other => other,
            })
            .collect();
        match f {
            TableFormat::Plain => super::plain::render(&parts, width),
            TableFormat::Markdown => super::markdown::render(&parts),
            TableFormat::Text | TableFormat::Csv => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        Part::Text(t) => s.push_str(&super::fit::lines(&t, width)),
                        Part::Table(t) => s.push_str(&super::fit::boxed(&t, width)),
                        Part::Grid(g) => s.push_str(&super::plain::grid(&g, width, false)),
                    }
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use comfy_table::Table;

    #[test]
    fn table_cells_are_escaped_and_cut_short() {
        let mut t = Table::new();
        t.set_header(vec!["a\u{1b}[2Jb".to_string(), "plain".to_string()]);
        t.add_row(vec!["x".repeat(5 << 20), "1\n2".to_string()]);
        let mut d = Doc::new();
        d.push_str("line \u{1b}]0;t\u{7} end\n");
        d.table(t);
        // wide enough for the cut cell: one boxed table
        let out = d.render(TableFormat::Text, 400);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out}");
        assert!(
            out.contains("a\\x1b[2Jb") && out.contains("line \\x1b]0;t\\x07 end"),
            "{out}"
        );
        assert!(out.contains("1\\x0a2"), "a cell is one line: {out}");
        assert!(out.len() < 4096, "at most MAX_CELL_CHARS of a cell are laid out");
        assert!(out.contains(&format!("... ({} more)", (5 << 20) - crate::units::MAX_CELL_CHARS)));
    }
}
