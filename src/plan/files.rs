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
    /// A file drawn for every I/O by a skewed distribution over the files, as
    /// `--random-distribution` draws blocks (`FileService::param`): the first file the
    /// hottest, then the next ones (zipf, pareto), or the middle ones (normal).
    Zipf,
    Pareto,
    Normal,
}

/// Slots per file a skewed service draws over (fio's way: the distribution is drawn
/// over `files × SLOTS` ranks, and a rank's file is rank / SLOTS, so few files still
/// follow the continuous shape).
pub(crate) const SLOTS_PER_FILE: u64 = 1024;

/// `--file-service KIND[:N]` and `--split-targets`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FileService {
    pub kind: Service,
    /// I/Os issued to a file before the job switches (roundrobin and random; 1 unless
    /// `:N` was given; 1 for the skewed kinds, which draw a file for every I/O).
    pub every: u32,
    /// The skewed kinds' parameter, with `--random-distribution`'s meaning: zipf's θ,
    /// pareto's h (the hottest 1 − h of the files get a share h), normal's σ (a
    /// percentage of the files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<f64>,
    /// Each job serves its own share of the targets (job j of J: targets j×N/J to
    /// (j+1)×N/J − 1), as fio's copies each have their own `nrfiles` files; otherwise
    /// every job serves every target (fio's `filename=a:b`, shared by the copies).
    #[serde(default)]
    pub split: bool,
}

impl FileService {
    /// Reads `roundrobin`, `sequential` or `random`, with `:N` on the first and last;
    /// `zipf[:θ]` (θ 1.1 unless given, fio's default), `pareto:h`, `normal:σ` (`gauss`).
    pub fn parse(text: &str) -> Result<FileService> {
        let (kind, n) = match text.trim().split_once(':') {
            Some((k, n)) => (k, Some(n)),
            None => (text.trim(), None),
        };
        let kind = match kind {
            "roundrobin" => Service::RoundRobin,
            "sequential" => Service::Sequential,
            "random" => Service::Random,
            "zipf" => Service::Zipf,
            "pareto" => Service::Pareto,
            "normal" | "gauss" => Service::Normal,
            _ => {
                return Err(Error::usage(format!(
                    "--file-service {text}: use roundrobin, sequential or random (with :N for roundrobin and random: switch after N I/Os), or zipf:THETA, pareto:H, normal:SIGMA"
                )));
            }
        };
        if matches!(kind, Service::Zipf | Service::Pareto | Service::Normal) {
            return Self::skewed(text, kind, n);
        }
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
            param: None,
            split: false,
        })
    }

    /// A skewed kind and its parameter `p` (checked as `--random-distribution` checks
    /// it; zipf's θ may be left out).
    fn skewed(text: &str, kind: Service, p: Option<&str>) -> Result<FileService> {
        let bad = |why: &str| Error::usage(format!("--file-service {text}: {why}"));
        let v = match (kind, p) {
            (Service::Zipf, None) => 1.1,
            (_, None) => {
                return Err(bad(
                    "give the distribution's parameter, e.g. pareto:0.8 or normal:20",
                ));
            }
            (_, Some(p)) => (p.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(&format!("'{p}' is not a number")))?,
        };
        match kind {
            Service::Zipf if !(v > 0.0 && v <= 100.0) => Err(bad("θ must be above 0")),
            Service::Pareto if !(v > 0.0 && v < 1.0) => Err(bad("h must be between 0 and 1")),
            Service::Normal if !(v > 0.0 && v <= 100.0) => Err(bad(
                "σ is a percentage of the files, above 0 and at most 100",
            )),
            _ => Ok(FileService {
                kind,
                every: 1,
                param: Some(v),
                split: false,
            }),
        }
    }

    /// The skewed kinds' distribution over the files' slots (`SLOTS_PER_FILE` each).
    pub(crate) fn distribution(&self) -> Option<crate::plan::distribution::Distribution> {
        use crate::plan::distribution::Distribution as D;
        let p = self.param?;
        match self.kind {
            Service::Zipf => Some(D::Zipf(p, None)),
            Service::Pareto => Some(D::Pareto(p, None)),
            Service::Normal => Some(D::Normal(p, None)),
            _ => None,
        }
    }

    /// The text `parse` reads.
    pub fn text(&self) -> String {
        let kind = match self.kind {
            Service::RoundRobin => "roundrobin",
            Service::Sequential => "sequential",
            Service::Random => "random",
            Service::Zipf => "zipf",
            Service::Pareto => "pareto",
            Service::Normal => "normal",
        };
        match (self.param, self.every) {
            (Some(p), _) => format!("{kind}:{p}"),
            (None, 1) => kind.to_string(),
            (None, n) => format!("{kind}:{n}"),
        }
    }

    /// fio's `file_service_type` for it: the same but for pareto, whose h is the other
    /// way round in fio's file choice (fio's `pareto:h` draws ranks as x^(ln h /
    /// ln(1 − h)), hottest first: iomark's `pareto:1-h`; measured, see docs/fio.md).
    pub fn fio_text(&self) -> String {
        match (self.kind, self.param) {
            (Service::Pareto, Some(h)) => format!("pareto:{}", round6(1.0 - h)),
            _ => self.text(),
        }
    }

    /// Reads fio's `file_service_type` value: `parse`, but fio's `pareto[:h]` (h 0.2
    /// unless given) is iomark's `pareto:1-h`, and `sequential:N` is `sequential` (fio
    /// 3.33 stays on a file to its end whatever N says).
    pub(crate) fn from_fio(text: &str) -> Result<FileService> {
        let t = text.trim();
        if let Some(h) = t.strip_prefix("pareto") {
            let h = match h.strip_prefix(':') {
                Some(h) => h.trim().parse::<f64>().unwrap_or(f64::NAN),
                None if h.is_empty() => 0.2,
                None => f64::NAN,
            };
            return Self::parse(&format!("pareto:{}", round6(1.0 - h)));
        }
        match t.split_once(':') {
            Some(("sequential", n)) if n.trim().parse::<u32>().is_ok_and(|n| n >= 1) => {
                Self::parse("sequential")
            }
            _ => Self::parse(t),
        }
    }
}

/// `v` to six decimals (1 − 0.8 is 0.19999999999999996 in binary).
fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
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
        for (text, kind, p) in [
            ("zipf", Service::Zipf, 1.1),
            ("zipf:1.2", Service::Zipf, 1.2),
            ("pareto:0.8", Service::Pareto, 0.8),
            ("gauss:20", Service::Normal, 20.0),
        ] {
            let fs = FileService::parse(text).unwrap();
            assert_eq!((fs.kind, fs.param, fs.every), (kind, Some(p), 1), "{text}");
            assert_eq!(FileService::parse(&fs.text()).unwrap(), fs);
        }
        // fio's pareto:h is iomark's pareto:1-h, fio's default h 0.2; sequential:N is
        // fio's sequential.
        let fio = |t: &str| FileService::from_fio(t).unwrap();
        assert_eq!(fio("pareto").text(), "pareto:0.8");
        assert_eq!(fio("pareto:0.3").text(), "pareto:0.7");
        assert_eq!(fio("pareto:0.3").fio_text(), "pareto:0.3");
        assert_eq!(fio("sequential:4").text(), "sequential");
        assert_eq!(fio("zipf:1.2").fio_text(), "zipf:1.2");
        for bad in ["pareto:1", "normal", "normal:0", "zipf:-1", "pareto:x"] {
            assert!(FileService::parse(bad).is_err(), "{bad}");
        }
        for bad in ["zipf:", "roundrobin:0", "random:x", "sequential:2", ""] {
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
