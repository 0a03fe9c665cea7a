//! What an env declares of the JSON documents lexicon: documents by name, each a typed Rust
//! value serialised to a JSON object. A value that is not an object (or claims the marker key)
//! is kept and refused when the declaration is checked, so building a declaration never fails.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::DocsError;
use crate::store::MARKER_KEY;

/// One declared document's content: a JSON object, or why the value given is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Content {
    Object(Map<String, Value>),
    Invalid(String),
}

/// The documents an env declares, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocsDeclaration {
    documents: BTreeMap<String, Content>,
}

impl DocsDeclaration {
    /// Creates a declaration of no documents.
    pub fn new() -> Self {
        DocsDeclaration::default()
    }

    /// Declares the document `name` (the file `<root>/<name>.json`) holding `content`, a value
    /// that serialises to a JSON object. A value that does not is refused when the declaration is
    /// checked (observing reports it, applying writes nothing), never at this call.
    #[must_use]
    pub fn document<T: Serialize>(mut self, name: impl Into<String>, content: &T) -> Self {
        let content = match serde_json::to_value(content) {
            Ok(Value::Object(map)) => Content::Object(map),
            Ok(other) => Content::Invalid(format!("it serialises to {}, not a JSON object", kind_of(&other))),
            Err(e) => Content::Invalid(format!("it does not serialise: {e}")),
        };
        self.documents.insert(name.into(), content);
        self
    }

    /// Returns true when the env declares the document `name`.
    pub fn declares(&self, name: &str) -> bool {
        self.documents.contains_key(name)
    }

    /// Returns the declared names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.documents.keys().map(String::as_str)
    }

    /// Checks every name and content.
    ///
    /// # Errors
    ///
    /// [`DocsError::InvalidName`] or [`DocsError::InvalidContent`] for the first offending
    /// document, in name order.
    pub fn validate(&self) -> Result<(), DocsError> {
        for (name, content) in &self.documents {
            if !valid_name(name) {
                return Err(DocsError::InvalidName { name: name.clone() });
            }
            match content {
                Content::Invalid(reason) => {
                    return Err(DocsError::InvalidContent { name: name.clone(), reason: reason.clone() });
                }
                Content::Object(map) if map.contains_key(MARKER_KEY) => {
                    return Err(DocsError::InvalidContent {
                        name: name.clone(),
                        reason: format!("the key {MARKER_KEY} is chant's ownership marker"),
                    });
                }
                Content::Object(_) => {}
            }
        }
        Ok(())
    }

    pub(crate) fn objects(&self) -> impl Iterator<Item = (&String, &Map<String, Value>)> {
        self.documents.iter().filter_map(|(n, c)| match c {
            Content::Object(map) => Some((n, map)),
            Content::Invalid(_) => None,
        })
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_checked_without_panicking() {
        #[derive(Serialize)]
        struct Port {
            port: u16,
        }
        assert!(DocsDeclaration::new().document("service", &Port { port: 1 }).validate().is_ok());
        let list = DocsDeclaration::new().document("list", &[1, 2]);
        assert!(list.validate().unwrap_err().to_string().contains("an array, not a JSON object"));
        let bad = DocsDeclaration::new().document("Bad/Name", &Port { port: 1 });
        assert!(matches!(bad.validate(), Err(DocsError::InvalidName { .. })));
        let marked = DocsDeclaration::new().document("m", &serde_json::json!({ "_chant": {} }));
        assert!(marked.validate().unwrap_err().to_string().contains("ownership marker"));
    }
}
