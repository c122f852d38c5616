//! Safety: iomark never destroys what it was not handed. Block devices in use are never
//! written; devices holding a partition table or a filesystem need --destroy-data on top
//! of --allow-write-device; a full filesystem stops the run with exit 1 and keeps what was
//! measured. Every check compares the device's bytes before and after.

use crate::common::{
    LoopDev, Mounted, assert_refused, assert_success, checksum, iomark, is_root, mkfs_ext4,
    read_json, require, require_tool, run_json, tmp,
};

fn write_cmd(dev: &std::path::Path, extra: &[&str]) -> std::process::Output {
    iomark()
        .args(["run", "--rw", "randwrite", "--io-size", "1m", "-q"])
        .args(extra)
        .arg(dev)
        .output()
        .unwrap()
}

#[test]
fn ext4_device_needs_destroy_data() {
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    if !mkfs_ext4(dev.path()) {
        return;
    }
    let before = checksum(dev.path());
    assert_refused(&write_cmd(dev.path(), &[]), "--allow-write-device");
    assert_refused(
        &write_cmd(dev.path(), &["--allow-write-device"]),
        "an ext4 filesystem (found by libblkid)",
    );
    assert_eq!(
        checksum(dev.path()),
        before,
        "refusals left the device untouched"
    );
    // Both flags: the user said so, the writes go through.
    let out = write_cmd(dev.path(), &["--allow-write-device", "--destroy-data"]);
    assert_success(&out);
    assert_ne!(checksum(dev.path()), before, "and then it was written");
}

#[test]
fn gpt_labelled_device_needs_destroy_data() {
    let Some(dev) = LoopDev::new(16 << 20, true) else {
        return;
    };
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(dev.path())
            .unwrap();
        let mut mbr = [0u8; 512];
        mbr[0x1BE + 4] = 0xEE; // protective MBR
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        f.write_all_at(&mbr, 0).unwrap();
        f.write_all_at(b"EFI PART", 512).unwrap();
        f.write_all_at(b"EFI PART", (16 << 20) - 512).unwrap();
        f.sync_all().unwrap();
    }
    let before = checksum(dev.path());
    assert_refused(
        &write_cmd(dev.path(), &["--allow-write-device"]),
        "GPT partition table",
    );
    assert_eq!(checksum(dev.path()), before);
}

/// A private 64 MiB loop device with ext4 mounted read-only (so the kernel itself never
/// writes the device while a test compares its bytes: a read-write ext4 commits its
/// journal every few seconds); `None` (after `require`) without the tools.
fn ext4_mounted_read_only() -> Option<(LoopDev, Mounted)> {
    let dev = LoopDev::new(64 << 20, true)?;
    if !mkfs_ext4(dev.path()) {
        return None;
    }
    let mnt = Mounted::mount(dev.path(), &["-o", "ro"])?;
    Some((dev, mnt))
}

#[test]
fn mounted_device_is_never_written() {
    let Some((dev, _mnt)) = ext4_mounted_read_only() else {
        return;
    };
    let before = checksum(dev.path());
    let out = write_cmd(dev.path(), &["--allow-write-device", "--destroy-data"]);
    assert_refused(&out, "mounted");
    assert_eq!(
        checksum(dev.path()),
        before,
        "a mounted device is left alone"
    );
}

/// A study whose first runs read a mounted device and whose later ones write it: the
/// refusal came when its first writing run opened the device, after the reads had run
/// (`suite quick` read it for a second first; a fio file's read job was saved), and
/// `--dry-run` printed the plan as fine. Now the plan is refused before any I/O, dry or
/// not, as for a device written without --allow-write-device.
#[test]
fn a_study_that_would_write_a_mounted_device_is_refused_before_any_io() {
    let Some((dev, _mnt)) = ext4_mounted_read_only() else {
        return;
    };
    let before = dev.stat();
    for dry in [true, false] {
        let mut cmd = iomark();
        cmd.args(["suite", "quick", "--runtime", "0.2s", "--ramp", "0", "-q"])
            .args(["--allow-write-device", "--destroy-data"]);
        if dry {
            cmd.arg("--dry-run");
        }
        let out = cmd.arg(dev.path()).output().unwrap();
        assert_refused(&out, "mounted");
    }
    assert_eq!(
        dev.stat()[0],
        before[0],
        "the device was read before the refusal"
    );
}

