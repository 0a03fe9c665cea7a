//! Screening: the walk that keeps credentials out of a behaviour request before any transport
//! exists.
//!
//! [`screen_request`] is the one entry point, and a lexicon's predict method opens with it. It
//! serialises the whole request and walks every value and every key, to any depth (the walk keeps
//! its own stack, so nesting has no budget to slip past), looking for three things:
//!
//! - **a value that reads as a credential whatever its key is called**: a PEM block, a JWT, an
//!   `Authorization` value (`Bearer ...`, `Basic ...`, `token ...`, an `Authorization:` header),
//!   or a token with the issue prefix of GitHub, GitLab, OpenAI, Stripe, Slack, AWS, Google or
//!   npm;
//! - **a password in URL userinfo**, with or without a scheme (a DSN is usually written
//!   `app:hunter2@db:5432/prod`); scheme-less userinfo is `user:password@host[:port]` followed by
//!   `/` or the end, so an image reference such as `nginx:1.25@sha256:...` is not one;
//! - **a key whose name reads as a credential** ([`names_credential`]), but only when it holds a
//!   string of at least eight characters that is not an evident reference
//!   ([`is_evident_reference`]), and only when the name is outside the reference family
//!   (`secretName`, `imagePullSecrets`, `secretKeyRef`, `ClientToken`, `passwordPolicy`, ...).
//!
//! The first two are hard errors ([`CredentialError`]): a credential was about to leave. The third
//! is a heuristic, so it returns a [`Refusal`] with cause `credential-in-request` rather than
//! failing the whole lexicon. Neither ever repeats the value; a key that is itself a credential is
//! not repeated either. What this does not catch: an issuer nobody added, a bare random string, a
//! secret split across two fields. There is no entropy scoring, deliberately: requests are full of
//! ids, ARNs and digests.

use std::fmt;

use super::refusal::{Refusal, credential_in_request_refusal};
use super::request::Request;
use chant_lexicon::redact;

/// The issuer of a prefixed token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Issuer {
    /// `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`.
    GitHub,
    /// `glpat-`.
    GitLab,
    /// `sk-`, `sk-proj-`.
    OpenAi,
    /// `sk_live_`, `sk_test_`, `rk_live_`, `rk_test_`, `pk_live_`.
    Stripe,
    /// `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xapp-`.
    Slack,
    /// `AKIA`, `ASIA`.
    Aws,
    /// `AIza`.
    Google,
    /// `npm_`.
    Npm,
}

impl Issuer {
    fn of(token: &str) -> Option<Issuer> {
        const PREFIXES: &[(&str, Issuer)] = &[
            ("github_pat_", Issuer::GitHub),
            ("gh", Issuer::GitHub),
            ("glpat-", Issuer::GitLab),
            ("sk_", Issuer::Stripe),
            ("rk_", Issuer::Stripe),
            ("pk_", Issuer::Stripe),
            ("sk-", Issuer::OpenAi),
            ("xox", Issuer::Slack),
            ("xapp-", Issuer::Slack),
            ("AKIA", Issuer::Aws),
            ("ASIA", Issuer::Aws),
            ("AIza", Issuer::Google),
            ("npm_", Issuer::Npm),
        ];
        PREFIXES.iter().find(|(p, _)| token.starts_with(p)).map(|(_, issuer)| *issuer)
    }

    /// Returns the issuer's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Issuer::GitHub => "GitHub",
            Issuer::GitLab => "GitLab",
            Issuer::OpenAi => "OpenAI",
            Issuer::Stripe => "Stripe",
            Issuer::Slack => "Slack",
            Issuer::Aws => "AWS",
            Issuer::Google => "Google",
            Issuer::Npm => "npm",
        }
    }
}

/// The shape of a credential found by the value layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CredentialForm {
    /// A PEM block (`-----BEGIN ...-----`).
    PemBlock,
    /// A JSON Web Token.
    Jwt,
    /// An `Authorization` value.
    Authorization,
    /// A token with a known issue prefix.
    Token(Issuer),
    /// A password in URL userinfo.
    UrlPassword,
}

