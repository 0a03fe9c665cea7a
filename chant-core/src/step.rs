//! Steps: what a phase of an Op does, one typed variant per built-in step and one for a user's
//! own step.
//!
//! op.json spells a step `{kind, name?, class, args?, run?}`; [`Step`] is that object as a serde
//! enum tagged by `kind`, with each variant's arguments typed ([`DeleteMode`], [`Timeout`],
//! [`HttpUrl`], a verb class), so a step that parses is well-formed and the runner, the tick and
//! the validator match on variants instead of strings. Arguments are declared in byte order, as
//! the original argument map was, so the bytes of op.json are unchanged. Strings that may hold
//! `${VAR}` stay strings until [`Step::expanded`] resolves them when the step runs.
//!
//! Every step carries the `class` the macros folded for it; [`Step::expected_class`] derives the
//! class again from the kind and arguments (through [`contract::step_class`], the rule the macros
//! use), and the loader refuses a document whose recorded class disagrees.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::contract::{self, ClassKind};
use crate::duration::Timeout;
use crate::name::Name;
use crate::template::{ExpandError, expand};

/// What `apply` may delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeleteMode {
    /// Delete nothing: an undeclared owned entity is reported (the default).
    #[default]
    Never,
    /// Also delete what chant owns and no longer declares (destructive).
    OwnedOnly,
}

impl DeleteMode {
    /// Every mode, in the order the docs list them.
    pub const ALL: [DeleteMode; 2] = [DeleteMode::Never, DeleteMode::OwnedOnly];

    /// Returns the mode as written (`owned-only`).
    pub fn as_str(self) -> &'static str {
        match self {
            DeleteMode::Never => "never",
            DeleteMode::OwnedOnly => "owned-only",
        }
    }

    /// Parses a mode as written.
    pub fn parse(s: &str) -> Option<DeleteMode> {
        DeleteMode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl std::fmt::Display for DeleteMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A URL an `http_check` probes: `http://` or `https://`, possibly holding `${VAR}` that is
/// expanded when the step runs (the scheme is checked now when it is written out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl(String);

/// A URL outside `http://` and `https://`. Returned by [`HttpUrl::parse`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not an http:// or https:// URL; write one such as \"http://127.0.0.1:8080/health\" (`${{VAR}}` is expanded when the step runs)"
)]
pub struct NotAnHttpUrl(pub String);

impl HttpUrl {
    /// Checks `text`: it must start with `http://` or `https://` followed by a host, unless a
    /// `${VAR}` stands where the scheme or host would be.
    ///
    /// # Errors
    ///
    /// Returns [`NotAnHttpUrl`] for anything else.
    pub fn parse(text: &str) -> Result<Self, NotAnHttpUrl> {
        let ok = match text.split_once("://") {
            Some((scheme, rest)) if scheme.contains("${") => !rest.is_empty() || text.ends_with('}'),
            Some((scheme, rest)) => matches!(scheme, "http" | "https") && !rest.is_empty() && !rest.starts_with('/'),
            None => text.starts_with("${"),
        };
        if ok { Ok(HttpUrl(text.to_owned())) } else { Err(NotAnHttpUrl(text.to_owned())) }
    }

    /// Returns the URL as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for HttpUrl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for HttpUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        HttpUrl::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A verb class written as the DSL writes it (`read_only`), as a step argument of a hand-written
/// op.json (the macros record a declared class as the step's `class`, never among its arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassIdent(pub ClassKind);

impl Serialize for ClassIdent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.ident())
    }
}

impl<'de> Deserialize<'de> for ClassIdent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ClassKind::from_ident(&s).map(ClassIdent).ok_or_else(|| {
            serde::de::Error::custom(format!("`{s}` is not a verb class; it is read_only, mutating or destructive"))
        })
    }
}

/// The arguments of `apply`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyArgs {
    /// What may be deleted; `never` when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub delete_mode: Option<DeleteMode>,
    /// The env whose declaration is applied (may hold `${VAR}`).
    pub env: String,
}

/// The arguments of `teardown`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeardownArgs {
    /// Whether the teardown may run while its plan has holes (what it cannot see); absent when
    /// false, so the op.json of a teardown without it is unchanged.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub allow_holes: bool,
    /// The env torn down (may hold `${VAR}`).
    pub env: String,
}

/// The arguments of `http_check`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpCheckArgs {
    /// How long to wait for an answer; the runner's default when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timeout: Option<Timeout>,
    /// The URL probed with a GET.
    pub url: HttpUrl,
}

