//! The block device guard: before iomark writes a block device it looks at what the
//! device is used for and what it holds, through the descriptor it will write (never by
//! path: see `Target::open`). In use (mounted, swap, held by LVM, RAID or device-mapper,
//! the backing device of a loop device, itself or any partition): refused, always; so is
//! a regular file that backs a loop device or is an active swap file (`file_in_use`).
//! Carrying a partition table or a filesystem, RAID or volume signature: refused unless
//! `--destroy-data`. Signatures are probed by libblkid (`blkid.rs`), then partitions the
//! kernel lists in sysfs, then iomark's own list of magics (`signature`), which also
//! stands in when libblkid cannot probe. Reads never need either. This module reads
//! `/proc`, `/sys` and the device; it never writes.

use std::fs::{self, File};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::io::blkid::{self, Probe};
use crate::io::env::BlockDev;

/// Why a device must not be written at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InUse {
    Mounted {
        dev: String,
        at: String,
    },
    Swap {
        dev: String,
    },
    Held {
        dev: String,
        by: String,
    },
    /// The backing device of a loop device (which the kernel does not list in `holders/`).
    LoopBacking {
        dev: String,
        by: String,
    },
}

impl std::fmt::Display for InUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InUse::Mounted { dev, at } => write!(f, "{dev} is mounted at {at}"),
            InUse::Swap { dev } => write!(f, "{dev} is in use as swap"),
            InUse::Held { dev, by } => {
                write!(f, "{dev} is held by {by} (LVM, RAID or device-mapper)")
            }
            InUse::LoopBacking { dev, by } => {
                write!(f, "{dev} backs the loop device {by}")
            }
        }
    }
}

/// The partitions the kernel lists for a whole disk (none for a partition): their sysfs
/// directories, in name order.
fn partitions(dev: &BlockDev) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dev.sysfs == dev.disk_dir()
        && let Ok(rd) = fs::read_dir(&dev.sysfs)
    {
        out.extend(
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("partition").exists()),
        );
    }
    out.sort();
    out
}

/// The device and its partitions: (kernel name, "major:minor").
fn family(dev: &BlockDev) -> Vec<(String, String)> {
    // The device itself (a partition is checked on its own, with its whole disk's other
    // partitions left alone: writing sda2 does not touch sda1).
    std::iter::once(dev.sysfs.clone())
        .chain(partitions(dev))
        .filter_map(|dir| {
            let name = dir.file_name()?.to_string_lossy().into_owned();
            let devno = fs::read_to_string(dir.join("dev")).ok()?;
            Some((name, devno.trim().to_string()))
        })
        .collect()
}

/// Every loop device with a backing file: its sysfs directory and the backing path (as
/// the kernel gives it, without " (deleted)"), in name order.
fn loops() -> Vec<(PathBuf, String)> {
    let Ok(rd) = fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, String)> = rd
        .flatten()
        .map(|e| e.path())
        .filter_map(|l| {
            let text = fs::read_to_string(l.join("loop/backing_file")).ok()?;
            let backing = text.trim_end_matches('\n');
            let backing = backing.strip_suffix(" (deleted)").unwrap_or(backing);
            Some((l, backing.to_string()))
        })
        .collect();
    out.sort();
    out
}

/// The loop device whose backing file is one of `fam` (compared by device number when
/// the backing path still stats as a block device, else by name).
fn loop_backed(fam: &[(String, String)]) -> Option<(String, String)> {
    for (l, backing) in loops() {
        let hit = match fs::metadata(&backing) {
            Ok(md) if md.file_type().is_block_device() => {
                let (major, minor) = crate::io::sys::major_minor(md.rdev());
                let devno = format!("{major}:{minor}");
                fam.iter().find(|(_, d)| *d == devno)
            }
            Ok(_) => None,
            // The node is gone (or in another mount namespace): compare kernel names.
            Err(_) => Path::new(&backing)
                .file_name()
                .and_then(|b| fam.iter().find(|(name, _)| b == name.as_str())),
        };
        if let Some((name, _)) = hit {
            let by = l.file_name()?.to_string_lossy().into_owned();
            return Some((name.clone(), by));
        }
    }
    None
}

/// Why a regular file (its metadata, from the descriptor iomark will write) must not be
/// written whatever the flags: it backs a loop device (writing it changes that device
/// under whatever uses it, a mounted filesystem too), or it is an active swap file.
/// Compared by device and inode, so a link or another path to the same file is caught.
pub(crate) fn file_in_use(md: &fs::Metadata) -> Option<String> {
    let same = |p: &str| fs::metadata(p).is_ok_and(|o| o.dev() == md.dev() && o.ino() == md.ino());
    for (l, backing) in loops() {
        if !same(&backing) {
            continue;
        }
        let name = l.file_name()?.to_string_lossy().into_owned();
        let devno = fs::read_to_string(l.join("dev")).unwrap_or_default();
        let at = mounted_at(devno.trim()).map_or(String::new(), |at| format!(", mounted at {at}"));
        return Some(format!(
            "backs the loop device /dev/{name}{at}: writing it would change that device's contents under whatever uses it; detach it first (losetup -d /dev/{name}) or choose another file"
        ));
    }
    let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
    let swap = swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next());
    swap.into_iter().find(|p| same(p)).map(|p| {
        format!("is in use as swap (listed in /proc/swaps as {p}); swapoff it first or choose another file")
    })
}

