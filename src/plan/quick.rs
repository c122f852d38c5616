//! Plans: lists of specs that run one after another. For now the quick benchmark, the
//! embedded default that `iomark` with no arguments runs. Building a plan does no I/O.

use crate::plan::spec::{EngineKind, Rw, Spec};

/// The quick benchmark on `file`: sequential 1 MiB at QD 8, random 4 KiB at QD 32 and at
/// QD 1, each read and write, time-based. With psync (no io_uring), queue depth is
/// emulated by as many jobs, and the note says so.
pub fn quick(
    file: &str,
    size: u64,
    runtime_s: f64,
    ramp_s: f64,
    engine: EngineKind,
    note: Option<String>,
) -> Vec<Spec> {
    let shapes: [(Rw, u64, u32); 6] = [
        (Rw::Read, 1 << 20, 8),
        (Rw::Write, 1 << 20, 8),
        (Rw::RandRead, 4096, 32),
        (Rw::RandWrite, 4096, 32),
        (Rw::RandRead, 4096, 1),
        (Rw::RandWrite, 4096, 1),
    ];
    shapes
        .iter()
        .map(|&(rw, bs, qd)| {
            let mut s = Spec::new(file);
            s.rw = rw;
            s.bs = bs;
            s.qd = qd;
            s.size = Some(size);
            s.runtime_s = Some(runtime_s);
            s.ramp_s = ramp_s;
            s.engine = engine;
            s.engine_note = note.clone();
            if engine == EngineKind::Psync && qd > 1 {
                s.jobs = qd;
                s.qd = 1;
                s.io_share = qd;
                s.engine_note = Some(format!(
                    "{}; QD {qd} emulated by {qd} jobs",
                    note.clone().unwrap_or_else(|| "psync".into())
                ));
            }
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_has_the_six_tests() {
        let p = quick("f", 1 << 30, 3.0, 1.0, EngineKind::IoUring, None);
        let names: Vec<String> = p.iter().map(Spec::name).collect();
        assert_eq!(
            names,
            [
                "read 1m qd8",
                "write 1m qd8",
                "randread 4k qd32",
                "randwrite 4k qd32",
                "randread 4k qd1",
                "randwrite 4k qd1"
            ]
        );
        let psync = quick("f", 1 << 30, 3.0, 1.0, EngineKind::Psync, None);
        assert_eq!((psync[2].qd, psync[2].jobs), (1, 32));
        assert!(psync.iter().all(|s| s.validate().is_ok()));
    }
}
