//! Where a pool unit's stamps lie (`workload::pool`): the places, their width and the
//! part of the key each takes, the copies made again after a stamp, the lines a stamp
//! turns through, and where the sampler reads a unit's selector to match.

use super::STAMP_TURNS;
use crate::plan::data::{
    CompressMethod, DataKind, DataSpec, free_run_width, repeat_free_runs, repeat_segments,
    repeat_skip, repeat_stamp,
};
use crate::workload::data::{fill_repeat, fill_zerofill};
use crate::workload::rng::Rng;

/// Where a pool unit's stamps lie and how they are written (`stamp_places`).
#[derive(Debug, Clone, Default)]
pub(super) struct Layout {
    /// Offsets of the stamp places within a unit.
    pub(super) places: Vec<u32>,
    /// Bytes of a stamp: eight, or fewer when a chunk opens with fewer literals.
    pub(super) width: usize,
    /// How far each place's part of the key is turned (`spread_keys`: a `repeat` unit
    /// stamped at several literals fewer than 8 bytes each, each place its own `width`
    /// bytes of the key, in turn); empty: every place takes the key as it is.
    pub(super) rot: Vec<u32>,
    /// The copies made again once a unit is stamped (a `repeat` unit's copies of its
    /// literals: `data::repeat_copies`), as (from, to, length) within the unit.
    pub(super) recopy: Vec<(u32, u32, u32)>,
    /// The bytes of literals the unit opens with (all of it for random data).
    pub(super) head: usize,
}

impl Layout {
    /// Gives each place its own part of the key: the next `width` bytes after the last
    /// place's in the same `piece` (a dedup unit), from the first at each piece's start.
    fn spread_keys(&mut self, piece: usize) {
        let (mut turn, mut last) = (0, None);
        self.rot = (self.places.iter())
            .map(|&p| {
                let here = p as usize / piece.max(1);
                if last != Some(here) {
                    turn = 0;
                }
                last = Some(here);
                let r = turn;
                turn = (turn + 8 * self.width as u32) % 64;
                r
            })
            .collect();
    }

    /// Writes a unit's stamps: at each place, the original `width` bytes XORed with
    /// `key` (or with its part: `rot`); then the copies made again.
    #[inline(always)]
    pub(super) fn stamp(&self, unit: &mut [u8], orig: &[u64], key: u64) {
        let width = self.width;
        for (i, (&p, &o)) in self.places.iter().zip(orig).enumerate() {
            let p = p as usize;
            if width == 8 {
                unit[p..p + 8].copy_from_slice(&(o ^ key).to_le_bytes());
                continue;
            }
            let key = key.rotate_right(self.rot.get(i).copied().unwrap_or(0));
            let stamp = o ^ key;
            if let Some(w) = unit.get_mut(p..p + 8) {
                // The word the stamp starts, its first `width` bytes replaced: one load and
                // one store (a copy of `width` bytes was a call to `memcpy`).
                let mask = u64::MAX >> (64 - 8 * width);
                let old = u64::from_le_bytes(w.try_into().expect("8 bytes"));
                w.copy_from_slice(&(old & !mask | stamp & mask).to_le_bytes());
                continue;
            }
            unit[p..p + width].copy_from_slice(&stamp.to_le_bytes()[..width]);
        }
        for &(from, to, n) in &self.recopy {
            let (from, to, n) = (from as usize, to as usize, n as usize);
            unit.copy_within(from..from + n, to);
        }
    }
}

/// The lines a pool's one stamp turns through (`UnitPool::turns`): without dedup, one
/// 8-byte stamp at a unit's start, units of two lines or more; the most lines that
/// divide both the unit's lines and the pool's units (so that unit `id`'s line is
/// `id mod turns` whatever the lap), and whose stamps all lie in the unit's opening
/// literals (`unit = (length, opening literals)`: a zerofill unit's stamp stays out of
/// its zeros). Dedup keeps every stamp first: its duplicates are copies, and the sampler
/// finds a copy's stamp by its content alone.
///
/// (Until 2026-11-29 a zerofill unit's stamp turned through all its lines: `--compress
/// 50` had 8 random bytes in the zero half of every other unit.)
///
/// A pool unit other than the dedup unit (compressible data whose `--compress-chunk` is
/// not the `--dedup-unit`: the pool's units are chunks) keeps its stamp at its start:
/// the sampler reads a dedup unit's selector at unit `id`'s turn, and a chunk's ids are
/// not its dedup units'. (Turned, the selectors of 16 KiB chunks' first 4 KiB units were
/// read off their stamps, on bytes that came back every lap of the pool: after 8 laps
/// they were pinned as frequent, and 256 MiB of `--compress 80 --compress-chunk 16k`
/// measured 68.3% duplicate units for 75.0%.)
pub(super) fn turns_of(spec: &DataSpec, layout: &Layout, unit_len: usize, units: usize) -> usize {
    let head = layout.head;
    if layout.places != [0]
        || layout.width != 8
        || !layout.recopy.is_empty()
        || spec.dedup > 0.0
        || unit_len != spec.dedup_unit as usize
    {
        return 1;
    }
    let lines = unit_len / 64;
    if lines < 2 {
        return 1;
    }
    let mut turns = STAMP_TURNS;
    while turns > 1
        && (!lines.is_multiple_of(turns)
            || !units.is_multiple_of(turns)
            || (turns - 1) * 64 + 8 > head)
    {
        turns /= 2;
    }
    turns
}

