//! Shard keys: which records go together. A key names the record kind (converge tick, run,
//! gate fact, lexicon apply), the workspace member (`_members/<member>/` prefix, or flat), the env (none for
//! gates, which carry it as a field) and the op. Each key owns one directory on the ledger
//! branch, and maps to the one single file the original wrote for it, read as history.

use super::Error;

/// The kind of record a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecordKind {
    /// Tick records of a ConvergeOp, per (member, env, op).
    Converge,
    /// Run records of an op, per (member, env, op); an op run by hand without an env is under `_runs`.
    Run,
    /// Gate facts (pending and resolution), per (member, op).
    Gate,
    /// Apply records of a lexicon component, per (member, env, component); the "op" of such a key
    /// is the component name (`files`).
    Apply,
    /// What the operator's notification sinks were sent for a ConvergeOp's ticks.
    Notify,
    /// Facts a person recorded about a ConvergeOp's ticks (`operator undamp`).
    Control,
}

/// The directory that holds run records of ops run by hand without an env.
pub const HAND_RUNS_DIR: &str = "_runs";
/// The directory, inside an env's, that holds apply records per lexicon component.
pub const APPLY_DIR: &str = "_apply";

/// Identifies one sequence of records on the ledger.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShardKey {
    kind: RecordKind,
    member: Option<String>,
    env: Option<String>,
    op: String,
}

impl ShardKey {
    /// Tick records of ConvergeOp `op` in `env`.
    pub fn converge(member: Option<&str>, env: &str, op: &str) -> Result<Self, Error> {
        Self::new(RecordKind::Converge, member, Some(env), op)
    }

    /// Run records of `op` in `env` (`None`: run by hand without an env, stored under `_runs`).
    pub fn run(member: Option<&str>, env: Option<&str>, op: &str) -> Result<Self, Error> {
        Self::new(RecordKind::Run, member, env, op)
    }

    /// Gate facts of `op`, whatever the env.
    pub fn gate(member: Option<&str>, op: &str) -> Result<Self, Error> {
        Self::new(RecordKind::Gate, member, None, op)
    }

    /// Notifications sent for the ticks of `op` in `env` (what the ledger remembers was sent).
    pub fn notify(member: Option<&str>, env: &str, op: &str) -> Result<Self, Error> {
        Self::new(RecordKind::Notify, member, Some(env), op)
    }

    /// Facts recorded by hand about the ticks of `op` in `env` (`operator undamp`).
    pub fn control(member: Option<&str>, env: &str, op: &str) -> Result<Self, Error> {
        Self::new(RecordKind::Control, member, Some(env), op)
    }

    /// Apply records of lexicon `component` (such as `files`) in `env`.
    pub fn apply(member: Option<&str>, env: &str, component: &str) -> Result<Self, Error> {
        Self::new(RecordKind::Apply, member, Some(env), component)
    }

    fn new(kind: RecordKind, member: Option<&str>, env: Option<&str>, op: &str) -> Result<Self, Error> {
        check_name("op", op)?;
        if let Some(env) = env {
            check_name("env", env)?;
        }
        if let Some(member) = member {
            check_member(member)?;
        }
        Ok(Self { kind, member: member.map(str::to_owned), env: env.map(str::to_owned), op: op.to_owned() })
    }

    /// The kind of record.
    pub fn kind(&self) -> RecordKind {
        self.kind
    }

    /// The workspace member, `/`-separated when nested; `None` for a flat ledger.
    pub fn member(&self) -> Option<&str> {
        self.member.as_deref()
    }

    /// The env; `None` for gate facts and for runs by hand.
    pub fn env(&self) -> Option<&str> {
        self.env.as_deref()
    }

    /// The op (the component for apply records).
    pub fn op(&self) -> &str {
        &self.op
    }

    /// The member prefix: `""`, `_members/<m>/`, or `_members/<a>/_members/<b>/` when nested.
    pub fn prefix(&self) -> String {
        member_prefix(self.member.as_deref())
    }

    /// The key's directory on the ledger branch, without a trailing slash:
    /// `<prefix><env>/<op>/converge`, `<prefix><env>/<op>/runs`, `<prefix>_runs/<op>/runs`,
    /// `<prefix>_gates/<op>` or `<prefix><env>/_apply/<component>`.
    pub fn dir(&self) -> String {
        let prefix = self.prefix();
        let env = self.env.as_deref().unwrap_or(HAND_RUNS_DIR);
        match self.kind {
            RecordKind::Converge => format!("{prefix}{env}/{}/converge", self.op),
            RecordKind::Run => format!("{prefix}{env}/{}/runs", self.op),
            RecordKind::Gate => format!("{prefix}_gates/{}", self.op),
            RecordKind::Apply => format!("{prefix}{env}/{APPLY_DIR}/{}", self.op),
            RecordKind::Notify => format!("{prefix}{env}/{}/notify", self.op),
            RecordKind::Control => format!("{prefix}{env}/{}/control", self.op),
        }
    }

