//! Reads macro input into the syntax tree of [`crate::ast`], on [`syn::parse::Parse`].
//!
//! Each piece of the grammar is a type with its own `Parse`: a comma-separated [`List`] of raw
//! entries, a [`KeyValue`] (`field: value`, `arg = value`), a [`Call`], the values of the fields
//! ([`Budget`], [`Word`], [`Brackets`], [`ArgValue`], [`LiteralAst`], [`ActionAst`],
//! [`DefaultCommand`]), and the pieces that hold others: steps, phases, rules, predicates and the
//! invocations of `op!`, `converge_op!` and `main!`, read as [`Parsed`].
//!
//! One malformed value never hides the problems in the others: a list is split at its top-level
//! commas first and every entry is parsed on its own (`syn::parse2`), so a problem stops only the
//! entry it is in. A piece that holds others ([`Parsed`]) hands back what it could read together
//! with every problem found inside it ([`Problems`]); the entry points push them to the [`Ctxt`],
//! each at its token. Semantic checks (which fields a symptom has, which dials exist, names,
//! cron) belong to [`crate::check`].

use std::fmt::Display;
use std::marker::PhantomData;

use chant_core::contract::{self, COMBINATORS, COMPARISON_OPS, LeafProblem, SymptomKind, TRUTHINESS_OPS};
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::{Pair, Punctuated};
use syn::{Error, Lit, LitBool, LitInt, LitStr, Token};

use crate::ast::{
    ActionAst, ArgAst, ArgValue, ConvergeAst, LimitAst, LiteralAst, MainAst, OpAst, PhaseAst, PredicateAst, RuleAst,
    StepAst, WindowAst,
};
use crate::ctxt::Ctxt;
use crate::symbol;

const RULE_SHAPE: &str = "a rule is written `when!(<predicate> => <action>, why = \"<why this rule exists>\")`";

/// Reads an `op! { ... }` invocation.
pub(crate) fn op(input: TokenStream, cx: &Ctxt) -> OpAst {
    read(input, cx).unwrap_or_else(empty_op)
}

/// Reads a `converge_op! { ... }` invocation.
pub(crate) fn converge_op(input: TokenStream, cx: &Ctxt) -> ConvergeAst {
    read(input, cx).unwrap_or_else(empty_converge)
}

/// Reads a `main!(...)` invocation: empty, or `default = tick("<converge op>")`.
pub(crate) fn main_macro(input: TokenStream, cx: &Ctxt) -> MainAst {
    read(input, cx).unwrap_or(MainAst::Help)
}

/// Parses `tokens` as a whole `T`, pushing every problem found to `cx`.
fn read<T>(tokens: TokenStream, cx: &Ctxt) -> Option<T>
where
    Parsed<T>: Parse,
{
    match syn::parse2::<Parsed<T>>(tokens) {
        Ok(parsed) => {
            parsed.problems.0.into_iter().for_each(|e| cx.push(e));
            Some(parsed.value)
        }
        Err(e) => {
            cx.push(e);
            None
        }
    }
}

/// An `op!` of which nothing could be read.
fn empty_op() -> OpAst {
    OpAst { name: None, overview: None, env: None, phases: Vec::new(), on_failure: Vec::new() }
}

/// A `converge_op!` of which nothing could be read.
fn empty_converge() -> ConvergeAst {
    ConvergeAst {
        name: None,
        overview: None,
        env: None,
        dial: None,
        budget: None,
        schedule: None,
        tz: None,
        observe: None,
        windows: Vec::new(),
        restart_limit: None,
        rules: None,
        dial_failed: false,
    }
}

/// A piece of the grammar that holds others, with the problems found inside it that did not stop
/// it: the entries that failed are left out of `value`, their errors are in `problems`.
struct Parsed<T> {
    /// What could be read.
    value: T,
    /// Every problem found on the way.
    problems: Problems,
}

/// The problems one piece of the grammar found in its parts, in the order found.
#[derive(Default)]
struct Problems(Vec<Error>);

impl Problems {
    /// Records a problem at `span`.
    fn error(&mut self, span: Span, message: impl Display) {
        self.0.push(Error::new(span, message));
    }

    /// Records a problem spanning `tokens`.
    fn error_spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.0.push(Error::new_spanned(tokens, message));
    }

    /// Parses `tokens` as one `T` on its own; a failure is recorded and gives `None`.
    fn parse<T: Parse>(&mut self, tokens: TokenStream) -> Option<T> {
        syn::parse2(tokens).map_err(|e| self.0.push(e)).ok()
    }

    /// Reads `tokens` as one `T` on its own, keeping the problems found inside it.
    fn read<T>(&mut self, tokens: TokenStream) -> Option<T>
    where
        Parsed<T>: Parse,
    {
        let parsed = self.parse::<Parsed<T>>(tokens)?;
        self.0.extend(parsed.problems.0);
        Some(parsed.value)
    }

    /// Splits `tokens` into the entries of a [`List`], recording the empty ones.
    fn list(&mut self, tokens: TokenStream) -> Vec<TokenStream> {
        self.parse::<List>(tokens).map(|l| l.entries(self)).unwrap_or_default()
    }

    /// The error that stops the piece, with the problems found before it.
    fn fail(self, error: Error) -> Error {
        let mut problems = self.0.into_iter();
        let Some(mut first) = problems.next() else {
            return error;
        };
        problems.for_each(|e| first.combine(e));
        first.combine(error);
        first
    }

    /// The piece read as `value`, with these problems.
    fn done<T>(self, value: T) -> syn::Result<Parsed<T>> {
        Ok(Parsed { value, problems: self })
    }
}

