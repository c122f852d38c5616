//! Where a pool unit's stamps lie and how far they keep units apart: a `repeat` chunk
//! of one segment stamped at bytes no copy reads, narrow stamps keyed by their lap of
//! the pool, the chunks of a dedup unit keyed apart.

use super::super::*;
use super::{spec, stream};
use crate::plan::data::{CompressMethod, DataKind};
use crate::workload::hash::content_hash;

/// A `repeat` chunk of one segment (512 bytes or smaller, at shares from 25% to 96%; 90% for 256) has
/// an 8-byte stamp no copy reads: changing those literals changes no other byte, so the
/// pool stamps one word and makes no copy again. Until 2026-11-29 its copy repeated
/// every literal from the first: from 50% the pool rewrote the whole chunk after each
/// stamp (22-29 µs of CPU a null 128 KiB write, `--refill`'s cost).
#[test]
fn a_one_segment_repeat_chunk_has_a_stamp_no_copy_reads() {
    use crate::plan::data::{repeat_free_runs, repeat_stamp};
    // (256 bytes from 95%, 512 from 97% hold fewer than 16 literals: half of them, 3 to
    // 7 bytes, are left out of the copy; 512 bytes at 98% hold 5, too few.)
    for (len, top) in [(256, 96.0), (512, 97.5)] {
        let shares = [25.0, 50.0, 75.0, 90.0, 95.0, 96.0, 97.0, 97.5];
        for pct in shares.into_iter().filter(|&p| p <= top) {
            let (width, recopy) = repeat_stamp(len, pct);
            let wide = (len == 512 && pct <= 96.0) || pct <= 90.0;
            assert!(!recopy && width >= 3, "{len} {pct}: {width} {recopy}");
            assert!(!wide || width == 8, "{len} {pct}: {width}");
            let runs = repeat_free_runs(len, pct);
            let fill = || {
                let mut chunk = vec![0u8; len];
                let mut rng = Rng::new(9, len as u64);
                fill_repeat(&mut chunk, pct, |dst, _| rng.fill(dst));
                let mut again = vec![0u8; len];
                let mut rng = Rng::new(9, len as u64);
                fill_repeat(&mut again, pct, |dst, at| {
                    rng.fill(dst);
                    for (i, b) in dst.iter_mut().enumerate() {
                        let free = runs.iter().any(|&(r, n)| (r..r + n).contains(&(at + i)));
                        *b ^= u8::from(free);
                    }
                });
                (chunk, again)
            };
            let (chunk, stamped) = fill();
            let differ: Vec<usize> = (0..len).filter(|&i| chunk[i] != stamped[i]).collect();
            let free = runs.iter().map(|&(_, n)| n).sum::<usize>();
            assert_eq!(differ.len(), free, "{len} {pct}: {differ:?} for {runs:?}");
            assert!(free >= width, "{len} {pct}: {runs:?}");
        }
    }
}

/// Stamps narrower than 8 bytes (`repeat` chunks of few literals) are the unit's lap of
/// the pool: 1 KiB chunks at 98.5%, 3 free bytes each, in a pool of 4 units, 4096 laps:
/// every unit differs (with the low bytes of a random value per unit, as until
/// 2026-11-29, two laps of a pool unit were alike with odds of about one in two, four
/// pool units). And from 3 free bytes no copy is made again after a stamp: 1 KiB chunks
/// at 98% and 2 KiB at 98.7% were stamped at their opening literals, their copies made
/// again (`--refill`'s cost).
#[test]
fn narrow_stamps_differ_for_every_lap_of_the_pool() {
    use crate::plan::data::repeat_stamp;
    for (len, pct) in [(1024, 98.0), (1024, 98.5), (2048, 98.7), (512, 97.5)] {
        let (width, recopy) = repeat_stamp(len, pct);
        assert!(!recopy && width >= 3, "{len} {pct}: {width} {recopy}");
    }
    let mut s = spec(DataKind::Compressible, 98.5, 0.0);
    s.compress_method = CompressMethod::Repeat;
    s.compress_chunk = 1024;
    s.dedup_unit = 1024;
    s.pool = 4096;
    let data = stream(&s, 16 << 20, 131072, 5);
    let units: std::collections::HashSet<u64> = data.chunks(1024).map(content_hash).collect();
    assert_eq!(units.len(), 16384, "{}", s.describe());
}

/// A 4 KiB dedup unit of chunks with narrow stamps (1 or 2 bytes each) is unique over
/// 512 laps of a 64 KiB pool: its chunks take their own bits of the lap's key. (Earlier
/// the same day every chunk had the lap's key alike, and such units came back after 256
/// laps: 50% duplicates here; with a random key per chunk, as before, none.)
#[test]
fn a_dedup_unit_of_narrow_stamped_chunks_is_unique_for_many_laps() {
    let cases = [
        (CompressMethod::Repeat, 98.8, 512),
        (CompressMethod::Zerofill, 99.2, 512),
        (CompressMethod::Repeat, 98.8, 1024),
        (CompressMethod::Zerofill, 99.5, 1024),
    ];
    for (method, pct, chunk) in cases {
        let mut s = spec(DataKind::Compressible, pct, 0.0);
        s.compress_method = method;
        s.compress_chunk = chunk;
        s.pool = 64 << 10;
        let data = stream(&s, 32 << 20, 131072, 3);
        let units: std::collections::HashSet<u64> = data.chunks(4096).map(content_hash).collect();
        assert_eq!(units.len(), 8192, "{}", s.describe());
    }
}
