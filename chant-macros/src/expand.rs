//! Turns a checked invocation into Rust: the compile-time registry entries, the per-rule
//! resolution and class checks, the registration with the project binary, and the op.json export.
//!
//! Generated code names only `::chant::__private::...` and `::core::...`/`::std::...`. After
//! errors the expansion still emits a placeholder registry entry (read-only, so it causes no
//! follow-on dial refusals) and every `run()` check that could be built, so the user sees the
//! macro's own errors and nothing that cascades from them.

use chant_core::Name;
use chant_core::contract::{self, ClassKind};
use proc_macro2::{Delimiter, Group, Literal, Span, TokenStream};
use quote::{quote, quote_spanned};

use crate::ast::{ArgValue, MainAst};
use crate::check::{self, Checked, Dispatch};
use crate::ctxt::Ctxt;
use crate::env::{BuildEnv, CHECKOUT_VAR, Member, OPS_DIR_VAR};
use crate::known::KnownOps;
use crate::{export, json, lexicon, parse};

/// Expands `op! { ... }`.
pub(crate) fn op(input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let (table, rest) = lexicon::split(input.clone(), &cx);
    let ast = parse::op(rest, &cx);
    let steps = ast.phases.iter().chain(&ast.on_failure).flat_map(|p| &p.steps);
    if let Some(kind) = lexicon::first_undeclared(steps, &table) {
        return ask(&kind.clone(), "op", input, cx);
    }
    let env = BuildEnv::read();
    let member = member(&env, &cx);
    let checked = check::op(&ast, member.clone().map(|m| m.map(|m| m.name)), &table, &cx);
    let known = KnownOps::scan(&env, Span::call_site());
    if let Some(lit) = &ast.env {
        known.check_env(lit, "this op's `env`", &cx);
    }
    for step in ast.phases.iter().chain(&ast.on_failure).flat_map(|p| &p.steps) {
        if step.kind == "apply" || step.kind == "teardown" {
            for arg in step.args.iter().filter(|a| a.name == "env") {
                if let ArgValue::Str(lit) = &arg.value {
                    known.check_env(lit, &format!("`{}`", step.kind), &cx);
                }
            }
        }
    }
    finish(&checked, &env, member.flatten(), cx)
}

/// Expands `converge_op! { ... }`.
pub(crate) fn converge_op(input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let (table, rest) = lexicon::split(input.clone(), &cx);
    let ast = parse::converge_op(rest, &cx);
    if let Some(kind) = lexicon::first_undeclared(&ast.observe, &table) {
        return ask(&kind.clone(), "converge_op", input, cx);
    }
    let env = BuildEnv::read();
    let member = member(&env, &cx);
    let known = KnownOps::scan(&env, Span::call_site());
    if let Some(lit) = &ast.env {
        known.check_env(lit, "this ConvergeOp's `env`", &cx);
    }
    let checked = check::converge(&ast, member.clone().map(|m| m.map(|m| m.name)), &env, &known, &table, &cx);
    finish(&checked, &env, member.flatten(), cx)
}

/// Hands the invocation to the step macro of a lexicon's step kind for its declaration (see
/// [`lexicon`]). Problems found so far are dropped: the invocation comes back with the
/// declaration and is read again, and they are reported then.
fn ask(kind: &proc_macro2::Ident, macro_name: &str, input: TokenStream, cx: Ctxt) -> TokenStream {
    drop(cx.check());
    lexicon::ask(kind, macro_name, input)
}

/// Expands a standalone `when!(...)`, which is always an error: rules live in a rule table.
pub(crate) fn when() -> TokenStream {
    syn::Error::new(
        Span::call_site(),
        "when!(...) is only valid inside `converge_op! { rules: [ ... ] }`; move this rule into a ConvergeOp's rule table",
    )
    .to_compile_error()
}

