//! Hand-built results documents for unit tests (reports, warnings): a run with given IOPS per
//! repetition, placed in a study, with the figures a test sets on top.

use crate::plan::StudyPoint;
use crate::plan::spec::{Rw, Spec};
use crate::results::env::Host;
use crate::results::schema::{
    DirStats, Document, Repetition, Run, Status, Summary, TargetDesc, TargetKind,
};

/// A document of these runs.
pub(crate) fn doc(runs: Vec<Run>) -> Document {
    let mut d = Document::new(Host {
        hostname: "h".into(),
        kernel: "k".into(),
        cpu: "c".into(),
        cores: 2,
        memory_bytes: 1 << 30,
    });
    d.runs = runs;
    d
}

/// A complete run of `rw` at 4 KiB and queue depth `qd`, one repetition per IOPS figure
/// (one second each), in study `test` sweeping `param` at `value` when given.
pub(crate) fn run(rw: Rw, qd: u32, iops: &[f64], study: Option<(&str, &str, &str)>) -> Run {
    let mut spec = Spec::new("/dev/x");
    spec.rw = rw;
    spec.qd = qd;
    let reps: Vec<Repetition> = iops
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let d = DirStats {
                ios: v as u64,
                bytes: v as u64 * 4096,
                iops: v,
                bw_bytes: v * 4096.0,
                lat_ns: Default::default(),
            };
            Repetition {
                index: i as u32 + 1,
                status: Status::Complete,
                elapsed_s: 1.0,
                read: if spec.reads() { d } else { DirStats::default() },
                write: if spec.writes() {
                    d
                } else {
                    DirStats::default()
                },
                trim: Default::default(),
                fsyncs: 0,
                cpu: Default::default(),
                spin_wait_ns: None,
                device: None,
                series: Vec::new(),
                data: None,
                verify: None,
                page_cache_hit_pct: None,
                targets: Vec::new(),
                ranks: Vec::new(),
                hosts: Vec::new(),
            }
        })
        .collect();
    Run {
        name: spec.name(),
        status: Status::Complete,
        target: TargetDesc {
            kind: TargetKind::BlockDevice,
            path: spec.target.clone(),
            offset: 0,
            span_bytes: 1 << 30,
            align: 512,
            created: false,
            device: None,
            filesystem: None,
        },
        repetitions_planned: reps.len() as u32,
        summary: Summary::of(&reps),
        repetitions: reps,
        warnings: Vec::new(),
        error: None,
        cache_bound: false,
        study: study.map(|(test, param, value)| StudyPoint {
            suite: "test".into(),
            test: test.into(),
            param: param.into(),
            value: value.into(),
        }),
        write_amplification: None,
        write_amplification_sources: Vec::new(),
        latency_kind: crate::results::schema::LatencyKind::Lat,
        fio: None,
        targets: Vec::new(),
        mpi: None,
        group: None,
        spec,
    }
}
