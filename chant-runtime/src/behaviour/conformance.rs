//! The behaviour conformance suite: scenarios a lexicon author runs against their own predict
//! method and a real (local) engine, to prove the method keeps the behaviour contract.
//!
//! A [`BehaviourScenario`] names the entities asked about (`declared`), a `run` closure that calls
//! the lexicon's predict method, and what the author expects: a report (with names that must be
//! predicted or unpredicted), a refusal (with its cause and, optionally, the variable it names),
//! or a credential error. [`BehaviourSuite::run`] checks, per scenario and collecting every
//! violation rather than stopping at the first:
//!
//! - **a report**: every declared entity is in exactly one of `entities` and `unpredicted`, and
//!   no other name is in either; every figure's `at` is the report's; the lexicon is the suite's;
//!   the report survives a JSON round trip; every reason, as written in JSON, is one of the four
//!   (never `no-credentials`);
//! - **a refusal**: it has a remedy; its JSON carries no figure; it renders with its cause and
//!   remedy, in red with colour and with no escape code without;
//! - **secrets**: no string registered with [`BehaviourSuite::never_print`] appears in the
//!   outcome's `Debug`, its JSON, its rendering or an error's message, whatever the engine echoed;
//! - **expectations**: the outcome's arm, the names, reasons, causes and variables expected.
//!
//! [`standard_refusals`] builds the scenarios every lexicon must pass with nothing but an
//! environment: no engine named, an HTTP engine without a token, an engine program not on `PATH`,
//! and an engine address where nothing listens.

use std::collections::BTreeSet;
use std::fmt;
use std::rc::Rc;

use super::engine::{EnvVars, engine_variables, token_variables};
use super::predict::BehaviourError;
use super::refusal::RefusalCause;
use super::render::render_prediction;
use super::report::{Prediction, Report, UnpredictedReason};

/// What a scenario's `run` closure does: call the lexicon's predict method.
pub type RunFn = Box<dyn Fn() -> Result<Prediction, BehaviourError>>;

/// The outcome a scenario expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// A report.
    Report,
    /// A refusal, with this cause when given, naming this variable when given.
    Refusal {
        /// The cause.
        cause: Option<RefusalCause>,
        /// The variable the refusal must name.
        variable: Option<String>,
    },
    /// A [`BehaviourError::Credential`]: nothing sent.
    CredentialError,
}

/// One behaviour conformance scenario.
pub struct BehaviourScenario {
    /// The test title.
    pub name: String,
    /// The entity names the lexicon is asked about.
    pub declared: Vec<String>,
    /// Calls the lexicon's predict method.
    pub run: RunFn,
    /// The expected arm.
    pub expected: Expected,
    /// Names that must be predicted.
    pub expect_predicted: Vec<String>,
    /// Names that must be unpredicted (with the reason, when given).
    pub expect_unpredicted: Vec<(String, Option<UnpredictedReason>)>,
}

impl fmt::Debug for BehaviourScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BehaviourScenario")
            .field("name", &self.name)
            .field("declared", &self.declared)
            .field("expected", &self.expected)
            .field("expect_predicted", &self.expect_predicted)
            .field("expect_unpredicted", &self.expect_unpredicted)
            .finish_non_exhaustive()
    }
}

impl BehaviourScenario {
    /// Creates a scenario that expects a report.
    pub fn new<S: Into<String>>(
        name: impl Into<String>,
        declared: impl IntoIterator<Item = S>,
        run: impl Fn() -> Result<Prediction, BehaviourError> + 'static,
    ) -> Self {
        BehaviourScenario {
            name: name.into(),
            declared: declared.into_iter().map(Into::into).collect(),
            run: Box::new(run),
            expected: Expected::Report,
            expect_predicted: Vec::new(),
            expect_unpredicted: Vec::new(),
        }
    }

