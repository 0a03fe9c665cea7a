//! A refusal: the whole-request answer that carries no figures, only a cause and a remedy.
//!
//! Each [`RefusalCause`] has its own remedy because a refusal exists to be acted on: set a variable
//! for `no-engine`, check the address for `engine-unreachable`, pay for `engine-out-of-credit`
//! (waiting will not fix it), wait for the window to roll over for `engine-over-quota`, and take
//! the credential out of the declaration for `credential-in-request`. Folding the last three into
//! `engine-unreachable` would send an operator to an address that answers perfectly well. A
//! [`Refusal`] is built only by the functions here; each one names the variable that matters, and
//! every detail passes through the redactor and is trimmed to one line.

use serde::{Deserialize, Serialize};

use super::engine::{EngineAddress, Resolved, engine_variables, token_variables};
use chant_lexicon::redact::Redactor;

/// Why a whole request got no figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefusalCause {
    /// No variable names an engine, or the transport needs a token and none is set or the engine
    /// rejected it.
    NoEngine,
    /// A variable named an engine and it did not answer (or answered with something unusable).
    EngineUnreachable,
    /// The engine answered and refused: the account has no balance.
    EngineOutOfCredit,
    /// The engine answered and refused: a rate or volume limit is spent.
    EngineOverQuota,
    /// A declared property looks like a credential by its name.
    CredentialInRequest,
}

impl RefusalCause {
    /// Every cause.
    pub const ALL: [RefusalCause; 5] = [
        RefusalCause::NoEngine,
        RefusalCause::EngineUnreachable,
        RefusalCause::EngineOutOfCredit,
        RefusalCause::EngineOverQuota,
        RefusalCause::CredentialInRequest,
    ];

    /// Returns the cause's code (`engine-unreachable`).
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCause::NoEngine => "no-engine",
            RefusalCause::EngineUnreachable => "engine-unreachable",
            RefusalCause::EngineOutOfCredit => "engine-out-of-credit",
            RefusalCause::EngineOverQuota => "engine-over-quota",
            RefusalCause::CredentialInRequest => "credential-in-request",
        }
    }

    /// Returns what the cause means, in words.
    pub fn text(self) -> &'static str {
        match self {
            RefusalCause::NoEngine => "no behaviour engine is usable",
            RefusalCause::EngineUnreachable => "the behaviour engine did not answer",
            RefusalCause::EngineOutOfCredit => "the behaviour engine's account has no balance",
            RefusalCause::EngineOverQuota => "the behaviour engine's rate or volume limit is spent",
            RefusalCause::CredentialInRequest => "a declared property looks like a credential",
        }
    }
}

/// A whole-request refusal: no figures, a cause, the variable that matters and the remedy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    // Boxed strings keep a refusal small enough to travel in a `Result` cheaply.
    lexicon: Box<str>,
    cause: RefusalCause,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    variable: Option<Box<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    engine: Option<Box<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<Box<str>>,
    remedy: Box<str>,
}

impl Refusal {
    /// Returns the lexicon.
    pub fn lexicon(&self) -> &str {
        &self.lexicon
    }

    /// Returns the cause.
    pub fn cause(&self) -> RefusalCause {
        self.cause
    }

    /// Returns the variable the remedy is about (the engine's, or the token's), when there is one.
    pub fn variable(&self) -> Option<&str> {
        self.variable.as_deref()
    }

    /// Returns the engine address, as printable, when one was named.
    pub fn engine(&self) -> Option<&str> {
        self.engine.as_deref()
    }

    /// Returns what was seen, in one redacted line.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// Returns what to do about it, in words.
    pub fn remedy(&self) -> &str {
        &self.remedy
    }
}

fn chain_text(chain: &[String; 3]) -> String {
    format!("{} (or {}, {})", chain[0], chain[1], chain[2])
}

fn clean(detail: &str) -> Option<Box<str>> {
    let line = Redactor::default().record(detail);
    if line.is_empty() { None } else { Some(line.into()) }
}

fn engine_refusal(
    lexicon: &str,
    cause: RefusalCause,
    engine: &Resolved<EngineAddress>,
    variable: String,
    detail: &str,
    remedy: String,
) -> Refusal {
    Refusal {
        lexicon: lexicon.into(),
        cause,
        variable: Some(variable.into()),
        engine: Some(engine.value.printable().into()),
        detail: clean(detail),
        remedy: remedy.into(),
    }
}

/// No variable in the chain names an engine.
pub fn no_engine_refusal(lexicon: &str) -> Refusal {
    let chain = engine_variables(lexicon);
    Refusal {
        lexicon: lexicon.into(),
        cause: RefusalCause::NoEngine,
        variable: None,
        engine: None,
        detail: Some(format!("none of {} is set", chain.join(", ")).into()),
        remedy: format!(
            "set {} to the engine's http:// or https:// URL, or to the name of an engine program on PATH",
            chain_text(&chain)
        )
        .into(),
    }
}

