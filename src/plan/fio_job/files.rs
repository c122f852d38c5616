//! A fio job's files and their sizes: `filename` (a `:` list, `\:` for a colon in a
//! name; every copy of the job shares them), else fio's own names `JOB.COPY.FILE`
//! (`nrfiles` per copy, each copy its own; `directory` as a `:` list gives copy j the
//! j-th directory, cycling, as fio does), `size` split evenly between a job's files
//! unless `filesize` sizes each, and `file_service_type`. A job with several files runs
//! with `--file-service` (and `--split-targets` when each copy has its own). And how fio
//! prepares a new file (`overwrite`, `--new-file`).

use super::map::{Ctx, split_colons};
use crate::error::{Error, Result};
use crate::plan::files::FileService;
use crate::plan::spec::Rw;

/// Maps the job's files and sizes; see the module documentation.
pub(super) fn target(c: &mut Ctx, null: bool) -> Result<()> {
    let dirs: Vec<String> = c.value("directory").map(split_colons).unwrap_or_default();
    let nrfiles = count(c, "nrfiles")?.unwrap_or(1);
    // Resolution checks `numjobs` itself; an unreadable one is taken as 1 here.
    let copies = c.value("numjobs").and_then(|n| n.parse::<u64>().ok());
    let copies = copies.unwrap_or(1).max(1);
    // fio puts a file in `directory` even when its name is absolute (measured with fio
    // 3.33: directory=/a and filename=/b/f make /a/b/f).
    let in_dir = |dir: Option<&String>, file: String| match dir {
        Some(d) => format!(
            "{}/{}",
            d.trim_end_matches('/'),
            file.trim_start_matches('/')
        ),
        None => file,
    };
    let name = c.job.name.clone();
    let (files, split) = match c.value("filename").map(split_colons) {
        Some(list) => {
            if c.value("nrfiles").is_some() && nrfiles != list.len() as u64 {
                let note = "nrfiles is ignored with filename, as in fio (the list names the files)";
                c.job.notes.push(note.into());
            }
            let expanded: Vec<String> = (list.iter().enumerate())
                .map(|(i, f)| {
                    (f.replace("$jobname", &name))
                        .replace("$jobnum", "0")
                        .replace("$filenum", &i.to_string())
                })
                .collect();
            if expanded.iter().any(|f| f.contains('$')) {
                c.refuse(
                    "filename",
                    "iomark expands $jobname, $jobnum and $filenum only",
                );
            }
            let files = expanded.into_iter().map(|f| in_dir(dirs.first(), f));
            (files.collect::<Vec<String>>(), false)
        }
        None if null => return sizes(c, 1),
        // Each copy its own files, as fio names them.
        None if nrfiles > 1 || (dirs.len() > 1 && copies > 1) => {
            let all = (0..copies).flat_map(|j| (0..nrfiles).map(move |f| (j, f)));
            let files = all.map(|(j, f)| {
                let dir = (!dirs.is_empty()).then(|| &dirs[j as usize % dirs.len()]);
                in_dir(dir, format!("{name}.{j}.{f}"))
            });
            (files.collect(), copies > 1)
        }
        // One file; fio gives each copy its own, and so does iomark (`own_files`).
        None => {
            if copies > 1 {
                c.job.copy_files = (0..copies)
                    .map(|j| in_dir(dirs.first(), format!("{name}.{j}.0")))
                    .collect();
            }
            (vec![in_dir(dirs.first(), format!("{name}.0.0"))], false)
        }
    };
    let per_job = if split { nrfiles } else { files.len() as u64 };
    open_files(c, per_job)?;
    sizes(c, per_job)?;
    service(c, files.len() > 1, split);
    c.job.target = files.first().cloned();
    if files.len() > 1 {
        c.job.targets = files;
    }
    Ok(())
}

/// `size` (the job's total, split evenly between its `per_job` files) and `filesize`
/// (each file's size; fio then moves the smaller of `size` and all its files, unless
/// `io_size` says).
fn sizes(c: &mut Ctx, per_job: u64) -> Result<()> {
    // A share of the file or device (fio's size=50%): one file per job only.
    if let Some(p) = (c.value("size").filter(|v| v.ends_with('%'))).map(str::to_string) {
        match per_job > 1 || c.get("filesize").is_some() {
            true => c.refuse(
                "size",
                "a percentage with several files per job or a filesize",
            ),
            false => c.set("size", p),
        }
        return Ok(());
    }
    let size = c.bytes("size")?;
    match c.bytes("filesize")? {
        Some(fs) => {
            c.set("size", fs.to_string());
            if let Some(s) = size.filter(|_| c.get("io_size").is_none()) {
                c.set("io-size", s.min(fs.saturating_mul(per_job)).to_string());
            }
        }
        None => {
            if let Some(s) = size {
                c.set("size", (s / per_job.max(1)).to_string());
            }
        }
    }
    Ok(())
}

