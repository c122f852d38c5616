//! `--verify`: every written block carries a header, and after the writes every block is
//! read back and checked against what must be there.
//!
//! The header (40 bytes, little-endian, at the start of each `--bs` block; the rest of the
//! block follows the data profile):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `IOMARKv2` |
//! | 8..16 | the block's byte offset in the target |
//! | 16..24 | the run's seed |
//! | 24..32 | write generation (unique per write in a run, never 0) |
//! | 32..36 | CRC32C of the whole block but this field (bytes 0..32, then 36..bs) |
//! | 36..40 | the block size |
//!
//! A block is *good* when all fields match; *corrupt* when the magic or size is wrong or the
//! block does not match its CRC (the CRC covers the header too, so a flipped bit in the
//! offset, seed or generation is corrupt, not misplaced or stale); *misplaced* when it is
//! intact but carries another block's offset (a write that landed in the wrong place);
//! *stale* when it is an intact older write of this block (an earlier generation, or
//! another run's seed: a lost write). The expected generation of every block is kept in a
//! [`GenMap`] while writing (0: never written), and can be saved as a state file for a
//! later `iomark verify`. Only written blocks are read back, runs of adjacent ones in one
//! read. Nothing here times or counts I/O for the figures.

use std::io::{Read, Write};
use std::path::Path;

use crate::error::{Error, Result, describe_io};
use crate::io::target::Target;
use crate::measure::verify_state::TargetId;
use crate::plan::spec::Spec;
use crate::results::schema::{BlockState, VerifyReport};
use crate::results::sink::Sink;
use crate::stop::StopFlag;

/// Size of the header at the start of each block.
pub(crate) const HEADER: usize = 40;
const MAGIC: &[u8; 8] = b"IOMARKv2";
/// The first word of every block header, as the sampler reads it
/// (`Sampler::with_block_headers`).
pub(crate) fn header_word() -> u64 {
    u64::from_le_bytes(*MAGIC)
}
/// The state files: the map, then the target it was saved for (`verify_state.rs`).
const STATE_MAGIC: &[u8; 8] = b"IOMKVST3";
/// The state files before they named their target: read as before, unchecked.
const STATE_MAGIC_V2: &[u8; 8] = b"IOMKVST2";
/// The state files of iomark before the CRC covered the header (blocks `IOMARKv1`).
const STATE_MAGIC_V1: &[u8; 8] = b"IOMKVST1";

/// CRC32C of a block without its CRC field: the header's bytes 0..32 and 36..40, and the
/// payload.
fn block_crc(block: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&block[0..32]), &block[36..])
}

/// Whether the first bytes of a file are a verify state iomark wrote.
pub fn is_state(head: &[u8]) -> bool {
    head.starts_with(STATE_MAGIC) || head.starts_with(STATE_MAGIC_V2)
}

/// Writes the header into `block` (whose payload is already filled).
#[inline]
pub(crate) fn stamp(block: &mut [u8], offset: u64, seed: u64, generation: u64) {
    let bs = block.len() as u32;
    block[0..8].copy_from_slice(MAGIC);
    block[8..16].copy_from_slice(&offset.to_le_bytes());
    block[16..24].copy_from_slice(&seed.to_le_bytes());
    block[24..32].copy_from_slice(&generation.to_le_bytes());
    block[36..40].copy_from_slice(&bs.to_le_bytes());
    let crc = block_crc(block);
    block[32..36].copy_from_slice(&crc.to_le_bytes());
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Checks one block read back from `offset`.
pub(crate) fn check(block: &[u8], offset: u64, seed: u64, generation: u64) -> BlockState {
    if block.len() < HEADER
        || &block[0..8] != MAGIC
        || u32::from_le_bytes(block[36..40].try_into().expect("4 bytes")) as usize != block.len()
    {
        return BlockState::Corrupt;
    }
    let crc = u32::from_le_bytes(block[32..36].try_into().expect("4 bytes"));
    if block_crc(block) != crc {
        return BlockState::Corrupt;
    }
    if le64(block, 8) != offset {
        return BlockState::Misplaced;
    }
    let (s, g) = (le64(block, 16), le64(block, 24));
    if s != seed || g < generation {
        return BlockState::Stale;
    }
    if g > generation {
        // A generation this run never wrote to this block.
        return BlockState::Corrupt;
    }
    BlockState::Good
}

/// The expected generation of every block of a span (0: never written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenMap {
    pub base: u64,
    pub bs: u64,
    pub seed: u64,
    pub gens: Vec<u64>,
    /// The target the generations were written to (`None`: not known, as in a state
    /// file of the previous format).
    pub target: Option<TargetId>,
}

