//! Environment capture, in one place: the host (name, kernel, CPU, memory), the block
//! device under a target and its kernel counters (`/sys/block/<dev>/stat`), the filesystem
//! a file lives on, and the process's CPU time. Reads `/proc` and `/sys` only; never writes.

use std::fs;
use std::path::{Path, PathBuf};

use crate::results::env::{DeviceDelta, DeviceInfo, FsInfo, Host};

fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

impl Host {
    /// Reads the host's description from `/proc`.
    pub fn capture() -> Host {
        let cpu = fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let memory_bytes = fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<u64>().ok())
            })
            .map_or(0, |kb| kb * 1024);
        Host {
            hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
            kernel: read_trim("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes,
        }
    }
}

/// A block device (or partition) as the kernel names it in sysfs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlockDev {
    /// Kernel name, e.g. `sda1`, `nvme0n1`, `loop3`, `vda`.
    pub name: String,
    /// The device's sysfs directory (for a partition, the partition's).
    pub sysfs: PathBuf,
}

/// Kernel block-layer counters of one device at one moment (`/sys/block/<dev>/stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BlockStat {
    pub read_ios: u64,
    pub read_sectors: u64,
    pub write_ios: u64,
    pub write_sectors: u64,
    /// Discards completed and their sectors (0 on kernels before 4.18, which lack them).
    pub discard_ios: u64,
    pub discard_sectors: u64,
    /// Cache flushes completed (0 on kernels before 5.5, which lack them).
    pub flush_ios: u64,
}

impl BlockDev {
    /// The device with this `major:minor`, when sysfs knows it (major 0 — btrfs, tmpfs,
    /// overlayfs — has no block device and gives `None`).
    pub(crate) fn from_devno(major: u32, minor: u32) -> Option<BlockDev> {
        if major == 0 {
            return None;
        }
        BlockDev::at_sysfs(Path::new(&format!("/sys/dev/block/{major}:{minor}")))
    }

    /// The device a sysfs link leads to, when it is one (it has a `stat`).
    fn at_sysfs(link: &Path) -> Option<BlockDev> {
        let sysfs = fs::canonicalize(link).ok()?;
        let name = sysfs.file_name()?.to_string_lossy().into_owned();
        sysfs
            .join("stat")
            .exists()
            .then_some(BlockDev { name, sysfs })
    }

    /// The device under an open file, from its `fstat` (never its path): the device
    /// itself for a block device, else the device holding the file's filesystem (for
    /// btrfs, whose files carry an anonymous device number, its one member device).
    pub(crate) fn of_metadata(md: &fs::Metadata) -> Option<BlockDev> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let dev = if md.file_type().is_block_device() {
            md.rdev()
        } else {
            md.dev()
        };
        let (major, minor) = crate::io::sys::major_minor(dev);
        BlockDev::from_devno(major, minor)
    }

    /// `of_metadata`, and for a file on btrfs (whose files carry an anonymous device
    /// number) its member device when it has one alone: asked of the open file
    /// (`BTRFS_IOC_FS_INFO`), then `/sys/fs/btrfs/FSID/devices`. A btrfs over several
    /// devices gives `None`: its writes are spread (or copied) over them, and one
    /// device's counters would tell part of the story.
    pub(crate) fn of_file(fd: std::os::fd::BorrowedFd, md: &fs::Metadata) -> Option<BlockDev> {
        use std::os::unix::fs::FileTypeExt;
        if let Some(dev) = BlockDev::of_metadata(md) {
            return Some(dev);
        }
        if md.file_type().is_block_device() {
            return None;
        }
        let (fsid, devices) = crate::io::sys::btrfs_fs_info(fd)?;
        if devices != 1 {
            return None;
        }
        let member = fs::read_dir(format!("/sys/fs/btrfs/{fsid}/devices"))
            .ok()?
            .flatten()
            .next()?;
        BlockDev::at_sysfs(&member.path())
    }

    /// The whole disk this device belongs to (itself unless it is a partition).
    pub(crate) fn disk_dir(&self) -> PathBuf {
        if self.sysfs.join("partition").exists() {
            self.sysfs
                .parent()
                .map_or(self.sysfs.clone(), Path::to_path_buf)
        } else {
            self.sysfs.clone()
        }
    }

    /// Reads the counters now; `None` if the device went away.
    pub(crate) fn stat(&self) -> Option<BlockStat> {
        let text = fs::read_to_string(self.sysfs.join("stat")).ok()?;
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        if f.len() < 7 {
            return None;
        }
        // Fields (Documentation/block/stat.rst): 0 read I/Os, 1 read merges, 2 read sectors,
        // 3 read ticks, 4 write I/Os, 5 write merges, 6 write sectors, ..., 11 discard
        // I/Os, 12 discard merges, 13 discard sectors, 14 discard ticks, 15 flush I/Os.
        // Sectors are always 512 bytes here, whatever the device's own sector size.
        Some(BlockStat {
            read_ios: f[0],
            read_sectors: f[2],
            write_ios: f[4],
            write_sectors: f[6],
            discard_ios: f.get(11).copied().unwrap_or(0),
            discard_sectors: f.get(13).copied().unwrap_or(0),
            flush_ios: f.get(15).copied().unwrap_or(0),
        })
    }

    /// Model, scheduler, logical block size and rotational flag of the whole disk.
    pub(crate) fn info(&self) -> DeviceInfo {
        let disk = self.disk_dir();
        let scheduler = read_trim(disk.join("queue/scheduler")).map(|s| {
            // "mq-deadline kyber [none]": the bracketed one is active.
            s.split_whitespace()
                .find(|w| w.starts_with('['))
                .map(|w| w.trim_matches(['[', ']']).to_string())
                .unwrap_or(s)
        });
        DeviceInfo {
            name: self.name.clone(),
            disk: disk
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            model: read_trim(disk.join("device/model")).or_else(|| {
                read_trim(disk.join("loop/backing_file")).map(|b| format!("loop over {b}"))
            }),
            scheduler,
            logical_block_size: read_trim(disk.join("queue/logical_block_size"))
                .and_then(|v| v.parse().ok()),
            rotational: read_trim(disk.join("queue/rotational")).map(|v| v == "1"),
        }
    }
}

