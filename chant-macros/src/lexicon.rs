//! Steps a lexicon declares: how `op!` and `converge_op!` learn a step that is not built in
//! (`sprite_services_observe(box = true)`, `docs_touch(path = "...")`) from the crate that
//! provides it, at compile time, without the macro crate naming any lexicon.
//!
//! A lexicon exports one `macro_rules!` per step kind, named after the kind, which answers the
//! macros' request with the kind's declaration. The protocol is one round trip per kind:
//!
//! 1. `op!` reads its input; for the first step kind that is neither built in nor declared yet,
//!    it expands to `<kind>! { @chant_step_spec op { @asked("<kind>") <its whole input> } }`, the
//!    macro's name spanned at the step as written (so a lexicon whose macro is not in scope is
//!    reported there: "cannot find macro `<kind>`").
//! 2. The lexicon's macro expands to
//!    `::chant::op! { @lexicon_step { kind: "<kind>", class: ..., args: [...] } <that input> }`.
//! 3. `op!` reads the declarations in front of its input ([`split`]), checks each against the
//!    kind it asked for, and goes on: the next undeclared kind, or the ordinary checks, which
//!    treat a declared kind like a built-in (arguments, types, class, the dial).
//!
//! The declaration's grammar:
//!
//! ```text
//! @lexicon_step {
//!     kind: "sprite_service_restart",
//!     class: mutating,                         // read_only | mutating | destructive
//!     args: [box: bool, name: str, services: names, services_file: str, only: str required],
//!     one_of: [box, services, services_file],  // optional: exactly one of these is given
//! }
//! ```
//!
//! Argument types: `str` (may hold `${VAR}`), `bool`, `names` (a non-empty list of names),
//! `duration`, `url`, `class` and `delete_mode`, checked as the built-in steps' are.

use chant_core::contract::{self, ArgSpec, ArgType, ClassKind, STEPS, StepSpec};
use proc_macro2::{Delimiter, Ident, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

use crate::ast::StepAst;
use crate::ctxt::Ctxt;

/// The keyword in front of a declaration a lexicon's step macro hands back.
const DECLARATION: &str = "lexicon_step";
/// The keyword in front of the kind the macros asked a lexicon's step macro for.
const ASKED: &str = "asked";
/// The most declarations one invocation takes (a guard against a step macro that loops).
const MAX_DECLARED: usize = 64;

/// One step kind a lexicon declared.
#[derive(Debug, Clone)]
pub(crate) struct LexiconSpec {
    /// The kind's arguments and class, in the shape of a built-in step's.
    pub(crate) spec: &'static StepSpec,
    /// Arguments of which exactly one must be given.
    pub(crate) one_of: Vec<&'static str>,
}

/// The steps one invocation can check: the built-in ones and those its lexicons declared.
#[derive(Debug, Clone, Default)]
pub(crate) struct StepTable {
    declared: Vec<LexiconSpec>,
}

impl StepTable {
    /// Returns the spec of `kind` and, for a lexicon's step, its declaration.
    pub(crate) fn get(&self, kind: &str) -> Option<(&'static StepSpec, Option<&LexiconSpec>)> {
        if let Some(spec) = contract::step_spec(kind) {
            return Some((spec, None));
        }
        self.declared.iter().find(|d| d.spec.name == kind).map(|d| (d.spec, Some(d)))
    }

    /// Every step name it knows, built-in first, for "did you mean".
    pub(crate) fn names(&self) -> Vec<&'static str> {
        STEPS.iter().map(|s| s.name).chain(self.declared.iter().map(|d| d.spec.name)).collect()
    }
}

