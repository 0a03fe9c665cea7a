//! `ci workflow --github | --gitlab`, `ci cronjob`, `ci systemd` and `ci cron`: the seed's
//! "generated CI workflow", Kubernetes CronJobs, systemd units and a crontab that run the project
//! binary's `operator --once` on the ConvergeOps' own schedules ([`crate::scheduler`]).
//!
//! An op that declares no schedule gets no invented cadence: it is left out, the text says so in
//! a comment line, and a note on stderr repeats it. `ci cronjob` takes its image from `--image`
//! or `[ci] image` in chant.toml, and refuses to guess one. The recipes in docs/operator.md are
//! this code's output (a test holds them to it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::error::print;
use super::{Binary, CommandError, Exit};
use crate::model::OpDocument;
use crate::scheduler::{self, Invocation, Plan, Scheduled};

/// Generate what runs `operator --once` on the ConvergeOps' own schedules: a CI workflow,
/// Kubernetes CronJobs, systemd units or a crontab
#[derive(Debug, Args)]
pub struct CiArgs {
    /// What to generate.
    #[command(subcommand)]
    pub command: CiCommand,
}

/// The `ci` subcommands.
#[derive(Debug, Subcommand)]
pub enum CiCommand {
    /// Print a scheduled workflow for GitHub Actions or GitLab CI on stdout
    Workflow(WorkflowArgs),
    /// Print one Kubernetes CronJob per scheduled ConvergeOp on stdout
    Cronjob(CronjobArgs),
    /// Print (or write with --out) a systemd service and timer per scheduled ConvergeOp, or one
    /// operator service (--operator)
    Systemd(SystemdArgs),
    /// Print a crontab with one line per scheduled ConvergeOp, on the op's own schedule
    Cron(CronArgs),
}

/// `ci workflow`.
#[derive(Debug, Args)]
pub struct WorkflowArgs {
    /// GitHub Actions (`.github/workflows/chant-operator.yml`).
    #[arg(long, conflicts_with = "gitlab", required_unless_present = "gitlab")]
    pub github: bool,
    /// GitLab CI (a job for `.gitlab-ci.yml`, run by a pipeline schedule).
    #[arg(long)]
    pub gitlab: bool,
    /// Only this ConvergeOp (default: every scheduled ConvergeOp).
    #[arg(long)]
    pub op: Option<String>,
}

/// `ci cronjob`.
#[derive(Debug, Args)]
pub struct CronjobArgs {
    /// The image holding the project binary and a clone of the repository (default: `image`
    /// under `[ci]` in chant.toml).
    #[arg(long)]
    pub image: Option<String>,
    /// Only this ConvergeOp (default: every scheduled ConvergeOp).
    #[arg(long)]
    pub op: Option<String>,
}

/// Where the generated units and lines run the project binary.
#[derive(Debug, Args)]
pub struct Where {
    /// The project binary's absolute path on the machine that runs it (default: this binary).
    #[arg(long, value_name = "PATH")]
    pub bin_path: Option<PathBuf>,
    /// The project checkout's absolute path on that machine (default: the project root).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
}

/// `ci systemd`.
#[derive(Debug, Args)]
pub struct SystemdArgs {
    /// Only this ConvergeOp (default: every scheduled ConvergeOp).
    #[arg(long, conflicts_with = "operator")]
    pub op: Option<String>,
    /// One long-running operator service instead of a timer per op.
    #[arg(long)]
    pub operator: bool,
    /// With --operator: only the ConvergeOps of this env.
    #[arg(long, requires = "operator")]
    pub env: Option<String>,
    /// Write the unit files into this directory (and print their paths) instead of printing them.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Where the units run the project binary.
    #[command(flatten)]
    pub place: Where,
}

/// `ci cron`.
#[derive(Debug, Args)]
pub struct CronArgs {
    /// Only this ConvergeOp (default: every scheduled ConvergeOp).
    #[arg(long)]
    pub op: Option<String>,
    /// Where the lines run the project binary.
    #[command(flatten)]
    pub place: Where,
}

/// What the CI workflows and the CronJobs run: the project binary's name and the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The project binary's name.
    pub bin: String,
    /// The scheduled ops, and those left out.
    pub plan: Plan,
}

impl Recipe {
    /// The distinct crons of the scheduled ops, in order.
    fn crons(&self) -> Vec<&str> {
        let mut crons: Vec<&str> = self.plan.scheduled.iter().map(|s| s.cron.as_str()).collect();
        crons.sort_unstable();
        crons.dedup();
        crons
    }

    /// `operator --once`, narrowed with `--op` to the scheduled ops when any op is left out (an
    /// unscheduled op is due every round, so a plain round would tick it on the others' cadence).
    fn operator_args(&self) -> String {
        if self.plan.unscheduled.is_empty() {
            return "operator --once".to_owned();
        }
        let ops: Vec<String> = self.plan.scheduled.iter().map(|s| format!("--op {}", s.op)).collect();
        format!("operator --once {}", ops.join(" "))
    }

