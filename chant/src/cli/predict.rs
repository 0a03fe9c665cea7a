//! `lifecycle predict <env> --traffic <rps> [--live] [--failure <name>] [--json]
//! [--compare declared,live] [--timeout <duration>]`: how the env's estate would behave at a
//! traffic level, asked of the configured behaviour engine ([`crate::behaviour`]).
//!
//! The request of each lexicon is built from the declared graph (or, with `--live`, from the
//! observed one), with the graph's edges when they were computed ([`asks_from_graph`]), screened,
//! and sent through the engine chain (`CHANT_BEHAVIOUR_ENGINE_<LEXICON>`,
//! `CHANT_BEHAVIOUR_ENGINE`, `BEHAVIOUR_ENGINE`) and its transport. A report prints plain, amber
//! when partial; a refusal prints red with its cause, the variable or address, and the remedy. A
//! request the screen finds a credential in is never sent: it prints red naming the entity and
//! property, and no engine is even resolved. `--compare declared,live` predicts both and prints
//! the delta (live minus declared) per entity, marked on every axis `compare_figures` reports.
//!
//! Exit codes: 0 every lexicon answered (a partial answer included), 1 a refusal, a screened
//! request or a failure, 2 usage errors.

use clap::Args;
use serde::Serialize;

use super::error::{print, println};
use super::{Binary, CommandError, Exit};
use crate::behaviour::{
    EnvVars, Prediction, ReportDelta, TrafficLevel, TransportOptions, asks_from_graph, pointed_entity, predict,
    render_deltas, render_prediction, report_delta,
};
use crate::graph::Source;

/// Predict how an env's estate behaves at a traffic level
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// The env.
    pub env: String,
    /// The traffic level, in requests per second.
    #[arg(long, value_name = "RPS")]
    pub traffic: String,
    /// Build the request from the observed estate and the live graph, not the declaration.
    #[arg(long, conflicts_with = "compare")]
    pub live: bool,
    /// Ask for a resilience verdict under this failure (`one zone lost`).
    #[arg(long, value_name = "NAME")]
    pub failure: Option<String>,
    /// Print one JSON document on one line.
    #[arg(long)]
    pub json: bool,
    /// Predict both and print the delta: `declared,live` (live minus declared) or `live,declared`.
    #[arg(long, value_name = "A,B")]
    pub compare: Option<String>,
    /// How long the engine may take to answer.
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub timeout: String,
}

/// Why a lexicon's request was not sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Screened {
    /// The screen's message (the form and where, never the value).
    pub error: String,
    /// The entity it points into.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
    /// The property.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
}

/// One lexicon's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LexiconPrediction {
    /// The lexicon.
    pub lexicon: String,
    /// The engine's report or refusal, when the request was sent (or refused before sending).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<Prediction>,
    /// The screen's refusal, when the request held a credential and was never sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screened: Option<Screened>,
}

impl LexiconPrediction {
    fn answered(&self) -> bool {
        matches!(self.prediction, Some(Prediction::Report(_)))
    }
}

/// The predictions from one source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourcePredictions {
    /// Declared or live.
    pub source: Source,
    /// One per lexicon with something to ask.
    pub predictions: Vec<LexiconPrediction>,
}

/// One lexicon's delta under `--compare`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LexiconDelta {
    /// The lexicon.
    pub lexicon: String,
    /// `b - a`.
    pub delta: ReportDelta,
}

/// What `lifecycle predict --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictOutput {
    /// The document's version.
    pub version: u32,
    /// The env.
    pub env: String,
    /// The level asked for.
    pub traffic: TrafficLevel,
    /// The failure asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// One entry per source: one, or two under `--compare`.
    pub sources: Vec<SourcePredictions>,
    /// Under `--compare`: the deltas, second source minus first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deltas: Vec<LexiconDelta>,
}

fn parse_compare(text: &str) -> Result<[Source; 2], CommandError> {
    match text {
        "declared,live" => Ok([Source::Declared, Source::Live]),
        "live,declared" => Ok([Source::Live, Source::Declared]),
        other => Err(CommandError::usage(format!(
            "--compare {other:?} is not a pair this command knows: use --compare declared,live (or live,declared)"
        ))),
    }
}

/// Predicts every lexicon of `env` from `source`; returns the predictions and the project's
/// redactor, for everything printed.
///
/// # Errors
///
/// Project, declaration and graph errors, as failures.
pub fn predict_source(
    binary: Binary,
    env: &str,
    source: Source,
    traffic: TrafficLevel,
    failure: Option<&str>,
    vars: &EnvVars,
    options: TransportOptions,
) -> Result<(SourcePredictions, crate::redact::Redactor), CommandError> {
    let (graph, project) = super::graph::build(binary, env, source == Source::Live)?;
    let mut predictions = Vec::new();
    let mut asks = asks_from_graph(&graph, traffic, failure);
    if source == Source::Declared
        && let Some(files) = declared_files_ask(&project, env, traffic, failure)?
    {
        // The files lexicon's own request: each file's mode and size, never its content.
        match asks.iter_mut().find(|a| a.request.lexicon == files.request.lexicon) {
            Some(ask) => *ask = files,
            None => asks.push(files),
        }
    }
    for ask in asks {
        let lexicon = ask.request.lexicon.clone();
        let outcome = match predict(&ask, vars, options) {
            Ok(prediction) => LexiconPrediction { lexicon, prediction: Some(prediction), screened: None },
            Err(crate::behaviour::BehaviourError::Credential(e)) => {
                let pointed = pointed_entity(&ask.request, &e.pointer);
                LexiconPrediction {
                    lexicon,
                    prediction: None,
                    screened: Some(Screened {
                        error: e.to_string(),
                        entity: pointed.map(|(n, _)| n.to_owned()),
                        property: pointed.and_then(|(_, p)| p).map(str::to_owned),
                    }),
                }
            }
            Err(e) => return Err(CommandError::failed(e).redact(&project.redactor)),
        };
        predictions.push(outcome);
    }
    Ok((SourcePredictions { source, predictions }, project.redactor))
}

