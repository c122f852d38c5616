//! The mapping of fio's options and groups, on job files written here.

use super::ini::{JobDef, Source, read_files};
use super::*;

pub(super) fn jobs(text: &str) -> Result<Vec<JobDef>> {
    let owned = text.to_string();
    let mut read = |_: &std::path::Path| Ok(owned.clone());
    let env = |_: &str| None;
    let mut src = Source {
        read: &mut read,
        env: &env,
        keywords: &[],
    };
    read_files(&[std::path::PathBuf::from("t.fio")], &mut src)
}

pub(super) fn planned(text: &str) -> Vec<GroupedJob> {
    plan_jobs(&jobs(text).unwrap(), false, 99).unwrap()
}

fn opt<'a>(j: &'a GroupedJob, k: &str) -> Option<&'a str> {
    j.job
        .opts
        .iter()
        .rev()
        .find(|(n, _)| n == k)
        .and_then(|(_, v)| v.as_deref())
}

#[test]
fn units_pairs_and_defaults_are_fios() {
    let j = planned(
        "[a]\nrw=randwrite\nbs=4k,64KB\nsize=1MiB\noffset=4KiB\n\
         [b]\nkb_base=1000\nbs=4k\nsize=1g\ndirect=1\nioengine=libaio\niodepth=8\n",
    );
    // kb_base=1024: the write side of 4k,64KB is 65536; 1MiB is 10^6, 4KiB 4000.
    assert_eq!(opt(&j[0], "bs"), Some("65536"));
    assert_eq!(opt(&j[0], "size"), Some("1000000"));
    assert_eq!(opt(&j[0], "offset"), Some("4000"));
    // fio's defaults: psync, buffered, the file JOB.0.0.
    assert_eq!(opt(&j[0], "engine"), Some("psync"));
    assert_eq!(opt(&j[0], "buffered"), Some("1"));
    assert_eq!(j[0].job.target.as_deref(), Some("a.0.0"));
    assert_eq!(opt(&j[1], "bs"), Some("4000"));
    assert_eq!(opt(&j[1], "size"), Some("1000000000"));
    assert_eq!(opt(&j[1], "direct"), Some("1"));
    assert_eq!(opt(&j[1], "engine"), Some("libaio"));
    assert_eq!(opt(&j[1], "qd"), Some("8"));
    // libaio is iomark's own libaio engine: no note about the engine.
    assert!(
        !j[1].job.notes.iter().any(|n| n.contains("engine")),
        "{:?}",
        j[1].job.notes
    );
}

#[test]
fn groups_follow_stonewall_and_new_group() {
    let j =
        planned("[a]\n[b]\n[c]\nstonewall\n[d]\nnew_group\nwait_for=a\n[e]\nwait_for_previous\n");
    let groups: Vec<u32> = j.iter().map(|g| g.group).collect();
    assert_eq!(groups, [0, 0, 1, 2, 3]);
    // Group 0 (a, b) runs together; the others have one job each.
    assert_eq!(together(&j), vec![0..2]);
    let apart = |j: &GroupedJob| j.job.notes.iter().any(|n| n.contains("one after another"));
    assert!(j.iter().all(|j| !apart(j)), "{j:?}");
    // A group that cannot run together says why on each of its runs.
    for (text, why) in [
        ("[a]\n[b]\nrw=write\nverify=crc32c\n", "a verify job"),
        ("[a]\n[b]\nwait_for=a\n", "wait_for"),
        ("[a]\nloops=2\n[b]\n", "loops differ"),
    ] {
        let j = planned(text);
        assert!(together(&j).is_empty(), "{text}");
        for job in &j {
            let n = job
                .job
                .notes
                .iter()
                .find(|n| n.contains("one after another"));
            assert!(
                n.is_some_and(|n| n.contains(why)),
                "{text}: {:?}",
                job.job.notes
            );
        }
    }
    let err = plan_jobs(&jobs("[a]\nbs=$pagesize\n").unwrap(), false, 99).unwrap_err();
    assert!(err.to_string().contains("t.fio:2: bs=$pagesize"), "{err}");
    let err = plan_jobs(&jobs("[a]\nwait_for=z\n").unwrap(), false, 99).unwrap_err();
    assert!(err.to_string().contains("t.fio:2: wait_for=z names no job"));
}

