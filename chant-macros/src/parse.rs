//! Reads macro input into the syntax tree of [`crate::ast`].
//!
//! The input is split at top-level commas and each `field: value` (or `arg = value`) is read on its
//! own, so one malformed value never hides the problems in the others: each problem is pushed to
//! the [`Ctxt`] at its token and the field is left out. Semantic checks (which fields a symptom
//! has, which dials exist, names, cron) belong to [`crate::check`].

use chant_core::contract::{self, COMBINATORS, COMPARISON_OPS, LeafProblem, SymptomKind, TRUTHINESS_OPS};
use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use syn::{Lit, LitBool, LitInt, LitStr};

use crate::ast::{
    ActionAst, ArgAst, ArgValue, ConvergeAst, LiteralAst, MainAst, OpAst, PhaseAst, PredicateAst, RuleAst, StepAst,
};
use crate::ctxt::Ctxt;
use crate::symbol;

type Tokens = Vec<TokenTree>;

const RULE_SHAPE: &str = "a rule is written `when!(<predicate> => <action>, why = \"<why this rule exists>\")`";

/// Reads an `op! { ... }` invocation.
pub(crate) fn op(input: TokenStream, cx: &Ctxt) -> OpAst {
    let mut ast = OpAst { name: None, overview: None, env: None, phases: Vec::new(), on_failure: Vec::new() };
    let mut has_phases = false;
    let mut name_key = false;
    let mut overview_key = false;
    for (key, value) in fields(input, "op!", symbol::OP_FIELDS, cx) {
        match key.to_string().as_str() {
            symbol::NAME => {
                name_key = true;
                ast.name = lit_str(&key, &value, "\"staging-apply\"", cx);
            }
            symbol::OVERVIEW => {
                overview_key = true;
                ast.overview = lit_str(&key, &value, "\"Apply the staging declaration.\"", cx);
            }
            symbol::ENV => ast.env = lit_str(&key, &value, "\"staging\"", cx),
            symbol::PHASES => {
                has_phases = true;
                ast.phases = phases(&key, &value, cx);
            }
            _ => ast.on_failure = phases(&key, &value, cx),
        }
    }
    missing(cx, "op!", name_key, "name: \"<op name>\"");
    missing(cx, "op!", overview_key, "overview: \"<one line saying what it does>\"");
    missing(cx, "op!", has_phases, "phases: [ phase(\"<Name>\", [ <steps> ]) ]");
    ast
}

/// Reads a `converge_op! { ... }` invocation.
pub(crate) fn converge_op(input: TokenStream, cx: &Ctxt) -> ConvergeAst {
    let mut ast = ConvergeAst {
        name: None,
        overview: None,
        env: None,
        dial: None,
        budget: None,
        schedule: None,
        tz: None,
        observe: None,
        rules: None,
        dial_failed: false,
    };
    let (mut name_key, mut env_key, mut rules_key) = (false, false, false);
    for (key, value) in fields(input, "converge_op!", symbol::CONVERGE_FIELDS, cx) {
        match key.to_string().as_str() {
            symbol::NAME => {
                name_key = true;
                ast.name = lit_str(&key, &value, "\"staging-converge\"", cx);
            }
            symbol::OVERVIEW => ast.overview = lit_str(&key, &value, "\"Keep staging converged.\"", cx),
            symbol::ENV => {
                env_key = true;
                ast.env = lit_str(&key, &value, "\"staging\"", cx);
            }
            symbol::DIAL => match value.as_slice() {
                [TokenTree::Ident(i)] => ast.dial = Some(i.clone()),
                _ => {
                    ast.dial_failed = true;
                    cx.error_spanned(
                        stream(&value),
                        "`dial` is one of the words observe, reconcile or apply, written without quotes",
                    );
                }
            },
            symbol::BUDGET => ast.budget = budget(&value, cx),
            symbol::SCHEDULE => ast.schedule = lit_str(&key, &value, "\"*/10 * * * *\"", cx),
            symbol::TZ => ast.tz = lit_str(&key, &value, "\"Europe/Berlin\"", cx).map(|l| (key.clone(), l)),
            symbol::OBSERVE => ast.observe = step(&value, cx),
            _ => {
                rules_key = true;
                ast.rules = rules(&key, &value, cx);
            }
        }
    }
    missing(cx, "converge_op!", name_key, "name: \"<op name>\"");
    missing(cx, "converge_op!", env_key, "env: \"<env name>\"");
    missing(cx, "converge_op!", rules_key, "rules: [ when!(<predicate> => <action>, why = \"...\"), ... ]");
    ast
}

