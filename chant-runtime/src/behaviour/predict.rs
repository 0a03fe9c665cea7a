//! Predicting: the contract's sequence from an [`Ask`] to a [`Prediction`], in the one order that
//! keeps its promises.
//!
//! 1. Validate the ask and [screen](super::screen) the request: a credential the value layers
//!    recognise is an error (nothing is sent); a credential-named property is the
//!    `credential-in-request` refusal.
//! 2. Resolve the engine before pricing anything: no engine is the `no-engine` refusal.
//! 3. Pick the transport by the engine's value: an HTTP engine with no token is the `no-engine`
//!    refusal naming the token chain, and nothing is sent.
//! 4. Send the request in the `chant-behaviour/1` wire version (only when some entity is to be
//!    sent), and parse the answer; every failure there is a refusal built by
//!    [`wire_refusal`].
//! 5. Fold the answer into a report that accounts for every asked entity exactly once.
//!
//! A lexicon with its own wire version does the same with the public parts: [`screen_request`],
//! [`engine_from`], [`transport_for`], [`Transport::send`] and a [`ReportBuilder`].

use super::engine::{EnvVars, engine_from};
use super::refusal::no_engine_refusal;
use super::report::{Prediction, ReportBuilder, ReportError};
use super::request::{Ask, RequestError};
use super::screen::{CredentialError, screen_request};
use super::transport::{Transport, TransportOptions, WireCondition, transport_for, wire_refusal};
use super::wire::{parse_answer, render_request, report_from_answer};

/// The errors of [`predict`]: a request that must not be sent at all. Everything about the
/// engine is a [`Prediction::Refusal`] instead.
#[derive(Debug, thiserror::Error)]
pub enum BehaviourError {
    /// The ask is malformed (duplicate or empty names, a dangling edge).
    #[error("invalid behaviour request")]
    Invalid(#[from] RequestError),
    /// The request holds a credential.
    #[error(transparent)]
    Credential(#[from] CredentialError),
    /// The request could not be rendered.
    #[error("cannot render the behaviour request")]
    Render(#[source] serde_json::Error),
    /// The report could not be built (only for an ask that is itself invalid).
    #[error("cannot build the behaviour report")]
    Report(#[from] ReportError),
}

/// Predicts the behaviour of the entities in `ask` with the engine `env` names.
///
/// # Errors
///
/// [`BehaviourError::Credential`] when the request holds a credential the value layers
/// recognise, [`BehaviourError::Invalid`] for a malformed ask; never for anything the engine does.
pub fn predict(ask: &Ask, env: &EnvVars, options: TransportOptions) -> Result<Prediction, BehaviourError> {
    ask.validate()?;
    let request = &ask.request;
    if let Some(refusal) = screen_request(request)? {
        return Ok(Prediction::Refusal(refusal));
    }
    let Some(engine) = engine_from(&request.lexicon, env) else {
        return Ok(Prediction::Refusal(no_engine_refusal(&request.lexicon)));
    };
    let transport = match transport_for(&request.lexicon, engine, env, options) {
        Ok(transport) => transport,
        Err(refusal) => return Ok(Prediction::Refusal(refusal)),
    };
    if request.entities.is_empty() {
        return Ok(Prediction::Report(ReportBuilder::new(ask).finish()?));
    }
    let body = render_request(request).map_err(BehaviourError::Render)?;
    let text = match transport.send(&body) {
        Ok(text) => text,
        Err(refusal) => return Ok(Prediction::Refusal(refusal)),
    };
    let wire = transport.wire();
    let answer = match parse_answer(&text) {
        Ok(answer) => answer,
        Err(e) => return Ok(Prediction::Refusal(wire_refusal(wire, WireCondition::Unparseable(e.to_string())))),
    };
    Ok(Prediction::Report(report_from_answer(ask, answer)?))
}