/// The arguments of `shell`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// A class declared among the arguments (hand-written op.json only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub class: Option<ClassIdent>,
    /// The command line, run by `sh -c` (may hold `${VAR}`).
    pub cmd: String,
    /// How long it may run; the runner's default when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timeout: Option<Timeout>,
}

/// The arguments of `gate`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateArgs {
    /// The gate whose approval, recorded within [`GateArgs::within`], answers this one (a gate
    /// of the same op and component, declared before it; never on a sealed gate): see
    /// [`crate::carry`].
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub carries: Option<Name>,
    /// What the approver is asked (may hold `${VAR}`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<String>,
    /// Whether it opens only on a sealed approval (an SSH signature that verifies against the
    /// project's allowed signers); absent when false, so unsealed gates' op.json is unchanged.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub sealed: bool,
    /// How long a pending fact stands before it expires; 48h when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timeout: Option<Timeout>,
    /// How old an approval of [`GateArgs::carries`] may be and still answer this gate.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub within: Option<Timeout>,
}

impl GateArgs {
    fn is_empty(&self) -> bool {
        self.carries.is_none()
            && self.description.is_none()
            && !self.sealed
            && self.timeout.is_none()
            && self.within.is_none()
    }
}

/// A step a lexicon registers (`sprite_services_observe(box = true)`, `docs_touch(path = "...")`):
/// its kind, the class its registration gives it, and its arguments as op.json writes them.
///
/// The core knows no lexicon's steps: the macros check such a step against the declaration its
/// lexicon exports (see `chant::lexicon::steps`), and the runtime runs it through the kind the
/// lexicon registers. A kind that is a built-in step's is refused here, so a malformed built-in
/// step never reads as a lexicon's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawLexiconStep")]
pub struct LexiconStep {
    /// The step's kind (`sprite_services_observe`): its name as written and in op.json.
    pub kind: String,
    /// Its class, as the lexicon declares it.
    pub class: ClassKind,
    /// Its arguments, by name (strings may hold `${VAR}`).
    #[serde(default)]
    pub args: serde_json::Map<String, serde_json::Value>,
}

/// Returns whether `kind` can name a step: a lowercase ASCII identifier (`[a-z][a-z0-9_]*`), as
/// the step is written in the DSL.
pub fn is_step_kind(kind: &str) -> bool {
    let mut chars = kind.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// [`LexiconStep`] as read, before its kind is checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLexiconStep {
    kind: String,
    class: ClassKind,
    #[serde(default)]
    args: serde_json::Map<String, serde_json::Value>,
}

impl TryFrom<RawLexiconStep> for LexiconStep {
    type Error = String;

    fn try_from(raw: RawLexiconStep) -> Result<Self, Self::Error> {
        if contract::step_spec(&raw.kind).is_some() {
            return Err(format!("`{}` is a built-in step and its fields do not form one", raw.kind));
        }
        if !is_step_kind(&raw.kind) {
            return Err(format!(
                "`{}` is not a step kind: a kind is a lowercase Rust identifier, such as sprite_services_observe",
                raw.kind
            ));
        }
        Ok(LexiconStep { kind: raw.kind, class: raw.class, args: raw.args })
    }
}

/// One step of a phase, as op.json spells it (`kind` is the tag).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// `apply(env, delete_mode?)`: applies the env's declaration; destructive with
    /// `delete_mode = "owned-only"`, else mutating.
    Apply {
        /// The step's class.
        class: ClassKind,
        /// Its arguments.
        args: ApplyArgs,
    },
    /// `teardown(env)`: removes what chant owns in the env (destructive).
    Teardown {
        /// The step's class.
        class: ClassKind,
        /// Its arguments.
        args: TeardownArgs,
    },
    /// `http_check(url, timeout?)`: a GET that must answer 2xx (read-only).
    HttpCheck {
        /// The step's class.
        class: ClassKind,
        /// Its arguments.
        args: HttpCheckArgs,
    },
    /// `shell(cmd, class?, timeout?)`: a command line (mutating unless declared).
    Shell {
        /// The step's class, as declared (mutating when not).
        class: ClassKind,
        /// Its arguments.
        args: ShellArgs,
    },
    /// `gate("name", description?, timeout?)`: waits for a human's approval (read-only).
    Gate {
        /// The gate's name.
        name: Name,
        /// The step's class.
        class: ClassKind,
        /// Its arguments.
        #[serde(skip_serializing_if = "GateArgs::is_empty", default)]
        args: GateArgs,
    },
    /// `step("name", class = ..., run = path::to_fn)`: a user's own step, a Rust function linked
    /// into the project binary (mutating unless declared).
    #[serde(rename = "step")]
    User {
        /// The step's name.
        name: Name,
        /// The step's class, as declared (mutating when not).
        class: ClassKind,
        /// Arguments handed to the function (strings may hold `${VAR}`).
        #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
        args: BTreeMap<String, serde_json::Value>,
        /// The path of the function it runs.
        run: String,
    },
    /// A step a lexicon registers, written by its own name (`sprite_services_observe(box =
    /// true)`); op.json spells it `{kind, class, args}` like a built-in.
    #[serde(untagged)]
    Lexicon(LexiconStep),
}

