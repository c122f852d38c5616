//! The `iomark` binary: parse, resolve, run, write. Errors are printed here, once, as one
//! line, and mapped to exit codes (2 bad input, 1 runtime failure, 128 + signal when
//! interrupted).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use clap::error::ErrorKind;

use iomark::cli::{Cli, Command, QuickArgs, one_line_clap_error};
use iomark::error::{Error, ExitCode, Result};
use iomark::measure::run::{self as runner, StopFlag};
use iomark::plan::Output as OutputArgs;
use iomark::plan::spec::TargetPolicy;
use iomark::report::progress::TermProgress;
use iomark::report::text::{plan_table, run_summary};
use iomark::results::env::Host;
use iomark::results::schema::{Document, Run};

fn main() {
    let stop = StopFlag::new();
    let code = match real_main(&stop) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iomark: {e}");
            match stop.signal() {
                // Stopped by a signal before anything was measured (e.g. during layout).
                0 => e.exit_code(),
                sig => 128 + sig as i32,
            }
        }
    };
    std::process::exit(code);
}

/// Ctrl-C and SIGTERM set the stop flag; a second one ends the process at once.
fn install_signals(stop: &StopFlag) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let hard = Arc::new(AtomicBool::new(false));
    for (sig, code) in [(SIGINT, 130), (SIGTERM, 143)] {
        let r = signal_hook::flag::register_conditional_shutdown(sig, code, Arc::clone(&hard))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&hard)))
            .and_then(|_| signal_hook::flag::register_usize(sig, stop.cell(), sig as usize));
        r.map_err(|e| Error::io("cannot install signal handlers", &e))?;
    }
    Ok(())
}

fn real_main(stop: &StopFlag) -> Result<i32> {
    use clap::{CommandFactory, FromArgMatches};
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|c| (c, m)));
    let (cli, matches) = match parsed {
        Ok(c) => c,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                let _ = e.print();
                return Ok(0);
            }
            _ => {
                eprintln!("iomark: {}", one_line_clap_error(&e));
                return Ok(ExitCode::BadInput as i32);
            }
        },
    };
    install_signals(stop)?;
    match cli.command {
        Some(Command::Run(args)) => cmd_run(args.resolve()?, stop),
        Some(Command::Quick(args)) => cmd_quick(&args, stop),
        Some(Command::Data(args)) => cmd_data(args.resolve()?, stop),
        Some(Command::Verify(args)) => cmd_verify(&args),
        Some(Command::Report(args)) => {
            let format =
                iomark::cli::output_format(args.format.as_deref(), args.output.as_deref())?;
            let docs = load_inputs(&args.files)?;
            emit(
                &iomark::report::report(&docs, format),
                args.output.as_deref(),
            )
        }
        Some(Command::Compare(args)) => {
            let format =
                iomark::cli::output_format(args.format.as_deref(), args.output.as_deref())?;
            let docs = load_inputs(&args.files)?;
            let c = iomark::report::compare::compare(&docs);
            emit(
                &iomark::report::comparison(&c, format),
                args.output.as_deref(),
            )
        }
        Some(Command::Suite(args)) => {
            let sub = matches
                .subcommand_matches("suite")
                .expect("the suite subcommand was parsed");
            let user = iomark::cli::explicit_options(sub);
            cmd_suite(args.resolve(&user)?, stop)
        }
        None => {
            // The embedded default: `iomark quick` with its defaults.
            match Cli::parse_from(["iomark", "quick"]).command {
                Some(Command::Quick(args)) => cmd_quick(&args, stop),
                _ => unreachable!("`iomark quick` parses as the quick command"),
            }
        }
    }
}

/// Keeps the results document and writes it where the user asked, after every repetition.
struct Sink {
    doc: Document,
    out: OutputArgs,
}

impl Sink {
    fn new(out: &OutputArgs) -> Sink {
        Sink {
            doc: Document::new(Host::capture()),
            out: out.clone(),
        }
    }

    /// Replaces (or appends) run `idx` and saves.
    fn update(&mut self, idx: usize, run: &Run) -> Result<()> {
        if idx < self.doc.runs.len() {
            self.doc.runs[idx] = run.clone();
        } else {
            self.doc.runs.push(run.clone());
        }
        if let Some(path) = &self.out.output {
            self.doc.save(path)?;
        }
        Ok(())
    }

