//! Shared helpers for the integration tests: temporary directories, skipping with a
//! reason (or failing when IOMARK_REQUIRE_ALL=1), running the binary and reading its JSON,
//! loop devices, mounts and zram devices that clean up after themselves even when a test
//! fails, mkfs and checksums.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use serde_json::Value;

/// A temporary directory under the project's target dir: a real disk filesystem that
/// takes O_DIRECT (unlike a tmpfs /tmp), removed on drop.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Returns true when the test may go on (`ok`); otherwise prints `skipped: <what>`, or
/// panics when CI demands every test run (IOMARK_REQUIRE_ALL=1).
pub fn require(what: &str, ok: bool) -> bool {
    if ok {
        return true;
    }
    if std::env::var("IOMARK_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("required but missing: {what} (IOMARK_REQUIRE_ALL=1)");
    }
    eprintln!("skipped: {what}");
    false
}

/// `require` for a command on PATH: `what` says what it is and where it comes from.
pub fn require_tool(cmd: &str, what: &str) -> bool {
    require(what, have(cmd))
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

/// The binary under test: this build's, or the one named by IOMARK_TEST_BIN (to show
/// that a regression test fails on an older build).
pub fn iomark_bin() -> PathBuf {
    std::env::var_os("IOMARK_TEST_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_iomark")),
        PathBuf::from,
    )
}

/// The binary, with RUST_BACKTRACE unset so that errors print as users see them.
pub fn iomark() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(iomark_bin());
    c.env_remove("RUST_BACKTRACE");
    c
}

/// The binary as a plain `std::process::Command`, for tests that spawn it and signal it
/// or run it through another program; RUST_BACKTRACE unset as in `iomark()`.
pub fn iomark_process() -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(iomark_bin());
    c.env_remove("RUST_BACKTRACE");
    // The signals a terminal sends take their default action in the child, as from an
    // interactive shell: a test run started in the background of a script inherits them
    // ignored (SIGINT and SIGQUIT), and `ctrl_c_while_planning_ends_at_once` then saw
    // iomark run on for 20 s.
    // Safety: `signal` is async-signal-safe, and nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP, libc::SIGTERM] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    c
}