#[test]
fn trim_modes_take_the_trim_side_of_bs() {
    // fio's bs=read,write,trim: a side not given takes the one before it.
    let j = planned(
        "[a]\nrw=randtrim\nbs=4k,64k\n[b]\nrw=trim\nbs=4k,8k,16k\n\
         [c]\nrw=trimwrite\nbs=8k\nrate_iops=100\n",
    );
    assert_eq!(opt(&j[0], "rw"), Some("randtrim"));
    assert_eq!(opt(&j[0], "bs"), Some("65536"));
    assert_eq!(opt(&j[1], "bs"), Some("16384"));
    // trimwrite: one block size for both; fio caps trims and writes each, iomark both.
    assert_eq!(opt(&j[2], "bs"), Some("8192"));
    assert_eq!(opt(&j[2], "rate-iops"), Some("200"));
    let err = plan_jobs(&jobs("[d]\nrw=trimwrite\nbs=4k,4k,8k\n").unwrap(), false, 9);
    let err = err.unwrap_err().to_string();
    assert!(
        err.contains("bs=4k,4k,8k (different trim and write"),
        "{err}"
    );
}

#[test]
fn unsupported_options_are_one_error_with_lines() {
    let text = "[global]\nrate_process=poisson\n[a]\nioscheduler=none\nfile_service_type=normal\n\
                nrfiles=2\n[b]\nrw=trimread\nfilename=x:y\nfrobnicate=3\n";
    let err = plan_jobs(&jobs(text).unwrap(), false, 99)
        .unwrap_err()
        .to_string();
    for needle in [
        "t.fio:2 rate_process=poisson",
        "t.fio:4 ioscheduler=none",
        "t.fio:5 file_service_type=normal",
        "normal needs its σ",
        "t.fio:8 rw=trimread",
        "t.fio:10 frobnicate=3",
        "--ignore-unsupported",
    ] {
        assert!(err.contains(needle), "{needle} not in {err}");
    }
    // The global rate is listed once, not once per job.
    assert_eq!(err.matches("rate_process=poisson").count(), 1);
    let j = plan_jobs(&jobs(text).unwrap(), true, 99).unwrap();
    assert!(
        j[0].job
            .notes
            .iter()
            .any(|n| n.contains("ignored") && n.contains("file_service_type"))
    );
    assert_eq!(opt(&j[0], "rw"), Some("read"));
    // Run without it: fio's default service.
    assert_eq!(opt(&j[0], "file-service"), Some("roundrobin"));
}

#[test]
fn skewed_file_services_map_with_fios_meaning() {
    let j = planned(
        "[z]\nrw=randread\nfilename=a:b:c\nfile_service_type=zipf\n\
         [p]\nrw=randread\nfilename=a:b:c\nfile_service_type=pareto:0.3\n\
         [n]\nrw=randread\nfilename=a:b:c\nfile_service_type=gauss:20\n\
         [s]\nrw=read\nfilename=a:b:c\nfile_service_type=sequential:4\n",
    );
    let want = ["zipf:1.1", "pareto:0.7", "normal:20", "sequential"];
    for (j, want) in j.iter().zip(want) {
        assert_eq!(opt(j, "file-service"), Some(want), "{}", j.job.name);
    }
    let noted = |j: &GroupedJob, what: &str| j.job.notes.iter().any(|n| n.contains(what));
    assert!(noted(&j[1], "iomark's pareto:0.7"));
    assert!(noted(&j[2], "percentage of the files"));
    assert!(noted(&j[3], "whatever N says"));
}