/// The tokens left in `input`, without consuming them (to span an error over a whole value).
fn rest(input: ParseStream) -> TokenStream {
    input.fork().parse().unwrap_or_default()
}

/// Parses one `T` if it is all that is left in `input`; else leaves `input` as it was (so the
/// caller can still span an error over the whole of it).
fn whole<T: Parse>(input: ParseStream) -> Option<T> {
    let fork = input.fork();
    let value = fork.parse::<T>().ok().filter(|_| fork.is_empty())?;
    input.advance_to(&fork);
    Some(value)
}

/// Parses a group delimited by `delimiter` (the entries of a [`List`] have their invisible groups
/// opened already, see [`Entry`]).
fn group(input: ParseStream, delimiter: Delimiter) -> syn::Result<Group> {
    input.step(|cursor| match cursor.token_tree() {
        Some((TokenTree::Group(group), after)) if group.delimiter() == delimiter => Ok((group, after)),
        _ => Err(cursor.error(match delimiter {
            Delimiter::Bracket => "expected a list in brackets `[...]`",
            _ => "expected arguments in parentheses `(...)`",
        })),
    })
}

/// Whether `input` starts like a closure (`|x| ...`, `move || ...`, `async ...`).
fn is_closure(input: ParseStream) -> bool {
    input.peek(Token![|]) || input.peek(Token![move]) || input.peek(Token![async])
}

/// One entry of a comma-separated list: its tokens up to the next top-level comma (a group is one
/// token, so the commas inside it stay there), possibly none. The invisible groups that
/// `macro_rules!` wraps its fragments in are opened, so an entry holds the tokens as written and
/// an error spans exactly them.
struct Entry(TokenStream);

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.step(|cursor| {
            let mut at = *cursor;
            let mut tokens = TokenStream::new();
            while let Some((token, next)) = at.token_tree() {
                match token {
                    TokenTree::Punct(p) if p.as_char() == ',' => break,
                    TokenTree::Group(g) if g.delimiter() == Delimiter::None => flatten(g.stream(), &mut tokens),
                    other => tokens.extend([other]),
                }
                at = next;
            }
            Ok((Entry(tokens), at))
        })
    }
}

/// Appends `stream` to `out`, opening invisible groups.
fn flatten(stream: TokenStream, out: &mut TokenStream) {
    for token in stream {
        match token {
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => flatten(g.stream(), out),
            other => out.extend([other]),
        }
    }
}

/// A comma-separated list whose entries are kept as raw tokens, each to be parsed on its own. A
/// trailing comma is allowed; an empty entry (`,,`) is a problem at its comma.
struct List(Punctuated<Entry, Token![,]>);

impl Parse for List {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Punctuated::parse_terminated(input).map(List)
    }
}

impl List {
    /// The entries that are not empty, recording the empty ones in `problems`.
    fn entries(self, problems: &mut Problems) -> Vec<TokenStream> {
        let mut out = Vec::new();
        for pair in self.0.into_pairs() {
            match pair {
                Pair::Punctuated(Entry(tokens), comma) if tokens.is_empty() => {
                    problems.error(comma.span, "unexpected `,`: an entry is missing here");
                }
                Pair::Punctuated(Entry(tokens), _) | Pair::End(Entry(tokens)) => out.push(tokens),
            }
        }
        out
    }
}

/// What separates a key from its value, and an example of the entry for the errors.
trait Shape {
    /// `:` for fields, `=` for arguments and options.
    const SEP: char;
    /// A well-formed entry.
    const EXAMPLE: &'static str;
}

/// A field of `op!` / `converge_op!`: `name: "..."`.
struct FieldShape;
impl Shape for FieldShape {
    const SEP: char = ':';
    const EXAMPLE: &'static str = "name: \"...\"";
}

/// A named step argument: `env = "staging"`.
struct ArgShape;
impl Shape for ArgShape {
    const SEP: char = '=';
    const EXAMPLE: &'static str = "env = \"staging\"";
}

/// A rule option: `why = "..."`.
struct OptionShape;
impl Shape for OptionShape {
    const SEP: char = '=';
    const EXAMPLE: &'static str = "why = \"...\"";
}

/// An option of `main!`: `default = tick("...")`.
struct MainShape;
impl Shape for MainShape {
    const SEP: char = '=';
    const EXAMPLE: &'static str = "default = tick(\"<converge op>\")";
}

/// `key <sep> value`: the key (any identifier, keywords included: `box`) and the value's raw
/// tokens, never empty.
struct KeyValue<S> {
    key: Ident,
    value: TokenStream,
    shape: PhantomData<S>,
}

impl<S: Shape> Parse for KeyValue<S> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let Ok(key) = input.call(Ident::parse_any) else {
            return Err(Error::new_spanned(rest(input), format!("expected `{}`", S::EXAMPLE)));
        };
        // `=` is not the start of `==`.
        let sep = input.parse::<Punct>().ok().filter(|p| {
            p.as_char() == S::SEP && !(S::SEP == '=' && p.spacing() == Spacing::Joint && input.peek(Token![=]))
        });
        if sep.is_none() {
            return Err(Error::new(key.span(), format!("expected `{}` after `{key}`, as in `{}`", S::SEP, S::EXAMPLE)));
        }
        let value: TokenStream = input.parse()?;
        if value.is_empty() {
            return Err(Error::new(key.span(), format!("`{key}` needs a value after `{}`", S::SEP)));
        }
        Ok(KeyValue { key, value, shape: PhantomData })
    }
}

