//! The way in: one try, then the wait (queued, or polling on a Redlock quorum); what a
//! taken lock records (the table of holds, fencing, replicas); and the wait as
//! `waiting` sees it (`LockWait`).

use crate::kinds::retake;
use super::*;

impl Lock {
    /// The one way in for every acquisition: `want` a write lock or a read share,
    /// with one try or (`wait`) until the deadline. `method` names the PHP method in errors.
    pub(super) fn obtain(&mut self, chosen: Option<Token>, want: Kind, wait: bool, method: &str) -> Result<Option<Token>> {
        let start = Instant::now();
        let chosen_token = chosen.is_some();
        let deadline = self.terms.deadline(start);
        self.quick = retake::came_back(self.keys.id, start);
        // Back for it: the lock it left free is its own business again.
        self.left_free = None;
        if self.owner_info {
            self.record = crate::owner::record();
        }
        if want == Kind::Read && self.route.lease_only() {
            return Err(redlock_refuses(method));
        }
        let held = self.live_hold();
        let mode = match (want, held) {
            (Kind::Read, Some(Kind::Read)) => return Ok(None),
            (Kind::Read, Some(Kind::Write)) => return self.downgrade(),
            (Kind::Write, Some(Kind::Read)) => Mode::Upgrade,
            (Kind::Read, _) => Mode::Read,
            // A Lock never holds permits: only a Semaphore does.
            (Kind::Write | Kind::Permits, _) => Mode::Write,
        };
        let token = match (mode, chosen) {
            (Mode::Upgrade, Some(t)) if Some(&t) != self.claim.token.as_ref() => {
                return Err(LockError::InvalidValue(format!(
                    "{method}: Argument #1 ($token) must be this object's read token, or null: an upgrade keeps its token"
                )))
            }
            (Mode::Upgrade, _) => self.claim.token.clone().unwrap_or_default(),
            (_, Some(t)) => t,
            (_, None) => token::generate()?,
        };
        // A token the caller chose may be another holder's too: finding the key holding
        // it proves nothing of this call's (see `Try::Unsure`).
        self.caller_token = chosen_token;
        // Decided once for the whole wait: a retry that found the key handed over reads
        // the counter, which is this holder's number only if the grant issued one.
        let fence = mode != Mode::Read && self.eager_fencing();
        // Contended lately: the wait's first try, which queues, is the first try.
        if wait && mode != Mode::Upgrade && !self.route.lease_only() && retake::contended_lately(self.keys.id, start) {
            return self.wait_for(token, deadline, fence, mode, false, false);
        }
        // Redis trouble on the first try is reported at once, as without a wait,
        // but for a passing state (a server loading its data, a failover), waited out.
        // The lease is counted from before the try was sent: from `start`.
        let sent = Boot::now();
        let first = match mode {
            Mode::Write => self.first_try(&token, fence),
            _ => self.attempt(&token, b"", false, None, fence, mode),
        };
        let mut may_hold = false;
        match first {
            Ok(Try::Acquired(number)) => {
                retake::note_contended(self.keys.id, false, start);
                let until = waiting::lease_bound(sent, self.terms.lease);
                if !waiting::is_stale(until) {
                    return Ok(Some(self.took(token, number, want, until, Instant::now())));
                }
                // Its reply came after the lease may have ended: no acquisition.
                crate::stats::note(crate::stats::Counter::Stale);
                if !wait || Instant::now() >= deadline {
                    self.abandon(&token, mode);
                    return Ok(None);
                }
                may_hold = true;
            }
            Ok(Try::Busy { .. }) if !wait => return Ok(None),
            Ok(Try::Busy { .. }) => {}
            // A lost reply, and the key holds the caller's token: not known whose.
            Ok(Try::Unsure) => return Err(self.maybe_taken(token, waiting::unsure(self.route.node().addr()), want)),
            Err(e) if wait && e.is_passing() && Instant::now() < deadline => {}
            Err(e) => return Err(self.maybe_taken(token, e, want)),
        }
        self.wait_for(token, deadline, fence, mode, may_hold, true)
    }

    /// Releases a hold of `token` taken too late to be used (stale), if it still has
    /// it; errors are left to the lease.
    pub(super) fn abandon(&self, token: &[u8], mode: Mode) {
        let _ = fire_release(&self.route, &self.keys, mode.kind(), token, false, None);
    }