impl DeviceDelta {
    pub(crate) fn between(name: &str, before: BlockStat, after: BlockStat) -> DeviceDelta {
        DeviceDelta {
            name: name.to_string(),
            read_ios: after.read_ios.saturating_sub(before.read_ios),
            read_bytes: after.read_sectors.saturating_sub(before.read_sectors) * 512,
            write_ios: after.write_ios.saturating_sub(before.write_ios),
            write_bytes: after.write_sectors.saturating_sub(before.write_sectors) * 512,
            discard_ios: after.discard_ios.saturating_sub(before.discard_ios),
            discard_bytes: after.discard_sectors.saturating_sub(before.discard_sectors) * 512,
            flush_ios: after.flush_ios.saturating_sub(before.flush_ios),
        }
    }
}

/// Where a new file at `path` would live, for a header: "ext4 at / on vda".
pub fn place_of(path: &Path) -> Option<String> {
    let dir = crate::results::store::directory_of(path);
    let fs = FsInfo::of_path(dir)?;
    let dev = fs::File::open(dir).ok().and_then(|f| {
        use std::os::fd::AsFd;
        BlockDev::of_file(f.as_fd(), &f.metadata().ok()?)
    });
    Some(match dev {
        Some(d) => format!("{} at {} on {}", fs.fstype, fs.mount_point, d.name),
        None => format!("{} at {}", fs.fstype, fs.mount_point),
    })
}

impl FsInfo {
    /// The filesystem holding `path` (the longest mount point that prefixes it).
    pub(crate) fn of_path(path: &Path) -> Option<FsInfo> {
        let abs = fs::canonicalize(path)
            .or_else(|_| {
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map_or_else(std::env::current_dir, fs::canonicalize)
            })
            .ok()?;
        let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
        let mut best: Option<(usize, FsInfo)> = None;
        for line in text.lines() {
            // id parent maj:min root mount-point options [optional...] - fstype source super-options
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            if l.len() < 6 || r.len() < 3 {
                continue;
            }
            let mp = unescape_mount(l[4]);
            let is_prefix = abs.starts_with(&mp);
            if is_prefix && best.as_ref().is_none_or(|(len, _)| mp.len() >= *len) {
                best = Some((
                    mp.len(),
                    FsInfo {
                        fstype: r[0].to_string(),
                        mount_point: mp,
                        options: format!("{},{}", l[5], r[2]),
                    },
                ));
            }
        }
        best.map(|(_, f)| f)
    }
}