/// `name(...)`: an identifier (keywords included) and a parenthesised group, and nothing else.
struct Call {
    name: Ident,
    args: Group,
}

impl Parse for Call {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name = input.call(Ident::parse_any)?;
        let args = group(input, Delimiter::Parenthesis)?;
        if !input.is_empty() {
            return Err(input.error("expected nothing after the call's arguments"));
        }
        Ok(Call { name, args })
    }
}

/// A list in brackets, `[...]`, and nothing else.
struct Brackets(Group);

impl Parse for Brackets {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        group(input, Delimiter::Bracket).map(Brackets)
    }
}

/// One identifier, keywords included (`dial: apply`).
struct Word(Ident);

impl Parse for Word {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.call(Ident::parse_any).map(Word)
    }
}

/// `budget: N`: a non-negative integer.
struct Budget(u64);

impl Parse for Budget {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let msg = "`budget` must be a non-negative integer, such as `budget: 3` (the most run() dispatches per tick)";
        let all = rest(input);
        if let Some(literal) = whole::<Literal>(input) {
            return match Lit::new(literal.clone()) {
                Lit::Int(i) => {
                    i.base10_parse::<u64>().map(Budget).map_err(|e| Error::new(i.span(), format!("{msg}: {e}")))
                }
                Lit::Float(f) => Err(Error::new(f.span(), format!("{msg}; `{f}` is not an integer"))),
                _ => Err(Error::new(literal.span(), format!("{msg}; write the number without quotes"))),
            };
        }
        if negative(input).is_some() {
            return Err(Error::new_spanned(all, format!("{msg}; a negative budget is meaningless")));
        }
        Err(Error::new_spanned(all, msg))
    }
}

/// `-` and a literal, if that is all that is left in `input`: the literal, and `input` is
/// consumed; else `input` is left as it was.
fn negative(input: ParseStream) -> Option<Literal> {
    let fork = input.fork();
    fork.parse::<Token![-]>().ok()?;
    let literal = whole::<Literal>(&fork)?;
    input.advance_to(&fork);
    Some(literal)
}

/// Reads `key: "..."`'s string, or records that it is not one.
fn lit_str(key: &Ident, value: &TokenStream, example: &str, problems: &mut Problems) -> Option<LitStr> {
    let lit = syn::parse2::<LitStr>(value.clone()).ok();
    if lit.is_none() {
        problems.error_spanned(value, format!("`{key}` takes a string literal, such as `{key}: {example}`"));
    }
    lit
}

/// Reads `key: [...]`'s list, or records that it is not one.
fn bracket(key: &Ident, value: &TokenStream, example: &str, problems: &mut Problems) -> Option<Group> {
    let list = syn::parse2::<Brackets>(value.clone()).ok().map(|Brackets(g)| g);
    if list.is_none() {
        problems.error_spanned(value, format!("`{key}` takes a list in brackets: `{key}: [{example}]`"));
    }
    list
}

const WINDOW_SHAPE: &str = "a window is written `deny(\"<cron>\", \"<duration>\")` or `allow(\"<cron>\", \"<duration>\")`, e.g. `deny(\"0 9 * * 1-5\", \"8h\")`";

/// Reads `windows: [...]`: each entry on its own, so one malformed window hides no other.
fn windows(key: &Ident, value: &TokenStream, problems: &mut Problems) -> Vec<WindowAst> {
    let Some(list) = bracket(key, value, "deny(\"0 9 * * 1-5\", \"8h\")", problems) else {
        return Vec::new();
    };
    problems.list(list.stream()).into_iter().filter_map(|entry| problems.parse::<WindowAst>(entry)).collect()
}

