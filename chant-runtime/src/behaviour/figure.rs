//! A figure: one entity's predicted behaviour at one traffic level, which is never a bill.
//!
//! Money has one shape, [`PredictedRate`]: a rate per hour in a currency, with a literal
//! `"rate": "per-hour"` discriminant and no field for an amount, a period, an account or an
//! invoice, so an elapsed charge cannot be expressed at all. Every [`Figures`] block carries `at`,
//! the traffic level it was predicted for, and a [`Provenance`] naming the engine and whether the
//! figure was `modeled` off list prices or `validated` against a real bill. Numbers are checked
//! when built and when read from JSON: a rate, a headroom or an error rate that is not a finite
//! number does not exist.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::request::TrafficLevel;

/// The errors of building a figure. Returned by [`Currency::new`], [`PredictedRate::per_hour`]
/// and when a figure is read from JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FigureError {
    /// A currency that is not three uppercase ASCII letters.
    #[error("invalid currency {0:?}: a currency is an ISO 4217 code such as USD")]
    Currency(String),
    /// A number that is not finite, or is negative where it cannot be.
    #[error("invalid {what} {value}: {rule}")]
    Number {
        /// Which figure.
        what: &'static str,
        /// The value given.
        value: String,
        /// What it must be.
        rule: &'static str,
    },
}

fn non_negative(what: &'static str, value: f64) -> Result<f64, FigureError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(FigureError::Number { what, value: value.to_string(), rule: "it must be a finite, non-negative number" })
    }
}

fn finite(what: &'static str, value: f64) -> Result<f64, FigureError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(FigureError::Number { what, value: value.to_string(), rule: "it must be a finite number" })
    }
}

/// An ISO 4217 currency code (`USD`). chant converts nothing between currencies.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency(String);

impl Currency {
    /// Creates a currency from its three-letter code.
    ///
    /// # Errors
    ///
    /// [`FigureError::Currency`] unless the code is three uppercase ASCII letters.
    pub fn new(code: impl Into<String>) -> Result<Self, FigureError> {
        let code = code.into();
        if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) {
            Ok(Currency(code))
        } else {
            Err(FigureError::Currency(code))
        }
    }

    /// Returns the code.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Currency {
    type Error = FigureError;
    fn try_from(code: String) -> Result<Self, FigureError> {
        Currency::new(code)
    }
}

impl From<Currency> for String {
    fn from(currency: Currency) -> Self {
        currency.0
    }
}

/// The only rate money is ever expressed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RateUnit {
    /// Per hour of running.
    #[serde(rename = "per-hour")]
    PerHour,
}

/// A predicted cost: a rate per hour in a currency. There is no amount, period, account or
/// invoice, so a prediction can never be read as money owed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RateRepr", into = "RateRepr")]
pub struct PredictedRate {
    per_hour: f64,
    currency: Currency,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RateRepr {
    rate: RateUnit,
    per_hour: f64,
    currency: Currency,
}

impl TryFrom<RateRepr> for PredictedRate {
    type Error = FigureError;
    fn try_from(repr: RateRepr) -> Result<Self, FigureError> {
        let RateRepr { rate: RateUnit::PerHour, per_hour, currency } = repr;
        PredictedRate::per_hour(per_hour, currency)
    }
}

impl From<PredictedRate> for RateRepr {
    fn from(rate: PredictedRate) -> Self {
        RateRepr { rate: RateUnit::PerHour, per_hour: rate.per_hour, currency: rate.currency }
    }
}

impl PredictedRate {
    /// Creates a rate of `per_hour` in `currency` for each hour of running.
    ///
    /// # Errors
    ///
    /// [`FigureError::Number`] for a negative or non-finite rate.
    pub fn per_hour(per_hour: f64, currency: Currency) -> Result<Self, FigureError> {
        Ok(PredictedRate { per_hour: non_negative("rate per hour", per_hour)?, currency })
    }

    /// Returns the rate per hour.
    pub fn value_per_hour(&self) -> f64 {
        self.per_hour
    }

    /// Returns the currency.
    pub fn currency(&self) -> &Currency {
        &self.currency
    }
}

impl fmt::Display for PredictedRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}/hour", self.per_hour, self.currency.as_str())
    }
}

/// How a figure was produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// Computed off list prices.
    Modeled,
    /// Reconciled against a real bill.
    Validated,
}

impl Basis {
    /// Returns the basis as written (`modeled`).
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Modeled => "modeled",
            Basis::Validated => "validated",
        }
    }
}

/// The engine that produced a figure: two engines, or two versions, are not one scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineIdentity {
    /// The engine's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its stated relative tolerance (`0.1` for plus or minus 10%), when it states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
}

/// Where a figure comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The engine.
    pub engine: EngineIdentity,
    /// Modeled or validated.
    pub basis: Basis,
}

