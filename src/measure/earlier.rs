//! The repetitions a run cut short finished before a study was resumed (`--resume`):
//! carried into the run measured again, which measures the rest.

use crate::results::schema::{Repetition, Run};

/// The repetitions an interrupted run finished before a study was resumed: the run keeps
/// them as they were (the document is saved after every repetition so that they are
/// kept) and measures the rest. None for a run measured whole.
#[derive(Default)]
pub(crate) struct Earlier {
    pub(crate) reps: Vec<Repetition>,
    /// The run's warnings about those repetitions ("repetition N: ...").
    pub(crate) warnings: Vec<String>,
}

impl Earlier {
    pub(crate) fn carry_into(self, run: &mut Run) {
        let n = self.reps.len();
        if n == 0 {
            return;
        }
        run.warnings.extend(self.warnings);
        run.warnings.push(format!(
            "{} measured before the study was resumed (--resume), by an earlier iomark process; the rest since",
            match n {
                1 => "repetition 1 was".to_string(),
                _ => format!("repetitions 1-{n} were"),
            }
        ));
        run.repetitions = self.reps;
        crate::measure::run::summarize(run);
    }
}
