//! Rendering a prediction for a terminal: a refusal in red with its cause and remedy, a partial
//! answer in amber, a full one plain.
//!
//! A refusal is red rather than amber because every figure is gone, not merely delayed. Colour is
//! off when `NO_COLOR` is set to anything non-empty ([`colour_enabled`]); the words are the same
//! either way, so nothing is said by colour alone.

use std::fmt::Write as _;

use super::engine::EnvVars;
use super::refusal::Refusal;
use super::report::{Prediction, Report};

const RED: &str = "\x1b[31m";
const AMBER: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";

/// Returns false when `NO_COLOR` is set to a non-empty value.
pub fn colour_enabled(env: &EnvVars) -> bool {
    env.get("NO_COLOR").is_none()
}

fn paint(text: &str, colour: &str, on: bool) -> String {
    if on { format!("{colour}{text}{RESET}") } else { text.to_owned() }
}

/// Renders a refusal: a red headline with the cause, then the detail and the remedy.
pub fn render_refusal(refusal: &Refusal, colour: bool) -> String {
    let cause = refusal.cause();
    let mut out = paint(
        &format!("behaviour refused for {} ({}): {}", refusal.lexicon(), cause.as_str(), cause.text()),
        RED,
        colour,
    );
    out.push('\n');
    if let Some(engine) = refusal.engine() {
        let variable = refusal.variable().map(|v| format!(" (engine from {v})")).unwrap_or_default();
        let _ = writeln!(out, "  engine: {engine}{variable}");
    }
    if let Some(detail) = refusal.detail() {
        let _ = writeln!(out, "  detail: {detail}");
    }
    let _ = writeln!(out, "  remedy: {}", refusal.remedy());
    out
}

/// Renders a report: one line per predicted entity, then, in amber, the entities without figures.
pub fn render_report(report: &Report, colour: bool) -> String {
    let meta = report.meta();
    let asked = report.entities().len() + report.unpredicted().len();
    let headline =
        format!("behaviour of {} at {}: {} of {asked} predicted", meta.lexicon, meta.at, report.entities().len());
    let mut out =
        if report.is_partial() { paint(&format!("{headline} (partial answer)"), AMBER, colour) } else { headline };
    out.push('\n');
    for (name, f) in report.entities() {
        let _ = write!(
            out,
            "  {name}: {} ({}, {} {}), cpu headroom {}, latency headroom {}, error rate {}",
            f.cost,
            f.provenance.basis.as_str(),
            f.provenance.engine.name,
            f.provenance.engine.version,
            f.headroom.cpu(),
            f.headroom.latency(),
            f.error_rate
        );
        if let Some(r) = &f.resilience {
            let _ = write!(out, ", {} under {}", r.verdict.as_str(), r.failure);
        }
        if let Some(hint) = &f.right_size {
            let _ = write!(out, ", right-size: {hint}");
        }
        out.push('\n');
    }
    for (name, u) in report.unpredicted() {
        let mut line = format!("  {name}: not predicted ({}): {}", u.reason.as_str(), u.reason.text());
        if let Some(detail) = &u.detail {
            line.push_str(": ");
            line.push_str(detail);
        }
        out.push_str(&paint(&line, AMBER, colour));
        out.push('\n');
    }
    out
}

/// Renders either arm of a prediction.
pub fn render_prediction(prediction: &Prediction, colour: bool) -> String {
    match prediction {
        Prediction::Report(report) => render_report(report, colour),
        Prediction::Refusal(refusal) => render_refusal(refusal, colour),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::refusal::no_engine_refusal;
    use crate::behaviour::report::tests::figures;
    use crate::behaviour::report::{ReportBuilder, Unpredicted, UnpredictedReason};
    use crate::behaviour::request::{Ask, Request, RequestEntity, TrafficLevel};

    fn report(partial: bool) -> Report {
        let mut request =
            Request::new("acme", TrafficLevel::rps(100.0).unwrap()).entity(RequestEntity::new("web", "svc"));
        if partial {
            request = request.entity(RequestEntity::new("db", "table"));
        }
        let ask = Ask::new(request);
        let mut b = ReportBuilder::new(&ask);
        b.predicted("web", figures(100.0)).unwrap();
        if partial {
            b.unpredicted("db", Unpredicted::new(UnpredictedReason::UnsupportedKind)).unwrap();
        }
        b.finish().unwrap()
    }

    #[test]
    fn a_refusal_is_red_with_cause_and_remedy_unless_no_color() {
        let r = no_engine_refusal("acme");
        let coloured = render_refusal(&r, true);
        assert!(coloured.starts_with("\x1b[31mbehaviour refused for acme (no-engine)"), "{coloured}");
        assert!(coloured.contains("remedy: set CHANT_BEHAVIOUR_ENGINE_ACME"));
        let plain = render_refusal(&r, false);
        assert!(!plain.contains('\x1b'));
        assert_eq!(plain, coloured.replace(RED, "").replace(RESET, ""));
    }

    #[test]
    fn a_partial_answer_is_amber_and_a_full_one_plain() {
        let partial = render_report(&report(true), true);
        assert!(partial.starts_with("\x1b[33mbehaviour of acme at 100 rps: 1 of 2 predicted (partial answer)"));
        assert!(partial.contains("\x1b[33m  db: not predicted (unsupported-kind)"));
        assert!(!partial.contains(RED));
        assert!(!render_report(&report(true), false).contains('\x1b'));
        let full = render_report(&report(false), true);
        assert!(!full.contains('\x1b'), "{full}");
        assert!(full.contains("web: 1 USD/hour (modeled, e 1)"));
    }

    #[test]
    fn no_color_turns_colour_off() {
        assert!(colour_enabled(&EnvVars::new()));
        assert!(colour_enabled(&EnvVars::new().with("NO_COLOR", "")));
        assert!(!colour_enabled(&EnvVars::new().with("NO_COLOR", "1")));
    }
}