    fn header(&self, what: &str, operator_args: &str) -> String {
        let mut s = format!(
            "# Generated by `{} ci {what}`: builds {} and runs `{operator_args}` on the ops' own schedules.\n",
            self.bin, self.bin
        );
        if let Some(left) = self.plan.left_out() {
            let _ = writeln!(s, "# {left}");
        }
        s
    }

    fn utc_note(&self, s: &mut String) {
        let zoned: Vec<&str> = self.plan.scheduled.iter().filter(|o| o.tz.is_some()).map(|o| o.op.as_str()).collect();
        if !zoned.is_empty() {
            let _ = writeln!(s, "# Note: {} declare a time zone; this schedule is UTC.", zoned.join(", "));
        }
    }

    /// A GitHub Actions workflow: one `schedule` entry per distinct cron (UTC).
    pub fn github(&self) -> String {
        let args = self.operator_args();
        let mut s = self.header("workflow --github", &args);
        self.utc_note(&mut s);
        s.push_str("name: chant-operator\non:\n  schedule:\n");
        for c in self.crons() {
            let _ = writeln!(s, "    - cron: \"{c}\"");
        }
        s.push_str("  workflow_dispatch: {}\n");
        s.push_str("concurrency:\n  group: chant-operator\n  cancel-in-progress: false\n");
        s.push_str("permissions:\n  contents: write\n");
        s.push_str("jobs:\n  operator:\n    runs-on: ubuntu-latest\n    steps:\n");
        s.push_str("      - uses: actions/checkout@v4\n        with:\n          fetch-depth: 0\n");
        s.push_str(
            "      - name: Fetch the ledger\n        run: git fetch origin chant/lifecycle:chant/lifecycle || true\n",
        );
        let _ = writeln!(s, "      - name: Build {}\n        run: cargo build --release --bin {}", self.bin, self.bin);
        let _ = writeln!(s, "      - name: One operator round\n        run: ./target/release/{} {args}", self.bin);
        s.push_str(
            "      - name: Push the ledger\n        if: always()\n        run: git push origin chant/lifecycle\n",
        );
        s
    }

    /// A GitLab CI job, run by a pipeline schedule (set its cron in the project's CI/CD
    /// schedules; GitLab keeps schedules out of the file).
    pub fn gitlab(&self) -> String {
        let args = self.operator_args();
        let mut s = self.header("workflow --gitlab", &args);
        self.utc_note(&mut s);
        let _ = writeln!(s, "# Create a pipeline schedule with cron {} (UTC).", self.crons().join(" or "));
        s.push_str(
            "chant-operator:\n  image: rust:latest\n  rules:\n    - if: '$CI_PIPELINE_SOURCE == \"schedule\"'\n",
        );
        s.push_str("  resource_group: chant-operator\n  variables:\n    GIT_DEPTH: \"0\"\n  script:\n");
        s.push_str("    - git fetch origin chant/lifecycle:chant/lifecycle || true\n");
        let _ = writeln!(s, "    - cargo build --release --bin {}", self.bin);
        let _ = writeln!(s, "    - ./target/release/{} {args}", self.bin);
        s.push_str("    - git push origin chant/lifecycle\n");
        s
    }

    /// One Kubernetes CronJob per scheduled op (YAML documents separated by `---`), each on the
    /// op's cron in the op's time zone, running `operator --once --op <op>`.
    pub fn cronjobs(&self, image: &str) -> String {
        let mut s = self.header("cronjob", "operator --once --op <op>");
        for (i, op) in self.plan.scheduled.iter().enumerate() {
            if i > 0 {
                s.push_str("---\n");
            }
            cronjob(&mut s, &self.bin, op, image);
        }
        s
    }
}

fn cronjob(s: &mut String, bin: &str, op: &Scheduled, image: &str) {
    s.push_str("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n");
    let _ = writeln!(s, "  name: chant-{}", op.op);
    let zone = op.tz.as_deref().unwrap_or("Etc/UTC");
    let _ = writeln!(s, "spec:\n  schedule: \"{}\"\n  timeZone: {zone}\n  concurrencyPolicy: Forbid", op.cron);
    s.push_str("  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n");
    s.push_str("          terminationGracePeriodSeconds: 30\n          containers:\n            - name: operator\n");
    let _ = writeln!(s, "              image: {image}");
    s.push_str("              workingDir: /project\n");
    let _ = writeln!(
        s,
        "              command: [\"/project/bin/{bin}\", \"operator\", \"--once\", \"--op\", \"{}\"]",
        op.op
    );
}

