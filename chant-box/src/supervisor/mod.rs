//! The supervisor stand-in: a process supervisor answering the command line of `sprite-env`
//! (`sprite-env services list|create|delete|start|stop|restart`), shipped with chant so a box's
//! services can be supervised on any Linux machine.
//!
//! # Process model
//!
//! - One daemon per state directory (`SPRITE_ENV_STATE_DIR`, else
//!   `$XDG_STATE_HOME/chant/sprite-env`, else `$HOME/.local/state/chant/sprite-env`), started on
//!   first use by the command line in its own session (`setsid`), with its stdio on
//!   `daemon.log` in that directory: nothing of the caller's stdio is inherited.
//! - The daemon is the parent of every service. Each service runs in its own process group, its
//!   stdout and stderr appended to `logs/<name>.log`.
//! - A reaper thread waits on any child (`waitpid(-1)`) and records the exit as soon as it
//!   happens: a service that ends without being asked to is listed `failed` with its exit status
//!   (`exit 3`, `killed by signal 9`). The supervisor has no restart policy of its own: restarting
//!   is the caller's decision (chant's converge rules).
//! - Stopping a service signals its whole group: SIGTERM, then SIGKILL after the grace period
//!   (`SPRITE_ENV_STOP_GRACE`, default 5s), and waits until no process of the group is left, so a
//!   service that forked a child is stopped whole.
//! - A service's program and arguments are kept as they were given: a `${VAR}` in them is
//!   expanded only when the service is spawned, from the values the command that created or
//!   (re)started it sent with its request (each variable it names, from that command's
//!   environment), held in the daemon's memory only, else from the daemon's own environment. So
//!   `services.json` and every listing hold `${VAR}`, never a secret it stands for.
//! - The service table is written to `services.json` on every change. A daemon that starts over an
//!   existing table re-adopts each running service whose pid is alive with the recorded start time
//!   (field 22 of `/proc/<pid>/stat`); one that is gone, or whose pid was reused, is `failed`.
//!   An adopted service is not the daemon's child: its end is noticed by polling `/proc`.
//! - Only the supervisor's user reaches it (`access.rs`): the state directory and `logs/` are
//!   `0700`, the socket and every file `0600` whatever the umask, and a connection whose peer
//!   runs as another uid (`SO_PEERCRED`) is refused.
//! - Every state change (a child exited, a service created, started, stopped or deleted) is
//!   published as one JSON [`Event`] line to each connection that asked to `watch`
//!   (`sprite-env services watch`, [`Client::watch`]): a change source that wakes a converge
//!   round without waiting for its timer. Events are queued per watcher and written by that
//!   watcher's own thread, never under the table's lock; one that falls behind or stalls is
//!   dropped (its stream ends) and reconnects (`watchers.rs`).

mod access;
mod cli;
mod client;
mod daemon;
pub mod identity;
mod watchers;

#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub use cli::fuzz_args;
pub use cli::main;
pub use client::{Client, Error as ClientError, state_dir};
pub use identity::Identity;

use serde::{Deserialize, Serialize};

/// The variable naming the state directory.
pub const STATE_DIR_VAR: &str = "SPRITE_ENV_STATE_DIR";
/// The variable setting the grace period between SIGTERM and SIGKILL when stopping a service.
pub const STOP_GRACE_VAR: &str = "SPRITE_ENV_STOP_GRACE";

/// A service name outside `[a-z][a-z0-9-]*`. Returned by [`check_name`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("service name {0:?} must match [a-z][a-z0-9-]* (lowercase letters, digits and `-`, starting with a letter)")]
pub struct InvalidName(pub String);

/// Checks a service name against the rule op names follow, `[a-z][a-z0-9-]*`: a service's name
/// is one file name under `logs/` and one column of `services list --table`, so a `/`, a `..`,
/// a tab or a newline can never be part of one.
///
/// # Errors
///
/// [`InvalidName`], quoting the name escaped.
pub fn check_name(name: &str) -> Result<(), InvalidName> {
    if chant_lexicon::model::Name::is_valid(name) { Ok(()) } else { Err(InvalidName(name.to_owned())) }
}

