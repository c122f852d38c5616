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
        drop(f);
        let out = Command::new("losetup")
            .args(["-f", "--show"])
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

impl Drop for LoopDev {
    fn drop(&mut self) {
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