#[test]
fn openfiles_below_the_jobs_files_is_refused() {
    // As many open files as the job has (each copy its own two with nrfiles): taken.
    let j = planned(
        "[a]\nrw=read\nfilename=a:b:c\nopenfiles=3\n\
         [b]\nrw=read\nnrfiles=2\nnumjobs=2\nopenfiles=2\nsize=1m\n",
    );
    assert_eq!(opt(&j[0], "file-service"), Some("roundrobin"));
    assert_eq!(j[1].job.targets.len(), 4);
    let text = "[a]\nrw=read\nfilename=a:b:c\nopenfiles=2\n";
    let err = plan_jobs(&jobs(text).unwrap(), false, 99)
        .unwrap_err()
        .to_string();
    assert!(err.contains("t.fio:4 openfiles=2"), "{err}");
    assert!(err.contains("give openfiles=3 or more"), "{err}");
    let err = plan_jobs(
        &jobs("[a]\nfilename=a:b\nopenfiles=0\n").unwrap(),
        false,
        99,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("openfiles=0 is not a count"), "{err}");
    // --ignore-unsupported: every file open, as without it.
    let j = plan_jobs(&jobs(text).unwrap(), true, 99).unwrap();
    assert_eq!(j[0].job.targets.len(), 3);
}

#[test]
fn block_size_mixes_take_the_side_the_pattern_uses() {
    let j = planned(
        "[a]\nrw=randwrite\nbssplit=4k/50:64k/50,8k\nbs=16k\n\
         [b]\nrw=randread\nbsrange=1k-4KiB\nkb_base=1000\n\
         [c]\nrw=randrw\nbssplit=4k/50:8k/50\nbsrange=4k-8k\n",
    );
    assert_eq!(opt(&j[0], "bssplit"), Some("8192"));
    assert_eq!(opt(&j[0], "bs"), None, "fio uses bssplit over bs");
    assert!(
        j[0].job
            .notes
            .iter()
            .any(|n| n.starts_with("bs: fio uses bssplit"))
    );
    assert_eq!(opt(&j[1], "bsrange"), Some("1000-4096"));
    assert_eq!(opt(&j[2], "bssplit"), Some("4096/50:8192/50"));
    assert_eq!(opt(&j[2], "bsrange"), None);
    // A mix whose sides differ: the reads' side, and the writes' as --write-bs.
    let j = planned(
        "[m]\nrw=randrw\nbssplit=4k,8k/50:16k/50\n[n]\nrw=rw\nbs=4k,64k\n[o]\nrw=rw\nbs=4k,4k\n",
    );
    assert_eq!(opt(&j[0], "bssplit"), Some("4096"));
    assert_eq!(opt(&j[0], "write-bs"), Some("8192/50:16384/50"));
    assert_eq!(
        (opt(&j[1], "bs"), opt(&j[1], "write-bs")),
        (Some("4096"), Some("65536"))
    );
    assert_eq!(opt(&j[2], "write-bs"), None);
}

#[test]
fn data_time_and_files() {
    let j = planned(
        "[a]\nrw=write\nbs=8k\nbuffer_compress_percentage=50\ndedupe_percentage=20\n\
         runtime=2m\nloops=3\nverify=md5\ndirectory=/d\n\
         [b]\nrw=write\nbuffer_pattern=\"ab\"\nruntime=5\ntime_based\nramp_time=500ms\nfilename=/x\\:y\n\
         [c]\nzero_buffers\nbuffer_pattern=0xDEAD\nioengine=null\nsize=1m\nrandrepeat=0\n\
         [d]\nrandrepeat=0\nrandseed=5\nrw=randrw\nrwmixwrite=10\nrwmixread=60\n\
         filename=/t/$jobname.$jobnum.$filenum\n",
    );
    assert_eq!(opt(&j[0], "compress"), Some("50"));
    assert_eq!(opt(&j[0], "compress-chunk"), Some("512"));
    assert_eq!(opt(&j[0], "dedup-unit"), Some("8192"));
    assert_eq!(opt(&j[0], "runtime"), Some("120s"));
    assert_eq!(opt(&j[0], "io-size"), Some("1x"));
    assert_eq!(opt(&j[1], "ramp"), Some("0.5s"));
    assert_eq!(opt(&j[0], "repeat"), Some("3"));
    assert_eq!(opt(&j[0], "verify"), Some("1"));
    assert_eq!(j[0].job.target.as_deref(), Some("/d/a.0.0"));
    assert_eq!(opt(&j[1], "data"), Some("pattern:6162"));
    assert_eq!(opt(&j[1], "time-based"), Some("1"));
    assert_eq!(opt(&j[1], "io-size"), None);
    assert_eq!(j[1].job.target.as_deref(), Some("/x:y"));
    assert_eq!(opt(&j[2], "data"), Some("pattern:dead"));
    assert_eq!(j[2].job.target, None);
    assert_eq!(opt(&j[2], "seed"), Some("99"));
    assert_eq!(opt(&j[3], "seed"), Some("5"));
    // Both mix options: the last one written counts, as in fio.
    assert_eq!(opt(&j[3], "rwmixread"), Some("60"));
    assert_eq!(opt(&j[3], "rwmixwrite"), None);
    assert_eq!(j[3].job.target.as_deref(), Some("/t/d.0.0"));
}

