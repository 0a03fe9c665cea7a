//! The one way chant renders an error for a person: the error's message followed by each of its
//! causes (`Error::source`), one `: ` apart, on one line (`failed to append to the ledger:
//! cannot lock refs/heads/chant/lifecycle: File exists`).
//!
//! A cause whose text the line already holds is skipped, so an error that names its cause in
//! its own message is not repeated. Every printed error, warning and recorded error string in
//! the library and the command line goes through [`chain`].

use std::error::Error;

/// Renders `err` and its causes as one line.
pub fn chain(err: &(dyn Error + '_)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("failed to append")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("cannot lock the ref: {0}")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn every_cause_is_appended_once() {
        let io = std::io::Error::other("file exists");
        assert_eq!(chain(&Outer(Middle(io))), "failed to append: cannot lock the ref: file exists");
        assert_eq!(chain(&std::io::Error::other("alone")), "alone");
    }
}
