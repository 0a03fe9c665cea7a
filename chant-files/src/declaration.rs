//! A files declaration: the files an env declares, each a path relative to the env's root, its
//! content and its mode.
//!
//! Paths are written with `/` separators and must be *confined*: relative, with no empty, `.` or
//! `..` component, so that a declared name maps to exactly one place under the root and can never
//! name a place outside it lexically. (Escapes through symlinks on disk are refused when the path
//! is resolved, one component at a time.) A declaration is validated as a whole by
//! [`FilesDeclaration::validate`] before anything is written.

use std::collections::BTreeMap;

use super::FilesError;
use chant_lexicon::observe::DeclaredEntity;

/// The entity kind every declared file carries.
pub const FILE_KIND: &str = "file";

/// The property keys a file is compared on.
pub mod property {
    /// `file` for a regular file, `symlink` for a symbolic link in its place.
    pub const TYPE: &str = "type";
    /// The permission bits, four octal digits (`0644`).
    pub const MODE: &str = "mode";
    /// The content digest, `sha1:<hex>`.
    pub const CONTENT: &str = "content";
    /// The size in bytes (deep read).
    pub const SIZE: &str = "size";
    /// The owning user id (deep read).
    pub const UID: &str = "uid";
    /// The owning group id (deep read).
    pub const GID: &str = "gid";
    /// A document's own keys (deep read of a declared JSON or TOML document).
    pub const DOCUMENT: &str = "document";
}

/// The largest mode a file may declare: permission bits plus setuid, setgid and sticky.
pub const MAX_MODE: u32 = 0o7777;

/// One declared file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredFile {
    /// The exact bytes the file must hold.
    pub content: Vec<u8>,
    /// Its permission bits (`0o644`).
    pub mode: u32,
}

/// The files an env declares, keyed by their path relative to the root.
///
/// ```
/// use chant_files::FilesDeclaration;
///
/// let files = FilesDeclaration::new()
///     .file("app.conf", "port = 8080\n", 0o644)
///     .file("bin/start.sh", "#!/bin/sh\nexec app\n", 0o755);
/// assert!(files.validate().is_ok());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesDeclaration {
    files: BTreeMap<String, DeclaredFile>,
    documents: BTreeMap<String, DocumentFormat>,
    owners: BTreeMap<String, (u32, u32)>,
}

/// The format of a declared file whose own keys are observed as paths (deep read): a key added
/// by hand is unclaimed, a changed declared key is drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentFormat {
    /// A JSON document.
    Json,
    /// A TOML document.
    Toml,
}

impl DocumentFormat {
    /// Returns the format's name (`json`).
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentFormat::Json => "json",
            DocumentFormat::Toml => "toml",
        }
    }

    /// Parses `bytes` as a document of this format into a JSON tree.
    ///
    /// # Errors
    ///
    /// A [`DocumentError`] saying why it is not such a document.
    pub fn parse(self, bytes: &[u8]) -> Result<serde_json::Value, DocumentError> {
        let text = std::str::from_utf8(bytes).map_err(DocumentError::NotUtf8)?;
        match self {
            DocumentFormat::Json => serde_json::from_str(text).map_err(DocumentError::Json),
            DocumentFormat::Toml => toml::from_str::<toml::Table>(text)
                .map_err(|e| DocumentError::Toml(e.message().to_owned()))
                .and_then(|t| serde_json::to_value(t).map_err(DocumentError::Json)),
        }
    }
}

/// Why bytes are not a document of a [`DocumentFormat`].
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// The bytes are not UTF-8 text.
    #[error("not UTF-8: {0}")]
    NotUtf8(#[source] std::str::Utf8Error),
    /// The text is not JSON (or a TOML table that JSON cannot hold).
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// The text is not TOML; the parser's message, without its source excerpt.
    #[error("{0}")]
    Toml(String),
}

impl FilesDeclaration {
    /// Creates an empty declaration.
    pub fn new() -> Self {
        FilesDeclaration::default()
    }

    /// Declares one file. A later declaration of the same path replaces the earlier one; paths
    /// and modes are checked by [`FilesDeclaration::validate`].
    #[must_use]
    pub fn file(mut self, path: impl Into<String>, content: impl Into<Vec<u8>>, mode: u32) -> Self {
        self.files.insert(path.into(), DeclaredFile { content: content.into(), mode });
        self
    }

    /// Declares one file whose content is a document of `format`: the deep read compares its
    /// keys as paths instead of its digest (so a key added by hand is unclaimed, not drift), and
    /// the whole-entity comparison keeps to its type and mode.
    #[must_use]
    pub fn document(
        mut self,
        path: impl Into<String>,
        format: DocumentFormat,
        content: impl Into<Vec<u8>>,
        mode: u32,
    ) -> Self {
        let path = path.into();
        self.documents.insert(path.clone(), format);
        self.file(path, content, mode)
    }