/// Sends signal `sig` to a child process of this test.
pub fn signal(child: &Child, sig: i32) {
    // Safety: a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// Asserts that a finished command succeeded, showing its stderr if not.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts that iomark refused (exit status 2) with one line of stderr containing
/// `needle`.
pub fn assert_refused(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
}

/// Runs iomark with `args`, expects success (else fails showing its stderr), returns
/// what it printed on stdout.
pub fn stdout_of<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S]) -> Vec<u8> {
    let out = iomark().args(args).output().expect("iomark runs");
    assert!(
        out.status.success(),
        "iomark {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs iomark with `args` plus `--json --quiet`, expects success, returns the document.
pub fn run_json(args: &[&str]) -> Value {
    let out = stdout_of(&[args, &["--json", "--quiet"]].concat());
    serde_json::from_slice(&out).expect("stdout is the JSON document")
}

/// The warnings of a results document's first run that `keep` keeps.
pub fn warnings_where(doc: &Value, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let w = doc["runs"][0]["warnings"].as_array().expect("warnings");
    (w.iter().filter_map(|w| w.as_str()))
        .filter(|w| keep(w))
        .map(str::to_string)
        .collect()
}

/// The plan of `iomark suite <args> --dry-run --json` (expects success).
pub fn dry_run(args: &[&str]) -> Value {
    let out = stdout_of(&[&["suite"], args, &["--dry-run", "--json"]].concat());
    serde_json::from_slice(&out).expect("stdout is the plan")
}

/// `iomark compare <files> --format json` (expects success), parsed.
pub fn compare_json(files: &[PathBuf]) -> Value {
    let mut args = vec![OsStr::new("compare")];
    args.extend(files.iter().map(|f| f.as_os_str()));
    args.extend([OsStr::new("--format"), OsStr::new("json")]);
    serde_json::from_slice(&stdout_of(&args)).expect("stdout is the comparison")
}

/// A JSON file (a results document, say) read and parsed.
pub fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Writes `doc` to `<dir>/<name>.json` and returns the path.
pub fn write_json(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, doc.to_string()).unwrap();
    p
}

/// `iomark report <files> -o <out>` (expects success); returns the page.
pub fn report(files: &[&Path], out: &Path) -> String {
    let o = iomark()
        .arg("report")
        .args(files)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert_success(&o);
    std::fs::read_to_string(out).unwrap()
}

/// The whitespace-separated numbers of a sysfs file (a block device's `stat`, zram's
/// `mm_stat`).
pub fn sys_numbers(path: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    text.split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

/// A block device's or partition's counters, /sys/class/block/<name>/stat.
pub fn block_stat(name: &str) -> Vec<u64> {
    sys_numbers(&format!("/sys/class/block/{name}/stat"))
}

/// A loop device over a file in /dev/shm (detached and the file deleted on drop), or
/// over another device (`over`; detached on drop).
pub struct LoopDev {
    pub dev: PathBuf,
    /// The file iomark's tests made for it; `None` over a device.
    backing: Option<PathBuf>,
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
            if !require_tool("addpart", "addpart (util-linux), to add a partition") {
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

    /// A loop device over `lower` (a device or file that stays), starting `offset` bytes
    /// in (`losetup -o OFFSET`).
    pub fn over(lower: &Path, offset: u64) -> Option<LoopDev> {
        if !require("root (for loop devices)", is_root())
            || !require_tool("losetup", "losetup (util-linux)")
        {
            return None;
        }
        let out = Command::new("losetup")
            .args(["-f", "--show", "-o", &offset.to_string()])
            .arg(lower)
            .output()
            .expect("losetup runs");
        assert!(
            out.status.success(),
            "losetup over {}: {}",
            lower.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Some(LoopDev { dev, backing: None })
    }

    /// The first partition's device node (`/dev/loopNp1`).
    pub fn partition(&self) -> PathBuf {
        PathBuf::from(format!("{}p1", self.dev.display()))
    }

    fn create(size: u64, direct_io: bool, mbr: bool) -> Option<LoopDev> {
        if !require("root (for loop devices)", is_root())
            || !require_tool("losetup", "losetup (util-linux)")
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
            require(&format!("a loop device (losetup failed: {why})"), false);
            return None;
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Some(LoopDev {
            dev,
            backing: Some(backing),
        })
    }

    /// Kernel name, e.g. `loop3`.
    pub fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// (read_ios, read_sectors, write_ios, write_sectors) from /sys/block/<dev>/stat.
    pub fn stat(&self) -> [u64; 4] {
        let f = block_stat(&self.name());
        [f[0], f[2], f[4], f[6]]
    }

    pub fn path(&self) -> &Path {
        &self.dev
    }
}

/// Makes an ext4 filesystem on `dev` (no lazy initialisation, so it stays quiet once
/// mounted); false (after `require`) when mkfs.ext4 is missing.
pub fn mkfs_ext4(dev: &Path) -> bool {
    if !require_tool("mkfs.ext4", "mkfs.ext4 (e2fsprogs)") {
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
        if !require_tool("mount", "mount") {
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
        if let Some(b) = &self.backing {
            let _ = std::fs::remove_file(b);
        }
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
        if !require("root (for zram)", is_root())
            || !require(
                "zram (/sys/class/zram-control)",
                Path::new("/sys/class/zram-control/hot_add").exists(),
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
        let v = sys_numbers(&self.sys("mm_stat"));
        (v[0], v[1])
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = std::fs::write(self.sys("reset"), "1");
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", self.id.to_string());
    }
}

/// Writes `bytes` at `offset` of a device or file and syncs it.
pub fn write_at(path: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
    f.write_all_at(bytes, offset).unwrap();
    f.sync_all().unwrap();
}

/// What `blkid -p` (low-level probing, no cache) finds on `dev`, as `KEY=value` lines
/// (`TYPE=ext4`, `PTTYPE=dos`); empty when it finds nothing. `None` (after `require`)
/// without blkid.
pub fn blkid_probe(dev: &Path) -> Option<String> {
    if !require_tool("blkid", "blkid (util-linux)") {
        return None;
    }
    let out = Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(dev)
        .output()
        .expect("blkid runs");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `cmd args…` (from `package`) and asserts it succeeded; false (after `require`)
/// when the command is missing.
pub fn run_tool(cmd: &str, package: &str, args: &[&OsStr]) -> bool {
    if !require_tool(cmd, &format!("{cmd} ({package})")) {
        return false;
    }
    let out = Command::new(cmd).args(args).output().expect("tool runs");
    assert!(
        out.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// A symbolic link flipped between two targets as fast as a thread can rename, until
/// dropped (which stops and joins the thread, even when the test fails).
pub struct FlippingLink {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl FlippingLink {
    /// Starts flipping `link` between `a` and `b` (each flip an atomic rename of a fresh
    /// link over it, so the link always exists).
    pub fn start(link: &Path, a: &Path, b: &Path) -> FlippingLink {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let tmp = link.with_extension("flip");
        std::os::unix::fs::symlink(a, link).unwrap();
        let (link, a, b, flag) = (
            link.to_path_buf(),
            a.to_path_buf(),
            b.to_path_buf(),
            stop.clone(),
        );
        let thread = std::thread::spawn(move || {
            let mut flips = 0u64;
            while !flag.load(Ordering::Relaxed) {
                let to = if flips.is_multiple_of(2) { &b } else { &a };
                std::os::unix::fs::symlink(to, &tmp).unwrap();
                std::fs::rename(&tmp, &link).unwrap();
                flips += 1;
            }
            flips
        });
        FlippingLink {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops flipping; returns how many flips there were.
    pub fn stop(mut self) -> u64 {
        self.halt()
    }

    fn halt(&mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread
            .take()
            .map_or(0, |t| t.join().unwrap_or_default())
    }
}

impl Drop for FlippingLink {
    fn drop(&mut self) {
        self.halt();
    }
}

/// How a child run under [`run_bounded`] ended.
pub struct Bounded {
    /// Exit status; `None` when a signal ended it (the deadline's SIGKILL, or an abort).
    pub code: Option<i32>,
    /// Killed at the deadline.
    pub timed_out: bool,
    /// Peak resident memory (the kernel's `ru_maxrss`, VmHWM), bytes.
    pub max_rss: u64,
    pub elapsed: std::time::Duration,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// Runs `cmd` with its address space limited to `as_limit` bytes (RLIMIT_AS, so a
/// runaway allocation fails in the child instead of taking the machine) and killed after
/// `timeout`; returns how it ended and its peak resident memory (from `wait4`).
pub fn run_bounded(mut cmd: Command, timeout: std::time::Duration, as_limit: u64) -> Bounded {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Safety: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: as_limit,
                rlim_max: as_limit,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = std::time::Instant::now();
    // Reaped below with wait4 (which std's wait cannot do: it gives the peak RSS).
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().expect("spawn the bounded command");
    let pipe = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = pipe(Box::new(child.stdout.take().unwrap()));
    let err = pipe(Box::new(child.stderr.take().unwrap()));
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // Safety: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    loop {
        // Safety: waits for our own child; status and ru are valid for writing.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4: {}", std::io::Error::last_os_error());
        if start.elapsed() > timeout && !timed_out {
            timed_out = true;
            // Safety: a signal to our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let elapsed = start.elapsed();
    Bounded {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        timed_out,
        max_rss: ru.ru_maxrss as u64 * 1024,
        elapsed,
        stdout: out.join().unwrap(),
        stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
    }
}

/// A FIFO at `path` (removed with its temporary directory).
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // Safety: a valid NUL-terminated path.
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(r, 0, "mkfifo {}", path.display());
}

/// MemAvailable from /proc/meminfo, bytes.
pub fn mem_available() -> u64 {
    let s = std::fs::read_to_string("/proc/meminfo").unwrap();
    let l = s.lines().find(|l| l.starts_with("MemAvailable:")).unwrap();
    l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The headless browser on this machine, if any (chromium, chromium-browser or
/// google-chrome).
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| have(c))
}

/// Runs headless `browser` with `args` and a profile under `dir` (no network, no sandbox:
/// tests run as root).
pub fn browse(browser: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .output()
        .unwrap()
}

/// A screenshot of `page` in a window `width` × `height`: the PNG's path under `dir`,
/// its width and height from its header, and its size in bytes.
pub fn screenshot(
    browser: &str,
    dir: &Path,
    page: &Path,
    width: u32,
    height: u32,
) -> (PathBuf, u32, u32, u64) {
    let name = page.file_stem().unwrap().to_string_lossy().into_owned();
    let png = dir.join(format!("{name}-{width}.png"));
    browse(
        browser,
        dir,
        &[
            &format!("--window-size={width},{height}"),
            &format!("--screenshot={}", png.display()),
            &format!("file://{}", page.display()),
        ],
    );
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    assert_eq!(&bytes[1..4], b"PNG", "{} is a PNG", png.display());
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (png.clone(), be(16), be(20), bytes.len() as u64)
}

/// A cgroup (v1 blkio, or v2 io) whose processes may write each of some block devices at
/// no more than a given rate: a slow device made of a fast one. Removed on drop (its
/// processes must have ended by then).
pub struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    /// Writes to each of `devs` limited to `bps` bytes a second for the processes put in
    /// it; `None` (with the reason printed, or a failure under IOMARK_REQUIRE_ALL=1)
    /// where neither cgroup interface is there.
    pub fn new(devs: &[&LoopDev], bps: u64) -> Option<Throttle> {
        let name = format!("iomark-test-{}-{}", std::process::id(), rand_suffix());
        let v1 = Path::new("/sys/fs/cgroup/blkio");
        let (dir, file, line): (PathBuf, &str, fn(&str, u64) -> String) =
            if v1.join("blkio.throttle.write_bps_device").exists() {
                (v1.join(&name), "blkio.throttle.write_bps_device", |d, b| {
                    format!("{d} {b}")
                })
            } else {
                let v2 = Path::new("/sys/fs/cgroup");
                let v2 = [v2.join("unified"), v2.to_path_buf()]
                    .into_iter()
                    .find(|p| p.join("cgroup.controllers").exists());
                let ok = v2.as_ref().is_some_and(|p| {
                    std::fs::read_to_string(p.join("cgroup.subtree_control"))
                        .is_ok_and(|c| c.split_whitespace().any(|w| w == "io"))
                });
                if !require("a cgroup blkio or io controller (write throttling)", ok) {
                    return None;
                }
                (v2.unwrap().join(&name), "io.max", |d, b| {
                    format!("{d} wbps={b}")
                })
            };
        if !require("a cgroup of our own", std::fs::create_dir(&dir).is_ok()) {
            return None;
        }
        let t = Throttle { dir };
        for d in devs {
            let dev = std::fs::read_to_string(format!("/sys/block/{}/dev", d.name())).ok()?;
            let set = std::fs::write(t.dir.join(file), line(dev.trim(), bps));
            if !require("write throttling on a loop device", set.is_ok()) {
                return None;
            }
        }
        Some(t)
    }

    /// `cmd` started inside the cgroup (a shell joins it, then becomes `cmd`).
    pub fn wrap(&self, cmd: &Command) -> Command {
        let mut sh = Command::new("sh");
        sh.arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(self.dir.join("cgroup.procs"))
            .arg(cmd.get_program())
            .args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        sh
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // A cgroup goes away once empty: its processes may take a moment to be reaped.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("left behind: cgroup {}", self.dir.display());
    }
}

/// Held by the tests that time a pace (`--rate`, `--thinktime`, `--startdelay`) or a
/// signal into a run (`interrupt.rs`), and by those that load every CPU for seconds
/// (mpirun's ranks poll while they wait; the MPI build): on 2 CPUs the two together
/// starved a paced job to 44% of its cap. The other tests still run beside them.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Held by the tests that drop the page cache machine-wide (`--drop-caches`) and by
/// those that count a device's reads against a warm (or just dropped) cache: a drop by
/// one in the middle of another read 10 to 18 blocks of a warm cache from the device.
pub fn page_cache_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// fio itself reads the job file `job` (`fio --parse-only`, in the file's directory, where
/// fio keeps a verify job's state file) without an error.
pub fn assert_fio_parses(job: &Path) {
    let out = Command::new("fio")
        .current_dir(job.parent().unwrap_or(Path::new(".")))
        .arg("--parse-only")
        .arg(job)
        .output()
        .unwrap();
    assert_success(&out);
}

/// The plan of `iomark fio JOB --dry-run --json` (expects success).
pub fn fio_plan(job: &Path) -> Value {
    let out = stdout_of(&[
        OsStr::new("fio"),
        job.as_os_str(),
        "--dry-run".as_ref(),
        "--json".as_ref(),
    ]);
    serde_json::from_slice(&out).expect("stdout is the plan")
}

/// `iomark fio FILE ARGS --json --quiet` with `${DIR}` set to `dir` (expects success): the
/// results document.
pub fn iomark_fio_json(file: &Path, dir: &Path, args: &[&str]) -> Value {
    let out = iomark()
        .arg("fio")
        .arg(file)
        .args(args)
        .args(["--json", "--quiet"])
        .env("DIR", dir)
        .output()
        .unwrap();
    assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("stdout is the JSON document")
}

/// A btrfs made over loop devices in /dev/shm and mounted with `opts` (`-o` options),
/// unmounted, then the devices detached, on drop; `None` (after `require`) when root,
/// losetup or mkfs.btrfs (btrfs-progs) is missing. `mkfs` options go before the devices
/// (`-d raid1` for two).
pub struct Btrfs {
    pub mnt: Mounted,
    pub devs: Vec<LoopDev>,
}

impl Btrfs {
    pub fn new(devices: usize, size: u64, mkfs: &[&str], opts: &str) -> Option<Btrfs> {
        if !require_tool("mkfs.btrfs", "mkfs.btrfs (btrfs-progs)") {
            return None;
        }
        let devs: Vec<LoopDev> = (0..devices)
            .map(|_| LoopDev::new(size, false))
            .collect::<Option<_>>()?;
        let ok = Command::new("mkfs.btrfs")
            .args(["-q", "-f"])
            .args(mkfs)
            .args(devs.iter().map(|d| &d.dev))
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mkfs.btrfs failed");
        // A multi-device btrfs mounts once the kernel has seen all its members.
        let _ = Command::new("btrfs").args(["device", "scan"]).status();
        let mnt = Mounted::mount(&devs[0].dev, &["-t", "btrfs", "-o", opts])?;
        Some(Btrfs { mnt, devs })
    }

    /// Bytes of data extents on the devices (`btrfs filesystem df`: Data used), after a
    /// sync, so that what is written is counted as stored.
    pub fn data_used(&self) -> u64 {
        let _ = Command::new("sync").status();
        let out = Command::new("btrfs")
            .args(["filesystem", "df", "-b"])
            .arg(self.mnt.path())
            .output()
            .expect("btrfs filesystem df runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with("Data"))
            .unwrap_or_else(|| panic!("no Data line in {text}"));
        let used = line.split("used=").nth(1).expect("used=");
        used.trim().parse().expect("bytes")
    }
}
