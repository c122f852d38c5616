//! Shared helpers for integration tests: skipping with a reason (or failing when
//! IOMARK_REQUIRE_ALL=1), running the binary, and loop devices that clean up after
//! themselves even when a test fails.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Returns true when the test may go on; otherwise prints why it is skipped, or panics
/// when CI demands every test run (IOMARK_REQUIRE_ALL=1).
pub fn require(ok: bool, what: &str) -> bool {
    if ok {
        return true;
    }
    if std::env::var("IOMARK_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("required but missing: {what} (IOMARK_REQUIRE_ALL=1)");
    }
    eprintln!("skipped: {what}");
    false
}

pub fn is_root() -> bool {
    // Safety: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn have(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

pub fn iomark() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("iomark").expect("binary built");
    c.env_remove("RUST_BACKTRACE");
    c
}

/// Runs iomark with `args` plus `--json --quiet`, expects success, returns the document.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = iomark()
        .args(args)
        .args(["--json", "--quiet"])
        .output()
        .expect("iomark runs");
    assert!(
        out.status.success(),
        "iomark {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is the JSON document")
}

/// A loop device over a file in /dev/shm, detached and deleted on drop.
pub struct LoopDev {
    pub dev: PathBuf,
    backing: PathBuf,
}

impl LoopDev {
    /// Needs root and losetup; `None` (after `require`) when they are missing.
    pub fn new(size: u64, direct_io: bool) -> Option<LoopDev> {
        Self::create(size, direct_io, false)
    }