impl Step {
    /// Returns the step's kind as op.json and the run record write it (`http_check`, `step`).
    pub fn kind(&self) -> &str {
        match self {
            Step::Apply { .. } => "apply",
            Step::Teardown { .. } => "teardown",
            Step::HttpCheck { .. } => "http_check",
            Step::Shell { .. } => "shell",
            Step::Gate { .. } => "gate",
            Step::User { .. } => "step",
            Step::Lexicon(step) => &step.kind,
        }
    }

    /// Returns the step's name: the gate's or the user step's; `None` for other built-ins.
    pub fn name(&self) -> Option<&Name> {
        match self {
            Step::Gate { name, .. } | Step::User { name, .. } => Some(name),
            _ => None,
        }
    }

    /// Returns the class recorded for the step.
    pub fn class(&self) -> ClassKind {
        match self {
            Step::Apply { class, .. }
            | Step::Teardown { class, .. }
            | Step::HttpCheck { class, .. }
            | Step::Shell { class, .. }
            | Step::Gate { class, .. }
            | Step::User { class, .. }
            | Step::Lexicon(LexiconStep { class, .. }) => *class,
        }
    }

    /// Derives the step's class from its kind and arguments: a declared class where the step
    /// takes one (`shell`, a user step), `apply(delete_mode = "owned-only")` destructive, the
    /// kind's class otherwise.
    pub fn expected_class(&self) -> ClassKind {
        let (declared, delete_mode) = match self {
            Step::Shell { class, args } => (Some(args.class.map_or(*class, |c| c.0)), None),
            Step::User { class, .. } => (Some(*class), None),
            Step::Apply { args, .. } => (None, args.delete_mode),
            _ => (None, None),
        };
        match contract::step_spec(self.kind()) {
            Some(spec) => contract::step_class(spec, declared, delete_mode),
            None => self.class(),
        }
    }