#[test]
fn engine_options_under_fios_names() {
    let j = planned(
        "[a]\nioengine=io_uring\ndirect=1\niodepth=16\nsync=dsync\niodepth_batch=4\n\
         iodepth_batch_complete=2\nsqthread_poll\nsqthread_poll_cpu=1\nhipri=1\n[b]\nioengine=mmap\nlat_percentiles=1\n",
    );
    for (k, v) in [
        ("sync-mode", "dsync"),
        ("batch-submit", "4"),
        ("batch-complete", "2"),
        ("sqpoll", "1"),
        ("sqpoll-cpu", "1"),
        ("hipri", "1"),
    ] {
        assert_eq!(opt(&j[0], k), Some(v), "{k}");
    }
    assert_eq!(opt(&j[1], "engine"), Some("mmap"));
}

/// Options that change nothing iomark does were refused: a [global] `rwmixread` under a
/// job that does not mix (fio takes it and does nothing), and fio's defaults written out
/// (`stats=1`, `clat_percentiles=1`, `allow_file_create=1`, `file_append=0`,
/// `fallocate=none`: "not an option iomark knows"). They are taken, with a note where
/// iomark differs; what asks for something iomark does not do is refused with why.
#[test]
fn fios_defaults_and_a_global_mix_share_are_taken() {
    let j = planned(
        "[global]\nrwmixread=70\nstats=1\nclat_percentiles=1\nallow_file_create=1\n\
         file_append=0\nfallocate=none\n[r]\nrw=randread\n[m]\nrw=randrw\n[w]\nrw=write\n",
    );
    assert_eq!(opt(&j[0], "rwmixread"), None);
    assert!(
        (j[0].job.notes.iter())
            .any(|n| n.contains("rwmixread=70 does nothing in a rw=randread job")),
        "{:?}",
        j[0].job.notes
    );
    assert_eq!(opt(&j[1], "rwmixread"), Some("70"));
    for job in &j {
        assert!(
            (job.job.notes.iter()).any(|n| n.contains("fio's lat")),
            "{:?}",
            job.job.notes
        );
    }
    assert!(
        (j[2].job.notes.iter()).any(|n| n.contains("fallocate=none")),
        "{:?}",
        j[2].job.notes
    );
    let j = planned("[a]\nlat_percentiles=0\n");
    assert!((j[0].job.notes.iter()).any(|n| n.contains("fio's lat")));
    for (line, why) in [
        ("stats=0", "measures every job"),
        ("allow_file_create=0", "makes a file"),
        ("file_append=1", "within the span"),
    ] {
        let err = plan_jobs(&jobs(&format!("[a]\n{line}\n")).unwrap(), false, 1).unwrap_err();
        let err = err.to_string();
        assert!(
            err.contains(&format!("t.fio:2 {line}")) && err.contains(why),
            "{err}"
        );
    }
}

