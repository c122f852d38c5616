use super::*;
use crate::plan::data::{CompressMethod, DataKind, DataSpec, POOL_BYTES};
use crate::workload::hash::content_hash;
use crate::workload::sampler::Sampler;

pub(super) fn spec(kind: DataKind, compress: f64, dedup: f64) -> DataSpec {
    DataSpec {
        kind,
        compress,
        dedup,
        ..DataSpec::default()
    }
}

pub(super) fn stream(spec: &DataSpec, bytes: usize, bs: usize, seed: u64) -> Vec<u8> {
    let mut g = DataGen::new(spec, seed, 7, None);
    let mut out = vec![0u8; bytes];
    for b in out.chunks_mut(bs) {
        g.fill(b);
    }
    out
}

#[test]
fn deterministic_and_fresh() {
    let s = DataSpec::default();
    assert_eq!(stream(&s, 1 << 16, 4096, 5), stream(&s, 1 << 16, 4096, 5));
    assert_ne!(stream(&s, 1 << 16, 4096, 5), stream(&s, 1 << 16, 4096, 6));
    let one = stream(&s, 8192, 4096, 5);
    assert_ne!(one[..4096], one[4096..], "every write gets fresh content");
}

#[test]
fn compression_lands_on_target_for_both_methods() {
    for method in [CompressMethod::Zerofill, CompressMethod::Repeat] {
        for target in [0.0, 25.0, 50.0, 75.0, 98.0] {
            let mut s = spec(DataKind::Compressible, target, 0.0);
            s.compress_method = method;
            let data = stream(&s, 4 << 20, 65536, 1);
            let mut m = Sampler::exhaustive(&s);
            m.observe(&data);
            let r = m.measure().unwrap();
            let tol = if method == CompressMethod::Zerofill {
                1.0
            } else {
                3.0
            };
            assert!(
                (r.lz4_pct - target).abs() <= tol && (r.zstd_pct - target).abs() <= tol,
                "{method:?} {target}%: lz4 {:.2} zstd {:.2}",
                r.lz4_pct,
                r.zstd_pct
            );
        }
    }
}

/// `repeat` streams whose segments hold fewer than 8 literals (from 98% in 512-byte
/// segments; 1 KiB chunks of two segments) have no duplicate 4 KiB unit over 64 laps of
/// a pool of 16 units, and are as compressible as asked (within the bar above; each
/// of 64 KiB chunks too, stamped in every 4 KiB unit). Until 2026-11-29 the stamp was
/// the opening literals copied on: at 98.8%, one byte, 256 stamps a pool unit, and 64
/// laps held about 11% duplicate units.
#[test]
fn repeat_streams_of_few_literals_have_no_duplicate_units() {
    let cases = [(98.0, 4096), (98.5, 4096), (98.8, 4096), (98.9, 4096)];
    for (pct, chunk) in cases.into_iter().chain([(98.8, 1024), (98.8, 65536)]) {
        let mut s = spec(DataKind::Compressible, pct, 0.0);
        s.compress_method = CompressMethod::Repeat;
        s.compress_chunk = chunk;
        s.pool = 64 << 10;
        let data = stream(&s, 4 << 20, 131072, 2);
        let units: std::collections::HashSet<u64> = data.chunks(4096).map(content_hash).collect();
        assert_eq!(units.len(), 1024, "{}", s.describe());
        let mut m = Sampler::exhaustive(&s);
        m.observe(&data);
        let r = m.measure().unwrap();
        assert!(
            (r.lz4_pct - pct).abs() <= 1.0 && (r.zstd_pct - pct).abs() <= 1.5,
            "{}: lz4 {:.2} zstd {:.2}",
            s.describe(),
            r.lz4_pct,
            r.zstd_pct
        );
    }
}

#[test]
fn dedup_fraction_is_exact_per_block() {
    for target in [0.0, 25.0, 50.0, 90.0] {
        let s = spec(DataKind::Random, 0.0, target);
        let data = stream(&s, 8000 * 4096, 131072, 3);
        let mut m = Sampler::exhaustive(&s);
        m.observe(&data);
        let got = m.measure().unwrap().dedup_pct.expect("whole units");
        assert!((got - target).abs() < 0.1, "{target}: {got}");
    }
}

