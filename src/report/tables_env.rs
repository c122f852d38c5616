//! The tables of where a run ran and what it cost the device: a run's write
//! amplification and target environment, a document's provenance and host.

use crate::report::table::Table;
use crate::results::schema::{Document, Run};
use crate::units::fmt_size;

/// A run's write amplification from each source as name/value rows; empty when none.
pub(crate) fn run_amplification(r: &Run) -> Table {
    let mut t = Table::new(["", ""]);
    for w in &r.write_amplification_sources {
        t.push([
            format!("write amplification ({})", w.source),
            match w.ratio {
                Some(x) => format!(
                    "{x:.3} ({} bytes on the device side for {} on the host side) — {}",
                    w.device_bytes.unwrap_or(0),
                    w.host_bytes.unwrap_or(0),
                    w.note
                ),
                None => w.note.clone(),
            },
        ]);
    }
    t
}

/// A run's target environment as name/value rows: device, filesystem. Empty (no rows)
/// when nothing is known.
pub(crate) fn run_environment(r: &Run) -> Table {
    let mut t = Table::new(["", ""]);
    if let Some(d) = &r.target.device {
        let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        t.push(["device".into(), format!("{} (disk {})", d.name, d.disk)]);
        t.push(["model".into(), or_dash(&d.model)]);
        t.push(["scheduler".into(), or_dash(&d.scheduler)]);
        t.push([
            "logical block size".into(),
            d.logical_block_size.map_or("-".into(), |v| v.to_string()),
        ]);
    }
    if let Some(f) = &r.target.filesystem {
        t.push([
            "filesystem".into(),
            format!("{} on {}", f.fstype, f.mount_point),
        ]);
        t.push(["mount options".into(), f.options.clone()]);
    }
    t
}

/// Whether a document is fio's output read by `results::fio` (it records no host).
fn imported_fio(d: &Document) -> bool {
    d.tool.name == "fio"
}

/// The tool as it names itself: "iomark 0.1.0", "fio-3.33" (fio's version already
/// carries its name).
fn tool_name(d: &Document) -> String {
    if d.tool.version.starts_with(&d.tool.name) {
        d.tool.version.clone()
    } else {
        format!("{} {}", d.tool.name, d.tool.version)
    }
}

/// Where a document came from, in one line: "iomark 0.1.0 on vm (AMD EPYC, kernel 6.1),
/// 4 runs, started …", or for fio's output "fio-3.33 output (imported; host not
/// recorded), 1 run, started …". Empty host fields are left out, not printed as "()".
pub(crate) fn provenance(d: &Document) -> String {
    let h = &d.host;
    let host = if imported_fio(d) {
        " output (imported; host not recorded)".to_string()
    } else {
        let detail: Vec<String> = [
            h.cpu.clone(),
            if h.kernel.is_empty() {
                String::new()
            } else {
                format!("kernel {}", h.kernel)
            },
        ]
        .into_iter()
        .filter(|x| !x.is_empty())
        .collect();
        match (h.hostname.is_empty(), detail.is_empty()) {
            (true, _) => String::new(),
            (false, true) => format!(" on {}", h.hostname),
            (false, false) => format!(" on {} ({})", h.hostname, detail.join(", ")),
        }
    };
    let n = d.runs.len();
    let mut s = format!(
        "{}{host}, {n} run{}",
        tool_name(d),
        if n == 1 { "" } else { "s" }
    );
    if !d.started.is_empty() {
        s.push_str(&format!(", started {}", d.started));
    }
    s
}

/// The host and tool a document was measured with, as name/value rows.
pub(crate) fn host(label: &str, d: &Document) -> Table {
    let h = &d.host;
    let mut t = Table::new(["", label]);
    t.push(["tool".into(), tool_name(d)]);
    t.push(["started".into(), d.started.clone()]);
    if imported_fio(d) {
        t.push([
            "host".to_string(),
            "not recorded (imported fio output)".to_string(),
        ]);
        return t;
    }
    t.push(["host".into(), h.hostname.clone()]);
    t.push(["kernel".into(), h.kernel.clone()]);
    t.push(["CPU".into(), format!("{} ({} cores)", h.cpu, h.cores)]);
    t.push(["memory".into(), fmt_size(h.memory_bytes)]);
    t
}