/// The project binary's name: `[project] bin` in chant.toml, else this binary's own name.
fn project_bin(config: Option<&crate::config::Config>) -> String {
    config
        .and_then(|c| c.project.bin.clone())
        .or_else(|| std::env::current_exe().ok().and_then(|p| p.file_stem().map(|n| n.to_string_lossy().into_owned())))
        .unwrap_or_else(|| "chant".into())
}

/// The image of `ci cronjob`: `--image`, else `[ci] image`; never a placeholder.
fn image(flag: Option<&str>, config: Option<&crate::config::Config>) -> Result<String, CommandError> {
    let from_config = config.and_then(|c| c.ci.image.clone());
    match flag.map(str::to_owned).or(from_config) {
        Some(i) if !i.trim().is_empty() => Ok(i),
        _ => Err(CommandError::usage(
            "ci cronjob needs the image that holds the project binary and a clone of the repository",
        )
        .hint("pass --image <image>, or set `image = \"<image>\"` under `[ci]` in chant.toml")),
    }
}

/// Where generated units run the binary: the flags, else this binary and the project root; both
/// must be absolute.
fn invocation(place: &Where, config: Option<&crate::config::Config>, bin: &str) -> Result<Invocation, CommandError> {
    let exe = match &place.bin_path {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map_err(|e| CommandError::usage_with("cannot find this binary's path; pass --bin-path", e))?,
    };
    let workdir = match (&place.workdir, config) {
        (Some(d), _) => d.clone(),
        (None, Some(c)) => c.root.clone(),
        (None, None) => super::working_dir()?,
    };
    for (flag, path) in [("--bin-path", &exe), ("--workdir", &workdir)] {
        if !path.is_absolute() {
            return Err(CommandError::usage(format!(
                "{flag} {}: give an absolute path (systemd and cron start in no particular directory)",
                path.display()
            )));
        }
    }
    Ok(Invocation { bin: exe, workdir, generator: bin.to_owned() })
}

/// Runs `ci`.
pub fn cmd_ci(binary: Binary, args: &CiArgs) -> Result<Exit, CommandError> {
    if binary == Binary::Stock {
        return Err(CommandError::usage(
            "the stock chant binary carries no ops, so it cannot read their schedules; use the project's own binary (`cargo run --bin <project-bin> -- ci ...`)",
        ));
    }
    let catalog = crate::catalog::Catalog::embedded_declared(&crate::lexicon::declared_envs())?;
    let ops: Vec<&OpDocument> = catalog.converge_ops().collect();
    let config = super::working_dir().ok().and_then(|d| crate::config::Config::discover_any_bindings(&d).ok());
    let bin = project_bin(config.as_ref());
    if let CiCommand::Systemd(s) = &args.command
        && s.operator
    {
        let inv = invocation(&s.place, config.as_ref(), &bin)?;
        return emit_units(&[scheduler::operator_unit(&inv, s.env.as_deref())], s.out.as_deref());
    }
    let op = match &args.command {
        CiCommand::Workflow(w) => w.op.as_deref(),
        CiCommand::Cronjob(c) => c.op.as_deref(),
        CiCommand::Systemd(s) => s.op.as_deref(),
        CiCommand::Cron(c) => c.op.as_deref(),
    };
    let plan = Plan::of(&ops, op)?;
    if let Some(left) = plan.left_out() {
        eprintln!("note: {left}");
    }
    let recipe = Recipe { bin: bin.clone(), plan };
    let text = match &args.command {
        CiCommand::Workflow(w) if w.github => recipe.github(),
        CiCommand::Workflow(_) => recipe.gitlab(),
        CiCommand::Cronjob(c) => recipe.cronjobs(&image(c.image.as_deref(), config.as_ref())?),
        CiCommand::Systemd(s) => {
            let inv = invocation(&s.place, config.as_ref(), &bin)?;
            return emit_units(&scheduler::systemd_units(&recipe.plan, &inv)?, s.out.as_deref());
        }
        CiCommand::Cron(c) => scheduler::crontab(&recipe.plan, &invocation(&c.place, config.as_ref(), &bin)?),
    };
    print(&text)?;
    Ok(Exit::Done)
}

