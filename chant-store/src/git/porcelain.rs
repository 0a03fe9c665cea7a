//! Parsers for what the `git` binary prints, one per output format, each tested on output
//! captured from git 2.47 with `LC_MESSAGES=C`: `git version`, `git push --porcelain` (stdout and
//! the `remote:` lines on stderr) and the failures of `git fetch`.

/// A git version as `(major, minor, patch)`.
pub type Version = (u32, u32, u32);

/// Parses the stdout of `git version` (`git version 2.47.3`, `git version 2.39.5.windows.1`,
/// `git version 2.50.1 (Apple Git-155)`).
pub fn parse_version(stdout: &str) -> Option<Version> {
    let rest = stdout.trim().strip_prefix("git version ")?;
    let mut numbers = rest.split(|c: char| !c.is_ascii_digit()).take(3).map(str::parse::<u32>);
    let major = numbers.next()?.ok()?;
    let minor = numbers.next()?.ok()?;
    let patch = numbers.next().and_then(Result::ok).unwrap_or(0);
    Some((major, minor, patch))
}

/// One reference line of `git push --porcelain`: `<flag>\t<from>:<to>\t<summary>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedRef {
    /// The flag character: ` ` fast-forward, `+` forced, `-` deleted, `*` new, `!` rejected,
    /// `=` up to date.
    pub flag: char,
    /// The source (an object id, a ref, or empty for a delete).
    pub from: String,
    /// The destination ref on the remote.
    pub to: String,
    /// The summary, such as `[rejected] (stale info)` or `cb8bacf..5db9157`.
    pub summary: String,
}

impl PushedRef {
    /// Whether the remote now holds what was pushed.
    pub fn landed(&self) -> bool {
        matches!(self.flag, ' ' | '+' | '-' | '*' | '=')
    }
}

/// Parses the reference lines of `git push --porcelain` stdout, skipping `To <url>` and `Done`.
pub fn parse_push(stdout: &str) -> Vec<PushedRef> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let flag_field = fields.next()?;
            let refs = fields.next()?;
            let summary = fields.next()?;
            let mut flag_chars = flag_field.chars();
            let flag = flag_chars.next()?;
            if flag_chars.next().is_some() {
                return None;
            }
            let (from, to) = refs.split_once(':')?;
            Some(PushedRef { flag, from: from.to_owned(), to: to.to_owned(), summary: summary.to_owned() })
        })
        .collect()
}

/// Why a push of one reference did not land.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushRefusal {
    /// The remote reference moved since it was read: the lease was stale, or the remote's own
    /// compare-and-swap under its lock failed. Fetch and try again.
    Moved,
    /// A lock file on the remote blocks the reference; the text names it.
    RemoteLocked(String),
    /// Any other refusal, with git's words.
    Other(String),
}

/// Classifies a rejected reference line, using the `remote:` lines of stderr where the summary
/// alone does not tell.
pub fn classify_refusal(line: &PushedRef, stderr: &str) -> PushRefusal {
    let summary = line.summary.as_str();
    if summary.starts_with("[rejected]")
        && ["stale info", "fetch first", "non-fast-forward"].iter().any(|reason| summary.contains(reason))
    {
        return PushRefusal::Moved;
    }
    if summary.starts_with("[remote rejected]") {
        let remote_lines = stderr.lines().filter_map(|l| l.strip_prefix("remote:")).map(str::trim);
        for remote in remote_lines {
            let lost_race = remote.contains("but expected") || remote.contains("reference already exists");
            if remote.contains("cannot lock ref") && lost_race {
                return PushRefusal::Moved;
            }
            if remote.contains("Unable to create") && remote.contains(".lock") {
                return PushRefusal::RemoteLocked(remote.trim_start_matches("error: ").to_owned());
            }
            if remote.starts_with("error:") {
                return PushRefusal::Other(format!("{summary}: {}", remote.trim_start_matches("error: ")));
            }
        }
    }
    PushRefusal::Other(summary.to_owned())
}

/// Why `git fetch` of one reference failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchFailure {
    /// The remote has no such reference.
    MissingRemoteRef,
    /// Anything else (an unreachable or unknown remote, a refused connection), with git's first
    /// `fatal:` or `error:` line.
    Other(String),
}

/// Classifies the stderr of a failed `git fetch`.
pub fn classify_fetch_failure(stderr: &str) -> FetchFailure {
    if stderr.lines().any(|line| line.starts_with("fatal: couldn't find remote ref")) {
        return FetchFailure::MissingRemoteRef;
    }
    FetchFailure::Other(first_error_line(stderr))
}

