//! Reading saved result files back (`fslab compare`, `fslab report`):
//! schema 2 as it is, schema 1 through `v1`; any other version is refused.

use super::{v1, Report, SCHEMA_VERSION};
use crate::plan::PlanError;
use serde::Deserialize;

/// Largest result file `compare` and `report` read.
const MAX_RESULT_BYTES: u64 = 1 << 30;

/// Why a text is not a result file this fslab reads.
#[derive(Debug)]
pub struct NotOurs {
    /// The line of bad JSON, when known.
    pub line: Option<usize>,
    pub msg: String,
}

impl std::fmt::Display for NotOurs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

/// Parses a result file's text: schema 2, or schema 1 upgraded to 2.
pub fn parse_report(text: &str) -> Result<Report, NotOurs> {
    #[derive(Deserialize)]
    struct Version {
        schema_version: Option<serde_json::Value>,
    }
    let not_ours = |e: serde_json::Error| NotOurs {
        line: (e.line() > 0).then(|| e.line()),
        msg: format!("not an fslab result file: {}", without_input(&e)),
    };
    // the version first: another layout may not parse as this one
    let v: Version = serde_json::from_str(text).map_err(not_ours)?;
    match v.schema_version.as_ref().and_then(|n| n.as_u64()) {
        Some(1) => {
            let doc: serde_json::Value = serde_json::from_str(text).map_err(not_ours)?;
            v1::upgrade(doc).map_err(not_ours)
        }
        // none: the strict parse says which line lacks it
        _ if v.schema_version.is_none() => serde_json::from_str(text).map_err(not_ours),
        Some(n) if n == SCHEMA_VERSION as u64 => serde_json::from_str(text).map_err(not_ours),
        Some(n) => Err(NotOurs {
            line: None,
            msg: format!(
                "schema_version {n} is not one this fslab reads (it reads 1 and {SCHEMA_VERSION}, docs/results.md)"
            ),
        }),
        None => Err(NotOurs {
            line: None,
            msg: format!(
                "schema_version is not a whole number (this fslab reads 1 and {SCHEMA_VERSION}, docs/results.md)"
            ),
        }),
    }
}

/// serde_json's complaint without the input it quotes: its data errors
/// name the offending value (`invalid type: string "..."`, `unknown
/// variant `...``), and a file that is not a result file (any JSON, say a
/// root-only one) must not be read out through the message. What is kept:
/// the kind of value, what was expected (from fslab's own types), the
/// position; syntax errors quote nothing and are kept whole.
fn without_input(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    if e.classify() != serde_json::error::Category::Data {
        return msg;
    }
    // serde_json's Display adds " at line L column C"; rebuild it below
    let at = format!(" at line {} column {}", e.line(), e.column());
    let body = msg.strip_suffix(&at).unwrap_or(&msg);
    // serde's "expected ..." follows the quoted value, so the last one is serde's
    let expected = body.rfind(", expected ").map(|i| &body[i..]);
    let safe_expected = expected.filter(|x| !x.contains('"'));
    let kept = if let Some(rest) = body
        .strip_prefix("invalid type: ")
        .or_else(|| body.strip_prefix("invalid value: "))
    {
        let kind = rest.split([' ', ',']).next().unwrap_or("value");
        let how = if body.starts_with("invalid type") {
            "invalid type"
        } else {
            "invalid value"
        };
        format!("{how}: {kind}{}", safe_expected.unwrap_or(""))
    } else if body.starts_with("unknown variant ") {
        format!("unknown variant{}", safe_expected.unwrap_or(""))
    } else if body.starts_with("unknown field ") {
        format!("unknown field{}", safe_expected.unwrap_or(""))
    } else if !body.contains(['"', '`', '\'']) {
        // "missing field `x`" names fslab's field, "invalid length" a count
        body.to_string()
    } else if let Some(f) = body.strip_prefix("missing field `").and_then(|f| f.strip_suffix('`')) {
        format!("missing field `{f}`")
    } else {
        // a custom message (a duration's parser) may quote its input
        "a value does not fit fslab's result layout (docs/results.md)".to_string()
    };
    format!("{kept}{at}")
}

/// Reads saved result files for `fslab compare` and `fslab report`: each
/// with its label (the file name without `.json`). An unreadable or foreign
/// file is an error naming it (and the line, for bad JSON), as are a layout
/// this fslab does not know (`schema_version`) and one file given twice
/// (it would count as two repeats).
pub fn read_results(files: &[String]) -> Result<Vec<(String, Report)>, PlanError> {
    use std::os::unix::fs::MetadataExt;
    let mut seen: Vec<((u64, u64), &String)> = Vec::new();
    files
        .iter()
        .map(|f| {
            let text = crate::plan::read_regular_file(std::path::Path::new(f), f, MAX_RESULT_BYTES)?;
            if let Ok(m) = std::fs::metadata(f) {
                let id = (m.dev(), m.ino());
                if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
                    return Err(PlanError::new(
                        f.as_str(),
                        format!("is the same file as '{first}': each result file counts once"),
                    ));
                }
                seen.push((id, f));
            }
            let r = parse_report(&text).map_err(|e| match e.line {
                Some(l) => PlanError::new(format!("{f}:{l}"), e.msg),
                None => PlanError::new(f.as_str(), e.msg),
            })?;
            let label = std::path::Path::new(f)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| f.clone());
            Ok((label, r))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_file_that_is_no_result_is_not_quoted() {
        for text in [
            "\"SECRET-4711\"",
            "{\"schema_version\": \"SECRET-4711\"}",
            "{\"schema_version\": 2, \"fslab_version\": \"x\", \"host\": \"SECRET-4711, expected x\"}",
            "{\"schema_version\": 2, \"cells\": [{\"kind\": \"SECRET-4711\"}]}",
            "[\"SECRET-4711\"]",
            "SECRET-4711",
        ] {
            let e = parse_report(text).unwrap_err();
            assert!(!e.msg.contains("4711"), "{text}: {}", e.msg);
        }
        let e = parse_report("{\"schema_version\": \"x\"}").unwrap_err();
        assert!(e.msg.contains("schema_version is not a whole number"), "{}", e.msg);
        let e = parse_report("\"x\"").unwrap_err();
        assert!(
            e.msg
                .contains("invalid type: string, expected struct Version at line 1"),
            "{}",
            e.msg
        );
    }
}
