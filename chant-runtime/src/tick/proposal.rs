//! Proposals: what a `propose("<op>")` rule writes instead of changing the estate.
//!
//! A tick whose `propose()` rule fires writes what its target op would change as one commit on
//! the branch `chant/proposals/<env>/<rule>` of the project repository: the commit is the
//! repository's `HEAD` with one file added, `.chant/proposals/<env>/<rule>.md`, which holds the
//! rule, its `why`, the symptom's drifted paths and, for each `apply` or `teardown` step of the
//! op, the plan a gate before it would guard (the same [`GatePlan`] and `sha256:` digest), and
//! every other step the op would run, in order. Nothing in the estate changes.
//!
//! The branch moves only when the proposal's text changes (a standing proposal is not
//! rewritten every tick) or `HEAD` moved; it is moved by compare-and-swap from the tip the tick
//! read, and pushed to the ledger's remote when `[ledger] remote` names one, under a lease on
//! the remote's tip, so two operators proposing at once cannot overwrite each other silently.
//! Under a GitHub Actions or GitLab CI job the compare URL of the branch is recorded beside it.

use std::fmt::Write as _;

use chant_lexicon::model::{OpDocument, Rule};
use chant_store::git::ObjectId;

use crate::gate::plan::{self as gate_plan, GatePlan};
use crate::project::{Project, RunServices};
use crate::runner::Services as _;

use super::record::DriftedPath;

/// The prefix of every proposal branch: `chant/proposals/<env>/<rule>`.
pub const BRANCH_PREFIX: &str = "chant/proposals";

/// How the reason of a `proposed` outcome begins when this tick wrote the proposal (a new branch,
/// or a new text on it); a standing proposal found unchanged begins with [`UNCHANGED`].
pub const WRITTEN: &str = "proposed: ";

/// How the reason of a `proposed` outcome begins when the standing proposal was unchanged.
pub const UNCHANGED: &str = "the standing proposal is unchanged: ";

/// How long a proposal's push may take before it is stopped and reported.
pub const PUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Returns the branch a proposal of `rule` for `env` is written to.
pub fn branch(env: &str, rule: &str) -> String {
    format!("{BRANCH_PREFIX}/{env}/{rule}")
}

/// Returns the path of the proposal's file in the commit.
pub fn file_path(env: &str, rule: &str) -> String {
    format!(".chant/proposals/{env}/{rule}.md")
}

/// Why a proposal could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The project repository has no commit to propose on.
    #[error("the project repository has no commit yet (HEAD is unborn), so there is nothing to propose a branch from")]
    NoHead,
    /// The target op is not compiled into this binary.
    #[error("propose(\"{0}\") names no op compiled into this binary")]
    UnknownOp(String),
    /// A step's `${VAR}` did not expand.
    #[error("cannot expand a step of {op}: {source}")]
    Expand {
        /// The op.
        op: String,
        /// Why.
        #[source]
        source: chant_core::template::ExpandError,
    },
    /// The plan of a step could not be computed.
    #[error("cannot compute what {op} would change in env {env}: {source}")]
    Plan {
        /// The op.
        op: String,
        /// The env.
        env: String,
        /// Why.
        #[source]
        source: crate::runner::ServiceError,
    },
    /// The repository could not be read or written.
    #[error(transparent)]
    Git(#[from] chant_store::git::Error),
    /// Another writer moved the branch between the read and the write.
    #[error("the branch {0} moved while this proposal was written; the next tick proposes again")]
    Moved(String),
}

/// What became of the proposal on the remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// No `[ledger] remote` is configured.
    NoRemote,
    /// The remote holds the branch as written.
    Landed,
    /// The push did not land; why, redacted.
    NotPushed(String),
}

/// A proposal as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The branch (`chant/proposals/<env>/<rule>`).
    pub branch: String,
    /// The commit the branch points at.
    pub commit: ObjectId,
    /// False when the branch already held this proposal on the current `HEAD` (nothing written).
    pub changed: bool,
    /// The remote's copy.
    pub pushed: Pushed,
    /// Where the branch can be compared with the default branch, under a CI job that says.
    pub compare_url: Option<String>,
}

impl Written {
    /// The outcome's reason: what was written where.
    pub fn reason(&self, op: &str) -> String {
        let short = &self.commit.to_string()[..12];
        let what = if self.changed { WRITTEN } else { UNCHANGED };
        let pushed = match &self.pushed {
            Pushed::NoRemote => String::new(),
            Pushed::Landed => "; pushed".to_owned(),
            Pushed::NotPushed(why) => format!("; not pushed ({why}): the next tick pushes again"),
        };
        format!(
            "{what}what \"{op}\" would change is on branch {} (commit {short}){pushed}; nothing in the estate was changed, review and run `chant run {op}`",
            self.branch
        )
    }
}

