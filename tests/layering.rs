//! Layers import downward only (docs/architecture.md): every `crate::<module>`
//! path in a top-level module's files (use lines and inline paths, also
//! `super::` reaching the crate root) must name a module its row of `LAYERS`
//! allows. Comments, string literals and code after `#[cfg(test)]` (and
//! files that are test modules) do not count. Every violation is reported at
//! once, as file:line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The modules every layer may use: facts with no fslab types in them.
const BOTTOM: &[&str] = &["stats", "units", "errno", "sys", "host_facts"];

/// (module, what it may import besides `BOTTOM`), highest layer first. Kept
/// in step with the table in docs/architecture.md.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "app",
        &[
            "report",
            "vm",
            "target",
            "runner",
            "model",
            "workload",
            "plan",
            "engine",
            "cli",
            "dist",
            "interrupt",
            "telemetry",
        ],
    ),
    ("report", &["model", "plan", "interrupt"]),
    ("vm", &["target", "model", "plan", "interrupt"]),
    ("telemetry", &["model", "plan", "dist"]),
    ("target", &["model", "plan", "workload", "engine", "dist", "interrupt"]),
    ("runner", &["model", "plan", "workload", "engine", "dist", "interrupt"]),
    ("model", &["plan"]),
    ("workload", &["plan", "engine"]),
    ("plan", &["cli", "engine", "dist", "interrupt"]),
    ("engine", &[]),
    ("cli", &[]),
    ("dist", &[]),
    ("interrupt", &[]),
    ("stats", &[]),
    ("units", &[]),
    ("errno", &[]),
    ("sys", &[]),
    ("host_facts", &[]),
];

/// May `from` import `to`?
fn allowed(from: &str, to: &str) -> Option<bool> {
    let (_, may) = LAYERS.iter().find(|(m, _)| *m == from)?;
    // bottom modules may import only what their row names (nothing today)
    Some(to == from || may.contains(&to) || (BOTTOM.contains(&to) && !BOTTOM.contains(&from)))
}

/// Source text with comments and the contents of string and char literals
/// blanked (newlines kept, so line numbers hold).
pub(crate) fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // raw string r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            while j < b.len() {
                if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                blank(&mut out, b[j]);
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                out.push_str("' '");
                i = j + 1;
            } else if b.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The crate modules a stripped line names, with `depth` the number of
/// `super::` that reach the crate root from this file.
fn referenced(line: &str, depth: usize) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut found = Vec::new();
    let text: String = chars.iter().collect();
    let mut starts: Vec<usize> = Vec::new();
    for (pos, _) in text.match_indices("crate::") {
        let before = text[..pos].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == '$') {
            continue;
        }
        starts.push(pos + "crate::".len());
    }
    let super_chain = "super::".repeat(depth);
    if depth > 0 {
        for (pos, _) in text.match_indices(&super_chain) {
            let before = text[..pos].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            let rest = &text[pos + super_chain.len()..];
            if rest.starts_with("super") {
                continue;
            }
            starts.push(pos + super_chain.len());
        }
    }
    for s in starts {
        let rest = &text[s..];
        let rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // use crate::{a, b::c, d::{e, f}}: the first segment of each item
            let mut level = 0;
            let mut item = true;
            let mut cur = String::new();
            for c in group.chars() {
                match c {
                    '{' => level += 1,
                    '}' if level == 0 => break,
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        item = true;
                        continue;
                    }
                    _ => {}
                }
                if item && level == 0 {
                    if is_ident(c) {
                        cur.push(c);
                        continue;
                    }
                    if !cur.is_empty() || !c.is_whitespace() {
                        if !cur.is_empty() {
                            found.push(std::mem::take(&mut cur));
                        }
                        item = false;
                    }
                }
            }
            if !cur.is_empty() {
                found.push(cur);
            }
        } else {
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found.retain(|m| m != "self" && m != "super" && m != "crate");
    found
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Module path depth of a file below src/: src/a.rs and src/a/mod.rs are 1,
/// src/a/b.rs is 2.
fn depth(rel: &Path) -> usize {
    let n = rel.components().count();
    if rel.file_name().is_some_and(|f| f == "mod.rs") {
        n - 1
    } else {
        n
    }
}

/// Where the file of `mod name;` declared in `file` lives.
fn child_files(file: &Path, name: &str) -> [PathBuf; 2] {
    let dir = if file.file_name().is_some_and(|f| f == "mod.rs") {
        file.parent().unwrap().to_path_buf()
    } else {
        file.with_extension("")
    };
    [dir.join(format!("{name}.rs")), dir.join(name).join("mod.rs")]
}

fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // test-only modules in files of their own (`#[cfg(test)] mod tests;`)
    let mut test_only: Vec<PathBuf> = Vec::new();
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    for f in &files {
        let text = strip(&std::fs::read_to_string(f).unwrap());
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if l.trim() == "#[cfg(test)]" {
                if let Some(m) = lines.get(i + 1).and_then(|n| {
                    n.trim()
                        .trim_start_matches("pub ")
                        .strip_prefix("mod ")
                        .and_then(|r| r.strip_suffix(';'))
                }) {
                    test_only.extend(child_files(f, m.trim()));
                }
            }
        }
        texts.insert(f.clone(), text);
    }
    let mut bad = Vec::new();
    for (f, text) in &texts {
        if test_only.iter().any(|t| f.starts_with(t.with_extension("")) || f == t) {
            continue;
        }
        let rel = f.strip_prefix(src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy();
        let module = top.trim_end_matches(".rs").to_string();
        if module == "main" || module == "lib" {
            continue;
        }
        let d = depth(rel);
        for (n, line) in text.lines().enumerate() {
            if line.trim() == "#[cfg(test)]" {
                break;
            }
            for to in referenced(line, d) {
                match allowed(&module, &to) {
                    None => bad.push(format!(
                        "src/{}:{}: module '{module}' is not in the layer table",
                        rel.display(),
                        n + 1
                    )),
                    Some(false) => bad.push(format!(
                        "src/{}:{}: {module} imports crate::{to}, which is not below it",
                        rel.display(),
                        n + 1
                    )),
                    Some(true) => {}
                }
            }
        }
    }
    bad
}

#[test]
fn layers_import_downward_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "{} upward or sideways imports (see docs/architecture.md):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_scanner_sees_paths_and_not_comments_or_strings() {
    let text = strip(
        "use crate::{plan::X, stats};\nlet s = \"crate::report\"; // crate::app\n/* crate::target */ crate::runner::f();\nlet c = '\"'; crate::units::x();\nsuper::super::model::Y;\n",
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(referenced(lines[0], 1), ["plan", "stats"]);
    assert!(referenced(lines[1], 1).is_empty());
    assert_eq!(referenced(lines[2], 1), ["runner"]);
    assert_eq!(referenced(lines[3], 1), ["units"]);
    assert_eq!(referenced(lines[4], 2), ["model"]);
    assert!(referenced(lines[4], 3).is_empty());
}
