//! The bound on every wait of a scaled-out repetition: each rank's main thread sends the
//! others a heartbeat every [`BEAT_EVERY`] while it works (from the sink's callbacks: the
//! progress of its I/O, the layout of a new file, a `--verify` read-back) and while it
//! waits. A rank that waits (at a barrier, for the figures, for rank 0's word) tests its
//! MPI requests without blocking, hears the others' heartbeats, and ends the job when a
//! rank it waits for has been silent for [`SILENCE`] since the wait began (5 s more on
//! ranks other than 0, so that rank 0 names the rank first). Nothing here blocks in MPI,
//! so a frozen rank is found wherever it froze: in a size-based repetition, a read-back,
//! or the first repetition's layout, however long those legitimately take.

use std::time::{Duration, Instant};

use mpi::point_to_point::MatchedReceiveVec;
use mpi::request::{Request, Scope};
use mpi::traits::*;

use super::Comm;
use crate::stop::StopFlag;

/// The tag of a heartbeat (no content).
const BEAT: i32 = 3;
/// How often a working or waiting rank sends its heartbeat.
const BEAT_EVERY: Duration = Duration::from_secs(2);
/// How long a rank waited for may stay silent.
pub(super) const SILENCE: Duration = Duration::from_secs(30);
/// How often a waiting rank tests its requests.
const POLL: Duration = Duration::from_millis(10);
/// How long a rank stopped by a signal (SIGTERM from the launcher, SIGINT) still waits
/// for a rank that is silent: the others, stopped too, deliver their figures within a
/// heartbeat or so; a frozen one would hold it until the launcher's SIGKILL.
const GRACE: Duration = Duration::from_secs(3);
/// How long a stopped rank waits before it removes the files it made: the others,
/// stopped by the same signal, deliver well within it; OpenMPI's SIGKILL follows its
/// SIGTERM after about 2 s, and a file left then would stay.
const CUT: Duration = Duration::from_millis(500);

/// This rank's heartbeats and what it heard of the others.
pub(super) struct Pulse {
    sent: Instant,
    /// When each rank was last heard from.
    heard: Vec<Instant>,
    /// Every rank's host, once they are known (empty before).
    pub(super) hosts: Vec<String>,
    bound: Duration,
    stop: StopFlag,
}

/// Whether `req` has completed (taken then); `true` once it is gone.
pub(super) fn tested<'a, D: ?Sized, S: Scope<'a>>(req: &mut Option<Request<'a, D, S>>) -> bool {
    match req.take().map(Request::test) {
        None | Some(Ok(_)) => true,
        Some(Err(r)) => {
            *req = Some(r);
            false
        }
    }
}

impl Pulse {
    pub(super) fn new(comm: &Comm, hosts: Vec<String>, stop: &StopFlag) -> Pulse {
        Pulse {
            sent: Instant::now(),
            heard: vec![Instant::now(); comm.size as usize],
            hosts,
            bound: SILENCE + Duration::from_secs(5 * u64::from(comm.rank != 0)),
            stop: stop.clone(),
        }
    }

    /// Sends the others a heartbeat, if one is due.
    pub(super) fn beat(&mut self, comm: &Comm) {
        if self.sent.elapsed() < BEAT_EVERY {
            return;
        }
        self.sent = Instant::now();
        for r in (0..comm.size).filter(|&r| r != comm.rank) {
            // A small message: sent eagerly, nobody waits for it to be received.
            (comm.world.process_at_rank(r as i32)).send_with_tag(&[0u8][..], BEAT);
        }
    }

    /// Reads every heartbeat that has arrived.
    pub(super) fn hear(&mut self, comm: &Comm) {
        while let Some(probed) = (comm.world.any_process()).immediate_matched_probe_with_tag(BEAT) {
            let (_, status) = probed.matched_receive_vec::<u8>();
            if let Some(t) = self.heard.get_mut(status.source_rank() as usize) {
                *t = Instant::now();
            }
        }
    }

    /// The ranks other than this one, all waited for.
    pub(super) fn others(comm: &Comm) -> Vec<bool> {
        (0..comm.size).map(|r| r != comm.rank).collect()
    }

    /// Only rank `r` waited for.
    pub(super) fn only(comm: &Comm, r: u32) -> Vec<bool> {
        (0..comm.size).map(|q| q == r).collect()
    }

