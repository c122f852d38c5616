//! `iomark data`: the exact stream a write run's first job writes, produced without a
//! target, and measured in full (every chunk compressed, every unit hashed).

use std::io::Write;

use crate::error::{Error, Result};
use crate::plan::StreamEnd;
use crate::plan::spec::Spec;
use crate::results::schema::DataMeasure;
use crate::stop::StopFlag;
use crate::workload::corpus::load_for;
use crate::workload::sampler::Sampler;
use crate::workload::seed::{job_data, job_sizes, job_stream, spec_stream};

/// What `iomark data` produced: the measure of the stream, and where it ended.
#[derive(Debug, Clone, Copy)]
pub struct Produced {
    pub measure: DataMeasure,
    pub end: StreamEnd,
}

/// Writes the stream job 1 of the first repetition of `spec` writes to `out`, its whole
/// writes (of `spec.bs`, or drawn from its mix as the job draws them) while they fit in
/// `size`, and measures all of it. A closed pipe (`| head -c`) ends the stream with
/// `Error::Stdout` (exit 141, nothing printed): the stream was not the one asked for, and
/// its measure would be of a part.
pub(crate) fn produce_stream(
    spec: &Spec,
    size: u64,
    out: &mut dyn Write,
    stop: &StopFlag,
) -> Result<Produced> {
    let mut data = job_data(spec, 0, 0, load_for(&spec.data)?);
    let mut sizes = job_sizes(spec, job_stream(spec_stream(spec, 0), 0));
    let mut sampler = Sampler::exhaustive(&spec.data);
    let mut buf = vec![0u8; spec.bs as usize];
    let (mut bytes, mut writes, mut next) = (0u64, 0u64, 0u64);
    let failed = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::BrokenPipe => Error::Stdout(e),
        _ => Error::io("writing the data stream", &e),
    };
    while !stop.is_set() {
        // As a run's last writes before its span's end, those of a mix fit in `size`.
        let n = sizes.next_len_within(false, size - bytes) as usize;
        if bytes + n as u64 > size {
            next = n as u64;
            break;
        }
        data.fill(&mut buf[..n]);
        sampler.observe(&buf[..n]);
        out.write_all(&buf[..n]).map_err(failed)?;
        bytes += n as u64;
        writes += 1;
    }
    out.flush().map_err(failed)?;
    let measure = sampler
        .measure()
        .ok_or_else(|| Error::runtime("no data was produced"))?;
    Ok(Produced {
        measure,
        end: StreamEnd {
            bytes,
            writes,
            next: if bytes == size { 0 } else { next },
        },
    })
}

/// `iomark data -o OUTPUT`: the stream to stdout (`-`) or to a new file (never an
/// existing one).
/// Whether `path` is the null device (character device 1:3), whatever its name.
fn is_dev_null(path: &std::path::Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    std::fs::metadata(path).is_ok_and(|m| {
        m.file_type().is_char_device() && crate::io::sys::major_minor(m.rdev()) == (1, 3)
    })
}

/// Whether `path` is a regular file (or a link to one).
fn is_regular(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

pub fn write_stream(spec: &Spec, size: u64, output: &str, stop: &StopFlag) -> Result<Produced> {
    if output == "-" {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() {
            return Err(Error::usage(
                "iomark data writes binary data and stdout is a terminal: redirect it (> FILE, | zstd -c | wc -c) or give -o FILE",
            ));
        }
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
        return produce_stream(spec, size, &mut w, stop);
    }
    let path = std::path::Path::new(output);
    if is_dev_null(path) {
        // Only the figures: the stream is made and thrown away.
        let null = std::fs::OpenOptions::new().write(true).open(path);
        let null = null.map_err(|e| Error::io(format!("cannot open {output}"), &e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, null);
        return produce_stream(spec, size, &mut w, stop);
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            // create_new follows no link, not even a dangling one.
            std::io::ErrorKind::AlreadyExists
                if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
            {
                Error::guard(format!(
                    "{} is a symbolic link; iomark data writes a new file, never through a link: choose a new file name, or -o - and redirect stdout",
                    path.display()
                ))
            }
            std::io::ErrorKind::AlreadyExists if !is_regular(path) => Error::guard(format!(
                "{} is not a regular file (a device, FIFO, socket or directory); iomark data writes a new file, or /dev/null for the figures alone: choose a new file name, or -o - and redirect stdout",
                path.display()
            )),
            std::io::ErrorKind::AlreadyExists => Error::guard(format!(
                "{} exists; iomark does not overwrite it: remove it or choose another name",
                path.display()
            )),
            _ => Error::target(format!(
                "cannot create {}: {}",
                path.display(),
                crate::error::describe_io(&e)
            )),
        })?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    let measured = produce_stream(spec, size, &mut w, stop);
    drop(w);
    if stop.is_set() || measured.is_err() {
        // A cut stream is not the stream asked for: do not leave it behind.
        let _ = std::fs::remove_file(path);
        measured?;
        return Err(Error::runtime(format!(
            "interrupted; the partial {} was removed",
            path.display()
        )));
    }
    measured
}