fn unescape_mount(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// Address space the process may still map when `RLIMIT_AS` limits it (`ulimit -v`):
/// the limit less what is mapped now (`VmSize`); `None` when unlimited.
pub(crate) fn address_space_room() -> Option<u64> {
    let limit = crate::io::sys::address_space_limit()?;
    let used = fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("VmSize:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    })?;
    Some(limit.saturating_sub(used * 1024))
}

/// Bytes of memory the kernel reports available for new allocations (page cache that can
/// be reclaimed included): `MemAvailable` from /proc/meminfo.
pub(crate) fn mem_available() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// What plans need to know of this machine: io_uring, root, memory.
pub fn system() -> crate::plan::System {
    crate::plan::System {
        io_uring: crate::io::engine::probe_io_uring(),
        root: crate::io::sys::is_root(),
        memory_bytes: mem_total().unwrap_or(0),
    }
}

/// The machine's memory in bytes: `MemTotal` from /proc/meminfo.
pub(crate) fn mem_total() -> Option<u64> {
    meminfo("MemTotal:")
}

fn meminfo(key: &str) -> Option<u64> {
    let s = fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = s
        .lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// How much written data the kernel keeps in the page cache before it makes writers wait
/// for the device: `vm.dirty_bytes` when set, else `vm.dirty_ratio` percent of `avail`
/// (the kernel takes it of its dirtyable memory, close to `MemAvailable`). With the
/// setting's own words ("vm.dirty_ratio 20% of available memory").
pub(crate) fn dirty_limit(avail: u64) -> Option<(u64, String)> {
    let read = |name: &str| -> Option<u64> {
        fs::read_to_string(format!("/proc/sys/vm/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    match read("dirty_bytes") {
        Some(b) if b > 0 => Some((b, "vm.dirty_bytes".into())),
        _ => {
            let r = read("dirty_ratio")?;
            Some((
                avail / 100 * r,
                format!("vm.dirty_ratio {r}% of available memory"),
            ))
        }
    }
}

/// Writes dirty pages out and drops the clean page cache, dentries and inodes
/// (`/proc/sys/vm/drop_caches`; root only).
pub(crate) fn drop_page_cache() -> std::io::Result<()> {
    crate::io::sys::sync_all();
    fs::write("/proc/sys/vm/drop_caches", "3")
}

/// zram's own accounting: (original bytes stored, compressed bytes) from
/// `/sys/block/zramN/mm_stat`; `None` for other devices.
pub(crate) fn zram_mm_stat(dev: &BlockDev) -> Option<(u64, u64)> {
    let v = mm_stat(dev)?;
    Some((*v.first()?, *v.get(1)?))
}

/// The numbers of a zram device's `mm_stat` (orig_data_size, compr_data_size,
/// mem_used_total, mem_limit, mem_used_max, same_pages, …); `None` for other devices.
fn mm_stat(dev: &BlockDev) -> Option<Vec<u64>> {
    if !dev.name.starts_with("zram") {
        return None;
    }
    let t = fs::read_to_string(dev.sysfs.join("mm_stat")).ok()?;
    Some(
        t.split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect(),
    )
}

/// A zram device's same-filled pages in bytes (`mm_stat` same_pages: stored as a count,
/// not in orig_data_size) and its size (`disksize`); `None` for other devices.
pub(crate) fn zram_same_and_size(dev: &BlockDev) -> Option<(u64, u64)> {
    let same = *mm_stat(dev)?.get(5)?;
    let size = fs::read_to_string(dev.sysfs.join("disksize")).ok()?;
    Some((
        same * crate::io::sys::page_size(),
        size.trim().parse().ok()?,
    ))
}

/// Whether a zram device holds nothing at all (`mm_stat`: no data stored, no same-filled
/// pages): every read of it returns zeros without decompressing anything. `false` for
/// other devices.
pub(crate) fn zram_is_empty(dev: &BlockDev) -> bool {
    mm_stat(dev).is_some_and(|v| v.len() > 5 && v[0] == 0 && v[5] == 0)
}

/// Host and media write counters a drive reports through SMART.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct SmartWrites {
    /// Bytes the host wrote, as the drive counts them (NVMe Data Units Written, ATA 241).
    pub host_bytes: Option<u64>,
    /// Bytes written to the media (vendor attributes such as NAND writes), when reported.
    pub media_bytes: Option<u64>,
    /// The granularity of the media counter in bytes.
    pub media_unit: Option<u64>,
}

/// Reads a drive's write counters with `smartctl -j -a` (smartmontools). `Err` says why
/// there are none: smartctl missing, or a device without SMART.
pub(crate) fn smart_writes(dev: &BlockDev) -> Result<SmartWrites, String> {
    let disk = dev.disk_dir();
    let name = disk
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if ["loop", "zram", "ram", "dm-", "md", "nbd"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return Err(format!("not reported by this device ({name} has no SMART)"));
    }
    let out = std::process::Command::new("smartctl")
        .args(["-j", "-a"])
        .arg(format!("/dev/{name}"))
        .output()
        .map_err(|_| "not reported: smartctl (smartmontools) is not installed".to_string())?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|_| format!("not reported: smartctl gave no JSON for /dev/{name}"))?;
    parse_smart(&v)
        .ok_or_else(|| format!("not reported by this device (/dev/{name} has no write counters)"))
}

/// The write counters in smartctl's JSON, if any.
pub(crate) fn parse_smart(v: &serde_json::Value) -> Option<SmartWrites> {
    let mut w = SmartWrites::default();
    if let Some(units) = v
        .pointer("/nvme_smart_health_information_log/data_units_written")
        .and_then(serde_json::Value::as_u64)
    {
        // NVMe counts data units of 1000 512-byte sectors.
        w.host_bytes = Some(units * 512_000);
    }
    if let Some(table) = v
        .pointer("/ata_smart_attributes/table")
        .and_then(|t| t.as_array())
    {
        for a in table {
            let id = a.get("id").and_then(serde_json::Value::as_u64).unwrap_or(0);
            let name = a.get("name").and_then(|n| n.as_str()).unwrap_or("");
            let raw = a.pointer("/raw/value").and_then(serde_json::Value::as_u64);
            let lname = name.to_lowercase();
            // The unit is in the attribute's name where vendors differ (Intel:
            // Host_Writes_32MiB, NAND_Writes_1GiB); plain 241 counts 512-byte LBAs.
            let unit: u64 = if lname.contains("32mib") {
                32 << 20
            } else if lname.contains("gib") || lname.contains("1gb") {
                1 << 30
            } else if lname.contains("mib") {
                1 << 20
            } else {
                512
            };
            if id == 241 {
                w.host_bytes = raw.map(|v| v * unit);
            }
            if lname.contains("nand_writes")
                || lname.contains("nand writes")
                || lname.contains("media_writes")
            {
                // Vendors count these in GiB unless the name says otherwise.
                let unit = if unit == 512 { 1 << 30 } else { unit };
                w.media_bytes = raw.map(|v| v * unit);
                w.media_unit = Some(unit);
            }
        }
    }
    (w.host_bytes.is_some() || w.media_bytes.is_some()).then_some(w)
}

/// CPU time this process has used so far, in seconds (all threads).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CpuTimes {
    pub user_s: f64,
    pub sys_s: f64,
}

impl CpuTimes {
    pub(crate) fn now() -> CpuTimes {
        CpuTimes::of(crate::io::sys::process_cpu())
    }

    fn of(t: Option<(f64, f64)>) -> CpuTimes {
        t.map_or_else(CpuTimes::default, |(user_s, sys_s)| CpuTimes {
            user_s,
            sys_s,
        })
    }

    pub(crate) fn since(self, before: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: (self.user_s - before.user_s).max(0.0),
            sys_s: (self.sys_s - before.sys_s).max(0.0),
        }
    }

    /// The calling thread's CPU time so far (`RUSAGE_THREAD`).
    pub(crate) fn thread() -> CpuTimes {
        CpuTimes::of(crate::io::sys::thread_cpu())
    }

    pub(crate) fn plus(self, o: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: self.user_s + o.user_s,
            sys_s: self.sys_s + o.sys_s,
        }
    }
}

