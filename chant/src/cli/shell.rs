//! Shell habits: `completions <shell>` (clap_complete) and `man --out DIR` (clap_mangen), both
//! generated from the one clap definition, and the examples and exit codes every subcommand's
//! help ends with ([`command`]).

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::error::print;
use super::{Cli, CommandError, Exit};

/// Print a shell completion script on stdout
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

/// Write man pages generated from the command line's definition
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The directory to write `<bin>.1` and `<bin>-<subcommand>.1` into (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Examples and exit codes, by subcommand path: the text after each subcommand's help.
const EXAMPLES: &[(&[&str], &str)] = &[
    (&["ops"], "Examples:\n  chant ops\n  chant ops --json\n\nExit codes: 0 listed, 2 usage error."),
    (
        &["ops", "check"],
        "Examples:\n  chant ops check target/chant/ops\n  chant ops check a.json b.json --json\n\nExit codes: 0 valid, 1 problems found, 2 usage error (a path that does not exist).",
    ),
    (
        &["run"],
        "Examples:\n  chant run staging-apply\n  chant run staging-converge --json    # a ConvergeOp runs one tick\n  chant run release --components api,web   # only those components (and the shared phases)\n\nExit codes: 0 done, 1 failed (or its lease is held), 2 usage error (an unknown component), 3 gated.",
    ),
    (
        &["tick"],
        "Examples:\n  chant tick staging-converge\n  chant tick staging-converge --plan   # decide, write nothing\n\nExit codes: 0 ticked (or skipped: lease held), 1 the tick failed, 2 usage error.",
    ),
    (
        &["replay"],
        "Examples:\n  chant replay staging-converge --limit 50\n  chant replay staging-converge --rules new/staging-converge.json\n\nExit codes: 0 replayed, 1 the ledger could not be read, 2 usage error.",
    ),
    (
        &["explain"],
        "Examples:\n  chant explain 25fb77b9\n  chant explain --op staging-converge    # its newest tick\n\nExit codes: 0 explained, 1 the ledger could not be read, 2 no such tick.",
    ),
    (
        &["approve"],
        "Examples:\n  chant approve prod-db-force force --actor you\n  chant approve prod-db-force force --expire\n  chant approve prod-db-force force --json\n  chant approve api rollout            # a component's gate, by the component's name\n\nExit codes: 0 recorded, 1 the ledger could not be written, 2 usage error (a gate the op never had: with the closest one).",
    ),
    (
        &["import"],
        "Examples:\n  chant import --from legacy --out src/legacy.rs\n  chant import --from legacy --owned --select type=table,name='app.*'\n\nExit codes: 0 written, 1 a read failed or the file could not be written, 2 usage error (a bad selector, an env that binds nothing to read).",
    ),
    (
        &["lifecycle"],
        "Examples:\n  chant lifecycle diff staging --live\n  chant lifecycle predict staging --traffic 100\n\nExit codes: see `lifecycle diff --help` and `lifecycle predict --help`.",
    ),
    (
        &["lifecycle", "diff"],
        "Examples:\n  chant lifecycle diff staging --live\n  chant lifecycle diff staging --live --exit-code   # for CI\n  chant lifecycle diff staging --live --deep --json\n  chant lifecycle diff staging --live --update-baseline --path public.users.columns.id.default\n  chant lifecycle diff staging --live --update-baseline --path app.json.document.port --actor alice\n\nExit codes: 0 diffed (with --exit-code: nothing differs), 1 failed (with --exit-code: something to create, update or delete), 2 usage error, 4 (with --exit-code) something could not be observed.",
    ),
    (
        &["lifecycle", "plan"],
        "Examples:\n  chant lifecycle plan staging --live\n  chant lifecycle plan staging --live --exit-code   # for CI: as lifecycle diff --exit-code\n  chant lifecycle plan staging --live --json        # one line per ConvergeOp: tick <op> --plan --json\n\nIt changes nothing, and takes no lease.\n\nExit codes: 0 planned (with --exit-code: nothing differs), 1 a tick would fail (with --exit-code: something to create, update or delete), 2 usage error, 4 (with --exit-code) something could not be observed.",
    ),
    (
        &["lifecycle", "baseline"],
        "Examples:\n  chant lifecycle baseline staging\n  chant lifecycle baseline staging --clear app.json.document.port\n  chant lifecycle baseline staging --reset   # replace a baseline chant did not write\n\nExit codes: 0 shown, cleared or reset, 1 the baseline cannot be read or written, 2 usage error (--clear naming no accepted path).",
    ),
    (
        &["graph"],
        "Examples:\n  chant graph staging                      # the declared graph\n  chant graph staging --live --dot | dot -Tsvg > staging.svg\n  chant graph staging --live --mermaid\n\nExit codes: 0 drawn, 1 the project or a declaration could not be read, 2 usage error (an env this binary does not declare).",
    ),
    (
        &["lifecycle", "predict"],
        "Examples:\n  chant lifecycle predict staging --traffic 100\n  chant lifecycle predict staging --traffic 100 --live --failure \"one zone lost\"\n  chant lifecycle predict staging --traffic 100 --compare declared,live --json\n\nThe engine is named by CHANT_BEHAVIOUR_ENGINE_<LEXICON>, CHANT_BEHAVIOUR_ENGINE or BEHAVIOUR_ENGINE (an http(s) URL, sent a bearer token from CHANT_BEHAVIOUR_TOKEN_<LEXICON>, CHANT_BEHAVIOUR_TOKEN or BEHAVIOUR_TOKEN, or a program on PATH).\n\nExit codes: 0 every lexicon answered (partial answers included), 1 a refusal, a request the screen refused, or a failure, 2 usage error.",
    ),
    (
        &["lifecycle", "teardown"],
        "Examples:\n  chant lifecycle teardown prod-db\n  chant lifecycle teardown prod-db --json\n\nIt changes nothing: it prints what the teardown step would remove and the holes it cannot see into.\n\nExit codes: 0 planned, 1 failed, 2 usage error.",
    ),
    (
        &["lifecycle", "status"],
        "Examples:\n  chant lifecycle status prod-db --live\n  chant lifecycle status prod-db --live --json\n\nExit codes: 0 listed, 1 failed, 2 usage error.",
    ),
    (
        &["operator"],
        "Examples:\n  chant operator --once\n  chant operator --interval 5m --heartbeat 1h   # quiet; -v prints every round\n\nExit codes: 0 done (stopped by a signal), 1 a tick or a lease failed (--once), 2 usage error.",
    ),
    (
        &["operator", "status"],
        "Examples:\n  chant operator status\n  chant operator status --json --fetch\n\nExit codes: 0 done, 1 the ledger could not be read, 2 usage error.",
    ),
    (
        &["operator", "log"],
        "Examples:\n  chant operator log --limit 20\n  chant operator log --op staging-converge --json\n  chant operator log --follow                      # new entries as they land\n\nExit codes: 0 done, 1 the ledger could not be read, 2 usage error.",
    ),
    (
        &["operator", "suspend"],
        "Examples:\n  chant operator suspend staging-converge --reason \"migrating the database\"\n  chant operator suspend staging-converge --reason \"change freeze\" --until 2h\n\nEvery operator sharing the ledger skips the op (skipped=1(suspended:...)) until `operator resume` or --until; a tick by hand still runs.\n\nExit codes: 0 recorded, 1 the ledger could not be written, 2 usage error (no such ConvergeOp, an empty reason, an --until in the past).",
    ),
    (
        &["operator", "resume"],
        "Examples:\n  chant operator resume staging-converge\n\nA rule that gave up on its restart limit (health given-up) counts afresh from the next tick.\n\nExit codes: 0 recorded, 1 the ledger could not be written, 2 usage error (no such ConvergeOp).",
    ),
    (
        &["operator", "audit"],
        "Examples:\n  chant operator audit\n  chant operator audit --op staging-promote --json\n\nExit codes: 0 no gaps, 1 a gap in the audit trail (or the ledger could not be read), 2 usage error.",
    ),
    (
        &["operator", "undamp"],
        "Examples:\n  chant operator undamp staging-converge drift-apply   # one rule\n  chant operator undamp staging-converge --actor ana    # every rule of the op\n\nThe next tick plans without the rule's damped runs and its restart-limit counts, so a rule that gave up (health given-up) may dispatch again.\n\nExit codes: 0 recorded, 1 the ledger could not be written, 2 usage error (no such ConvergeOp or rule).",
    ),
    (
        &["workspace"],
        "Examples:\n  chant workspace status\n  chant workspace status --json\n\nExit codes: 0 done, 2 usage error (no chant.workspace.json).",
    ),
    (
        &["services"],
        "Examples:\n  chant services restart app\n  chant services stop worker --json\n\nExit codes: 0 done, 1 the supervisor refused or the health URL never answered, 2 no such declared service.",
    ),
    (
        &["services", "start"],
        "Examples:\n  chant services start app\n  chant services start app --member box --json\n\nExit codes: 0 started (and healthy), 1 the supervisor refused or the health URL never answered, 2 no such declared service.",
    ),
    (
        &["services", "stop"],
        "Examples:\n  chant services stop worker\n  chant services stop worker --json\n\nExit codes: 0 stopped, 1 the supervisor refused, 2 no such declared service.",
    ),
    (
        &["services", "restart"],
        "Examples:\n  chant services restart app\n  chant services restart app --json\n\nExit codes: 0 restarted (and healthy), 1 the supervisor refused or the health URL never answered, 2 no such declared service.",
    ),
    (
        &["workspace", "status"],
        "Examples:\n  chant workspace status\n  chant workspace status --json\n\nExit codes: 0 done, 2 usage error (no chant.workspace.json).",
    ),
    (
        &["serve"],
        "Examples:\n  chant serve\n  chant serve --addr 127.0.0.1:7878\n\nExit codes: 0 stopped, 1 the address cannot be bound, 2 usage error.",
    ),
    (
        &["init"],
        "Examples:\n  chant init my-estate\n  chant init . --env staging --chant ../chant\n\nExit codes: 0 written, 2 usage error (a file exists, a bad name, a bad --chant).",
    ),
    (
        &["completions"],
        "Examples:\n  chant completions bash > ~/.local/share/bash-completion/completions/chant\n  chant completions zsh > ~/.zfunc/_chant\n\nExit codes: 0 printed, 2 an unknown shell.",
    ),
    (
        &["ci"],
        "Examples:\n  chant ci workflow --github > .github/workflows/chant-operator.yml\n  chant ci cronjob --image registry.example/project:1.0\n  chant ci systemd --out /etc/systemd/system\n  chant ci cron | crontab -\n\nExit codes: 0 printed, 1 a file could not be written, 2 usage error (an unknown --op, no scheduled op, no image, the stock binary).",
    ),
    (
        &["ci", "workflow"],
        "Examples:\n  chant ci workflow --github > .github/workflows/chant-operator.yml\n  chant ci workflow --gitlab --op staging-converge\n\nExit codes: 0 printed, 2 usage error (an unknown --op, no scheduled op, the stock binary).",
    ),
    (
        &["ci", "cronjob"],
        "Examples:\n  chant ci cronjob --image registry.example/project:1.0 | kubectl apply -f -\n  chant ci cronjob --op staging-converge    # the image from [ci] image in chant.toml\n\nExit codes: 0 printed, 2 usage error (no --image and no [ci] image, an unknown --op, no scheduled op).",
    ),
    (
        &["ci", "systemd"],
        "Examples:\n  chant ci systemd --out /etc/systemd/system && systemctl daemon-reload\n  chant ci systemd --operator --bin-path /srv/p/target/release/staging --workdir /srv/p\n\nExit codes: 0 printed or written, 1 a unit file could not be written, 2 usage error (an unknown --op, no scheduled op, a relative path).",
    ),
    (
        &["ci", "cron"],
        "Examples:\n  chant ci cron > chant.crontab && crontab chant.crontab\n  chant ci cron --op staging-converge --workdir /srv/p --bin-path /srv/p/target/release/staging\n\nExit codes: 0 printed, 2 usage error (an unknown --op, no scheduled op, a relative path).",
    ),
    (
        &["search"],
        "Examples:\n  chant search table                  # every table, across every env\n  chant search 'app.*' --env staging\n  chant search service --ambient      # the services nothing declares too\n\nExit codes: 0 found, 1 nothing found (everything was read), 2 usage error, 4 nothing found and something could not be read.",
    ),
    (
        &["dev"],
        "Examples:\n  chant dev check-lexicon\n  chant dev check-lexicon postgres --env prod-db\n\nExit codes: see `dev check-lexicon --help`.",
    ),
    (
        &["dev", "check-lexicon"],
        "Examples:\n  chant dev check-lexicon                 # every lexicon an env declares\n  chant dev check-lexicon files --json\n\nExit codes: 0 every check passed, 1 a check failed, 2 usage error (an unregistered lexicon, one no env declares).",
    ),
    (
        &["man"],
        "Examples:\n  chant man --out target/man && man -l target/man/chant.1\n\nExit codes: 0 written, 1 a page could not be written.",
    ),
];

/// The command line's definition with every subcommand's examples and exit codes after its help.
pub fn command() -> clap::Command {
    command_with(None)
}

/// [`command`] with its examples in this binary's words, for a help that is about to be shown:
/// the examples are written for the stock `chant` and the README's example project, whose
/// ConvergeOp, op and env a project's own binary does not have. A project's binary shows its own
/// name, and its own first ConvergeOp, its env and its first other op in their places (only
/// what it has: a project without an `op!` keeps the example's op).
pub fn command_for_help(binary: super::Binary) -> clap::Command {
    let mut words = ExampleWords { bin: bin_name(), ..ExampleWords::default() };
    if binary == super::Binary::Project
        && let Ok(catalog) = crate::catalog::Catalog::embedded()
    {
        if let Some(converge) = catalog.converge_ops().next() {
            words.converge_op = Some(converge.name.to_string());
            words.env = converge.env.as_ref().map(ToString::to_string);
        }
        words.op = catalog.ops().find(|doc| !doc.is_converge()).map(|doc| doc.name.to_string());
    }
    command_with(Some(&words))
}

/// What [`command_for_help`] writes into the examples instead of the stock ones.
#[derive(Debug, Default)]
struct ExampleWords {
    /// This binary's name, for `chant`.
    bin: String,
    /// A ConvergeOp of this binary, for `staging-converge`.
    converge_op: Option<String>,
    /// An op of this binary, for `staging-apply`.
    op: Option<String>,
    /// The ConvergeOp's env, for `staging`.
    env: Option<String>,
}

impl ExampleWords {
    /// `text` in these words: each example line's leading `chant` is this binary's name, and the
    /// example project's names are this project's where it has them.
    fn apply(&self, text: &str) -> String {
        // Placeholders first, so that `staging` is replaced only where it is the env.
        let mut out = text.replace("staging-converge", "\u{1}").replace("staging-apply", "\u{2}");
        if let Some(env) = &self.env {
            out = out.replace("staging", env);
        }
        out = out
            .replace('\u{1}', self.converge_op.as_deref().unwrap_or("staging-converge"))
            .replace('\u{2}', self.op.as_deref().unwrap_or("staging-apply"));
        out.lines()
            .map(|line| match line.strip_prefix("  chant ") {
                Some(rest) => format!("  {} {rest}", self.bin),
                None => line.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn command_with(words: Option<&ExampleWords>) -> clap::Command {
    let mut cmd = Cli::command();
    for (path, text) in EXAMPLES {
        let text = match words {
            Some(words) => words.apply(text),
            None => (*text).to_owned(),
        };
        cmd = with_after_help(cmd, path, text);
    }
    // What this build leaves out is still a command a user may look for: named, with its feature.
    if !super::LEFT_OUT.is_empty() {
        let names: Vec<String> =
            super::LEFT_OUT.iter().map(|(name, feature)| format!("{name} (feature `{feature}`)")).collect();
        cmd = cmd.after_help(format!(
            "Left out of this build: {}. The stock chant hands them to a project binary that has them.",
            names.join(", ")
        ));
    }
    cmd
}

fn with_after_help(cmd: clap::Command, path: &[&str], text: String) -> clap::Command {
    match path {
        [] => cmd.after_help(text),
        // A subcommand this build leaves out (its feature is off) gets no text.
        [first, ..] if cmd.find_subcommand(first).is_none() => cmd,
        [first, rest @ ..] => {
            let rest = rest.to_vec();
            cmd.mut_subcommand(*first, move |c| with_after_help(c, &rest, text.clone()))
        }
    }
}

/// The name this process was invoked by (`argv[0]`'s file name), as clap names a parsed command;
/// the name of this binary's file when there is none.
pub fn invoked_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|arg| std::path::Path::new(&arg).file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(bin_name)
}

/// This binary's name, as the shell calls it.
fn bin_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "chant".into())
}

/// Runs `completions`.
pub fn cmd_completions(args: &CompletionsArgs) -> Result<Exit, CommandError> {
    let mut cmd = command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, bin_name(), &mut out);
    print(&String::from_utf8_lossy(&out))?;
    Ok(Exit::Done)
}

/// Runs `man`: one page for the binary and one per subcommand (`chant-operator-status.1`).
pub fn cmd_man(args: &ManArgs) -> Result<Exit, CommandError> {
    let bin = bin_name();
    let cmd = command().name(bin.clone()).bin_name(bin.clone());
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CommandError::failed_with(format!("cannot create {}", args.out.display()), e))?;
    let mut written = Vec::new();
    write_pages(&cmd, &bin, args, &mut written)?;
    for w in &written {
        super::error::println(&w.display().to_string())?;
    }
    Ok(Exit::Done)
}

