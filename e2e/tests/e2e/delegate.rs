//! The stock `chant` binary drives the project's ops: inside a project it builds the project
//! binary when it is missing or stale and runs it with the same arguments, so the seed's commands
//! (`chant run staging-converge`, `chant operator --once`, `chant approve ...`) work as written.
//!
//! The fixture tests point the stock binary at the fixture's project binary with
//! `CHANT_PROJECT_BIN` and hold its output to the project binary's own, byte for byte; the clone
//! test lets it find, build and run the examples' binaries in a fresh clone of this repository
//! (a real `cargo build` into a target directory of its own beside this suite's, kept warm
//! between runs).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::support::{BRANCH, PROJECT, STOCK, Sandbox, config_with_roots, converge_key};

/// The fixed clock every compared run uses.
const NOW: &str = "2026-03-01T10:00:00.000Z";

#[test]
fn run_of_a_converge_op_is_one_tick() {
    let sandbox = Sandbox::new(&config_with_roots(&["site"]));
    let by_run = sandbox.project(&["run", "site-converge", "--json"], &[("CHANT_NOW", NOW)]);
    by_run.code(0);
    let by_run = by_run.json();
    let by_tick = sandbox.tick("site-converge", &[("CHANT_NOW", NOW)]);
    // `verified` is there only on a tick that dispatched (the first): the observation after it.
    let keys =
        |v: &serde_json::Value| v.as_object().unwrap().keys().filter(|k| *k != "verified").cloned().collect::<Vec<_>>();
    assert_eq!(keys(&by_run), keys(&by_tick), "run prints a tick record");
    assert_eq!(by_run["verified"], true, "{by_run}");
    assert!(by_run["log"].as_str().unwrap().contains("remediated=1"), "{by_run}");
    assert!(by_tick["log"].as_str().unwrap().contains("drifted=0"), "{by_tick}");
    assert_eq!(sandbox.values(&converge_key("site", "site-converge")).len(), 2, "both are ticks on the ledger");
}