/// Splits the declarations a lexicon's step macro put in front of an invocation's input from
/// the input itself; a malformed declaration, or one that answers another kind than the one
/// asked for, is reported at its tokens.
pub(crate) fn split(input: TokenStream, cx: &Ctxt) -> (StepTable, TokenStream) {
    let mut tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut at = 0;
    let mut table = StepTable::default();
    let mut pending: Option<(LexiconSpec, Span)> = None;
    while let (Some(TokenTree::Punct(p)), Some(TokenTree::Ident(word)), Some(TokenTree::Group(g))) =
        (tokens.get(at), tokens.get(at + 1), tokens.get(at + 2))
    {
        if p.as_char() != '@' {
            break;
        }
        if *word == DECLARATION && g.delimiter() == Delimiter::Brace {
            match syn::parse2::<Declaration>(g.stream()) {
                Ok(d) => pending = d.into_spec(cx).map(|s| (s, g.span())),
                Err(e) => cx.push(e),
            }
        } else if *word == ASKED && g.delimiter() == Delimiter::Parenthesis {
            let asked = syn::parse2::<LitStr>(g.stream()).map(|l| l.value()).unwrap_or_default();
            if let Some((spec, span)) = pending.take() {
                if spec.spec.name == asked {
                    if table.declared.iter().all(|d| d.spec.name != asked) && table.declared.len() < MAX_DECLARED {
                        table.declared.push(spec);
                    }
                } else {
                    cx.error(
                        span,
                        format!(
                            "the step macro `{asked}!` declares the step `{}`; a lexicon's step macro declares the step it is named after",
                            spec.spec.name
                        ),
                    );
                }
            }
        } else {
            break;
        }
        at += 3;
    }
    let rest = tokens.split_off(at).into_iter().collect();
    (table, rest)
}

/// Returns the first step of `steps` whose kind neither is built in nor was declared, unless
/// it is a near miss of a built-in step's name (`aply`), which the checks report as a typo.
pub(crate) fn first_undeclared<'a>(
    steps: impl IntoIterator<Item = &'a StepAst>,
    table: &StepTable,
) -> Option<&'a Ident> {
    steps.into_iter().map(|s| &s.kind).find(|kind| {
        let kind = kind.to_string();
        table.get(&kind).is_none()
            && chant_core::step::is_step_kind(&kind)
            && contract::did_you_mean(&kind, STEPS.iter().map(|s| s.name)).is_none()
    })
}

/// Asks the lexicon's macro named `kind` for its declaration, handing it the invocation's whole
/// input to pass back to `::chant::<macro_name>!`.
pub(crate) fn ask(kind: &Ident, macro_name: &str, input: TokenStream) -> TokenStream {
    let name = Ident::new(macro_name, Span::call_site());
    let asked = LitStr::new(&kind.to_string(), kind.span());
    let bang = quote_spanned!(kind.span()=> #kind!);
    quote! {
        #bang { @chant_step_spec #name { @asked(#asked) #input } }
    }
}

/// `@lexicon_step { ... }` as a lexicon's step macro writes it.
struct Declaration {
    kind: LitStr,
    class: Ident,
    positional: Option<Ident>,
    args: Vec<DeclaredArg>,
    one_of: Vec<Ident>,
}

/// One argument of a declaration: `name: type` or `name: type required`.
struct DeclaredArg {
    name: Ident,
    ty: Ident,
    required: bool,
}

impl Parse for DeclaredArg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name = Ident::parse_any(input)?;
        input.parse::<Token![:]>()?;
        let ty = Ident::parse_any(input)?;
        let required = if input.peek(syn::Ident) {
            let word: Ident = input.parse()?;
            if word != "required" {
                return Err(syn::Error::new(word.span(), "after an argument's type, only `required` may follow"));
            }
            true
        } else {
            false
        };
        Ok(DeclaredArg { name, ty, required })
    }
}

impl Parse for Declaration {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut kind = None;
        let mut class = None;
        let mut positional = None;
        let mut args = Vec::new();
        let mut one_of = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![:]>()?;
            match key.to_string().as_str() {
                "kind" => kind = Some(input.parse::<LitStr>()?),
                "class" => class = Some(input.parse::<Ident>()?),
                "positional" => positional = Some(Ident::parse_any(input)?),
                "args" => {
                    let content;
                    syn::bracketed!(content in input);
                    args = Punctuated::<DeclaredArg, Token![,]>::parse_terminated(&content)?.into_iter().collect();
                }
                "one_of" => {
                    let content;
                    syn::bracketed!(content in input);
                    one_of = Punctuated::<Ident, Token![,]>::parse_terminated_with(&content, Ident::parse_any)?
                        .into_iter()
                        .collect();
                }
                other => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "a step declaration has no `{other}`; it takes kind, class, positional, args and one_of"
                        ),
                    ));
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        let kind = kind.ok_or_else(|| input.error("a step declaration needs `kind: \"<step kind>\"`"))?;
        let class =
            class.ok_or_else(|| input.error("a step declaration needs `class: read_only | mutating | destructive`"))?;
        Ok(Declaration { kind, class, positional, args, one_of })
    }
}

