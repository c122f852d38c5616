//! Data generation throughput on one core, beside memcpy's: `bench/datagen.sh`.
//!
//! Each profile fills a 128 KiB buffer (as a run fills each write) over and over for
//! about a second; the figure is bytes generated per second. "pool" is the default data
//! path (units copied from a pool built before the run, each stamped unique), "+ sampling"
//! adds what a write run also does per buffer (the dedup selector and hashing within its
//! budget, the compression sample), "refill" generates every byte afresh (`--refill`).

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
    ];
    println!(
        "{:<34} {:>13} {:>17} {:>18}",
        "profile", "pool", "pool + sampling", "refill (--refill)"
    );
    for (name, spec) in &profiles {
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
        println!("{name:<34} {r:>8.2} GB/s {rs:>12.2} GB/s {rr:>13.2} GB/s");
    }
}
