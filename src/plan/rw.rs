//! `Rw`: the access pattern, named as in fio (reads, writes, their mixes, and trims).

use serde::{Deserialize, Serialize};

/// The access pattern, named as in fio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mix of reads and writes (`--rwmixread`).
    Rw,
    /// Random mix of reads and writes (`--rwmixread`).
    RandRw,
    /// Sequential discards (fio's `trim`): BLKDISCARD on a device, a punched hole in a
    /// file.
    Trim,
    /// Random discards (fio's `randtrim`).
    RandTrim,
    /// Sequential discard-then-write of each block (fio's `trimwrite`).
    TrimWrite,
}

impl Rw {
    /// All patterns, in the order the help lists them.
    pub(crate) const ALL: [Rw; 9] = [
        Rw::Read,
        Rw::Write,
        Rw::RandRead,
        Rw::RandWrite,
        Rw::Rw,
        Rw::RandRw,
        Rw::Trim,
        Rw::RandTrim,
        Rw::TrimWrite,
    ];

    /// The name used on the command line and in results.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::Rw => "rw",
            Rw::RandRw => "randrw",
            Rw::Trim => "trim",
            Rw::RandTrim => "randtrim",
            Rw::TrimWrite => "trimwrite",
        }
    }

    /// Parses a command-line name.
    pub(crate) fn parse(s: &str) -> Option<Rw> {
        Rw::ALL.into_iter().find(|r| r.name() == s)
    }

    /// Whether offsets are drawn at random (otherwise they are sequential).
    pub(crate) fn is_random(self) -> bool {
        matches!(
            self,
            Rw::RandRead | Rw::RandWrite | Rw::RandRw | Rw::RandTrim
        )
    }

    /// Whether the pattern discards (trims) blocks.
    pub(crate) fn trims(self) -> bool {
        matches!(self, Rw::Trim | Rw::RandTrim | Rw::TrimWrite)
    }

    /// Whether the pattern writes data (a trim changes the target, but writes none).
    pub(crate) fn writes_data(self) -> bool {
        !matches!(self, Rw::Trim | Rw::RandTrim) && self.read_pct(0) < 100
    }

    /// Whether the pattern mixes reads and writes.
    pub(crate) fn is_mixed(self) -> bool {
        matches!(self, Rw::Rw | Rw::RandRw)
    }

    /// The percentage of operations that are reads, given `--rwmixread` for mixes (trims
    /// read nothing).
    pub(crate) fn read_pct(self, rwmixread: u8) -> u8 {
        match self {
            Rw::Read | Rw::RandRead => 100,
            Rw::Write | Rw::RandWrite | Rw::Trim | Rw::RandTrim | Rw::TrimWrite => 0,
            Rw::Rw | Rw::RandRw => rwmixread,
        }
    }
}
