//! The redactor: the one filter every printed or recorded text passes through.
//!
//! It removes the values of secret variables named in configuration, the password of any URL
//! userinfo (`scheme://user:pass@host`, up to the last `@` before the host, so a password holding
//! `/ # ? @`, spaces or non-ASCII goes whole; and the scheme-less `user:pass@host/`), a known token
//! used as the whole userinfo (`https://ghp_...@github.com/`), the value of an assignment whose
//! key names a secret (`GITHUB_TOKEN=...`, `?access_token=...`, `password=...`), and tokens of the
//! well-known credential formats wherever they start at a word boundary (PEM blocks, JWTs,
//! `Authorization`/bearer values, GitHub, GitLab, OpenAI, Stripe, Slack, AWS, Google and npm keys). [`sanitise`] additionally trims free text that
//! comes from outside chant (child output, error messages) to one recordable line.

use std::borrow::Cow;

/// The text that replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// The longest free text recorded, in characters, before `…` is appended.
pub const MAX_FREE_TEXT: usize = 300;

/// Token prefixes of the credential formats chant recognises, with the shortest plausible token.
const TOKEN_PREFIXES: &[(&str, usize)] = &[
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 30),
    ("glpat-", 20),
    ("sk-proj-", 20),
    ("sk-", 20),
    ("sk_live_", 16),
    ("sk_test_", 16),
    ("rk_live_", 16),
    ("rk_test_", 16),
    ("pk_live_", 16),
    ("xoxb-", 15),
    ("xoxp-", 15),
    ("xoxa-", 15),
    ("xoxr-", 15),
    ("xoxs-", 15),
    ("xapp-", 15),
    ("AKIA", 20),
    ("ASIA", 20),
    ("AIza", 30),
    ("npm_", 30),
];

/// Redacts secrets from text. Build one from configuration with the values of the variables it
/// names; [`Redactor::default`] still removes URL passwords and known token formats.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// Creates a redactor that also removes each of `secrets` (values shorter than 4 characters
    /// are ignored: they would redact ordinary words).
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| s.chars().count() >= 4).collect();
        // Longest first, so a secret that contains another is removed whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    /// Creates a redactor from the names of environment variables holding secrets, reading their
    /// current values; unset variables are skipped.
    pub fn from_env_vars<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        Redactor::new(names.into_iter().filter_map(|n| std::env::var(n).ok()))
    }

    /// Returns `text` with every secret replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        // Each pass copies only when it finds something to replace: a large document (a diff of
        // thousands of resources as one JSON line) is not copied once per pass.
        let mut out = Cow::Borrowed(text);
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = Cow::Owned(out.replace(s.as_str(), REDACTED));
            }
        }
        let out = then(out, redact_pem);
        let out = then(out, redact_userinfo);
        let out = then(out, redact_mysql_password);
        redact_tokens(&out)
    }

    /// Redacts, then sanitises: the form every recorded free text takes.
    pub fn record(&self, text: &str) -> String {
        sanitise(&self.redact(text))
    }
}

/// Trims free text to one recordable line: the first non-empty line, control characters turned
/// into spaces, trimmed, at most [`MAX_FREE_TEXT`] characters plus `…`.
pub fn sanitise(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let cleaned: String = line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let cleaned = cleaned.trim();
    if cleaned.chars().count() > MAX_FREE_TEXT {
        let mut cut: String = cleaned.chars().take(MAX_FREE_TEXT).collect();
        cut.push('…');
        cut
    } else {
        cleaned.to_owned()
    }
}

