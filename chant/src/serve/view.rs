//! The estate and the pending gates, as the dashboard shows them: built from exactly what
//! `operator status --json` prints ([`crate::operator::status::status`]), grouped by member and
//! env, each op with its [`Health`] and the age of its last tick.
//!
//! Every view here is also the JSON document its URL answers with `Accept: application/json`;
//! each carries `version: 1` and `generatedAt` (the instant the view was read, from
//! [`crate::clock::now`]).

use jiff::Timestamp;
use serde::Serialize;

use crate::operator::status::{Malformed, OpStatus, PendingGateView, RemoteView, StatusView};

use super::health::{self, Health};

/// The estate page's document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EstateView {
    /// The shape's version, 1.
    pub version: u32,
    /// When the view was read.
    pub generated_at: String,
    /// The worst health of every op, `null` when there is none.
    pub health: Option<Health>,
    /// One group per workspace member (a single `null` member in a flat project), sorted.
    pub members: Vec<MemberView>,
    /// Standing gates no converge tick dispatched (reached by hand runs).
    pub pending_gates: Vec<PendingGateView>,
    /// Unreadable ledger lines met.
    pub malformed: Malformed,
    /// The configured remote's reachability as `operator status` shows it; absent when no remote
    /// is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteView>,
}

/// One workspace member's envs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberView {
    /// The member, `null` in a flat project.
    pub member: Option<String>,
    /// The worst health of its ops.
    pub health: Health,
    /// Its envs, sorted.
    pub envs: Vec<EnvView>,
}

/// One env's ConvergeOps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvView {
    /// The env.
    pub env: String,
    /// The worst health of its ops.
    pub health: Health,
    /// Its ConvergeOps, sorted by name.
    pub ops: Vec<OpRow>,
}

/// One ConvergeOp's row: its `operator status` row, its health and its last tick's age.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpRow {
    /// Where it stands.
    pub health: Health,
    /// Seconds from its last tick's `timestamp` to `generatedAt`, `null` without a tick.
    pub age_seconds: Option<i64>,
    /// The `operator status` row, field for field.
    pub status: OpStatus,
}

impl Serialize for OpRow {
    /// The status row's fields beside `health` and `ageSeconds`; the row's own `health` (the
    /// operator status roll-up, `tick::health`) gives way to the dashboard's word, so the object
    /// has each key once.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let serde_json::Value::Object(mut fields) = serde_json::to_value(&self.status).map_err(S::Error::custom)?
        else {
            return Err(S::Error::custom("a status row is an object"));
        };
        fields.remove("health");
        let mut map = serializer.serialize_map(Some(fields.len() + 2))?;
        map.serialize_entry("health", &self.health)?;
        map.serialize_entry("ageSeconds", &self.age_seconds)?;
        for (k, v) in &fields {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl OpRow {
    /// Builds the row of `status` at `now`.
    pub fn new(status: OpStatus, now: Timestamp) -> OpRow {
        let age_seconds = status
            .last_tick
            .as_ref()
            .and_then(|t| crate::clock::parse(&t.timestamp))
            .map(|t| now.as_second().saturating_sub(t.as_second()));
        OpRow { health: health::of(&status), age_seconds, status }
    }
}

/// Groups a status view into the estate at `now`.
pub fn estate(view: StatusView, now: Timestamp) -> EstateView {
    let mut members: Vec<MemberView> = Vec::new();
    let mut rows: Vec<OpRow> = view.ops.into_iter().map(|s| OpRow::new(s, now)).collect();
    rows.sort_by(|a, b| {
        (&a.status.member, &a.status.env, &a.status.op).cmp(&(&b.status.member, &b.status.env, &b.status.op))
    });
    for row in rows {
        let member = row.status.member.clone();
        if members.last().is_none_or(|m| m.member != member) {
            members.push(MemberView { member, health: row.health, envs: Vec::new() });
        }
        let Some(group) = members.last_mut() else { continue };
        if group.envs.last().is_none_or(|e| e.env != row.status.env) {
            group.envs.push(EnvView { env: row.status.env.clone(), health: row.health, ops: Vec::new() });
        }
        let Some(env) = group.envs.last_mut() else { continue };
        env.health = env.health.max(row.health);
        group.health = group.health.max(row.health);
        env.ops.push(row);
    }
    let health = Health::worst(members.iter().map(|m| m.health));
    EstateView {
        version: 1,
        generated_at: crate::clock::format(now),
        health,
        members,
        pending_gates: view.pending_gates,
        malformed: view.malformed,
        remote: view.remote,
    }
}

/// The pending-gates page's document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GatesView {
    /// The shape's version, 1.
    pub version: u32,
    /// When the view was read.
    pub generated_at: String,
    /// Every standing gate, those a ConvergeOp's tick reached first.
    pub gates: Vec<GateRow>,
    /// Unreadable ledger lines met.
    pub malformed: Malformed,
}

/// One standing gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateRow {
    /// The ConvergeOp whose tick's dispatch reached it, `null` for a hand run's gate.
    pub converge_op: Option<String>,
    /// That ConvergeOp's workspace member, `null` in a flat project or for a hand run's gate.
    pub member: Option<String>,
    /// The gate, field for field as `operator status` shows it.
    #[serde(flatten)]
    pub gate: PendingGateView,
}