    /// The write lock this object holds becomes a read share, in one step.
    pub(super) fn downgrade(&mut self) -> Result<Option<Token>> {
        let Some(token) = self.claim.token.clone() else { return Ok(None) };
        let k = &self.keys;
        let sent = Boot::now();
        let done = self.run(Retry::IfStale, |conn, _| {
            let reply = DOWNGRADE.run(conn, &k.all(), &[&token, self.terms.ttl_arg.as_bytes()])?;
            resp::int(&reply).ok_or_else(|| unexpected("downgrade", &reply))
        })?;
        if done != 1 {
            // The write lock was lost meanwhile: nothing to downgrade.
            self.claim.released(true, &self.keys, &token);
            return Ok(None);
        }
        Ok(Some(self.took(token, None, Kind::Read, waiting::lease_bound(sent, self.terms.lease), Instant::now())))
    }

    /// What this object holds, as far as it knows: none, or a hold the watchdog
    /// has not found lost.
    pub(super) fn live_hold(&self) -> Option<Kind> {
        let id = self.claim.own()?;
        (table::status(id) == Status::Held).then_some(self.kind)
    }
    /// The first try of an acquisition: a plain `SET NX PX`, the cheapest command
    /// there is; `SET NX PX` and the fencing `INCR` in one short script when `fence`;
    /// the acquire script in fair mode, which gives way to queued waiters.
    pub(super) fn first_try(&self, token: &[u8], fence: bool) -> Result<Try> {
        if self.terms.fair {
            return self.attempt(token, b"", false, None, fence, Mode::Write);
        }
        let k = &self.keys;
        if fence || self.owner_info {
            // A second run settles a lost reply: it finds the key held by this token.
            let fence_arg: &[u8] = if fence { b"1" } else { b"0" };
            return self.run(Retry::ToSettle, |conn, settling| {
                let settle: &[u8] = match (settling, self.caller_token) {
                    (false, _) => b"0",
                    (true, false) => b"1",
                    (true, true) => b"2",
                };
                // Only what is needed: each key and argument costs its encoding.
                let args: [&[u8]; 5] = [token, self.terms.ttl_arg.as_bytes(), settle, fence_arg, &self.record];
                let keys: [&[u8]; 3] = [&k.lock, &k.fence, &k.owner];
                let (keys, args) = if self.owner_info { (&keys[..], &args[..]) } else { (&keys[..2], &args[..3]) };
                let reply = TAKE.run(conn, keys, args)?;
                match resp::int(&reply) {
                    Some(0) => Ok(Try::busy_unqueued()),
                    Some(-1) => Ok(Try::Unsure),
                    Some(n) => Ok(Try::Acquired(fence.then_some(n))),
                    None => Err(unexpected("take", &reply)),
                }
            });
        }
        // On a Redlock quorum this is `SET NX PX` on every node, undone by the release.
        let all = k.all();
        let undo = Call::Script(&RELEASE, &all, &[token, b"0", PATIENCE_MS.as_bytes()]);
        let taken = |took| if took { Try::Acquired(None) } else { Try::busy_unqueued() };
        self.route.take(&k.lock, token, self.terms.lease, &undo, |conn, settling| {
            if settling {
                // The SET's reply was lost: the script finds out whether it landed. It
                // must not issue a number: finding the key held already, it would read
                // the counter, whose value is the previous holder's.
                return self.run_acquire(conn, token, b"", true, None, false, Mode::Write);
            }
            let reply = match self.terms.lease {
                Some(_) => wire::request(conn, &[b"SET", &k.lock, token, b"NX", b"PX", self.terms.ttl_arg.as_bytes()])?,
                None => wire::request(conn, &[b"SET", &k.lock, token, b"NX"])?,
            };
            match reply {
                Value::Okay => Ok(Try::Acquired(None)),
                // The holder's lease is not known; the waiting loop asks the script.
                Value::Nil => Ok(Try::busy_unqueued()),
                // A broken or hostile server: an error, never `false`.
                other => Err(RedisError::from((ErrorKind::UnexpectedReturnType, "unexpected reply", format!("to SET NX: {other:?}")))),
            }
        }, taken)
    }

