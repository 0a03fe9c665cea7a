//! Which resources an export keeps: by kind (`type=table`) and by name, with globs
//! (`name='app.*'`), as `import --select type=table,name='app.*'` writes it.
//!
//! A selector is a comma-separated list of `key=value` pairs; a value may be quoted with `'` or
//! `"`, and a comma inside quotes or braces (`name={app,ops}.*`) belongs to the value. Values of
//! one key are alternatives, keys are all required: `type=table,type=schema,name='app.*'` keeps
//! the tables and schemas whose name starts with `app.`. Globs are globset's (`*`, `?`, `[ab]`,
//! `{a,b}`), matched against the whole entity name; `*` crosses `.` and `/`.

use std::collections::BTreeSet;

use globset::{Glob, GlobSet, GlobSetBuilder};

/// A selector that cannot be used: what was wrong, and the form to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// A part is not `key=value`, or its key is not `type` or `name`.
    #[error("invalid selector part {part:?}: write type=<kind> or name=<glob>, separated by commas")]
    Part {
        /// The part.
        part: String,
    },
    /// A value is empty.
    #[error("selector key {key} has an empty value")]
    Empty {
        /// The key.
        key: String,
    },
    /// A quote is not closed.
    #[error("unclosed quote in selector {selector:?}")]
    Unclosed {
        /// The selector.
        selector: String,
    },
    /// A name glob does not parse.
    #[error("invalid name glob {glob:?}: {reason}")]
    Glob {
        /// The glob.
        glob: String,
        /// globset's reason.
        reason: String,
    },
}

/// Which resources an export keeps. The default keeps everything.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    kinds: BTreeSet<String>,
    globs: Vec<String>,
    set: Option<GlobSet>,
}

impl Selector {
    /// Returns the selector that keeps everything.
    pub fn all() -> Self {
        Selector::default()
    }

    /// Parses `type=table,name='app.*'`.
    ///
    /// # Errors
    ///
    /// [`SelectorError`] naming the part at fault.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut kinds = BTreeSet::new();
        let mut globs = Vec::new();
        for part in split(text)? {
            let Some((key, value)) = part.split_once('=') else { return Err(SelectorError::Part { part }) };
            let key = key.trim();
            let value = unquote(value.trim());
            if value.is_empty() {
                return Err(SelectorError::Empty { key: key.to_owned() });
            }
            match key {
                "type" | "kind" => {
                    kinds.insert(value.to_owned());
                }
                "name" => globs.push(value.to_owned()),
                _ => return Err(SelectorError::Part { part }),
            }
        }
        Selector::of(kinds, globs)
    }

    /// Creates a selector of `kinds` (empty: every kind) and name `globs` (empty: every name).
    ///
    /// # Errors
    ///
    /// [`SelectorError::Glob`] for a glob that does not parse.
    pub fn of(
        kinds: impl IntoIterator<Item = String>,
        globs: impl IntoIterator<Item = String>,
    ) -> Result<Self, SelectorError> {
        let globs: Vec<String> = globs.into_iter().collect();
        let set = if globs.is_empty() {
            None
        } else {
            let mut builder = GlobSetBuilder::new();
            for g in &globs {
                let glob =
                    Glob::new(g).map_err(|e| SelectorError::Glob { glob: g.clone(), reason: e.kind().to_string() })?;
                builder.add(glob);
            }
            Some(builder.build().map_err(|e| SelectorError::Glob { glob: globs.join(","), reason: e.to_string() })?)
        };
        Ok(Selector { kinds: kinds.into_iter().collect(), globs, set })
    }

    /// Returns true when the selector keeps every resource.
    pub fn is_all(&self) -> bool {
        self.kinds.is_empty() && self.set.is_none()
    }

    /// Returns true when resources of `kind` are kept (by kind alone).
    pub fn keeps_kind(&self, kind: &str) -> bool {
        self.kinds.is_empty() || self.kinds.contains(kind)
    }

    /// Returns true when the resource `name` of `kind` is kept.
    pub fn keeps(&self, kind: &str, name: &str) -> bool {
        self.keeps_kind(kind) && self.set.as_ref().is_none_or(|s| s.is_match(name))
    }

    /// Returns the selector as it would be written (`type=table,name=app.*`), empty for all.
    pub fn describe(&self) -> String {
        let kinds = self.kinds.iter().map(|k| format!("type={k}"));
        let names = self.globs.iter().map(|g| format!("name={g}"));
        kinds.chain(names).collect::<Vec<_>>().join(",")
    }
}

/// Splits on commas outside quotes and braces.
fn split(text: &str) -> Result<Vec<String>, SelectorError> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut braces = 0usize;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                current.push(c);
            }
            (None, '{') => {
                braces += 1;
                current.push(c);
            }
            (None, '}') => {
                braces = braces.saturating_sub(1);
                current.push(c);
            }
            (None, ',') if braces == 0 => parts.push(std::mem::take(&mut current)),
            (None, c) => current.push(c),
        }
    }
    if quote.is_some() {
        return Err(SelectorError::Unclosed { selector: text.to_owned() });
    }
    parts.push(current);
    Ok(parts.into_iter().map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect())
}

fn unquote(value: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_name_globs_select_together() {
        let s = Selector::parse("type=table,name='app.*'").unwrap();
        assert!(s.keeps("table", "app.users"));
        assert!(!s.keeps("table", "ops.jobs"), "the name glob is required");
        assert!(!s.keeps("schema", "app.x"), "the kind is required");
        assert!(s.keeps_kind("table") && !s.keeps_kind("schema"));
        assert_eq!(s.describe(), "type=table,name=app.*");
    }

    #[test]
    fn values_of_one_key_are_alternatives_and_braces_keep_their_commas() {
        let s = Selector::parse(r#"type=table, type=file, name="{app,ops}.*", name=conf/**"#).unwrap();
        assert!(s.keeps("table", "app.users") && s.keeps("table", "ops.jobs"));
        assert!(s.keeps("file", "conf/a/b.toml"));
        assert!(!s.keeps("table", "public.x"));
        assert!(s.keeps("table", "app.a.b"), "* crosses dots");
        assert!(Selector::parse("").unwrap().is_all());
        assert!(Selector::all().keeps("anything", "at.all"));
    }

    #[test]
    fn a_bad_selector_names_its_part() {
        assert_eq!(
            Selector::parse("table").unwrap_err().to_string(),
            "invalid selector part \"table\": write type=<kind> or name=<glob>, separated by commas"
        );
        assert!(matches!(Selector::parse("owner=me"), Err(SelectorError::Part { .. })));
        assert!(matches!(Selector::parse("name=''"), Err(SelectorError::Empty { .. })));
        assert!(matches!(Selector::parse("name='app.*"), Err(SelectorError::Unclosed { .. })));
        assert!(matches!(Selector::parse("name=a[b"), Err(SelectorError::Glob { .. })));
    }
}
