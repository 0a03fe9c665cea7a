//! The box lexicon's steps as it reads them: the arguments of `sprite_services_observe`,
//! `sprite_service_restart` and `sprite_apply_services` ([`BoxStep`]), where the first two read
//! their services from ([`ServiceSource`]), and the step macros that declare the three kinds to
//! `op!` and `converge_op!` (their names, classes and argument types), exported at the crate root
//! and in `chant::prelude` under the `box` feature.
//!
//! The core knows none of this: an op holds these steps as [`LexiconStep`]s, and the runtime
//! runs them through the kinds this lexicon registers (`steps.rs`, through `chant::lexicon::steps`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use chant_lexicon::model::{LexiconStep, Name};

use super::SpriteError;

/// Where a box services step (the observer, the restart) reads its list of services from:
/// exactly one of `box = true`, `services = [...]` and `services_file = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceSource<'a> {
    /// `box = true`: the box block of the op's member in `chant.workspace.json`.
    Box,
    /// `services = ["app", ...]`: the services named inline (no command or health URL).
    Inline(&'a [Name]),
    /// `services_file = "..."`: a JSON file holding a box block (`{"services": [...]}`), relative
    /// to the project root (may hold `${VAR}`).
    File(&'a str),
}

/// A box services step given no list of services, more than one, or an empty one. Returned by
/// [`service_source`] (and so by the macros and the op.json loader).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceSourceError {
    /// More than one source.
    #[error(
        "`{step}` reads its services from one place, and it was given {given}; keep one of box = true, services = [...] and services_file = \"...\""
    )]
    Several {
        /// The step kind.
        step: String,
        /// The sources given, in words (`box = true and services`).
        given: String,
    },
    /// No source.
    #[error(
        "`{step}` needs its services: box = true (the member's box block), services = [\"app\", ...] or services_file = \"services.json\""
    )]
    Missing {
        /// The step kind.
        step: String,
    },
    /// An empty inline list.
    #[error("`services` of `{step}` is an empty list; name at least one service, such as services = [\"app\"]")]
    Empty {
        /// The step kind.
        step: String,
    },
}

/// Returns where `step` reads its services from, given its `box`, `services` and
/// `services_file` arguments: the one rule the macros and the loader share.
///
/// # Errors
///
/// [`ServiceSourceError`] for no source, several, or an empty list.
pub fn service_source<'a>(
    step: &str,
    from_box: bool,
    services: Option<&'a [Name]>,
    services_file: Option<&'a str>,
) -> Result<ServiceSource<'a>, ServiceSourceError> {
    let given: Vec<&str> =
        [(from_box, "box = true"), (services.is_some(), "services"), (services_file.is_some(), "services_file")]
            .into_iter()
            .filter_map(|(given, name)| given.then_some(name))
            .collect();
    if given.len() > 1 {
        return Err(ServiceSourceError::Several { step: step.to_owned(), given: given.join(" and ") });
    }
    match (from_box, services, services_file) {
        (true, _, _) => Ok(ServiceSource::Box),
        (_, Some([]), _) => Err(ServiceSourceError::Empty { step: step.to_owned() }),
        (_, Some(names), _) => Ok(ServiceSource::Inline(names)),
        (_, _, Some(file)) => Ok(ServiceSource::File(file)),
        _ => Err(ServiceSourceError::Missing { step: step.to_owned() }),
    }
}

/// The arguments of `sprite_services_observe`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserveServicesArgs {
    /// Read the services from the member's box block; absent when false.
    #[serde(rename = "box", skip_serializing_if = "std::ops::Not::not", default)]
    pub from_box: bool,
    /// The services, named inline.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub services: Option<Vec<Name>>,
    /// A JSON file holding a box block, relative to the project root (may hold `${VAR}`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub services_file: Option<String>,
}

impl ObserveServicesArgs {
    /// Returns where the services are read from.
    ///
    /// # Errors
    ///
    /// As [`service_source`].
    pub fn source(&self) -> Result<ServiceSource<'_>, ServiceSourceError> {
        service_source(
            "sprite_services_observe",
            self.from_box,
            self.services.as_deref(),
            self.services_file.as_deref(),
        )
    }
}

/// The arguments of `sprite_service_restart`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestartServiceArgs {
    /// Read the services from the member's box block; absent when false.
    #[serde(rename = "box", skip_serializing_if = "std::ops::Not::not", default)]
    pub from_box: bool,
    /// The service; the dispatching rule's resource when absent (may hold `${VAR}`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
    /// The services, named inline.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub services: Option<Vec<Name>>,
    /// A JSON file holding a box block, relative to the project root (may hold `${VAR}`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub services_file: Option<String>,
}

impl RestartServiceArgs {
    /// Returns where the services are read from.
    ///
    /// # Errors
    ///
    /// As [`service_source`].
    pub fn source(&self) -> Result<ServiceSource<'_>, ServiceSourceError> {
        service_source("sprite_service_restart", self.from_box, self.services.as_deref(), self.services_file.as_deref())
    }
}

/// The arguments of `sprite_apply_services`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyServicesArgs {
    /// Read the services from the member's box block (must be `true`).
    #[serde(rename = "box")]
    pub from_box: bool,
    /// A comma-separated list of the services to apply; all when absent (may hold `${VAR}`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub only: Option<String>,
    /// Restart services that are already running.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub restart: Option<bool>,
    /// Start the services after creating them.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub start: Option<bool>,
}

/// A box services step, read from the arguments op.json holds for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoxStep {
    /// `sprite_services_observe`.
    Observe(ObserveServicesArgs),
    /// `sprite_service_restart`.
    Restart(RestartServiceArgs),
    /// `sprite_apply_services`.
    Apply(ApplyServicesArgs),
}

