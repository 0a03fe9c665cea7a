//! Dispatching a `run()`: the project binary runs `current_exe() run <op> --json` as a child in
//! its own process group, dying with its parent, and the child hands its [`RunRecord`] back as
//! a typed message: the one JSON line `run --json` prints on stdout, deserialised here.
//!
//! Exit 0 is a success; exit 3 with a run record stopped at a gate is `gated`; anything else is
//! a failure whose redacted, sanitised error is recorded: the run record's `error`, or, when the
//! child ended without a run record ([`NoRecord`]: it refused before running, such as a lease
//! held by another holder, or it died), its last line on stderr. Nothing is retried or queued
//! within a tick.

use std::path::PathBuf;
use std::time::Duration;

use crate::runner::{RunRecord, Status};
use chant_lexicon::redact::Redactor;
use chant_store::process::{self, Spec};

use super::plan::DispatchResult;
use super::{ENV_VAR, RESOURCE_VAR};

/// How to start a dispatched run.
#[derive(Debug, Clone)]
pub struct Dispatcher {
    /// The binary to run (the project binary itself).
    pub program: PathBuf,
    /// How long a dispatched run may take.
    pub timeout: Duration,
    /// The grace period between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Extra variables for the child (tests use this for `CHANT_NOW`).
    pub env: Vec<(String, String)>,
}

impl Dispatcher {
    /// Creates a dispatcher running this process's own executable with a 30-minute timeout.
    ///
    /// # Errors
    ///
    /// Returns the I/O error when the executable's path cannot be read.
    pub fn current() -> std::io::Result<Self> {
        Ok(Dispatcher {
            program: std::env::current_exe()?,
            timeout: Duration::from_secs(1800),
            grace: Duration::from_secs(10),
            env: Vec::new(),
        })
    }

    /// Runs `op` for `env` (and `resource` in resource mode) and classifies how it ended.
    pub fn dispatch(&self, op: &str, env: &str, resource: Option<&str>, redactor: &Redactor) -> DispatchResult {
        let mut spec = Spec::new(&self.program);
        spec.args = vec!["run".into(), op.into(), "--json".into()];
        spec.timeout = self.timeout;
        spec.grace = self.grace;
        spec.watch_parent = true;
        spec.env = self.env.clone();
        spec.env.push((ENV_VAR.into(), env.into()));
        spec.env.push((process::DIE_WITH_PARENT_VAR.into(), "1".into()));
        if let Some(r) = resource {
            spec.env.push((RESOURCE_VAR.into(), r.into()));
        }
        match process::run(&spec) {
            Err(e) => DispatchResult::Failed { error: redactor.record(&e.to_string()) },
            Ok(out) => classify(&out, &reply(&out.stdout), self.timeout, redactor),
        }
    }
}

