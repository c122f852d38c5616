//! Making a new file target: created with O_EXCL, marked, laid out with the workload's
//! data (progress every MiB, Ctrl-C honoured) or only allocated (`--new-file allocate`),
//! then checked against the alignment direct I/O needs; and `preflight`, the checks made
//! for every run of a plan before the first starts (a new file: never in devtmpfs, and
//! room for it).

use std::os::fd::AsRawFd;

use super::*;
use crate::plan::new_file::NewFile;

impl Target {
    pub(super) fn create(
        spec: &Spec,
        policy: &TargetPolicy,
        path: PathBuf,
        go_on: &mut dyn FnMut(u64, u64) -> bool,
        layout: &mut DataGen,
    ) -> Result<Target> {
        let parent = crate::results::store::directory_of(&path).to_path_buf();
        if !parent.is_dir() {
            return Err(Error::target(format!(
                "directory {} does not exist; create it first or choose another target",
                parent.display()
            )));
        }
        new_file_in_devtmpfs(&path, &parent)?;
        let span = spec.size.unwrap_or(DEFAULT_NEW_FILE_SIZE);
        let len = spec.offset + span;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| open_error(&path, &e, false, true))?;
        let md = file.metadata().ok();
        let identity = md.as_ref().map(|m| (m.dev(), m.ino()));
        let device = md.as_ref().and_then(|m| BlockDev::of_file(file.as_fd(), m));
        mark(&file);
        unfinished(&path, identity, true);
        let mut t = Target {
            kind: TargetKind::File,
            path: path.clone(),
            file: Some(file),
            base: spec.offset,
            span,
            align: 1,
            // From here on the file is ours: Drop removes it if anything below fails, and
            // `keep` applies only once the file is complete.
            created: true,
            identity,
            keep: false,
            hold: false,
            device,
            fs: FsInfo::of_path(&path),
            left_by: None,
            remark: false,
        };
        // Check what can fail cheaply before writing a whole file.
        t.check_geometry(spec)?;
        if spec.direct {
            // Some filesystems refuse O_DIRECT: try it on the descriptor, and switch back
            // for the buffered layout.
            let f = t.file.as_ref().expect("just opened").as_fd();
            sys::set_direct(f)
                .and_then(|()| sys::set_status_flags(f, 0, sys::O_DIRECT))
                .map_err(|e| open_error(&path, &e, true, true))?;
        }
        let f = t.file.as_ref().expect("just opened");
        let prepared = match spec.new_file {
            NewFile::Write => Self::lay_out(f, len, layout, go_on),
            NewFile::Allocate => Self::allocate(f, len).map(|()| {
                go_on(len, len);
            }),
        };
        prepared.map_err(|e| match e.raw_os_error() {
            Some(sys::ENOSPC) => Error::runtime(format!(
                "no space left on the filesystem of {} for a {} file; free space or use a smaller --size",
                path.display(),
                fmt_size(len)
            )),
            Some(sys::EINTR) => Error::runtime(format!(
                "interrupted while laying out {}; nothing was measured",
                path.display()
            )),
            Some(sys::EFBIG) => Error::target(format!(
                "--size {} is larger than the filesystem of {} allows for one file; use a smaller --size",
                fmt_size(len),
                path.display()
            )),
            _ => Error::io(format!("cannot write {}", path.display()), &e),
        })?;
        if sync_flags(spec) != 0 {
            // The layout was not synchronous (it is not measured): make it stable now, so
            // its writeback does not fall in the measured window, and open the same file
            // again, through its descriptor, with the O_SYNC or O_DSYNC the run asked for
            // (F_SETFL cannot add them).
            let reopen = |f: &File| -> io::Result<File> {
                f.sync_data()?;
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(sync_flags(spec))
                    .open(format!("/proc/self/fd/{}", f.as_raw_fd()))
            };
            let synced = reopen(t.file.as_ref().expect("just opened"))
                .map_err(|e| Error::io(format!("cannot reopen {}", path.display()), &e))?;
            t.file = Some(synced);
        }
        let f = t.file.as_ref().expect("just opened");
        if spec.direct {
            // Switch the same descriptor to O_DIRECT, rather than reopening by path.
            if let Err(e) = sys::set_direct(f.as_fd()) {
                return Err(open_error(&path, &e, true, true));
            }
        }
        // No access time written by the reads (as `Target::open`).
        let _ = sys::set_status_flags(f.as_fd(), sys::O_NOATIME, 0);
        t.keep = policy.keep;
        t.hold = policy.hold;
        Ok(t)
    }

    /// Writes `len` bytes of random data, so that reads hit real blocks and not holes
    /// (which a filesystem answers without touching the device).
    fn lay_out(
        f: &File,
        len: u64,
        datagen: &mut DataGen,
        go_on: &mut dyn FnMut(u64, u64) -> bool,
    ) -> io::Result<()> {
        // Reserve the space first, so a full filesystem fails now and not halfway.
        crate::io::space::reserve(f.as_fd(), len)?;
        let mut buf = vec![0u8; 1 << 20];
        let mut w = f;
        let mut left = len;
        while left > 0 {
            if !go_on(len - left, len) {
                return Err(io::Error::from_raw_os_error(sys::EINTR));
            }
            let n = left.min(buf.len() as u64) as usize;
            // The whole buffer: the generator makes whole units, and the last piece of
            // a file whose size is no multiple of one (fio's `size` split between
            // `nrfiles`) would end inside one.
            datagen.fill(&mut buf);
            w.write_all(&buf[..n])?;
            left -= n as u64;
        }
        go_on(len, len);
        f.sync_all()
    }

    /// Reserves `len` bytes and writes nothing (`--new-file allocate`, fio's way with a
    /// job that only writes): unwritten extents where the filesystem has them, a sparse
    /// file where it has not. Synced, so the allocation's journal commit falls before
    /// the measurement.
    fn allocate(f: &File, len: u64) -> io::Result<()> {
        crate::io::space::reserve(f.as_fd(), len)?;
        if f.metadata()?.len() < len {
            f.set_len(len)?;
        }
        f.sync_all()
    }

    /// Checks block size, offset and span against the target's direct-I/O alignment.
    pub(super) fn check_geometry(&mut self, spec: &Spec) -> Result<()> {
        if self.span == 0 {
            // An existing empty file, its length taken for the span: no block fits.
            return Err(Error::target(format!(
                "{} is empty (0 B), and without --size its length is the span; give a --size to write (e.g. --size 64m)",
                self.path.display()
            )));
        }
        if spec.buf_bs() > self.span {
            let (bs, span) = crate::units::fmt_sizes_apart(spec.buf_bs(), self.span);
            return Err(Error::target(format!(
                "--bs {bs} is larger than the span of {} ({span}); use a smaller --bs or a larger --size",
                self.path.display(),
            )));
        }
        spec.verify_room(self.span)?;
        hipri_polls(spec, &self.path, self.device.as_ref())?;
        if !spec.direct {
            return Ok(());
        }
        let file = self.file.as_ref().expect("opened above");
        self.align = direct_alignment(file, self.kind, self.device.as_ref());
        direct_aligned(spec, self.align, &self.path)
    }
}