    /// A loop device whose backing file starts with an MBR holding one Linux partition
    /// from sector 2048 to the end; the kernel exposes it as `<dev>p1`.
    pub fn partitioned(size: u64) -> Option<LoopDev> {
        let d = Self::create(size, true, true)?;
        let part = d.partition();
        if !part.exists() {
            // Kernels built without MSDOS partition parsing do not scan the table: add
            // the partition by hand (BLKPG), as the table describes it.
            if !require(have("addpart"), "addpart (util-linux), to add a partition") {
                return None;
            }
            let ok = Command::new("addpart")
                .arg(&d.dev)
                .args(["1", "2048", &(size / 512 - 2048).to_string()])
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "addpart on {} failed", d.dev.display());
            for _ in 0..100 {
                if part.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        assert!(part.exists(), "{} did not appear", part.display());
        Some(d)
    }

    /// The first partition's device node (`/dev/loopNp1`).
    pub fn partition(&self) -> PathBuf {
        PathBuf::from(format!("{}p1", self.dev.display()))
    }

    fn create(size: u64, direct_io: bool, mbr: bool) -> Option<LoopDev> {
        if !require(is_root(), "root (for loop devices)")
            || !require(have("losetup"), "losetup (util-linux)")
        {
            return None;
        }
        let backing = PathBuf::from(format!(
            "/dev/shm/iomark-test-{}-{}.img",
            std::process::id(),
            rand_suffix()
        ));
        let f = std::fs::File::create(&backing).expect("create backing file in /dev/shm");
        f.set_len(size).expect("size backing file");
        if mbr {
            use std::os::unix::fs::FileExt;
            let mut sector = [0u8; 512];
            let start: u32 = 2048;
            let count: u32 = (size / 512) as u32 - start;
            let e = 0x1BE;
            sector[e + 4] = 0x83; // Linux
            sector[e + 8..e + 12].copy_from_slice(&start.to_le_bytes());
            sector[e + 12..e + 16].copy_from_slice(&count.to_le_bytes());
            sector[510] = 0x55;
            sector[511] = 0xAA;
            f.write_all_at(&sector, 0).expect("write MBR");
        }
        drop(f);
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .args(if mbr { &["-P"][..] } else { &[][..] })
            .arg(format!(
                "--direct-io={}",
                if direct_io { "on" } else { "off" }
            ))
            .arg(&backing)
            .output()
            .expect("losetup runs");
        if !out.status.success() {
            let _ = std::fs::remove_file(&backing);
            let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
            require(false, &format!("a loop device (losetup failed: {why})"));
            return None;
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Some(LoopDev { dev, backing })
    }

    /// Kernel name, e.g. `loop3`.
    pub fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// (read_ios, read_sectors, write_ios, write_sectors) from /sys/block/<dev>/stat.
    pub fn stat(&self) -> [u64; 4] {
        let text = std::fs::read_to_string(format!("/sys/block/{}/stat", self.name())).unwrap();
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        [f[0], f[2], f[4], f[6]]
    }

    pub fn path(&self) -> &Path {
        &self.dev
    }
}

/// Makes an ext4 filesystem on `dev` (no lazy initialisation, so it stays quiet once
/// mounted); false (after `require`) when mkfs.ext4 is missing.
pub fn mkfs_ext4(dev: &Path) -> bool {
    if !require(have("mkfs.ext4"), "mkfs.ext4 (e2fsprogs)") {
        return false;
    }
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
        .arg(dev)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfs.ext4 {} failed", dev.display());
    true
}

/// A checksum of a whole file or device (FNV-1a over its bytes; enough to see a change).
pub fn checksum(path: &Path) -> u64 {
    use std::io::Read;
    let mut f = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return h;
        }
        for &b in &buf[..n] {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A filesystem made and mounted on a block device, unmounted (lazily if busy) on drop.
pub struct Mounted {
    pub dir: tempfile::TempDir,
}

impl Mounted {
    /// mkfs.ext4 then mount; `None` (after `require`) if the tools are missing.
    pub fn ext4(dev: &Path) -> Option<Mounted> {
        if !mkfs_ext4(dev) {
            return None;
        }
        Self::mount(dev, &[])
    }

    /// Mounts `what` (a device, or a filesystem type's source with `-t`) with `args`.
    pub fn mount(what: &Path, args: &[&str]) -> Option<Mounted> {
        if !require(have("mount"), "mount") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(args)
            .arg(what)
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mount {} failed", what.display());
        Some(Mounted { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // A process that just exited may still hold the filesystem for a moment (the
        // kernel tears io_uring rings down asynchronously): retry before giving up.
        let mut ok = false;
        for _ in 0..50 {
            ok = Command::new("umount")
                .arg(self.dir.path())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if !ok {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if self.partition().exists() {
            let _ = Command::new("delpart").arg(&self.dev).arg("1").status();
        }
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}

fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64
}

/// A private zram device (never zram0), reset and removed on drop.
pub struct Zram {
    pub id: u32,
}

impl Zram {
    pub fn new(algo: &str, size: &str) -> Option<Zram> {
        if !require(is_root(), "root (for zram)")
            || !require(
                std::path::Path::new("/sys/class/zram-control/hot_add").exists(),
                "zram (/sys/class/zram-control)",
            )
        {
            return None;
        }
        let id: u32 = std::fs::read_to_string("/sys/class/zram-control/hot_add")
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let z = Zram { id };
        assert_ne!(id, 0, "never use zram0");
        std::fs::write(z.sys("comp_algorithm"), algo).expect("set comp_algorithm");
        std::fs::write(z.sys("disksize"), size).expect("set disksize");
        Some(z)
    }
    pub fn sys(&self, f: &str) -> String {
        format!("/sys/block/zram{}/{f}", self.id)
    }
    pub fn dev(&self) -> String {
        format!("/dev/zram{}", self.id)
    }
    /// (original bytes, compressed bytes) from mm_stat.
    pub fn mm_stat(&self) -> (u64, u64) {
        let t = std::fs::read_to_string(self.sys("mm_stat")).unwrap();
        let v: Vec<u64> = t.split_whitespace().map(|x| x.parse().unwrap()).collect();
        (v[0], v[1])
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = std::fs::write(self.sys("reset"), "1");
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", self.id.to_string());
    }
}
