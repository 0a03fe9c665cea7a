//! Where notifications go: a webhook (JSON POSTed to the URL a variable holds) or a command (run
//! through [`crate::process`] with a minimal environment, the event as JSON on stdin). Each send is
//! bounded by a timeout; a failure is one line that never carries the URL (it may hold a token).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::NotifySection;

use super::event::Event;

/// The timeout of one send when `[notify] timeout` is not given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// One configured sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// `[[notify.webhook]]`.
    Webhook {
        /// The variable holding the URL.
        url_var: String,
    },
    /// `[[notify.command]]`.
    Command {
        /// The command, for `sh -c`.
        cmd: String,
        /// Its position among the command sinks, from 1, to name it.
        index: usize,
        /// The directory it runs in (the project root).
        cwd: PathBuf,
    },
}

impl Sink {
    /// Returns the sinks `section` configures, commands running in `root`.
    pub fn configured(section: &NotifySection, root: &Path) -> Vec<Sink> {
        let webhooks = section.webhook.iter().map(|w| Sink::Webhook { url_var: w.url_var.clone() });
        let commands = section.command.iter().enumerate().map(|(i, c)| Sink::Command {
            cmd: c.cmd.clone(),
            index: i + 1,
            cwd: root.to_path_buf(),
        });
        webhooks.chain(commands).collect()
    }

    /// Returns the sink's kind, a fixed word (`webhook`, `command`), for metrics labels.
    pub fn kind(&self) -> &'static str {
        match self {
            Sink::Webhook { .. } => "webhook",
            Sink::Command { .. } => "command",
        }
    }

    /// Returns the sink's name for people (`webhook $CHANT_NOTIFY_URL`, `command #1`).
    pub fn name(&self) -> String {
        match self {
            Sink::Webhook { url_var } => format!("webhook ${url_var}"),
            Sink::Command { index, .. } => format!("command #{index}"),
        }
    }

    /// Sends `event`, waiting at most `timeout`.
    ///
    /// # Errors
    ///
    /// A [`SendError`] saying why it was not delivered (never the URL).
    pub fn send(&self, event: &Event, timeout: Duration) -> Result<(), SendError> {
        let body = serde_json::to_string(event).map_err(SendError::Render)?;
        match self {
            Sink::Webhook { url_var } => webhook(url_var, &body, timeout),
            Sink::Command { cmd, cwd, .. } => command(cmd, cwd, event, body, timeout),
        }
    }
}

