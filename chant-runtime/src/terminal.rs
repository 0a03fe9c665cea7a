//! Text from the ledger made safe for a terminal: the one filter every human renderer passes
//! ledger text through before printing it (`operator status`, `operator log`, `approve`,
//! `workspace status`).
//!
//! Anyone who can push to the ledger branch can write any bytes into a record: an approver named
//! `\e]0;...\a`, a reason that clears the screen, a gate note with a newline and a forged status
//! line. [`printable`] shows every such character as its escape (`\u{1b}`) instead of sending it:
//! control characters (C0 including tab and newline, DEL, C1) and the invisible format characters
//! that reorder or hide text (bidirectional overrides and isolates, zero-width characters, the
//! byte-order mark). The text stays on one line and reads the same; only what a terminal would
//! act on is made visible. JSON output needs no filter (serde escapes control characters).

use std::fmt::{self, Write as _};

/// Returns true for a character a terminal acts on or hides rather than shows: a control
/// character (C0, DEL, C1) or an invisible format character (U+061C, U+200B-U+200F,
/// U+202A-U+202E, U+2060-U+2069, U+FEFF).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Text shown with every [unsafe](is_unsafe) character escaped; see [`printable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Printable<'a>(&'a str);

/// Wraps `text` for printing: its [`Display`](fmt::Display) writes every character that
/// [`is_unsafe`] as its Rust escape (`\u{1b}`, `\u{a}`), so ledger text can neither drive a
/// terminal nor break a line.
pub fn printable(text: &str) -> Printable<'_> {
    Printable(text)
}

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.0.chars().any(is_unsafe) {
            // Untouched text keeps the formatter's width and alignment.
            return f.pad(self.0);
        }
        let mut shown = String::with_capacity(self.0.len() + 8);
        for c in self.0.chars() {
            if is_unsafe(c) {
                let _ = write!(shown, "{}", c.escape_unicode());
            } else {
                shown.push(c);
            }
        }
        f.pad(&shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_would_act_on_and_keeps_the_rest() {
        let shown = printable("alice\u{1b}]0;pwned\u{7}\u{1b}[2J\nfake\tline\u{9b}31m\u{202e}txt.exe").to_string();
        assert_eq!(shown, r"alice\u{1b}]0;pwned\u{7}\u{1b}[2J\u{a}fake\u{9}line\u{9b}31m\u{202e}txt.exe");
        assert!(!shown.chars().any(is_unsafe));
        assert_eq!(printable("Jane Doé — ops").to_string(), "Jane Doé — ops");
        assert_eq!(format!("[{:<6}]", printable("ab")), "[ab    ]");
        assert_eq!(format!("[{:<8}]", printable("a\u{7}")), "[a\\u{7}  ]");
    }
}
