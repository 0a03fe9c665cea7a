//! The rule-table contract: which symptom fields exist, what values they take, which predicates
//! and steps are allowed, and which dispatches each dial permits.
//!
//! This module is the one source of truth shared by the compile-time checks in `chant-macros`
//! and the runtime backstop that re-validates a loaded op.json. It does no I/O and speaks in plain
//! strings: the macros map their snake_case identifiers to the contract's camelCase names with
//! [`snake_to_camel`] before asking.

use crate::step::DeleteMode;

/// The two record shapes a rule table can be evaluated against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymptomKind {
    /// Environment mode: one `ConvergeSymptom` per tick.
    Converge,
    /// Resource mode (a ConvergeOp with `observe:`): one `ResourceSymptom` per observed resource.
    Resource,
}

impl SymptomKind {
    /// Returns the type name users see in messages (`ConvergeSymptom`, `ResourceSymptom`).
    pub fn type_name(self) -> &'static str {
        match self {
            SymptomKind::Converge => "ConvergeSymptom",
            SymptomKind::Resource => "ResourceSymptom",
        }
    }

    /// Returns the fields this kind of symptom produces, in contract order.
    pub fn fields(self) -> &'static [FieldSpec] {
        match self {
            SymptomKind::Converge => CONVERGE_FIELDS,
            SymptomKind::Resource => RESOURCE_FIELDS,
        }
    }

    /// Returns the field spec for a camelCase field name, if this symptom produces it.
    pub fn field(self, camel: &str) -> Option<&'static FieldSpec> {
        self.fields().iter().find(|f| f.camel == camel)
    }
}

/// The type of one symptom field, which decides the predicates and literals it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A string with a closed set of values.
    Enum(&'static [&'static str]),
    /// A free string.
    Text,
    /// A non-negative integer count.
    Count,
    /// An array; only `truthy` (non-empty) and `falsy` (empty) apply.
    List,
}

impl FieldType {
    /// Returns the word used for this type in messages.
    pub fn describe(self) -> &'static str {
        match self {
            FieldType::Enum(_) | FieldType::Text => "a string",
            FieldType::Count => "a number",
            FieldType::List => "an array",
        }
    }
}

/// One field a symptom produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// The snake_case name written in the DSL.
    pub snake: &'static str,
    /// The camelCase name used in op.json and tick records.
    pub camel: &'static str,
    /// The field's type and value domain.
    pub ty: FieldType,
}

/// Values of `ConvergeSymptom.status`, most cautious first.
pub const CONVERGE_STATUSES: &[&str] = &["unknown", "drifted", "stale", "unrecorded", "reconciled"];

/// Values of `ResourceSymptom.status`.
pub const RESOURCE_STATUSES: &[&str] = &["in-sync", "drifted", "unknown"];

/// The fields of `ConvergeSymptom`, in contract order.
pub const CONVERGE_FIELDS: &[FieldSpec] = &[
    field("env", "env", FieldType::Text),
    field("status", "status", FieldType::Enum(CONVERGE_STATUSES)),
    field("components", "components", FieldType::List),
    field("create_count", "createCount", FieldType::Count),
    field("update_count", "updateCount", FieldType::Count),
    field("delete_count", "deleteCount", FieldType::Count),
    field("adopt_count", "adoptCount", FieldType::Count),
    field("runtime_count", "runtimeCount", FieldType::Count),
    field("unobserved_count", "unobservedCount", FieldType::Count),
    field("unobserved_reasons", "unobservedReasons", FieldType::List),
    field("total_count", "totalCount", FieldType::Count),
    field("ambient_count", "ambientCount", FieldType::Count),
    field("dependency_unobserved_count", "dependencyUnobservedCount", FieldType::Count),
    field("artifact_changed_count", "artifactChangedCount", FieldType::Count),
];

/// The fields of `ResourceSymptom`, in contract order.
pub const RESOURCE_FIELDS: &[FieldSpec] = &[
    field("env", "env", FieldType::Text),
    field("resource", "resource", FieldType::Text),
    field("status", "status", FieldType::Enum(RESOURCE_STATUSES)),
    field("detail", "detail", FieldType::Text),
    field("mem_mb", "memMb", FieldType::Count),
    field("cpu_percent", "cpuPercent", FieldType::Count),
    field("file_age_secs", "fileAgeSecs", FieldType::Count),
];

