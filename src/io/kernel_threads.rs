//! io_uring's kernel threads and their CPU time: the io-wq workers and SQPOLL threads
//! that serve a job thread's ring, found by name in `/proc/self/task`.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::io::env::CpuTimes;

/// CPU times of one job thread's io_uring kernel workers (`iou-wrk-<tid>` io-wq threads
/// and its `iou-sqp-<tid>` SQPOLL thread, named after the thread whose ring they serve,
/// and the SQPOLL thread's own io-wq workers, `iou-wrk-<SQPOLL tid>`)
/// by thread id, from `/proc/self/task/*/stat` (clock-tick resolution, 10 ms). They exit
/// with their job thread's ring, so the job thread reads them while its ring is alive
/// (read once its thread was joined, a run's io-wq time was filed as the process's
/// "other" time). A worker that exits before the last reading (io-wq lets one idle for
/// seconds go) is no longer listed: what it used after the first is lost to this figure.
#[derive(Debug, Clone, Default)]
pub(crate) struct KernelWorkers(HashMap<u32, (KernelThread, CpuTimes)>);

/// Which io_uring kernel thread a task is (by its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KernelThread {
    /// An io-wq worker (`iou-wrk-*`), to which the kernel hands what it cannot do inline.
    IoWq,
    /// A SQPOLL thread (`iou-sqp-*`), polling the submission queue (`--sqpoll`).
    SqPoll,
}

impl KernelWorkers {
    /// The io_uring kernel threads serving the calling thread (a job thread), now: the
    /// process's tasks listed, each named once (`Names`), and the stat of the thread's
    /// own read.
    pub(crate) fn of_this_thread() -> KernelWorkers {
        let owner = crate::io::sys::thread_id();
        let mut m = HashMap::new();
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return KernelWorkers(m);
        };
        let tids: Vec<u32> = (dir.flatten())
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        // (The names are read with the table let go: jobs start together.)
        let (mut named, unknown) = names(|n| n.split(owner, &tids));
        let read: Vec<Named> = (unknown.into_iter())
            .filter_map(|tid| {
                let comm = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).ok()?;
                match kind_of(comm.trim_end())? {
                    (kind, Some(of)) => Some((tid, (kind, of))),
                    (_, None) => None,
                }
            })
            .collect();
        names(|n| n.learn(&read));
        named.extend(read);
        let mine = serving(owner, &named);
        let tick = crate::io::sys::clock_ticks();
        for tid in mine {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else {
                continue;
            };
            if let Some((kind, _, t)) = parse_task_stat(&stat, tick) {
                m.insert(tid, (kind, t));
            }
        }
        KernelWorkers(m)
    }

    /// What the workers listed now used since `before` (a new worker from zero), by kind.
    pub(crate) fn since(&self, before: &KernelWorkers) -> KernelCpu {
        let mut k = KernelCpu::default();
        for (tid, (kind, t)) in &self.0 {
            let was = before.0.get(tid).map(|b| b.1).unwrap_or_default();
            let part = match kind {
                KernelThread::IoWq => &mut k.io_wq,
                KernelThread::SqPoll => &mut k.sqpoll,
            };
            *part = part.plus(t.since(was));
        }
        k
    }
}

/// CPU time of io_uring's kernel threads: io-wq workers' and SQPOLL threads'.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct KernelCpu {
    pub io_wq: CpuTimes,
    pub sqpoll: CpuTimes,
}

impl KernelCpu {
    pub(crate) fn plus(self, o: KernelCpu) -> KernelCpu {
        KernelCpu {
            io_wq: self.io_wq.plus(o.io_wq),
            sqpoll: self.sqpoll.plus(o.sqpoll),
        }
    }
}

/// Which io_uring kernel thread one `/proc/<pid>/task/<tid>/stat` line is (its name
/// starts with `iou-sqp` or another `iou-`), the thread it serves (the number its name
/// ends in, when it does) and its user and system time; `None` for any other thread.
fn parse_task_stat(stat: &str, tick: f64) -> Option<(KernelThread, Option<u32>, CpuTimes)> {
    // "tid (comm) state ppid ..."; comm may hold spaces and parentheses: the last ')'.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let (kind, owner) = kind_of(stat.get(open + 1..close)?)?;
    // After the comm: state is field 3; utime and stime are fields 14 and 15.
    let mut f = stat.get(close + 1..)?.split_whitespace().skip(11);
    let utime: f64 = f.next()?.parse().ok()?;
    let stime: f64 = f.next()?.parse().ok()?;
    let t = CpuTimes {
        user_s: utime / tick,
        sys_s: stime / tick,
    };
    Some((kind, owner, t))
}

/// Which io_uring kernel thread a task's name (`comm`) says it is, and the number it ends
/// in (the thread it serves), when it does.
fn kind_of(comm: &str) -> Option<(KernelThread, Option<u32>)> {
    let kind = match comm {
        c if c.starts_with("iou-sqp") => KernelThread::SqPoll,
        c if c.starts_with("iou-") => KernelThread::IoWq,
        _ => return None,
    };
    Some((kind, comm.rsplit('-').next().and_then(|n| n.parse().ok())))
}