#[test]
fn blank_device_is_written_with_allow_write_device() {
    let Some(dev) = LoopDev::new(16 << 20, true) else {
        return;
    };
    let doc = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--io-size",
        "1m",
        "--allow-write-device",
        dev.path().to_str().unwrap(),
    ]);
    assert_eq!(doc["runs"][0]["repetitions"][0]["write"]["ios"], 256);
}

#[test]
fn full_filesystem_stops_with_exit_1_and_keeps_results() {
    if !require("root (to mount a small tmpfs)", is_root()) {
        return;
    }
    let Some(mnt) = Mounted::mount(
        std::path::Path::new("tmpfs"),
        &["-t", "tmpfs", "-o", "size=8m"],
    ) else {
        return;
    };
    let out_dir = tmp();
    let results = out_dir.path().join("r.json");
    // A sparse 64 MiB file on an 8 MiB filesystem: writes into its holes run out of space.
    let f = mnt.path().join("sparse.dat");
    std::fs::File::create(&f)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let out = iomark()
        .args([
            "run",
            "--rw",
            "write",
            "--bs",
            "1m",
            "--overwrite",
            "-q",
            "-o",
        ])
        .arg(&results)
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("No space left") && err.contains("sparse.dat"),
        "{err}"
    );
    let doc = read_json(&results);
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "interrupted");
    assert!(run["error"].as_str().unwrap().contains("No space left"));
    let ios = run["repetitions"][0]["write"]["ios"].as_u64().unwrap();
    assert!(
        (1..=8).contains(&ios),
        "kept what was written before the disk filled: {ios}"
    );
    assert!(f.exists(), "a file iomark did not create is not removed");

    // A new file that does not fit: refused before measuring, and not left behind.
    let g = mnt.path().join("new.dat");
    let out = iomark()
        .args(["run", "--rw", "write", "--size", "64m", "-q"])
        .arg(&g)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("would need 64 MiB"), "{err}");
    assert!(!g.exists(), "no file is made");
}

#[test]
fn swap_device_is_never_written() {
    if !require_tool("mkswap", "mkswap (util-linux)")
        || !require_tool("swapon", "swapon (util-linux)")
    {
        return;
    }
    let Some(dev) = LoopDev::new(32 << 20, false) else {
        return;
    };
    let ok = std::process::Command::new("mkswap")
        .arg(dev.path())
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "mkswap failed");
    let on = std::process::Command::new("swapon")
        .arg(dev.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(on, "swapon {} failed", dev.path().display());
    // swapoff even if an assertion below fails.
    struct Off<'a>(&'a std::path::Path);
    impl Drop for Off<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("swapoff").arg(self.0).status();
        }
    }
    let _off = Off(dev.path());
    // The kernel itself may page out to an active swap device at any moment, so its bytes
    // cannot be compared; the refusal comes before iomark opens the device for writing.
    assert_refused(
        &write_cmd(dev.path(), &["--allow-write-device", "--destroy-data"]),
        "in use as swap",
    );
}

/// A mistyped device name (`/dev/nvme9n1` for `/dev/nvme0n1`) made a file in devtmpfs,
/// in memory, and measured it as if it were the device: refused now, nothing made.
#[test]
fn a_device_name_that_does_not_exist_is_not_made_a_file() {
    let path = format!("/dev/iomark-no-such-disk-{}", std::process::id());
    for sub in [
        &[
            "run",
            "--rw",
            "randread",
            "--size",
            "16m",
            "--runtime",
            "0.2",
        ][..],
        &["suite", "corners", "--size", "16m", "--runtime", "0.2"],
    ] {
        let out = iomark().args(sub).arg(&path).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sub:?}: {err}");
        assert!(err.contains("holds device nodes (devtmpfs)"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!std::path::Path::new(&path).exists(), "{path} was made");
    }
}

