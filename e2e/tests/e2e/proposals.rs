//! Drift to a proposal instead of a change (issue #35, item 11): under the `reconcile` dial a
//! `propose("<op>")` rule writes what the op would change as a commit on
//! `chant/proposals/<env>/<rule>` of the project repository, pushes it to a real bare remote, and
//! changes nothing in the estate; a standing proposal is not rewritten; under a GitHub Actions
//! job the record carries the compare URL.

use super::support::{Sandbox, log, outcome, with_bare_remote};

const BRANCH: &str = "chant/proposals/review/drift-propose";
const FILE: &str = ".chant/proposals/review/drift-propose.md";

/// A project with `[ledger] remote = "origin"` (a bare repository), its `review` estate applied
/// by hand once.
fn project() -> (Sandbox, std::path::PathBuf) {
    let (sandbox, bare) = with_bare_remote(&["review"]);
    sandbox.project(&["run", "review-apply"], &[]).code(0);
    (sandbox, bare)
}

#[test]
fn drift_under_reconcile_is_proposed_on_a_pushed_branch_and_the_estate_is_left_alone() {
    let (sandbox, bare) = project();
    let tick = sandbox.tick("review-converge", &[]);
    assert!(log(&tick).contains("drifted=0"), "{tick}");
    assert_eq!(sandbox.git_out(&sandbox.dir, &["rev-parse", "--verify", "-q", BRANCH]).code, 1, "no drift, no branch");

    std::fs::write(sandbox.path("estates/review/review.conf"), "replicas = 1\n").unwrap();
    let head = sandbox.git(&sandbox.dir, &["rev-parse", "HEAD"]);
    let vars = [("GITHUB_SERVER_URL", "https://github.example"), ("GITHUB_REPOSITORY", "acme/site")];
    let tick = sandbox.tick("review-converge", &vars);
    let o = outcome(&tick, "drift-propose");
    assert_eq!(o["action"], "proposed", "{tick}");
    assert_eq!(o["op"], "review-apply");
    assert_eq!(o["branch"], BRANCH);
    assert_eq!(o["url"], format!("https://github.example/acme/site/compare/main...{BRANCH}"));
    assert!(o["reason"].as_str().unwrap().contains("pushed; nothing in the estate was changed"), "{o}");
    assert!(log(&tick).contains("remediated=0"), "a proposal is not a repair: {tick}");
    assert!(log(&tick).ends_with(" proposed=1"), "{tick}");

    // Nothing in the estate changed, and the project's work tree and HEAD are untouched.
    assert_eq!(sandbox.read("estates/review/review.conf"), "replicas = 1\n");
    assert_eq!(sandbox.git(&sandbox.dir, &["rev-parse", "HEAD"]), head);
    assert_eq!(sandbox.git(&sandbox.dir, &["status", "--porcelain", "--untracked-files=no"]), "");

    // The branch is HEAD plus the proposal, on the remote too.
    let tip = sandbox.git(&sandbox.dir, &["rev-parse", BRANCH]);
    assert_eq!(sandbox.git(&sandbox.dir, &["rev-parse", &format!("{BRANCH}^")]), head);
    let remote_tip = sandbox.git(&bare, &["rev-parse", BRANCH]);
    assert_eq!(remote_tip, tip, "the proposal was pushed");
    let text = sandbox.git(&sandbox.dir, &["show", &format!("{BRANCH}:{FILE}")]);
    assert!(text.contains("# Proposal: run `review-apply` on env `review`"), "{text}");
    assert!(text.contains("A change to the review estate is reviewed by a person"), "the rule's why: {text}");
    assert!(text.contains("update files/review.conf"), "the plan's change line: {text}");
    assert!(text.contains("plan digest: `sha256:"), "{text}");
    let changed = sandbox.git(&sandbox.dir, &["diff", "--name-only", &format!("HEAD..{BRANCH}")]);
    assert_eq!(changed.trim(), FILE, "the commit adds the proposal and nothing else");

    // A standing proposal is not rewritten while nothing changed.
    let again = sandbox.tick("review-converge", &[]);
    let o = outcome(&again, "drift-propose");
    assert_eq!(o["action"], "proposed", "{again}");
    assert!(o["reason"].as_str().unwrap().starts_with("the standing proposal is unchanged"), "{o}");
    assert_eq!(sandbox.git(&sandbox.dir, &["rev-parse", BRANCH]), tip);

    // A different drift rewrites it, on HEAD again, and the remote follows.
    std::fs::write(sandbox.path("estates/review/review.conf"), "replicas = 9\n").unwrap();
    let third = sandbox.tick("review-converge", &[]);
    assert_eq!(outcome(&third, "drift-propose")["action"], "proposed", "{third}");
    let new_tip = sandbox.git(&sandbox.dir, &["rev-parse", BRANCH]);
    assert_ne!(new_tip, tip);
    assert_eq!(sandbox.git(&sandbox.dir, &["rev-parse", &format!("{BRANCH}^")]), head);
    assert_eq!(sandbox.git(&bare, &["rev-parse", BRANCH]), new_tip);
    assert_eq!(sandbox.read("estates/review/review.conf"), "replicas = 9\n", "still untouched");

    // The person's way: review, then run the op.
    sandbox.project(&["run", "review-apply"], &[]).code(0);
    let healed = sandbox.tick("review-converge", &[]);
    assert!(log(&healed).contains("drifted=0"), "{healed}");
}

#[test]
fn a_proposal_that_cannot_be_pushed_is_written_locally_and_says_so() {
    let (sandbox, bare) = project();
    std::fs::remove_dir_all(&bare).unwrap();
    std::fs::write(sandbox.path("estates/review/review.conf"), "replicas = 1\n").unwrap();
    // The lease lives on the remote too, so a tick that cannot reach it runs by hand without one.
    let tick = sandbox.project(&["tick", "review-converge", "--json", "--no-lease"], &[]).code(0).json();
    let o = outcome(&tick, "drift-propose");
    assert_eq!(o["action"], "proposed", "{tick}");
    let reason = o["reason"].as_str().unwrap();
    assert!(reason.contains("; not pushed ("), "{reason}");
    assert!(reason.contains("the next tick pushes again"), "{reason}");
    assert_eq!(o.get("url"), None, "no CI job, no link: {o}");
    assert_eq!(sandbox.git_out(&sandbox.dir, &["rev-parse", "--verify", "-q", BRANCH]).code, 0);
}