/// An HTTP engine is named and no token is set; nothing was sent.
pub fn no_token_refusal(lexicon: &str, engine: &Resolved<EngineAddress>) -> Refusal {
    let chain = token_variables(lexicon);
    let detail = format!(
        "the engine named by {} needs a bearer token and none of {} is set; nothing was sent",
        engine.variable,
        chain.join(", ")
    );
    let remedy = format!("set {} to the engine's bearer token", chain_text(&chain));
    let [most_specific, ..] = chain;
    engine_refusal(lexicon, RefusalCause::NoEngine, engine, most_specific, &detail, remedy)
}

/// The engine rejected the token (HTTP 401 or 403).
pub fn token_rejected_refusal(
    lexicon: &str,
    engine: &Resolved<EngineAddress>,
    token_variable: &str,
    detail: &str,
) -> Refusal {
    let remedy = format!("set {token_variable} to a token this engine accepts: it rejected the one it holds");
    engine_refusal(lexicon, RefusalCause::NoEngine, engine, token_variable.to_owned(), detail, remedy)
}

/// A named engine did not answer, or answered with something unusable.
pub fn unreachable_refusal(lexicon: &str, engine: &Resolved<EngineAddress>, detail: &str) -> Refusal {
    let remedy = format!(
        "check the engine named by {} ({}): that it runs, that the address is right, and that it answers in the expected wire version",
        engine.variable,
        engine.value.printable()
    );
    engine_refusal(lexicon, RefusalCause::EngineUnreachable, engine, engine.variable.clone(), detail, remedy)
}

/// The engine answered and refused: the account has no balance.
pub fn out_of_credit_refusal(lexicon: &str, engine: &Resolved<EngineAddress>, detail: &str) -> Refusal {
    let remedy = "add credit to the engine's account: someone has to pay, and waiting will not fix it".to_owned();
    engine_refusal(lexicon, RefusalCause::EngineOutOfCredit, engine, engine.variable.clone(), detail, remedy)
}

/// The engine answered and refused: a rate or volume limit is spent.
pub fn over_quota_refusal(lexicon: &str, engine: &Resolved<EngineAddress>, detail: &str) -> Refusal {
    let remedy = "retry once the engine's quota window rolls over, or raise the limit; the address is fine".to_owned();
    engine_refusal(lexicon, RefusalCause::EngineOverQuota, engine, engine.variable.clone(), detail, remedy)
}

/// A declared property whose name reads as a credential holds a value that is not a reference.
/// `pointer` locates it (a JSON pointer into the request); the value is never repeated.
pub fn credential_in_request_refusal(lexicon: &str, pointer: &str) -> Refusal {
    Refusal {
        lexicon: lexicon.into(),
        cause: RefusalCause::CredentialInRequest,
        variable: None,
        engine: None,
        detail: clean(&format!("the property at {pointer} is named like a credential and holds a value")),
        remedy: format!(
            "take the value at {pointer} out of the declared properties, or declare a reference to it instead (a secret's name, a ${{VARIABLE}}), then ask again"
        )
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Resolved<EngineAddress> {
        Resolved { value: EngineAddress::new("http://127.0.0.1:9/p"), variable: "CHANT_BEHAVIOUR_ENGINE".into() }
    }

    #[test]
    fn every_cause_has_its_own_remedy() {
        let refusals = [
            no_engine_refusal("acme"),
            unreachable_refusal("acme", &engine(), "connection refused"),
            out_of_credit_refusal("acme", &engine(), "402"),
            over_quota_refusal("acme", &engine(), "429"),
            credential_in_request_refusal("acme", "/entities/0/props/password"),
        ];
        let causes: Vec<RefusalCause> = refusals.iter().map(Refusal::cause).collect();
        assert_eq!(causes, RefusalCause::ALL);
        let mut remedies: Vec<&str> = refusals.iter().map(Refusal::remedy).collect();
        remedies.sort_unstable();
        remedies.dedup();
        assert_eq!(remedies.len(), 5);
        assert!(refusals[0].remedy().contains("CHANT_BEHAVIOUR_ENGINE_ACME"));
        assert!(refusals[1].remedy().contains("CHANT_BEHAVIOUR_ENGINE (http://127.0.0.1:9/p)"));
    }

    #[test]
    fn token_refusals_name_the_token_variable() {
        let r = no_token_refusal("acme", &engine());
        assert_eq!(r.cause(), RefusalCause::NoEngine);
        assert_eq!(r.variable(), Some("CHANT_BEHAVIOUR_TOKEN_ACME"));
        assert!(r.remedy().contains("CHANT_BEHAVIOUR_TOKEN_ACME (or CHANT_BEHAVIOUR_TOKEN, BEHAVIOUR_TOKEN)"));
        let r = token_rejected_refusal("acme", &engine(), "BEHAVIOUR_TOKEN", "401");
        assert_eq!((r.cause(), r.variable()), (RefusalCause::NoEngine, Some("BEHAVIOUR_TOKEN")));
    }

    #[test]
    fn details_are_redacted_and_one_line() {
        let r = unreachable_refusal(
            "acme",
            &engine(),
            "bad gateway\nAuthorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123",
        );
        assert_eq!(r.detail(), Some("bad gateway"));
        let r = unreachable_refusal("acme", &engine(), "saw ghp_abcdefghijklmnopqrstuvwxyz0123 in the body");
        assert_eq!(r.detail(), Some("saw [redacted] in the body"));
    }
}
