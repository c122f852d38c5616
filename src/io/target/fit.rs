//! What a target allows a run, asked of it before and as it opens: the alignment direct
//! I/O needs there, and whether a span fits in what is not grown.

use std::fs::{self, File};
use std::os::fd::AsFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::error::Error;
use crate::io::env::BlockDev;
use crate::io::sys;
use crate::plan::spec::Spec;
use crate::results::schema::TargetKind;
use crate::units::fmt_size;

/// The alignment O_DIRECT needs on `file`: statx's DIO alignment where the kernel reports
/// it (Linux 6.1+), else the logical block size of the device underneath, else 512.
pub(crate) fn direct_alignment(file: &File, kind: TargetKind, device: Option<&BlockDev>) -> u64 {
    if kind == TargetKind::BlockDevice
        && let Some(lbs) = sys::logical_block_size(file.as_fd())
    {
        return lbs;
    }
    if let Some(a) = sys::dio_alignment(file.as_fd()) {
        return a;
    }
    device
        .and_then(|d| d.info().logical_block_size)
        .unwrap_or(512)
}

/// The alignment direct I/O will need at `path`, found without writing (for a plan): an
/// existing file or device opened for reading as the run will find it, a new file's from
/// the device under its directory, else 512.
pub(crate) fn direct_alignment_at(path: &Path) -> u64 {
    let usable = fs::metadata(path).is_ok_and(|m| m.is_file() || m.file_type().is_block_device());
    if usable
        && let Ok(file) = File::open(path)
        && let Ok(md) = file.metadata()
    {
        let kind = match md.file_type().is_block_device() {
            true => TargetKind::BlockDevice,
            false => TargetKind::File,
        };
        return direct_alignment(&file, kind, BlockDev::of_metadata(&md).as_ref());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    fs::metadata(dir.unwrap_or(Path::new(".")))
        .ok()
        .and_then(|md| BlockDev::of_metadata(&md)?.info().logical_block_size)
        .unwrap_or(512)
}

/// The refusal of a span that does not fit in a target of `len` bytes that is not
/// grown (a device, or a file iomark only reads): an offset at or past its end, or an
/// offset plus size past it; `spec`'s shares already taken of `len`.
pub(crate) fn past_the_end(spec: &Spec, len: u64, kind: TargetKind, path: &Path) -> Option<Error> {
    let what = match kind {
        TargetKind::BlockDevice => "device",
        _ => "file",
    };
    let p = path.display();
    if spec.offset >= len {
        return Some(Error::target(match len {
            0 => {
                // Only a loop device can be empty for want of a backing file.
                let hint = match kind {
                    TargetKind::BlockDevice => {
                        " (an unbound loop device has none: set it up with losetup)"
                    }
                    _ => "",
                };
                format!("{p} is empty (0 B); name a {what} that holds data{hint}")
            }
            _ => format!(
                "--offset {} is at or past the end of {p} ({}); use a smaller --offset",
                fmt_size(spec.offset),
                fmt_size(len)
            ),
        }));
    }
    let span = spec.size.unwrap_or(len - spec.offset);
    (spec.offset + span > len).then(|| {
        Error::target(match spec.offset {
            0 => format!(
                "--size {} runs past the end of the {what} {p} ({}); use a smaller --size",
                fmt_size(span),
                fmt_size(len)
            ),
            o => format!(
                "--offset {} plus --size {} runs past the end of the {what} {p} ({}); use a smaller --size or --offset",
                fmt_size(o),
                fmt_size(span),
                fmt_size(len)
            ),
        })
    })
}
