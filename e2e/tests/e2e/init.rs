//! `chant init` with no flags writes a project that builds and ticks on its first `cargo run`: the
//! stock binary generates it in a directory outside any repository (so it runs `git init`), its
//! chant dependency is the checkout the binary was built from (CI runs this suite in a fresh clone
//! of main, so that is a fresh clone), real cargo builds it with the generated profile and the
//! default features, and the first tick applies the env while the second finds it in sync. A bin
//! without the `use <lib> as _;` line carries no ops, and the error names the line.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::{Out, STOCK, Sandbox};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Real cargo in `dir`, with this suite's target directory, so the third-party dependencies
/// already built for the suite are reused where their features agree, resolved offline from a
/// copy of the workspace's lock file. The profile is the one the project was generated with.
fn cargo(dir: &Path, args: &[&str]) -> Out {
    cargo_at(dir, args, None)
}

/// [`cargo`] with `CHANT_NOW` set to `now`, when given.
fn cargo_at(dir: &Path, args: &[&str], now: Option<&str>) -> Out {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace().join("target"), PathBuf::from);
    let out = Command::new(env!("CARGO"))
        .current_dir(dir)
        .arg("--offline")
        .args(args)
        .env("CARGO_TARGET_DIR", target)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("CHANT_NOW")
        .env_remove("CHANT_PROJECT_BIN")
        .envs(now.map(|n| ("CHANT_NOW", n)))
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn init_then_cargo_run_ticks_the_new_project_and_a_bin_without_its_use_line_names_it() {
    let sandbox = Sandbox::new("");
    let out = sandbox.run_in(STOCK, sandbox.root(), &["init", "demo", "--env", "site"], &[]);
    out.code(0);
    let facade = workspace().join("chant");
    assert!(
        out.stdout.contains(&format!("chant: the checkout at {}", facade.display())),
        "init does not say where chant comes from\n{}",
        out.all()
    );
    let dir = sandbox.root().join("demo");
    for f in ["Cargo.toml", "chant.toml", ".gitignore", "src/lib.rs", "src/bin/demo.rs", "src/bin/demo-converge.rs"] {
        assert!(dir.join(f).is_file(), "{f} missing\n{}", out.all());
        assert!(out.stdout.contains(f), "{f} not listed\n{}", out.all());
    }
    assert!(dir.join(".git").is_dir(), "no git init\n{}", out.all());
    assert!(out.stdout.contains("cd demo && cargo run"), "{}", out.all());

    // A second init refuses to overwrite, naming what is there.
    // (A bare directory is a path: the workspace's root names its facade directory.)
    let root = workspace().display().to_string();
    let again = sandbox.run_in(STOCK, sandbox.root(), &["init", "demo", "--chant", &format!("{root}/")], &[]);
    again.code(2);
    assert!(again.stderr.contains("already holds Cargo.toml"), "{}", again.all());
    let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap().parse().unwrap();
    assert_eq!(manifest["dependencies"]["chant"]["package"].as_str(), Some("chant-ops"));
    assert_eq!(manifest["dependencies"]["chant"]["path"].as_str(), Some(facade.to_str().unwrap()));

    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let first = cargo(&dir, &["run", "-q"]);
    first.code(0);
    assert!(first.stdout.contains("converge(site): drifted=1 remediated=1"), "{}", first.all());
    assert!(first.all().contains("ran first-apply"), "{}", first.all());
    assert_eq!(
        std::fs::read_to_string(dir.join("estates/site/hello.txt")).unwrap(),
        "hello from chant; edits are reverted on the next tick\n"
    );
    assert!(!sandbox.git(&dir, &["rev-parse", "refs/heads/chant/lifecycle"]).trim().is_empty());
    let second = cargo(&dir, &["run", "-q"]);
    second.code(0);
    assert!(second.stdout.contains("converge(site): drifted=0 remediated=0"), "{}", second.all());

    // A subcommand the default features leave out says which feature brings it.
    let serve = cargo(&dir, &["run", "-q", "--bin", "demo", "--", "serve"]);
    serve.code(2);
    assert!(
        serve.stderr.contains("`serve` is not in this binary: it was built without chant's `serve` feature"),
        "{}",
        serve.all()
    );
    assert!(serve.stderr.contains("add \"serve\" to the features of the chant dependency"), "{}", serve.all());

    // An env typo in a step is refused at build time when a declared env is one edit away (the
    // macros read the crate's `DeclaredEnv` registrations), at the string, with the env meant.
    let lib = dir.join("src/lib.rs");
    let declared = std::fs::read_to_string(&lib).unwrap();
    assert!(declared.contains(r#"apply(env = "site")"#), "{declared}");
    let records = sandbox.git(&dir, &["rev-list", "--count", "refs/heads/chant/lifecycle"]);
    std::fs::write(&lib, declared.replace(r#"apply(env = "site")"#, r#"apply(env = "stie")"#)).unwrap();
    let typo = cargo(&dir, &["run", "-q"]);
    typo.code(101);
    assert!(
        typo.stderr.contains(r#"`apply` names env "stie", which this crate does not declare; did you mean "site"?"#),
        "{}",
        typo.all()
    );
    // A name close to no declared env (it may be declared in another crate) is refused when the
    // op set loads, before anything runs, naming the op, the step, the env and the closest
    // declared env; nothing is recorded.
    std::fs::write(&lib, declared.replace(r#"apply(env = "site")"#, r#"apply(env = "production")"#)).unwrap();
    let far = cargo(&dir, &["run", "-q"]);
    far.code(2);
    assert!(
        far.stderr.contains(r#"op "site-apply": step 1 of phase "Apply", `apply(env = "production")`"#),
        "{}",
        far.all()
    );
    assert!(far.stderr.contains(r#"(the closest declared env is "site")"#), "{}", far.all());
    assert_eq!(sandbox.git(&dir, &["rev-list", "--count", "refs/heads/chant/lifecycle"]), records, "nothing recorded");
    std::fs::write(&lib, declared).unwrap();

    // Without the `use` line the linker drops the library: the binary carries no ops.
    let bin = dir.join("src/bin/demo.rs");
    let source = std::fs::read_to_string(&bin).unwrap();
    std::fs::write(&bin, source.replace("use demo as _;", "")).unwrap();
    let out = cargo(&dir, &["run", "-q", "--bin", "demo", "--", "tick", "site-converge"]);
    out.code(2);
    assert!(out.stderr.contains("no ops are compiled into this binary"), "{}", out.all());
    assert!(out.stderr.contains("hint: add `use demo as _;` to src/bin/demo.rs"), "{}", out.all());
    std::fs::write(&bin, source).unwrap();
    // The one-tick binary without it is refused at build time, saying so (not "no declared
    // ConvergeOp; did you mean" another op, when the op is declared, in the library).
    let converge = dir.join("src/bin/demo-converge.rs");
    let source = std::fs::read_to_string(&converge).unwrap();
    assert!(source.contains("use demo as _;"), "{source}");
    std::fs::write(&converge, source.replace("use demo as _;", "")).unwrap();
    let out = cargo(&dir, &["build", "-q"]);
    out.code(101);
    assert!(
        out.stderr.contains(
            r#"tick("site-converge") names a ConvergeOp declared in this package's library, which this binary does not link: add `use demo as _;` to this file"#
        ),
        "{}",
        out.all()
    );
}

/// `2026-03-02T00:MMZ`, minutes after the start of the test's day.
fn minute(m: u32) -> String {
    format!("2026-03-02T{:02}:{:02}:00.000Z", m / 60, m % 60)
}

#[test]
fn an_op_that_changes_nothing_is_ineffective_then_damped_and_its_fix_clears_damping_after_the_cool_off() {
    let sandbox = Sandbox::new("");
    sandbox.run_in(STOCK, sandbox.root(), &["init", "inert", "--env", "site"], &[]).code(0);
    let dir = sandbox.root().join("inert");
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let lib = dir.join("src/lib.rs");
    let declared = std::fs::read_to_string(&lib).unwrap();
    // The apply op is replaced by one that succeeds and changes nothing.
    let inert = declared.replace(r#"apply(env = "site")"#, r#"shell(cmd = "true")"#);
    assert_ne!(inert, declared);
    std::fs::write(&lib, &inert).unwrap();
    let hello = dir.join("estates/site/hello.txt");
    for m in 0..3 {
        let tick = cargo_at(&dir, &["run", "-q"], Some(&minute(m)));
        tick.code(0);
        assert!(tick.stdout.contains("converge(site): drifted=1 remediated=0 ineffective=1"), "{}", tick.all());
        assert!(!hello.exists(), "nothing was applied");
    }
    // Three ineffective dispatches in a row: the rule is damped, and never claimed a repair.
    let damped = cargo_at(&dir, &["run", "-q"], Some(&minute(3)));
    damped.code(0);
    assert!(damped.stdout.contains("remediated=0 reported=0 skipped-budget=0 skipped-flap=1"), "{}", damped.all());

    // The op is fixed. Within the cool-off the rule stays damped; after it, it runs once more,
    // the observation after it backs the repair, and the next tick is clean: no hand step.
    std::fs::write(&lib, &declared).unwrap();
    let cooling = cargo_at(&dir, &["run", "-q"], Some(&minute(20)));
    cooling.code(0);
    assert!(cooling.stdout.contains("skipped-flap=1"), "{}", cooling.all());
    assert!(!hello.exists());
    let retried = cargo_at(&dir, &["run", "-q"], Some(&minute(34)));
    retried.code(0);
    assert!(retried.stdout.contains("converge(site): drifted=1 remediated=1 reported=0"), "{}", retried.all());
    assert!(hello.is_file(), "the fixed op applied the env");
    let clean = cargo_at(&dir, &["run", "-q"], Some(&minute(35)));
    clean.code(0);
    assert!(clean.stdout.contains("converge(site): drifted=0 remediated=0"), "{}", clean.all());
    assert!(!clean.stdout.contains("skipped-flap=1"), "{}", clean.all());
}
