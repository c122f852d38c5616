//! Parsing and printing of sizes and durations, done once, here.
//!
//! Sizes follow fio's conventions: a bare suffix `k`, `m`, `g`, `t`, `p` is a power of two
//! (`4k` = 4096), as are the explicit `KiB`, `MiB`, … forms; `kB`, `MB`, `GB`, `TB` (a
//! capital `B` after a lower-case or upper-case letter without `i`) are powers of ten only
//! when written with the `B`, e.g. `1MB` = 1 000 000. A trailing `b`/`B` alone means bytes.
//! Durations accept `ms`, `s`, `m`, `h` and combinations such as `1m30s`; a bare number is
//! seconds, as in fio. This module does no I/O and knows nothing of the command line.

use std::time::Duration;

/// Why a size or duration did not parse; carries the offending text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' is not a size (examples: 4096, 4k, 128KiB, 1MB, 16GiB)")]
    BadSize(String),
    #[error("'{0}' is too large a size; give at most 16 EiB (e.g. 1p)")]
    SizeOverflow(String),
    /// A lower-case `b` after a unit letter (`4kb`): bytes or bits, a power of ten or two?
    #[error(
        "'{0}' is not a size: write {1}{2} or {1}{3}iB for a power of two, {1}{3}B for a power of ten"
    )]
    AmbiguousSize(String, String, char, char),
    #[error("'{0}' is not a duration (examples: 30, 90s, 500ms, 3m, 1h, 1m30s)")]
    BadDuration(String),
    #[error("'{0}' is too long a duration; the longest is 1000000000s (277777h, about 31 years)")]
    DurationOverflow(String),
}

/// The longest duration [`parse_duration`] accepts, in seconds.
pub const MAX_DURATION_SECS: f64 = 1e9;

/// Parses a size in bytes: `4096`, `4k`, `4K`, `4KiB`, `4kB` (4000), `1.5GiB`.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::BadSize(text.to_string());
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() || num.starts_with('.') && num.len() == 1 {
        return Err(bad());
    }
    // `KiB` in any case (`4kib`, `4KIB`) is unambiguous: a power of two.
    let lower = suffix.to_ascii_lowercase();
    let suffix = match lower.as_str() {
        "kib" | "mib" | "gib" | "tib" | "pib" => &lower[..1],
        _ => suffix,
    };
    let mult: u64 = match suffix {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "kiB" | "Ki" | "ki" => 1 << 10,
        "m" | "M" | "MiB" | "Mi" | "mi" => 1 << 20,
        "g" | "G" | "GiB" | "Gi" | "gi" => 1 << 30,
        "t" | "T" | "TiB" | "Ti" | "ti" => 1 << 40,
        "p" | "P" | "PiB" | "Pi" | "pi" => 1 << 50,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "PB" => 1_000_000_000_000_000,
        "kb" | "Kb" | "mb" | "Mb" | "gb" | "Gb" | "tb" | "Tb" | "pb" | "Pb" => {
            let unit = suffix.chars().next().expect("two letters");
            return Err(UnitError::AmbiguousSize(
                text.to_string(),
                num.to_string(),
                unit.to_ascii_lowercase(),
                unit.to_ascii_uppercase(),
            ));
        }
        _ => return Err(bad()),
    };
    if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| bad())?;
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(UnitError::SizeOverflow(text.to_string()));
        }
        if bytes.fract() != 0.0 {
            return Err(bad());
        }
        Ok(bytes as u64)
    } else {
        let v: u64 = num
            .parse()
            .map_err(|_| UnitError::SizeOverflow(text.to_string()))?;
        v.checked_mul(mult)
            .ok_or_else(|| UnitError::SizeOverflow(text.to_string()))
    }
}

