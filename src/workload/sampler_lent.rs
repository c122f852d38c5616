//! The sampler's path for writes lent from the job's data pool (`workload::sampler`):
//! the units its fraction picks found from their ids, a few a write, where every other
//! write has each unit's selector read; and for units copied out of the pool (dedup
//! streams), the tracking table's lines they will visit asked for from their ids before
//! the copies are made.

use super::Sampler;
use crate::workload::keys::{LentStamps, selector_at};
use crate::workload::tracks::next_tracked_after;

impl Sampler {
    /// The sampler of a job whose writes are lent from a data pool with these stamps
    /// (`DataGen::lent_stamps`): `observe_lent` finds the units it picks from their ids.
    /// Ignored unless the pool's units are the sampler's, a power of two (a write's units
    /// are counted by a shift: a division was 3% of a null 4 KiB write), and their stamps
    /// lie where it reads selectors (`with_stamp_turns` first).
    pub(crate) fn with_lent_stamps(mut self, stamps: Option<LentStamps>) -> Sampler {
        self.lent = stamps.filter(|s| self.reads_as(s));
        self
    }

    /// Whether units stamped by `stamps` have the selectors this sampler reads: its
    /// units, a power of two, stamps where it reads them.
    fn reads_as(&self, stamps: &LentStamps) -> bool {
        !self.exhaustive
            && stamps.unit_len == self.unit
            && self.unit.is_power_of_two()
            && stamps.turns == self.turns
            && self.sel_places.is_empty()
    }

    /// `observe_from` for a write lent from the job's data pool: units `first_id..` of
    /// the stream, stamped by `LentStamps`. The selector of unit `id` is
    /// `LentStamps::selector(id)`, so the units the sampled fraction picks are every
    /// `2^shift`-th from `first_picked`: only they are read (their selector checked
    /// against their id's, and hashed, composed from the pool's sums). The others are not
    /// looked at, and no lent unit is counted in the tracking table, whose purpose is to
    /// find contents that come over and over: lent units' stamps are a bijection of their
    /// ids, so no two are equal and none can become frequent (the figures are those of
    /// `observe_from`, a test compares the two). A picked unit whose selector is not its
    /// id's (its stamp is not the pool's) has every later write's selectors read.
    ///
    /// (Until 2026-11-29 every lent unit's selector was read, and one in 16 counted in
    /// the tracking table: 70 and 65 ns of a null 128 KiB write's 365.)
    #[inline(always)]
    pub fn observe_lent(&mut self, buf: &[u8], first_id: u64) {
        let Some(stamps) = self.lent else {
            self.observe_uniform(buf, first_id);
            return;
        };
        self.written += buf.len() as u64;
        let n = (buf.len() >> self.unit.trailing_zeros()) as u64;
        self.units_seen += n;
        let step = 1u64 << self.shift;
        let mut k = stamps.first_picked(first_id, self.shift);
        while k < n {
            let unit = &buf[k as usize * self.unit..][..self.unit];
            self.lent_picked(unit, first_id + k, stamps);
            k += step;
        }
        self.count_write(buf);
    }

    /// The sampler of a job whose lent writes are all made of this one unit (a constant
    /// profile's: `DataGen::uniform_unit`): `observe_uniform` counts them without reading
    /// them. Ignored unless it is one of the sampler's units, a power of two, and the
    /// selectors are read at a unit's start.
    pub(crate) fn with_uniform_unit(mut self, unit: Option<&[u8]>) -> Sampler {
        let fits = self.unit.is_power_of_two() && self.turns == 1 && !self.exhaustive;
        self.uniform = unit
            .filter(|u| u.len() == self.unit && fits)
            .map(|u| (self.selector(u, 0), crate::workload::hash::content_hash(u)));
        self
    }