/// Refuses a direct-I/O run whose sizes or offset are not multiples of `a`, the
/// alignment direct I/O needs on `path`.
fn direct_aligned(spec: &Spec, a: u64, path: &Path) -> Result<()> {
    if !spec.bs.is_multiple_of(a) {
        return Err(Error::target(format!(
            "--bs {} is not a multiple of {a} bytes, the alignment direct I/O needs on {}; use a multiple of {a} or --buffered",
            spec.bs,
            path.display()
        )));
    }
    let mixes = (spec
        .bs_mix
        .as_ref()
        .map(|m| (m.opt(), m.sizes()))
        .into_iter())
    .chain((spec.write_bs.as_ref()).map(|w| (format!("--write-bs {}", w.text()), w.sizes())));
    for (opt, sizes) in mixes {
        if let Some(bad) = sizes.into_iter().find(|b| !b.is_multiple_of(a)) {
            return Err(Error::target(format!(
                "{opt} has {bad} bytes, not a multiple of {a} bytes, the alignment direct I/O needs on {}; use multiples of {a} or --buffered",
                path.display()
            )));
        }
    }
    if !spec.offset.is_multiple_of(a) {
        return Err(Error::target(format!(
            "--offset {} is not a multiple of {a} bytes, the alignment direct I/O needs on {}; use a multiple of {a} or --buffered",
            spec.offset,
            path.display()
        )));
    }
    Ok(())
}

/// Refuses `--hipri` on a target whose device has no poll queues (`device`: the block
/// device it is or lies on).
fn hipri_polls(spec: &Spec, path: &Path, device: Option<&BlockDev>) -> Result<()> {
    if !spec.engine_opts.hipri {
        return Ok(());
    }
    let queue = device.map(|d| d.disk_dir().join("queue/io_poll"));
    let polls = queue.as_ref().and_then(|q| fs::read_to_string(q).ok());
    if polls.as_deref().map(str::trim) == Some("1") {
        return Ok(());
    }
    // ("(no block device is not 1)" was said of a file on tmpfs.)
    let why = match queue {
        Some(q) => format!("{} is not 1", q.display()),
        None => "it lies on no block device".into(),
    };
    Err(Error::usage(format!(
        "--hipri polls the device for completions and {} is not on one with poll queues ({why}); drop --hipri, or give NVMe poll queues (nvme.poll_queues=N)",
        path.display(),
    )))
}

