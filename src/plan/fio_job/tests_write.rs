//! `--as-fio`: plans written as fio job files, read back, and what they say where fio
//! would run them otherwise.

use super::tests::{jobs, planned};
use super::*;

/// A machine with io_uring, as the plans here assume.
fn sys() -> System {
    System {
        io_uring: Ok(()),
        root: false,
        memory_bytes: 1 << 30,
    }
}

/// The plan of `iomark run` with `opts` on /tmp/a.dat.
fn plan_on_a(opts: &[(&str, &str)]) -> crate::plan::RunPlan {
    let mut o = RunOptions::default();
    for (k, v) in opts {
        o.set(k, Some(v)).unwrap();
    }
    o.resolve(Some("/tmp/a.dat"), Output::default(), &sys())
        .unwrap()
}

/// `plan` as a study's one run of no suite.
fn study_run(plan: crate::plan::RunPlan) -> StudyRun {
    StudyRun {
        plan,
        point: StudyPoint {
            suite: String::new(),
            test: String::new(),
            param: String::new(),
            value: String::new(),
        },
    }
}

#[test]
fn written_jobs_read_back_the_same() {
    let sys = sys();
    let mut o = RunOptions::default();
    for (k, v) in [
        ("rw", "randrw"),
        ("rwmixread", "70"),
        ("bs", "16k"),
        ("qd", "4"),
        ("jobs", "3"),
        ("size", "64m"),
        ("runtime", "2s"),
        ("engine", "io_uring"),
        ("compress", "40"),
        ("seed", "7"),
    ] {
        o.set(k, Some(v)).unwrap();
    }
    let plan = o
        .resolve(Some("/tmp/x:y.dat"), Output::default(), &sys)
        .unwrap();
    let run = study_run(plan);
    let text = write::job_file("test", std::slice::from_ref(&run));
    let back = study_runs(
        &plan_jobs(&jobs(&text).unwrap(), false, 99).unwrap(),
        &[],
        &sys,
    )
    .unwrap();
    let (a, b) = (&run.plan.spec, &back[0].plan.spec);
    assert_eq!(
        (
            a.rw,
            a.rwmixread,
            a.bs,
            a.qd,
            a.jobs,
            a.size,
            a.runtime_s,
            a.engine
        ),
        (
            b.rw,
            b.rwmixread,
            b.bs,
            b.qd,
            b.jobs,
            b.size,
            b.runtime_s,
            b.engine
        )
    );
    assert_eq!(
        (&a.target, a.direct, a.seed, &a.data),
        (&b.target, b.direct, b.seed, &b.data)
    );
}

/// `--as-fio` of runs pinned with a split `--cpus`: iomark starts each run at its list's
/// first CPU, fio's split counts the jobs of the sections before and takes its set in
/// ascending order, so the file put a study's second one-job run on CPU 1 where iomark
/// ran it on CPU 0. A section whose jobs all ran on one CPU names it; one whose jobs fio
/// would place otherwise says so.
#[test]
fn as_fio_pins_each_section_where_iomark_ran_it() {
    let sys = sys();
    let run = |jobs: &str, cpus: &str| {
        let mut o = RunOptions::default();
        for (k, v) in [("engine", "null"), ("jobs", jobs), ("cpus", cpus)] {
            o.set(k, Some(v)).unwrap();
        }
        study_run(o.resolve(None, Output::default(), &sys).unwrap())
    };
    let pins = |text: &str| -> Vec<String> {
        (text.lines())
            .filter(|l| l.starts_with("cpus_allowed=") || l.starts_with("# cpus_allowed"))
            .map(str::to_string)
            .collect()
    };
    // Three one-job runs on 0,1: each on CPU 0, as iomark ran them (fio: 0, 1, 0).
    let text = write::job_file("t", &[run("1", "0,1"), run("1", "0,1"), run("1", "0,1")]);
    assert_eq!(
        pins(&text),
        ["cpus_allowed=0-1", "cpus_allowed=0", "cpus_allowed=0-1"]
    );
    // Read back, each job runs where iomark's did.
    let back = study_runs(&planned(&text), &[], &sys).unwrap();
    for (i, r) in back.iter().enumerate() {
        let o = &r.plan.spec.engine_opts;
        assert_eq!(o.job_cpus(o.cpus_after), [0], "section {i}: {o:?}");
    }
    // Two jobs after one: fio's 1,0 against iomark's 0,1, said; as many as the set
    // before, as written.
    let text = write::job_file("t", &[run("1", "0,1"), run("2", "0,1")]);
    assert_eq!(
        pins(&text)[1..],
        [
            "cpus_allowed=0-1",
            "# cpus_allowed: fio's split takes the CPUs in ascending order and counts the 1 job of the sections before this one: its jobs run on CPUs 1,0 where iomark's run on 0,1"
        ]
    );
    let text = write::job_file("t", &[run("2", "0,1"), run("2", "0,1")]);
    assert_eq!(pins(&text), ["cpus_allowed=0-1", "cpus_allowed=0-1"]);
    // iomark's own order, 1,0, is not fio's: the first one-job run names CPU 1.
    let text = write::job_file("t", &[run("1", "1,0")]);
    assert_eq!(pins(&text), ["cpus_allowed=1"]);
}