/// `deny("<cron>", "<duration>")`: a call of two string literals (the kind is checked later).
impl Parse for WindowAst {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let all = rest(input);
        let Ok(Call { name, args }) = input.parse::<Call>() else {
            return Err(Error::new_spanned(all, WINDOW_SHAPE));
        };
        let entries: Vec<TokenStream> =
            syn::parse2::<List>(args.stream()).map(|l| l.0.into_iter().map(|Entry(t)| t).collect()).unwrap_or_default();
        let strings: Option<Vec<LitStr>> = entries.into_iter().map(|t| syn::parse2::<LitStr>(t).ok()).collect();
        match strings.and_then(|v| <[LitStr; 2]>::try_from(v).ok()) {
            Some([cron, duration]) => Ok(WindowAst { kind: name, cron, duration }),
            None => Err(Error::new_spanned(quote!(#name #args), WINDOW_SHAPE)),
        }
    }
}

const LIMIT_SHAPE: &str =
    "`restart_limit` is written `limit(<count>, within = \"<duration>\")`, e.g. `limit(3, within = \"10m\")`";

/// `limit(N, within = "<duration>")` (the call's name is checked later).
impl Parse for LimitAst {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let all = rest(input);
        let Ok(Call { name, args }) = input.parse::<Call>() else {
            return Err(Error::new_spanned(all, LIMIT_SHAPE));
        };
        let whole_call = quote!(#name #args);
        let entries: Vec<TokenStream> =
            syn::parse2::<List>(args.stream()).map(|l| l.0.into_iter().map(|Entry(t)| t).collect()).unwrap_or_default();
        let [count, within] =
            <[TokenStream; 2]>::try_from(entries).map_err(|_| Error::new_spanned(&whole_call, LIMIT_SHAPE))?;
        let count = syn::parse2::<LitInt>(count.clone()).map_err(|_| {
            Error::new_spanned(
                &count,
                "the count of `limit(...)` is a positive integer, such as `limit(3, within = \"10m\")`",
            )
        })?;
        let KeyValue { key, value, .. } =
            syn::parse2::<KeyValue<ArgShape>>(within.clone()).map_err(|_| Error::new_spanned(&within, LIMIT_SHAPE))?;
        if key != symbol::WITHIN {
            return Err(Error::new(
                key.span(),
                format!("unknown option `{key}` of `limit(...)`; it takes `within = \"<duration>\"`"),
            ));
        }
        let within = syn::parse2::<LitStr>(value.clone())
            .map_err(|_| Error::new_spanned(&value, "`within` takes a duration string, such as `within = \"10m\"`"))?;
        Ok(LimitAst { call: name, count, within })
    }
}

/// Records that a required field is missing, at the invocation.
fn missing(problems: &mut Problems, mac: &str, present: bool, example: &str) {
    if !present {
        problems.error(Span::call_site(), format!("{mac} needs `{example}`"));
    }
}

/// Reads the `key: value` fields of an invocation, recording unknown and repeated keys (at the
/// key) and leaving them out.
fn fields(
    input: ParseStream,
    mac: &str,
    allowed: &[&str],
    problems: &mut Problems,
) -> syn::Result<Vec<(Ident, TokenStream)>> {
    let mut out: Vec<(Ident, TokenStream)> = Vec::new();
    for entry in input.parse::<List>()?.entries(problems) {
        let Some(KeyValue { key, value, .. }) = problems.parse::<KeyValue<FieldShape>>(entry) else {
            continue;
        };
        let k = key.to_string();
        if !allowed.contains(&k.as_str()) {
            let hint = match contract::did_you_mean(&k, allowed.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("its fields are {}", allowed.join(", ")),
            };
            problems.error(key.span(), format!("unknown field `{k}` in {mac}; {hint}"));
            continue;
        }
        if out.iter().any(|(seen, _)| *seen == k) {
            problems.error(key.span(), format!("`{k}` is given twice; remove one"));
            continue;
        }
        out.push((key, value));
    }
    Ok(out)
}

/// The fields of `op! { ... }`; a missing required one is a problem at the invocation.
impl Parse for Parsed<OpAst> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut problems = Problems::default();
        let mut ast = empty_op();
        let (mut name_key, mut overview_key, mut has_phases) = (false, false, false);
        for (key, value) in fields(input, "op!", symbol::OP_FIELDS, &mut problems)? {
            match key.to_string().as_str() {
                symbol::NAME => {
                    name_key = true;
                    ast.name = lit_str(&key, &value, "\"staging-apply\"", &mut problems);
                }
                symbol::OVERVIEW => {
                    overview_key = true;
                    ast.overview = lit_str(&key, &value, "\"Apply the staging declaration.\"", &mut problems);
                }
                symbol::ENV => ast.env = lit_str(&key, &value, "\"staging\"", &mut problems),
                symbol::PHASES => {
                    has_phases = true;
                    ast.phases = phases(&key, &value, &mut problems);
                }
                _ => ast.on_failure = phases(&key, &value, &mut problems),
            }
        }
        missing(&mut problems, "op!", name_key, "name: \"<op name>\"");
        missing(&mut problems, "op!", overview_key, "overview: \"<one line saying what it does>\"");
        missing(&mut problems, "op!", has_phases, "phases: [ phase(\"<Name>\", [ <steps> ]) ]");
        problems.done(ast)
    }
}

/// The fields of `converge_op! { ... }`; a missing required one is a problem at the invocation.
impl Parse for Parsed<ConvergeAst> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut problems = Problems::default();
        let mut ast = empty_converge();
        let (mut name_key, mut env_key, mut rules_key) = (false, false, false);
        for (key, value) in fields(input, "converge_op!", symbol::CONVERGE_FIELDS, &mut problems)? {
            match key.to_string().as_str() {
                symbol::NAME => {
                    name_key = true;
                    ast.name = lit_str(&key, &value, "\"staging-converge\"", &mut problems);
                }
                symbol::OVERVIEW => ast.overview = lit_str(&key, &value, "\"Keep staging converged.\"", &mut problems),
                symbol::ENV => {
                    env_key = true;
                    ast.env = lit_str(&key, &value, "\"staging\"", &mut problems);
                }
                symbol::DIAL => match syn::parse2::<Word>(value.clone()) {
                    Ok(Word(dial)) => ast.dial = Some(dial),
                    Err(_) => {
                        ast.dial_failed = true;
                        problems.error_spanned(
                            &value,
                            "`dial` is one of the words observe, reconcile or apply, written without quotes",
                        );
                    }
                },
                symbol::BUDGET => ast.budget = problems.parse::<Budget>(value).map(|Budget(n)| n),
                symbol::SCHEDULE => ast.schedule = lit_str(&key, &value, "\"*/10 * * * *\"", &mut problems),
                symbol::TZ => {
                    ast.tz = lit_str(&key, &value, "\"Europe/Berlin\"", &mut problems).map(|l| (key.clone(), l));
                }
                symbol::OBSERVE => ast.observe = problems.read::<StepAst>(value),
                symbol::WINDOWS => ast.windows = windows(&key, &value, &mut problems),
                symbol::RESTART_LIMIT => ast.restart_limit = problems.parse::<LimitAst>(value),
                _ => {
                    rules_key = true;
                    ast.rules = rules(&key, &value, &mut problems);
                }
            }
        }
        missing(&mut problems, "converge_op!", name_key, "name: \"<op name>\"");
        missing(&mut problems, "converge_op!", env_key, "env: \"<env name>\"");
        missing(
            &mut problems,
            "converge_op!",
            rules_key,
            "rules: [ when!(<predicate> => <action>, why = \"...\"), ... ]",
        );
        problems.done(ast)
    }
}

