//! `--format markdown`: the text report for an issue or a wiki page, as
//! hyperfine's markdown export: every table a GitHub pipe table (figures
//! right-aligned), the lines between them in fenced code blocks so that
//! nothing in them (`*` significance marks, paths, sparklines) is read as
//! markup.

use super::parts::{cells, right_aligned, Part};
use comfy_table::Table;

/// The report's pieces, laid out.
pub fn render(parts: &[Part]) -> String {
    let mut s = String::new();
    for p in parts {
        // a grid is lines of text here: in the code block, at any width
        let lines;
        let p = match p {
            Part::Grid(g) => {
                lines = Part::Text(super::plain::grid(g, usize::MAX, false));
                &lines
            }
            p => p,
        };
        match p {
            Part::Grid(_) => {}
            Part::Text(t) => {
                let t = t.trim_matches('\n');
                if t.trim().is_empty() {
                    continue;
                }
                // a fence longer than any run of backticks inside
                let longest = t.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                let fence = "`".repeat(longest.max(2) + 1);
                s.push_str(&format!("{fence}text\n{t}\n{fence}\n\n"));
            }
            Part::Table(t) => {
                s.push_str(&table(t));
                s.push('\n');
            }
        }
    }
    s
}

/// A cell's text inside a pipe table: `|` escaped, no line breaks.
fn cell(s: &str) -> String {
    let s = s.trim().replace('\\', "\\\\").replace('|', "\\|").replace('\n', " ");
    if s.is_empty() {
        " ".into()
    } else {
        s
    }
}

/// One table as a GitHub pipe table.
pub fn table(t: &Table) -> String {
    let (head, rows) = cells(t);
    if head.is_empty() {
        return String::new();
    }
    let line = |cs: &[String]| format!("| {} |\n", cs.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    let mut s = line(&head);
    let rule: Vec<String> = (0..head.len())
        .map(|i| if right_aligned(&rows, i) { "---:" } else { ":---" }.to_string())
        .collect();
    s.push_str(&format!("|{}|\n", rule.join("|")));
    for r in &rows {
        s.push_str(&line(r));
    }
    s
}