/// Prints the units (each after a `# --- <name>` line), or writes them into `out` and prints
/// their paths.
fn emit_units(units: &[scheduler::UnitFile], out: Option<&Path>) -> Result<Exit, CommandError> {
    let Some(dir) = out else {
        let mut text = String::new();
        for u in units {
            let _ = write!(text, "# --- {}\n{}", u.name, u.text);
        }
        print(&text)?;
        return Ok(Exit::Done);
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| CommandError::failed_with(format!("--out {}: cannot create the directory", dir.display()), e))?;
    let mut written = String::new();
    for u in units {
        let path = dir.join(&u.name);
        std::fs::write(&path, &u.text)
            .map_err(|e| CommandError::failed_with(format!("cannot write {}", path.display()), e))?;
        let _ = writeln!(written, "{}", path.display());
    }
    print(&written)?;
    Ok(Exit::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheduled(op: &str, cron: &str, tz: Option<&str>) -> Scheduled {
        Scheduled { op: op.into(), env: Some("staging".into()), cron: cron.into(), tz: tz.map(Into::into) }
    }

    /// The recipe the CI and CronJob examples in docs/operator.md are generated from.
    fn docs_recipe() -> Recipe {
        Recipe {
            bin: "staging".into(),
            plan: Plan {
                scheduled: vec![scheduled("staging-converge", "*/10 * * * *", None)],
                unscheduled: vec!["nightly-converge".into()],
            },
        }
    }

    /// Where the systemd and cron examples in docs/operator.md run the binary.
    fn docs_invocation() -> Invocation {
        Invocation {
            bin: "/srv/project/target/release/staging".into(),
            workdir: "/srv/project".into(),
            generator: "staging".into(),
        }
    }

    fn yaml(text: &str) -> serde_norway::Value {
        serde_norway::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn the_generated_files_parse_as_yaml_with_the_cron_and_the_command() {
        let r = Recipe {
            bin: "staging".into(),
            plan: Plan {
                scheduled: vec![
                    scheduled("a-converge", "*/10 * * * *", None),
                    scheduled("nightly", "0 3 * * *", Some("Europe/Berlin")),
                ],
                unscheduled: vec!["idle".into()],
            },
        };
        let gh = yaml(&r.github());
        assert_eq!(gh["on"]["schedule"][1]["cron"].as_str(), Some("0 3 * * *"));
        let run = "./target/release/staging operator --once --op a-converge --op nightly";
        let steps = gh["jobs"]["operator"]["steps"].as_sequence().unwrap();
        assert!(steps.iter().any(|st| st["run"].as_str() == Some(run)), "{steps:?}");
        assert!(r.github().contains("# Note: nightly declare a time zone; this schedule is UTC."));
        assert!(r.github().contains("# left out: idle declare(s) no schedule, and chant invents no cadence"));
        let gl = yaml(&r.gitlab());
        let script = gl["chant-operator"]["script"].as_sequence().unwrap();
        assert_eq!(script[2].as_str(), Some(run));
        let docs: Vec<serde_norway::Value> = r.cronjobs("img:1").split("\n---\n").map(yaml).collect();
        assert_eq!(docs.len(), 2, "one CronJob per scheduled op, none for the unscheduled one");
        let k = &docs[1];
        assert_eq!(
            (k["kind"].as_str(), k["spec"]["schedule"].as_str(), k["spec"]["timeZone"].as_str()),
            (Some("CronJob"), Some("0 3 * * *"), Some("Europe/Berlin"))
        );
        assert_eq!(docs[0]["spec"]["timeZone"].as_str(), Some("Etc/UTC"));
        let container = &k["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"].as_str(), Some("img:1"));
        let command: Vec<&str> =
            container["command"].as_sequence().unwrap().iter().filter_map(|c| c.as_str()).collect();
        assert_eq!(command, ["/project/bin/staging", "operator", "--once", "--op", "nightly"]);
    }

    #[test]
    fn a_cronjob_without_an_image_is_refused_naming_the_flag_and_the_key() {
        let e = image(None, None).unwrap_err();
        let text = e.lines().join(" ");
        assert!(text.contains("--image") && text.contains("`image = \"<image>\"` under `[ci]`"), "{text}");
        assert_eq!(image(Some("reg/p:1"), None).unwrap(), "reg/p:1");
    }

    #[test]
    fn the_recipes_in_docs_operator_md_are_this_codes_output() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/operator.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let r = docs_recipe();
        let inv = docs_invocation();
        let units: String = scheduler::systemd_units(&r.plan, &inv)
            .unwrap()
            .iter()
            .map(|u| format!("# --- {}\n{}", u.name, u.text))
            .collect();
        let operator = scheduler::operator_unit(&inv, None);
        let mut missing = Vec::new();
        for (what, fence, text) in [
            ("github", "yaml", r.github()),
            ("gitlab", "yaml", r.gitlab()),
            ("cronjob", "yaml", r.cronjobs("registry.example.com/staging:1.4.2")),
            ("cron", "cron", scheduler::crontab(&r.plan, &inv)),
            ("systemd", "ini", units),
            ("systemd --operator", "ini", format!("# --- {}\n{}", operator.name, operator.text)),
        ] {
            let block = format!("```{fence}\n{text}```");
            if !doc.contains(&block) {
                missing.push(format!("the generated {what} recipe:\n{block}"));
            }
        }
        assert!(missing.is_empty(), "docs/operator.md lacks {}", missing.join("\n"));
    }
}