/// Parses a duration: `30` (seconds), `90s`, `500ms`, `3m`, `1h`, `1m30s`, `2.5s`, `1.5us`,
/// `800ns`.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let bad = || UnitError::BadDuration(text.to_string());
    let t = text.trim();
    if t.is_empty() {
        return Err(bad());
    }
    let mut total = 0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if split == 0 {
            return Err(bad());
        }
        let v: f64 = rest[..split].parse().map_err(|_| bad())?;
        rest = &rest[split..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let secs = match unit {
            "" if rest.is_empty() && total == 0.0 => 1.0,
            "s" | "sec" => 1.0,
            "ms" => 1e-3,
            "us" => 1e-6,
            "ns" => 1e-9,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += v * secs;
    }
    if total.is_nan() {
        return Err(bad());
    }
    if total > MAX_DURATION_SECS {
        return Err(UnitError::DurationOverflow(text.to_string()));
    }
    Ok(Duration::from_secs_f64(total))
}

/// Formats a byte count with binary units: `4 KiB`, `1 MiB`, `1.5 GiB`, `512 B`.
pub(crate) fn fmt_size(bytes: u64) -> String {
    let (v, i) = scaled(bytes);
    if v.fract() == 0.0 {
        format!("{} {}", v as u64, UNITS[i])
    } else {
        format!("{:.1} {}", v, UNITS[i])
    }
}

/// The units [`fmt_size`] writes.
const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/// `bytes` in the largest of [`UNITS`] that keeps it at 1 or more: the value and the
/// unit's index.
fn scaled(bytes: u64) -> (f64, usize) {
    let (mut v, mut i) = (bytes as f64, 0);
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    (v, i)
}

/// Two sizes formatted so that they read apart: in bytes where [`fmt_size`] would round
/// both to the same words (4095 bytes and 4 KiB are not both "4.0 KiB").
pub(crate) fn fmt_sizes_apart(a: u64, b: u64) -> (String, String) {
    // What `fmt_size` shows, to a tenth: "4 KiB" and "4.0 KiB" read alike.
    let shown = |bytes: u64| {
        let (v, i) = scaled(bytes);
        (format!("{v:.1}"), i)
    };
    match a != b && shown(a) == shown(b) {
        true => (format!("{a} bytes"), format!("{b} bytes")),
        false => (fmt_size(a), fmt_size(b)),
    }
}

/// Formats a size compactly as fio users write it: `4k`, `1m`, `512`, `1g`.
pub fn fmt_size_short(bytes: u64) -> String {
    for (shift, s) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{}", bytes >> shift, s);
        }
    }
    bytes.to_string()
}

/// Formats a share in percent so that a small one does not round to "0%" nor a near-whole
/// one to "100%": `0%`, `under 0.1%`, `0.4%`, `37%`, `99.7%`, `100%`.
pub(crate) fn fmt_pct(p: f64) -> String {
    match p {
        p if p <= 0.0 => "0%".into(),
        p if p < 0.1 => "under 0.1%".into(),
        p if p < 1.0 || (p > 99.0 && p < 100.0) => format!("{:.1}%", (p * 10.0).floor() / 10.0),
        p if p >= 100.0 => "100%".into(),
        p => format!("{p:.0}%"),
    }
}

