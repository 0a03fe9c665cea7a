//! The README's main command: `cargo run --bin staging-converge` on a fresh clone applies the
//! example estate (`remediated=1`), finds it in sync on the second tick, and restores a declared
//! file that was edited or deleted. Once on the real example binary in a clone of this
//! repository, once on the fixture (which adds a mode drift), and the stock binary's identity.
//!
//! Assumption: the example binary is the one `cargo test --workspace` builds next to this
//! package's binaries (`target/<profile>/staging-converge`; every bin of a package whose tests
//! run is built). The test does not build it: run the suite with `--workspace`, or build
//! `chant-examples` first.

use std::path::{Path, PathBuf};

use super::support::{PROJECT, Sandbox, apply_key, config_with_roots, log, run_key};

/// The example binary, beside this package's binaries in the same target directory.
fn staging_converge() -> PathBuf {
    let dir = Path::new(PROJECT).parent().unwrap();
    let bin = dir.join(format!("staging-converge{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: this test runs the example binary that `cargo test --workspace` builds; run the suite with --workspace, or `cargo build -p chant-examples` first",
        bin.display()
    );
    bin
}

/// The repository this suite lives in (the workspace root).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Runs the README's command in `dir` and returns its summary line.
fn tick(sandbox: &Sandbox, bin: &str, dir: &Path) -> String {
    let out = sandbox.run_in(bin, dir, &[], &[]);
    out.code(0);
    // The line leads with the health word; the counters follow from `converge(`.
    let line = out.stdout.lines().find_map(|l| l.find("converge(").map(|at| l[at..].to_owned())).unwrap_or_default();
    assert!(!line.is_empty(), "no summary line\n{}", out.all());
    line
}

#[test]
fn the_readme_flow_on_a_fresh_clone_of_the_example() {
    let bin = staging_converge();
    let sandbox = Sandbox::new(&config_with_roots(&[]));
    let clone = sandbox.root().join("clone");
    let url = format!("file://{}", workspace_root().display());
    let clone_arg = clone.display().to_string();
    sandbox.git(sandbox.root(), &["-c", "advice.detachedHead=false", "clone", "-q", "--depth", "1", &url, &clone_arg]);
    assert_eq!(sandbox.tip_of(&clone), None, "a fresh clone has no ledger yet");
    let bin = bin.to_str().unwrap();
    let estate = clone.join("examples/estates/staging");
    assert!(!estate.exists(), "the estate is git-ignored, so a fresh clone has none");

    let first = tick(&sandbox, bin, &clone);
    assert!(first.contains("remediated=1"), "{first}");
    let app = std::fs::read_to_string(estate.join("app.conf")).unwrap();
    assert!(app.contains("port = 8080"), "{app}");
    assert!(estate.join("motd.txt").is_file());

    let second = tick(&sandbox, bin, &clone);
    assert!(second.contains("drifted=0 remediated=0"), "{second}");

    std::fs::write(estate.join("app.conf"), "tampered\n").unwrap();
    let third = tick(&sandbox, bin, &clone);
    assert!(third.contains("remediated=1"), "{third}");
    assert_eq!(std::fs::read_to_string(estate.join("app.conf")).unwrap(), app);

    std::fs::remove_file(estate.join("motd.txt")).unwrap();
    let fourth = tick(&sandbox, bin, &clone);
    assert!(fourth.contains("remediated=1"), "{fourth}");
    assert!(estate.join("motd.txt").is_file());

    // Every tick is on the clone's own ledger branch; HEAD and the work tree are untouched.
    let ticks = sandbox.git(&clone, &["log", "--format=%s", super::support::BRANCH]);
    assert!(ticks.lines().count() >= 4 + 3 * 2, "4 ticks, 3 runs and 3 applies: {ticks}");
    assert_eq!(sandbox.git(&clone, &["status", "--porcelain"]), "");
}

#[test]
fn the_readme_flow_on_the_fixture_restores_content_mode_and_deleted_files() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let first = sandbox.tick("site-converge", &[]);
    assert!(log(&first).contains("remediated=1"), "{first}");
    assert_eq!(first["outcomes"][0]["ruleId"], "first-apply");
    assert_eq!(sandbox.read("estates/site/app.conf"), chant_e2e::declaration::SITE_APP_CONF);
    assert_eq!(sandbox.mode("estates/site/bin/start.sh"), 0o755);
    assert_eq!(sandbox.values(&apply_key("site")).len(), 1, "the apply is recorded");
    assert_eq!(sandbox.values(&run_key("site", "site-apply"))[0]["status"], "ok");

    let second = sandbox.tick("site-converge", &[]);
    assert!(log(&second).contains("drifted=0 remediated=0"), "{second}");
    assert_eq!(second["outcomes"], serde_json::json!([]));
    assert_eq!(second["components"][0]["reconciliation"], "reconciled");

    // Content and mode drift: one tick restores both.
    std::fs::write(sandbox.path("estates/site/app.conf"), "port = 1\n").unwrap();
    let script = sandbox.path("estates/site/bin/start.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let third = sandbox.tick("site-converge", &[]);
    assert!(log(&third).contains("drifted=2 remediated=1"), "{third}");
    assert_eq!(third["outcomes"][0]["ruleId"], "drift-apply");
    assert_eq!(sandbox.read("estates/site/app.conf"), chant_e2e::declaration::SITE_APP_CONF);
    assert_eq!(sandbox.mode("estates/site/bin/start.sh"), 0o755);

    std::fs::remove_file(sandbox.path("estates/site/motd.txt")).unwrap();
    let fourth = sandbox.tick("site-converge", &[]);
    assert!(log(&fourth).contains("drifted=1 remediated=1"), "{fourth}");
    assert!(sandbox.path("estates/site/motd.txt").is_file());

    let fifth = sandbox.tick("site-converge", &[]);
    assert!(log(&fifth).contains("drifted=0 remediated=0"), "{fifth}");
    assert_eq!(sandbox.values(&apply_key("site")).len(), 3, "three applies, each recorded");
}

#[test]
fn the_stock_binary_carries_no_ops() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let out = sandbox.stock(&["ops"], &[]);
    out.code(0);
    assert!(out.stderr.contains("the stock chant binary carries no ops"), "{}", out.all());
    let out = sandbox.stock(&["run", "site-apply"], &[]);
    out.code(2);
    assert!(out.stderr.contains("use the project's own binary"), "{}", out.all());
    assert_eq!(sandbox.tip(), None);
}

/// The README's list of symptom fields is the compiler's: every field `when!` accepts, in the
/// contract's order, and no other (`chant::model::contract`'s tables, which the macros check
/// rules against).
#[test]
fn the_readmes_field_list_is_every_field_the_compiler_accepts() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let start = readme.find("written in snake_case:").expect("the README lists the symptom fields");
    let text = &readme[start..];
    let list = |open: &str| -> Vec<String> {
        let from = text.find(open).unwrap() + open.len();
        let to = from + text[from..].find('`').unwrap();
        text[from..to].split(',').map(|f| f.split_whitespace().collect::<String>()).collect()
    };
    let converge: Vec<&str> = chant::model::contract::CONVERGE_FIELDS.iter().map(|f| f.snake).collect();
    let resource: Vec<&str> = chant::model::contract::RESOURCE_FIELDS.iter().map(|f| f.snake).collect();
    assert_eq!(list("snake_case:\n  `"), converge, "the README's ConvergeSymptom fields");
    assert_eq!(list("(in resource mode: `"), resource, "the README's ResourceSymptom fields");
}