    /// Expects these names predicted.
    #[must_use]
    pub fn expect_predicted<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.expect_predicted.extend(names.into_iter().map(Into::into));
        self
    }

    /// Expects this name unpredicted with exactly this reason.
    #[must_use]
    pub fn expect_unpredicted_because(mut self, name: impl Into<String>, reason: UnpredictedReason) -> Self {
        self.expect_unpredicted.push((name.into(), Some(reason)));
        self
    }

    /// Expects a refusal with this cause.
    #[must_use]
    pub fn expect_refusal(mut self, cause: RefusalCause) -> Self {
        self.expected = Expected::Refusal { cause: Some(cause), variable: None };
        self
    }

    /// Expects a refusal with this cause naming this variable.
    #[must_use]
    pub fn expect_refusal_naming(mut self, cause: RefusalCause, variable: impl Into<String>) -> Self {
        self.expected = Expected::Refusal { cause: Some(cause), variable: Some(variable.into()) };
        self
    }

    /// Expects a credential error: the request must not be sent.
    #[must_use]
    pub fn expect_credential_error(mut self) -> Self {
        self.expected = Expected::CredentialError;
        self
    }
}

/// One broken rule: the observation suite's type, shared so both suites report alike.
pub use chant_lexicon::observe::conformance::Violation;

/// A failed conformance run: every violation found. Returned by [`BehaviourSuite::run`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("lexicon {lexicon} breaks the behaviour contract ({} violations):\n{}", violations.len(), violations.iter().map(|v| format!("  {v}")).collect::<Vec<_>>().join("\n"))]
pub struct BehaviourConformanceError {
    /// The lexicon.
    pub lexicon: String,
    /// Every violation, in scenario order.
    pub violations: Vec<Violation>,
}

/// A set of scenarios for one lexicon.
#[derive(Debug)]
pub struct BehaviourSuite {
    /// The lexicon's name.
    pub lexicon: String,
    /// The scenarios, run in order.
    pub scenarios: Vec<BehaviourScenario>,
    /// Strings that must never be printed (tokens the engines were given).
    secrets: Vec<String>,
}

impl BehaviourSuite {
    /// Creates an empty suite.
    pub fn new(lexicon: impl Into<String>) -> Self {
        BehaviourSuite { lexicon: lexicon.into(), scenarios: Vec::new(), secrets: Vec::new() }
    }

    /// Adds a scenario.
    #[must_use]
    pub fn scenario(mut self, scenario: BehaviourScenario) -> Self {
        self.scenarios.push(scenario);
        self
    }

    /// Adds several scenarios.
    #[must_use]
    pub fn scenarios(mut self, scenarios: impl IntoIterator<Item = BehaviourScenario>) -> Self {
        self.scenarios.extend(scenarios);
        self
    }

    /// Registers a string (a token) that no outcome may ever print.
    #[must_use]
    pub fn never_print(mut self, secret: impl Into<String>) -> Self {
        self.secrets.push(secret.into());
        self
    }

    /// Runs every scenario and checks every rule.
    ///
    /// # Errors
    ///
    /// Every violation found, across all scenarios.
    pub fn run(&self) -> Result<(), BehaviourConformanceError> {
        let violations: Vec<Violation> = self.scenarios.iter().flat_map(|s| self.check(s)).collect();
        if violations.is_empty() {
            Ok(())
        } else {
            Err(BehaviourConformanceError { lexicon: self.lexicon.clone(), violations })
        }
    }

