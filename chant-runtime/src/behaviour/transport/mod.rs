//! Transports: how a rendered request reaches an engine and its answer comes back, as text or as
//! a refusal ready to return.
//!
//! The engine's value picks the transport: `http://` or `https://` is [`HttpTransport`] (a POST
//! with a bearer token, redirects not followed), anything else is [`CommandTransport`] (a program
//! on `PATH`, the request on stdin, the answer on stdout, an environment of `PATH` and nothing
//! else). A transport carries bytes, not reports: what the answer's fields mean is the wire
//! version's business, so one HTTP client serves every lexicon.
//!
//! Every way the wire can fail is a [`WireCondition`], and [`wire_refusal`] is the one function
//! that turns a condition into a [`Refusal`]: 402 is `engine-out-of-credit`, 429
//! `engine-over-quota`, 401 and 403 `no-engine` naming the token variable, a missing token
//! `no-engine` before anything is sent, and everything else (another status, a redirect, a
//! connection error, the timeout, a failed or killed program, an answer that does not parse)
//! `engine-unreachable`. Every detail it keeps has the token scrubbed out first, so an engine that
//! echoes the token back cannot make chant print it.

pub mod command;
pub mod http;

use std::time::Duration;

pub use self::command::{CommandTransport, child_environment};
pub use self::http::HttpTransport;

use super::engine::{EngineAddress, EnvVars, Resolved, Token, token_variables};
use super::refusal::{
    Refusal, no_token_refusal, out_of_credit_refusal, over_quota_refusal, token_rejected_refusal, unreachable_refusal,
};

/// Limits every transport applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportOptions {
    /// How long the engine may take to answer (for a program: to exit).
    pub timeout: Duration,
    /// For a program, how long after SIGTERM before SIGKILL.
    pub grace: Duration,
    /// The largest answer read, in bytes.
    pub max_answer_bytes: u64,
}

impl Default for TransportOptions {
    /// 30 seconds to answer, 2 seconds of grace, answers up to 8 MiB.
    fn default() -> Self {
        TransportOptions { timeout: Duration::from_secs(30), grace: Duration::from_secs(2), max_answer_bytes: 8 << 20 }
    }
}

/// Sends a rendered request to an engine.
pub trait Transport {
    /// Sends `body` and returns the engine's answer text, or the refusal to return instead.
    ///
    /// # Errors
    ///
    /// The [`Refusal`] for the wire condition seen (see [`wire_refusal`]).
    fn send(&self, body: &[u8]) -> Result<String, Refusal>;
}

/// Everything that can go wrong on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireCondition {
    /// An HTTP engine is named and no token is set.
    NoToken,
    /// The engine answered with a status outside 2xx and 3xx; `body` is what it said.
    Status {
        /// The status code.
        code: u16,
        /// The start of the answer body.
        body: String,
    },
    /// The engine answered with a redirect, which is never followed.
    Redirect {
        /// The status code.
        code: u16,
        /// Where it pointed.
        location: Option<String>,
    },
    /// No answer: the connection failed or broke.
    Connect(String),
    /// No answer within the timeout.
    Timeout(Duration),
    /// The program is not on `PATH`.
    NotFound(String),
    /// The program could not be started.
    Spawn(String),
    /// The program ended without success.
    Exit {
        /// How it ended (`exit 3`, `killed by signal 9`).
        how: String,
        /// The first line of its stderr.
        stderr: String,
    },
    /// The answer is not the expected wire version.
    Unparseable(String),
}

/// Who is on the other end of the wire: the lexicon, the engine and the variable that named it,
/// and the token, if any, which is scrubbed from everything the engine sends back.
#[derive(Debug, Clone)]
pub struct Wire {
    /// The lexicon asking.
    pub lexicon: String,
    /// The engine.
    pub engine: Resolved<EngineAddress>,
    /// The token, when the transport uses one.
    pub token: Option<Resolved<Token>>,
}

impl Wire {
    /// Returns `text` with the token scrubbed out.
    pub fn scrub(&self, text: &str) -> String {
        match &self.token {
            Some(token) => token.value.scrub(text),
            None => text.to_owned(),
        }
    }
}

/// Turns a wire condition into the refusal that says what to do about it. The one place a wire
/// cause becomes a refusal; both transports, and [`crate::behaviour::predict()`], go through it.
pub fn wire_refusal(wire: &Wire, condition: WireCondition) -> Refusal {
    let lexicon = wire.lexicon.as_str();
    let engine = &wire.engine;
    let d = |text: String| wire.scrub(&text);
    match condition {
        WireCondition::NoToken => no_token_refusal(lexicon, engine),
        WireCondition::Status { code: 402, body } => {
            out_of_credit_refusal(lexicon, engine, &d(format!("answered 402 {}", one_line(&body))))
        }
        WireCondition::Status { code: 429, body } => {
            over_quota_refusal(lexicon, engine, &d(format!("answered 429 {}", one_line(&body))))
        }
        WireCondition::Status { code: code @ (401 | 403), body } => {
            let variable = match &wire.token {
                Some(token) => token.variable.clone(),
                None => {
                    let [most_specific, ..] = token_variables(lexicon);
                    most_specific
                }
            };
            let detail = d(format!("answered {code}: the token was rejected {}", one_line(&body)));
            token_rejected_refusal(lexicon, engine, &variable, &detail)
        }
        WireCondition::Status { code, body } => {
            unreachable_refusal(lexicon, engine, &d(format!("answered {code} {}", one_line(&body))))
        }
        WireCondition::Redirect { code, location } => {
            let to = location.map(|l| format!(" to {l}")).unwrap_or_default();
            unreachable_refusal(
                lexicon,
                engine,
                &d(format!("answered {code} redirecting{to}; redirects are not followed")),
            )
        }
        WireCondition::Connect(message) => {
            unreachable_refusal(lexicon, engine, &d(format!("no answer: {}", one_line(&message))))
        }
        WireCondition::Timeout(after) => unreachable_refusal(
            lexicon,
            engine,
            &format!("no answer within {}", chant_lexicon::duration::format(after)),
        ),
        WireCondition::NotFound(program) => {
            unreachable_refusal(lexicon, engine, &d(format!("{program} is not a program on PATH")))
        }
        WireCondition::Spawn(message) => {
            unreachable_refusal(lexicon, engine, &d(format!("cannot start the engine: {}", one_line(&message))))
        }
        WireCondition::Exit { how, stderr } => {
            unreachable_refusal(lexicon, engine, &d(format!("the engine ended with {how}: {}", one_line(&stderr))))
        }
        WireCondition::Unparseable(message) => unreachable_refusal(
            lexicon,
            engine,
            &d(format!("the answer is not the expected wire version: {}", one_line(&message))),
        ),
    }
}

