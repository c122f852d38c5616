//! The environment as the results record it: the host, the device under a target and what
//! its kernel counters moved, the filesystem. Capturing them is `io::env`'s work.

use serde::{Deserialize, Serialize};

/// The machine a run happened on: the results document's `host`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name from `/proc/cpuinfo`.
    pub cpu: String,
    /// Logical CPUs available to iomark.
    pub cores: usize,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
}

/// Counters moved between two readings, in the results document's `device` shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceDelta {
    /// Kernel name of the device whose counters these are.
    pub name: String,
    /// Read requests the device completed.
    pub read_ios: u64,
    /// Bytes read from the device.
    pub read_bytes: u64,
    /// Write requests the device completed.
    pub write_ios: u64,
    /// Bytes written to the device.
    pub write_bytes: u64,
    /// Discard (trim) requests the device completed.
    #[serde(default)]
    pub discard_ios: u64,
    /// Bytes discarded.
    #[serde(default)]
    pub discard_bytes: u64,
    /// Cache flushes the device completed (fsync, `O_SYNC`/`O_DSYNC` writes, a journal's
    /// barriers). The kernel counts a flush asked on its own (an fsync's) also among the
    /// writes, as a write of no data. 0 on kernels before 5.5 and in older documents.
    #[serde(default)]
    pub flush_ios: u64,
}

impl DeviceDelta {
    /// Takes off reads and writes that were iomark's own but not counted by it (see
    /// `measure::rep::Watch::device_deltas`); never below nothing.
    pub(crate) fn less_own(
        &mut self,
        read: crate::results::stats::Counter,
        write: crate::results::stats::Counter,
    ) {
        self.read_ios = self.read_ios.saturating_sub(read.ios);
        self.read_bytes = self.read_bytes.saturating_sub(read.bytes);
        self.write_ios = self.write_ios.saturating_sub(write.ios);
        self.write_bytes = self.write_bytes.saturating_sub(write.bytes);
    }

    /// Percent of the bytes iomark read (`read_bytes`) that the device did not have to
    /// read: the page cache served them. 0 when the device read as much or more (other
    /// processes' reads and readahead count on the device's side, so this is a lower
    /// bound); `None` when iomark read nothing.
    pub fn page_cache_hit_pct(&self, read_bytes: u64) -> Option<f64> {
        (read_bytes > 0).then(|| {
            let reached = self.read_bytes.min(read_bytes);
            100.0 * (read_bytes - reached) as f64 / read_bytes as f64
        })
    }

    /// The directions ("reads", "writes") in which the device moved clearly more bytes
    /// than iomark did: more than 10% and more than 1 MiB beyond iomark's own. Those
    /// bytes are other processes', the filesystem's (metadata, journal, writeback) or
    /// readahead's: the counters are the whole device's.
    pub fn beyond(&self, read_bytes: u64, write_bytes: u64) -> Vec<&'static str> {
        let clearly_more =
            |dev: u64, own: u64| dev > own.saturating_add(own / 10) && dev - own > (1 << 20);
        let mut out = Vec::new();
        if clearly_more(self.read_bytes, read_bytes) {
            out.push("reads");
        }
        if clearly_more(self.write_bytes, write_bytes) {
            out.push("writes");
        }
        out
    }
}

/// What is known about the device under a target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Kernel name of the device (a partition's own name for a partition).
    pub name: String,
    /// The whole disk it belongs to.
    pub disk: String,
    /// Model string, or the backing file of a loop device.
    pub model: Option<String>,
    /// Active I/O scheduler.
    pub scheduler: Option<String>,
    /// Logical block size in bytes.
    pub logical_block_size: Option<u64>,
    /// Whether the kernel thinks it spins.
    pub rotational: Option<bool>,
}

/// The filesystem a file lives on, from `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FsInfo {
    /// Filesystem type, e.g. `ext4`, `btrfs`, `tmpfs`.
    pub fstype: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// Mount options (per-mount and superblock options, comma-separated).
    pub options: String,
}

impl FsInfo {
    /// The compression a btrfs mount applies to what is written (`compress-force=zstd:3`),
    /// if any: the device then stores less than it is sent.
    pub fn compression(&self) -> Option<&str> {
        (self.fstype == "btrfs")
            .then(|| {
                self.options.split(',').find(|o| {
                    o.starts_with("compress") && !o.ends_with("=no") && !o.ends_with("=none")
                })
            })
            .flatten()
    }

    /// Why no device's counters are shown for a file here: "no block device visible
    /// under the target", or for btrfs (which iomark follows to its device when it has
    /// one alone) that none holds it alone.
    pub fn unseen_device(fs: Option<&FsInfo>) -> &'static str {
        match fs {
            Some(f) if f.fstype == "btrfs" => {
                "no one block device holds this btrfs (iomark reads a single device's counters)"
            }
            _ => "no block device visible under the target",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn btrfs_compression_is_read_from_the_mount_options() {
        let fs = |t: &str, o: &str| FsInfo {
            fstype: t.into(),
            mount_point: "/m".into(),
            options: o.into(),
        };
        let on = fs(
            "btrfs",
            "rw,relatime,compress-force=zstd:3,ssd,space_cache=v2",
        );
        assert_eq!(on.compression(), Some("compress-force=zstd:3"));
        assert_eq!(fs("btrfs", "rw,compress=no,ssd").compression(), None);
        assert_eq!(fs("btrfs", "rw,ssd").compression(), None);
        assert_eq!(fs("ext4", "rw,compress=lz4").compression(), None);
        assert!(FsInfo::unseen_device(Some(&on)).contains("btrfs"));
        assert!(FsInfo::unseen_device(None).contains("no block device visible"));
    }

    fn delta(read_bytes: u64, write_bytes: u64) -> DeviceDelta {
        DeviceDelta {
            name: "vda".into(),
            read_ios: read_bytes / 4096,
            read_bytes,
            write_ios: write_bytes / 4096,
            write_bytes,
            ..Default::default()
        }
    }

    #[test]
    fn page_cache_hits_are_the_bytes_the_device_did_not_read() {
        // 100 MiB read by iomark, 38 MiB by the device: 62% from memory.
        let d = delta(38 << 20, 0);
        let hit = d.page_cache_hit_pct(100 << 20).unwrap();
        assert!((hit - 62.0).abs() < 1e-9, "{hit}");
        assert_eq!(delta(200 << 20, 0).page_cache_hit_pct(100 << 20), Some(0.0));
        assert_eq!(delta(0, 0).page_cache_hit_pct(100 << 20), Some(100.0));
        assert_eq!(d.page_cache_hit_pct(0), None);
    }

    #[test]
    fn the_device_moving_clearly_more_is_flagged_per_direction() {
        // A pure read run on a device that other processes wrote 6 GiB to.
        let d = delta(34 << 20, 6 << 30);
        assert_eq!(d.beyond(34 << 20, 0), vec!["writes"]);
        // A few blocks of metadata are not "clearly more".
        assert!(delta(34 << 20, 512 << 10).beyond(34 << 20, 0).is_empty());
        assert!(delta(105 << 20, 0).beyond(100 << 20, 0).is_empty());
        assert_eq!(delta(120 << 20, 0).beyond(100 << 20, 0), vec!["reads"]);
    }
}