#[test]
fn dedup_set_bounds_distinct_repeats() {
    let mut s = spec(DataKind::Random, 0.0, 50.0);
    s.dedup_set = Some(3);
    let data = stream(&s, 2000 * 4096, 4096, 3);
    let hashes: Vec<u64> = data.chunks(4096).map(content_hash).collect();
    let mut distinct = std::collections::HashSet::new();
    let mut first_three = Vec::new();
    for &h in &hashes {
        if distinct.insert(h) && first_three.len() < 3 {
            first_three.push(h);
        }
    }
    // 2000 units: 1000 unique, and every one of the 1000 repeats copies one of the
    // first three unique units.
    assert_eq!(distinct.len(), 1000);
    let copies = hashes.iter().filter(|h| first_three.contains(h)).count();
    assert_eq!(copies, 1000 + 3);
}

#[test]
fn sampled_dedup_estimate_is_close() {
    // Within the hashing budget (its allowance of 32768 units once per doubling of the
    // written bytes, 1/1024 of the bytes for rare contents and as much for frequent
    // ones; here the table's 2000 entries narrow it sooner), the consistent sample
    // lands within its sampling error (in clusters of copies; a run of seconds hashes
    // up to 64 Ki), for rare repeats (any earlier unit), frequent ones (a set of 3) and
    // a single content (zeros).
    let mut set3 = spec(DataKind::Random, 0.0, 90.0);
    set3.dedup_set = Some(3);
    let cases = [
        (spec(DataKind::Random, 0.0, 50.0), 50.0),
        (spec(DataKind::Compressible, 50.0, 25.0), 25.0),
        (set3, 90.0),
        (spec(DataKind::Zeros, 0.0, 0.0), 100.0),
    ];
    let units = 40_000u64;
    for (s, want) in cases {
        let mut g = DataGen::new(&s, 9, 7, None);
        let mut m = Sampler::new(&s);
        m.max_entries = 2000;
        let mut buf = vec![0u8; 65536];
        for _ in 0..units / 16 {
            g.fill(&mut buf);
            m.observe(&buf);
        }
        let r = m.measure().unwrap();
        eprintln!(
            "{}: {:.2} from {}",
            s.describe(),
            r.dedup_pct.expect("whole units"),
            r.dedup_sampled_units
        );
        assert!(m.shift > 0 || want == 100.0, "sampling kicked in");
        // The allowance once per doubling of the written bytes past it, then 1/1024
        // for rare and for frequent contents.
        let allowance = 32768;
        let doublings = (units as f64 / allowance as f64).log2().ceil().max(0.0) as u64;
        let budget = allowance * (1 + doublings) + 2 * units / 1024 + 64;
        assert!(
            r.dedup_sampled_units <= budget,
            "{}: {} units hashed",
            s.describe(),
            r.dedup_sampled_units
        );
        assert!(
            (r.dedup_pct.expect("whole units") - want).abs() < 5.0,
            "{}: {:?} from {} units",
            s.describe(),
            r.dedup_pct,
            r.dedup_sampled_units
        );
    }
}

/// Every unit of a stream of `n` units: how many distinct contents.
fn distinct_units(s: &DataSpec, units: usize, bs: usize) -> usize {
    let ul = s.unit_len();
    let data = stream(s, units * ul, bs, 11);
    data.chunks(ul)
        .map(content_hash)
        .collect::<std::collections::HashSet<_>>()
        .len()
}

fn profiles() -> Vec<DataSpec> {
    let mut v = vec![DataSpec::default()];
    for method in [CompressMethod::Zerofill, CompressMethod::Repeat] {
        for pct in [2.0, 50.0, 98.0] {
            let mut s = spec(DataKind::Compressible, pct, 0.0);
            s.compress_method = method;
            v.push(s);
        }
    }
    // `repeat` chunks of one segment, stamped at the word their copy leaves out; with a
    // dedup unit of the chunk too, whose stamp must not turn into the copied literals.
    let mut small = spec(DataKind::Compressible, 75.0, 0.0);
    small.compress_method = CompressMethod::Repeat;
    small.compress_chunk = 512;
    v.push(small.clone());
    small.dedup_unit = 512;
    v.push(small);
    v
}

#[test]
fn pooled_units_are_all_distinct() {
    // Two and a half times round the pool: every pool unit is used two or three times,
    // each time with its own stamp.
    let units = POOL_BYTES / 4096 * 5 / 2;
    for s in profiles() {
        assert_eq!(distinct_units(&s, units, 131072), units, "{}", s.describe());
    }
    // With dedup, exactly the unique units are distinct (4000 units: 4 blocks of
    // 1000, 300 repeats each).
    let s = spec(DataKind::Compressible, 50.0, 30.0);
    assert_eq!(distinct_units(&s, 4000, 65536), 2800);
}

