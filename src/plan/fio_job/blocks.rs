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

/// The sides of a `read,write,trim` value: a side not given takes the one before it.
fn sides(text: &str) -> (&str, &str, &str) {
    let sides: Vec<&str> = text.split(',').map(str::trim).collect();
    let read = sides[0];
    let write = sides.get(1).copied().unwrap_or(read);
    let trim = sides.get(2).copied().unwrap_or(write);
    (read, write, trim)
}

/// The side the pattern uses, and a mix's writes' side when it differs from its reads'
/// (iomark's `--write-bs`); `None` (refused) for a trimwrite whose sides differ.
fn pick<T: PartialEq + Copy>(
    c: &mut Ctx,
    key: &str,
    pattern: &str,
    (read, write, trim): (T, T, T),
) -> Option<(T, Option<T>)> {
    match pattern {
        "trimwrite" if trim != write => {
            c.refuse(
                key,
                "different trim and write block sizes in trimwrite are not in iomark",
            );
            None
        }
        "write" | "randwrite" | "trimwrite" => Some((write, None)),
        "trim" | "randtrim" => Some((trim, None)),
        "rw" | "randrw" => Some((read, (write != read).then_some(write))),
        _ => Some((read, None)),
    }
}

/// `bssplit` (`SIZE/PCT:…`, `sep` '/') or `bsrange` (`LOW-HIGH`, `sep` '-'), its sizes in
/// bytes, for iomark's option of the same name (and `--write-bs` for a mix's writes).
fn mix(c: &mut Ctx, key: &str, sep: char, pattern: &str) -> Result<()> {
    let e = c.get(key).cloned().expect("checked by the caller");
    let text = e.value.clone().unwrap_or_default();
    let Some((side, write)) = pick(c, key, pattern, sides(&text)) else {
        return Ok(());
    };
    let bad = |s: &str| {
        Error::usage(format!(
            "{}: {key}={text}: '{s}' is not a size (e.g. 4k)",
            e.at
        ))
    };
    let bytes = |side: &str| -> Result<String> {
        let mut out = Vec::new();
        for part in side.split(':').filter(|p| !p.trim().is_empty()) {
            let mut pieces = part.splitn(2, sep);
            let s = pieces.next().unwrap_or("").trim();
            let b = fio_size(s, c.kb_base).ok_or_else(|| bad(s))?;
            out.push(match pieces.next() {
                Some(rest) if key == "bsrange" => {
                    let hi = fio_size(rest.trim(), c.kb_base).ok_or_else(|| bad(rest))?;
                    format!("{b}-{hi}")
                }
                Some(pct) => format!("{b}/{}", pct.trim()),
                None => b.to_string(),
            });
        }
        match out.is_empty() {
            true => Err(bad(side)),
            false => Ok(out.join(":")),
        }
    };
    let (side, write) = (bytes(side)?, write.map(bytes).transpose()?);
    c.set(key, side);
    if let Some(w) = write {
        c.set("write-bs", w);
    }
    Ok(())
}

/// `bs`, with fio's read,write pairs: the side the pattern uses (and `--write-bs` for a
/// mix whose writes' size differs).
fn bs(c: &mut Ctx, pattern: &str) -> Result<()> {
    let Some(e) = c.get("bs").cloned() else {
        return Ok(());
    };
    let text = e.value.clone().unwrap_or_default();
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
    let (r, w, t) = sides(&text);
    let all = (size(r)?, size(w)?, size(t)?);
    let Some((b, write)) = pick(c, "bs", pattern, all) else {
        return Ok(());
    };
    c.set("bs", b.to_string());
    if let Some(w) = write {
        c.set("write-bs", w.to_string());
    }
    Ok(())
}