/// Reads a `main!(...)` invocation: empty, or `default = tick("<converge op>")`.
pub(crate) fn main_macro(input: TokenStream, cx: &Ctxt) -> MainAst {
    let segments = split_commas(input, cx);
    let mut out = MainAst::Help;
    let mut seen = false;
    for seg in &segments {
        let Some((key, value)) = key_value(seg, '=', "default = tick(\"<converge op>\")", cx) else {
            continue;
        };
        if key != symbol::DEFAULT {
            let hint = match contract::did_you_mean(&key.to_string(), [symbol::DEFAULT]) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "main! takes only `default = tick(\"<converge op>\")`".to_owned(),
            };
            cx.error(key.span(), format!("unknown option `{key}` in main!; {hint}"));
            continue;
        }
        if seen {
            cx.error(key.span(), "`default` is given twice; remove one");
            continue;
        }
        seen = true;
        match value.as_slice() {
            [TokenTree::Ident(h)] if h == symbol::HELP => out = MainAst::Help,
            [TokenTree::Ident(t), TokenTree::Group(g)]
                if t == symbol::TICK && g.delimiter() == Delimiter::Parenthesis =>
            {
                match single_lit_str(&g.stream()) {
                    Some(l) => out = MainAst::Tick(l),
                    None => cx.error_spanned(
                        g.clone(),
                        "tick() takes the ConvergeOp's name as a string: tick(\"staging-converge\")",
                    ),
                }
            }
            [TokenTree::Ident(t), ..] if t != symbol::TICK && t != symbol::HELP => {
                let hint = match contract::did_you_mean(&t.to_string(), [symbol::TICK, symbol::HELP]) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => {
                        "write `default = tick(\"<converge op>\")`, or leave `default` out to print help".to_owned()
                    }
                };
                cx.error(t.span(), format!("unknown default command `{t}`; {hint}"));
            }
            _ => cx.error_spanned(
                stream(&value),
                "expected `default = tick(\"<converge op>\")`, e.g. main!(default = tick(\"staging-converge\"))",
            ),
        }
    }
    out
}

fn missing(cx: &Ctxt, mac: &str, present: bool, example: &str) {
    if !present {
        cx.error(Span::call_site(), format!("{mac} needs `{example}`"));
    }
}

/// Reads `key: value` entries, reporting unknown and repeated keys (at the key) and leaving them out.
fn fields(input: TokenStream, mac: &str, allowed: &[&str], cx: &Ctxt) -> Vec<(Ident, Tokens)> {
    let mut out: Vec<(Ident, Tokens)> = Vec::new();
    for seg in split_commas(input, cx) {
        let Some((key, value)) = key_value(&seg, ':', "name: \"...\"", cx) else {
            continue;
        };
        let k = key.to_string();
        if !allowed.contains(&k.as_str()) {
            let hint = match contract::did_you_mean(&k, allowed.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("its fields are {}", allowed.join(", ")),
            };
            cx.error(key.span(), format!("unknown field `{k}` in {mac}; {hint}"));
            continue;
        }
        if out.iter().any(|(seen, _)| *seen == k) {
            cx.error(key.span(), format!("`{k}` is given twice; remove one"));
            continue;
        }
        out.push((key, value));
    }
    out
}

/// Splits `key <sep> value`; `sep` is `:` for fields and `=` for arguments and options.
fn key_value(seg: &[TokenTree], sep: char, example: &str, cx: &Ctxt) -> Option<(Ident, Tokens)> {
    let Some(TokenTree::Ident(key)) = seg.first() else {
        cx.error_spanned(stream(seg), format!("expected `{example}`"));
        return None;
    };
    match seg.get(1) {
        Some(TokenTree::Punct(p)) if p.as_char() == sep && !(sep == '=' && is_joint_with(seg, 1, '=')) => {}
        _ => {
            cx.error(key.span(), format!("expected `{sep}` after `{key}`, as in `{example}`"));
            return None;
        }
    }
    let value: Tokens = seg[2..].to_vec();
    if value.is_empty() {
        cx.error(key.span(), format!("`{key}` needs a value after `{sep}`"));
        return None;
    }
    Some((key.clone(), value))
}