/// The declared files of `env` as [`crate::behaviour::files::files_ask`] asks about them (mode
/// and bytes), bound to the env's root; `None` when the env declares no files.
fn declared_files_ask(
    project: &crate::project::Project,
    env: &str,
    traffic: TrafficLevel,
    failure: Option<&str>,
) -> Result<Option<crate::behaviour::Ask>, CommandError> {
    use crate::lexicon::Declaration;
    let declaration =
        crate::lexicon::declaration(env).map_err(|e| CommandError::failed(e).redact(&project.redactor))?;
    let Some(files) = declaration.as_ref().and_then(|d| d.get::<crate::lexicon::files::FilesDeclaration>()) else {
        return Ok(None);
    };
    let none = std::collections::BTreeMap::new();
    let values = project.config.env(env).map(crate::config::EnvBinding::values).unwrap_or(&none);
    let binding = crate::lexicon::Binding::new(env, &project.config.project.name, &project.root, values);
    let lexicon = files.bind(&binding, None).map_err(|e| CommandError::failed(e).redact(&project.redactor))?;
    let mut ask = crate::behaviour::files::files_ask(&lexicon, traffic);
    if let Some(failure) = failure {
        ask.request = ask.request.failure(failure);
    }
    Ok(Some(ask))
}

fn render_source(out: &mut String, source: &SourcePredictions, headed: bool) {
    const RED: &str = "\x1b[31m";
    const RESET: &str = "\x1b[0m";
    if headed {
        out.push_str(&format!("{}:\n", source.source.as_str()));
    }
    if source.predictions.is_empty() {
        out.push_str("nothing to predict: the env has no entities\n");
    }
    for p in &source.predictions {
        if let Some(prediction) = &p.prediction {
            out.push_str(&render_prediction(prediction, true));
        } else if let Some(s) = &p.screened {
            let at = match (&s.entity, &s.property) {
                (Some(e), Some(prop)) => format!(" (entity {e}, property {prop})"),
                (Some(e), None) => format!(" (entity {e})"),
                _ => String::new(),
            };
            out.push_str(&format!(
                "{RED}behaviour request of {} refused by the screen{at}: nothing was sent{RESET}\n  detail: {}\n",
                p.lexicon, s.error
            ));
        }
    }
}

/// Runs `lifecycle predict`.
pub fn cmd_predict(binary: Binary, args: &PredictArgs) -> Result<Exit, CommandError> {
    let rps: f64 = args.traffic.trim().parse().map_err(|_| {
        CommandError::usage(format!(
            "--traffic {:?} is not a number of requests per second (e.g. --traffic 100)",
            args.traffic
        ))
    })?;
    let traffic = TrafficLevel::rps(rps)?;
    super::graph::stock_refusal(
        binary,
        &args.env,
        &format!("lifecycle predict {} --traffic {}", args.env, args.traffic),
    )?;
    let timeout = crate::duration::parse(&args.timeout)
        .map_err(|e| CommandError::usage_with(format!("--timeout {:?}", args.timeout), e))?;
    let sources = match &args.compare {
        Some(pair) => parse_compare(pair)?.to_vec(),
        None if args.live => vec![Source::Live],
        None => vec![Source::Declared],
    };
    let vars = EnvVars::from_process();
    let options = TransportOptions { timeout, ..TransportOptions::default() };
    let mut output = PredictOutput {
        version: 1,
        env: args.env.clone(),
        traffic,
        failure: args.failure.clone(),
        sources: Vec::new(),
        deltas: Vec::new(),
    };
    let mut redactor = crate::redact::Redactor::default();
    for source in sources {
        let (predictions, project_redactor) =
            predict_source(binary, &args.env, source, traffic, args.failure.as_deref(), &vars, options)?;
        output.sources.push(predictions);
        redactor = project_redactor;
    }
    if let [a, b] = output.sources.as_slice() {
        for pa in &a.predictions {
            let Some(ra) = pa.prediction.as_ref().and_then(Prediction::report) else { continue };
            let Some(rb) = b
                .predictions
                .iter()
                .find(|p| p.lexicon == pa.lexicon)
                .and_then(|p| p.prediction.as_ref())
                .and_then(Prediction::report)
            else {
                continue;
            };
            output.deltas.push(LexiconDelta { lexicon: pa.lexicon.clone(), delta: report_delta(ra, rb) });
        }
    }
    if args.json {
        let line = super::error::to_json(&output, "the answer")?;
        println(&redactor.redact(&line))?;
    } else {
        let mut text = String::new();
        let headed = output.sources.len() > 1;
        for source in &output.sources {
            render_source(&mut text, source, headed);
        }
        if let [a, b] = output.sources.as_slice() {
            text.push_str(&format!("delta ({} minus {}):\n", b.source.as_str(), a.source.as_str()));
            if output.deltas.is_empty() {
                text.push_str("  no lexicon was predicted on both sides\n");
            }
            for d in &output.deltas {
                text.push_str(&format!("{}:\n", d.lexicon));
                text.push_str(&render_deltas(&d.delta, a.source.as_str(), b.source.as_str()));
            }
        }
        print(&redactor.redact(&text))?;
    }
    let all_answered = output.sources.iter().all(|s| s.predictions.iter().all(LexiconPrediction::answered));
    Ok(if all_answered { Exit::Done } else { Exit::Failed })
}