/// The options of `main!(...)`: none, or `default = <command>` once.
impl Parse for Parsed<MainAst> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut problems = Problems::default();
        let mut out = MainAst::Help;
        let mut seen = false;
        for entry in input.parse::<List>()?.entries(&mut problems) {
            let Some(KeyValue { key, value, .. }) = problems.parse::<KeyValue<MainShape>>(entry) else {
                continue;
            };
            if key != symbol::DEFAULT {
                let hint = match contract::did_you_mean(&key.to_string(), [symbol::DEFAULT]) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "main! takes only `default = tick(\"<converge op>\")`".to_owned(),
                };
                problems.error(key.span(), format!("unknown option `{key}` in main!; {hint}"));
                continue;
            }
            if seen {
                problems.error(key.span(), "`default` is given twice; remove one");
                continue;
            }
            seen = true;
            if let Some(DefaultCommand(command)) = problems.parse(value) {
                out = command;
            }
        }
        problems.done(out)
    }
}

/// The value of `main!(default = ...)`: `help` or `tick("<converge op>")`.
struct DefaultCommand(MainAst);

impl Parse for DefaultCommand {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let all = rest(input);
        let fork = input.fork();
        if let Ok(word) = fork.call(Ident::parse_any) {
            if word == symbol::HELP && fork.is_empty() {
                input.parse::<TokenStream>()?;
                return Ok(DefaultCommand(MainAst::Help));
            }
            if word == symbol::TICK
                && let Ok(args) = group(&fork, Delimiter::Parenthesis)
                && fork.is_empty()
            {
                input.parse::<TokenStream>()?;
                return match syn::parse2::<LitStr>(args.stream()) {
                    Ok(name) => Ok(DefaultCommand(MainAst::Tick(name))),
                    Err(_) => Err(Error::new_spanned(
                        args,
                        "tick() takes the ConvergeOp's name as a string: tick(\"staging-converge\")",
                    )),
                };
            }
            if word != symbol::TICK && word != symbol::HELP {
                let hint = match contract::did_you_mean(&word.to_string(), [symbol::TICK, symbol::HELP]) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => {
                        "write `default = tick(\"<converge op>\")`, or leave `default` out to print help".to_owned()
                    }
                };
                return Err(Error::new(word.span(), format!("unknown default command `{word}`; {hint}")));
            }
        }
        Err(Error::new_spanned(
            all,
            "expected `default = tick(\"<converge op>\")`, e.g. main!(default = tick(\"staging-converge\"))",
        ))
    }
}

/// Reads `phases: [...]` / `on_failure: [...]`: the phases that parse.
fn phases(key: &Ident, value: &TokenStream, problems: &mut Problems) -> Vec<PhaseAst> {
    let Some(list) = bracket(key, value, " phase(\"Apply\", [ apply(env = \"staging\") ]) ", problems) else {
        return Vec::new();
    };
    problems.list(list.stream()).into_iter().filter_map(|entry| problems.read::<PhaseAst>(entry)).collect()
}

