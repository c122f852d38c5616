//! `--as-fio`: a job's files (`filename`, or `nrfiles` and `directory` for jobs that each
//! serve files named as fio names them; `file_service_type`) and how fio prepares a new
//! one.

use crate::plan::new_file::NewFile;
use crate::plan::spec::Spec;

/// The job's files: `filename` (a `:` list with `--file-service`), or, for jobs that
/// each serve their own files named as fio names them, `nrfiles` and `directory`; and
/// `file_service_type`.
pub(super) fn files(w: &mut impl FnMut(String), name: &str, s: &Spec) {
    if !s.engine.caps().needs_fd {
        return;
    }
    let esc = |t: &str| t.replace(':', "\\:");
    let paths = s.target_paths();
    match s.file_service {
        None => w(format!("filename={}", esc(paths[0]))),
        Some(fs) => {
            match fs.split.then(|| fio_names(&paths, name, s.jobs)).flatten() {
                Some((per, dirs)) => {
                    w(format!("nrfiles={per}"));
                    if !dirs.is_empty() {
                        let d: Vec<String> = dirs.iter().map(|d| esc(d)).collect();
                        w(format!("directory={}", d.join(":")));
                    }
                }
                None => {
                    let files: Vec<String> = paths.iter().map(|t| esc(t)).collect();
                    w(format!("filename={}", files.join(":")));
                    if fs.split {
                        w("# split-targets: each iomark job serves its own share of these files; fio's copies share a filename list (its nrfiles names each copy's own files JOB.COPY.FILE)".into());
                    }
                }
            }
            w(format!("file_service_type={}", fs.fio_text()));
        }
    }
    // fio writes a new file first for a job that reads, or with overwrite=1; for one
    // that only writes it allocates it, as `--new-file allocate` does.
    if s.new_file == NewFile::Write && !s.reads() {
        match s.rw.trims() {
            false => w("overwrite=1".into()),
            true => w("# new-file write: iomark writes a new file before the trims; fio only allocates it".into()),
        }
    }
}

/// `paths` split between `jobs` jobs as fio's `nrfiles` names them for job `name`
/// (`DIR/NAME.COPY.FILE`, copy j in the j-th directory, cycling): the files per job and
/// the directories (none for names without one); `None` when they are other names.
fn fio_names(paths: &[&str], name: &str, jobs: u32) -> Option<(usize, Vec<String>)> {
    let jobs = jobs.max(1) as usize;
    let per = paths.len() / jobs;
    let mut copy_dirs: Vec<&str> = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let (dir, file) = p.rsplit_once('/').unwrap_or(("", p));
        if file != format!("{name}.{}.{}", i / per, i % per) {
            return None;
        }
        match copy_dirs.get(i / per) {
            None => copy_dirs.push(dir),
            Some(d) if *d == dir => {}
            Some(_) => return None,
        }
    }
    if copy_dirs.iter().any(|d| d.is_empty()) {
        return copy_dirs
            .iter()
            .all(|d| d.is_empty())
            .then_some((per, Vec::new()));
    }
    // The shortest list that, cycled, gives every copy its directory.
    let n = (1..=jobs).find(|n| (0..jobs).all(|j| copy_dirs[j] == copy_dirs[j % n]))?;
    Some((per, copy_dirs[..n].iter().map(|d| d.to_string()).collect()))
}