/// The resource fields that are readings an observer may not have (a box service's resource
/// checks): a rule that reads one a resource lacks treats the resource as unknown, and unknown
/// never remediates.
pub const READING_FIELDS: &[&str] = &["memMb", "cpuPercent", "fileAgeSecs"];

const fn field(snake: &'static str, camel: &'static str, ty: FieldType) -> FieldSpec {
    FieldSpec { snake, camel, ty }
}

/// The field whose use forbids a mutating dispatch (adopt safety).
pub const ADOPT_FIELD: &str = "adoptCount";

/// The field of the ambient count, under the same adopt safety as [`ADOPT_FIELD`]: an ambient
/// resource is reported, never claimed.
pub const AMBIENT_FIELD: &str = "ambientCount";

/// Every field whose use forbids a mutating dispatch, camelCase and snake_case.
pub const ADOPT_SAFE_FIELDS: &[(&str, &str)] = &[(ADOPT_FIELD, "adopt_count"), (AMBIENT_FIELD, "ambient_count")];

/// Returns the first adopt-safe field (camelCase) that `when` reads, if any.
pub fn adopt_safe_field(when: &crate::rule::Predicate) -> Option<&'static str> {
    ADOPT_SAFE_FIELDS.iter().map(|(camel, _)| *camel).find(|f| when.references(f))
}

/// Comparison operators of a `field-comparison` predicate.
pub const COMPARISON_OPS: &[&str] = &["eq", "neq", "gt", "gte", "lt", "lte"];
/// Operators of a `field-truthiness` predicate.
pub const TRUTHINESS_OPS: &[&str] = &["truthy", "falsy"];
/// Combinators.
pub const COMBINATORS: &[&str] = &["all_of", "any_of"];

/// Returns true when `op` orders numbers (`gt`, `gte`, `lt`, `lte`).
pub fn is_ordering(op: &str) -> bool {
    matches!(op, "gt" | "gte" | "lt" | "lte")
}

/// A literal as the contract sees it: only its type and, for strings, its text matter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LiteralKind<'a> {
    /// A string literal.
    Str(&'a str),
    /// A number literal.
    Number,
    /// A boolean literal.
    Bool,
    /// Anything else (null, array, object): never valid.
    Other,
}

/// Why a leaf predicate is refused. `Display` gives the plain-words message, naming the field by
/// the name the caller passes to [`LeafProblem::message`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafProblem {
    /// The symptom does not produce this field.
    UnknownField {
        /// The closest real field, if any is close.
        suggestion: Option<&'static FieldSpec>,
    },
    /// The operator is not one of the evaluable subset.
    UnknownOp,
    /// An array field was compared; only truthy/falsy apply.
    ComparedList,
    /// An ordering op on a non-number field.
    OrderingOnNonNumber(FieldType),
    /// The literal's type does not match the field's.
    WrongLiteralType(FieldType),
    /// A string literal outside the field's closed value set.
    NotAValue {
        /// The closest allowed value, if any is close.
        suggestion: Option<&'static str>,
        /// Every allowed value.
        allowed: &'static [&'static str],
    },
}