/// What a proposal is about.
pub struct Request<'a> {
    /// The ConvergeOp whose rule fired.
    pub converge_op: &'a str,
    /// The op's member, in a workspace.
    pub member: Option<&'a str>,
    /// The env.
    pub env: &'a str,
    /// The rule.
    pub rule: &'a Rule,
    /// The op whose change is proposed.
    pub target: &'a str,
    /// The resource, in resource mode.
    pub resource: Option<&'a str>,
    /// The drifted paths the tick observed.
    pub drifted: &'a [DriftedPath],
    /// The tick's start.
    pub now: jiff::Timestamp,
}

/// Writes the proposal of `request` and pushes it when a remote is configured.
///
/// # Errors
///
/// [`Error`] when nothing could be written; a failed push is a [`Pushed::NotPushed`].
pub fn write(project: &Project, request: &Request<'_>) -> Result<Written, Error> {
    let target = project.catalog.get(request.target).ok_or_else(|| Error::UnknownOp(request.target.to_owned()))?;
    let text = render(project, request, target)?;
    let repo = project.ledger.repo().local();
    let head = repo.head_commit().ok_or(Error::NoHead)?;
    let branch = branch(request.env, request.rule.id.as_str());
    let full = format!("refs/heads/{branch}");
    let tip = repo.read_ref(&full)?;
    let path = file_path(request.env, request.rule.id.as_str());
    // A standing proposal on the current HEAD with the same text is left as it is.
    if let Some(tip) = tip
        && repo.first_parent(tip)? == Some(head)
    {
        let info = repo.commit_info(tip)?;
        if let Some(entry) = repo.tree_entry(info.tree, &path)?
            && repo.read_blob(entry.id)? == text.as_bytes()
        {
            let pushed = push(project, &full, tip);
            let compare_url = compare_url(&branch);
            return Ok(Written { branch, commit: tip, changed: false, pushed, compare_url });
        }
    }
    let blob = repo.write_blob(text.as_bytes())?;
    let tree = repo.edit_tree(Some(repo.commit_info(head)?.tree), &[(path, blob)])?;
    let message = format!(
        "chant: propose {} for {} ({})\n\nRule {} of {}: {}\n",
        request.target, request.env, request.rule.id, request.rule.id, request.converge_op, request.rule.why
    );
    let commit = repo.write_commit(tree, &[head], &project.redactor.record(&message), request.now)?;
    repo.update_ref(&full, commit, tip, "chant: proposal").map_err(|_| Error::Moved(branch.clone()))?;
    let pushed = push(project, &full, commit);
    let compare_url = compare_url(&branch);
    Ok(Written { branch, commit, changed: true, pushed, compare_url })
}

/// Pushes `full` at `commit` to the ledger's remote, forcing it over whatever tip the remote had
/// (a proposal branch is chant's own, rewritten as HEAD moves) under a lease on that tip.
fn push(project: &Project, full: &str, commit: ObjectId) -> Pushed {
    let Some(remote) = project.ledger.config().remote.as_deref() else { return Pushed::NoRemote };
    let git = chant_store::git::cmd::Git::new(project.ledger.repo().local().git_dir(), PUSH_TIMEOUT);
    let redact = |s: &str| project.redactor.record(s);
    // The remote's tip, read first: the lease is on what was seen, never a blind force.
    let seen = match git.run("ls-remote", &["ls-remote", "--", remote, full]) {
        Ok(out) if out.success() => {
            out.stdout.split_whitespace().next().and_then(|hex| ObjectId::from_hex(hex.as_bytes()).ok())
        }
        Ok(out) => return Pushed::NotPushed(redact(&chant_store::git::porcelain::first_error_line(&out.stderr))),
        Err(e) => return Pushed::NotPushed(redact(&chant_store::error::chain(&e))),
    };
    if seen == Some(commit) {
        return Pushed::Landed;
    }
    match git.push_with_lease(remote, commit, full, seen) {
        Ok(chant_store::git::cmd::Pushed::Landed) => Pushed::Landed,
        Ok(chant_store::git::cmd::Pushed::Refused(refusal)) => {
            Pushed::NotPushed(redact(&format!("the remote refused it: {refusal:?}")))
        }
        Ok(chant_store::git::cmd::Pushed::Failed(why)) => Pushed::NotPushed(redact(&why)),
        Err(e) => Pushed::NotPushed(redact(&chant_store::error::chain(&e))),
    }
}