/// `--as-fio` of an mmap run advised against its pattern (`--fadvise sequential` on
/// random reads) says that fio's mmap engine takes the pattern instead: the file wrote
/// the hint alone, which fio runs as MADV_RANDOM.
#[test]
fn as_fio_says_an_mmap_hint_fio_takes_as_the_pattern() {
    let sys = sys();
    let text = |fadvise: &str| {
        let mut o = RunOptions::default();
        for (k, v) in [("engine", "mmap"), ("rw", "randread"), ("fadvise", fadvise)] {
            o.set(k, Some(v)).unwrap();
        }
        let run = study_run(
            o.resolve(Some("/tmp/m.dat"), Output::default(), &sys)
                .unwrap(),
        );
        write::job_file("t", std::slice::from_ref(&run))
    };
    let t = text("sequential");
    assert!(
        t.contains("fadvise_hint=sequential\n# fadvise_hint: fio's mmap engine advises its mapping by the pattern for any hint but 0 (MADV_RANDOM); iomark advised MADV_SEQUENTIAL"),
        "{t}"
    );
    for same in ["random", "auto", "none"] {
        assert!(!text(same).contains("# fadvise_hint"), "{same}");
    }
}

/// A run on several targets without `--file-service` runs a set of jobs on each, all at
/// once: `--as-fio` wrote the first target alone (fio then ran half the run). Each target
/// gets its section, the later ones in the first one's group (no stonewall); a study's
/// next run still waits for it.
#[test]
fn as_fio_writes_every_target_of_a_run() {
    let mut plan = plan_on_a(&[("rw", "randread"), ("qd", "4"), ("size", "32m")]);
    plan.spec.targets = vec!["/tmp/a.dat".into(), "/tmp/b.dat".into()];
    let runs = [study_run(plan.clone()), study_run(plan)];
    let text = write::job_file("test", &runs);
    let sections: Vec<&str> = text.split("\n[").skip(2).collect();
    assert_eq!(sections.len(), 4, "{text}");
    for (i, sec) in sections.iter().enumerate() {
        let file = ["/tmp/a.dat", "/tmp/b.dat"][i % 2];
        assert!(sec.contains(&format!("\nfilename={file}\n")), "{sec}");
        assert_eq!(sec.contains("\nstonewall\n"), i % 2 == 0, "{sec}");
    }
    // fio reads it back as four jobs, the two of a run in one group.
    let back = plan_jobs(&jobs(&text).unwrap(), false, 99).unwrap();
    assert_eq!(back.len(), 4);
    assert_eq!(back[0].group, back[1].group);
    assert_ne!(back[1].group, back[2].group);
}

/// fio refuses a zipf theta of 1.0 ("job dropped"), which iomark takes: `--as-fio` wrote
/// it as it was. It writes the nearest theta fio takes, saying so.
#[test]
fn as_fio_writes_a_zipf_fio_takes() {
    let plan = plan_on_a(&[
        ("rw", "randread"),
        ("size", "32m"),
        ("random-distribution", "zipf:1"),
    ]);
    let text = write::job_file("test", &[study_run(plan)]);
    assert!(
        text.contains("\nrandom_distribution=zipf:1.001\n"),
        "{text}"
    );
    assert!(text.contains("fio refuses theta 1.0"), "{text}");
}

/// iomark's `--rate-iops` with a size mix was written `rate_iops=3000`, which fio takes
/// as a byte cap at 3000 x the smallest size (364 IOPS of 4k/64k writes against
/// iomark's 3000): it is written as the bytes iomark's cap comes to at the mix's mean.
#[test]
fn as_fio_writes_an_io_cap_of_a_size_mix_as_bytes() {
    let plan = plan_on_a(&[
        ("rw", "randwrite"),
        ("size", "32m"),
        ("bssplit", "4k/50:64k/50"),
        ("rate-iops", "3000"),
    ]);
    let text = write::job_file("test", &[study_run(plan)]);
    assert!(
        text.contains(&format!("\nrate={}\n", 3000 * 34 * 1024)),
        "{text}"
    );
    assert!(!text.contains("\nrate_iops="), "{text}");
}
