//! The path grammar of deep observation, shared by drift, unclaimed rows, field owners, the prune
//! table and the baseline.
//!
//! A property tree (JSON) flattens into leaves, each named by a path: object keys are joined by
//! `.` (`columns.id.default`); an array whose elements are all objects carrying a string `name`
//! (or, failing that, `id`) is a keyed collection, its elements written `arr[<name>]`
//! (`constraints[users_pkey].kind`); any other array, and every scalar, is one leaf compared as
//! a whole. A key that contains `.`, `[`, `]` or `"`, or is empty, is written quoted
//! (`"a.b"`, with `\"` for a quote). An empty object has no leaves: declaring `{}` claims
//! nothing.
//!
//! The **pattern** form, used by a lexicon's table of substrate-written paths, writes `[]` for any
//! element of a keyed collection and `*` for any key (`metadata.*`, `arr[].status`); a pattern
//! matches a path and everything under it.

use serde_json::Value;

/// One segment of a path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Seg {
    /// An object key.
    Key(String),
    /// An element of a keyed collection, by its `name` (or `id`).
    Elem(String),
}

/// Returns the identity of an array element: its string `name`, else its string `id`.
fn identity(element: &Value) -> Option<&str> {
    let object = element.as_object()?;
    object.get("name").and_then(Value::as_str).or_else(|| object.get("id").and_then(Value::as_str))
}

/// Returns true when `array` is a keyed collection: non-empty, every element an object with an
/// identity, no identity twice.
fn keyed(array: &[Value]) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    !array.is_empty() && array.iter().all(|e| identity(e).is_some_and(|id| seen.insert(id)))
}

/// Flattens a tree into its leaves, in document order.
pub fn leaves(value: &Value) -> Vec<(Vec<Seg>, Value)> {
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

fn walk(value: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<(Vec<Seg>, Value)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                prefix.push(Seg::Key(key.clone()));
                walk(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) if keyed(items) => {
            for item in items {
                let id = identity(item).unwrap_or_default().to_owned();
                prefix.push(Seg::Elem(id));
                walk(item, prefix, out);
                prefix.pop();
            }
        }
        _ => out.push((prefix.clone(), value.clone())),
    }
}

/// Returns the value at `segs` in `tree`, if any (a subtree when the path names one).
pub fn lookup<'a>(tree: &'a Value, segs: &[Seg]) -> Option<&'a Value> {
    let mut at = tree;
    for seg in segs {
        at = match (seg, at) {
            (Seg::Key(key), Value::Object(map)) => map.get(key)?,
            (Seg::Elem(id), Value::Array(items)) => items.iter().find(|e| identity(e) == Some(id.as_str()))?,
            _ => return None,
        };
    }
    Some(at)
}

/// Returns true when `claim` is `path` or an ancestor of it.
pub fn covers(claim: &[Seg], path: &[Seg]) -> bool {
    path.starts_with(claim)
}

/// Returns true when the rendered path `claim` is `path` or an ancestor of it (`""` covers all).
pub fn rendered_covers(claim: &str, path: &str) -> bool {
    claim.is_empty()
        || path == claim
        || path.strip_prefix(claim).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

fn needs_quotes(key: &str) -> bool {
    key.is_empty() || key.contains(['.', '[', ']', '"'])
}

fn quoted(key: &str) -> String {
    if needs_quotes(key) { format!("\"{}\"", key.replace('"', "\\\"")) } else { key.to_owned() }
}

/// Renders a path (`columns.id.default`, `constraints[users_pkey].kind`).
pub fn render(segs: &[Seg]) -> String {
    let mut out = String::new();
    for seg in segs {
        match seg {
            Seg::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&quoted(key));
            }
            Seg::Elem(id) => {
                out.push('[');
                out.push_str(&quoted(id));
                out.push(']');
            }
        }
    }
    out
}

/// One segment of a [`Pattern`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum PatSeg {
    Key(String),
    AnyKey,
    AnyElem,
}

/// A path pattern of a lexicon's substrate-written table (`status`, `metadata.*`, `arr[].x`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern(Vec<PatSeg>);

impl Pattern {
    /// Parses a pattern: keys separated by `.`, `*` for any key, `[]` for any element. Patterns
    /// are a lexicon's own constants, never user input.
    pub fn parse(pattern: &str) -> Self {
        let mut segs = Vec::new();
        for part in pattern.split('.').filter(|p| !p.is_empty()) {
            let mut rest = part;
            let mut elems = 0;
            while let Some(stripped) = rest.strip_suffix("[]") {
                rest = stripped;
                elems += 1;
            }
            if !rest.is_empty() {
                segs.push(if rest == "*" { PatSeg::AnyKey } else { PatSeg::Key(rest.to_owned()) });
            }
            segs.extend(std::iter::repeat_n(PatSeg::AnyElem, elems));
        }
        Pattern(segs)
    }

    /// Returns true when the pattern matches `path` or an ancestor of it.
    pub fn matches(&self, path: &[Seg]) -> bool {
        self.0.len() <= path.len()
            && self.0.iter().zip(path).all(|(p, s)| match (p, s) {
                (PatSeg::Key(k), Seg::Key(key)) => k == key,
                (PatSeg::AnyKey, Seg::Key(_)) | (PatSeg::AnyElem, Seg::Elem(_)) => true,
                _ => false,
            })
    }
}
