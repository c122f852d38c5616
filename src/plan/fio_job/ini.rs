//! fio's job-file format, read into jobs and their options with the file and line each
//! option came from. What the options mean is `map.rs`'s business; this module only
//! reads the text the caller hands it (the caller reads files and the environment).
//!
//! The format, as fio reads it: `[name]` starts a job, `[global]` sets options for the
//! jobs after it in the same file; `key=value` or a bare `key`; everything from `#` or
//! `;` to the end of a line is a comment; `include FILE` splices another file in (a
//! relative path is taken from the including file's folder); `${VAR}` in a value is the
//! environment variable (empty when unset, as fio does), `$mb_memory` and `$ncpus` fio's
//! keywords; any other `$word` stays as written (fio's file-name tokens). The first job of every file after the first waits for the jobs before it
//! (fio separates job files with a stonewall).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// One option as written: `key=value` or a bare `key`, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The option's name, lower case, as fio spells it (`ramp_time`).
    pub key: String,
    /// Its value after expansion; `None` for a bare key.
    pub value: Option<String>,
    /// `FILE:LINE`.
    pub at: String,
}

/// One job: its name, where its section starts, and its options (the `[global]` ones in
/// force at its section first, then its own, so a later entry wins).
#[derive(Debug, Clone, PartialEq)]
pub struct JobDef {
    pub name: String,
    pub at: String,
    /// The first job of a file after the first: fio makes it wait for the jobs before.
    pub file_stonewall: bool,
    pub entries: Vec<Entry>,
}

/// What reading needs from outside: the text of a file, an environment variable, fio's
/// keywords (`mb_memory`, `ncpus`).
pub struct Source<'a> {
    pub read: &'a mut dyn FnMut(&Path) -> Result<String>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub keywords: &'a [(&'static str, String)],
}

/// Includes nested deeper than this are refused (a file that includes itself).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Reads the job files in order into their jobs.
pub fn read_files(files: &[PathBuf], src: &mut Source) -> Result<Vec<JobDef>> {
    let mut jobs = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mut state = State {
            global: Vec::new(),
            current: None,
            jobs: Vec::new(),
        };
        read_one(f, 0, &mut state, src)?;
        state.finish();
        if i > 0
            && let Some(first) = state.jobs.first_mut()
        {
            first.file_stonewall = true;
        }
        jobs.append(&mut state.jobs);
    }
    if jobs.is_empty() {
        return Err(Error::usage(
            "the job files hold no job: add a [NAME] section with rw=, bs=, … under it",
        ));
    }
    Ok(jobs)
}

struct State {
    global: Vec<Entry>,
    /// The section being read: `None` before any, `Some(None)` in `[global]`.
    current: Option<Option<JobDef>>,
    jobs: Vec<JobDef>,
}

impl State {
    fn finish(&mut self) {
        if let Some(Some(job)) = self.current.take() {
            self.jobs.push(job);
        }
    }
}

fn read_one(path: &Path, depth: usize, st: &mut State, src: &mut Source) -> Result<()> {
    let text = (src.read)(path)?;
    let name = path.display().to_string();
    for (n, raw) in text.lines().enumerate() {
        let at = format!("{name}:{}", n + 1);
        // fio cuts a line at the first ';' or '#'.
        let line = raw.split([';', '#']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let section = rest.strip_suffix(']').map(str::trim).ok_or_else(|| {
                Error::usage(format!(
                    "{at}: '{line}' opens a section without a closing ]"
                ))
            })?;
            if section.is_empty() {
                return Err(Error::usage(format!(
                    "{at}: a section needs a name: [NAME]"
                )));
            }
            st.finish();
            st.current = Some((section != "global").then(|| JobDef {
                name: section.to_string(),
                at: at.clone(),
                file_stonewall: false,
                entries: st.global.clone(),
            }));
            continue;
        }
        if let Some(file) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with([' ', '\t']))
        {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(Error::usage(format!(
                    "{at}: includes nested deeper than {MAX_INCLUDE_DEPTH}; does a file include itself?"
                )));
            }
            let file = Path::new(file.trim());
            let file = match path.parent().filter(|_| file.is_relative()) {
                Some(dir) => dir.join(file),
                None => file.to_path_buf(),
            };
            read_one(&file, depth + 1, st, src)?;
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(expand(v.trim(), &at, src)?)),
            None => (line, None),
        };
        let entry = Entry {
            key: key.to_ascii_lowercase(),
            value,
            at,
        };
        match &mut st.current {
            None => {
                return Err(Error::usage(format!(
                    "{}: '{line}' comes before any section; put it under [global] or a [NAME] job",
                    entry.at
                )));
            }
            Some(None) => st.global.push(entry),
            Some(Some(job)) => job.entries.push(entry),
        }
    }
    Ok(())
}

