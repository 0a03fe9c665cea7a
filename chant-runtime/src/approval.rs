//! What `chant approve` records about an approval besides the gate: who approved
//! ([`Approver`], `--actor` or `$USER`) and where ([`ApprovalUrl`], `--url`).
//!
//! Both are shown to the next reader of the ledger (`operator status`, `operator log`, the next
//! `approve`), so they are checked before anything is recorded: an approver is a printable
//! one-line name of at most [`MAX_APPROVER`] characters (no control character, no invisible
//! format character, no surrounding blanks); an approval URL is parsed as a URI (the `http`
//! crate's parser, the one the HTTP client uses), `http` or `https` with a host, without
//! credentials (`user:pass@` would put a secret on the ledger), at most [`MAX_URL`] bytes.

use std::fmt;

use crate::terminal::is_unsafe;

/// The longest approver name, in characters.
pub const MAX_APPROVER: usize = 64;
/// The longest approval URL, in bytes.
pub const MAX_URL: usize = 2048;

/// Why an approver name or an approval URL is refused. Returned by [`Approver::parse`] and
/// [`ApprovalUrl::parse`]; every quoted text is escaped (`{:?}`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// The approver name is empty or has blanks around it.
    #[error("the approver {0:?} is empty or has blanks around it; pass a name such as --actor alice")]
    BlankApprover(String),
    /// The approver name holds a control or invisible character.
    #[error(
        "the approver {0:?} holds a control or invisible character (an escape sequence, a tab, a newline); an approver is a printable one-line name"
    )]
    UnprintableApprover(String),
    /// The approver name is too long.
    #[error("the approver name is {0} characters long; at most {MAX_APPROVER}")]
    LongApprover(usize),
    /// The URL does not parse, or is not http(s) with a host and without credentials.
    #[error(
        "{url:?} is not an http:// or https:// URL with a host ({why}); pass the address where the approval happened"
    )]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// Who approved: a printable one-line name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approver(String);

impl Approver {
    /// Checks `name`.
    ///
    /// # Errors
    ///
    /// [`ApprovalError`] naming the broken rule.
    pub fn parse(name: &str) -> Result<Self, ApprovalError> {
        if name.chars().any(is_unsafe) {
            return Err(ApprovalError::UnprintableApprover(name.to_owned()));
        }
        if name.is_empty() || name.trim() != name {
            return Err(ApprovalError::BlankApprover(name.to_owned()));
        }
        let len = name.chars().count();
        if len > MAX_APPROVER {
            return Err(ApprovalError::LongApprover(len));
        }
        Ok(Approver(name.to_owned()))
    }

    /// Returns the name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Approver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where an approval happened: an `http` or `https` URL with a host and no credentials, kept as
/// written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalUrl(String);

impl ApprovalUrl {
    /// Parses `text`.
    ///
    /// # Errors
    ///
    /// [`ApprovalError::Url`] saying what is wrong.
    pub fn parse(text: &str) -> Result<Self, ApprovalError> {
        let refuse = |why| Err(ApprovalError::Url { url: text.to_owned(), why });
        if text.len() > MAX_URL {
            return refuse("longer than 2048 bytes");
        }
        if text.chars().any(|c| is_unsafe(c) || c.is_whitespace()) {
            return refuse("it holds a blank, control or invisible character");
        }
        let Ok(uri) = text.parse::<ureq::http::Uri>() else { return refuse("it does not parse") };
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return refuse("the scheme is not http or https");
        }
        let Some(authority) = uri.authority() else { return refuse("it has no host") };
        if authority.as_str().contains('@') {
            return refuse("it carries credentials");
        }
        if authority.host().is_empty() {
            return refuse("it has no host");
        }
        // The parser keeps any port text; only a u16 is a port.
        let a = authority.as_str();
        if a.rfind(']').map_or(a, |i| &a[i + 1..]).contains(':') && authority.port().is_none() {
            return refuse("the port is not a number up to 65535");
        }
        Ok(ApprovalUrl(text.to_owned()))
    }

    /// Returns the URL as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ApprovalUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approver_is_a_printable_one_line_name() {
        for ok in ["alice", "Jane Doé", "ops-bot[ci]", "a.b@example.com"] {
            assert_eq!(Approver::parse(ok).unwrap().as_str(), ok);
        }
        let escape = Approver::parse("alice\u{1b}[2J\u{1b}]0;owned\u{7}").unwrap_err();
        assert!(matches!(escape, ApprovalError::UnprintableApprover(_)));
        assert!(!escape.to_string().contains('\u{1b}'), "{escape}");
        for bad in ["bob\nmallory", "tab\there", "rtl\u{202e}gpj", "c1\u{9b}"] {
            assert!(matches!(Approver::parse(bad), Err(ApprovalError::UnprintableApprover(_))), "{bad:?}");
        }
        for blank in ["", " ", " alice", "alice "] {
            assert!(matches!(Approver::parse(blank), Err(ApprovalError::BlankApprover(_))), "{blank:?}");
        }
        assert!(Approver::parse(&"a".repeat(MAX_APPROVER)).is_ok());
        assert_eq!(Approver::parse(&"a".repeat(MAX_APPROVER + 1)), Err(ApprovalError::LongApprover(65)));
    }

    #[test]
    fn an_approval_url_is_parsed_not_prefix_checked() {
        for ok in
            ["https://example.com/pr/1", "http://127.0.0.1:8080/approve?id=3#x", "https://[::1]/a", "https://[::1]:80"]
        {
            assert_eq!(ApprovalUrl::parse(ok).unwrap().as_str(), ok);
        }
        let why = |u: &str| match ApprovalUrl::parse(u) {
            Err(ApprovalError::Url { why, .. }) => why,
            other => panic!("{u:?}: {other:?}"),
        };
        // Each of these starts with http:// or https://, which the old prefix check accepted.
        assert_eq!(why("https://"), "it does not parse");
        assert_eq!(why("http:///path"), "it does not parse");
        assert_eq!(why("https://example.com/\u{1b}[31mred"), "it holds a blank, control or invisible character");
        assert_eq!(why("https://example.com/a b"), "it holds a blank, control or invisible character");
        assert_eq!(why("https://user:secret@example.com/"), "it carries credentials");
        assert_eq!(why("https://exa mple.com"), "it holds a blank, control or invisible character");
        assert_eq!(why("https://example.com:99999999/"), "the port is not a number up to 65535");
        assert_eq!(why("https://example.com:/"), "the port is not a number up to 65535");
        assert_eq!(why("ftp://example.com/"), "the scheme is not http or https");
        assert_eq!(why("javascript:alert(1)"), "the scheme is not http or https");
        assert_eq!(why("/relative"), "the scheme is not http or https");
        assert_eq!(why(&format!("https://example.com/{}", "a".repeat(MAX_URL))), "longer than 2048 bytes");
    }
}
