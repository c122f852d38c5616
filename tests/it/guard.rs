//! The block-device guard (issue 11): signatures found by libblkid beyond iomark's own
//! list, a device that backs a stacked loop device, partitions the kernel still lists
//! after their table was wiped, and a symbolic link flipped between a harmless and a
//! protected target while iomark opens it. Every test compares the protected bytes
//! before and after; `IOMARK_TEST_BIN=path/to/old/iomark` runs them against another
//! build.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{
    FlippingLink, LoopDev, Mounted, assert_refused, blkid_probe, checksum, iomark, mkfs_ext4,
    require_tool, run_tool, stdout_of, tmp, write_at,
};

/// `iomark run --rw write --allow-write-device --runtime 1 -q DEV` plus `extra`.
fn write_device(dev: &Path, extra: &[&str]) -> std::process::Output {
    iomark()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-write-device",
            "--runtime",
            "1",
            "-q",
        ])
        .args(extra)
        .arg(dev)
        .output()
        .unwrap()
}

/// Makes a loop device of `size` bytes hold a signature with `make` (false: the tool is
/// missing, skip), checks that `blkid -p` finds `TYPE=want`, and that iomark with
/// `--allow-write-device` alone refuses to write it, naming it and leaving every byte.
fn refused_without_destroy_data(size: u64, want: &str, make: impl FnOnce(&Path) -> bool) {
    let Some(dev) = LoopDev::new(size, false) else {
        return;
    };
    if !make(dev.path()) {
        return;
    }
    let Some(found) = blkid_probe(dev.path()) else {
        return;
    };
    assert!(
        found.lines().any(|l| l == format!("TYPE={want}")),
        "blkid -p should see {want}: {found}"
    );
    let before = checksum(dev.path());
    let out = write_device(dev.path(), &[]);
    assert_refused(
        &out,
        "(found by libblkid); writing would destroy it: add --destroy-data",
    );
    assert_eq!(
        checksum(dev.path()),
        before,
        "{want}: the device was written"
    );
}

/// `cmd [args…] DEV` from `package`.
fn mkfs_on(
    cmd: &'static str,
    package: &'static str,
    args: &'static [&'static str],
) -> impl FnOnce(&Path) -> bool {
    move |dev| {
        let mut a: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        a.push(dev.as_os_str());
        run_tool(cmd, package, &a)
    }
}

/// A tool that builds a read-only image from a directory straight onto the device:
/// `build(source dir, dev)` gives the arguments.
fn image_on(
    cmd: &'static str,
    package: &'static str,
    build: fn(&Path, &Path) -> Vec<std::ffi::OsString>,
) -> impl FnOnce(&Path) -> bool {
    move |dev| {
        let src = tmp();
        std::fs::write(src.path().join("hello.txt"), "a file for the image\n").unwrap();
        let args = build(src.path(), dev);
        let a: Vec<&OsStr> = args.iter().map(|s| s.as_os_str()).collect();
        run_tool(cmd, package, &a)
    }
}

fn os(items: &[&OsStr]) -> Vec<std::ffi::OsString> {
    items.iter().map(|s| s.to_os_string()).collect()
}

#[test]
fn minix_is_refused() {
    refused_without_destroy_data(32 << 20, "minix", mkfs_on("mkfs.minix", "util-linux", &[]));
}

#[test]
fn bfs_is_refused() {
    refused_without_destroy_data(32 << 20, "bfs", mkfs_on("mkfs.bfs", "util-linux", &[]));
}

#[test]
fn f2fs_is_refused() {
    refused_without_destroy_data(
        64 << 20,
        "f2fs",
        mkfs_on("mkfs.f2fs", "f2fs-tools", &["-q", "-f"]),
    );
}

#[test]
fn bcache_is_refused() {
    // A backing device's superblock; registering it with a bcache kernel module is not
    // needed (make-bcache writes the superblock either way).
    refused_without_destroy_data(
        32 << 20,
        "bcache",
        mkfs_on("make-bcache", "bcache-tools", &["-B"]),
    );
}

