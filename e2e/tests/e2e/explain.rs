//! `explain <tick-id>`: one recorded tick of `site-converge`, each outcome with its rule's why,
//! its predicate read against the recorded symptom, the run its dispatch wrote, and `git blame`
//! of the rule's source line naming the commit that last changed that line, in a real repository
//! holding the fixture's real source at the path the tick recorded.

use std::path::Path;

use super::support::{Sandbox, config_with_roots, run_key};

/// Commits `text` at `path` in the sandbox's project repository as `author`, returning the commit.
fn commit(sandbox: &Sandbox, path: &str, text: &str, author: &str, message: &str) -> String {
    let file = sandbox.path(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    sandbox.git(&sandbox.dir, &["add", path]);
    sandbox.git(&sandbox.dir, &["commit", "-q", "--author", author, "-m", message]);
    sandbox.git(&sandbox.dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

/// `text` with its `line`th line (1-based) ending in `suffix`.
fn edit_line(text: &str, line: usize, suffix: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[line - 1].push_str(suffix);
    lines.join("\n") + "\n"
}

#[test]
fn explain_names_the_commit_that_last_changed_the_rule_line_and_what_it_read() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    // Where the tick will say its rule was written: the plan carries the same source.
    let plan = sandbox.project(&["tick", "site-converge", "--plan", "--json"], &[]).code(0).json();
    let source = &plan["outcomes"][0]["source"];
    assert_eq!(plan["outcomes"][0]["ruleId"], "first-apply", "{plan}");
    let (file, line) = (source["file"].as_str().unwrap().to_owned(), source["line"].as_u64().unwrap() as usize);
    let real = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ops.rs")).unwrap();
    assert!(real.lines().nth(line - 1).unwrap().contains("\"unrecorded\""), "the recorded line is the rule's when!");

    // Three commits: the file, then the rule's line, then another line. Blame must name the second.
    commit(&sandbox, &file, &real, "First Author <first@e2e.invalid>", "ops: the fixture's ops");
    let edited = edit_line(&real, line, " // first apply");
    let rule_commit = commit(&sandbox, &file, &edited, "Rule Author <rule@e2e.invalid>", "rules: annotate first-apply");
    let later = edit_line(&edited, 1, " (annotated)");
    let head = commit(&sandbox, &file, &later, "Later Author <later@e2e.invalid>", "docs: annotate the module");

    let tick = sandbox.tick("site-converge", &[]);
    assert_eq!(tick["gitSha"], head.as_str());
    let id = tick["id"].as_str().unwrap();
    let x = sandbox.project(&["explain", id, "--json"], &[]).code(0).json();
    assert_eq!(x["tick"]["id"], id);
    assert_eq!(x["tick"]["tableChanged"], false);
    let o = &x["outcomes"][0];
    assert_eq!(o["ruleId"], "first-apply");
    assert_eq!(o["why"], "Nothing has been applied yet; the first apply establishes the estate.");
    assert_eq!(o["when"], "eq(status, \"unrecorded\")");
    assert_eq!(o["reads"][0]["read"], "\"unrecorded\"");
    assert_eq!(o["reads"][0]["holds"], true);
    let run = sandbox.values(&run_key("site", "site-apply")).pop().unwrap();
    assert_eq!(o["run"]["id"], run["id"], "the run the dispatch wrote");
    assert_eq!(o["run"]["status"], "ok");
    assert_eq!(o["blame"]["commit"], rule_commit.as_str(), "{x}");
    assert_eq!(o["blame"]["author"], "Rule Author");
    assert_eq!(o["blame"]["summary"], "rules: annotate first-apply");
    assert_eq!(o["blamedAt"], head.as_str(), "blamed at the commit the tick ran from");
    assert!(o["blame"]["text"].as_str().unwrap().ends_with("// first apply"), "{x}");

    // By an eight-character prefix, for a person.
    let text = sandbox.project(&["explain", &id[..8]], &[]);
    text.code(0);
    for needle in [
        "first-apply: ran → site-apply".to_owned(),
        "  when: eq(status, \"unrecorded\")".to_owned(),
        "    eq(status, \"unrecorded\") read status = \"unrecorded\": holds".to_owned(),
        format!("  source: {file}:{line}"),
        format!("  blame ({head}): {rule_commit} Rule Author <rule@e2e.invalid>"),
    ] {
        assert!(text.stdout.contains(&needle), "{needle}\n{}", text.all());
    }
}

#[test]
fn an_unknown_tick_id_exits_2_naming_the_ops_known_range() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let first = sandbox.tick("site-converge", &[]);
    let last = sandbox.tick("site-converge", &[]);
    let out = sandbox.project(&["explain", "ffffffff-0000-0000-0000-000000000000", "--op", "site-converge"], &[]);
    out.code(2);
    let (a, b) = (&first["id"].as_str().unwrap()[..8], &last["id"].as_str().unwrap()[..8]);
    let range = format!(
        "hint: site-converge: 2 tick(s), from {} [{a}] to {} [{b}]",
        first["timestamp"].as_str().unwrap(),
        last["timestamp"].as_str().unwrap()
    );
    assert!(
        out.stderr.contains("error: no recorded tick has the id \"ffffffff-0000-0000-0000-000000000000\""),
        "{}",
        out.all()
    );
    assert!(out.stderr.contains(&range), "{range}\n{}", out.all());
    let everywhere = sandbox.project(&["explain", "nope"], &[]);
    everywhere.code(2);
    assert!(everywhere.stderr.contains("a prefix needs at least 8 characters"), "{}", everywhere.all());
    assert!(everywhere.stderr.contains("hint: busy-converge: no ticks recorded"), "{}", everywhere.all());
    sandbox.project(&["explain", &first["id"].as_str().unwrap()[..8], "--op", "site-apply"], &[]).code(2);
}

/// `explain <op>` is what a person types first: the op's newest tick, the same explanation its
/// id gives; an op with no tick yet says how to make one.
#[test]
fn a_converge_ops_name_explains_its_newest_tick() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let none = sandbox.project(&["explain", "site-converge"], &[]);
    none.code(2);
    assert!(none.stderr.contains("error: `site-converge` has no recorded tick yet"), "{}", none.all());
    assert!(none.stderr.contains("hint: run one: `tick site-converge`"), "{}", none.all());
    sandbox.tick("site-converge", &[]);
    let newest = sandbox.tick("site-converge", &[]);
    let id = newest["id"].as_str().unwrap();
    let by_name = sandbox.project(&["explain", "site-converge", "--json"], &[]).code(0).json();
    assert_eq!(by_name["tick"]["id"], id, "{by_name}");
    assert_eq!(by_name, sandbox.project(&["explain", id, "--json"], &[]).code(0).json());
    // A mutating op is no ConvergeOp, and a misspelt name is answered with the op meant.
    let op = sandbox.project(&["explain", "site-apply"], &[]);
    op.code(2);
    assert!(op.stderr.contains("`site-apply` is an `op!`, not a ConvergeOp"), "{}", op.all());
    let typo = sandbox.project(&["explain", "site-convrge"], &[]);
    typo.code(2);
    assert!(typo.stderr.contains("did you mean the ConvergeOp `site-converge`?"), "{}", typo.all());
}

