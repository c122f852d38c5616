//! fio's size strings (`4k`, `1MiB`, …) and times (`30`, `500ms`, `2m`) read the way fio
//! reads them. Shared by the fio import (`results::fio`) and the job-file reader.

/// fio's size strings → bytes, the way fio reads them (`parse.c`, `get_mult_bytes`):
/// the suffix is case-insensitive; `k`, `kb`, `m`, `mb`, … are powers of `kb_base`
/// (1024 unless the job sets `kb_base=1000`), and `kib`, `mib`, … are powers of the
/// other base: with the default, `4KB` is 4096 and `4KiB` 4000. A bare number is bytes;
/// `b` is bytes. `None` for anything else (a percentage, a range).
pub(crate) fn fio_size(s: &str, kb_base: u64) -> Option<u64> {
    let s = s.trim();
    let digits = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (n, suffix) = s.split_at(digits);
    let n: f64 = n.parse().ok()?;
    let suffix = suffix.trim().to_ascii_lowercase();
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (base, pow) = match suffix.as_str() {
        "" | "b" => (1, 0),
        _ => {
            let pow = match suffix.as_bytes()[0] {
                b'k' => 1,
                b'm' => 2,
                b'g' => 3,
                b't' => 4,
                b'p' => 5,
                _ => return None,
            };
            match &suffix[1..] {
                "" | "b" => (kb_base, pow),
                "ib" => (other, pow),
                _ => return None,
            }
        }
    };
    Some((n * (base as f64).powi(pow)).round() as u64)
}

/// fio's time strings → seconds (`parse.c`, time values): a bare number is seconds;
/// `us`, `ms`, `s`, `m`, `h`, `d` are case-insensitive suffixes. `None` for anything else.
pub(crate) fn fio_time(s: &str) -> Option<f64> {
    let s = s.trim();
    let digits = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (n, suffix) = s.split_at(digits);
    let n: f64 = n.parse().ok()?;
    let unit = match suffix.trim().to_ascii_lowercase().as_str() {
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return None,
    };
    Some(n * unit).filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_size_units() {
        // fio's default kb_base=1024: k/KB are 1024, KiB is 1000 (fio's own inversion).
        for (s, want) in [
            ("4k", 4096),
            ("4KB", 4096),
            ("4KiB", 4000),
            ("4kib", 4000),
            ("64kb", 65536),
            ("1m", 1 << 20),
            ("1MiB", 1_000_000),
            ("512", 512),
            ("512b", 512),
            ("2g", 2 << 30),
        ] {
            assert_eq!(fio_size(s, 1024), Some(want), "{s}");
        }
        assert_eq!(fio_size("4k", 1000), Some(4000));
        assert_eq!(fio_size("4KiB", 1000), Some(4096));
        assert_eq!(fio_size("50%", 1024), None);
        assert_eq!(fio_size("4x", 1024), None);
        for (s, want) in [("30", 30.0), ("500ms", 0.5), ("2m", 120.0), ("1h", 3600.0)] {
            assert_eq!(fio_time(s), Some(want), "{s}");
        }
        assert_eq!(fio_time("5x"), None);
    }
}
