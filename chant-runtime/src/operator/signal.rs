//! Change signals: a second wake source for the daemon, never a second source of truth.
//!
//! A lexicon may offer a change stream ([`chant_lexicon::observe::Lexicon::subscribe_changes`]); the
//! daemon subscribes for every env it ticks. A signal carries no data: it makes the next
//! ordinary round run earlier and the signalling lexicon's ops due in it (a scheduled op
//! whatever its cron; ops whose lexicons did not signal keep their schedules), and that round
//! re-observes everything. A signal wakes the daemon as soon as the substrate has been quiet for
//! its stream's settle ([`Subscription::settle`]; [`SETTLE`], 50 ms, unless the lexicon says
//! otherwise: a burst of writes, such as an editor's save or a loop of edits, is one wake that
//! observes all of it, not a round that sees half; a supervisor's stream, whose every line is a
//! whole change, settles in 10 ms), whatever its interval, unless the floor holds it: then it
//! waits for the floor ([`DEFAULT_FLOOR`], 5 s, after the start of the last round that answered a
//! *fresh* signal).
//!
//! Fresh and echo: a signal that arrives while a round that answered a fresh signal is
//! dispatching (a restart it ran makes the supervisor say "started") may be that round's own
//! echo; it still waits for the floor after that round, and wakes a round that re-observes
//! (the echo round), but that round does not move the floor. Every other signal is fresh: it
//! arrived between rounds, or during a round that dispatched nothing, or during an echo round.
//! So a service killed 8 s after its previous heal is healed at once, not held until 5 s after
//! the echo round that confirmed the previous heal (docs/operator.md, "Decisions": the floor
//! runs from the last round that answered a fresh signal, not from the last round). A storm
//! stays bounded: at most one round a fresh signal woke per floor, each followed by at most one
//! echo round (which is itself held to that floor), so at most two signal-woken rounds per floor;
//! a service that dies again and again is the flap damping's and the restart limits' to stop,
//! per resource. A substrate that never goes quiet wakes a round a floor after its first signal,
//! and settles into ticking on the floor; rounds the timer starts with no signal pending do not
//! move the floor, so a short timer never delays a signal past the round it would have woken.
//! The timer always stays; a lost or refused subscription is printed once and retried at the
//! next round.
//!
//! [`Gate`] (when to wake) and [`Woken`] (which ops a signal makes due) are the pure parts,
//! tested without sleeping; [`Subscriptions`] holds the live subscriptions and says which lines
//! to print.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use chant_lexicon::observe::{ChangeSink, Lexicon, SubscribeError, Subscription};

/// The earliest a signal wakes a round after the last round that answered a fresh signal
/// started (see the module documentation).
pub const DEFAULT_FLOOR: Duration = Duration::from_secs(5);

/// How long a pending signal waits by default for the next one before it wakes a round; a signal
/// coming sooner restarts the wait, up to a floor after the first pending signal. A stream may
/// settle sooner or later ([`Subscription::with_settle`]).
pub const SETTLE: Duration = Subscription::DEFAULT_SETTLE;

/// Why the daemon woke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The interval passed.
    Timer,
    /// A change signal, past the floor.
    Signal,
}

/// When to wake: the timer, or a pending signal at once, but no earlier than the floor after
/// the start of the last round that answered a fresh signal.
#[derive(Debug, Clone)]
pub struct Gate {
    floor: Duration,
    round_start: Instant,
    /// When the last round that answered a fresh signal started: the floor runs from it.
    consumed: Option<Instant>,
    pending: bool,
    /// Whether a pending signal is fresh (not the possible echo of a round's own dispatches).
    fresh: bool,
    /// Whether a round is running (its signals may be its dispatches' echo).
    running: bool,
    /// Whether the running (or last) round answered a fresh signal.
    answered: bool,
    signals: u64,
    first: Option<Instant>,
    /// When the pending signals have settled: the latest of each one's arrival plus its
    /// stream's settle.
    settled: Option<Instant>,
}

