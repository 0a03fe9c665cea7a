//! What each fixture env contains. The roots are bound by the `chant.toml` each test writes.
//!
//! `site` reads two knobs: `E2E_SITE_DROP`: when set, `old.conf` is no longer declared, which is
//! how a test drops a file the last apply owned (a declaration is ordinary Rust, so it may read
//! the environment like any other code); `E2E_SITE_DOC`: when set, `app.json` is declared as a
//! JSON document, for the deep observation tests.

use chant::lexicon::files::{DocumentFormat, FilesDeclaration};
use chant::lexicon::{DeclaredEnv, EnvDeclaration};

/// The variable that adds `app.json`, declared as a JSON document, to the `site` declaration
/// (deep observation compares its keys as paths).
pub const SITE_DOC_VAR: &str = "E2E_SITE_DOC";

/// The content of `site`'s `app.json` when [`SITE_DOC_VAR`] is set.
pub const SITE_APP_JSON: &str = "{\n  \"port\": 8080,\n  \"log\": {\"level\": \"info\"}\n}\n";

/// The variable that drops `old.conf` from the `site` declaration.
pub const SITE_DROP_VAR: &str = "E2E_SITE_DROP";

/// The content of `site`'s `app.conf`.
pub const SITE_APP_CONF: &str = "port = 8080\nlog_level = \"info\"\n";

/// The number of files the `bulk` env declares.
pub const BULK_FILES: usize = 1000;

/// Declares `site`: a config file, a notice, an executable script and, unless `E2E_SITE_DROP` is
/// set, `old.conf`.
pub fn site() -> EnvDeclaration {
    let mut files = FilesDeclaration::new()
        .file("app.conf", SITE_APP_CONF, 0o644)
        .file("motd.txt", "site is managed by chant; edits are reverted on the next tick\n", 0o644)
        .file("bin/start.sh", "#!/bin/sh\nexec echo started\n", 0o755);
    if std::env::var_os(SITE_DROP_VAR).is_none() {
        files = files.file("old.conf", "legacy = true\n", 0o644);
    }
    if std::env::var_os(SITE_DOC_VAR).is_some() {
        files = files.document("app.json", DocumentFormat::Json, SITE_APP_JSON, 0o644);
    }
    EnvDeclaration::new().with(files)
}

/// Declares `blind`: two files, one in a subdirectory.
pub fn blind() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("a.conf", "a = 1\n", 0o644).file(
        "sub/b.conf",
        "b = 2\n",
        0o644,
    ))
}

/// Declares `busy`: one file, never applied by its ConvergeOp.
pub fn busy() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("busy.txt", "busy\n", 0o644))
}

/// Declares `flappy`: one file, which only `flappy-apply` (run by hand) writes.
pub fn flappy() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("flap.txt", "flap\n", 0o644))
}

/// Returns the path of the `n`th file of `bulk` (ten directories of a hundred files).
pub fn bulk_path(n: usize) -> String {
    format!("d{}/file-{n:04}.txt", n / 100)
}

/// Declares `bulk`: [`BULK_FILES`] small files, for the tick benchmark.
pub fn bulk() -> EnvDeclaration {
    let mut files = FilesDeclaration::new();
    for n in 0..BULK_FILES {
        files = files.file(bulk_path(n), format!("file {n}\n{}\n", "x".repeat(64)), 0o644);
    }
    EnvDeclaration::new().with(files)
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("site", site) }
chant::lexicon::inventory::submit! { DeclaredEnv::new("blind", blind) }
chant::lexicon::inventory::submit! { DeclaredEnv::new("busy", busy) }
chant::lexicon::inventory::submit! { DeclaredEnv::new("flappy", flappy) }
chant::lexicon::inventory::submit! { DeclaredEnv::new("bulk", bulk) }

/// Declares `night`: one config file, for the scheduled ConvergeOp a change signal wakes.
pub fn night() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("night.conf", "mode = \"quiet\"\n", 0o644))
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("night", night) }

/// Declares `leak`: nothing at all, on purpose. Its ConvergeOp reads the env's symptom, so the
/// env must be declared (an env nobody declared is refused, never `reconciled`); declaring it
/// empty is what makes every tick find it reconciled and dispatch the leaky op.
pub fn leak() -> EnvDeclaration {
    EnvDeclaration::new()
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("leak", leak) }

/// Declares `review`: one config file, whose drift its ConvergeOp proposes rather than repairs.
pub fn review() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("review.conf", "replicas = 3\n", 0o644))
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("review", review) }

/// Declares `freeze`: one file, applied only outside its ConvergeOp's deny window.
pub fn freeze() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("freeze.conf", "frozen = false\n", 0o644))
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("freeze", freeze) }

/// Declares `giveup`: one file nothing ever writes, so its ConvergeOp's rule keeps firing.
pub fn giveup() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("never.txt", "never\n", 0o644))
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("giveup", giveup) }