    /// Declares the owner (uid, gid) of an already declared file, compared by the deep read.
    #[must_use]
    pub fn owner(mut self, path: impl Into<String>, uid: u32, gid: u32) -> Self {
        self.owners.insert(path.into(), (uid, gid));
        self
    }

    /// Returns the format of the declared document at `path`, if it is one.
    pub fn document_format(&self, path: &str) -> Option<DocumentFormat> {
        self.documents.get(path).copied()
    }

    /// Returns the declared owner (uid, gid) of `path`, if any.
    pub fn declared_owner(&self, path: &str) -> Option<(u32, u32)> {
        self.owners.get(path).copied()
    }

    /// Returns the declared files, sorted by path.
    pub fn files(&self) -> &BTreeMap<String, DeclaredFile> {
        &self.files
    }

    /// Returns true when nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Checks every path and mode, and that no declared file is also the parent directory of
    /// another.
    ///
    /// # Errors
    ///
    /// [`FilesError::InvalidPath`] or [`FilesError::InvalidMode`] for the first offending file,
    /// in path order.
    pub fn validate(&self) -> Result<(), FilesError> {
        for (path, file) in &self.files {
            check_path(path).map_err(|r| FilesError::InvalidPath { path: path.clone(), reason: r.to_string() })?;
            if file.mode > MAX_MODE {
                return Err(FilesError::InvalidMode { path: path.clone(), mode: file.mode });
            }
            let prefix = format!("{path}/");
            if let Some((other, _)) = self.files.range(prefix.clone()..).next().filter(|(o, _)| o.starts_with(&prefix))
            {
                return Err(FilesError::InvalidPath {
                    path: path.clone(),
                    reason: format!("it is declared as a file and as the directory of {other}"),
                });
            }
            if let Some(format) = self.document_format(path) {
                format.parse(&file.content).map_err(|detail| FilesError::InvalidDocument {
                    path: path.clone(),
                    format: format.as_str(),
                    detail: detail.to_string(),
                })?;
            }
        }
        if let Some(path) = self.owners.keys().find(|p| !self.files.contains_key(p.as_str())) {
            return Err(FilesError::InvalidPath {
                path: path.clone(),
                reason: "an owner is declared for it, but the file is not declared".into(),
            });
        }
        Ok(())
    }

    /// Returns the declared entities the observe core compares: kind `file`, with the type, mode
    /// and content digest as properties.
    ///
    /// # Errors
    ///
    /// [`FilesError::Digest`] when a content digest cannot be computed (a detected SHA-1
    /// collision attack).
    pub fn entities(&self) -> Result<Vec<DeclaredEntity>, FilesError> {
        self.files
            .iter()
            .map(|(path, file)| {
                let entity = DeclaredEntity::new(path.clone())
                    .kind(FILE_KIND)
                    .property(property::TYPE, FILE_KIND)
                    .property(property::MODE, format_mode(file.mode));
                if self.documents.contains_key(path) {
                    // A document's keys are compared by the deep read, not its digest.
                    return Ok(entity);
                }
                Ok(entity.property(property::CONTENT, declared_digest(path, &file.content)?))
            })
            .collect()
    }

    /// Returns the digest of the whole declaration (`sha1:<hex>` over every path, mode and
    /// content), recorded with each apply.
    ///
    /// # Errors
    ///
    /// [`FilesError::Digest`] as for [`FilesDeclaration::entities`].
    pub fn digest(&self) -> Result<String, FilesError> {
        let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
        for (path, file) in &self.files {
            hasher.update(path.as_bytes());
            hasher.update(b"\0");
            hasher.update(format_mode(file.mode).as_bytes());
            hasher.update(b"\0");
            hasher.update(&(file.content.len() as u64).to_be_bytes());
            hasher.update(&file.content);
        }
        finish(hasher).map_err(|e| FilesError::Digest { what: "the declaration".into(), detail: e.to_string() })
    }
}

/// Returns the digest of a declared file's content.
pub(crate) fn declared_digest(path: &str, content: &[u8]) -> Result<String, FilesError> {
    content_digest(content)
        .map_err(|e| FilesError::Digest { what: format!("the declared content of {path}"), detail: e.to_string() })
}

/// Formats permission bits as four octal digits (`0644`).
pub fn format_mode(mode: u32) -> String {
    if mode > MAX_MODE {
        return format!("{mode:04o}");
    }
    // Four octal digits without the formatter: every observed and declared file writes one.
    let digit = |shift: u32| char::from(b'0' + ((mode >> shift) & 0o7) as u8);
    [digit(9), digit(6), digit(3), digit(0)].into_iter().collect()
}

/// A digest that could not be computed: SHA-1 collision detection refused the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct DigestError(String);

