//! The shape of the source (issue 34): no file over 600 lines, no function
//! over 100 unless it is a table, and no import cycle between the files of
//! one module. A newcomer reads a file whole and a function on one screen;
//! a cycle means two files can only be understood together. Lines are
//! counted before a file's `#[cfg(test)]` (unit tests live beside their
//! code). Each violation is reported at once, as file:line.

use crate::layering::{rust_files, strip};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 100;

/// Functions allowed over `MAX_FN_LINES`: tables, one arm per option or
/// key, whose length is the number of options (splitting them would hide
/// which options exist). (file under src/, function)
const TABLES: &[(&str, &str)] = &[
    ("plan/fio/map.rs", "map_option"),
    ("plan/fio/map/region.rs", "map"),
    ("plan/fio/map/buffers.rs", "map"),
    ("plan/fio/map/pacing.rs", "map"),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file (relative to src/) with its text before `#[cfg(test)]`
/// and comments and strings blanked.
fn sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = match text.find("\n#[cfg(test)]") {
                Some(i) => &text[..i + 1],
                None => &text[..],
            };
            (f.strip_prefix(src()).unwrap().to_path_buf(), strip(code))
        })
        .collect()
}

/// `fn name` at the start of a stripped line (after `pub`, `const`, ...).
fn fn_name(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    loop {
        let w = words.next()?;
        match w {
            "pub" | "const" | "async" | "unsafe" | "extern" | "\"\"" | "default" => continue,
            w if w.starts_with("pub(") => continue,
            "fn" => {
                let n = words.next()?;
                return Some(n.split(['(', '<']).next().unwrap_or(n));
            }
            _ => return None,
        }
    }
}

/// (name, first line, lines) of every function with a body.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = fn_name(l) else { continue };
        let (mut depth, mut opened) = (0i64, false);
        for (j, m) in lines.iter().enumerate().skip(i) {
            for c in m.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if !opened && m.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
            if opened && depth <= 0 {
                out.push((name.to_string(), i + 1, j - i + 1));
                break;
            }
        }
    }
    out
}

