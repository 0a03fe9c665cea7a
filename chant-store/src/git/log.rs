//! `git log -p` of some paths, through the git binary ([`Git::run`], with its fixed options,
//! environment and timeout): the patches that added and removed their lines, oldest commit
//! first, with zero lines of context. Read-only; the caller parses the text.

use super::cmd::{Git, Result};
use super::porcelain;

/// Why a history could not be read: git said so (an unknown revision).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotLogged(pub String);

impl Git {
    /// The history of `paths` at `revision` as `git log -p --unified=0 --reverse --no-renames`
    /// output, each commit introduced by `format` (a `--format` pretty string). `Ok(Err(_))`
    /// carries git's own words when it refused.
    ///
    /// # Errors
    ///
    /// [`super::cmd::Error`] when git cannot be run to completion.
    pub fn log_patches(
        &self,
        revision: &str,
        paths: &[&str],
        format: &str,
    ) -> Result<std::result::Result<String, NotLogged>> {
        let format = format!("--format={format}");
        let mut args = vec![
            "log",
            "-p",
            "--unified=0",
            "--reverse",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            &format,
            revision,
            "--",
        ];
        args.extend_from_slice(paths);
        let output = self.run("log", &args)?;
        if !output.success() {
            return Ok(Err(NotLogged(porcelain::first_error_line(&output.stderr))));
        }
        Ok(Ok(output.stdout))
    }
}