/// What the process's tasks are, as far as their readers need: the job threads that have
/// read their kernel threads (no kernel thread themselves), and the io-wq workers and whom
/// they serve, each named once. Every job read the stat of every task at both ends of its
/// window (32 io_uring jobs: 32 × 2 × some 70 reads of stat); now each reads its own
/// kernel threads' stat and the names of tasks not known yet. A task is named only once
/// it cannot be renamed: a new io-wq worker bears its creator's name (a job thread's, or a
/// SQPOLL thread's) until it runs and names itself `iou-wrk-<tid>`, so any other name is
/// read again at the next reading (the few other tasks: the main thread, SQPOLL threads,
/// workers just made). (Thread ids are not reused before the kernel's `pid_max` wraps.)
#[derive(Debug, Default)]
struct Names {
    jobs: HashSet<u32>,
    workers: HashMap<u32, u32>,
}

static NAMES: Mutex<Option<Names>> = Mutex::new(None);

/// A kernel thread by name: its thread id, kind, and the thread it serves.
type Named = (u32, (KernelThread, u32));

/// `f` on the process's table of names.
fn names<T>(f: impl FnOnce(&mut Names) -> T) -> T {
    let mut g = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Names::default))
}

impl Names {
    /// Job thread `owner` (the caller) and the tasks `tids`: the io-wq workers among them
    /// already named (kind, whom they serve), and the tasks whose names are to be read
    /// (neither a job thread nor named).
    fn split(&mut self, owner: u32, tids: &[u32]) -> (Vec<Named>, Vec<u32>) {
        self.jobs.insert(owner);
        let (mut named, mut unknown) = (Vec::new(), Vec::new());
        for &tid in tids {
            match self.workers.get(&tid) {
                Some(&of) => named.push((tid, (KernelThread::IoWq, of))),
                None if !self.jobs.contains(&tid) => unknown.push(tid),
                None => {}
            }
        }
        (named, unknown)
    }

    /// Keeps the io-wq workers among names just read (their names are final).
    fn learn(&mut self, read: &[Named]) {
        for &(tid, (kind, of)) in read {
            if kind == KernelThread::IoWq {
                self.workers.insert(tid, of);
            }
        }
    }
}

/// The kernel threads among `named` that serve job thread `owner`: its io-wq workers, its
/// SQPOLL thread, and the SQPOLL thread's io-wq workers (which it hands what it cannot do
/// inline; named after the SQPOLL thread).
fn serving(owner: u32, named: &[Named]) -> Vec<u32> {
    let sqpoll: Vec<u32> = (named.iter())
        .filter(|&&(_, (kind, of))| kind == KernelThread::SqPoll && of == owner)
        .map(|&(tid, _)| tid)
        .collect();
    (named.iter())
        .filter(|&&(_, (_, of))| of == owner || sqpoll.contains(&of))
        .map(|&(tid, _)| tid)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_stat_is_read_for_io_uring_workers_only() {
        let line = "4242 (iou-wrk-4240) S 1 4240 4240 0 -1 4194368 0 0 0 0 150 275 0 0 20 0 3 0";
        let (k, of, t) = parse_task_stat(line, 100.0).expect("an io_uring worker");
        assert_eq!(k, KernelThread::IoWq);
        // Named after the job thread it serves (whose reading keeps its own workers').
        assert_eq!(of, Some(4240));
        assert!((t.user_s - 1.5).abs() < 1e-9 && (t.sys_s - 2.75).abs() < 1e-9);
        // The SQPOLL thread is told apart (probe 14: its time was filed under io_wq).
        let sqp = "4243 (iou-sqp-4240) S 1 4240 4240 0 -1 4194368 0 0 0 0 0 49 0 0 20 0 3 0";
        let (k, of, t) = parse_task_stat(sqp, 100.0).expect("a SQPOLL thread");
        assert_eq!(of, Some(4240));
        assert_eq!(k, KernelThread::SqPoll);
        assert!((t.sys_s - 0.49).abs() < 1e-9);
        let main = "4240 (iomark (x)) S 1 4240 4240 0 -1 4194368 0 0 0 0 150 275 0 0";
        assert!(parse_task_stat(main, 100.0).is_none());
    }

    #[test]
    fn tasks_are_named_once_and_job_threads_not_at_all() {
        // Job thread 10 and 11, the main thread 1, a worker of each job, one just made
        // (its name not read yet), and a SQPOLL thread of job 10 with its own worker.
        let mut names = Names::default();
        let tids = [1, 10, 11, 20, 21, 22, 30, 31];
        names.split(11, &[]);
        let (named, unknown) = names.split(10, &tids);
        assert!(named.is_empty());
        assert_eq!(unknown, vec![1, 20, 21, 22, 30, 31]);
        let read = [
            (20, (KernelThread::IoWq, 10)),
            (21, (KernelThread::IoWq, 11)),
            (30, (KernelThread::SqPoll, 10)),
            (31, (KernelThread::IoWq, 30)),
        ];
        names.learn(&read);
        assert_eq!(serving(10, &read), vec![20, 30, 31]);
        assert_eq!(serving(11, &read), vec![21]);
        // Next time the workers are known and not read again; the main thread, the task
        // just made (named after its creator until it runs) and the SQPOLL thread are.
        let (named, unknown) = names.split(10, &tids);
        assert_eq!(unknown, vec![1, 22, 30]);
        let ids: Vec<u32> = named.iter().map(|&(t, _)| t).collect();
        assert_eq!(ids, vec![20, 21, 31]);
    }

    #[test]
    fn this_threads_kernel_threads_are_read_by_name() {
        // A job thread with no ring has none; the process's other tasks (the test
        // harness's threads) are named, not taken for its.
        let w = KernelWorkers::of_this_thread();
        assert!(w.0.is_empty(), "{:?}", w.0);
    }
}