/// Largest map iomark keeps: 2^27 blocks (1 GiB of generations).
pub(crate) const MAX_BLOCKS: u64 = 1 << 27;

impl GenMap {
    pub(crate) fn new(base: u64, span: u64, bs: u64, seed: u64) -> GenMap {
        GenMap {
            base,
            bs,
            seed,
            gens: vec![0; (span / bs) as usize],
            target: None,
        }
    }

    /// Saves the map as a state file for `iomark verify`.
    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        let write = || -> std::io::Result<()> {
            let f = std::fs::File::create(path)?;
            let mut w = std::io::BufWriter::new(f);
            w.write_all(STATE_MAGIC)?;
            for v in [self.base, self.bs, self.seed, self.gens.len() as u64] {
                w.write_all(&v.to_le_bytes())?;
            }
            TargetId::write(self.target.as_ref(), &mut w)?;
            for g in &self.gens {
                w.write_all(&g.to_le_bytes())?;
            }
            w.flush()
        };
        write().map_err(|e| {
            Error::io(
                format!("cannot write the verify state {}", path.display()),
                &e,
            )
        })
    }

    /// Loads a state file written by `save`: a regular file, read no further than its
    /// header says the map goes.
    pub fn load(path: &Path) -> Result<GenMap> {
        use crate::results::store::{Unreadable, open_regular};
        let p = path.display();
        let bad = |why: &str| {
            Error::document(format!(
                "{p} is not an iomark verify state ({why}); give the file a run wrote with --verify-state"
            ))
        };
        let (f, len) = open_regular(path).map_err(|e| match e {
            Unreadable::NotRegular(kind) => bad(&format!("it is {kind}")),
            Unreadable::TooLarge(_) => bad("too large"),
            Unreadable::Io(e) => Error::document(format!(
                "cannot read {p}: {}; give the file a run wrote with --verify-state",
                describe_io(&e)
            )),
        })?;
        let mut f = std::io::BufReader::new(f);
        let mut head = [0u8; 40];
        f.read_exact(&mut head).map_err(|_| bad("too short"))?;
        if &head[0..8] == STATE_MAGIC_V1 {
            return Err(Error::document(format!(
                "{p} was written by an older iomark, whose block checksums did not cover the header; verify it with that version, or write the target again with --verify-state"
            )));
        }
        let (target, id_len) = match &head[0..8] {
            m if m == STATE_MAGIC => TargetId::read(&mut f).map_err(bad)?,
            m if m == STATE_MAGIC_V2 => (None, 0),
            _ => return Err(bad("wrong magic")),
        };
        let (base, bs, seed, n) = (
            le64(&head, 8),
            le64(&head, 16),
            le64(&head, 24),
            le64(&head, 32),
        );
        let want = 40 + id_len + n * 8;
        if bs == 0 || n > MAX_BLOCKS || len != want {
            return Err(bad(if len < want {
                "truncated"
            } else {
                "implausible header"
            }));
        }
        let mut gens = Vec::with_capacity(n as usize);
        let mut g = [0u8; 8];
        for _ in 0..n {
            f.read_exact(&mut g).map_err(|_| bad("truncated"))?;
            gens.push(u64::from_le_bytes(g));
        }
        Ok(GenMap {
            base,
            bs,
            seed,
            gens,
            target,
        })
    }
}

