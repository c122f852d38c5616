//! fio's `normal` text printed beside its JSON (`--output-format=json,normal`): what it
//! says that the JSON does not.

use std::collections::BTreeMap;

/// What fio's `normal` text beside the JSON says that the JSON does not.
#[derive(Debug, Default)]
pub(crate) struct TextInfo {
    /// Jobs per group entry, from "NAME: (groupid=G, jobs=N): err=…".
    pub jobs: BTreeMap<u64, u32>,
    /// The jobs of each group in order, from the "NAME: (g=G): rw=…" lines.
    pub members: BTreeMap<u64, Vec<String>>,
    /// fio's error text per (group, job name): "err=22 (file:…, error=Invalid argument)".
    pub errors: BTreeMap<(u64, String), String>,
}

impl TextInfo {
    pub(crate) fn read(text: &str) -> TextInfo {
        let mut info = TextInfo::default();
        for line in text.lines() {
            // Client output prefixes lines with "<host> ".
            let line = match line.strip_prefix('<') {
                Some(l) => l.split_once("> ").map_or(l, |(_, r)| r),
                None => line,
            };
            if let Some((name, rest)) = line.split_once(": (g=") {
                let Some(g) = rest.split(')').next().and_then(|g| g.parse().ok()) else {
                    continue;
                };
                let m = info.members.entry(g).or_default();
                if !m.iter().any(|x| x == name) {
                    m.push(name.to_string());
                }
            } else if let Some((name, rest)) = line.split_once(": (groupid=") {
                let mut it = rest.splitn(2, ", jobs=");
                let Some(g) = it.next().and_then(|g| g.parse::<u64>().ok()) else {
                    continue;
                };
                let after = it.next().unwrap_or("");
                if let Some(n) = after.split(')').next().and_then(|n| n.parse().ok()) {
                    info.jobs.insert(g, n);
                }
                if let Some(e) = after.split_once("err=").map(|(_, e)| e.trim_start())
                    && !e.starts_with("0:")
                {
                    let e = e.rsplit_once("): pid=").map_or(e, |(x, _)| &e[..=x.len()]);
                    info.errors.insert(
                        (g, name.to_string()),
                        format!("err={}", e.trim_end_matches(':')),
                    );
                }
            }
        }
        info
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fio_text_beside_the_json() {
        let t = "first: (g=0): rw=randread, bs=(R) 4096B-4096B\nsecond: (g=0): rw=randwrite\n\
                 first: (groupid=0, jobs=2): err= 0: pid=1: Tue\n\
                 e: (groupid=1, jobs=1): err=22 (file:io_u.c:1876, func=io_u error, error=Invalid argument): pid=13213: Tue\n";
        let i = TextInfo::read(t);
        assert_eq!(i.jobs.get(&0), Some(&2));
        assert_eq!(i.members[&0], ["first", "second"]);
        assert_eq!(
            i.errors[&(1, "e".to_string())],
            "err=22 (file:io_u.c:1876, func=io_u error, error=Invalid argument)"
        );
    }
}
