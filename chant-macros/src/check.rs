//! Checks a parsed invocation against the contract and builds its op.json document.
//!
//! Every rule of the contract comes from the shared model (`contract::check_leaf`, `permits`,
//! `adopt_refusal`, `Name::parse`, `step_spec`, `step_class`, `cron::parse_cron`,
//! `Rule::derive_id`); this module only maps them onto the tokens the user wrote. All problems go
//! to the [`Ctxt`]; nothing returns early, so one invocation reports all of its errors. What could
//! be checked is still returned (the name, the `run()` targets), so the expansion can emit a
//! placeholder and the cross-op checks after errors.

use std::collections::BTreeMap;

use chant_core::contract::{self, ClassKind, DEFAULT_BUDGET, DialKind, LeafProblem, LiteralKind, SymptomKind};
use chant_core::cron;
use chant_core::limit::{self, RestartLimit};
use chant_core::name::Name;
use chant_core::op::{ConvergeSpec, OP_JSON_VERSION, OpDocument, Overlap, Phase, Schedule, Step};
use chant_core::rule::{Action, ComparisonOp, Literal, Predicate, Rule, TruthinessOp};
use chant_core::window::{self, SyncWindow, WindowKind};
use proc_macro2::{Group, Ident};
use quote::quote;
use syn::LitStr;

use crate::ast::{ActionAst, ConvergeAst, LiteralAst, OpAst, PhaseAst, PredicateAst, RuleAst};
use crate::ctxt::Ctxt;
use crate::env::BuildEnv;
use crate::known::KnownOps;
use crate::lexicon::StepTable;
use crate::symbol;

mod steps;

use steps::step;

/// What the checks made of one `op!` or `converge_op!`.
pub(crate) struct Checked {
    /// The op's name, when it was given and valid.
    pub(crate) name: Option<Name>,
    /// True for a `converge_op!`.
    pub(crate) converge: bool,
    /// The op.json document; complete only when no error was recorded.
    pub(crate) doc: Option<OpDocument>,
    /// The user steps (`step("name", run = path)`) whose functions the binary links.
    pub(crate) user_steps: Vec<(String, syn::Path)>,
    /// One entry per `run()` rule, for the compile-time resolution and class checks.
    pub(crate) dispatches: Vec<Dispatch>,
}

/// A `run("target")` of a rule, with the classes of target it must refuse.
pub(crate) struct Dispatch {
    /// The target's name literal: an unknown target is reported here.
    pub(crate) target: LitStr,
    /// The `run` identifier and its argument group: a refusal spans `run("target")`.
    pub(crate) run: Ident,
    /// The argument group of `run(...)`.
    pub(crate) group: Group,
    /// For each refused class of target, the message const evaluation fails with. Empty when the
    /// macro already reported the refusal itself (the target's class was known).
    pub(crate) refusals: Vec<(ClassKind, String)>,
    /// The message const evaluation fails with when no op has the target's name.
    pub(crate) unknown: String,
}

/// Checks an `op!`.
pub(crate) fn op(ast: &OpAst, member: Option<Option<String>>, table: &StepTable, cx: &Ctxt) -> Checked {
    let name = ast.name.as_ref().and_then(|n| name_of(cx, "Op name", n));
    let overview = ast.overview.as_ref().and_then(|o| non_blank(cx, o, "overview", "say in one line what the Op does"));
    let op_env = ast.env.as_ref().and_then(|e| name_of(cx, "env name", e));
    let mut user_steps = Vec::new();
    let main_phases = phases(&ast.phases, table, cx, &mut user_steps);
    let on_failure = phases(&ast.on_failure, table, cx, &mut user_steps);
    let doc = match (&name, overview, main_phases, on_failure, member) {
        (Some(name), Some(overview), Some(phases), Some(on_failure), Some(member)) => {
            let mut doc = OpDocument {
                version: OP_JSON_VERSION,
                name: name.clone(),
                overview,
                member,
                env: op_env,
                labels: BTreeMap::new(),
                schedule: None,
                class: ClassKind::ReadOnly,
                phases,
                on_failure,
                converge: None,
            };
            doc.class = doc.folded_class();
            composition(ast, &doc, cx);
            Some(doc)
        }
        _ => None,
    };
    Checked { name, converge: false, doc, user_steps, dispatches: Vec::new() }
}

