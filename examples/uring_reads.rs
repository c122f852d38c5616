//! The least a program can do to read random 4 KiB blocks through io_uring: a ring set
//! up as fio 3.33 sets up its own (single issuer, deferred task work), the device and
//! one buffer per request registered, each request submitted on its own with
//! `GETEVENTS`, completions waited for one at a time. No statistics, no data, no
//! accounting: what it reaches on a device is what the kernel and the scheduler give any
//! program that works this way, and `bench/placement.sh` sets it beside iomark and fio.
//!
//!   cargo run --release --example uring_reads -- DEVICE [QD] [SECONDS]
//!
//! Prints `reads N iops X mean_us Y` (a latency from the throughput, QD / IOPS).

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, types};

const BS: usize = 4096;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: uring_reads DEVICE [QD] [SECONDS]");
        std::process::exit(2);
    };
    let qd: usize = args
        .get(1)
        .map_or(Ok(8), |s| s.parse())
        .unwrap_or_else(|_| {
            eprintln!("uring_reads: QD must be a whole number");
            std::process::exit(2);
        });
    let secs: u64 = args
        .get(2)
        .map_or(Ok(3), |s| s.parse())
        .unwrap_or_else(|_| {
            eprintln!("uring_reads: SECONDS must be a whole number");
            std::process::exit(2);
        });
    if let Err(e) = run(path, qd.max(1), Duration::from_secs(secs)) {
        eprintln!("uring_reads: {path}: {e}");
        std::process::exit(1);
    }
}

fn run(path: &str, qd: usize, time: Duration) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)?;
    let blocks = std::fs::metadata(path)
        .ok()
        .filter(|m| m.len() > 0)
        .map(|m| m.len())
        .map_or_else(|| device_len(&file), Ok)?
        / BS as u64;
    if blocks == 0 {
        return Err(std::io::Error::other("smaller than one block"));
    }
    let mut ring: IoUring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(qd as u32)?;
    ring.submitter().register_files(&[file.as_raw_fd()])?;
    let mut buf = vec![0u8; BS * (qd + 1)];
    let at = buf.as_mut_ptr().align_offset(BS);
    let base = buf[at..].as_mut_ptr();
    let iovecs: Vec<libc::iovec> = (0..qd)
        .map(|i| libc::iovec {
            // Safety: `i * BS` lies within the qd + 1 blocks allocated, after alignment.
            iov_base: unsafe { base.add(i * BS) }.cast(),
            iov_len: BS,
        })
        .collect();
    // Safety: the buffers live in `buf`, which outlives the ring (dropped first below).
    unsafe { ring.submitter().register_buffers(&iovecs)? };
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % blocks) * BS as u64
    };
    let submit = |ring: &mut IoUring, slot: usize, offset: u64| -> std::io::Result<()> {
        let sqe = opcode::ReadFixed::new(
            types::Fixed(0),
            iovecs[slot].iov_base.cast(),
            BS as u32,
            slot as u16,
        )
        .offset(offset)
        .build()
        .user_data(slot as u64);
        // Safety: the entry's buffer is registered and no other request uses its slot.
        unsafe { ring.submission().push(&sqe) }.map_err(std::io::Error::other)?;
        // Safety: one entry queued, no extra argument. GETEVENTS (1) posts what completed.
        unsafe { ring.submitter().enter::<libc::sigset_t>(1, 0, 1, None) }?;
        Ok(())
    };
    for slot in 0..qd {
        submit(&mut ring, slot, next())?;
    }
    let start = Instant::now();
    let mut reads = 0u64;
    let mut done = Vec::with_capacity(qd);
    while start.elapsed() < time {
        if ring.completion().is_empty() {
            ring.submitter().submit_and_wait(1)?;
        }
        done.extend(
            ring.completion()
                .map(|c| (c.user_data() as usize, c.result())),
        );
        for (slot, res) in done.drain(..) {
            if res < 0 {
                return Err(std::io::Error::from_raw_os_error(-res));
            }
            reads += 1;
            submit(&mut ring, slot, next())?;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    while ring.completion().len() < qd {
        ring.submitter().submit_and_wait(qd)?;
    }
    drop(ring);
    drop(buf);
    let iops = reads as f64 / elapsed;
    println!(
        "reads {reads} iops {iops:.0} mean_us {:.2}",
        qd as f64 * 1e6 / iops
    );
    Ok(())
}

/// A block device's length (its metadata says 0).
fn device_len(file: &std::fs::File) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::End(0))
}