/// The whole machine's CPU time so far, every CPU's added (`/proc/stat`'s `cpu` line,
/// clock ticks): user mode (nice and guests' time included) and steal (a hypervisor ran
/// something else while a CPU wanted to run), with the CPUs it counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct MachineTimes {
    pub user_s: f64,
    pub steal_s: f64,
    pub cpus: u32,
}

impl MachineTimes {
    pub(crate) fn now() -> Option<MachineTimes> {
        let stat = fs::read_to_string("/proc/stat").ok()?;
        MachineTimes::parse(&stat, crate::io::sys::clock_ticks())
    }

    /// From the text of `/proc/stat`: `cpu user nice system idle iowait irq softirq steal
    /// …`, then a `cpuN` line per CPU online.
    pub(crate) fn parse(stat: &str, ticks: f64) -> Option<MachineTimes> {
        let mut lines = stat.lines();
        let first = lines.next()?.strip_prefix("cpu ")?;
        let v: Vec<f64> = (first.split_whitespace())
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        let cpus = lines
            .take_while(|l| l.starts_with("cpu"))
            .filter(|l| l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
            .count() as u32;
        Some(MachineTimes {
            user_s: (v.first()? + v.get(1)?) / ticks,
            steal_s: v.get(7).copied().unwrap_or(0.0) / ticks,
            cpus,
        })
    }

    pub(crate) fn since(self, before: MachineTimes) -> MachineTimes {
        MachineTimes {
            user_s: (self.user_s - before.user_s).max(0.0),
            steal_s: (self.steal_s - before.steal_s).max(0.0),
            cpus: self.cpus,
        }
    }
}

pub(crate) use crate::io::kernel_threads::{KernelCpu, KernelWorkers};

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