impl Declaration {
    /// The declaration as a step spec, leaked for the macro process's lifetime (a handful of
    /// small allocations per declared kind), so it is checked by the same code as a built-in.
    fn into_spec(self, cx: &Ctxt) -> Option<LexiconSpec> {
        let kind = self.kind.value();
        let mut ok = true;
        if !chant_core::step::is_step_kind(&kind) || contract::step_spec(&kind).is_some() {
            cx.error(self.kind.span(), format!("`{kind}` cannot be a lexicon's step kind: it must be a lowercase identifier that is not a built-in step"));
            ok = false;
        }
        let class = ClassKind::from_ident(&self.class.to_string());
        if class.is_none() {
            cx.error(
                self.class.span(),
                format!("`{}` is not a verb class; it is read_only, mutating or destructive", self.class),
            );
            ok = false;
        }
        let mut args = Vec::new();
        for a in &self.args {
            let ty = match a.ty.to_string().as_str() {
                "str" => ArgType::Str,
                "bool" => ArgType::Bool,
                "names" => ArgType::Names,
                "duration" => ArgType::Duration,
                "url" => ArgType::Url,
                "class" => ArgType::Class,
                "delete_mode" => ArgType::DeleteMode,
                other => {
                    cx.error(a.ty.span(), format!("`{other}` is not an argument type; it is str, bool, names, duration, url, class or delete_mode"));
                    ok = false;
                    continue;
                }
            };
            args.push(ArgSpec { name: leak(a.name.unraw().to_string()), ty, required: a.required });
        }
        let known = |i: &Ident| args.iter().find(|a| *i == a.name).map(|a| a.name);
        let positional = self.positional.as_ref().and_then(|p| {
            let found = known(p);
            if found.is_none() {
                cx.error(p.span(), format!("the positional argument `{p}` is not among the declared args"));
            }
            found
        });
        let mut one_of = Vec::new();
        for i in &self.one_of {
            match known(i) {
                Some(name) => one_of.push(name),
                None => {
                    cx.error(i.span(), format!("`{i}` in one_of is not among the declared args"));
                    ok = false;
                }
            }
        }
        let class = class?;
        if !ok || (self.positional.is_some() && positional.is_none()) {
            return None;
        }
        let spec = StepSpec { name: leak(kind), positional, args: Box::leak(args.into_boxed_slice()), class };
        Some(LexiconSpec { spec: Box::leak(Box::new(spec)), one_of })
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(input: TokenStream) -> (StepTable, TokenStream, Result<(), String>) {
        let cx = Ctxt::new();
        let (t, rest) = split(input, &cx);
        (t, rest, cx.check().map_err(|e| e.to_string()))
    }

    #[test]
    fn declarations_are_read_off_the_front_of_the_input() {
        let (t, rest, errors) = table(quote! {
            @lexicon_step { kind: "docs_touch", class: mutating, args: [path: str required, r#box: bool], one_of: [path, box] }
            @asked("docs_touch")
            name: "x",
        });
        errors.unwrap();
        assert_eq!(rest.to_string(), quote!(name: "x",).to_string());
        let (spec, declared) = t.get("docs_touch").unwrap();
        assert_eq!(spec.class, ClassKind::Mutating);
        assert_eq!(
            spec.args.iter().map(|a| (a.name, a.required)).collect::<Vec<_>>(),
            [("path", true), ("box", false)]
        );
        assert_eq!(declared.unwrap().one_of, ["path", "box"]);
        assert!(t.get("apply").unwrap().1.is_none(), "built-ins are still there");
    }

    #[test]
    fn a_declaration_that_answers_another_kind_or_is_malformed_is_refused() {
        let (t, _, errors) = table(quote! {
            @lexicon_step { kind: "docs_other", class: read_only, args: [] } @asked("docs_touch")
        });
        assert!(t.get("docs_other").is_none());
        assert!(errors.unwrap_err().contains("the step macro `docs_touch!` declares the step `docs_other`"));
        for (bad, says) in [
            (quote!(kind: "apply", class: mutating), "cannot be a lexicon's step kind"),
            (quote!(kind: "x", class: sometimes), "is not a verb class"),
            (quote!(kind: "x", class: mutating, args: [a: int]), "is not an argument type"),
            (quote!(kind: "x", class: mutating, one_of: [b]), "in one_of is not among the declared args"),
            (quote!(class: mutating), "needs `kind"),
        ] {
            let (_, _, errors) = table(quote!(@lexicon_step { #bad } @asked("x")));
            let e = errors.unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