impl Gate {
    /// Creates a gate with `floor`, as if a round started at `now` with no signal pending.
    pub fn new(floor: Duration, now: Instant) -> Gate {
        Gate {
            floor,
            round_start: now,
            consumed: None,
            pending: false,
            fresh: false,
            running: false,
            answered: false,
            signals: 0,
            first: None,
            settled: None,
        }
    }

    /// Records that a round started at `now`: pending signals are consumed by it, and the floor
    /// runs from it when one of them was fresh. Returns true when every signal it consumed was
    /// an echo (an echo round: it does not move the floor).
    pub fn round_started(&mut self, now: Instant) -> bool {
        self.round_start = now;
        let echo = self.pending && !self.fresh;
        self.answered = self.pending && self.fresh;
        if self.answered {
            self.consumed = Some(now);
        }
        self.running = true;
        self.pending = false;
        self.fresh = false;
        self.signals = 0;
        self.first = None;
        self.settled = None;
        echo
    }

    /// Records that the running round ended, and whether it dispatched anything: the signals
    /// that arrived meanwhile are an echo only when it did and it answered a fresh signal;
    /// otherwise they are fresh.
    pub fn round_ended(&mut self, dispatched: bool) {
        self.running = false;
        if self.pending && !(dispatched && self.answered) {
            self.fresh = true;
        }
    }

    /// Records a signal that arrived at `now` on a stream that settles in `settle`.
    pub fn signal(&mut self, now: Instant, settle: Duration) {
        self.pending = true;
        if !self.running {
            self.fresh = true;
        }
        self.signals += 1;
        self.first.get_or_insert(now);
        self.settled = self.settled.max(Some(now + settle));
    }

    /// Returns how many signals arrived since the last round started.
    pub fn signals(&self) -> u64 {
        self.signals
    }

    /// Returns when the last round started.
    pub fn round_start(&self) -> Instant {
        self.round_start
    }

    /// Returns when to wake after a round that ended at `round_end`, and why: the timer at
    /// `round_end + interval`, or, with a signal pending, once the signals have settled (each
    /// its stream's settle after it, at most a floor after the first) and no earlier than the floor
    /// after the last round that answered a fresh signal started, if that is earlier.
    pub fn next_wake(&self, round_end: Instant, interval: Duration) -> (Instant, Wake) {
        let timer = round_end + interval;
        if self.pending {
            let settled = match (self.first, self.settled) {
                (Some(first), Some(settled)) => settled.min(first + self.floor),
                _ => round_end,
            };
            let at = self.consumed.map_or(round_end, |consumed| (consumed + self.floor).max(round_end)).max(settled);
            if at < timer {
                return (at, Wake::Signal);
            }
        }
        (timer, Wake::Timer)
    }
}

/// Which ops change signals made due. Each subscription's label serves the ops whose lexicon it
/// is (`files(site)` serves every ConvergeOp of env `site`); a signal marks its label pending,
/// and the next round takes the pending labels' ops as due, whatever their schedules, unless it
/// starts sooner than the floor after the last round that took any fresh ones (then they stay
/// pending for a later round): however fast the timer or the substrate, fresh signals tick a
/// scheduled op at most once per floor, and the echo round [`Gate`] allows after each at most
/// once more.
#[derive(Debug, Default, Clone)]
pub struct Woken {
    serves: BTreeMap<String, BTreeSet<String>>,
    pending: BTreeSet<String>,
    last_taken: Option<Instant>,
}

impl Woken {
    /// Records that `label`'s stream serves `op`.
    pub fn serve(&mut self, label: &str, op: &str) {
        self.serves.entry(label.to_owned()).or_default().insert(op.to_owned());
    }

    /// Records a signal from `label`.
    pub fn signal(&mut self, label: &str) {
        self.pending.insert(label.to_owned());
    }

