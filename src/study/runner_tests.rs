//! The study runner on the null engine (it does no I/O, so every run is fast and the
//! same): runs in order, saving after every repetition, a sink that stops the plan,
//! resume.

use super::*;
use crate::plan::spec::{EngineKind, Rw, Spec};
use crate::plan::{Output, RunPlan, StudyKind, StudyPoint};
use crate::results::sink::{Discard, Sink};

fn null_run(value: &str, rw: Rw, repeat: u32) -> StudyRun {
    let mut spec = Spec::new("null");
    spec.engine = EngineKind::Null;
    spec.rw = rw;
    spec.rwmixread = rw.read_pct(50);
    spec.size = Some(1 << 20);
    spec.io_size = Some(1 << 20);
    StudyRun {
        plan: RunPlan {
            spec,
            policy: TargetPolicy::default(),
            repeat,
            out: Output::default(),
        },
        point: StudyPoint {
            suite: "qd".into(),
            test: "randread".into(),
            param: "qd".into(),
            value: value.into(),
        },
    }
}

fn suite(runs: Vec<StudyRun>, resume: Option<PathBuf>) -> SuitePlan {
    SuitePlan {
        name: "qd".into(),
        kind: StudyKind::Qd,
        target: "null".into(),
        runs,
        out: Output::default(),
        dry_run: false,
        resume,
        keep: false,
        overwrite: false,
        max_rounds: 25,
        together: Vec::new(),
        fio_jobs: Vec::new(),
        preset_bs: false,
    }
}

/// Counts repetitions; says stop after `stop_after` of them.
struct Counting {
    reps: usize,
    stop_after: usize,
}

impl Sink for Counting {
    fn rep_finished(&mut self, _run: &crate::results::schema::Run) -> Result<bool> {
        self.reps += 1;
        Ok(self.reps < self.stop_after)
    }
}

#[test]
fn runs_every_run_in_order_and_saves_after_each_repetition() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let stop = StopFlag::new();
    let mut sink = Counting {
        reps: 0,
        stop_after: usize::MAX,
    };
    let runs = vec![
        null_run("1", Rw::RandRead, 2),
        null_run("2", Rw::RandWrite, 1),
        null_run("4", Rw::RandRead, 1),
    ];
    let mut runner = StudyRunner::new(Store::new(Some(path.clone())), &mut sink, &stop);
    let failure = runner.suite(&suite(runs, None)).unwrap();
    assert!(failure.is_none());
    let doc = runner.store.doc.clone();
    drop(runner);
    let values: Vec<&str> = doc
        .runs
        .iter()
        .map(|r| r.study.as_ref().unwrap().value.as_str())
        .collect();
    assert_eq!(values, ["1", "2", "4"]);
    assert!(doc.runs.iter().all(|r| r.status == Status::Complete));
    assert_eq!(doc.runs[0].repetitions.len(), 2);
    // 1 MiB in 4 KiB I/Os per repetition, on the null engine.
    assert_eq!(doc.runs[1].summary.write.iops.n, 1);
    assert_eq!(doc.runs[1].repetitions[0].write.ios, 256);
    assert_eq!(sink.reps, 4);
    let saved = Document::load(&path).unwrap();
    assert_eq!(saved.runs.len(), 3);
}

#[test]
fn a_sink_that_says_stop_ends_the_plan_and_keeps_what_was_measured() {
    let stop = StopFlag::new();
    let mut sink = Counting {
        reps: 0,
        stop_after: 1,
    };
    let runs = vec![null_run("1", Rw::Read, 3), null_run("2", Rw::Read, 1)];
    let mut runner = StudyRunner::new(Store::new(None), &mut sink, &stop);
    runner.suite(&suite(runs, None)).unwrap();
    let doc = runner.store.doc.clone();
    assert_eq!(doc.runs.len(), 1, "the second run never started");
    assert_eq!(doc.runs[0].repetitions.len(), 1);
    assert_eq!(doc.runs[0].status, Status::Interrupted);
    assert!(stop.is_set());
}