/// The stamps of a unit of `unit_len` bytes under profile `spec`: its opening literals
/// (eight bytes, or as many as a chunk opens with); none when the unit opens without
/// literals (nearly 100% compressible: as alike as zeros). A `repeat` unit of whole
/// chunks (`DataSpec::repeat_chunks_whole`) is stamped at literals no copy reads
/// (`repeat_layout`); other `repeat` units at every place their opening literals are
/// copied to, alike (the copies stay copies).
///
/// (Until 2026-11-29 every `repeat` unit was stamped at each copy of its opening
/// literals: at 98.8%, one literal a 512-byte segment, that was 4088 one-byte stamps a
/// 4 KiB unit, 780 µs of CPU a 128 KiB write where random data takes 22, and the stamp
/// was that one byte: 256 stamps a pool unit.)
pub(super) fn stamp_places(spec: &DataSpec, unit_len: usize) -> Layout {
    if spec.kind != DataKind::Compressible || spec.compress <= 0.0 {
        return Layout {
            places: vec![0],
            width: unit_len.min(8),
            head: unit_len,
            ..Layout::default()
        };
    }
    if spec.repeat_chunks_whole() {
        return repeat_layout(spec, unit_len);
    }
    // Where the literals land is all that matters: shape one chunk with any literals.
    let len = (spec.compress_chunk as usize).min(unit_len);
    let mut chunk = vec![0u8; len];
    let mut rng = Rng::new(0x5EED, len as u64);
    let mut width = 0;
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let lits = |dst: &mut [u8], at: usize| {
        if at == 0 {
            width = dst.len().min(8);
        }
        runs.push((at, dst.len()));
        rng.fill(dst);
    };
    match spec.compress_method {
        CompressMethod::Zerofill => fill_zerofill(&mut chunk, spec.compress, lits),
        CompressMethod::Repeat => fill_repeat(&mut chunk, spec.compress, lits),
    }
    if width == 0 {
        return Layout::default();
    }
    // The literals from the start on, runs that touch taken together.
    runs.sort_unstable();
    let opening = runs.iter().fold(
        0,
        |end, &(at, n)| if at <= end { end.max(at + n) } else { end },
    );
    // Random opening bytes recur only where they were copied.
    let head = chunk[..width].to_vec();
    let mut places: Vec<u32> = (0..=len - width)
        .filter(|&q| chunk[q..q + width] == head[..])
        .map(|q| q as u32)
        .collect();
    // A chunk larger than the dedup unit: every later unit that holds literals gets a
    // stamp of its own at its first literals (else its bytes would come back a pool
    // later, a duplicate unit). A unit of zeros alone stays zeros (see
    // `DataSpec::zero_units_repeat`).
    let du = spec.dedup_unit as usize;
    for k in (1..len / du.max(1)).map(|k| k * du) {
        let first = (runs.iter())
            .map(|&(at, n)| (at.max(k), (at + n).min(k + du)))
            .filter(|&(a, e)| e >= a + width)
            .map(|(a, _)| a)
            .min();
        if let Some(p) = first.filter(|p| {
            !places
                .iter()
                .any(|&q| q as usize + width > *p && (*p + width) > q as usize)
        }) {
            places.push(p as u32);
        }
    }
    places.sort_unstable();
    Layout {
        places,
        width,
        head: opening,
        ..Layout::default()
    }
}

