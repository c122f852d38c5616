//! The text report's CPU line of a repetition, and the words under its device line on
//! the flushes the kernel also counts as writes (`report::text`).

use std::fmt::Write;

use super::counted;
use crate::results::schema::Repetition;
use crate::units::fmt_ns;

/// Why the device counted more writes than iomark made, or what share of its writes can
/// be flushes: the kernel counts a flush asked on its own (an fsync's, and the one after
/// each `O_SYNC`/`O_DSYNC` write of psync) as a flush and also as a write of no data,
/// where the flush that follows a write (libaio's or io_uring's `O_DSYNC` writes) is
/// counted as a flush only. Psync's 1024 `O_DSYNC` writes on a loop device: 2048 writes,
/// 2048 flushes; `--fsync 4`'s 1024 writes: 1279 writes, 255 flushes; buffered with
/// `--fsync 4` (writeback merging the data): 510 writes, 255 flushes, said since
/// 2026-11-29 as at most iomark's own fsyncs (libaio's 1024 `O_DSYNC` writes: 1024
/// writes, 271 flushes, none of them a write). Nothing for such flushes below 1% of the
/// device's writes (an end fsync's one).
pub(super) fn empty_flush_writes(
    d: &crate::results::env::DeviceDelta,
    own_writes: u64,
    own_fsyncs: u64,
) -> Option<String> {
    let flushes = d.flush_ios.min(d.write_ios);
    let which = match d.write_ios.checked_sub(own_writes).filter(|e| *e > 0) {
        Some(extra) => format!(
            "up to {} of the {extra} writes beyond iomark's {own_writes} are such flushes",
            extra.min(flushes)
        ),
        None => {
            let asked = flushes.min(own_fsyncs);
            if asked == 0 || asked * 100 < d.write_ios {
                return None;
            }
            format!(
                "up to {asked} of the device's {} writes (iomark made {}) are such flushes, not data",
                d.write_ios,
                crate::report::text::counted(own_fsyncs, "fsync", "fsyncs")
            )
        }
    };
    (flushes > 0).then(|| {
        format!(
            "the kernel counts a cache flush asked on its own (an fsync's, or the one after a buffered or psync O_SYNC or O_DSYNC write) as a flush and also as a write of no data: {which}"
        )
    })
}

/// The repetition's CPU time, per I/O when any completed (and how it divides between the
/// job threads, io_uring's kernel threads and the rest, when it was measured so), and
/// its fsyncs.
pub(super) fn cpu_line(out: &mut String, rep: &Repetition) {
    let c = &rep.cpu;
    let names = ["job threads", "io-wq", "SQPOLL", "rest"];
    let parts: Vec<String> = (c.parts().iter().zip(names))
        .filter(|((_, p), _)| p.per_io_ns > 0.0)
        // (A part below half a nanosecond is there all the same: "0 ns" read as none.)
        .map(|((_, p), name)| match p.per_io_ns < 0.5 {
            true => format!("{name} <1 ns"),
            false => format!("{name} {}", fmt_ns(p.per_io_ns)),
        })
        .collect();
    let _ = writeln!(
        out,
        "  cpu  : user {:.2} s, sys {:.2} s, {} per I/O{}{}",
        c.user_s,
        c.sys_s,
        match rep.read.ios + rep.write.ios + rep.trim.ios {
            0 => "n/a".to_string(),
            _ => fmt_ns(c.per_io_ns),
        },
        match c.workers.per_io_ns > 0.0 && parts.len() > 1 {
            true => format!(" ({})", parts.join(", ")),
            false => String::new(),
        },
        if rep.fsyncs > 0 {
            format!("; {}", counted(rep.fsyncs, "fsync", "fsyncs"))
        } else {
            String::new()
        }
    );
}
