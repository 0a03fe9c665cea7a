//! Checks one step call (`apply(env = "staging")`, `gate("name", ...)`, a user's
//! `step("name", run = path)`) against the contract's step table and builds its typed op.json
//! form: every argument's name, presence and type, with the typed values (delete mode, duration,
//! URL, verb class, names) parsed by the model's own types, each problem at its token.

use chant_core::contract::{self, ArgType, ClassKind, STEPS};
use chant_core::duration::Timeout;
use chant_core::name::Name;
use chant_core::op::Step;
use chant_core::step::{DeleteMode, HttpUrl};
use proc_macro2::{Ident, Span};
use quote::quote;

use crate::ast::{ArgValue, StepAst};
use crate::ctxt::Ctxt;
use crate::lexicon::{LexiconSpec, StepTable};
use crate::symbol;

/// Checks one step call against the step table (the built-in steps and those the invocation's
/// lexicons declared) and returns its op.json form, with the path of its function for a user
/// step.
pub(crate) fn step(ast: &StepAst, table: &StepTable, cx: &Ctxt) -> Option<(Step, Option<syn::Path>)> {
    let kind = ast.kind.to_string();
    let Some((spec, lexicon)) = table.get(&kind) else {
        let names: Vec<&str> = STEPS.iter().map(|s| s.name).collect();
        let hint = match contract::did_you_mean(&kind, table.names()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "the built-in steps are {}; a step of your own is written `step(\"<name>\", class = mutating, run = path::to_fn)`",
                names.join(", ")
            ),
        };
        cx.error(ast.kind.span(), format!("unknown step `{kind}`; {hint}"));
        return None;
    };
    let mut ok = true;
    let mut values: Vec<(&'static str, Span, &ArgValue)> = Vec::new();
    let positional_value;
    if let Some(p) = &ast.positional {
        match spec.positional {
            Some(arg) => {
                positional_value = ArgValue::Str(p.clone());
                values.push((arg, p.span(), &positional_value));
            }
            None => {
                cx.error(p.span(), format!("`{kind}` takes only named arguments, such as `{}`", example_arg(spec)));
                ok = false;
            }
        }
    }
    for a in &ast.args {
        let n = a.name.to_string();
        let Some(spec_arg) = spec.args.iter().find(|s| s.name == n) else {
            let hint = match contract::did_you_mean(&n, spec.args.iter().map(|s| s.name)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("it takes {}", spec.args.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")),
            };
            cx.error(a.name.span(), format!("`{kind}` has no argument `{n}`; {hint}"));
            ok = false;
            continue;
        };
        if values.iter().any(|(seen, _, _)| *seen == spec_arg.name) {
            cx.error(a.name.span(), format!("`{n}` is given twice to `{kind}`; remove one"));
            ok = false;
            continue;
        }
        values.push((spec_arg.name, a.name.span(), &a.value));
    }
    for req in spec.args.iter().filter(|a| a.required) {
        if !values.iter().any(|(n, _, _)| *n == req.name) {
            let how = if spec.positional == Some(req.name) {
                format!("its name first: `{kind}(\"<name>\", ...)`")
            } else {
                format!("`{} = {}`", req.name, placeholder(req.ty))
            };
            let (k, g) = (&ast.kind, &ast.group);
            cx.error_spanned(quote!(#k #g), format!("`{kind}` needs {how}"));
            ok = false;
        }
    }
    let mut name = None;
    let mut declared = None;
    let mut delete_mode = None;
    let mut run = None;
    let mut args = serde_json::Map::new();
    for (arg, span, value) in values {
        let Some(spec_arg) = spec.args.iter().find(|s| s.name == arg) else { continue };
        match (spec_arg.ty, value) {
            (ArgType::Str, ArgValue::Str(s)) if spec.positional == Some(arg) && lexicon.is_none() => {
                match Name::parse(&format!("{kind} name"), s.value()) {
                    Ok(n) => name = Some(n),
                    Err(e) => {
                        cx.error(s.span(), e);
                        ok = false;
                    }
                }
            }
            (ArgType::Str, ArgValue::Str(s)) => {
                let v = s.value();
                if arg == symbol::ENV
                    && !v.contains("${")
                    && Name::parse("env name", v.as_str()).map_err(|e| cx.error(s.span(), e)).is_err()
                {
                    ok = false;
                }
                if kind == "gate"
                    && arg == "carries"
                    && Name::parse("gate name", v.as_str()).map_err(|e| cx.error(s.span(), e)).is_err()
                {
                    ok = false;
                }
                args.insert(arg.to_owned(), serde_json::Value::String(v));
            }
            (ArgType::DeleteMode, ArgValue::Str(s)) => {
                let v = s.value();
                match DeleteMode::parse(&v) {
                    Some(m) => delete_mode = Some(m),
                    None => {
                        let modes = DeleteMode::ALL.map(DeleteMode::as_str);
                        let hint = match contract::did_you_mean(&v, modes) {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => format!("it is one of {}", modes.join(", ")),
                        };
                        cx.error(s.span(), format!("`{v}` is not a delete_mode; {hint}"));
                        ok = false;
                    }
                }
                args.insert(arg.to_owned(), serde_json::Value::String(v));
            }
            (ArgType::Duration, ArgValue::Str(s)) => {
                let v = s.value();
                if let Err(e) = Timeout::parse(&v) {
                    cx.error(s.span(), format!("`{arg}` of `{kind}`: {e}"));
                    ok = false;
                }
                args.insert(arg.to_owned(), serde_json::Value::String(v));
            }
            (ArgType::Url, ArgValue::Str(s)) => {
                let v = s.value();
                if let Err(e) = HttpUrl::parse(&v) {
                    cx.error(s.span(), format!("`{arg}` of `{kind}`: {e}"));
                    ok = false;
                }
                args.insert(arg.to_owned(), serde_json::Value::String(v));
            }
            (ArgType::Bool, ArgValue::Bool(b)) => {
                args.insert(arg.to_owned(), serde_json::Value::Bool(b.value));
            }
            (ArgType::Class, ArgValue::Path(p)) if p.get_ident().is_some() => {
                let word = p.get_ident().map(ToString::to_string).unwrap_or_default();
                match ClassKind::from_ident(&word) {
                    Some(c) => declared = Some(c),
                    None => {
                        let idents = ClassKind::ALL.map(ClassKind::ident);
                        let hint = match contract::did_you_mean(&word, idents) {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => "it is read_only, mutating or destructive".to_owned(),
                        };
                        cx.error(span_of(value, span), format!("`{word}` is not a verb class; {hint}"));
                        ok = false;
                    }
                }
            }
            (ArgType::Path, ArgValue::Path(p)) => {
                run = Some(p.clone());
            }
            (ArgType::Names, ArgValue::List(g)) => match names(arg, &kind, g, cx) {
                Some(list) => {
                    args.insert(arg.to_owned(), serde_json::Value::Array(list));
                }
                None => ok = false,
            },
            (ty, other) => {
                cx.error(span_of(other, span), format!("`{arg}` of `{kind}` takes {}", describe(ty)));
                ok = false;
            }
        }
    }
    if ok && let Some(lexicon) = lexicon {
        ok = one_of(ast, lexicon, &args, cx);
    }
    if !ok {
        return None;
    }
    let class = contract::step_class(spec, declared, delete_mode);
    let run_text = run.as_ref().map(|p| quote!(#p).to_string().replace(' ', ""));
    // The typed step is built through its serde form, the one constructor op.json also uses, so
    // what the macro accepts is exactly what the loader reads back.
    let mut object = serde_json::Map::new();
    object.insert("kind".to_owned(), spec.name.into());
    if let Some(n) = name {
        object.insert("name".to_owned(), n.as_str().into());
    }
    object.insert("class".to_owned(), class.as_str().into());
    // A lexicon's step always spells its arguments, as the typed steps it replaced did.
    if !args.is_empty() || lexicon.is_some() {
        object.insert("args".to_owned(), serde_json::Value::Object(args));
    }
    if let Some(r) = &run_text {
        object.insert("run".to_owned(), r.as_str().into());
    }
    match serde_json::from_value::<Step>(serde_json::Value::Object(object)) {
        Ok(step) => Some((step, run)),
        Err(e) => {
            let (k, g) = (&ast.kind, &ast.group);
            cx.error_spanned(quote!(#k #g), format!("`{kind}` does not form a valid step: {e}"));
            None
        }
    }
}

/// Checks a list of names (`services = ["app", "hud"]`): string literals, each following the
/// name rule, at least one; every problem at its token.
fn names(arg: &str, kind: &str, list: &proc_macro2::Group, cx: &Ctxt) -> Option<Vec<serde_json::Value>> {
    let mut out = Vec::new();
    let mut ok = true;
    let mut element: Vec<proc_macro2::TokenTree> = Vec::new();
    let mut elements = Vec::new();
    for t in list.stream() {
        match &t {
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ',' => elements.push(std::mem::take(&mut element)),
            _ => element.push(t),
        }
    }
    if !element.is_empty() {
        elements.push(element);
    }
    for e in elements {
        let tokens: proc_macro2::TokenStream = e.into_iter().collect();
        match syn::parse2::<syn::LitStr>(tokens.clone()) {
            Ok(l) => match Name::parse(&format!("name in `{arg}` of `{kind}`"), l.value()) {
                Ok(n) => out.push(serde_json::Value::String(n.as_str().to_owned())),
                Err(e) => {
                    cx.error(l.span(), e);
                    ok = false;
                }
            },
            Err(_) => {
                cx.error_spanned(
                    tokens,
                    format!("`{arg}` of `{kind}` lists names as strings, such as [\"app\", \"hud\"]"),
                );
                ok = false;
            }
        }
    }
    if ok && out.is_empty() {
        cx.error(
            list.span(),
            format!("`{arg}` of `{kind}` is an empty list; name at least one, such as {arg} = [\"app\"]"),
        );
        return None;
    }
    ok.then_some(out)
}

/// Checks a lexicon step's `one_of`: exactly one of those arguments is given (a `false` flag
/// counts as not given). Several are refused at the second one given, none at the call.
fn one_of(ast: &StepAst, declared: &LexiconSpec, args: &serde_json::Map<String, serde_json::Value>, cx: &Ctxt) -> bool {
    if declared.one_of.is_empty() {
        return true;
    }
    let kind = declared.spec.name;
    let given: Vec<&Ident> = ast
        .args
        .iter()
        .map(|a| &a.name)
        .filter(|n| {
            let n = n.to_string();
            declared.one_of.contains(&n.as_str()) && args.get(&n).is_some_and(|v| v != &serde_json::Value::Bool(false))
        })
        .collect();
    let spelled: Vec<String> = declared
        .one_of
        .iter()
        .map(|name| {
            let ty = declared.spec.args.iter().find(|a| a.name == *name).map_or(ArgType::Str, |a| a.ty);
            let value = match ty {
                ArgType::Names => "[...]",
                ArgType::Str => "\"...\"",
                other => placeholder(other),
            };
            format!("{name} = {value}")
        })
        .collect();
    let choices = match spelled.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    match (given.len(), given.get(1)) {
        (1, _) => true,
        (_, Some(second)) => {
            let names: Vec<String> = given
                .iter()
                .map(|n| match args.get(&n.to_string()) {
                    Some(serde_json::Value::Bool(true)) => format!("{n} = true"),
                    _ => n.to_string(),
                })
                .collect();
            cx.error(
                second.span(),
                format!("`{kind}` takes one of {choices}, and it was given {}; keep one", names.join(" and ")),
            );
            false
        }
        _ => {
            let (k, g) = (&ast.kind, &ast.group);
            cx.error_spanned(quote!(#k #g), format!("`{kind}` needs one of {choices}"));
            false
        }
    }
}

fn span_of(value: &ArgValue, fallback: Span) -> Span {
    match value {
        ArgValue::Str(s) => s.span(),
        ArgValue::Bool(b) => b.span,
        ArgValue::Path(p) => p.segments.first().map_or(fallback, |s| s.ident.span()),
        ArgValue::List(g) => g.span(),
        ArgValue::Other(ts) => ts.clone().into_iter().next().map_or(fallback, |t| t.span()),
    }
}

fn placeholder(ty: ArgType) -> &'static str {
    match ty {
        ArgType::Str => "\"...\"",
        ArgType::Bool => "true",
        ArgType::Class => "mutating",
        ArgType::Path => "path::to_fn",
        ArgType::Duration => "\"5m\"",
        ArgType::Url => "\"http://127.0.0.1:8080/health\"",
        ArgType::DeleteMode => "\"owned-only\"",
        ArgType::Names => "[\"app\"]",
    }
}

fn describe(ty: ArgType) -> &'static str {
    match ty {
        ArgType::Str => "a string literal, such as \"staging\" (`${VAR}` is expanded when the step runs)",
        ArgType::Bool => "`true` or `false`",
        ArgType::Class => "a verb class: read_only, mutating or destructive",
        ArgType::Path => "the path of a function `fn(&StepContext<'_>) -> StepResult`, such as `crate::steps::purge`",
        ArgType::Duration => "a duration string, such as \"90s\", \"5m\" or \"48h\"",
        ArgType::Url => "an http:// or https:// URL string (`${VAR}` is expanded when the step runs)",
        ArgType::DeleteMode => "a string, \"never\" or \"owned-only\"",
        ArgType::Names => "a list of names in brackets, such as [\"app\", \"hud\"]",
    }
}

fn example_arg(spec: &contract::StepSpec) -> String {
    spec.args.first().map_or_else(String::new, |a| format!("{} = {}", a.name, placeholder(a.ty)))
}
