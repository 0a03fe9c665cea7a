//! Schedules: when a ConvergeOp is due (DESIGN.md section 9).
//!
//! A schedule is a 5-field cron expression, evaluated in UTC unless the op names a time zone.
//! It is parsed by [`chant_lexicon::model::cron::parse_cron`], the compile-time check: croner's parser in
//! strict 5-field mode (no seconds, no year) plus the rules croner leaves out (ranges of steps, at
//! least one fire time in 8 years); croner then computes the fire times.
//!
//! Due-ness is decided from the ledger, never from memory: the operator reads the op's newest
//! recorded tick under the op's lease and asks [`decide`]:
//!
//! - a scheduled op is due when a fire time lies in (`startedAt` of that tick, now]; with no
//!   recorded tick it is due at once; several missed fires collapse into one tick; a fire that
//!   arrives while a tick runs is dropped (overlap `skip`), since the lease keeps the next
//!   round from ticking until the running tick is recorded;
//! - an unscheduled op is due every round, unless a tick was recorded since this round started
//!   (another process ticked it meanwhile);
//! - a change signal from one of the op's lexicons makes a scheduled op due for the round it
//!   woke, whatever its cron ([`decide_woken`]); the timer's rounds keep the cron.
//!
//! Every decision carries a reason with a `Display` impl, for the operator's lines and logs.

use std::fmt;

use croner::Cron;
use jiff::Timestamp;
use jiff::tz::TimeZone;

use chant_lexicon::model;

/// What [`Schedule::new`] and the fire-time queries return when a schedule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The expression is not a valid 5-field cron expression.
    #[error("invalid schedule: {source}")]
    Invalid {
        /// What is wrong, naming the expression.
        #[from]
        source: model::cron::Error,
    },
    /// The time zone is unknown on this machine.
    #[error("schedule \"{cron}\": unknown time zone {tz:?}: {reason}")]
    TimeZone {
        /// The expression.
        cron: String,
        /// The zone as written.
        tz: String,
        /// Why it could not be loaded.
        reason: String,
    },
}

/// A validated schedule that computes fire times.
#[derive(Debug, Clone)]
pub struct Schedule {
    expr: String,
    cron: Cron,
    tz: TimeZone,
    tz_name: Option<String>,
}

pub use chant_lexicon::model::cron::strict_parser;

impl Schedule {
    /// Validates `spec` and loads its time zone.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] for an expression either check refuses; [`Error::TimeZone`] for an
    /// unknown zone.
    pub fn new(spec: &model::Schedule) -> Result<Self, Error> {
        Self::parse(&spec.cron, spec.tz.as_deref())
    }

    /// Validates a cron expression and an optional IANA time zone (UTC when `None`).
    ///
    /// # Errors
    ///
    /// As [`Schedule::new`].
    pub fn parse(expr: &str, tz: Option<&str>) -> Result<Self, Error> {
        let cron = model::cron::parse_cron(expr)?.cron;
        let zone = match tz {
            None => TimeZone::UTC,
            Some(name) => TimeZone::get(name).map_err(|e| Error::TimeZone {
                cron: expr.to_owned(),
                tz: name.to_owned(),
                reason: e.to_string(),
            })?,
        };
        Ok(Schedule { expr: expr.to_owned(), cron, tz: zone, tz_name: tz.map(str::to_owned) })
    }

    /// Returns the expression as written.
    pub fn expr(&self) -> &str {
        &self.expr
    }

    /// Returns the time zone as written, `None` for UTC.
    pub fn tz(&self) -> Option<&str> {
        self.tz_name.as_deref()
    }

    /// Returns the first fire time strictly after `t`, or `None` when there is none in the
    /// years croner searches.
    pub fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        let zoned = t.to_zoned(self.tz.clone());
        self.cron.find_next_occurrence(&zoned, false).ok().map(|z| z.timestamp())
    }

    /// Returns the first fire time in (`after`, `upto`], if there is one.
    pub fn fire_in(&self, after: Timestamp, upto: Timestamp) -> Option<Timestamp> {
        if upto <= after {
            return None;
        }
        self.next_after(after).filter(|fire| *fire <= upto)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tz_name {
            None => f.write_str(&self.expr),
            Some(tz) => write!(f, "{} {tz}", self.expr),
        }
    }
}

/// The op's newest recorded tick, as far as due-ness cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastTick {
    /// When it started.
    pub started_at: Timestamp,
    /// When it was recorded (its end).
    pub recorded_at: Timestamp,
}

impl LastTick {
    /// Reads a tick record's `startedAt` and `timestamp`: `None` when `startedAt` is not an
    /// instant (the original's records have none); an unreadable `timestamp` counts as the start.
    pub fn from_stamps(started_at: &str, timestamp: &str) -> Option<LastTick> {
        let started_at = chant_store::clock::parse(started_at)?;
        Some(LastTick { started_at, recorded_at: chant_store::clock::parse(timestamp).unwrap_or(started_at) })
    }
}

