//! A run's short name (`Spec::name`, "randread 4k qd32") and the block size as shown:
//! every option that changes what a run does and is not obvious from its pattern, size
//! and depth says so here.

use crate::plan::bsmix::BsMix;
use crate::plan::spec::Spec;

impl Spec {
    /// A short name for a run: `randread 4k qd32`, with jobs and mix when they matter.
    pub(crate) fn name(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        let spec = self;
        let mut s = format!("{} {} qd{}", spec.rw.name(), spec.bs_text(), spec.qd);
        if spec.rw.is_mixed() {
            s = format!(
                "{} {}/{} {} qd{}",
                spec.rw.name(),
                spec.rwmixread,
                100 - spec.rwmixread,
                spec.bs_text(),
                spec.qd
            );
        }
        if spec.jobs > 1 {
            s.push_str(&format!(" x{}", spec.jobs));
        }
        if !spec.direct {
            s.push_str(" buffered");
        }
        if let Some(b) = spec.rate_bps {
            s.push_str(&format!(" rate {}/s", crate::units::fmt_size_short(b)));
        }
        if let Some(n) = spec.rate_iops {
            s.push_str(&format!(" rate {n} IOPS"));
        }
        if let Some(n) = spec.random_run {
            match spec.rw_sequencer_identical {
                true => s.push_str(&format!(" {n} times each")),
                false => s.push_str(&format!(" runs of {n}")),
            }
        }
        if let Some(h) = spec.hole {
            s.push_str(&format!(" holes {}", crate::units::fmt_size_short(h)));
        }
        if !spec.random_distribution.is_uniform() {
            s.push(' ');
            s.push_str(&spec.random_distribution.text());
        }
        if let Some(hi) = spec.startdelay_max_s {
            s.push_str(&format!(" after {}-{hi}s", spec.startdelay_s));
        } else if spec.startdelay_s > 0.0 {
            s.push_str(&format!(" after {}s", spec.startdelay_s));
        }
        if let Some(us) = spec.thinktime_us {
            s.push_str(&format!(" think {us}us"));
            if let Some(n) = spec.thinktime_blocks.filter(|n| *n > 1) {
                s.push_str(&format!("/{n} I/Os"));
            }
            if let Some(io) = spec.thinktime_iotime_us {
                s.push_str(&format!(" per {io}us of I/O"));
            }
            if spec.thinktime_on_issue {
                s.push_str(" issued");
            }
        }
        s.push_str(match spec.engine_opts.sync_mode {
            crate::plan::engine::SyncMode::None => "",
            crate::plan::engine::SyncMode::Sync => " O_SYNC",
            crate::plan::engine::SyncMode::Dsync => " O_DSYNC",
        });
        match (spec.targets.len(), spec.file_service) {
            (0 | 1, _) => {}
            (n, None) => s.push_str(&format!(" on {n} targets")),
            // One job's I/O spread over the files: another workload.
            (n, Some(f)) => s.push_str(&format!(" over {n} files {}", f.text())),
        }
        s
    }

    /// Adds `note` to the run's notes (`engine_note`, said with the run and kept in the
    /// document).
    pub(crate) fn note(&mut self, note: &str) {
        self.engine_note = Some(match self.engine_note.take() {
            Some(n) => format!("{n}; {note}"),
            None => note.to_string(),
        });
    }

    /// The block size as shown: `4k`, or the mix (`4k/50:64k/50`, `4k-64k`); reads' then
    /// writes' (`4k,64k`) when a mix's differ (`--write-bs`).
    pub(crate) fn bs_text(&self) -> String {
        let reads = match &self.bs_mix {
            Some(m) => m.text(),
            None => crate::units::fmt_size_short(self.bs),
        };
        match &self.write_bs {
            Some(w) => format!("{reads},{}", w.text()),
            None => reads,
        }
    }

    /// The expected bytes of one I/O: `bs`, or the mix's mean; with `--write-bs`, the
    /// reads' and the writes' weighted by the mix.
    pub(crate) fn mean_bs(&self) -> f64 {
        let reads = self.bs_mix.as_ref().map_or(self.bs as f64, BsMix::mean);
        match &self.write_bs {
            Some(w) => {
                let r = self.rwmixread as f64 / 100.0;
                reads * r + w.mean() * (1.0 - r)
            }
            None => reads,
        }
    }

    /// The largest I/O of either direction: the size of every buffer.
    pub(crate) fn buf_bs(&self) -> u64 {
        self.write_bs
            .as_ref()
            .map_or(self.bs, |w| w.bs.max(self.bs))
    }

    /// The smallest I/O of either direction: random offsets are aligned to it.
    pub(crate) fn grain(&self) -> u64 {
        let reads = self.bs_mix.as_ref().map_or(self.bs, BsMix::min);
        self.write_bs.as_ref().map_or(reads, |w| w.min().min(reads))
    }
}
