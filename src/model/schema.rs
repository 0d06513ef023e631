//! The JSON Schema of a result file, generated from the model types (each
//! derives `schemars::JsonSchema` beside its serde derives, so the schema
//! follows the serde attributes and cannot drift from what is written).
//! Checked in as docs/result.schema.json (`fslab schema` prints it;
//! tests/schema.rs fails when the two differ) and described in
//! docs/results.md.
//!
//! The schema describes the current layout, `SCHEMA_VERSION`. It is open:
//! objects may carry properties it does not name, so a reader validating
//! against it keeps working when a later fslab adds a field (a change that
//! removes or retypes one bumps the version).

use super::{Report, SCHEMA_VERSION};

/// The result file's schema (JSON Schema draft 2020-12), as a JSON value.
pub fn result_schema() -> serde_json::Value {
    let mut s = serde_json::to_value(schemars::schema_for!(Report)).expect("a schema is JSON");
    s["title"] = "fslab result file".into();
    s["description"] = format!(
        "A result file of fslab (`--output json:PATH`), schema_version {SCHEMA_VERSION}. \
         Generated from fslab's model types by `fslab schema`; described in docs/results.md."
    )
    .into();
    // the one version this schema describes: older files are read by
    // upgrading them (`model::read`), not by this schema
    s["properties"]["schema_version"]["const"] = SCHEMA_VERSION.into();
    s
}

/// `result_schema` as docs/result.schema.json holds it: pretty-printed,
/// with a final newline.
pub fn result_schema_text() -> String {
    let mut t = serde_json::to_string_pretty(&result_schema()).expect("a schema serialises");
    t.push('\n');
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_the_version_and_the_cell_kinds() {
        let s = result_schema();
        assert_eq!(s["properties"]["schema_version"]["const"], SCHEMA_VERSION);
        let text = result_schema_text();
        for kind in ["\"io\"", "\"meta\"", "\"replay\"", "\"probe\"", "\"fio\""] {
            assert!(text.contains(kind), "no cell kind {kind} in the schema");
        }
    }
}