impl LeafProblem {
    /// Renders the problem in plain words. `name` is the field as the reader wrote it, `kind` the
    /// symptom, `snake` whether to suggest snake_case names (the DSL) or camelCase (op.json).
    pub fn message(&self, name: &str, op: &str, value: Option<&str>, kind: SymptomKind, snake: bool) -> String {
        let pick = |f: &FieldSpec| if snake { f.snake } else { f.camel };
        match self {
            LeafProblem::UnknownField { suggestion } => {
                let list: Vec<&str> = kind.fields().iter().map(pick).collect();
                let mut m = format!("`{name}` is not a field of {}", kind.type_name());
                if let Some(s) = suggestion {
                    m.push_str(&format!("; did you mean `{}`?", pick(s)));
                    if snake && s.camel == name && s.snake != name {
                        m.push_str(" (fields are snake_case)");
                    }
                } else {
                    m.push_str(&format!("; its fields are {}", list.join(", ")));
                }
                m
            }
            LeafProblem::UnknownOp => format!(
                "`{op}` is outside the evaluable subset; use eq, neq, gt, gte, lt, lte, truthy, falsy, all_of or any_of"
            ),
            LeafProblem::ComparedList => format!(
                "`{name}` is an array; compare it with truthy({name}) (non-empty) or falsy({name}) (empty), not `{op}`"
            ),
            LeafProblem::OrderingOnNonNumber(ty) => {
                format!("`{op}` compares numbers, but `{name}` is {}; use eq or neq", ty.describe())
            }
            LeafProblem::WrongLiteralType(ty) => format!(
                "`{name}` is {}, so `{op}` needs {} literal here",
                ty.describe(),
                match ty {
                    FieldType::Count => "a number",
                    _ => "a string",
                }
            ),
            LeafProblem::NotAValue { suggestion, allowed } => {
                let v = value.unwrap_or("");
                let mut m = format!("`{v}` is not a value of `{name}`");
                match suggestion {
                    Some(s) => m.push_str(&format!("; did you mean `{s}`?")),
                    None => m.push_str(&format!("; it is one of {}", allowed.join(", "))),
                }
                m
            }
        }
    }
}

/// Checks one leaf predicate against the contract. `camel` is the field's camelCase name; for a
/// truthiness op pass `literal = None`.
///
/// # Errors
///
/// Returns the first [`LeafProblem`] found.
pub fn check_leaf(
    kind: SymptomKind,
    camel: &str,
    op: &str,
    literal: Option<LiteralKind<'_>>,
) -> Result<(), LeafProblem> {
    let Some(spec) = kind.field(camel) else {
        return Err(LeafProblem::UnknownField { suggestion: suggest_field(kind, camel) });
    };
    if TRUTHINESS_OPS.contains(&op) {
        return Ok(());
    }
    if !COMPARISON_OPS.contains(&op) {
        return Err(LeafProblem::UnknownOp);
    }
    if spec.ty == FieldType::List {
        return Err(LeafProblem::ComparedList);
    }
    if is_ordering(op) && spec.ty != FieldType::Count {
        return Err(LeafProblem::OrderingOnNonNumber(spec.ty));
    }
    match (spec.ty, literal) {
        (FieldType::Count, Some(LiteralKind::Number)) => Ok(()),
        (FieldType::Text, Some(LiteralKind::Str(_))) => Ok(()),
        (FieldType::Enum(values), Some(LiteralKind::Str(s))) => {
            if values.contains(&s) {
                Ok(())
            } else {
                Err(LeafProblem::NotAValue { suggestion: did_you_mean(s, values.iter().copied()), allowed: values })
            }
        }
        (ty, _) => Err(LeafProblem::WrongLiteralType(ty)),
    }
}

/// Returns the field closest to `name`, comparing both snake_case and camelCase spellings.
pub fn suggest_field(kind: SymptomKind, name: &str) -> Option<&'static FieldSpec> {
    let norm = camel_to_snake(name);
    kind.fields()
        .iter()
        .filter_map(|f| {
            let d = levenshtein(&norm, f.snake).min(levenshtein(name, f.camel));
            (d <= threshold(name)).then_some((d, f))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, f)| f)
}

/// Returns the candidate closest to `word`, if one is within a small edit distance.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (levenshtein(word, c), c))
        .filter(|(d, _)| *d <= threshold(word))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn threshold(word: &str) -> usize {
    (word.chars().count() / 3).max(1)
}

/// Returns the edit distance between two strings: insertions, deletions, substitutions and
/// transpositions of two adjacent characters each count one (the optimal string alignment
/// distance, so `bd` is one edit from `db`, as a typist would count it).
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: the one before the previous (for transpositions), the previous, the current.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 0..a.len() {
        let mut cur = vec![i + 1; b.len() + 1];
        for j in 0..b.len() {
            let cost = usize::from(a[i] != b[j]);
            let mut d = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                d = d.min(before[j - 1] + 1);
            }
            cur[j + 1] = d;
        }
        before = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