impl BoxStep {
    /// The observer's kind.
    pub const OBSERVE: &'static str = "sprite_services_observe";
    /// The restart's kind.
    pub const RESTART: &'static str = "sprite_service_restart";
    /// The apply's kind.
    pub const APPLY: &'static str = "sprite_apply_services";

    /// Reads the step of `kind` from its arguments.
    ///
    /// # Errors
    ///
    /// [`SpriteError::NotABoxStep`] for another kind, [`SpriteError::Arguments`] for arguments
    /// that do not form the step (an unknown one, a wrong type, a bad service name).
    pub fn parse(kind: &str, args: &serde_json::Map<String, Value>) -> Result<BoxStep, SpriteError> {
        let value = Value::Object(args.clone());
        let bad = |e: serde_json::Error| SpriteError::Arguments { step: kind.to_owned(), message: e.to_string() };
        match kind {
            Self::OBSERVE => serde_json::from_value(value).map(BoxStep::Observe).map_err(bad),
            Self::RESTART => serde_json::from_value(value).map(BoxStep::Restart).map_err(bad),
            Self::APPLY => serde_json::from_value(value).map(BoxStep::Apply).map_err(bad),
            other => Err(SpriteError::NotABoxStep(other.to_owned())),
        }
    }

    /// Reads a box step from an op's step.
    ///
    /// # Errors
    ///
    /// As [`BoxStep::parse`].
    pub fn of(step: &LexiconStep) -> Result<BoxStep, SpriteError> {
        BoxStep::parse(&step.kind, &step.args)
    }

    /// Returns the step's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            BoxStep::Observe(_) => Self::OBSERVE,
            BoxStep::Restart(_) => Self::RESTART,
            BoxStep::Apply(_) => Self::APPLY,
        }
    }

    /// Returns where the observer or the restart reads its services from; `None` for the apply,
    /// which reads the box block only.
    pub fn service_source(&self) -> Option<Result<ServiceSource<'_>, ServiceSourceError>> {
        match self {
            BoxStep::Observe(args) => Some(args.source()),
            BoxStep::Restart(args) => Some(args.source()),
            BoxStep::Apply(_) => None,
        }
    }
}

/// `sprite_services_observe(box = true | services = [...] | services_file = "...")`: reads the
/// box's services, one verdict each (read-only; an observer for `converge_op!`).
#[macro_export]
macro_rules! sprite_services_observe {
    (@chant_step_spec $mac:ident { $($input:tt)* }) => {
        ::chant::$mac! {
            @lexicon_step {
                kind: "sprite_services_observe",
                class: read_only,
                args: [box: bool, services: names, services_file: str],
                one_of: [box, services, services_file],
            }
            $($input)*
        }
    };
}

/// `sprite_service_restart(box = true | services = [...] | services_file = "...", name?)`:
/// restarts one service, the named one or the dispatching rule's resource (mutating).
#[macro_export]
macro_rules! sprite_service_restart {
    (@chant_step_spec $mac:ident { $($input:tt)* }) => {
        ::chant::$mac! {
            @lexicon_step {
                kind: "sprite_service_restart",
                class: mutating,
                args: [box: bool, name: str, services: names, services_file: str],
                one_of: [box, services, services_file],
            }
            $($input)*
        }
    };
}

/// `sprite_apply_services(box = true, start?, restart?, only?)`: creates or replaces the declared
/// services (mutating).
#[macro_export]
macro_rules! sprite_apply_services {
    (@chant_step_spec $mac:ident { $($input:tt)* }) => {
        ::chant::$mac! {
            @lexicon_step {
                kind: "sprite_apply_services",
                class: mutating,
                args: [box: bool required, start: bool, restart: bool, only: str],
            }
            $($input)*
        }
    };
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(kind: &str, args: Value) -> Result<BoxStep, SpriteError> {
        let Value::Object(args) = args else { unreachable!() };
        BoxStep::parse(kind, &args)
    }

    #[test]
    fn a_box_services_step_reads_its_services_from_exactly_one_place() {
        let source = |v: Value| {
            let step = parse(BoxStep::OBSERVE, v).unwrap();
            step.service_source().unwrap().map(|s| format!("{s:?}")).map_err(|e| e.to_string())
        };
        assert_eq!(source(json!({"box": true})).unwrap(), "Box");
        assert_eq!(source(json!({"services": ["app"]})).unwrap(), r#"Inline([Name("app")])"#);
        assert_eq!(source(json!({"services_file": "s.json"})).unwrap(), r#"File("s.json")"#);
        assert_eq!(
            source(json!({"box": true, "services_file": "s.json"})).unwrap_err(),
            "`sprite_services_observe` reads its services from one place, and it was given box = true and services_file; keep one of box = true, services = [...] and services_file = \"...\""
        );
        assert!(source(json!({"services": []})).unwrap_err().contains("is an empty list"));
        assert!(source(json!({"box": false})).unwrap_err().contains("needs its services"));
        assert!(source(json!({})).unwrap_err().contains("needs its services"));
        let bad = parse(BoxStep::OBSERVE, json!({"services": ["App"]})).unwrap_err();
        assert!(bad.to_string().contains("sprite_services_observe"), "{bad}");
        assert!(parse(BoxStep::RESTART, json!({"port": 1})).unwrap_err().to_string().contains("unknown field `port`"));
        assert!(matches!(parse("apply", json!({})), Err(SpriteError::NotABoxStep(_))));
        let apply = parse(BoxStep::APPLY, json!({"box": true})).unwrap();
        assert_eq!(apply.service_source(), None, "apply reads the box block only");
        assert_eq!(apply.kind(), BoxStep::APPLY);
    }
}