/// Why a sink did not deliver an event. No variant carries the webhook's URL, which may hold a
/// token: each names the variable instead.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The event could not be rendered as JSON.
    #[error("cannot render the event")]
    Render(#[source] serde_json::Error),
    /// The webhook's variable is unset or empty.
    #[error("${var} is not set, so there is no URL to send to")]
    NoUrl {
        /// The variable (`url_var`).
        var: String,
    },
    /// The webhook answered with a status other than 2xx (a redirect is not followed).
    #[error("the URL in ${var} answered {status}")]
    Status {
        /// The variable.
        var: String,
        /// The HTTP status.
        status: u16,
    },
    /// The webhook did not answer within the timeout.
    #[error("the URL in ${var} did not answer within {}", crate::duration::format(*.timeout))]
    Timeout {
        /// The variable.
        var: String,
        /// The timeout.
        timeout: Duration,
    },
    /// The webhook could not be reached.
    #[error("the URL in ${var} could not be reached: {why}")]
    Unreachable {
        /// The variable.
        var: String,
        /// The transport's error, sanitised, with the URL replaced by `$<var>`.
        why: String,
    },
    /// The command could not be started.
    #[error("cannot start the command")]
    Start(#[source] crate::process::Error),
    /// The command ended other than with exit 0.
    #[error("the command ended with {how}")]
    Failed {
        /// How it ended (`exit 1`, `timed out after 5s`), sanitised.
        how: String,
    },
}

fn webhook(url_var: &str, body: &str, timeout: Duration) -> Result<(), SendError> {
    let var = || url_var.to_owned();
    let url = match std::env::var(url_var) {
        Ok(u) if !u.trim().is_empty() => u,
        _ => return Err(SendError::NoUrl { var: var() }),
    };
    post(url_var, &url, body, timeout)
}

/// POSTs `body` to `url` (held by `$url_var`), the whole exchange bounded by `timeout`.
fn post(url_var: &str, url: &str, body: &str, timeout: Duration) -> Result<(), SendError> {
    let var = || url_var.to_owned();
    if let Some(why) = crate::http::tls_refusal(url) {
        return Err(SendError::Unreachable { var: var(), why });
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let answer = agent.post(url).header("Content-Type", "application/json").send(body);
    match answer {
        Ok(resp) if resp.status().is_success() => Ok(()),
        Ok(resp) => Err(SendError::Status { var: var(), status: resp.status().as_u16() }),
        Err(ureq::Error::Timeout(_)) => Err(SendError::Timeout { var: var(), timeout }),
        Err(e) => {
            // The error may quote the URL, which may carry a token: name the variable instead.
            let text = e.to_string().replace(url, &format!("${url_var}"));
            Err(SendError::Unreachable { var: var(), why: crate::redact::sanitise(&text) })
        }
    }
}

fn command(cmd: &str, cwd: &Path, event: &Event, body: String, timeout: Duration) -> Result<(), SendError> {
    let mut spec = crate::process::Spec::shell(cmd);
    spec.clear_env = true;
    spec.env = ["PATH", "HOME", "LANG", "TZ"]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_owned(), v)))
        .chain([("CHANT_NOTIFY_EVENT".to_owned(), event.event.as_str().to_owned())])
        .collect();
    spec.cwd = Some(cwd.to_path_buf());
    spec.stdin = Some(body.into_bytes());
    spec.timeout = timeout;
    spec.grace = Duration::from_millis(500);
    let out = crate::process::run(&spec).map_err(SendError::Start)?;
    if out.success() { Ok(()) } else { Err(SendError::Failed { how: crate::redact::sanitise(&out.describe(timeout)) }) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandSink, WebhookSink};

    #[test]
    fn sinks_are_named_without_their_secrets() {
        let section = NotifySection {
            webhook: vec![WebhookSink { url_var: "HOOK_URL".into() }],
            command: vec![CommandSink { cmd: "cat > /dev/null".into() }],
            ..NotifySection::default()
        };
        let sinks = Sink::configured(&section, Path::new("/tmp"));
        let names: Vec<(String, &str)> = sinks.iter().map(|s| (s.name(), s.kind())).collect();
        assert_eq!(names, [("webhook $HOOK_URL".to_owned(), "webhook"), ("command #1".to_owned(), "command")]);
    }

    #[test]
    fn a_command_whose_detached_grandchild_holds_stdout_fails_at_its_timeout() {
        // The command exits 0 at once, leaving a grandchild in a session of its own (a daemon it
        // started) that holds its stdout. Before, this send took 12.6 s against a 2 s timeout
        // and was recorded as delivered.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("daemon.pid");
        let sink = Sink::Command {
            cmd: format!("cat >/dev/null; setsid sleep 30 & echo $! > {}", pidfile.display()),
            index: 1,
            cwd: dir.path().to_path_buf(),
        };
        let event = Event {
            version: 1,
            event: super::super::event::EventKind::Recovered,
            op: "c".into(),
            env: "e".into(),
            tick_id: "t".into(),
            timestamp: "2026-03-01T10:00:00.000Z".into(),
            outcome: None,
            rule: None,
            why: None,
            resource: None,
            target: None,
            gate: None,
            approve: None,
            url: None,
            reason: None,
        };
        let timeout = Duration::from_secs(2);
        let started = std::time::Instant::now();
        let sent = sink.send(&event, timeout);
        let took = started.elapsed();
        if let Ok(pid) = std::fs::read_to_string(&pidfile) {
            let pid = nix::unistd::Pid::from_raw(pid.trim().parse().unwrap());
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
        let err = sent.expect_err("a send past its timeout is not delivered");
        assert_eq!(err.to_string(), "the command ended with timed out after 2s");
        assert!(took < Duration::from_secs(10), "the send took {took:?} against a 2s timeout");
    }

    #[test]
    fn a_webhook_that_accepts_and_never_answers_times_out_within_its_timeout() {
        // Loopback only: a listener that accepts and answers nothing.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}/hook", listener.local_addr().unwrap().port());
        std::thread::spawn(move || {
            use std::io::Read;
            let (mut conn, _) = listener.accept().unwrap();
            // Reads the request and answers nothing, until the sender hangs up.
            let mut buf = [0u8; 4096];
            while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
        });
        let started = std::time::Instant::now();
        let err = post("HOOK_URL", &url, "{}", Duration::from_secs(1)).unwrap_err();
        let took = started.elapsed();
        assert!(matches!(err, SendError::Timeout { .. }), "{err}");
        assert_eq!(err.to_string(), "the URL in $HOOK_URL did not answer within 1s");
        assert!(took < Duration::from_secs(20), "the send took {took:?} against a 1s timeout");
    }
}
