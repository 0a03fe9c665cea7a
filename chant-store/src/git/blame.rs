//! `git blame` of one line, through the git binary ([`Git::run`], with its fixed options,
//! environment and timeout): which commit last changed a line of a file at a revision, by whom,
//! when, and its summary. Read-only; nothing of the work tree is read (the revision names the
//! file's content), and the path is relative to the repository's root.

use super::cmd::{Git, Result};
use super::porcelain;

/// The commit that last changed one line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlameLine {
    /// The commit's full id.
    pub commit: String,
    /// The author's name.
    pub author: String,
    /// The author's e-mail, without the angle brackets.
    pub author_mail: String,
    /// When the commit was authored, RFC 3339 UTC.
    pub date: String,
    /// The commit message's first line.
    pub summary: String,
    /// The line's text at the revision.
    pub text: String,
}

/// Why a line could not be blamed: git said so (an unknown revision, a path that is not in it,
/// a line past its end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotBlamed(pub String);

impl Git {
    /// Blames line `line` (1-based) of `path` (relative to the repository root) at `revision`.
    /// `Ok(Err(_))` carries git's own words when it refused.
    ///
    /// # Errors
    ///
    /// [`super::cmd::Error`] when git cannot be run to completion.
    pub fn blame_line(
        &self,
        revision: &str,
        path: &str,
        line: u32,
    ) -> Result<std::result::Result<BlameLine, NotBlamed>> {
        let range = format!("{line},{line}");
        let output = self.run("blame", &["blame", "--porcelain", "-L", &range, revision, "--", path])?;
        if !output.success() {
            return Ok(Err(NotBlamed(porcelain::first_error_line(&output.stderr))));
        }
        Ok(parse(&output.stdout).ok_or_else(|| NotBlamed("git blame printed no line".to_owned())))
    }
}

/// Parses `git blame --porcelain` output for one line.
pub fn parse(stdout: &str) -> Option<BlameLine> {
    let mut lines = stdout.lines();
    let commit = lines.next()?.split_whitespace().next()?.to_owned();
    let mut blame = BlameLine {
        commit,
        author: String::new(),
        author_mail: String::new(),
        date: String::new(),
        summary: String::new(),
        text: String::new(),
    };
    // author-time is seconds since the epoch; author-tz only says where it was written.
    let mut time = None;
    for l in lines {
        if let Some(text) = l.strip_prefix('\t') {
            blame.text = text.to_owned();
            break;
        }
        let (key, value) = l.split_once(' ').unwrap_or((l, ""));
        match key {
            "author" => blame.author = value.to_owned(),
            "author-mail" => blame.author_mail = value.trim_start_matches('<').trim_end_matches('>').to_owned(),
            "author-time" => time = value.parse::<i64>().ok(),
            "summary" => blame.summary = value.to_owned(),
            _ => {}
        }
    }
    blame.date = time
        .and_then(|t| jiff::Timestamp::from_second(t).ok())
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    Some(blame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_porcelain_of_one_line() {
        let out = "1f3c0a9e7d2b4c6a8e0f1a2b3c4d5e6f7a8b9c0d 44 44 1\nauthor Ada Lovelace\nauthor-mail <ada@example.invalid>\nauthor-time 1767225600\nauthor-tz +0100\ncommitter C\ncommitter-mail <c@x>\ncommitter-time 1767225600\ncommitter-tz +0000\nsummary rules: re-apply on drift\nfilename e2e/src/ops.rs\n\t        when!(eq(status, \"drifted\") => run(\"site-apply\"), id = \"drift-apply\",\n";
        let b = parse(out).unwrap();
        assert_eq!(b.commit, "1f3c0a9e7d2b4c6a8e0f1a2b3c4d5e6f7a8b9c0d");
        assert_eq!((b.author.as_str(), b.author_mail.as_str()), ("Ada Lovelace", "ada@example.invalid"));
        assert_eq!(b.date, "2026-01-01T00:00:00Z");
        assert_eq!(b.summary, "rules: re-apply on drift");
        assert!(b.text.contains("id = \"drift-apply\""), "{}", b.text);
        assert_eq!(parse(""), None);
    }
}