/// The status of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Defined, not running.
    Stopped,
    /// Being started.
    Starting,
    /// Running.
    Running,
    /// Being stopped.
    Stopping,
    /// Ended without being asked to, or could not be started.
    Failed,
}

impl Status {
    /// The status as listed.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Stopped => "stopped",
            Status::Starting => "starting",
            Status::Running => "running",
            Status::Stopping => "stopping",
            Status::Failed => "failed",
        }
    }
}

/// The runtime state of a service, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The service's name.
    pub name: String,
    /// Its status.
    pub status: Status,
    /// The pid of its process (the leader of its group) while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// The start time of that process, in clock ticks since boot (`/proc/<pid>/stat` field 22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<u64>,
    /// How it last ended (`exit 1`, `killed by signal 9`), or why it could not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<String>,
    /// When it was last started (RFC 3339, wall clock), kept after it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// How many times it was started again after its first start (a `start` or `restart` after
    /// it ran, whoever asked), as Monit counts restarts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restarts: u32,
}

impl State {
    /// The state of a service that was declared and has not run yet.
    pub fn stopped(name: &str) -> State {
        State {
            name: name.to_owned(),
            status: Status::Stopped,
            pid: None,
            started: None,
            exit_status: None,
            started_at: None,
            restarts: 0,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One service: its definition and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Service {
    /// The service's name.
    pub name: String,
    /// The program.
    pub cmd: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The services it needs (started before it).
    #[serde(default)]
    pub needs: Vec<String>,
    /// The HTTP port it serves, if declared.
    #[serde(default)]
    pub http_port: Option<u16>,
    /// The working directory it runs in (the caller's, at create).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// Its state.
    pub state: State,
    /// The values of the variables its program and arguments name, as the last request that
    /// created or (re)started it sent them: in the daemon's memory only, never written to
    /// `services.json` nor listed.
    #[serde(skip)]
    pub values: Values,
}

/// Variable values a request carries for the `${VAR}`s of a service's program and arguments.
pub type Values = std::collections::BTreeMap<String, String>;

/// Returns the variables `word` names as `${VAR}`, in order (a malformed reference names none).
pub fn referenced(word: &str) -> Vec<String> {
    let seen = std::cell::RefCell::new(Vec::new());
    let _ = chant_lexicon::model::template::expand(word, "sprite-env", "args", &|var: &str| {
        seen.borrow_mut().push(var.to_owned());
        Some(String::new())
    });
    seen.into_inner()
}

/// Returns `service`'s program and arguments with every `${VAR}` expanded: from its
/// [`Values`], else from this process's environment.
///
/// # Errors
///
/// The variable no value was found for, or a malformed reference, as a sentence.
pub fn expanded(service: &Service) -> Result<(String, Vec<String>), String> {
    let lookup = |var: &str| service.values.get(var).cloned().or_else(|| std::env::var(var).ok());
    let expand = |word: &str| {
        chant_lexicon::model::template::expand(word, "sprite-env", "args", &lookup).map_err(|e| match e {
            chant_lexicon::model::template::ExpandError::Unset { var, .. } => format!(
                "service {} names ${{{var}}}, which neither the command that started it nor the supervisor has set",
                service.name
            ),
            chant_lexicon::model::template::ExpandError::Malformed { .. } => {
                format!("service {} has a malformed ${{...}} reference in {word}", service.name)
            }
        })
    };
    let cmd = expand(&service.cmd)?;
    let args = service.args.iter().map(|a| expand(a)).collect::<Result<Vec<_>, _>>()?;
    Ok((cmd, args))
}

/// What a caller asks the daemon.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Request {
    /// Lists every service.
    List,
    /// Defines a service and starts it.
    Create {
        /// The name.
        name: String,
        /// The program.
        cmd: String,
        /// Its arguments.
        args: Vec<String>,
        /// The services it needs.
        needs: Vec<String>,
        /// Its HTTP port.
        http_port: Option<u16>,
        /// Its working directory.
        dir: Option<String>,
        /// The values of the variables its program and arguments name (kept in memory only).
        #[serde(default, skip_serializing_if = "Values::is_empty")]
        values: Values,
    },
    /// Stops a service and forgets it.
    Delete {
        /// The name.
        name: String,
    },
    /// Starts a service (and the services it needs) unless it runs.
    Start {
        /// The name.
        name: String,
        /// Values of the variables the services' programs and arguments name.
        #[serde(default, skip_serializing_if = "Values::is_empty")]
        values: Values,
    },
    /// Stops a service.
    Stop {
        /// The name.
        name: String,
    },
    /// Stops and starts a service.
    Restart {
        /// The name.
        name: String,
        /// Values of the variables the services' programs and arguments name.
        #[serde(default, skip_serializing_if = "Values::is_empty")]
        values: Values,
    },
    /// Keeps the connection open and writes one [`Event`] line per state change on it.
    Watch,
    /// Ends the daemon; the services keep running (and are re-adopted) unless `stop_services`.
    Shutdown {
        /// Stop every service first.
        stop_services: bool,
    },
}

impl Request {
    /// Returns every service name the request carries (the service acted on, and what a created
    /// one needs).
    pub fn names(&self) -> Vec<&str> {
        match self {
            Request::Create { name, needs, .. } => std::iter::once(name).chain(needs).map(String::as_str).collect(),
            Request::Delete { name }
            | Request::Start { name, .. }
            | Request::Stop { name }
            | Request::Restart { name, .. } => {
                vec![name.as_str()]
            }
            Request::List | Request::Watch | Request::Shutdown { .. } => Vec::new(),
        }
    }
}

/// A state change, published to every watcher as one JSON line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// What happened: `started` (also after a create), `stopped`, `exited`, `deleted`.
    pub event: String,
    /// The service.
    pub service: String,
    /// Its status afterwards.
    pub status: Status,
    /// How it ended, for `exited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<String>,
}

/// The daemon's answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Response {
    /// Why the request failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The services (for `list`), or the one acted on.
    #[serde(default)]
    pub services: Vec<Service>,
    /// The log file of the service acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The log's length before the service was started (where streaming begins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_offset: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(cmd: &str, args: &[&str], values: &[(&str, &str)]) -> Service {
        Service {
            name: "app".into(),
            cmd: cmd.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            needs: Vec::new(),
            http_port: None,
            dir: None,
            state: State::stopped("app"),
            values: values.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        }
    }

    #[test]
    fn a_service_is_stored_and_listed_as_written_and_expanded_only_to_spawn() {
        let s = service("env", &["TOKEN=${E2E_UNIT_SECRET}", "sleep", "1"], &[("E2E_UNIT_SECRET", "s3cr3t-value")]);
        let stored = serde_json::to_string(&s).unwrap();
        assert!(stored.contains("TOKEN=${E2E_UNIT_SECRET}"), "{stored}");
        assert!(!stored.contains("s3cr3t-value"), "the value is stored: {stored}");
        assert_eq!(referenced("a${X}b${Y_2}"), ["X", "Y_2"]);
        assert_eq!(
            expanded(&s).unwrap(),
            ("env".to_owned(), vec!["TOKEN=s3cr3t-value".into(), "sleep".into(), "1".into()])
        );
        let unset = service("${E2E_UNIT_NEVER_SET}", &[], &[]);
        let why = expanded(&unset).unwrap_err();
        assert!(why.contains("names ${E2E_UNIT_NEVER_SET}, which neither"), "{why}");
        let create = Request::Create {
            name: "app".into(),
            cmd: "env".into(),
            args: Vec::new(),
            needs: Vec::new(),
            http_port: None,
            dir: None,
            values: s.values.clone(),
        };
        let sent: Request = serde_json::from_str(&serde_json::to_string(&create).unwrap()).unwrap();
        assert!(matches!(sent, Request::Create { values, .. } if values["E2E_UNIT_SECRET"] == "s3cr3t-value"));
    }
}
