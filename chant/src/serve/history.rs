//! History you can see: the figures the op page charts, one point per tick it shows, drawn from
//! the very tick records the page already read for its timeline (no other read of the ledger).
//!
//! Each point is a tick's duration (`timestamp` − `startedAt`), its `summary.drifted` and
//! `summary.remediated` counts, and the health that tick alone rolls up to (the word `operator
//! status` would have shown right after it, [`crate::tick::health::Health::of_tick`]), so the
//! strip of those words is the op's health over time. Pure: no I/O, no clock.

use serde::Serialize;

use super::Health;
use crate::tick::TickRecord;

/// One tick's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Point {
    /// The tick's id.
    pub id: String,
    /// When it was recorded.
    pub timestamp: String,
    /// How long it ran, in milliseconds; `null` when its start or end does not parse (or the end
    /// is before the start).
    pub duration_ms: Option<u64>,
    /// What it found drifted (`summary.drifted`).
    pub drifted: u64,
    /// What its dispatches were verified to repair (`summary.remediated`).
    pub remediated: u64,
    /// The health this tick rolls up to.
    pub health: Health,
}

impl Point {
    /// The figures of `tick`.
    pub fn of(tick: &TickRecord) -> Point {
        let (start, end) = (crate::clock::parse(&tick.started_at), crate::clock::parse(&tick.timestamp));
        let duration_ms = match (start, end) {
            (Some(s), Some(e)) => u64::try_from(e.as_millisecond().saturating_sub(s.as_millisecond())).ok(),
            _ => None,
        };
        Point {
            id: tick.id.clone(),
            timestamp: tick.timestamp.clone(),
            duration_ms,
            drifted: tick.summary.drifted,
            remediated: tick.summary.remediated,
            health: Health::from(crate::tick::health::Health::of_tick(Some(tick)).state),
        }
    }
}

/// The points of `ticks` (newest first, as the page shows them), oldest first, as a chart reads
/// left to right.
pub fn points<'a>(ticks: impl IntoIterator<Item = &'a TickRecord>) -> Vec<Point> {
    let mut out: Vec<Point> = ticks.into_iter().map(Point::of).collect();
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tick::Summary;

    fn tick(id: &str, start: &str, end: &str, drifted: u64, remediated: u64, error: Option<&str>) -> TickRecord {
        TickRecord {
            id: id.into(),
            started_at: start.into(),
            timestamp: end.into(),
            summary: Summary { drifted, remediated, ..Summary::default() },
            error: error.map(str::to_owned),
            ..TickRecord::default()
        }
    }

    #[test]
    fn each_tick_gives_its_duration_counts_and_health_oldest_first() {
        let newest = tick("t3", "2026-03-01T10:10:00.000Z", "2026-03-01T10:10:01.250Z", 0, 0, Some("boom"));
        let middle = tick("t2", "2026-03-01T10:05:00.000Z", "2026-03-01T10:05:00.040Z", 2, 2, None);
        let oldest = tick("t1", "", "2026-03-01T10:00:00.000Z", 0, 0, None);
        let p = points([&newest, &middle, &oldest]);
        let ids: Vec<&str> = p.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t2", "t3"]);
        assert_eq!(p.iter().map(|p| p.duration_ms).collect::<Vec<_>>(), [None, Some(40), Some(1250)]);
        assert_eq!((p[1].drifted, p[1].remediated), (2, 2));
        assert_eq!(p[2].health, Health::Failing, "a failed tick");
        assert_eq!(p[0].health, Health::InSync);
        // An end before its start is no duration, not a huge one.
        let odd = tick("t", "2026-03-01T10:00:01.000Z", "2026-03-01T10:00:00.000Z", 0, 0, None);
        assert_eq!(Point::of(&odd).duration_ms, None);
    }
}
