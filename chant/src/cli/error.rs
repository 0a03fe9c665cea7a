//! The command line's one error type, [`CommandError`], and the one place it is rendered,
//! [`CommandError::report`].
//!
//! A subcommand returns `Ok(Exit)` when it ran and rendered its own answer (done, a failed
//! step or tick, a gated run, `ops check` problems), and `Err(CommandError)` when it could not
//! do what was asked. The error's [`ErrorKind`] fixes the exit code; the renderer prints
//! `error: <message>: <cause>: ...` ([`crate::error::chain`]) and one `hint: ...` line per hint
//! on stderr. A closed stdout ([`ErrorKind::BrokenPipe`]) renders nothing and exits 0, as
//! ripgrep does: the reader had what it wanted (`operator log | head -1`).

use std::error::Error;

use super::Exit;

/// What kind of failure a [`CommandError`] is; it fixes the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Exit 1: the command could not do its work (a held lease, a ledger that cannot be read).
    Failed,
    /// Exit 2: a usage or configuration error (a bad flag value, an unknown op, no project).
    Usage,
    /// Exit 0, silently: stdout was closed by its reader.
    BrokenPipe,
}

/// An error that ends a subcommand.
#[derive(Debug)]
pub struct CommandError {
    kind: ErrorKind,
    source: Box<dyn Error + Send + Sync>,
    hints: Vec<String>,
}

impl CommandError {
    /// Creates an error of `kind`. `source` is an error (rendered with its causes) or a message.
    pub fn new(kind: ErrorKind, source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        CommandError { kind, source: source.into(), hints: Vec::new() }
    }

    /// Creates an [`ErrorKind::Failed`] error.
    pub fn failed(source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        CommandError::new(ErrorKind::Failed, source)
    }

    /// Creates an [`ErrorKind::Usage`] error.
    pub fn usage(source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        CommandError::new(ErrorKind::Usage, source)
    }

    /// Adds a hint, printed on a `hint: ` line after the error.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Returns the kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Returns the exit status the kind fixes.
    pub fn exit(&self) -> Exit {
        match self.kind {
            ErrorKind::Failed => Exit::Failed,
            ErrorKind::Usage => Exit::Usage,
            ErrorKind::BrokenPipe => Exit::Done,
        }
    }

    /// Returns the lines the error renders to: `error: ...`, then `hint: ...` lines; none for a
    /// broken pipe.
    pub fn lines(&self) -> Vec<String> {
        if self.kind == ErrorKind::BrokenPipe {
            return Vec::new();
        }
        let mut lines = vec![format!("error: {}", crate::error::chain(self.source.as_ref()))];
        lines.extend(self.hints.iter().map(|h| format!("hint: {h}")));
        lines
    }

    /// The error as one JSON object, what `--json` prints on stderr: `{kind, message, hints}`
    /// (`kind` is `failed` or `usage`); `None` for a broken pipe.
    pub fn json(&self) -> Option<String> {
        let kind = match self.kind {
            ErrorKind::Failed => "failed",
            ErrorKind::Usage => "usage",
            ErrorKind::BrokenPipe => return None,
        };
        let message = crate::error::chain(self.source.as_ref());
        Some(serde_json::json!({"kind": kind, "message": message, "hints": self.hints}).to_string())
    }

    /// Prints the error on stderr as one JSON object ([`CommandError::json`]) and returns the
    /// exit status.
    pub fn report_json(&self) -> Exit {
        if let Some(line) = self.json() {
            eprintln!("{line}");
        }
        self.exit()
    }

    /// Prints the error on stderr (the one place a command's error is rendered) and returns
    /// the exit status.
    pub fn report(&self) -> Exit {
        for line in self.lines() {
            eprintln!("{line}");
        }
        self.exit()
    }
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::error::chain(self.source.as_ref()))
    }
}

impl From<std::io::Error> for CommandError {
    /// Writing to stdout failed: a closed pipe is [`ErrorKind::BrokenPipe`], anything else
    /// [`ErrorKind::Failed`].
    fn from(e: std::io::Error) -> Self {
        let kind = if e.kind() == std::io::ErrorKind::BrokenPipe { ErrorKind::BrokenPipe } else { ErrorKind::Failed };
        CommandError::new(kind, OutputError(e))
    }
}

/// Stdout could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to stdout")]
struct OutputError(#[source] std::io::Error);

/// Writes `text` to stdout and flushes it: the one way a command prints its answer, so a
/// closed pipe becomes [`ErrorKind::BrokenPipe`] instead of a panic.
///
/// # Errors
///
/// A [`CommandError`] when stdout cannot be written.
pub fn print(text: &str) -> Result<(), CommandError> {
    use std::io::Write;
    // anstream strips colour when stdout is not a terminal or colour is off (cli::colour).
    let mut out = anstream::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// [`print()`] with a newline.
///
/// # Errors
///
/// A [`CommandError`] when stdout cannot be written.
pub fn println(line: &str) -> Result<(), CommandError> {
    print(&format!("{line}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the ledger")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn each_kind_fixes_its_exit_code_and_the_error_renders_with_its_causes_and_hints() {
        let e = CommandError::failed(Outer(std::io::Error::other("permission denied"))).hint("run it as the owner");
        assert_eq!(e.exit(), Exit::Failed);
        assert_eq!(e.lines(), ["error: cannot read the ledger: permission denied", "hint: run it as the owner"]);
        let e = CommandError::usage("--limit must be a positive integer");
        assert_eq!((e.exit().code(), e.lines()), (2, vec!["error: --limit must be a positive integer".to_owned()]));
        let e = CommandError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert_eq!((e.kind(), e.exit().code(), e.lines()), (ErrorKind::BrokenPipe, 0, Vec::<String>::new()));
        let e = CommandError::usage("no op named `x`").hint("see `ops`");
        assert_eq!(e.json().unwrap(), r#"{"hints":["see `ops`"],"kind":"usage","message":"no op named `x`"}"#);
        assert_eq!(CommandError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe)).json(), None);
        let e = CommandError::from(std::io::Error::other("disk full"));
        assert_eq!(e.lines(), ["error: cannot write to stdout: disk full"]);
    }
}
