//! What was counted over one window ([`Tally`]): each direction's I/Os and bytes with its
//! latency histogram, the fsyncs, and where the window ended. A worker fills one; a
//! target's part, a repetition's merge and a group's sum add them up with the one
//! [`Tally::add`].

use crate::results::stats::{Counter, LatHist};

/// The counts of one window; see the module documentation.
pub(crate) struct Tally {
    pub(crate) read: Counter,
    pub(crate) write: Counter,
    /// Trims (discards), their own direction.
    pub(crate) trim: Counter,
    pub(crate) hist_read: LatHist,
    pub(crate) hist_write: LatHist,
    pub(crate) hist_trim: LatHist,
    pub(crate) fsyncs: u64,
    /// Reads and writes done while the device counters were open that iomark does not
    /// count: issued in the ramp and completed after the "before" reading, or completed
    /// after a time-based window's end (the counters' "after" is read once the workers
    /// have drained their queues). Taken off the device's figures.
    pub(crate) unmeasured_read: Counter,
    pub(crate) unmeasured_write: Counter,
    /// Nanoseconds from measurement start to the end of the window (of the last of
    /// those added).
    pub(crate) end_ns: u64,
}

impl Tally {
    pub(crate) fn new() -> Tally {
        Tally {
            read: Counter::default(),
            write: Counter::default(),
            trim: Counter::default(),
            hist_read: LatHist::precise(),
            hist_write: LatHist::precise(),
            hist_trim: LatHist::precise(),
            fsyncs: 0,
            unmeasured_read: Counter::default(),
            unmeasured_write: Counter::default(),
            end_ns: 0,
        }
    }

    /// Adds `o`'s counts; the window ends where the later of the two ends.
    pub(crate) fn add(&mut self, o: &Tally) {
        self.read += o.read;
        self.write += o.write;
        self.trim += o.trim;
        self.hist_read += &o.hist_read;
        self.hist_write += &o.hist_write;
        self.hist_trim += &o.hist_trim;
        self.fsyncs += o.fsyncs;
        self.unmeasured_read += o.unmeasured_read;
        self.unmeasured_write += o.unmeasured_write;
        self.end_ns = self.end_ns.max(o.end_ns);
    }

    /// One read or write of `len` bytes the device counted and iomark does not.
    pub(crate) fn unmeasured(&mut self, write: bool, len: u32) {
        let c = match write {
            true => &mut self.unmeasured_write,
            false => &mut self.unmeasured_read,
        };
        c.ios += 1;
        c.bytes += len as u64;
    }

    /// The I/Os of every direction.
    pub(crate) fn ios(&self) -> u64 {
        self.read.ios + self.write.ios + self.trim.ios
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_sums_counts_and_histograms_and_keeps_the_later_end() {
        let mut a = Tally::new();
        a.read.ios = 3;
        a.read.bytes = 12288;
        a.hist_read.record(1000);
        a.fsyncs = 1;
        a.end_ns = 50;
        let mut b = Tally::new();
        b.write.ios = 2;
        b.trim.ios = 1;
        b.hist_read.record(3000);
        b.hist_trim.record(7);
        b.fsyncs = 2;
        b.end_ns = 40;
        a.add(&b);
        assert_eq!(
            (a.read.ios, a.read.bytes, a.write.ios, a.trim.ios),
            (3, 12288, 2, 1)
        );
        assert_eq!(
            (
                a.hist_read.count(),
                a.hist_trim.count(),
                a.hist_write.count()
            ),
            (2, 1, 0)
        );
        assert_eq!((a.fsyncs, a.end_ns, a.ios()), (3, 50, 6));
    }
}
