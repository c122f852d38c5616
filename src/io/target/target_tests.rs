use super::*;
use crate::plan::data::DataSpec;
use crate::plan::spec::{EngineKind, Rw};

fn open(path: &Path, rw: Rw, policy: &TargetPolicy) -> Result<Target> {
    let mut spec = Spec::new(path.display().to_string());
    spec.rw = rw;
    spec.engine = EngineKind::Psync;
    spec.direct = false;
    spec.size = Some(64 << 10);
    let mut layout = DataGen::new(&DataSpec::default(), 1, 1, None);
    Target::open(&spec, policy, &mut |_, _| true, &mut layout)
}

#[test]
fn refusals_say_which_kind_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("foreign.dat");
    std::fs::write(&foreign, vec![7u8; 64 << 10]).unwrap();
    let policy = TargetPolicy::default();
    assert!(matches!(
        open(&foreign, Rw::Write, &policy),
        Err(Error::Guard(_))
    ));
    assert!(
        open(&foreign, Rw::Read, &policy).is_ok(),
        "reads need no flag"
    );
    let overwrite = TargetPolicy {
        overwrite: true,
        ..TargetPolicy::default()
    };
    assert!(open(&foreign, Rw::Write, &overwrite).is_ok());
    assert!(matches!(
        open(dir.path(), Rw::Read, &policy),
        Err(Error::Target(_))
    ));
    assert!(matches!(
        open(&dir.path().join("no/such/dir/x"), Rw::Write, &policy),
        Err(Error::Target(_))
    ));
}

/// A study holds the file it made between its runs: a later run that opened it took it
/// off the list a second Ctrl-C removes when it finished, so from a study's third run on
/// a second Ctrl-C (or `timeout`'s second signal) left the file behind, and the next run
/// refused it as a killed run's. It stays on the list until the study releases it.
#[test]
fn a_held_file_stays_unfinished_until_the_study_releases_it() {
    use crate::io::mark::{is_unfinished, release_held};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.dat");
    let hold = TargetPolicy {
        hold: true,
        ..TargetPolicy::default()
    };
    let first = open(&path, Rw::Read, &hold).unwrap();
    first.finish().unwrap();
    assert!(is_unfinished(&path), "after the run that made it");
    for run in 2..=3 {
        let later = open(&path, Rw::Read, &hold).unwrap();
        later.finish().unwrap();
        assert!(is_unfinished(&path), "after run {run}, which opened it");
    }
    release_held(&path, false);
    assert!(!is_unfinished(&path));
    assert!(!path.exists());
}
