//! Dirty-drive studies: `steady` (purge, precondition, then rounds of the test workload
//! until the SNIA steady-state window holds or the round limit) and `wsat` (purge, then
//! one long write-saturation run). The rounds' verdict is `results::steady`'s; this module
//! owns the loop and the target's lifetime across it.

use crate::error::{Error, Result};
use crate::io::target::Target;
use crate::plan::spec::{Spec, TargetPolicy};
use crate::plan::{StudyKind, StudyPoint, SuitePlan};
use crate::results::schema::{Purge, Status};
use crate::results::steady::{Criteria, another_round, evaluate};
use crate::stop::StopFlag;
use crate::study::runner::{StudyRunner, TargetLife};
use crate::workload::corpus::load_for;
use crate::workload::data::DataGen;

/// Opens the target of `spec` (a write workload, so the safety rules for writing apply)
/// and purges its span.
pub(crate) fn purge(spec: &Spec, policy: &TargetPolicy, stop: &StopFlag) -> Result<Purge> {
    let mut layout = DataGen::new(&spec.data, spec.seed, u64::MAX, load_for(&spec.data)?);
    let target = Target::open(spec, policy, &mut |_, _| !stop.is_set(), &mut layout)?;
    let purge = target.purge();
    target.finish()?;
    Ok(purge)
}

impl StudyRunner<'_> {
    /// Runs `suite steady` or `suite wsat`. Returns the error that stopped it, if one did.
    pub fn dirty(&mut self, plan: &SuitePlan) -> Result<Option<Error>> {
        crate::study::runner::preflight(&plan.runs)?;
        let life = TargetLife::new(&plan.target, plan.keep);
        let first = &plan.runs[0];
        let policy = TargetPolicy {
            keep: true,
            hold: true,
            ..first.plan.policy.clone()
        };
        let purged = purge(&first.plan.spec, &policy, self.stop);
        let result = purged.and_then(|p| {
            self.store.doc.purge = Some(p);
            self.store.save()?;
            self.rounds(plan)
        });
        life.end();
        result
    }

    /// After the purge: wsat's one run, or steady's precondition and rounds.
    fn rounds(&mut self, plan: &SuitePlan) -> Result<Option<Error>> {
        let first = &plan.runs[0];
        let total = if plan.kind == StudyKind::Wsat {
            1
        } else {
            plan.max_rounds as usize + 1
        };
        // A steady study cut before its first round ends has a verdict too: not reached.
        if plan.kind != StudyKind::Wsat {
            self.store.doc.steady_state = Some(evaluate(&[], Criteria::default()));
            self.store.save()?;
        }
        let out = self.run_one(0, total, first, Some(first.point.clone()))?;
        if plan.kind == StudyKind::Wsat || out.failure.is_some() || self.stop.is_set() {
            return Ok(out.failure);
        }
        let round = &plan.runs[1];
        let criteria = Criteria::default();
        let mut iops = Vec::new();
        while another_round(&iops, plan.max_rounds, criteria) && !self.stop.is_set() {
            let n = iops.len() + 1;
            let point = StudyPoint {
                value: n.to_string(),
                ..round.point.clone()
            };
            let idx = self.store.doc.runs.len();
            let out = self.run_one(idx, total, round, Some(point))?;
            if out.failure.is_some() || out.run.status != Status::Complete {
                return Ok(out.failure);
            }
            // Scaled out, every rank decides on the ranks' aggregate, not its own run.
            let s = self.progress.gathered().unwrap_or(out.run.summary);
            iops.push(s.read.iops.mean + s.write.iops.mean);
            self.store.doc.steady_state = Some(evaluate(&iops, criteria));
            self.store.save()?;
        }
        Ok(None)
    }
}
