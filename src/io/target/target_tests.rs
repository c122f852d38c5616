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
