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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