#[test]
fn cramfs_is_refused() {
    refused_without_destroy_data(
        32 << 20,
        "cramfs",
        image_on("mkfs.cramfs", "util-linux", |src, dev| {
            os(&[src.as_os_str(), dev.as_os_str()])
        }),
    );
}

#[test]
fn squashfs_is_refused() {
    refused_without_destroy_data(
        32 << 20,
        "squashfs",
        image_on("mksquashfs", "squashfs-tools", |src, dev| {
            os(&[
                src.as_os_str(),
                dev.as_os_str(),
                OsStr::new("-noappend"),
                OsStr::new("-quiet"),
            ])
        }),
    );
}

#[test]
fn iso9660_is_refused() {
    refused_without_destroy_data(
        32 << 20,
        "iso9660",
        image_on("genisoimage", "genisoimage", |src, dev| {
            os(&[
                OsStr::new("-quiet"),
                OsStr::new("-o"),
                dev.as_os_str(),
                src.as_os_str(),
            ])
        }),
    );
}

#[test]
fn erofs_is_refused() {
    refused_without_destroy_data(
        32 << 20,
        "erofs",
        image_on("mkfs.erofs", "erofs-utils", |src, dev| {
            os(&[OsStr::new("--quiet"), dev.as_os_str(), src.as_os_str()])
        }),
    );
}

// Debian has no mkfs for HFS+ (hfsprogs has no candidate in bookworm) and none for VDO,
// and this machine's kernel has no md driver for `mdadm --create`: these superblocks are
// written by hand from their documented layouts, as much of them as libblkid checks.

#[test]
fn hfsplus_is_refused() {
    refused_without_destroy_data(32 << 20, "hfsplus", |dev| {
        // The volume header at 1024: signature "H+", version 4, block size 4096 (all
        // big-endian).
        let mut h = [0u8; 512];
        h[0..2].copy_from_slice(b"H+");
        h[2..4].copy_from_slice(&4u16.to_be_bytes());
        h[40..44].copy_from_slice(&4096u32.to_be_bytes());
        write_at(dev, 1024, &h);
        true
    });
}

#[test]
fn vdo_is_refused() {
    refused_without_destroy_data(32 << 20, "vdo", |dev| {
        // The VDO geometry block: magic "dmvdo001", 32 bytes, then the volume's UUID.
        let mut b = [0u8; 56];
        b[0..8].copy_from_slice(b"dmvdo001");
        for (i, x) in b[40..56].iter_mut().enumerate() {
            *x = i as u8 + 1;
        }
        write_at(dev, 0, &b);
        true
    });
}

const MD_MAGIC: u32 = 0xa92b_4efc;

/// An MD version-1 superblock (little-endian) at byte `at` of the device: magic, major
/// version 1, a set UUID and name, and `super_offset` (its own sector) at byte 144.
fn md_v1(dev: &Path, at: u64) {
    let mut sb = [0u8; 256];
    sb[0..4].copy_from_slice(&MD_MAGIC.to_le_bytes());
    sb[4..8].copy_from_slice(&1u32.to_le_bytes());
    for (i, x) in sb[16..32].iter_mut().enumerate() {
        *x = i as u8 + 1;
    }
    sb[32..38].copy_from_slice(b"iomark");
    sb[144..152].copy_from_slice(&(at >> 9).to_le_bytes());
    write_at(dev, at, &sb);
}

#[test]
fn md_0_90_at_the_end_is_refused() {
    let size: u64 = 32 << 20;
    refused_without_destroy_data(size, "linux_raid_member", |dev| {
        // Version 0.90: 64 KiB from the end (rounded down to 64 KiB), magic, major 0,
        // minor 90, and the component size in KiB (which must fit before it).
        let at = (size & !0xffff) - 0x10000;
        let mut sb = [0u8; 64];
        sb[0..4].copy_from_slice(&MD_MAGIC.to_le_bytes());
        sb[8..12].copy_from_slice(&90u32.to_le_bytes());
        sb[32..36].copy_from_slice(&((at >> 10) as u32).to_le_bytes());
        write_at(dev, at, &sb);
        true
    });
}

