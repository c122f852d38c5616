//! Seeding: how one `--seed` becomes independent, reproducible streams for every run,
//! repetition and job (offsets, the read/write mix, data).
//!
//! A hash of the workload's shape (pattern, block size, mix) is mixed into the streams so
//! that different workloads of one seed do not write the same bytes (a deduplicating device
//! must not see the 1 MiB test's data again in the 4 KiB test), while the same workload
//! stays reproducible. The engine, queue depth, sizes and target are left out: the same
//! workload on another engine or file issues the same offsets and data, and
//! `iomark data --bs B` reproduces what `run --rw write --bs B` writes.

use std::sync::Arc;

use crate::plan::spec::Spec;
use crate::workload::data::DataGen;

/// The stream of repetition `rep` (0-based) of `spec`.
pub(crate) fn spec_stream(spec: &Spec, rep: u32) -> u64 {
    let text = format!("{}/{}/{}", spec.rw.name(), spec.bs, spec.rwmixread);
    // FNV-1a 64 (Fowler, Noll, Vo).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h & !0xFFFF_FFFF_u64) ^ ((rep as u64) << 16)
}

/// The stream of job `job` (0-based) within a run's stream. The two low bits are left
/// free for the offset (1), mix (2) and data (3) streams.
pub(crate) fn job_stream(run_stream: u64, job: u32) -> u64 {
    run_stream ^ ((job as u64) << 2)
}

/// The stream of target `t` (0-based) of a run on several targets: the first target's
/// is the run's own (a run on one target is unchanged), the others differ in the high
/// bits, so no two targets are written with the same data or offsets.
pub(crate) fn target_stream(run_stream: u64, t: u32) -> u64 {
    run_stream ^ ((t as u64) << 40)
}

/// The data stream of a job's stream.
pub(crate) fn data_stream(job_stream: u64) -> u64 {
    job_stream | 3
}

/// The data generator of job `job` (0-based) in repetition `rep` (0-based) of `spec`:
/// `iomark data` uses it to produce exactly the bytes that job writes.
pub(crate) fn job_data(spec: &Spec, rep: u32, job: u32, corpus: Option<Arc<Vec<u8>>>) -> DataGen {
    let stream = data_stream(job_stream(spec_stream(spec, rep), job));
    DataGen::new(&spec.data, spec.seed, stream, corpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_shape_rep_and_job_but_not_engine() {
        let mut a = Spec::new("f");
        let b = a.clone();
        assert_eq!(spec_stream(&a, 0), spec_stream(&b, 0));
        assert_ne!(spec_stream(&a, 0), spec_stream(&a, 1));
        assert_ne!(
            job_stream(spec_stream(&a, 0), 0),
            job_stream(spec_stream(&a, 0), 1)
        );
        a.qd = 32;
        assert_eq!(spec_stream(&a, 0), spec_stream(&b, 0));
        a.bs = 8192;
        assert_ne!(spec_stream(&a, 0), spec_stream(&b, 0));
    }
}