/// Formats nanoseconds with a unit that keeps three significant figures.
pub(crate) fn fmt_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {

    /// `4kb` was "not a size" while `4kB`, `4KB` and `4kib` were taken: now the refusal
    /// says which to write.
    #[test]
    fn a_lower_case_b_after_a_unit_names_the_sizes_meant() {
        let e = parse_size("4kb").unwrap_err().to_string();
        assert_eq!(
            e,
            "'4kb' is not a size: write 4k or 4KiB for a power of two, 4KB for a power of ten"
        );
        let e = parse_size("16Gb").unwrap_err().to_string();
        assert!(e.contains("write 16g or 16GiB"), "{e}");
        assert!(
            (parse_size("99999999999999999999").unwrap_err().to_string())
                .contains("at most 16 EiB")
        );
    }

    /// Sizes that `fmt_size` rounds to the same words are given in bytes, others as
    /// usual.
    #[test]
    fn sizes_that_read_alike_are_given_in_bytes() {
        assert_eq!(
            fmt_sizes_apart(4096, 4095),
            ("4096 bytes".to_string(), "4095 bytes".to_string())
        );
        assert_eq!(
            fmt_sizes_apart(8192, 4096),
            ("8 KiB".to_string(), "4 KiB".to_string())
        );
        assert_eq!(
            fmt_sizes_apart(4096, 4096),
            ("4 KiB".to_string(), "4 KiB".to_string())
        );
    }
    use super::*;

    #[test]
    fn shares_near_the_ends_keep_a_decimal() {
        let f: Vec<String> = [0.0, 0.02, 0.45, 37.4, 99.0, 99.96, 100.0]
            .map(fmt_pct)
            .into();
        assert_eq!(
            f,
            ["0%", "under 0.1%", "0.4%", "37%", "99%", "99.9%", "100%"]
        );
    }

    #[test]
    fn sizes() {
        let table: &[(&str, Option<u64>)] = &[
            ("0", Some(0)),
            ("4096", Some(4096)),
            ("512b", Some(512)),
            ("512B", Some(512)),
            ("4k", Some(4096)),
            ("4K", Some(4096)),
            ("4KiB", Some(4096)),
            ("4kib", Some(4096)),
            ("2GIB", Some(2 << 30)),
            ("4kB", Some(4000)),
            ("4KB", Some(4000)),
            ("1m", Some(1 << 20)),
            ("1MiB", Some(1 << 20)),
            ("1MB", Some(1_000_000)),
            ("16GiB", Some(16 << 30)),
            ("16g", Some(16 << 30)),
            ("1GB", Some(1_000_000_000)),
            ("2t", Some(2 << 40)),
            ("1.5GiB", Some(3 << 29)),
            ("0.5k", Some(512)),
            (" 8k ", Some(8192)),
            ("", None),
            ("k", None),
            ("-4k", None),
            ("4x", None),
            ("4 k", None),
            ("1.3b", None),
            ("4kk", None),
            ("99999999999999999999", None),
            ("16777216t", None),
        ];
        for (text, want) in table {
            assert_eq!(parse_size(text).ok(), *want, "parse_size({text:?})");
        }
    }

    #[test]
    fn a_duration_too_long_says_so_with_the_longest() {
        let e = parse_duration("99999999999999h").unwrap_err();
        assert_eq!(e, UnitError::DurationOverflow("99999999999999h".into()));
        assert!(e.to_string().contains("the longest is 1000000000s"), "{e}");
        assert!(parse_duration("277777h").is_ok());
        assert!(
            parse_duration("banana")
                .unwrap_err()
                .to_string()
                .contains("not a duration")
        );
    }

    #[test]
    fn durations() {
        let ms = |v: u64| Some(Duration::from_millis(v));
        let table: &[(&str, Option<Duration>)] = &[
            ("30", ms(30_000)),
            ("90s", ms(90_000)),
            ("500ms", ms(500)),
            ("3m", ms(180_000)),
            ("1h", ms(3_600_000)),
            ("1m30s", ms(90_000)),
            ("2.5s", ms(2_500)),
            ("0", ms(0)),
            ("", None),
            ("s", None),
            ("3x", None),
            ("-1s", None),
            ("1m30", None),
            ("abc", None),
        ];
        for (text, want) in table {
            assert_eq!(parse_duration(text).ok(), *want, "parse_duration({text:?})");
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_size(4096), "4 KiB");
        assert_eq!(fmt_size(1536), "1.5 KiB");
        assert_eq!(fmt_size(100), "100 B");
        assert_eq!(fmt_size_short(4096), "4k");
        assert_eq!(fmt_size_short(1 << 20), "1m");
        assert_eq!(fmt_size_short(1000), "1000");
        assert_eq!(fmt_ns(1500.0), "1.5 µs");
        assert_eq!(fmt_ns(12.0), "12 ns");
    }
}
