//! The shape of a compressible chunk (`plan::data`): how many random literals each
//! method leaves in it for a compressibility, where they lie, and which of them a pool
//! stamps. Arithmetic only: `workload::data` fills chunks by it.

/// Segment length of the `repeat` method: each segment is literals then one copy. Short
/// enough that a chunk holds several copies, long enough that every copy is at least
/// 128 bytes: fast LZ coders skip ahead through incompressible literals and would miss a
/// short copy, so at low targets there are fewer, longer copies. A chunk below 512 bytes
/// is one segment. (Until 2026-11-29 such a chunk panicked: `clamp(512, 256)`.)
fn repeat_segment(chunk: usize, pct: f64) -> usize {
    if pct <= 0.0 {
        return chunk;
    }
    ((128.0 / (pct / 100.0)).ceil() as usize)
        .max(512)
        .min(chunk.max(1))
}

/// Literal bytes per `repeat` segment of `seg` bytes for `pct`%; a copy costs a
/// compressor a few bytes (token, offset, length), taken off the literals.
fn repeat_literals(seg: usize, pct: f64) -> usize {
    if pct >= 100.0 {
        return 0;
    }
    let raw = (1.0 - pct / 100.0) * seg as f64;
    let copy = seg as f64 - raw;
    let overhead = if copy >= 4.0 { 4.0 + copy / 512.0 } else { 0.0 };
    ((raw - overhead).round().max(0.0) as usize).min(seg)
}

/// Literal bytes of a `repeat` chunk of `len` bytes for `pct`%: in all, and in its first
/// segment (where its stamp lies, at most 8 of them; the other segments' literals come
/// with their pool unit).
pub(crate) fn repeat_chunk_literals(len: usize, pct: f64) -> (usize, usize) {
    let first = repeat_segments(len, pct)
        .next()
        .map_or(0, |(_, _, lit)| lit);
    (
        repeat_segments(len, pct).map(|(_, _, lit)| lit).sum(),
        first,
    )
}

/// The segments of a `repeat` chunk of `len` bytes for `pct`%, in order: (start,
/// length, literals at its start).
pub(crate) fn repeat_segments(len: usize, pct: f64) -> impl Iterator<Item = (usize, usize, usize)> {
    let seg = repeat_segment(len, pct).max(1);
    (0..len).step_by(seg).map(move |pos| {
        let n = seg.min(len - pos);
        (pos, n, repeat_literals(n, pct).min(n))
    })
}

/// Where the copy of a `repeat` chunk's first segment starts repeating its literals: at
/// its first byte, or further in, in a chunk of one segment (512 bytes, or smaller) whose
/// copy would read every literal: 8 bytes in (`REPEAT_SKIP`) with 16 literals or more,
/// else half of them from 6 (3 to 7 bytes, the copy repeating the others). The opening
/// bytes are then read by no copy, and a pool stamps them alone (`repeat_free_runs`).
///
/// (Until 2026-11-29 such a chunk, 512 bytes at 50% or more, had no literal no copy
/// read: it was stamped at its opening literals and its copy made again after every
/// stamp, every byte of the pool unit rewritten: 22-29 µs of CPU a null 128 KiB write,
/// about what `--refill` costs, where random data takes 0.4.)
pub(crate) fn repeat_skip(len: usize, pct: f64) -> usize {
    let mut segs = repeat_segments(len, pct);
    match (segs.next(), segs.next()) {
        (Some((0, n, lit)), None) if lit < (n - lit).next_multiple_of(8) + 8 => match lit {
            l if l >= 2 * REPEAT_SKIP => REPEAT_SKIP,
            l if l >= 2 * FREE_STAMP_BYTES => l / 2,
            _ => 0,
        },
        _ => 0,
    }
}

/// The opening bytes of a one-segment `repeat` chunk its copy leaves out (`repeat_skip`)
/// where it has literals enough: one stamp word.
const REPEAT_SKIP: usize = 8;