/// Converts `adopt_count` to `adoptCount`.
pub fn snake_to_camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut upper = false;
    for c in s.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Converts `adoptCount` to `adopt_count`.
pub fn camel_to_snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if c.is_uppercase() {
            out.push('_');
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The authority a ConvergeOp grants its dispatches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DialKind {
    /// Only report; read-only targets still run.
    Observe,
    /// Propose mutations for review (`propose()`: a commit on a proposal branch); a mutating
    /// `run()` is refused.
    Reconcile,
    /// Run mutating targets.
    Apply,
}

impl DialKind {
    /// Every dial, in the order of increasing authority.
    pub const ALL: [DialKind; 3] = [DialKind::Observe, DialKind::Reconcile, DialKind::Apply];

    /// Returns the dial's name as written in the DSL and op.json.
    pub fn as_str(self) -> &'static str {
        match self {
            DialKind::Observe => "observe",
            DialKind::Reconcile => "reconcile",
            DialKind::Apply => "apply",
        }
    }

    /// Parses a dial name.
    pub fn parse(s: &str) -> Option<DialKind> {
        DialKind::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// What an Op does to the world, folded from its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClassKind {
    /// Reads only.
    ReadOnly,
    /// Changes state, recoverably.
    Mutating,
    /// Deletes or tears down.
    Destructive,
}

impl ClassKind {
    /// Every class, from least to most dangerous.
    pub const ALL: [ClassKind; 3] = [ClassKind::ReadOnly, ClassKind::Mutating, ClassKind::Destructive];

    /// Returns the class name used in op.json (`read-only`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClassKind::ReadOnly => "read-only",
            ClassKind::Mutating => "mutating",
            ClassKind::Destructive => "destructive",
        }
    }

    /// Returns the identifier used in the DSL (`read_only`).
    pub fn ident(self) -> &'static str {
        match self {
            ClassKind::ReadOnly => "read_only",
            ClassKind::Mutating => "mutating",
            ClassKind::Destructive => "destructive",
        }
    }

    /// Parses the DSL identifier (`read_only`).
    pub fn from_ident(s: &str) -> Option<ClassKind> {
        ClassKind::ALL.into_iter().find(|c| c.ident() == s)
    }
}

/// Why a dial does not permit a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchRefusal {
    /// A mutating target under `observe` or `reconcile`.
    MutatingUnderDial(DialKind),
    /// A destructive target, under any dial.
    Destructive,
}

impl DispatchRefusal {
    /// Renders the refusal for a rule dispatching `target`.
    pub fn message(self, target: &str) -> String {
        match self {
            DispatchRefusal::MutatingUnderDial(DialKind::Reconcile) => format!(
                "run(\"{target}\") targets a mutating Op, but dial `reconcile` proposes changes instead of making them; write propose(\"{target}\") for a reviewable proposal branch, use report(), or set `dial: apply`"
            ),
            DispatchRefusal::MutatingUnderDial(d) => format!(
                "run(\"{target}\") targets a mutating Op, but dial `{}` only permits read-only targets; use report(), or set `dial: apply`",
                d.as_str()
            ),
            DispatchRefusal::Destructive => format!(
                "run(\"{target}\") targets a destructive Op; destructive run() targets are refused under every dial, because an unattended tick cannot ask for approval first; remediate by hand through a gated Op"
            ),
        }
    }
}

/// Why a dial or a target does not permit a `propose()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProposalRefusal {
    /// Under `observe`, which only reports.
    Observe,
    /// A read-only target changes nothing, so there is nothing to propose.
    ReadOnly,
}

impl ProposalRefusal {
    /// Renders the refusal for a rule proposing `target`.
    pub fn message(self, target: &str) -> String {
        match self {
            ProposalRefusal::Observe => format!(
                "propose(\"{target}\") writes a proposal branch of the project repository, but dial `observe` only reports; set `dial: reconcile`, or use report()"
            ),
            ProposalRefusal::ReadOnly => format!(
                "propose(\"{target}\") targets a read-only Op, which changes nothing to propose; write run(\"{target}\")"
            ),
        }
    }
}

