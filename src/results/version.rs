//! Why a results document that does not say `"schema": "iomark/1"` cannot be read: it
//! says no schema, a newer one (`"iomark/2"`, or a bare number above 1), or another
//! tool's. Messages only; `schema.rs` reads the documents.

use std::path::Path;

use crate::error::Error;
use crate::results::schema::SCHEMA;

/// Why a document without [`SCHEMA`] cannot be read: none, a newer one, or another.
pub(crate) fn other_schema(path: &Path, schema: Option<&serde_json::Value>) -> Error {
    let (shown, ours) = (path.display(), env!("CARGO_PKG_VERSION"));
    let Some(schema) = schema else {
        let no = "is not an iomark results document (no \"schema\" key)";
        return Error::document(format!("{shown} {no}"));
    };
    let v = schema.as_str().map_or(schema.as_u64(), |s| {
        s.strip_prefix("iomark/").and_then(|n| n.parse().ok())
    });
    Error::document(match v {
        Some(n) if n > 1 => format!(
            "{shown} has schema version {schema}, newer than this iomark ({ours}) reads ({SCHEMA}); read it with a newer iomark"
        ),
        _ => format!(
            "{shown} has schema {schema}, not one this iomark ({ours}) reads ({SCHEMA}); give an iomark results file"
        ),
    })
}