/// The literal runs of a `repeat` chunk of `len` bytes for `pct`% that no copy reads
/// (start, length): every segment's but the first's, and the first's past the longest
/// copy (from an 8-byte boundary), or before its copy's start (`repeat_skip`). A pool
/// stamps these, and its copies stay as they are.
pub(crate) fn repeat_free_runs(len: usize, pct: f64) -> Vec<(usize, usize)> {
    let skip = repeat_skip(len, pct);
    if skip > 0 {
        return vec![(0, skip)];
    }
    let read = repeat_segments(len, pct)
        .map(|(_, n, lit)| n - lit)
        .max()
        .unwrap_or(0);
    let mut runs = Vec::new();
    for (pos, _, lit) in repeat_segments(len, pct) {
        let from = match pos {
            0 => read.next_multiple_of(8),
            _ => pos,
        };
        if from < pos + lit {
            runs.push((from, pos + lit - from));
        }
    }
    runs
}

/// A pool's stamp of a `repeat` chunk of `len` bytes for `pct`% (its units whole
/// chunks, `DataSpec::repeat_chunks_whole`), in bytes of the chunk: the free runs'
/// (`repeat_free_runs`), as wide as the longest up to 8, from every run that long, up to
/// 8 bytes in all; with fewer than `FREE_STAMP_BYTES` of them, the first segment's
/// opening literals and every segment's as many (the copies made again after). Also
/// whether the copies are made again.
pub(crate) fn repeat_stamp(len: usize, pct: f64) -> (usize, bool) {
    let runs = repeat_free_runs(len, pct);
    let width = free_run_width(&runs);
    let free = runs.iter().filter(|&&(_, n)| n >= width).count() * width;
    if free >= FREE_STAMP_BYTES {
        return (free.min(8), false);
    }
    let (_, first) = repeat_chunk_literals(len, pct);
    let width = first.min(8);
    let runs = repeat_segments(len, pct).filter(|&(_, _, lit)| lit >= width && lit > 0);
    ((runs.count() * width).min(8), true)
}

/// The width of a `repeat` chunk's stamps in its free runs (`repeat_free_runs`): the
/// longest run's, up to 8 bytes.
pub(crate) fn free_run_width(runs: &[(usize, usize)]) -> usize {
    runs.iter().map(|&(_, n)| n.min(8)).max().unwrap_or(0)
}

/// Bytes of free runs (`repeat_free_runs`) a stamp needs to leave the copies alone: 3.
/// A stamp narrower than 8 bytes is the unit's lap of the pool, so 2^24 laps of a pool
/// differ, 256 TiB of writes at the default pool (`workload::pool`). (Until 2026-11-29
/// 7, the stamp a random value: 1 KiB chunks from 98% and 2 KiB from 98.7% had their
/// copies made again after every stamp, about what `--refill` costs.)
const FREE_STAMP_BYTES: usize = 3;

/// Literal bytes of a `zerofill` chunk of `len` bytes for `pct`% compressibility. The
/// (100 − pct)% share of random bytes is reduced by what encoding the zero run costs a
/// compressor (about one byte per 256 zeros for LZ4 and deflate, plus a few bytes), so the
/// measured figure is centred on the target instead of sitting half a point below it.
pub(crate) fn zerofill_literals(len: usize, pct: f64) -> usize {
    if pct >= 100.0 {
        return 0;
    }
    let raw = (1.0 - pct / 100.0) * len as f64;
    let zeros = len as f64 - raw;
    let overhead = if zeros > 0.0 {
        zeros / 400.0 + 2.0
    } else {
        0.0
    };
    ((raw - overhead).round().max(0.0) as usize).min(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk of any size is whole segments, each with its literals, whatever the share:
    /// chunks below 512 bytes (one segment) panicked.
    #[test]
    fn chunks_of_any_size_are_segmented() {
        for len in [1, 64, 256, 511, 512, 1000, 4096, 65536] {
            for pct in [0.0, 1.0, 25.0, 50.0, 98.8, 100.0] {
                let segs: Vec<_> = repeat_segments(len, pct).collect();
                assert_eq!(segs.iter().map(|s| s.1).sum::<usize>(), len, "{len} {pct}");
                assert!(segs.iter().all(|&(_, n, lit)| lit <= n && n > 0));
            }
        }
    }
}
