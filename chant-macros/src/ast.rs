//! The typed syntax tree of `op!`, `converge_op!`, `when!` and `main!`, as written. Every node
//! keeps its source tokens, so each check can point at the offending token.
//!
//! The parser fills in what it could read and records an error for the rest; a field that failed
//! to parse is `None` here, so the checks skip it instead of reporting a cascade.

use proc_macro2::{Group, Ident, TokenStream};
use syn::{LitBool, LitInt, LitStr};

/// An `op! { ... }` invocation.
pub(crate) struct OpAst {
    /// `name: "..."`.
    pub(crate) name: Option<LitStr>,
    /// `overview: "..."`.
    pub(crate) overview: Option<LitStr>,
    /// `env: "..."`.
    pub(crate) env: Option<LitStr>,
    /// `phases: [...]`.
    pub(crate) phases: Vec<PhaseAst>,
    /// `on_failure: [...]`.
    pub(crate) on_failure: Vec<PhaseAst>,
}

/// `phase("Name", [steps])`.
pub(crate) struct PhaseAst {
    /// The phase's name.
    pub(crate) name: LitStr,
    /// Its steps.
    pub(crate) steps: Vec<StepAst>,
    /// `component = "<name>"`: the component it belongs to.
    pub(crate) component: Option<LitStr>,
}

/// A step call, `name(arg = value, ...)`, with an optional leading positional string.
pub(crate) struct StepAst {
    /// The step's name (`apply`, `gate`, `step`, ...).
    pub(crate) kind: Ident,
    /// The argument list, for spanning errors about the whole call.
    pub(crate) group: Group,
    /// A leading positional string (`gate("name")`, `step("purge-cache")`).
    pub(crate) positional: Option<LitStr>,
    /// The named arguments, in order.
    pub(crate) args: Vec<ArgAst>,
}

/// One named step argument.
pub(crate) struct ArgAst {
    /// The argument's name; any identifier, keywords included (`box`).
    pub(crate) name: Ident,
    /// Its value.
    pub(crate) value: ArgValue,
}

/// A step argument's value, typed by its syntax.
pub(crate) enum ArgValue {
    /// A string literal; `${VAR}` is kept verbatim.
    Str(LitStr),
    /// `true` / `false`.
    Bool(LitBool),
    /// A path (`read_only`, `crate::steps::purge`).
    Path(syn::Path),
    /// A list in brackets (`["app", "hud"]`), its elements checked by the step's argument type.
    List(proc_macro2::Group),
    /// Anything else.
    Other(TokenStream),
}

/// A `converge_op! { ... }` invocation.
pub(crate) struct ConvergeAst {
    /// `name: "..."`.
    pub(crate) name: Option<LitStr>,
    /// `overview: "..."`.
    pub(crate) overview: Option<LitStr>,
    /// `env: "..."`.
    pub(crate) env: Option<LitStr>,
    /// `dial: observe | reconcile | apply`.
    pub(crate) dial: Option<Ident>,
    /// `budget: N`, already checked to be a non-negative integer.
    pub(crate) budget: Option<u64>,
    /// `schedule: "<cron>"`.
    pub(crate) schedule: Option<LitStr>,
    /// `tz: "Area/City"`, with its key for errors.
    pub(crate) tz: Option<(Ident, LitStr)>,
    /// `observe: <step>`.
    pub(crate) observe: Option<StepAst>,
    /// `windows: [...]`: the windows that parsed.
    pub(crate) windows: Vec<WindowAst>,
    /// `restart_limit: limit(N, within = "...")`.
    pub(crate) restart_limit: Option<LimitAst>,
    /// `rules: [...]`: the bracket group and the rules read from it.
    pub(crate) rules: Option<(Group, Vec<RuleAst>)>,
    /// True when `dial:` was given but could not be read (its checks are then skipped, not
    /// guessed).
    pub(crate) dial_failed: bool,
}

/// One sync window, `deny("<cron>", "<duration>")` or `allow(...)`.
pub(crate) struct WindowAst {
    /// `deny` or `allow` as written (checked by [`crate::check`]).
    pub(crate) kind: Ident,
    /// The cron expression.
    pub(crate) cron: LitStr,
    /// The duration.
    pub(crate) duration: LitStr,
}

/// `limit(N, within = "<duration>")`.
pub(crate) struct LimitAst {
    /// `limit` as written (checked by [`crate::check`]).
    pub(crate) call: Ident,
    /// The count.
    pub(crate) count: LitInt,
    /// The window.
    pub(crate) within: LitStr,
}

/// One `when!(predicate => action, options...)`.
pub(crate) struct RuleAst {
    /// The `when` identifier: errors about the whole rule point here, and its line is the rule's
    /// `source`.
    pub(crate) when: Ident,
    /// The predicate, if it parsed.
    pub(crate) predicate: Option<PredicateAst>,
    /// The action, if it parsed.
    pub(crate) action: Option<ActionAst>,
    /// `id = "..."`.
    pub(crate) id: Option<LitStr>,
    /// `why = "..."`.
    pub(crate) why: Option<LitStr>,
    /// `flap_threshold = N`.
    pub(crate) flap_threshold: Option<LitInt>,
}

/// A predicate call.
pub(crate) enum PredicateAst {
    /// `eq(field, literal)` and the other comparisons.
    Comparison {
        /// The operator's identifier.
        op: Ident,
        /// The field as written.
        field: Ident,
        /// The literal.
        literal: LiteralAst,
    },
    /// `truthy(field)` / `falsy(field)`.
    Truthiness {
        /// The operator's identifier.
        op: Ident,
        /// The field as written.
        field: Ident,
    },
    /// `all_of(...)` / `any_of(...)`.
    Combinator {
        /// The combinator's identifier.
        op: Ident,
        /// The children that parsed.
        children: Vec<PredicateAst>,
    },
}

/// A literal in a comparison.
pub(crate) enum LiteralAst {
    /// A string.
    Str(LitStr),
    /// A number, as JSON will hold it, with its tokens.
    Number(serde_json::Number, TokenStream),
    /// A boolean.
    Bool(LitBool),
    /// Anything else.
    Other(TokenStream),
}

/// A rule's action.
pub(crate) enum ActionAst {
    /// `run("op")` or `propose("op")`: an action naming an Op.
    Run {
        /// True for `propose`.
        propose: bool,
        /// The `run` (or `propose`) identifier.
        ident: Ident,
        /// The parenthesised argument, for the split span of dial refusals.
        group: Group,
        /// The target's name.
        target: LitStr,
    },
    /// `report("reason")`.
    Report {
        /// The reason.
        reason: LitStr,
    },
}

/// A `main!(...)` invocation.
pub(crate) enum MainAst {
    /// `main!()` or `main!(default = help)`.
    Help,
    /// `main!(default = tick("op"))`.
    Tick(LitStr),
}