    /// Waits until `ready` (which may strike ranks off `pending` as they deliver) says
    /// so, beating and hearing; ends the job when a rank still pending has been silent
    /// longer than the bound since the wait began. Once this rank is stopped by a signal
    /// it waits for a silent rank only [`GRACE`] more, and removes the files it made
    /// after [`CUT`] (before the launcher's SIGKILL, which follows its SIGTERM).
    pub(super) fn wait(
        &mut self,
        comm: &Comm,
        what: &str,
        mut pending: Vec<bool>,
        mut ready: impl FnMut(&mut Vec<bool>) -> bool,
    ) {
        let began = Instant::now();
        let mut stopped: Option<Instant> = None;
        let mut removed = false;
        loop {
            if ready(&mut pending) {
                return;
            }
            if stopped.is_none() && self.stop.is_set() {
                stopped = Some(Instant::now());
            }
            if stopped.is_some_and(|t| t.elapsed() >= CUT) && !removed {
                // The others, stopped too, have not delivered: the job is ending.
                crate::io::target::remove_unfinished();
                removed = true;
            }
            self.beat(comm);
            self.hear(comm);
            let since = stopped.unwrap_or(began);
            let bound = stopped.map_or(self.bound, |_| GRACE);
            let silent = (0..comm.size as usize)
                .filter(|&r| pending[r])
                .map(|r| (r, self.heard[r].max(since).elapsed()))
                .max_by_key(|&(_, s)| s);
            if let Some((r, s)) = silent.filter(|&(_, s)| s > bound) {
                let host = self
                    .hosts
                    .get(r)
                    .map_or("a host not yet known", String::as_str);
                let me = Comm::name(comm.rank, &comm.host);
                if stopped.is_some() {
                    eprintln!(
                        "iomark: {me}: stopped by {} {what}; rank {r} on {host} silent for {:.1} s since; ending the job (the repetitions finished before are kept)",
                        self.stop.signal_name(),
                        s.as_secs_f64()
                    );
                    std::process::exit(match self.stop.signal() {
                        crate::stop::STOP_REQUESTED => 1,
                        sig => 128 + sig as i32,
                    });
                }
                eprintln!(
                    "iomark: {me}: no word from the other ranks, {what}: rank {r} on {host} silent for {:.1} s (the bound is {} s); ending the job",
                    s.as_secs_f64(),
                    bound.as_secs()
                );
                crate::io::target::remove_unfinished();
                std::process::exit(1);
            }
            std::thread::sleep(POLL);
        }
    }

    /// A barrier of every rank, watched.
    pub(super) fn barrier(&mut self, comm: &Comm, what: &str) {
        let mut req = Some(comm.world.immediate_barrier());
        self.wait(comm, what, Pulse::others(comm), |_| tested(&mut req));
    }
}

/// The tag of what a rank sends rank 0 before the repetitions (its host, its verdict).
const TO_ZERO: i32 = 5;
/// The tag of what rank 0 sends every rank before the repetitions (the plan, the hosts,
/// the first refusal).
const FROM_ZERO: i32 = 6;

impl Pulse {
    /// Every rank's bytes at rank 0, in rank order (`None` on the other ranks), watched:
    /// point-to-point messages tested without blocking, as in a repetition.
    pub(super) fn gather(
        &mut self,
        comm: &Comm,
        what: &str,
        data: Vec<u8>,
    ) -> Option<Vec<Vec<u8>>> {
        // One leading byte, so that no message is empty (OpenMPI refuses the dangling
        // pointer of an empty buffer).
        let framed: Vec<u8> = std::iter::once(1).chain(data).collect();
        if comm.rank != 0 {
            mpi::request::scope(|sc| {
                let to0 = comm.world.process_at_rank(0);
                let mut req = Some(to0.immediate_send_with_tag(sc, &framed[..], TO_ZERO));
                self.wait(comm, what, Pulse::only(comm, 0), |_| tested(&mut req));
            });
            return None;
        }
        let mut got: Vec<Vec<u8>> = vec![Vec::new(); comm.size as usize];
        got[0] = framed;
        self.wait(comm, what, Pulse::others(comm), |pending| {
            while let Some(probed) =
                (comm.world.any_process()).immediate_matched_probe_with_tag(TO_ZERO)
            {
                let (v, status) = probed.matched_receive_vec::<u8>();
                let r = status.source_rank() as usize;
                got[r] = v;
                pending[r] = false;
            }
            !pending.contains(&true)
        });
        Some(got.into_iter().map(|mut v| v.split_off(1)).collect())
    }

    /// Rank 0's bytes on every rank, watched.
    pub(super) fn broadcast(&mut self, comm: &Comm, what: &str, data: Vec<u8>) -> Vec<u8> {
        if comm.rank == 0 {
            let framed: Vec<u8> = std::iter::once(1).chain(data.iter().copied()).collect();
            mpi::request::scope(|sc| {
                let mut reqs: Vec<_> = (1..comm.size)
                    .map(|r| {
                        let to = comm.world.process_at_rank(r as i32);
                        Some(to.immediate_send_with_tag(sc, &framed[..], FROM_ZERO))
                    })
                    .collect();
                self.wait(comm, what, Pulse::others(comm), |pending| {
                    for (i, req) in reqs.iter_mut().enumerate() {
                        if tested(req) {
                            pending[i + 1] = false;
                        }
                    }
                    !pending.contains(&true)
                });
            });
            return data;
        }
        let mut got = Vec::new();
        self.wait(comm, what, Pulse::only(comm, 0), |_| {
            let from0 = comm.world.process_at_rank(0);
            let Some(probed) = from0.immediate_matched_probe_with_tag(FROM_ZERO) else {
                return false;
            };
            got = probed.matched_receive_vec::<u8>().0.split_off(1);
            true
        });
        got
    }
}
