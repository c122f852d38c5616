//! What a run imported from fio's output does not know (`fio.unknown`: terse output
//! names no options) is `null` in the document's `spec`, not iomark's default as if fio
//! had said it; a document read back gets the default again, which every report shows as
//! "?" since `fio.unknown` still lists it. Only the JSON text changes: in memory a
//! `Spec` always holds a value.

use serde_json::Value;

use crate::results::schema::{Document, Run};

/// The `spec` fields `fio.unknown` may name.
const FIELDS: [&str; 6] = ["engine", "qd", "jobs", "direct", "data", "seed"];

/// The value a reader puts in place of an unknown field: iomark's default.
fn placeholder(field: &str) -> Value {
    let spec = || crate::plan::spec::Spec::new("?");
    match field {
        "engine" => Value::from("psync"),
        "direct" => Value::from(false),
        "data" => serde_json::to_value(spec().data).unwrap_or(Value::Null),
        "seed" => Value::from(spec().seed),
        _ => Value::from(1),
    }
}

/// The fields of `run`'s `spec` that its `fio.unknown` lists, as JSON keys.
fn unknown_fields(run: &Value) -> Vec<&'static str> {
    let listed = run.pointer("/fio/unknown").and_then(Value::as_array);
    let listed = listed.map(Vec::as_slice).unwrap_or_default();
    (FIELDS.iter())
        .copied()
        .filter(|k| listed.iter().any(|u| u.as_str() == Some(k)))
        .collect()
}

/// `doc` as pretty JSON, every unknown `spec` field of its runs `null`.
pub(crate) fn pretty(doc: &Document) -> String {
    const OK: &str = "results serialize: no maps with non-string keys";
    let unknown = |r: &Run| r.fio.as_ref().is_some_and(|f| !f.unknown.is_empty());
    if !doc.runs.iter().any(unknown) {
        return serde_json::to_string_pretty(doc).expect(OK);
    }
    let mut v = serde_json::to_value(doc).expect(OK);
    to_null(&mut v);
    serde_json::to_string_pretty(&v).expect(OK)
}

/// Sets every unknown `spec` field of every run to `null` (for writing).
fn to_null(doc: &mut Value) {
    for run in doc
        .get_mut("runs")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for k in unknown_fields(run) {
            if let Some(spec) = run.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert(k.to_string(), Value::Null);
            }
        }
    }
}

/// Puts a placeholder in every unknown `spec` field that is `null` (for reading).
pub(crate) fn from_null(doc: &mut Value) {
    for run in doc
        .get_mut("runs")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for k in unknown_fields(run) {
            let Some(spec) = run.get_mut("spec").and_then(Value::as_object_mut) else {
                continue;
            };
            if spec.get(k).is_none_or(Value::is_null) {
                spec.insert(k.to_string(), placeholder(k));
            }
        }
    }
}
