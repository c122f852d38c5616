//! The figures beside the verdicts: the study tables' CPU per I/O, the device line's
//! flushes, the data line's compression sample (`report::tables`, `report::text`).

use crate::plan::spec::Rw;
use crate::report::{tables, text};
use crate::results::env::DeviceDelta;
use crate::results::schema::DataMeasure;
use crate::results::testdoc::{doc, run};

/// `iomark fio`'s and every study's table carry the run's job threads' CPU time per I/O,
/// the mean over its repetitions (fio prints a job's CPU; the study tables had no CPU
/// figure, session 26), and "-" where none was measured. The job threads', as fio's
/// figure: the process's (with io_uring's io-wq workers) stood beside fio's job threads'
/// (a helper's zram io_uring job: fio 4031 ns against iomark 8610, where the job threads
/// were 0.98x fio's).
#[test]
fn study_tables_carry_the_cpu_per_io() {
    let mut measured = run(
        Rw::RandRead,
        1,
        &[1000.0, 1000.0],
        Some(("randread", "qd", "1")),
    );
    for (rep, ns) in measured.repetitions.iter_mut().zip([9000.0, 11000.0]) {
        rep.cpu.workers.per_io_ns = ns;
        rep.cpu.per_io_ns = 2.0 * ns;
    }
    let none = run(Rw::RandRead, 4, &[1000.0], Some(("randread", "qd", "4")));
    let st = &tables::studies(&doc(vec![measured.clone(), none]))[0].table;
    let col = (st.header.iter())
        .position(|h| h == "CPU/IO")
        .expect("a CPU/IO column");
    assert_eq!(st.rows[0][col].text, crate::units::fmt_ns(10000.0));
    assert_eq!(st.rows[1][col].text, "-");
    // The run table: the process's and the job threads'; fio's output has no process
    // figure (its job threads' stood in the process's column).
    let cells = |r: &crate::results::schema::Run| {
        let row = &tables::run_rows(r)[0];
        row[row.len() - 2..].to_vec()
    };
    assert_eq!(cells(&measured), ["20000", "10000"]);
    measured.fio = Some(Default::default());
    assert_eq!(cells(&measured), ["-", "10000"]);
}

/// The device line names the flushes the kernel counted, and when the device counted more
/// writes than iomark made, or flushes are a share of its writes, that each flush asked
/// on its own is also a write of no data.
#[test]
fn the_device_line_says_the_flushes_and_their_empty_writes() {
    let mut r = run(Rw::RandWrite, 1, &[1024.0], None);
    let device = |write_ios, flush_ios| DeviceDelta {
        name: "loop9".into(),
        write_ios,
        write_bytes: 4 << 20,
        flush_ios,
        ..Default::default()
    };
    r.repetitions[0].device = Some(device(2048, 2048));
    let out = text::run_summary(&r);
    assert!(out.contains("2048 writes (4 MiB), 2048 flushes\n"), "{out}");
    assert!(
        out.contains("as a write of no data: up to 1024 of the 1024 writes beyond iomark's 1024 are such flushes"),
        "{out}"
    );
    // As many writes as iomark's: the flushes said, nothing to explain.
    r.repetitions[0].device = Some(device(1024, 1));
    let out = text::run_summary(&r);
    assert!(out.contains("1024 writes (4 MiB), 1 flush\n"), "{out}");
    assert!(!out.contains("no data"), "{out}");
    // Fewer writes than iomark's (buffered, merged by writeback), half of them its fsyncs'
    // flushes: said (it was not).
    r.repetitions[0].device = Some(device(510, 255));
    r.repetitions[0].fsyncs = 255;
    let out = text::run_summary(&r);
    assert!(
        out.contains("as a write of no data: up to 255 of the device's 510 writes (iomark made 255 fsyncs) are such flushes, not data"),
        "{out}"
    );
    // One fsync (a buffered run's --end-fsync): in the singular ("1 fsyncs" before).
    r.repetitions[0].device = Some(device(2, 1));
    r.repetitions[0].fsyncs = 1;
    let out = text::run_summary(&r);
    assert!(out.contains("(iomark made 1 fsync) are such"), "{out}");
    r.repetitions[0].fsyncs = 255;
    // As many writes as iomark's and no fsync (libaio's O_DSYNC writes, whose flushes
    // the kernel counts as flushes only): none of the writes is said to be one.
    r.repetitions[0].device = Some(device(1024, 271));
    r.repetitions[0].fsyncs = 0;
    assert!(!text::run_summary(&r).contains("no data"));
    // No flush: no word of them.
    r.repetitions[0].device = Some(device(1030, 0));
    assert!(!text::run_summary(&r).contains("flush"));
}

/// The data line says what its compression figures were measured in when that is a
/// sample (the JSON's `compress_sampled_bytes`; the text said it only of the dedup figure).
#[test]
fn the_data_line_says_the_compression_sample() {
    let mut w = run(Rw::Write, 1, &[65536.0], None);
    let measure = |sampled| DataMeasure {
        lz4_pct: 48.7,
        zstd_pct: 51.2,
        dedup_pct: Some(0.0),
        compress_sampled_bytes: sampled,
        dedup_sampled_units: 1024,
    };
    // 65536 writes of 4 KiB: 256 MiB.
    w.repetitions[0].data = Some(measure(4 << 20));
    let out = text::run_summary(&w);
    assert!(
        out.contains("51.2% smaller (in 4 MiB sampled of 256 MiB)"),
        "{out}"
    );
    w.repetitions[0].data = Some(measure(256 << 20));
    let out = text::run_summary(&w);
    assert!(!out.contains("sampled of"), "{out}");
}