    /// Returns the ops due by signal for a round starting at `now`, and clears them; nothing
    /// (they stay pending) when the last round that took fresh ones started less than `floor`
    /// ago. An echo round (`echo`, from [`Gate::round_started`]) takes them without moving that
    /// floor (the gate held it to the floor already).
    pub fn take(&mut self, now: Instant, floor: Duration, echo: bool) -> BTreeSet<String> {
        if self.pending.is_empty()
            || (!echo && self.last_taken.is_some_and(|t| now.saturating_duration_since(t) < floor))
        {
            return BTreeSet::new();
        }
        if !echo {
            self.last_taken = Some(now);
        }
        let labels = std::mem::take(&mut self.pending);
        labels.iter().filter_map(|l| self.serves.get(l)).flatten().cloned().collect()
    }
}

/// The state of one lexicon's subscription.
enum State {
    Live(#[allow(dead_code)] Subscription),
    Down,
}

/// The daemon's subscriptions, by label (`files(staging)`); dropping it closes them all.
#[derive(Default)]
pub struct Subscriptions {
    states: BTreeMap<String, State>,
}

impl Subscriptions {
    /// Creates an empty set.
    pub fn new() -> Self {
        Subscriptions::default()
    }

    /// Returns how long a signal of `label`'s stream waits for the next ([`SETTLE`] when it has
    /// no live subscription).
    pub fn settle(&self, label: &str) -> Duration {
        match self.states.get(label) {
            Some(State::Live(subscription)) => subscription.settle(),
            _ => SETTLE,
        }
    }

    /// Makes sure `lexicon` (labelled `label`) is subscribed, returning the line to print, if
    /// any: subscribed, or unavailable (printed only when it was not already down). A lexicon
    /// that offers no change stream is left alone, silently.
    pub fn ensure(&mut self, label: &str, lexicon: &dyn Lexicon, sink: ChangeSink) -> Option<String> {
        self.ensure_with(label, || lexicon.subscribe_changes(sink))
    }

    /// [`Subscriptions::ensure`] for a subscription opened by `subscribe`, which runs only when
    /// `label` is not live; [`SubscribeError::NotImplemented`] means no stream is offered at
    /// all, any other error is printed once as the degradation to the timer.
    pub fn ensure_with(
        &mut self,
        label: &str,
        subscribe: impl FnOnce() -> Result<Subscription, SubscribeError>,
    ) -> Option<String> {
        if matches!(self.states.get(label), Some(State::Live(_))) {
            return None;
        }
        let was_down = matches!(self.states.get(label), Some(State::Down));
        match subscribe() {
            Err(SubscribeError::NotImplemented { .. }) => None,
            Ok(subscription) => {
                self.states.insert(label.to_owned(), State::Live(subscription));
                Some(format!("operator: {label} change signal subscribed (the timer still runs)"))
            }
            Err(e) => {
                self.states.insert(label.to_owned(), State::Down);
                let e = super::chain(&e);
                (!was_down).then(|| format!("operator: {label} change signal unavailable, polling on the timer ({e})"))
            }
        }
    }

    /// Records that `label`'s stream was lost, closing it; returns the line to print once.
    pub fn lost(&mut self, label: &str, why: &str) -> Option<String> {
        match self.states.insert(label.to_owned(), State::Down) {
            Some(State::Live(_)) => Some(format!(
                "operator: {label} change signal lost, polling on the timer until the next round re-subscribes ({why})"
            )),
            _ => None,
        }
    }

