//! Seeding: how one `--seed` becomes independent, reproducible streams for every run,
//! repetition and job (offsets, the read/write mix, data).
//!
//! A hash of the workload's shape (pattern, block size, mix) is mixed into the streams so
//! that different workloads of one seed do not write the same bytes (a deduplicating device
//! must not see the 1 MiB test's data again in the 4 KiB test), while the same workload
//! stays reproducible. The engine, queue depth, sizes and target are left out: the same
//! workload on another engine or file issues the same offsets and data, and
//! `iomark data --bs B` reproduces what `run --rw write --bs B` writes (`--bssplit`,
//! `--bsrange` likewise: a mix of block sizes is part of the shape).

use std::sync::Arc;

use crate::plan::spec::Spec;
use crate::workload::data::DataGen;
use crate::workload::rng::Rng;
use crate::workload::sizes::Sizes;

/// The stream of repetition `rep` (0-based) of `spec`.
pub(crate) fn spec_stream(spec: &Spec, rep: u32) -> u64 {
    let mut text = format!("{}/{}/{}", spec.rw.name(), spec.bs, spec.rwmixread);
    // A mix of sizes, when there is one (`--bs` alone keeps the text it always had): two
    // mixes of one largest size wrote the same units, cut apart differently, until
    // 2026-11-28, so a deduplicating device saw one test's data again in the other.
    if let Some(m) = &spec.bs_mix {
        text.push_str(&format!("/{}", m.text()));
    }
    if let Some(w) = &spec.write_bs {
        text.push_str(&format!("/w{}", w.text()));
    }
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

/// The sizes of the I/Os of the job whose stream is `job_stream` (its own generator, apart
/// from the offsets', the mix's and the data's): `iomark data` draws them as the job does.
pub(crate) fn job_sizes(spec: &Spec, job_stream: u64) -> Sizes {
    Sizes::new(
        spec.bs,
        spec.bs_mix.as_ref(),
        spec.write_bs.as_ref(),
        Rng::new(!spec.seed, job_stream | 1),
    )
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

    #[test]
    fn mixes_of_one_largest_size_are_streams_apart() {
        use crate::plan::bsmix::{BsMix, WriteBs};
        let size = |s: &str| crate::plan::resolve::size_opt("--bssplit", s);
        let with = |mix: Option<&str>, write: Option<&str>| {
            let mut s = Spec::new("f");
            s.bs = 65536;
            s.bs_mix = mix.map(|m| BsMix::parse_split(m, size).unwrap());
            s.write_bs = write.map(|w| WriteBs::parse(w, size).unwrap());
            spec_stream(&s, 0)
        };
        let streams = [
            with(None, None),
            with(Some("4k/50:64k/50"), None),
            with(Some("8k/90:64k/10"), None),
            with(None, Some("4k/50:64k/50")),
        ];
        for (i, a) in streams.iter().enumerate() {
            for b in &streams[i + 1..] {
                assert_ne!(a, b, "{streams:x?}");
            }
        }
    }
}