    fn check(&self, scenario: &BehaviourScenario) -> Vec<Violation> {
        let mut out = Vec::new();
        let mut fail = |rule: &'static str, detail: String| {
            out.push(Violation { scenario: scenario.name.clone(), rule, detail });
        };
        let outcome = (scenario.run)();
        let shown = match &outcome {
            Ok(p) => format!(
                "{p:?}\n{}\n{}\n{}",
                serde_json::to_string(p).unwrap_or_default(),
                render_prediction(p, true),
                render_prediction(p, false)
            ),
            Err(e) => format!("{e:?}\n{e}"),
        };
        for secret in &self.secrets {
            if !secret.is_empty() && shown.contains(secret.as_str()) {
                fail("never-print", "a registered secret appears in the outcome".into());
            }
        }
        match (&scenario.expected, outcome) {
            (Expected::Report, Ok(Prediction::Report(report))) => self.check_report(scenario, &report, &mut fail),
            (Expected::Refusal { cause, variable }, Ok(Prediction::Refusal(refusal))) => {
                let p = Prediction::Refusal(refusal.clone());
                check_refusal_shape(&p, &mut fail);
                if refusal.lexicon() != self.lexicon {
                    fail("lexicon", format!("the refusal is for lexicon {}", refusal.lexicon()));
                }
                if let Some(cause) = cause
                    && refusal.cause() != *cause
                {
                    fail(
                        "expect-refusal",
                        format!("refused as {}, expected {}", refusal.cause().as_str(), cause.as_str()),
                    );
                }
                if let Some(variable) = variable
                    && refusal.variable() != Some(variable.as_str())
                {
                    fail("expect-refusal", format!("the refusal names {:?}, expected {variable}", refusal.variable()));
                }
            }
            (Expected::CredentialError, Err(BehaviourError::Credential(_))) => {}
            (expected, Ok(p)) => fail("expect-outcome", format!("expected {expected:?}, got {}", arm(&p))),
            (expected, Err(e)) => fail("expect-outcome", format!("expected {expected:?}, got the error: {e}")),
        }
        out
    }

    fn check_report(&self, scenario: &BehaviourScenario, report: &Report, fail: &mut impl FnMut(&'static str, String)) {
        let declared: BTreeSet<&str> = scenario.declared.iter().map(String::as_str).collect();
        for name in &declared {
            match (report.entities().contains_key(*name), report.unpredicted().contains_key(*name)) {
                (true, true) => fail("accounted", format!("{name} is both predicted and unpredicted")),
                (false, false) => fail("accounted", format!("{name} is in neither entities nor unpredicted")),
                _ => {}
            }
        }
        for name in report.entities().keys().chain(report.unpredicted().keys()) {
            if !declared.contains(name.as_str()) {
                fail("accounted", format!("{name} was not asked about"));
            }
        }
        if report.meta().lexicon != self.lexicon {
            fail("lexicon", format!("the report is for lexicon {}", report.meta().lexicon));
        }
        for (name, figures) in report.entities() {
            if figures.at != report.meta().at {
                fail(
                    "one-level",
                    format!("{name} was predicted at {}, the report is at {}", figures.at, report.meta().at),
                );
            }
        }
        let p = Prediction::Report(report.clone());
        match serde_json::to_value(&p) {
            Ok(json) => {
                let allowed: Vec<&str> = UnpredictedReason::ALL.iter().map(|r| r.as_str()).collect();
                if let Some(map) = json.pointer("/report/unpredicted").and_then(|u| u.as_object()) {
                    for (name, verdict) in map {
                        let reason = verdict.get("reason").and_then(|r| r.as_str()).unwrap_or("");
                        if !allowed.contains(&reason) {
                            fail("reason-totality", format!("{name} has reason {reason:?}"));
                        }
                    }
                }
                match serde_json::from_value::<Prediction>(json) {
                    Ok(back) if back == p => {}
                    Ok(_) => fail("round-trip", "the report does not survive a JSON round trip".into()),
                    Err(e) => fail("round-trip", format!("the report's JSON does not read back: {e}")),
                }
            }
            Err(e) => fail("round-trip", format!("the report does not serialise: {e}")),
        }
        for name in &scenario.expect_predicted {
            if !report.entities().contains_key(name) {
                fail("expect-predicted", format!("{name} is not predicted"));
            }
        }
        for (name, reason) in &scenario.expect_unpredicted {
            match report.unpredicted().get(name) {
                None => fail("expect-unpredicted", format!("{name} is not unpredicted")),
                Some(u) => {
                    if let Some(reason) = reason
                        && u.reason != *reason
                    {
                        fail(
                            "expect-unpredicted",
                            format!("{name} is unpredicted as {}, expected {}", u.reason.as_str(), reason.as_str()),
                        );
                    }
                }
            }
        }
    }
}

