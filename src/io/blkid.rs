//! util-linux's libblkid (through the `libblkid-rs` bindings): which superblocks and
//! partition tables a device carries, probed through a descriptor iomark already holds
//! (never by path), the same probe `blkid -p` and `wipefs` make. This module only reads;
//! what to do about a signature is decided in `guard.rs`.

use std::os::fd::{AsRawFd, BorrowedFd};

use libblkid_rs::{BlkidProbe, BlkidSafeprobeRet, BlkidSublks, BlkidSublksFlags};

/// One signature libblkid found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature {
    /// libblkid's name: `TYPE` of a superblock (`ext4`, `linux_raid_member`) or `PTTYPE`
    /// of a partition table (`dos`, `gpt`).
    pub name: String,
    /// `USAGE` of a superblock (`filesystem`, `raid`, `crypto`, `other`); `None` for a
    /// partition table.
    pub usage: Option<String>,
}

/// What a probe of the whole device found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Probe {
    Nothing,
    Found(Signature),
    /// Several signatures that contradict each other (libblkid's "ambiguous" result:
    /// `blkid -p` refuses to name one); `Some` is one of them, when a full probe names it.
    Ambiguous(Option<Signature>),
}

/// Probes the device open on `fd` for superblocks (including those with a bad checksum)
/// and partition tables. `Err` says why libblkid could not probe.
pub(crate) fn probe(fd: BorrowedFd) -> Result<Probe, String> {
    let fail = |what: &str, e: libblkid_rs::BlkidErr| format!("{what}: {e}");
    let mut p = BlkidProbe::new().map_err(|e| fail("cannot create a probe", e))?;
    // Offset 0 and size 0: the whole device. libblkid reads through the descriptor and
    // does not close it.
    p.set_device(fd.as_raw_fd(), 0, 0)
        .map_err(|e| fail("cannot attach the device", e))?;
    p.enable_superblocks(true)
        .map_err(|e| fail("cannot enable superblock probing", e))?;
    p.set_superblock_flags(BlkidSublksFlags::new(vec![
        BlkidSublks::Type,
        BlkidSublks::Usage,
        BlkidSublks::Badcsum,
    ]))
    .map_err(|e| fail("cannot set superblock flags", e))?;
    p.enable_partitions(true)
        .map_err(|e| fail("cannot enable partition probing", e))?;
    match p.do_safeprobe().map_err(|e| fail("probe failed", e))? {
        BlkidSafeprobeRet::None => Ok(Probe::Nothing),
        BlkidSafeprobeRet::Success => Ok(found(&p).map_or(
            // Something matched but named nothing we asked for: still something.
            Probe::Ambiguous(None),
            Probe::Found,
        )),
        BlkidSafeprobeRet::Ambiguous => {
            // A full probe does not check for collisions and names the first match.
            p.reset();
            let one = p.do_fullprobe().ok().and_then(|_| found(&p));
            Ok(Probe::Ambiguous(one))
        }
    }
}

fn found(p: &BlkidProbe) -> Option<Signature> {
    if let Ok(name) = p.lookup_value("TYPE") {
        return Some(Signature {
            name,
            usage: p.lookup_value("USAGE").ok(),
        });
    }
    p.lookup_value("PTTYPE")
        .ok()
        .map(|name| Signature { name, usage: None })
}

impl Signature {
    /// A phrase for messages: "ext4 filesystem", "MD RAID member", "GPT partition table".
    pub(crate) fn describe(&self) -> String {
        let n = self.name.as_str();
        let known = match n {
            "linux_raid_member" => Some("MD RAID member"),
            "LVM2_member" => Some("LVM2 physical volume"),
            "crypto_LUKS" => Some("LUKS encrypted volume"),
            "zfs_member" => Some("ZFS pool member"),
            "swap" => Some("swap signature"),
            "bcache" => Some("bcache device"),
            "vdo" => Some("VDO volume"),
            "gpt" => Some("GPT partition table"),
            "dos" => Some("DOS/MBR partition table"),
            // The MBR a GPT disk starts with, seen without a valid GPT header.
            "PMBR" => Some("protective MBR (of a GPT partition table)"),
            _ => None,
        };
        if let Some(k) = known {
            return k.to_string();
        }
        match self.usage.as_deref() {
            None => format!("{n} partition table"),
            Some("filesystem") => format!("{n} filesystem"),
            Some("raid") => format!("{n} RAID or volume member"),
            Some("crypto") => format!("{n} encrypted volume"),
            Some(_) => format!("{n} signature"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileExt;

    fn sig(name: &str, usage: Option<&str>) -> String {
        Signature {
            name: name.into(),
            usage: usage.map(Into::into),
        }
        .describe()
    }

    #[test]
    fn describes_what_it_found() {
        assert_eq!(sig("ext4", Some("filesystem")), "ext4 filesystem");
        assert_eq!(sig("linux_raid_member", Some("raid")), "MD RAID member");
        assert_eq!(
            sig("isw_raid_member", Some("raid")),
            "isw_raid_member RAID or volume member"
        );
        assert_eq!(sig("gpt", None), "GPT partition table");
        assert_eq!(sig("atari", None), "atari partition table");
        assert_eq!(
            sig("BitLocker", Some("crypto")),
            "BitLocker encrypted volume"
        );
        assert_eq!(sig("swap", Some("other")), "swap signature");
    }

    #[test]
    fn probes_an_image_through_its_descriptor() {
        // An empty image holds nothing; one MBR entry makes a "dos" partition table.
        let f = tempfile::tempfile().unwrap();
        f.set_len(4 << 20).unwrap();
        assert_eq!(probe(f.as_fd()), Ok(Probe::Nothing));
        let mut mbr = [0u8; 512];
        mbr[0x1BE + 4] = 0x83;
        mbr[0x1BE + 8..0x1BE + 12].copy_from_slice(&2048u32.to_le_bytes());
        mbr[0x1BE + 12..0x1BE + 16].copy_from_slice(&4096u32.to_le_bytes());
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        f.write_all_at(&mbr, 0).unwrap();
        let Ok(Probe::Found(s)) = probe(f.as_fd()) else {
            panic!("an MBR was not found");
        };
        assert_eq!(s.describe(), "DOS/MBR partition table");
    }
}
