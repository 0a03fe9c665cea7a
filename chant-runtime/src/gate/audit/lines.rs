//! Gate ledger lines for the audit: a file's lines with their numbers ([`file_lines`]), and the
//! lines `git log -p --unified=0` added and removed, with the commit that did it
//! ([`lines_from_log`]). Pure text in, [`Source`]s out; nothing here runs git.

use serde::Serialize;

/// The pretty format [`lines_from_log`] reads: a record separator, then the commit's full id,
/// author date (strict ISO 8601), author name and e-mail, separated by unit separators.
pub const LOG_FORMAT: &str = "%x1e%H%x1f%aI%x1f%an%x1f%ae";

/// Where an audit entry's line came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// The file's path on the ledger branch.
    pub path: String,
    /// The line's 1-based number in that file (in the commit that added or removed it, when read
    /// from the log).
    pub line: usize,
    /// The line, exactly as stored.
    pub text: String,
    /// The commit that added (or, for a removed line, removed) it, when read from the log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// That commit's author date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// That commit's author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// That author's e-mail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Whether the commit removed the line (a revocation).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
}

impl Source {
    /// A line of a file as it stands, with no commit.
    pub fn at(path: &str, line: usize, text: &str) -> Self {
        Source {
            path: path.to_owned(),
            line,
            text: text.to_owned(),
            commit: None,
            date: None,
            author: None,
            email: None,
            removed: false,
        }
    }
}

/// The non-blank lines of a gate file as it stands, numbered as in the file (a final line without
/// a newline counts, `\r\n` is accepted).
pub fn file_lines(path: &str, text: &str) -> Vec<Source> {
    text.split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| Source::at(path, n, l))
        .collect()
}

struct Commit {
    id: String,
    date: String,
    author: String,
    email: Option<String>,
}

/// The lines added and removed in `log`, the output of
/// `git log -p --unified=0 --reverse --format=`[`LOG_FORMAT`] over gate files, in the order the
/// log lists them (oldest commit first with `--reverse`). Each keeps its commit, the commit's
/// date and author; a removed line has `removed` set. Blank lines and git's
/// `\ No newline at end of file` markers are skipped. A log without the e-mail field is read
/// too (no `email`). A line one commit removes and adds back unchanged in the same file is
/// neither: that is how a line without a final newline reads when a line is appended after it.
pub fn lines_from_log(log: &str) -> Vec<Source> {
    let mut out = Vec::new();
    let mut commit_start = 0;
    let mut commit: Option<Commit> = None;
    let mut old_path = String::new();
    let mut new_path = String::new();
    let (mut old_line, mut new_line) = (0usize, 0usize);
    for raw in log.split('\n') {
        if let Some(header) = raw.strip_prefix('\u{1e}') {
            cancel_rewrites(&mut out, commit_start);
            commit_start = out.len();
            let mut f = header.split('\u{1f}');
            commit = Some(Commit {
                id: f.next().unwrap_or_default().to_owned(),
                date: f.next().unwrap_or_default().to_owned(),
                author: f.next().unwrap_or_default().to_owned(),
                email: f.next().map(str::to_owned).filter(|e| !e.is_empty()),
            });
            continue;
        }
        let Some(c) = &commit else { continue };
        if raw.starts_with("diff --git ") {
            (old_path, new_path) = (String::new(), String::new());
        } else if let Some(p) = raw.strip_prefix("--- ") {
            old_path = p.strip_prefix("a/").unwrap_or(p).to_owned();
        } else if let Some(p) = raw.strip_prefix("+++ ") {
            new_path = p.strip_prefix("b/").unwrap_or(p).to_owned();
        } else if let Some(hunk) = raw.strip_prefix("@@ ") {
            (old_line, new_line) = hunk_starts(hunk);
        } else if let Some(text) = raw.strip_prefix('+') {
            push(&mut out, c, &new_path, new_line, text, false);
            new_line += 1;
        } else if let Some(text) = raw.strip_prefix('-') {
            push(&mut out, c, &old_path, old_line, text, true);
            old_line += 1;
        }
    }
    cancel_rewrites(&mut out, commit_start);
    out
}

/// Drops, among the lines of one commit (`out[from..]`), each removed line that the commit adds
/// back with the same text in the same file, and that added line.
fn cancel_rewrites(out: &mut Vec<Source>, from: usize) {
    let mut i = from;
    while i < out.len() {
        if out[i].removed
            && let Some(j) =
                (from..out.len()).find(|&j| !out[j].removed && out[j].path == out[i].path && out[j].text == out[i].text)
        {
            let (first, second) = if i < j { (i, j) } else { (j, i) };
            out.remove(second);
            out.remove(first);
            i = from;
            continue;
        }
        i += 1;
    }
}