fn arm(p: &Prediction) -> String {
    match p {
        Prediction::Report(_) => "a report".into(),
        Prediction::Refusal(r) => format!("a refusal ({})", r.cause().as_str()),
    }
}

fn check_refusal_shape(p: &Prediction, fail: &mut impl FnMut(&'static str, String)) {
    let Prediction::Refusal(refusal) = p else {
        return;
    };
    if refusal.remedy().trim().is_empty() {
        fail("refusal-shape", "the refusal has no remedy".into());
    }
    if let Ok(json) = serde_json::to_value(p) {
        let figure_keys = ["entities", "unpredicted", "at", "cost", "headroom", "errorRate", "provenance"];
        if let Some(map) = json.get("refusal").and_then(|r| r.as_object())
            && let Some(key) = map.keys().find(|k| figure_keys.contains(&k.as_str()))
        {
            fail("refusal-shape", format!("the refusal carries {key}"));
        }
    }
    let coloured = render_prediction(p, true);
    let plain = render_prediction(p, false);
    if !coloured.starts_with("\x1b[31m") {
        fail("refusal-render", "the refusal does not render red".into());
    }
    if plain.contains('\x1b') {
        fail("refusal-render", "the refusal renders colour with colour off".into());
    }
    if !plain.contains(refusal.cause().as_str()) || !plain.contains(refusal.remedy()) {
        fail("refusal-render", "the rendering lacks the cause or the remedy".into());
    }
}

/// What the standard scenarios call: the lexicon's predict method run in a given environment.
pub type PredictIn = Rc<dyn Fn(&EnvVars) -> Result<Prediction, BehaviourError>>;

/// The token the standard scenarios set; the suite must never print it.
pub const CONFORMANCE_TOKEN: &str = "chant-conformance-token-4f1d2a9c";

/// The refusal scenarios every lexicon must pass, driven by the environment alone: no engine
/// named; an HTTP engine with no token (refused before sending, naming the token variable); an
/// engine program that is not on `PATH`; and an HTTP engine on a loopback port where nothing
/// listens. Register [`CONFORMANCE_TOKEN`] with [`BehaviourSuite::never_print`].
pub fn standard_refusals<S: Into<String>>(
    lexicon: &str,
    declared: impl IntoIterator<Item = S>,
    predict: PredictIn,
) -> Vec<BehaviourScenario> {
    let declared: Vec<String> = declared.into_iter().map(Into::into).collect();
    let [engine_var, ..] = engine_variables(lexicon);
    let [token_var, ..] = token_variables(lexicon);
    let scenario = |name: &str, env: EnvVars| {
        let predict = Rc::clone(&predict);
        BehaviourScenario::new(name, declared.clone(), move || predict(&env))
    };
    let closed = closed_loopback_port();
    vec![
        scenario("nothing names an engine", EnvVars::new().with("PATH", "/usr/bin:/bin"))
            .expect_refusal(RefusalCause::NoEngine),
        scenario("an HTTP engine with no token", EnvVars::new().with(engine_var.clone(), "http://127.0.0.1:9/predict"))
            .expect_refusal_naming(RefusalCause::NoEngine, token_var.clone()),
        scenario(
            "an engine program that is not on PATH",
            EnvVars::new()
                .with(engine_var.clone(), "chant-no-such-behaviour-engine")
                .with("PATH", "/nonexistent/chant-conformance"),
        )
        .expect_refusal_naming(RefusalCause::EngineUnreachable, engine_var.clone()),
        scenario(
            "an engine address where nothing listens",
            EnvVars::new()
                .with(engine_var.clone(), format!("http://127.0.0.1:{closed}/predict"))
                .with(token_var, CONFORMANCE_TOKEN),
        )
        .expect_refusal_naming(RefusalCause::EngineUnreachable, engine_var),
    ]
}

/// A loopback port nothing listens on: one the OS just handed out and took back.
fn closed_loopback_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0)).and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(9)
}
