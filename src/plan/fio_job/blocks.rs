//! fio's block sizes → iomark's: `bs`, `bssplit` and `bsrange`, each with fio's
//! `read,write,trim` sides (the side the pattern uses; a side not given takes the one
//! before it, as in fio), sizes converted with fio's units.
//! As in fio, `bssplit` wins over `bsrange`, and either over `bs`.

use super::map::Ctx;
use super::units::fio_size;
use crate::error::{Error, Result};

/// The block-size options of a job whose pattern is `pattern`.
pub(super) fn block_sizes(c: &mut Ctx, pattern: &str) -> Result<()> {
    let over = |k: &str| format!("fio uses {k} instead");
    if c.get("bssplit").is_some() {
        for k in ["bs", "bsrange"] {
            if c.get(k).is_some() {
                c.job.notes.push(format!("{k}: {}", over("bssplit")));
            }
        }
        return mix(c, "bssplit", '/', pattern);
    }
    if c.get("bsrange").is_some() {
        if c.get("bs").is_some() {
            c.job.notes.push(format!("bs: {}", over("bsrange")));
        }
        return mix(c, "bsrange", '-', pattern);
    }
    bs(c, pattern)
}

/// The side of a `read,write` value the pattern uses; `None` (refused) for a mix whose
/// two sides differ.
fn side<'t>(c: &mut Ctx, key: &str, text: &'t str, pattern: &str) -> Option<&'t str> {
    let sides: Vec<&str> = text.split(',').map(str::trim).collect();
    let read = sides[0];
    let write = sides.get(1).copied().unwrap_or(read);
    let trim = sides.get(2).copied().unwrap_or(write);
    let mixed = pattern == "rw" || pattern == "randrw";
    if (mixed && read != write) || (pattern == "trimwrite" && trim != write) {
        c.refuse(key, &differ(pattern));
        return None;
    }
    Some(match pattern {
        "write" | "randwrite" | "trimwrite" => write,
        "trim" | "randtrim" => trim,
        _ => read,
    })
}

/// Why a mixed pattern's two sides cannot differ.
fn differ(pattern: &str) -> String {
    match pattern {
        "trimwrite" => "different trim and write block sizes in trimwrite are not in iomark",
        _ => "different read and write block sizes in one mix are not in iomark",
    }
    .to_string()
}

/// `bssplit` (`SIZE/PCT:…`, `sep` '/') or `bsrange` (`LOW-HIGH`, `sep` '-'), its sizes in
/// bytes, for iomark's option of the same name.
fn mix(c: &mut Ctx, key: &str, sep: char, pattern: &str) -> Result<()> {
    let e = c.get(key).cloned().expect("checked by the caller");
    let text = e.value.clone().unwrap_or_default();
    let Some(side) = side(c, key, &text, pattern) else {
        return Ok(());
    };
    let bad = |s: &str| {
        Error::usage(format!(
            "{}: {key}={text}: '{s}' is not a size (e.g. 4k)",
            e.at
        ))
    };
    let mut out = Vec::new();
    for part in side.split(':').filter(|p| !p.trim().is_empty()) {
        let mut pieces = part.splitn(2, sep);
        let s = pieces.next().unwrap_or("").trim();
        let bytes = fio_size(s, c.kb_base).ok_or_else(|| bad(s))?;
        out.push(match pieces.next() {
            Some(rest) if key == "bsrange" => {
                let hi = fio_size(rest.trim(), c.kb_base).ok_or_else(|| bad(rest))?;
                format!("{bytes}-{hi}")
            }
            Some(pct) => format!("{bytes}/{}", pct.trim()),
            None => bytes.to_string(),
        });
    }
    if out.is_empty() {
        return Err(bad(side));
    }
    c.set(key, out.join(":"));
    Ok(())
}

/// `bs`, with fio's read,write pairs: the side the pattern uses.
fn bs(c: &mut Ctx, pattern: &str) -> Result<()> {
    let Some(e) = c.get("bs").cloned() else {
        return Ok(());
    };
    let text = e.value.clone().unwrap_or_default();
    let sides: Vec<&str> = text.split(',').map(str::trim).collect();
    let size = |s: &str| -> Result<u64> {
        if s.is_empty() {
            return Ok(4096); // fio's default for a side left empty
        }
        fio_size(s, c.kb_base).ok_or_else(|| {
            Error::usage(format!(
                "{}: bs={text}: '{s}' is not a size (e.g. 4k)",
                e.at
            ))
        })
    };
    let read = size(sides[0])?;
    let write = match sides.get(1) {
        Some(w) => size(w)?,
        None => read,
    };
    let trim = match sides.get(2) {
        Some(t) => size(t)?,
        None => write,
    };
    let mixed = pattern == "rw" || pattern == "randrw";
    if (mixed && read != write) || (pattern == "trimwrite" && trim != write) {
        c.refuse("bs", &differ(pattern));
        return Ok(());
    }
    let b = match pattern {
        "write" | "randwrite" | "trimwrite" => write,
        "trim" | "randtrim" => trim,
        _ => read,
    };
    c.set("bs", b.to_string());
    Ok(())
}