/// A project before its first commit (as `chant init` leaves it) has nothing to blame: the
/// explanation says to commit, not git's `bad revision 'HEAD'`.
#[test]
fn before_the_first_commit_explain_says_to_commit_the_rules() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    sandbox.git(&sandbox.dir, &["checkout", "-q", "--orphan", "unborn"]);
    let tick = sandbox.tick("site-converge", &[]);
    assert!(tick.get("gitSha").is_none_or(serde_json::Value::is_null), "{tick}");
    let out = sandbox.project(&["explain", "site-converge"], &[]);
    out.code(0);
    assert!(out.stdout.contains("blame: the repository has no commit yet: commit "), "{}", out.all());
    assert!(!out.stdout.contains("bad revision"), "{}", out.all());
}

#[test]
fn rule_sources_are_relative_to_the_repository_root_so_git_blame_finds_them() {
    let sandbox = Sandbox::new(&config_with_roots(&[]));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let docs = sandbox.project(&["ops", "--json"], &[]).code(0).json();
    let mut seen = 0;
    for rule in docs.as_array().unwrap().iter().filter_map(|d| d["converge"]["rules"].as_array()).flatten() {
        let (file, line) = (rule["source"]["file"].as_str().unwrap(), rule["source"]["line"].as_u64().unwrap());
        assert!(file.starts_with("e2e/src/"), "{file}");
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(text.lines().nth(line as usize - 1).unwrap().trim_start().starts_with("when!("), "{file}:{line}");
        seen += 1;
    }
    assert!(seen > 10, "{seen}");
    // `git blame <file> -L <line>` at the repository root, as the seed promises.
    let first =
        &docs.as_array().unwrap().iter().find(|d| d["name"] == "site-converge").unwrap()["converge"]["rules"][0];
    let range = format!("{0},{0}", first["source"]["line"]);
    let blamed =
        sandbox.git_out(root, &["blame", "--porcelain", "-L", &range, "--", first["source"]["file"].as_str().unwrap()]);
    assert_eq!(blamed.code, 0, "{}", blamed.stderr);
    assert!(blamed.stdout.contains("drift-apply"), "{}", blamed.stdout);
}
