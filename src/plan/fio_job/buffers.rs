//! fio's `scramble_buffers=0`: the buffers filled once and written unchanged.

use super::map::Ctx;
use crate::error::Result;

/// Maps `scramble_buffers=0`. fio then writes each of its `iodepth` buffers, filled once
/// with random bytes, again and again; iomark writes one block of random bytes again and
/// again (`--dedup 100` with the block as the unit: every unit after the first repeats
/// it). Where fio would not scramble anyway (it refills, compresses, dedupes or verifies,
/// or the content is zeros or a pattern) the option changes nothing, as in fio. A mix
/// (fio then writes what its buffer last read) or several block sizes (prefixes of one
/// buffer) are refused.
pub(super) fn unscrambled(c: &mut Ctx) -> Result<()> {
    if c.on("scramble_buffers")? != Some(false) {
        return Ok(());
    }
    let verify = c.value("verify").is_some_and(|v| v != "0" && v != "none");
    let refills = c.on("refill_buffers")? == Some(true)
        || c.get("buffer_compress_percentage").is_some()
        || c.get("dedupe_percentage").is_some()
        || verify;
    let fixed = c.on("zero_buffers")? == Some(true) || c.get("buffer_pattern").is_some();
    let last = |c: &Ctx, k: &str| c.job.opt(k).map(str::to_string);
    let rw = last(c, "rw").unwrap_or_else(|| "read".into());
    if refills
        || fixed
        || !matches!(
            rw.as_str(),
            "write" | "randwrite" | "rw" | "randrw" | "trimwrite"
        )
    {
        return Ok(());
    }
    if rw == "rw" || rw == "randrw" {
        c.refuse(
            "scramble_buffers",
            "in a mix fio writes what its buffers last read; iomark cannot write that",
        );
        return Ok(());
    }
    if last(c, "bssplit").is_some() || last(c, "bsrange").is_some() {
        c.refuse(
            "scramble_buffers",
            "with several block sizes fio writes prefixes of one buffer; iomark repeats one block of one size",
        );
        return Ok(());
    }
    let bs = last(c, "bs").unwrap_or_else(|| "4096".into());
    c.set("dedup", "100");
    c.set("dedup-unit", bs.clone());
    c.job.notes.push(format!(
        "scramble_buffers=0: every write repeats one block of {bs} random bytes (--dedup 100 --dedup-unit {bs}); fio cycles through its iodepth buffers, one block each"
    ));
    Ok(())
}

/// fio's engine options that ask for what iomark's engine always does: io_uring's
/// `fixedbufs` and `registerfiles` (iomark's io_uring registers its file and buffers,
/// `docs/engines.md`) and libaio's `userspace_reap` (iomark's libaio reads completions
/// from the ring in user space). `=1` is what it does anyway; `=0` cannot be asked of
/// it, and any of them with another engine is not an option of that engine.
pub(super) fn registered(c: &mut Ctx) -> Result<()> {
    let engine = c.job.opt("engine").map(str::to_string);
    let uring = "iomark's io_uring always registers its file and buffers";
    let aio = "iomark's libaio always reads its completions from the ring in user space";
    for (key, theirs, always) in [
        ("fixedbufs", "io_uring", uring),
        ("registerfiles", "io_uring", uring),
        ("userspace_reap", "libaio", aio),
    ] {
        match c.on(key)? {
            None => {}
            Some(_) if engine.as_deref() != Some(theirs) => {
                c.refuse(key, &format!("an option of fio's {theirs} engine only"))
            }
            Some(true) => {}
            Some(false) => c.refuse(key, always),
        }
    }
    Ok(())
}
