//! The error collector: every check pushes its errors here instead of returning early, so one
//! invocation reports all of its problems at once.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// Collects `syn::Error`s; [`Ctxt::check`] combines them into one, in source order.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// Creates an empty collector.
    pub(crate) fn new() -> Self {
        Ctxt { errors: RefCell::new(Some(Vec::new())) }
    }

    /// Records an error at `span`.
    pub(crate) fn error(&self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records an error spanning `tokens` (from their first to their last token).
    pub(crate) fn error_spanned(&self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error; a combined one is recorded as its messages, each sorted to its place.
    pub(crate) fn push(&self, error: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.extend(error);
        }
    }

    /// Consumes the collector, combining every recorded error into one.
    ///
    /// # Errors
    ///
    /// Returns the combined error when any was recorded.
    pub(crate) fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.borrow_mut().take().unwrap_or_default();
        // Report in source order, whichever stage found the problem.
        errors.sort_by_key(|e| {
            let at = e.span().start();
            (at.line, at.column)
        });
        let mut iter = errors.into_iter();
        let Some(mut first) = iter.next() else {
            return Ok(());
        };
        for e in iter {
            first.combine(e);
        }
        Err(first)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // A collector dropped without `check()` would lose its errors silently; this is a bug in
        // the macro crate, never a user error, so it is caught by the macro's own tests.
        debug_assert!(
            std::thread::panicking() || self.errors.borrow().is_none(),
            "Ctxt dropped without calling check()"
        );
    }
}
