//! Fitting a plan to its targets before it runs, where the plan's defaults cannot know
//! them: `suite bs`'s preset sizes against the targets' direct-I/O alignment.

use crate::plan::StudyRun;

/// `suite bs` without `--bs` sweeps from 512 B; direct I/O on a target with larger
/// sectors (a 4Kn disk, zram) refuses the small sizes, so the sweep starts at the largest
/// alignment of the targets, with a note on each test's first run. (The alignment is
/// asked of the targets, as their existence is above: an open for reading, no I/O.)
pub(crate) fn bs_sweep_fit(runs: Vec<StudyRun>, targets: &[&str]) -> Vec<StudyRun> {
    let align = (targets.iter())
        .filter(|t| **t != "null")
        .map(|t| crate::io::target::direct_alignment_at(std::path::Path::new(t)))
        .max()
        .unwrap_or(512);
    let small = |r: &StudyRun| r.plan.spec.direct && r.plan.spec.bs < align;
    let left: Vec<String> = (runs.iter().filter(|r| small(r)))
        .map(|r| r.point.value.clone())
        .fold(Vec::new(), |mut v, b| {
            if !v.contains(&b) {
                v.push(b);
            }
            v
        });
    if left.is_empty() {
        return runs;
    }
    let note = format!(
        "suite bs: {} left out, as direct I/O on {} needs multiples of {align} bytes (give --bs to choose the sizes, or --buffered)",
        left.join(", "),
        targets.join(", ")
    );
    let mut seen = Vec::new();
    let mut kept: Vec<StudyRun> = runs.into_iter().filter(|r| !small(r)).collect();
    for r in &mut kept {
        if !seen.contains(&r.point.test) {
            seen.push(r.point.test.clone());
            r.plan.spec.note(&note);
        }
    }
    kept
}