/// Reads back every block the map says was written, and only those, and checks it: runs
/// of adjacent written blocks are read at once (up to 1 MiB). `file` must accept reads at
/// block-aligned offsets into a 4096-aligned buffer (O_DIRECT or not).
/// Reads back every written block of `map` from `file` and checks it. `stop` is asked
/// between reads (at most 1 MiB apart): when it says stop, the blocks checked so far are
/// returned and the caller marks the result interrupted.
pub(crate) fn verify(
    file: &std::fs::File,
    map: &GenMap,
    stop: &dyn Fn() -> bool,
) -> Result<VerifyReport> {
    let bs = map.bs as usize;
    let per_read = ((1usize << 20) / bs).max(1);
    let mut pool = crate::io::engine::BufferPool::new(1, per_read * bs, 4096)
        .map_err(|e| Error::io("allocating the verify buffer", &e))?;
    // Safety: the pool belongs to this function and no request is ever in flight on it;
    // the reads below are synchronous.
    let buf = unsafe { pool.slot_mut(0) };
    let mut rep = VerifyReport::default();
    let planned = map.gens.iter().filter(|&&g| g != 0).count() as u64;
    let n = map.gens.len();
    let mut i = 0;
    while i < n && !stop() {
        if map.gens[i] == 0 {
            i += 1;
            continue;
        }
        // A run of written blocks: i..i + k.
        let k = map.gens[i..n.min(i + per_read)]
            .iter()
            .take_while(|&&g| g != 0)
            .count();
        let off = map.base + i as u64 * map.bs;
        let (got, res) = crate::io::sys::read_full_at(file, &mut buf[..k * bs], off);
        res.map_err(|e| Error::io(format!("reading back offset {}", off + got as u64), &e))?;
        rep.bytes_read += got as u64;
        for j in 0..k {
            let boff = off + (j * bs) as u64;
            let state = if (j + 1) * bs <= got {
                check(&buf[j * bs..(j + 1) * bs], boff, map.seed, map.gens[i + j])
            } else {
                BlockState::Corrupt
            };
            rep.count(boff, state);
        }
        i += k;
    }
    rep.cut_at(planned);
    Ok(rep)
}

/// `iomark verify`: loads the state file and checks `target` against it.
pub fn load_and_verify(
    target: &Path,
    state: &Path,
    buffered: bool,
    stop: &StopFlag,
) -> Result<VerifyReport> {
    verify_target((target, state), &GenMap::load(state)?, buffered, stop)
}