impl fmt::Display for CredentialForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialForm::PemBlock => f.write_str("a PEM block"),
            CredentialForm::Jwt => f.write_str("a JWT"),
            CredentialForm::Authorization => f.write_str("an Authorization value"),
            CredentialForm::Token(issuer) => write!(f, "a {} token", issuer.as_str()),
            CredentialForm::UrlPassword => f.write_str("a password in URL userinfo"),
        }
    }
}

/// A credential in a behaviour request: the request must not be sent. Returned by
/// [`screen_request`] (and so by `predict`); it names the form and where, never the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "behaviour request of lexicon {lexicon} holds {form} {} {pointer}: remove it from the declared properties; a credential must never reach an engine",
    if *.in_key { "in a key of" } else { "at" }
)]
pub struct CredentialError {
    /// The lexicon.
    pub lexicon: String,
    /// What was found.
    pub form: CredentialForm,
    /// A JSON pointer into the request: the value, or the object one of whose keys it is.
    pub pointer: String,
    /// Whether the credential is a key of the object at `pointer` rather than the value there.
    pub in_key: bool,
}

/// Screens a request: `Err` for a credential the value layers recognise (the request must not be
/// sent), `Ok(Some(refusal))` for a credential-named key holding a value, `Ok(None)` when it may
/// be sent. The whole request is walked, typed fields and properties, values and keys.
///
/// # Errors
///
/// [`CredentialError`] for a PEM block, a JWT, an `Authorization` value, a prefixed token or a
/// URL password anywhere in the request.
pub fn screen_request(request: &Request) -> Result<Option<Refusal>, CredentialError> {
    let json = match serde_json::to_value(request) {
        Ok(json) => json,
        // A request always serialises (string keys, finite numbers); if it ever did not, it could
        // not be sent either, so there is nothing to screen.
        Err(_) => return Ok(None),
    };
    let lexicon = request.lexicon.as_str();
    let hard = |form, pointer: &str, in_key| CredentialError {
        lexicon: lexicon.to_owned(),
        form,
        pointer: if pointer.is_empty() { "/".to_owned() } else { pointer.to_owned() },
        in_key,
    };
    let mut named: Option<String> = None;
    let mut stack: Vec<(String, &serde_json::Value)> = vec![(String::new(), &json)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            serde_json::Value::String(s) => {
                if let Some(form) = credential_form(s) {
                    return Err(hard(form, &pointer, false));
                }
            }
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((format!("{pointer}/{i}"), item));
                }
            }
            serde_json::Value::Object(map) => {
                for key in map.keys() {
                    if let Some(form) = credential_form(key) {
                        return Err(hard(form, &pointer, true));
                    }
                }
                for (key, item) in map.iter().rev() {
                    let child = format!("{pointer}/{}", escape(key));
                    if named.is_none()
                        && let serde_json::Value::String(s) = item
                        && names_credential(key)
                        && s.chars().count() >= 8
                        && !is_evident_reference(s)
                    {
                        named = Some(child.clone());
                    }
                    stack.push((child, item));
                }
            }
            serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
        }
    }
    Ok(named.map(|pointer| credential_in_request_refusal(lexicon, &pointer)))
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Returns the credential form `text` holds, if the value layers recognise one. Private on
/// purpose: screening one string is not screening a request, so callers go through
/// [`screen_request`].
fn credential_form(text: &str) -> Option<CredentialForm> {
    if has_pem_block(text) {
        return Some(CredentialForm::PemBlock);
    }
    if has_authorization_value(text) {
        return Some(CredentialForm::Authorization);
    }
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        let word = word.trim_matches('.');
        if redact::is_token(word) {
            return Some(match Issuer::of(word) {
                Some(issuer) if !word.starts_with("eyJ") => CredentialForm::Token(issuer),
                _ => CredentialForm::Jwt,
            });
        }
    }
    if redact::has_url_password(text) {
        return Some(CredentialForm::UrlPassword);
    }
    None
}

fn has_pem_block(text: &str) -> bool {
    text.match_indices("-----BEGIN ").any(|(at, m)| {
        let rest = &text[at + m.len()..];
        rest.find("-----").is_some_and(|end| {
            let label = &rest[..end];
            !label.is_empty() && label.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == ' ')
        })
    })
}

