//! Which target a verify state belongs to: the file or block device a `--verify-state`
//! run wrote, recorded in the state file (format `IOMKVST3`) so that `iomark verify`
//! refuses another target instead of reporting every block of it corrupt. A state file of
//! the previous format (`IOMKVST2`) has no identity and is read as before. Only the
//! identity lives here: the map of generations and the reading back are `verify.rs`'s.

use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use crate::error::{Error, Result};
use crate::units::fmt_size;

/// The longest path recorded (a longer one is cut: it names, it does not identify).
const MAX_PATH: usize = 4096;

/// The target a state was saved for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetId {
    /// The path as the run was given it.
    pub given: String,
    /// The same, absolute and with symbolic links resolved (the given path when that
    /// failed).
    pub absolute: String,
    /// A block device (else a regular file).
    pub block_device: bool,
    /// A file's filesystem device and inode, or a block device's number (`rdev`, inode 0).
    pub dev: u64,
    pub ino: u64,
    /// Its size in bytes when the state was saved.
    pub size: u64,
}

/// The size of an open target: a file's length, or a block device's size.
fn size_of(file: &File, md: &Metadata) -> u64 {
    use std::os::fd::AsFd;
    match md.file_type().is_block_device() {
        true => crate::io::sys::block_device_size(file.as_fd()).unwrap_or(0),
        false => md.len(),
    }
}

/// The node of an open target: `(block device, dev, ino)` as [`TargetId`] keeps them.
fn node(md: &Metadata) -> (bool, u64, u64) {
    match md.file_type().is_block_device() {
        true => (true, md.rdev(), 0),
        false => (false, md.dev(), md.ino()),
    }
}

impl TargetId {
    /// The identity of `file`, opened from `path` (the path as given).
    pub(crate) fn of(path: &Path, file: &File) -> Option<TargetId> {
        let md = file.metadata().ok()?;
        let (block_device, dev, ino) = node(&md);
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let cut = |s: String| s.chars().take(MAX_PATH / 4).collect::<String>();
        Some(TargetId {
            given: cut(path.display().to_string()),
            absolute: cut(absolute.display().to_string()),
            block_device,
            dev,
            ino,
            size: size_of(file, &md),
        })
    }

    /// How the state file names it: `vf.dat (/tmp/vf.dat, a file of 16 MiB)`.
    fn describe(&self) -> String {
        let what = match self.block_device {
            true => "a block device",
            false => "a file",
        };
        let at = match self.absolute == self.given {
            true => String::new(),
            false => format!("{}, ", self.absolute),
        };
        format!("{} ({at}{what} of {})", self.given, fmt_size(self.size))
    }

    /// Refuses `file` (opened from `path`) when it is not this target: another node at
    /// another path. The same node under another path (a link, a relative path) is the
    /// target; so is a file re-created at the recorded path (what it holds is then for
    /// the read-back to judge).
    pub(crate) fn check(&self, state: &Path, path: &Path, file: &File) -> Result<()> {
        let Ok(md) = file.metadata() else {
            return Ok(());
        };
        if node(&md) == (self.block_device, self.dev, self.ino) {
            return Ok(());
        }
        let here = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if here == Path::new(&self.absolute) {
            return Ok(());
        }
        Err(Error::target(format!(
            "{} was saved by a run on {}, not on {}: give that target, or the state file of the run that wrote {}",
            state.display(),
            self.describe(),
            path.display(),
            path.display()
        )))
    }

    /// Writes the identity (after the map's header): kind, dev, ino, size, then the two
    /// paths, each as a length and its bytes. `None` writes kind 0 and empty paths.
    pub(crate) fn write(id: Option<&TargetId>, w: &mut impl Write) -> std::io::Result<()> {
        let kind = id.map_or(0u64, |i| 1 + u64::from(i.block_device));
        let nums = id.map_or([0; 3], |i| [i.dev, i.ino, i.size]);
        for v in [kind].iter().chain(&nums) {
            w.write_all(&v.to_le_bytes())?;
        }
        for s in id.map_or(["", ""], |i| [i.given.as_str(), i.absolute.as_str()]) {
            w.write_all(&(s.len() as u64).to_le_bytes())?;
            w.write_all(s.as_bytes())?;
        }
        Ok(())
    }

    /// Reads what [`TargetId::write`] wrote; returns it and the bytes it took. `Err`
    /// holds why it is not one.
    pub(crate) fn read(
        r: &mut impl Read,
    ) -> std::result::Result<(Option<TargetId>, u64), &'static str> {
        let mut n = [0u8; 8];
        let mut num = |r: &mut dyn Read| {
            r.read_exact(&mut n)
                .map(|()| u64::from_le_bytes(n))
                .map_err(|_| "truncated")
        };
        let (kind, dev, ino, size) = (num(r)?, num(r)?, num(r)?, num(r)?);
        let mut text = |r: &mut dyn Read| -> std::result::Result<String, &'static str> {
            let len = num(r)? as usize;
            if len > MAX_PATH {
                return Err("implausible header");
            }
            let mut b = vec![0u8; len];
            r.read_exact(&mut b).map_err(|_| "truncated")?;
            String::from_utf8(b).map_err(|_| "implausible header")
        };
        let (given, absolute) = (text(r)?, text(r)?);
        let took = 48 + (given.len() + absolute.len()) as u64;
        let id = match kind {
            0 => None,
            1 | 2 => Some(TargetId {
                given,
                absolute,
                block_device: kind == 2,
                dev,
                ino,
                size,
            }),
            _ => return Err("implausible header"),
        };
        Ok((id, took))
    }
}
