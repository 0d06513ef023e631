//! What keeps names from plans, job files and result files from writing
//! escape sequences to a terminal: text-table cells escaped and cut short,
//! and the bytes of every other format filtered on their way to stdout.

/// A cell's text as a text table shows it: control characters (newlines
/// too) escaped, and at most `units::MAX_CELL_CHARS` characters (then
/// "... (N more)"): comfy_table lays out a cell in more than linear time in
/// its length, and `fslab compare` of a result file with a 50 MB name took
/// minutes; the JSON keeps the whole name.
pub fn safe_cell(s: &str) -> Option<String> {
    let long = s.char_indices().nth(crate::units::MAX_CELL_CHARS);
    let unsafe_char = s.chars().any(crate::units::is_unsafe_char);
    if long.is_none() && !unsafe_char {
        return None;
    }
    let head = &s[..long.map_or(s.len(), |(i, _)| i)];
    let mut out = crate::units::shown(head).into_owned();
    if long.is_some() {
        let more = s[head.len()..].chars().count();
        let _ = std::fmt::Write::write_fmt(&mut out, format_args!("... ({more} more)"));
    }
    Some(out)
}

/// `r` with its unsafe or overlong cells replaced (None: none was). Cells
/// left as they were keep their own alignment; the columns keep theirs.
pub(crate) fn safe_row(r: &comfy_table::Row) -> Option<comfy_table::Row> {
    let changed: Vec<Option<String>> = r.cell_iter().map(|c| safe_cell(&c.content())).collect();
    if changed.iter().all(Option::is_none) {
        return None;
    }
    let cells: Vec<comfy_table::Cell> = r
        .cell_iter()
        .zip(changed)
        .map(|(c, new)| match new {
            Some(n) => comfy_table::Cell::new(n),
            None => c.clone(),
        })
        .collect();
    Some(comfy_table::Row::from(cells))
}

/// Bytes bound for a terminal with `units::terminal_safe` applied: the
/// one filter every format fslab prints goes through (the text tables are
/// already escaped by `Doc`; CSV, fio's formats and JSON get it here). A
/// newline or tab stays; JSON stays valid.
pub fn terminal_bytes(b: Vec<u8>) -> Vec<u8> {
    match String::from_utf8(b) {
        Ok(s) => match crate::units::terminal_safe(&s) {
            std::borrow::Cow::Borrowed(_) => s.into_bytes(),
            std::borrow::Cow::Owned(o) => o.into_bytes(),
        },
        Err(e) => {
            let s = String::from_utf8_lossy(e.as_bytes());
            crate::units::terminal_safe(&s).into_owned().into_bytes()
        }
    }
}