/// `${VAR}` → the environment variable (empty when unset, as fio); `$mb_memory`, `$ncpus`
/// → fio's keywords.
fn expand(value: &str, at: &str, src: &Source) -> Result<String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}').ok_or_else(|| {
                Error::usage(format!("{at}: '${{' without a closing }} in '{value}'"))
            })?;
            out.push_str(&(src.env)(&braced[..end]).unwrap_or_default());
            rest = &braced[end + 1..];
            continue;
        }
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let word = &after[..len];
        let known = src.keywords.iter().find(|(k, _)| *k == word);
        match known {
            Some((_, v)) => out.push_str(v),
            // fio's file-name tokens ($jobname, $jobnum, $filenum) are expanded with the
            // file's name (`map.rs`); anything else stays as written and is refused
            // where its value is read.
            None => {
                out.push('$');
                out.push_str(word);
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(files: &[(&str, &str)]) -> Result<Vec<JobDef>> {
        let owned: Vec<(String, String)> = files
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let mut read = |p: &Path| {
            owned
                .iter()
                .find(|(n, _)| Path::new(n) == p)
                .map(|(_, t)| t.clone())
                .ok_or_else(|| Error::usage(format!("no file {}", p.display())))
        };
        let env = |k: &str| (k == "BS").then(|| "8k".to_string());
        let mut src = Source {
            read: &mut read,
            env: &env,
            keywords: &[("ncpus", "2".to_string())],
        };
        let first: Vec<PathBuf> = files
            .iter()
            .filter(|(n, _)| !n.starts_with("dir/"))
            .map(|(n, _)| PathBuf::from(n))
            .collect();
        read_files(&first, &mut src)
    }

    #[test]
    fn sections_globals_comments_includes_and_variables() {
        let jobs = parse(&[
            (
                "a.fio",
                "; a comment\n[global]\nbs=${BS} # inline\nnumjobs=$ncpus\ninclude dir/more.fio\n\
                 [one]\nrw=read\n[global]\nbs=16k\n[two]\ndirect\nfilename=${NOPE}x\n",
            ),
            ("dir/more.fio", "iodepth=4\n"),
            ("b.fio", "[three]\nrw=write\n"),
        ])
        .unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["one", "two", "three"]);
        let kv = |j: &JobDef| -> Vec<(String, Option<String>)> {
            j.entries
                .iter()
                .map(|e| (e.key.clone(), e.value.clone()))
                .collect()
        };
        let s = |k: &str, v: Option<&str>| (k.to_string(), v.map(str::to_string));
        assert_eq!(
            kv(&jobs[0]),
            [
                s("bs", Some("8k")),
                s("numjobs", Some("2")),
                s("iodepth", Some("4")),
                s("rw", Some("read"))
            ]
        );
        assert_eq!(jobs[0].entries[2].at, "dir/more.fio:1");
        assert_eq!(jobs[0].entries[3].at, "a.fio:7");
        let two = kv(&jobs[1]);
        assert_eq!(two[3], s("bs", Some("16k")));
        assert_eq!(two[4], s("direct", None));
        assert_eq!(two[5], s("filename", Some("x")));
        assert!(!jobs[1].file_stonewall && jobs[2].file_stonewall);
        // The second file does not see the first one's [global].
        assert_eq!(kv(&jobs[2]), [s("rw", Some("write"))]);
    }

    #[test]
    fn refusals_name_the_line() {
        let err = |text: &str| parse(&[("x.fio", text)]).unwrap_err().to_string();
        assert!(err("bs=4k\n").contains("x.fio:1: 'bs=4k' comes before any section"));
        assert!(err("[job\n").contains("x.fio:1:"));
        assert!(err("[global]\nbs=4k\n").contains("no job"));
        let kept = parse(&[("x.fio", "[j]\nbs=$pagesize\n")]).unwrap();
        assert_eq!(kept[0].entries[0].value.as_deref(), Some("$pagesize"));
        assert!(err("[j]\ninclude x.fio\n").contains("nested deeper"));
    }
}