    /// Prints human text: on stdout, or stderr when stdout carries the JSON.
    fn say(&self, text: &str) {
        if self.out.quiet {
            return;
        }
        if self.out.json {
            eprint!("{text}");
        } else {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
    }

    fn finish(&self) {
        if self.out.json {
            println!("{}", self.doc.to_json());
        }
    }
}

fn exit_for(stop: &StopFlag, failure: Option<Error>) -> i32 {
    if let Some(e) = failure {
        eprintln!("iomark: {e}");
        return e.exit_code();
    }
    match stop.signal() {
        0 => 0,
        sig => {
            eprintln!("iomark: interrupted; the measurements so far are kept");
            128 + sig as i32
        }
    }
}

fn cmd_run(plan: iomark::plan::RunPlan, stop: &StopFlag) -> Result<i32> {
    let mut sink = Sink::new(&plan.out);
    let mut progress = TermProgress::new(plan.out.quiet);
    let (run, failure) = runner::run(
        &plan.spec,
        &plan.policy,
        plan.repeat,
        stop,
        &mut progress,
        &mut |r| sink.update(0, r),
    )?;
    sink.update(0, &run)?;
    sink.say(&run_summary(&run));
    sink.finish();
    Ok(exit_for(stop, failure))
}

fn cmd_data(plan: iomark::plan::DataPlan, stop: &StopFlag) -> Result<i32> {
    let measured = if plan.output == "-" {
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
        runner::produce_stream(&plan.spec, plan.size, &mut w, stop)?
    } else {
        let path = std::path::Path::new(&plan.output);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Error::input(format!(
                    "{} exists; iomark does not overwrite it: remove it or choose another name",
                    path.display()
                )),
                _ => Error::input(format!(
                    "cannot create {}: {}",
                    path.display(),
                    iomark::error::describe_io(&e)
                )),
            })?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        runner::produce_stream(&plan.spec, plan.size, &mut w, stop)?
    };
    if !plan.quiet {
        eprintln!(
            "{}: {} of {}; measured chunk by chunk: lz4 {:.1}%, zstd-1 {:.1}% smaller; duplicate {}-units {:.1}%",
            plan.output,
            iomark::units::fmt_size(measured.compress_sampled_bytes),
            plan.spec.data.describe(),
            measured.lz4_pct,
            measured.zstd_pct,
            iomark::units::fmt_size_short(plan.spec.data.dedup_unit),
            measured.dedup_pct
        );
    }
    Ok(exit_for(stop, None))
}

/// Loads every input (iomark or fio JSON), labelled by file name.
fn load_inputs(files: &[std::path::PathBuf]) -> Result<Vec<(String, Document)>> {
    files
        .iter()
        .map(|f| {
            let label = f.file_name().map_or_else(
                || f.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            iomark::results::fio::load(f).map(|d| (label, d))
        })
        .collect()
}

/// Writes `text` to `output` (atomically: a temporary file, then rename) or stdout.
fn emit(text: &str, output: Option<&std::path::Path>) -> Result<i32> {
    match output {
        None => {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
        Some(p) => {
            let tmp = p.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, text)
                .and_then(|_| std::fs::rename(&tmp, p))
                .map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    Error::Runtime(format!(
                        "cannot write {}: {}",
                        p.display(),
                        iomark::error::describe_io(&e)
                    ))
                })?;
        }
    }
    Ok(0)
}

fn cmd_verify(args: &iomark::cli::VerifyArgs) -> Result<i32> {
    use std::os::unix::fs::OpenOptionsExt;
    let map = iomark::measure::verify::GenMap::load(&args.state)?;
    let p = args.target.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(if args.buffered { 0 } else { libc::O_DIRECT })
        .open(&args.target)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) => Error::input(format!(
                "the filesystem under {p} refuses O_DIRECT; use --buffered"
            )),
            _ => Error::input(format!(
                "cannot open {p}: {}",
                iomark::error::describe_io(&e)
            )),
        })?;
    let report = iomark::measure::verify::verify(&file, &map)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("report serializes")
        );
    } else {
        println!("{p}: {}", report.describe());
    }
    if report.blocks == 0 {
        eprintln!("iomark: the state file records no written blocks; nothing was checked");
        return Ok(ExitCode::Failure as i32);
    }
    Ok(if report.bad() > 0 {
        ExitCode::Failure as i32
    } else {
        0
    })
}