/// Probe 14: the main job in a read-only directory printed its plan, then advised "use a
/// read workload" (quick has no --rw); as a user who may not write the directory it went
/// as far; a read-only loop device was to be made writable with `blockdev --setrw`, which
/// does not change a loop device attached with `-r`; cut in its first ramp, it said "the
/// measurements so far are kept" with nothing kept.
#[test]
fn what_cannot_be_written_is_said_with_a_fix_that_works() {
    if !require("root (bind mounts, loop devices, runuser)", is_root())
        || !require_tool("runuser", "runuser (util-linux)")
    {
        return;
    }
    let dir = tmp();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let Some(_m) = Mounted::mount(&ro, &["--bind", "-o", "ro"]) else {
        return;
    };
    // Mounted::mount mounts on its own directory: the read-only view is there.
    let view = _m.path().to_path_buf();
    let out = iomark()
        .current_dir(&view)
        .args(["quick", "--runtime", "1s"])
        .output()
        .unwrap();
    assert_refused(
        &out,
        "which is on a read-only filesystem; give a directory it may write: iomark quick DIR",
    );
    assert!(
        out.stdout.is_empty(),
        "the plan was printed before the refusal: {out:?}"
    );
    // The null engine makes no file: the read-only directory is no reason to refuse it.
    let out = iomark()
        .current_dir(&view)
        .args([
            "quick",
            "--engine",
            "null",
            "--runtime",
            "50ms",
            "--ramp",
            "0",
        ])
        .args(["--size", "16m"])
        .output()
        .unwrap();
    assert!(out.status.success(), "null engine refused: {out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no test file was made"),
        "{out:?}"
    );
    // A directory this user may not write; in /tmp, with a copy of the binary, so that
    // `nobody` reaches both whatever the checkout's permissions.
    let open = tempfile::tempdir().unwrap();
    let mode = |m| std::os::unix::fs::PermissionsExt::from_mode(m);
    std::fs::set_permissions(open.path(), mode(0o755)).unwrap();
    let bin = open.path().join("iomark");
    std::fs::copy(crate::common::iomark_bin(), &bin).unwrap();
    let closed = open.path().join("closed");
    std::fs::create_dir(&closed).unwrap();
    std::fs::set_permissions(&closed, mode(0o755)).unwrap();
    let out = std::process::Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .arg(&bin)
        .args(["quick", "--runtime", "1s"])
        .arg(&closed)
        .output()
        .unwrap();
    assert_refused(&out, "which is not writable by this user");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert_eq!(std::fs::read_dir(&closed).unwrap().count(), 0);

    // A loop device attached read-only.
    let img = dir.path().join("img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let lo = std::process::Command::new("losetup")
        .args(["-r", "-f", "--show"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(lo.status.success(), "{lo:?}");
    let dev = String::from_utf8_lossy(&lo.stdout).trim().to_string();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup")
                .args(["-d", &self.0])
                .status();
        }
    }
    let _d = Detach(dev.clone());
    let out = write_cmd(
        std::path::Path::new(&dev),
        &["--allow-write-device", "--destroy-data"],
    );
    assert_refused(
        &out,
        &format!("detach it (losetup -d {dev}) and attach it again without -r"),
    );
    // What the old advice did: BLKROSET succeeds and the device stays read-only.
    let _ = std::process::Command::new("blockdev")
        .args(["--setrw", &dev])
        .status();
    let out = write_cmd(
        std::path::Path::new(&dev),
        &["--allow-write-device", "--destroy-data"],
    );
    assert_refused(&out, "is read-only");

    // Cut in the first ramp: nothing kept, and said so.
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let child = crate::common::iomark_process()
        .current_dir(&work)
        .args(["quick", "--size", "32m", "--ramp", "5s", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    crate::common::signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted before any run was measured; nothing was kept"),
        "{err}"
    );
}
