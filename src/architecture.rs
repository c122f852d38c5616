//! The import rules of the crate, checked against the source: each folder of `src/` may
//! use only the folders below it (see `docs/ARCHITECTURE.md`), so there are no cycles,
//! `report` never reaches into measuring or I/O, `cli` does no I/O, and only `io` calls
//! `libc`. The checker reads every `crate::<folder>` path in a file (in `use` lines and
//! inline), so a new forbidden edge fails `cargo test` with the file and line.

/// The folders (and base modules) each folder may import. A module not listed here is
/// unknown to the rules and fails the check until it is given a place.
const ALLOWED: &[(&str, &[&str])] = &[
    ("units", &[]),
    ("error", &[]),
    ("stop", &[]),
    ("architecture", &[]),
    ("plan", &["units", "error"]),
    ("results", &["plan", "units", "error"]),
    ("report", &["results", "plan", "units", "error"]),
    ("workload", &["results", "plan", "units", "error", "stop"]),
    (
        "io",
        &["workload", "results", "plan", "units", "error", "stop"],
    ),
    (
        "measure",
        &[
            "io", "workload", "results", "plan", "units", "error", "stop",
        ],
    ),
    (
        "study",
        &[
            "measure", "io", "workload", "results", "plan", "units", "error", "stop",
        ],
    ),
    ("cli", &["report", "results", "plan", "units", "error"]),
    (
        "command",
        &[
            "cli", "study", "report", "measure", "io", "workload", "results", "plan", "units",
            "error", "stop",
        ],
    ),
];

/// Folders whose files may call `libc` directly.
const LIBC: &[&str] = &["io"];

/// The top-level module a file under `src/` belongs to: `measure/worker.rs` → `measure`,
/// `units.rs` → `units`; `None` for the crate roots (`lib.rs`, `main.rs`).
fn module_of(rel: &str) -> Option<&str> {
    let first = rel.split('/').next()?;
    let m = first.strip_suffix(".rs").unwrap_or(first);
    (m != "lib" && m != "main").then_some(m)
}

/// Every rule `text` (the file `rel`, relative to `src/`) breaks, as "file:line: why".
pub(crate) fn violations(rel: &str, text: &str) -> Vec<String> {
    let Some(me) = module_of(rel) else {
        return Vec::new();
    };
    let Some((_, allowed)) = ALLOWED.iter().find(|(m, _)| *m == me) else {
        return vec![format!(
            "{rel}: module '{me}' has no place in the import rules"
        )];
    };
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let target: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !target.is_empty() && target != me && !allowed.contains(&target.as_str()) {
                out.push(format!("{rel}:{}: '{me}' may not import '{target}'", n + 1));
            }
        }
        if code.contains("libc::") && !LIBC.contains(&me) {
            out.push(format!(
                "{rel}:{}: only {LIBC:?} may call libc; go through io::sys",
                n + 1
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }

    #[test]
    fn the_source_keeps_the_import_rules() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        walk(&root, &root, &mut files);
        assert!(files.len() > 30, "found the source");
        let bad: Vec<String> = files
            .iter()
            .filter(|(rel, _)| rel != "architecture.rs")
            .flat_map(|(rel, text)| violations(rel, text))
            .collect();
        assert!(bad.is_empty(), "forbidden imports:\n{}", bad.join("\n"));
    }

    /// The test of the test: forbidden edges are caught.
    #[test]
    fn a_forbidden_import_is_caught() {
        let v = violations(
            "report/html.rs",
            "use crate::results::schema::Run;\nuse crate::measure::run::run;\n",
        );
        assert_eq!(v, ["report/html.rs:2: 'report' may not import 'measure'"]);
        let v = violations("plan/spec.rs", "fn f() { crate::results::stats::t975(3); }");
        assert_eq!(v.len(), 1, "plan is below results: {v:?}");
        let v = violations("cli/mod.rs", "let x = crate::io::sys::is_root();");
        assert_eq!(v.len(), 1, "cli does no I/O: {v:?}");
        let v = violations("measure/rep.rs", "unsafe { libc::getpid() };");
        assert_eq!(v.len(), 1, "libc only in io: {v:?}");
        let v = violations(
            "io/sys.rs",
            "unsafe { libc::getpid() }; crate::measure::run::run",
        );
        assert_eq!(v.len(), 1, "io is below measure: {v:?}");
        assert!(violations("main.rs", "use crate::study::runner;").is_empty());
        // A comment is not an import.
        assert!(violations("report/x.rs", "// see crate::measure::run").is_empty());
        assert_eq!(
            violations("newthing/a.rs", "").len(),
            1,
            "unknown folders fail"
        );
    }
}