/// Whether an op ticks this round, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Tick.
    Due(DueReason),
    /// Do not tick.
    NotDue(NotDueReason),
}

/// Why an op is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DueReason {
    /// No tick of the op is recorded.
    NeverTicked,
    /// The op has no schedule: it ticks every round.
    Unscheduled,
    /// A fire time passed since the last tick started (missed fires collapse into this one).
    Fired {
        /// The first fire time after the last tick started.
        fire: Timestamp,
    },
    /// A change signal from one of the op's lexicons woke this round: a scheduled op ticks in
    /// it whatever its cron says.
    Signalled,
}

/// Why an op is not due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotDueReason {
    /// No fire time lies in (last tick's start, now].
    NoFire {
        /// The schedule as written.
        cron: String,
        /// The next fire time, when known.
        next: Option<Timestamp>,
    },
    /// An unscheduled op was ticked since this round started (by another process).
    TickedThisRound {
        /// When that tick was recorded.
        at: Timestamp,
    },
}

impl fmt::Display for DueReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DueReason::NeverTicked => f.write_str("no tick recorded yet"),
            DueReason::Unscheduled => f.write_str("unscheduled: ticks every round"),
            DueReason::Fired { fire } => write!(f, "fired at {}", chant_store::clock::format(*fire)),
            DueReason::Signalled => f.write_str("woken by a change signal from its lexicon"),
        }
    }
}

impl fmt::Display for NotDueReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotDueReason::NoFire { cron, .. } => f.write_str(cron),
            NotDueReason::TickedThisRound { at } => {
                write!(f, "ticked at {} since this round started", chant_store::clock::format(*at))
            }
        }
    }
}

/// Decides whether an op ticks in a round that one of its lexicons' change signals woke
/// (`signalled`): a scheduled op is then due whatever its cron says; an unscheduled one, and any
/// op not signalled, as [`decide`] says.
pub fn decide_woken(
    schedule: Option<&Schedule>,
    last: Option<LastTick>,
    round_start: Timestamp,
    now: Timestamp,
    signalled: bool,
) -> Decision {
    match decide(schedule, last, round_start, now) {
        Decision::NotDue(NotDueReason::NoFire { .. }) if signalled => Decision::Due(DueReason::Signalled),
        other => other,
    }
}