/// The first `fatal:` or `error:` line of git's stderr, or its first non-empty line.
pub fn first_error_line(stderr: &str) -> String {
    let lines = || stderr.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| lines().next())
        .unwrap_or("git printed nothing")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEW: &str =
        "To ../bare.git\n*\tcb8bacf733e127209f87631aa8f723710f28354b:refs/heads/chant/lifecycle\t[new branch]\nDone\n";
    const FAST_FORWARD: &str = "To ../bare.git\n \t5db91574db91902f7db530eaddd6d7d4e700df13:refs/heads/chant/lifecycle\tcb8bacf..5db9157\nDone\n";
    const STALE: &str = "To ../bare.git\n!\t4303c199aa44f2626a5ad358edc200559d0baa06:refs/heads/chant/lifecycle\t[rejected] (stale info)\nDone\n";
    const UP_TO_DATE: &str =
        "To ../bare.git\n=\t5db91574db91902f7db530eaddd6d7d4e700df13:refs/heads/chant/lifecycle\t[up to date]\nDone\n";
    const REMOTE_REJECTED: &str = "To ../bare.git\n!\t4303c199aa44f2626a5ad358edc200559d0baa06:refs/heads/chant/lifecycle\t[remote rejected] (failed to update ref)\nDone\n";
    const LOCK_STDERR: &str = "remote: error: cannot lock ref 'refs/heads/chant/lifecycle': Unable to create '/tmp/cap/bare.git/./refs/heads/chant/lifecycle.lock': File exists.        \nremote: \nremote: Another git process seems to be running in this repository, e.g.        \nerror: failed to push some refs to '../bare.git'\n";
    const RACE_STDERR: &str = "remote: error: cannot lock ref 'refs/chant/lease/x': is at 5b0dc61 but expected c1be699        \nerror: failed to push some refs to 'file:///tmp/bare'\n";
    const CREATE_RACE_STDERR: &str = "remote: error: cannot lock ref 'refs/heads/chant/lifecycle': reference already exists        \nerror: failed to push some refs to '/tmp/remote.git'\n";
    const CLASH_STDERR: &str = "remote: error: cannot lock ref 'refs/heads/chant': 'refs/heads/chant/lifecycle' exists; cannot create 'refs/heads/chant'        \nerror: failed to push some refs to '../bare.git'\n";
    const NOWHERE: &str = "fatal: 'nowhere' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n";

    #[test]
    fn versions() {
        assert_eq!(parse_version("git version 2.47.3\n"), Some((2, 47, 3)));
        assert_eq!(parse_version("git version 2.39.5.windows.1"), Some((2, 39, 5)));
        assert_eq!(parse_version("git version 2.50.1 (Apple Git-155)"), Some((2, 50, 1)));
        assert_eq!(parse_version("git version 3.0"), Some((3, 0, 0)));
        assert_eq!(parse_version("hub version 1"), None);
    }

    #[test]
    fn push_lines_that_landed() {
        for (out, flag) in [(NEW, '*'), (FAST_FORWARD, ' '), (UP_TO_DATE, '=')] {
            let lines = parse_push(out);
            assert_eq!(lines.len(), 1, "{out}");
            assert_eq!(lines[0].flag, flag);
            assert_eq!(lines[0].to, "refs/heads/chant/lifecycle");
            assert!(lines[0].landed());
        }
        assert_eq!(parse_push(NEW)[0].from, "cb8bacf733e127209f87631aa8f723710f28354b");
    }

    #[test]
    fn stale_lease_means_the_remote_moved() {
        let line = &parse_push(STALE)[0];
        assert!(!line.landed());
        assert_eq!(classify_refusal(line, "error: failed to push some refs to '../bare.git'\n"), PushRefusal::Moved);
    }

    #[test]
    fn remote_side_compare_and_swap_means_the_remote_moved() {
        let line = &parse_push(REMOTE_REJECTED)[0];
        assert_eq!(classify_refusal(line, RACE_STDERR), PushRefusal::Moved);
        assert_eq!(classify_refusal(line, CREATE_RACE_STDERR), PushRefusal::Moved);
    }

    #[test]
    fn remote_lock_is_named() {
        let line = &parse_push(REMOTE_REJECTED)[0];
        match classify_refusal(line, LOCK_STDERR) {
            PushRefusal::RemoteLocked(text) => assert!(text.contains("lifecycle.lock"), "{text}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn other_remote_refusals_keep_the_reason() {
        let line = &parse_push(REMOTE_REJECTED)[0];
        match classify_refusal(line, CLASH_STDERR) {
            PushRefusal::Other(text) => assert!(text.contains("'refs/heads/chant/lifecycle' exists"), "{text}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fetch_failures() {
        assert_eq!(
            classify_fetch_failure("fatal: couldn't find remote ref refs/heads/chant/lifecycle\n"),
            FetchFailure::MissingRemoteRef
        );
        assert_eq!(
            classify_fetch_failure(NOWHERE),
            FetchFailure::Other("fatal: 'nowhere' does not appear to be a git repository".to_owned())
        );
        assert_eq!(first_error_line(""), "git printed nothing");
        assert!(parse_push("").is_empty());
    }
}
