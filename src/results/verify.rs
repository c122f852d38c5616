//! The verify read-back's report: the results' `verify` object (every block good,
//! corrupt, misplaced or stale, and the first bad ones).

use serde::{Deserialize, Serialize};

/// One bad block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadBlock {
    pub offset: u64,
    pub state: BlockState,
}

/// The outcome of reading every written block back: the results' `verify` object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// Blocks checked (those written in the run).
    pub blocks: u64,
    pub good: u64,
    /// Wrong magic or size, or payload not matching its CRC32C.
    pub corrupt: u64,
    /// Carrying another block's offset.
    pub misplaced: u64,
    /// An older write of the block (earlier generation or another run's seed).
    pub stale: u64,
    /// The first few bad blocks.
    pub first_bad: Vec<BadBlock>,
    /// Bytes read back: the written blocks and nothing else (0 in documents written
    /// before iomark counted it).
    #[serde(default)]
    pub bytes_read: u64,
    /// The read-back was cut short (Ctrl-C, a signal): `blocks` are those checked before
    /// it stopped, of `planned_blocks`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
    /// With `cut_short`: every block written, which were to be checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_blocks: Option<u64>,
}

/// What a block turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockState {
    Good,
    Corrupt,
    Misplaced,
    Stale,
}

impl VerifyReport {
    pub fn bad(&self) -> u64 {
        self.corrupt + self.misplaced + self.stale
    }

    /// Counts one checked block at `offset`.
    pub(crate) fn count(&mut self, offset: u64, state: BlockState) {
        self.blocks += 1;
        match state {
            BlockState::Good => self.good += 1,
            BlockState::Corrupt => self.corrupt += 1,
            BlockState::Misplaced => self.misplaced += 1,
            BlockState::Stale => self.stale += 1,
        }
        if state != BlockState::Good && self.first_bad.len() < 10 {
            self.first_bad.push(BadBlock { offset, state });
        }
    }

    /// This report and `other`'s added up (several targets' or ranks'): the counts
    /// summed, the first bad blocks of both (offsets in their own targets).
    pub fn plus(mut self, other: &VerifyReport) -> VerifyReport {
        self.add_cut(other);
        self.blocks += other.blocks;
        self.good += other.good;
        self.corrupt += other.corrupt;
        self.misplaced += other.misplaced;
        self.stale += other.stale;
        self.bytes_read += other.bytes_read;
        let room = 10usize.saturating_sub(self.first_bad.len());
        self.first_bad
            .extend(other.first_bad.iter().copied().take(room));
        self
    }

    /// Marks the report cut short when fewer than the `planned` blocks were checked.
    pub(crate) fn cut_at(&mut self, planned: u64) {
        if self.blocks < planned {
            (self.cut_short, self.planned_blocks) = (true, Some(planned));
        }
    }

    /// Before `other`'s counts are added to this one's: cut short if either was, of the
    /// blocks both planned.
    pub(crate) fn add_cut(&mut self, other: &VerifyReport) {
        if self.cut_short || other.cut_short {
            let planned = |v: &VerifyReport| v.planned_blocks.unwrap_or(v.blocks);
            (self.cut_short, self.planned_blocks) = (true, Some(planned(self) + planned(other)));
        }
    }

    /// One line for the terminal.
    pub fn describe(&self) -> String {
        let checked = match self.planned_blocks.filter(|_| self.cut_short) {
            Some(p) => format!(
                "verify CUT SHORT: {} of {p} written blocks checked",
                self.blocks
            ),
            None => format!("verify: {} blocks", self.blocks),
        };
        let mut s = format!(
            "{checked} ({} read): {} good, {} corrupt, {} misplaced, {} stale",
            crate::units::fmt_size(self.bytes_read),
            self.good,
            self.corrupt,
            self.misplaced,
            self.stale
        );
        if !self.first_bad.is_empty() {
            let list: Vec<String> = self
                .first_bad
                .iter()
                .map(|b| format!("{:?} at {}", b.state, b.offset).to_lowercase())
                .collect();
            s.push_str(&format!(" (first: {})", list.join(", ")));
        }
        s
    }
}
