//! Comparing figures: on which axes two figures disagree, so a delta between them can be marked.
//!
//! Two numbers can be subtracted whatever produced them, and the difference keeps no trace of
//! having crossed an engine or a basis. [`compare_figures`] returns every axis on which a pair
//! disagrees, not the first: a pair differing in level and basis reports both, so a caption can
//! never say "different traffic level" over a modeled-minus-validated difference. [`MISMATCHES`]
//! is the display order, most fundamental first; membership is the contract and order is
//! presentation. A delta between figures that are not [`is_comparable`] must be marked wherever
//! it is shown; how is up to whatever draws it.

use serde::{Deserialize, Serialize};

use super::figure::Figures;

/// An axis on which two figures disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mismatch {
    /// The engine, its version or its stated tolerance differs: two models are not one scale.
    MixedEngine,
    /// Different `at`: the same question asked of two different worlds.
    MixedLevel,
    /// Different cost currency: chant converts nothing.
    MixedCurrency,
    /// One figure modeled off list prices, the other validated against a bill.
    MixedBasis,
    /// Different resilience failure: two verdicts about two events.
    MixedFailure,
}

/// Every axis, in display order.
pub const MISMATCHES: [Mismatch; 5] = [
    Mismatch::MixedEngine,
    Mismatch::MixedLevel,
    Mismatch::MixedCurrency,
    Mismatch::MixedBasis,
    Mismatch::MixedFailure,
];

impl Mismatch {
    /// Returns the axis's code (`mixed-basis`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mismatch::MixedEngine => "mixed-engine",
            Mismatch::MixedLevel => "mixed-level",
            Mismatch::MixedCurrency => "mixed-currency",
            Mismatch::MixedBasis => "mixed-basis",
            Mismatch::MixedFailure => "mixed-failure",
        }
    }

    fn differs(self, a: &Figures, b: &Figures) -> bool {
        match self {
            Mismatch::MixedEngine => a.provenance.engine != b.provenance.engine,
            Mismatch::MixedLevel => a.at != b.at,
            Mismatch::MixedCurrency => a.cost.currency() != b.cost.currency(),
            Mismatch::MixedBasis => a.provenance.basis != b.provenance.basis,
            Mismatch::MixedFailure => {
                a.resilience.as_ref().map(|r| &r.failure) != b.resilience.as_ref().map(|r| &r.failure)
            }
        }
    }
}

/// Returns every axis on which `a` and `b` disagree, in [`MISMATCHES`] order.
pub fn compare_figures(a: &Figures, b: &Figures) -> Vec<Mismatch> {
    MISMATCHES.into_iter().filter(|m| m.differs(a, b)).collect()
}

/// Returns true when `a` and `b` disagree on no axis, so their difference means what it says.
pub fn is_comparable(a: &Figures, b: &Figures) -> bool {
    compare_figures(a, b).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::figure::{Basis, Currency, PredictedRate, Resilience, ResilienceVerdict};
    use crate::behaviour::report::tests::figures;
    use crate::behaviour::request::TrafficLevel;

    /// Changes `f` on one axis.
    fn change(f: &mut Figures, axis: Mismatch) {
        match axis {
            Mismatch::MixedEngine => f.provenance.engine.version = "2".into(),
            Mismatch::MixedLevel => f.at = TrafficLevel::rps(1000.0).unwrap(),
            Mismatch::MixedCurrency => {
                f.cost = PredictedRate::per_hour(f.cost.value_per_hour(), Currency::new("EUR").unwrap()).unwrap();
            }
            Mismatch::MixedBasis => f.provenance.basis = Basis::Validated,
            Mismatch::MixedFailure => {
                f.resilience = Some(Resilience { failure: "region lost".into(), verdict: ResilienceVerdict::Fails });
            }
        }
    }

    #[test]
    fn every_one_of_the_32_combinations_reports_exactly_its_axes_in_order() {
        let mut base = figures(100.0);
        base.resilience = Some(Resilience { failure: "one zone lost".into(), verdict: ResilienceVerdict::Survives });
        for bits in 0u32..32 {
            let expected: Vec<Mismatch> =
                MISMATCHES.into_iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).map(|(_, m)| m).collect();
            let mut other = base.clone();
            // Change the axes in reverse, so the order of the answer cannot come from the order of
            // the changes.
            for axis in expected.iter().rev() {
                change(&mut other, *axis);
            }
            // A different cost on the same axes never matters.
            other.cost =
                PredictedRate::per_hour(other.cost.value_per_hour() * 3.0, other.cost.currency().clone()).unwrap();
            assert_eq!(compare_figures(&base, &other), expected, "combination {bits:05b}");
            assert_eq!(compare_figures(&other, &base), expected, "combination {bits:05b}, swapped");
            assert_eq!(is_comparable(&base, &other), bits == 0);
        }
    }

    #[test]
    fn the_tolerance_is_part_of_the_engine_and_a_missing_failure_differs_from_a_named_one() {
        let a = figures(100.0);
        let mut b = a.clone();
        b.provenance.engine.tolerance = Some(0.1);
        assert_eq!(compare_figures(&a, &b), [Mismatch::MixedEngine]);
        let mut c = a.clone();
        c.resilience = Some(Resilience { failure: "one zone lost".into(), verdict: ResilienceVerdict::Survives });
        assert_eq!(compare_figures(&a, &c), [Mismatch::MixedFailure]);
        assert_eq!(serde_json::to_value(MISMATCHES).unwrap()[3], "mixed-basis");
        assert_eq!(
            MISMATCHES.map(Mismatch::as_str).join(","),
            "mixed-engine,mixed-level,mixed-currency,mixed-basis,mixed-failure"
        );
    }
}
