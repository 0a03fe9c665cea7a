//! `import --from <env> [--owned] [--select type=table,name='app.*'] [--verbatim] [--out FILE]`:
//! reads an env's live estate through every lexicon that can export it and writes the Rust
//! declaration module a user commits ([`crate::lexicon::export`]).
//!
//! The env is read from its bindings in chant.toml (`[env.<name>]`), whether or not the binary
//! declares it yet. Every registered lexicon whose export the env binds is asked; one that does
//! not implement export, or that the env does not bind, is skipped. The module goes to `--out`
//! (or stdout), formatted by rustfmt when rustfmt is on PATH, else as prettyplease lays it out
//! (rustfmt's defaults). rustfmt runs where the module goes, as `cargo fmt` would format it
//! there: in the directory of `--out` (the working directory for stdout), so the rustfmt.toml
//! that applies to that crate applies (not the one of the project that ran the import), with the
//! edition of the package around it. The module written is held to
//! [`check_module`](crate::lexicon::export::module::check_module): one that would not build is
//! never written, and the import fails (exit 1). Everything worth knowing goes to stderr as
//! `import:` lines, redacted and with every control character escaped: what was read from where,
//! what the declaration cannot express, what was not exported, and each credential left out with
//! the variable the module reads instead.

use std::path::PathBuf;

use clap::Args;

use super::{Binary, CommandError, Exit, working_dir};
use crate::lexicon::Binding;
use crate::lexicon::export::{ExportOptions, ExportedTemplate, Generated, Selector, render_module};
use crate::redact::Redactor;

/// Write a declaration module from an env's live estate
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The env to read, as bound under `[env.<name>]` in chant.toml.
    #[arg(long = "from", value_name = "ENV")]
    pub from: String,
    /// Only what carries this project's and env's ownership marker.
    #[arg(long)]
    pub owned: bool,
    /// Which resources: `type=<kind>` and `name=<glob>` pairs, comma-separated.
    #[arg(long, value_name = "SELECTOR")]
    pub select: Option<String>,
    /// Keep what the server created or defaulted (stripped by default).
    #[arg(long)]
    pub verbatim: bool,
    /// Write the module to FILE (relative to the working directory) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `import`.
///
/// # Errors
///
/// A usage error for a bad selector, a missing chant.toml or an env that binds nothing an export
/// can read; a failure when a read fails or the file cannot be written.
pub fn cmd_import(binary: Binary, args: &ImportArgs) -> Result<Exit, CommandError> {
    let _ = binary;
    let selector =
        Selector::parse(args.select.as_deref().unwrap_or("")).map_err(|e| CommandError::usage_with("--select", e))?;
    let cwd = working_dir()?;
    let config = crate::config::Config::discover(&cwd)?;
    let env = args.from.as_str();
    let none = std::collections::BTreeMap::new();
    let values = config.env(env).map(crate::config::EnvBinding::values).unwrap_or(&none);
    let binding = Binding::new(env, &config.project.name, &config.root, values);
    let redactor = Redactor::from_env_vars(config.secret_vars());
    let options = ExportOptions { owned: args.owned, selector, verbatim: args.verbatim };

    let registrations = crate::lexicon::registry::registrations()?;
    let mut parts: Vec<(ExportedTemplate, Generated)> = Vec::new();
    let mut keys = Vec::new();
    for r in &registrations {
        keys.extend(r.binding_keys.iter().map(|k| k.name));
        match (r.export)(&binding, &options) {
            Ok(template) => {
                let generated = (r.generate)(&template, &redactor)?;
                parts.push((template, generated));
            }
            Err(e) if e.is_nothing_to_export() => {}
            Err(crate::lexicon::export::ExportError::Unsupported { lexicon, option, reason }) => {
                let said = format!("lexicon {lexicon} cannot export under {option}: {reason}");
                let hint = format!(
                    "import without {option}, or leave lexicon {lexicon} out with --select (e.g. --select type=table)"
                );
                return Err(CommandError::usage(redactor.redact(&said)).hint(hint));
            }
            Err(e) => return Err(CommandError::from(e).redact(&redactor)),
        }
    }
    if parts.is_empty() {
        return Err(CommandError::usage(format!(
            "env {env} binds nothing an export can read in {}",
            config.root.join("chant.toml").display()
        ))
        .hint(format!("bind one of {} under [env.{env}]", keys.join(", "))));
    }

    let command = command_line(args);
    let refs: Vec<(&ExportedTemplate, &Generated)> = parts.iter().map(|(t, g)| (t, g)).collect();
    let source = render_module(env, &command, &refs, &redactor)?;
    let out = args.out.as_ref().map(|p| cwd.join(p));
    let fmt_dir = out.as_deref().and_then(std::path::Path::parent).unwrap_or(&cwd);
    let source = match rustfmt(&source, fmt_dir) {
        Some(formatted) => formatted,
        None => {
            say("rustfmt did not run: the module is laid out by prettyplease");
            source
        }
    };
    // What rustfmt printed is held to the same rule as what was rendered: a module that would
    // not build is never written, and the import fails (exit 1).
    crate::lexicon::export::module::check_module(&source)?;
    for (t, g) in &parts {
        report(t, g, &redactor);
    }
    match &out {
        Some(path) => {
            std::fs::write(path, &source)
                .map_err(|e| CommandError::failed_with(format!("cannot write {}", path.display()), e))?;
            say(&format!("wrote {}", path.display()));
        }
        None => super::error::print(&source)?,
    }
    Ok(Exit::Done)
}