/// Where the device numbered `devno` ("major:minor") is mounted (the first mount listed).
fn mounted_at(devno: &str) -> Option<String> {
    let mi = fs::read_to_string("/proc/self/mountinfo").ok()?;
    mi.lines().find_map(|line| {
        let f: Vec<&str> = line.split(' ').collect();
        (f.len() > 4 && f[2] == devno).then(|| f[4].replace("\\040", " "))
    })
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
    loop_backed(&fam).map(|(dev, by)| InUse::LoopBacking { dev, by })
}

/// What a device holds that writing would destroy, and who found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holding {
    /// With its article: "an ext4 filesystem", "a partition table".
    pub what: String,
    /// "libblkid", "the kernel, which lists loop3p1 in sysfs", …
    pub by: String,
}

impl std::fmt::Display for Holding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (found by {})", self.what, self.by)
    }
}

/// "a" or "an" before `phrase` as it is read aloud: "an ext4", "an f2fs", "an MD RAID
/// member", "a squashfs", "a GPT".
pub(crate) fn with_article(phrase: &str) -> String {
    // Names read letter by letter whose first letter sounds like a vowel.
    const LETTERS: [&str; 10] = [
        "f2fs", "hfs", "hpfs", "lvm", "md", "mbr", "nss", "ntfs", "sgi", "xfs",
    ];
    let lower = phrase.to_ascii_lowercase();
    let an =
        lower.starts_with(['a', 'e', 'i', 'o']) || LETTERS.iter().any(|l| lower.starts_with(l));
    format!("{} {phrase}", if an { "an" } else { "a" })
}

/// Whether the device open as `file` (`dev` in sysfs, `size` bytes) holds anything that
/// writing would destroy: libblkid's probe first, then the partitions the kernel lists
/// (a table whose bytes were wiped may still be live there), then iomark's own list of
/// magics, which is also what remains when libblkid cannot probe.
pub(crate) fn holds(file: &File, dev: Option<&BlockDev>, size: u64) -> Option<Holding> {
    let blkid_failed = match blkid::probe(file.as_fd()) {
        Ok(Probe::Found(sig)) => {
            return Some(Holding {
                what: with_article(&sig.describe()),
                by: "libblkid".into(),
            });
        }
        Ok(Probe::Ambiguous(one)) => {
            let among = one.map_or(String::new(), |s| {
                format!(", among them {}", with_article(&s.describe()))
            });
            return Some(Holding {
                what: format!("more than one signature{among}"),
                by: "libblkid, which calls the result ambiguous".into(),
            });
        }
        Ok(Probe::Nothing) => None,
        Err(why) => Some(why),
    };
    if let Some(dev) = dev {
        let parts: Vec<String> = partitions(dev)
            .iter()
            .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .collect();
        if !parts.is_empty() {
            return Some(Holding {
                what: "a partition table".into(),
                by: format!("the kernel, which lists {} in sysfs", parts.join(", ")),
            });
        }
    }
    signature(file, size).map(|sig| Holding {
        what: with_article(sig),
        by: match blkid_failed {
            None => "iomark's own signature list; libblkid found nothing".into(),
            Some(why) => format!("iomark's own signature list; libblkid could not probe: {why}"),
        },
    })
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
    fn articles_follow_how_names_are_read() {
        for (phrase, want) in [
            ("ext4 filesystem", "an"),
            ("f2fs filesystem", "an"),
            ("hfsplus filesystem", "an"),
            ("iso9660 filesystem", "an"),
            ("erofs filesystem", "an"),
            ("MD RAID member", "an"),
            ("LVM2 physical volume", "an"),
            ("XFS filesystem", "an"),
            ("NTFS filesystem", "an"),
            ("exFAT filesystem", "an"),
            ("minix filesystem", "a"),
            ("squashfs filesystem", "a"),
            ("bfs filesystem", "a"),
            ("VDO volume", "a"),
            ("GPT partition table", "a"),
            ("udf filesystem", "a"),
            ("swap signature", "a"),
        ] {
            assert_eq!(with_article(phrase), format!("{want} {phrase}"));
        }
    }

    #[test]
    fn tiny_devices_do_not_panic() {
        let (f, size) = image(&[], 100);
        assert_eq!(signature(f.as_file(), size), None);
    }
}
