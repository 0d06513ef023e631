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
        msg: format!("not an fslab result file: {e}"),
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
        _ => Err(NotOurs {
            line: None,
            msg: format!(
                "schema_version {} is not one this fslab reads (it reads 1 and {SCHEMA_VERSION}, docs/results.md)",
                v.schema_version.expect("matched above")
            ),
        }),
    }
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