/// `phase("Name", [steps])`.
impl Parse for Parsed<PhaseAst> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let example = "expected `phase(\"<Name>\", [ <steps> ])`";
        let Some(Call { name: ident, args: group }) = whole::<Call>(input) else {
            return Err(Error::new_spanned(rest(input), example));
        };
        if ident != symbol::PHASE {
            return Err(Error::new_spanned(quote!(#ident #group), example));
        }
        let mut problems = Problems::default();
        let args = problems.list(group.stream());
        let name = args.first().and_then(|a| syn::parse2::<LitStr>(a.clone()).ok());
        let steps = match args.as_slice() {
            [_, steps] | [_, steps, _] => syn::parse2::<Brackets>(steps.clone()).ok(),
            _ => None,
        };
        let (Some(name), Some(Brackets(steps))) = (name, steps) else {
            return Err(problems.fail(Error::new_spanned(quote!(#ident #group), example)));
        };
        // `component = "<name>"` after the steps: the component the phase belongs to.
        let mut component = None;
        if let Some(extra) = args.get(2)
            && let Some(KeyValue { key, value, .. }) = problems.parse::<KeyValue<ArgShape>>(extra.clone())
        {
            if key != symbol::COMPONENT {
                let hint = match contract::did_you_mean(&key.to_string(), [symbol::COMPONENT]) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("after its steps a phase takes only `{} = \"<name>\"`", symbol::COMPONENT),
                };
                problems.error(key.span(), format!("`phase` has no argument `{key}`; {hint}"));
            } else {
                match syn::parse2::<LitStr>(value.clone()) {
                    Ok(l) => component = Some(l),
                    Err(_) => problems.error_spanned(
                        value,
                        "`component` takes a string: the component's name, such as `component = \"api\"`",
                    ),
                }
            }
        }
        let steps = problems.list(steps.stream()).into_iter().filter_map(|s| problems.read::<StepAst>(s)).collect();
        problems.done(PhaseAst { name, steps, component })
    }
}

/// One step call: `name(arg = value, ...)`, with a leading positional string for the steps that
/// take one. Argument names may be any identifier, keywords included (`box`).
impl Parse for Parsed<StepAst> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let Some(Call { name: kind, args: group }) = whole::<Call>(input) else {
            return Err(Error::new_spanned(rest(input), "expected a step call such as `apply(env = \"staging\")`"));
        };
        let mut problems = Problems::default();
        let mut positional = None;
        let mut args = Vec::new();
        for (i, entry) in problems.list(group.stream()).into_iter().enumerate() {
            if i == 0
                && let Ok(l) = syn::parse2::<LitStr>(entry.clone())
            {
                positional = Some(l);
                continue;
            }
            let Some(KeyValue { key, value, .. }) = problems.parse::<KeyValue<ArgShape>>(entry) else {
                continue;
            };
            if let Some(value) = problems.parse::<ArgValue>(value) {
                args.push(ArgAst { name: key, value });
            }
        }
        problems.done(StepAst { kind, group, positional, args })
    }
}

/// A step argument's value, typed by its syntax; anything else is kept as [`ArgValue::Other`].
impl Parse for ArgValue {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let value = whole::<LitBool>(input)
            .map(ArgValue::Bool)
            .or_else(|| whole::<LitStr>(input).map(ArgValue::Str))
            .or_else(|| whole::<Brackets>(input).map(|Brackets(g)| ArgValue::List(g)))
            .or_else(|| whole::<syn::Path>(input).map(ArgValue::Path))
            .unwrap_or_else(|| ArgValue::Other(rest(input)));
        input.parse::<TokenStream>()?;
        Ok(value)
    }
}

/// Reads `rules: [...]`: the bracket group and the rules that parse; an empty table is a problem.
fn rules(key: &Ident, value: &TokenStream, problems: &mut Problems) -> Option<(Group, Vec<RuleAst>)> {
    let list = bracket(key, value, " when!(eq(status, \"drifted\") => run(\"<op>\"), why = \"...\") ", problems)?;
    let entries = problems.list(list.stream());
    if entries.is_empty() {
        problems.error(
            list.span(),
            "the rule table is empty; a ConvergeOp needs at least one `when!(<predicate> => <action>, why = \"...\")`, or it has nothing to converge",
        );
    }
    let rules = entries.into_iter().filter_map(|entry| problems.read::<RuleAst>(entry)).collect();
    Some((list, rules))
}

/// `when!(...)` (any delimiter), and nothing after it.
struct When {
    when: Ident,
    group: Group,
}

impl Parse for When {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let when = input.call(Ident::parse_any)?;
        if when != symbol::WHEN {
            return Err(Error::new(when.span(), "expected `when!`"));
        }
        input.parse::<Token![!]>()?;
        let group = input.parse()?;
        if !input.is_empty() {
            return Err(input.error("expected nothing after `when!(...)`"));
        }
        Ok(When { when, group })
    }
}

/// The path before `when!`, as in `chant::when!`: `[::] (segment ::)*`.
struct PathPrefix;

impl Parse for PathPrefix {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.parse::<Option<Token![::]>>()?;
        while !input.is_empty() {
            input.call(Ident::parse_any)?;
            input.parse::<Token![::]>()?;
        }
        Ok(PathPrefix)
    }
}

/// The head of a rule, `<predicate> => <action>`, split at the first top-level `=>`.
struct Arrow {
    predicate: TokenStream,
    action: TokenStream,
}

impl Parse for Arrow {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let start = input.fork();
        let mut predicate = TokenStream::new();
        while !input.peek(Token![=>]) {
            if input.is_empty() {
                return Err(Error::new_spanned(
                    rest(&start),
                    "a rule starts with `<predicate> => <action>`, e.g. `eq(status, \"drifted\") => run(\"staging-apply\")`",
                ));
            }
            predicate.extend([input.parse::<TokenTree>()?]);
        }
        input.parse::<Token![=>]>()?;
        Ok(Arrow { predicate, action: input.parse()? })
    }
}