/// Decides whether `dial` permits proposing a target of `class`: under `reconcile` or `apply`, a
/// mutating or destructive target (a person reviews the proposal before anything changes).
///
/// # Errors
///
/// Returns the [`ProposalRefusal`] when it does not.
pub fn permits_proposal(dial: DialKind, class: ClassKind) -> Result<(), ProposalRefusal> {
    match (dial, class) {
        (DialKind::Observe, _) => Err(ProposalRefusal::Observe),
        (_, ClassKind::ReadOnly) => Err(ProposalRefusal::ReadOnly),
        _ => Ok(()),
    }
}

/// Decides whether `dial` permits dispatching a target of `class` (read-only: any dial; mutating:
/// apply only; destructive: never).
///
/// # Errors
///
/// Returns the [`DispatchRefusal`] when it does not.
pub fn permits(dial: DialKind, class: ClassKind) -> Result<(), DispatchRefusal> {
    match (class, dial) {
        (ClassKind::ReadOnly, _) | (ClassKind::Mutating, DialKind::Apply) => Ok(()),
        (ClassKind::Mutating, d) => Err(DispatchRefusal::MutatingUnderDial(d)),
        (ClassKind::Destructive, _) => Err(DispatchRefusal::Destructive),
    }
}

/// The message for a rule that reads `adopt_count` and dispatches a mutating target.
pub fn adopt_refusal(target: &str, snake: bool) -> String {
    adopt_safe_refusal(target, ADOPT_FIELD, snake)
}

/// The message for a rule that reads the adopt-safe field `field` (camelCase, one of
/// [`ADOPT_SAFE_FIELDS`]) and dispatches a mutating target.
pub fn adopt_safe_refusal(target: &str, field: &str, snake: bool) -> String {
    if field == AMBIENT_FIELD {
        let f = if snake { "ambient_count" } else { AMBIENT_FIELD };
        return format!(
            "run(\"{target}\") targets a mutating Op, but the predicate reads `{f}`; an ambient resource (nothing declares it, nothing references it) is reported, never claimed: use report() or a read-only op for a rule that reads the ambient signal"
        );
    }
    let f = if snake { "adopt_count" } else { ADOPT_FIELD };
    format!(
        "run(\"{target}\") targets a mutating Op, but the predicate reads `{f}`; an unowned resource is reported, never auto-claimed: use report() for a rule that reads the adopt signal"
    )
}

/// The type of a step argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// A string (may hold `${VAR}`, expanded when the step runs).
    Str,
    /// A boolean.
    Bool,
    /// A verb class identifier (`read_only`, `mutating`, `destructive`).
    Class,
    /// A path to a Rust function.
    Path,
    /// A duration (`5m`, `48h`): [`crate::duration::Timeout`].
    Duration,
    /// An `http://` or `https://` URL, possibly holding `${VAR}`: [`crate::step::HttpUrl`].
    Url,
    /// `never` or `owned-only`: [`crate::step::DeleteMode`].
    DeleteMode,
    /// A non-empty list of names in brackets (`["app", "hud"]`), each following the name rule.
    Names,
}

/// One argument a step accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgSpec {
    /// The argument's name.
    pub name: &'static str,
    /// Its type.
    pub ty: ArgType,
    /// Whether it must be given.
    pub required: bool,
}

/// A built-in step: its name, its positional argument (if any), its arguments and its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepSpec {
    /// The step's name as written (`apply`).
    pub name: &'static str,
    /// The name of the argument a leading positional string fills (`gate("name")`).
    pub positional: Option<&'static str>,
    /// Every argument it accepts.
    pub args: &'static [ArgSpec],
    /// Its class when nothing in its arguments changes it.
    pub class: ClassKind,
}

const fn arg(name: &'static str, ty: ArgType, required: bool) -> ArgSpec {
    ArgSpec { name, ty, required }
}