    /// Returns a copy with every `${VAR}` in its string arguments expanded through `lookup`.
    ///
    /// # Errors
    ///
    /// Returns the [`ExpandError`] of the first argument that does not expand, naming the
    /// variable, the step and the argument.
    pub fn expanded(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Step, ExpandError> {
        let kind = self.kind();
        let x = |arg: &str, text: &str| expand(text, kind, arg, lookup);
        let x_opt = |arg: &str, text: &Option<String>| text.as_deref().map(|t| x(arg, t)).transpose();
        // A free-form argument (a user step's, a lexicon step's): its strings expanded, the rest as is.
        let x_arg = |(k, v): (&String, &serde_json::Value)| -> Result<(String, serde_json::Value), ExpandError> {
            let v = match v {
                serde_json::Value::String(s) => serde_json::Value::String(x(k, s)?),
                other => other.clone(),
            };
            Ok((k.clone(), v))
        };
        Ok(match self {
            Step::Apply { class, args } => Step::Apply {
                class: *class,
                args: ApplyArgs { delete_mode: args.delete_mode, env: x("env", &args.env)? },
            },
            Step::Teardown { class, args } => Step::Teardown {
                class: *class,
                args: TeardownArgs { allow_holes: args.allow_holes, env: x("env", &args.env)? },
            },
            Step::HttpCheck { class, args } => {
                // The scheme was checked as written; a variable that expands to another scheme is
                // refused by the HTTP client when the check runs, naming the URL.
                let url = HttpUrl(x("url", args.url.as_str())?);
                Step::HttpCheck { class: *class, args: HttpCheckArgs { timeout: args.timeout.clone(), url } }
            }
            Step::Shell { class, args } => Step::Shell {
                class: *class,
                args: ShellArgs { class: args.class, cmd: x("cmd", &args.cmd)?, timeout: args.timeout.clone() },
            },
            Step::Gate { name, class, args } => Step::Gate {
                name: name.clone(),
                class: *class,
                args: GateArgs {
                    carries: args.carries.clone(),
                    description: x_opt("description", &args.description)?,
                    sealed: args.sealed,
                    timeout: args.timeout.clone(),
                    within: args.within.clone(),
                },
            },
            Step::User { name, class, args, run } => Step::User {
                name: name.clone(),
                class: *class,
                args: args.iter().map(x_arg).collect::<Result<_, _>>()?,
                run: run.clone(),
            },
            Step::Lexicon(step) => Step::Lexicon(LexiconStep {
                kind: step.kind.clone(),
                class: step.class,
                args: step.args.iter().map(x_arg).collect::<Result<_, _>>()?,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::{ArgType, STEPS};

    fn parse(v: serde_json::Value) -> Result<Step, serde_json::Error> {
        serde_json::from_value(v)
    }

    #[test]
    fn steps_round_trip_byte_for_byte() {
        for text in [
            r#"{"kind":"apply","class":"destructive","args":{"delete_mode":"owned-only","env":"prod-db"}}"#,
            r#"{"kind":"http_check","class":"read-only","args":{"timeout":"5s","url":"http://127.0.0.1:${PORT}/health"}}"#,
            r#"{"kind":"shell","class":"read-only","args":{"cmd":"echo ${HOME}","timeout":"90m"}}"#,
            r#"{"kind":"gate","name":"teardown","class":"read-only","args":{"description":"d","timeout":"48h"}}"#,
            r#"{"kind":"gate","name":"force","class":"read-only","args":{"description":"d","sealed":true,"timeout":"1h"}}"#,
            r#"{"kind":"gate","name":"g","class":"read-only"}"#,
            r#"{"kind":"gate","name":"prod","class":"read-only","args":{"carries":"staging","within":"24h"}}"#,
            r#"{"kind":"sprite_apply_services","class":"mutating","args":{"box":true,"start":true}}"#,
            r#"{"kind":"sprite_service_restart","class":"mutating","args":{"box":true}}"#,
            r#"{"kind":"sprite_service_restart","class":"mutating","args":{"name":"app","services":["app","hud"]}}"#,
            r#"{"kind":"sprite_services_observe","class":"read-only","args":{"box":true}}"#,
            r#"{"kind":"sprite_services_observe","class":"read-only","args":{"services_file":"${BOX}/services.json"}}"#,
            r#"{"kind":"step","name":"purge-cache","class":"destructive","args":{"what":"${X}"},"run":"purge"}"#,
            r#"{"kind":"teardown","class":"destructive","args":{"env":"staging"}}"#,
            r#"{"kind":"teardown","class":"destructive","args":{"allow_holes":true,"env":"staging"}}"#,
        ] {
            let step: Step = serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(serde_json::to_string(&step).unwrap(), text);
            assert_eq!(step.expected_class(), step.class(), "{text}");
        }
    }

    #[test]
    fn typed_arguments_refuse_what_the_old_map_let_through() {
        let bad = [
            json!({"kind": "apply", "class": "mutating", "args": {"env": "e", "delete_mode": "all"}}),
            json!({"kind": "apply", "class": "mutating", "args": {"env": "e", "typo": 1}}),
            json!({"kind": "apply", "class": "mutating"}),
            json!({"kind": "gate", "name": "g", "class": "read-only", "args": {"timeout": "1.5h"}}),
            json!({"kind": "gate", "name": "Bad Name", "class": "read-only"}),
            json!({"kind": "http_check", "class": "read-only", "args": {"url": "ftp://x"}}),
            json!({"kind": "shell", "class": "mutating", "args": {"cmd": "x"}, "extra": 1}),
            json!({"kind": "Aply", "class": "mutating", "args": {"env": "e"}}),
            json!({"kind": "aply", "class": "sometimes", "args": {"env": "e"}}),
            json!({"kind": "aply", "class": "mutating", "args": {"env": "e"}, "run": "x"}),
        ];
        for v in bad {
            assert!(parse(v.clone()).is_err(), "{v}");
        }
    }

    #[test]
    fn a_lexicon_step_is_any_other_kind_with_its_arguments_kept_as_written() {
        let step = parse(json!({"kind": "sprite_service_restart", "class": "mutating",
            "args": {"name": "${SERVICE}", "services": ["app", "hud"], "box": false}}))
        .unwrap();
        let Step::Lexicon(lexicon) = &step else { panic!("{step:?}") };
        assert_eq!(lexicon.kind, "sprite_service_restart");
        assert_eq!(step.kind(), "sprite_service_restart");
        assert_eq!(step.expected_class(), ClassKind::Mutating, "a lexicon step keeps its declared class");
        let vars = |n: &str| (n == "SERVICE").then(|| "app".to_owned());
        let Step::Lexicon(expanded) = step.expanded(&vars).unwrap() else { unreachable!() };
        assert_eq!(expanded.args["name"], json!("app"));
        assert_eq!(expanded.args["services"], json!(["app", "hud"]), "only strings are expanded");
        assert!(matches!(step.expanded(&|_| None), Err(ExpandError::Unset { .. })));
        // A built-in kind never reads as a lexicon's, however its fields are spelt.
        let apply = parse(json!({"kind": "apply", "class": "mutating", "args": {"envx": "e"}}));
        assert!(apply.is_err(), "{apply:?}");
        assert!(is_step_kind("docs_touch2"));
        for bad in ["", "Docs", "docs-touch", "2docs", "docs touch"] {
            assert!(!is_step_kind(bad), "{bad}");
        }
    }

    #[test]
    fn classes_follow_kind_and_arguments() {
        let apply =
            parse(json!({"kind": "apply", "class": "mutating", "args": {"env": "e", "delete_mode": "owned-only"}}));
        assert_eq!(apply.unwrap().expected_class(), ClassKind::Destructive);
        let lying = parse(json!({"kind": "teardown", "class": "read-only", "args": {"env": "e"}})).unwrap();
        assert_eq!(lying.expected_class(), ClassKind::Destructive);
        let shell = parse(json!({"kind": "shell", "class": "mutating", "args": {"cmd": "x", "class": "read_only"}}));
        assert_eq!(shell.unwrap().expected_class(), ClassKind::ReadOnly);
    }

    #[test]
    fn expansion_resolves_templates() {
        let vars = |n: &str| match n {
            "PORT" => Some("8080".to_owned()),
            _ => None,
        };
        let s =
            parse(json!({"kind": "http_check", "class": "read-only", "args": {"url": "http://127.0.0.1:${PORT}/"}}));
        let Step::HttpCheck { args, .. } = s.unwrap().expanded(&vars).unwrap() else { unreachable!() };
        assert_eq!(args.url.as_str(), "http://127.0.0.1:8080/");
        let s = parse(json!({"kind": "shell", "class": "mutating", "args": {"cmd": "echo ${NOPE}"}})).unwrap();
        assert!(matches!(s.expanded(&vars), Err(ExpandError::Unset { .. })));
    }

    /// The contract's step table (what the macros accept) and the enum (what op.json holds) agree:
    /// every built-in step with every argument it takes parses, every kind is a variant, and no
    /// variant is missing from the table.
    #[test]
    fn the_step_table_and_the_enum_agree() {
        for spec in STEPS {
            let mut args = serde_json::Map::new();
            let mut top = serde_json::Map::new();
            top.insert("kind".into(), json!(spec.name));
            top.insert("class".into(), json!(spec.class.as_str()));
            for a in spec.args {
                let v = match a.ty {
                    ArgType::Str => json!("x"),
                    ArgType::Bool => json!(true),
                    ArgType::Class => json!("mutating"),
                    ArgType::Path => json!("crate::f"),
                    ArgType::Duration => json!("5m"),
                    ArgType::Url => json!("http://127.0.0.1/"),
                    ArgType::DeleteMode => json!("never"),
                    ArgType::Names => json!(["x"]),
                };
                match (Some(a.name) == spec.positional, a.ty) {
                    (true, _) => drop(top.insert(a.name.into(), json!("n"))),
                    (false, ArgType::Path) => drop(top.insert(a.name.into(), v)),
                    (false, ArgType::Class) if spec.name == "step" => {}
                    (false, _) => drop(args.insert(a.name.into(), v)),
                }
            }
            if !args.is_empty() {
                top.insert("args".into(), serde_json::Value::Object(args));
            }
            let step = parse(serde_json::Value::Object(top.clone())).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            assert_eq!(step.kind(), spec.name);
            assert_eq!(serde_json::to_value(&step).unwrap()["kind"], spec.name);
            assert!(!matches!(step, Step::Lexicon(_)), "{} is built in", spec.name);
        }
        assert_eq!(STEPS.len(), 6, "a step kind was added to the table or the enum, not both");
    }
}
