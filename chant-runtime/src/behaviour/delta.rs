//! The delta between two reports of one lexicon (the declared estate's and the live one's), per
//! entity, marked with every axis [`compare_figures`] reports.
//!
//! A delta is `b - a` on each figure (cost per hour, CPU and latency headroom, error rate). The
//! subtraction is always done, since a person may want the number, and never shown bare when the
//! pair is not comparable: [`EntityDelta::axes`] carries every mismatched axis, in display order,
//! and [`render_deltas`] prints them beside the numbers. A currency mismatch leaves the cost
//! delta out altogether, because chant converts nothing and USD minus EUR is not a number. An
//! entity predicted on one side only is listed as such, never differenced against a zero.

use std::fmt::Write as _;

use serde::Serialize;

use super::compare::{Mismatch, compare_figures};
use super::report::Report;

/// One entity's delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntityDelta {
    /// The entity.
    pub name: String,
    /// Every axis on which the two figures disagree; empty when the delta means what it says.
    pub axes: Vec<Mismatch>,
    /// Cost per hour, `b - a`; absent across currencies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_hour: Option<f64>,
    /// The cost currency, when the delta has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// CPU headroom, `b - a`.
    pub cpu_headroom: f64,
    /// Latency headroom, `b - a`.
    pub latency_headroom: f64,
    /// Error rate, `b - a`.
    pub error_rate: f64,
}

/// The delta between two reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportDelta {
    /// Entities predicted on both sides.
    pub entities: Vec<EntityDelta>,
    /// Entities predicted only in `a`.
    pub only_a: Vec<String>,
    /// Entities predicted only in `b`.
    pub only_b: Vec<String>,
}

/// Computes `b - a` for every entity both reports predicted.
pub fn report_delta(a: &Report, b: &Report) -> ReportDelta {
    let mut entities = Vec::new();
    for (name, fa) in a.entities() {
        let Some(fb) = b.entities().get(name) else { continue };
        let axes = compare_figures(fa, fb);
        let same_currency = !axes.contains(&Mismatch::MixedCurrency);
        entities.push(EntityDelta {
            name: name.clone(),
            cost_per_hour: same_currency.then(|| fb.cost.value_per_hour() - fa.cost.value_per_hour()),
            currency: same_currency.then(|| fa.cost.currency().as_str().to_owned()),
            cpu_headroom: fb.headroom.cpu() - fa.headroom.cpu(),
            latency_headroom: fb.headroom.latency() - fa.headroom.latency(),
            error_rate: fb.error_rate - fa.error_rate,
            axes,
        });
    }
    let only =
        |x: &Report, y: &Report| x.entities().keys().filter(|n| !y.entities().contains_key(*n)).cloned().collect();
    ReportDelta { entities, only_a: only(a, b), only_b: only(b, a) }
}

/// Renders a delta, one line per entity, every non-comparable one marked with its axes.
pub fn render_deltas(delta: &ReportDelta, a: &str, b: &str) -> String {
    let mut out = String::new();
    for d in &delta.entities {
        let cost = match (&d.cost_per_hour, &d.currency) {
            (Some(c), Some(cur)) => format!("cost {c:+} {cur}/hour"),
            _ => "cost not differenced (mixed currency)".to_owned(),
        };
        let mark = if d.axes.is_empty() {
            "comparable".to_owned()
        } else {
            format!("NOT COMPARABLE: {}", d.axes.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", "))
        };
        let _ = writeln!(
            out,
            "  {}: {cost}, cpu headroom {:+}, latency headroom {:+}, error rate {:+} [{mark}]",
            d.name, d.cpu_headroom, d.latency_headroom, d.error_rate
        );
    }
    for name in &delta.only_a {
        let _ = writeln!(out, "  {name}: predicted in {a} only");
    }
    for name in &delta.only_b {
        let _ = writeln!(out, "  {name}: predicted in {b} only");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::figure::{Basis, Currency, PredictedRate};
    use crate::behaviour::report::ReportBuilder;
    use crate::behaviour::report::tests::figures;
    use crate::behaviour::request::{Ask, Request, RequestEntity, TrafficLevel};

    fn report(names: &[&str], tweak: impl Fn(&mut crate::behaviour::Figures)) -> Report {
        let mut request = Request::new("acme", TrafficLevel::rps(100.0).unwrap());
        for n in names {
            request = request.entity(RequestEntity::new(*n, "svc"));
        }
        let ask = Ask::new(request);
        let mut b = ReportBuilder::new(&ask);
        for n in names {
            let mut f = figures(100.0);
            tweak(&mut f);
            b.predicted(n, f).unwrap();
        }
        b.finish().unwrap()
    }

    #[test]
    fn a_delta_is_marked_on_every_axis_and_never_crosses_a_currency() {
        let a = report(&["web", "db"], |_| {});
        let b = report(&["web", "cache"], |f| {
            f.provenance.basis = Basis::Validated;
            f.provenance.engine.version = "9".into();
            f.cost = PredictedRate::per_hour(f.cost.value_per_hour() + 2.0, f.cost.currency().clone()).unwrap();
        });
        let delta = report_delta(&a, &b);
        assert_eq!(delta.entities.len(), 1);
        let web = &delta.entities[0];
        assert_eq!(web.axes, [Mismatch::MixedEngine, Mismatch::MixedBasis]);
        assert_eq!(web.cost_per_hour, Some(2.0));
        assert_eq!(
            (delta.only_a.as_slice(), delta.only_b.as_slice()),
            (&["db".to_owned()][..], &["cache".to_owned()][..])
        );
        let text = render_deltas(&delta, "declared", "live");
        assert!(text.contains("web: cost +2 USD/hour"), "{text}");
        assert!(text.contains("[NOT COMPARABLE: mixed-engine, mixed-basis]"), "{text}");
        assert!(text.contains("db: predicted in declared only"), "{text}");

        let eur = report(&["web"], |f| {
            f.cost = PredictedRate::per_hour(1.0, Currency::new("EUR").unwrap()).unwrap();
        });
        let delta = report_delta(&a, &eur);
        assert_eq!(delta.entities[0].cost_per_hour, None);
        assert!(render_deltas(&delta, "a", "b").contains("cost not differenced (mixed currency)"));
        let same = report_delta(&a, &a);
        assert!(render_deltas(&same, "a", "b").contains("[comparable]"));
    }
}