fn one_line(text: &str) -> String {
    chant_lexicon::redact::sanitise(text)
}

/// The transport an engine's value picks.
#[derive(Debug)]
pub enum EngineTransport {
    /// An `http://` or `https://` engine.
    Http(HttpTransport),
    /// A program on `PATH`.
    Command(CommandTransport),
}

impl EngineTransport {
    /// Returns who is on the other end.
    pub fn wire(&self) -> &Wire {
        match self {
            EngineTransport::Http(t) => t.wire(),
            EngineTransport::Command(t) => t.wire(),
        }
    }
}

impl Transport for EngineTransport {
    fn send(&self, body: &[u8]) -> Result<String, Refusal> {
        match self {
            EngineTransport::Http(t) => t.send(body),
            EngineTransport::Command(t) => t.send(body),
        }
    }
}

/// Picks the transport for `engine` by its value.
///
/// # Errors
///
/// The `no-engine` refusal naming the token chain when an HTTP engine is named and no token is
/// set: nothing is sent.
pub fn transport_for(
    lexicon: &str,
    engine: Resolved<EngineAddress>,
    env: &EnvVars,
    options: TransportOptions,
) -> Result<EngineTransport, Refusal> {
    if engine.value.is_http() {
        HttpTransport::new(lexicon, engine, env, options).map(EngineTransport::Http)
    } else {
        Ok(EngineTransport::Command(CommandTransport::new(lexicon, engine, env, options)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::refusal::RefusalCause;

    fn wire(token: Option<&str>) -> Wire {
        Wire {
            lexicon: "acme".into(),
            engine: Resolved { value: EngineAddress::new("http://127.0.0.1:9/"), variable: "BEHAVIOUR_ENGINE".into() },
            token: token.map(|t| Resolved { value: Token::new(t), variable: "CHANT_BEHAVIOUR_TOKEN".into() }),
        }
    }

    #[test]
    fn every_condition_maps_to_its_cause() {
        let status = |code: u16| WireCondition::Status { code, body: String::new() };
        let cases = [
            (WireCondition::NoToken, RefusalCause::NoEngine),
            (status(401), RefusalCause::NoEngine),
            (status(403), RefusalCause::NoEngine),
            (status(402), RefusalCause::EngineOutOfCredit),
            (status(429), RefusalCause::EngineOverQuota),
            (status(500), RefusalCause::EngineUnreachable),
            (status(404), RefusalCause::EngineUnreachable),
            (WireCondition::Redirect { code: 302, location: None }, RefusalCause::EngineUnreachable),
            (WireCondition::Connect("refused".into()), RefusalCause::EngineUnreachable),
            (WireCondition::Timeout(Duration::from_secs(1)), RefusalCause::EngineUnreachable),
            (WireCondition::NotFound("x".into()), RefusalCause::EngineUnreachable),
            (WireCondition::Spawn("x".into()), RefusalCause::EngineUnreachable),
            (WireCondition::Exit { how: "exit 1".into(), stderr: String::new() }, RefusalCause::EngineUnreachable),
            (WireCondition::Unparseable("x".into()), RefusalCause::EngineUnreachable),
        ];
        for (condition, cause) in cases {
            let shown = format!("{condition:?}");
            assert_eq!(wire_refusal(&wire(Some("tok-123456")), condition).cause(), cause, "{shown}");
        }
        let r = wire_refusal(&wire(Some("tok-123456")), status(401));
        assert_eq!(r.variable(), Some("CHANT_BEHAVIOUR_TOKEN"));
        let r = wire_refusal(&wire(None), status(403));
        assert_eq!(r.variable(), Some("CHANT_BEHAVIOUR_TOKEN_ACME"));
    }

    #[test]
    fn an_echoed_token_is_scrubbed_from_every_detail() {
        let token = "zz-secret-token-value-42";
        for condition in [
            WireCondition::Status { code: 500, body: format!("bad token {token}") },
            WireCondition::Status { code: 401, body: format!("bad token {token}") },
            WireCondition::Status { code: 402, body: token.into() },
            WireCondition::Status { code: 429, body: token.into() },
            WireCondition::Redirect { code: 301, location: Some(format!("http://x/?t={token}")) },
            WireCondition::Connect(token.into()),
            WireCondition::Exit { how: "exit 1".into(), stderr: token.into() },
            WireCondition::Unparseable(format!("invalid type: string \"{token}\"")),
        ] {
            let r = wire_refusal(&wire(Some(token)), condition);
            let all = format!("{r:?} {}", serde_json::to_string(&r).unwrap());
            assert!(!all.contains(token), "{all}");
        }
    }
}
