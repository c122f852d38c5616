//! Data generation throughput on one core, beside memcpy's: `bench/datagen.sh`.
//!
//! Each profile fills a 128 KiB buffer (as a run fills each write) over and over for
//! about a second; the figure is bytes generated per second. "lent" is the default data
//! path of a write without dedup or verify (the write's units stamped in place in the
//! pool built before the run and sent from there; given back at once, as at queue depth
//! 1), "copied" the path with dedup or verify or when units are still lent (units copied
//! from the pool into the buffer and stamped there), "+ sampling" adds what a write run
//! also does per buffer (the dedup selector and hashing within its budget, the
//! compression sample), "refill" generates every byte afresh (`--refill`). Profiles with
//! dedup or without a pool (zeros, a pattern) are never lent: their "lent" column is the copy.

use std::time::{Duration, Instant};

use iomark::plan::data::{CompressMethod, DataKind, DataSpec};
use iomark::workload::data::DataGen;
use iomark::workload::sampler::Sampler;

fn rate(mut f: impl FnMut(&mut [u8]), buf: &mut [u8]) -> f64 {
    // Warm up, then measure for about a second.
    for _ in 0..64 {
        f(buf);
    }
    let t = Instant::now();
    let mut bytes = 0u64;
    while t.elapsed() < Duration::from_secs(1) {
        for _ in 0..64 {
            f(buf);
            bytes += buf.len() as u64;
        }
    }
    bytes as f64 / t.elapsed().as_secs_f64() / 1e9
}

fn main() {
    let bs = 128 << 10;
    let mut buf = vec![0u8; bs];
    let src = vec![7u8; bs];
    let memcpy = rate(
        |b| {
            b.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&b);
        },
        &mut buf,
    );
    println!("{:<34} {:>8.2} GB/s", "memcpy (128 KiB, in cache)", memcpy);
    let profiles: Vec<(&str, DataSpec)> = vec![
        ("random", DataSpec::default()),
        (
            "compressible 50% zerofill",
            DataSpec {
                kind: DataKind::Compressible,
                compress: 50.0,
                ..DataSpec::default()
            },
        ),
        (
            "compressible 50% repeat",
            DataSpec {
                kind: DataKind::Compressible,
                compress: 50.0,
                compress_method: CompressMethod::Repeat,
                ..DataSpec::default()
            },
        ),
        (
            "dedup 50%",
            DataSpec {
                dedup: 50.0,
                ..DataSpec::default()
            },
        ),
        (
            "compressible 50% + dedup 50%",
            DataSpec {
                kind: DataKind::Compressible,
                compress: 50.0,
                dedup: 50.0,
                ..DataSpec::default()
            },
        ),
        (
            "zeros",
            DataSpec {
                kind: DataKind::Zeros,
                ..DataSpec::default()
            },
        ),
        (
            "pattern deadbeef",
            DataSpec {
                kind: DataKind::Pattern,
                pattern: Some("deadbeef".into()),
                ..DataSpec::default()
            },
        ),
    ];
    println!(
        "{:<30} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "profile (GB/s)", "lent", "+sampling", "copied", "+sampling", "refill"
    );
    for (name, spec) in &profiles {
        let lent = |g: &mut DataGen, b: &mut [u8]| {
            if let Some(l) = g.next_write(b, true) {
                std::hint::black_box(g.lent_bytes(l).as_ptr());
                g.give_back(l);
            }
        };
        let mut g = DataGen::new(spec, 1, 2, None);
        let rl = rate(|b| lent(&mut g, b), &mut buf);
        let mut g = DataGen::new(spec, 1, 2, None);
        let mut s = Sampler::new(spec);
        let rls = rate(
            |b| match g.next_write(b, true) {
                Some(l) => {
                    s.observe(g.lent_bytes(l));
                    g.give_back(l);
                }
                None => s.observe(b),
            },
            &mut buf,
        );
        let mut g = DataGen::new(spec, 1, 2, None);
        let r = rate(|b| g.fill(b), &mut buf);
        let mut g = DataGen::new(spec, 1, 2, None);
        let mut s = Sampler::new(spec);
        let rs = rate(
            |b| {
                g.fill(b);
                s.observe(b);
            },
            &mut buf,
        );
        let refill = DataSpec {
            refill: true,
            ..spec.clone()
        };
        let mut g = DataGen::new(&refill, 1, 2, None);
        let rr = rate(|b| g.fill(b), &mut buf);
        println!("{name:<30} {rl:>10.2} {rls:>10.2} {r:>10.2} {rs:>10.2} {rr:>10.2}");
    }
}
