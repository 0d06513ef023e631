//! A cell's verdict line in the text reports, with or without its flags
//! and warnings (`--quiet-warnings` keeps those in the JSON and says how
//! many there are, so a quiet report never hides that something was found).

use crate::model::Cell;

/// "verdict: device-bound (...); too-short: ..." or, quiet, "verdict:
/// device-bound (...); 2 flags, 1 warning in the JSON"; None for a cell
/// with nothing to say. `warnings` counts the cell's warnings into the
/// quiet line (the loud report prints them on their own lines).
pub fn line(c: &Cell, quiet: bool) -> Option<String> {
    if !quiet {
        return c.verdict.as_ref().map(|v| format!("verdict: {}", v.line()));
    }
    let flags = c.verdict.as_ref().map_or(0, |v| v.flags.len());
    let mut hidden = Vec::new();
    if flags > 0 {
        hidden.push(format!("{flags} flag{}", if flags == 1 { "" } else { "s" }));
    }
    let w = c.warnings.len();
    if w > 0 {
        hidden.push(format!("{w} warning{}", if w == 1 { "" } else { "s" }));
    }
    let hidden = (!hidden.is_empty()).then(|| format!("{} in the JSON", hidden.join(", ")));
    match (&c.verdict, hidden) {
        (Some(v), Some(h)) => Some(format!("verdict: {}; {h}", v.bound_line())),
        (Some(v), None) => Some(format!("verdict: {}", v.bound_line())),
        (None, Some(h)) => Some(h),
        (None, None) => None,
    }
}