    /// Waits for the lock (`obtain`, after a first try that found it busy, or with
    /// none: `tried` false). `may_hold`: the first try took it too late to be used
    /// (see `waiting`).
    pub(super) fn wait_for(&mut self, token: Token, deadline: Instant, fence: bool, mode: Mode, may_hold: bool, tried: bool) -> Result<Option<Token>> {
        let kind = mode.kind();
        let (outcome, busy) = waiting::wait(&LockWait { lock: self, token: &token, fence, mode }, deadline, may_hold, tried);
        retake::note_contended(self.keys.id, busy, Instant::now());
        match outcome {
            Waited::Got(fence, until) => Ok(Some(self.took(token, fence, kind, until, Instant::now()))),
            Waited::TimedOut => Ok(None),
            Waited::Failed(e) => Err(self.maybe_taken(token, e, kind)),
        }
    }

    /// Records a successful acquisition whose lease ends at `until` at the earliest: in
    /// the object, and in the process's table of holds (with a renewal schedule when
    /// `auto_renew` is on, counted from when the lease began, not from now), `now` being
    /// when the acquisition was found fresh.
    pub(super) fn took(&mut self, token: Token, fence: Option<i64>, kind: Kind, until: waiting::Until, now: Instant) -> Token {
        if kind == Kind::Write {
            self.wait_for_replicas(&token);
        }
        crate::stats::note(crate::stats::Counter::Acquired);
        let renew = Renewal::for_terms(&self.terms, until, now);
        self.hold_token(token.clone(), renew, kind, until);
        self.acquired_at = Some(now);
        // A read share has no fencing token.
        self.fence = if self.fencing { fence } else { None };
        self.ever_held = kind == Kind::Write;
        token
    }

    /// With `wait_replicas`, waits (at most half a `read_timeout`) until that many
    /// replicas have the acquisition. A token-checked renewal goes first: `WAIT`
    /// covers this connection's own writes, and a lock handed over was written by the
    /// releaser. This narrows the window in which a failover loses the lock; it is
    /// no guarantee (replication stays asynchronous), so it never fails the acquire.
    pub(super) fn wait_for_replicas(&self, token: &[u8]) {
        if self.wait_replicas == 0 {
            return;
        }
        let prime = [&self.keys.lock[..]];
        self.route.wait_replicas(self.wait_replicas, &Call::Script(&RENEW, &prime, &[token, self.terms.ttl_arg.as_bytes()]));
    }

    /// Makes `token` this object's, in the table of holds too. A hold the object had
    /// before is over: the key was free for this one to be taken.
    pub(super) fn hold_token(&mut self, token: Token, renew: Option<Box<Renewal>>, kind: Kind, until: waiting::Until) {
        self.kind = kind;
        self.claim.record(Hold {
            kind,
            owner: Owner::current(),
            route: self.route.clone(),
            keys: self.keys.clone(),
            token,
            renew_by: if kind == Kind::Read { &READ_RENEWAL } else { &WRITE_RENEWAL },
            renew,
            until,
            lost: None,
            auto_release: self.terms.auto_release,
            orphan: false,
        });
    }

    /// After a failed try the lock may still have been taken (a lost reply):
    /// remember the token so that a later releaseLock() (or the object's end)
    /// clears it; otherwise it expires with its lease. A failure while connecting
    /// sent nothing, so there is nothing to clear (and no reason to connect again
    /// when the object goes away).
    pub(super) fn maybe_taken(&mut self, token: Token, e: LockError, kind: Kind) -> LockError {
        if self.claim.token.is_none() && !matches!(e, LockError::Connection { sent: false, .. } | LockError::Passing { sent: false, .. }) {
            // Not known to be held: it promises nothing (a bound already past).
            self.hold_token(token, None, kind, Some(Boot::now()));
            // Not known to be held: a fencing token, if asked for, is taken then, checked.
            self.fence = None;
            self.ever_held = kind == Kind::Write;
        }
        match e {
            LockError::Connection { addr, cause, sent: true } => LockError::Connection {
                addr,
                cause: format!("{cause}; the lock may have been taken: releaseLock() clears it, or it expires after lockOut"),
                sent: true,
            },
            other => other,
        }
    }

