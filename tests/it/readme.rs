//! The README's examples work as written (issue 12, item 7): every `iomark …` line of
//! its Examples block is run, with the targets made here (a file in a temporary
//! directory, a loop device for /dev/nvme0n1 and /dev/sdX, a private zram device for
//! /dev/zram1, a directory of files for $HOME/Music, a matrix file for study.toml) and the
//! durations and sizes cut so the whole block takes seconds. Options and their spelling
//! are kept, so an example whose options no longer parse, or that iomark refuses, fails.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// The example command lines: the Examples block's lines without comments, split on `;`.
fn examples() -> Vec<String> {
    let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
    let block = readme
        .split("## Examples")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .expect("the README has an Examples code block");
    block
        .lines()
        .map(|l| l.split("  #").next().unwrap().trim())
        .filter(|l| l.starts_with("iomark "))
        .flat_map(|l| l.split("; ").map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Shortens durations, sizes and repetitions, keeping every option the example uses.
fn shorten(cmd: &str) -> String {
    let mut words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
    for i in 0..words.len().saturating_sub(1) {
        let v = match words[i].as_str() {
            "--runtime" => "0.2",
            "--ramp" => "0",
            "--repeat" => "2",
            "--size" if !cmd.starts_with("iomark data") => "16m",
            _ => continue,
        };
        words[i + 1] = v.to_string();
    }
    let is = |w: &str| words.iter().any(|x| x == w);
    let suite = words.get(1).map(String::as_str) == Some("suite");
    let study = words.get(2).cloned().unwrap_or_default();
    let mut extra: Vec<&str> = Vec::new();
    if suite && !is("--dry-run") {
        match study.as_str() {
            "steady" => extra.extend(["--round-time", "0.2", "--max-rounds", "5"]),
            "wsat" => {}
            _ => {
                if !is("--runtime") {
                    extra.extend(["--runtime", "0.1"]);
                }
                extra.extend(["--ramp", "0"]);
            }
        }
    }
    if (suite || words.get(1).map(String::as_str) == Some("run")) && !is("--size") {
        extra.extend(["--size", "16m"]);
    }
    // Options go before the positional target(s): after the subcommand (and study name).
    let at = if suite { 3 } else { 2 };
    let tail = words.split_off(at.min(words.len()));
    words.extend(extra.iter().map(|s| s.to_string()));
    words.extend(tail);
    words.join(" ")
}

#[test]
fn every_readme_example_runs() {
    let root = require("root (loop and zram devices for the examples)", is_root());
    if !root {
        return;
    }
    let (Some(disk), Some(sdx)) = (LoopDev::new(32 << 20, false), LoopDev::new(32 << 20, false))
    else {
        return;
    };
    let Some(zram) = Zram::new("lz4", "64M") else {
        return;
    };
    if !require_tool("zstd", "zstd (the data example pipes into it)") {
        return;
    }
    let dir = tmp();
    let d = dir.path();
    let music = d.join("Music");
    std::fs::create_dir(&music).unwrap();
    for i in 0..3u8 {
        std::fs::write(music.join(format!("{i}.mp3")), vec![i; 300 << 10]).unwrap();
    }
    std::fs::write(d.join("study.toml"), "[vary]\nqd = [1, 4]\n").unwrap();
    std::fs::create_dir(d.join("scratch")).unwrap();
    let bin = env!("CARGO_BIN_EXE_iomark");
    let list = examples();
    assert!(list.len() >= 18, "the Examples block lost lines: {list:?}");
    for ex in list {
        let cmd = shorten(&ex)
            .replace("./test.dat", &d.join("test.dat").display().to_string())
            .replace("/dev/nvme0n1", &disk.path().display().to_string())
            .replace("/dev/sdX", &sdx.path().display().to_string())
            .replace("/dev/zram1", &zram.dev())
            .replace("$HOME/Music", &music.display().to_string())
            .replace("/mnt/scratch", &d.join("scratch").display().to_string())
            .replace("study.toml", &d.join("study.toml").display().to_string())
            .replace("qd.json", &d.join("qd.json").display().to_string())
            .replace(
                "results.json",
                &d.join("results.json").display().to_string(),
            )
            .replacen("iomark ", &format!("{bin} "), 1);
        let out = Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README example `{ex}` (run as `{cmd}`) failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        !Path::new(&d.join("test.dat")).exists(),
        "examples leave no test file"
    );
}