/// Replaces the password a MySQL or MariaDB client takes glued to `-p` (`mysql -uroot -ps3cret`),
/// on the lines that run one.
fn redact_mysql_password(text: &str) -> Cow<'_, str> {
    const CLIENTS: [&str; 4] = ["mysql", "mysqldump", "mysqladmin", "mariadb"];
    // Every client's name holds "mysql" or is "mariadb": no line runs one without them.
    if !text.contains("mysql") && !text.contains("mariadb") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let runs_client = line.split_whitespace().any(|w| CLIENTS.contains(&w.rsplit('/').next().unwrap_or(w)));
        if !runs_client {
            out.push_str(line);
            continue;
        }
        let mut first = true;
        for part in line.split(' ') {
            if !first {
                out.push(' ');
            }
            first = false;
            match part.strip_prefix("-p") {
                Some(pw) if !pw.trim_end().is_empty() => {
                    out.push_str("-p");
                    out.push_str(REDACTED);
                    out.push_str(&pw[pw.trim_end().len()..]);
                }
                _ => out.push_str(part),
            }
        }
    }
    Cow::Owned(out)
}

fn redact_pem(text: &str) -> Cow<'_, str> {
    if !text.contains("-----BEGIN ") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        match after.find("-----END ").and_then(|e| after[e + 9..].find("-----").map(|f| e + 9 + f + 5)) {
            Some(end) => {
                out.push_str(REDACTED);
                rest = &after[end..];
            }
            None => {
                out.push_str(REDACTED);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']' | ':')
}

fn is_userinfo_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '.' | '-' | '_' | '~' | '%' | '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '=')
}

/// Replaces the password of `user:password@host` (with or without a scheme) and a known token
/// used as the whole userinfo (`https://ghp_...@github.com/`, git's own error format).
fn redact_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let schemed = redact_scheme_userinfo(text);
    if !has_schemeless_candidate(&schemed) {
        return Cow::Owned(schemed);
    }
    Cow::Owned(redact_schemeless_userinfo(&schemed))
}

/// Returns true when some `@` of `text` follows `:` and a run of userinfo characters (the only
/// place [`redact_schemeless_userinfo`] can replace anything), looking at bytes: every userinfo
/// character and `:` is ASCII, so a non-ASCII byte ends the run as its character would.
fn has_schemeless_candidate(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().filter(|(i, b)| **b == b'@' && *i > 0).any(|(i, _)| {
        let mut j = i;
        while j > 0 && bytes[j - 1] != b':' && bytes[j - 1].is_ascii() && is_userinfo_char(char::from(bytes[j - 1])) {
            j -= 1;
        }
        j > 0 && bytes[j - 1] == b':' && j < i
    })
}

/// Applies `pass` to `text`, keeping it borrowed when nothing was replaced.
fn then<'a>(text: Cow<'a, str>, pass: impl Fn(&str) -> Cow<'_, str>) -> Cow<'a, str> {
    match text {
        Cow::Borrowed(t) => pass(t),
        Cow::Owned(t) => match pass(&t) {
            Cow::Borrowed(_) => Cow::Owned(t),
            Cow::Owned(changed) => Cow::Owned(changed),
        },
    }
}

/// Returns true for a character that may end a host (what follows `host` in a URL or in text).
fn ends_host(c: char) -> bool {
    c.is_whitespace() || matches!(c, '/' | '?' | '#' | '\'' | '"' | ')' | '>' | ',' | ';' | '`')
}

/// Returns the byte length of the host at the start of `rest` when one is there: at least one
/// host character, followed by the end, a port, a path, a query or a closing delimiter.
fn host_at(rest: &str) -> Option<usize> {
    let len = rest.find(|c: char| !is_host_char(c)).unwrap_or(rest.len());
    let next = rest[len..].chars().next();
    (len > 0 && next.is_none_or(ends_host)).then_some(len)
}

