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
        c.set("cpus", list);
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
/// `iodepth_batch_complete_min=0` (poll for completions, waiting only when the queue is
/// full) is iomark's way with any batch of 1, which waits only when its queue is full,
/// for one completion: run as 1, said. Anything else (not a number) goes to
/// `--batch-submit` and `--batch-complete` as it is, to be refused there.
fn batches(c: &mut Ctx, engine: &str) {
    let depth = c
        .value("iodepth")
        .and_then(|d| d.parse::<u64>().ok())
        .unwrap_or(1);
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
                c.job.notes.push(format!(
                    "{fio}=0 (fio polls for completions, waiting only when its queue is full) runs as {fio}=1: iomark waits only when its queue is full, for one completion"
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