/// `file_service_type` (fio's default `roundrobin`) for a job with several files; with
/// one it changes nothing, but a kind iomark lacks is refused all the same.
fn service(c: &mut Ctx, several: bool, split: bool) {
    let asked = c
        .value("file_service_type")
        .unwrap_or("roundrobin")
        .to_string();
    // Refused: run without it (--ignore-unsupported), fio's default.
    let fs = FileService::from_fio(&asked).unwrap_or_else(|_| {
        c.refuse(
            "file_service_type",
            "iomark serves files by roundrobin, sequential or random (with :N), zipf[:θ], pareto[:h] or normal:σ (gauss:σ); normal needs its σ",
        );
        FileService::parse("roundrobin").expect("a kind iomark knows")
    });
    if !several {
        return;
    }
    let kind = asked.split(':').next().unwrap_or("").trim();
    let note = match kind {
        "pareto" => Some(format!(
            "file_service_type={asked} is iomark's pareto:{} (fio's h counts the other way in its file choice; the same shares per file)",
            fs.param.unwrap_or_default()
        )),
        "sequential" if asked.contains(':') => Some(format!(
            "file_service_type={asked}: fio 3.33 stays on each file to its end whatever N says, and so does iomark"
        )),
        "normal" | "gauss" => Some(format!(
            "file_service_type={asked}: iomark's σ is a percentage of the files (fio's draws narrower: normal:20 put 99% of fio's I/Os on the middle two of four files, 79% of iomark's)"
        )),
        _ => None,
    };
    c.job.notes.extend(note);
    c.set("file-service", fs.text());
    if split {
        c.job.opts.push(("split-targets".into(), None));
    }
}

/// `openfiles=N`: iomark keeps every file of a job open for the whole run, which is what
/// fio does with N at least the job's `per_job` files (N then changes nothing); with
/// fewer, fio serves its files a few at a time (opening the next when one is done, on
/// the clock), which iomark does not do: refused.
fn open_files(c: &mut Ctx, per_job: u64) -> Result<()> {
    match count(c, "openfiles")? {
        Some(n) if n < per_job => c.refuse(
            "openfiles",
            &format!(
                "iomark keeps all of a job's files open, and fio with openfiles below the job's {per_job} files serves them a few at a time; give openfiles={per_job} or more, or drop it"
            ),
        ),
        _ => {}
    }
    Ok(())
}

/// A whole number of at least 1, fio's way.
fn count(c: &Ctx, key: &str) -> Result<Option<u64>> {
    let Some(e) = c.get(key) else {
        return Ok(None);
    };
    let v = e.value.as_deref().unwrap_or("").trim();
    match v.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(Error::usage(format!(
            "{}: {key}={v} is not a count of files (1 or more)",
            e.at
        ))),
    }
}

/// How fio prepares a file it creates: it writes it (lays it out) for a job whose
/// pattern reads, or with `overwrite=1`; for a job that only writes or trims it only
/// allocates it (`fallocate`, fio's default). So such a job runs with `--new-file
/// allocate`.
pub(super) fn new_file(c: &mut Ctx) -> Result<()> {
    let overwrite = c.on("overwrite")?.unwrap_or(false);
    // By the pattern, whatever the mix (fio lays out for `randrw` with `rwmixread=0` too).
    let rw = Rw::parse(c.job.opt("rw").unwrap_or("read"));
    let reads = rw.is_none_or(|rw| rw.read_pct(50) > 0);
    if !overwrite && !reads {
        c.set("new-file", "allocate");
        // fio's default (native, posix) is iomark's way; without it fio leaves the file
        // sparse, which iomark does not.
        if let Some(how) = (c.value("fallocate").map(str::to_string))
            .filter(|v| matches!(v.as_str(), "none" | "0" | "truncate"))
        {
            (c.job.notes).push(format!("fallocate={how}: iomark reserves a new file's space (posix_fallocate), as fio's default does; fio would leave it sparse"));
        }
    }
    if c.on("allow_file_create")? == Some(false) {
        c.refuse("allow_file_create", "iomark makes a file that does not exist; drop it, and give a file that exists if that is the point");
    }
    if c.on("file_append")? == Some(true) {
        c.refuse(
            "file_append",
            "iomark does its I/O within the span it is given, not past the file's end",
        );
    }
    Ok(())
}

/// Gives each `numjobs` copy of a job without `filename` its own file, as fio does
/// (`JOB.COPY.0`, each copy with its own: `--split-targets`), whether the job runs alone
/// or with the rest of its group.
pub(super) fn own_files(job: &mut super::map::MappedJob) {
    if job.copy_files.is_empty() {
        return;
    }
    let files = std::mem::take(&mut job.copy_files);
    job.target = files.first().cloned();
    job.targets = files;
    job.opts
        .push(("file-service".into(), Some("roundrobin".into())));
    job.opts.push(("split-targets".into(), None));
}
