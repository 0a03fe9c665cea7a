//! Canonical JSON: the one encoding every ledger record (and every digest of a document) goes
//! through. A value is serialised with serde, then written with the keys of every object in
//! byte order, arrays in their order, no whitespace, and serde_json's own escaping of strings and
//! formatting of numbers.
//!
//! The order is made here, explicitly, rather than inherited from `serde_json::Value`'s map
//! (ordered by key only while serde_json's `preserve_order` feature is off, which any crate in a
//! build can turn on): a record's bytes and an op's digest must not depend on a feature flag.

use serde::Serialize;
use serde_json::Value;

/// A value that cannot be encoded as JSON (a map with non-string keys, a failing `Serialize`).
#[derive(Debug, thiserror::Error)]
#[error("cannot encode the value as canonical JSON")]
pub struct Error(#[from] serde_json::Error);

/// Returns the canonical JSON text of `value`: one line, keys in byte order, no whitespace.
///
/// # Errors
///
/// [`Error`] when `value` cannot be represented as JSON.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    let value = serde_json::to_value(value)?;
    let mut out = String::new();
    write(&value, &mut out)?;
    Ok(out)
}

/// Returns the canonical JSON bytes of `value`, as [`to_string`].
///
/// # Errors
///
/// [`Error`] when `value` cannot be represented as JSON.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    to_string(value).map(String::into_bytes)
}

fn write(value: &Value, out: &mut String) -> Result<(), Error> {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.as_bytes().cmp(b.as_bytes()));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key)?);
                out.push(':');
                write(item, out)?;
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write(item, out)?;
            }
            out.push(']');
        }
        scalar => out.push_str(&serde_json::to_string(scalar)?),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Declared {
        zeta: u8,
        alpha_beta: Vec<Inner>,
        a: Option<&'static str>,
    }

    #[derive(Serialize)]
    struct Inner {
        y: f64,
        b: &'static str,
    }

    #[test]
    fn sorts_the_keys_of_every_object_and_keeps_array_order() {
        let value =
            Declared { zeta: 1, alpha_beta: vec![Inner { y: 0.5, b: "é\"\n" }, Inner { y: 2.0, b: "" }], a: None };
        assert_eq!(
            to_string(&value).unwrap(),
            r#"{"a":null,"alphaBeta":[{"b":"é\"\n","y":0.5},{"b":"","y":2.0}],"zeta":1}"#
        );
    }

    #[test]
    fn the_order_is_byte_order_not_case_insensitive() {
        // The original sorted with localeCompare (`a` < `B`); chant's records use byte order.
        let value = json!({"b": 1, "B": 2, "a": 3, "_": 4, "aa": 5});
        assert_eq!(to_string(&value).unwrap(), r#"{"B":2,"_":4,"a":3,"aa":5,"b":1}"#);
    }

    #[test]
    fn is_what_serde_json_writes_for_a_sorted_map() {
        let value = json!({"n": [1, -2, 3.25, 1e300, null, true], "s": "\u{1}\u{7f}\\/", "o": {}});
        let sorted: BTreeMap<String, Value> = value.as_object().unwrap().clone().into_iter().collect();
        assert_eq!(to_string(&value).unwrap(), serde_json::to_string(&sorted).unwrap());
        assert_eq!(to_vec(&value).unwrap(), to_string(&value).unwrap().into_bytes());
    }

    #[test]
    fn refuses_what_json_cannot_hold() {
        let mut map = BTreeMap::new();
        map.insert((1, 2), "tuple keys");
        assert!(to_string(&map).is_err());
    }
}
