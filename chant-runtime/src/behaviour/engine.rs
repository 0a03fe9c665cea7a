//! Engine resolution: which engine prices a lexicon's estate, and which bearer token it is sent,
//! each read from its own chain of variables, most specific first.
//!
//! The address chain is `CHANT_BEHAVIOUR_ENGINE_<LEXICON>`, `CHANT_BEHAVIOUR_ENGINE`,
//! `BEHAVIOUR_ENGINE`; the token chain has the same shape with `TOKEN`. `<LEXICON>` is the
//! lexicon's name in uppercase with every character other than a letter or digit turned into `_`.
//! An empty value counts as unset. Resolution returns the value together with the variable that
//! won, so a refusal can name it. An address is printed in refusals (with any URL password
//! removed); a [`Token`] never is: it has no `Display`, its `Debug` prints `[redacted]`, and it is
//! not serialisable. Variables are read from an [`EnvVars`] snapshot rather than the process, so
//! every caller (and every test) says exactly which environment it means.

use std::collections::BTreeMap;
use std::fmt;

use chant_lexicon::redact::{REDACTED, Redactor};

/// A snapshot of environment variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvVars(BTreeMap<String, String>);

impl EnvVars {
    /// Creates an empty environment.
    pub fn new() -> Self {
        EnvVars::default()
    }

    /// Reads this process's environment (variables that are not valid UTF-8 are skipped).
    pub fn from_process() -> Self {
        EnvVars(std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect())
    }

    /// Sets one variable.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.0.insert(name.into(), value.into());
        self
    }

    /// Returns a variable's value; an empty value counts as unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for EnvVars {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        EnvVars(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

/// A value read from a variable chain, with the variable that won.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved<T> {
    /// The value.
    pub value: T,
    /// The variable it was read from.
    pub variable: String,
}

/// An engine address as configured: an `http://` or `https://` URL, or a program on `PATH`. Its
/// `Debug` shows the printable form.
#[derive(Clone, PartialEq, Eq)]
pub struct EngineAddress(String);

impl fmt::Debug for EngineAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("EngineAddress").field(&self.printable()).finish()
    }
}

impl EngineAddress {
    /// Creates an address from a configured value.
    pub fn new(value: impl Into<String>) -> Self {
        EngineAddress(value.into())
    }

    /// Returns the value as configured (for the transport; print [`EngineAddress::printable`]).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Returns true when the value names the HTTP transport (`http://` or `https://`).
    pub fn is_http(&self) -> bool {
        let lower = self.0.to_ascii_lowercase();
        lower.starts_with("http://") || lower.starts_with("https://")
    }

    /// Returns the address as it may be printed: any URL password or known token removed.
    pub fn printable(&self) -> String {
        Redactor::default().redact(&self.0)
    }
}

/// A bearer token. It is never printed: no `Display`, a redacting `Debug`, no serialisation.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a token value.
    pub fn new(value: impl Into<String>) -> Self {
        Token(value.into())
    }

    /// Returns the secret value, for the one place that needs it: an `Authorization` header.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }

    /// Returns `text` with every occurrence of the token replaced by `[redacted]`: how any text
    /// that came back from an engine is cleaned before chant keeps it.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() { text.to_owned() } else { text.replace(self.0.as_str(), REDACTED) }
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token({REDACTED})")
    }
}

/// The suffix a lexicon gives its most specific variables (`k8s-east` -> `K8S_EAST`).
pub fn lexicon_suffix(lexicon: &str) -> String {
    lexicon.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
}

/// The address chain for `lexicon`, most specific first.
pub fn engine_variables(lexicon: &str) -> [String; 3] {
    [
        format!("CHANT_BEHAVIOUR_ENGINE_{}", lexicon_suffix(lexicon)),
        "CHANT_BEHAVIOUR_ENGINE".to_owned(),
        "BEHAVIOUR_ENGINE".to_owned(),
    ]
}

/// The token chain for `lexicon`, most specific first.
pub fn token_variables(lexicon: &str) -> [String; 3] {
    [
        format!("CHANT_BEHAVIOUR_TOKEN_{}", lexicon_suffix(lexicon)),
        "CHANT_BEHAVIOUR_TOKEN".to_owned(),
        "BEHAVIOUR_TOKEN".to_owned(),
    ]
}

fn first_set(chain: [String; 3], env: &EnvVars) -> Option<(String, String)> {
    chain.into_iter().find_map(|name| env.get(&name).map(|v| (v.to_owned(), name.clone())))
}

/// Walks the address chain and returns the first engine set, with the variable that named it.
pub fn engine_from(lexicon: &str, env: &EnvVars) -> Option<Resolved<EngineAddress>> {
    first_set(engine_variables(lexicon), env)
        .map(|(value, variable)| Resolved { value: EngineAddress::new(value), variable })
}

/// Walks the token chain and returns the first token set, with the variable that held it.
pub fn token_from(lexicon: &str, env: &EnvVars) -> Option<Resolved<Token>> {
    first_set(token_variables(lexicon), env).map(|(value, variable)| Resolved { value: Token::new(value), variable })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_variable_wins_and_is_named() {
        let env = EnvVars::new()
            .with("BEHAVIOUR_ENGINE", "generic")
            .with("CHANT_BEHAVIOUR_ENGINE", "chant")
            .with("CHANT_BEHAVIOUR_ENGINE_K8S_EAST", "http://127.0.0.1:1/");
        let won = engine_from("k8s-east", &env).unwrap();
        assert_eq!(won.variable, "CHANT_BEHAVIOUR_ENGINE_K8S_EAST");
        assert_eq!(won.value.as_str(), "http://127.0.0.1:1/");
        assert!(won.value.is_http());
        let won = engine_from("acme", &env).unwrap();
        assert_eq!((won.variable.as_str(), won.value.as_str()), ("CHANT_BEHAVIOUR_ENGINE", "chant"));
        assert!(!won.value.is_http());
        let env = EnvVars::new().with("BEHAVIOUR_ENGINE", "generic").with("CHANT_BEHAVIOUR_ENGINE", "");
        assert_eq!(engine_from("acme", &env).unwrap().variable, "BEHAVIOUR_ENGINE");
        assert_eq!(engine_from("acme", &EnvVars::new()), None);
    }

    #[test]
    fn the_token_chain_has_the_same_shape_and_never_prints() {
        let env = EnvVars::new().with("BEHAVIOUR_TOKEN", "t-generic").with("CHANT_BEHAVIOUR_TOKEN_ACME", "t-acme-123");
        let won = token_from("acme", &env).unwrap();
        assert_eq!(won.variable, "CHANT_BEHAVIOUR_TOKEN_ACME");
        assert_eq!(won.value.expose_secret(), "t-acme-123");
        assert_eq!(token_from("other", &env).unwrap().variable, "BEHAVIOUR_TOKEN");
        let shown = format!("{won:?}");
        assert!(!shown.contains("t-acme-123"), "{shown}");
        assert_eq!(won.value.scrub("echo t-acme-123!"), "echo [redacted]!");
    }

    #[test]
    fn a_printable_address_has_no_password() {
        let a = EngineAddress::new("https://user:hunter22@engine.internal/predict");
        assert_eq!(a.printable(), "https://user:[redacted]@engine.internal/predict");
        assert!(!format!("{a:?}").contains("hunter22"));
        assert_eq!(lexicon_suffix("my.lex-1"), "MY_LEX_1");
    }
}