/// `text` with every run id (a UUID) replaced, so two sandboxes' outputs compare.
fn mask_ids(text: &str) -> String {
    text.split(' ')
        .map(|w| {
            let core = w.trim_end_matches([')', ';', ',']);
            let uuid = core.len() == 36 && core.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
            if uuid { w.replacen(core, "<id>", 1) } else { w.to_owned() }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lines of `text` that start with one of `prefixes`.
fn lines_with(text: &str, prefixes: &[&str]) -> Vec<String> {
    text.lines().filter(|l| prefixes.iter().any(|p| l.starts_with(p))).map(str::to_owned).collect()
}

#[test]
fn the_stock_binary_answers_exactly_as_the_project_binary() {
    let config = config_with_roots(&["site"]);
    let (stock, project) = (Sandbox::new(&config), Sandbox::new(&config));
    let via = [("CHANT_PROJECT_BIN", PROJECT), ("CHANT_NOW", NOW)];
    let direct = [("CHANT_NOW", NOW)];

    let a = stock.stock(&["operator", "--once"], &via);
    let b = project.project(&["operator", "--once"], &direct);
    assert_eq!(a.code, b.code, "operator --once\n{}\n{}", a.all(), b.all());
    let rounds = lines_with(&a.all(), &["operator: "]);
    assert_eq!(rounds, lines_with(&b.all(), &["operator: "]), "operator --once\n{}\n{}", a.all(), b.all());
    assert!(rounds.iter().any(|l| l.starts_with("operator: site-converge@site ticked=1")), "{}", a.all());

    let a = stock.stock(&["run", "site-release"], &via);
    let b = project.project(&["run", "site-release"], &direct);
    a.code(3);
    b.code(3);
    let gated = ["Op \"site-release\" is gated", "  approve :"];
    assert_eq!(lines_with(&a.stderr, &gated).len(), 2, "{}", a.all());
    assert_eq!(lines_with(&a.stderr, &gated), lines_with(&b.stderr, &gated), "a gated run\n{}\n{}", a.all(), b.all());
    assert_eq!(a.stdout, b.stdout);

    let a = stock.stock(&["approve", "site-release", "release", "--actor", "ops"], &via);
    let b = project.project(&["approve", "site-release", "release", "--actor", "ops"], &direct);
    a.code(0);
    assert_eq!((a.code, mask_ids(&a.stdout)), (b.code, mask_ids(&b.stdout)), "approve\n{}\n{}", a.all(), b.all());
    assert!(a.stdout.contains("approved gate \"release\""), "{}", a.all());
    stock.stock(&["run", "site-release"], &via).code(0);
}

#[test]
fn outside_a_project_the_stock_binary_says_what_it_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = super::support::hermetic(STOCK, &home).current_dir(dir.path()).args(["tick", "x"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no chant.toml in") && stderr.contains("use the project's own binary"), "{stderr}");
}

#[test]
fn two_candidate_bins_without_a_configured_one_are_a_usage_error_listing_both() {
    let sandbox = Sandbox::new(&config_with_roots(&[]));
    let chant = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("chant");
    std::fs::write(
        sandbox.path("Cargo.toml"),
        format!(
            "[package]\nname = \"two-bins\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n\n[dependencies]\nchant = {{ package = \"chant-ops\", path = {:?}, features = [\"full\"] }}\n",
            chant.display().to_string()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(sandbox.path("src/bin")).unwrap();
    for b in ["alpha", "beta"] {
        std::fs::write(sandbox.path(&format!("src/bin/{b}.rs")), "chant::main!();\n").unwrap();
    }
    let out = Out::of(cargo_command(&sandbox, STOCK, &sandbox.dir, &["tick", "x"], None));
    assert_eq!(out.0, Some(2), "{}", out.1);
    for needle in ["alpha (two-bins)", "beta (two-bins)", "[project]", "bin = "] {
        assert!(out.1.contains(needle), "{needle}: {}", out.1);
    }
}

/// A hermetic command that can run cargo: the toolchain's homes, the `cargo` this suite was built
/// with, and (when given) a target directory.
fn cargo_command(
    sandbox: &Sandbox,
    program: &str,
    dir: &Path,
    args: &[&str],
    target: Option<&Path>,
) -> std::process::Command {
    let mut cmd = sandbox.command(program, dir, args, &[]);
    let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{real_home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{real_home}/.rustup"));
    cmd.env("CARGO_HOME", cargo_home).env("RUSTUP_HOME", rustup_home);
    // The toolchain this suite runs on, for every rustc cargo starts (a registry crate's build
    // runs in its own directory, where no rust-toolchain.toml pins one), and never an install.
    cmd.env("RUSTUP_AUTO_INSTALL", "0");
    for var in ["CARGO", "RUSTUP_TOOLCHAIN", "RUSTC"] {
        if let Ok(value) = std::env::var(var) {
            cmd.env(var, value);
        }
    }
    if let Some(t) = target {
        cmd.env("CARGO_TARGET_DIR", t);
    }
    cmd
}

/// How a child ended: its code and everything it printed.
struct Out(Option<i32>, String, String);

impl Out {
    fn of(mut cmd: std::process::Command) -> Out {
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        Out(out.status.code(), format!("{stdout}{stderr}"), stdout)
    }
}

/// The target directory the clone test builds into: beside this suite's, so it stays warm.
fn clone_target() -> PathBuf {
    Path::new(PROJECT).parent().unwrap().parent().unwrap().join("e2e-delegate")
}

fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn in_a_clone_chant_builds_the_project_binaries_once_and_drives_them() {
    let sandbox = Sandbox::new(&config_with_roots(&[]));
    let clone = sandbox.root().join("clone");
    let url = format!("file://{}", Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().display());
    let clone_arg = clone.display().to_string();
    sandbox.git(sandbox.root(), &["-c", "advice.detachedHead=false", "clone", "-q", "--depth", "1", &url, &clone_arg]);
    let target = clone_target();
    let staging = target.join("debug").join("staging");

    // First call: the binaries are missing or older than the fresh clone's sources, so it builds.
    let first = Out::of(cargo_command(&sandbox, STOCK, &clone, &["run", "staging-converge"], Some(&target)));
    assert_eq!(first.0, Some(0), "{}", first.1);
    assert!(first.2.contains("converge(staging)") && first.2.contains("remediated=1"), "{}", first.1);
    let built = modified(&staging);
    assert!(target.join("debug").join("box").is_file(), "the box member's binary is built too");

    // Second call: nothing is stale, nothing is built, the binary is untouched.
    let second = Out::of(cargo_command(&sandbox, STOCK, &clone, &["run", "staging-converge"], Some(&target)));
    assert_eq!(second.0, Some(0), "{}", second.1);
    assert!(second.2.contains("drifted=0 remediated=0"), "{}", second.1);
    assert!(!second.1.contains("Compiling"), "a second call rebuilt: {}", second.1);
    assert_eq!(modified(&staging), built, "the binary was rebuilt");

    // The workspace's operator: one child per project binary, lines prefixed by the member, and
    // SIGTERM reaches both daemons, which release their leases.
    let mut cmd = cargo_command(&sandbox, STOCK, &clone, &["operator", "-v", "--interval", "1h"], Some(&target));
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !(seen.iter().any(|l: &String| l.starts_with("[staging] operator: staging-converge@staging"))
        && seen.iter().any(|l: &String| l.starts_with("[box] operator: ")))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("no round line from both members within 120 s:\n{}", seen.join("\n")),
        }
    }
    let killed = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(5)) {
        seen.push(line);
    }
    assert_eq!(status.code(), Some(0), "{}", seen.join("\n"));
    let leases = sandbox.git(&clone, &["for-each-ref", "--format=%(refname)", "refs/chant/lease/"]);
    assert_eq!(leases.trim(), "", "leases left after SIGTERM:\n{}", seen.join("\n"));
    assert!(sandbox.tip_of(&clone).is_some(), "ticks are on the clone's {BRANCH}");

    // `serve` with two project binaries: no one of them carries both members' ops, so the stock
    // binary serves the whole ledger itself, says so, and offers no live diff.
    let mut cmd = cargo_command(&sandbox, STOCK, &clone, &["serve", "--addr", "127.0.0.1:0"], Some(&target));
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let banner = loop {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(line) if line.contains("read-only dashboard on http://") => break line,
            Ok(line) => seen.push(line),
            Err(_) => panic!("no listening line within 120 s:\n{}", seen.join("\n")),
        }
    };
    let base = format!("http://{}", banner.split_once("http://").unwrap().1.split_once('/').unwrap().0);
    let get = |accept: &str| {
        let mut resp = ureq::get(&format!("{base}/")).header("Accept", accept).call().unwrap();
        resp.body_mut().read_to_string().unwrap()
    };
    let (estate, page) = (get("application/json"), get("text/html"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.iter().any(|l| l.starts_with("note: 2 project binaries (") && l.contains("serving the ledger alone")),
        "{}",
        seen.join("\n")
    );
    assert!(estate.contains(r#""op":"staging-converge""#), "both members' ticks are shown: {estate}");
    assert!(!page.contains("/diff\""), "no live diff without one binary carrying the declarations");
}

/// A checkout of a one-bin project whose ConvergeOp has `budget`, depending on this workspace's
/// chant (the features and profile the suite built it with, so only the project compiles).
fn twin_checkout(sandbox: &Sandbox, dir: &Path, budget: u32) {
    sandbox.init_repo(dir);
    let chant = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("chant");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"twin\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\nchant = {{ package = \"chant-ops\", path = {:?}, features = [\"full\"] }}\n\n[workspace]\n\n[profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n\n[profile.dev.package.sha2]\nopt-level = 3\n\n[profile.dev.package.postgres-protocol]\nopt-level = 3\n",
            chant.display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(chant.parent().unwrap().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("chant.toml"), "[project]\nname = \"twin\"\n\n[env.site]\nfiles_root = \"estates/site\"\n")
        .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let main = r#"use chant::prelude::*;

converge_op! {
    name: "twin-converge",
    env: "site",
    budget: BUDGET,
    observe: shell(cmd = "echo '{\"resources\":[]}'", class = read_only),
    rules: [
        when!(eq(status, "drifted") => report("site drifted"), id = "drift-report",
              why = "Only reported: the test reads the budget, not the tick."),
    ],
}

chant::main!();
"#;
    std::fs::write(dir.join("src/main.rs"), main.replace("BUDGET", &budget.to_string())).unwrap();
    sandbox.git(dir, &["add", "."]);
    sandbox.git(dir, &["commit", "-q", "-m", &format!("budget {budget}")]);
}

/// The budget of `twin-converge` as the binary the stock `chant` runs in `dir` declares it.
fn twin_budget(sandbox: &Sandbox, dir: &Path, target: &Path) -> u64 {
    let mut cmd = cargo_command(sandbox, STOCK, dir, &["ops", "--json"], Some(target));
    cmd.env("CARGO_NET_OFFLINE", "true");
    let out = Out::of(cmd);
    assert_eq!(out.0, Some(0), "{}", out.1);
    let ops: serde_json::Value = serde_json::from_str(out.2.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.1));
    let op = ops.as_array().unwrap().iter().find(|o| o["name"] == "twin-converge").unwrap_or_else(|| panic!("{ops}"));
    op["converge"]["budget"].as_u64().unwrap()
}

/// Two checkouts of one project sharing a cargo target directory (issue #34, 9): each runs the
/// binary built from its own sources. Checkout B's sources are older than A's build, so a check
/// by modification time alone found cargo's shared binary (A's) fresh and ran it in B.
#[test]
fn two_checkouts_sharing_a_target_directory_each_run_their_own_binary() {
    let sandbox = Sandbox::new(&config_with_roots(&[]));
    let (a, b) = (sandbox.root().join("a"), sandbox.root().join("b"));
    twin_checkout(&sandbox, &a, 3);
    twin_checkout(&sandbox, &b, 1);
    // The suite's own target directory, where chant is already built with these features.
    let target = Path::new(PROJECT).parent().unwrap().parent().unwrap().to_path_buf();
    assert_eq!(twin_budget(&sandbox, &a, &target), 3, "checkout A runs its own binary");
    assert_eq!(twin_budget(&sandbox, &b, &target), 1, "checkout B ran another checkout's binary");
    // And back: A's own binary again (cargo's shared path now holds B's).
    assert_eq!(twin_budget(&sandbox, &a, &target), 3, "checkout A ran another checkout's binary");
}