#[test]
fn pooled_stream_is_not_the_refilled_one_but_as_compressible() {
    for s in profiles() {
        let r = DataSpec {
            refill: true,
            ..s.clone()
        };
        let (a, b) = (stream(&s, 1 << 20, 65536, 3), stream(&r, 1 << 20, 65536, 3));
        assert_ne!(a, b);
        let measure = |d: &[u8]| {
            let mut m = Sampler::exhaustive(&s);
            m.observe(d);
            m.measure().unwrap()
        };
        let (ma, mb) = (measure(&a), measure(&b));
        assert!(
            (ma.lz4_pct - mb.lz4_pct).abs() < 0.5 && (ma.zstd_pct - mb.zstd_pct).abs() < 0.5,
            "{}: pool {ma:?} refill {mb:?}",
            s.describe()
        );
    }
}

#[test]
fn refill_is_the_previous_stream() {
    // CRC32C of 4 MiB in 128 KiB writes, seed 5, with --refill: pins the refilled
    // stream. When these values were taken, `iomark data --seed 5 --bs 128k --size 8m
    // --refill` of this build equalled byte for byte the output of the build before
    // the pool (364ac05) without --refill, for each of these profiles.
    let mut repeat = spec(DataKind::Compressible, 50.0, 0.0);
    repeat.compress_method = CompressMethod::Repeat;
    let cases = [
        (DataSpec::default(), GOLDEN[0]),
        (spec(DataKind::Compressible, 50.0, 0.0), GOLDEN[1]),
        (repeat, GOLDEN[2]),
        (spec(DataKind::Random, 0.0, 30.0), GOLDEN[3]),
    ];
    let got: Vec<u32> = cases
        .iter()
        .map(|(s, _)| {
            let s = DataSpec {
                refill: true,
                ..s.clone()
            };
            crc32c::crc32c(&stream(&s, 4 << 20, 131072, 5))
        })
        .collect();
    let want: Vec<u32> = cases.iter().map(|c| c.1).collect();
    assert_eq!(got, want, "{got:#010x?}");
}

const GOLDEN: [u32; 4] = [0x6413_a88b, 0x20ca_b045, 0x0a92_7424, 0x547f_952c];