/// `iomark verify`: opens `target` for reading (O_DIRECT unless `buffered`) and checks
/// every block the state file (`state`, its `map`) says was written; another target than
/// the state's is refused. `stop` cuts it short (the caller says so).
pub fn verify_target(
    (target, state): (&Path, &Path),
    map: &GenMap,
    buffered: bool,
    stop: &crate::stop::StopFlag,
) -> Result<VerifyReport> {
    use std::os::unix::fs::OpenOptionsExt;
    let p = target.display();
    if target.is_dir() {
        return Err(Error::target(format!(
            "{p} is a directory; give the file or block device the run wrote"
        )));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(if buffered {
            0
        } else {
            crate::io::sys::O_DIRECT
        })
        .open(target)
        .map_err(|e| match e.raw_os_error() {
            Some(crate::io::sys::EINVAL) => Error::target(format!(
                "the filesystem under {p} refuses O_DIRECT; use --buffered"
            )),
            _ => Error::target(format!("cannot open {p}: {}", describe_io(&e))),
        })?;
    if let Some(id) = &map.target {
        id.check(state, target, &file)?;
    }
    // A target shorter than what the state covers was not the one written (or was cut):
    // its missing blocks would read as corrupt.
    let len = file.metadata().ok().map(|md| {
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        match md.file_type().is_block_device() {
            true => crate::io::sys::block_device_size(file.as_fd()).unwrap_or(u64::MAX),
            false => md.len(),
        }
    });
    let covers = map.base + map.gens.len() as u64 * map.bs;
    if let Some(len) = len.filter(|&l| l < covers) {
        return Err(Error::target(format!(
            "{p} is {}, shorter than the {} the state file covers: it is not the target that run wrote, or it was cut since; give the file or device the run wrote",
            crate::units::fmt_size(len),
            crate::units::fmt_size(covers)
        )));
    }
    verify(&file, map, &|| stop.is_set())
}

/// `--verify`: reads every block written in this repetition back and checks it. Not
/// timed. A bad block becomes the repetition's error (unless it already has one).
pub(crate) fn verify_back(
    spec: &Spec,
    target: &Target,
    job_gens: Vec<(u64, Vec<u64>)>,
    error: &mut Option<Error>,
    (stop, sink): (&StopFlag, &mut dyn Sink),
) -> (Option<GenMap>, Option<crate::results::schema::VerifyReport>) {
    let Some(file) = target.file() else {
        return (None, None);
    };
    let mut map = GenMap::new(target.base, target.span, spec.bs, spec.seed);
    map.target = TargetId::of(&target.path, file);
    for (base, gens) in job_gens {
        let first = ((base - target.base) / spec.bs) as usize;
        for (i, g) in gens.into_iter().enumerate() {
            if g != 0 {
                map.gens[first + i] = g;
            }
        }
    }
    // Read from the device, not from the page cache.
    target.drop_cache();
    let sink = std::cell::RefCell::new(sink);
    let go = || {
        sink.borrow_mut().alive();
        stop.is_set()
    };
    let report: Result<_> = crate::measure::verify::verify(file, &map, &go);
    match report {
        Ok(r) => {
            if r.bad() > 0 && error.is_none() {
                *error = Some(Error::runtime(format!(
                    "{} on {}; the data read back is not what was written",
                    r.describe(),
                    target.path.display()
                )));
            }
            (Some(map), Some(r))
        }
        Err(e) => {
            error.get_or_insert(e);
            (Some(map), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    fn block(offset: u64, seed: u64, g: u64) -> Vec<u8> {
        let mut b: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        stamp(&mut b, offset, seed, g);
        b
    }

    #[test]
    fn classifies_blocks() {
        let b = block(8192, 1, 5);
        assert_eq!(check(&b, 8192, 1, 5), BlockState::Good);
        assert_eq!(check(&b, 4096, 1, 5), BlockState::Misplaced);
        assert_eq!(check(&b, 8192, 1, 6), BlockState::Stale);
        assert_eq!(check(&b, 8192, 2, 5), BlockState::Stale);
        assert_eq!(check(&b, 8192, 1, 4), BlockState::Corrupt);
        let mut flipped = b.clone();
        flipped[1000] ^= 1;
        assert_eq!(check(&flipped, 8192, 1, 5), BlockState::Corrupt);
        assert_eq!(check(&[0u8; 4096], 8192, 1, 5), BlockState::Corrupt);
        // A flipped bit anywhere in the header (offset, seed, generation, CRC, size) is
        // corrupt, not misplaced or stale.
        for byte in [8, 9, 16, 24, 32, 36] {
            let mut h = b.clone();
            h[byte] ^= 1;
            assert_eq!(check(&h, 8192, 1, 5), BlockState::Corrupt, "byte {byte}");
        }
    }

    #[test]
    fn state_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s");
        let mut m = GenMap::new(4096, 40960, 4096, 9);
        m.gens[3] = 77;
        m.save(&p).unwrap();
        assert_eq!(GenMap::load(&p).unwrap(), m);
        std::fs::write(&p, b"nonsense").unwrap();
        assert!(matches!(
            GenMap::load(&p),
            Err(crate::error::Error::Document(_))
        ));
        // An older iomark's state, a device, a file longer than its header says.
        m.save(&p).unwrap();
        let mut old = std::fs::read(&p).unwrap();
        old[0..8].copy_from_slice(STATE_MAGIC_V1);
        std::fs::write(&p, &old).unwrap();
        let err = GenMap::load(&p).unwrap_err().to_string();
        assert!(err.contains("older iomark"), "{err}");
        let err = GenMap::load(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("it is a character device"), "{err}");
        m.save(&p).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(&[0; 8]).unwrap();
        let err = GenMap::load(&p).unwrap_err().to_string();
        assert!(err.contains("implausible header"), "{err}");
    }

    #[test]
    fn a_state_names_its_target_and_an_older_one_reads_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let (p, t) = (dir.path().join("s"), dir.path().join("t.dat"));
        std::fs::write(&t, vec![0u8; 40960]).unwrap();
        let mut m = GenMap::new(0, 40960, 4096, 9);
        m.gens[2] = 5;
        m.target = TargetId::of(&t, &std::fs::File::open(&t).unwrap());
        let id = m.target.clone().unwrap();
        assert_eq!(
            (id.given.as_str(), id.size, id.block_device),
            (t.to_str().unwrap(), 40960, false)
        );
        m.save(&p).unwrap();
        assert_eq!(GenMap::load(&p).unwrap(), m);
        // The previous format: the same header and map, no identity.
        let mut v2 = STATE_MAGIC_V2.to_vec();
        for v in [0u64, 4096, 9, 10] {
            v2.extend(v.to_le_bytes());
        }
        for g in &m.gens {
            v2.extend(g.to_le_bytes());
        }
        std::fs::write(&p, &v2).unwrap();
        assert!(is_state(&v2));
        let old = GenMap::load(&p).unwrap();
        assert_eq!((old.target, old.gens), (None, m.gens.clone()));
        // A cut identity is a truncated state, not a panic.
        m.save(&p).unwrap();
        let full = std::fs::read(&p).unwrap();
        std::fs::write(&p, &full[..60]).unwrap();
        let err = GenMap::load(&p).unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");
    }

    #[test]
    fn verify_reads_back_a_file() {
        let f = tempfile::tempfile().unwrap();
        let mut m = GenMap::new(0, 8 * 4096, 4096, 3);
        for i in 0..8u64 {
            f.write_all_at(&block(i * 4096, 3, i + 1), i * 4096)
                .unwrap();
            m.gens[i as usize] = i + 1;
        }
        m.gens[7] = 0; // never written: not checked
        let r = verify(&f, &m, &|| false).unwrap();
        assert_eq!((r.blocks, r.good, r.bad()), (7, 7, 0));
        assert_eq!(r.bytes_read, 7 * 4096);
        f.write_all_at(&block(0, 3, 1), 2 * 4096).unwrap(); // block 0's copy at block 2
        f.write_all_at(&block(3 * 4096, 3, 1), 3 * 4096).unwrap(); // older generation
        let r = verify(&f, &m, &|| false).unwrap();
        assert_eq!((r.good, r.misplaced, r.stale), (5, 1, 1));
        assert_eq!(r.first_bad[0].offset, 2 * 4096);
    }

    #[test]
    fn verify_reads_only_written_blocks() {
        // Blocks 1, 2, 3 and 600 of a 1000-block span written: four blocks read, not
        // 1 MiB around each.
        let f = tempfile::tempfile().unwrap();
        f.set_len(1000 * 4096).unwrap();
        let mut m = GenMap::new(0, 1000 * 4096, 4096, 3);
        for (g, i) in [1u64, 2, 3, 600].into_iter().enumerate() {
            f.write_all_at(&block(i * 4096, 3, g as u64 + 1), i * 4096)
                .unwrap();
            m.gens[i as usize] = g as u64 + 1;
        }
        let r = verify(&f, &m, &|| false).unwrap();
        assert_eq!((r.blocks, r.good, r.bytes_read), (4, 4, 4 * 4096), "{r:?}");
    }

    #[test]
    fn a_read_back_cut_short_says_how_much_it_checked() {
        // probe12 finding 10: a read-back stopped by Ctrl-C read like a complete one.
        // Blocks 0, 1, 2 and 600 written: stopped after the first read (blocks 0 to 2).
        let f = tempfile::tempfile().unwrap();
        f.set_len(1000 * 4096).unwrap();
        let mut m = GenMap::new(0, 1000 * 4096, 4096, 3);
        for (g, i) in [0u64, 1, 2, 600].into_iter().enumerate() {
            f.write_all_at(&block(i * 4096, 3, g as u64 + 1), i * 4096)
                .unwrap();
            m.gens[i as usize] = g as u64 + 1;
        }
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() > 1
        };
        let r = verify(&f, &m, &stop).unwrap();
        assert_eq!(
            (r.blocks, r.cut_short, r.planned_blocks),
            (3, true, Some(4))
        );
        assert!(
            r.describe().starts_with(
                "verify CUT SHORT: 3 of 4 written blocks checked (12 KiB read): 3 good"
            ),
            "{}",
            r.describe()
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            (json["cut_short"].clone(), json["planned_blocks"].clone()),
            (true.into(), 4.into())
        );
        // Summed with a whole one (another target's): cut short, of both's blocks.
        let whole = verify(&f, &m, &|| false).unwrap();
        assert!(!whole.cut_short && whole.planned_blocks.is_none());
        assert!(!serde_json::to_string(&whole).unwrap().contains("cut_short"));
        let sum = whole.clone().plus(&r);
        assert_eq!(
            (sum.blocks, sum.cut_short, sum.planned_blocks),
            (7, true, Some(8))
        );
        assert_eq!(whole.clone().plus(&whole).planned_blocks, None);
    }
}