#[test]
fn batches_are_read_as_fio_reads_them() {
    // fio takes iodepth_batch_submit=0 as the iodepth and lowers either batch above it
    // to it; iodepth_batch_complete_min=0 is one I/O at a time (fio then reaps a
    // completion after each I/O it queues: "IO depths: 1=100%"); batches of a synchronous
    // or null engine change nothing. All four were refused ("out of range", "more than
    // iodepth"); then complete_min=0 ran at the iodepth as if fio polled (session 27).
    let j = planned(
        "[a]\nioengine=libaio\ndirect=1\niodepth=8\niodepth_batch_submit=0\n\
         iodepth_batch_complete_min=16\n\
         [b]\nioengine=io_uring\niodepth=8\niodepth_batch_submit=16\n\
         iodepth_batch_complete_min=0\n\
         [c]\nioengine=psync\niodepth=8\niodepth_batch_submit=4\n\
         [d]\nioengine=null\niodepth=8\niodepth_batch_complete_min=4\n\
         [e]\nioengine=mmap\niodepth=8\n",
    );
    let said = |j: &GroupedJob, what: &str| j.job.notes.iter().any(|n| n.contains(what));
    assert_eq!(opt(&j[0], "batch-submit"), Some("8"));
    assert_eq!(opt(&j[0], "batch-complete"), Some("8"));
    assert!(said(
        &j[0],
        "iodepth_batch_complete_min=16 is more than iodepth=8"
    ));
    assert_eq!(opt(&j[1], "qd"), Some("1"));
    assert_eq!(opt(&j[1], "batch-submit"), None);
    assert_eq!(opt(&j[1], "batch-complete"), None);
    assert!(said(
        &j[1],
        "iodepth_batch_complete_min=0: fio then waits for a completion after every I/O it queues"
    ));
    for k in [2, 3] {
        assert_eq!(opt(&j[k], "batch-submit"), None);
        assert_eq!(opt(&j[k], "batch-complete"), None);
        assert!(said(&j[k], "has none to batch"), "{:?}", j[k].job.notes);
    }
    // mmap is a synchronous engine, as psync: iodepth is one at a time, said.
    assert_eq!(opt(&j[4], "qd"), None);
    assert!(said(&j[4], "iodepth=8 with a synchronous engine"));
}

/// `iodepth_batch_complete_min=0` beside an `iodepth_batch_complete_max` (taken with
/// --ignore-unsupported) is not one I/O at a time: fio then keeps its queue deep (its
/// "IO depths" 8=59% on libaio); iomark ran it at iodepth=1. And no note of a job file
/// holds "; ", where the plan's listing cuts notes apart.
#[test]
fn a_batch_complete_minimum_of_0_with_a_maximum_keeps_the_depth() {
    let defs = jobs(
        "[a]\nioengine=libaio\niodepth=8\niodepth_batch_complete_min=0\n\
         iodepth_batch_complete_max=8\n[b]\nioengine=libaio\niodepth=8\n\
         iodepth_batch_complete_min=0\n",
    )
    .unwrap();
    let j = plan_jobs(&defs, true, 1).unwrap();
    assert_eq!(opt(&j[0], "qd"), Some("8"));
    assert_eq!(opt(&j[0], "batch-complete"), Some("1"));
    assert!(
        j[0].job
            .notes
            .iter()
            .any(|n| n.contains("reaps what has completed, without waiting")),
        "{:?}",
        j[0].job.notes
    );
    assert_eq!(opt(&j[1], "qd"), Some("1"));
    for n in j.iter().flat_map(|j| &j.job.notes) {
        assert!(!n.contains("; "), "{n}");
    }
}

/// fio's `cpus_allowed` is a set, split in ascending order: `1,0` puts the first job on
/// CPU 0 (checked against fio); iomark's `--cpus 1,0` keeps its order, and a job file's
/// list went through as it was written.
#[test]
fn a_fio_cpu_list_is_a_set_in_ascending_order() {
    let j = planned("[a]\ncpus_allowed=1,0,0\ncpus_allowed_policy=split\n");
    assert_eq!(
        opt(&j[0], "cpus").map(str::to_string),
        Some(crate::plan::engine::fmt_cpus(&[0, 1]))
    );
}

#[test]
fn advice_with_another_value_is_not_the_jobs_line() {
    // "or --qd 1 with more --jobs" to a job with iodepth=8 said "or iodepth=8 (t.fio:3)".
    let j = planned("[a]\nioengine=io_uring\niodepth=8\nbs=16k\n");
    let mapped = std::slice::from_ref(&j[0].job);
    let e = crate::error::Error::usage(
        "--engine psync does one I/O at a time per job, so --qd 8 cannot be honoured; use --qd 1 with more --jobs, or --bs 16 KiB",
    );
    let said = super::in_job_terms(mapped, 0..1, e).to_string();
    assert!(said.contains("so iodepth=8 (t.fio:3) cannot"), "{said}");
    assert!(said.contains("use iodepth=1 with more numjobs"), "{said}");
    assert!(said.contains("or bs=16k (t.fio:4)"), "{said}");
}

