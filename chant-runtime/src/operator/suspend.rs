//! `operator suspend` and `operator resume`: facts a person records to stop the operator ticking
//! one ConvergeOp, and to let it tick again.
//!
//! A [`ControlFact`] of kind `suspend` (with a reason, and optionally the instant it lapses) or
//! `resume` is appended beside the op's ticks (`<env>/<op>/control`, with `operator undamp`'s
//! facts), so every operator that shares the ledger's remote honours it: the round reads the
//! newest suspend or resume fact before its due check ([`suspension`]) and, while a suspension
//! stands, prints `skipped=1(suspended:<reason>)` instead of ticking. A tick by hand still runs
//! (it is a person's explicit act), and says the op is suspended. The fact is a recorded
//! decision with who made it and when; nothing is rewritten.

use chant_store::ledger::{self, Ledger, ShardKey};
use jiff::Timestamp;
use serde::Serialize;

pub use crate::tick::control::ControlFact;
use crate::tick::control::newest;

pub use crate::tick::control::{RESUME, SUSPEND};

/// A suspension that stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Suspension {
    /// Why.
    pub reason: String,
    /// When it lapses, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Who suspended the op.
    pub by: String,
    /// When.
    pub since: String,
}

impl Suspension {
    /// `<reason>[, until <instant>]`, for the operator's line and `operator status`.
    pub fn describe(&self) -> String {
        match &self.until {
            Some(until) => format!("{}, until {until}", self.reason),
            None => self.reason.clone(),
        }
    }
}

/// The suspension of the op whose control shard is `key` that stands at `now`: the newest
/// suspend or resume fact is a suspension whose `until` (if any) is still ahead. Pure past the
/// read.
///
/// # Errors
///
/// Ledger read errors.
pub fn suspension(ledger: &Ledger, key: &ShardKey, now: Timestamp) -> Result<Option<Suspension>, ledger::Error> {
    Ok(newest(ledger, key, &[SUSPEND, RESUME])?.and_then(|f| standing(&f, now)))
}

/// The suspension `fact` makes at `now`, if it is a suspension that has not lapsed.
pub fn standing(fact: &ControlFact, now: Timestamp) -> Option<Suspension> {
    if fact.kind != SUSPEND {
        return None;
    }
    // An `until` that does not parse is read as standing: the cautious reading (the person asked
    // for a stop; a resume ends it).
    let lapsed = fact.until.as_deref().and_then(chant_store::clock::parse).is_some_and(|until| until <= now);
    (!lapsed).then(|| Suspension {
        reason: fact.reason.clone().unwrap_or_else(|| "no reason given".to_owned()),
        until: fact.until.clone(),
        by: fact.by.clone(),
        since: fact.timestamp.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(kind: &str, until: Option<&str>) -> ControlFact {
        ControlFact {
            version: 1,
            kind: kind.into(),
            op: "c".into(),
            env: "e".into(),
            rule: None,
            reason: Some("maintenance".into()),
            until: until.map(str::to_owned),
            by: "ana".into(),
            timestamp: "2026-03-01T10:00:00.000Z".into(),
        }
    }

    #[test]
    fn a_suspension_stands_until_resumed_or_until_it_lapses() {
        let now = chant_store::clock::parse("2026-03-01T11:00:00.000Z").unwrap();
        let stands = standing(&fact(SUSPEND, None), now).unwrap();
        assert_eq!((stands.describe(), stands.by.as_str()), ("maintenance".to_owned(), "ana"));
        assert!(standing(&fact(SUSPEND, Some("2026-03-01T12:00:00.000Z")), now).is_some());
        assert!(standing(&fact(SUSPEND, Some("2026-03-01T10:30:00.000Z")), now).is_none(), "lapsed");
        assert!(standing(&fact(SUSPEND, Some("soon")), now).is_some(), "an unreadable until stands");
        assert!(standing(&fact(RESUME, None), now).is_none());
        assert!(standing(&fact("undamp", None), now).is_none());
        let until = standing(&fact(SUSPEND, Some("2026-03-01T12:00:00.000Z")), now).unwrap();
        assert_eq!(until.describe(), "maintenance, until 2026-03-01T12:00:00.000Z");
    }
}