/// Redacts the userinfo secret of every `scheme://` URL. The password runs from the first `:`
/// after the user to the *last* `@` on the line that is followed by a host, so a password
/// holding `/ # ? @`, spaces or non-ASCII characters is removed whole.
fn redact_scheme_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        // The userinfo can only reach as far as the end of the line or the next URL. The line's
        // end is looked for only before the next URL, so a long line of many URLs (a diff
        // document as one JSON line) is read once, not once per URL.
        let next = after.find("://");
        let window = &after[..next.unwrap_or(after.len())];
        let limit = match (window.find(['\n', '\r']), next) {
            (Some(line_end), _) => line_end,
            // Back up to the start of the next URL's scheme.
            (None, Some(n)) => after[..n]
                .char_indices()
                .rev()
                .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
                .map_or(0, |(b, c)| b + c.len_utf8()),
            (None, None) => after.len(),
        };
        let segment = &after[..limit];
        let user_len = segment.find(|c: char| !is_userinfo_char(c)).unwrap_or(segment.len());
        let user = &segment[..user_len];
        let at_sign = segment.char_indices().rev().find(|(i, c)| *c == '@' && host_at(&segment[i + 1..]).is_some());
        match (segment[user_len..].chars().next(), at_sign) {
            (Some(':'), Some((a, _))) if a > user_len && !user.is_empty() => {
                out.push_str(user);
                out.push(':');
                out.push_str(REDACTED);
                rest = &after[a..];
            }
            (Some('@'), _) if is_token(user) || looks_random(user) => {
                out.push_str(REDACTED);
                rest = &after[user_len..];
            }
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// Replaces the password of a scheme-less `user:password@host`, whose host must be followed by
/// `/`, whitespace or the end, so `nginx:1.25@sha256:...` is left alone.
fn redact_schemeless_userinfo(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '@' && i > 0 {
            // Walk back over the password to a ':'.
            let mut j = i;
            while j > 0 && is_userinfo_char(chars[j - 1]) && chars[j - 1] != ':' {
                j -= 1;
            }
            if j > 0 && chars[j - 1] == ':' && j < i {
                let colon = j - 1;
                let mut u = colon;
                while u > 0 && is_userinfo_char(chars[u - 1]) {
                    u -= 1;
                }
                let mut h = i + 1;
                while h < chars.len() && is_host_char(chars[h]) {
                    h += 1;
                }
                let host_ok = h > i + 1 && (h == chars.len() || chars[h] == '/' || chars[h].is_whitespace());
                let image_ref = is_digest(&chars[i + 1..h].iter().collect::<String>());
                if u < colon && host_ok && !image_ref {
                    // Remove the password already copied to `out`.
                    let pw_len = i - j;
                    for _ in 0..pw_len {
                        out.pop();
                    }
                    out.push_str(REDACTED);
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Returns true for a content digest such as `sha256:<hex>` (what follows `@` in an image
/// reference), which is not a host.
fn is_digest(text: &str) -> bool {
    text.split_once(':').is_some_and(|(alg, hex)| {
        !alg.is_empty()
            && alg.chars().all(|c| c.is_ascii_alphanumeric())
            && hex.len() >= 32
            && hex.chars().all(|c| c.is_ascii_hexdigit())
    }) || text.starts_with("sha256")
}

/// Returns true when `text` holds a password in URL userinfo, with a scheme
/// (`postgres://app:pw@db`) or without (`app:pw@db:5432/prod`, where the host must be followed by
/// `/`, whitespace or the end, so `nginx:1.25@sha256:<digest>` is not one): exactly the passwords
/// [`Redactor::redact`] removes.
pub fn has_url_password(text: &str) -> bool {
    text.contains('@') && redact_userinfo(text) != text
}

/// Returns `address` with the password of any URL userinfo removed entirely
/// (`postgres://app:pw@db/app` becomes `postgres://app@db/app`), then redacted as
/// [`Redactor::redact`] would: the form in which a queried address is rendered.
pub fn strip_url_password(address: &str) -> String {
    let marked = redact_userinfo(address);
    let stripped = if marked == address { address.to_owned() } else { marked.replace(&format!(":{REDACTED}@"), "@") };
    Redactor::default().redact(&stripped)
}

fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '=' | '+' | '/')
}

/// Key names whose value is a secret wherever it is assigned (`access_token=...`,
/// `GITHUB_TOKEN=...`, `password=...`): matched case-insensitively, whole or as the key's last
/// `_`/`-` separated part(s).
const SECRET_KEYS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "apikey",
    "api_key",
    "api-key",
    "access_key",
    "secret_key",
    "private_key",
    "client_secret",
    "credentials",
    "auth",
    "signature",
];

/// Returns true when `key` (the text before an `=`) names a secret.
fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    // `PGPASSWORD`, `MYSQL_PASSWD`: a password by any prefix.
    if key.ends_with("password") || key.ends_with("passwd") {
        return true;
    }
    SECRET_KEYS.iter().any(|k| {
        key == *k
            || key.strip_suffix(k).is_some_and(|head| head.ends_with('_') || head.ends_with('-') || head.ends_with('.'))
    })
}

fn redact_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let mut prev_bearer = false;
    for c in text.chars() {
        if token_char(c) {
            word.push(c);
            continue;
        }
        if prev_bearer && word.len() >= 8 {
            out.push_str(REDACTED);
            word.clear();
            prev_bearer = false;
            out.push(c);
            continue;
        }
        let lower = word.to_ascii_lowercase();
        let is_scheme = lower == "bearer" || lower == "basic" || lower == "token";
        let blank = c == ' ' || c == '\t';
        // `X-Api-Key: value`, `Authorization: Bearer x`: a header naming a secret, its value next.
        let secret_header = c == ':' && !word.is_empty() && is_secret_key(&word);
        // `Bearer x`, `Bearer<TAB>x`, `Bearer   x`: the scheme and its value on one line.
        prev_bearer = secret_header || blank && (is_scheme || prev_bearer && word.is_empty());
        out.push_str(&redact_word(&word));
        word.clear();
        out.push(c);
    }
    if prev_bearer && word.len() >= 8 {
        out.push_str(REDACTED);
    } else {
        out.push_str(&redact_word(&word));
    }
    out
}

/// Redacts inside one word: the value of every `secret_key=value` assignment, and every token
/// of a known format that starts at a boundary (the word's start or after a character that is
/// not alphanumeric: `GITHUB_TOKEN=ghp_...`, `?id=AKIA...`, `//ghp_...`).
fn redact_word(word: &str) -> String {
    if is_token(word) {
        return REDACTED.to_owned();
    }
    let mut out = String::with_capacity(word.len());
    let mut i = 0;
    let bytes = word.as_bytes();
    while i < word.len() {
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if boundary {
            // `key=value`: the key runs from here to the `=`.
            if let Some(eq) = word[i..].find('=').map(|e| i + e) {
                let key = &word[i..eq];
                let value_end = word[eq + 1..].find(['&', ';', ',']).map_or(word.len(), |e| eq + 1 + e);
                let value = &word[eq + 1..value_end];
                let plain_key = !key.is_empty()
                    && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
                if plain_key && is_secret_key(key) && value.len() >= 4 {
                    out.push_str(key);
                    out.push('=');
                    out.push_str(REDACTED);
                    i = value_end;
                    continue;
                }
            }
            let body_end = word[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .map_or(word.len(), |e| i + e);
            if body_end > i && is_token(&word[i..body_end]) {
                out.push_str(REDACTED);
                i = body_end;
                continue;
            }
        }
        let Some(c) = word[i..].chars().next() else { break };
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Returns true when `word` looks like a credential of a known format (a JWT or a prefixed key).
pub fn is_token(word: &str) -> bool {
    if is_jwt(word) {
        return true;
    }
    TOKEN_PREFIXES.iter().any(|(p, min)| {
        word.starts_with(p)
            && word.len() >= *min
            && word[p.len()..].chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && word[p.len()..].chars().any(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    })
}

/// Returns true for a word that reads as a generated credential rather than a name: 20
/// characters or more, letters and digits mixed (`https://3f9a...c1@host`, a bare token used as
/// a URL's user).
fn looks_random(word: &str) -> bool {
    word.len() >= 20
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic())
}

fn is_jwt(word: &str) -> bool {
    let parts: Vec<&str> = word.split('.').collect();
    parts.len() == 3
        && parts[0].starts_with("eyJ")
        && parts.iter().all(|p| p.len() >= 4 && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_url_password_removes_the_password_whole() {
        assert_eq!(
            strip_url_password("postgres://app:hunter2@127.0.0.1:55432/app"),
            "postgres://app@127.0.0.1:55432/app"
        );
        assert_eq!(strip_url_password("postgres://app@127.0.0.1:55432/app"), "postgres://app@127.0.0.1:55432/app");
        assert_eq!(strip_url_password("/var/lib/x"), "/var/lib/x");
    }

    #[test]
    fn a_non_ascii_character_before_the_next_url_is_not_split() {
        // Found by the fuzz campaign (`redact` target): backing up to the next URL's scheme sliced
        // inside a multi-byte character and panicked.
        let r = Redactor::new(Vec::new());
        for text in ["a://xé://h", "x://ü://u:p@h/", "s://a:b@h.é://c"] {
            let _ = r.redact(text);
        }
        assert_eq!(r.redact("see a://é https://u:hunter2@h/x"), format!("see a://é https://u:{REDACTED}@h/x"));
    }

    #[test]
    fn configured_secrets_are_removed() {
        let r = Redactor::new(["s3cret-value".to_owned(), "ab".to_owned()]);
        assert_eq!(r.redact("password is s3cret-value, ab stays"), "password is [redacted], ab stays");
    }

    #[test]
    fn url_passwords_are_removed_with_or_without_scheme() {
        let r = Redactor::default();
        assert_eq!(
            r.redact("postgres://app:hunter22@127.0.0.1:55432/app failed"),
            "postgres://app:[redacted]@127.0.0.1:55432/app failed"
        );
        assert_eq!(r.redact("app:hunter22@db.internal/app"), "app:[redacted]@db.internal/app");
        assert_eq!(r.redact("postgres://app@127.0.0.1/app"), "postgres://app@127.0.0.1/app");
        // An image reference is not userinfo.
        assert_eq!(r.redact("image nginx:1.25@sha256:abcdef"), "image nginx:1.25@sha256:abcdef");
        assert_eq!(r.redact("mail me at a@b.c"), "mail me at a@b.c");
    }

    #[test]
    fn url_passwords_are_detected_and_digests_are_not() {
        assert!(has_url_password("postgres://app:hunter22@127.0.0.1:55432/app"));
        assert!(has_url_password("app:hunter2@db:5432/prod"));
        assert!(has_url_password("app:hunter2@db"));
        assert!(!has_url_password("postgres://app@db/app"));
        assert!(!has_url_password(
            "nginx:1.25@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
        ));
        assert!(!has_url_password("nginx:1.25@sha512:0123456789abcdef0123456789abcdef"));
        assert!(!has_url_password("a@b.c"));
    }

    #[test]
    fn known_token_formats_are_removed() {
        let r = Redactor::default();
        for t in [
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "glpat-ABCDEFGHIJ0123456789",
            "sk-proj-ABCDEFGHIJKLMNOP1234",
            "xoxb-1234567890-ABCDEFGHIJ",
            "AKIAIOSFODNN7EXAMPLE",
            "AIzaSyA1234567890abcdefghijklmnopqrstu",
            "npm_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdEFGHijkl",
        ] {
            let out = r.redact(&format!("token {t} here"));
            assert!(!out.contains(t), "{t} survived: {out}");
        }
        assert_eq!(r.redact("Authorization: Bearer abcdefgh12345678"), "Authorization: Bearer [redacted]");
        // Ordinary words are not tokens.
        assert_eq!(r.redact("sk-ip the ask- task"), "sk-ip the ask- task");
    }

    #[test]
    fn tokens_after_an_assignment_or_in_a_query_are_removed() {
        let r = Redactor::default();
        let ghp = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        for (text, secret) in [
            (format!("GITHUB_TOKEN={ghp} git push"), ghp),
            ("curl https://api.example.invalid/x?access_token=Zm9vYmFyYmF6cXV4&page=2".to_owned(), "Zm9vYmFyYmF6cXV4"),
            ("aws_access_key_id=AKIAIOSFODNN7EXAMPLE region=x".to_owned(), "AKIAIOSFODNN7EXAMPLE"),
            ("password=hunter2hunter2 user=app".to_owned(), "hunter2hunter2"),
            ("X-Amz-Signature=0a1b2c3d4e5f&X-Amz-Date=1".to_owned(), "0a1b2c3d4e5f"),
            (format!("export API_KEY={ghp}"), ghp),
        ] {
            let out = r.redact(&text);
            assert!(!out.contains(secret), "{secret} survived in {out}");
            assert!(out.contains(REDACTED), "{out}");
        }
        // The key stays readable, and ordinary assignments are left alone.
        assert_eq!(r.redact("GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"), "GITHUB_TOKEN=[redacted]");
        assert_eq!(r.redact("page=2 mode=0644 name=token"), "page=2 mode=0644 name=token");
    }

    #[test]
    fn one_long_line_of_many_urls_is_redacted_url_by_url() {
        // A diff document of thousands of PostgreSQL entities is one JSON line with a DSN-like
        // `postgres://` in each entry; every password in it goes, every host stays, and the line
        // is read once per URL up to the next one only (it used to be read to its end per URL).
        let r = Redactor::default();
        let entry = |n: usize| format!(r#"{{"name":"t{n}","at":"postgres://app:pw{n}secret@db{n}.internal/app"}},"#);
        let line: String = (0..20_000).map(entry).collect();
        let out = r.redact(&line);
        for n in [0, 1, 9_999, 19_999] {
            assert!(!out.contains(&format!("pw{n}secret")), "entry {n} kept its password");
            assert!(out.contains(&format!("postgres://app:[redacted]@db{n}.internal/app")), "entry {n}");
        }
        assert_eq!(out.matches("[redacted]").count(), 20_000);
    }

    #[test]
    fn tokens_as_url_userinfo_are_removed() {
        let r = Redactor::default();
        let ghp = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let git = format!(
            "fatal: unable to access 'https://{ghp}@github.com/o/r.git/': The requested URL returned error: 403"
        );
        let out = r.redact(&git);
        assert!(!out.contains(ghp), "{out}");
        assert!(out.contains("@github.com/o/r.git/"), "{out}");
        let out = r.redact(&format!("https://x-access-token:{ghp}@github.com/o/r"));
        assert_eq!(out, "https://x-access-token:[redacted]@github.com/o/r");
        // A plain user is not a secret.
        assert_eq!(r.redact("ssh://git@github.com/o/r"), "ssh://git@github.com/o/r");
    }

    #[test]
    fn url_passwords_with_reserved_spaces_or_non_ascii_characters_are_removed_whole() {
        let r = Redactor::default();
        for pw in ["p/ss", "p#ss", "p?ss", "pa ss word", "pässwörd", "p@ss", "a/b#c?d e@f"] {
            let url = format!("postgres://app:{pw}@127.0.0.1:5432/app failed");
            let out = r.redact(&url);
            assert_eq!(out, "postgres://app:[redacted]@127.0.0.1:5432/app failed", "{pw}");
            assert!(has_url_password(&url), "{pw}");
            assert_eq!(strip_url_password(&url), "postgres://app@127.0.0.1:5432/app failed", "{pw}");
        }
        // Two URLs on a line: the second's userinfo is its own.
        assert_eq!(
            r.redact("from postgres://a:x1@h1/db to postgres://b:y2@h2/db"),
            "from postgres://a:[redacted]@h1/db to postgres://b:[redacted]@h2/db"
        );
    }

    #[test]
    fn bearer_values_after_any_blank_are_removed() {
        let r = Redactor::default();
        assert_eq!(r.redact("Authorization: Bearer\tabcdefgh12345678"), "Authorization: Bearer\t[redacted]");
        assert_eq!(r.redact("Authorization: Bearer   abcdefgh12345678"), "Authorization: Bearer   [redacted]");
        assert_eq!(r.redact("the bearer of bad news"), "the bearer of bad news");
    }

    #[test]
    fn pem_blocks_are_removed() {
        let r = Redactor::default();
        let t = "key: -----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY----- done";
        assert_eq!(r.redact(t), "key: [redacted] done");
    }

    #[test]
    fn sanitise_keeps_one_bounded_line() {
        assert_eq!(sanitise("\n  first\tline \nsecond"), "first line");
        let long = "x".repeat(400);
        let s = sanitise(&long);
        assert_eq!(s.chars().count(), 301);
        assert!(s.ends_with('…'));
        assert_eq!(sanitise(""), "");
    }

    #[test]
    fn the_leaks_of_the_third_hardening_round_are_redacted() {
        let r = Redactor::new(Vec::<String>::new());
        for (text, secret) in [
            ("curl -H 'X-Api-Key: k3y-V4lue-123' https://127.0.0.1/", "k3y-V4lue-123"),
            ("X-Api-Key:k3y-V4lue-123", "k3y-V4lue-123"),
            ("mysql -uroot -ps3cr3tPass -h 127.0.0.1 app", "s3cr3tPass"),
            ("/usr/bin/mysqldump -pS3cret app > dump.sql", "S3cret"),
            ("PGPASSWORD=hunter2pw psql -h 127.0.0.1", "hunter2pw"),
            (
                "git clone https://3f9ad0c1e7b24a8f9e0d1c2b3a4f5e6d@github.invalid/org/repo.git",
                "3f9ad0c1e7b24a8f9e0d1c2b3a4f5e6d",
            ),
        ] {
            let out = r.redact(text);
            assert!(!out.contains(secret), "{text} -> {out}");
            assert!(out.contains(REDACTED), "{text} -> {out}");
        }
        // Names are not secrets: a user in a URL, -p elsewhere, a port flag.
        assert_eq!(r.redact("https://deploy-bot@host.invalid/x"), "https://deploy-bot@host.invalid/x");
        assert_eq!(r.redact("ssh -p 2222 host"), "ssh -p 2222 host");
        assert_eq!(r.redact("mkdir -p /var/lib/app"), "mkdir -p /var/lib/app");
    }

    proptest::proptest! {
        /// The byte-level guard never skips a text the scheme-less pass would change.
        #[test]
        fn the_schemeless_guard_only_skips_what_the_pass_leaves_alone(text in "[a-z0-9:@/ .%_é\n-]{0,40}") {
            if !has_schemeless_candidate(&text) {
                proptest::prop_assert_eq!(redact_schemeless_userinfo(&text), text);
            }
        }

        /// A borrowed answer means the pass had nothing to replace.
        #[test]
        fn a_pass_that_borrows_changed_nothing(text in "[a-zA-Z0-9:@/ .=_-]{0,30}(-----BEGIN x-----END x-----)?( mysql -ppw)?") {
            for pass in [redact_pem, redact_userinfo, redact_mysql_password] {
                if let Cow::Borrowed(same) = pass(&text) {
                    proptest::prop_assert_eq!(same, text.as_str());
                }
            }
            let owned = Redactor::default();
            proptest::prop_assert!(!owned.redact(&text).contains("BEGIN x"));
        }
    }

    #[test]
    fn a_large_text_with_nothing_secret_passes_unchanged() {
        let doc =
            format!("{{\"queried\":\"postgres://app@127.0.0.1:5432/app\",\"rows\":[{}]}}", "\"a\",".repeat(50_000));
        assert_eq!(Redactor::default().redact(&doc), doc);
        let with = format!("{doc} postgres://app:hunter2@db/app");
        assert!(!Redactor::default().redact(&with).contains("hunter2"));
    }
}
