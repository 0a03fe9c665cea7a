//! How a caller tells chant's stand-in from another `sprite-env` (a sprite's own): the hidden
//! word `sprite-env __stand-in` prints one JSON line, [`Identity`], naming the stand-in, the
//! protocol of its socket and the state directory it serves in the caller's environment.
//!
//! A caller that finds it may ask the daemon through [`super::Client`] directly, in its own
//! process, instead of running the command line (`chant::lexicon::sprite` does so for `services
//! list`). Another supervisor does not print this line (it refuses the word, or prints something
//! else), so the caller keeps running its command line: nothing is assumed of a binary that did
//! not say what it is.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The hidden command-line word that prints the [`Identity`].
pub const IDENTIFY_WORD: &str = "__stand-in";

/// The name the stand-in gives itself in [`Identity::stand_in`].
pub const STAND_IN: &str = "chant";

/// The version of the socket's requests and answers ([`super::Request`], [`super::Response`]):
/// a caller speaks to the daemon directly only when it speaks the same one.
pub const PROTOCOL: u32 = 1;

/// What `sprite-env __stand-in` prints, as one JSON line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    /// Always [`STAND_IN`].
    pub stand_in: String,
    /// The socket's protocol ([`PROTOCOL`]).
    pub protocol: u32,
    /// The state directory this invocation serves ([`super::state_dir`] in its environment).
    pub state_dir: PathBuf,
}

impl Identity {
    /// The identity of this build, serving `state_dir`.
    pub fn of(state_dir: PathBuf) -> Self {
        Identity { stand_in: STAND_IN.to_owned(), protocol: PROTOCOL, state_dir }
    }

    /// Reads what a supervisor printed for [`IDENTIFY_WORD`]: `Some` only for one line of this
    /// shape from a stand-in speaking [`PROTOCOL`] with an absolute state directory.
    pub fn parse(printed: &str) -> Option<Identity> {
        let mut lines = printed.lines().filter(|l| !l.trim().is_empty());
        let line = lines.next()?;
        if lines.next().is_some() {
            return None;
        }
        let identity: Identity = serde_json::from_str(line).ok()?;
        (identity.stand_in == STAND_IN && identity.protocol == PROTOCOL && identity.state_dir.is_absolute())
            .then_some(identity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_line_of_this_stand_in_and_protocol_is_an_identity() {
        let printed = serde_json::to_string(&Identity::of(PathBuf::from("/run/sv"))).unwrap();
        assert_eq!(printed, r#"{"standIn":"chant","protocol":1,"stateDir":"/run/sv"}"#);
        assert_eq!(Identity::parse(&format!("{printed}\n")), Some(Identity::of(PathBuf::from("/run/sv"))));
        for not_one in [
            "",
            "usage: sprite-env services list",
            r#"{"standIn":"other","protocol":1,"stateDir":"/run/sv"}"#,
            r#"{"standIn":"chant","protocol":2,"stateDir":"/run/sv"}"#,
            r#"{"standIn":"chant","protocol":1,"stateDir":"relative"}"#,
            r#"{"standIn":"chant","protocol":1}"#,
        ] {
            assert_eq!(Identity::parse(not_one), None, "{not_one}");
        }
        assert_eq!(Identity::parse(&format!("{printed}\n{printed}\n")), None, "two lines");
    }
}