/// Spare capacity at the predicted level, as a fraction of the limit (`0.4`: 40% left; below
/// zero: over the limit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "HeadroomRepr", into = "HeadroomRepr")]
pub struct Headroom {
    cpu: f64,
    latency: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeadroomRepr {
    cpu: f64,
    latency: f64,
}

impl TryFrom<HeadroomRepr> for Headroom {
    type Error = FigureError;
    fn try_from(repr: HeadroomRepr) -> Result<Self, FigureError> {
        Headroom::new(repr.cpu, repr.latency)
    }
}

impl From<Headroom> for HeadroomRepr {
    fn from(h: Headroom) -> Self {
        HeadroomRepr { cpu: h.cpu, latency: h.latency }
    }
}

impl Headroom {
    /// Creates a headroom from the CPU and latency fractions.
    ///
    /// # Errors
    ///
    /// [`FigureError::Number`] for a non-finite fraction.
    pub fn new(cpu: f64, latency: f64) -> Result<Self, FigureError> {
        Ok(Headroom { cpu: finite("cpu headroom", cpu)?, latency: finite("latency headroom", latency)? })
    }

    /// Returns the CPU fraction left.
    pub fn cpu(&self) -> f64 {
        self.cpu
    }

    /// Returns the latency budget fraction left.
    pub fn latency(&self) -> f64 {
        self.latency
    }
}

/// The verdict on an entity under a named failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResilienceVerdict {
    /// Keeps serving as before.
    Survives,
    /// Keeps serving, worse.
    Degrades,
    /// Stops serving.
    Fails,
}

impl ResilienceVerdict {
    /// Returns the verdict as written (`survives`).
    pub fn as_str(self) -> &'static str {
        match self {
            ResilienceVerdict::Survives => "survives",
            ResilienceVerdict::Degrades => "degrades",
            ResilienceVerdict::Fails => "fails",
        }
    }
}

/// How an entity fares under a named failure (`one zone lost`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resilience {
    /// The failure the verdict is about.
    pub failure: String,
    /// The verdict.
    pub verdict: ResilienceVerdict,
}

/// One entity's predicted behaviour: every field is about the level in `at`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Figures {
    /// The traffic level the figures were predicted for.
    pub at: TrafficLevel,
    /// Who produced them, and on what basis.
    pub provenance: Provenance,
    /// The predicted cost rate.
    pub cost: PredictedRate,
    /// Spare CPU and latency at that level.
    pub headroom: Headroom,
    /// The expected fraction of requests that fail, from 0 to 1.
    #[serde(deserialize_with = "error_rate")]
    pub error_rate: f64,
    /// The verdict under a named failure, when the engine gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resilience: Option<Resilience>,
    /// A right-size hint, in words, when the engine has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_size: Option<String>,
}

fn error_rate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let rate = f64::deserialize(d)?;
    if (0.0..=1.0).contains(&rate) {
        Ok(rate)
    } else {
        Err(serde::de::Error::custom(format!("error rate {rate} is not between 0 and 1")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_only_a_rate_per_hour() {
        let rate = PredictedRate::per_hour(0.25, Currency::new("USD").unwrap()).unwrap();
        let json = serde_json::to_value(&rate).unwrap();
        assert_eq!(json, serde_json::json!({"rate": "per-hour", "perHour": 0.25, "currency": "USD"}));
        assert_eq!(serde_json::from_value::<PredictedRate>(json).unwrap(), rate);
        // No other unit, no amount, no period.
        for bad in [
            serde_json::json!({"rate": "per-month", "perHour": 1, "currency": "USD"}),
            serde_json::json!({"rate": "per-hour", "perHour": 1, "currency": "USD", "amount": 3}),
            serde_json::json!({"rate": "per-hour", "perHour": 1, "currency": "USD", "period": "2024-01"}),
            serde_json::json!({"rate": "per-hour", "perHour": -1, "currency": "USD"}),
            serde_json::json!({"rate": "per-hour", "perHour": 1, "currency": "usd"}),
        ] {
            assert!(serde_json::from_value::<PredictedRate>(bad.clone()).is_err(), "{bad} was accepted");
        }
        assert!(PredictedRate::per_hour(f64::NAN, Currency::new("EUR").unwrap()).is_err());
        assert_eq!(rate.to_string(), "0.25 USD/hour");
    }

    #[test]
    fn a_figure_needs_its_level_and_provenance() {
        let full = serde_json::json!({
            "at": {"rps": 100},
            "provenance": {"engine": {"name": "e", "version": "1"}, "basis": "modeled"},
            "cost": {"rate": "per-hour", "perHour": 1, "currency": "USD"},
            "headroom": {"cpu": 0.5, "latency": 0.2},
            "errorRate": 0.001
        });
        let figures: Figures = serde_json::from_value(full.clone()).unwrap();
        assert_eq!(figures.provenance.basis, Basis::Modeled);
        for missing in ["at", "provenance"] {
            let mut partial = full.clone();
            partial.as_object_mut().unwrap().remove(missing);
            assert!(serde_json::from_value::<Figures>(partial).is_err(), "a figure without {missing} was accepted");
        }
        let mut bad = full;
        bad["errorRate"] = serde_json::json!(1.5);
        assert!(serde_json::from_value::<Figures>(bad).is_err());
    }
}
