//! What the `staging` env contains: a few files under the env's files root (`files_root` in
//! `chant.toml`, `examples/estates/staging`, git-ignored).

use chant::lexicon::files::FilesDeclaration;
use chant::lexicon::{DeclaredEnv, EnvDeclaration};

/// Declares the staging estate.
pub fn staging() -> EnvDeclaration {
    EnvDeclaration::new().with(
        FilesDeclaration::new().file("app.conf", "port = 8080\nlog_level = \"info\"\n", 0o644).file(
            "motd.txt",
            "staging is managed by chant; edits are reverted on the next tick\n",
            0o644,
        ),
    )
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("staging", staging) }
