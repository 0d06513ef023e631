//! Schema 1 result files: their cells carry the plan alone, untyped. A cell's
//! kind is inferred from what it holds (as schema 1's reporters did), the
//! plan fields fslab added while writing schema 1 are filled in, and the
//! file is read as schema 2.

use super::{Report, SCHEMA_VERSION};
use serde_json::{json, Map, Value};

/// Plan fields later schema-1 writers added, with the value that means
/// what the earlier files did (none of them changes what a reporter shows).
fn added_fields(kind: &str, plan: &Map<String, Value>) -> Vec<(&'static str, Value)> {
    let common = [("stop_on_error", json!(false))];
    let io = || {
        vec![
            ("bs_max", plan.get("bs").cloned().unwrap_or(json!(0))),
            ("bssplit", json!([])),
            ("nrfiles", json!(1)),
            ("fdatasync_every", json!(0)),
            ("end_fsync", json!(false)),
            ("thinktime", Value::Null),
            ("verify", json!(false)),
            ("verify_only", json!(false)),
            ("time_based", json!(false)),
            ("lat_percentiles", json!([])),
        ]
    };
    let mut v = match kind {
        "io" | "fio" => io(),
        _ => Vec::new(),
    };
    v.extend(common);
    v
}

fn fill(kind: &str, plan: &mut Map<String, Value>) {
    for (k, v) in added_fields(kind, plan) {
        plan.entry(k).or_insert(v);
    }
}

/// The kind of a schema-1 cell: a load file is a replay, probe data a
/// probe, fio's job info a fio job, files or phases a metadata run, else io.
fn infer_kind(cell: &Map<String, Value>, plan: &Map<String, Value>) -> &'static str {
    let has_phases = cell
        .get("directions")
        .and_then(Value::as_array)
        .is_some_and(|ds| ds.iter().any(|d| d.get("phase").is_some_and(|p| !p.is_null())));
    if plan.contains_key("loadfile") {
        "replay"
    } else if cell.get("probe").is_some_and(|p| !p.is_null()) {
        "probe"
    } else if plan.contains_key("fio") {
        "fio"
    } else if plan.contains_key("files") || has_phases {
        "meta"
    } else {
        "io"
    }
}

/// A schema-1 cell in schema 2's shape: `kind` beside its plan.
fn upgrade_cell(cell: &mut Map<String, Value>) {
    let mut plan = match cell.remove("plan") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    // a lab cell that failed recorded the lab's plan enum: {"io": {...}}
    let wrapped = match plan.iter().next() {
        Some((k, Value::Object(_))) if plan.len() == 1 && ["io", "meta", "replay", "probe"].contains(&k.as_str()) => {
            Some(k.clone())
        }
        _ => None,
    };
    let kind: &str = match wrapped {
        Some(k) => {
            let Some(Value::Object(inner)) = plan.remove(&k) else {
                unreachable!("matched above")
            };
            plan = inner;
            match k.as_str() {
                "io" => "io",
                "meta" => "meta",
                "replay" => "replay",
                _ => "probe",
            }
        }
        None => infer_kind(cell, &plan),
    };
    fill(kind, &mut plan);
    // a probe's io load carries an io plan of its own
    if let Some(Value::Object(load)) = plan.get_mut("load").and_then(|l| l.get_mut("plan")) {
        fill("io", load);
    }
    cell.insert("kind".into(), kind.into());
    cell.insert("plan".into(), Value::Object(plan));
}

/// Reads a schema-1 document as a schema-2 report.
pub(super) fn upgrade(mut doc: Value) -> serde_json::Result<Report> {
    if let Some(cells) = doc.get_mut("cells").and_then(Value::as_array_mut) {
        for c in cells.iter_mut().filter_map(Value::as_object_mut) {
            upgrade_cell(c);
        }
    }
    doc["schema_version"] = SCHEMA_VERSION.into();
    serde_json::from_value(doc)
}