    /// One run of the acquire script. `entry` non-empty queues the caller when busy;
    /// `again` says it may be queued already (or an earlier try may have landed).
    /// `fence`: issue a fencing token; the same for every try of one acquisition.
    /// `mode`: a writer, a reader, or a reader upgrading its share.
    pub(super) fn attempt(&self, token: &[u8], entry: &[u8], again: bool, deadline: Option<Instant>, fence: bool, mode: Mode) -> Result<Try> {
        self.run(Retry::ToSettle, |conn, settling| {
            // A retry after a lost reply must find what the first run did.
            self.run_acquire(conn, token, entry, again || settling, deadline, fence, mode)
        })
    }

    pub(super) fn run_acquire(
        &self,
        conn: &mut crate::net::wire::Connection,
        token: &[u8],
        entry: &[u8],
        again: bool,
        deadline: Option<Instant>,
        fence: bool,
        mode: Mode,
    ) -> redis::RedisResult<Try> {
        let queue_ms = deadline
            .map(|d| d.saturating_duration_since(Instant::now()) + QUEUE_SLACK)
            .unwrap_or(QUEUE_SLACK)
            .as_millis()
            .to_string();
        let flag = |on: bool| -> &[u8] { if on { b"1" } else { b"0" } };
        let (ttl, queue_ms) = (self.terms.ttl_arg.as_bytes(), queue_ms.as_bytes());
        let reply = match mode {
            Mode::Read => READ_ACQUIRE.run(conn, &self.keys.all(), &[token, ttl, entry, queue_ms, flag(again), PATIENCE_MS.as_bytes(), &self.record])?,
            _ => ACQUIRE.run(
                conn,
                &self.keys.all(),
                &[
                    token,
                    ttl,
                    entry,
                    queue_ms,
                    flag(self.terms.fair),
                    flag(again),
                    flag(self.caller_token),
                    flag(fence),
                    flag(mode == Mode::Upgrade),
                    &self.record,
                ],
            )?,
        };
        match waiting::reply_parts(&reply) {
            Some((1, number, _, _)) => Ok(Try::Acquired(fence.then_some(number))),
            Some((4, _, _, _)) => Ok(Try::Unsure),
            Some((_, pttl, queued, clock)) => Ok(Try::busy(pttl, queued, clock)),
            None => Err(unexpected("acquire", &reply)),
        }
    }
}

/// One wait of a `Lock`, as `waiting` sees it.
struct LockWait<'a> {
    lock: &'a Lock,
    token: &'a [u8],
    fence: bool,
    mode: Mode,
}

impl Waiter for LockWait<'_> {
    fn route(&self) -> &Route {
        &self.lock.route
    }

    fn token(&self) -> &[u8] {
        self.token
    }

    fn entry(&self, channel: &str) -> Vec<u8> {
        waiting::queue_entry(&self.lock.terms.ttl_arg, self.mode.entry_flag(self.fence) as char, channel, self.token)
    }

    fn attempt(&self, entry: &[u8], again: bool, deadline: Instant) -> Result<Try> {
        self.lock.attempt(self.token, entry, again, Some(deadline), self.fence, self.mode)
    }

    /// `CANCEL`: a write lock handed over carries its fencing token (the counter's
    /// value, when one was asked for); a read share none. For an upgrade, finding its
    /// own read share is no grant.
    fn cancel(&self, entry: &[u8]) -> Result<Option<Option<i64>>> {
        let k = &self.lock.keys;
        let got: Vec<i64> = self.lock.run(Retry::IfStale, |conn, _| {
            let chosen: &[u8] = if self.lock.caller_token { b"1" } else { b"0" };
            CANCEL.invoke(conn, &[&k.lock, &k.queue, &k.fence, &k.readers, &k.owner], &[self.token, entry, self.lock.terms.ttl_arg.as_bytes(), chosen])
        })?;
        Ok(match got[..] {
            [1, number] if self.mode != Mode::Read => Some(self.fence.then_some(number)),
            [2, _] if self.mode == Mode::Read => Some(None),
            _ => None,
        })
    }

    fn backoff(&self) -> Backoff {
        Backoff::new(self.lock.terms.retry_delay, self.lock.terms.retry_delay_max)
    }

    fn lease(&self) -> Option<Duration> {
        self.lock.terms.lease
    }

    fn abandon(&self) {
        self.lock.abandon(self.token, self.mode);
    }

    /// The first try again: the cheapest, and the one a quorum runs on every node.
    fn poll(&self, _deadline: Instant) -> Result<Try> {
        self.lock.first_try(self.token, self.fence)
    }
}