    /// `observe_from` for a lent write of a constant profile whose units are all the
    /// uniform unit (`with_uniform_unit`): the same counts, in the same order, from the
    /// unit's selector and hash known once, rather than from each unit's bytes (a null
    /// 128 KiB write of zeros spent 310–375 of its 400–460 ns reading its 32 units'
    /// selectors, three words each for a unit that opens with zeros). Once the unit is
    /// pinned only the tracked positions are visited. Other writes: `observe_from`.
    pub fn observe_uniform(&mut self, buf: &[u8], first_id: u64) {
        // (The unit is a power of two: no division here.)
        let Some((sel, h)) = self.uniform.filter(|_| buf.len() & (self.unit - 1) == 0) else {
            self.observe_from(buf, first_id);
            return;
        };
        self.count_bytes(buf.len());
        self.uniform_now = Some(h);
        let ul = self.unit;
        for units in buf.chunks(super::GROUP * ul) {
            let n = units.len() >> ul.trailing_zeros();
            let tracked = self.tracked_among(n as u64);
            let unit = |k: usize| &units[k * ul..][..ul];
            let picked = sel & ((1u64 << self.shift) - 1) == 0 && sel != self.pinned_sel;
            let mut todo = match picked {
                true => u64::MAX >> (64 - n),
                false => tracked,
            };
            while todo != 0 {
                let k = todo.trailing_zeros() as usize;
                todo &= todo - 1;
                if tracked >> k & 1 == 1 {
                    self.count(unit(k), sel);
                } else if sel.trailing_zeros() >= self.shift {
                    self.observe_untracked(unit(k), sel, sel.trailing_zeros());
                }
            }
        }
        self.uniform_now = None;
        self.count_write(buf);
    }

    /// The sampler of a job whose writes are units copied out of a data pool with these
    /// stamps (`DataGen::copied_stamps`: a dedup stream, each unit a unique one or a
    /// copy of an earlier one): `prefetch_ids` is told a write's unit ids before its
    /// bytes are copied. Ignored under the same conditions as `with_lent_stamps`.
    pub(crate) fn with_copied_stamps(mut self, stamps: Option<LentStamps>) -> Sampler {
        self.copied = stamps.filter(|s| self.reads_as(s));
        self
    }

    /// Told the ids of the units the next write copies out of the pool (the write's
    /// units in order; `observe_from` follows with its bytes), asks the CPU for the
    /// tracking table's sets the units at tracked positions will visit: their selectors
    /// are `LentStamps::selector(id)`. A hint only: nothing is counted here, and a wrong
    /// guess costs a load. (The table's line missed the cache on nearly every visit,
    /// evicted by the copies between two: 87% of `count`'s samples, 3.8% of a null
    /// 128 KiB `--dedup 50` write's CPU; the copies take long enough for the lines to
    /// come. The units the sampled fraction picks visit the table too, a few in a
    /// thousand once it narrows: not asked for, their selectors would cost more to
    /// compute for every unit than their misses.)
    ///
    /// With the pool's sums (`with_pool_hashes`) the ids are kept for the write's
    /// sampled units, whose hashes are composed from them (`Sampler::hash`).
    ///
    /// Most small writes of a long run hold no tracked unit: that is found here, inlined
    /// in the write path, and the loop (`prefetch_tracked`) is called only otherwise (the
    /// call and its frame were two thirds of this function's 2.2% of a null 4 KiB
    /// `--dedup 50` write).
    #[inline(always)]
    pub fn prefetch_ids(&mut self, ids: &[u64]) {
        let Some(stamps) = self.copied else {
            return;
        };
        if self.pool.is_some() {
            self.told.clear();
            self.told.extend_from_slice(ids);
        }
        if self.track_every == 1 {
            for &id in ids {
                self.tracks.prefetch(stamps.selector(id));
            }
            return;
        }
        // (Where `tracked_among` will start.)
        let first = self.units_seen;
        let pos = self.next_tracked_at(first);
        if pos - first < ids.len() as u64 {
            self.prefetch_tracked(ids, stamps, first, pos);
        }
    }

    /// `prefetch_ids` once one tracked position `pos` falls among the write's units.
    #[inline(never)]
    fn prefetch_tracked(&self, ids: &[u64], stamps: LentStamps, first: u64, mut pos: u64) {
        while let Some(&id) = ids.get((pos - first) as usize) {
            self.tracks.prefetch(stamps.selector(id));
            pos = next_tracked_after(pos);
        }
    }