fn push(out: &mut Vec<Source>, c: &Commit, path: &str, line: usize, text: &str, removed: bool) {
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.trim().is_empty() {
        return;
    }
    out.push(Source {
        path: path.to_owned(),
        line,
        text: text.to_owned(),
        commit: Some(c.id.clone()),
        date: Some(c.date.clone()),
        author: Some(c.author.clone()),
        email: c.email.clone(),
        removed,
    });
}

/// The first old and new line numbers of a hunk header `-a[,b] +c[,d] @@`.
fn hunk_starts(hunk: &str) -> (usize, usize) {
    let mut old = 0;
    let mut new = 0;
    for part in hunk.split(' ') {
        let start = |s: &str| s.split(',').next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
        if let Some(s) = part.strip_prefix('-') {
            old = start(s);
        } else if let Some(s) = part.strip_prefix('+') {
            new = start(s);
        }
    }
    (old, new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_lines_keep_their_numbers() {
        let lines = file_lines("_gates/a.jsonl", "{\"a\":1}\n\n{\"b\":2}\r\n{\"c\":3}");
        let got: Vec<(usize, &str)> = lines.iter().map(|s| (s.line, s.text.as_str())).collect();
        assert_eq!(got, [(1, "{\"a\":1}"), (3, "{\"b\":2}"), (4, "{\"c\":3}")]);
        assert!(lines.iter().all(|s| s.commit.is_none() && !s.removed));
    }

    #[test]
    fn the_log_gives_added_and_removed_lines_with_their_commits() {
        let log = concat!(
            "\u{1e}c1\u{1f}2026-09-05T10:00:00Z\u{1f}Ann\u{1f}ann@example.org\n\n",
            "diff --git a/_gates/a.jsonl b/_gates/a.jsonl\nnew file mode 100644\nindex 0000000..1111111\n",
            "--- /dev/null\n+++ b/_gates/a.jsonl\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n",
            "\u{1e}c2\u{1f}2026-09-06T10:00:00Z\u{1f}Bob\u{1f}\n\n",
            "diff --git a/_gates/a.jsonl b/_gates/a.jsonl\nindex 1111111..2222222 100644\n",
            "--- a/_gates/a.jsonl\n+++ b/_gates/a.jsonl\n@@ -2 +1,0 @@\n-two\n@@ -3,0 +3 @@\n+three\n",
        );
        let lines = lines_from_log(log);
        let got: Vec<(&str, usize, &str, &str, bool)> = lines
            .iter()
            .map(|s| (s.text.as_str(), s.line, s.commit.as_deref().unwrap(), s.author.as_deref().unwrap(), s.removed))
            .collect();
        assert_eq!(
            got,
            [
                ("one", 1, "c1", "Ann", false),
                ("two", 2, "c1", "Ann", false),
                ("two", 2, "c2", "Bob", true),
                ("three", 3, "c2", "Bob", false)
            ]
        );
        assert!(lines.iter().all(|s| s.path == "_gates/a.jsonl"));
        assert_eq!(lines[0].email.as_deref(), Some("ann@example.org"));
        assert_eq!(lines[2].email, None, "an empty e-mail is none");
        assert_eq!(lines[3].date.as_deref(), Some("2026-09-06T10:00:00Z"));
    }

    #[test]
    fn a_last_line_rewritten_to_end_in_a_newline_is_not_a_revocation() {
        let log = concat!(
            "\u{1e}c1\u{1f}d1\u{1f}Ann\n\ndiff --git a/g.jsonl b/g.jsonl\n--- /dev/null\n+++ b/g.jsonl\n",
            "@@ -0,0 +1 @@\n+one\n\\ No newline at end of file\n",
            "\u{1e}c2\u{1f}d2\u{1f}Bob\n\ndiff --git a/g.jsonl b/g.jsonl\n--- a/g.jsonl\n+++ b/g.jsonl\n",
            "@@ -1 +1,2 @@\n-one\n\\ No newline at end of file\n+one\n+two\n\\ No newline at end of file\n",
        );
        let got: Vec<(String, String, bool)> =
            lines_from_log(log).into_iter().map(|s| (s.text, s.commit.unwrap_or_default(), s.removed)).collect();
        let want = [("one", "c1", false), ("two", "c2", false)].map(|(t, c, r)| (t.to_owned(), c.to_owned(), r));
        assert_eq!(got, want);
    }
}