#[test]
fn no_file_over_600_lines_and_no_function_over_100_but_tables() {
    let mut bad = Vec::new();
    for (f, code) in sources() {
        let n = code.lines().count();
        if n > MAX_FILE_LINES {
            bad.push(format!("src/{}: {n} lines (at most {MAX_FILE_LINES})", f.display()));
        }
        for (name, line, len) in functions(&code) {
            let table = TABLES.iter().any(|(tf, tn)| Path::new(tf) == f && *tn == name);
            if len > MAX_FN_LINES && !table {
                bad.push(format!(
                    "src/{}:{line}: fn {name} is {len} lines (at most {MAX_FN_LINES})",
                    f.display()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "split by concern:\n{}", bad.join("\n"));
}

/// The module path of a file relative to src/: `report/fio/json.rs` ->
/// ["report", "fio", "json"]; `report/fio/mod.rs` -> ["report", "fio"].
fn module_of(f: &Path) -> Vec<String> {
    let mut parts: Vec<String> = f.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    parts
}

/// Every path a stripped file names through `crate::`, `super::` or
/// `self::`, resolved to an absolute module path (`use` groups expanded one
/// level: `super::{a, b::c}` names `a` and `b::c`).
fn named_paths(code: &str, me: &[String]) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !(ident(chars[i - 1]) || chars[i - 1] == ':' || chars[i - 1] == '$');
        let rest: String = chars[i..chars.len().min(i + 7)].iter().collect();
        if !starts_word || !(rest.starts_with("crate::") || rest.starts_with("super::") || rest.starts_with("self::")) {
            i += 1;
            continue;
        }
        // the segments up to a `{` or the end of the path
        let mut j = i;
        let mut segs: Vec<String> = Vec::new();
        loop {
            let s = j;
            while j < chars.len() && ident(chars[j]) {
                j += 1;
            }
            segs.push(chars[s..j].iter().collect());
            if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                j += 2;
                if chars.get(j) == Some(&'{') {
                    break;
                }
            } else {
                break;
            }
        }
        let base = resolve(&segs, me);
        if chars.get(j) == Some(&'{') {
            // one level of a use group: each item's leading segments
            let end = chars[j..].iter().position(|&c| c == '}').map_or(chars.len(), |e| j + e);
            let group: String = chars[j + 1..end].iter().collect();
            for item in group.split(',') {
                let mut p = base.clone();
                p.extend(
                    item.trim()
                        .split("::")
                        .map(|s| s.trim_start_matches('{').trim().to_string())
                        .filter(|s| !s.is_empty() && s.chars().all(ident)),
                );
                out.push(p);
            }
            i = end;
        } else {
            out.push(base);
            i = j;
        }
    }
    out
}

/// `segs` (starting with crate, super or self) as an absolute path from
/// the file at module path `me`.
fn resolve(segs: &[String], me: &[String]) -> Vec<String> {
    // a mod.rs is its folder's module, so its `super` is the folder's
    // parent; another file's `super` is its folder's module
    let mut at: Vec<String> = me.to_vec();
    let mut rest = segs;
    match segs[0].as_str() {
        "crate" => {
            at.clear();
            rest = &segs[1..];
        }
        "self" => rest = &segs[1..],
        _ => {
            while rest.first().is_some_and(|s| s == "super") {
                at.pop();
                rest = &rest[1..];
            }
        }
    }
    at.extend(rest.iter().filter(|s| !s.is_empty()).cloned());
    at
}

/// The import cycles between files of one module, each as "a -> b -> a".
fn cycles(files: &[(PathBuf, String)]) -> Vec<String> {
    let modules: BTreeMap<Vec<String>, PathBuf> = files.iter().map(|(f, _)| (module_of(f), f.clone())).collect();
    // the file a path lands in: the longest prefix that is a file's module
    let file_of = |p: &[String]| {
        (1..=p.len())
            .rev()
            .find_map(|n| modules.get_key_value(&p[..n]).map(|(k, _)| k.clone()))
    };
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (f, code) in files {
        let me = module_of(f);
        for p in named_paths(code, &me) {
            let Some(t) = file_of(&p) else { continue };
            // a module re-exporting or calling into its own children is
            // its structure, not an import; the other way round counts
            if t == me || t.starts_with(&me) {
                continue;
            }
            // only cycles inside one top-level module (layering covers the rest)
            if t.first() != me.first() {
                continue;
            }
            edges.entry(me.clone()).or_default().insert(t);
        }
    }
    // every elementary back edge found by a depth-first walk, shown as its cycle
    let mut found = BTreeSet::new();
    for start in edges.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        while let Some((node, path)) = stack.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                if next == start {
                    let mut c: Vec<String> = path.iter().map(|m| m.join("::")).collect();
                    c.push(start.join("::"));
                    // one rotation per cycle: start at its smallest member
                    let min = path.iter().min().unwrap();
                    if min == start {
                        found.insert(c.join(" -> "));
                    }
                } else if !path.contains(next) && path.len() < 8 {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
    }
    found.into_iter().collect()
}

#[test]
fn no_import_cycle_between_the_files_of_a_module() {
    let c = cycles(&sources());
    assert!(
        c.is_empty(),
        "import cycles (move what both need into a third file):\n{}",
        c.join("\n")
    );
}

#[test]
fn the_cycle_finder_sees_a_use_group_and_a_super_path() {
    let f = |p: &str, code: &str| (PathBuf::from(p), strip(code));
    let files = vec![
        f("report/mod.rs", "pub mod a; pub mod b; pub mod c;"),
        f("report/a.rs", "use super::{b::X, c};"),
        f("report/b.rs", "fn f() { crate::report::a::g() }"),
        f(
            "report/c.rs",
            "// super::a::g() in a comment\nconst S: &str = \"super::a\";",
        ),
    ];
    assert_eq!(cycles(&files), vec!["report::a -> report::b -> report::a".to_string()]);
    assert_eq!(
        functions("fn a() {\n    x();\n}\nfn b();\n"),
        vec![("a".to_string(), 1, 3)]
    );
}