#[test]
fn resume_runs_only_what_is_not_complete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let runs = vec![null_run("1", Rw::Read, 1), null_run("2", Rw::Read, 1)];
    let stop = StopFlag::new();
    {
        // The first run only, as an interrupted study would leave it.
        let mut discard = Discard;
        let mut runner = StudyRunner::new(Store::new(Some(path.clone())), &mut discard, &stop);
        let life = TargetLife::new("null", false);
        runner.run_plan(&runs[..1], &[], &life, true).unwrap();
    }
    let mut sink = Counting {
        reps: 0,
        stop_after: usize::MAX,
    };
    let mut runner = StudyRunner::new(Store::new(Some(path.clone())), &mut sink, &stop);
    runner
        .suite(&suite(runs.clone(), Some(path.clone())))
        .unwrap();
    assert_eq!(runner.store.doc.runs.len(), 2);
    drop(runner);
    assert_eq!(sink.reps, 1, "only the second run ran");
    // Another plan cannot resume this document.
    let other = vec![null_run("8", Rw::Read, 1), null_run("2", Rw::Read, 1)];
    let mut discard = Discard;
    let mut runner = StudyRunner::new(Store::new(None), &mut discard, &stop);
    let err = runner.suite(&suite(other, Some(path.clone()))).unwrap_err();
    assert!(err.to_string().contains("made by another plan"), "{err}");
    assert!(matches!(err, crate::error::Error::Document(_)), "{err:?}");
    // One whose spec differs names the parameter.
    let mut bigger = runs.clone();
    bigger[0].plan.spec.size = Some(2 << 20);
    let err = runner.suite(&suite(bigger, Some(path))).unwrap_err();
    assert!(
        err.to_string()
            .contains("(size 1048576 there, 2097152 here)"),
        "{err}"
    );
}

#[test]
fn a_target_the_study_creates_is_removed_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let life = TargetLife::new(f.to_str().unwrap(), false);
    crate::io::mark::mark(&std::fs::File::create(&f).unwrap());
    life.end();
    assert!(!f.exists(), "the file this process marked is removed");
    // A file this process did not mark stays (one that was there before, or one put in
    // the place of the study's file).
    std::fs::write(&f, b"x").unwrap();
    TargetLife::new(f.to_str().unwrap(), false).end();
    assert!(f.exists());
    // With --keep the study's file stays, marked kept (no longer tied to this process).
    let g = dir.path().join("k.dat");
    let file = std::fs::File::create(&g).unwrap();
    crate::io::mark::mark(&file);
    TargetLife::new(g.to_str().unwrap(), true).end();
    assert!(g.exists());
    use std::os::unix::fs::MetadataExt;
    let md = file.metadata().unwrap();
    assert_eq!(
        crate::io::mark::read_mark(&file),
        Some(crate::io::mark::Mark::Kept(Some((
            md.mtime(),
            md.mtime_nsec(),
            md.size()
        ))))
    );
}