    /// The single file the original wrote for this key, read as history and never written:
    /// `<prefix><env>/converge.jsonl` (shared by every op of the env; only this op's lines
    /// belong to the key), `<prefix><env>/runs__<op>.jsonl` or `<prefix>_gates/<op>.jsonl`.
    pub fn legacy_path(&self) -> Option<String> {
        let prefix = self.prefix();
        match (self.kind, self.env.as_deref()) {
            (RecordKind::Converge, Some(env)) => Some(format!("{prefix}{env}/converge.jsonl")),
            (RecordKind::Run, Some(env)) => Some(format!("{prefix}{env}/runs__{}.jsonl", self.op)),
            (RecordKind::Gate, _) => Some(format!("{prefix}_gates/{}.jsonl", self.op)),
            _ => None,
        }
    }

    /// A short human label: `converge staging/staging-converge`, `gate _gates/deploy`.
    pub fn label(&self) -> String {
        let kind = match self.kind {
            RecordKind::Converge => "converge",
            RecordKind::Run => "run",
            RecordKind::Gate => "gate",
            RecordKind::Apply => "apply",
            RecordKind::Notify => "notify",
            RecordKind::Control => "control",
        };
        format!("{kind} {}", self.dir())
    }
}

/// The path prefix of a member: `""` when flat, `_members/<m>/` per nesting level.
pub(super) fn member_prefix(member: Option<&str>) -> String {
    member.map_or_else(String::new, |m| m.split('/').map(|part| format!("_members/{part}/")).collect())
}

/// Whether `name` is a valid op or env name: `[a-z][a-z0-9-]*` ([`crate::model::Name`]).
pub(super) fn is_name(name: &str) -> bool {
    crate::model::Name::is_valid(name)
}

fn check_name(what: &'static str, name: &str) -> Result<(), Error> {
    if is_name(name) { Ok(()) } else { Err(Error::InvalidName { what, name: name.to_owned() }) }
}

/// Whether `segment` is a valid member directory name: ASCII letters, digits, `.`, `_`, `-`,
/// starting with a letter or digit.
pub(super) fn is_member_segment(segment: &str) -> bool {
    let mut chars = segment.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn check_member(member: &str) -> Result<(), Error> {
    if member.split('/').all(is_member_segment) {
        Ok(())
    } else {
        Err(Error::InvalidName { what: "member", name: member.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_legacy_files() {
        let converge = ShardKey::converge(None, "staging", "staging-converge").unwrap();
        assert_eq!(converge.dir(), "staging/staging-converge/converge");
        assert_eq!(converge.legacy_path().as_deref(), Some("staging/converge.jsonl"));

        let run = ShardKey::run(Some("platform"), Some("staging"), "apply").unwrap();
        assert_eq!(run.dir(), "_members/platform/staging/apply/runs");
        assert_eq!(run.legacy_path().as_deref(), Some("_members/platform/staging/runs__apply.jsonl"));

        let hand = ShardKey::run(None, None, "apply").unwrap();
        assert_eq!(hand.dir(), "_runs/apply/runs");
        assert_eq!(hand.legacy_path(), None);

        let gate = ShardKey::gate(Some("platform/core"), "deploy").unwrap();
        assert_eq!(gate.dir(), "_members/platform/_members/core/_gates/deploy");
        assert_eq!(gate.legacy_path().as_deref(), Some("_members/platform/_members/core/_gates/deploy.jsonl"));
        assert_eq!(gate.env(), None);

        let control = ShardKey::control(None, "staging", "staging-converge").unwrap();
        assert_eq!(control.dir(), "staging/staging-converge/control");
        assert_eq!(control.legacy_path(), None);

        let apply = ShardKey::apply(None, "staging", "files").unwrap();
        assert_eq!(apply.dir(), "staging/_apply/files");
        assert_eq!(apply.legacy_path(), None);
    }

    #[test]
    fn names_are_checked() {
        assert!(ShardKey::converge(None, "Staging", "x").is_err());
        assert!(ShardKey::converge(None, "staging", "a/b").is_err());
        assert!(ShardKey::gate(None, "").is_err());
        assert!(ShardKey::gate(Some(".."), "x").is_err());
        assert!(ShardKey::gate(Some("a//b"), "x").is_err());
        assert!(ShardKey::gate(Some("web_app.v2"), "x").is_ok());
    }
}