/// Why a dispatched run handed back no run record.
#[derive(Debug, thiserror::Error)]
pub enum NoRecord {
    /// Its stdout holds no JSON line at all.
    #[error("the dispatched run printed no run record")]
    Empty,
    /// Its stdout has JSON, but not a run record.
    #[error("the dispatched run printed something other than a run record")]
    NotARunRecord(#[source] serde_json::Error),
}

/// Reads the run record a dispatched run printed: the last line of its stdout that is a JSON
/// run record (a user step may print lines of its own before it).
///
/// # Errors
///
/// [`NoRecord`] when there is none.
pub fn reply(stdout: &str) -> Result<RunRecord, NoRecord> {
    let mut last_error = None;
    for line in stdout.lines().rev().map(str::trim).filter(|l| l.starts_with('{')) {
        match serde_json::from_str::<RunRecord>(line) {
            Ok(record) => return Ok(record),
            Err(err) => last_error = last_error.or(Some(err)),
        }
    }
    Err(last_error.map_or(NoRecord::Empty, NoRecord::NotARunRecord))
}

/// Classifies a finished dispatch from its exit code and the run record it handed back.
pub fn classify(
    out: &process::Output,
    reply: &Result<RunRecord, NoRecord>,
    timeout: Duration,
    redactor: &Redactor,
) -> DispatchResult {
    if out.success() {
        return DispatchResult::Ok;
    }
    if out.code == Some(3)
        && let Ok(record) = reply
        && record.status == Status::Gated
        && let Some(gate) = &record.gate
    {
        return DispatchResult::Gated {
            gate: gate.name.clone(),
            url: record.url.clone(),
            owner: gate.component.clone(),
        };
    }
    let how = out.describe(timeout);
    let why = match reply {
        Ok(RunRecord { error: Some(error), .. }) => error.clone(),
        // A run that refused before running (or died) printed no record: its last word on stderr.
        _ => {
            let err = out.stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            err.trim_start_matches("error: ").to_owned()
        }
    };
    let line = if why.trim().is_empty() { how } else { format!("{how}: {why}") };
    DispatchResult::Failed { error: redactor.record(&line) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(code: i32, stdout: &str, stderr: &str) -> process::Output {
        process::Output {
            code: Some(code),
            signal: None,
            timed_out: false,
            stdout: stdout.into(),
            stderr: stderr.into(),
            elapsed: Duration::ZERO,
        }
    }

    fn record(status: &str, extra: &str) -> String {
        format!(
            r#"{{"endedAt":"t","env":"e","id":"i","op":"o","opDigest":"d","outcomes":[],"phases":[],"startedAt":"t","status":"{status}","version":1{extra}}}"#
        )
    }

    fn classified(code: i32, stdout: &str, stderr: &str) -> DispatchResult {
        let out = out(code, stdout, stderr);
        classify(&out, &reply(&out.stdout), Duration::from_secs(1), &Redactor::default())
    }

    #[test]
    fn reads_the_run_record_a_dispatched_run_prints() {
        let gated = record("gated", r#","gate":{"name":"rollout","since":"x"},"url":"https://x/pr/1""#);
        let got = reply(&format!("a user step's own line\n{gated}\n")).unwrap();
        assert_eq!(
            (got.status, got.gate.unwrap().name, got.url.as_deref()),
            (Status::Gated, "rollout".into(), Some("https://x/pr/1"))
        );
        assert!(matches!(reply(""), Err(NoRecord::Empty)));
        assert!(matches!(reply("Op \"x\" is gated on \"rollout\""), Err(NoRecord::Empty)));
        assert!(matches!(reply(r#"{"status":"gated","gate":{"gate":"old"}}"#), Err(NoRecord::NotARunRecord(_))));
    }

    #[test]
    fn classifies_exit_codes() {
        assert_eq!(classified(0, "", ""), DispatchResult::Ok);
        assert_eq!(
            classified(3, &record("gated", r#","gate":{"name":"g","since":"s"}"#), ""),
            DispatchResult::Gated { gate: "g".into(), url: None, owner: None }
        );
        // Exit 3 without a run record stopped at a gate is a failure.
        assert!(matches!(classified(3, "", "weird"), DispatchResult::Failed { .. }));
        assert!(matches!(classified(3, &record("failed", ""), ""), DispatchResult::Failed { .. }));
        let DispatchResult::Failed { error } =
            classified(1, "", "error: lease held by h:1:x\npostgres://a:hunter22@h/db")
        else {
            panic!()
        };
        assert_eq!(error, "exit 1: postgres://a:[redacted]@h/db");
        let DispatchResult::Failed { error } = classified(1, &record("failed", r#","error":"shell: exit 2""#), "")
        else {
            panic!()
        };
        assert_eq!(error, "exit 1: shell: exit 2");
        // A record without an error: the child's last word on stderr.
        let DispatchResult::Failed { error } = classified(1, &record("failed", ""), "error: boom") else { panic!() };
        assert_eq!(error, "exit 1: boom");
    }
}