/// A credential part: one word of at least eight characters with a digit, an uppercase letter or
/// base64 punctuation in it (so `token rotation` is prose, not a header).
fn looks_like_credentials(word: &str) -> bool {
    word.chars().count() >= 8
        && !word.chars().any(char::is_whitespace)
        && word
            .chars()
            .any(|c| c.is_ascii_digit() || c.is_ascii_uppercase() || matches!(c, '.' | '=' | '+' | '/' | '_' | '-'))
}

fn has_authorization_value(text: &str) -> bool {
    // An `Authorization:` header line whose value carries credentials.
    let lower = text.to_ascii_lowercase();
    for (at, m) in lower.match_indices("authorization:") {
        let mut value = text[at + m.len()..].split_whitespace();
        let first = value.next().unwrap_or("");
        let second = value.next().unwrap_or("");
        if looks_like_credentials(first.trim_end_matches(['"', '\'']))
            || looks_like_credentials(second.trim_end_matches(['"', '\'']))
        {
            return true;
        }
    }
    // A whole value that is an Authorization header value.
    let trimmed = text.trim();
    if let Some((scheme, credentials)) = trimmed.split_once(char::is_whitespace)
        && matches!(scheme.to_ascii_lowercase().as_str(), "bearer" | "basic" | "token")
        && looks_like_credentials(credentials.trim())
    {
        return true;
    }
    // `Bearer <credentials>` anywhere in a longer text.
    let words: Vec<&str> = text.split_whitespace().collect();
    words.windows(2).any(|pair| {
        pair[0].trim_start_matches(['"', '\'', '(']).eq_ignore_ascii_case("bearer")
            && looks_like_credentials(pair[1].trim_end_matches(['"', '\'', ')', ',', ';']))
    })
}