#[test]
fn md_1_1_at_the_start_is_refused() {
    refused_without_destroy_data(32 << 20, "linux_raid_member", |dev| {
        md_v1(dev, 0);
        true
    });
}

#[test]
fn md_1_2_at_4k_is_refused() {
    refused_without_destroy_data(32 << 20, "linux_raid_member", |dev| {
        md_v1(dev, 4096);
        true
    });
}

#[test]
fn device_under_a_stacked_loop_device_is_never_written() {
    // loopB over loopA from 1 MiB on, with a filesystem mounted from loopB: the kernel
    // lists no holder of loopA, but writing loopA would destroy the mounted filesystem.
    let Some(lower) = LoopDev::new(32 << 20, false) else {
        return;
    };
    let Some(upper) = LoopDev::over(lower.path(), 1 << 20) else {
        return;
    };
    if !mkfs_ext4(upper.path()) {
        return;
    }
    // Read-only, so the kernel itself never writes while the bytes are compared.
    let Some(_mnt) = Mounted::mount(upper.path(), &["-o", "ro"]) else {
        return;
    };
    let holders = std::fs::read_dir(format!("/sys/class/block/{}/holders", lower.name()))
        .map_or(0, |d| d.count());
    assert_eq!(holders, 0, "the case of the issue: no holder is listed");
    let before = checksum(lower.path());
    let out = write_device(lower.path(), &["--destroy-data"]);
    assert_refused(&out, &format!("backs the loop device {}", upper.name()));
    assert_eq!(
        checksum(lower.path()),
        before,
        "the lower device was written"
    );
}

#[test]
fn partitions_the_kernel_lists_count_as_a_partition_table() {
    let Some(dev) = LoopDev::partitioned(32 << 20) else {
        return;
    };
    if !mkfs_ext4(&dev.partition()) {
        return;
    }
    // Wipe the partition table; the kernel keeps loopNp1 (and its ext4) all the same.
    write_at(dev.path(), 0, &[0u8; 4096]);
    let sysfs = format!("/sys/class/block/{0}/{0}p1/partition", dev.name());
    assert!(Path::new(&sysfs).exists(), "{sysfs} is still listed");
    let Some(found) = blkid_probe(dev.path()) else {
        return;
    };
    assert!(
        !found.contains("PTTYPE="),
        "no table left for libblkid: {found}"
    );
    let before = checksum(dev.path());
    let out = write_device(dev.path(), &[]);
    assert_refused(&out, &format!("lists {}p1 in sysfs", dev.name()));
    assert_eq!(checksum(dev.path()), before, "the disk was written");
}

/// Flips a symbolic link between `harmless` and `protected` while iomark runs `args` on
/// the link again and again (at most 300 runs or 20 seconds), then checks that
/// `protected` was never written and that both targets were reached (some runs wrote,
/// some were refused), so that the race was really run.
fn flipped_link_spares(harmless: &Path, protected: &Path, args: &[&str]) {
    let before = checksum(protected);
    let dir = tmp();
    let link = dir.path().join("target");
    let flip = FlippingLink::start(&link, harmless, protected);
    let (mut wrote, mut refused) = (0, 0);
    let start = Instant::now();
    for _ in 0..300 {
        if start.elapsed() > Duration::from_secs(20) {
            break;
        }
        let out = iomark().args(args).arg(&link).output().unwrap();
        match out.status.code() {
            Some(0) => wrote += 1,
            Some(2) => refused += 1,
            _ => {}
        }
    }
    let flips = flip.stop();
    let tally = format!("{wrote} runs wrote, {refused} refused, {flips} flips");
    assert_eq!(
        checksum(protected),
        before,
        "{} was written ({tally})",
        protected.display()
    );
    assert!(
        wrote > 0 && refused > 0,
        "both targets were reached: {tally}"
    );
}