/// Expands `main!()` / `main!(default = tick("op"))`.
pub(crate) fn main(input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let ast = parse::main_macro(input, &cx);
    let (default, check) = match &ast {
        MainAst::Help => (quote!(::chant::__private::DefaultCommand::Help), TokenStream::new()),
        MainAst::Tick(lit) => (quote!(::chant::__private::DefaultCommand::Tick(#lit)), tick_check(lit, &cx)),
    };
    let errors = cx.check().err().map(|e| e.to_compile_error());
    quote! {
        #errors
        fn main() -> ::std::process::ExitCode {
            ::chant::__private::project_main(#default)
        }
        const _: ::core::option::Option<&str> = ::core::option_env!(#CHECKOUT_VAR);
        #check
    }
}

/// The check that `tick("x")` names a declared ConvergeOp: by the macro itself when it can see
/// the op, else by the registry in const evaluation, with the closest ConvergeOp it can see.
fn tick_check(lit: &syn::LitStr, cx: &Ctxt) -> TokenStream {
    let name = lit.value();
    if let Err(e) = Name::parse("ConvergeOp name", name.as_str()) {
        cx.error(lit.span(), e);
        return TokenStream::new();
    }
    let env = BuildEnv::read();
    let known = KnownOps::scan(&env, Span::call_site());
    if known.get(&name).is_some_and(|op| !op.converge) {
        cx.error(
            lit.span(),
            format!(
                "tick(\"{name}\") names an `op!`, not a `converge_op!`: only a ConvergeOp can be ticked; name one, or run this op with `run {name}`"
            ),
        );
        return TokenStream::new();
    }
    // Declared in the package's sources and still not found: the crate that declares it (the
    // package's library, as `chant init` lays a project out) is not linked into this binary.
    let in_library = known.get(&name).is_some_and(|op| op.converge);
    let library = env.package.replace('-', "_");
    let unknown = match contract::did_you_mean(&name, known.names(true).filter(|n| *n != name)) {
        _ if in_library => format!(
            "tick(\"{name}\") names a ConvergeOp declared in this package's library, which this binary does not link: add `use {library} as _;` to this file"
        ),
        Some(s) => format!("tick(\"{name}\") names no declared ConvergeOp; did you mean \"{s}\"?"),
        None => format!(
            "tick(\"{name}\") names no declared ConvergeOp: no `converge_op!` in this crate or the crates it uses has this name (names are matched exactly)"
        ),
    };
    let plain = format!(
        "tick(\"{name}\") names an `op!`, not a `converge_op!`: only a ConvergeOp can be ticked; name one, or run this op with `run {name}`"
    );
    let h = hash(&name);
    let span = lit.span();
    let probe = quote_spanned! {span=>
        (::chant::__private::ConvergeProbe::<#h, _>::FOUND, ::chant::__private::Probe::<#h, _>::CLASS)
    };
    let fail = |msg: &str| {
        let path = quote_spanned!(span=> ::core::panic!);
        let mut args = Group::new(Delimiter::Parenthesis, quote!("{}", #msg));
        args.set_span(span);
        quote!(#path #args)
    };
    let (plain, unknown) = (fail(&plain), fail(&unknown));
    quote! {
        // A name no ConvergeOp has fails const evaluation with the macro's own message.
        #[allow(clippy::panic)]
        const _: () = {
            #[allow(unused_imports)]
            use ::chant::__private::{Undeclared as _, UndeclaredConverge as _};
            match #probe {
                (true, _) => {}
                (false, ::core::option::Option::Some(_)) => #plain,
                (false, ::core::option::Option::None) => #unknown,
            }
        };
    }
}

fn member(env: &BuildEnv, cx: &Ctxt) -> Option<Option<Member>> {
    match env.member() {
        Ok(m) => Some(m),
        Err(e) => {
            cx.error(Span::call_site(), e);
            None
        }
    }
}

fn finish(checked: &Checked, env: &BuildEnv, member: Option<Member>, cx: Ctxt) -> TokenStream {
    let checks: TokenStream = checked.dispatches.iter().map(dispatch_check).collect();
    let result = cx.check().and_then(|()| full(checked, env, member.as_ref()));
    match result {
        Ok(tokens) => quote!(#tokens #checks),
        Err(e) => {
            let errors = e.to_compile_error();
            let placeholder = checked.name.as_deref().map(|n| {
                let impls = registry_impls(n, ClassKind::ReadOnly, checked.converge);
                quote!(const _: () = { #impls };)
            });
            quote!(#errors #placeholder #checks)
        }
    }
}

fn full(checked: &Checked, env: &BuildEnv, member: Option<&Member>) -> syn::Result<TokenStream> {
    let (Some(name), Some(doc)) = (checked.name.as_deref(), &checked.doc) else {
        // Every path that leaves the document incomplete records an error first.
        return Err(syn::Error::new(Span::call_site(), "chant: the op could not be checked; see the errors above"));
    };
    let bytes = json::to_bytes(doc)
        .map_err(|e| syn::Error::new(Span::call_site(), format!("cannot serialise op.json for `{name}`: {e}")))?;
    let mut tracked = quote!(
        const _: ::core::option::Option<&str> = ::core::option_env!(#OPS_DIR_VAR);
        const _: ::core::option::Option<&str> = ::core::option_env!(#CHECKOUT_VAR);
    );
    if let Some(path) = env.export_path(name) {
        export::write_if_changed(&path, bytes.as_bytes()).map_err(|e| syn::Error::new(Span::call_site(), e))?;
        let p = path.to_string_lossy().into_owned();
        tracked.extend(quote!(
            const _: &[u8] = ::core::include_bytes!(#p);
        ));
    }
    if let Some(m) = member {
        let p = m.file.to_string_lossy().into_owned();
        tracked.extend(quote!(
            const _: &[u8] = ::core::include_bytes!(#p);
        ));
    }
    let impls = registry_impls(name, doc.class, checked.converge);
    let class = class_tokens(doc.class);
    let json = Literal::string(&bytes);
    let steps = checked.user_steps.iter().map(|(n, path)| quote!((#n, #path)));
    Ok(quote! {
        const _: () = {
            #impls
            ::chant::__private::inventory::submit! {
                ::chant::__private::RegisteredOp {
                    name: #name,
                    class: #class,
                    json: #json,
                    steps: &[#(#steps),*],
                    krate: ::core::env!("CARGO_PKG_NAME"),
                }
            }
            #tracked
        };
    })
}

/// Returns the type-level key of an op name.
fn hash(name: &str) -> Literal {
    Literal::u64_unsuffixed(contract::fnv1a64(name.as_bytes()))
}

fn class_tokens(class: ClassKind) -> TokenStream {
    match class {
        ClassKind::ReadOnly => quote!(::chant::__private::ClassKind::ReadOnly),
        ClassKind::Mutating => quote!(::chant::__private::ClassKind::Mutating),
        ClassKind::Destructive => quote!(::chant::__private::ClassKind::Destructive),
    }
}

/// The compile-time registry entries of one op: `Declared` (and `DeclaredConverge` for a
/// ConvergeOp) implemented for its `OpName`, with a marker type local to this invocation.
fn registry_impls(name: &str, class: ClassKind, converge: bool) -> TokenStream {
    let h = hash(name);
    let class = class_tokens(class);
    let converge = converge.then(|| {
        quote! {
            #[diagnostic::do_not_recommend]
            impl ::chant::__private::DeclaredConverge<__chant_Op> for ::chant::__private::OpName<#h> {
                const NAME: &'static str = #name;
            }
        }
    });
    quote! {
        // The marker is only ever named in the impls below; it keeps impls from different
        // invocations apart (a crate-local type satisfies the orphan rule). It is `pub` because
        // `run()` in another module infers it, and type privacy checks an inferred type's
        // visibility; inside this anonymous const nothing can name it.
        #[allow(non_camel_case_types, dead_code, unreachable_pub)]
        #[doc(hidden)]
        pub struct __chant_Op;
        #[diagnostic::do_not_recommend]
        impl ::chant::__private::Declared<__chant_Op> for ::chant::__private::OpName<#h> {
            const NAME: &'static str = #name;
            const CLASS: ::chant::__private::ClassKind = #class;
        }
        #converge
    }
}

/// One `run()` rule's compile-time check, read through the registry's probe: a name no op has
/// fails const evaluation at the name literal with the rule's message (and the closest name the
/// macro can see), and a refused class of target fails it with the rule's message, spanned over
/// `run("target")`.
fn dispatch_check(d: &Dispatch) -> TokenStream {
    let h = hash(&d.target.value());
    let lookup = quote_spanned! {d.target.span()=>
        ::chant::__private::Probe::<#h, _>::CLASS
    };
    let fail = |msg: &str, path_span: Span, args_span: Span| {
        let path = quote_spanned!(path_span=> ::core::panic!);
        let mut args = Group::new(Delimiter::Parenthesis, quote!("{}", #msg));
        args.set_span(args_span);
        quote!(#path #args)
    };
    let unknown = fail(&d.unknown, d.target.span(), d.target.span());
    let arms = d.refusals.iter().map(|(class, msg)| {
        let pattern = class_tokens(*class);
        let panic = fail(msg, d.run.span(), d.group.span());
        quote!(::core::option::Option::Some(#pattern) => #panic,)
    });
    let permitted: Vec<TokenStream> =
        ClassKind::ALL.into_iter().filter(|c| !d.refusals.iter().any(|(r, _)| r == c)).map(class_tokens).collect();
    let permitted = (!permitted.is_empty()).then(|| quote!(::core::option::Option::Some(#(#permitted)|*) => {}));
    quote! {
        // An unknown target or a refused class is a const-evaluation panic, so it names the rule
        // and the fix.
        #[allow(clippy::panic)]
        const _: () = {
            #[allow(unused_imports)]
            use ::chant::__private::Undeclared as _;
            match #lookup {
                ::core::option::Option::None => #unknown,
                #(#arms)*
                #permitted
            }
        };
    }
}
