//! The block sizes' side of resolving run options: `--write-bs` against the pattern
//! (a mix's writes, a writing pattern's size, a note where it does nothing, trimwrite's
//! one size), a decimal block size's note, `--size Nxmem`, and the note for a TARGET the
//! null engine does not open. No I/O.

use crate::error::{Error, Result};
use crate::plan::System;
use crate::plan::bsmix::{BsMix, WriteBs};
use crate::plan::options::RunOptions;
use crate::plan::resolve::size_opt;
use crate::plan::spec::{EngineKind, Rw, Spec};
use crate::units::parse_size;

/// A note when a block size written with a decimal suffix (4KB = 4000 bytes in iomark,
/// 4096 in fio) is not a multiple of 512.
pub(super) fn decimal_block(text: &str, bs: u64) -> Option<String> {
    let t = text.trim().to_ascii_lowercase();
    let decimal = ["kb", "mb", "gb"].iter().any(|s| t.ends_with(s));
    (decimal && !bs.is_multiple_of(512)).then(|| {
        let binary = t.replace("kb", "k").replace("mb", "m").replace("gb", "g");
        format!(
            "--bs {text} is {bs} bytes (KB, MB, GB are powers of 1000 in iomark; fio reads them as powers of 1024): write {binary} for {} bytes",
            parse_size(&binary).unwrap_or(0)
        )
    })
}

/// `--size 2xmem`: a multiple of this machine's memory (the seeds size files at twice
/// the memory to defeat the page cache), and the note saying what it came to.
pub(super) fn memory_multiple(text: &str, sys: &System) -> Result<Option<(u64, String)>> {
    let Some(factor) = text.trim().strip_suffix("xmem") else {
        return Ok(None);
    };
    let f: f64 = factor
        .parse()
        .ok()
        .filter(|f: &f64| *f > 0.0 && f.is_finite())
        .ok_or_else(|| {
            Error::usage(format!(
                "--size {text}: '{factor}' is not a positive factor (e.g. 2xmem)"
            ))
        })?;
    if sys.memory_bytes == 0 {
        return Err(Error::usage(format!(
            "--size {text}: the machine's memory is unknown here; give a size (e.g. 64g)"
        )));
    }
    // Whole MiB, so that every block size up to 1 MiB divides it.
    let bytes = ((sys.memory_bytes as f64 * f) as u64) >> 20 << 20;
    let note = format!(
        "--size {text} is {} ({f} x this machine's {} of memory)",
        crate::units::fmt_size(bytes),
        crate::units::fmt_size(sys.memory_bytes)
    );
    Ok(Some((bytes, note)))
}

/// The note for a TARGET given to the null engine, which opens nothing.
pub(super) fn unused_target(target: Option<&str>, engine: EngineKind) -> Option<String> {
    target
        .filter(|t| engine == EngineKind::Null && !["", "null"].contains(t))
        .map(|t| {
            format!(
                "--engine null does no I/O: {t} is not opened (nothing is read, written or created there)"
            )
        })
}

impl RunOptions {
    /// `--write-bs` into `spec` (whose pattern and block sizes are set): a mix's writes'
    /// sizes, a writing pattern's size; the note when the run writes nothing.
    pub(super) fn write_bs(&self, spec: &mut Spec) -> Result<Option<String>> {
        let Some(t) = self.text("write-bs") else {
            return Ok(None);
        };
        let w = WriteBs::parse(t, |s| size_opt("--write-bs", s))?;
        let reads = || {
            (spec.bs_mix.as_ref()).map_or_else(
                || format!("--bs {}", self.text_or_default("bs")),
                BsMix::opt,
            )
        };
        match spec.rw {
            // A mix: the writes' own sizes, unless they are the reads'.
            rw if rw.is_mixed() => {
                let same = w.mix == spec.bs_mix && w.bs == spec.bs;
                spec.write_bs = (!same).then_some(w);
            }
            // trimwrite trims and then writes each block: one size for both sides; a
            // trim writes nothing, and its one size is not chosen by the option that loses.
            rw if rw.trims()
                && (self.given("bs") || spec.bs_mix.is_some())
                && (w.bs, &w.mix) != (spec.bs, &spec.bs_mix) =>
            {
                let why = match rw {
                    Rw::TrimWrite => "trims each block and then writes it",
                    _ => "trims blocks of one size (--write-bs gives it when --bs does not)",
                };
                return Err(Error::usage(format!(
                    "--rw {} {why}, so {} and --write-bs {t} must be the same; give one of them",
                    rw.name(),
                    reads()
                )));
            }
            // One direction: a writing pattern takes the writes' sizes (fio's second
            // side), a reading one keeps --bs.
            rw if rw.writes_data() || rw.trims() => {
                // The reads' sizes the user gave go unused: say so, as the mirror case.
                let lost = (self.given("bs") || spec.bs_mix.is_some())
                    && (w.bs, &w.mix) != (spec.bs, &spec.bs_mix);
                let note = lost.then(|| {
                    format!(
                        "{} does nothing here: --rw {} reads nothing (its writes use --write-bs {t})",
                        reads(),
                        rw.name()
                    )
                });
                (spec.bs, spec.bs_mix) = (w.bs, w.mix);
                return Ok(note);
            }
            rw => {
                return Ok(Some(format!(
                    "--write-bs {t} does nothing here: --rw {} writes nothing (its reads use {})",
                    rw.name(),
                    reads()
                )));
            }
        }
        Ok(None)
    }
}