/// Returns the content digest of `bytes` (`sha1:<hex>`), or why it could not be computed.
pub(crate) fn content_digest(bytes: &[u8]) -> Result<String, DigestError> {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(bytes);
    finish(hasher)
}

fn finish(hasher: gix::hash::Hasher) -> Result<String, DigestError> {
    hasher
        .try_finalize()
        .map(|id| {
            // `sha1:` and the hex digits, written straight into the string (the `Display` of the
            // hex formats it digit by digit through the formatter).
            let mut hex = [0u8; 64];
            let mut digest = String::with_capacity(45);
            digest.push_str("sha1:");
            digest.push_str(id.hex_to_buf(&mut hex));
            digest
        })
        .map_err(|e| DigestError(e.to_string()))
}

/// Why a declared path is not a confined relative path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PathRefusal {
    /// The path is empty.
    #[error("the path is empty")]
    Empty,
    /// The path is absolute.
    #[error("absolute paths are not allowed: declare it relative to the root")]
    Absolute,
    /// The path holds a NUL byte.
    #[error("the path contains a NUL byte")]
    Nul,
    /// A component is empty.
    #[error("the path has an empty component (`//` or a trailing `/`)")]
    EmptyComponent,
    /// A component is `.`.
    #[error("the path has a `.` component: write it without")]
    Dot,
    /// A component is `..`.
    #[error("the path has a `..` component, which could leave the root")]
    DotDot,
}

/// Checks that `path` is a confined relative path; returns why not.
pub(crate) fn check_path(path: &str) -> Result<(), PathRefusal> {
    if path.is_empty() {
        return Err(PathRefusal::Empty);
    }
    if path.starts_with('/') {
        return Err(PathRefusal::Absolute);
    }
    if path.contains('\0') {
        return Err(PathRefusal::Nul);
    }
    for component in path.split('/') {
        match component {
            "" => return Err(PathRefusal::EmptyComponent),
            "." => return Err(PathRefusal::Dot),
            ".." => return Err(PathRefusal::DotDot),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confined_paths() {
        for ok in ["a", "a.conf", "dir/a", "a/b/c.txt", ".hidden", "a..b", "...", "a b"] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "a/..", "./a", "a/./b", "a//b", "a/", "a\0b"] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn validate_names_the_offending_file() {
        let err = FilesDeclaration::new().file("ok", "", 0o644).file("../escape", "", 0o644).validate().unwrap_err();
        assert!(
            matches!(&err, FilesError::InvalidPath { path, reason } if path == "../escape" && reason.contains("..")),
            "{err}"
        );
        let err = FilesDeclaration::new().file("a", "", 0o10000).validate().unwrap_err();
        assert!(matches!(err, FilesError::InvalidMode { mode: 0o10000, .. }));
        assert!(FilesDeclaration::new().file("a", "", 0o7777).validate().is_ok());
        let err = FilesDeclaration::new().file("a", "", 0o644).file("a/b", "", 0o644).validate().unwrap_err();
        assert!(err.to_string().contains("as the directory of a/b"), "{err}");
        assert!(FilesDeclaration::new().file("a", "", 0o644).file("a.d/b", "", 0o644).validate().is_ok());
    }

    #[test]
    fn entities_carry_type_mode_and_digest() {
        let decl = FilesDeclaration::new().file("b", "hello", 0o600).file("a", "", 0o755);
        let entities = decl.entities().unwrap();
        assert_eq!(entities[0].name, "a");
        assert_eq!(entities[0].properties.get(property::MODE).unwrap(), "0755");
        assert_eq!(entities[1].properties.get(property::TYPE).unwrap(), "file");
        // `printf hello | git hash-object --stdin` hashes a blob header too; this is the raw SHA-1.
        assert_eq!(
            entities[1].properties.get(property::CONTENT).unwrap(),
            "sha1:aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"
        );
        assert_eq!(entities[1].kind.as_deref(), Some(FILE_KIND));
    }

    #[test]
    fn format_mode_writes_four_octal_digits_as_the_formatter_does() {
        for mode in (0..=MAX_MODE).chain([MAX_MODE + 1, 0o17777, u32::MAX]) {
            assert_eq!(format_mode(mode), format!("{mode:04o}"));
        }
    }

    #[test]
    fn digest_is_stable_and_sensitive() {
        let a = FilesDeclaration::new().file("a", "x", 0o644).digest().unwrap();
        assert_eq!(a, FilesDeclaration::new().file("a", "x", 0o644).digest().unwrap());
        assert_ne!(a, FilesDeclaration::new().file("a", "x", 0o600).digest().unwrap());
        assert_ne!(a, FilesDeclaration::new().file("a", "y", 0o644).digest().unwrap());
        assert_ne!(a, FilesDeclaration::new().file("b", "x", 0o644).digest().unwrap());
        assert!(a.starts_with("sha1:") && a.len() == 45);
    }
}