/// Reports the op's component and carry problems ([`chant_core::component`],
/// [`chant_core::carry`], the loader's checks) at their tokens: a phase's `component`, a gate's
/// `carries`, `within` or `sealed`.
fn composition(ast: &OpAst, doc: &OpDocument, cx: &Ctxt) {
    let phases = || ast.phases.iter().chain(ast.on_failure.iter());
    for problem in chant_core::component::check(doc) {
        let at = phases().find(|p| p.name.value() == problem.phase()).and_then(|p| p.component.as_ref());
        match at {
            Some(lit) => cx.error(lit.span(), &problem),
            None => cx.error(proc_macro2::Span::call_site(), &problem),
        }
    }
    for problem in chant_core::carry::check(doc) {
        let gate = phases()
            .flat_map(|p| p.steps.iter())
            .find(|s| s.kind == "gate" && s.positional.as_ref().is_some_and(|n| n.value() == problem.gate()));
        let arg = gate.and_then(|g| g.args.iter().find(|a| a.name == problem.argument()));
        match (arg, gate) {
            (Some(a), _) => {
                let span = match &a.value {
                    crate::ast::ArgValue::Str(l) => l.span(),
                    _ => a.name.span(),
                };
                cx.error(span, &problem);
            }
            (None, Some(g)) => {
                let (k, group) = (&g.kind, &g.group);
                cx.error_spanned(quote!(#k #group), &problem);
            }
            (None, None) => cx.error(proc_macro2::Span::call_site(), &problem),
        }
    }
}

fn phases(p: &[PhaseAst], table: &StepTable, cx: &Ctxt, user: &mut Vec<(String, syn::Path)>) -> Option<Vec<Phase>> {
    let mut out = Vec::new();
    let mut ok = true;
    for phase in p {
        let mut steps = Vec::new();
        for s in &phase.steps {
            match step(s, table, cx) {
                Some((step, path)) => {
                    if let (Some(path), Some(n)) = (path, step.name()) {
                        user.push((n.to_string(), path));
                    }
                    steps.push(step);
                }
                None => ok = false,
            }
        }
        let component = match &phase.component {
            Some(lit) => match name_of(cx, "component name", lit) {
                Some(n) => Some(n),
                None => {
                    ok = false;
                    None
                }
            },
            None => None,
        };
        out.push(Phase { name: phase.name.value(), steps, component });
    }
    ok.then_some(out)
}

fn name_of(cx: &Ctxt, what: &str, lit: &LitStr) -> Option<Name> {
    match Name::parse(what, lit.value()) {
        Ok(n) => Some(n),
        Err(e) => {
            cx.error(lit.span(), e);
            None
        }
    }
}

fn non_blank(cx: &Ctxt, lit: &LitStr, what: &str, fix: &str) -> Option<String> {
    let v = lit.value();
    if !contract::is_written(&v) {
        cx.error(lit.span(), format!("`{what}` is blank; {fix}"));
        None
    } else {
        Some(v)
    }
}

/// Checks a `converge_op!`.
pub(crate) fn converge(
    ast: &ConvergeAst,
    member: Option<Option<String>>,
    env: &BuildEnv,
    known: &KnownOps,
    table: &StepTable,
    cx: &Ctxt,
) -> Checked {
    let name = ast.name.as_ref().and_then(|n| name_of(cx, "ConvergeOp name", n));
    let op_env = ast.env.as_ref().and_then(|e| name_of(cx, "env name", e));
    let overview = match &ast.overview {
        Some(o) => non_blank(cx, o, "overview", "say in one line what the ConvergeOp keeps converged"),
        None => None,
    };
    let dial = match &ast.dial {
        None if ast.dial_failed => None,
        None => Some(DialKind::Observe),
        Some(i) => {
            let word = i.to_string();
            let d = DialKind::parse(&word);
            if d.is_none() {
                let hint = match contract::did_you_mean(&word, DialKind::ALL.map(DialKind::as_str)) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "a dial is observe, reconcile or apply".to_owned(),
                };
                cx.error(i.span(), format!("unknown dial `{word}`; {hint}"));
            }
            d
        }
    };
    let schedule = ast.schedule.as_ref().and_then(|s| match cron::parse_cron(&s.value()) {
        Ok(_) => {
            Some(Schedule { cron: s.value(), tz: ast.tz.as_ref().map(|(_, t)| t.value()), overlap: Overlap::Skip })
        }
        Err(e) => {
            cx.error(s.span(), e);
            None
        }
    });
    let windows = windows(ast, cx);
    let restart_limit = restart_limit(ast, cx);
    if let Some((key, tz)) = &ast.tz {
        if ast.schedule.is_none() && ast.windows.is_empty() {
            cx.error(
                key.span(),
                "`tz` sets the time zone of `schedule`, and there is no `schedule`; add one or remove `tz`",
            );
        }
        let t = tz.value();
        if t.trim().is_empty() || t.contains(char::is_whitespace) {
            cx.error(tz.span(), format!("`{t}` is not a time zone name; write an IANA name such as \"Europe/Berlin\""));
        }
    }
    let observe = ast.observe.as_ref().and_then(|s| {
        let (step, _) = step(s, table, cx)?;
        let gate = matches!(step, Step::Gate { .. });
        if step.class() != ClassKind::ReadOnly || gate {
            let what = if gate { "a gate".to_owned() } else { format!("{} here", step.class().as_str()) };
            let (k, g) = (&s.kind, &s.group);
            cx.error_spanned(
                quote!(#k #g),
                format!(
                    "the observer must be read-only, and `{}` is {what}; observe with a read-only step such as `sprite_services_observe(box = true)`, or declare a shell step that only reads with `class = read_only`",
                    s.kind
                ),
            );
            return None;
        }
        Some(step)
    });
    let kind = if ast.observe.is_some() { SymptomKind::Resource } else { SymptomKind::Converge };
    let rules = rules(ast, name.as_deref(), kind, dial, env, known, cx);
    let doc = match (&name, &op_env, dial, member, rules.rules, ast.observe.is_some() == observe.is_some()) {
        (Some(n), Some(e), Some(d), Some(member), Some(rules), true)
            if schedule.is_some() == ast.schedule.is_some()
                && windows.len() == ast.windows.len()
                && restart_limit.is_some() == ast.restart_limit.is_some() =>
        {
            let labels = BTreeMap::from([
                ("Converge".to_owned(), "true".to_owned()),
                ("Env".to_owned(), e.to_string()),
                ("Dial".to_owned(), d.as_str().to_owned()),
            ]);
            let mut doc = OpDocument {
                version: OP_JSON_VERSION,
                name: n.clone(),
                overview: overview.unwrap_or_else(|| {
                    format!("Converge the {e} environment toward its declaration (dial: {})", d.as_str())
                }),
                member,
                env: Some(e.clone()),
                labels,
                schedule,
                class: ClassKind::ReadOnly,
                phases: Vec::new(),
                on_failure: Vec::new(),
                converge: Some(ConvergeSpec {
                    dial: d,
                    budget: ast.budget.unwrap_or(DEFAULT_BUDGET),
                    observe,
                    rules,
                    windows,
                    restart_limit,
                }),
            };
            doc.class = doc.folded_class();
            Some(doc)
        }
        _ => None,
    };
    Checked { name, converge: true, doc, user_steps: Vec::new(), dispatches: rules.dispatches }
}

/// Checks `windows: [...]`: each kind, cron and duration, each error at its token. Returns the
/// windows that passed (fewer than written when one failed), each with the op's `tz`.
fn windows(ast: &ConvergeAst, cx: &Ctxt) -> Vec<SyncWindow> {
    let tz = ast.tz.as_ref().map(|(_, t)| t.value());
    let mut out = Vec::new();
    for w in &ast.windows {
        let word = w.kind.to_string();
        let kind = WindowKind::parse(&word);
        if kind.is_none() {
            let hint = match contract::did_you_mean(&word, WindowKind::ALL.map(WindowKind::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "a window is `allow(...)` or `deny(...)`".to_owned(),
            };
            cx.error(w.kind.span(), format!("unknown window `{word}`; {hint}"));
        }
        // The schedule's own check, so the error reads as a schedule's does.
        let cron_ok = match cron::parse_cron(&w.cron.value()) {
            Ok(_) => true,
            Err(e) => {
                cx.error(w.cron.span(), e);
                false
            }
        };
        let duration_ok = match window::check_duration(&w.duration.value()) {
            Ok(_) => true,
            Err(e) => {
                cx.error(w.duration.span(), e);
                false
            }
        };
        if let (Some(kind), true, true) = (kind, cron_ok, duration_ok) {
            out.push(SyncWindow { kind, cron: w.cron.value(), duration: w.duration.value(), tz: tz.clone() });
        }
    }
    out
}

/// Checks `restart_limit: limit(N, within = "...")`: the call's name, a count of at least 1 and a
/// strict, non-zero window, each error at its token.
fn restart_limit(ast: &ConvergeAst, cx: &Ctxt) -> Option<RestartLimit> {
    let l = ast.restart_limit.as_ref()?;
    let mut ok = true;
    if l.call != symbol::LIMIT {
        let hint = match contract::did_you_mean(&l.call.to_string(), [symbol::LIMIT]) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "write `limit(<count>, within = \"<duration>\")`".to_owned(),
        };
        cx.error(l.call.span(), format!("unknown restart limit `{}`; {hint}", l.call));
        ok = false;
    }
    let count = match l.count.base10_parse::<u64>() {
        Ok(0) => {
            cx.error(l.count.span(), limit::Error::ZeroCount);
            None
        }
        Ok(n) => Some(n),
        Err(e) => {
            cx.error(l.count.span(), format!("the count of `limit(...)` is a positive integer: {e}"));
            None
        }
    };
    if let Err(e) = limit::check_within(&l.within.value()) {
        cx.error(l.within.span(), e);
        ok = false;
    }
    let count = count?;
    ok.then(|| RestartLimit { count, within: l.within.value() })
}

struct Rules {
    rules: Option<Vec<Rule>>,
    dispatches: Vec<Dispatch>,
}

/// An id already taken, for the duplicate check.
struct Taken {
    id: String,
    line: u32,
    derived: bool,
}

fn rules(
    ast: &ConvergeAst,
    op: Option<&str>,
    kind: SymptomKind,
    dial: Option<DialKind>,
    env: &BuildEnv,
    known: &KnownOps,
    cx: &Ctxt,
) -> Rules {
    let Some((_, list)) = &ast.rules else {
        return Rules { rules: None, dispatches: Vec::new() };
    };
    let mut ok = !list.is_empty();
    let mut out = Vec::new();
    let mut dispatches = Vec::new();
    let mut taken: Vec<Taken> = Vec::new();
    for r in list {
        let checked = rule(r, kind, env, cx);
        let id = checked.as_ref().map(|c| c.0.id.clone());
        if let Some(ActionAst::Run { propose, ident, group, target }) = &r.action
            && name_ok(target).is_some()
        {
            let reads_adopt = checked.as_ref().map(|c| contract::adopt_safe_field(&c.0.when)).or_else(|| {
                r.predicate.as_ref().map(|p| {
                    contract::ADOPT_SAFE_FIELDS.iter().find(|(_, snake)| mentions(p, snake)).map(|(camel, _)| *camel)
                })
            });
            let prefix = format!(
                "converge_op \"{}\", rule \"{}\": ",
                op.unwrap_or("(unnamed)"),
                id.as_deref().or(r.id.as_ref().map(LitStr::value).as_deref()).unwrap_or("(unnamed rule)")
            );
            let name = target.value();
            let mut refused =
                if *propose { proposal_refusals(&name, dial) } else { refusals(&name, dial, reads_adopt) };
            // A target the macro can see is checked here, so its refusal reads like every other
            // error of the macro; the registry's const check then only confirms it is declared.
            if let Some(msg) = known.get(&name).and_then(|t| refused.iter().find(|(c, _)| *c == t.class)) {
                cx.error_spanned(quote!(#ident #group), &msg.1);
                refused.clear();
            }
            dispatches.push(Dispatch {
                target: target.clone(),
                run: ident.clone(),
                group: group.clone(),
                refusals: refused.into_iter().map(|(c, m)| (c, format!("{prefix}{m}"))).collect(),
                unknown: format!(
                    "{prefix}{}",
                    unknown_target(if *propose { symbol::PROPOSE } else { symbol::RUN }, &name, known)
                ),
            });
        }
        let Some((rule, derived)) = checked else {
            ok = false;
            continue;
        };
        let line = rule.source.as_ref().map_or(0, |s| s.line);
        if let Some(first) = taken.iter().find(|t| t.id == rule.id) {
            let hint = if derived || first.derived {
                "; the id was derived from the predicate and action, so set `id` on one of them"
            } else {
                "; flap counters and history are keyed by id, so give each rule its own"
            };
            let span = if derived { r.when.span() } else { r.id.as_ref().map_or(r.when.span(), LitStr::span) };
            cx.error(
                span,
                format!("duplicate rule id `{}`: the rule on line {} has it too{hint}", rule.id, first.line),
            );
            ok = false;
        }
        taken.push(Taken { id: rule.id.to_string(), line, derived });
        out.push(rule);
    }
    Rules { rules: ok.then_some(out), dispatches }
}

fn name_ok(target: &LitStr) -> Option<()> {
    chant_core::Name::parse("run() target", target.value()).ok().map(drop)
}

fn mentions(p: &PredicateAst, snake: &str) -> bool {
    match p {
        PredicateAst::Comparison { field, .. } | PredicateAst::Truthiness { field, .. } => field == snake,
        PredicateAst::Combinator { children, .. } => children.iter().any(|c| mentions(c, snake)),
    }
}

/// The message for a `run()` target no op has the name of, with the closest name the macro can
/// see.
fn unknown_target(verb: &str, target: &str, known: &KnownOps) -> String {
    match contract::did_you_mean(target, known.names(false).filter(|n| *n != target)) {
        Some(s) => format!("{verb}(\"{target}\") names no declared Op; did you mean \"{s}\"?"),
        None => format!(
            "{verb}(\"{target}\") names no declared Op: no `op!` or `converge_op!` in this crate or the crates it uses has this name; declare it with `op! {{ name: \"{target}\", ... }}` (names are matched exactly)"
        ),
    }
}

/// For each class of target, why `propose(target)` under `dial` is refused (none: permitted).
fn proposal_refusals(target: &str, dial: Option<DialKind>) -> Vec<(ClassKind, String)> {
    let Some(d) = dial else { return Vec::new() };
    ClassKind::ALL
        .into_iter()
        .filter_map(|class| contract::permits_proposal(d, class).err().map(|r| (class, r.message(target))))
        .collect()
}

/// The classes of target a rule must refuse: by the dial (`permits`), and a mutating target when
/// the predicate reads `adopt_count`. Unknown inputs (a dial that failed to parse) add nothing.
fn refusals(target: &str, dial: Option<DialKind>, reads_adopt: Option<Option<&str>>) -> Vec<(ClassKind, String)> {
    let mut out = Vec::new();
    for class in ClassKind::ALL {
        let mut msgs = Vec::new();
        if let Some(d) = dial
            && let Err(r) = contract::permits(d, class)
        {
            msgs.push(r.message(target));
        }
        if class == ClassKind::Mutating
            && let Some(Some(field)) = reads_adopt
        {
            msgs.push(contract::adopt_safe_refusal(target, field, true));
        }
        if !msgs.is_empty() {
            out.push((class, msgs.join("; also, ")));
        }
    }
    out
}

/// Checks one rule; returns it with whether its id was derived.
fn rule(r: &RuleAst, kind: SymptomKind, env: &BuildEnv, cx: &Ctxt) -> Option<(Rule, bool)> {
    let why = match &r.why {
        None => {
            cx.error(
                r.when.span(),
                "this rule has no `why`: add `why = \"<why this rule exists>\"`; every rule carries its rationale",
            );
            None
        }
        Some(w) => non_blank(cx, w, "why", "say why this rule exists"),
    };
    let predicate = r.predicate.as_ref().and_then(|p| predicate(p, kind, cx));
    let action = r.action.as_ref().and_then(|a| match a {
        ActionAst::Run { propose: false, target, .. } => {
            name_of(cx, "run() target", target).map(|op| Action::Run { op })
        }
        ActionAst::Run { propose: true, target, .. } => {
            name_of(cx, "propose() target", target).map(|op| Action::Propose { op })
        }
        ActionAst::Report { reason } => non_blank(cx, reason, "report reason", "say what a human should look at")
            .map(|reason| Action::Report { reason }),
    });
    let flap_threshold = r.flap_threshold.as_ref().and_then(|l| match l.base10_parse::<u64>() {
        Ok(n) if contract::flap_threshold_holds(n) => Some(n),
        _ => {
            cx.error(
                l.span(),
                format!(
                    "`flap_threshold` must be an integer >= 1 (the default is {}); `{l}` is not",
                    contract::DEFAULT_FLAP_THRESHOLD
                ),
            );
            None
        }
    });
    let explicit = r.id.as_ref().map(|i| name_of(cx, "rule id", i));
    let (when, then, why) = (predicate?, action?, why?);
    if r.flap_threshold.is_some() && flap_threshold.is_none() {
        return None;
    }
    let (id, derived) = match explicit {
        Some(id) => (id?, false),
        None => match Rule::derive_id(&when, &then) {
            Ok(id) => (id, true),
            Err(e) => {
                cx.error(r.when.span(), format!("cannot derive this rule's id ({e}); set `id`"));
                return None;
            }
        },
    };
    let source = Some(env.source(r.when.span()));
    Some((Rule { id, when, then, why, flap_threshold, source }, derived))
}

fn comparison(op: &str) -> Option<ComparisonOp> {
    Some(match op {
        "eq" => ComparisonOp::Eq,
        "neq" => ComparisonOp::Neq,
        "gt" => ComparisonOp::Gt,
        "gte" => ComparisonOp::Gte,
        "lt" => ComparisonOp::Lt,
        "lte" => ComparisonOp::Lte,
        _ => return None,
    })
}

/// Looks a DSL field up by its snake_case name, reporting an unknown one at the field.
fn field(field: &Ident, op: &str, kind: SymptomKind, cx: &Ctxt) -> Option<&'static contract::FieldSpec> {
    let f = field.to_string();
    if let Some(spec) = kind.fields().iter().find(|s| s.snake == f) {
        return Some(spec);
    }
    let suggestion = contract::suggest_field(kind, &f);
    let mut msg = LeafProblem::UnknownField { suggestion }.message(&f, op, None, kind, true);
    let other = match kind {
        SymptomKind::Converge => SymptomKind::Resource,
        SymptomKind::Resource => SymptomKind::Converge,
    };
    if suggestion.is_none() && other.fields().iter().any(|s| s.snake == f) {
        msg.push_str(&match kind {
            SymptomKind::Resource => format!(
                " (`{f}` is a field of ConvergeSymptom; this ConvergeOp has `observe:`, so its rules read one ResourceSymptom per resource)"
            ),
            SymptomKind::Converge => format!(
                " (`{f}` is a field of ResourceSymptom, which only a ConvergeOp with `observe:` reads)"
            ),
        });
    }
    cx.error(field.span(), msg);
    None
}

fn predicate(p: &PredicateAst, kind: SymptomKind, cx: &Ctxt) -> Option<Predicate> {
    match p {
        PredicateAst::Combinator { op, children } => {
            let checked: Vec<Option<Predicate>> = children.iter().map(|c| predicate(c, kind, cx)).collect();
            let predicates = checked.into_iter().collect::<Option<Vec<_>>>()?;
            Some(if op == symbol::ALL_OF { Predicate::AllOf { predicates } } else { Predicate::AnyOf { predicates } })
        }
        PredicateAst::Truthiness { op, field: f } => {
            let o = op.to_string();
            let spec = field(f, &o, kind, cx)?;
            if let Err(problem) = contract::check_leaf(kind, spec.camel, &o, None) {
                cx.error(op.span(), problem.message(spec.snake, &o, None, kind, true));
                return None;
            }
            let op = if o == "truthy" { TruthinessOp::Truthy } else { TruthinessOp::Falsy };
            Some(Predicate::FieldTruthiness { field: spec.camel.to_owned(), op })
        }
        PredicateAst::Comparison { op, field: f, literal } => {
            let o = op.to_string();
            let spec = field(f, &o, kind, cx)?;
            let text = match literal {
                LiteralAst::Str(s) => Some(s.value()),
                _ => None,
            };
            let lit_kind = match literal {
                LiteralAst::Str(_) => LiteralKind::Str(text.as_deref().unwrap_or("")),
                LiteralAst::Number(..) => LiteralKind::Number,
                LiteralAst::Bool(_) => LiteralKind::Bool,
                LiteralAst::Other(_) => LiteralKind::Other,
            };
            if let Err(problem) = contract::check_leaf(kind, spec.camel, &o, Some(lit_kind)) {
                let msg = problem.message(spec.snake, &o, text.as_deref(), kind, true);
                match problem {
                    LeafProblem::WrongLiteralType(_) | LeafProblem::NotAValue { .. } => match literal {
                        LiteralAst::Str(s) => cx.error(s.span(), msg),
                        LiteralAst::Bool(b) => cx.error(b.span, msg),
                        LiteralAst::Number(_, ts) | LiteralAst::Other(ts) => cx.error_spanned(ts.clone(), msg),
                    },
                    _ => cx.error(op.span(), msg),
                }
                return None;
            }
            let value = match literal {
                LiteralAst::Str(s) => Literal::Str(s.value()),
                LiteralAst::Number(n, _) => Literal::Number(n.clone()),
                LiteralAst::Bool(b) => Literal::Bool(b.value),
                LiteralAst::Other(_) => return None,
            };
            Some(Predicate::FieldComparison { field: spec.camel.to_owned(), op: comparison(&o)?, value })
        }
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    use super::*;
    use crate::known::KnownOp;
    use crate::parse;

    fn env() -> BuildEnv {
        BuildEnv { package: "unit".into(), manifest_dir: None, ops_dir: None, crate_root: None }
    }

    /// The box lexicon's declarations of its steps, as its step macros hand them back.
    fn box_steps() -> TokenStream {
        quote! {
            @lexicon_step { kind: "sprite_services_observe", class: read_only,
                args: [box: bool, services: names, services_file: str], one_of: [box, services, services_file] }
            @asked("sprite_services_observe")
            @lexicon_step { kind: "sprite_apply_services", class: mutating,
                args: [box: bool required, start: bool, restart: bool, only: str] }
            @asked("sprite_apply_services")
        }
    }

    fn converge_op(input: TokenStream) -> (Checked, Vec<String>) {
        let cx = Ctxt::new();
        let (table, input) = crate::lexicon::split(input, &cx);
        let ast = parse::converge_op(input, &cx);
        let checked = converge(&ast, Some(None), &env(), &KnownOps::default(), &table, &cx);
        let errors = cx.check().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default();
        (checked, errors)
    }

    #[test]
    fn the_design_table_checks_clean() {
        let (c, errors) = converge_op(quote! {
            name: "staging-converge",
            env: "staging",
            dial: apply,
            budget: 3,
            schedule: "*/10 * * * *",
            rules: [
                when!(eq(status, "drifted") => run("staging-apply"), id = "drift-apply", why = "w"),
                when!(gt(adopt_count, 0) => report("unowned resources present"), why = "w"),
            ],
        });
        assert!(errors.is_empty(), "{errors:?}");
        let doc = c.doc.unwrap();
        let spec = doc.converge.unwrap();
        assert_eq!(spec.rules[1].id, "adopt-count-gt-0-report-unowned-resources-present");
        assert_eq!(c.dispatches.len(), 1);
        // Under `apply` only a destructive target is refused.
        let refused: Vec<ClassKind> = c.dispatches[0].refusals.iter().map(|(k, _)| *k).collect();
        assert_eq!(refused, [ClassKind::Destructive]);
    }

    #[test]
    fn observe_refuses_mutating_targets_and_adopt_adds_its_reason() {
        let (c, errors) = converge_op(quote! {
            name: "c",
            env: "e",
            rules: [ when!(any_of(gt(adopt_count, 0)) => run("x"), id = "r", why = "w") ],
        });
        assert!(errors.is_empty(), "{errors:?}");
        let refusals = &c.dispatches[0].refusals;
        assert_eq!(refusals.iter().map(|(k, _)| *k).collect::<Vec<_>>(), [ClassKind::Mutating, ClassKind::Destructive]);
        let (_, mutating) = &refusals[0];
        assert!(mutating.starts_with("converge_op \"c\", rule \"r\": "), "{mutating}");
        assert!(mutating.contains("dial `observe`") && mutating.contains("adopt_count"), "{mutating}");
    }

    #[test]
    fn a_declared_observer_takes_one_of_its_sources_and_refuses_two_an_empty_list_and_a_bad_name() {
        let observer = |step: TokenStream| {
            let declared = box_steps();
            converge_op(quote! {
                #declared
                name: "c",
                env: "box",
                observe: #step,
                rules: [ when!(eq(status, "drifted") => report("r"), id = "r", why = "w") ],
            })
        };
        for (step, args) in [
            (quote!(sprite_services_observe(box = true)), serde_json::json!({"box": true})),
            (
                quote!(sprite_services_observe(services = ["app", "hud"])),
                serde_json::json!({"services": ["app", "hud"]}),
            ),
            (quote!(sprite_services_observe(services_file = "s.json")), serde_json::json!({"services_file": "s.json"})),
        ] {
            let (c, errors) = observer(step);
            assert!(errors.is_empty(), "{errors:?}");
            let observe = c.doc.unwrap().converge.unwrap().observe.unwrap();
            assert_eq!(serde_json::to_value(&observe).unwrap()["args"], args);
        }
        let refused = |step: TokenStream| observer(step).1;
        let two = refused(quote!(sprite_services_observe(services = ["app"], services_file = "s.json")));
        assert_eq!(two.len(), 1, "{two:?}");
        assert!(two[0].contains("it was given services and services_file"), "{two:?}");
        let empty = refused(quote!(sprite_services_observe(services = [])));
        assert!(empty.len() == 1 && empty[0].contains("is an empty list"), "{empty:?}");
        let bad = refused(quote!(sprite_services_observe(services = ["app", "Hud", 3])));
        assert_eq!(bad.len(), 2, "each bad element at its token: {bad:?}");
        assert!(bad[0].contains("name in `services` of `sprite_services_observe`"), "{bad:?}");
        assert!(bad[1].contains("lists names as strings"), "{bad:?}");
        let none = refused(quote!(sprite_services_observe()));
        assert!(
            none.len() == 1
                && none[0].contains("needs one of box = true, services = [...] and services_file = \"...\""),
            "{none:?}"
        );
        let off = refused(quote!(sprite_services_observe(box = false, services_file = "s.json")));
        assert!(off.is_empty(), "a false flag is not a source: {off:?}");
        let undeclared = refused(quote!(docs_touch(path = "x")));
        assert!(undeclared[0].contains("unknown step `docs_touch`"), "{undeclared:?}");
    }

    #[test]
    fn every_error_of_one_invocation_is_reported() {
        let (c, errors) = converge_op(quote! {
            name: "c",
            env: "e",
            dial: aply,
            budget: -1,
            rules: [
                when!(eq(stauts, "drifted") => report("r")),
                when!(eq(status, "drifed") => run("x"), why = "w", flap_threshold = 0),
            ],
        });
        assert_eq!(errors.len(), 6, "{errors:#?}");
        assert!(c.doc.is_none());
        // The run() rule still gets its resolution check, without dial arms (the dial is unknown).
        assert_eq!(c.dispatches.len(), 1);
        assert!(c.dispatches[0].refusals.is_empty());
        assert_eq!(c.name.as_deref(), Some("c"));
    }

    #[test]
    fn a_target_the_macro_can_see_is_refused_by_the_macro_itself() {
        let known = KnownOps::from_ops(vec![
            KnownOp { name: "staging-apply".into(), class: ClassKind::Mutating, converge: false },
            KnownOp { name: "staging-smoke".into(), class: ClassKind::ReadOnly, converge: false },
        ]);
        let cx = Ctxt::new();
        let ast = parse::converge_op(
            quote! {
                name: "c",
                env: "e",
                rules: [
                    when!(eq(status, "drifted") => run("staging-apply"), id = "seen", why = "w"),
                    when!(eq(status, "stale") => run("staging-smoke"), id = "allowed", why = "w"),
                    when!(eq(status, "unknown") => run("staging-aply"), id = "typo", why = "w"),
                ],
            },
            &cx,
        );
        let c = converge(&ast, Some(None), &env(), &known, &StepTable::default(), &cx);
        let errors: Vec<String> = cx.check().unwrap_err().into_iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(errors[0].starts_with("run(\"staging-apply\") targets a mutating Op"), "{}", errors[0]);
        // The reported refusal leaves only the resolution check; a permitted target keeps the
        // registry's arms (the registry is the authority); a typo gets the closest name.
        assert!(c.dispatches[0].refusals.is_empty());
        assert_eq!(c.dispatches[1].refusals.len(), 2);
        assert!(c.dispatches[2].unknown.ends_with("did you mean \"staging-apply\"?"), "{}", c.dispatches[2].unknown);
    }

    #[test]
    fn steps_fold_their_classes() {
        let cx = Ctxt::new();
        let (table, input) = crate::lexicon::split(box_steps(), &cx);
        assert!(input.is_empty());
        let ast = parse::op(
            quote! {
                name: "o",
                overview: "x",
                phases: [ phase("P", [
                    http_check(url = "http://${HOST}/"),
                    apply(env = "e", delete_mode = "owned-only"),
                    sprite_apply_services(box = true, start = true),
                ]) ],
            },
            &cx,
        );
        let c = op(&ast, Some(None), &table, &cx);
        assert!(cx.check().is_ok());
        let doc = c.doc.unwrap();
        let classes: Vec<ClassKind> = doc.phases[0].steps.iter().map(Step::class).collect();
        assert_eq!(classes, [ClassKind::ReadOnly, ClassKind::Destructive, ClassKind::Mutating]);
        assert_eq!(doc.class, ClassKind::Destructive);
        let Step::HttpCheck { args, .. } = &doc.phases[0].steps[0] else { panic!("{:?}", doc.phases[0].steps[0]) };
        assert_eq!(args.url.as_str(), "http://${HOST}/");
    }
}