#[test]
fn validation() {
    let bad = [
        (spec(DataKind::Compressible, 101.0, 0.0), 4096, "--compress"),
        (spec(DataKind::Random, 0.0, -1.0), 4096, "--dedup"),
        (
            spec(DataKind::Compressible, 50.0, 0.0),
            6144,
            "--compress-chunk",
        ),
        (spec(DataKind::Random, 0.0, 50.0), 6144, "--dedup-unit"),
        (spec(DataKind::Zeros, 0.0, 50.0), 4096, "--dedup works"),
    ];
    for (s, bs, needle) in bad {
        let e = s.validate(bs).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
    assert!(
        spec(DataKind::Compressible, 50.0, 25.0)
            .validate(8192)
            .is_ok()
    );
    assert_eq!(parse_hex("0xdeadBEEF"), Some(vec![0xde, 0xad, 0xbe, 0xef]));
    assert_eq!(parse_hex("abc"), None);
}

#[test]
fn zeros_and_pattern() {
    let mut s = spec(DataKind::Pattern, 0.0, 0.0);
    s.pattern = Some("a1b2".into());
    let d = stream(&s, 8, 8, 0);
    assert_eq!(d, [0xa1, 0xb2, 0xa1, 0xb2, 0xa1, 0xb2, 0xa1, 0xb2]);
    let z = stream(&spec(DataKind::Zeros, 0.0, 0.0), 4096, 4096, 0);
    assert!(z.iter().all(|&b| b == 0));
}

/// The pattern fill (doubling copies) gives every byte as pattern[i mod length], for
/// patterns and buffers of lengths that divide, do not divide, or are shorter.
#[test]
fn pattern_fill_repeats_from_the_first_byte() {
    for plen in [1, 2, 3, 4, 7, 16, 100] {
        let pattern: Vec<u8> = (0..plen as u8).map(|b| b.wrapping_mul(37) ^ 0x5a).collect();
        for len in [0, 1, 5, 64, 4096, 65536 + 3] {
            let mut buf = vec![0xffu8; len];
            super::fill_pattern(&mut buf, &pattern);
            let want: Vec<u8> = (0..len).map(|i| pattern[i % plen]).collect();
            assert!(buf == want, "pattern of {plen}, buffer of {len}");
        }
    }
}

/// Every profile the pool shapes, and the edges of the `repeat` method (one segment per
/// chunk at 2%, copies of copies at 98%) and of zerofill (four literal bytes at 99.9%).
fn pool_profiles() -> Vec<DataSpec> {
    let mut v = profiles();
    let mut edge = spec(DataKind::Compressible, 99.9, 0.0);
    v.push(edge.clone());
    edge.compress_method = CompressMethod::Repeat;
    v.push(edge);
    let mut big = spec(DataKind::Compressible, 50.0, 0.0);
    big.compress_chunk = 16384;
    big.compress_method = CompressMethod::Repeat;
    v.push(big);
    v
}

#[test]
fn writes_lent_from_the_pool_are_the_filled_stream() {
    // One generator lends whatever it can (holding some writes in flight for a while,
    // so that the pool comes round to units still lent and must copy instead), the other
    // fills buffers: the bytes written are the same, write for write. Also with a pool
    // whose count of units is not a power of two (1281 units); writes of one unit and of
    // several.
    let odd = DataSpec {
        pool: 5 * 1024 * 1024 + 4096,
        ..DataSpec::default()
    };
    // Writes of one unit (lent by `lend_one`) and of many.
    let cases = pool_profiles().into_iter().chain([odd]);
    for (s, bs) in cases.flat_map(|s| [(s.clone(), s.unit_len()), (s, 131072)]) {
        let mut lender = DataGen::new(&s, 4, 7, None);
        let mut filler = DataGen::new(&s, 4, 7, None);
        let (mut a, mut b) = (vec![0u8; bs], vec![0u8; bs]);
        let mut held = std::collections::VecDeque::new();
        let (mut lent, mut copied) = (0, 0);
        for i in 0..(POOL_BYTES / bs) * 3 {
            let got = lender.next_write(&mut a, true);
            filler.fill(&mut b);
            let sent = match got {
                Some(l) => {
                    lent += 1;
                    assert_eq!(lender.lent_bytes(l).as_ptr() as usize % 4096, 0);
                    lender.lent_bytes(l).to_vec()
                }
                None => {
                    copied += 1;
                    a.clone()
                }
            };
            assert!(sent == b, "{}: write {i} differs", s.describe());
            if let Some(l) = got {
                held.push_back(l);
            }
            // Keep up to 200 writes more than the pool holds in flight, so that some
            // writes find their units still lent.
            if held.len() > (s.pool_bytes() / bs).max(200) {
                lender.give_back(held.pop_front().unwrap());
            }
        }
        assert!(
            lent > 0 && copied > 0,
            "{}: {lent} lent, {copied} copied",
            s.describe()
        );
    }
}

#[test]
fn no_lending_with_dedup_or_refill() {
    let mut g = DataGen::new(&spec(DataKind::Random, 0.0, 20.0), 1, 1, None);
    assert!(g.next_write(&mut [0u8; 65536], true).is_none());
    let refill = DataSpec {
        refill: true,
        ..DataSpec::default()
    };
    let mut g = DataGen::new(&refill, 1, 1, None);
    assert!(g.pool_region().is_none());
    assert!(g.next_write(&mut [0u8; 65536], true).is_none());
    let mut g = DataGen::new(&DataSpec::default(), 1, 1, None);
    assert!(g.next_write(&mut [0u8; 65536], false).is_none());
    assert!(g.next_write(&mut [0u8; 65536], true).is_some());
}

#[test]
fn units_sharing_a_pool_unit_differ_where_the_sampler_looks() {
    // Unit i and unit i + N (N units in the pool) come from one pool unit: their stamps
    // differ, and the stamp is where the sampler's selector looks: in the first eight
    // bytes, or, where the stamps turn through the units' lines (random data without
    // dedup), in line i mod turns (and the first eight bytes are the pool unit's own),
    // or for a `repeat` unit at a literal no copy reads (the second segment's; the
    // opening ones are the pool unit's own, and so are their copies).
    for s in pool_profiles() {
        // The units the sampler reads: dedup units, of several pool units when these are
        // chunks below them (a unit `n` later made of the same pool units).
        let (ul, du) = (s.unit_len(), s.dedup_unit as usize);
        let sel = ul.max(du);
        let n = POOL_BYTES.div_ceil(sel);
        let data = stream(&s, (n + 64) * sel, ul, 2);
        let opens_with_literals = !(s.kind == DataKind::Compressible && s.compress > 99.0);
        let turns = DataGen::new(&s, 2, 0, None).stamp_turns();
        if s.kind == DataKind::Random && s.dedup <= 0.0 && ul >= 4096 {
            assert_eq!(turns, 64, "{}", s.describe());
        }
        for i in 0..64 {
            let (u, v) = (
                &data[i * sel..(i + 1) * sel],
                &data[(n + i) * sel..(n + i + 1) * sel],
            );
            let sampler = Sampler::new(&s).with_stamp_turns(turns);
            let at = sampler.stamp_of(i as u64);
            if at > 0 {
                assert_eq!(u[..8], v[..8], "{}: unit {i}", s.describe());
            }
            if opens_with_literals {
                let (a, b) = (sampler.selector(u, at), sampler.selector(v, at));
                assert_ne!(a, b, "{}: unit {i}", s.describe());
                // Apart from the stamps (8 bytes a dedup unit, in whole places of fewer), the
                // same bytes.
                let same = u.iter().zip(v).filter(|(x, y)| x == y).count();
                let stamps = 14 * (sel / du.min(ul)).max(1);
                assert!(same >= sel - stamps, "{}: {same} of {sel}", s.describe());
            }
        }
    }
}

#[test]
fn a_zerofill_units_stamp_stays_in_its_literals() {
    // Over 256 units (every line a stamp could turn to, four times), the bytes past a
    // zerofill unit's literals are zeros, as the profile shapes them: no stamp lands
    // there. (Turned through all 64 lines, `--compress 50` had 8 random bytes in the zero
    // half of every other unit.)
    for pct in [10.0, 50.0, 90.0, 97.0] {
        let s = DataSpec {
            kind: DataKind::Compressible,
            compress: pct,
            ..DataSpec::default()
        };
        let ul = s.unit_len();
        let mut shape = vec![0u8; ul];
        let mut literals = 0;
        fill_zerofill(&mut shape, pct, |d: &mut [u8], at: usize| {
            d.fill(1);
            literals = usize::max(literals, at + d.len());
        });
        assert!(literals < ul, "{pct}%: zeros after the literals");
        let data = stream(&s, 256 * ul, ul, 2);
        for (k, u) in data.chunks(ul).enumerate() {
            let stray = u[literals..].iter().position(|&b| b != 0);
            assert_eq!(
                stray, None,
                "{pct}%: unit {k}, past {literals} literal bytes"
            );
        }
        // The stamps still turn where the literals leave room (half a unit: 32 lines).
        if pct == 50.0 {
            assert_eq!(DataGen::new(&s, 2, 0, None).stamp_turns(), 32);
        }
    }
}

#[test]
fn a_dedup_streams_ids_are_those_of_a_draw_per_copy() {
    // The ids as a generator that draws only for a copy makes them (the stream of
    // every build since dedup blocks came: `next_unit_id` keeps it without a branch).
    for (dedup, set) in [
        (50.0, None),
        (20.0, Some(3)),
        (90.0, Some(1000)),
        (0.0, None),
    ] {
        let s = DataSpec {
            dedup_set: set,
            ..spec(DataKind::Random, 0.0, dedup)
        };
        let mut g = DataGen::new(&s, 11, 3, None);
        let mut reference = g.clone();
        let (mut uniques, mut copies) = (0u64, 0u64);
        for k in 0..20_000u64 {
            let got = g.next_unit_id();
            let i = reference.units;
            reference.units += 1;
            let want = if dedup > 0.0 && uniques > 0 && reference.is_dup(i) {
                copies += 1;
                reference.picks.below(uniques.min(set.unwrap_or(u64::MAX)))
            } else {
                uniques += 1;
                uniques - 1
            };
            assert_eq!(got, want, "dedup {dedup} set {set:?} unit {k}");
        }
        assert_eq!(g.uniques, uniques);
        assert_eq!(copies > 0, dedup > 0.0, "{dedup}");
    }
}

#[path = "data_stamp_tests.rs"]
mod stamps;
