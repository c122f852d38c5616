//! fio's engine options: `sync`, `sqthread_poll` and its CPU, `hipri`, `cpus_allowed`
//! and its policy, and the batches (`iodepth_batch_submit`, `iodepth_batch_complete_min`)
//! as fio reads them.

use super::map::Ctx;
use crate::error::Result;

/// The engine's own options, under fio's names.
pub(super) fn engine_opts(c: &mut Ctx, engine: &str) -> Result<()> {
    for (fio, ours) in [("sync", "sync-mode"), ("sqthread_poll_cpu", "sqpoll-cpu")] {
        if let Some(v) = c.value(fio).map(str::to_string) {
            c.set(ours, v);
        }
    }
    batches(c, engine);
    for (fio, ours) in [("sqthread_poll", "sqpoll"), ("hipri", "hipri")] {
        if c.on(fio)? == Some(true) {
            c.set(ours, "1");
        }
    }
    // fio's default policy is shared; iomark's is split.
    let policy = c.value("cpus_allowed_policy").map(str::to_string);
    if let Some(list) = c.value("cpus_allowed").map(str::to_string) {
        // fio's list is a set of CPUs, split in ascending order (`cpus_allowed=1,0` puts
        // the first job on CPU 0); iomark's `--cpus` keeps the order given. (Unreadable:
        // as it is, to be refused there.)
        let set = crate::plan::engine::parse_cpus(&list).map(|mut cpus| {
            cpus.sort_unstable();
            cpus.dedup();
            crate::plan::engine::fmt_cpus(&cpus)
        });
        c.set("cpus", set.unwrap_or(list));
        c.set("cpus-policy", policy.unwrap_or_else(|| "shared".into()));
    } else if let Some(p) = policy {
        let note =
            format!("cpus_allowed_policy={p} without cpus_allowed changes nothing, as in fio");
        c.job.notes.push(note);
    }
    Ok(())
}

/// fio's batches, as fio reads them: none with an engine that has no queue to batch
/// (psync, mmap, null: fio ignores them there; said); `iodepth_batch_submit=0` is the
/// iodepth, and
/// either above the iodepth is the iodepth (fio lowers them without a word; said here);
/// `iodepth_batch_complete_min=0` is one I/O at a time ([`one_at_a_time`]). Anything
/// else (not a number) goes to `--batch-submit` and `--batch-complete` as it is, to be
/// refused there.
fn batches(c: &mut Ctx, engine: &str) {
    let depth = c
        .value("iodepth")
        .and_then(|d| d.parse::<u64>().ok())
        .unwrap_or(1);
    if matches!(engine, "io_uring" | "libaio") && one_at_a_time(c, depth) {
        return;
    }
    for (fio, ours) in [
        ("iodepth_batch_submit", "batch-submit"),
        ("iodepth_batch_complete_min", "batch-complete"),
    ] {
        let Some(v) = c.value(fio).map(str::to_string) else {
            continue;
        };
        if !matches!(engine, "io_uring" | "libaio") {
            c.job.notes.push(format!(
                "{fio}={v} batches an asynchronous engine's requests and ioengine={engine} has none to batch: it changes nothing, as in fio"
            ));
            continue;
        }
        let n = match v.trim().parse::<u64>() {
            Ok(0) if fio == "iodepth_batch_submit" => depth,
            Ok(0) => {
                // (With an `iodepth_batch_complete_max`: see `one_at_a_time`.)
                c.job.notes.push(format!(
                    "{fio}=0 with iodepth_batch_complete_max: fio then reaps what has completed, without waiting, after every I/O it queues, where iomark waits only when its queue is full, for one completion ({fio}=1)"
                ));
                1
            }
            Ok(n) if n > depth => {
                c.job.notes.push(format!(
                    "{fio}={n} is more than iodepth={depth}: {depth}, as fio takes it"
                ));
                depth
            }
            Ok(n) => n,
            Err(_) => {
                c.set(ours, v);
                continue;
            }
        };
        c.set(ours, n.to_string());
    }
}

/// `iodepth_batch_complete_min=0` (fio's `iodepth_batch_complete`), whose
/// `iodepth_batch_complete_max` iomark does not take (fio's default for it is the
/// minimum, 0): fio 3.33 is then "in polling", and after every I/O it queues it waits for
/// at least one completion (`wait_for_completions` reaps a minimum of 1 when the minimum
/// asked is 0), so its queue never holds more than one I/O whatever the iodepth: its
/// output says "IO depths: 1=100.0%", and a libaio job at iodepth=8 on a file made 16.0k
/// IOPS with it and 56.0k without (io_uring alike, and with `iodepth_batch_submit=4`).
/// iomark runs such a job as fio does, one I/O at a time (`--qd 1`, no batches), and
/// says so (when the iodepth was more); true when it did.
fn one_at_a_time(c: &mut Ctx, depth: u64) -> bool {
    let key = "iodepth_batch_complete_min";
    let max = c.value("iodepth_batch_complete_max");
    // With a maximum above 0 (which iomark takes only with --ignore-unsupported) fio
    // reaps without waiting and keeps its queue full: not this.
    let polling = max.is_none_or(|m| m.parse::<u64>() == Ok(0));
    if c.value(key).and_then(|v| v.parse::<u64>().ok()) != Some(0) || !polling {
        return false;
    }
    if depth > 1 {
        c.job.notes.push(format!(
            "{key}=0: fio then waits for a completion after every I/O it queues, so its queue holds one I/O at a time whatever the iodepth (its \"IO depths\" say 1=100%, and a libaio job at iodepth=8 made 16k IOPS with it, 56k without): iomark runs this job so, at iodepth=1"
        ));
    }
    c.set("qd", "1");
    true
}
