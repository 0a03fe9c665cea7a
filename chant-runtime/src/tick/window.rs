//! Sync windows at an instant: whether a ConvergeOp's declared windows
//! ([`chant_lexicon::model::window`]) hold its tick, and until when.
//!
//! A window is open from each fire time `t` of its cron (in its zone) until `t + duration`. At an
//! instant, an open `deny` window holds the tick until it closes; otherwise, when the op declares
//! `allow` windows and none is open, the tick is held until the next one opens. A held tick
//! observes and records as any tick does; its planner turns every dispatch of a mutating target
//! into `skipped-window` ([`mod@super::plan`]), and its record carries the hold ([`Held`]), which the
//! tick's line, `operator status`, `operator log` and the dashboard show. A window that cannot be
//! evaluated (a zone this machine does not know) holds the tick: the cautious reading. Pure: the
//! instant is given.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::schedule::Schedule;
use chant_lexicon::model::window::{SyncWindow, WindowKind};

/// The most fire times one window is walked through to find the last one before an instant (a
/// window open for a week on a cron that fires every minute is 10,080).
const MAX_FIRES: usize = 200_000;

/// Why a tick was held by its sync windows, as its record keeps it (`held`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Held {
    /// The window, in words: `deny "0 9 * * 1-5" for 8h`, or `outside allow "0 22 * * *" for 6h`.
    pub window: String,
    /// When the hold ends (RFC 3339): the deny window closes, or the next allow window opens.
    /// Absent when it cannot be told.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub until: Option<String>,
}

impl Held {
    /// `window: deny "0 9 * * 1-5" for 8h until 2026-03-02T17:00:00.000Z`.
    pub fn describe(&self) -> String {
        match &self.until {
            Some(until) => format!("window: {} until {until}", self.window),
            None => format!("window: {}", self.window),
        }
    }

    /// `held(window: ... until ...)`, as the tick's line ends.
    pub fn line(&self) -> String {
        format!("held({})", self.describe())
    }
}

/// Returns the hold `windows` put on a tick at `now`, `None` when the op may act.
pub fn hold(windows: &[SyncWindow], now: Timestamp) -> Option<Held> {
    for w in windows.iter().filter(|w| w.kind == WindowKind::Deny) {
        match open_until(w, now) {
            Ok(Some(end)) => {
                return Some(Held { window: w.to_string(), until: Some(chant_store::clock::format(end)) });
            }
            Ok(None) => {}
            Err(why) => return Some(Held { window: format!("{w} ({why})"), until: None }),
        }
    }
    let allows: Vec<&SyncWindow> = windows.iter().filter(|w| w.kind == WindowKind::Allow).collect();
    if allows.is_empty() {
        return None;
    }
    let mut next: Option<(Timestamp, &SyncWindow)> = None;
    for w in &allows {
        match open_until(w, now) {
            Ok(Some(_)) => return None,
            Ok(None) => {}
            Err(why) => return Some(Held { window: format!("outside {w} ({why})"), until: None }),
        }
        let opens = Schedule::parse(&w.cron, w.tz.as_deref()).ok().and_then(|s| s.next_after(now));
        if let Some(t) = opens
            && next.is_none_or(|(n, _)| t < n)
        {
            next = Some((t, w));
        }
    }
    let (window, until) = match next {
        Some((t, w)) => (format!("outside {w}"), Some(chant_store::clock::format(t))),
        None => {
            let all: Vec<String> = allows.iter().map(|w| w.to_string()).collect();
            (format!("outside {}", all.join(", ")), None)
        }
    };
    Some(Held { window, until })
}

/// When `w`, open at `now`, closes (`None`: it is closed at `now`). A fire time `t` opens it for
/// `[t, t + duration)`; of several open spans the latest closing one counts.
fn open_until(w: &SyncWindow, now: Timestamp) -> Result<Option<Timestamp>, String> {
    let schedule = Schedule::parse(&w.cron, w.tz.as_deref()).map_err(|e| e.to_string())?;
    let duration = chant_lexicon::model::window::check_duration(&w.duration).map_err(|e| e.to_string())?;
    let duration = SignedDuration::try_from(duration).map_err(|e| e.to_string())?;
    let Some(from) = now.checked_sub(duration).ok() else { return Ok(None) };
    // The first fire time strictly after `now - duration` is the earliest that still holds the
    // window open at `now`; walk on to the last one at or before `now`.
    let mut last = None;
    let mut at = from;
    for _ in 0..MAX_FIRES {
        match schedule.next_after(at) {
            Some(t) if t <= now => {
                last = Some(t);
                at = t;
            }
            _ => break,
        }
    }
    Ok(last.and_then(|t| t.checked_add(duration).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        chant_store::clock::parse(s).unwrap()
    }

    fn window(kind: WindowKind, cron: &str, duration: &str) -> SyncWindow {
        SyncWindow { kind, cron: cron.into(), duration: duration.into(), tz: None }
    }

    #[test]
    fn a_deny_window_holds_from_its_fire_time_for_its_duration() {
        // 2026-03-02 is a Monday.
        let deny = [window(WindowKind::Deny, "0 9 * * 1-5", "8h")];
        assert_eq!(hold(&deny, at("2026-03-02T08:59:59.000Z")), None);
        let held = hold(&deny, at("2026-03-02T09:00:00.000Z")).unwrap();
        assert_eq!(held.line(), r#"held(window: deny "0 9 * * 1-5" for 8h until 2026-03-02T17:00:00.000Z)"#);
        assert!(hold(&deny, at("2026-03-02T16:59:59.000Z")).is_some());
        assert_eq!(hold(&deny, at("2026-03-02T17:00:00.000Z")), None, "closed at its end");
        assert_eq!(hold(&deny, at("2026-03-01T12:00:00.000Z")), None, "a Sunday");
    }

    #[test]
    fn allow_windows_hold_outside_themselves_and_a_deny_window_wins() {
        let allow = window(WindowKind::Allow, "0 22 * * *", "6h");
        let held = hold(std::slice::from_ref(&allow), at("2026-03-02T12:00:00.000Z")).unwrap();
        assert_eq!(held.describe(), r#"window: outside allow "0 22 * * *" for 6h until 2026-03-02T22:00:00.000Z"#);
        assert_eq!(hold(std::slice::from_ref(&allow), at("2026-03-03T03:00:00.000Z")), None, "open across midnight");
        let both = [allow, window(WindowKind::Deny, "0 2 * * *", "1h")];
        let held = hold(&both, at("2026-03-03T02:30:00.000Z")).unwrap();
        assert!(held.window.starts_with("deny"), "{held:?}");
        assert_eq!(hold(&both, at("2026-03-03T03:30:00.000Z")), None);
    }

    #[test]
    fn overlapping_fires_keep_a_window_open_until_the_last_closes_and_a_bad_zone_holds() {
        let every = [window(WindowKind::Deny, "*/10 * * * *", "15m")];
        let held = hold(&every, at("2026-03-02T10:12:00.000Z")).unwrap();
        assert_eq!(held.until.as_deref(), Some("2026-03-02T10:25:00.000Z"));
        let zoned = [SyncWindow { tz: Some("Nowhere/Atlantis".into()), ..every[0].clone() }];
        let held = hold(&zoned, at("2026-03-02T10:12:00.000Z")).unwrap();
        assert!(held.window.contains("unknown time zone"), "{held:?}");
        assert_eq!(held.until, None);
        assert_eq!(hold(&[], at("2026-03-02T10:12:00.000Z")), None);
    }
}