/// The command as the header records it (the selector and flags, never a value read).
fn command_line(args: &ImportArgs) -> String {
    let mut c = format!("chant import --from {}", args.from);
    if args.owned {
        c.push_str(" --owned");
    }
    if let Some(s) = &args.select {
        c.push_str(&format!(" --select {s}"));
    }
    if args.verbatim {
        c.push_str(" --verbatim");
    }
    c
}

/// Prints one `import:` line on stderr, every character a terminal would act on (in a name
/// read from a database or a disk) shown as its escape.
fn say(line: &str) {
    eprintln!("import: {}", crate::terminal::printable(line));
}

/// Says on stderr what one lexicon's part holds and leaves out, redacted and escaped.
fn report(template: &ExportedTemplate, generated: &Generated, redactor: &Redactor) {
    let lexicon = template.lexicon();
    let say = |line: String| say(&format!("{lexicon}: {}", redactor.redact(&line)));
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in template.resources() {
        *counts.entry(r.kind.as_str()).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}(s)")).collect();
    let read = if counts.is_empty() { "nothing".to_owned() } else { counts.join(", ") };
    say(format!("read {read} from {}", template.source()));
    for note in template.notes() {
        say(note.clone());
    }
    if !generated.omitted.is_empty() {
        say(format!(
            "{} item(s) read but not declared (the declaration cannot express them; listed in the module's docs):",
            generated.omitted.len()
        ));
        for o in &generated.omitted {
            say(format!("  {o}"));
        }
    }
    for s in &generated.secrets {
        say(format!(
            "the {} of {} holds a credential and is not written; the module reads it from {}",
            s.what, s.entity, s.variable
        ));
    }
}

/// Formats `source` as `cargo fmt` would in `dir`, where it is written: rustfmt run there (it
/// reads the rustfmt.toml of `dir` or the nearest directory above) with the edition of the
/// package around `dir`. `None` when rustfmt is not there or refuses the source.
fn rustfmt(source: &str, dir: &std::path::Path) -> Option<String> {
    // The nearest existing directory: `--out` may name one that is not there yet (the write
    // then fails, saying so).
    let dir = dir.ancestors().find(|d| d.is_dir())?;
    let mut spec = crate::process::Spec::new("rustfmt");
    spec.args = vec!["--edition".into(), edition(dir), "--emit".into(), "stdout".into()];
    spec.cwd = Some(dir.to_path_buf());
    spec.stdin = Some(source.as_bytes().to_vec());
    // rustup's proxy never installs a toolchain for this: no rustfmt is an answer, not a download.
    spec.env = vec![("RUSTUP_AUTO_INSTALL".into(), "0".into())];
    spec.timeout = std::time::Duration::from_secs(60);
    let out = crate::process::run(&spec).ok()?;
    if !out.success() {
        return None;
    }
    let formatted = out.stdout.strip_prefix("<stdin>:\n\n").unwrap_or(&out.stdout);
    Some(formatted.to_owned())
}

/// The edition of the package whose manifest is nearest above `dir` (`package.edition`, or the
/// workspace's `workspace.package.edition` when it inherits it), as cargo passes it to rustfmt;
/// `2024`, what `chant init` writes, when no manifest says.
fn edition(dir: &std::path::Path) -> String {
    let manifest = |d: &std::path::Path| -> Option<toml::Table> {
        std::fs::read_to_string(d.join("Cargo.toml")).ok()?.parse::<toml::Table>().ok()
    };
    let mut inherits = false;
    for d in dir.ancestors() {
        let Some(m) = manifest(d) else { continue };
        if !inherits {
            match m.get("package").and_then(|p| p.get("edition")) {
                Some(toml::Value::String(e)) => return e.clone(),
                Some(_) => inherits = true,
                None if m.contains_key("package") => return "2015".into(),
                None => {}
            }
        }
        if let Some(toml::Value::String(e)) =
            m.get("workspace").and_then(|w| w.get("package")).and_then(|p| p.get("edition"))
        {
            return e.clone();
        }
    }
    "2024".into()
}