/// The built-in steps.
pub const STEPS: &[StepSpec] = &[
    StepSpec {
        name: "apply",
        positional: None,
        args: &[arg("env", ArgType::Str, true), arg("delete_mode", ArgType::DeleteMode, false)],
        class: ClassKind::Mutating,
    },
    StepSpec {
        name: "teardown",
        positional: None,
        args: &[arg("env", ArgType::Str, true), arg("allow_holes", ArgType::Bool, false)],
        class: ClassKind::Destructive,
    },
    StepSpec {
        name: "http_check",
        positional: None,
        args: &[arg("url", ArgType::Url, true), arg("timeout", ArgType::Duration, false)],
        class: ClassKind::ReadOnly,
    },
    StepSpec {
        name: "shell",
        positional: None,
        args: &[
            arg("cmd", ArgType::Str, true),
            arg("class", ArgType::Class, false),
            arg("timeout", ArgType::Duration, false),
        ],
        class: ClassKind::Mutating,
    },
    StepSpec {
        name: "gate",
        positional: Some("name"),
        args: &[
            arg("name", ArgType::Str, true),
            arg("description", ArgType::Str, false),
            arg("sealed", ArgType::Bool, false),
            arg("timeout", ArgType::Duration, false),
            arg("carries", ArgType::Str, false),
            arg("within", ArgType::Duration, false),
        ],
        class: ClassKind::ReadOnly,
    },
    StepSpec {
        name: "step",
        positional: Some("name"),
        args: &[arg("name", ArgType::Str, true), arg("class", ArgType::Class, false), arg("run", ArgType::Path, true)],
        class: ClassKind::Mutating,
    },
];

/// Returns the built-in step named `name`.
pub fn step_spec(name: &str) -> Option<&'static StepSpec> {
    STEPS.iter().find(|s| s.name == name)
}

/// Returns a step's class from its kind and arguments: a declared `class` wins where the step
/// takes one; `apply(delete_mode = "owned-only")` is destructive.
pub fn step_class(spec: &StepSpec, declared: Option<ClassKind>, delete_mode: Option<DeleteMode>) -> ClassKind {
    if let Some(c) = declared {
        return c;
    }
    if spec.name == "apply" && delete_mode == Some(DeleteMode::OwnedOnly) {
        return ClassKind::Destructive;
    }
    spec.class
}

/// The default flap threshold.
pub const DEFAULT_FLAP_THRESHOLD: u64 = 3;

/// The default per-tick budget.
pub const DEFAULT_BUDGET: u64 = 3;

/// A text a person must write (a rule's `why`, a report's reason) says something: it is not
/// blank. The macros check it at the literal; the loader checks a rule's `why` in op.json.
pub fn is_written(text: &str) -> bool {
    !text.trim().is_empty()
}

/// A rule's flap threshold is a number of ticks, at least one. The macros check it at the
/// literal; the loader in op.json.
pub fn flap_threshold_holds(n: u64) -> bool {
    n >= 1
}

/// Derives a rule id from its predicate and action text alone, so reordering rules never moves
/// history: a slug of both, shortened with a hash suffix past 60 characters.
pub fn derive_rule_id(predicate_json: &str, action_json: &str, slug: &str) -> String {
    let mut clean = String::new();
    for c in slug.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            clean.push(c);
        } else if !clean.ends_with('-') && !clean.is_empty() {
            clean.push('-');
        }
    }
    while clean.ends_with('-') {
        clean.pop();
    }
    if clean.is_empty() || !clean.starts_with(|c: char| c.is_ascii_lowercase()) {
        clean.insert_str(0, "rule-");
    }
    if clean.len() > 60 {
        let hash = fnv1a64(predicate_json.as_bytes()) ^ fnv1a64(action_json.as_bytes()).rotate_left(1);
        clean.truncate(51);
        while clean.ends_with('-') {
            clean.pop();
        }
        clean.push_str(&format!("-{:08x}", hash & 0xffff_ffff));
    }
    clean
}

/// Returns the 64-bit FNV-1a hash of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod distance_tests {
    use super::{did_you_mean, levenshtein};

    #[test]
    fn a_swap_of_two_adjacent_letters_is_one_edit() {
        assert_eq!(levenshtein("bd", "db"), 1);
        assert_eq!(levenshtein("stagnig", "staging"), 1);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("abc", "abc"), 0);
        assert_eq!(levenshtein("ca", "abc"), 3);
        assert_eq!(did_you_mean("bd", ["db", "staging"]), Some("db"));
        assert_eq!(did_you_mean("xyz", ["db", "staging"]), None);
    }
}
