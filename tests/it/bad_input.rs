//! Every bad command line in `tests/data/bad-commands.txt` gets a one-line error on stderr,
//! exit status 2, and no panic or backtrace.

use crate::common::{iomark, tmp};

#[test]
fn bad_command_lines_exit_2_with_one_line() {
    let dir = tmp();
    let file = dir.path().join("foreign.dat");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let emptydir = dir.path().join("empty");
    std::fs::create_dir(&emptydir).unwrap();
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"name": "some other tool", "results": []}"#).unwrap();
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema": "iomark/2", "runs": []}"#).unwrap();
    let table = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/bad-commands.txt"
    ));
    let mut checked = 0;
    for line in table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let line = line
            .replace("{dir}", dir.path().to_str().unwrap())
            .replace("{file}", file.to_str().unwrap())
            .replace("{emptydir}", emptydir.to_str().unwrap())
            .replace("{other}", other.to_str().unwrap())
            .replace("{newer}", newer.to_str().unwrap());
        let args: Vec<&str> = line.split(' ').collect();
        let out = iomark()
            .env("RUST_BACKTRACE", "1")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "`iomark {line}` exit status; stderr: {err}"
        );
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "`iomark {line}` must print one line: {err}"
        );
        assert!(err.starts_with("iomark: "), "`iomark {line}`: {err}");
        if line.starts_with("report") || line.starts_with("compare") {
            let named = args
                .iter()
                .skip(1)
                .any(|a| a.contains('/') && err.contains(*a));
            assert!(named, "`iomark {line}` must name the file: {err}");
        }
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "`iomark {line}`: {err}"
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} bad command lines");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        vec![7u8; 1 << 20],
        "the foreign file is untouched"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 4, "nothing created: {leftovers:?}");
}