    /// Closes every subscription.
    pub fn close(&mut self) {
        self.states.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_wakes_without_signals() {
        let t0 = Instant::now();
        let gate = Gate::new(DEFAULT_FLOOR, t0);
        let end = t0 + Duration::from_secs(1);
        assert_eq!(gate.next_wake(end, Duration::from_secs(300)), (end + Duration::from_secs(300), Wake::Timer));
    }

    #[test]
    fn a_signal_wakes_at_once_then_no_earlier_than_the_floor_after_the_round_that_consumed_it() {
        let t0 = Instant::now();
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        gate.signal(t0, SETTLE);
        let end = t0 + Duration::from_secs(1);
        // No round consumed a signal yet: at once, under a long timer or a short one.
        assert_eq!(gate.next_wake(end, Duration::from_secs(300)), (end, Wake::Signal));
        assert_eq!(gate.next_wake(end, Duration::from_secs(1)), (end, Wake::Signal));
        gate.round_started(end);
        gate.signal(end, SETTLE);
        let end2 = end + Duration::from_millis(300);
        assert_eq!(gate.next_wake(end2, Duration::from_secs(300)), (end + DEFAULT_FLOOR, Wake::Signal));
        // A round that ran past the floor: the signal wakes at once (a deadline already passed).
        let late = end + Duration::from_secs(9);
        assert_eq!(gate.next_wake(late, Duration::from_secs(300)), (late, Wake::Signal));
    }

    #[test]
    fn timer_rounds_without_signals_do_not_move_the_floor() {
        let t0 = Instant::now();
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        for n in 1..=3 {
            gate.round_started(t0 + Duration::from_secs(n));
        }
        gate.signal(t0 + Duration::from_secs(3), SETTLE);
        let end = t0 + Duration::from_millis(3100);
        assert_eq!(gate.next_wake(end, Duration::from_secs(1)), (end, Wake::Signal));
    }

    #[test]
    fn a_storm_costs_one_early_round_per_floor() {
        let t0 = Instant::now();
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        for _ in 0..100 {
            gate.signal(t0, SETTLE);
        }
        assert_eq!(gate.signals(), 100);
        let end = t0 + Duration::from_millis(200);
        let (at, why) = gate.next_wake(end, Duration::from_secs(300));
        assert_eq!((at, why), (end, Wake::Signal));
        // The early round consumes every pending signal: the next wake is the timer again...
        gate.round_started(at);
        let end = at + Duration::from_millis(200);
        assert_eq!(gate.next_wake(end, Duration::from_secs(300)), (end + Duration::from_secs(300), Wake::Timer));
        // ...and the storm going on waits for the floor after that round's start.
        for _ in 0..100 {
            gate.signal(end, SETTLE);
        }
        assert_eq!(gate.next_wake(end, Duration::from_secs(300)), (at + DEFAULT_FLOOR, Wake::Signal));
    }

    #[test]
    fn a_burst_wakes_once_it_settles_and_one_that_never_does_a_floor_after_it_began() {
        let t0 = Instant::now();
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        let ms = Duration::from_millis;
        for n in 0..10 {
            gate.signal(t0 + ms(10 * n), SETTLE);
        }
        // Still bursting when the round ended: the wake waits for the last signal to settle.
        let end = t0 + ms(60);
        assert_eq!(gate.next_wake(end, Duration::from_secs(300)), (t0 + ms(90) + SETTLE, Wake::Signal));
        // A substrate that never goes quiet: a floor after its first signal.
        for n in 10..1000 {
            gate.signal(t0 + ms(10 * n), SETTLE);
        }
        assert_eq!(gate.next_wake(end, Duration::from_secs(300)), (t0 + DEFAULT_FLOOR, Wake::Signal));
    }

    #[test]
    fn each_signal_settles_in_its_own_streams_time() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        gate.signal(t0, ms(10));
        assert_eq!(gate.next_wake(t0, Duration::from_secs(300)), (t0 + ms(10), Wake::Signal));
        // A file written meanwhile: the wake waits for the burst its stream may still send.
        gate.signal(t0 + ms(5), SETTLE);
        assert_eq!(gate.next_wake(t0, Duration::from_secs(300)), (t0 + ms(5) + SETTLE, Wake::Signal));
        // A supervisor's line after it does not bring the wake forward.
        gate.signal(t0 + ms(6), ms(10));
        assert_eq!(gate.next_wake(t0, Duration::from_secs(300)), (t0 + ms(5) + SETTLE, Wake::Signal));
    }

