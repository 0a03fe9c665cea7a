//! [`Properties`]: the named values of one entity, declared or observed, that the change set
//! compares name by name.
//!
//! A lexicon reports the same few property names for every entity it reads (a file's `type`,
//! `mode` and `content`; a column's `type`, `not_null` and `default`), so a name is a
//! [`PropertyName`]: one of the lexicon's `'static` names is borrowed, not copied, and only a
//! name read from JSON is owned. The values sit in one small list in name order instead of a
//! tree: an observation of 12,000 entities made a tree node of 11 slots and three copied names
//! for each, most of the memory and a third of the allocations of a large observation.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The name of a property (or of a kind): a lexicon's `'static` name, borrowed, or a name read
/// from JSON, owned. Both compare, order and hash as the text they hold.
pub type PropertyName = Cow<'static, str>;

/// The properties of one entity by name, in name order, each name once.
///
/// Reads like a map (`get`, `contains_key`, `iter` in name order) and is
/// serialized as a JSON object, exactly as the `BTreeMap<String, String>` it replaced.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Properties {
    /// The values, sorted by name, without repeats.
    entries: Vec<(PropertyName, String)>,
}

impl Properties {
    /// Creates an empty set of properties.
    pub fn new() -> Self {
        Properties::default()
    }

    /// Creates an empty set of properties with room for `capacity` of them.
    pub fn with_capacity(capacity: usize) -> Self {
        Properties { entries: Vec::with_capacity(capacity) }
    }

    /// Returns how many properties there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Returns true when there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Where `name` is, or where it would go.
    fn position(&self, name: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(key, _)| key.as_ref().cmp(name))
    }

    /// Returns the value of `name`.
    pub fn get(&self, name: &str) -> Option<&String> {
        self.position(name).ok().and_then(|at| self.entries.get(at)).map(|(_, value)| value)
    }

    /// Returns true when `name` has a value.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Sets `name` to `value`, returning the value it replaced.
    pub fn insert(&mut self, name: impl Into<PropertyName>, value: impl Into<String>) -> Option<String> {
        let name = name.into();
        let value = value.into();
        match self.position(&name) {
            Ok(at) => self.entries.get_mut(at).map(|(_, old)| std::mem::replace(old, value)),
            Err(at) => {
                self.entries.insert(at, (name, value));
                None
            }
        }
    }

    /// Removes `name`, returning its value.
    pub fn remove(&mut self, name: &str) -> Option<String> {
        self.position(name).ok().map(|at| self.entries.remove(at).1)
    }

    /// Removes every property.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Keeps the properties `keep` answers true for.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &mut String) -> bool) {
        self.entries.retain_mut(|(name, value)| keep(name, value));
    }

    /// Returns the properties in name order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { inner: self.entries.iter() }
    }

    /// Returns the names in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.entries.iter().map(|(name, _)| name.as_ref())
    }

    /// Returns the values in the order of their names.
    pub fn values(&self) -> impl Iterator<Item = &String> + '_ {
        self.entries.iter().map(|(_, value)| value)
    }
}

/// The properties of a [`Properties`] in name order: `(name, value)`.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    inner: std::slice::Iter<'a, (PropertyName, String)>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a String);

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(name, value)| (name.as_ref(), value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(name, value)| (name.as_ref(), value))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Properties {
    type Item = (&'a str, &'a String);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Properties {
    type Item = (PropertyName, String);
    type IntoIter = std::vec::IntoIter<(PropertyName, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<K: Into<PropertyName>, V: Into<String>> Extend<(K, V)> for Properties {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (name, value) in iter {
            self.insert(name, value);
        }
    }
}

impl<K: Into<PropertyName>, V: Into<String>> FromIterator<(K, V)> for Properties {
    /// Of repeated names the last value stays, as in a map.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut entries: Vec<(PropertyName, String)> =
            iter.into_iter().map(|(name, value)| (name.into(), value.into())).collect();
        // Stable: of equal names the last stays once the earlier ones are dropped below.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(PropertyName, String)> = Vec::with_capacity(entries.len());
        for entry in entries {
            match kept.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => kept.push(entry),
            }
        }
        Properties { entries: kept }
    }
}

impl<const N: usize, K: Into<PropertyName>, V: Into<String>> From<[(K, V); N]> for Properties {
    fn from(array: [(K, V); N]) -> Self {
        array.into_iter().collect()
    }
}

impl From<BTreeMap<String, String>> for Properties {
    fn from(map: BTreeMap<String, String>) -> Self {
        // In name order already, each name once.
        Properties { entries: map.into_iter().map(|(name, value)| (Cow::Owned(name), value)).collect() }
    }
}

