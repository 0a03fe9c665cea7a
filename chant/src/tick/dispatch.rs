//! Dispatching a `run()`: the project binary runs `current_exe() run <op> --json` as a child in
//! its own process group, dying with its parent, and the tick reads how it ended.
//!
//! Exit 0 is a success; exit 3 with a readable gate name is `gated`; anything else is a failure
//! whose redacted, sanitised error is recorded. Nothing is retried or queued within a tick.

use std::path::PathBuf;
use std::time::Duration;

use crate::exec::{self, Spec};
use crate::redact::Redactor;

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
        spec.env.push((exec::DIE_WITH_PARENT_VAR.into(), "1".into()));
        if let Some(r) = resource {
            spec.env.push((RESOURCE_VAR.into(), r.into()));
        }
        match exec::run(&spec) {
            Err(e) => DispatchResult::Failed { error: redactor.record(&e.to_string()) },
            Ok(out) => classify(&out, self.timeout, redactor),
        }
    }
}

/// Classifies a finished dispatch from its exit code and output.
pub fn classify(out: &exec::Output, timeout: Duration, redactor: &Redactor) -> DispatchResult {
    if out.success() {
        return DispatchResult::Ok;
    }
    let gate = if out.code == Some(3) { gate_of(&out.stdout).or_else(|| gate_of(&out.stderr)) } else { None };
    if let Some((gate, url)) = gate {
        return DispatchResult::Gated { gate, url };
    }
    let how = out.describe(timeout);
    let record_error = out.stdout.lines().find_map(|l| {
        let v: serde_json::Value = serde_json::from_str(l.trim()).ok()?;
        v.get("error").and_then(serde_json::Value::as_str).map(str::to_owned)
    });
    let why = record_error.unwrap_or_else(|| {
        let err = out.stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        err.trim_start_matches("error: ").to_owned()
    });
    let line = if why.trim().is_empty() { how } else { format!("{how}: {why}") };
    DispatchResult::Failed { error: redactor.record(&line) }
}

/// Reads a gate name (and approval URL) from a gated run's output: a one-line JSON run record
/// with `status: "gated"` and `gate.name` (or the older `gate.gate`), else the human line
/// `... is gated on "<gate>"`.
pub fn gate_of(text: &str) -> Option<(String, Option<String>)> {
    for line in text.lines().map(str::trim).filter(|l| l.starts_with('{')) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if v.get("status").and_then(serde_json::Value::as_str) != Some("gated") {
            continue;
        }
        let gate =
            v.get("gate").and_then(|g| g.get("name").or_else(|| g.get("gate"))).and_then(serde_json::Value::as_str);
        if let Some(g) = gate {
            let url = v.get("url").and_then(serde_json::Value::as_str).map(str::to_owned);
            return Some((g.to_owned(), url));
        }
    }
    let marker = "is gated on \"";
    let i = text.find(marker)? + marker.len();
    let end = text[i..].find('"')?;
    Some((text[i..i + end].to_owned(), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(code: i32, stdout: &str, stderr: &str) -> exec::Output {
        exec::Output {
            code: Some(code),
            signal: None,
            timed_out: false,
            stdout: stdout.into(),
            stderr: stderr.into(),
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn reads_gates_from_records_and_lines() {
        assert_eq!(
            gate_of(r#"{"status":"gated","gate":{"name":"rollout","since":"x"},"url":"https://x/pr/1"}"#),
            Some(("rollout".into(), Some("https://x/pr/1".into())))
        );
        assert_eq!(gate_of(r#"{"status":"gated","gate":{"gate":"old"}}"#), Some(("old".into(), None)));
        assert_eq!(gate_of("Op \"prod-apply\" is gated on \"rollout\" after 2.1s"), Some(("rollout".into(), None)));
        assert_eq!(gate_of(r#"{"status":"ok"}"#), None);
    }

    #[test]
    fn classifies_exit_codes() {
        let r = Redactor::default();
        let t = Duration::from_secs(1);
        assert_eq!(classify(&out(0, "", ""), t, &r), DispatchResult::Ok);
        assert_eq!(
            classify(&out(3, r#"{"status":"gated","gate":{"name":"g","since":"s"}}"#, ""), t, &r),
            DispatchResult::Gated { gate: "g".into(), url: None }
        );
        // Exit 3 without a readable gate is a failure.
        assert!(matches!(classify(&out(3, "", "weird"), t, &r), DispatchResult::Failed { .. }));
        let DispatchResult::Failed { error } =
            classify(&out(1, "", "error: lease held by h:1:x\npostgres://a:hunter22@h/db"), t, &r)
        else {
            panic!()
        };
        assert_eq!(error, "exit 1: postgres://a:[redacted]@h/db");
        let DispatchResult::Failed { error } =
            classify(&out(1, r#"{"status":"failed","error":"shell: exit 2"}"#, ""), t, &r)
        else {
            panic!()
        };
        assert_eq!(error, "exit 1: shell: exit 2");
    }
}