/// `stamp_places` of a `repeat` unit of whole chunks (`plan::data::repeat_stamp`): in
/// each dedup unit it holds (the unit itself when no larger), the first free run
/// (`repeat_free_runs`) of 8 bytes, or with shorter runs as many as make 8 bytes, each
/// its own part of the key; the copies stay as they are. With fewer than 7 such bytes
/// (small chunks), the opening literals and each segment's as many, the copies made
/// again after the stamp.
fn repeat_layout(spec: &DataSpec, unit_len: usize) -> Layout {
    let (cl, pct) = (spec.compress_chunk as usize, spec.compress);
    let chunks = (0..unit_len / cl).map(|c| c * cl);
    let (first, _) = repeat_segments(cl, pct)
        .next()
        .map_or((0, 0), |s| (s.2, s.1));
    if first == 0 {
        return Layout::default();
    }
    let head = first;
    // The pieces each stamp makes unique: the dedup units of a larger pool unit.
    let piece = (spec.dedup_unit as usize).clamp(1, unit_len);
    let (_, recopy) = repeat_stamp(cl, pct);
    if recopy {
        let width = first.min(8);
        let runs: Vec<usize> = (repeat_segments(cl, pct))
            .filter(|&(_, _, lit)| lit >= width)
            .map(|(at, _, _)| at)
            .collect();
        let copies = crate::workload::data::repeat_copies(cl, pct);
        let mut layout = Layout {
            width,
            head,
            ..Layout::default()
        };
        for c in chunks {
            layout.places.extend(runs.iter().map(|&at| (c + at) as u32));
            let shifted = copies.iter().map(|&(f, t, n)| (c + f, c + t, n));
            (layout.recopy).extend(shifted.map(|(f, t, n)| (f as u32, t as u32, n as u32)));
        }
        layout.spread_keys(piece);
        return layout;
    }
    let free = repeat_free_runs(cl, pct);
    let width = free_run_width(&free);
    let runs: Vec<usize> = chunks
        .flat_map(|c| {
            free.iter()
                .filter(|&&(_, n)| n >= width)
                .map(move |&(at, _)| c + at)
        })
        .collect();
    // A chunk of one segment stamped at its opening word, which its copy leaves out
    // (`repeat_skip`): the literals past it are copied, and a stamp turned into them
    // (`turns_of`) would break the copy.
    let head = match repeat_skip(cl, pct) {
        0 => head,
        skip => skip,
    };
    let mut layout = Layout {
        width,
        head,
        ..Layout::default()
    };
    for start in (0..unit_len).step_by(piece) {
        let mine = runs
            .iter()
            .filter(|&&at| at >= start && at + width <= start + piece);
        layout
            .places
            .extend(mine.take(8usize.div_ceil(width)).map(|&at| at as u32));
    }
    if width < 8 {
        layout.spread_keys(piece);
    }
    layout
}

/// Where the sampler reads a dedup unit's selector (`Sampler::new`) when a profile's
/// stamps are not at its start: the stamp's offset in a dedup unit (one place: read by
/// `selector_at` there), or the offsets of several (`keys::selector_of_places`; up to
/// 8, those of every pool unit in a dedup unit of several: read at the first one's
/// alone, 1 KiB chunks at 98.8%, two one-byte stamps each, had 2^16 selectors, and 1 GiB
/// measured up to 0.3% duplicates of none). `(0, [])` for a stamp at the start (the
/// unit's first word). A zerofill dedup unit of several chunks with stamps narrower than
/// a word is read at every chunk's too (at its first word alone, 2 KiB chunks at 99.6%,
/// one random byte each, had 256 selectors for 65536 contents, and 256 MiB measured 0.2%
/// duplicate units where they were 34.9%, until 2026-11-29).
pub(crate) fn selector_reads(spec: &DataSpec) -> (usize, Vec<u32>) {
    let (unit_len, du) = (spec.unit_len(), spec.dedup_unit as usize);
    let layout = stamp_places(spec, unit_len);
    let narrow_chunks = spec.kind == DataKind::Compressible
        && spec.compress > 0.0
        && unit_len < du
        && layout.width < 8;
    if !spec.repeat_chunks_whole() && !narrow_chunks {
        return (0, Vec::new());
    }
    // A dedup unit of several pool units (chunks below it) holds each one's stamps.
    let units = (0..du.div_ceil(unit_len)).map(|j| (j * unit_len) as u32);
    let mut at: Vec<u32> = match unit_len >= du {
        true => layout.places.iter().map(|&p| p % du as u32).collect(),
        false => (units.flat_map(|j| layout.places.iter().map(move |&p| j + p))).collect(),
    };
    at.retain(|&p| p as usize + 8 <= du);
    at.sort_unstable();
    at.dedup();
    at.truncate(8);
    match at[..] {
        [] => (0, Vec::new()),
        [p] => (p as usize, Vec::new()),
        _ => (0, at),
    }
}
