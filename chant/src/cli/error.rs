//! The command line's one error type, [`CommandError`], and the one place it is rendered,
//! [`CommandError::report`].
//!
//! A subcommand returns `Ok(Exit)` when it ran and rendered its own answer (done, a failed
//! step or tick, a gated run, `ops check` problems), and `Err(CommandError)` when it could not
//! do what was asked. The error's [`ErrorKind`] fixes the exit code; the renderer prints
//! `error: <message>: <cause>: ...` ([`crate::error::chain`]) and one `hint: ...` line per hint
//! on stderr. A closed stdout ([`ErrorKind::BrokenPipe`]) renders nothing and exits 0, as
//! ripgrep does: the reader had what it wanted (`operator log | head -1`).
//!
//! Each library error the command line surfaces converts through one `From` impl here, which
//! decides its kind (usage or failure) and keeps it as the source, so its causes are rendered
//! once, by the renderer. A call site uses `?`; where it knows more (a flag, a file) it puts
//! that in front with [`CommandError::usage_with`], [`CommandError::failed_with`] or
//! [`CommandError::context`], never by formatting the error into a string (which would drop
//! its causes; a test below keeps `cli/` free of that).

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

    /// Creates an [`ErrorKind::Usage`] error whose message is `message` (local context the call
    /// site has: a flag, a file) over `source`, which stays the cause: the error renders as
    /// `message: source: source's causes...`.
    pub fn usage_with(message: impl Into<String>, source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        CommandError::usage(Context { message: message.into(), source: source.into() })
    }

    /// Creates an [`ErrorKind::Failed`] error whose message is `message` over `source`, which
    /// stays the cause (see [`CommandError::usage_with`]).
    pub fn failed_with(message: impl Into<String>, source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        CommandError::failed(Context { message: message.into(), source: source.into() })
    }

    /// Puts `message` (local context: a flag, a file, what was being done) in front of the
    /// error, which becomes its cause; the kind and the hints are kept. For an error converted
    /// by its one `From` impl that the call site knows more about:
    /// `CommandError::from(e).context("--url")`.
    pub fn context(mut self, message: impl Into<String>) -> Self {
        self.source = Box::new(Context { message: message.into(), source: self.source });
        self
    }

    /// Replaces the error's text (its message and every cause, rendered once by
    /// [`crate::error::chain`]) with the text `redactor` leaves of it: an error of a project's
    /// operation may quote a secret value. The kind and the hints are kept.
    pub fn redact(mut self, redactor: &crate::redact::Redactor) -> Self {
        let text = redactor.redact(&crate::error::chain(self.source.as_ref()));
        self.source = text.into();
        self
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
        let mut lines = vec![format!("error: {}", shown(&crate::error::chain(self.source.as_ref())))];
        lines.extend(self.hints.iter().map(|h| format!("hint: {}", shown(h))));
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

/// An error's text for a terminal: every character a terminal would act on is shown as its
/// escape ([`crate::terminal::printable`]), line by line, so a name taken from an argument or a
/// record (`tick $'x\e[2J'`) cannot drive the terminal; the message's own line breaks stay.
fn shown(text: &str) -> String {
    text.split('\n').map(|line| crate::terminal::printable(line).to_string()).collect::<Vec<_>>().join("\n")
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

// The one conversion of each library error the command line surfaces: it decides the kind
// (exit 2 for what the user can fix in a flag, a file or `chant.toml`; exit 1 for what failed
// while doing the work) and keeps the error as the source, so every cause is rendered. A call
// site then uses `?`, or `CommandError::from(e).context(..)` when it knows a flag or a file.

impl From<crate::config::Error> for CommandError {
    /// `chant.toml` is missing, unreadable or invalid: the user's configuration (exit 2).
    fn from(e: crate::config::Error) -> Self {
        CommandError::usage(e)
    }
}

impl From<crate::clock::BadNow> for CommandError {
    /// `CHANT_NOW` gives no clock: the user's environment (exit 2).
    fn from(e: crate::clock::BadNow) -> Self {
        CommandError::usage(e)
    }
}

impl From<crate::catalog::InvalidCatalog> for CommandError {
    /// The compiled ops do not validate: the project's declarations (exit 2).
    fn from(e: crate::catalog::InvalidCatalog) -> Self {
        CommandError::usage(e)
    }
}

impl From<crate::lexicon::RegistryError> for CommandError {
    /// The lexicons linked into the binary are inconsistent: the project's declarations (exit 2).
    fn from(e: crate::lexicon::RegistryError) -> Self {
        CommandError::usage(e)
    }
}

impl From<crate::ledger::Error> for CommandError {
    /// A name that cannot be a ledger path (it came from a flag) and a clashing `chant` branch
    /// are the user's to fix (exit 2); storage that failed is exit 1.
    fn from(e: crate::ledger::Error) -> Self {
        match e {
            crate::ledger::Error::InvalidName { .. } | crate::ledger::Error::BranchClash => CommandError::usage(e),
            e => CommandError::failed(e),
        }
    }
}

impl From<crate::lease::Error> for CommandError {
    /// A lease that could not be read, taken or synchronised (exit 1); a name that cannot be a
    /// lease ref is the user's (exit 2).
    fn from(e: crate::lease::Error) -> Self {
        match e {
            crate::lease::Error::InvalidName { .. } => CommandError::usage(e),
            e => CommandError::failed(e),
        }
    }
}

impl From<crate::project::Error> for CommandError {
    /// What opening a project finds wrong in its configuration or declarations (`chant.toml`,
    /// the compiled ops, `CHANT_NOW`, an unused binding) is exit 2; a ledger error decides by
    /// itself; what fails while the project works (a hook, an observation, a record) is exit 1.
    fn from(e: crate::project::Error) -> Self {
        use crate::project::Error as E;
        match e {
            E::Config(e) => e.into(),
            E::Catalog(e) => e.into(),
            E::Clock(e) => e.into(),
            E::Ledger(e) => e.into(),
            E::UnusedBinding { .. } => CommandError::usage(e),
            e => CommandError::failed(e),
        }
    }
}

impl From<crate::operator::Error> for CommandError {
    /// A filter (`--env`, `--op`) that is not a name is exit 2, naming the flag; the rest is the
    /// work failing (exit 1), except what its own conversion decides.
    fn from(e: crate::operator::Error) -> Self {
        use crate::operator::Error as E;
        match e {
            E::InvalidName { what, .. } => CommandError::usage(e).context(format!("--{what}")),
            E::Ledger(e) => e.into(),
            E::Clock(e) => e.into(),
            E::Lease(e) => e.into(),
            e => CommandError::failed(e),
        }
    }
}

impl From<crate::operator::audit::Error> for CommandError {
    /// `--op` that is not an op name is exit 2, naming the flag; a gate ledger that cannot be
    /// read is exit 1.
    fn from(e: crate::operator::audit::Error) -> Self {
        use crate::operator::audit::Error as E;
        match e {
            E::InvalidOp(_) => CommandError::usage(e).context("--op"),
            E::Ledger(e) => e.into(),
            e => CommandError::failed(e),
        }
    }
}

impl From<super::delegate::Error> for CommandError {
    /// Finding, building or choosing the project binary to hand a command to failed: the
    /// project's layout or the op asked for (exit 2).
    fn from(e: super::delegate::Error) -> Self {
        CommandError::usage(e)
    }
}

impl From<crate::model::InvalidName> for CommandError {
    /// A name given on the command line (`--env`, `--name`) that is not a name (exit 2).
    fn from(e: crate::model::InvalidName) -> Self {
        CommandError::usage(e)
    }
}

impl From<crate::observe::deep::baseline::BaselineError> for CommandError {
    /// An env's deep-diff baseline on the ledger does not parse (exit 1).
    fn from(e: crate::observe::deep::baseline::BaselineError) -> Self {
        CommandError::failed(e)
    }
}

impl From<crate::tick::execute::Error> for CommandError {
    /// A tick (or its plan) that could not be worked out (exit 1).
    fn from(e: crate::tick::execute::Error) -> Self {
        CommandError::failed(e)
    }
}

impl From<crate::behaviour::RequestError> for CommandError {
    /// A behaviour request the user's flags make invalid (`--rps`) (exit 2).
    fn from(e: crate::behaviour::RequestError) -> Self {
        CommandError::usage(e)
    }
}

impl From<crate::scheduler::Error> for CommandError {
    /// `ci --op` names no ConvergeOp, or no chosen op has a schedule (exit 2).
    fn from(e: crate::scheduler::Error) -> Self {
        CommandError::usage(e)
    }
}

impl From<super::init::ChantSourceError> for CommandError {
    /// `init --chant` is not a chant source (exit 2).
    fn from(e: super::init::ChantSourceError) -> Self {
        CommandError::usage(e)
    }
}

#[cfg(feature = "notify")]
impl From<crate::notify::ConfigError> for CommandError {
    /// `[notify]` in `chant.toml` is invalid: the user's configuration (exit 2).
    fn from(e: crate::notify::ConfigError) -> Self {
        CommandError::usage(e)
    }
}

#[cfg(feature = "serve")]
impl From<crate::serve::Error> for CommandError {
    /// The dashboard or metrics server could not bind or serve (exit 1).
    fn from(e: crate::serve::Error) -> Self {
        CommandError::failed(e)
    }
}

#[cfg(feature = "import")]
impl From<crate::lexicon::export::ExportError> for CommandError {
    /// A lexicon that cannot export under the options given is the user's to change (exit 2);
    /// an export or its rendering that failed is exit 1.
    fn from(e: crate::lexicon::export::ExportError) -> Self {
        match e {
            crate::lexicon::export::ExportError::Unsupported { .. } => CommandError::usage(e),
            e => CommandError::failed(e),
        }
    }
}

#[cfg(feature = "box")]
impl From<crate::lexicon::sprite::SpriteError> for CommandError {
    /// The supervisor could not do what was asked of a box service (exit 1).
    fn from(e: crate::lexicon::sprite::SpriteError) -> Self {
        CommandError::failed(e)
    }
}

#[cfg(feature = "box")]
impl From<super::workspace::Error> for CommandError {
    /// The workspace file is missing, unreadable or not a workspace: the user's layout (exit 2).
    fn from(e: super::workspace::Error) -> Self {
        CommandError::usage(e)
    }
}

/// A message the call site adds (a flag, a file, what it was doing) over the error that
/// stopped it: [`CommandError::usage_with`], [`CommandError::failed_with`],
/// [`CommandError::context`]. The error stays the cause, so its own causes are rendered too.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct Context {
    message: String,
    #[source]
    source: Box<dyn Error + Send + Sync>,
}

/// Renders `value` as one line of JSON, what `--json` prints; `what` names it in the error
/// (`the plan`) should it not render.
///
/// # Errors
///
/// An [`ErrorKind::Failed`] error when `value` cannot be serialised.
pub fn to_json(value: &impl serde::Serialize, what: &str) -> Result<String, CommandError> {
    serde_json::to_string(value).map_err(|e| CommandError::failed_with(format!("cannot render {what} as JSON"), e))
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

    #[derive(Debug, thiserror::Error)]
    #[error("cannot bind lexicon files")]
    struct Bind(#[source] Outer);

    #[test]
    fn a_nested_error_renders_every_level_of_its_chain_once() {
        let nested = || Bind(Outer(std::io::Error::other("permission denied")));
        let expected = "cannot bind lexicon files: cannot read the ledger: permission denied";
        let e = CommandError::failed(nested());
        assert_eq!(e.lines(), [format!("error: {expected}")]);
        assert_eq!(e.to_string(), expected);
        let json: serde_json::Value = serde_json::from_str(&e.json().unwrap()).unwrap();
        assert_eq!(json["message"], expected);
        // Context goes in front; the chain below it is still rendered, each level once.
        let e = CommandError::failed_with("env prod", nested()).hint("check the ledger");
        assert_eq!(e.lines(), [format!("error: env prod: {expected}"), "hint: check the ledger".to_owned()]);
        let e = CommandError::from(crate::config::Error::Read {
            path: "/p/chant.toml".into(),
            source: std::io::Error::other("permission denied"),
        })
        .context("--config");
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert_eq!(e.lines(), ["error: --config: cannot read /p/chant.toml: permission denied"]);
        // A transparent wrapper (project over config) adds no level and repeats none.
        let e = CommandError::from(crate::project::Error::Config(crate::config::Error::Read {
            path: "/p/chant.toml".into(),
            source: std::io::Error::other("permission denied"),
        }));
        assert_eq!(
            (e.kind(), e.lines()),
            (ErrorKind::Usage, vec!["error: cannot read /p/chant.toml: permission denied".to_owned()])
        );
        // An error that quotes its cause in its own message does not print it twice.
        let e = CommandError::usage(crate::clock::BadNow::Unreadable {
            path: "/t/clock".into(),
            source: std::sync::Arc::new(std::io::Error::other("no such file")),
        });
        assert_eq!(e.lines(), ["error: CHANT_NOW=@/t/clock: cannot read the clock file: no such file"]);
    }

    #[test]
    fn the_one_conversion_of_each_error_decides_its_kind() {
        use crate::ledger::Error as L;
        assert_eq!(CommandError::from(L::BranchClash).kind(), ErrorKind::Usage);
        assert_eq!(CommandError::from(L::InvalidName { what: "op", name: "A".into() }).kind(), ErrorKind::Usage);
        assert_eq!(CommandError::from(L::Contended { reference: "r".into(), attempts: 3 }).kind(), ErrorKind::Failed);
        let e = CommandError::from(crate::operator::Error::InvalidName { what: "env", name: "Prod".into() });
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert_eq!(
            e.lines(),
            ["error: --env: invalid env \"Prod\": names are lowercase letters, digits and -, starting with a letter"]
        );
        let e = CommandError::from(crate::operator::audit::Error::InvalidOp("X".into()));
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert!(e.lines()[0].starts_with("error: --op: invalid op \"X\""), "{:?}", e.lines());
        let lease =
            crate::lease::Error::Remote { remote: "origin".into(), reference: "r".into(), detail: "refused".into() };
        let e = CommandError::from(lease).context("cannot take the lease of site");
        assert_eq!(e.kind(), ErrorKind::Failed);
        assert_eq!(
            e.lines(),
            [
                "error: cannot take the lease of site: the lease ref \"r\" could not be synchronised with remote origin: refused"
            ]
        );
    }

    #[test]
    fn redaction_renders_the_chain_once_and_keeps_the_kind_and_hints() {
        let redactor = crate::redact::Redactor::new(["hunter2".to_owned()]);
        let e = CommandError::usage_with("--url", std::io::Error::other("token hunter2 refused")).hint("see --help");
        let e = e.redact(&redactor);
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert_eq!(e.lines()[1], "hint: see --help");
        assert!(
            !e.lines()[0].contains("hunter2") && e.lines()[0].starts_with("error: --url: token "),
            "{:?}",
            e.lines()
        );
    }

    /// Formatting an error into a message drops its causes (`source()`): the rule this module
    /// keeps is that no constructor of a `CommandError` in `cli/` is given an error rendered as
    /// text (`e.to_string()`, `format!("...: {e}")`, `chain(&e)`); the error goes in whole,
    /// through `?`, `From`, `usage_with`/`failed_with` or `context`.
    #[test]
    fn no_call_site_in_cli_formats_an_error_into_its_message() {
        const CONSTRUCTORS: &[&str] = &[
            "CommandError::usage(",
            "CommandError::failed(",
            "CommandError::new(",
            "CommandError::usage_with(",
            "CommandError::failed_with(",
        ];
        const RENDERED: &[&str] = &[
            "{e}",
            "{e:",
            "{err}",
            "{err:",
            "{error}",
            "{error:",
            "{source}",
            "e.to_string()",
            "err.to_string()",
            "error.to_string()",
            "chain(",
            ".chain()",
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
        let mut files = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") && !path.ends_with("cli/error.rs") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 20, "found only {files:?}");
        let mut offences = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            for start in CONSTRUCTORS.iter().flat_map(|c| text.match_indices(c).map(|(i, m)| i + m.len())) {
                let args = balanced(&text[start..]);
                if let Some(bad) = RENDERED.iter().find(|r| args.contains(*r)) {
                    let line = text[..start].lines().count();
                    offences.push(format!("{}:{line}: {bad} in {args:?}", file.display()));
                }
            }
            // A message built from an error, then handed to a constructor.
            for (i, _) in text.match_indices(".map_err(|e| format!(") {
                offences.push(format!(
                    "{}:{}: an error formatted into a string",
                    file.display(),
                    text[..i].lines().count()
                ));
            }
        }
        assert!(offences.is_empty(), "errors rendered as text (their causes dropped):\n{}", offences.join("\n"));
    }

    /// The text up to the parenthesis that closes the one before it.
    fn balanced(text: &str) -> &str {
        let mut depth = 1;
        for (i, c) in text.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return &text[..i];
                    }
                }
                _ => {}
            }
        }
        text
    }

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

    #[test]
    fn a_rendered_error_shows_terminal_controls_as_escapes_and_keeps_its_own_lines() {
        let e = CommandError::usage("no op named `x\u{1b}[2J` here\nsecond line").hint("see \u{9b}31m");
        let lines = e.lines();
        assert_eq!(lines, ["error: no op named `x\\u{1b}[2J` here\nsecond line", "hint: see \\u{9b}31m"]);
        assert!(!lines.concat().contains('\u{1b}'));
    }
}