#[test]
fn several_files_per_job_are_fios_names_and_sizes() {
    let j = planned(
        "[a]\nrw=write\nnrfiles=3\nsize=3m\nnumjobs=2\ndirectory=/d1:/d2\n\
         [b]\nrw=randread\nfilename=x:y\\:z\nfilesize=1m\nsize=5m\nnumjobs=2\n\
         file_service_type=random:4\ndirectory=/d\n\
         [c]\nrw=read\nnrfiles=2\nfilesize=1m\nsize=1m\nfile_service_type=sequential\n\
         [d]\nrw=read\nnumjobs=2\ndirectory=/e:/f\nsize=1m\n\
         [e]\nrw=read\ndirectory=/g/\nfilename=/abs/f\nsize=1m\n",
    );
    // Each copy its own files, JOB.COPY.FILE, copy j in the j-th directory; size split.
    assert_eq!(
        j[0].job.targets,
        [
            "/d1/a.0.0",
            "/d1/a.0.1",
            "/d1/a.0.2",
            "/d2/a.1.0",
            "/d2/a.1.1",
            "/d2/a.1.2"
        ]
    );
    assert_eq!(opt(&j[0], "size"), Some("1048576"));
    assert_eq!(opt(&j[0], "file-service"), Some("roundrobin"));
    assert!(j[0].job.opts.iter().any(|(k, _)| k == "split-targets"));
    // A list is shared by the copies, in the first directory; filesize sizes each file
    // and the job moves the smaller of size and its files.
    assert_eq!(j[1].job.targets, ["/d/x", "/d/y:z"]);
    assert_eq!(opt(&j[1], "size"), Some("1048576"));
    assert_eq!(opt(&j[1], "io-size"), Some("2097152"));
    assert_eq!(opt(&j[1], "file-service"), Some("random:4"));
    assert!(!j[1].job.opts.iter().any(|(k, _)| k == "split-targets"));
    assert_eq!(opt(&j[2], "io-size"), Some("1048576"));
    assert_eq!(opt(&j[2], "file-service"), Some("sequential"));
    assert_eq!(j[2].job.targets, ["c.0.0", "c.0.1"]);
    assert_eq!(j[3].job.targets, ["/e/d.0.0", "/f/d.1.0"]);
    // An absolute name goes in the directory too, as fio puts it.
    assert_eq!(j[4].job.target.as_deref(), Some("/g/abs/f"));
    // Resolved: the run serves every file.
    let sys = System {
        io_uring: Ok(()),
        root: false,
        memory_bytes: 1 << 30,
    };
    let runs = study_runs(&j, &[], &sys).unwrap();
    let s = &runs[0].plan.spec;
    assert_eq!(s.target_paths().len(), 6);
    assert_eq!(s.file_service.map(|f| f.split), Some(true));
    assert_eq!(runs[1].plan.spec.file_service.map(|f| f.every), Some(4));
    // --as-fio writes the list, the job's size and the service back.
    let text = write::job_file("test", &runs[1..2]);
    assert!(text.contains("filename=/d/x:/d/y\\:z\n"), "{text}");
    // And each copy's own files as fio's nrfiles and directory list.
    let text = [text, write::job_file("test", &runs[..1])].concat();
    assert!(text.contains("nrfiles=3\ndirectory=/d1:/d2\n"), "{text}");
    let back = study_runs(&planned(&text), &[], &sys).unwrap();
    for (a, b) in [(&runs[1], &back[0]), (&runs[0], &back[1])] {
        let (a, b) = (&a.plan.spec, &b.plan.spec);
        assert_eq!(
            (&a.targets, a.size, a.io_size, a.file_service),
            (&b.targets, b.size, b.io_size, b.file_service)
        );
    }
}

