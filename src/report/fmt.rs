//! How the reports write numbers and durations: IOPS counts, MB/s and elapsed time as
//! short strings. Formatting only; nothing here knows about documents or tables.

/// 45231.7 → "45.2k", 1234567 → "1.23M", 812.4 → "812".
pub(crate) fn fmt_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Bytes per second as MB/s (10^6), the unit storage vendors use.
pub(crate) fn fmt_mbps(bw_bytes: f64) -> String {
    let mb = bw_bytes / 1e6;
    if mb >= 100.0 {
        format!("{mb:.0} MB/s")
    } else {
        format!("{mb:.1} MB/s")
    }
}

/// What the tables show for a missing figure: a spread of one value (no stddev, no CV),
/// a direction with no figure. CSV writes it as an empty cell.
pub(crate) const NONE: &str = "-";

/// A latency's mean across repetitions, or [`NONE`] when no repetition completed an I/O
/// (no latency was measured; 0 ns would read as one).
pub(crate) fn fmt_lat(s: &crate::results::stats::Spread) -> String {
    if s.n > 0 {
        crate::units::fmt_ns(s.mean)
    } else {
        NONE.into()
    }
}

/// A spread's standard deviation through `f`, or [`NONE`] when there is only one value
/// (one repetition has no spread; "0" would claim a perfectly steady device).
pub(crate) fn fmt_sd(s: &crate::results::stats::Spread, f: impl Fn(f64) -> String) -> String {
    if s.n > 1 { f(s.stddev) } else { NONE.into() }
}

/// 75 → "1:15", 3725 → "1:02:05".
pub(crate) fn fmt_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A run's span: "unknown" for fio output that did not say (a job without `size`: fio's
/// JSON has no span), else its size.
pub(crate) fn span_text(r: &crate::results::schema::Run) -> String {
    match span_known(r) {
        true => crate::units::fmt_size(r.target.span_bytes),
        false => "unknown".into(),
    }
}

/// Whether a run's span is known (fio's output names it only through `size`).
pub(crate) fn span_known(r: &crate::results::schema::Run) -> bool {
    r.fio.is_none() || r.target.span_bytes > 0
}

/// What a cell shows for a parameter another tool's output did not give.
pub(crate) const UNKNOWN: &str = "?";

/// `shown`, or [`UNKNOWN`] when `what` (`engine`, `qd`, `jobs`, `direct`) is a parameter
/// the imported output of `r` does not give (`FioJob::unknown`).
pub(crate) fn known_or(r: &crate::results::schema::Run, what: &str, shown: String) -> String {
    match r
        .fio
        .as_ref()
        .is_some_and(|f| f.unknown.iter().any(|u| u == what))
    {
        true => UNKNOWN.into(),
        false => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(fmt_count(45_231.7), "45.2k");
        assert_eq!(fmt_count(1_234_567.0), "1.23M");
        assert_eq!(fmt_count(812.4), "812");
        assert_eq!(fmt_count(9.25), "9.2");
        assert_eq!(fmt_mbps(185_000_000.0), "185 MB/s");
        assert_eq!(fmt_duration(75.0), "1:15");
        assert_eq!(fmt_duration(3725.0), "1:02:05");
    }

    #[test]
    fn one_value_has_no_stddev() {
        let one = crate::results::stats::Spread::of(&[5.0]);
        assert_eq!(fmt_sd(&one, |v| format!("{v:.1}")), "-");
        let two = crate::results::stats::Spread::of(&[4.0, 6.0]);
        assert_eq!(fmt_sd(&two, |v| format!("{v:.1}")), "1.4");
    }
}