/// Lists the standing gates of a status view at `now`.
pub fn gates(view: StatusView, now: Timestamp) -> GatesView {
    let mut gates = Vec::new();
    for row in view.ops {
        let (op, member) = (row.op, row.member);
        gates.extend(row.pending_gates.into_iter().map(|gate| GateRow {
            converge_op: Some(op.clone()),
            member: member.clone(),
            gate,
        }));
    }
    gates.extend(view.pending_gates.into_iter().map(|gate| GateRow { converge_op: None, member: None, gate }));
    GatesView { version: 1, generated_at: crate::clock::format(now), gates, malformed: view.malformed }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::status::LastTickView;

    fn row(member: Option<&str>, env: &str, op: &str, log: Option<&str>) -> OpStatus {
        use crate::tick::health::HealthState;
        // The status row's roll-up, as `operator status` computes it from the tick.
        let state = match log {
            None => HealthState::NeverTicked,
            Some(l) if !l.contains("unobserved=0") => HealthState::Unknown,
            Some(l) if !l.contains("drifted=0") => HealthState::Drifted,
            Some(_) => HealthState::InSync,
        };
        OpStatus {
            op: op.into(),
            env: env.into(),
            member: member.map(str::to_owned),
            health: crate::tick::health::Health { state, detail: None },
            last_tick: log.map(|l| LastTickView {
                id: "t".into(),
                started_at: "2026-03-01T09:59:00.000Z".into(),
                timestamp: "2026-03-01T10:00:00.000Z".into(),
                age_secs: None,
                log: l.into(),
                error: None,
                lease: None,
                held: None,
            }),
            lease: None,
            pending_gates: Vec::new(),
            suspended: None,
        }
    }

    #[test]
    fn the_estate_groups_by_member_then_env_and_rolls_health_up() {
        let now: Timestamp = "2026-03-01T10:01:30Z".parse().unwrap();
        let view = StatusView {
            version: 1,
            ops: vec![
                row(Some("web"), "prod", "b-converge", Some("converge(prod): drifted=2 unobserved=0 gated=0")),
                row(Some("web"), "prod", "a-converge", Some("converge(prod): drifted=0 unobserved=0 gated=0")),
                row(Some("web"), "dev", "c-converge", None),
                row(None, "site", "d-converge", Some("converge(site): drifted=0 unobserved=3 gated=0")),
            ],
            pending_gates: Vec::new(),
            malformed: Malformed::default(),
            remote: None,
            stale_locks: Vec::new(),
        };
        let estate = estate(view, now);
        assert_eq!(estate.health, Some(Health::Unknown));
        type Shape<'a> = Vec<(Option<&'a str>, Health, Vec<(&'a str, Health, Vec<&'a str>)>)>;
        let shape: Shape<'_> = estate
            .members
            .iter()
            .map(|m| {
                let envs = m
                    .envs
                    .iter()
                    .map(|e| (e.env.as_str(), e.health, e.ops.iter().map(|o| o.status.op.as_str()).collect()))
                    .collect();
                (m.member.as_deref(), m.health, envs)
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (None, Health::Unknown, vec![("site", Health::Unknown, vec!["d-converge"])]),
                (
                    Some("web"),
                    Health::Drifted,
                    vec![
                        ("dev", Health::NeverTicked, vec!["c-converge"]),
                        ("prod", Health::Drifted, vec!["a-converge", "b-converge"]),
                    ]
                ),
            ]
        );
        assert_eq!(estate.members[0].envs[0].ops[0].age_seconds, Some(90));
        assert_eq!(estate.members[1].envs[0].ops[0].age_seconds, None);
        let json = serde_json::to_value(&estate.members[0].envs[0].ops[0]).unwrap();
        assert_eq!(json["op"], "d-converge", "the status row's fields sit beside health and age");
        assert_eq!(json["health"], "unknown");
        assert_eq!(json["ageSeconds"], 90);
    }
}