#[test]
fn advice_in_a_job_files_words() {
    use super::in_job_words;
    assert_eq!(
        in_job_words("to measure the device use --size 48g (2x memory) or more, or --direct"),
        "to measure the device use size=48g (2x memory) or more, or direct=1"
    );
    assert_eq!(
        in_job_words("consider a longer --ramp; run more repetitions or a longer --runtime"),
        "consider a longer ramp_time; run more repetitions or a longer runtime"
    );
    assert_eq!(
        in_job_words("use --direct (--end-fsync counts the last flush)"),
        "use direct=1 (end_fsync=1 counts the last flush)"
    );
    // Words that only start like a flag are left alone.
    assert_eq!(
        in_job_words("--sizes --bsx --direct-io"),
        "--sizes --bsx --direct-io"
    );
    // The engines' options: a run's note about the SQPOLL thread's CPU.
    assert_eq!(
        in_job_words(
            "--sqpoll-cpu 1 is also a CPU the jobs run on (--cpus 1): give --sqpoll-cpu a CPU outside --cpus"
        ),
        "sqthread_poll_cpu=1 is also a CPU the jobs run on (cpus_allowed=1): give sqthread_poll_cpu a CPU outside cpus_allowed"
    );
}

/// fio's `ramp_time` is part of `size` in a job without `time_based`, a `runtime`
/// without `time_based` included (fio stops at the size or the runtime); a time-based
/// job ramps before its runtime (`spec.ramp_in_size` set only where fio's ramp is part
/// of the size; `tests/it/fio_jobs.rs` checks the counts against fio's).
#[test]
fn a_ramp_is_part_of_size_where_fio_counts_it_so() {
    let sys = System {
        io_uring: Ok(()),
        root: false,
        memory_bytes: 1 << 30,
    };
    let j = planned(
        "[global]\nsize=1m\nramp_time=100ms\n[a]\n[b]\nruntime=10\n\
         [c]\nruntime=1\ntime_based\n[d]\nramp_time=0\n",
    );
    let runs = study_runs(&j, &[], &sys).unwrap();
    let each: Vec<bool> = runs.iter().map(|r| r.plan.spec.ramp_in_size).collect();
    assert_eq!(each, [true, true, false, false]);
}

/// fio's mmap engine advises its mapping by the pattern for any `fadvise_hint` but 0 (a
/// helper's strace: `rw=randread fadvise_hint=sequential` is MADV_RANDOM under fio), and
/// `iomark fio` took the hint's direction (9x fio's device reads).
#[test]
fn an_mmap_jobs_hint_is_fios_pattern() {
    let j = planned(
        "[a]\nioengine=mmap\nrw=randread\nfadvise_hint=sequential\n\
         [b]\nioengine=psync\nrw=randread\nfadvise_hint=sequential\n\
         [c]\nioengine=mmap\nrw=read\nfadvise_hint=0\n",
    );
    assert_eq!(opt(&j[0], "fadvise"), Some("auto"));
    assert!(
        j[0].job
            .notes
            .iter()
            .any(|n| n.contains("fio's mmap engine advises its mapping by the pattern")),
        "{:?}",
        j[0].job.notes
    );
    assert_eq!(opt(&j[1], "fadvise"), Some("sequential"));
    assert_eq!(opt(&j[2], "fadvise"), Some("none"));
}

/// fio's `rate_iops` with a block-size mix caps bytes at N x the smallest size (its
/// docs; measured: 1000 with `bssplit=4k/50:64k/50` ran 123 reads a second, 4.096 MB/s),
/// where iomark took it as 1000 I/Os a second (8x fio's bytes). It runs as the byte cap
/// fio applies, with a note; a job of one size keeps its I/O cap.
#[test]
fn rate_iops_with_a_size_mix_caps_bytes_as_fio() {
    let j = planned(
        "[m]\nrw=randread\nbssplit=4k/50:64k/50\nrate_iops=1000\n\
         [r]\nrw=randread\nbsrange=8k-64k\nrate_iops=100,200\nrate_iops_min=50\n[one]\nrw=randread\nbs=8k\nrate_iops=300\n",
    );
    assert_eq!(opt(&j[0], "rate"), Some("4096000"));
    assert_eq!(opt(&j[0], "rate-iops"), None);
    assert!(
        (j[0].job.notes.iter()).any(|n| n.contains("smallest size (4 KiB)")),
        "{:?}",
        j[0].job.notes
    );
    assert_eq!(opt(&j[1], "rate"), Some(&*(100 * 8192).to_string()));
    assert_eq!(opt(&j[1], "rate-min"), Some(&*(50 * 8192).to_string()));
    assert_eq!(opt(&j[2], "rate-iops"), Some("300"));
    assert_eq!(opt(&j[2], "rate"), None);
}