/// One `when!(predicate => action, options)` of a rule table, possibly through a path
/// (`chant::when!`).
impl Parse for Parsed<RuleAst> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let shape = format!("expected {RULE_SHAPE}");
        let start = input.fork();
        let mut problems = Problems::default();
        let mut prefix = TokenStream::new();
        let When { when, group } = loop {
            if let Some(rule) = whole::<When>(input) {
                break rule;
            }
            match input.parse::<TokenTree>() {
                Ok(token) => prefix.extend([token]),
                Err(_) if is_closure(&start) => {
                    return Err(Error::new_spanned(
                        rest(&start),
                        format!("a rule is data, not a closure: it has to survive into op.json; {RULE_SHAPE}"),
                    ));
                }
                Err(_) => return Err(Error::new_spanned(rest(&start), shape)),
            }
        };
        if !prefix.is_empty() && syn::parse2::<PathPrefix>(prefix.clone()).is_err() {
            problems.error_spanned(prefix, &shape);
        }
        let mut ast =
            RuleAst { when: when.clone(), predicate: None, action: None, id: None, why: None, flap_threshold: None };
        let mut parts = problems.list(group.stream()).into_iter();
        let Some(head) = parts.next() else {
            problems.error(when.span(), format!("this rule is empty; {RULE_SHAPE}"));
            return problems.done(ast);
        };
        let Some(Arrow { predicate, action }) = problems.parse::<Arrow>(head) else {
            return problems.done(ast);
        };
        if predicate.is_empty() {
            problems.error(when.span(), "this rule has no predicate before `=>`");
        } else {
            ast.predicate = problems.read::<PredicateAst>(predicate);
        }
        if action.is_empty() {
            problems
                .error(when.span(), "this rule has no action after `=>`; write run(\"<op>\") or report(\"<reason>\")");
        } else {
            ast.action = problems.parse::<ActionAst>(action);
        }
        let mut seen: Vec<String> = Vec::new();
        for entry in parts {
            let Some(KeyValue { key, value, .. }) = problems.parse::<KeyValue<OptionShape>>(entry) else {
                continue;
            };
            let k = key.to_string();
            if !symbol::RULE_OPTIONS.contains(&k.as_str()) {
                let hint = match contract::did_you_mean(&k, symbol::RULE_OPTIONS.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("a rule takes {}", symbol::RULE_OPTIONS.join(", ")),
                };
                problems.error(key.span(), format!("unknown rule option `{k}`; {hint}"));
                continue;
            }
            if seen.contains(&k) {
                problems.error(key.span(), format!("`{k}` is given twice in this rule; remove one"));
                continue;
            }
            seen.push(k.clone());
            match k.as_str() {
                symbol::ID => ast.id = lit_str(&key, &value, "\"drift-apply\"", &mut problems),
                symbol::WHY => ast.why = lit_str(&key, &value, "\"<why this rule exists>\"", &mut problems),
                _ => match flap_threshold(&value) {
                    Some(n) => ast.flap_threshold = Some(n),
                    None => problems.error_spanned(
                        &value,
                        "`flap_threshold` must be an integer >= 1, such as `flap_threshold = 3`",
                    ),
                },
            }
        }
        problems.done(ast)
    }
}

/// `flap_threshold = N`'s integer literal (its value is checked later, with the other numbers).
fn flap_threshold(value: &TokenStream) -> Option<LitInt> {
    match syn::parse2::<Literal>(value.clone()).map(Lit::new) {
        Ok(Lit::Int(i)) => Some(i),
        _ => None,
    }
}

/// Every predicate name, for "did you mean".
fn predicate_names() -> impl Iterator<Item = &'static str> {
    COMPARISON_OPS.iter().chain(TRUTHINESS_OPS).chain(COMBINATORS).copied()
}

/// A predicate call; only the evaluable subset parses. A combinator keeps the children that parse.
impl Parse for Parsed<PredicateAst> {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let shape = "a predicate is eq, neq, gt, gte, lt, lte(field, literal), truthy(field), falsy(field), all_of(...) or any_of(...), such as `eq(status, \"drifted\")`";
        if is_closure(input) {
            return Err(Error::new_spanned(
                rest(input),
                format!("a predicate is data, not a closure: it has to survive into op.json; {shape}"),
            ));
        }
        let Some(Call { name: op, args: group }) = whole::<Call>(input) else {
            return Err(Error::new_spanned(rest(input), format!("this is not a predicate; {shape}")));
        };
        let name = op.to_string();
        let mut problems = Problems::default();
        let args = problems.list(group.stream());
        if COMBINATORS.contains(&name.as_str()) {
            let children = args.into_iter().filter_map(|a| problems.read::<PredicateAst>(a)).collect();
            return problems.done(PredicateAst::Combinator { op, children });
        }
        let is_cmp = COMPARISON_OPS.contains(&name.as_str());
        if !is_cmp && !TRUTHINESS_OPS.contains(&name.as_str()) {
            let mut msg = LeafProblem::UnknownOp.message("", &name, None, SymptomKind::Converge, true);
            if let Some(s) = contract::did_you_mean(&name, predicate_names()) {
                msg = format!("`{name}` is not a predicate; did you mean `{s}`?");
            }
            return Err(problems.fail(Error::new(op.span(), msg)));
        }
        let arity = if is_cmp { 2 } else { 1 };
        let usage = if is_cmp { format!("{name}(<field>, <literal>)") } else { format!("{name}(<field>)") };
        let (field, literal) = match (args.as_slice(), is_cmp) {
            ([field], false) => (field, None),
            ([field, literal], true) => (field, Some(literal)),
            _ => {
                return Err(problems.fail(Error::new_spanned(
                    quote!(#op #group),
                    format!("`{name}` takes {arity} argument(s): `{usage}`"),
                )));
            }
        };
        let field = match syn::parse2::<Word>(field.clone()) {
            Ok(Word(f)) => f,
            Err(_) => {
                let e = match syn::parse2::<LitStr>(field.clone()) {
                    Ok(s) => Error::new(
                        s.span(),
                        format!(
                            "fields are written bare, not quoted: `{}` instead of `\"{}\"`",
                            contract::camel_to_snake(&s.value()),
                            s.value()
                        ),
                    ),
                    Err(_) => {
                        Error::new_spanned(field, format!("expected a symptom field such as `status`: `{usage}`"))
                    }
                };
                return Err(problems.fail(e));
            }
        };
        match literal {
            Some(literal) => {
                let literal =
                    syn::parse2::<LiteralAst>(literal.clone()).unwrap_or_else(|_| LiteralAst::Other(literal.clone()));
                problems.done(PredicateAst::Comparison { op, field, literal })
            }
            None => problems.done(PredicateAst::Truthiness { op, field }),
        }
    }
}