    #[test]
    fn signals_make_the_ops_they_serve_due_past_the_floor_only() {
        let mut woken = Woken::default();
        woken.serve("files(site)", "site-converge");
        woken.serve("files(site)", "site-nightly");
        woken.serve("files(night)", "night-converge");
        let t0 = Instant::now();
        assert!(woken.take(t0, DEFAULT_FLOOR, false).is_empty(), "no signal, nothing due");
        woken.signal("files(site)");
        woken.signal("files(unknown)");
        let due = woken.take(t0 + Duration::from_secs(1), DEFAULT_FLOOR, false);
        assert_eq!(due.into_iter().collect::<Vec<_>>(), vec!["site-converge", "site-nightly"]);
        // Taken once: the next round has nothing by signal.
        assert!(woken.take(t0 + Duration::from_secs(2), DEFAULT_FLOOR, false).is_empty());
        // A signal right after: timer rounds sooner than the floor leave it pending...
        woken.signal("files(night)");
        assert!(woken.take(t0 + Duration::from_secs(3), DEFAULT_FLOOR, false).is_empty());
        assert!(woken.take(t0 + Duration::from_millis(5999), DEFAULT_FLOOR, false).is_empty());
        // ...and the first round past the floor takes it.
        let due = woken.take(t0 + Duration::from_secs(6), DEFAULT_FLOOR, false);
        assert_eq!(due.into_iter().collect::<Vec<_>>(), vec!["night-converge"]);
    }

    #[test]
    fn the_timer_wins_when_it_is_sooner_than_the_floor() {
        let t0 = Instant::now();
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        gate.signal(t0, SETTLE);
        gate.round_started(t0);
        gate.signal(t0, SETTLE);
        let end = t0 + Duration::from_millis(100);
        assert_eq!(gate.next_wake(end, Duration::from_secs(1)), (end + Duration::from_secs(1), Wake::Timer));
    }

    #[test]
    fn a_death_after_the_echo_round_is_not_held_to_the_floor() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        // A service dies: the fresh signal wakes a round at once, which restarts it.
        gate.signal(t0, ms(10));
        assert_eq!(gate.next_wake(t0, s(300)), (t0 + ms(10), Wake::Signal));
        let heal = t0 + ms(10);
        assert!(!gate.round_started(heal), "a round answering a fresh signal is no echo");
        // The restart's own lines arrive while the round runs: held to the floor, as before...
        gate.signal(heal + ms(100), ms(10));
        gate.round_ended(true);
        let end = heal + ms(300);
        assert_eq!(gate.next_wake(end, s(300)), (heal + DEFAULT_FLOOR, Wake::Signal));
        // ...and the round they wake is an echo round, which does not move the floor.
        let echo = heal + DEFAULT_FLOOR;
        assert!(gate.round_started(echo));
        gate.round_ended(false);
        assert_eq!(gate.next_wake(echo + ms(200), s(300)), (echo + ms(200) + s(300), Wake::Timer));
        // The service dies again 8 s after the first death: woken at once (it settles), not 5 s
        // after the echo round.
        let again = t0 + s(8);
        gate.signal(again, ms(10));
        assert_eq!(gate.next_wake(echo + ms(200), s(300)), (again + ms(10), Wake::Signal));
        assert!(!gate.round_started(again + ms(10)));
    }

