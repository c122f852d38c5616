//! Whether a target takes trims (discards): the check before a trim pattern runs.

use std::fs;

use super::Target;
use crate::error::{Error, Result, describe_io};
use crate::io::sys;
use crate::results::schema::TargetKind;

impl Target {
    /// Refuses a trim pattern (`--rw trim`, `randtrim`, `trimwrite`) on a target that
    /// cannot take it: a block device whose queue does not discard
    /// (`queue/discard_max_bytes` 0), or a file whose filesystem does not punch holes
    /// (probed past the end of the span, where a hole changes nothing).
    pub(crate) fn check_trim(&self) -> Result<()> {
        let why = match (self.kind, self.fd()) {
            (TargetKind::BlockDevice, _) => {
                let queue = self.device.as_ref().map(|d| d.disk_dir().join("queue"));
                let max = queue.and_then(|q| fs::read_to_string(q.join("discard_max_bytes")).ok());
                (max.as_deref().map(str::trim) == Some("0")).then(|| {
                    "the device does not discard (its queue/discard_max_bytes is 0)".to_string()
                })
            }
            (TargetKind::File, Some(fd)) => {
                let len = fs::metadata(&self.path).map_or(0, |m| m.len());
                let end = len.max(self.base + self.span).next_multiple_of(4096);
                match crate::io::space::punch_hole(fd, end, 4096) {
                    Err(e) if e.raw_os_error() == Some(sys::EOPNOTSUPP) => Some(format!(
                        "its filesystem does not punch holes (fallocate: {})",
                        describe_io(&e)
                    )),
                    _ => None,
                }
            }
            _ => None,
        };
        match why {
            None => Ok(()),
            Some(why) => Err(Error::usage(format!(
                "{} cannot be trimmed: {why}; use a device that discards (e.g. a loop device or zram) or a file on a filesystem that punches holes (ext4, xfs, btrfs, tmpfs), or another --rw",
                self.path.display()
            ))),
        }
    }
}
