//! Rendering an error with its causes on one line, for the texts chant records (run details, tick
//! errors, observation details), where a multi-line report cannot go.

/// Renders `err` and its causes one `: ` apart (`a: b: c`), skipping a cause whose text the line
/// already holds (an error that prints its cause inline).
pub fn render(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("inline: {0}")]
    struct Inline(#[source] std::io::Error);

    #[test]
    fn causes_are_joined_once() {
        assert_eq!(super::render(&Outer(std::io::Error::other("refused"))), "outer: refused");
        assert_eq!(super::render(&Inline(std::io::Error::other("refused"))), "inline: refused");
    }
}