fn is_joint_with(seg: &[TokenTree], i: usize, next: char) -> bool {
    matches!((seg.get(i), seg.get(i + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
        if a.spacing() == proc_macro2::Spacing::Joint && b.as_char() == next)
}

/// Expands invisible (`None`-delimited) groups, which appear when input passes through `macro_rules!`.
fn flatten(ts: TokenStream) -> Tokens {
    let mut out = Vec::new();
    for tt in ts {
        match tt {
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => out.extend(flatten(g.stream())),
            other => out.push(other),
        }
    }
    out
}

/// Splits at top-level commas (a group is one token, so nested commas stay inside it). A trailing
/// comma is allowed; an empty entry (`,,`) is reported.
fn split_commas(ts: TokenStream, cx: &Ctxt) -> Vec<Tokens> {
    let mut out = Vec::new();
    let mut cur: Tokens = Vec::new();
    for tt in flatten(ts) {
        if let TokenTree::Punct(p) = &tt
            && p.as_char() == ','
        {
            if cur.is_empty() {
                cx.error(p.span(), "unexpected `,`: an entry is missing here");
            } else {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        cur.push(tt);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn stream(tokens: &[TokenTree]) -> TokenStream {
    tokens.iter().cloned().collect()
}

fn single_lit_str(ts: &TokenStream) -> Option<LitStr> {
    match flatten(ts.clone()).as_slice() {
        [TokenTree::Literal(l)] => match Lit::new(l.clone()) {
            Lit::Str(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

fn lit_str(key: &Ident, value: &[TokenTree], example: &str, cx: &Ctxt) -> Option<LitStr> {
    let lit = single_lit_str(&stream(value));
    if lit.is_none() {
        cx.error_spanned(stream(value), format!("`{key}` takes a string literal, such as `{key}: {example}`"));
    }
    lit
}

/// Reads `name(...)`: an identifier and a parenthesised group, and nothing else.
fn call(tokens: &[TokenTree]) -> Option<(Ident, Group)> {
    match tokens {
        [TokenTree::Ident(i), TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis => {
            Some((i.clone(), g.clone()))
        }
        _ => None,
    }
}

fn bracket(key: &Ident, value: &[TokenTree], example: &str, cx: &Ctxt) -> Option<Group> {
    match value {
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Bracket => Some(g.clone()),
        _ => {
            cx.error_spanned(stream(value), format!("`{key}` takes a list in brackets: `{key}: [{example}]`"));
            None
        }
    }
}

fn budget(value: &[TokenTree], cx: &Ctxt) -> Option<u64> {
    let msg = "`budget` must be a non-negative integer, such as `budget: 3` (the most run() dispatches per tick)";
    match value {
        [TokenTree::Literal(l)] => match Lit::new(l.clone()) {
            Lit::Int(i) => match i.base10_parse::<u64>() {
                Ok(n) => return Some(n),
                Err(e) => cx.error(i.span(), format!("{msg}: {e}")),
            },
            Lit::Float(f) => cx.error(f.span(), format!("{msg}; `{f}` is not an integer")),
            _ => cx.error(l.span(), format!("{msg}; write the number without quotes")),
        },
        [TokenTree::Punct(p), TokenTree::Literal(_)] if p.as_char() == '-' => {
            cx.error_spanned(stream(value), format!("{msg}; a negative budget is meaningless"));
        }
        _ => cx.error_spanned(stream(value), msg),
    }
    None
}

fn phases(key: &Ident, value: &[TokenTree], cx: &Ctxt) -> Vec<PhaseAst> {
    let Some(list) = bracket(key, value, " phase(\"Apply\", [ apply(env = \"staging\") ]) ", cx) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for seg in split_commas(list.stream(), cx) {
        let example = "expected `phase(\"<Name>\", [ <steps> ])`";
        let Some((ident, group)) = call(&seg).filter(|(i, _)| i == symbol::PHASE) else {
            cx.error_spanned(stream(&seg), example);
            continue;
        };
        let args = split_commas(group.stream(), cx);
        let name = args.first().and_then(|a| single_lit_str(&stream(a)));
        let steps = match args.get(1).map(Vec::as_slice) {
            Some([TokenTree::Group(g)]) if g.delimiter() == Delimiter::Bracket && args.len() == 2 => Some(g.clone()),
            _ => None,
        };
        let (Some(name), Some(steps)) = (name, steps) else {
            cx.error_spanned(quote::quote!(#ident #group), example);
            continue;
        };
        let steps = split_commas(steps.stream(), cx).iter().filter_map(|s| step(s, cx)).collect();
        out.push(PhaseAst { name, steps });
    }
    out
}

/// Reads one step call: `name(arg = value, ...)`, with a leading positional string for the steps
/// that take one. Argument names may be any identifier, keywords included (`box`).
fn step(tokens: &[TokenTree], cx: &Ctxt) -> Option<StepAst> {
    let Some((kind, group)) = call(tokens) else {
        cx.error_spanned(stream(tokens), "expected a step call such as `apply(env = \"staging\")`");
        return None;
    };
    let mut positional = None;
    let mut args = Vec::new();
    for (i, seg) in split_commas(group.stream(), cx).into_iter().enumerate() {
        if i == 0
            && let Some(l) = single_lit_str(&stream(&seg))
        {
            positional = Some(l);
            continue;
        }
        let Some((name, value)) = key_value(&seg, '=', "env = \"staging\"", cx) else {
            continue;
        };
        args.push(ArgAst { name, value: arg_value(&value) });
    }
    Some(StepAst { kind, group, positional, args })
}

fn arg_value(value: &[TokenTree]) -> ArgValue {
    let ts = stream(value);
    if let [TokenTree::Ident(i)] = value
        && (i == "true" || i == "false")
    {
        return ArgValue::Bool(LitBool::new(i == "true", i.span()));
    }
    if let Some(l) = single_lit_str(&ts) {
        return ArgValue::Str(l);
    }
    if let [TokenTree::Group(g)] = value
        && g.delimiter() == Delimiter::Bracket
    {
        return ArgValue::List(g.clone());
    }
    match syn::parse2::<syn::Path>(ts.clone()) {
        Ok(p) => ArgValue::Path(p),
        Err(_) => ArgValue::Other(ts),
    }
}

fn rules(key: &Ident, value: &[TokenTree], cx: &Ctxt) -> Option<(Group, Vec<RuleAst>)> {
    let list = bracket(key, value, " when!(eq(status, \"drifted\") => run(\"<op>\"), why = \"...\") ", cx)?;
    let segments = split_commas(list.stream(), cx);
    if segments.is_empty() {
        cx.error(
            list.span(),
            "the rule table is empty; a ConvergeOp needs at least one `when!(<predicate> => <action>, why = \"...\")`, or it has nothing to converge",
        );
    }
    let rules = segments.iter().filter_map(|seg| rule(seg, cx)).collect();
    Some((list, rules))
}

fn is_closure(tokens: &[TokenTree]) -> bool {
    match tokens.first() {
        Some(TokenTree::Punct(p)) => p.as_char() == '|',
        Some(TokenTree::Ident(i)) => i == "move" || i == "async",
        _ => false,
    }
}

/// Reads one `when!(predicate => action, options)` of a rule table.
fn rule(seg: &[TokenTree], cx: &Ctxt) -> Option<RuleAst> {
    let shape = format!("expected {RULE_SHAPE}");
    let n = seg.len();
    let (when, group) = match seg {
        [.., TokenTree::Ident(w), TokenTree::Punct(bang), TokenTree::Group(g)]
            if w == symbol::WHEN && bang.as_char() == '!' && g.delimiter() != Delimiter::None =>
        {
            (w.clone(), g.clone())
        }
        _ if is_closure(seg) => {
            cx.error_spanned(
                stream(seg),
                format!("a rule is data, not a closure: it has to survive into op.json; {RULE_SHAPE}"),
            );
            return None;
        }
        _ => {
            cx.error_spanned(stream(seg), &shape);
            return None;
        }
    };
    // Anything before `when` must be a path to it (`chant::when!`).
    if n > 3 && !seg[..n - 3].iter().all(|t| matches!(t, TokenTree::Ident(_) | TokenTree::Punct(_))) {
        cx.error_spanned(stream(&seg[..n - 3]), &shape);
    }
    let mut ast =
        RuleAst { when: when.clone(), predicate: None, action: None, id: None, why: None, flap_threshold: None };
    let mut parts = split_commas(group.stream(), cx).into_iter();
    let Some(head) = parts.next() else {
        cx.error(when.span(), format!("this rule is empty; {RULE_SHAPE}"));
        return Some(ast);
    };
    let arrow = (0..head.len())
        .find(|&i| matches!(&head[i], TokenTree::Punct(p) if p.as_char() == '=') && is_joint_with(&head, i, '>'));
    let Some(arrow) = arrow else {
        cx.error_spanned(
            stream(&head),
            "a rule starts with `<predicate> => <action>`, e.g. `eq(status, \"drifted\") => run(\"staging-apply\")`",
        );
        return Some(ast);
    };
    let (pred, act) = (&head[..arrow], &head[arrow + 2..]);
    if pred.is_empty() {
        cx.error(when.span(), "this rule has no predicate before `=>`");
    } else {
        ast.predicate = predicate(pred, cx);
    }
    if act.is_empty() {
        cx.error(when.span(), "this rule has no action after `=>`; write run(\"<op>\") or report(\"<reason>\")");
    } else {
        ast.action = action(act, cx);
    }
    let mut seen: Vec<String> = Vec::new();
    for seg in parts {
        let Some((key, value)) = key_value(&seg, '=', "why = \"...\"", cx) else {
            continue;
        };
        let k = key.to_string();
        if !symbol::RULE_OPTIONS.contains(&k.as_str()) {
            let hint = match contract::did_you_mean(&k, symbol::RULE_OPTIONS.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("a rule takes {}", symbol::RULE_OPTIONS.join(", ")),
            };
            cx.error(key.span(), format!("unknown rule option `{k}`; {hint}"));
            continue;
        }
        if seen.contains(&k) {
            cx.error(key.span(), format!("`{k}` is given twice in this rule; remove one"));
            continue;
        }
        seen.push(k.clone());
        match k.as_str() {
            symbol::ID => ast.id = lit_str(&key, &value, "\"drift-apply\"", cx),
            symbol::WHY => ast.why = lit_str(&key, &value, "\"<why this rule exists>\"", cx),
            _ => match value.as_slice() {
                [TokenTree::Literal(l)] if matches!(Lit::new(l.clone()), Lit::Int(_)) => {
                    if let Lit::Int(i) = Lit::new(l.clone()) {
                        ast.flap_threshold = Some(i);
                    }
                }
                _ => cx.error_spanned(
                    stream(&value),
                    "`flap_threshold` must be an integer >= 1, such as `flap_threshold = 3`",
                ),
            },
        }
    }
    Some(ast)
}

fn predicate_names() -> impl Iterator<Item = &'static str> {
    COMPARISON_OPS.iter().chain(TRUTHINESS_OPS).chain(COMBINATORS).copied()
}

/// Reads a predicate call; only the evaluable subset parses.
fn predicate(tokens: &[TokenTree], cx: &Ctxt) -> Option<PredicateAst> {
    let shape = "a predicate is eq, neq, gt, gte, lt, lte(field, literal), truthy(field), falsy(field), all_of(...) or any_of(...), such as `eq(status, \"drifted\")`";
    if is_closure(tokens) {
        cx.error_spanned(
            stream(tokens),
            format!("a predicate is data, not a closure: it has to survive into op.json; {shape}"),
        );
        return None;
    }
    let Some((op, group)) = call(tokens) else {
        cx.error_spanned(stream(tokens), format!("this is not a predicate; {shape}"));
        return None;
    };
    let name = op.to_string();
    let args = split_commas(group.stream(), cx);
    if COMBINATORS.contains(&name.as_str()) {
        let children = args.iter().filter_map(|a| predicate(a, cx)).collect();
        return Some(PredicateAst::Combinator { op, children });
    }
    let is_cmp = COMPARISON_OPS.contains(&name.as_str());
    if !is_cmp && !TRUTHINESS_OPS.contains(&name.as_str()) {
        let mut msg = LeafProblem::UnknownOp.message("", &name, None, SymptomKind::Converge, true);
        if let Some(s) = contract::did_you_mean(&name, predicate_names()) {
            msg = format!("`{name}` is not a predicate; did you mean `{s}`?");
        }
        cx.error(op.span(), msg);
        return None;
    }
    let arity = if is_cmp { 2 } else { 1 };
    let usage = if is_cmp { format!("{name}(<field>, <literal>)") } else { format!("{name}(<field>)") };
    if args.len() != arity {
        cx.error_spanned(quote::quote!(#op #group), format!("`{name}` takes {arity} argument(s): `{usage}`"));
        return None;
    }
    let field = match args[0].as_slice() {
        [TokenTree::Ident(f)] => f.clone(),
        [TokenTree::Literal(l)] if single_lit_str(&stream(&args[0])).is_some() => {
            let s = single_lit_str(&stream(&args[0])).map(|s| s.value()).unwrap_or_default();
            cx.error(
                l.span(),
                format!("fields are written bare, not quoted: `{}` instead of `\"{s}\"`", contract::camel_to_snake(&s)),
            );
            return None;
        }
        other => {
            cx.error_spanned(stream(other), format!("expected a symptom field such as `status`: `{usage}`"));
            return None;
        }
    };
    if !is_cmp {
        return Some(PredicateAst::Truthiness { op, field });
    }
    let literal = literal(&args[1]);
    Some(PredicateAst::Comparison { op, field, literal })
}

fn literal(tokens: &[TokenTree]) -> LiteralAst {
    let ts = stream(tokens);
    match tokens {
        [TokenTree::Ident(i)] if i == "true" || i == "false" => LiteralAst::Bool(LitBool::new(i == "true", i.span())),
        [TokenTree::Literal(l)] => match Lit::new(l.clone()) {
            Lit::Str(s) => LiteralAst::Str(s),
            Lit::Int(i) => number(&i, false).map_or(LiteralAst::Other(ts.clone()), |n| LiteralAst::Number(n, ts)),
            Lit::Float(f) => f
                .base10_parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or(LiteralAst::Other(ts.clone()), |n| LiteralAst::Number(n, ts)),
            _ => LiteralAst::Other(ts),
        },
        [TokenTree::Punct(p), TokenTree::Literal(l)] if p.as_char() == '-' => match Lit::new(l.clone()) {
            Lit::Int(i) => number(&i, true).map_or(LiteralAst::Other(ts.clone()), |n| LiteralAst::Number(n, ts)),
            Lit::Float(f) => f
                .base10_parse::<f64>()
                .ok()
                .and_then(|v| serde_json::Number::from_f64(-v))
                .map_or(LiteralAst::Other(ts.clone()), |n| LiteralAst::Number(n, ts)),
            _ => LiteralAst::Other(ts),
        },
        _ => LiteralAst::Other(ts),
    }
}

fn number(i: &LitInt, negative: bool) -> Option<serde_json::Number> {
    if negative {
        i.base10_parse::<i64>().ok().map(|v| serde_json::Number::from(-v))
    } else {
        i.base10_parse::<u64>().ok().map(serde_json::Number::from)
    }
}

/// Reads `run("op")` or `report("reason")`.
fn action(tokens: &[TokenTree], cx: &Ctxt) -> Option<ActionAst> {
    let shape = "an action is run(\"<op name>\") or report(\"<reason>\")";
    let Some((ident, group)) = call(tokens) else {
        cx.error_spanned(stream(tokens), format!("expected an action: {shape}"));
        return None;
    };
    let name = ident.to_string();
    if !symbol::ACTIONS.contains(&name.as_str()) {
        let hint = match contract::did_you_mean(&name, symbol::ACTIONS.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => shape.to_owned(),
        };
        cx.error(ident.span(), format!("unknown action `{name}`; {hint}"));
        return None;
    }
    let Some(arg) = single_lit_str(&group.stream()) else {
        let what = if name == symbol::RUN {
            "the Op's name, as in run(\"staging-apply\")"
        } else {
            "a reason, as in report(\"unowned resources present\")"
        };
        cx.error_spanned(quote::quote!(#ident #group), format!("`{name}` takes one string: {what}"));
        return None;
    };
    Some(if name == symbol::RUN {
        ActionAst::Run { ident, group, target: arg }
    } else {
        ActionAst::Report { reason: arg }
    })
}