/// A literal in a comparison: a string, a number (negative ones too), a boolean, or anything else
/// (kept as [`LiteralAst::Other`], refused by the checks with the field's type in the message).
impl Parse for LiteralAst {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let ts = rest(input);
        let value = if let Some(b) = whole::<LitBool>(input) {
            LiteralAst::Bool(b)
        } else if let Some(l) = whole::<Literal>(input) {
            match Lit::new(l) {
                Lit::Str(s) => LiteralAst::Str(s),
                Lit::Int(i) => number(&i, false).map_or(LiteralAst::Other(ts.clone()), |n| LiteralAst::Number(n, ts)),
                Lit::Float(f) => f
                    .base10_parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(LiteralAst::Other(ts.clone()), |n| LiteralAst::Number(n, ts)),
                _ => LiteralAst::Other(ts),
            }
        } else if let Some(l) = negative(input) {
            match Lit::new(l) {
                Lit::Int(i) => number(&i, true).map_or(LiteralAst::Other(ts.clone()), |n| LiteralAst::Number(n, ts)),
                Lit::Float(f) => f
                    .base10_parse::<f64>()
                    .ok()
                    .and_then(|v| serde_json::Number::from_f64(-v))
                    .map_or(LiteralAst::Other(ts.clone()), |n| LiteralAst::Number(n, ts)),
                _ => LiteralAst::Other(ts),
            }
        } else {
            LiteralAst::Other(ts)
        };
        input.parse::<TokenStream>()?;
        Ok(value)
    }
}

/// An integer literal as JSON holds it, if it fits.
fn number(i: &LitInt, negative: bool) -> Option<serde_json::Number> {
    if negative {
        i.base10_parse::<i64>().ok().map(|v| serde_json::Number::from(-v))
    } else {
        i.base10_parse::<u64>().ok().map(serde_json::Number::from)
    }
}

/// `run("op")`, `propose("op")` or `report("reason")`.
impl Parse for ActionAst {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let shape = "an action is run(\"<op name>\"), propose(\"<op name>\") or report(\"<reason>\")";
        let Some(Call { name: ident, args: group }) = whole::<Call>(input) else {
            return Err(Error::new_spanned(rest(input), format!("expected an action: {shape}")));
        };
        let name = ident.to_string();
        if !symbol::ACTIONS.contains(&name.as_str()) {
            let hint = match contract::did_you_mean(&name, symbol::ACTIONS.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => shape.to_owned(),
            };
            return Err(Error::new(ident.span(), format!("unknown action `{name}`; {hint}")));
        }
        let Ok(arg) = syn::parse2::<LitStr>(group.stream()) else {
            let what = if name == symbol::RUN {
                "the Op's name, as in run(\"staging-apply\")"
            } else if name == symbol::PROPOSE {
                "the Op's name, as in propose(\"staging-apply\")"
            } else {
                "a reason, as in report(\"unowned resources present\")"
            };
            return Err(Error::new_spanned(quote!(#ident #group), format!("`{name}` takes one string: {what}")));
        };
        Ok(if name == symbol::RUN || name == symbol::PROPOSE {
            ActionAst::Run { propose: name == symbol::PROPOSE, ident, group, target: arg }
        } else {
            ActionAst::Report { reason: arg }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn converge_errors(src: &str) -> (ConvergeAst, Vec<String>) {
        let cx = Ctxt::new();
        let ast = converge_op(TokenStream::from_str(src).unwrap(), &cx);
        let errors = cx.check().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default();
        (ast, errors)
    }

    #[test]
    fn every_malformed_entry_is_reported_and_the_others_still_read() {
        let (ast, errors) = converge_errors(
            r#"name: "c", env: 3, budget: -1,, dial: "apply", rules: [
                when!(eq(status,, "d") => rnu("a"), whyy = "w"),
                when!(eq(status, "d") => run("a"), why = "w"),
            ]"#,
        );
        assert_eq!(
            errors,
            [
                "`env` takes a string literal, such as `env: \"staging\"`",
                "`budget` must be a non-negative integer, such as `budget: 3` (the most run() dispatches per tick); a negative budget is meaningless",
                "unexpected `,`: an entry is missing here",
                "`dial` is one of the words observe, reconcile or apply, written without quotes",
                "unexpected `,`: an entry is missing here",
                "unknown action `rnu`; did you mean `run`?",
                "unknown rule option `whyy`; did you mean `why`?",
            ]
        );
        assert_eq!(ast.name.map(|n| n.value()).as_deref(), Some("c"));
        assert!(ast.dial_failed);
        let (_, rules) = ast.rules.unwrap();
        assert_eq!(rules.len(), 2);
        assert!(rules[0].predicate.is_some() && rules[0].action.is_none());
        assert!(rules[1].predicate.is_some() && rules[1].action.is_some() && rules[1].why.is_some());
    }

    #[test]
    fn only_a_path_may_stand_before_when() {
        let rule = |r: &str| converge_errors(&format!(r#"name: "c", env: "e", rules: [ {r} ]"#)).1;
        assert!(rule(r#"chant::when!(eq(status, "d") => run("a"), why = "w")"#).is_empty());
        assert!(rule(r#"::chant::when!(eq(status, "d") => run("a"), why = "w")"#).is_empty());
        for bad in [r#"foo bar when!(eq(status, "d") => run("a"), why = "w")"#, r#"|s| when!(eq(s, 1) => run("a"))"#] {
            assert_eq!(rule(bad), [format!("expected {RULE_SHAPE}")], "{bad}");
        }
    }
}