fn cmd_suite(plan: iomark::plan::SuitePlan, stop: &StopFlag) -> Result<i32> {
    let total_est: f64 = plan
        .runs
        .iter()
        .filter_map(|r| iomark::plan::estimate_s(&r.plan))
        .sum();
    let size_based = plan
        .runs
        .iter()
        .filter(|r| r.plan.spec.runtime_s.is_none())
        .count();
    if !plan.dry_run && (plan.name == "steady" || plan.name == "wsat") {
        return cmd_dirty(&plan, stop);
    }
    if plan.dry_run {
        if plan.out.json {
            let runs: Vec<serde_json::Value> = plan
                .runs
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    serde_json::json!({
                        "index": i + 1,
                        "study": r.point,
                        "spec": r.plan.spec,
                        "repeat": r.plan.repeat,
                        "estimate_s": iomark::plan::estimate_s(&r.plan),
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "suite": plan.name,
                    "target": plan.target,
                    "runs": runs,
                    "estimate_s": total_est,
                    "size_based_runs": size_based,
                }))
                .expect("plan serializes")
            );
        } else {
            print!("{}", iomark::report::text::plan_listing(&plan));
        }
        return Ok(0);
    }
    let out = OutputArgs {
        output: plan.out.output.clone().or_else(|| plan.resume.clone()),
        ..plan.out.clone()
    };
    let mut sink = Sink::new(&out);
    let mut done = vec![false; plan.runs.len()];
    if let Some(path) = &plan.resume {
        let doc = Document::load(path)?;
        if doc.runs.len() > plan.runs.len() {
            return Err(Error::input(format!(
                "{} holds {} runs but this study plans {}; resume with the same suite and options",
                path.display(),
                doc.runs.len(),
                plan.runs.len()
            )));
        }
        for (i, r) in doc.runs.iter().enumerate() {
            let want = &plan.runs[i];
            if r.spec != want.plan.spec || r.study.as_ref() != Some(&want.point) {
                return Err(Error::input(format!(
                    "{} was made by another plan: run {} there is '{}', here '{}'; resume with the same suite and options",
                    path.display(),
                    i + 1,
                    r.name,
                    want.plan.spec.name()
                )));
            }
            done[i] = r.status == iomark::results::schema::Status::Complete;
        }
        sink.doc = doc;
        // Interrupted runs are run again; drop them so the document stays in plan order.
        let mut keep_n = done.iter().take_while(|&&d| d).count();
        // A study's own target is gone after the interruption: runs that read what a
        // preparation run (a fill) wrote must start again from that preparation.
        if !std::path::Path::new(&plan.target).exists()
            && keep_n < plan.runs.len()
            && plan.runs[keep_n].point.test != "fill"
            && let Some(fill) = plan.runs[..keep_n]
                .iter()
                .rposition(|r| r.point.test == "fill")
        {
            keep_n = fill;
        }
        sink.doc.runs.truncate(keep_n);
        for d in done.iter_mut().skip(keep_n) {
            *d = false;
        }
    }
    let mut progress = TermProgress::new(out.quiet);
    let remaining: usize = done.iter().filter(|d| !**d).count();
    sink.say(&format!(
        "iomark suite {}: {} runs ({} to do) on {}, about {}{}\n",
        plan.name,
        plan.runs.len(),
        remaining,
        plan.target,
        iomark::report::text::fmt_duration(total_est),
        if size_based > 0 {
            format!(" plus {size_based} size-based runs")
        } else {
            String::new()
        }
    ));
    let started = std::time::Instant::now();
    let target_existed = std::path::Path::new(&plan.target).exists();
    let mut created = false;
    let mut outcome: Result<Option<Error>> = Ok(None);
    for (i, r) in plan.runs.iter().enumerate() {
        if done[i] {
            continue;
        }
        if stop.is_set() {
            break;
        }
        if i > 0 && r.plan.spec.pause_s > 0.0 {
            runner::pause(r.plan.spec.pause_s, stop);
        }
        let left: f64 = plan.runs[i..]
            .iter()
            .zip(&done[i..])
            .filter(|(_, d)| !**d)
            .filter_map(|(r, _)| iomark::plan::estimate_s(&r.plan))
            .sum();
        progress.set_run(i + 1, plan.runs.len());
        progress.set_study(started, left);
        // The study's target file is created by its first run and kept until the end.
        match study_run(&mut sink, &mut progress, r, &r.point, created, stop) {
            Ok((run, failure)) => {
                created |= run.target.created && !target_existed;
                if failure.is_some() {
                    outcome = Ok(failure);
                    break;
                }
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    // The study made the target if it was not there before and is now (even if the run
    // that made it failed afterwards).
    if !target_existed && !plan.keep && std::path::Path::new(&plan.target).is_file() {
        let _ = std::fs::remove_file(&plan.target);
    }
    let failure = outcome?;
    sink.say(&iomark::report::text::study_tables(&sink.doc));
    for r in &sink.doc.runs {
        for w in &r.warnings {
            sink.say(&format!("note ({}): {w}\n", r.name));
        }
    }
    sink.finish();
    Ok(exit_for(stop, failure))
}

/// Runs one run of a study into the document at `idx`, labelled with `point`.
fn study_run(
    sink: &mut Sink,
    progress: &mut TermProgress,
    r: &iomark::plan::StudyRun,
    point: &iomark::plan::StudyPoint,
    created: bool,
    stop: &StopFlag,
) -> Result<(Run, Option<Error>)> {
    let policy = TargetPolicy {
        keep: true,
        overwrite: r.plan.policy.overwrite || created,
        ..r.plan.policy.clone()
    };
    let idx = sink.doc.runs.len();
    let (mut run, failure) = runner::run(
        &r.plan.spec,
        &policy,
        r.plan.repeat,
        stop,
        progress,
        &mut |run| {
            let mut run = run.clone();
            run.study = Some(point.clone());
            sink.update(idx, &run)
        },
    )?;
    run.study = Some(point.clone());
    sink.update(idx, &run)?;
    Ok((run, failure))
}

/// `suite steady` and `suite wsat`: purge, then precondition and rounds until steady
/// state (steady), or one long write-saturation run (wsat).
fn cmd_dirty(plan: &iomark::plan::SuitePlan, stop: &StopFlag) -> Result<i32> {
    let out = plan.out.clone();
    let mut sink = Sink::new(&out);
    let mut progress = TermProgress::new(out.quiet);
    let target_existed = std::path::Path::new(&plan.target).exists();
    let first = &plan.runs[0];
    let purge = runner::purge(
        &first.plan.spec,
        &TargetPolicy {
            keep: true,
            ..first.plan.policy.clone()
        },
        stop,
    );
    let created = !target_existed && std::path::Path::new(&plan.target).exists();
    let cleanup = |created: bool| {
        if created && !plan.keep {
            let _ = std::fs::remove_file(&plan.target);
        }
    };
    let purge = match purge {
        Ok(p) => p,
        Err(e) => {
            cleanup(created);
            return Err(e);
        }
    };
    sink.say(&format!("purge: {} ({})\n", purge.method, purge.note));
    sink.doc.purge = Some(purge);
    let mut failure = None;
    let criteria = iomark::results::steady::Criteria::default();
    let mut iops = Vec::new();
    let result: Result<()> = (|| {
        if plan.name == "wsat" {
            progress.set_run(1, 1);
            let (_, f) = study_run(&mut sink, &mut progress, first, &first.point, created, stop)?;
            failure = f;
            return Ok(());
        }
        progress.set_run(1, plan.max_rounds as usize + 1);
        let (_, f) = study_run(&mut sink, &mut progress, first, &first.point, created, stop)?;
        if f.is_some() || stop.is_set() {
            failure = f;
            return Ok(());
        }
        let round = &plan.runs[1];
        while iomark::results::steady::another_round(&iops, plan.max_rounds, criteria)
            && !stop.is_set()
        {
            let n = iops.len() + 1;
            let point = iomark::plan::StudyPoint {
                value: n.to_string(),
                ..round.point.clone()
            };
            progress.set_run(n + 1, plan.max_rounds as usize + 1);
            let (run, f) = study_run(&mut sink, &mut progress, round, &point, created, stop)?;
            if f.is_some() || run.status != iomark::results::schema::Status::Complete {
                failure = f;
                break;
            }
            iops.push(run.summary.read.iops.mean + run.summary.write.iops.mean);
            sink.doc.steady_state = Some(iomark::results::steady::evaluate(&iops, criteria));
            let last = sink.doc.runs.len() - 1;
            let r = sink.doc.runs[last].clone();
            sink.update(last, &r)?;
        }
        Ok(())
    })();
    cleanup(created);
    result?;
    sink.say(&iomark::report::text::study_tables(&sink.doc));
    if let Some(s) = &sink.doc.steady_state {
        let verdict = match (s.reached, s.window) {
            (true, Some([a, b])) => format!(
                "steady state reached at round {}: rounds {a}-{b}, mean {:.0} IOPS, range {:.1}% (max {}%), slope {:.1}% (max {}%)",
                s.round.unwrap_or(0),
                s.mean.unwrap_or(0.0),
                s.range_pct.unwrap_or(0.0),
                s.criteria.max_range_pct,
                s.slope_pct.unwrap_or(0.0),
                s.criteria.max_slope_pct
            ),
            _ => format!(
                "steady state NOT reached in {} rounds (last window: range {:.1}%, slope {:.1}%)",
                s.rounds,
                s.range_pct.unwrap_or(f64::NAN),
                s.slope_pct.unwrap_or(f64::NAN)
            ),
        };
        sink.say(&format!("{verdict}\n"));
    }
    let was: Vec<String> = sink
        .doc
        .runs
        .iter()
        .filter_map(|r| {
            let w = r.write_amplification.as_ref()?;
            let label = r
                .study
                .as_ref()
                .map_or(r.name.clone(), |p| format!("{} {}", p.test, p.value));
            Some(format!("{label} {:.3}", w.ratio?))
        })
        .collect();
    if let Some(w) = sink
        .doc
        .runs
        .iter()
        .find_map(|r| r.write_amplification.as_ref())
    {
        sink.say(&format!(
            "write amplification ({}; {}): {}\n",
            w.source,
            w.note,
            was.join(", ")
        ));
    }
    if plan.name == "wsat"
        && let Some(rep) = sink.doc.runs.first().and_then(|r| r.repetitions.first())
    {
        sink.say(&iomark::report::text::wsat_minutes(rep));
    }
    sink.finish();
    Ok(exit_for(stop, failure))
}

fn cmd_quick(args: &QuickArgs, stop: &StopFlag) -> Result<i32> {
    let plan = args.resolve()?;
    if plan.file.exists() {
        return Err(Error::input(format!(
            "{} already exists; remove it or run in another directory",
            plan.file.display()
        )));
    }
    let mut sink = Sink::new(&plan.out);
    let mut progress = TermProgress::new(plan.out.quiet);
    sink.say(&format!(
        "iomark quick benchmark: {} tests of {} s each on {} ({})\n",
        plan.specs.len(),
        plan.specs[0].runtime_s.unwrap_or(0.0) + plan.specs[0].ramp_s,
        plan.file.display(),
        iomark::units::fmt_size(plan.specs[0].size.unwrap_or(0)),
    ));
    let mut created = false;
    let mut outcome: Result<Option<Error>> = Ok(None);
    for (i, spec) in plan.specs.iter().enumerate() {
        if stop.is_set() {
            break;
        }
        progress.set_run(i + 1, plan.specs.len());
        // The first test creates the file; the rest reuse it (iomark's own file).
        let policy = TargetPolicy {
            keep: true,
            overwrite: created,
            allow_write_device: false,
            destroy_data: false,
            verify_state: None,
        };
        match runner::run(spec, &policy, 1, stop, &mut progress, &mut |r| {
            sink.update(i, r)
        }) {
            Ok((run, failure)) => {
                created |= run.target.created;
                if let Err(e) = sink.update(i, &run) {
                    outcome = Err(e);
                    break;
                }
                if failure.is_some() {
                    outcome = Ok(failure);
                    break;
                }
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    // The quick file's name is new (checked above): whatever exists now is ours, even
    // if the run that made it failed afterwards.
    if plan.file.is_file() {
        let _ = std::fs::remove_file(&plan.file);
    }
    let failure = outcome?;
    sink.say(&format!("\n{}", plan_table(&sink.doc)));
    if let Some(note) = sink.doc.runs.first().and_then(|r| r.warnings.first()) {
        sink.say(&format!("note: {note}\n"));
    }
    sink.finish();
    Ok(exit_for(stop, failure))
}