/// A file put in the place of the study's file between two of its runs is not written
/// (the next run refuses it as any foreign file without --overwrite) and not removed at
/// the end: the study holds its file by its mark, not by its name.
#[test]
fn a_file_swapped_in_between_runs_is_neither_written_nor_removed() {
    struct Swap {
        path: PathBuf,
        foreign: PathBuf,
    }
    impl Sink for Swap {
        fn run_started(&mut self, index: usize, _of: usize, _spec: &Spec) -> Result<bool> {
            if index == 1 {
                std::fs::rename(&self.foreign, &self.path).unwrap();
            }
            Ok(true)
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let foreign = dir.path().join("precious");
    let precious = vec![7u8; 1 << 20];
    std::fs::write(&foreign, &precious).unwrap();
    let file_run = || {
        let mut r = null_run("1", Rw::Write, 1);
        let spec = &mut r.plan.spec;
        spec.target = f.display().to_string();
        spec.engine = EngineKind::Psync;
        spec.direct = false;
        spec.size = Some(1 << 20);
        spec.io_size = Some(256 << 10);
        r
    };
    let mut plan = suite(vec![file_run(), file_run()], None);
    plan.target = f.display().to_string();
    let stop = StopFlag::new();
    let mut sink = Swap {
        path: f.clone(),
        foreign: foreign.clone(),
    };
    let mut runner = StudyRunner::new(Store::new(None), &mut sink, &stop);
    let out = runner.suite(&plan);
    assert!(
        matches!(&out, Err(crate::error::Error::Guard(m)) if m.contains("not created by iomark")),
        "the second run refuses the foreign file: {out:?}"
    );
    assert_eq!(
        std::fs::read(&f).unwrap(),
        precious,
        "not written, not removed"
    );
}

/// A study whose second run fails after its first run created the target removes the
/// target all the same (a file on disk, psync, buffered).
#[test]
fn a_failed_run_does_not_leave_the_studys_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let file_run = |offset: u64| {
        let mut r = null_run("1", Rw::Read, 1);
        let spec = &mut r.plan.spec;
        spec.target = f.display().to_string();
        spec.engine = EngineKind::Psync;
        spec.direct = false;
        spec.size = Some(1 << 20);
        spec.offset = offset;
        spec.io_size = Some(64 << 10);
        r
    };
    // The second run starts past the end of the file the first one made: it fails at open.
    let mut second = file_run(0);
    second.plan.spec.size = None;
    second.plan.spec.offset = 4 << 20;
    let runs = vec![file_run(0), second];
    let mut plan = suite(runs, None);
    plan.target = f.display().to_string();
    let stop = StopFlag::new();
    let mut discard = Discard;
    let mut runner = StudyRunner::new(Store::new(None), &mut discard, &stop);
    let out = runner.suite(&plan);
    assert!(
        matches!(&out, Err(crate::error::Error::Target(_))),
        "the second run fails: {out:?}"
    );
    assert_eq!(runner.store.doc.runs.len(), 1, "the first run is kept");
    assert!(!f.exists(), "the study's file is removed after the failure");
}

/// Laying out a new file is reported to the sink, MiB by MiB, up to its whole size (the
/// progress line shows "laying out 4 MiB: 50%").
#[test]
fn laying_out_a_file_is_reported() {
    struct Layout(Vec<(u64, u64)>);
    impl Sink for Layout {
        fn layout(&mut self, done: u64, total: u64) {
            self.0.push((done, total));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut r = null_run("1", Rw::Read, 1);
    let spec = &mut r.plan.spec;
    spec.target = dir.path().join("t.dat").display().to_string();
    spec.engine = EngineKind::Psync;
    spec.direct = false;
    spec.size = Some(4 << 20);
    spec.io_size = Some(64 << 10);
    let stop = StopFlag::new();
    let mut sink = Layout(Vec::new());
    let mut runner = StudyRunner::new(Store::new(None), &mut sink, &stop);
    runner.single(&r.plan).unwrap();
    drop(runner);
    let total = 4u64 << 20;
    assert!(sink.0.len() >= 4, "{:?}", sink.0);
    assert!(sink.0.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(sink.0.last(), Some(&(total, total)));
}

#[test]
fn a_run_of_a_multiple_of_the_span_resumes() {
    // `--io-size 2x` is recorded as the bytes it came to (`spec.io_size`); the plan
    // that made the document still resumes it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let mut runs = vec![null_run("1", Rw::Read, 1), null_run("2", Rw::Read, 1)];
    for r in &mut runs {
        (r.plan.spec.io_size, r.plan.spec.io_spans) = (None, Some(2.0));
    }
    let stop = StopFlag::new();
    {
        let mut discard = Discard;
        let mut runner = StudyRunner::new(Store::new(Some(path.clone())), &mut discard, &stop);
        let life = TargetLife::new("null", false);
        runner.run_plan(&runs[..1], &[], &life, true).unwrap();
        assert_eq!(runner.store.doc.runs[0].spec.io_size, Some(2 << 20));
        assert_eq!(runner.store.doc.runs[0].repetitions[0].read.ios, 512);
    }
    let mut discard = Discard;
    let mut runner = StudyRunner::new(Store::new(Some(path.clone())), &mut discard, &stop);
    runner.suite(&suite(runs, Some(path))).unwrap();
    assert_eq!(runner.store.doc.runs.len(), 2);
}
