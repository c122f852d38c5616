//! The block device guard: before iomark writes a block device it looks at what the
//! device is used for and what it holds. In use (mounted, swap, held by LVM, RAID or
//! device-mapper, itself or any partition): refused, always. Carrying a partition table
//! or a filesystem or volume signature: refused unless `--destroy-data`. Reads never need
//! either. This module reads `/proc`, `/sys` and the device's first and last sectors; it
//! never writes.

use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::io::env::BlockDev;

/// Why a device must not be written at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InUse {
    Mounted { dev: String, at: String },
    Swap { dev: String },
    Held { dev: String, by: String },
}

impl std::fmt::Display for InUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InUse::Mounted { dev, at } => write!(f, "{dev} is mounted at {at}"),
            InUse::Swap { dev } => write!(f, "{dev} is in use as swap"),
            InUse::Held { dev, by } => {
                write!(f, "{dev} is held by {by} (LVM, RAID or device-mapper)")
            }
        }
    }
}

/// The device and its partitions: (kernel name, "major:minor").
fn family(dev: &BlockDev) -> Vec<(String, String)> {
    let disk = dev.disk_dir();
    let mut out = Vec::new();
    let mut add = |dir: &Path| {
        if let (Some(name), Ok(devno)) = (
            dir.file_name().map(|n| n.to_string_lossy().into_owned()),
            fs::read_to_string(dir.join("dev")),
        ) {
            out.push((name, devno.trim().to_string()));
        }
    };
    // The device itself (a partition is checked on its own, with its whole disk's other
    // partitions left alone: writing sda2 does not touch sda1).
    add(&dev.sysfs);
    if dev.sysfs == disk
        && let Ok(rd) = fs::read_dir(&disk)
    {
        for e in rd.flatten() {
            if e.path().join("partition").exists() {
                add(&e.path());
            }
        }
    }
    out
}

/// Whether the device (or any of its partitions) is in use.
pub(crate) fn in_use(dev: &BlockDev) -> Option<InUse> {
    let fam = family(dev);
    if let Ok(mi) = fs::read_to_string("/proc/self/mountinfo") {
        for line in mi.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() > 4
                && let Some((name, _)) = fam.iter().find(|(_, devno)| devno == f[2])
            {
                return Some(InUse::Mounted {
                    dev: name.clone(),
                    at: f[4].replace("\\040", " "),
                });
            }
        }
    }
    if let Ok(sw) = fs::read_to_string("/proc/swaps") {
        for line in sw.lines().skip(1) {
            let Some(path) = line.split_whitespace().next() else {
                continue;
            };
            if let Ok(md) = fs::metadata(path) {
                let (major, minor) = crate::io::sys::major_minor(md.rdev());
                let devno = format!("{major}:{minor}");
                if let Some((name, _)) = fam.iter().find(|(_, d)| *d == devno) {
                    return Some(InUse::Swap { dev: name.clone() });
                }
            }
        }
    }
    for (name, _) in &fam {
        let holders = format!("/sys/class/block/{name}/holders");
        if let Ok(rd) = fs::read_dir(&holders) {
            let by: Vec<String> = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if !by.is_empty() {
                return Some(InUse::Held {
                    dev: name.clone(),
                    by: by.join(", "),
                });
            }
        }
    }
    None
}

fn at(buf: &[u8], off: usize, magic: &[u8]) -> bool {
    buf.get(off..off + magic.len()) == Some(magic)
}