/// The compare URL of `branch` under a GitHub Actions job (`GITHUB_SERVER_URL`,
/// `GITHUB_REPOSITORY`) or a GitLab CI job (`CI_PROJECT_URL`), against the job's default branch
/// when it names one; `None` elsewhere (never a synthesised link).
pub fn compare_url(branch: &str) -> Option<String> {
    compare_url_from(branch, &|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
}

/// [`compare_url`] over a variable lookup.
pub fn compare_url_from(branch: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let (Some(server), Some(repo)) = (var("GITHUB_SERVER_URL"), var("GITHUB_REPOSITORY")) {
        let base = var("GITHUB_BASE_REF").or_else(|| var("GITHUB_REF_NAME")).unwrap_or_else(|| "main".to_owned());
        return Some(format!("{}/{repo}/compare/{base}...{branch}", server.trim_end_matches('/')));
    }
    let project = var("CI_PROJECT_URL")?;
    let base = var("CI_DEFAULT_BRANCH").unwrap_or_else(|| "main".to_owned());
    Some(format!("{}/-/compare/{base}...{branch}", project.trim_end_matches('/')))
}

/// The proposal's text: markdown a reviewer reads in the pull request.
fn render(project: &Project, request: &Request<'_>, target: &OpDocument) -> Result<String, Error> {
    let services = RunServices { project, member: request.member };
    let mut out = String::new();
    let _ = writeln!(out, "# Proposal: run `{}` on env `{}`\n", request.target, request.env);
    let _ = writeln!(
        out,
        "Written by chant's ConvergeOp `{}`, rule `{}`{}: nothing in the estate was changed.\n",
        request.converge_op,
        request.rule.id,
        request.resource.map(|r| format!(", resource `{r}`")).unwrap_or_default()
    );
    let _ = writeln!(out, "Why the rule exists: {}\n", request.rule.why);
    if !request.drifted.is_empty() {
        let _ = writeln!(out, "## What drifted\n\n```");
        for d in request.drifted {
            let _ = writeln!(out, "{}", d.line());
        }
        let _ = writeln!(out, "```\n");
    }
    let _ = writeln!(out, "## What `{}` would do\n", request.target);
    for step in target.phases.iter().flat_map(|p| &p.steps) {
        let step = step
            .expanded(&crate::runner::expand::from_env)
            .map_err(|source| Error::Expand { op: request.target.to_owned(), source })?;
        match gate_plan::target(&step) {
            Some((verb, env)) => {
                let plan: Option<GatePlan> = services.plan(verb, &env).map_err(|source| Error::Plan {
                    op: request.target.to_owned(),
                    env: env.clone(),
                    source,
                })?;
                match plan {
                    Some(plan) => {
                        let _ =
                            writeln!(out, "```\n{}\n```\nplan digest: `{}`\n", plan.lines().join("\n"), plan.digest());
                    }
                    None => {
                        let _ =
                            writeln!(out, "- `{}` on env `{env}` (its plan could not be computed here)", step.kind());
                    }
                }
            }
            None => {
                let name = step.name().map(|n| format!(" `{n}`")).unwrap_or_default();
                let _ = writeln!(out, "- step `{}`{name} ({})", step.kind(), step.class().as_str());
            }
        }
    }
    let _ = writeln!(
        out,
        "\nTo make the change: `chant run {}`. Merging this branch records the review; it changes nothing by itself.",
        request.target
    );
    // Redacted as every record is; kept multi-line (a record's one-line sanitising would cut it),
    // with any other control character (an escape sequence in a drifted value) made a space.
    let text = project.redactor.redact(&out);
    Ok(text.chars().map(|c| if c.is_control() && c != '\n' { ' ' } else { c }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_urls_come_only_from_a_ci_job_that_names_its_repository() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        let github = vars(&[("GITHUB_SERVER_URL", "https://github.com/"), ("GITHUB_REPOSITORY", "acme/site")]);
        assert_eq!(
            compare_url_from("chant/proposals/prod/fix", &github).as_deref(),
            Some("https://github.com/acme/site/compare/main...chant/proposals/prod/fix")
        );
        let gitlab = vars(&[("CI_PROJECT_URL", "https://gitlab.example/acme/site"), ("CI_DEFAULT_BRANCH", "trunk")]);
        assert_eq!(
            compare_url_from("chant/proposals/prod/fix", &gitlab).as_deref(),
            Some("https://gitlab.example/acme/site/-/compare/trunk...chant/proposals/prod/fix")
        );
        assert_eq!(compare_url_from("b", &vars(&[("GITHUB_REPOSITORY", "acme/site")])), None, "no server, no link");
        assert_eq!(compare_url_from("b", &vars(&[])), None);
    }

    #[test]
    fn the_branch_and_file_are_named_after_the_env_and_the_rule() {
        assert_eq!(branch("prod", "drift-propose"), "chant/proposals/prod/drift-propose");
        assert_eq!(file_path("prod", "drift-propose"), ".chant/proposals/prod/drift-propose.md");
    }
}