/// Splits a key into lowercase words at separators, lower-to-upper boundaries and the end of an
/// uppercase run (`AWSSecretAccessKey` -> `aws secret access key`).
fn words(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in key.split(|c: char| !c.is_ascii_alphanumeric()).filter(|p| !p.is_empty()) {
        let chars: Vec<char> = piece.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                Some(p) if c.is_ascii_uppercase() => {
                    p.is_ascii_lowercase()
                        || p.is_ascii_digit()
                        || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
                }
                _ => false,
            };
            if boundary && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            word.push(c.to_ascii_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

/// Words that make a name a credential wherever they appear inside a word (`rolpassword`).
const CREDENTIAL_STEMS: &[&str] = &["password", "passwd", "passphrase", "secret", "credential"];
/// Words that make a name a credential as whole words.
const CREDENTIAL_WORDS: &[&str] = &["token", "tokens", "pwd", "apikey", "privatekey", "accesskey"];
/// Words that make a following `key` a credential (`apiKey`, `private_key`, `clientKey`).
const KEY_QUALIFIERS: &[&str] =
    &["api", "private", "access", "signing", "encryption", "master", "client", "ssh", "shared", "hmac", "session"];
/// Words that make a preceding `token` a nonce or a cursor rather than a credential.
const NONCE_QUALIFIERS: &[&str] = &[
    "client",
    "idempotency",
    "continuation",
    "next",
    "page",
    "pagination",
    "sync",
    "resume",
    "cancellation",
    "sequence",
    "request",
];
/// Last words that make the name a reference to, or a description of, a credential.
const REFERENCE_SUFFIXES: &[&str] = &[
    "ref",
    "refs",
    "reference",
    "references",
    "name",
    "names",
    "namespace",
    "id",
    "ids",
    "arn",
    "arns",
    "path",
    "paths",
    "file",
    "files",
    "dir",
    "directory",
    "env",
    "var",
    "variable",
    "policy",
    "policies",
    "length",
    "ttl",
    "expiry",
    "expiration",
    "expires",
    "at",
    "rotation",
    "version",
    "versions",
    "type",
    "kind",
    "count",
    "enabled",
    "required",
    "mode",
    "source",
    "provider",
    "store",
    "format",
    "algorithm",
    "url",
    "uri",
    "endpoint",
    "audience",
    "audiences",
    "issuer",
    "scope",
    "scopes",
    "label",
    "labels",
    "selector",
    "template",
    "location",
    "spec",
    "secrets",
    "requests",
    "field",
    "fields",
    "hint",
    "prompt",
    "min",
    "max",
    "minimum",
    "maximum",
    "strength",
    "age",
    "lifetime",
    "period",
    "header",
    "param",
    "parameter",
    "mount",
    "volume",
    "provided",
    "set",
    "exists",
];
/// First words that make the name a flag about a credential (`automountServiceAccountToken`).
const FLAG_PREFIXES: &[&str] = &[
    "automount",
    "enable",
    "disable",
    "use",
    "allow",
    "require",
    "requires",
    "has",
    "is",
    "should",
    "no",
    "skip",
    "rotate",
    "generate",
    "manage",
    "reset",
    "expire",
    "min",
    "max",
];

/// Returns true when a key's name reads as a credential and is outside the reference family.
pub fn names_credential(key: &str) -> bool {
    let words = words(key);
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    if REFERENCE_SUFFIXES.contains(&last.as_str()) || (words.len() > 1 && FLAG_PREFIXES.contains(&first.as_str())) {
        return false;
    }
    if words.len() == 1 && matches!(first.as_str(), "auth" | "authorization") {
        return true;
    }
    words.iter().enumerate().any(|(i, word)| {
        let prev = i.checked_sub(1).map(|p| words[p].as_str());
        if CREDENTIAL_STEMS.iter().any(|stem| word.contains(stem)) {
            return true;
        }
        if matches!(word.as_str(), "token" | "tokens") {
            return !prev.is_some_and(|p| NONCE_QUALIFIERS.contains(&p));
        }
        if matches!(word.as_str(), "key" | "keys") {
            return prev.is_some_and(|p| KEY_QUALIFIERS.contains(&p));
        }
        CREDENTIAL_WORDS.contains(&word.as_str())
    })
}

/// Returns true when a value evidently names where a secret lives rather than holding one: a
/// variable (`${DB_PASSWORD}`, `$DB_PASSWORD`, `DB_PASSWORD`), a template (`{{ .token }}`), a path
/// (`/run/secrets/db`), or a secret-store address (`arn:...`, `vault:...`, `op://...`,
/// `projects/p/secrets/s`, ...).
pub fn is_evident_reference(value: &str) -> bool {
    const SCHEMES: &[&str] = &[
        "arn:",
        "env:",
        "vault:",
        "secret:",
        "secrets:",
        "ssm:",
        "secretsmanager:",
        "sm://",
        "op://",
        "keyvault:",
        "azure-keyvault://",
        "gcp-secret://",
        "k8s-secret://",
        "file:",
        "ref:",
        "projects/",
    ];
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    if v.starts_with("${") || v.starts_with("$(") || v.starts_with("{{") {
        return true;
    }
    if let Some(rest) = v.strip_prefix('$')
        && rest.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return true;
    }
    if ["/", "./", "../", "~/"].iter().any(|p| v.starts_with(p)) {
        return true;
    }
    if SCHEMES.iter().any(|s| lower.starts_with(s)) {
        return true;
    }
    // An environment variable's name: FOO_BAR.
    v.contains('_')
        && v.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && v.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_into_words() {
        assert_eq!(words("AWSSecretAccessKey"), ["aws", "secret", "access", "key"]);
        assert_eq!(words("imagePullSecrets"), ["image", "pull", "secrets"]);
        assert_eq!(words("x-api-key"), ["x", "api", "key"]);
        assert_eq!(words("DB_PASSWORD"), ["db", "password"]);
        assert_eq!(words("s3Key"), ["s3", "key"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
    }

    #[test]
    fn credential_names_are_recognised() {
        for key in [
            "password",
            "dbPassword",
            "MasterUserPassword",
            "PGPASSWORD",
            "rolpassword",
            "passwd",
            "awsSecretAccessKey",
            "client_secret",
            "SecretString",
            "secret",
            "token",
            "authToken",
            "AUTH_TOKEN",
            "accessToken",
            "refreshToken",
            "apiKey",
            "api_key",
            "APIKey",
            "x-api-key",
            "privateKey",
            "private_key",
            "sshKey",
            "credentials",
            "auth",
            "passphrase",
        ] {
            assert!(names_credential(key), "{key} should read as a credential");
        }
    }

    #[test]
    fn the_reference_family_and_benign_names_are_not() {
        for key in [
            "secretName",
            "imagePullSecrets",
            "secretKeyRef",
            "ClientToken",
            "NextToken",
            "continuationToken",
            "passwordPolicy",
            "PasswordLength",
            "CertificateAuthorityArn",
            "authorizedNetworks",
            "author",
            "tags",
            "dsn",
            "key",
            "topologyKey",
            "publicKey",
            "kmsKeyId",
            "prstoken",
            "maptokentype",
            "rolbypassrls",
            "automountServiceAccountToken",
            "ManageMasterUserPassword",
            "tokenUrl",
            "privateKeyPath",
            "secretFile",
            "gmsaCredentialSpec",
            "auth_method",
            "",
        ] {
            assert!(!names_credential(key), "{key} should not read as a credential");
        }
    }

    #[test]
    fn evident_references_are_recognised() {
        for v in [
            "${DB_PASSWORD}",
            "$DB_PASSWORD",
            "DB_PASSWORD",
            "{{ .Values.token }}",
            "/run/secrets/db",
            "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db",
            "vault:secret/data/db#password",
            "op://vault/item/field",
            "projects/p/secrets/s/versions/1",
        ] {
            assert!(is_evident_reference(v), "{v} should be a reference");
        }
        for v in ["hunter2hunter2", "q7Xv2mPa9LkR", "HUNTER22", "my-db-secret"] {
            assert!(!is_evident_reference(v), "{v} should not be a reference");
        }
    }

    #[test]
    fn value_forms_are_recognised_and_prose_is_not() {
        let cases: &[(&str, Option<CredentialForm>)] = &[
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", Some(CredentialForm::PemBlock)),
            ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdEFGHijkl", Some(CredentialForm::Jwt)),
            ("Bearer abcDEF123456", Some(CredentialForm::Authorization)),
            ("Basic dXNlcjpwYXNzd29yZA==", Some(CredentialForm::Authorization)),
            ("curl -H 'Authorization: token Zq81kLm0pQ' https://h", Some(CredentialForm::Authorization)),
            ("Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830", Some(CredentialForm::Authorization)),
            ("see the section Authorization: overview", None),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", Some(CredentialForm::Token(Issuer::GitHub))),
            ("glpat-ABCDEFGHIJ0123456789", Some(CredentialForm::Token(Issuer::GitLab))),
            ("sk-proj-ABCDEFGHIJKLMNOP1234", Some(CredentialForm::Token(Issuer::OpenAi))),
            ("sk_live_ABCDEFGHIJ123456", Some(CredentialForm::Token(Issuer::Stripe))),
            ("xoxb-1234567890-ABCDEFGHIJ", Some(CredentialForm::Token(Issuer::Slack))),
            ("AKIAIOSFODNN7EXAMPLE", Some(CredentialForm::Token(Issuer::Aws))),
            ("AIzaSyA1234567890abcdefghijklmnopqrstu", Some(CredentialForm::Token(Issuer::Google))),
            ("npm_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", Some(CredentialForm::Token(Issuer::Npm))),
            (
                "see https://x.invalid/ghp_abcdefghijklmnopqrstuvwxyz0123456789.",
                Some(CredentialForm::Token(Issuer::GitHub)),
            ),
            ("postgres://app:hunter2@db:5432/prod", Some(CredentialForm::UrlPassword)),
            ("app:hunter2@db:5432/prod", Some(CredentialForm::UrlPassword)),
            ("app:hunter2@db", Some(CredentialForm::UrlPassword)),
            ("nginx:1.25@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", None),
            ("token rotation every week", None),
            ("bearer of bad news", None),
            ("postgres://app@db/prod", None),
            ("arn:aws:iam::123456789012:role/app", None),
            ("sha256:0123456789abcdef", None),
        ];
        for (text, expected) in cases {
            assert_eq!(credential_form(text), *expected, "{text}");
        }
    }
}