fn write_pages(
    cmd: &clap::Command,
    name: &str,
    args: &ManArgs,
    written: &mut Vec<PathBuf>,
) -> Result<(), CommandError> {
    let path = args.out.join(format!("{name}.1"));
    let mut bytes = Vec::new();
    clap_mangen::Man::new(cmd.clone().name(name.to_owned()))
        .render(&mut bytes)
        .and_then(|()| std::fs::write(&path, &bytes))
        .map_err(|e| CommandError::failed_with(format!("cannot write {}", path.display()), e))?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), args, written)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The top-level help names every command this build leaves out, with its feature, and says
    /// nothing of the kind when it leaves none out.
    #[test]
    fn the_help_names_the_commands_this_build_leaves_out() {
        let help = command().render_help().to_string();
        for (name, feature) in super::super::LEFT_OUT {
            assert!(help.contains(&format!("{name} (feature `{feature}`)")), "{help}");
        }
        assert_eq!(help.contains("Left out of this build"), !super::super::LEFT_OUT.is_empty(), "{help}");
    }

    /// A project's binary shows its examples with its own name and its own ops and env; what it
    /// does not have keeps the example's.
    #[test]
    fn a_project_binary_shows_the_examples_in_its_own_words() {
        let words = ExampleWords {
            bin: "my-estate".into(),
            converge_op: Some("dev-converge".into()),
            op: None,
            env: Some("dev".into()),
        };
        let text = "Examples:\n  chant tick staging-converge\n  chant run staging-apply\n  chant lifecycle diff staging --live\n  chant replay staging-converge --rules new/staging-converge.json\n\nExit codes: 0 done.";
        assert_eq!(
            words.apply(text),
            "Examples:\n  my-estate tick dev-converge\n  my-estate run staging-apply\n  my-estate lifecycle diff dev --live\n  my-estate replay dev-converge --rules new/dev-converge.json\n\nExit codes: 0 done."
        );
        let help = command_with(Some(&words)).find_subcommand("tick").unwrap().get_after_help().unwrap().to_string();
        assert!(help.contains("  my-estate tick dev-converge --plan"), "{help}");
    }

    #[test]
    fn every_subcommand_ends_its_help_with_examples_and_exit_codes() {
        fn walk(cmd: &clap::Command, path: String, missing: &mut Vec<String>) {
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                let p = format!("{path} {}", sub.get_name());
                let text = sub.get_after_help().map(ToString::to_string).unwrap_or_default();
                if !(text.contains("Examples:\n  chant ") && text.contains("Exit codes: ")) {
                    missing.push(p.clone());
                }
                walk(sub, p, missing);
            }
        }
        let cmd = command();
        cmd.clone().debug_assert();
        let mut missing = Vec::new();
        walk(&cmd, String::new(), &mut missing);
        assert!(missing.is_empty(), "no examples or exit codes: {missing:?}");
    }
}