/// Decides whether an op with `schedule` (none: unscheduled) ticks in a round that started at
/// `round_start`, at `now`, given its newest recorded tick.
pub fn decide(schedule: Option<&Schedule>, last: Option<LastTick>, round_start: Timestamp, now: Timestamp) -> Decision {
    let Some(last) = last else { return Decision::Due(DueReason::NeverTicked) };
    match schedule {
        None if last.recorded_at >= round_start => {
            Decision::NotDue(NotDueReason::TickedThisRound { at: last.recorded_at })
        }
        None => Decision::Due(DueReason::Unscheduled),
        Some(s) => match s.fire_in(last.started_at, now) {
            Some(fire) => Decision::Due(DueReason::Fired { fire }),
            None => Decision::NotDue(NotDueReason::NoFire { cron: s.to_string(), next: s.next_after(last.started_at) }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn last(started: &str) -> Option<LastTick> {
        Some(LastTick { started_at: at(started), recorded_at: at(started) })
    }

    #[test]
    fn croner_strict_mode_agrees_with_the_compile_time_check() {
        // (expression, valid): the compile-time check and croner's strict parser must both give
        // `valid`, and a valid expression must have a next fire time.
        let agreed = [
            ("*/10 * * * *", true),
            ("0 3 * * 1-5", true),
            ("15,45 */2 1 * SUN", true),
            ("0 0 29 2 *", true),
            ("0 0 * * 7", true),
            ("@hourly", true),
            ("@daily", true),
            ("5 4 * jan-mar mon,wed", true),
            ("0-59/15 0-23 1-31 1-12 0-6", true),
            ("61 * * * *", false),
            ("* 24 * * *", false),
            ("* * 0 * *", false),
            ("* * * 13 *", false),
            ("* * * * 8", false),
            ("*/10 * * * * *", false),
            ("* * *", false),
            ("", false),
            ("x * * * *", false),
            ("5-1 * * * *", false),
        ];
        let base = at("2026-11-29T21:03:07Z");
        for (expr, valid) in agreed {
            assert_eq!(model::cron::parse_cron(expr).is_ok(), valid, "compile-time check on {expr:?}");
            assert_eq!(strict_parser().parse(expr).is_ok(), valid, "croner strict mode on {expr:?}");
            if valid {
                assert!(Schedule::parse(expr, None).unwrap().next_after(base).is_some(), "{expr}");
            }
        }
        // Where croner is more lenient, the compile-time check is the stricter gate, and a
        // schedule applies both: a step wider than its field (croner reads `*/61` as minute 0)
        // and an expression that never fires.
        for expr in ["*/61 * * * *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"] {
            assert!(strict_parser().parse(expr).is_ok(), "croner accepts {expr}");
            assert!(model::cron::parse_cron(expr).is_err(), "the compile-time check refuses {expr}");
            assert!(matches!(Schedule::parse(expr, None), Err(Error::Invalid { .. })), "{expr}");
        }
    }

    #[test]
    fn fire_times_are_utc_unless_a_zone_is_named() {
        let utc = Schedule::parse("0 3 * * *", None).unwrap();
        assert_eq!(utc.next_after(at("2026-06-01T00:00:00Z")), Some(at("2026-06-01T03:00:00Z")));
        let berlin = Schedule::parse("0 3 * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(berlin.next_after(at("2026-06-01T00:00:00Z")), Some(at("2026-06-01T01:00:00Z")));
        assert!(matches!(Schedule::parse("0 3 * * *", Some("Mars/Olympus")), Err(Error::TimeZone { .. })));
    }

    #[test]
    fn a_scheduled_op_is_due_when_a_fire_lies_after_the_last_tick_started() {
        let s = Schedule::parse("*/10 * * * *", None).unwrap();
        let round = at("2026-08-25T10:10:00Z");
        // Never ticked: due at once, whatever the time.
        assert_eq!(decide(Some(&s), None, round, at("2026-08-25T10:03:00Z")), Decision::Due(DueReason::NeverTicked));
        // The fire at 10:10 lies in (10:00, 10:10].
        assert_eq!(
            decide(Some(&s), last("2026-08-25T10:00:00Z"), round, at("2026-08-25T10:10:00Z")),
            Decision::Due(DueReason::Fired { fire: at("2026-08-25T10:10:00Z") })
        );
        // Ticked at 10:10: the same fire is not due again (the interval is open at its start).
        assert!(matches!(
            decide(Some(&s), last("2026-08-25T10:10:00Z"), round, at("2026-08-25T10:19:59Z")),
            Decision::NotDue(NotDueReason::NoFire { .. })
        ));
    }

    #[test]
    fn missed_fires_collapse_into_one_tick() {
        let s = Schedule::parse("*/10 * * * *", None).unwrap();
        // Six fires were missed; one tick is due, naming the first.
        let now = at("2026-08-25T11:05:00Z");
        let d = decide(Some(&s), last("2026-08-25T10:00:00Z"), now, now);
        assert_eq!(d, Decision::Due(DueReason::Fired { fire: at("2026-08-25T10:10:00Z") }));
        // After that tick (started at 11:05) nothing is due until 11:10.
        let d = decide(Some(&s), last("2026-08-25T11:05:00Z"), now, at("2026-08-25T11:09:00Z"));
        assert_eq!(
            d,
            Decision::NotDue(NotDueReason::NoFire {
                cron: "*/10 * * * *".into(),
                next: Some(at("2026-08-25T11:10:00Z"))
            })
        );
        assert_eq!(d.to_string_reason(), "*/10 * * * *");
    }

    #[test]
    fn unscheduled_ops_tick_once_per_round() {
        let round = at("2026-08-25T10:00:00Z");
        assert_eq!(decide(None, last("2026-08-25T09:59:00Z"), round, round), Decision::Due(DueReason::Unscheduled));
        // Another process recorded a tick since this round started: not again.
        assert_eq!(
            decide(None, last("2026-08-25T10:00:00Z"), round, round),
            Decision::NotDue(NotDueReason::TickedThisRound { at: round })
        );
    }

    #[test]
    fn a_signal_makes_a_scheduled_op_due_whatever_its_cron_and_leaves_the_rest_alone() {
        let s = Schedule::parse("0 3 * * *", None).unwrap();
        let round = at("2026-08-25T10:00:00Z");
        let ticked = last("2026-08-25T09:00:00Z");
        assert!(matches!(decide_woken(Some(&s), ticked, round, round, false), Decision::NotDue(_)));
        let woken = decide_woken(Some(&s), ticked, round, round, true);
        assert_eq!(woken, Decision::Due(DueReason::Signalled));
        assert_eq!(woken.to_string_reason(), "woken by a change signal from its lexicon");
        // An unscheduled op another process ticked this round stays not due, signal or not.
        assert!(matches!(
            decide_woken(None, last("2026-08-25T10:00:00Z"), round, round, true),
            Decision::NotDue(NotDueReason::TickedThisRound { .. })
        ));
        assert_eq!(decide_woken(Some(&s), None, round, round, true), Decision::Due(DueReason::NeverTicked));
    }

    impl Decision {
        fn to_string_reason(&self) -> String {
            match self {
                Decision::Due(r) => r.to_string(),
                Decision::NotDue(r) => r.to_string(),
            }
        }
    }
}
