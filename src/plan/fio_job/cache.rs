//! fio's page-cache options and its random map: `fadvise_hint` → `--fadvise`,
//! `invalidate` → `--invalidate`, and `norandommap` (or its absence) → `--random-map`.

use super::map::Ctx;
use crate::error::{Error, Result};

/// Maps `fadvise_hint` (fio's default `1`: advice by the pattern), `invalidate` (fio's
/// default `1`: the file's pages dropped as the job opens it and, time-based, at each
/// new pass) and the random map of a random job (fio's default, unless `norandommap`,
/// a block-size mix or other sizes for writes, a skewed distribution or `:N` runs,
/// which iomark draws without one).
pub(super) fn page_cache(c: &mut Ctx) -> Result<()> {
    let hint = match c.value("fadvise_hint") {
        None | Some("1") => "auto",
        Some("0") => "none",
        Some("random") => "random",
        Some("sequential") => "sequential",
        Some(v) => {
            let at = c
                .get("fadvise_hint")
                .map(|e| e.at.clone())
                .unwrap_or_default();
            return Err(Error::usage(format!(
                "{at}: fadvise_hint={v}: use 0, 1, random or sequential"
            )));
        }
    };
    // fio's mmap engine advises its mapping by the pattern for any hint but 0 (a random
    // read with `fadvise_hint=sequential` is MADV_RANDOM there): so does iomark's here.
    let hint = match (c.value("ioengine"), hint) {
        (Some("mmap"), "random" | "sequential") => {
            c.job.notes.push(format!(
                "fadvise_hint={hint} with ioengine=mmap: fio's mmap engine advises its mapping by the pattern for any hint but 0, and so does iomark here (--fadvise auto)"
            ));
            "auto"
        }
        _ => hint,
    };
    let invalidate = match c.get("invalidate") {
        None => true,
        Some(e) => super::map::flag(e)?,
    };
    // Direct I/O has no readahead to advise and no pages of its own to drop: a direct
    // job keeps iomark's defaults, which do the same there (and draw no note).
    if !c.job.opts.iter().any(|(k, _)| k == "direct") {
        c.set("fadvise", hint);
        c.set("invalidate", if invalidate { "pass" } else { "off" });
    }
    let set = |name: &str| c.job.opts.iter().any(|(k, _)| k == name);
    let random = c.job.opt("rw").is_some_and(|rw| rw.starts_with("rand"));
    let skewed =
        (c.job.opt("random-distribution")).is_some_and(|d| d != "random" && d != "uniform");
    let norandommap = c.get("norandommap").map(super::map::flag).transpose()? == Some(true);
    if random
        && !norandommap
        && !skewed
        && !set("bssplit")
        && !set("bsrange")
        && !set("write-bs")
        && !set("random-run")
    {
        c.set("random-map", "1");
    }
    Ok(())
}