    #[test]
    fn signals_during_a_round_that_dispatched_nothing_or_during_an_echo_round_are_fresh() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        gate.signal(t0, SETTLE);
        gate.round_started(t0);
        gate.signal(t0 + s(1), SETTLE);
        gate.round_ended(false);
        // Nothing was dispatched: a change nobody here made, and the round it wakes moves the floor.
        assert_eq!(gate.next_wake(t0 + s(2), s(300)), (t0 + DEFAULT_FLOOR, Wake::Signal));
        assert!(!gate.round_started(t0 + DEFAULT_FLOOR));
        gate.signal(t0 + s(6), SETTLE);
        gate.round_ended(true);
        assert_eq!(gate.next_wake(t0 + s(7), s(300)), (t0 + s(10), Wake::Signal), "the floor moved to 5 s");
        // An echo round's own signals are fresh even when it dispatched: echoes never chain.
        assert!(gate.round_started(t0 + s(10)));
        gate.signal(t0 + s(10), SETTLE);
        gate.round_ended(true);
        assert!(!gate.round_started(t0 + s(11)), "the round after an echo round answers a fresh signal");
    }

    /// Runs the gate through `span` of a storm: rounds of `round` length that dispatch when
    /// `dispatch` says, signals every `every` (none while a round runs when `between` is false),
    /// and counts the rounds signals woke.
    fn storm(span: Duration, round: Duration, every: Duration, between: bool, dispatch: bool) -> u32 {
        let t0 = Instant::now();
        let mut gate = Gate::new(DEFAULT_FLOOR, t0);
        let mut woken = 0;
        let mut now = t0;
        let mut next_signal = t0;
        let interval = Duration::from_secs(300);
        while now < t0 + span {
            // Between rounds: signals until the gate wakes.
            let wake = loop {
                let (at, why) = gate.next_wake(now, interval);
                if at <= next_signal || !between {
                    break (at, why);
                }
                gate.signal(next_signal, Duration::from_millis(10));
                next_signal += every;
            };
            now = wake.0.max(now);
            woken += u32::from(wake.1 == Wake::Signal);
            gate.round_started(now);
            // During the round: every signal due in it.
            let end = now + round;
            while next_signal < end {
                gate.signal(next_signal.max(now), Duration::from_millis(10));
                next_signal += every;
            }
            gate.round_ended(dispatch);
            now = end;
        }
        woken
    }

    #[test]
    fn a_storm_wakes_at_most_two_rounds_per_floor() {
        let span = Duration::from_secs(600);
        let most = 2 * (span.as_secs() / DEFAULT_FLOOR.as_secs()) as u32 + 2;
        let ms = Duration::from_millis;
        for (round, every, between, dispatch) in [
            // A substrate that never goes quiet, every round restarting something.
            (ms(300), ms(10), true, true),
            (ms(300), ms(10), true, false),
            // Signals only while rounds run (every round's dispatch answered by its own lines).
            (ms(300), ms(10), false, true),
            // Rounds longer than the floor.
            (ms(7000), ms(100), true, true),
        ] {
            let rounds = storm(span, round, every, between, dispatch);
            assert!(
                rounds <= most,
                "{rounds} signal-woken rounds in {span:?} (round {round:?}, a signal every {every:?}, between rounds \
                 {between}, dispatching {dispatch}); at most {most}"
            );
            assert!(rounds >= 10, "the storm woke rounds at all: {rounds}");
        }
    }

    #[test]
    fn an_echo_round_takes_the_ops_without_moving_the_floor() {
        let mut woken = Woken::default();
        woken.serve("sprite-env(box)", "box-heal");
        let t0 = Instant::now();
        woken.signal("sprite-env(box)");
        assert_eq!(woken.take(t0, DEFAULT_FLOOR, false).len(), 1);
        woken.signal("sprite-env(box)");
        assert_eq!(woken.take(t0 + DEFAULT_FLOOR, DEFAULT_FLOOR, true).len(), 1, "the echo round takes it");
        woken.signal("sprite-env(box)");
        // A fresh signal 8 s after the first: the floor runs from the first round, not the echo.
        assert_eq!(woken.take(t0 + Duration::from_secs(8), DEFAULT_FLOOR, false).len(), 1);
        woken.signal("sprite-env(box)");
        assert!(woken.take(t0 + Duration::from_secs(9), DEFAULT_FLOOR, false).is_empty());
    }
}
