//! Several files served by one job (`--file-service`, fio's `file_service_type` over the
//! files of `filename=a:b` or `nrfiles`): which file each I/O goes to, and whether every
//! job serves every target or each its own share (`--split-targets`). The choice itself
//! is made per I/O by `measure::files`; here are the kinds, their text and their checks.
//! No I/O.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::spec::Spec;

/// How a job picks the file of its next I/O (fio's `file_service_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Service {
    /// The next file after every `every` I/Os, in order (fio's default).
    RoundRobin,
    /// One file until its span has been issued, then the next.
    Sequential,
    /// A file drawn at random (uniformly) every `every` I/Os.
    Random,
}

/// `--file-service KIND[:N]` and `--split-targets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileService {
    pub kind: Service,
    /// I/Os issued to a file before the job switches (roundrobin and random; 1 unless
    /// `:N` was given).
    pub every: u32,
    /// Each job serves its own share of the targets (job j of J: targets j×N/J to
    /// (j+1)×N/J − 1), as fio's copies each have their own `nrfiles` files; otherwise
    /// every job serves every target (fio's `filename=a:b`, shared by the copies).
    #[serde(default)]
    pub split: bool,
}

impl FileService {
    /// Reads `roundrobin`, `sequential` or `random`, with `:N` on the first and last.
    pub fn parse(text: &str) -> Result<FileService> {
        let (kind, n) = match text.trim().split_once(':') {
            Some((k, n)) => (k, Some(n)),
            None => (text.trim(), None),
        };
        let kind = match kind {
            "roundrobin" => Service::RoundRobin,
            "sequential" => Service::Sequential,
            "random" => Service::Random,
            _ => {
                return Err(Error::usage(format!(
                    "--file-service {text}: use roundrobin, sequential or random (with :N for roundrobin and random: switch after N I/Os)"
                )));
            }
        };
        let every = match n {
            None => 1,
            Some(_) if kind == Service::Sequential => {
                return Err(Error::usage(format!(
                    "--file-service {text}: sequential stays on a file until its span is done; drop :N, or use roundrobin:N"
                )));
            }
            Some(n) => n.trim().parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                Error::usage(format!(
                    "--file-service {text}: '{n}' is not a count of I/Os (at least 1), e.g. roundrobin:4"
                ))
            })?,
        };
        Ok(FileService {
            kind,
            every,
            split: false,
        })
    }

    /// The text `parse` reads (and fio's `file_service_type` value).
    pub fn text(&self) -> String {
        let kind = match self.kind {
            Service::RoundRobin => "roundrobin",
            Service::Sequential => "sequential",
            Service::Random => "random",
        };
        match self.every {
            1 => kind.to_string(),
            n => format!("{kind}:{n}"),
        }
    }
}

/// `--file-service` and `--split-targets` as given.
pub(crate) fn resolve(o: &crate::plan::options::RunOptions) -> Result<Option<FileService>> {
    let Some(text) = o.text("file-service") else {
        return Ok(None);
    };
    Ok(Some(FileService {
        split: o.on("split-targets"),
        ..FileService::parse(text)?
    }))
}

impl Spec {
    /// Whether one job serves several targets (`--file-service`).
    pub(crate) fn serves_files(&self) -> bool {
        self.file_service.is_some()
    }

    /// The targets job `job` serves, as indices into `target_paths()`: all of them, or
    /// its share with `--split-targets`. Only for a run with `--file-service`.
    pub(crate) fn files_of_job(&self, job: u32) -> std::ops::Range<usize> {
        let n = self.target_count() as usize;
        match self.file_service {
            Some(FileService { split: true, .. }) => {
                let per = n / self.jobs.max(1) as usize;
                job as usize * per..(job as usize + 1) * per
            }
            _ => 0..n,
        }
    }

    /// The checks of `--file-service` and `--split-targets`.
    pub(crate) fn validate_files(&self) -> Result<()> {
        let Some(fs) = self.file_service else {
            return Ok(());
        };
        let n = self.target_count();
        // A fio job's files are set after its options are resolved: checked then.
        if fs.split && n > 1 && (n < self.jobs || !n.is_multiple_of(self.jobs)) {
            return Err(Error::usage(format!(
                "--split-targets gives each of the {} jobs an equal share of the targets, and {n} targets do not split that way; name a multiple of --jobs targets",
                self.jobs
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_switch_counts_read_and_write_back() {
        for (text, kind, every) in [
            ("roundrobin", Service::RoundRobin, 1),
            ("roundrobin:4", Service::RoundRobin, 4),
            ("sequential", Service::Sequential, 1),
            ("random:8", Service::Random, 8),
        ] {
            let fs = FileService::parse(text).unwrap();
            assert_eq!((fs.kind, fs.every), (kind, every), "{text}");
            assert_eq!(fs.text(), text);
        }
        for bad in ["zipf", "roundrobin:0", "random:x", "sequential:2", ""] {
            let e = FileService::parse(bad).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{bad}: {e}");
        }
    }

    #[test]
    fn split_targets_give_each_job_its_share() {
        let mut s = Spec::new("a");
        s.targets = ["a", "b", "c", "d", "e", "f"].map(String::from).to_vec();
        s.jobs = 2;
        s.file_service = Some(FileService {
            split: true,
            ..FileService::parse("roundrobin").unwrap()
        });
        assert_eq!(s.files_of_job(0), 0..3);
        assert_eq!(s.files_of_job(1), 3..6);
        s.validate_files().unwrap();
        s.jobs = 4;
        assert!(s.validate_files().is_err());
        s.file_service.as_mut().unwrap().split = false;
        assert_eq!(s.files_of_job(3), 0..6);
    }
}