    /// A lent unit the sampled fraction picks (as it was at the write's start: it may
    /// have narrowed since).
    #[inline(never)]
    fn lent_picked(&mut self, unit: &[u8], id: u64, stamps: LentStamps) {
        let sel = selector_at(unit, self.stamp_of(id));
        if sel != stamps.selector(id) {
            self.lent = None;
        }
        let tz = sel.trailing_zeros();
        if tz >= self.shift && sel != self.pinned_sel {
            self.observe_untracked(unit, sel, tz);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::data::{CompressMethod, DataKind, DataSpec};
    use crate::workload::data::DataGen;
    use crate::workload::sampler::Sampler;
    use crate::workload::tracks::{TRACK_EVERY, first_tracked_from};

    /// Random data, and compressible by both methods (a `repeat` unit's stamp is its head
    /// and the head's copies), with a 1 MiB pool.
    fn profiles() -> Vec<DataSpec> {
        let random = DataSpec {
            pool: 1 << 20,
            ..DataSpec::default()
        };
        let compressible = |method| DataSpec {
            kind: DataKind::Compressible,
            compress: 50.0,
            compress_method: method,
            ..random.clone()
        };
        vec![
            random.clone(),
            compressible(CompressMethod::Zerofill),
            compressible(CompressMethod::Repeat),
        ]
    }

    /// The sampler of `g`'s job and the same told of its lent stamps.
    fn samplers(spec: &DataSpec, g: &mut DataGen) -> (Sampler, Sampler) {
        g.prepare_pool_hashes();
        let read = Sampler::new(spec)
            .with_stamp_turns(g.stamp_turns())
            .with_pool_hashes(g.take_pool_hashes());
        let told = read.clone().with_lent_stamps(g.lent_stamps());
        assert!(told.lent.is_some(), "{spec:?}: stamps not known from ids");
        (read, told)
    }

    /// Lent writes of one unit and of many, and writes copied into a buffer between
    /// them, past the allowance (the fraction narrows): the sampler that finds the units
    /// it picks from their ids measures what the one that reads every selector does,
    /// hashing the same units, and no picked unit's selector differs from its id's.
    #[test]
    fn lent_writes_are_measured_as_when_every_selector_is_read() {
        for spec in profiles() {
            lent_and_read_agree(&spec);
        }
    }

    fn lent_and_read_agree(spec: &DataSpec) {
        let spec = spec.clone();
        let mut g = DataGen::new(&spec, 11, 3, None);
        let (mut read, mut told) = samplers(&spec, &mut g);
        let mut buf = vec![0u8; 256 << 10];
        let mut lent = 0;
        for w in 0..1500u64 {
            if w == 700 {
                // Told it will write 8 GiB: the fraction narrows to 1/64 at once.
                read.plan(8 << 30);
                told.plan(8 << 30);
                // And one unit in 16 tracked from here, as after the first 2^20 units.
                for s in [&mut read, &mut told] {
                    s.track_every = TRACK_EVERY;
                    s.next_tracked = first_tracked_from(s.units_seen);
                }
            }
            let len = [4096, 128 << 10, 256 << 10, 12 << 10][(w % 4) as usize];
            let first_id = g.next_id();
            let lend = w % 7 != 3;
            match g.next_write(&mut buf[..len], lend) {
                Some(l) => {
                    let bytes = g.lent_bytes(l).to_vec();
                    told.observe_lent(g.lent_bytes(l), first_id);
                    read.observe_from(&bytes, first_id);
                    g.give_back(l);
                    lent += 1;
                }
                // (Not lent when asked: a write that would straddle the pool's end.)
                None => {
                    told.observe_from(&buf[..len], first_id);
                    read.observe_from(&buf[..len], first_id);
                }
            }
        }
        assert!(lent > 1000, "{lent} writes lent");
        assert!(
            read.shift >= 5,
            "the fraction narrowed: shift {}",
            read.shift
        );
        assert_eq!(told.shift, read.shift);
        let m = read.measure().expect("measured");
        assert_eq!(m.dedup_pct, Some(0.0), "{spec:?}");
        assert_eq!(told.measure(), Some(m));
        assert!(
            told.lent.is_some(),
            "a picked unit's selector was not its id's"
        );
    }

    /// A picked unit whose stamp is not the one its id gives (bytes changed in the pool
    /// after the stamp) has the sampler read every selector from then on.
    #[test]
    fn a_picked_unit_whose_stamp_is_not_its_ids_has_every_selector_read() {
        let spec = DataSpec::default();
        let mut g = DataGen::new(&spec, 2, 1, None);
        let (_, mut told) = samplers(&spec, &mut g);
        let mut buf = vec![0u8; 64 << 10];
        let first_id = g.next_id();
        let l = g.next_write(&mut buf, true).expect("lent");
        let mut bytes = g.lent_bytes(l).to_vec();
        // Every unit is picked at first (the fraction is whole): the third one's stamp,
        // at its start (unit 2 of a stream whose stamps turn lies 128 bytes in).
        bytes[2 * 4096 + 128] ^= 1;
        told.observe_lent(&bytes, first_id);
        assert!(told.lent.is_none());
        // The untouched stamps before it were their ids' own.
        let mut fresh = samplers(&spec, &mut DataGen::new(&spec, 2, 1, None)).1;
        fresh.observe_lent(&bytes[..2 * 4096], first_id);
        assert!(fresh.lent.is_some());
    }

    /// A constant profile's lent writes, whose units are all one unit (zeros, a pattern
    /// whose length divides it), are counted from that unit's selector and hash known
    /// once (`observe_uniform`): the same figures and sample as reading every unit,
    /// writes of one unit, many, and more than a group, with the fraction narrowed and
    /// one unit in 16 tracked part way. A pattern of 5 bytes makes units that differ:
    /// no uniform unit.
    #[test]
    fn a_constant_profiles_writes_are_counted_from_its_one_unit() {
        let pattern = |hex: &str| DataSpec {
            kind: DataKind::Pattern,
            pattern: Some(hex.to_string()),
            ..DataSpec::default()
        };
        let zeros = DataSpec {
            kind: DataKind::Zeros,
            ..DataSpec::default()
        };
        let mut g = DataGen::new(&pattern("0102030405"), 1, 1, None);
        g.lend_constant(512 << 10);
        assert!(g.uniform_unit(4096).is_none());
        for spec in [zeros, pattern("deadbeef")] {
            let mut g = DataGen::new(&spec, 1, 1, None);
            assert!(
                g.uniform_unit(4096).is_none(),
                "before the region is filled"
            );
            g.lend_constant(512 << 10);
            let one = g.uniform_unit(4096).expect("one unit").to_vec();
            // One unit in 16 tracked from the start too: units before the pin are
            // then picked by the sampled fraction and hashed.
            for sparse_at in [1500, 0] {
                uniform_and_read_agree(&spec, &one, sparse_at);
            }
        }
    }

    fn uniform_and_read_agree(spec: &DataSpec, one: &[u8], sparse_at: u64) {
        {
            let mut g = DataGen::new(spec, 1, 1, None);
            g.lend_constant(512 << 10);
            let mut read = Sampler::new(spec);
            let mut told = read.clone().with_uniform_unit(Some(one));
            assert!(told.uniform.is_some());
            let mut buf = vec![0u8; 512 << 10];
            for w in 0..3000u64 {
                for s in [&mut read, &mut told] {
                    if w == sparse_at {
                        s.track_every = TRACK_EVERY;
                        s.next_tracked = first_tracked_from(s.units_seen);
                    }
                    if w == 1500 {
                        s.plan(8 << 30);
                    }
                }
                let len = [4096, 128 << 10, 512 << 10, 12 << 10][(w % 4) as usize];
                let first_id = g.next_id();
                let l = g.next_write(&mut buf[..len], true).expect("lent");
                read.observe_from(g.lent_bytes(l), first_id);
                told.observe_lent(g.lent_bytes(l), first_id);
            }
            let d = read.measure().expect("measured");
            assert_eq!(d.dedup_pct, Some(100.0), "{spec:?}");
            assert_eq!(told.measure(), Some(d), "{spec:?} from {sparse_at}");
        }
    }

    /// A dedup stream's sampled units are hashed from the pool's sums and their stamps,
    /// the pool unit a copy was made from known from the ids told (`Sampler::hash`):
    /// the same figures as hashed in full, every check passed, most hashed units
    /// composed; a write whose first unit's stamp is overwritten (a verify header) has
    /// that unit hashed in full. A `repeat` stream has no sums: its one stamp lies in
    /// its second segment's literals, where no header would overwrite it.
    #[test]
    fn a_dedup_streams_copies_are_hashed_from_the_pools_sums() {
        for mut spec in profiles() {
            spec.dedup = 50.0;
            let mut g = DataGen::new(&spec, 7, 2, None);
            let full = Sampler::new(&spec)
                .with_stamp_turns(g.stamp_turns())
                .with_copied_stamps(g.copied_stamps());
            g.prepare_pool_hashes();
            let hashes = g.take_pool_hashes();
            if spec.compress_method == CompressMethod::Repeat {
                assert!(hashes.is_none());
                continue;
            }
            let mut composed = full.clone().with_pool_hashes(hashes);
            let mut full = full;
            let mut buf = vec![0u8; 64 << 10];
            for w in 0..3000u64 {
                if w == 1500 {
                    // Narrowed (1/64), one unit in 16 tracked from here.
                    for s in [&mut full, &mut composed] {
                        s.plan(8 << 30);
                        s.track_every = TRACK_EVERY;
                        s.next_tracked = first_tracked_from(s.units_seen);
                    }
                }
                let len = [4096, 64 << 10, 12 << 10][(w % 3) as usize];
                let first_id = g.next_id();
                g.fill_with(&mut buf[..len], |ids| {
                    full.prefetch_ids(ids);
                    composed.prefetch_ids(ids);
                });
                if w % 97 == 5 {
                    // (A head of its own each time: a frequent one would be pinned, not
                    // hashed.)
                    buf[..8].copy_from_slice(&(w | 1 << 40).to_le_bytes());
                }
                full.observe_from(&buf[..len], first_id);
                composed.observe_from(&buf[..len], first_id);
            }
            let d = full.measure().expect("measured");
            assert!(
                d.dedup_pct.is_some_and(|p| (40.0..60.0).contains(&p)),
                "{d:?}"
            );
            assert_eq!(composed.measure(), Some(d), "{spec:?}");
            let (n, broken) = composed.pool.as_ref().expect("sums").composed();
            assert!(!broken, "{spec:?}");
            assert!(
                n > d.dedup_sampled_units / 2 && n < d.dedup_sampled_units,
                "{n} of {} composed",
                d.dedup_sampled_units
            );
        }
    }

    /// A dedup stream's writes are copies out of the pool: the ids the generator tells
    /// before copying (`DataGen::fill_with`) are the units written, in order, and each
    /// unit's selector is the one its id gives, so `prefetch_ids` asks for the sets the
    /// write's units visit (random data and both compressible methods, units unique and
    /// copied, writes of one unit and of many). A stream that lends has no copied stamps.
    #[test]
    fn a_dedup_writes_units_have_the_selectors_of_the_ids_told() {
        use crate::workload::keys::selector_at;
        for mut spec in profiles() {
            spec.dedup = 50.0;
            let mut g = DataGen::new(&spec, 5, 2, None);
            let stamps = g.copied_stamps().expect("dedup units stamped with words");
            let sampler = Sampler::new(&spec)
                .with_stamp_turns(g.stamp_turns())
                .with_copied_stamps(Some(stamps));
            assert!(sampler.copied.is_some());
            let (mut copies, mut units) = (0, 0);
            let mut buf = vec![0u8; 64 << 10];
            for w in 0..200 {
                let len = [4096, 64 << 10, 12 << 10][w % 3];
                let mut told = Vec::new();
                // (Ids below the next unique one before this write: copies.)
                let uniques_before = g.next_id();
                g.fill_with(&mut buf[..len], |ids| told.extend_from_slice(ids));
                assert_eq!(told.len(), len / 4096);
                for (unit, &id) in buf[..len].chunks(4096).zip(&told) {
                    let sel = selector_at(unit, sampler.stamp_of(id));
                    assert_eq!(sel, stamps.selector(id), "{spec:?}");
                    units += 1;
                    copies += usize::from(id < uniques_before);
                }
            }
            assert!(
                units > 1000 && copies > units / 3,
                "{units} units, {copies} copies"
            );
        }
        assert_eq!(
            DataGen::new(&DataSpec::default(), 5, 2, None).copied_stamps(),
            None
        );
    }
}
