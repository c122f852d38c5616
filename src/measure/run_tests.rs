//! Tests of a run's checks before it starts.

use super::*;

#[test]
fn memory_check_refuses_what_does_not_fit_with_the_figures() {
    let mut spec = Spec::new("f");
    spec.rw = crate::plan::spec::Rw::RandRead;
    assert!(check_memory(&spec, Some(1 << 30), None).is_ok());
    spec.jobs = 1024;
    spec.qd = 4096;
    // 16 GiB of buffers (and one more per job, to prepare an I/O ahead): refused with
    // 30 GiB available, accepted with 40 GiB.
    let err = check_memory(&spec, Some(30 << 30), None).unwrap_err();
    assert!(matches!(err, Error::Usage(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "--jobs 1024 x --qd 4096 x --bs 4 KiB needs about 16.0 GiB of memory (16.0 GiB of I/O buffers), more than half of the 30 GiB available; lower --jobs, --qd or --bs"
    );
    assert!(check_memory(&spec, Some(40 << 30), None).is_ok());
    assert!(check_memory(&spec, None, None).is_ok());
    // Writes add each job's data sampling; --verify its maps.
    spec.rw = crate::plan::spec::Rw::Write;
    spec.jobs = 1;
    spec.qd = 1;
    spec.verify = true;
    spec.size = Some(1 << 40);
    let err = check_memory(&spec, Some(8 << 30), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("6 GiB of verify maps")
            && err.contains("of data samples")
            && err.contains("of data pools"),
        "{err}"
    );
    assert!(
        err.starts_with("--size 1 TiB in blocks of --bs 4 KiB needs")
            && err.ends_with("use a larger --bs or a smaller --size"),
        "{err}"
    );
    // A large data pool is named as what to lower, not the buffers.
    spec.verify = false;
    spec.jobs = 8;
    spec.data.pool = 1 << 30;
    let err = check_memory(&spec, Some(8 << 30), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("--jobs 8 x (--qd 1 x --bs 4 KiB + --data-pool 1 GiB) needs about 8.")
            && err.contains("of data pools")
            && err.ends_with("lower --jobs or --data-pool (16m by default)"),
        "{err}"
    );
}