/// Looks for a partition table or a filesystem/volume signature in the first 264 KiB
/// and the last 512 KiB of the device; returns what it found.
pub(crate) fn signature(file: &File, size: u64) -> Option<&'static str> {
    let head_len = (264 << 10).min(size) as usize;
    let mut head = vec![0u8; head_len];
    let n = read_fully(file, &mut head, 0);
    head.truncate(n);
    let h = &head[..];
    // Filesystems and volumes first: several of them also end their first sector in 55 AA.
    let checks: [(&str, usize, &[u8]); 14] = [
        ("LUKS encrypted volume", 0, b"LUKS\xba\xbe"),
        ("LUKS2 encrypted volume", 0, b"SKUL\xba\xbe"),
        ("XFS filesystem", 0, b"XFSB"),
        ("NTFS filesystem", 3, b"NTFS    "),
        ("exFAT filesystem", 3, b"EXFAT   "),
        ("FAT32 filesystem", 82, b"FAT32   "),
        ("FAT16 filesystem", 54, b"FAT16   "),
        ("FAT12 filesystem", 54, b"FAT12   "),
        ("btrfs filesystem", 0x10040, b"_BHRfS_M"),
        ("swap signature", 4086, b"SWAPSPACE2"),
        ("swap signature", 4086, b"SWAP-SPACE"),
        ("LVM2 physical volume", 512 + 24, b"LVM2 001"),
        ("GPT partition table", 512, b"EFI PART"),
        ("GPT partition table", 4096, b"EFI PART"),
    ];
    for (what, off, magic) in checks {
        if at(h, off, magic) {
            return Some(what);
        }
    }
    // LVM2 labels may sit in any of the first four sectors.
    for s in 0..4 {
        if at(h, s * 512, b"LABELONE") {
            return Some("LVM2 physical volume");
        }
    }
    // ext2/3/4: superblock at 1024, s_magic 0xEF53 at +56.
    if at(h, 1024 + 56, &[0x53, 0xEF]) {
        return Some("ext2/3/4 filesystem");
    }
    // Swap with a 64 KiB page size.
    if at(h, 65526, b"SWAPSPACE2") {
        return Some("swap signature");
    }
    // ZFS: uberblocks (magic 0x00bab10c, either byte order) from 128 KiB in label 0.
    for off in (128 << 10..h.len().saturating_sub(8)).step_by(1024) {
        let v = u64::from_le_bytes(h[off..off + 8].try_into().expect("8 bytes"));
        if v == 0x00ba_b10c || v.swap_bytes() == 0x00ba_b10c {
            return Some("ZFS pool member");
        }
    }
    if h.len() >= 512 && h[510] == 0x55 && h[511] == 0xAA {
        return Some("MBR partition table");
    }
    // The end of the device: the GPT backup header, and ZFS's last labels.
    if size > 2 << 20 {
        let tail_len = 512 << 10;
        let mut tail = vec![0u8; tail_len];
        let n = read_fully(file, &mut tail, size - tail_len as u64);
        let t = &tail[..n];
        for sector in [512usize, 4096] {
            if t.len() >= sector && at(t, t.len() - sector, b"EFI PART") {
                return Some("GPT partition table (backup header)");
            }
        }
        for off in (0..t.len().saturating_sub(8)).step_by(1024) {
            let v = u64::from_le_bytes(t[off..off + 8].try_into().expect("8 bytes"));
            if v == 0x00ba_b10c || v.swap_bytes() == 0x00ba_b10c {
                return Some("ZFS pool member");
            }
        }
    }
    None
}

/// What can be read of `buf.len()` bytes at `offset`; a failed read keeps what came
/// before it.
fn read_fully(file: &File, buf: &mut [u8], offset: u64) -> usize {
    crate::io::sys::read_full_at(file, buf, offset).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    fn image(patch: &[(usize, &[u8])], size: usize) -> (tempfile::NamedTempFile, u64) {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(size as u64).unwrap();
        for (off, bytes) in patch {
            f.as_file().write_all_at(bytes, *off as u64).unwrap();
        }
        (f, size as u64)
    }

    #[test]
    fn finds_signatures() {
        type Patch<'a> = &'a [(usize, &'a [u8])];
        let cases: &[(Patch, Option<&str>)] = &[
            (&[], None),
            (&[(1080, &[0x53, 0xEF])], Some("ext2/3/4 filesystem")),
            (&[(0, b"XFSB")], Some("XFS filesystem")),
            (&[(0x10040, b"_BHRfS_M")], Some("btrfs filesystem")),
            (&[(4086, b"SWAPSPACE2")], Some("swap signature")),
            (
                &[(512, b"LABELONE"), (536, b"LVM2 001")],
                Some("LVM2 physical volume"),
            ),
            (&[(0, b"LUKS\xba\xbe")], Some("LUKS encrypted volume")),
            (
                &[(3, b"NTFS    "), (510, &[0x55, 0xAA])],
                Some("NTFS filesystem"),
            ),
            (
                &[(82, b"FAT32   "), (510, &[0x55, 0xAA])],
                Some("FAT32 filesystem"),
            ),
            (&[(510, &[0x55, 0xAA])], Some("MBR partition table")),
            (
                &[(510, &[0x55, 0xAA]), (512, b"EFI PART")],
                Some("GPT partition table"),
            ),
            (
                &[(131072, &0x00ba_b10cu64.to_le_bytes())],
                Some("ZFS pool member"),
            ),
            (
                &[((4 << 20) - 512, b"EFI PART")],
                Some("GPT partition table (backup header)"),
            ),
        ];
        for (patch, want) in cases {
            let (f, size) = image(patch, 4 << 20);
            assert_eq!(signature(f.as_file(), size), *want, "{patch:?}");
        }
    }

    #[test]
    fn tiny_devices_do_not_panic() {
        let (f, size) = image(&[], 100);
        assert_eq!(signature(f.as_file(), size), None);
    }
}
