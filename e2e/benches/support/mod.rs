//! Helpers shared by the e2e benches: hermetic child processes and git.

#![allow(dead_code)] // each bench uses its own subset

use std::path::Path;
use std::process::{Command, Stdio};

/// A child with no configuration of the developer's: an empty environment plus `PATH`, a
/// temporary `HOME`, no system or global git configuration, a fixed identity.
pub(crate) fn hermetic(program: &str, home: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear().current_dir(dir).stdin(Stdio::null());
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@e2e.invalid")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@e2e.invalid");
    cmd
}

pub(crate) fn git(home: &Path, dir: &Path, args: &[&str]) {
    let out = hermetic("git", home, dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}