/// Refuses a new file in devtmpfs (`/dev`): a device name that does not exist there
/// (`/dev/nvme9n1` for `/dev/nvme0n1`) would become a file in memory, measured as if it
/// were the device.
pub(super) fn new_file_in_devtmpfs(path: &Path, dir: &Path) -> Result<()> {
    if FsInfo::of_path(dir).is_some_and(|f| f.fstype == "devtmpfs") {
        return Err(Error::usage(format!(
            "{} does not exist, and {} holds device nodes (devtmpfs): iomark would make a file in memory there and measure it as if it were a device; check the device's name (lsblk lists them), or name a file on the filesystem to test",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// The checks `Target::open` can make without opening anything for writing, for every
/// run of a plan before the first one starts (so a study does not stop at its eighth run
/// for a flag it needed from the start): a directory or a special file, a device written
/// without `--allow-write-device`, or in use, or holding data without `--destroy-data`,
/// a file iomark did not make written without `--overwrite`, or one behind a loop device
/// or swap, a new file in a missing directory or on a filesystem without room.
pub fn preflight(spec: &Spec, policy: &TargetPolicy) -> Result<()> {
    if !spec.engine.caps().needs_fd {
        return Ok(());
    }
    let path = Path::new(&spec.target);
    match fs::metadata(path) {
        Ok(md) => {
            let kind = Target::kind_allowed(&md, path, spec, policy)?;
            // Opened once, for reading (a target that cannot be read here is refused
            // when it is opened for the run).
            let Ok(file) = File::open(path) else {
                return Ok(());
            };
            if kind == TargetKind::File && spec.writes() && !policy.overwrite && !is_marked(&file) {
                return Err(foreign_refusal(path, spec));
            }
            // A device in use, or holding data without --destroy-data; a file behind a
            // loop device or swap: refused by the run that writes it, after a study's
            // earlier runs had read it (and by none of a dry run's).
            if spec.writes() {
                match kind {
                    TargetKind::BlockDevice => Target::guard_device(&file, &md, path, policy)?,
                    _ => Target::file_in_use(&md, path)?,
                }
            }
            // (A dry run passed `--hipri` that the run refused.)
            hipri_polls(spec, path, BlockDev::of_file(file.as_fd(), &md).as_ref())?;
            // Direct I/O's alignment, as the run will find it (a 4 KiB-sector device
            // refuses a 512-byte block of a `suite bs` at its first run otherwise).
            if spec.direct {
                direct_aligned(spec, direct_alignment(&file, kind, None), path)?;
            }
            // A span past the end of what is not grown, before anything is measured.
            let len = match kind {
                TargetKind::BlockDevice => block_device_size(&file),
                TargetKind::File if !spec.writes() => Ok(md.len()),
                _ => return Ok(()),
            };
            match len {
                Ok(len) => {
                    past_the_end(&spec.with_shares_of(len), len, kind, path).map_or(Ok(()), Err)
                }
                Err(_) => Ok(()),
            }
        }
        Err(_) if spec.size_pct.is_some() || spec.offset_pct.is_some() => {
            Err(Error::usage(format!(
                "--size or --offset as a percentage is a share of an existing file or device, and {} does not exist; give bytes (e.g. --size 1g), as fio needs size= for a new file",
                path.display()
            )))
        }
        Err(_) => {
            let dir = crate::results::store::directory_of(path);
            new_file_in_devtmpfs(path, dir)?;
            // A new file is made even to be read: the directory must take it.
            if let Err(e) = sys::may_create_in(dir) {
                let shown = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
                let (p, d) = (path.display(), shown.display());
                return Err(Error::target(match e.raw_os_error() {
                    Some(sys::EROFS) => format!(
                        "{p} would be made in {d}, on a read-only filesystem; choose a target on a writable filesystem"
                    ),
                    Some(sys::EACCES) | Some(sys::EPERM) => format!(
                        "{p} would be made in {d}, which this user may not write; run as a user who may, or choose a target elsewhere"
                    ),
                    _ => return Ok(()), // Target::open says what is wrong with the directory
                }));
            }
            let Ok(free) = sys::free_bytes(dir) else {
                return Ok(()); // Target::open says what is wrong with the directory
            };
            let need = spec.offset + spec.size.unwrap_or(DEFAULT_NEW_FILE_SIZE);
            if need > free {
                return Err(Error::target(format!(
                    "{} would need {} and the filesystem of {} has {} free; free space or use a smaller --size",
                    path.display(),
                    fmt_size(need),
                    dir.display(),
                    fmt_size(free)
                )));
            }
            Ok(())
        }
    }
}

/// The length of `path` when it is a block device iomark can open to read (`None`: not
/// a device, or not readable: the preflight says why).
pub(crate) fn device_len(path: &str) -> Option<u64> {
    let file = File::open(path).ok()?;
    let device = file.metadata().ok()?.file_type().is_block_device();
    device.then(|| block_device_size(&file).ok()).flatten()
}