impl From<Properties> for BTreeMap<String, String> {
    fn from(properties: Properties) -> Self {
        properties.entries.into_iter().map(|(name, value)| (name.into_owned(), value)).collect()
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Properties {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (name, value) in self {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Properties {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PropertiesVisitor;

        impl<'de> Visitor<'de> for PropertiesVisitor {
            type Value = Properties;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of property names to text values")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Properties, A::Error> {
                let mut entries: Vec<(String, String)> = Vec::with_capacity(access.size_hint().unwrap_or(0).min(64));
                while let Some(entry) = access.next_entry::<String, String>()? {
                    entries.push(entry);
                }
                // Of repeated names the last stays, as a map read from JSON keeps it.
                Ok(entries.into_iter().collect())
            }
        }

        deserializer.deserialize_map(PropertiesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_like_a_map_in_name_order() {
        let mut p = Properties::new();
        assert_eq!(p.insert("mode", "0644"), None);
        assert_eq!(p.insert("content", "sha1:a"), None);
        assert_eq!(p.insert(String::from("type"), "file"), None);
        assert_eq!(p.insert("mode", "0600"), Some("0644".to_owned()));
        assert_eq!(p.keys().collect::<Vec<_>>(), ["content", "mode", "type"]);
        assert_eq!(p.get("mode").map(String::as_str), Some("0600"));
        assert_eq!(p.get("type").unwrap(), "file");
        assert!(p.contains_key("content") && !p.contains_key("owner"));
        assert_eq!(p.remove("content"), Some("sha1:a".to_owned()));
        assert_eq!(p.remove("content"), None);
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn of_repeated_names_the_last_value_stays() {
        let p: Properties = [("b", "1"), ("a", "2"), ("b", "3")].into();
        assert_eq!(p.iter().collect::<Vec<_>>(), [("a", &"2".to_owned()), ("b", &"3".to_owned())]);
        let read: Properties = serde_json::from_str(r#"{"b": "1", "a": "2", "b": "3"}"#).unwrap();
        assert_eq!(read, p);
    }

    #[test]
    fn json_is_the_object_a_map_made() {
        let p: Properties = [("type", "file"), ("mode", "0644")].into();
        let map: BTreeMap<String, String> = p.clone().into();
        assert_eq!(serde_json::to_string(&p).unwrap(), serde_json::to_string(&map).unwrap());
        assert_eq!(serde_json::from_str::<Properties>(r#"{"type":"file","mode":"0644"}"#).unwrap(), p);
        assert_eq!(Properties::from(map), p);
        let refused = serde_json::from_str::<Properties>(r#"{"mode": 420}"#).unwrap_err().to_string();
        assert!(refused.contains("invalid type"), "{refused}");
    }

    /// One step of the model test: what a caller does to a set of properties.
    #[derive(Debug, Clone)]
    enum Step {
        Insert(String, String),
        Remove(String),
        Retain(String),
        Clear,
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        // Few names, so that inserts replace and removes find.
        let name = prop::sample::select(vec!["a", "b", "content", "mode", "type", "z"]).prop_map(str::to_owned);
        prop_oneof![
            6 => (name.clone(), "[a-z0-9]{0,3}").prop_map(|(k, v)| Step::Insert(k, v)),
            2 => name.clone().prop_map(Step::Remove),
            1 => name.prop_map(Step::Retain),
            1 => Just(Step::Clear),
        ]
    }

    proptest::proptest! {
        /// Whatever is done to it, a `Properties` holds what a `BTreeMap<String, String>` given
        /// the same steps holds, answers every read as the map does, and writes and reads back
        /// the JSON the map writes.
        #[test]
        fn behaves_as_the_map_it_replaced(steps in proptest::collection::vec(step(), 0..40)) {
            let mut properties = Properties::new();
            let mut map: BTreeMap<String, String> = BTreeMap::new();
            for step in steps {
                match step {
                    Step::Insert(k, v) => {
                        proptest::prop_assert_eq!(properties.insert(k.clone(), v.clone()), map.insert(k, v));
                    }
                    Step::Remove(k) => proptest::prop_assert_eq!(properties.remove(&k), map.remove(&k)),
                    Step::Retain(k) => {
                        properties.retain(|name, _| name != k);
                        map.retain(|name, _| *name != k);
                    }
                    Step::Clear => {
                        properties.clear();
                        map.clear();
                    }
                }
                proptest::prop_assert_eq!(properties.len(), map.len());
                proptest::prop_assert!(properties.iter().eq(map.iter().map(|(k, v)| (k.as_str(), v))));
                for name in ["a", "b", "content", "mode", "type", "z", "absent"] {
                    proptest::prop_assert_eq!(properties.get(name), map.get(name));
                    proptest::prop_assert_eq!(properties.contains_key(name), map.contains_key(name));
                }
            }
            let json = serde_json::to_string(&properties).unwrap();
            proptest::prop_assert_eq!(&json, &serde_json::to_string(&map).unwrap());
            proptest::prop_assert_eq!(serde_json::from_str::<Properties>(&json).unwrap(), properties.clone());
            proptest::prop_assert_eq!(Properties::from(map.clone()), properties.clone());
            proptest::prop_assert_eq!(BTreeMap::from(properties), map);
        }
    }

    #[test]
    fn borrowed_and_owned_names_are_the_same_name() {
        let mut p = Properties::new();
        p.insert("type", "file");
        p.insert(String::from("type"), "dir");
        assert_eq!(p.len(), 1);
        assert_eq!(p.get("type").unwrap(), "dir");
        assert_eq!(format!("{p:?}"), r#"{"type": "dir"}"#);
    }
}
