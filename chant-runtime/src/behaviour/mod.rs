//! The behaviour-prediction contract: how a lexicon asks an engine how the declared estate would
//! behave at a traffic level the caller names, and what it may answer.
//!
//! Observation reports what a substrate holds; a prediction reports what no substrate holds. Per
//! entity an engine returns [`Figures`]: a cost as a [`PredictedRate`] per hour (never an amount
//! owed), CPU and latency headroom, an expected error rate, and optionally a resilience verdict
//! under a named failure and a right-size hint, each block carrying the level it was predicted
//! `at` and its [`Provenance`]. A [`Prediction`] is a [`Report`], accounting for every asked
//! entity exactly once (predicted, or unpredicted with an [`UnpredictedReason`]), or a
//! [`Refusal`] with a [`RefusalCause`] and its remedy and no figures at all.
//!
//! The engine is handed the entities, their edges and the traffic level, and no credential:
//! the [`Request`] has no field for one, and [`screen_request`] walks every value and key before
//! anything is sent. The engine is named by a variable chain ([`engine_from`]) and, over HTTP,
//! sent a bearer token from its own chain ([`token_from`]) that is never printed. Two transports
//! ship: [`HttpTransport`] and [`CommandTransport`], and [`wire_refusal`] turns every wire
//! condition into a refusal. [`predict()`] runs the whole sequence in chant's own wire version;
//! [`compare_figures`] says on which axes two figures may not be differenced silently;
//! [`render`] prints the outcome; [`conformance`] is the suite a lexicon author runs.
//! [`estate`] builds the asks of an env from its declared or live [graph](crate::graph), and
//! [`delta`] differences two reports, marked on every axis [`compare_figures`] reports.
//!
//! ```
//! use chant_runtime::behaviour::{Ask, EnvVars, Request, RequestEntity, TrafficLevel, TransportOptions, predict};
//!
//! let request = Request::new("acme", TrafficLevel::rps(100.0)?)
//!     .entity(RequestEntity::new("web", "service").prop("replicas", 3));
//! // No variable names an engine: a refusal that says which variable to set, not a zero.
//! let outcome = predict(&Ask::new(request), &EnvVars::new(), TransportOptions::default())?;
//! let refusal = outcome.refusal().expect("no engine is configured");
//! assert_eq!(refusal.cause().as_str(), "no-engine");
//! assert!(refusal.remedy().contains("CHANT_BEHAVIOUR_ENGINE_ACME"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod compare;
pub mod conformance;
pub mod delta;
pub mod engine;
pub mod estate;
pub mod figure;
pub mod predict;
pub mod refusal;
pub mod render;
pub mod report;
pub mod request;
pub mod screen;
pub mod transport;
pub mod wire;

pub use compare::{MISMATCHES, Mismatch, compare_figures, is_comparable};
pub use delta::{EntityDelta, ReportDelta, render_deltas, report_delta};
pub use engine::{EngineAddress, EnvVars, Resolved, Token, engine_from, token_from};
pub use estate::{asks_from_graph, pointed_entity, withheld_reason};
pub use figure::{
    Basis, Currency, EngineIdentity, FigureError, Figures, Headroom, PredictedRate, Provenance, Resilience,
    ResilienceVerdict,
};
pub use predict::{BehaviourError, predict};
pub use refusal::{
    Refusal, RefusalCause, credential_in_request_refusal, no_engine_refusal, out_of_credit_refusal, over_quota_refusal,
    unreachable_refusal,
};
pub use render::{colour_enabled, render_prediction, render_refusal, render_report};
pub use report::{
    EdgeCoverage, Prediction, Report, ReportBuilder, ReportError, ReportMeta, Unpredicted, UnpredictedReason,
};
pub use request::{Ask, Edge, EdgeRelation, Request, RequestEntity, RequestError, TrafficLevel};
pub use screen::{CredentialError, CredentialForm, Issuer, screen_request};
pub use transport::{
    CommandTransport, EngineTransport, HttpTransport, Transport, TransportOptions, WireCondition, transport_for,
    wire_refusal,
};