#[test]
fn a_link_flipped_to_a_formatted_device_is_not_written() {
    if !require_tool("mkfs.ext2", "mkfs.ext2 (e2fsprogs)") {
        return;
    }
    let Some(blank) = LoopDev::new(8 << 20, false) else {
        return;
    };
    let Some(ext2) = LoopDev::new(8 << 20, false) else {
        return;
    };
    assert!(run_tool(
        "mkfs.ext2",
        "e2fsprogs",
        &[OsStr::new("-q"), ext2.path().as_os_str()]
    ));
    flipped_link_spares(
        blank.path(),
        ext2.path(),
        &[
            "run",
            "--rw",
            "write",
            "--allow-write-device",
            "--io-size",
            "64k",
            "-q",
        ],
    );
}

#[test]
fn a_link_flipped_to_a_foreign_file_is_not_written() {
    let dir = tmp();
    let ours = dir.path().join("ours.dat");
    let foreign = dir.path().join("foreign.dat");
    // A file iomark created (and marked) and kept, and one it did not create.
    let create = [
        "run",
        "--rw",
        "write",
        "--size",
        "1m",
        "--io-size",
        "64k",
        "--keep",
        "-q",
    ];
    let mut args: Vec<&OsStr> = create.iter().map(OsStr::new).collect();
    args.push(ours.as_os_str());
    stdout_of(&args);
    std::fs::write(&foreign, vec![0x5a; 1 << 20]).unwrap();
    flipped_link_spares(
        &ours,
        &foreign,
        &["run", "--rw", "write", "--io-size", "64k", "-q"],
    );
}

/// A file that backs a mounted loop device was overwritten with only `--overwrite`
/// (probe 14: e2fsck found the filesystem damaged after); an active swap file got
/// "Text file busy". Both are refused whatever the flags, by any path to the file, and
/// the file is unchanged.
#[test]
fn a_file_backing_a_loop_device_or_swap_is_never_written() {
    let dir = tmp();
    let img = dir.path().join("back.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    if !mkfs_ext4(&img) {
        return;
    }
    let Some(dev) = LoopDev::over(&img, 0) else {
        return;
    };
    let Some(_mnt) = Mounted::mount(dev.path(), &["-o", "ro"]) else {
        return;
    };
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&img, &link).unwrap();
    let hard = dir.path().join("hard");
    std::fs::hard_link(&img, &hard).unwrap();
    let before = checksum(&img);
    for (target, rw) in [(&img, "write"), (&link, "randwrite"), (&hard, "trim")] {
        let out = iomark()
            .args(["run", "--rw", rw, "--overwrite", "--destroy-data"])
            .args(["--runtime", "1", "-q"])
            .arg(target)
            .output()
            .unwrap();
        assert_refused(
            &out,
            &format!("backs the loop device {}", dev.path().display()),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("mounted at") && err.contains("losetup -d"),
            "{err}"
        );
    }
    assert_eq!(checksum(&img), before, "the backing file was written");
    // Reading it is harmless, and allowed.
    let out = iomark()
        .args(["run", "--rw", "read", "--runtime", "200ms", "-q"])
        .arg(&img)
        .output()
        .unwrap();
    crate::common::assert_success(&out);

    if !require_tool("swapon", "swapon (util-linux), to make a swap file") {
        return;
    }
    struct Swap(std::path::PathBuf);
    impl Drop for Swap {
        fn drop(&mut self) {
            let _ = std::process::Command::new("swapoff").arg(&self.0).status();
        }
    }
    let sw = dir.path().join("swap");
    std::fs::write(&sw, vec![0u8; 16 << 20]).unwrap();
    std::fs::set_permissions(&sw, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    if !run_tool("mkswap", "util-linux", &[sw.as_os_str()]) {
        return;
    }
    let on = std::process::Command::new("swapon")
        .arg(&sw)
        .status()
        .unwrap();
    assert!(on.success(), "swapon {}", sw.display());
    let _swap = Swap(sw.clone());
    let out = iomark()
        .args([
            "run",
            "--rw",
            "write",
            "--overwrite",
            "--runtime",
            "1",
            "-q",
        ])
        .arg(&sw)
        .output()
        .unwrap();
    assert_refused(&out, "is in use as swap");
}
